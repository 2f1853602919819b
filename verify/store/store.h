/* store.h - private to the metrics store (verify/store/): the SQLite
 * handle behind an mp_db.  Every SQL statement of the project lives in
 * this folder; nothing outside it includes sqlite3.h. */
#ifndef MP_STORE_H
#define MP_STORE_H

#include "internal.h"
#include "memplan_tools.h"

#include <sqlite3.h>

sqlite3 *mp_db_sqlite(mp_db *d);

#endif
