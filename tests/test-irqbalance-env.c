/* irqbalance's environment files: IRQBALANCE_BANNED_CPUS (hex mask) and
 * IRQBALANCE_BANNED_CPULIST as cri-o and tuned write them. */
#include <errno.h>
#include <sys/stat.h>

#include "irqbalance-env.h"
#include "testlib.h"

static void test_parse(void **state) {
        static const struct {
                const char *what, *in;
                int r;
                const char *cpus;    /* the set as a cpulist when r == 0 */
                const char *problem; /* a part of the problem when r < 0 */
        } cases[] = {
                { "cri-o's mask", "IRQBALANCE_BANNED_CPUS=\"0000000c\"\n", 0, "2-3", NULL },
                { "mask in two 32-bit groups", "IRQBALANCE_BANNED_CPUS=00000001,00000003\n", 0, "0-1,32", NULL },
                { "tuned's list", "IRQBALANCE_BANNED_CPULIST=2,4,9-13\n", 0, "2,4,9-13", NULL },
                { "single quotes", "IRQBALANCE_BANNED_CPULIST='5-6'\n", 0, "5-6", NULL },
                { "export, blanks, trailing comment", "  export IRQBALANCE_BANNED_CPULIST=7 # pod abc\n", 0, "7",
                  NULL },
                { "quoted value, then a comment", "IRQBALANCE_BANNED_CPULIST=\"1\"  # x\n", 0, "1", NULL },
                { "both keys: the union", "IRQBALANCE_BANNED_CPUS=1\nIRQBALANCE_BANNED_CPULIST=3\n", 0, "0,3", NULL },
                { "set twice: the last counts", "IRQBALANCE_BANNED_CPULIST=1\nIRQBALANCE_BANNED_CPULIST=2\n", 0, "2",
                  NULL },
                { "emptied later: nothing", "IRQBALANCE_BANNED_CPUS=f\nIRQBALANCE_BANNED_CPUS=\n", 0, "", NULL },
                { "comments, other keys, Debian's default file",
                  "# irqbalance's defaults\n#IRQBALANCE_BANNED_CPUS=ff\n; old style\nOPTIONS=\"--policyscript=/x\"\n"
                  "IRQBALANCE_ONESHOT=\n\n",
                  0, "", NULL },
                { "a zero mask bans nothing", "IRQBALANCE_BANNED_CPUS=00000000,00000000\n", 0, "", NULL },
                { "empty quotes", "IRQBALANCE_BANNED_CPUS=\"\"\n", 0, "", NULL },
                { "no newline, CRLF", "IRQBALANCE_BANNED_CPULIST=4\r", 0, "4", NULL },
                { "a longer name is not ours", "IRQBALANCE_BANNED_CPUSET=zz\n", 0, "", NULL },
                { "an empty file", "", 0, "", NULL },
                { "a list where the mask goes", "IRQBALANCE_BANNED_CPUS=2-3\n", -EINVAL, NULL,
                  "line 1: IRQBALANCE_BANNED_CPUS: \"2-3\" is not a hex CPU mask" },
                { "0x is not irqbalance's form", "IRQBALANCE_BANNED_CPUS=0xc\n", -EINVAL, NULL, "not a hex CPU mask" },
                { "a group of 9 digits", "IRQBALANCE_BANNED_CPUS=000000001\n", -EINVAL, NULL, "not a hex CPU mask" },
                { "a mask where the list goes", "\n\nIRQBALANCE_BANNED_CPULIST=ff\n", -EINVAL, NULL,
                  "line 3: IRQBALANCE_BANNED_CPULIST: \"ff\" is not a CPU list" },
                { "unterminated quote", "IRQBALANCE_BANNED_CPULIST=\"1-2\n", -EINVAL, NULL, "unterminated quote" },
                { "text after the quote", "IRQBALANCE_BANNED_CPULIST=\"1\"2\n", -EINVAL, NULL, "closing quote" },
                { "no '='", "IRQBALANCE_BANNED_CPULIST 3\n", -EINVAL, NULL, "expected IRQBALANCE_BANNED_CPULIST=VALUE" },
                { "beyond CPUSET_MAX", "IRQBALANCE_BANNED_CPULIST=9000\n", -ERANGE, NULL, "names a CPU beyond" },
                { "one bad line spoils the file", "IRQBALANCE_BANNED_CPULIST=1\nIRQBALANCE_BANNED_CPUS=zz\n", -EINVAL,
                  NULL, "line 2" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char problem[256] = "";
                cpuset_t s, want;
                int r;

                cpuset_zero(&s);
                cpuset_set(&s, 63); /* untouched on error */
                r = irqbalance_env_parse(cases[i].in, strlen(cases[i].in), &s, problem, sizeof(problem));
                if (r != cases[i].r)
                        fail_msg("%s: got %d (%s), want %d", cases[i].what, r, problem, cases[i].r);
                if (r < 0) {
                        if (cpuset_count(&s) != 1 || !cpuset_isset(&s, 63))
                                fail_msg("%s: set changed on error", cases[i].what);
                        if (!strstr(problem, cases[i].problem))
                                fail_msg("%s: problem \"%s\" does not say \"%s\"", cases[i].what, problem,
                                         cases[i].problem);
                        continue;
                }
                cpuset_zero(&want);
                if (cases[i].cpus[0])
                        assert_int_equal(cpuset_parse_list(cases[i].cpus, &want), 0);
                if (!cpuset_equal(&s, &want)) {
                        char got[64];
                        cpuset_format_list(&s, got, sizeof(got));
                        fail_msg("%s: got CPUs \"%s\", want \"%s\"", cases[i].what, got, cases[i].cpus);
                }
        }
}

static void test_load(void **state) {
        char tmpl[] = "/tmp/test-irqbalance-env-XXXXXX", path[600], problem[256] = "", list[64];
        char *base = mkdtemp(tmpl);
        cpuset_t s;

        assert_non_null(base);
        /* a missing file bans nothing */
        snprintf(path, sizeof(path), "%s/irqbalance", base);
        cpuset_zero(&s);
        cpuset_set(&s, 5);
        assert_int_equal(irqbalance_env_load(path, &s, problem, sizeof(problem)), 0);
        assert_true(cpuset_empty(&s));

        test_write_file(base, "irqbalance", "IRQBALANCE_BANNED_CPUS=\"00000000,00000030\"\n");
        assert_int_equal(irqbalance_env_load(path, &s, problem, sizeof(problem)), 0);
        assert_int_equal(cpuset_format_list(&s, list, sizeof(list)), 0);
        assert_string_equal(list, "4-5");

        test_write_file(base, "irqbalance", "IRQBALANCE_BANNED_CPULIST=x\n");
        assert_int_equal(irqbalance_env_load(path, &s, problem, sizeof(problem)), -EINVAL);
        assert_non_null(strstr(problem, "line 1: IRQBALANCE_BANNED_CPULIST"));
        assert_int_equal(cpuset_format_list(&s, list, sizeof(list)), 0);
        assert_string_equal(list, "4-5");

        /* a directory where the file goes */
        assert_int_equal(irqbalance_env_load(base, &s, problem, sizeof(problem)), -EINVAL);
        assert_string_equal(problem, "not a regular file");
        {
                char cmd[700];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
                assert_int_equal(system(cmd), 0);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_load),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
