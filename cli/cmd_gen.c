/* cmd_gen.c - `memplan gen`: write a random, valid graph file. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const char GEN_HELP[] =
    "usage: memplan gen --seed S [--tensors N] [--depth D] [--devices LIST]\n"
    "                   [--profile NAME] [--pins] [-o FILE]\n"
    "       memplan gen --case ID [-o FILE]\n"
    "\n"
    "Write a valid random graph (.mpg).  The same seed and options give the\n"
    "same bytes on every machine.\n"
    "\n"
    "options:\n"
    "  --case ID         the graph of harness case ID (e.g. h1-105: seed 1, case\n"
    "                    105), with the planner options the harness used in a\n"
    "                    comment on its second line and on stderr, ready for\n"
    "                    `memplan plan OPTIONS FILE`\n"
    "  --seed S          the seed (required without --case)\n"
    "  --tensors N       about N tensors in all (default 40; up to 10^8)\n"
    "  --depth D         control flow nested up to D levels (default 2)\n"
    "  --devices LIST    devices to use, main first (default cpu), e.g.\n"
    "                    cpu,cuda:0,cuda:1\n"
    "  --profile NAME    mixed (every feature, default), chain (ResNet-like),\n"
    "                    wide (Inception-like), encdec (U-Net-like),\n"
    "                    transformer; adversarial shapes: inplace-chain,\n"
    "                    view-chain, many-devices (one device per output),\n"
    "                    many-pools, wide-node (every tensor out of one node),\n"
    "                    many-conds (each result the next cond's operand),\n"
    "                    deep (conds nested to the planners' limit); methods\n"
    "                    (prefill and decode sharing KV caches: an entry line);\n"
    "                    few live at once: plain-chain, inplace-pairs (relu_\n"
    "                    after each op), fan-in (one node reading all others),\n"
    "                    scratch-chain (delegates with scratch memory);\n"
    "                    concat (inception blocks whose branches are written\n"
    "                    in place into their concatenation: offset=)\n"
    "  --pins            pin up to three tensors (at=) in one program in eight,\n"
    "                    as the harness's cases do\n"
    "  -o FILE           write to FILE (default stdout)\n";

static bool parse_devices(const char *s, mp_gen_options *o) {
    o->n_devices = 0;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char tok[32];
        if (n == 0 || n >= sizeof tok || o->n_devices == 16) return false;
        memcpy(tok, s, n);
        tok[n] = 0;
        mp_device d = {0, 0};
        char *colon = strchr(tok, ':');
        if (colon) *colon = 0;
        if (strcmp(tok, "cpu") == 0) d.type = MP_DEV_CPU;
        else if (strcmp(tok, "cuda") == 0) d.type = MP_DEV_CUDA;
        else return false;
        if (colon) {
            char *end;
            unsigned long v = strtoul(colon + 1, &end, 10);
            if (!colon[1] || *end || v > MP_MAX_DEVICE_INDEX) return false;
            d.index = (uint32_t)v;
        }
        o->devices[o->n_devices++] = d;
        s += n + (e ? 1 : 0);
        if (e && !*s) return false;
    }
    return o->n_devices > 0;
}

/* "hS-I": harness seed S, case I. */
static bool parse_case(const char *id, uint64_t *seed, uint64_t *i) {
    char *end;
    if (id[0] != 'h' || !(id[1] >= '0' && id[1] <= '9')) return false;
    errno = 0;
    *seed = strtoull(id + 1, &end, 10);
    if (errno || *end != '-' || !(end[1] >= '0' && end[1] <= '9')) return false;
    *i = strtoull(end + 1, &end, 10);
    return !errno && !*end;
}

/* The graph of a harness case, its options in a comment after the header. */
static void gen_case(uint64_t seed, uint64_t i, const char *id, mp_buf *b, char *args, size_t an) {
    mp_gen_options g;
    mp_options o;
    mp_harness_case(seed, i, &g, &o);
    mp_options_to_args(&o, args, an);
    mp_buf body;
    mp_buf_init(&body);
    mp_gen(&g, &body);
    const char *nl = memchr(body.data, '\n', body.len);
    size_t head = nl ? (size_t)(nl - body.data) + 1 : body.len;
    mp_buf_put(b, body.data, head);
    mp_buf_printf(b, "# memplan harness case %s: memplan plan %s FILE\n", id, args);
    mp_buf_put(b, body.data + head, body.len - head);
    mp_buf_free(&body);
}

typedef struct gen_args {
    mp_gen_options o;
    const char *out, *case_id;
    bool have_seed, have_shape;
} gen_args;

/* The shape options (--tensors, --depth, --devices, --profile); 1 when
 * arg is none of them. */
static int shape_option(mp_args *a, const char *arg, gen_args *ga) {
    uint64_t v;
    ga->have_shape = true;
    if (mp_args_is(a, arg, "--tensors")) {
        if (!mp_args_u64(a, "--tensors", 1, 100000000, &ga->o.tensors)) return MP_EFORMAT;
    } else if (mp_args_is(a, arg, "--depth")) {
        if (!mp_args_u64(a, "--depth", 0, 16, &v)) return MP_EFORMAT;
        ga->o.depth = (uint32_t)v;
    } else if (mp_args_is(a, arg, "--devices")) {
        const char *d = mp_args_value(a, "--devices");
        if (!d) return MP_EFORMAT;
        if (!parse_devices(d, &ga->o))
            return mp_usage_error(a->cmd, "bad device list '%s' (want e.g. cpu,cuda:0)", d);
    } else if (mp_args_is(a, arg, "--pins")) {
        ga->o.pins = true;
    } else if (mp_args_is(a, arg, "--profile")) {
        const char *p = mp_args_value(a, "--profile");
        if (!p) return MP_EFORMAT;
        int k = mp_gen_profile_parse(p);
        if (k < 0) return mp_usage_error(a->cmd, "unknown profile '%s'", p);
        ga->o.profile = (uint32_t)k;
    } else {
        return 1;
    }
    return MP_OK;
}

/* One option; -1 after --help. */
static int gen_option(mp_args *a, const char *arg, gen_args *ga) {
    if (mp_args_is(a, arg, "-h") || mp_args_is(a, arg, "--help")) {
        fputs(GEN_HELP, stdout);
        return -1;
    } else if (mp_args_is(a, arg, "--case")) {
        if (!(ga->case_id = mp_args_value(a, "--case"))) return MP_EFORMAT;
    } else if (mp_args_is(a, arg, "--seed")) {
        if (!mp_args_u64(a, "--seed", 0, UINT64_MAX, &ga->o.seed)) return MP_EFORMAT;
        ga->have_seed = true;
    } else if (mp_args_is(a, arg, "-o") || mp_args_is(a, arg, "--output")) {
        if (!(ga->out = mp_args_value(a, "-o"))) return MP_EFORMAT;
    } else {
        bool shape = ga->have_shape;
        int rc = shape_option(a, arg, ga);
        if (rc != 1) return rc;
        ga->have_shape = shape;
        return mp_usage_error(a->cmd, "unknown option '%s'", arg);
    }
    return MP_OK;
}

int mp_cmd_gen(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan gen");
    gen_args ga = {.out = "-"};
    mp_gen_options_default(&ga.o);
    const char *arg;
    bool opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) return mp_usage_error(a.cmd, "unexpected argument '%s'", arg);
        int rc = gen_option(&a, arg, &ga);
        if (rc) return rc < 0 ? 0 : rc;
    }
    uint64_t case_seed = 0, case_i = 0;
    if (ga.case_id && (ga.have_seed || ga.have_shape))
        return mp_usage_error(a.cmd, "--case gives the seed and the shape: no --seed, --tensors, --depth, "
                              "--devices or --profile with it");
    if (ga.case_id && !parse_case(ga.case_id, &case_seed, &case_i))
        return mp_usage_error(a.cmd, "bad case id '%s' (want hSEED-INDEX, as the harness prints, e.g. h1-105)",
                              ga.case_id);
    if (!ga.have_seed && !ga.case_id) return mp_usage_error(a.cmd, "--seed or --case is required");
    char args[200] = "";
    mp_err err;
    int rc;
    if (ga.case_id) { /* a harness case: small, made whole */
        mp_buf b;
        mp_buf_init(&b);
        gen_case(case_seed, case_i, ga.case_id, &b, args, sizeof args);
        rc = mp_write_buf(ga.out, &b, NULL, 0, &err);
        mp_buf_free(&b);
    } else {
        rc = mp_gen_write(&ga.o, ga.out, &err);
    }
    if (rc) return mp_cli_fail(a.cmd, &err);
    if (ga.case_id)
        fprintf(stderr, "memplan gen: case %s: plan it with `memplan plan %s %s`\n", ga.case_id, args,
                strcmp(ga.out, "-") ? ga.out : "FILE");
    return 0;
}

static const char IMPORT_HELP[] =
    "usage: memplan import-csv FILE.csv [-o FILE.mpg]\n"
    "\n"
    "Turn a MiniMalloc / idealloc allocation problem (CSV with columns id,\n"
    "lower, upper, size; lifetimes half-open [lower, upper)) into a graph\n"
    "whose tensors have exactly those lifetimes and sizes.  Plan it with\n"
    "--alignment 1 to keep the sizes exact, e.g.\n"
    "  memplan import-csv A.1048576.csv -o A.mpg\n"
    "  memplan plan --alignment 1 --exact A.mpg\n";

int mp_cmd_import_csv(int argc, char **argv) {
    mp_args a;
    mp_args_init(&a, argc, argv, "memplan import-csv");
    const char *in = NULL, *out = "-", *arg;
    bool opt;
    while ((arg = mp_args_next(&a, &opt))) {
        if (!opt) {
            if (in) return mp_usage_error(a.cmd, "more than one input file");
            in = arg;
        } else if (mp_args_is(&a, arg, "-h") || mp_args_is(&a, arg, "--help")) {
            fputs(IMPORT_HELP, stdout);
            return 0;
        } else if (mp_args_is(&a, arg, "-o") || mp_args_is(&a, arg, "--output")) {
            if (!(out = mp_args_value(&a, "-o"))) return MP_EFORMAT;
        } else {
            return mp_usage_error(a.cmd, "unknown option '%s'", arg);
        }
    }
    if (!in) return mp_usage_error(a.cmd, "no CSV file given");
    mp_err err;
    size_t len;
    char *data = mp_read_file(in, &len, &err);
    if (!data) return mp_cli_fail(a.cmd, &err);
    mp_buf b;
    mp_buf_init(&b);
    int rc = mp_import_csv(data, len, in, &b, &err);
    mp_xfree(data);
    const char *inputs[1] = {in};
    if (rc == MP_OK) rc = mp_write_buf(out, &b, inputs, 1, &err);
    mp_buf_free(&b);
    return rc ? mp_cli_fail(a.cmd, &err) : 0;
}
