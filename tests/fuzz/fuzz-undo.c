/* The undo journal (undo_parse): no crash on any bytes, and the entries
 * it reads are written (undo_format) as a journal that reads back to the
 * same entries, with no line skipped. */
#include <errno.h>

#include "fuzz.h"
#include "undo.h"

FUZZ_QUIET_LOG()

static struct undo *parse(const char *buf, size_t len) {
        struct undo *u = calloc(1, sizeof(*u));

        if (!u)
                abort();
        FUZZ_CHECK(undo_parse(u, buf, len) == 0);
        return u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size ? size : 1), *out, *out2;
        struct undo *u, *u2;
        size_t len, len2;

        memcpy(buf, data, size);
        u = parse(buf, size);
        FUZZ_CHECK(undo_format(u, &out, &len) == 0);
        u2 = parse(out, len);
        FUZZ_CHECK(u2->corrupt == 0);
        FUZZ_CHECK(u2->n_entries == u->n_entries);
        FUZZ_CHECK(undo_format(u2, &out2, &len2) == 0);
        FUZZ_CHECK(len == len2 && memcmp(out, out2, len) == 0);
        free(out);
        free(out2);
        undo_free(u);
        undo_free(u2);
        free(buf);
        return 0;
}
