/* Runtime ban files: parsing, names, merging a directory, atomic writes. */
#include <errno.h>
#include <sys/stat.h>

#include "bans.h"
#include "testlib.h"

static void test_parse(void **state) {
        static const struct {
                const char *what, *in;
                int r;
                const char *cpus;  /* the set, as a cpulist, when r == 0 */
        } cases[] = {
                { "one list", "2-3,8\n", 0, "2-3,8" },
                { "no newline", "5", 0, "5" },
                { "empty file bans nothing", "", 0, "" },
                { "comments and blank lines", "# kubelet pod abc\n\n  4-5  # exclusive\n", 0, "4-5" },
                { "several lines merge", "1\n3-4\n", 0, "1,3-4" },
                { "CRLF", "6-7\r\n", 0, "6-7" },
                { "garbage", "cpu2\n", -EINVAL, NULL },
                { "one bad line spoils the file", "1-2\nfoo\n", -EINVAL, NULL },
                { "hex mask is not a list", "0xff\n", -EINVAL, NULL },
                { "beyond CPUSET_MAX", "9000\n", -ERANGE, NULL },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cpuset_t s, want;
                int r;

                cpuset_zero(&s);
                cpuset_set(&s, 63); /* untouched on error */
                r = bans_parse(cases[i].in, strlen(cases[i].in), &s);
                if (r != cases[i].r)
                        fail_msg("%s: got %d, want %d", cases[i].what, r, cases[i].r);
                if (r < 0) {
                        if (cpuset_count(&s) != 1 || !cpuset_isset(&s, 63))
                                fail_msg("%s: set changed on error", cases[i].what);
                        continue;
                }
                assert_int_equal(cpuset_parse_list(cases[i].cpus, &want), 0);
                if (!cpuset_equal(&s, &want))
                        fail_msg("%s: wrong set", cases[i].what);
        }
}

static void test_names(void **state) {
        static const struct {
                const char *name;
                bool ok;
        } cases[] = {
                { "crio", true }, { "pod-1234_ab.c@node:0", true }, { "", false }, { ".hidden", false },
                { "a/b", false }, { "..", false }, { "space x", false }, { "new\nline", false },
                { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true },   /* 64 */
                { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false }, /* 65 */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (bans_name_valid(cases[i].name) != cases[i].ok)
                        fail_msg("'%s': want %s", cases[i].name, cases[i].ok ? "valid" : "invalid");
}

static void test_dir(void **state) {
        char tmpl[] = "/tmp/test-bans-XXXXXX", dir[600], list[64];
        struct bans b = { 0 };
        cpuset_t s;
        char *base = mkdtemp(tmpl);

        assert_non_null(base);
        snprintf(dir, sizeof(dir), "%s/bans", base);
        /* no directory: no bans */
        assert_int_equal(bans_load(dir, &b), 0);
        assert_int_equal(b.n_files, 0);
        assert_true(cpuset_empty(&b.cpus));

        assert_int_equal(cpuset_parse_list("2-3", &s), 0);
        assert_int_equal(bans_write(dir, "kubelet", &s), 0);
        assert_int_equal(cpuset_parse_list("3,5", &s), 0);
        assert_int_equal(bans_write(dir, "admin", &s), 0);
        assert_int_equal(bans_write(dir, "../evil", &s), -EINVAL);
        test_write_file(dir, "broken", "1-2\nnonsense\n");
        test_write_file(dir, ".admin.123.tmp", "0-7\n");  /* a writer's temporary */
        test_write_file(dir, "old~", "0\n");

        assert_int_equal(bans_load(dir, &b), 0);
        assert_int_equal(b.n_files, 3);
        /* sorted by name; the broken file is listed with its problem and bans nothing */
        assert_string_equal(b.files[0].name, "admin");
        assert_string_equal(b.files[1].name, "broken");
        assert_int_equal(b.files[1].error, -EINVAL);
        assert_true(b.files[1].problem[0] != 0);
        assert_string_equal(b.files[2].name, "kubelet");
        assert_int_equal(cpuset_format_list(&b.cpus, list, sizeof(list)), 0);
        assert_string_equal(list, "2-3,5");

        /* rewriting a ban replaces it */
        assert_int_equal(cpuset_parse_list("7", &s), 0);
        assert_int_equal(bans_write(dir, "kubelet", &s), 0);
        assert_int_equal(bans_load(dir, &b), 0);
        assert_int_equal(cpuset_format_list(&b.cpus, list, sizeof(list)), 0);
        assert_string_equal(list, "3,5,7");

        assert_int_equal(bans_remove(dir, "admin"), 0);
        assert_int_equal(bans_remove(dir, "admin"), -ENOENT);
        assert_int_equal(bans_remove(dir, "../x"), -EINVAL);
        assert_int_equal(bans_load(dir, &b), 0);
        assert_int_equal(cpuset_format_list(&b.cpus, list, sizeof(list)), 0);
        assert_string_equal(list, "7");

        bans_free(&b);
        {
                char cmd[700];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
                assert_int_equal(system(cmd), 0);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_dir),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
