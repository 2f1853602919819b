/* report.c - the verifier's report as text lines or as JSON. */
#include "verify.h"

#include <math.h>
#include <stdio.h>

static void put_ratio(mp_buf *b, double ratio) {
    if (isinf(ratio)) mp_buf_puts(b, "inf");
    else mp_buf_printf(b, "%.4f", ratio);
}

void mp_verify_write_text(const mp_verify_report *r, mp_buf *b) {
    for (uint32_t i = 0; i < r->n_w; i++) {
        const mp_violation *w = &r->w[i];
        mp_buf_printf(b, "%s%swarning: %s\n", w->graph, w->graph[0] ? ": " : "", w->msg);
    }
    if (r->n_warnings > r->n_w)
        mp_buf_printf(b, "... and %llu more warnings\n", (unsigned long long)(r->n_warnings - r->n_w));
    for (uint32_t i = 0; i < r->n_v; i++) {
        const mp_violation *v = &r->v[i];
        if (v->graph[0]) mp_buf_printf(b, "%s: %s\n", v->graph, v->msg);
        else mp_buf_printf(b, "%s\n", v->msg);
    }
    if (r->n_violations > r->n_v)
        mp_buf_printf(b, "... and %llu more violations\n",
                      (unsigned long long)(r->n_violations - r->n_v));
    if (r->n_violations) {
        mp_buf_printf(b, "INVALID: %llu violation%s (", (unsigned long long)r->n_violations,
                      r->n_violations == 1 ? "" : "s");
        bool first = true;
        for (uint32_t k = 1; k < MP_N_RULES; k++) {
            if (!r->per_rule[k]) continue;
            mp_buf_printf(b, "%s%s %llu", first ? "" : ", ", mp_rule_name(k),
                          (unsigned long long)r->per_rule[k]);
            first = false;
        }
        mp_buf_puts(b, "); ");
    } else if (r->n_warnings) {
        mp_buf_printf(b, "valid, wasteful: %llu warning%s, %llu bytes never used; ", (unsigned long long)r->n_warnings,
                      r->n_warnings == 1 ? "" : "s", (unsigned long long)r->wasted_bytes);
    } else {
        mp_buf_puts(b, "valid; ");
    }
    mp_buf_printf(b, "total %llu bytes, lower bound %llu bytes, ratio ",
                  (unsigned long long)r->total_bytes, (unsigned long long)r->lower_bound);
    put_ratio(b, r->ratio);
    mp_buf_puts(b, "\n");
}


static void json_violation(mp_buf *b, const mp_violation *v) {
    mp_buf_puts(b, "{\"graph\":");
    mp_buf_put_json_string(b, v->graph);
    mp_buf_printf(b, ",\"rule\":%u,\"rule_name\":", v->rule);
    mp_buf_put_json_string(b, mp_rule_name(v->rule));
    mp_buf_puts(b, ",\"kind\":");
    mp_buf_put_json_string(b, v->kind);
    mp_buf_puts(b, ",\"message\":");
    mp_buf_put_json_string(b, v->msg);
    mp_buf_puts(b, ",\"tensors\":[");
    for (int k = 0; k < 2 && v->tensors[k]; k++) {
        if (k) mp_buf_put(b, ",", 1);
        mp_buf_put_json_string(b, v->tensors[k]);
    }
    mp_buf_puts(b, "],\"buffer\":");
    if (v->buffer >= 0) mp_buf_printf(b, "%lld", (long long)v->buffer);
    else mp_buf_puts(b, "null");
    mp_buf_puts(b, ",\"ranges\":[");
    for (uint32_t k = 0; k < v->n_ranges; k++)
        mp_buf_printf(b, "%s[%llu,%llu]", k ? "," : "", (unsigned long long)v->ranges[k][0],
                      (unsigned long long)v->ranges[k][1]);
    mp_buf_puts(b, "],\"nodes\":");
    if (v->nodes[0] >= 0 && v->nodes[1] >= 0)
        mp_buf_printf(b, "[%lld,%lld]", (long long)v->nodes[0], (long long)v->nodes[1]);
    else if (v->nodes[0] >= 0)
        mp_buf_printf(b, "[%lld]", (long long)v->nodes[0]);
    else
        mp_buf_puts(b, "null");
    mp_buf_puts(b, "}");
}

void mp_verify_write_json(const mp_verify_report *r, mp_buf *b) {
    mp_buf_printf(b, "{\"valid\":%s,\"violation_count\":%llu,\"counts\":{",
                  r->n_violations ? "false" : "true", (unsigned long long)r->n_violations);
    for (uint32_t k = 1; k < MP_N_RULES; k++)
        mp_buf_printf(b, "%s\"%s\":%llu", k > 1 ? "," : "", mp_rule_name(k),
                      (unsigned long long)r->per_rule[k]);
    mp_buf_puts(b, "},\"violations\":[");
    for (uint32_t i = 0; i < r->n_v; i++) {
        if (i) mp_buf_put(b, ",", 1);
        json_violation(b, &r->v[i]);
    }
    mp_buf_printf(b, "],\"warning_count\":%llu,\"wasted_bytes\":%llu,\"warnings\":[",
                  (unsigned long long)r->n_warnings, (unsigned long long)r->wasted_bytes);
    for (uint32_t i = 0; i < r->n_w; i++) {
        if (i) mp_buf_put(b, ",", 1);
        json_violation(b, &r->w[i]);
    }
    mp_buf_printf(b, "],\"truncated\":%llu,\"quality\":{\"total_bytes\":%llu,"
                     "\"lower_bound\":%llu,\"ratio\":",
                  (unsigned long long)(r->n_violations - r->n_v),
                  (unsigned long long)r->total_bytes, (unsigned long long)r->lower_bound);
    if (isinf(r->ratio)) mp_buf_puts(b, "null");
    else mp_buf_printf(b, "%.6f", r->ratio);
    mp_buf_puts(b, ",\"buffers\":[");
    for (uint32_t i = 0; i < r->n_buffers; i++)
        mp_buf_printf(b, "%s{\"index\":%u,\"bytes\":%llu,\"lower_bound\":%llu}", i ? "," : "", i,
                      (unsigned long long)r->buf_bytes[i], (unsigned long long)r->buf_lower[i]);
    mp_buf_puts(b, "]}}\n");
}
