/* Actuators and the undo journal over copies of tests/fixtures/apply, with
 * sched_{set,get}affinity wrapped for fake threads; plus live tests on
 * this host's IRQs (root). */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/capability.h>
#include <sys/stat.h>

#include "apply.h"
#include "fake-sched.h"
#include "rootfs.h"
#include "testlib.h"
#include "undo.h"
#include "util.h"

static void fakes_reset(void) {
        static const pid_t tids[] = { 5000101, 5000102, 5000103 };

        n_fakes = 0;
        for (size_t i = 0; i < ELEMENTSOF(tids); i++) {
                fakes[n_fakes] = (struct fake_task){ .tid = tids[i] };
                assert_int_equal(cpuset_parse_list("0-3", &fakes[n_fakes].mask), 0);
                n_fakes++;
        }
}

/* ---- a private copy of the fixture tree ---- */

struct env {
        char base[64];
        char root[96];
        char state[96];
        int rootfd;
};

static void env_setup(struct env *e, const char *fixture) {
        char src[512], cmd[1024];

        snprintf(e->base, sizeof(e->base), "/tmp/isap-XXXXXX");
        assert_non_null(mkdtemp(e->base));
        snprintf(e->root, sizeof(e->root), "%s/root", e->base);
        snprintf(e->state, sizeof(e->state), "%s/state", e->base);
        fixture_path(fixture, src, sizeof(src));
        snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", src, e->root);
        assert_int_equal(system(cmd), 0);
        e->rootfd = rootfs_open(e->root);
        assert_true(e->rootfd >= 0);
}

static void env_teardown(struct env *e) {
        char cmd[256];

        if (e->rootfd >= 0)
                close(e->rootfd);
        e->rootfd = -1;
        if (e->base[0]) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->base);
                (void) system(cmd);
        }
}

static struct env cur_env = { .rootfd = -1 };

static int teardown_env(void **state) {
        (void) state;
        env_teardown(&cur_env);
        memset(&cur_env, 0, sizeof(cur_env));
        cur_env.rootfd = -1;
        return 0;
}

/* Contents of root/rel, or NULL when missing. */
static char *slurp(const char *dir, const char *rel) {
        char path[512];
        char *buf = NULL;
        size_t len;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "re");
        if (!f)
                return NULL;
        buf = calloc(1, 65536);
        assert_non_null(buf);
        len = fread(buf, 1, 65535, f);
        buf[len] = 0;
        fclose(f);
        return buf;
}

static void assert_file(const char *dir, const char *rel, const char *want, const char *what) {
        char *got = slurp(dir, rel);

        if (!want) {
                if (got)
                        fail_msg("%s: %s exists ('%s'), want none", what, rel, got);
                return;
        }
        if (!got)
                fail_msg("%s: %s missing, want '%s'", what, rel, want);
        if (strcmp(got, want) != 0) {
                char g[512];
                snprintf(g, sizeof(g), "%s", got);
                free(got);
                fail_msg("%s: %s is '%s', want '%s'", what, rel, g, want);
        }
        free(got);
}

/* The first two lines of a journal written for rootfd, then body. */
static char *journal_text(int rootfd, const char *body) {
        struct undo_identity id;
        char *t = NULL;

        assert_int_equal(undo_identity_get(rootfd, &id), 0);
        assert_true(asprintf(&t, "# irqsteer undo journal v2\nroot %llu %llu %s\n%s", id.dev, id.ino,
                             id.boot_id[0] ? id.boot_id : "-", body) > 0);
        return t;
}

static void assert_journal(struct env *e, const char *body, const char *what) {
        char *want = journal_text(e->rootfd, body);

        assert_file(e->state, UNDO_JOURNAL_NAME, want, what);
        free(want);
}

static void write_journal(struct env *e, const char *body) {
        char *text = journal_text(e->rootfd, body);

        test_write_file(e->state, UNDO_JOURNAL_NAME, text);
        free(text);
}

struct act {
        enum knob_kind type;
        unsigned irq;
        const char *nic;
        int queue;
        pid_t pid, tid;
        unsigned long long starttime;
        const char *cpus;
        uint32_t value;
};

static struct action mk(const struct act *x) {
        struct action a = { .type = x->type, .irq = x->irq, .queue = x->queue, .pid = x->pid, .tid = x->tid,
                            .starttime = x->starttime, .value = x->value };

        if (x->nic)
                snprintf(a.nic, sizeof(a.nic), "%s", x->nic);
        if (x->cpus) {
                cpuset_t cpus;

                assert_int_equal(cpuset_parse_list(x->cpus, &cpus), 0);
                assert_int_equal(action_set_cpus(&a, &cpus, NULL), 0);
        }
        snprintf(a.reason, sizeof(a.reason), "test");
        return a;
}

#define IRQ(n, c) { .type = KNOB_IRQ, .irq = (n), .queue = -1, .cpus = (c) }
#define RPS(d, q, c) { .type = KNOB_RPS, .nic = (d), .queue = (q), .cpus = (c) }
#define XPS(d, q, c) { .type = KNOB_XPS, .nic = (d), .queue = (q), .cpus = (c) }
#define FLOW(d, q, v) { .type = KNOB_FLOWCNT, .nic = (d), .queue = (q), .value = (v) }
#define SOCK(v) { .type = KNOB_SOCKFLOW, .queue = -1, .value = (v) }
#define DEFAFF(c) { .type = KNOB_DEFAFF, .queue = -1, .cpus = (c) }
/* st: the starttime the thread had when discovered */
#define THR(p, t, st, c) \
        { .type = KNOB_THREAD, .pid = (p), .tid = (t), .starttime = (st), .queue = -1, .cpus = (c) }

/* ---- tests ---- */

static void test_errclass(void **state) {
        static const struct {
                const char *what;
                enum knob_kind type;
                int r;
                enum action_failure want;
                const char *name;
        } cases[] = {
                { "success", KNOB_IRQ, 0, ACTION_FAIL_NONE, "none" },
                { "positive result", KNOB_RPS, APPLY_UNCHANGED, ACTION_FAIL_NONE, "none" },
                { "managed IRQ before 6.12", KNOB_IRQ, -EIO, ACTION_FAIL_PERMANENT, "permanent" },
                { "managed IRQ since 6.12", KNOB_IRQ, -EPERM, ACTION_FAIL_PERMANENT, "permanent" },
                { "read-only file", KNOB_RPS, -EACCES, ACTION_FAIL_PERMANENT, "permanent" },
                { "read-only IRQ file", KNOB_IRQ, -EACCES, ACTION_FAIL_PERMANENT, "permanent" },
                { "read-only mount", KNOB_XPS, -EROFS, ACTION_FAIL_PERMANENT, "permanent" },
                { "vector space full", KNOB_IRQ, -ENOSPC, ACTION_FAIL_CAPACITY, "capacity" },
                { "ENOSPC is no vector space but an IRQ's", KNOB_RPS, -ENOSPC, ACTION_FAIL_OTHER, "other" },
                { "IRQ gone", KNOB_IRQ, -ENOENT, ACTION_FAIL_GONE, "gone" },
                { "thread exited", KNOB_THREAD, -ESRCH, ACTION_FAIL_GONE, "gone" },
                { "device gone", KNOB_FLOWCNT, -ENODEV, ACTION_FAIL_GONE, "gone" },
                { "no such device or address", KNOB_XPS, -ENXIO, ACTION_FAIL_GONE, "gone" },
                { "busy", KNOB_IRQ, -EBUSY, ACTION_FAIL_TRANSIENT, "transient" },
                { "again", KNOB_RPS, -EAGAIN, ACTION_FAIL_TRANSIENT, "transient" },
                { "interrupted", KNOB_THREAD, -EINTR, ACTION_FAIL_TRANSIENT, "transient" },
                { "offline CPU", KNOB_IRQ, -EINVAL, ACTION_FAIL_INVALID, "invalid" },
                { "kernel thread refuses", KNOB_THREAD, -EINVAL, ACTION_FAIL_PERMANENT, "permanent" },
                { "CPU out of range", KNOB_RPS, -ERANGE, ACTION_FAIL_INVALID, "invalid" },
                { "fixture root thread", KNOB_THREAD, -EOPNOTSUPP, ACTION_FAIL_UNSUPPORTED, "unsupported" },
                { "no memory", KNOB_SOCKFLOW, -ENOMEM, ACTION_FAIL_OTHER, "other" },
        };
        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                enum action_failure c = action_failure_class(cases[i].type, cases[i].r);
                if (c != cases[i].want)
                        fail_msg("%s: class %d, want %d", cases[i].what, c, cases[i].want);
                assert_string_equal(action_failure_to_string(c), cases[i].name);
        }
        assert_null(action_failure_to_string(ACTION_FAILURE_MAX));
        /* only the unexplained count toward giving up */
        assert_false(action_failure_counts(ACTION_FAIL_PERMANENT));
        assert_false(action_failure_counts(ACTION_FAIL_GONE));
        assert_false(action_failure_counts(ACTION_FAIL_CAPACITY));
        assert_false(action_failure_counts(ACTION_FAIL_TRANSIENT));
        assert_true(action_failure_counts(ACTION_FAIL_INVALID));
        assert_true(action_failure_counts(ACTION_FAIL_OTHER));
}

static void test_writers(void **state) {
        static const struct {
                const char *what;
                struct act a;
                int want_r;
                const char *file, *content; /* content NULL: file untouched (checked against orig) */
                const char *orig;
        } cases[] = {
                { "IRQ to one CPU via smp_affinity_list", IRQ(30, "2"), APPLY_DONE,
                  "proc/irq/30/smp_affinity_list", "2\n", NULL },
                { "IRQ to a range", IRQ(33, "1-2"), APPLY_DONE, "proc/irq/33/smp_affinity_list", "1-2\n", NULL },
                { "IRQ without smp_affinity_list falls back to the mask", IRQ(31, "1"), APPLY_DONE,
                  "proc/irq/31/smp_affinity", "2\n", NULL },
                { "IRQ mask fallback keeps the 40-CPU width", IRQ(32, "33"), APPLY_DONE,
                  "proc/irq/32/smp_affinity", "02,00000000\n", NULL },
                { "IRQ already there is not written", IRQ(30, "0-3"), APPLY_UNCHANGED,
                  "proc/irq/30/smp_affinity_list", "0-3\n", NULL },
                { "IRQ empty set", IRQ(30, ""), -EINVAL, "proc/irq/30/smp_affinity_list", "0-3\n", NULL },
                { "IRQ that does not exist", IRQ(99, "1"), -ENOENT, "proc/irq/99/smp_affinity_list", NULL, NULL },
                { "RPS on a 4-CPU host: one hex digit", RPS("eth0", 0, "1-2"), APPLY_DONE,
                  "sys/class/net/eth0/queues/rx-0/rps_cpus", "6\n", NULL },
                { "RPS off: the empty mask", RPS("eth0", 1, ""), APPLY_DONE,
                  "sys/class/net/eth0/queues/rx-1/rps_cpus", "0\n", NULL },
                { "RPS on a 40-CPU host keeps two chunks", RPS("eth1", 0, "0,33"), APPLY_DONE,
                  "sys/class/net/eth1/queues/rx-0/rps_cpus", "02,00000001\n", NULL },
                { "RPS beyond the file's width", RPS("eth0", 0, "35"), APPLY_DONE,
                  "sys/class/net/eth0/queues/rx-0/rps_cpus", "00000008,00000000\n", NULL },
                { "XPS", XPS("eth0", 1, "3"), APPLY_DONE, "sys/class/net/eth0/queues/tx-1/xps_cpus", "8\n", NULL },
                { "XPS wide", XPS("eth1", 0, "39"), APPLY_DONE, "sys/class/net/eth1/queues/tx-0/xps_cpus",
                  "80,00000000\n", NULL },
                { "rps_flow_cnt", FLOW("eth0", 1, 2048), APPLY_DONE,
                  "sys/class/net/eth0/queues/rx-1/rps_flow_cnt", "2048\n", NULL },
                { "rps_sock_flow_entries", SOCK(32768), APPLY_DONE, "proc/sys/net/core/rps_sock_flow_entries",
                  "32768\n", NULL },
                { "NIC that does not exist", RPS("eth9", 0, "1"), -ENOENT, "sys/class/net/eth9", NULL, NULL },
                { "queue that does not exist", RPS("eth0", 7, "1"), -ENOENT,
                  "sys/class/net/eth0/queues/rx-7/rps_cpus", NULL, NULL },
                { "NIC name escaping sysfs", RPS("..", 0, "1"), -EINVAL, "sys/class/net/eth0/queues/rx-0/rps_cpus",
                  "0\n", NULL },
                { "NIC name with a slash", RPS("eth0/../x", 0, "1"), -EINVAL,
                  "sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n", NULL },
                { "negative queue", RPS("eth0", -1, "1"), -EINVAL, "sys/class/net/eth0/queues/rx-0/rps_cpus",
                  "0\n", NULL },
                { "thread on a fixture root", THR(5000100, 5000101, 777001, "1"), -EOPNOTSUPP, "proc/5000100/task/5000101",
                  NULL, NULL },
        };
        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct env e = { .rootfd = -1 };
                struct apply *ap = NULL;
                _cleanup_(action_done) struct action a = { 0 };
                char journal[160];
                int r;

                env_setup(&e, "apply");
                action_done(&a);
                a = mk(&cases[i].a);
                assert_int_equal(apply_new(e.rootfd, false, e.state, false, &ap), 0);
                r = apply_action(ap, &a);
                if (r != cases[i].want_r)
                        fail_msg("%s: apply_action gave %d, want %d", cases[i].what, r, cases[i].want_r);
                if (cases[i].content)
                        assert_file(e.root, cases[i].file, cases[i].content, cases[i].what);
                else if (cases[i].want_r < 0 && cases[i].want_r != -EOPNOTSUPP)
                        assert_file(e.root, cases[i].file, NULL, cases[i].what);
                /* A journal exists exactly when something was written. */
                snprintf(journal, sizeof(journal), "state/%s", UNDO_JOURNAL_NAME);
                {
                        char *j = slurp(e.base, journal);
                        bool want = cases[i].want_r == APPLY_DONE || cases[i].want_r == APPLY_READBACK_DIFFERS;
                        if (want != (j != NULL))
                                fail_msg("%s: journal %s, want %s", cases[i].what, j ? "present" : "absent",
                                         want ? "present" : "absent");
                        free(j);
                }
                apply_free(ap);
                env_teardown(&e);
        }
}

static void test_journal_and_restore(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        struct stat st;
        char jpath[160];
        static const struct act steps[] = {
                IRQ(30, "2"), RPS("eth0", 0, "1-2"), IRQ(30, "3"), FLOW("eth0", 0, 4096), SOCK(32768),
        };
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        snprintf(jpath, sizeof(jpath), "%s/%s", e->state, UNDO_JOURNAL_NAME);

        /* First change to IRQ 30: the original is on disk. */
        _cleanup_(action_done) struct action a = mk(&steps[0]);
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        assert_journal(e, "irq 30 - 0-3 0-3 2\n", "first change");
        assert_int_equal(stat(jpath, &st), 0);
        /* readable by irqsteerctl plan as any user, writable by the daemon only */
        assert_int_equal(st.st_mode & 07777, 0644);


        action_done(&a);
        a = mk(&steps[1]);
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        /* Second change to IRQ 30 keeps the first original. */
        action_done(&a);
        a = mk(&steps[2]);
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        /* Each change appends the object's line; the latest one counts. */
        assert_journal(e,
                    "irq 30 - 0-3 0-3 2\n"
                    "rps eth0 0 0 0 6\n"
                    "irq 30 - 0-3 2 3\n",
                    "second change keeps the original");
        {
                struct undo *u = NULL;
                struct knob_key k30 = { .kind = KNOB_IRQ, .irq = 30, .actions = "-" }, krps = { .kind = KNOB_RPS, .nic = "eth0" };
                const struct undo_entry *x;

                assert_int_equal(undo_new(e->state, NULL, true, &u), 0);
                assert_int_equal(u->n_entries, 2);
                assert_int_equal(u->corrupt, 0);
                x = undo_find(u, &k30);
                assert_non_null(x);
                assert_string_equal(x->original, "0-3");
                assert_string_equal(x->last, "2");
                assert_string_equal(x->pending, "3");
                x = undo_find(u, &krps);
                assert_non_null(x);
                assert_string_equal(x->original, "0");
                assert_string_equal(x->last, "0");
                assert_string_equal(x->pending, "6");
                undo_free(u);
        }
        action_done(&a);
        a = mk(&steps[3]);
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        action_done(&a);
        a = mk(&steps[4]);
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        assert_int_equal(apply_undo(ap)->n_entries, 4);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "3\n", "after the steps");

        /* Someone else changes rps_sock_flow_entries: not ours to restore. */
        test_write_file(e->root, "proc/sys/net/core/rps_sock_flow_entries", "65536\n");

        assert_int_equal(apply_restore_all(ap, &rep), 0);
        assert_int_equal(rep.restored, 3);
        assert_int_equal(rep.external, 1);
        assert_int_equal(rep.failed, 0);
        assert_int_equal(rep.gone, 0);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "0-3\n", "restored IRQ");
        assert_file(e->root, "sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n", "restored RPS");
        assert_file(e->root, "sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "0\n", "restored flow count");
        assert_file(e->root, "proc/sys/net/core/rps_sock_flow_entries", "65536\n", "external change kept");
        assert_file(e->state, UNDO_JOURNAL_NAME, NULL, "journal removed after restore");
        assert_int_equal(apply_undo(ap)->n_entries, 0);
        apply_free(ap);
}

/* proc/irq/default_smp_affinity: journaled as a mask of the file's
 * width, read back, restored at stop; an empty mask is never written. */
static void test_default_affinity(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        struct knob_key k = { .kind = KNOB_DEFAFF };
        static const struct act set = DEFAFF("0-1,4"), again = DEFAFF("0"), empty = { .type = KNOB_DEFAFF,
                                                                                        .queue = -1 };
        _cleanup_(action_done) struct action a = { 0 };
        char *v = NULL;
        (void) state;

        env_setup(e, "apply");
        test_write_file(e->root, "proc/irq/default_smp_affinity", "00,000000ff\n");
        assert_int_equal(knob_read(e->rootfd, false, &k, &v), 0);
        assert_string_equal(v, "00,000000ff");
        free(v);
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);


        action_done(&a);
        a = mk(&set);
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        assert_file(e->root, "proc/irq/default_smp_affinity", "00,00000013\n", "written as wide as it was");
        assert_journal(e, "defaffinity 00,000000ff 00,000000ff 00,00000013\n", "journaled before the write");
        action_done(&a);
        a = mk(&again);
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        action_done(&a);
        a = mk(&empty);
        assert_true(apply_action(ap, &a) < 0);
        assert_file(e->root, "proc/irq/default_smp_affinity", "00,00000001\n", "an empty mask is not written");

        assert_int_equal(apply_restore_all(ap, &rep), 0);
        assert_int_equal(rep.restored, 1);
        assert_int_equal(rep.failed, 0);
        assert_file(e->root, "proc/irq/default_smp_affinity", "00,000000ff\n", "restored at stop");
        assert_file(e->state, UNDO_JOURNAL_NAME, NULL, "journal removed after restore");
        apply_free(ap);
}

/* sys/class/net/NIC/threaded: journaled, written, restored at stop; a
 * value the kernel does not know is never written. */
static void test_threaded_napi(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        struct knob_key k = { .kind = KNOB_THREADED, .nic = "eth0" };
        static const struct act on = { .type = KNOB_THREADED, .nic = "eth0", .queue = -1, .value = 1 },
                                bad = { .type = KNOB_THREADED, .nic = "eth0", .queue = -1, .value = 3 };
        _cleanup_(action_done) struct action a = { 0 };
        char *v = NULL, key[KNOB_KEY_MAX];
        (void) state;

        env_setup(e, "apply");
        test_write_file(e->root, "sys/class/net/eth0/threaded", "0\n");
        assert_int_equal(knob_read(e->rootfd, false, &k, &v), 0);
        assert_string_equal(v, "0");
        free(v);
        assert_int_equal(knob_key_format(&k, key, sizeof(key)), 0);
        assert_string_equal(key, "threaded eth0");
        assert_true(knob_value_valid(KNOB_THREADED, "2"));
        assert_false(knob_value_valid(KNOB_THREADED, "3"));
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);


        action_done(&a);
        a = mk(&on);
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        assert_file(e->root, "sys/class/net/eth0/threaded", "1\n", "written");
        assert_journal(e, "threaded eth0 0 0 1\n", "journaled before the write");
        action_done(&a);
        a = mk(&bad);
        assert_true(apply_action(ap, &a) < 0);
        assert_file(e->root, "sys/class/net/eth0/threaded", "1\n", "3 is not written");

        assert_int_equal(apply_restore_all(ap, &rep), 0);
        assert_int_equal(rep.restored, 1);
        assert_int_equal(rep.failed, 0);
        assert_file(e->root, "sys/class/net/eth0/threaded", "0\n", "restored at stop");
        assert_file(e->state, UNDO_JOURNAL_NAME, NULL, "journal removed after restore");
        apply_free(ap);
}

/* Appended lines are compacted away: 300 changes of one IRQ leave a
 * journal of at most 2 x 1 + 64 object lines, which still restores. */
static void test_journal_compaction(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        struct undo *u = NULL;
        struct knob_key k30 = { .kind = KNOB_IRQ, .irq = 30, .actions = "-" };
        size_t lines = 0;
        char *text;
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        for (int i = 0; i < 300; i++) {
                struct act step = IRQ(30, i % 2 ? "1" : "2");
                _cleanup_(action_done) struct action a = mk(&step);
                assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        }
        text = slurp(e->state, UNDO_JOURNAL_NAME);
        assert_non_null(text);
        for (const char *p = text; *p; p++)
                lines += *p == '\n';
        free(text);
        /* the header and at most 66 lines for the one object */
        if (lines < 2 || lines > 67)
                fail_msg("journal has %zu lines after 300 changes", lines);
        assert_int_equal(undo_new(e->state, NULL, true, &u), 0);
        assert_int_equal(u->n_entries, 1);
        assert_int_equal(u->corrupt, 0);
        assert_string_equal(undo_find(u, &k30)->original, "0-3");
        undo_free(u);
        apply_free(ap); /* crash */
        assert_int_equal(undo_recover(e->rootfd, e->state, &rep), 0);
        assert_int_equal(rep.restored, 1);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "0-3\n", "restored after compactions");
}

/* A NIC renamed while its masks are ours: its saved originals follow it
 * to the new name, and an entry a gone device left under that name is
 * dropped, so a restore after a crash puts eth0's originals back under
 * its new name eth1. */
static void test_journal_rename_nic(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        struct undo *u = NULL;
        static const struct act steps[] = { RPS("eth0", 0, "1"), XPS("eth0", 0, "1"), RPS("eth1", 0, "1") };
        char cmd[512];
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                _cleanup_(action_done) struct action a = mk(&steps[i]);
                assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        }
        /* the old eth1 goes away, eth0 becomes eth1 */
        snprintf(cmd, sizeof(cmd), "cd '%s/sys/class/net' && rm -r eth1 && mv eth0 eth1", e->root);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(apply_rename_nic(ap, "eth0", "eth1"), 2);
        assert_int_equal(apply_rename_nic(ap, "eth0", "eth1"), 0);
        assert_int_equal(apply_rename_nic(ap, "eth1", "eth1"), -EINVAL);
        apply_free(ap); /* crash */

        assert_int_equal(undo_new(e->state, NULL, true, &u), 0);
        assert_int_equal(u->n_entries, 2);
        for (size_t i = 0; i < u->n_entries; i++)
                assert_string_equal(u->entries[i].key.nic, "eth1");
        undo_free(u);
        assert_int_equal(undo_recover(e->rootfd, e->state, &rep), 0);
        assert_int_equal(rep.restored, 2);
        assert_int_equal(rep.external, 0);
        assert_file(e->root, "sys/class/net/eth1/queues/rx-0/rps_cpus", "0\n", "eth0's original RPS, now as eth1");
        assert_file(e->root, "sys/class/net/eth1/queues/tx-0/xps_cpus", "0\n", "eth0's original XPS, now as eth1");
}

/* Apply, then free without restoring (= the daemon was killed), then
 * recover as the next start would. */
static void test_crash_recover(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        static const struct act steps[] = {
                IRQ(30, "1"), IRQ(31, "2"), RPS("eth0", 0, "3"), RPS("eth0", 1, "0"), XPS("eth1", 0, "0-7"),
                FLOW("eth0", 1, 1024),
        };
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                _cleanup_(action_done) struct action a = mk(&steps[i]);
                assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        }
        apply_free(ap); /* crash: no restore */
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "1\n", "changed before the crash");

        /* The driver reset queue 1 meanwhile (as on link down/up): its
         * value is neither ours nor the original, so it stays. */
        test_write_file(e->root, "sys/class/net/eth0/queues/rx-1/rps_cpus", "f\n");
        /* A NIC vanished. */
        {
                char cmd[256];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s/sys/class/net/eth1'", e->root);
                assert_int_equal(system(cmd), 0);
        }

        assert_int_equal(undo_recover(e->rootfd, e->state, &rep), 0);
        assert_int_equal(rep.restored, 4);
        assert_int_equal(rep.external, 1);
        assert_int_equal(rep.gone, 1);
        assert_int_equal(rep.failed, 0);
        assert_int_equal(rep.corrupt, 0);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "0-3\n", "IRQ 30 restored");
        assert_file(e->root, "proc/irq/31/smp_affinity", "f\n", "IRQ 31 restored through the mask");
        assert_file(e->root, "sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n", "RPS rx-0 restored");
        assert_file(e->root, "sys/class/net/eth0/queues/rx-1/rps_cpus", "f\n", "RPS rx-1 left alone");
        assert_file(e->root, "sys/class/net/eth0/queues/rx-1/rps_flow_cnt", "0\n", "flow count restored");
        assert_file(e->state, UNDO_JOURNAL_NAME, NULL, "journal removed");

        /* Nothing left: a second recovery is a no-op. */
        assert_int_equal(undo_recover(e->rootfd, e->state, &rep), 0);
        assert_int_equal(rep.restored + rep.external + rep.gone + rep.unchanged, 0);
}

/* A crash between the journal write and the object write, or after it:
 * the object holds LAST or PENDING and either is restored. */
static void test_pending(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(mkdir(e->state, 0700), 0);
        write_journal(e,
                 "irq 30 - 0-3 2 3\n"   /* crashed after writing 3 */
                 "irq 33 - 0-3 1 2\n"   /* crashed before writing 2 */
                 "irq 31 - 0-3 1 -\n"); /* holds 1 (ours) */
        test_write_file(e->root, "proc/irq/30/smp_affinity_list", "3\n");
        test_write_file(e->root, "proc/irq/33/smp_affinity_list", "1\n");
        test_write_file(e->root, "proc/irq/31/smp_affinity", "2\n");
        assert_int_equal(undo_recover(e->rootfd, e->state, &rep), 0);
        assert_int_equal(rep.restored, 3);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "0-3\n", "pending value restored");
        assert_file(e->root, "proc/irq/33/smp_affinity_list", "0-3\n", "last value restored");
        assert_file(e->root, "proc/irq/31/smp_affinity", "f\n", "mask file restored");
}

static void test_journal_lines(void **state) {
        static const struct {
                const char *what, *line;
                bool valid;
        } cases[] = {
                { "irq", "irq 73 eth0-TxRx-0 0-3 5 -\n", true },
                { "irq with pending", "irq 73 eth0-TxRx-0 0-3 5 6\n", true },
                { "irq serving nothing", "irq 73 - 0-3 5 -\n", true },
                { "irq shared, escaped", "irq 9 acpi,x\\x20y 0-3 5 -\n", true },
                { "irq of version 1", "irq 73 0-3 5 -\n", true },
                /* an identity of KNOB_ACTIONS_MAX - 1 characters: the
                 * longest key there is */
                { "irq with the longest identity",
                  "irq 4294967295 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy,zzzzz 0-3 5 -\n", true },
                { "root line (no object)", "root 2049 2 5f0c-11\n", false },
                { "root line, a field short", "root 2049 2\n", false },
                { "rps", "rps eth0 3 00000000,00000000 00000000,0000000c -\n", true },
                { "xps", "xps ens1f0np0 12 0 f -\n", true },
                { "flowcnt", "flowcnt eth0 3 0 2048 -\n", true },
                { "sockflow", "sockflow 0 32768 -\n", true },
                { "defaffinity", "defaffinity ff,ffffffff 00,0000000f 00,00000003\n", true },
                { "defaffinity empty", "defaffinity f 0 -\n", false },
                { "defaffinity not a mask", "defaffinity f xyz -\n", false },
                { "defaffinity with a key field", "defaffinity 1 f 3 -\n", false },
                { "thread", "thread 1234 1240 987654 0-1 1 -\n", true },
                { "comment", "# a comment\n", false },
                { "unknown kind", "frobnicate 1 2 3 -\n", false },
                { "missing field", "irq 73 0-3 5\n", false },
                { "extra field", "irq 73 x 0-3 5 - x\n", false },
                { "irq identity with a tab", "irq 73 a\tb 0-3 5 -\n", false },
                { "empty irq set", "irq 73 0-3  -\n", false },
                { "bad cpulist", "irq 73 0-3 5-2 -\n", false },
                { "irq number not a number", "irq 7x3 0-3 5 -\n", false },
                { "nic escaping sysfs", "rps .. 3 0 1 -\n", false },
                { "nic with slash", "rps a/b 3 0 1 -\n", false },
                { "nic too long", "rps abcdefghijklmnopq 3 0 1 -\n", false },
                { "bad mask", "rps eth0 3 0 xyz -\n", false },
                { "flow count overflow", "flowcnt eth0 3 0 99999999999 -\n", false },
                { "thread pid 0", "thread 0 1240 987654 0-1 1 -\n", false },
                { "tab separated", "irq\t73 0-3 5 -\n", false },
                { "two spaces", "irq  73 0-3 5 -\n", false },
                { "torn last line", "irq 73 0-3 5 -", false },
                { "NUL inside", "irq 7\0003 0-3 5 -\n", false },
        };
        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct undo u = { 0 };
                size_t len = strlen(cases[i].line);
                /* neither an object nor an unreadable line */
                bool comment = cases[i].line[0] == '#' || strstr(cases[i].what, "(no object)");

                if (strcmp(cases[i].what, "NUL inside") == 0)
                        len = 16;
                assert_int_equal(undo_parse(&u, cases[i].line, len), 0);
                if ((u.n_entries == 1) != cases[i].valid)
                        fail_msg("%s: %zu entries, want %d", cases[i].what, u.n_entries, cases[i].valid);
                if (u.corrupt != (unsigned) (!cases[i].valid && !comment))
                        fail_msg("%s: %u corrupt, want %d", cases[i].what, u.corrupt, !cases[i].valid && !comment);
                if (cases[i].valid) {
                        /* Round trip through the formatter. */
                        char *buf = NULL;
                        size_t blen;
                        assert_int_equal(undo_format(&u, &buf, &blen), 0);
                        /* after the header and the root line */
                        assert_non_null(strstr(buf, "\nroot "));
                        assert_string_equal(strchr(strstr(buf, "\nroot ") + 1, '\n') + 1, cases[i].line);
                        free(buf);
                }
                for (size_t k = 0; k < u.n_entries; k++) {
                        free(u.entries[k].original);
                        free(u.entries[k].last);
                        free(u.entries[k].pending);
                }
                free(u.entries);
        }
}

/* A whole damaged journal: the good lines are still restored. */
static void test_corrupt_journal(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(mkdir(e->state, 0700), 0);
        test_write_file(e->root, "proc/irq/30/smp_affinity_list", "2\n");
        test_write_file(e->root, "sys/class/net/eth0/queues/rx-0/rps_cpus", "6\n");
        write_journal(e,
                 "irq 30 - 0-3 2 -\n"
                 "\x01\x02garbage\xff\n"
                 "irq 30 - 1 2 -\n" /* the same key again: the first line holds the original */
                 "rps eth0 0 0 6 -\n"
                 "rps eth0 1 0 3 -"); /* torn */

        /* A new run adopts the journal instead of overwriting it. */
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        assert_int_equal(apply_undo(ap)->n_entries, 2);
        assert_int_equal(apply_undo(ap)->corrupt, 3);
        apply_free(ap);

        assert_int_equal(undo_recover(e->rootfd, e->state, &rep), 0);
        assert_int_equal(rep.corrupt, 3);
        assert_int_equal(rep.restored, 2);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "0-3\n", "good line restored");
        assert_file(e->root, "sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n", "line after garbage restored");
        assert_file(e->root, "sys/class/net/eth0/queues/rx-1/rps_cpus", "3\n", "torn line not used");
        assert_file(e->state, UNDO_JOURNAL_NAME, NULL, "journal removed");
}

static void test_dry_run(void **state) {
        struct env *e = &cur_env;
        struct apply *ap = NULL;
        struct undo_report rep;
        char cmd[1024], pristine[320];
        static const struct act steps[] = {
                IRQ(30, "1"), IRQ(31, "2"), RPS("eth0", 0, "3"), XPS("eth0", 0, "1"), FLOW("eth0", 0, 1024),
                SOCK(32768),
        };
        (void) state;

        env_setup(e, "apply");
        snprintf(pristine, sizeof(pristine), "%s/pristine", e->base);
        snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", e->root, pristine);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(apply_new(e->rootfd, false, e->state, true, &ap), 0);
        /* Already at target: unchanged even in a dry run. */
        _cleanup_(action_done) struct action same = mk(&(struct act) IRQ(30, "0-3"));
        assert_int_equal(apply_action(ap, &same), APPLY_UNCHANGED);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                _cleanup_(action_done) struct action a = mk(&steps[i]);
                assert_int_equal(apply_action(ap, &a), APPLY_DRY_RUN);
        }
        /* The overlay holds one entry per object, with the value "written". */
        const struct apply_overlay_entry *ov;
        size_t n_ov = apply_overlay(ap, &ov);
        assert_int_equal(n_ov, ELEMENTSOF(steps));
        assert_int_equal(ov[0].key.kind, KNOB_IRQ);
        assert_int_equal(ov[0].key.irq, 30);
        assert_string_equal(ov[0].value, "1");
        /* What a dry-run action "wrote" is the current value from then on:
         * the same again is unchanged, and going back to the kernel's value
         * is a change that leaves the overlay. */
        _cleanup_(action_done) struct action again = mk(&(struct act) IRQ(30, "1"));
        assert_int_equal(apply_action(ap, &again), APPLY_UNCHANGED);
        assert_int_equal(apply_action(ap, &same), APPLY_DRY_RUN);
        assert_int_equal(apply_overlay(ap, &ov), ELEMENTSOF(steps) - 1);
        for (size_t i = 0; i < ELEMENTSOF(steps) - 1; i++)
                assert_false(ov[i].key.kind == KNOB_IRQ && ov[i].key.irq == 30);
        assert_int_equal(apply_restore_all(ap, &rep), 0);
        apply_free(ap);
        snprintf(cmd, sizeof(cmd), "diff -r '%s' '%s' >/dev/null", pristine, e->root);
        assert_int_equal(system(cmd), 0);
        /* Not even the state directory was created. */
        assert_int_equal(access(e->state, F_OK), -1);
}

/* Nothing changes unless its original is safely on disk. */
static void test_journal_unwritable(void **state) {
        struct env *e = &cur_env;
        struct apply *ap = NULL;
        char blocker[256];
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        /* The state directory turns into a regular file: mkdir says EEXIST,
         * the temporary file ENOTDIR, even for root. */
        snprintf(blocker, sizeof(blocker), "rm -rf '%s' && echo x > '%s'", e->state, e->state);
        assert_int_equal(system(blocker), 0);
        _cleanup_(action_done) struct action a = mk(&(struct act) IRQ(30, "2"));
        assert_int_equal(apply_action(ap, &a), -ENOTDIR);
        assert_true(apply_failed_in_journal(ap));
        assert_int_equal(apply_journal_error(ap), -ENOTDIR);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "0-3\n", "no write without a journal");
        assert_int_equal(apply_undo(ap)->n_entries, 0);
        apply_free(ap);
}

/* A journal save that the file system refuses (ENOSPC on a full state
 * directory, here EFBIG through RLIMIT_FSIZE) is told apart from a failure
 * of the object, so that no errno of the state directory is taken for the
 * kernel's (ENOSPC: a CPU's vector space). */
static void test_journal_save_fails(void **state) {
        struct env *e = &cur_env;
        struct rlimit old, none = { 0, 0 };
        struct apply *ap = NULL;
        int r;
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        none.rlim_max = old.rlim_max;
        signal(SIGXFSZ, SIG_IGN);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
        _cleanup_(action_done) struct action a = mk(&(struct act) IRQ(30, "2"));
        r = apply_action(ap, &a);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        signal(SIGXFSZ, SIG_DFL);
        assert_int_equal(r, -EFBIG);
        assert_true(apply_failed_in_journal(ap));
        assert_int_equal(apply_journal_error(ap), -EFBIG);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "0-3\n", "no write without a journal");
        assert_int_equal(apply_undo(ap)->n_entries, 0);

        /* a later failure of an object is the object's */
        _cleanup_(action_done) struct action gone = mk(&(struct act) IRQ(99, "2"));
        assert_int_equal(apply_action(ap, &gone), -ENOENT);
        assert_false(apply_failed_in_journal(ap));

        /* room again: the write goes through, and the journal is healthy */
        assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        assert_false(apply_failed_in_journal(ap));
        assert_int_equal(apply_journal_error(ap), 0);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "2\n", "written once saved");
        apply_free(ap);
}

/* A kill during a full save leaves ".undo.journal.PID.tmp" behind: the
 * next start removes those, and only those. */
static void test_stale_temporaries(void **state) {
        static const struct {
                const char *name;
                bool removed;
        } files[] = {
                { ".undo.journal.123.tmp", true },
                { ".undo.journal.4194304.tmp", true },
                { ".undo.journal..tmp", false },       /* no PID */
                { ".undo.journal.12a.tmp", false },    /* not a PID */
                { ".undo.journal.123.tmpx", false },
                { ".undo.journal.123", false },
                { "undo.journal.123.tmp", false },     /* no dot */
                { ".status.json.123.tmp", false },
                { "keep", false },
        };
        struct env *e = &cur_env;
        struct apply *ap = NULL;
        char path[512], cmd[1024];
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(mkdir(e->state, 0755), 0);
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                test_write_file(e->state, files[i].name, "x\n");
        /* a link with the pattern's name is not ours to remove, nor is its target */
        snprintf(cmd, sizeof(cmd), "ln -s '%s/keep' '%s/.undo.journal.77.tmp' && mkdir '%s/.undo.journal.78.tmp'",
                 e->state, e->state, e->state);
        assert_int_equal(system(cmd), 0);

        /* a dry run writes nothing, removes nothing */
        assert_int_equal(apply_new(e->rootfd, false, e->state, true, &ap), 0);
        apply_free(ap);
        assert_file(e->state, files[0].name, "x\n", "dry run keeps it");

        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                assert_file(e->state, files[i].name, files[i].removed ? NULL : "x\n", files[i].name);
        snprintf(path, sizeof(path), "%s/.undo.journal.77.tmp", e->state);
        assert_int_equal(access(path, F_OK), 0);
        snprintf(path, sizeof(path), "%s/.undo.journal.78.tmp", e->state);
        assert_int_equal(access(path, F_OK), 0);
        apply_free(ap);
}

/* The journal knows whose values it holds: another root's journal is
 * refused as a whole (never restored, never appended to), and an IRQ
 * number that serves another device at restore time is left alone. */
static void test_journal_identity(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        char other[300], cmd[1024], *before, *after;
        int otherfd;
        (void) state;

        env_setup(e, "apply");
        snprintf(cmd, sizeof(cmd), "mkdir '%s/proc/irq/30/eth0-TxRx-0' '%s/proc/irq/31/eth0-TxRx-1'", e->root,
                 e->root);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        _cleanup_(action_done) struct action a30 = mk(&(struct act) IRQ(30, "2"));
        _cleanup_(action_done) struct action a31 = mk(&(struct act) IRQ(31, "1"));
        assert_int_equal(apply_action(ap, &a30), APPLY_DONE);
        assert_int_equal(apply_action(ap, &a31), APPLY_DONE);
        assert_journal(e, "irq 30 eth0-TxRx-0 0-3 0-3 2\nirq 31 eth0-TxRx-1 0-3 0-3 1\n", "IRQs with their identity");
        apply_free(ap); /* crash */

        /* the same tree copied elsewhere is another root */
        snprintf(other, sizeof(other), "%s/other", e->base);
        snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", e->root, other);
        assert_int_equal(system(cmd), 0);
        otherfd = rootfs_open(other);
        assert_true(otherfd >= 0);
        before = slurp(e->state, UNDO_JOURNAL_NAME);
        assert_int_equal(undo_recover(otherfd, e->state, &rep), -EXDEV);
        assert_non_null(strstr(rep.refused, "written for another root"));
        assert_int_equal(rep.restored, 0);
        assert_file(other, "proc/irq/30/smp_affinity_list", "2\n", "other root untouched");
        after = slurp(e->state, UNDO_JOURNAL_NAME);
        assert_non_null(after);
        assert_string_equal(after, before);
        free(after);
        /* and never appended to; a dry run may read it */
        assert_int_equal(apply_new(otherfd, false, e->state, false, &ap), -EXDEV);
        assert_int_equal(apply_new(otherfd, false, e->state, true, &ap), 0);
        apply_free(ap);
        close(otherfd);

        /* IRQ 31's number now serves another device: not restored */
        snprintf(cmd, sizeof(cmd), "mv '%s/proc/irq/31/eth0-TxRx-1' '%s/proc/irq/31/nvme0q1'", e->root, e->root);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(undo_recover(e->rootfd, e->state, &rep), 0);
        assert_string_equal(rep.refused, "");
        assert_int_equal(rep.restored, 1);
        assert_int_equal(rep.gone, 1);
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "0-3\n", "IRQ 30 restored");
        assert_file(e->root, "proc/irq/31/smp_affinity", "2\n", "IRQ 31 (another device now) left alone");
        assert_file(e->state, UNDO_JOURNAL_NAME, NULL, "journal removed");
        free(before);
}

/* A journal without a root line (version 1) and the host's journal of
 * another boot are refused; undo_set_aside() keeps them for the operator. */
static void test_journal_refusals(void **state) {
        struct env *e = &cur_env;
        struct undo_identity id;
        struct undo_report rep;
        struct undo *u = NULL;
        char path[256];
        (void) state;

        env_setup(e, "apply");
        assert_int_equal(mkdir(e->state, 0700), 0);
        test_write_file(e->root, "proc/irq/30/smp_affinity_list", "2\n");
        test_write_file(e->state, UNDO_JOURNAL_NAME, "# irqsteer undo journal v1\nirq 30 0-3 2 -\n");
        assert_int_equal(undo_recover(e->rootfd, e->state, &rep), -EPROTO);
        assert_non_null(strstr(rep.refused, "does not say which root"));
        assert_file(e->root, "proc/irq/30/smp_affinity_list", "2\n", "version 1 journal not restored");

        /* the host's journal from another boot: the kernel reset its values */
        assert_int_equal(undo_identity_get(e->rootfd, &id), 0);
        snprintf(id.boot_id, sizeof(id.boot_id), "boot-b");
        {
                char text[256];

                snprintf(text, sizeof(text), "# irqsteer undo journal v2\nroot %llu %llu boot-a\nirq 30 - 0-3 2 -\n",
                         id.dev, id.ino);
                test_write_file(e->state, UNDO_JOURNAL_NAME, text);
        }
        id.host = true;
        assert_int_equal(undo_new(e->state, &id, true, &u), 0);
        assert_int_equal(u->refused, UNDO_REFUSED_BOOT);
        undo_free(u);
        /* a tree's values do not reset at boot */
        id.host = false;
        assert_int_equal(undo_new(e->state, &id, true, &u), 0);
        assert_int_equal(u->refused, UNDO_OK);
        undo_free(u);
        /* no identity asked (listing): nothing refused */
        assert_int_equal(undo_new(e->state, NULL, true, &u), 0);
        assert_int_equal(u->refused, UNDO_OK);
        assert_int_equal(u->n_entries, 1);
        undo_free(u);

        assert_int_equal(undo_set_aside(e->state), 0);
        assert_file(e->state, UNDO_JOURNAL_NAME, NULL, "set aside");
        snprintf(path, sizeof(path), "%s.refused", UNDO_JOURNAL_NAME);
        {
                char *kept = slurp(e->state, path);

                assert_non_null(kept);
                assert_non_null(strstr(kept, "root "));
                assert_non_null(strstr(kept, " boot-a\nirq 30 - 0-3 2 -\n"));
                free(kept);
        }
        assert_int_equal(undo_set_aside(e->state), 0); /* none left: nothing to do */
}

/* Drops CAP_DAC_OVERRIDE from the effective set (root ignores file modes
 * otherwise); returns whether it must be raised again. */
static bool drop_dac(bool drop) {
        cap_value_t v[] = { CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH };
        cap_t caps;
        bool ok;

        if (geteuid() != 0)
                return false;
        caps = cap_get_proc();
        assert_non_null(caps);
        assert_int_equal(cap_set_flag(caps, CAP_EFFECTIVE, 2, v, drop ? CAP_CLEAR : CAP_SET), 0);
        ok = cap_set_proc(caps) == 0;
        cap_free(caps);
        return ok;
}

static void test_readonly(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        char path[256];
        bool dropped;
        int r;
        (void) state;

        env_setup(e, "apply");
        snprintf(path, sizeof(path), "%s/sys/class/net/eth0/queues/rx-0/rps_cpus", e->root);
        assert_int_equal(chmod(path, 0444), 0);
        assert_int_equal(apply_new(e->rootfd, false, e->state, false, &ap), 0);
        _cleanup_(action_done) struct action a = mk(&(struct act) RPS("eth0", 0, "1"));
        dropped = drop_dac(true);
        r = apply_action(ap, &a);
        if (dropped)
                assert_true(drop_dac(false));
        assert_int_equal(r, -EACCES);
        assert_int_equal(action_failure_class(KNOB_RPS, r), ACTION_FAIL_PERMANENT);
        assert_file(e->root, "sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n", "read-only file unchanged");
        /* The journalled object still holds its original: nothing to write. */
        assert_int_equal(apply_restore_all(ap, &rep), 0);
        assert_int_equal(rep.unchanged, 1);
        assert_int_equal(rep.restored, 0);
        assert_file(e->state, UNDO_JOURNAL_NAME, NULL, "journal removed");
        apply_free(ap);
}

/* Journalled threads that exit (or whose TID is reused) are forgotten at
 * the next discovery, not only by a restore: a process forking short-lived
 * threads named like a worker grew the journal without bound. */
static void test_forget_gone_threads(void **state) {
        static const pid_t tids[] = { 5000101, 5000102, 5000103 };
        struct env *e = &cur_env;
        struct apply *ap = NULL;
        struct undo *u = NULL;
        char cmd[256];
        (void) state;

        fakes_reset();
        env_setup(e, "apply");
        assert_int_equal(apply_new(e->rootfd, true, e->state, false, &ap), 0);
        for (size_t i = 0; i < ELEMENTSOF(tids); i++) {
                struct act x = THR(5000100, tids[i], 777001 + i, "1");
                _cleanup_(action_done) struct action a = mk(&x);

                assert_int_equal(apply_action(ap, &a), APPLY_DONE);
        }
        assert_int_equal(apply_undo(ap)->n_entries, 3);
        assert_int_equal(apply_forget_gone_threads(ap), 0);  /* all alive */

        /* one exits; another's TID now belongs to a new task */
        snprintf(cmd, sizeof(cmd), "rm -r '%s/proc/5000100/task/5000102'", e->root);
        assert_int_equal(system(cmd), 0);
        test_write_file(e->root, "proc/5000100/task/5000103/stat",
                        "5000103 (fakeworker) S 1 1 1 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 1 0 999999 0 0\n");
        assert_int_equal(apply_forget_gone_threads(ap), 2);
        assert_int_equal(apply_undo(ap)->n_entries, 1);
        assert_int_equal(apply_undo(ap)->entries[0].key.tid, 5000101);
        /* and the file says so */
        assert_int_equal(undo_new(e->state, NULL, true, &u), 0);
        assert_int_equal(u->n_entries, 1);
        assert_int_equal(u->entries[0].key.tid, 5000101);
        undo_free(u);
        apply_free(ap);
}

static void test_threads_wrapped(void **state) {
        struct env *e = &cur_env;
        struct undo_report rep;
        struct apply *ap = NULL;
        char buf[64];
        (void) state;

        fakes_reset();
        env_setup(e, "apply");
        /* root_is_host on a fixture tree: starttimes from the fixture,
         * sched_*affinity from the wraps. */
        assert_int_equal(apply_new(e->rootfd, true, e->state, false, &ap), 0);

        static const struct {
                const char *what;
                struct act a;
                int set_errno;
                const char *clamp;
                int want_r;
                const char *want_mask;
                unsigned want_calls;
        } cases[] = {
                { "pin a thread", THR(5000100, 5000101, 777001, "1"), 0, NULL, APPLY_DONE, "1", 1 },
                { "repin keeps the first original", THR(5000100, 5000101, 777001, "2-3"), 0, NULL, APPLY_DONE, "2-3", 2 },
                { "already there: no call", THR(5000100, 5000101, 777001, "2-3"), 0, NULL, APPLY_UNCHANGED, "2-3", 2 },
                { "thread exited", THR(5000100, 5000102, 777002, "1"), ESRCH, NULL, -ESRCH, "0-3", 1 },
                { "kernel thread refuses", THR(5000100, 5000103, 777003, "1"), EINVAL, NULL, -EINVAL, "0-3", 1 },
                { "cpuset cgroup narrows it", THR(5000100, 5000103, 777003, "0-2"), 0, "1-3", APPLY_READBACK_DIFFERS, "1-2", 2 },
                { "TID not under that PID", THR(5000100, 4242, 1, "1"), 0, NULL, -ESRCH, NULL, 0 },
                { "empty set", THR(5000100, 5000101, 777001, ""), 0, NULL, -EINVAL, "2-3", 2 },
                /* discovered with starttime 111: the task holding the TID now
                 * (777001) is another one, never pinned */
                { "TID reused since discovery", THR(5000100, 5000101, 111, "0"), 0, NULL, -ESRCH, "2-3", 2 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fake_task *t = fake_find(cases[i].a.tid);
                _cleanup_(action_done) struct action a = mk(&cases[i].a);
                int r;

                if (t) {
                        t->set_errno = cases[i].set_errno;
                        cpuset_zero(&t->clamp);
                        if (cases[i].clamp)
                                assert_int_equal(cpuset_parse_list(cases[i].clamp, &t->clamp), 0);
                }
                r = apply_action(ap, &a);
                if (r != cases[i].want_r)
                        fail_msg("%s: apply_action gave %d, want %d", cases[i].what, r, cases[i].want_r);
                if (t) {
                        assert_int_equal(cpuset_format_list(&t->mask, buf, sizeof(buf)), 0);
                        if (strcmp(buf, cases[i].want_mask) != 0)
                                fail_msg("%s: mask %s, want %s", cases[i].what, buf, cases[i].want_mask);
                        if (t->set_calls != cases[i].want_calls)
                                fail_msg("%s: %u set calls, want %u", cases[i].what, t->set_calls,
                                         cases[i].want_calls);
                        t->set_errno = 0;
                }
        }
        assert_int_equal(action_failure_class(KNOB_THREAD, -ESRCH), ACTION_FAIL_GONE);
        /* The narrowed read-back is what the journal now expects. */
        assert_journal(e,
                    "thread 5000100 5000101 777001 0-3 0-3 1\n"
                    "thread 5000100 5000101 777001 0-3 1 2-3\n"
                    "thread 5000100 5000102 777002 0-3 0-3 1\n"
                    "thread 5000100 5000103 777003 0-3 0-3 1\n"
                    "thread 5000100 5000103 777003 0-3 0-3 0-2\n"
                    "thread 5000100 5000103 777003 0-3 1-2 -\n",
                    "thread journal");

        /* Restore; the second TID was reused meanwhile (new starttime). */
        test_write_file(e->root, "proc/5000100/task/5000102/stat",
                 "5000102 (fakeworker) S 1 1 1 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 1 0 999999 0 0\n");
        fake_find(5000103)->clamp = (cpuset_t){ 0 };
        assert_int_equal(apply_restore_all(ap, &rep), 0);
        assert_int_equal(rep.restored, 2);
        assert_int_equal(rep.gone, 1);
        assert_int_equal(cpuset_format_list(&fake_find(5000101)->mask, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0-3");
        assert_int_equal(cpuset_format_list(&fake_find(5000103)->mask, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0-3");
        assert_int_equal(fake_find(5000102)->set_calls, 1); /* not touched again */

        /* The write itself checks the starttime: a key made for the task
         * that held the TID before is not written to its successor. */
        {
                struct knob_key k = { .kind = KNOB_THREAD, .pid = 5000100, .tid = 5000102, .starttime = 777002 };
                unsigned calls = fake_find(5000102)->set_calls;

                assert_int_equal(knob_write(e->rootfd, true, &k, "2"), -ESRCH);
                assert_int_equal(fake_find(5000102)->set_calls, calls);
                k.starttime = 999999;
                assert_int_equal(knob_write(e->rootfd, true, &k, "2"), 0);
                assert_int_equal(fake_find(5000102)->set_calls, calls + 1);
        }
        apply_free(ap);
        n_fakes = 0;
}

static void test_effective(void **state) {
        struct env *e = &cur_env;
        static const struct {
                const char *what;
                unsigned irq;
                const char *want;
                int r;
        } cases[] = {
                { "fires on a wanted CPU", 30, "1", 1 },
                { "fires within a wider set", 30, "0-2", 1 },
                { "fires elsewhere", 30, "2", 0 },
                { "no effective_affinity_list", 31, "1", -ENOENT },
        };
        (void) state;
        env_setup(e, "apply");
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cpuset_t want;
                assert_int_equal(cpuset_parse_list(cases[i].want, &want), 0);
                cpuset_t eff = cpuset_single(5);
                int r = apply_irq_effective_ok(e->rootfd, cases[i].irq, &want, &eff);
                if (r != cases[i].r)
                        fail_msg("%s: %d, want %d", cases[i].what, r, cases[i].r);
                /* the fixture's IRQ 30 fires on CPU 1 */
                if (r >= 0 && !cpuset_equal(&eff, &(cpuset_t) { .w = { 2 } }))
                        fail_msg("%s: effective CPUs not returned", cases[i].what);
                if (r < 0 && cpuset_only(&eff) != 5)
                        fail_msg("%s: effective CPUs written on error", cases[i].what);
        }
        assert_false(rootfs_is_host(e->rootfd));
}

/* ---- live tests on this host ---- */

struct live_irq {
        unsigned irq;
        char original[256];
        char state[64];
        bool active;
};
static struct live_irq live;

static int host_read(const char *path, char *buf, size_t len) {
        int fd = rootfs_open("/");
        int r;

        if (fd < 0)
                return fd;
        r = rootfs_read_line(fd, path, buf, len);
        close(fd);
        return r;
}

/* The IRQ whose /proc/interrupts name ends in "-input.0" (virtio-net rx 0). */
static int find_input_irq(unsigned *ret) {
        char line[1024];
        FILE *f = fopen("/proc/interrupts", "re");
        int found = -ENOENT;

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                char *s = line, *end;
                unsigned long irq;
                size_t l = strlen(line);

                while (l > 0 && (line[l - 1] == '\n' || line[l - 1] == ' '))
                        line[--l] = 0;
                while (*s == ' ')
                        s++;
                irq = strtoul(s, &end, 10);
                if (end == s || *end != ':')
                        continue;
                if (l >= 8 && strcmp(line + l - 8, "-input.0") == 0) {
                        *ret = irq;
                        found = 0;
                        break;
                }
        }
        fclose(f);
        return found;
}

static int teardown_live_irq(void **state) {
        (void) state;
        if (live.active) {
                int fd = rootfs_open("/");
                char path[64], now[256];
                struct undo_report rep;

                if (fd >= 0) {
                        (void) undo_recover(fd, live.state, &rep);
                        snprintf(path, sizeof(path), "proc/irq/%u/smp_affinity_list", live.irq);
                        /* Belt and braces: the test may have failed mid-way. */
                        if (host_read(path, now, sizeof(now)) == 0 && strcmp(now, live.original) != 0)
                                (void) rootfs_write(fd, path, live.original);
                        close(fd);
                }
                live.active = false;
        }
        if (live.state[0]) {
                char cmd[128];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", live.state);
                (void) system(cmd);
                live.state[0] = 0;
        }
        return 0;
}

/* The daemon's effective-affinity watch: a sequence of ticks per case,
 * each (check result, fired) -> the event expected. */
static void test_effective_step(void **state) {
        struct tick {
                int ok;
                bool fired;
                enum apply_eff_event want;
        };
        static const struct {
                const char *what;
                struct tick t[8];
                size_t n;
        } cases[] = {
                { "fires where set at once", { { 1, true, APPLY_EFF_SETTLED } }, 1 },
                { "no effective_affinity_list: nothing to check",
                  { { -ENOENT, true, APPLY_EFF_UNKNOWN } }, 1 },
                { "lags one tick, then settles",
                  { { 0, true, APPLY_EFF_WAIT }, { 1, true, APPLY_EFF_SETTLED } }, 2 },
                { "quiet IRQ never reported",
                  { { 0, false, APPLY_EFF_WAIT }, { 0, false, APPLY_EFF_WAIT }, { 0, false, APPLY_EFF_WAIT },
                    { 0, false, APPLY_EFF_WAIT }, { 0, false, APPLY_EFF_WAIT }, { 0, false, APPLY_EFF_WAIT } }, 6 },
                { "grace edge: reported on the 3rd tick with interrupts, not before",
                  { { 0, true, APPLY_EFF_WAIT }, { 0, false, APPLY_EFF_WAIT }, { 0, true, APPLY_EFF_WAIT },
                    { 0, true, APPLY_EFF_MISMATCH } }, 4 },
                { "reported once, then silent",
                  { { 0, true, APPLY_EFF_WAIT }, { 0, true, APPLY_EFF_WAIT }, { 0, true, APPLY_EFF_MISMATCH },
                    { 0, true, APPLY_EFF_WAIT }, { 0, true, APPLY_EFF_WAIT } }, 5 },
                { "reported, then fires where set: recovered",
                  { { 0, true, APPLY_EFF_WAIT }, { 0, true, APPLY_EFF_WAIT }, { 0, true, APPLY_EFF_MISMATCH },
                    { 1, true, APPLY_EFF_RECOVERED } }, 4 },
                { "file vanished while reported", { { 0, true, APPLY_EFF_WAIT }, { 0, true, APPLY_EFF_WAIT },
                  { 0, true, APPLY_EFF_MISMATCH }, { -ENOENT, true, APPLY_EFF_UNKNOWN } }, 4 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct apply_eff_watch w = { .irq = 30 };

                for (size_t k = 0; k < cases[i].n; k++) {
                        const struct tick *t = &cases[i].t[k];
                        enum apply_eff_event got = apply_effective_step(&w, t->ok, t->fired, APPLY_EFFECTIVE_GRACE);

                        if (got != t->want)
                                fail_msg("%s: tick %zu: event %d, want %d", cases[i].what, k + 1, got, t->want);
                        /* reported means shown in status until it settles */
                        if (got == APPLY_EFF_MISMATCH)
                                assert_true(w.mismatch);
                        if (got == APPLY_EFF_SETTLED || got == APPLY_EFF_RECOVERED)
                                assert_false(w.mismatch);
                }
        }
}

static void test_live_irq(void **state) {
        char path[64], eff[256], now[256];
        struct undo_report rep;
        struct apply *ap = NULL;
        cpuset_t effs, target;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int rootfd, r, to = -1;
        (void) state;

        SKIP_UNLESS_HOST_LOCKED();
        if (ncpu < 2) {
                print_message("[  SKIP    ] %s: needs 2 online CPUs\n", __func__);
                skip();
        }
        if (find_input_irq(&live.irq) < 0) {
                print_message("[  SKIP    ] %s: no IRQ named *-input.0 in /proc/interrupts\n", __func__);
                skip();
        }
        snprintf(path, sizeof(path), "proc/irq/%u/smp_affinity_list", live.irq);
        assert_int_equal(host_read(path, live.original, sizeof(live.original)), 0);
        snprintf(path, sizeof(path), "proc/irq/%u/effective_affinity_list", live.irq);
        assert_int_equal(host_read(path, eff, sizeof(eff)), 0);
        assert_int_equal(cpuset_parse_list(eff, &effs), 0);
        /* The other CPU: an online one it does not fire on now, and not
         * its whole mask already (a quiet IRQ's effective CPU can lag
         * behind a single-CPU mask, and writing the same mask is a no-op). */
        for (int c = 0; c < ncpu; c++) {
                char online[32], p[64], single[16];
                snprintf(p, sizeof(p), "sys/devices/system/cpu/cpu%d/online", c);
                snprintf(single, sizeof(single), "%d", c);
                if (!cpuset_isset(&effs, c) && strcmp(live.original, single) != 0 &&
                    (host_read(p, online, sizeof(online)) < 0 || strcmp(online, "1") == 0)) {
                        to = c;
                        break;
                }
        }
        if (to < 0) /* fires where its single-CPU mask says: take another */
                for (int c = 0; c < ncpu && to < 0; c++) {
                        char single[16];
                        snprintf(single, sizeof(single), "%d", c);
                        if (strcmp(live.original, single) != 0)
                                to = c;
                }
        assert_true(to >= 0);
        snprintf(live.state, sizeof(live.state), "/tmp/isap-live-XXXXXX");
        assert_non_null(mkdtemp(live.state));

        rootfd = rootfs_open("/");
        assert_true(rootfd >= 0);
        assert_true(rootfs_is_host(rootfd));
        assert_int_equal(apply_new(rootfd, true, live.state, false, &ap), 0);
        _cleanup_(action_done) struct action a = { .type = KNOB_IRQ, .irq = live.irq, .queue = -1 };
        assert_int_equal(action_set_cpus(&a, SET(cpuset_single(to)), NULL), 0);
        live.active = true;
        r = apply_action(ap, &a);
        apply_free(ap); /* as after kill -9 */
        assert_int_equal(r, APPLY_DONE);
        snprintf(path, sizeof(path), "proc/irq/%u/smp_affinity_list", live.irq);
        assert_int_equal(host_read(path, now, sizeof(now)), 0);
        assert_int_equal(cpuset_parse_list(now, &target), 0);
        assert_true(cpuset_equal(&target, KEPT(&a.cpus)));
        print_message("live: IRQ %u %s -> %s (was firing on %s)\n", live.irq, live.original, now, eff);

        assert_int_equal(undo_recover(rootfd, live.state, &rep), 0);
        close(rootfd);
        assert_int_equal(rep.restored, 1);
        assert_int_equal(host_read(path, now, sizeof(now)), 0);
        assert_string_equal(now, live.original);
        live.active = false;
}

/* Names that usually carry kernel-managed affinity (virtio-blk, NVMe). */
static bool likely_managed(const char *name) {
        return strstr(name, "-req.") || strstr(name, "nvme") || strstr(name, "-request") ||
               strstr(name, "queues");
}

/* The value written for an affinity is its cpulist, whatever its length:
 * the longest has every third CPU missing ("0-1,3-4,...", 26568
 * characters). */
static void test_target_longest_cpulist(void **state) {
        struct action a = { .type = KNOB_IRQ, .irq = 30, .queue = -1 };
        _cleanup_(freep) char *v = NULL;
        cpuset_t back, cpus;

        (void) state;
        cpuset_zero(&cpus);
        for (int c = 0; c < CPUSET_MAX; c++)
                if (c % 3 != 2)
                        cpuset_set(&cpus, c);
        assert_int_equal(action_set_cpus(&a, &cpus, NULL), 0);
        assert_int_equal(action_target(&a, "0-3", &v), 0);
        assert_int_equal(strlen(v), 26568);
        assert_int_equal(cpuset_parse_list(v, &back), 0);
        assert_true(cpuset_equal(&back, &cpus));
        action_done(&a);
}

static void test_live_managed_irq(void **state) {
        struct undo_report rep;
        struct apply *ap = NULL;
        char line[1024], names[2][64][16], dir[64];
        size_t n[2] = { 0, 0 };
        unsigned managed = 0;
        int rootfd, r = 0;
        FILE *f;
        (void) state;

        SKIP_UNLESS_HOST_LOCKED();
        f = fopen("/proc/interrupts", "re");
        assert_non_null(f);
        /* Likely candidates first, to rewrite as few real IRQs as possible. */
        while (fgets(line, sizeof(line), f)) {
                char *s = line, *end;
                unsigned long irq;
                int k;

                while (*s == ' ')
                        s++;
                irq = strtoul(s, &end, 10);
                if (end == s || *end != ':')
                        continue;
                k = likely_managed(line) ? 0 : 1;
                if (n[k] < 64)
                        snprintf(names[k][n[k]++], 16, "%lu", irq);
        }
        fclose(f);
        rootfd = rootfs_open("/");
        assert_true(rootfd >= 0);
        for (int k = 0; k < 2 && !managed; k++)
                for (size_t i = 0; i < n[k] && !managed; i++) {
                        char path[64], cur[256];

                        snprintf(path, sizeof(path), "proc/irq/%s/smp_affinity_list", names[k][i]);
                        if (host_read(path, cur, sizeof(cur)) < 0)
                                continue;
                        /* Its own value back: a no-op for a movable IRQ. */
                        r = rootfs_write(rootfd, path, cur);
                        if (r == -EIO || r == -EPERM)
                                managed = (unsigned) strtoul(names[k][i], NULL, 10);
                }
        if (!managed) {
                close(rootfd);
                print_message("[  SKIP    ] %s: no managed IRQ on this host\n", __func__);
                skip();
        }
        assert_int_equal(action_failure_class(KNOB_IRQ, r), ACTION_FAIL_PERMANENT);
        print_message("live: IRQ %u is managed (%s)\n", managed, strerror(-r));

        /* Through apply: refused, classified, nothing left to restore. */
        snprintf(dir, sizeof(dir), "/tmp/isap-mg-XXXXXX");
        assert_non_null(mkdtemp(dir));
        assert_int_equal(apply_new(rootfd, true, dir, false, &ap), 0);
        _cleanup_(action_done) struct action a = { .type = KNOB_IRQ, .irq = managed, .queue = -1 };
        assert_int_equal(action_set_cpus(&a, SET(cpuset_single(0)), NULL), 0);
        r = apply_action(ap, &a);
        if (r == APPLY_UNCHANGED) {
                assert_int_equal(action_set_cpus(&a, SET(cpuset_single(1)), NULL), 0);
                r = apply_action(ap, &a);
        }
        assert_true(r == -EIO || r == -EPERM);
        assert_int_equal(action_failure_class(KNOB_IRQ, r), ACTION_FAIL_PERMANENT);
        assert_int_equal(apply_restore_all(ap, &rep), 0);
        assert_int_equal(rep.restored, 0);
        assert_int_equal(rep.unchanged, 1);
        apply_free(ap);
        close(rootfd);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_errclass),
                cmocka_unit_test(test_writers),
                cmocka_unit_test_teardown(test_journal_and_restore, teardown_env),
                cmocka_unit_test_teardown(test_default_affinity, teardown_env),
                cmocka_unit_test_teardown(test_threaded_napi, teardown_env),
                cmocka_unit_test_teardown(test_crash_recover, teardown_env),
                cmocka_unit_test_teardown(test_pending, teardown_env),
                cmocka_unit_test(test_journal_lines),
                cmocka_unit_test_teardown(test_corrupt_journal, teardown_env),
                cmocka_unit_test_teardown(test_journal_compaction, teardown_env),
                cmocka_unit_test_teardown(test_journal_rename_nic, teardown_env),
                cmocka_unit_test_teardown(test_dry_run, teardown_env),
                cmocka_unit_test_teardown(test_journal_unwritable, teardown_env),
                cmocka_unit_test_teardown(test_stale_temporaries, teardown_env),
                cmocka_unit_test_teardown(test_journal_save_fails, teardown_env),
                cmocka_unit_test_teardown(test_journal_identity, teardown_env),
                cmocka_unit_test_teardown(test_journal_refusals, teardown_env),
                cmocka_unit_test_teardown(test_readonly, teardown_env),
                cmocka_unit_test_teardown(test_threads_wrapped, teardown_env),
                cmocka_unit_test_teardown(test_forget_gone_threads, teardown_env),
                cmocka_unit_test_teardown(test_effective, teardown_env),
                cmocka_unit_test(test_effective_step),
                cmocka_unit_test_teardown(test_live_irq, teardown_live_irq),
                cmocka_unit_test(test_live_managed_irq),
                cmocka_unit_test(test_target_longest_cpulist),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
