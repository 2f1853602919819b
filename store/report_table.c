/* report_table.c - the report's tables (history.c, by_commit.c): rows of
 * text from SQLite, printed as aligned text, CSV (one header per section)
 * or JSON. */
#include "report_table.h"

#include <stdio.h>

char *mp_rtable_dup(const unsigned char *s) {
    const char *t = s ? (const char *)s : "";
    return strcpy(mp_xmalloc(strlen(t) + 1), t);
}

/* The statement's rows into t, at most `max` in all. */
int mp_rtable_fetch(sqlite3 *db, sqlite3_stmt *st, mp_rtable *t, size_t max, mp_err *err) {
    int rc = SQLITE_DONE;
    while (t->n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        char **row = mp_xmalloc((size_t)t->ncols * sizeof *row);
        for (int c = 0; c < t->ncols; c++) row[c] = mp_rtable_dup(sqlite3_column_text(st, c));
        MP_VEC_PUSH(t->rows, t->n, t->cap, row);
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    return MP_OK;
}

int mp_rtable_query(sqlite3 *db, const char *sql, const char *since, const char *algo, mp_rtable *t,
                     mp_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return mp_err_set(err, MP_EFORMAT, "report query: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, since ? since : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, algo ? algo : "", -1, SQLITE_TRANSIENT);
    int rc = mp_rtable_fetch(db, st, t, SIZE_MAX, err);
    sqlite3_finalize(st);
    return rc;
}

void mp_rtable_free(mp_rtable *t) {
    for (size_t r = 0; r < t->n; r++) {
        for (int c = 0; c < t->ncols; c++) mp_xfree(t->rows[r][c]);
        mp_xfree(t->rows[r]);
    }
    mp_xfree(t->rows);
}

/* Text goes to terminals: database strings are shown printable. */
static void escape_controls(mp_rtable *t) {
    for (size_t r = 0; r < t->n; r++)
        for (int c = 0; c < t->ncols; c++) {
            mp_buf b;
            mp_buf_init(&b);
            mp_buf_put_printable(&b, t->rows[r][c]);
            mp_buf_put(&b, "", 1);
            mp_xfree(t->rows[r][c]);
            t->rows[r][c] = b.data;
        }
}

static void put_text(mp_rtable *t, mp_buf *b) {
    escape_controls(t);
    size_t w[16] = {0};
    for (int c = 0; c < t->ncols; c++) {
        w[c] = strlen(t->cols[c]);
        for (size_t r = 0; r < t->n; r++)
            if (strlen(t->rows[r][c]) > w[c]) w[c] = strlen(t->rows[r][c]);
    }
    mp_buf_printf(b, "== %s ==\n", t->name);
    for (int c = 0; c < t->ncols; c++) mp_buf_printf(b, "%-*s%s", (int)w[c], t->cols[c], c + 1 < t->ncols ? "  " : "\n");
    for (size_t r = 0; r < t->n; r++)
        for (int c = 0; c < t->ncols; c++)
            mp_buf_printf(b, "%-*s%s", (int)w[c], t->rows[r][c], c + 1 < t->ncols ? "  " : "\n");
    if (!t->n) mp_buf_puts(b, "(none)\n");
    mp_buf_puts(b, "\n");
}

static void csv_field(mp_buf *b, const char *s) {
    if (!strpbrk(s, ",\"\n")) {
        mp_buf_puts(b, s);
        return;
    }
    mp_buf_put(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"') mp_buf_put(b, "\"", 1);
        mp_buf_put(b, s, 1);
    }
    mp_buf_put(b, "\"", 1);
}

static void put_csv(const mp_rtable *t, mp_buf *b) {
    mp_buf_puts(b, "section");
    for (int c = 0; c < t->ncols; c++) mp_buf_printf(b, ",%s", t->cols[c]);
    mp_buf_puts(b, "\n");
    for (size_t r = 0; r < t->n; r++) {
        mp_buf_puts(b, t->name);
        for (int c = 0; c < t->ncols; c++) {
            mp_buf_put(b, ",", 1);
            csv_field(b, t->rows[r][c]);
        }
        mp_buf_puts(b, "\n");
    }
}

/* Numbers stay numbers in JSON; SQLite gives them back as text. */
static bool numeric(const char *s) {
    if (!*s) return false;
    const char *p = s + (*s == '-' || *s == '+');
    bool digit = false, dot = false;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') digit = true;
        else if (*p == '.' && !dot) dot = true;
        else return false;
    }
    return digit && *s != '+';
}

static void put_json(const mp_rtable *t, mp_buf *b, bool last) {
    mp_buf_printf(b, "\"%s\":[", t->name);
    for (size_t r = 0; r < t->n; r++) {
        mp_buf_puts(b, r ? ",{" : "{");
        for (int c = 0; c < t->ncols; c++) {
            mp_buf_printf(b, "%s\"%s\":", c ? "," : "", t->cols[c]);
            const char *v = t->rows[r][c];
            if (!*v) mp_buf_puts(b, "null");
            else if (numeric(v)) mp_buf_puts(b, v);
            else mp_buf_put_json_string(b, v);
        }
        mp_buf_puts(b, "}");
    }
    mp_buf_puts(b, last ? "]" : "],");
}

void mp_rtable_put(mp_rtable *t, int n, const char *format, mp_buf *out) {
    if (strcmp(format, "csv") == 0) {
        for (int i = 0; i < n; i++) put_csv(&t[i], out);
    } else if (strcmp(format, "json") == 0) {
        mp_buf_puts(out, "{");
        for (int i = 0; i < n; i++) put_json(&t[i], out, i == n - 1);
        mp_buf_puts(out, "}\n");
    } else {
        for (int i = 0; i < n; i++) put_text(&t[i], out);
    }
}
