/* The JSON reader (json_parse): no crash on any bytes, and a tree it
 * accepts is written out (json_write_value) as JSON that reads back to a
 * tree of the same shape and numbers, and writing that again changes
 * nothing more.  Equal numbers are equal doubles: -0.0 is written "-0",
 * which reads back as the integer 0.  Strings are compared from the second
 * round on: the writer puts U+FFFD for bytes that are not UTF-8, which the
 * reader lets through. */
#include <errno.h>

#include "fuzz.h"
#include "json.h"

FUZZ_QUIET_LOG()

/* The tree written compactly into a malloc'd string. */
static char *write_out(const struct json_value *v, size_t *ret_len) {
        struct json_writer w;
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        if (!f)
                abort();
        json_writer_init(&w, f, 0);
        json_write_value(&w, v);
        FUZZ_CHECK(json_writer_finish(&w) == 0);
        FUZZ_CHECK(fclose(f) == 0);
        *ret_len = len;
        return out;
}

static bool same_tree(const struct json_value *a, const struct json_value *b, bool strings) {
        if (a->type != b->type)
                return false;
        switch (a->type) {
        case JSON_BOOL:
                return a->boolean == b->boolean;
        case JSON_NUMBER:
                return a->number == b->number && (!a->is_int || !b->is_int || a->integer == b->integer);
        case JSON_STRING:
                return !strings || (a->string_len == b->string_len && memcmp(a->string, b->string, a->string_len) == 0);
        case JSON_ARRAY:
        case JSON_OBJECT:
                if (a->n != b->n)
                        return false;
                for (size_t i = 0; i < a->n; i++)
                        if ((strings && a->type == JSON_OBJECT && strcmp(a->items[i].key, b->items[i].key) != 0) ||
                            !same_tree(&a->items[i], &b->items[i], strings))
                                return false;
                return true;
        default:
                return true;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size ? size : 1);
        struct json_value *v = NULL, *v2 = NULL;
        struct json_value *v3 = NULL;
        char *out, *out2;
        size_t len, len2;
        int r;

        memcpy(buf, data, size);
        r = json_parse(buf, size, &v);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -E2BIG || r == -ENOMEM);
        if (r == 0) {
                out = write_out(v, &len);
                FUZZ_CHECK(json_parse(out, len, &v2) == 0);
                FUZZ_CHECK(same_tree(v, v2, false));
                out2 = write_out(v2, &len2);
                FUZZ_CHECK(json_parse(out2, len2, &v3) == 0);
                FUZZ_CHECK(same_tree(v2, v3, true));
                free(out);
                free(out2);
                json_free(v2);
                json_free(v3);
        }
        json_free(v);
        free(buf);
        return 0;
}
