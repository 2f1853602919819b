/* store.h - private to the metrics store (verify/store/): the SQLite
 * handle behind an mp_db.  Every SQL statement of the project lives in
 * this folder; nothing outside it includes sqlite3.h. */
#ifndef MP_STORE_H
#define MP_STORE_H

#include "internal.h"
#include "memplan_tools.h"

#include <sqlite3.h>

sqlite3 *mp_db_sqlite(mp_db *d);
/* Within a transaction the caller holds: */
int mp_db_insert_run(mp_db *d, const mp_run_info *run, int64_t *id, mp_err *err);
int mp_db_summarize(mp_db *d, int64_t run, mp_err *err); /* summaries from its results */
/* One statement or several, errors as "PATH: message". */
int mp_db_exec(mp_db *d, const char *sql, mp_err *err);

#endif
