/* irqsteerctl ban, unban, bans: the runtime ban files (bans.h), written and
 * removed atomically. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bans.h"
#include "config.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "json.h"
#include "report.h"
#include "util.h"

static const char bans_help[] =
        "Usage: irqsteerctl ban [--state-dir DIR] NAME CPULIST\n"
        "       irqsteerctl unban [--state-dir DIR] NAME\n"
        "       irqsteerctl bans [--state-dir DIR] [--json]\n"
        "Keep CPUs free of managed IRQs, RPS/XPS and pinned workers while irqsteerd runs,\n"
        "without a reload.  Each NAME (one per owner: a CPU manager, an operator) holds\n"
        "one CPU list in DIR/" BANS_DIR_NAME "/NAME; the union of all of them is banned.\n\n"
        "  -s, --state-dir DIR  the daemon's state directory (default " CONFIG_DEFAULT_STATE_DIR ")\n"
        "  -j, --json           bans: print the ban files as JSON\n"
        "  -h, --help           show this help\n";

/* Options common to the three commands, the ban directory in dir: the
 * index of the first operand, or -(exit code) when done. */
static int parse_options(const char *cmd, int argc, char **argv, char *dir, size_t len, bool *ret_json) {
        const char *state_dir = CONFIG_DEFAULT_STATE_DIR;
        const struct ctl_option options[] = {
                CTL_OPT("state-dir", 's', CTL_OPT_STRING, &state_dir),
                CTL_OPT("json", 'j', ret_json ? CTL_OPT_FLAG : CTL_OPT_REFUSED, ret_json,
                        .what = "--json is for 'irqsteerctl bans'"),
        };
        int i = ctl_options(cmd, argc, argv, bans_help, options, ELEMENTSOF(options), true), n;

        if (i <= 0)
                return i;
        n = snprintf(dir, len, "%s/%s", state_dir, BANS_DIR_NAME);
        if (n < 0 || (size_t) n >= len)
                return -ctl_error("state directory name too long");
        return i;
}

int ctl_ban(int argc, char **argv) {
        char dir[4096];
        cpuset_t cpus;
        int i, r;

        i = parse_options("ban", argc, argv, dir, sizeof(dir), NULL);
        if (i <= 0)
                return -i;
        if (argc - i != 2)
                return ctl_usage_error("ban", "want NAME and CPULIST");
        if (!bans_name_valid(argv[i]))
                return ctl_usage_error("ban", "'%s' is not a ban name (1-%d of letters, digits and _.@:-, not starting with '.')",
                                       argv[i], BANS_NAME_MAX);
        if (cpuset_parse_list(argv[i + 1], &cpus) < 0)
                return ctl_usage_error("ban", "'%s' is not a CPU list such as 2-3,8", argv[i + 1]);
        if (cpuset_empty(&cpus))
                return ctl_usage_error("ban", "an empty CPU list bans nothing; 'irqsteerctl unban %s' lifts a ban", argv[i]);
        r = bans_write(dir, argv[i], &cpus);
        if (r < 0)
                return ctl_error("cannot write the ban %s/%s: %s", dir, argv[i], strerror(-r));
        return CTL_EXIT_OK;
}

int ctl_unban(int argc, char **argv) {
        char dir[4096];
        int i, r;

        i = parse_options("unban", argc, argv, dir, sizeof(dir), NULL);
        if (i <= 0)
                return -i;
        if (argc - i != 1)
                return ctl_usage_error("unban", "want one NAME");
        if (!bans_name_valid(argv[i]))
                return ctl_usage_error("unban", "'%s' is not a ban name", argv[i]);
        r = bans_remove(dir, argv[i]);
        if (r == -ENOENT) {
                /* lifting a ban twice is not an error: hooks may repeat */
                ctl_error("no ban %s in %s (nothing to lift)", argv[i], dir);
                return CTL_EXIT_OK;
        }
        if (r < 0)
                return ctl_error("cannot remove the ban %s/%s: %s", dir, argv[i], strerror(-r));
        return CTL_EXIT_OK;
}

int ctl_bans(int argc, char **argv) {
        _cleanup_(bans_free) struct bans b = { 0 };
        char dir[4096], list[512];
        bool json = false;
        int i, r, ret = CTL_EXIT_OK;

        i = parse_options("bans", argc, argv, dir, sizeof(dir), &json);
        if (i <= 0)
                return -i;
        if (i < argc)
                return ctl_usage_error("bans", "unexpected argument '%s'", argv[i]);
        r = bans_load(dir, &b);
        if (r < 0)
                return ctl_error("cannot read the ban directory %s: %s", dir, strerror(-r));
        if (json) {
                struct json_writer w;

                json_writer_init(&w, stdout, JSON_PRETTY);
                json_begin_object(&w);
                report_bans_members(&w, &b);
                json_end_object(&w);
                fputc('\n', stdout);
                if (json_writer_finish(&w) < 0)
                        ret = CTL_EXIT_ERROR;
        } else {
                for (size_t k = 0; k < b.n_files; k++) {
                        const struct ban_file *f = &b.files[k];
                        char name[UTIL_CESCAPE_SIZE(BANS_NAME_MAX)];

                        /* an invalid name is anything a user put there */
                        util_cescape(f->name, strlen(f->name), false, name, sizeof(name));
                        if (f->error < 0)
                                printf("%-24s (ignored: %s)\n", name, f->problem);
                        else
                                printf("%-24s %s\n", name, cpuset_to_text(&f->cpus, "none", list, sizeof(list)));
                }
                printf("banned at run time: %s\n", cpuset_to_text(&b.cpus, "none", list, sizeof(list)));
        }
        if (fflush(stdout) != 0)
                ret = CTL_EXIT_ERROR;
        return ret;
}
