/* args.c - a small, strict command-line option reader, and the clock the
 * benchmarks read. */
#include "cli.h"

#include <time.h>

#include <stdio.h>

void mp_args_init(mp_args *a, int argc, char **argv, const char *cmd) {
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->i = 1;
    a->cmd = cmd;
}

const char *mp_args_next(mp_args *a, bool *is_opt) {
    if (a->i >= a->argc) return NULL;
    char *s = a->argv[a->i++];
    a->eq = NULL;
    if (!a->done && strcmp(s, "--") == 0) {
        a->done = true;
        return mp_args_next(a, is_opt);
    }
    *is_opt = !a->done && s[0] == '-' && s[1] != 0;
    if (*is_opt && s[1] == '-') a->eq = strchr(s, '=');
    return s;
}

bool mp_args_is(mp_args *a, const char *arg, const char *name) {
    size_t n = a->eq ? (size_t)(a->eq - arg) : strlen(arg);
    return strlen(name) == n && memcmp(arg, name, n) == 0;
}

int mp_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see '%s --help')\n", cmd);
    va_end(ap);
    return MP_EFORMAT;
}

const char *mp_args_value(mp_args *a, const char *name) {
    if (a->eq) return a->val = a->eq + 1;
    if (a->i >= a->argc) {
        mp_usage_error(a->cmd, "option %s needs a value", name);
        return NULL;
    }
    return a->val = a->argv[a->i++];
}

bool mp_args_flag_ok(mp_args *a, const char *name) {
    if (!a->eq) return true;
    mp_usage_error(a->cmd, "option %s takes no value", name);
    return false;
}

bool mp_args_u64(mp_args *a, const char *name, uint64_t lo, uint64_t hi,
                 uint64_t *out) {
    const char *v = mp_args_value(a, name);
    if (!v) return false;
    uint64_t x = 0;
    bool ok = *v != 0;
    for (const char *s = v; *s && ok; s++) {
        ok = *s >= '0' && *s <= '9' && x <= (UINT64_MAX - 9) / 10;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    if (!ok || x < lo || x > hi) {
        mp_usage_error(a->cmd, "bad value '%s' for %s (want %llu..%llu)", v, name,
                       (unsigned long long)lo, (unsigned long long)hi);
        return false;
    }
    *out = x;
    return true;
}

int mp_cli_fail(const char *cmd, const mp_err *err) {
    fprintf(stderr, "%s: %s\n", cmd, err->msg);
    if (err->code == MP_ENOMEM) return MP_EIO; /* a resource error, like I/O (4) */
    return err->code;
}

void mp_cli_print_planners(FILE *f) {
    fputs("\nplanners (--algo):\n", f);
    for (uint32_t i = 0; i < mp_planner_count(); i++) {
        const mp_planner *p = mp_planner_get(i);
        fprintf(f, "  %-10s %s%s%s\n", p->name, p->summary,
                p->caps & MP_CAP_ET_EXACT ? "; --et-exact" : "", p->caps & MP_CAP_EXACT ? "; --exact" : "");
    }
}

/* A time as --since and --started take it: a date, YYYY-MM-DD, optionally with a time of day
 * (THH:MM[:SS], a space for the T, a final Z); the runs' start
 * times are stored in that form in UTC, so --since is a string comparison. */
bool mp_args_is_time(const char *s) {
    static const char *const forms[] = {"dddd-dd-dd", "dddd-dd-ddTdd:dd", "dddd-dd-ddTdd:dd:dd"};
    size_t n = strlen(s);
    if (n > 10 && s[n - 1] == 'Z') n--;
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
        const char *p = forms[f];
        if (strlen(p) != n) continue;
        size_t i = 0;
        for (; i < n; i++)
            if (p[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : p[i] == 'T' ? s[i] != 'T' && s[i] != ' ' : s[i] != p[i])
                break;
        if (i < n) continue;
        int month = (s[5] - '0') * 10 + s[6] - '0', day = (s[8] - '0') * 10 + s[9] - '0';
        int hour = n > 10 ? (s[11] - '0') * 10 + s[12] - '0' : 0;
        int minute = n > 10 ? (s[14] - '0') * 10 + s[15] - '0' : 0;
        int second = n > 16 ? (s[17] - '0') * 10 + s[18] - '0' : 0;
        return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 && minute < 60 && second < 61;
    }
    return false;
}

double mp_cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
