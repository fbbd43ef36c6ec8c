/* irqsteerd: command line; the lifecycle is in daemon.c, the tick in engine.c. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "rootfs.h"
#include "state.h"
#include "util.h"

static const char help[] =
        "Usage: irqsteerd [OPTION]...\n"
        "Steer NIC interrupts, RPS/RFS/XPS and worker threads away from hot CPUs.\n"
        "\n"
        "  -f, --foreground       log to stderr with the per-tick load summary at info\n"
        "                         (irqsteerd never forks; under systemd it is Type=notify)\n"
        "  -c, --config=FILE      configuration file (default " CONFIG_DEFAULT_PATH ";\n"
        "                         a missing default file means built-in defaults),\n"
        "                         then the drop-ins FILE.d/*.conf in name order\n"
        "  -t, --check-config     check the configuration, print \"configuration OK\"\n"
        "                         or each problem as FILE:LINE: KEY: problem; exit 0/1\n"
        "      --reload=PID       reload the irqsteerd running as PID with its own options\n"
        "                         and wait for its verdict; exit 0 applied, 1 not\n"
        "  -r, --root=DIR         read and write /proc and /sys under DIR (default /)\n"
        "  -s, --state-dir=DIR    undo journal, status.json and metrics.prom here\n"
        "                         (overrides the config; default " CONFIG_DEFAULT_STATE_DIR ",\n"
        "                         ROOT/run/irqsteer with --root ROOT)\n"
        "  -n, --dry-run          decide and log as usual, but write nothing to the system\n"
        "      --once             one decision cycle (two samples one interval apart),\n"
        "                         apply, exit; changes stay ('irqsteerctl restore' undoes them)\n"
        "  -i, --interval=DURATION  sampling interval such as 500ms, 0.5s, 0.5, 2s\n"
        "                         (overrides interval and calm_interval of the config)\n"
        "  -b, --ban-cpus=LIST     keep these CPUs (such as 2,4-7) free, added to the\n"
        "                         config's banned_cpus and to $IRQSTEER_BANNED_CPUS\n"
        "  -l, --log-level=LEVEL  debug, info, notice, warning, err (overrides the config)\n"
        "  -h, --help             this help\n"
        "  -V, --version          version\n"
        "\n"
        "Signals: SIGHUP reloads the configuration, SIGTERM/SIGINT stop and restore.\n"
        "See irqsteerd(8) and irqsteer.conf(5).\n";

enum {
        ARG_ONCE = 0x100,
        ARG_RELOAD,
};

/* Adds CPU list s (named what in the error) to bans; false when it is no list. */
static bool add_bans(const char *what, const char *s, cpuset_t *bans) {
        cpuset_t ban;

        if (cpuset_parse_list(s, &ban) < 0) {
                fprintf(stderr, "irqsteerd: %s: '%s' is not a CPU list such as 2,4-7\n", what, s);
                return false;
        }
        cpuset_or(bans, bans, &ban);
        return true;
}

/* What to do besides running the daemon. */
struct mode {
        bool check;
        pid_t reload_pid;         /* --reload PID, 0 if not given */
};

/* argv into o and m (also a running daemon's); -1 to go on, else the exit
 * code. */
static int parse_options(int argc, char **argv, struct daemon_options *o, struct mode *m) {
        static const struct option options[] = {
                { "foreground", no_argument, NULL, 'f' },
                { "config", required_argument, NULL, 'c' },
                { "check-config", no_argument, NULL, 't' },
                { "reload", required_argument, NULL, ARG_RELOAD },
                { "root", required_argument, NULL, 'r' },
                { "state-dir", required_argument, NULL, 's' },
                { "dry-run", no_argument, NULL, 'n' },
                { "once", no_argument, NULL, ARG_ONCE },
                { "interval", required_argument, NULL, 'i' },
                { "log-level", required_argument, NULL, 'l' },
                { "ban-cpus", required_argument, NULL, 'b' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        int c, r;

        optind = 0; /* glibc: start over, for a second argv */
        while ((c = getopt_long(argc, argv, "fc:tr:s:ni:l:b:hV", options, NULL)) >= 0) {
                switch (c) {
                case 'f': o->foreground = true; break;
                case 'c': o->config_path = optarg; break;
                case 't': m->check = true; break;
                case ARG_RELOAD: {
                        uint64_t v;

                        if (util_parse_u64(optarg, strlen(optarg), &v) < 0 || v == 0 || v > INT32_MAX) {
                                fprintf(stderr, "irqsteerd: --reload: '%s' is not a process id\n", optarg);
                                return DAEMON_EXIT_USAGE;
                        }
                        m->reload_pid = (pid_t) v;
                        break;
                }
                case 'r': o->root = optarg; break;
                case 's': o->state_dir = optarg; break;
                case 'n': o->dry_run = true; break;
                case ARG_ONCE: o->once = true; break;
                case 'i':
                        r = util_parse_duration_usec(optarg, &o->interval_usec);
                        if (r < 0 || o->interval_usec < 100000 || o->interval_usec > UINT64_C(60000000)) {
                                fprintf(stderr, "irqsteerd: --interval: '%s' is not a duration between 100ms and 60s\n",
                                        optarg);
                                return DAEMON_EXIT_USAGE;
                        }
                        break;
                case 'b':
                        if (!add_bans("--ban-cpus", optarg, &o->ban_cpus))
                                return DAEMON_EXIT_USAGE;
                        break;
                case 'l':
                        o->log_level = log_level_from_string(optarg);
                        if (o->log_level < 0) {
                                fprintf(stderr, "irqsteerd: --log-level: unknown level '%s'\n", optarg);
                                return DAEMON_EXIT_USAGE;
                        }
                        break;
                case 'h': fputs(help, stdout); return DAEMON_EXIT_OK;
                case 'V': printf("irqsteerd %s\n", IRQSTEER_VERSION); return DAEMON_EXIT_OK;
                default:
                        fprintf(stderr, "Try 'irqsteerd --help'.\n");
                        return DAEMON_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "irqsteerd: unexpected argument '%s'\nTry 'irqsteerd --help'.\n", argv[optind]);
                return DAEMON_EXIT_USAGE;
        }
        return -1;
}

/* --reload PID: that daemon's options, from its command line, so that
 * ExecReload= need not repeat ExecStart='s. */
static int reload_running(pid_t pid) {
        struct daemon_options running = { .log_level = -1 };
        struct mode m = {};
        _cleanup_(closep) int fd = -1;
        _cleanup_(freep) char *buf = NULL;
        char path[64], *argv[256];
        size_t len = 0;
        int argc = 0, r;

        if (!state_pid_is_irqsteerd(pid)) {
                fprintf(stderr, "irqsteerd --reload: pid %d is not a running irqsteerd\n", (int) pid);
                return DAEMON_EXIT_FAILURE;
        }
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        r = fd < 0 ? -errno : rootfs_read_fd(fd, &buf, &len);
        if (r < 0 || len == 0) {
                fprintf(stderr, "irqsteerd --reload: cannot read %s\n", path);
                return DAEMON_EXIT_FAILURE;
        }
        for (size_t i = 0; i < len && argc < (int) ELEMENTSOF(argv) - 1; i += strlen(buf + i) + 1)
                argv[argc++] = buf + i;
        argv[argc] = NULL;
        r = parse_options(argc, argv, &running, &m);
        if (r >= 0)
                fprintf(stderr, "irqsteerd --reload: cannot read the options of pid %d\n", (int) pid);
        else {
                /* its relative paths are relative to its working directory */
                snprintf(path, sizeof(path), "/proc/%d/cwd", (int) pid);
                if (chdir(path) < 0 && ((running.config_path && running.config_path[0] != '/') ||
                                        (running.root && running.root[0] != '/') ||
                                        (running.state_dir && running.state_dir[0] != '/'))) {
                        fprintf(stderr, "irqsteerd --reload: %s: %s\n", path, strerror(errno));
                        r = DAEMON_EXIT_FAILURE;
                } else
                        r = daemon_reload_running(pid, &running, stdout, stderr);
        }
        return r < 0 ? DAEMON_EXIT_FAILURE : r;
}

int main(int argc, char **argv) {
        struct daemon_options o = { .log_level = -1 };
        struct mode m = {};
        const char *env;
        int r;

        r = parse_options(argc, argv, &o, &m);
        if (r >= 0)
                return r;
        if (m.reload_pid) {
                if (o.config_path || o.state_dir || o.root || m.check) {
                        fprintf(stderr, "irqsteerd: --reload takes the running daemon's own --config, --state-dir "
                                "and --root; give it alone\n");
                        return DAEMON_EXIT_USAGE;
                }
                return reload_running(m.reload_pid);
        }

        env = getenv("IRQSTEER_BANNED_CPUS");
        if (env && *env && !add_bans("IRQSTEER_BANNED_CPUS", env, &o.ban_cpus))
                return DAEMON_EXIT_USAGE;

        if (m.check)
                return daemon_check_config(o.config_path, o.state_dir, stdout, stderr);

        log_setup(o.foreground ? LOG_TARGET_STDERR : LOG_TARGET_AUTO, o.log_level >= 0 ? o.log_level : LOG_INFO);
        log_set_timestamps(true);
        return daemon_run(&o);
}
