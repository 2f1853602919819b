/* report_table.h - private to store/: the report's tables. */
#ifndef MP_REPORT_TABLE_H
#define MP_REPORT_TABLE_H

#include "store.h"

typedef struct mp_rtable {
    const char *name;
    const char *const *cols;
    int ncols;
    char ***rows; /* rows[r][c] */
    size_t n, cap;
} mp_rtable;

char *mp_rtable_dup(const unsigned char *s); /* NULL: "" */
/* The statement's rows into t, at most `max` in all. */
int mp_rtable_fetch(sqlite3 *db, sqlite3_stmt *st, mp_rtable *t, size_t max, mp_err *err);
/* sql with ?1 = since (or ""), ?2 = algo (or ""): all of its rows. */
int mp_rtable_query(sqlite3 *db, const char *sql, const char *since, const char *algo, mp_rtable *t,
                    mp_err *err);
void mp_rtable_free(mp_rtable *t);
/* The n tables as format "text", "csv" or "json". */
void mp_rtable_put(mp_rtable *t, int n, const char *format, mp_buf *out);

#endif
