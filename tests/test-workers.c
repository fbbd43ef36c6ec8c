/* Worker discovery over tests/fixtures/workers, its pure parsers, thread
 * pinning through wrapped sched_setaffinity, and a live multi-threaded
 * child of our own (root). */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "apply.h"
#include "config.h"
#include "fake-sched.h"
#include "procfs.h"
#include "rootfs.h"
#include "testlib.h"
#include "util.h"
#include "knob.h"
#include "workers.h"

/* ---- helpers ---- */

static int fixture_root(void) {
        char path[512];
        int fd = rootfs_open(fixture_path("workers", path, sizeof(path)));

        assert_true(fd >= 0);
        return fd;
}

struct wspec {
        const char *name, *cmdline, *unit, *pidfile;
};

/* A config holding just the [worker] sections of specs (n of them). */
static void mk_config(struct config *c, const struct wspec *specs, size_t n) {
        memset(c, 0, sizeof(*c));
        c->workers = calloc(n ? n : 1, sizeof(*c->workers));
        assert_non_null(c->workers);
        c->n_workers = n;
        for (size_t i = 0; i < n; i++) {
                c->workers[i].name = (char *) "test";
                c->workers[i].match_name = (char *) specs[i].name;
                c->workers[i].match_cmdline = (char *) specs[i].cmdline;
                c->workers[i].match_unit = (char *) specs[i].unit;
                c->workers[i].pidfile = (char *) specs[i].pidfile;
        }
}

/* "W:PID" for each process, space separated. */
static void summarize(const struct worker_set *ws, char *buf, size_t len) {
        size_t off = 0;

        buf[0] = 0;
        for (size_t i = 0; i < ws->n_procs; i++) {
                int n = snprintf(buf + off, len - off, "%s%d:%d", i ? " " : "", ws->procs[i].worker,
                                 (int) ws->procs[i].pid);
                assert_true(n > 0 && (size_t) n < len - off);
                off += n;
        }
}

/* ---- tests ---- */

static void test_parse_stat(void **state) {
        static const struct {
                const char *what, *in;
                int r;
                char st;
                int ppid;
                unsigned flags;
                unsigned long long start;
        } cases[] = {
                { "plain", "42 (bash) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0\n", 0, 'S', 1,
                  4194560, 123456 },
                { "comm with spaces and parens", "7 (a) b (c)) R 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 99 7 7", 0,
                  'R', 2, 2129984, 99 },
                { "exactly 22 fields", "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", 0, 'S', 0, 0, 5 },
                { "starttime near 2^64", "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551615", 0, 'S',
                  0, 0, 18446744073709551615ULL },
                { "truncated before starttime", "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0", -EBADMSG, 0, 0, 0, 0 },
                { "no closing paren", "1 (x S 0 1 1", -EBADMSG, 0, 0, 0, 0 },
                { "no comm at all", "1 S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", -EBADMSG, 0, 0, 0, 0 },
                { "non-numeric ppid", "1 (x) S z 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", -EBADMSG, 0, 0, 0, 0 },
                { "two-letter state", "1 (x) SS 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", -EBADMSG, 0, 0, 0, 0 },
                { "double space", "1 (x) S  0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", -EBADMSG, 0, 0, 0, 0 },
                { "empty", "", -EBADMSG, 0, 0, 0, 0 },
        };
        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct procfs_pid_stat st = { 0 };
                int r = procfs_parse_pid_stat(cases[i].in, strlen(cases[i].in), &st);
                if (r != cases[i].r)
                        fail_msg("%s: gave %d, want %d", cases[i].what, r, cases[i].r);
                if (r < 0)
                        continue;
                if (st.state != cases[i].st || st.ppid != cases[i].ppid || st.flags != cases[i].flags ||
                    st.starttime != cases[i].start)
                        fail_msg("%s: got %c %d %u %llu", cases[i].what, st.state, (int) st.ppid, st.flags,
                                 st.starttime);
        }
}

static void test_parse_status(void **state) {
        static const struct {
                const char *what, *in;
                int r;
                const char *list;
        } cases[] = {
                { "usual", "Name:\tx\nCpus_allowed:\tf\nCpus_allowed_list:\t0-3\nMems_allowed_list:\t0\n", 0, "0-3" },
                { "last line without newline", "Name:\tx\nCpus_allowed_list:\t1,3", 0, "1,3" },
                { "missing", "Name:\tx\nCpus_allowed:\tf\n", -ENOENT, NULL },
                { "garbage list", "Cpus_allowed_list:\tx-y\n", -EINVAL, NULL },
                { "a longer key is not the key", "Cpus_allowed_list_x:\t1\n", -ENOENT, NULL },
        };
        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cpuset_t s;
                char buf[64];
                int r = workers_parse_status_cpus(cases[i].in, strlen(cases[i].in), &s);
                if (r != cases[i].r)
                        fail_msg("%s: gave %d, want %d", cases[i].what, r, cases[i].r);
                if (r == 0) {
                        assert_int_equal(cpuset_format_list(&s, buf, sizeof(buf)), 0);
                        if (strcmp(buf, cases[i].list) != 0)
                                fail_msg("%s: %s, want %s", cases[i].what, buf, cases[i].list);
                }
        }
}

static void test_cgroup_unit(void **state) {
        static const struct {
                const char *what, *cgroup, *unit;
                bool want;
        } cases[] = {
                { "cgroup v2", "0::/system.slice/nginx.service\n", "nginx.service", true },
                { "unit without suffix means .service", "0::/system.slice/nginx.service\n", "nginx", true },
                { "nested below the unit", "0::/system.slice/nginx.service/workers\n", "nginx.service", true },
                { "a slice", "0::/user.slice/user-1000.slice/session-3.scope\n", "user-1000.slice", true },
                { "v1 name=systemd line", "12:cpuset:/\n1:name=systemd:/system.slice/haproxy.service\n",
                  "haproxy.service", true },
                { "prefix of a longer name", "0::/system.slice/nginx.service2\n", "nginx.service", false },
                { "substring", "0::/system.slice/my-nginx.service\n", "nginx.service", false },
                { "other unit", "0::/system.slice/memcached.service\n", "nginx", false },
                { "controller field is not the path", "0:nginx.service:/\n", "nginx.service", false },
                { "empty unit", "0::/system.slice/nginx.service\n", "", false },
                { "garbage", "nonsense", "nginx", false },
        };
        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                bool got = workers_cgroup_has_unit(cases[i].cgroup, strlen(cases[i].cgroup), cases[i].unit);
                if (got != cases[i].want)
                        fail_msg("%s: %d, want %d", cases[i].what, got, cases[i].want);
        }
}

static void test_discover(void **state) {
        static const struct {
                const char *what;
                struct wspec w[3];
                size_t n;
                int r;
                const char *want; /* "worker:pid ..." */
        } cases[] = {
                { "by name, threads of one process", { { .name = "memcached" } }, 1, 0, "0:300" },
                { "by name, several processes", { { .name = "nginx" } }, 1, 0, "0:200 0:201" },
                { "by command-line regex", { { .cmdline = "worker process$" } }, 1, 0, "0:201" },
                { "regex sees NULs as spaces", { { .cmdline = "memcached -m 64 -p 11211" } }, 1, 0, "0:300" },
                { "by unit", { { .unit = "nginx.service" } }, 1, 0, "0:200 0:201" },
                { "by unit without suffix", { { .unit = "haproxy" } }, 1, 0, "0:700" },
                { "by pidfile", { { .pidfile = "/run/app.pid" } }, 1, 0, "0:400" },
                { "stale pidfile", { { .pidfile = "/run/stale.pid" } }, 1, 0, "" },
                { "garbage pidfile", { { .pidfile = "/run/garbage.pid" } }, 1, 0, "" },
                { "missing pidfile", { { .pidfile = "/run/none.pid" } }, 1, 0, "" },
                { "all criteria must hold", { { .name = "nginx", .cmdline = "master" } }, 1, 0, "0:200" },
                { "criteria that exclude each other", { { .name = "memcached", .unit = "nginx" } }, 1, 0, "" },
                { "kernel thread never matches", { { .name = "kworker/0:1" } }, 1, 0, "" },
                { "kthreadd never matches", { { .name = "kthreadd" } }, 1, 0, "" },
                { "zombie skipped", { { .name = "defunct" } }, 1, 0, "" },
                { "vanished process skipped", { { .name = "ghost" } }, 1, 0, "" },
                { "first section wins", { { .name = "nginx" }, { .unit = "nginx.service" } }, 2, 0, "0:200 0:201" },
                { "sorted by worker, then pid",
                  { { .cmdline = "haproxy" }, { .name = "memcached" }, { .unit = "nginx" } }, 3, 0,
                  "0:700 1:300 2:200 2:201" },
                { "section without criteria matches nothing", { { 0 } }, 1, 0, "" },
                { "bad regex", { { .cmdline = "(unclosed" } }, 1, -EINVAL, "" },
                { "no sections", { { 0 } }, 0, 0, "" },
        };
        int rootfd = fixture_root();
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct worker_set ws = { 0 };
                struct config c;
                char got[256];
                int r;

                mk_config(&c, cases[i].w, cases[i].n);
                r = workers_discover(rootfd, &c, &ws);
                free(c.workers);
                if (r != cases[i].r)
                        fail_msg("%s: gave %d, want %d", cases[i].what, r, cases[i].r);
                summarize(&ws, got, sizeof(got));
                if (strcmp(got, cases[i].want) != 0)
                        fail_msg("%s: found '%s', want '%s'", cases[i].what, got, cases[i].want);
                workers_free(&ws);
        }
        close(rootfd);
}

/* irqbalance found by name, but not one whose mount namespace shows
 * another tree at proc/irq (a simulator's bind mount): it cannot change
 * our IRQs.  The tree: proc/100 sees other/proc/irq, proc/200 sees ours. */
static void test_find_comm(void **state) {
        char tmpl[] = "/tmp/irqsteer-findcomm.XXXXXX", cmd[512];
        pid_t pid = 0;
        int rootfd;
        (void) state;

        assert_non_null(mkdtemp(tmpl));
        snprintf(cmd, sizeof(cmd),
                 "cd %s && mkdir -p proc/irq proc/100 proc/200 proc/300 other/proc/irq && "
                 "echo irqbalance > proc/100/comm && echo irqbalance > proc/200/comm && echo bash > proc/300/comm && "
                 "ln -s ../../other proc/100/root && ln -s ../.. proc/200/root",
                 tmpl);
        assert_int_equal(system(cmd), 0);
        rootfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(rootfd >= 0);

        assert_int_equal(workers_find_comm(rootfd, "irqbalance", NULL, &pid), 1);
        assert_int_equal(pid, 100);
        assert_int_equal(workers_find_comm(rootfd, "irqbalance", "proc/irq", &pid), 1);
        assert_int_equal(pid, 200);
        assert_int_equal(workers_find_comm(rootfd, "nothere", "proc/irq", &pid), 0);
        /* the only one left works on another tree: none counts */
        snprintf(cmd, sizeof(cmd), "rm -r %s/proc/200", tmpl);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(workers_find_comm(rootfd, "irqbalance", "proc/irq", &pid), 0);
        /* a root that cannot be looked at still counts */
        snprintf(cmd, sizeof(cmd), "rm %s/proc/100/root", tmpl);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(workers_find_comm(rootfd, "irqbalance", "proc/irq", &pid), 1);
        assert_int_equal(pid, 100);

        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
        assert_int_equal(system(cmd), 0);
}

/* A command line is matched by its first WORKERS_CMDLINE_MAX bytes: a
 * process chooses its length, and a long one is neither read nor matched
 * whole at every scan.  Its comm (also the user's choice) is kept escaped. */
static void test_cmdline_capped(void **state) {
        static const char stat[] = "900 (big) S 1 900 900 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 1900 12345678 200 "
                                   "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
        static const struct {
                const char *what, *regex, *want;
        } cases[] = {
                { "the start matches", "^/usr/bin/big --flag", "0:900" },
                { "past the cap is not seen", "TAILMARK", "" },
        };
        char tmpl[] = "/tmp/irqsteer-cmdline.XXXXXX", path[512], cmd[600];
        _cleanup_(freep) char *line = NULL;
        size_t n = 3 * WORKERS_CMDLINE_MAX, k;
        int rootfd;
        FILE *f;
        (void) state;

        assert_non_null(mkdtemp(tmpl));
        snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/900/task/900", tmpl);
        assert_int_equal(system(cmd), 0);
        line = malloc(n);
        assert_non_null(line);
        k = (size_t) snprintf(line, n, "/usr/bin/big%c--flag%c", 0, 0);
        memset(line + k, 'a', n - k);
        memcpy(line + n - 9, "TAILMARK", 9);
        snprintf(path, sizeof(path), "%s/proc/900/cmdline", tmpl);
        assert_non_null(f = fopen(path, "we"));
        assert_int_equal(fwrite(line, 1, n, f), n);
        fclose(f);
        for (size_t i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/proc/900%s/stat", tmpl, i ? "/task/900" : "");
                assert_non_null(f = fopen(path, "we"));
                fputs(stat, f);
                fclose(f);
        }
        snprintf(path, sizeof(path), "%s/proc/900/comm", tmpl);
        assert_non_null(f = fopen(path, "we"));
        /* a comm any user can set: kept escaped, as it is logged and shown */
        fputs("b\x1bg\n", f);
        fclose(f);
        snprintf(path, sizeof(path), "%s/proc/900/task/900/status", tmpl);
        assert_non_null(f = fopen(path, "we"));
        fputs("Name:\tbig\nCpus_allowed_list:\t0-3\n", f);
        fclose(f);
        rootfd = rootfs_open(tmpl);
        assert_true(rootfd >= 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct wspec w = { .cmdline = cases[i].regex };
                struct worker_set ws = { 0 };
                struct config c;
                char got[64];

                mk_config(&c, &w, 1);
                assert_int_equal(workers_discover(rootfd, &c, &ws), 0);
                free(c.workers);
                summarize(&ws, got, sizeof(got));
                if (strcmp(got, cases[i].want) != 0)
                        fail_msg("%s: found '%s', want '%s'", cases[i].what, got, cases[i].want);
                if (ws.n_procs > 0)
                        assert_string_equal(ws.procs[0].comm, "b\\x1bg");
                workers_free(&ws);
        }
        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
        assert_int_equal(system(cmd), 0);
}

static void test_threads(void **state) {
        static const struct wspec specs[] = { { .name = "memcached" }, { .cmdline = "worker" }, { .pidfile = "/run/app.pid" } };
        static const struct {
                pid_t pid;
                const char *comm;
                unsigned long long start;
                const char *threads; /* "tid=cpus ..." */
        } want[] = {
                /* tid=cpus@starttime of proc/PID/task/TID/stat */
                { 201, "nginx", 1201, "201=0-3@1201 205=1@1205 206=2-3@1206" },
                { 300, "memcached", 1300, "300=0-3@1300 301=0-3@1301 302=0,2@1302 303=3@1303" }, /* 304 exited: no status */
                { 400, "my (weird) app", 987654321, "400=0-3@987654321" },
        };
        struct worker_set ws = { 0 };
        struct config c;
        int rootfd = fixture_root();
        (void) state;

        mk_config(&c, specs, ELEMENTSOF(specs));
        assert_int_equal(workers_discover(rootfd, &c, &ws), 0);
        free(c.workers);
        assert_int_equal(ws.n_procs, 3);
        for (size_t i = 0; i < ws.n_procs; i++) {
                const struct worker_proc *p = &ws.procs[i];
                size_t j = p->pid == 201 ? 0 : p->pid == 300 ? 1 : 2;
                char got[256] = "", list[64];
                size_t off = 0;

                assert_int_equal(p->pid, want[j].pid);
                assert_string_equal(p->comm, want[j].comm);
                if (p->starttime != want[j].start)
                        fail_msg("pid %d: starttime %llu, want %llu", (int) p->pid, p->starttime, want[j].start);
                for (size_t t = 0; t < p->n_threads; t++) {
                        assert_int_equal(cpuset_format_list(&p->threads[t].allowed, list, sizeof(list)), 0);
                        off += snprintf(got + off, sizeof(got) - off, "%s%d=%s@%llu", t ? " " : "",
                                        (int) p->threads[t].tid, list, p->threads[t].starttime);
                }
                if (strcmp(got, want[j].threads) != 0)
                        fail_msg("pid %d: threads '%s', want '%s'", (int) p->pid, got, want[j].threads);
        }
        workers_free(&ws);
        close(rootfd);
}

/* Pin every discovered thread through apply (root_is_host on the fixture
 * tree: starttimes from its task/TID/stat, sched_*affinity wrapped): each
 * TID is set once with its own mask; ESRCH and EINVAL are classified. */
static void test_pin_wrapped(void **state) {
        static const struct wspec specs[] = { { .name = "nginx", .cmdline = "worker" } };
        static const struct {
                pid_t tid;
                int set_errno;
                int want_r;
                const char *want_mask;
        } want[] = {
                { 201, 0, APPLY_DONE, "0" },
                { 205, ESRCH, -ESRCH, "0-3" }, /* exited between discovery and pinning */
                { 206, EINVAL, -EINVAL, "0-3" }, /* PF_NO_SETAFFINITY */
        };
        char tmpl[] = "/tmp/isap-w-XXXXXX";
        struct worker_set ws = { 0 };
        struct undo_report rep;
        struct apply *ap = NULL;
        struct config c;
        int rootfd = fixture_root();
        (void) state;

        mk_config(&c, specs, 1);
        assert_int_equal(workers_discover(rootfd, &c, &ws), 0);
        free(c.workers);
        assert_int_equal(ws.n_procs, 1);
        assert_int_equal(ws.procs[0].n_threads, ELEMENTSOF(want));

        n_fakes = 0;
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                fakes[n_fakes] = (struct fake_task){ .tid = want[i].tid, .set_errno = want[i].set_errno };
                assert_int_equal(cpuset_parse_list("0-3", &fakes[n_fakes].mask), 0);
                n_fakes++;
        }
        assert_non_null(mkdtemp(tmpl));
        assert_int_equal(apply_new(rootfd, true, tmpl, false, &ap), 0);
        for (size_t t = 0; t < ws.procs[0].n_threads; t++) {
                _cleanup_(action_done) struct action a = { .type = KNOB_THREAD, .pid = ws.procs[0].pid,
                                    .tid = ws.procs[0].threads[t].tid,
                                    .starttime = ws.procs[0].threads[t].starttime, .queue = -1 };
                struct fake_task *f = fake_find(a.tid);
                char buf[64];
                int r;

                assert_int_equal(action_set_cpus(&a, SET(cpuset_single((int) t)), NULL), 0);
                r = apply_action(ap, &a);
                assert_non_null(f);
                if (r != want[t].want_r)
                        fail_msg("tid %d: %d, want %d", (int) a.tid, r, want[t].want_r);
                assert_int_equal(f->set_calls, 1);
                assert_int_equal(cpuset_format_list(&f->mask, buf, sizeof(buf)), 0);
                assert_string_equal(buf, want[t].want_mask);
                if (r < 0)
                        /* a thread's EINVAL is a refusal for good */
                        assert_int_equal(action_failure_class(KNOB_THREAD, r),
                                         want[t].set_errno == ESRCH ? ACTION_FAIL_GONE : ACTION_FAIL_PERMANENT);
        }
        assert_int_equal(apply_restore_all(ap, &rep), 0);
        assert_int_equal(rep.restored, 1);
        assert_int_equal(rep.unchanged, 2);
        assert_int_equal(fake_find(201)->set_calls, 2);
        assert_true(cpuset_count(&fake_find(201)->mask) == 4);
        apply_free(ap);
        assert_int_equal(rmdir(tmpl), 0);
        workers_free(&ws);
        close(rootfd);
        n_fakes = 0;
}

/* ---- live: a multi-threaded child of our own ---- */

#define LIVE_COMM "isapw-live"
#define LIVE_THREADS 4

static pid_t live_child = -1;
static char live_state[64];

static void *sleeper(void *arg) {
        (void) arg;
        for (;;)
                pause();
        return NULL;
}

static _Noreturn void child_main(void) {
        pthread_t t[LIVE_THREADS];

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        prctl(PR_SET_NAME, LIVE_COMM);
        for (int i = 0; i < LIVE_THREADS; i++)
                if (pthread_create(&t[i], NULL, sleeper, NULL) != 0)
                        _exit(1);
        for (;;)
                pause();
}

static int teardown_live(void **state) {
        (void) state;
        if (live_child > 0) {
                kill(live_child, SIGKILL);
                (void) waitpid(live_child, NULL, 0);
                live_child = -1;
        }
        if (live_state[0]) {
                char cmd[128];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", live_state);
                (void) system(cmd);
                live_state[0] = 0;
        }
        return 0;
}

static int count_tasks(pid_t pid) {
        char path[64];
        int n = 0;
        DIR *d;
        struct dirent *de;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        if (!d)
                return -1;
        while ((de = readdir(d)))
                n += de->d_name[0] != '.';
        closedir(d);
        return n;
}

static void read_allowed(pid_t pid, pid_t tid, cpuset_t *ret) {
        char path[96], *buf = NULL;
        size_t len;
        int fd = rootfs_open("/");

        assert_true(fd >= 0);
        snprintf(path, sizeof(path), "proc/%d/task/%d/status", (int) pid, (int) tid);
        assert_int_equal(rootfs_read(fd, path, &buf, &len), 0);
        assert_int_equal(workers_parse_status_cpus(buf, len, ret), 0);
        free(buf);
        close(fd);
}

static void test_live_threads(void **state) {
        static const struct wspec specs[] = { { .name = LIVE_COMM } };
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        const struct worker_proc *p = NULL;
        struct worker_set ws = { 0 };
        struct undo_report rep;
        struct apply *ap = NULL;
        cpuset_t before[LIVE_THREADS + 1];
        struct config c;
        int rootfd;
        (void) state;

        SKIP_UNLESS_ROOT();
        if (ncpu < 2) {
                print_message("[  SKIP    ] %s: needs 2 online CPUs\n", __func__);
                skip();
        }
        live_child = fork();
        assert_true(live_child >= 0);
        if (live_child == 0)
                child_main();
        for (int i = 0; i < 500 && count_tasks(live_child) < LIVE_THREADS + 1; i++) {
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        assert_int_equal(count_tasks(live_child), LIVE_THREADS + 1);

        rootfd = rootfs_open("/");
        assert_true(rootfd >= 0);
        mk_config(&c, specs, 1);
        assert_int_equal(workers_discover(rootfd, &c, &ws), 0);
        free(c.workers);
        for (size_t i = 0; i < ws.n_procs; i++)
                if (ws.procs[i].pid == live_child)
                        p = &ws.procs[i];
        assert_non_null(p);
        assert_int_equal(p->n_threads, LIVE_THREADS + 1);
        assert_int_equal(p->threads[0].tid, live_child);

        snprintf(live_state, sizeof(live_state), "/tmp/isap-wl-XXXXXX");
        assert_non_null(mkdtemp(live_state));
        assert_int_equal(apply_new(rootfd, rootfs_is_host(rootfd), live_state, false, &ap), 0);
        for (size_t t = 0; t < p->n_threads; t++) {
                _cleanup_(action_done) struct action a = { .type = KNOB_THREAD, .pid = p->pid, .tid = p->threads[t].tid,
                                    .starttime = p->threads[t].starttime, .queue = -1 };
                cpuset_t now;

                before[t] = p->threads[t].allowed;
                assert_int_equal(action_set_cpus(&a, SET(cpuset_single((int) (t % ncpu))), NULL), 0);
                if (cpuset_equal(KEPT(&a.cpus), &before[t]))
                        assert_int_equal(action_set_cpus(&a, SET(cpuset_single((int) ((t + 1) % ncpu))),
                                                         NULL), 0);
                assert_int_equal(apply_action(ap, &a), APPLY_DONE);
                read_allowed(p->pid, a.tid, &now);
                assert_true(cpuset_equal(&now, KEPT(&a.cpus)));
        }
        assert_int_equal(apply_undo(ap)->n_entries, p->n_threads);

        assert_int_equal(apply_restore_all(ap, &rep), 0);
        assert_int_equal(rep.restored, p->n_threads);
        for (size_t t = 0; t < p->n_threads; t++) {
                cpuset_t now;
                read_allowed(p->pid, p->threads[t].tid, &now);
                assert_true(cpuset_equal(&now, &before[t]));
        }
        print_message("live: pinned and restored %zu threads of pid %d\n", p->n_threads, (int) p->pid);
        apply_free(ap);
        workers_free(&ws);
        close(rootfd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_stat),
                cmocka_unit_test(test_parse_status),
                cmocka_unit_test(test_cgroup_unit),
                cmocka_unit_test(test_discover),
                cmocka_unit_test(test_find_comm),
                cmocka_unit_test(test_cmdline_capped),
                cmocka_unit_test(test_threads),
                cmocka_unit_test(test_pin_wrapped),
                cmocka_unit_test_teardown(test_live_threads, teardown_live),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
