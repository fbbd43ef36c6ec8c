/* JSON writer escaping and shapes, reader round trips and malformed input. */
#include <errno.h>
#include <math.h>

#include "json.h"
#include "testlib.h"
#include "util.h"

/* Runs fn on a writer into a memory buffer; returns the text (caller frees)
 * and the finish result in *ret_r. */
static char *write_to_string(void (*fn)(struct json_writer *w, const void *arg), const void *arg,
                             unsigned flags, int *ret_r) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        struct json_writer w;

        assert_non_null(f);
        json_writer_init(&w, f, flags);
        fn(&w, arg);
        *ret_r = json_writer_finish(&w);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void write_string(struct json_writer *w, const void *arg) {
        const char *s = arg;
        json_string(w, s);
}

static void test_escaping(_unused_ void **state) {
        static const struct {
                const char *what, *in, *out;
        } cases[] = {
                { "plain", "eth0", "\"eth0\"" },
                { "quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\"" },
                { "short escapes", "\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"" },
                { "other control chars", "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"" },
                { "valid 2-byte UTF-8 kept", "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
                { "valid 4-byte UTF-8 kept", "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"" },
                { "lone continuation byte", "a\x80z", "\"a\\ufffdz\"" },
                { "truncated sequence", "a\xc3", "\"a\\ufffd\"" },
                { "overlong slash", "\xc0\xaf", "\"\\ufffd\\ufffd\"" },
                { "UTF-16 surrogate in UTF-8", "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },
                { "above U+10FFFF", "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
                { "slash not escaped", "a/b", "\"a/b\"" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int r;
                char *s = write_to_string(write_string, cases[i].in, 0, &r);
                if (r != 0 || strcmp(s, cases[i].out) != 0)
                        fail_msg("%s: wrote '%s' (r=%d), want '%s'", cases[i].what, s, r, cases[i].out);
                /* every output must parse back */
                struct json_value *v = NULL;
                if (json_parse(s, strlen(s), &v) != 0 || v->type != JSON_STRING)
                        fail_msg("%s: output does not parse as a string", cases[i].what);
                json_free(v);
                free(s);
        }
}

static void write_doc(struct json_writer *w, const void *arg) {
        cpuset_t s;

        (void) arg;
        cpuset_zero(&s);
        cpuset_set(&s, 1);
        cpuset_set(&s, 3);
        json_begin_object(w);
        json_key_int(w, "i", -5);
        json_key_uint(w, "u", UINT64_MAX);
        json_key_double(w, "d", 0.1);
        json_key_double(w, "nan", NAN);
        json_key_double(w, "inf", -INFINITY);
        json_key(w, "p");
        json_double_prec(w, 12.345, 2);
        json_key_bool(w, "t", true);
        json_key_null(w, "n");
        json_key_cpuset(w, "cpus", &s);
        json_key_begin_array(w, "a");
        json_begin_object(w);
        json_end_object(w);
        json_begin_array(w);
        json_end_array(w);
        json_string(w, NULL);
        json_end_array(w);
        json_end_object(w);
}

static void test_writer_compact(_unused_ void **state) {
        int r;
        char *s = write_to_string(write_doc, NULL, 0, &r);

        assert_int_equal(r, 0);
        assert_string_equal(s, "{\"i\":-5,\"u\":18446744073709551615,\"d\":0.1,\"nan\":null,"
                               "\"inf\":null,\"p\":12.35,\"t\":true,\"n\":null,\"cpus\":[1,3],"
                               "\"a\":[{},[],null]}");
        free(s);
}

static void write_lists(struct json_writer *w, const void *arg) {
        const cpuset_t *full = arg;
        cpuset_t none, edge;

        cpuset_zero(&none);
        cpuset_zero(&edge);
        cpuset_set(&edge, 0);
        cpuset_set(&edge, 9);
        cpuset_set(&edge, 10);
        cpuset_set(&edge, 99);
        cpuset_set(&edge, 100);
        cpuset_set(&edge, CPUSET_MAX - 1);
        json_begin_array(w);
        json_int(w, INT64_MIN);
        json_int(w, 0);
        json_uint(w, 0);
        json_double6(w, 0.420131654654159);
        json_double6(w, -NAN);
        json_cpuset(w, &none);
        json_cpuset(w, NULL);
        json_cpuset(w, &edge);
        json_cpuset(w, full);
        json_end_array(w);
}

/* json_int, json_double6 and json_cpuset format numbers without printf,
 * the lists in a buffer flushed when nearly full: what printf gave, over
 * the whole range of CPU numbers (a list of every CPU flushes many times). */
static void test_writer_numbers(_unused_ void **state) {
        cpuset_t full;
        size_t cap = 16 * CPUSET_MAX + 256, n;
        char *want = malloc(cap), *s;
        int r;

        assert_non_null(want);
        cpuset_zero(&full);
        for (int c = 0; c < CPUSET_MAX; c++)
                cpuset_set(&full, c);
        n = (size_t) snprintf(want, cap, "[-9223372036854775808,0,0,0.420132,null,[],[],[0,9,10,99,100,%d],[", CPUSET_MAX - 1);
        for (int c = 0; c < CPUSET_MAX; c++)
                n += (size_t) snprintf(want + n, cap - n, c ? ",%d" : "%d", c);
        snprintf(want + n, cap - n, "]]");
        s = write_to_string(write_lists, &full, 0, &r);
        assert_int_equal(r, 0);
        assert_string_equal(s, want);
        free(s);
        /* pretty: the lists stay on one line */
        s = write_to_string(write_lists, &full, JSON_PRETTY, &r);
        assert_int_equal(r, 0);
        assert_non_null(strstr(s, "\n  [0,9,10,99,100,8191],\n"));
        free(s);
        free(want);
}

static void test_writer_pretty(_unused_ void **state) {
        int r;
        char *s = write_to_string(write_doc, NULL, JSON_PRETTY, &r);

        assert_int_equal(r, 0);
        assert_string_equal(s, "{\n"
                               "  \"i\": -5,\n"
                               "  \"u\": 18446744073709551615,\n"
                               "  \"d\": 0.1,\n"
                               "  \"nan\": null,\n"
                               "  \"inf\": null,\n"
                               "  \"p\": 12.35,\n"
                               "  \"t\": true,\n"
                               "  \"n\": null,\n"
                               "  \"cpus\": [1,3],\n"
                               "  \"a\": [\n"
                               "    {},\n"
                               "    [],\n"
                               "    null\n"
                               "  ]\n"
                               "}");
        free(s);
}

/* Members written directly, and the same members rendered by a members
 * writer and put in just before the object's end, give the same text. */
static void write_tail(struct json_writer *w) {
        json_key_begin_array(w, "inner");
        json_begin_object(w);
        json_key_string(w, "object", "irq/5");
        json_end_object(w);
        json_int(w, 7);
        json_end_array(w);
        json_key_int(w, "after", 2);
}

static void write_direct(struct json_writer *w, const void *arg) {
        (void) arg;
        json_begin_object(w);
        json_key_int(w, "before", 1);
        write_tail(w);
        json_end_object(w);
}

static void write_head(struct json_writer *w, const void *arg) {
        (void) arg;
        json_begin_object(w);
        json_key_int(w, "before", 1);
        json_end_object(w);
}

static void test_writer_members(_unused_ void **state) {
        static const unsigned flags[] = { 0, JSON_PRETTY };

        for (size_t k = 0; k < ELEMENTSOF(flags); k++) {
                char *buf = NULL, *direct, *head, *spliced;
                size_t len = 0, hl;
                FILE *f = open_memstream(&buf, &len);
                struct json_writer mw;
                int r;

                assert_non_null(f);
                json_writer_init_members(&mw, f, flags[k], 1);
                write_tail(&mw);
                assert_int_equal(mw.error, 0);
                assert_int_equal(mw.depth, 1);
                assert_int_equal(fclose(f), 0);
                direct = write_to_string(write_direct, NULL, flags[k], &r);
                assert_int_equal(r, 0);
                head = write_to_string(write_head, NULL, flags[k], &r);
                assert_int_equal(r, 0);
                /* the head's end: "\n}" pretty, "}" compact */
                hl = strlen(head) - ((flags[k] & JSON_PRETTY) ? 2 : 1);
                assert_non_null(spliced = calloc(1, strlen(head) + len + 1));
                memcpy(spliced, head, hl);
                memcpy(spliced + hl, buf, len);
                strcpy(spliced + hl + len, head + hl);
                assert_string_equal(spliced, direct);
                if (flags[k] & JSON_PRETTY)
                        assert_non_null(strstr(direct, "1,\n  \"inner\": [\n    {\n      \"object\": \"irq/5\"\n    },\n    7\n  ],\n  \"after\": 2\n}"));
                free(buf);
                free(direct);
                free(head);
                free(spliced);
        }
        {
                struct json_writer w;

                json_writer_init_members(&w, stdout, 0, 0);
                assert_int_equal(w.error, -EINVAL);
                json_writer_init_members(&w, stdout, 0, JSON_MAX_DEPTH + 1);
                assert_int_equal(w.error, -EINVAL);
        }
}

static void misuse_value_without_key(struct json_writer *w, const void *arg) {
        (void) arg;
        json_begin_object(w);
        json_int(w, 1);
        json_end_object(w);
}
static void misuse_key_in_array(struct json_writer *w, const void *arg) {
        (void) arg;
        json_begin_array(w);
        json_key(w, "k");
        json_end_array(w);
}
static void misuse_unclosed(struct json_writer *w, const void *arg) {
        (void) arg;
        json_begin_array(w);
}
static void misuse_mismatched(struct json_writer *w, const void *arg) {
        (void) arg;
        json_begin_array(w);
        json_end_object(w);
}
static void misuse_key_without_value(struct json_writer *w, const void *arg) {
        (void) arg;
        json_begin_object(w);
        json_key(w, "k");
        json_end_object(w);
}
static void misuse_too_deep(struct json_writer *w, const void *arg) {
        (void) arg;
        for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
                json_begin_array(w);
}

static void test_writer_misuse(_unused_ void **state) {
        static const struct {
                const char *what;
                void (*fn)(struct json_writer *w, const void *arg);
                int r;
        } cases[] = {
                { "value without key in object", misuse_value_without_key, -EINVAL },
                { "key inside array", misuse_key_in_array, -EINVAL },
                { "unclosed array", misuse_unclosed, -EINVAL },
                { "mismatched close", misuse_mismatched, -EINVAL },
                { "key without value", misuse_key_without_value, -EINVAL },
                { "nesting beyond the limit", misuse_too_deep, -E2BIG },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int r;
                char *s = write_to_string(cases[i].fn, NULL, 0, &r);
                if (r != cases[i].r)
                        fail_msg("%s: finish gave %d, want %d", cases[i].what, r, cases[i].r);
                free(s);
        }
}

static void test_doubles_round_trip(_unused_ void **state) {
        static const double values[] = { 0.0, 1.0, -1.5, 0.1, 1.0 / 3.0, 1e-300, 1.7976931348623157e308,
                                         123456789.123456789, 5e-324 };
        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);
                struct json_writer w;
                struct json_value *v = NULL;

                json_writer_init(&w, f, 0);
                json_double(&w, values[i]);
                assert_int_equal(json_writer_finish(&w), 0);
                fclose(f);
                assert_int_equal(json_parse(buf, len, &v), 0);
                assert_int_equal(v->type, JSON_NUMBER);
                if (v->number != values[i])
                        fail_msg("double %.17g wrote '%s' read back %.17g", values[i], buf, v->number);
                json_free(v);
                free(buf);
        }
}

static void test_parse_values(_unused_ void **state) {
        static const char doc[] =
                " {\"version\":1,\"name\":\"eth0\",\"neg\":-12,\"big\":9007199254740993,"
                "\"f\":2.5e1,\"ok\":true,\"no\":false,\"nil\":null,"
                "\"cpus\":[0,2,63],\"nested\":{\"a\":[[],{}]},"
                "\"esc\":\"\\u00e9\\ud83d\\ude00\\n\\/\",\"nul\":\"a\\u0000b\",\"lone\":\"\\udc00\"} \n";
        struct json_value *v = NULL;
        const char *s;
        int64_t i;
        double d;
        bool b;
        cpuset_t set;

        assert_int_equal(json_parse(doc, strlen(doc), &v), 0);
        assert_int_equal(v->type, JSON_OBJECT);
        assert_int_equal(json_count(v), 13);
        assert_int_equal(json_get_int(v, "version", &i), 0);
        assert_int_equal(i, 1);
        assert_int_equal(json_get_string(v, "name", &s), 0);
        assert_string_equal(s, "eth0");
        assert_int_equal(json_get_int(v, "neg", &i), 0);
        assert_int_equal(i, -12);
        /* beyond 2^53: the integer is exact where the double is not */
        assert_int_equal(json_get_int(v, "big", &i), 0);
        assert_true(i == 9007199254740993LL);
        assert_int_equal(json_get_number(v, "f", &d), 0);
        assert_true(d == 25.0);
        assert_int_equal(json_get_int(v, "f", &i), 0);
        assert_int_equal(i, 25);
        assert_int_equal(json_get_bool(v, "ok", &b), 0);
        assert_true(b);
        assert_int_equal(json_get_bool(v, "no", &b), 0);
        assert_false(b);
        assert_int_equal(json_get(v, "nil")->type, JSON_NULL);
        assert_int_equal(json_to_cpuset(json_get(v, "cpus"), &set), 0);
        assert_int_equal(cpuset_count(&set), 3);
        assert_true(cpuset_isset(&set, 63));
        assert_int_equal(json_count(json_get(v, "nested")), 1);
        assert_int_equal(json_index(json_get(json_get(v, "nested"), "a"), 1)->type, JSON_OBJECT);
        assert_null(json_index(json_get(json_get(v, "nested"), "a"), 2));
        assert_int_equal(json_get_string(v, "esc", &s), 0);
        assert_string_equal(s, "\xc3\xa9\xf0\x9f\x98\x80\n/");
        assert_int_equal(json_get(v, "nul")->string_len, 3);
        assert_int_equal(json_get_string(v, "lone", &s), 0);
        assert_string_equal(s, "\xef\xbf\xbd");

        /* lookups that must fail cleanly */
        assert_int_equal(json_get_int(v, "missing", &i), -ENOENT);
        assert_int_equal(json_get_int(v, "name", &i), -EMEDIUMTYPE);
        assert_int_equal(json_get_string(v, "version", &s), -EMEDIUMTYPE);
        assert_null(json_get(json_get(v, "cpus"), "x"));
        assert_null(json_index(v, 0));
        assert_null(json_get(NULL, "x"));
        json_free(v);
}

static void test_to_cpuset(_unused_ void **state) {
        static const struct {
                const char *what, *in;
                int r;
                int count;
        } cases[] = {
                { "empty", "[]", 0, 0 },
                { "duplicates", "[1,1,2]", 0, 2 },
                { "negative", "[-1]", -ERANGE, 0 },
                { "too large", "[8192]", -ERANGE, 0 },
                { "fraction", "[1.5]", -EMEDIUMTYPE, 0 },
                { "string element", "[\"1\"]", -EMEDIUMTYPE, 0 },
                { "not an array", "{}", -EMEDIUMTYPE, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct json_value *v = NULL;
                cpuset_t s;
                int r;

                assert_int_equal(json_parse(cases[i].in, strlen(cases[i].in), &v), 0);
                r = json_to_cpuset(v, &s);
                if (r != cases[i].r)
                        fail_msg("%s: gave %d, want %d", cases[i].what, r, cases[i].r);
                if (r == 0 && cpuset_count(&s) != cases[i].count)
                        fail_msg("%s: %d CPUs, want %d", cases[i].what, cpuset_count(&s), cases[i].count);
                json_free(v);
        }
}

static void test_malformed(_unused_ void **state) {
        static const struct {
                const char *what, *in;
        } cases[] = {
                { "empty input", "" },
                { "only white space", "  \n" },
                { "bare word", "hello" },
                { "truncated true", "tru" },
                { "unterminated string", "\"abc" },
                { "unterminated escape", "\"abc\\" },
                { "bad escape", "\"\\x\"" },
                { "short unicode escape", "\"\\u12\"" },
                { "non-hex unicode escape", "\"\\u12zz\"" },
                { "raw newline in string", "\"a\nb\"" },
                { "unterminated array", "[1,2" },
                { "trailing comma in array", "[1,]" },
                { "leading comma", "[,1]" },
                { "missing comma", "[1 2]" },
                { "unterminated object", "{\"a\":1" },
                { "trailing comma in object", "{\"a\":1,}" },
                { "missing colon", "{\"a\" 1}" },
                { "non-string key", "{1:2}" },
                { "missing value", "{\"a\":}" },
                { "mismatched brackets", "[1}" },
                { "two values", "1 2" },
                { "garbage after value", "{} x" },
                { "leading plus", "+1" },
                { "leading zero", "01" },
                { "bare minus", "-" },
                { "dot without digits", "1." },
                { "exponent without digits", "1e" },
                { "hex number", "0x10" },
                { "NaN", "NaN" },
                { "Infinity", "Infinity" },
                { "number overflowing double", "1e999" },
                { "single quotes", "'a'" },
                { "NUL byte", "[1,\0 2]" },
                { "too deep", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct json_value *v = NULL;
                /* "NUL byte" needs its real length */
                size_t len = strcmp(cases[i].what, "NUL byte") == 0 ? 7 : strlen(cases[i].in);
                int r = json_parse(cases[i].in, len, &v);
                if (r != -EBADMSG)
                        fail_msg("%s: '%s' gave %d, want -EBADMSG", cases[i].what, cases[i].in, r);
                assert_null(v);
        }
}

/* Every prefix of a valid document is malformed (except the whole), and
 * must not crash or leak on any of them. */
static void test_truncations(_unused_ void **state) {
        static const char doc[] = "{\"a\":[1,-2.5e3,\"x\\u00e9\",true,false,null,{\"b\":{}}]}";
        size_t n = strlen(doc);

        for (size_t len = 0; len < n; len++) {
                struct json_value *v = NULL;
                int r = json_parse(doc, len, &v);
                if (r != -EBADMSG)
                        fail_msg("prefix of %zu bytes gave %d", len, r);
        }
}

static void test_depth_limit(_unused_ void **state) {
        char buf[2 * JSON_MAX_DEPTH + 2];
        struct json_value *v = NULL;
        int depth = JSON_MAX_DEPTH;

        /* exactly JSON_MAX_DEPTH nested arrays parse; one more does not */
        for (int i = 0; i < depth; i++) {
                buf[i] = '[';
                buf[2 * depth - 1 - i] = ']';
        }
        assert_int_equal(json_parse(buf, 2 * depth, &v), 0);
        json_free(v);
        v = NULL;
        memmove(buf + 1, buf, 2 * depth);
        buf[0] = '[';
        buf[2 * depth + 1] = ']';
        assert_int_equal(json_parse(buf, 2 * depth + 2, &v), -EBADMSG);
}

static void test_round_trip(_unused_ void **state) {
        static const char *const docs[] = {
                ("{\"version\":1,\"cpus\":[0,1,2],\"nics\":[{\"name\":\"eth0\",\"node\":-1,\"up\":true,"
                 "\"pci\":null,\"load\":0.25,\"s\":\"q\\\"\\\\\\n\\u0001\"}]}"),
                "[]",
                "\"\"",
                "-0.5",
        };
        for (size_t i = 0; i < ELEMENTSOF(docs); i++) {
                for (unsigned flags = 0; flags <= JSON_PRETTY; flags += JSON_PRETTY) {
                        struct json_value *v = NULL, *v2 = NULL;
                        char *buf = NULL, *buf2 = NULL;
                        size_t len = 0, len2 = 0;
                        FILE *f;
                        struct json_writer w;

                        assert_int_equal(json_parse(docs[i], strlen(docs[i]), &v), 0);
                        f = open_memstream(&buf, &len);
                        json_writer_init(&w, f, flags);
                        json_write_value(&w, v);
                        assert_int_equal(json_writer_finish(&w), 0);
                        fclose(f);
                        if (flags == 0 && strcmp(buf, docs[i]) != 0)
                                fail_msg("compact round trip: '%s' became '%s'", docs[i], buf);
                        /* pretty output reads back to the same compact text */
                        assert_int_equal(json_parse(buf, len, &v2), 0);
                        f = open_memstream(&buf2, &len2);
                        json_writer_init(&w, f, 0);
                        json_write_value(&w, v2);
                        assert_int_equal(json_writer_finish(&w), 0);
                        fclose(f);
                        assert_string_equal(buf2, docs[i]);
                        json_free(v);
                        json_free(v2);
                        free(buf);
                        free(buf2);
                }
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escaping),
                cmocka_unit_test(test_writer_compact),
                cmocka_unit_test(test_writer_pretty),
                cmocka_unit_test(test_writer_numbers),
                cmocka_unit_test(test_writer_members),
                cmocka_unit_test(test_writer_misuse),
                cmocka_unit_test(test_doubles_round_trip),
                cmocka_unit_test(test_parse_values),
                cmocka_unit_test(test_to_cpuset),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_truncations),
                cmocka_unit_test(test_depth_limit),
                cmocka_unit_test(test_round_trip),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
