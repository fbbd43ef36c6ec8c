/* cpulist and hex-mask parsing/formatting, table-driven. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "testlib.h"

static void test_list_parse(void **state) {
        static const struct {
                const char *what, *in;
                int r;
                const char *canon; /* formatted back, when r == 0 */
        } cases[] = {
                { "single cpu", "3", 0, "3" },
                { "range and singles", "0-3,8,10-11", 0, "0-3,8,10-11" },
                { "trailing newline", "0-1\n", 0, "0-1" },
                { "empty list is the empty set", "", 0, "" },
                { "stride", "0-7:2", 0, "0,2,4,6" },
                { "unsorted merges", "5,1-2,3", 0, "1-3,5" },
                { "range within one word", "3-60", 0, "3-60" },
                { "range across words", "60-200", 0, "60-200" },
                { "range ending on a word edge", "0-63,128-191", 0, "0-63,128-191" },
                { "range to the last cpu", "8100-8191", 0, "8100-8191" },
                { "range beyond CPUSET_MAX", "8000-8192", -ERANGE, NULL },
                { "largest cpu", "8191", 0, "8191" },
                { "beyond CPUSET_MAX", "8192", -ERANGE, NULL },
                { "20-digit number", "99999999999999999999", -ERANGE, NULL },
                { "reversed range", "5-3", -EINVAL, NULL },
                { "garbage", "abc", -EINVAL, NULL },
                { "dangling comma", "1,", -EINVAL, NULL },
                { "dangling dash", "1-", -EINVAL, NULL },
                { "zero stride", "0-4:0", -EINVAL, NULL },
                { "embedded garbage", "1,2x", -EINVAL, NULL },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cpuset_t s;
                char buf[256];
                int r = cpuset_parse_list(cases[i].in, &s);
                if (r != cases[i].r)
                        fail_msg("%s: parse '%s' gave %d, want %d", cases[i].what, cases[i].in, r, cases[i].r);
                if (r == 0) {
                        assert_int_equal(cpuset_format_list(&s, buf, sizeof(buf)), 0);
                        if (strcmp(buf, cases[i].canon) != 0)
                                fail_msg("%s: formatted '%s', want '%s'", cases[i].what, buf, cases[i].canon);
                }
        }
}

/* 256 zero chunks: CPUs 0-8191, all of CPUSET_MAX. */
#define CHUNKS_8 "0,0,0,0,0,0,0,0"
#define CHUNKS_64 CHUNKS_8 "," CHUNKS_8 "," CHUNKS_8 "," CHUNKS_8 "," CHUNKS_8 "," CHUNKS_8 "," CHUNKS_8 "," CHUNKS_8
#define REPEAT_CHUNKS_256 CHUNKS_64 "," CHUNKS_64 "," CHUNKS_64 "," CHUNKS_64

static void test_mask_parse(void **state) {
        static const struct {
                const char *what, *in;
                int r;
                const char *list;
        } cases[] = {
                { "one chunk", "f", 0, "0-3" },
                { "kernel width", "00000003\n", 0, "0-1" },
                { "two chunks msb first", "00000001,00000000", 0, "32" },
                { "upper-case hex", "FF,00000001", 0, "0,32-39" },
                { "zero is empty", "0", 0, "" },
                { "256-cpu mask",
                  "80000000,00000000,00000000,00000000,00000000,00000000,00000000,00000001", 0, "0,255" },
                { "all of 64 cpus", "ffffffff,ffffffff", 0, "0-63" },
                { "high chunk only", "1,00000000,00000000", 0, "64" },
                { "zero chunks above CPUSET_MAX are harmless",
                  "0," REPEAT_CHUNKS_256, 0, "" },
                { "a bit at CPUSET_MAX", "1," REPEAT_CHUNKS_256, -ERANGE, NULL },
                { "empty string", "", -EINVAL, NULL },
                { "chunk of nine digits", "123456789", -EINVAL, NULL },
                { "non-hex", "xyz", -EINVAL, NULL },
                { "empty chunk", "1,,2", -EINVAL, NULL },
                { "leading comma", ",1", -EINVAL, NULL },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cpuset_t s;
                char buf[256];
                int r = cpuset_parse_mask(cases[i].in, &s);
                if (r != cases[i].r)
                        fail_msg("%s: parse '%s' gave %d, want %d", cases[i].what, cases[i].in, r, cases[i].r);
                if (r == 0) {
                        assert_int_equal(cpuset_format_list(&s, buf, sizeof(buf)), 0);
                        if (strcmp(buf, cases[i].list) != 0)
                                fail_msg("%s: got '%s', want '%s'", cases[i].what, buf, cases[i].list);
                }
        }
}

static void test_mask_format(void **state) {
        cpuset_t s;
        char buf[4096];

        assert_int_equal(cpuset_parse_list("0,33", &s), 0);
        assert_int_equal(cpuset_format_mask(&s, 0, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "00000002,00000001");
        assert_int_equal(cpuset_format_mask(&s, 96, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "00000000,00000002,00000001");
        cpuset_zero(&s);
        assert_int_equal(cpuset_format_mask(&s, 0, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "00000000");
        /* round trip at the top of the range */
        assert_int_equal(cpuset_parse_list("0-8191", &s), 0);
        assert_int_equal(cpuset_format_mask(&s, 0, buf, sizeof(buf)), 0);
        cpuset_t back;
        assert_int_equal(cpuset_parse_mask(buf, &back), 0);
        assert_true(cpuset_equal(&s, &back));
        assert_int_equal(cpuset_count(&back), 8192);
        /* too small a buffer is an error, not a truncation */
        assert_int_equal(cpuset_format_mask(&s, 0, buf, 10), -ENOBUFS);
}

static void test_ops(void **state) {
        cpuset_t a, b, r;

        assert_int_equal(cpuset_parse_list("0-7", &a), 0);
        assert_int_equal(cpuset_parse_list("4-11", &b), 0);
        cpuset_and(&r, &a, &b);
        assert_int_equal(cpuset_count(&r), 4);
        assert_int_equal(cpuset_first(&r), 4);
        assert_int_equal(cpuset_last(&r), 7);
        cpuset_andnot(&r, &a, &b);
        assert_int_equal(cpuset_last(&r), 3);
        cpuset_or(&r, &a, &b);
        assert_int_equal(cpuset_count(&r), 12);
        assert_true(cpuset_intersects(&a, &b));
        assert_true(cpuset_subset(&a, &r));
        assert_false(cpuset_subset(&r, &a));
        assert_int_equal(cpuset_set(&a, CPUSET_MAX), -ERANGE);
        assert_int_equal(cpuset_next(&a, 8), -1);
        int n = 0;
        CPUSET_FOREACH(c, &b) {
                assert_true(c >= 4 && c <= 11);
                n++;
        }
        assert_int_equal(n, 8);
        r = cpuset_single(100);
        assert_int_equal(cpuset_first(&r), 100);
        assert_int_equal(cpuset_count(&r), 1);
}

/* count, empty and next skip groups of zero words: sets with CPUs in
 * different groups, at group edges and at the very end. */
static void test_sparse_sets(void **state) {
        static const struct {
                const char *what, *list;
                int count, next_from, next;
        } cases[] = {
                { "empty", "", 0, 0, -1 },
                { "cpu 0", "0", 1, 0, 0 },
                { "last cpu", "8191", 1, 0, 8191 },
                { "next past the last cpu", "8191", 1, 8192, -1 },
                { "group edge", "511,512", 2, 0, 511 },
                { "next from a group edge", "511,4096", 2, 512, 4096 },
                { "next within a word", "3,9", 2, 4, 9 },
                { "far apart", "1,700,5000,8190", 4, 701, 5000 },
                { "negative from", "5", 1, -3, 5 },
                { "two bits in one word", "0,63", 2, 1, 63 },
                { "one bit, a later word set", "64,8191", 2, 65, 8191 },
                { "one CPU in the last group", "8000", 1, 0, 8000 },
                { "alone at the end of the first 512", "511", 1, 0, 511 },
                { "alone just past the first 512", "512", 1, 0, 512 },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cpuset_t s;

                assert_int_equal(cpuset_parse_list(cases[i].list, &s), 0);
                if (cpuset_count(&s) != cases[i].count)
                        fail_msg("%s: count %d, want %d", cases[i].what, cpuset_count(&s), cases[i].count);
                if (cpuset_empty(&s) != (cases[i].count == 0))
                        fail_msg("%s: empty is wrong", cases[i].what);
                if (cpuset_only(&s) != (cases[i].count == 1 ? cpuset_first(&s) : -1))
                        fail_msg("%s: only = %d", cases[i].what, cpuset_only(&s));
                if (cpuset_next(&s, cases[i].next_from) != cases[i].next)
                        fail_msg("%s: next(%d) = %d, want %d", cases[i].what, cases[i].next_from,
                                 cpuset_next(&s, cases[i].next_from), cases[i].next);
        }
}

/* The kept form read in place agrees with the whole set it was kept
 * from, sets of different lengths included (an 8192-CPU host's last CPU). */
static void test_kept(void **state) {
        static const struct {
                const char *what, *a, *b;
                bool same;
                int next_from;
        } cases[] = {
                { "both empty", "", "", true, 0 },
                { "empty and not", "", "3", false, 0 },
                { "equal, one word", "0-3", "0-3", true, 1 },
                { "equal, last CPU", "5,8191", "5,8191", true, 6 },
                { "shorter is a prefix", "5", "5,8191", false, 6 },
                { "same length, differ", "64", "65", false, 64 },
                { "one CPU far out", "4000", "4000", true, 0 },
                { "next across words", "1,700,5000,8190", "1,700", false, 701 },
                { "next from a set bit", "63,64", "63", false, 64 },
                { "negative from", "9", "9", true, -5 },
        };
        cpuset_t mask;
        (void) state;

        assert_int_equal(cpuset_parse_list("0-63,600-5000", &mask), 0);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cpuset_kept_t ka = { 0 }, kb = { 0 };
                cpuset_t a, b, want, got;
                int n = 0;

                assert_int_equal(cpuset_parse_list(cases[i].a, &a), 0);
                assert_int_equal(cpuset_parse_list(cases[i].b, &b), 0);
                assert_int_equal(cpuset_keep(&ka, &a), 0);
                assert_int_equal(cpuset_keep(&kb, &b), 0);
                if (cpuset_kept_same(&ka, &kb) != cases[i].same || cpuset_kept_same(&kb, &ka) != cases[i].same)
                        fail_msg("%s: same is wrong", cases[i].what);
                if (cpuset_kept_equal(&ka, &b) != cases[i].same)
                        fail_msg("%s: equal is wrong", cases[i].what);
                if (cpuset_kept_only(&ka) != cpuset_only(&a))
                        fail_msg("%s: only %d, want %d", cases[i].what, cpuset_kept_only(&ka), cpuset_only(&a));
                if (cpuset_kept_next(&ka, cases[i].next_from) != cpuset_next(&a, cases[i].next_from))
                        fail_msg("%s: next(%d) = %d, want %d", cases[i].what, cases[i].next_from,
                                 cpuset_kept_next(&ka, cases[i].next_from), cpuset_next(&a, cases[i].next_from));
                CPUSET_KEPT_FOREACH(cpu, &ka) {
                        assert_true(cpuset_isset(&a, cpu));
                        n++;
                }
                assert_int_equal(n, cpuset_count(&a));
                memset(&got, 0xa5, sizeof(got));
                cpuset_kept_and(&got, &ka, &mask);
                cpuset_and(&want, &a, &mask);
                if (!cpuset_equal(&got, &want))
                        fail_msg("%s: and is wrong", cases[i].what);
                cpuset_kept_free(&ka);
                cpuset_kept_free(&kb);
        }
}

/* Under a bound, a kept set reads as if it held nothing above it. */
static void test_kept_limit(void **state) {
        cpuset_kept_t ka = { 0 }, kb = { 0 };
        cpuset_t a, b;
        (void) state;

        assert_int_equal(cpuset_parse_list("1,4000", &a), 0);
        assert_int_equal(cpuset_parse_list("1", &b), 0);
        assert_int_equal(cpuset_keep(&ka, &a), 0);
        assert_int_equal(cpuset_keep(&kb, &b), 0);
        assert_false(cpuset_kept_same(&ka, &kb));
        assert_int_equal(cpuset_set_limit(64), 0);
        assert_true(cpuset_kept_same(&ka, &kb));
        assert_true(cpuset_kept_same(&kb, &ka));
        assert_int_equal(cpuset_kept_only(&ka), 1);
        assert_int_equal(cpuset_kept_next(&ka, 2), -1);
        assert_int_equal(cpuset_set_limit(CPUSET_MAX), 0);
        assert_int_equal(cpuset_kept_next(&ka, 2), 4000);
        cpuset_kept_free(&ka);
        cpuset_kept_free(&kb);
}

/* A mask wider than the set (nbits from a file with 300 chunks): the
 * chunks beyond CPUSET_MAX are zeros, and nothing past the set is read.
 * The set sits at the start of a block whose rest is 0xff, so a read past
 * it shows as ffffffff chunks (and ASan reports it in make check-asan). */
static void test_mask_format_wide(void **state) {
        unsigned char *block = malloc(2 * sizeof(cpuset_t));
        cpuset_t *s = (cpuset_t *) block;
        size_t len = 300 * 9 + 1;
        char *buf = malloc(len), want[32];
        (void) state;

        assert_non_null(block);
        assert_non_null(buf);
        memset(block, 0xff, 2 * sizeof(cpuset_t));
        cpuset_zero(s);
        assert_int_equal(cpuset_set(s, 0), 0);
        assert_int_equal(cpuset_set(s, 8191), 0);
        assert_int_equal(cpuset_format_mask(s, 300 * 32, buf, len), 0);
        assert_int_equal(strlen(buf), 300 * 9 - 1);
        for (int c = 0; c < 300; c++) {
                /* chunk c counted from the least significant one */
                const char *chunk = buf + (size_t) (299 - c) * 9;
                snprintf(want, sizeof(want), "%08x", c == 0 ? 1u : c == 255 ? 0x80000000u : 0u);
                if (strncmp(chunk, want, 8) != 0)
                        fail_msg("chunk %d: %.8s, want %s", c, chunk, want);
        }
        free(buf);
        free(block);
}

/* Under a bound (cpuset_set_limit: the host's possible CPUs) every
 * operation reads a set as if it held nothing at or above the bound, even
 * where those bits are set (a configuration for a bigger host) or were
 * never written (the result of an operation on a set that was not zeroed). */
static void test_limit(void **state) {
        cpuset_t a, b, r;
        char buf[128];
        (void) state;

        assert_int_equal(cpuset_set_limit(0), -ERANGE);
        assert_int_equal(cpuset_set_limit(CPUSET_MAX + 1), -ERANGE);
        assert_int_equal(cpuset_parse_list("1,62,100,4000", &a), 0);
        /* no bound yet: all of CPUSET_MAX */
        assert_int_equal(cpuset_last(&a), 4000);
        assert_int_equal(cpuset_parse_list("1,200", &b), 0);

        /* rounded up to 64: CPU 62 stays */
        assert_int_equal(cpuset_set_limit(16), 0);
        assert_int_equal(cpuset_count(&a), 2);
        assert_int_equal(cpuset_last(&a), 62);
        assert_int_equal(cpuset_next(&a, 63), -1);
        assert_false(cpuset_isset(&a, 100));
        assert_int_equal(cpuset_only(&b), 1);
        assert_true(cpuset_subset(&b, &a));
        assert_false(cpuset_equal(&a, &b));
        assert_int_equal(cpuset_format_list(&a, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "1,62");
        /* nbits wider than the bound: zero chunks, not the hidden bits */
        assert_int_equal(cpuset_format_mask(&b, 256, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000002");
        memset(&r, 0xa5, sizeof(r));
        cpuset_andnot(&r, &a, &b);
        assert_int_equal(cpuset_count(&r), 1);
        assert_int_equal(cpuset_only(&r), 62);
        cpuset_and(&r, &a, &b);
        assert_true(cpuset_equal(&r, &b));
        assert_false(cpuset_empty(&r));
        cpuset_andnot(&r, &b, &b);
        assert_true(cpuset_empty(&r));
        assert_false(cpuset_intersects(&r, &a));

        assert_int_equal(cpuset_set_limit(CPUSET_MAX), 0);
        assert_int_equal(cpuset_count(&a), 4);
        assert_true(cpuset_isset(&a, 4000));
}

/* cpuset_to_text never gives "" for a non-empty set, and marks a cut. */
static void test_to_text(void **state) {
        char buf[512], odd[512] = "", want[600];
        cpuset_t s;
        size_t off = 0;
        (void) state;

        /* isolcpus=1,3,...,127: 64 CPUs, 180 characters as a list */
        for (int c = 1; c < 128; c += 2)
                off += (size_t) snprintf(odd + off, sizeof(odd) - off, "%s%d", off ? "," : "", c);
        assert_int_equal(cpuset_parse_list(odd, &s), 0);

        assert_string_equal(cpuset_to_text(&s, "none", buf, sizeof(buf)), odd);
        /* exactly fitting: no cut */
        assert_string_equal(cpuset_to_text(&s, "none", buf, strlen(odd) + 1), odd);
        /* one byte short: cut after a whole CPU, marked, with the count */
        cpuset_to_text(&s, "none", buf, strlen(odd));
        assert_true(strlen(buf) > 0 && strlen(buf) < strlen(odd));
        assert_non_null(strstr(buf, ",... (64 CPUs)"));
        assert_int_equal(strncmp(buf, odd, strlen(buf) - strlen(",... (64 CPUs)")), 0);
        /* the 128 bytes the startup line had */
        cpuset_to_text(&s, "none", buf, 128);
        assert_true(strlen(buf) < 128);
        snprintf(want, sizeof(want), "%.*s", (int) (strlen(buf) - strlen(",... (64 CPUs)")), odd);
        assert_true(want[strlen(want) - 1] != ',');
        assert_string_equal(buf + strlen(want), ",... (64 CPUs)");
        /* not even one CPU fits with the mark: the count alone */
        assert_string_equal(cpuset_to_text(&s, "none", buf, 12), "(64 CPUs)");
        /* ranges, the empty text, one CPU */
        assert_int_equal(cpuset_parse_list("0-3,8,10-8191", &s), 0);
        assert_string_equal(cpuset_to_text(&s, "-", buf, sizeof(buf)), "0-3,8,10-8191");
        assert_string_equal(cpuset_to_text(&s, "-", buf, 12), "(8187 CPUs)");
        cpuset_zero(&s);
        assert_string_equal(cpuset_to_text(&s, "none", buf, sizeof(buf)), "none");
        assert_string_equal(cpuset_to_text(&s, "", buf, sizeof(buf)), "");
        s = cpuset_single(7);
        assert_string_equal(cpuset_to_text(&s, "none", buf, sizeof(buf)), "7");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_list_parse),
                cmocka_unit_test(test_mask_parse),
                cmocka_unit_test(test_mask_format),
                cmocka_unit_test(test_mask_format_wide),
                cmocka_unit_test(test_to_text),
                cmocka_unit_test(test_ops),
                cmocka_unit_test(test_sparse_sets),
                cmocka_unit_test(test_limit),
                cmocka_unit_test(test_kept),
                cmocka_unit_test(test_kept_limit),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
