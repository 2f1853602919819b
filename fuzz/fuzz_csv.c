/* fuzz_csv.c - target "csv": `memplan import-csv` (MiniMalloc's and
 * idealloc's CSV problems into a graph file).
 *
 * Any bytes.  A rejected input comes back as MP_EFORMAT with a "NAME:LINE:
 * message"; an accepted one is a graph file that parses, and importing
 * the same bytes again gives the same file (the importer is
 * deterministic). */
#include "fuzz.h"
#include "internal.h"
#include "harness.h"
#include "files.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mp_buf a, b;
    mp_buf_init(&a);
    mp_buf_init(&b);
    mp_err err;
    int rc = mp_import_csv((const char *)data, size, "<csv>", &a, &err);
    if (rc != MP_OK) {
        FUZZ_ASSERT(rc == MP_EFORMAT || rc == MP_EPLAN,
                    "import-csv failed with code %d: %s", rc, err.msg);
        FUZZ_ASSERT(err.msg[0], "import-csv failed without a message");
    } else {
        mp_program *p = mp_graph_parse(a.data, a.len, "<imported>", &err);
        FUZZ_ASSERT(p != NULL, "import-csv wrote a graph that does not parse: %s", err.msg);
        mp_program_free(p);
        FUZZ_ASSERT(mp_import_csv((const char *)data, size, "<csv>", &b, &err) == MP_OK &&
                        b.len == a.len && memcmp(a.data, b.data, a.len) == 0,
                    "import-csv is not deterministic");
    }
    mp_buf_free(&a);
    mp_buf_free(&b);
    return 0;
}
