/* harness_svg.c - pictures of harness graphs, regenerated from their ids.
 *
 * The harness records graph "h<seed>-<i>" for case i of a seed; the case
 * (mp_harness_case), the generator (mp_gen) and the planners are
 * deterministic, so the graph and its plan can be rebuilt from the id
 * alone.  The report checks the rebuilt graph against the recorded tensor
 * count and links nothing when they differ (the generator changed since). */
#include "viz.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

/* "h<seed>-<i>", decimal, no sign, no leading junk: true and the numbers. */
static bool parse_id(const char *id, uint64_t *seed, uint64_t *i) {
    uint64_t v[2] = {0, 0};
    const char *s = id;
    if (*s++ != 'h') return false;
    for (int k = 0; k < 2; k++) {
        if (*s < '0' || *s > '9') return false;
        for (; *s >= '0' && *s <= '9'; s++)
            if (!mp_mul_u64(v[k], 10, &v[k]) || !mp_add_u64(v[k], (uint64_t)(*s - '0'), &v[k]))
                return false;
        if (k == 0 && *s++ != '-') return false;
    }
    if (*s) return false;
    *seed = v[0];
    *i = v[1];
    return true;
}

int mp_viz_harness_svg(const char *graph_id, const char *algo, const mp_viz_svg_options *o,
                       mp_buf *out, uint64_t *tensors, mp_err *err) {
    mp_err_clear(err);
    uint64_t seed, i;
    if (!parse_id(graph_id, &seed, &i))
        return mp_err_set(err, MP_EFORMAT, "'%.100s' is not a harness graph id (h<seed>-<case>)",
                          graph_id);
    int a = mp_algo_parse(algo);
    if (a < 0) return mp_err_set(err, MP_EFORMAT, "unknown algorithm '%.40s'", algo);
    mp_gen_options g;
    mp_options po;
    mp_harness_case(seed, i, &g, &po);
    po.algo = (uint32_t)a;
    mp_buf text;
    mp_buf_init(&text);
    mp_gen(&g, &text);
    mp_program *prog = mp_graph_parse(text.data ? text.data : "", text.len, graph_id, err);
    mp_buf_free(&text);
    if (!prog) return err->code;
    if (tensors) {
        *tensors = 0;
        for (uint32_t k = 0; k < prog->n_graphs; k++) *tensors += prog->graphs[k].n_tensors;
    }
    mp_plan *plan = mp_plan_program(prog, &po, err);
    int rc = plan ? MP_OK : err->code;
    if (plan) {
        mp_viz_svg_options so;
        mp_viz_svg_options_default(&so);
        if (o) so = *o;
        char title[200];
        snprintf(title, sizeof title, "%s planned with %s (memplan harness, seed %llu, case %llu)",
                 graph_id, mp_algo_name(po.algo), (unsigned long long)seed, (unsigned long long)i);
        if (!so.title) so.title = title;
        rc = mp_viz_svg(prog, plan, &so, out, err);
    }
    mp_plan_free(plan);
    mp_program_free(prog);
    return rc;
}

int mp_viz_report_svgs(const mp_viz_report_options *o, mp_report_data *d, mp_err *err) {
    if (mkdir(o->svg_dir, 0777) != 0 && errno != EEXIST)
        return mp_err_set(err, MP_EIO, "%s: cannot create: %s", o->svg_dir, strerror(errno));
    for (size_t k = 0; k < d->nw; k++) {
        mp_report_wrow *w = &d->w[k];
        for (size_t j = 0; j < k; j++) /* the same plan from another run: one file */
            if (!strcmp(d->w[j].graph, w->graph) && !strcmp(d->w[j].algo, w->algo)) {
                memcpy(w->href, d->w[j].href, sizeof w->href);
                memcpy(w->note, d->w[j].note, sizeof w->note);
                break;
            }
        if (w->href[0] || w->note[0]) continue;
        if (strcmp(w->kind, "harness") != 0) {
            snprintf(w->note, sizeof w->note, "not a harness run");
            continue;
        }
        mp_buf b;
        mp_buf_init(&b);
        mp_err e;
        uint64_t tensors = 0;
        int rc = mp_viz_harness_svg(w->graph, w->algo, NULL, &b, &tensors, &e);
        if (rc != MP_OK) {
            snprintf(w->note, sizeof w->note, "cannot regenerate: %.120s", e.msg);
        } else if (tensors != w->tensors) {
            snprintf(w->note, sizeof w->note, "cannot regenerate: the graph now has %llu tensors, "
                     "%llu were recorded", (unsigned long long)tensors,
                     (unsigned long long)w->tensors);
        } else {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s-%s.svg", o->svg_dir, w->graph, w->algo);
            if (mp_write_buf(path, &b, NULL, 0, err)) {
                mp_buf_free(&b);
                return err->code;
            }
            snprintf(w->href, sizeof w->href, "%s%s%s-%s.svg", o->svg_href ? o->svg_href : "",
                     o->svg_href && o->svg_href[0] ? "/" : "", w->graph, w->algo);
        }
        mp_buf_free(&b);
    }
    return MP_OK;
}
