/* Logging: the journal fields of each action type (sd_journal_sendv
 * wrapped at link time, -Wl,--wrap=sd_journal_sendv), the stderr sink and
 * its "<N>" prefix, the rate limit, and the daemon's once-only failure
 * logging, cut texts marked, a failing policy said once.  Time is passed
 * in; nothing here reads a clock. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#include "action.h"
#include "apply.h"
#include "daemon.h"
#include "engine.h"
#include "log.h"
#include "policy.h"
#include "testlib.h"
#include "util.h"

/* ---- the sd_journal_sendv seam ---- */

#define CAPTURE_MAX 16
#define FIELDS_MAX 16

struct entry {
        size_t n;
        char field[FIELDS_MAX][2100];  /* MESSAGE up to log_internal's 2 KB */
};

static struct entry captured[CAPTURE_MAX];
static size_t n_captured;
static bool capture_on;
static int journal_ret;         /* what the fake journal returns */

int __real_sd_journal_sendv(const struct iovec *iov, int n);
int __wrap_sd_journal_sendv(const struct iovec *iov, int n);

int __wrap_sd_journal_sendv(const struct iovec *iov, int n) {
        struct entry *e;

        if (!capture_on)
                return __real_sd_journal_sendv(iov, n);
        assert_true(n_captured < CAPTURE_MAX);
        e = &captured[n_captured++];
        assert_true(n <= FIELDS_MAX);
        e->n = (size_t) n;
        for (int i = 0; i < n; i++) {
                assert_true(iov[i].iov_len < sizeof(e->field[i]));
                memcpy(e->field[i], iov[i].iov_base, iov[i].iov_len);
                e->field[i][iov[i].iov_len] = 0;
        }
        return journal_ret;
}

static void capture_start(int max_level) {
        n_captured = 0;
        journal_ret = 0;
        capture_on = true;
        log_setup(LOG_TARGET_JOURNAL, max_level);
}

static const char *entry_field(const struct entry *e, const char *name) {
        size_t l = strlen(name);

        for (size_t i = 0; i < e->n; i++)
                if (strncmp(e->field[i], name, l) == 0 && e->field[i][l] == '=')
                        return e->field[i] + l + 1;
        return NULL;
}

/* ---- stderr capture: fd 2 on a temporary file ---- */

static int saved_stderr = -1;
static char stderr_path[] = "/tmp/irqsteer-test-log.XXXXXX";

static void stderr_capture_begin(void) {
        int fd = mkstemp(stderr_path);

        assert_true(fd >= 0);
        fflush(stderr);
        saved_stderr = dup(STDERR_FILENO);
        assert_true(saved_stderr >= 0);
        assert_true(dup2(fd, STDERR_FILENO) >= 0);
        close(fd);
}

/* Restores fd 2 and returns what was written to it (static buffer). */
static const char *stderr_capture_end(void) {
        static char buf[4096];
        ssize_t n;
        int fd;

        fflush(stderr);
        assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
        close(saved_stderr);
        fd = open(stderr_path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = read(fd, buf, sizeof(buf) - 1);
        assert_true(n >= 0);
        buf[n] = 0;
        close(fd);
        unlink(stderr_path);
        strcpy(stderr_path, "/tmp/irqsteer-test-log.XXXXXX");
        return buf;
}

/* Names from outside (a comm, a ban file's name) are C-escaped: none
 * forges a log line or sends an escape sequence to a terminal. */
static void test_escape(void **state) {
        static const struct {
                const char *what, *in;
                bool controls_only;
                size_t size;
                const char *want;
        } cases[] = {
                { "plain", "nginx", false, 64, "nginx" },
                { "newline", "a\nb", false, 64, "a\\nb" },
                { "escape sequence", "\x1b[2J", false, 64, "\\x1b[2J" },
                { "backslash", "a\\nb", false, 64, "a\\\\nb" },
                { "tab, CR, DEL", "\t\r\x7f", false, 64, "\\t\\r\\x7f" },
                { "non-ASCII", "caf\xc3\xa9", false, 64, "caf\\xc3\\xa9" },
                { "controls only: backslash and UTF-8 kept", "a\\b \xc3\xa9\n", true, 64, "a\\b \xc3\xa9\\n" },
                { "cut marked", "\n\n\n\n\n\n", false, 8, "\\n\\n..." },
                { "empty", "", false, 1, "" },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[64];
                const char *got = util_cescape(cases[i].in, strlen(cases[i].in), cases[i].controls_only, buf,
                                               cases[i].size);

                if (strcmp(got, cases[i].want) != 0)
                        fail_msg("%s: '%s', want '%s'", cases[i].what, got, cases[i].want);
                assert_true(util_needs_cescape(cases[i].in, strlen(cases[i].in), cases[i].controls_only) ==
                            (strcmp(cases[i].in, cases[i].want) != 0));
        }

        /* a whole log line, on stderr and in the journal */
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
        log_set_timestamps(false);
        unsetenv("JOURNAL_STREAM");
        stderr_capture_begin();
        log_notice("thread 7 of %s was re-pinned", "x\nnotice: forged\x1b[31m");
        assert_string_equal(stderr_capture_end(),
                            "notice: thread 7 of x\\nnotice: forged\\x1b[31m was re-pinned\n");
        capture_start(LOG_INFO);
        log_notice("ban %s", "a\nb");
        capture_on = false;
        assert_int_equal(n_captured, 1);
        assert_string_equal(entry_field(&captured[0], "MESSAGE"), "ban a\\nb");
}

/* ---- actions ---- */

static struct action mk(enum knob_kind t, unsigned irq, const char *nic, int queue, const char *from,
                        const char *to, enum action_reason why, const char *reason) {
        struct action a = { .type = t, .irq = irq, .queue = queue, .why = why };

        snprintf(a.nic, sizeof(a.nic), "%s", nic);
        cpuset_t f, c;

        cpuset_zero(&f);
        cpuset_zero(&c);
        if (from)
                assert_int_equal(cpuset_parse_list(from, &f), 0);
        if (to)
                assert_int_equal(cpuset_parse_list(to, &c), 0);
        assert_int_equal(action_set_cpus(&a, &c, &f), 0);
        snprintf(a.reason, sizeof(a.reason), "%s", reason);
        return a;
}

static void test_action_journal_fields(void **state) {
        struct action thread = mk(KNOB_THREAD, 0, "", -1, "0-1", "1", ACTION_REASON_WORKER_SPREAD, "worker policy spread");
        struct action flow = mk(KNOB_FLOWCNT, 0, "eth1", 2, NULL, NULL, ACTION_REASON_RFS, "RFS on");
        struct action sock = mk(KNOB_SOCKFLOW, 0, "", -1, NULL, NULL, ACTION_REASON_RFS, "RFS on");
        struct {
                const char *what;
                struct action a;
                int result;
                const char *message_prefix;  /* before action_format()'s line */
                /* every field beyond MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, in order */
                const char *fields[10];
        } cases[] = {
                { .what = "IRQ move of a NIC queue",
                  .a = mk(KNOB_IRQ, 73, "eth0", 5, "3", "9", ACTION_REASON_CPU_HOT, "CPU3 softirq 97% for 3 samples"),
                  .fields = { "ACTION=irq-affinity", "IRQ=73", "CPU_FROM=3", "CPU_TO=9", "DEVICE=eth0",
                              "QUEUE=5", "REASON=cpu_hot", "REASON_TEXT=CPU3 softirq 97% for 3 samples" } },
                { .what = "IRQ of no NIC: no DEVICE= or QUEUE=",
                  .a = mk(KNOB_IRQ, 24, "", -1, "0-1", "1", ACTION_REASON_INITIAL_LAYOUT, "initial layout"),
                  .fields = { "ACTION=irq-affinity", "IRQ=24", "CPU_FROM=0-1", "CPU_TO=1",
                              "REASON=initial_layout", "REASON_TEXT=initial layout" } },
                { .what = "RPS mask",
                  .a = mk(KNOB_RPS, 0, "veth0", 0, "", "0-1,3", ACTION_REASON_LONE_HOT_QUEUE, "lone hot queue"),
                  .fields = { "ACTION=rps", "CPU_FROM=", "CPU_TO=0-1,3", "DEVICE=veth0", "QUEUE=0",
                              "REASON=lone_hot_queue", "REASON_TEXT=lone hot queue" } },
                { .what = "XPS mask",
                  .a = mk(KNOB_XPS, 0, "eth0", 3, "0", "2", ACTION_REASON_XPS_FOLLOWS_RX, "tx follows rx"),
                  .fields = { "ACTION=xps", "CPU_FROM=0", "CPU_TO=2", "DEVICE=eth0", "QUEUE=3",
                              "REASON=xps_follows_rx", "REASON_TEXT=tx follows rx" } },
                { .what = "rps_flow_cnt: a count, no CPU fields",
                  .a = flow,
                  .fields = { "ACTION=rps-flow-cnt", "DEVICE=eth1", "QUEUE=2", "REASON=rfs", "REASON_TEXT=RFS on" } },
                { .what = "rps_sock_flow_entries: only the type and the reason",
                  .a = sock,
                  .fields = { "ACTION=rps-sock-flow-entries", "REASON=rfs", "REASON_TEXT=RFS on" } },
                { .what = "thread affinity",
                  .a = thread,
                  .fields = { "ACTION=thread-affinity", "CPU_FROM=0-1", "CPU_TO=1",
                              "REASON=worker_spread", "REASON_TEXT=worker policy spread" } },
                { .what = "dry run says so in MESSAGE, same fields",
                  .a = mk(KNOB_IRQ, 73, "eth0", 5, "3", "9", ACTION_REASON_CPU_HOT, "hot"),
                  .result = APPLY_DRY_RUN, .message_prefix = "dry-run: would set ",
                  .fields = { "ACTION=irq-affinity", "IRQ=73", "CPU_FROM=3", "CPU_TO=9", "DEVICE=eth0",
                              "QUEUE=5", "REASON=cpu_hot", "REASON_TEXT=hot" } },
        };

        cases[4].a.value = 4096;
        cases[5].a.value = 32768;
        cases[6].a.pid = 100;
        cases[6].a.tid = 101;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char line[384], message[512];
                const struct entry *e;
                size_t nf = 0;

                print_message("case: %s\n", cases[i].what);
                assert_int_equal(action_format(&cases[i].a, line, sizeof(line)), 0);
                capture_start(LOG_INFO);
                engine_log_action(&cases[i].a, line, cases[i].result);
                capture_on = false;
                assert_int_equal(n_captured, 1);
                e = &captured[0];
                snprintf(message, sizeof(message), "MESSAGE=%s%s",
                         cases[i].message_prefix ? cases[i].message_prefix : "", line);
                assert_string_equal(e->field[0], message);
                assert_string_equal(e->field[1], "PRIORITY=6");
                assert_string_equal(e->field[2], "SYSLOG_IDENTIFIER=irqsteerd");
                while (nf < ELEMENTSOF(cases[i].fields) && cases[i].fields[nf])
                        nf++;
                assert_int_equal(e->n, 3 + nf);
                for (size_t f = 0; f < nf; f++)
                        assert_string_equal(e->field[3 + f], cases[i].fields[f]);
        }
        /* thread, flow and sock are in cases too */
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                action_done(&cases[i].a);
}

/* The notes about objects changed behind our back and the "fires elsewhere"
 * notice: MESSAGE_ID= a real 128-bit ID, and the object's IRQ=, DEVICE=,
 * QUEUE=, so `journalctl IRQ=73` finds them with the actions. */
static bool is_id128(const char *s) {
        if (!s || strlen(s) != 32)
                return false;
        for (const char *p = s; *p; p++)
                if (!strchr("0123456789abcdef", *p))
                        return false;
        return true;
}

static void test_note_journal_fields(void **state) {
        struct policy_note irq = { .level = LOG_NOTICE, .kind = POLICY_NOTE_EXTERNAL, .irq = 73, .device = "eth0",
                                   .queue = 5, .text = "IRQ 73 was changed by someone else (CPU9 -> CPU0)" };
        struct policy_note rps = { .level = LOG_NOTICE, .kind = POLICY_NOTE_EXTERNAL, .device = "eth1", .queue = 2,
                                   .text = "RPS of eth1 rx-2 was changed by someone else" };
        struct policy_note plain = { .level = LOG_INFO, .kind = POLICY_NOTE_PLAIN, .queue = -1, .text = "RPS kept" };
        const struct entry *e;

        (void) state;
        assert_true(is_id128(ENGINE_MID_EXTERNAL));
        assert_true(is_id128(EFFWATCH_MID_MISMATCH));
        assert_true(is_id128(ENGINE_MID_LINK));
        assert_string_not_equal(ENGINE_MID_EXTERNAL, EFFWATCH_MID_MISMATCH);
        assert_string_not_equal(ENGINE_MID_EXTERNAL, ENGINE_MID_LINK);
        assert_string_not_equal(EFFWATCH_MID_MISMATCH, ENGINE_MID_LINK);

        capture_start(LOG_INFO);
        engine_log_note(&irq, "irqbalance (pid 812) is running");
        engine_log_note(&rps, NULL);
        engine_log_note(&plain, NULL);
        effwatch_log_mismatch(73, "eth0-TxRx-5", "eth0", 5, "9", "0", 3);
        effwatch_log_mismatch(24, "acpi", NULL, -1, "1", "0", 3);
        capture_on = false;
        assert_int_equal(n_captured, 5);

        e = &captured[0];
        assert_string_equal(e->field[0],
                            "MESSAGE=IRQ 73 was changed by someone else (CPU9 -> CPU0); irqbalance (pid 812) is running");
        assert_string_equal(entry_field(e, "PRIORITY"), "5");
        assert_string_equal(entry_field(e, "MESSAGE_ID"), ENGINE_MID_EXTERNAL);
        assert_string_equal(entry_field(e, "IRQ"), "73");
        assert_string_equal(entry_field(e, "DEVICE"), "eth0");
        assert_string_equal(entry_field(e, "QUEUE"), "5");

        e = &captured[1];
        assert_string_equal(entry_field(e, "MESSAGE_ID"), ENGINE_MID_EXTERNAL);
        assert_null(entry_field(e, "IRQ"));
        assert_string_equal(entry_field(e, "DEVICE"), "eth1");
        assert_string_equal(entry_field(e, "QUEUE"), "2");

        e = &captured[2];
        assert_null(entry_field(e, "MESSAGE_ID"));
        assert_null(entry_field(e, "IRQ"));
        assert_null(entry_field(e, "DEVICE"));
        assert_null(entry_field(e, "QUEUE"));

        e = &captured[3];
        assert_string_equal(e->field[0], "MESSAGE=IRQ 73 (eth0-TxRx-5) set to CPU 9 but fires on CPU 0 "
                                         "(effective_affinity_list) after 3 ticks with interrupts; the kernel or "
                                         "hardware keeps it there");
        assert_string_equal(entry_field(e, "PRIORITY"), "5");
        assert_string_equal(entry_field(e, "MESSAGE_ID"), EFFWATCH_MID_MISMATCH);
        assert_string_equal(entry_field(e, "IRQ"), "73");
        assert_string_equal(entry_field(e, "DEVICE"), "eth0");
        assert_string_equal(entry_field(e, "QUEUE"), "5");

        e = &captured[4];
        assert_string_equal(entry_field(e, "IRQ"), "24");
        assert_null(entry_field(e, "DEVICE"));
        assert_null(entry_field(e, "QUEUE"));
}

/* Not through sd-journal: one line on stderr, with a "<N>" priority prefix
 * only when stderr is the journal's stream, plain "level: " text otherwise
 * (a pipe, a file, a terminal). */
static void test_stderr_sink(void **state) {
        static const struct {
                const char *what;
                enum log_target target;
                int journal_stream;      /* 0 unset, 1 matching fd 2, 2 some other file */
                int journal_ret;
                bool to_journal;
                bool prefix;             /* "<N>" on stderr */
        } cases[] = {
                { "explicit stderr", LOG_TARGET_STDERR, 0, 0, false, false },
                { "explicit stderr, stderr is the journal's stream", LOG_TARGET_STDERR, 1, 0, false, true },
                { "auto without JOURNAL_STREAM", LOG_TARGET_AUTO, 0, 0, false, false },
                { "auto, JOURNAL_STREAM names another file", LOG_TARGET_AUTO, 2, 0, false, false },
                { "auto, JOURNAL_STREAM names stderr", LOG_TARGET_AUTO, 1, 0, true, false },
                { "journal refusing falls back to stderr", LOG_TARGET_JOURNAL, 0, -ECONNREFUSED, false, false },
                { "journal refusing, stderr is the stream", LOG_TARGET_JOURNAL, 1, -ECONNREFUSED, false, true },
        };
        _cleanup_(action_done) struct action a = mk(KNOB_IRQ, 73, "eth0", 5, "3", "9", ACTION_REASON_CPU_HOT, "hot");
        char line[384], want[512];

        assert_int_equal(action_format(&a, line, sizeof(line)), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *out;
                struct stat st;
                char env[64];

                print_message("case: %s\n", cases[i].what);
                stderr_capture_begin();
                unsetenv("JOURNAL_STREAM");
                if (cases[i].journal_stream) {
                        assert_int_equal(fstat(cases[i].journal_stream == 1 ? STDERR_FILENO : STDIN_FILENO, &st),
                                         0);
                        if (cases[i].journal_stream == 2)
                                st.st_ino++;  /* never stderr's */
                        snprintf(env, sizeof(env), "%lu:%lu", (unsigned long) st.st_dev,
                                 (unsigned long) st.st_ino);
                        setenv("JOURNAL_STREAM", env, 1);
                }
                n_captured = 0;
                capture_on = true;
                journal_ret = cases[i].journal_ret;
                log_setup(cases[i].target, LOG_INFO);
                unsetenv("JOURNAL_STREAM");
                engine_log_action(&a, line, APPLY_DONE);
                log_internal(LOG_WARNING, EBUSY, NULL, "second %s", "line");
                log_debug("not shown at info");
                capture_on = false;
                unsetenv("JOURNAL_STREAM");
                out = stderr_capture_end();
                if (cases[i].to_journal) {
                        assert_int_equal(n_captured, 2);
                        assert_string_equal(captured[1].field[0], "MESSAGE=second line");
                        assert_string_equal(entry_field(&captured[1], "PRIORITY"), "4");
                        assert_string_equal(entry_field(&captured[1], "ERRNO"), "16");
                        assert_string_equal(out, "");
                } else {
                        assert_int_equal(n_captured, cases[i].journal_ret ? 2 : 0);
                        if (cases[i].prefix)
                                snprintf(want, sizeof(want), "<6>%s\n<4>second line\n", line);
                        else
                                snprintf(want, sizeof(want), "info: %s\nwarning: second line\n", line);
                        assert_string_equal(out, want);
                }
        }
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
}

/* Foreground lines off the journal carry the local time; the journal's
 * stream gets only "<N>" (journald stamps lines itself). */
static void test_stderr_prefix(void **state) {
        struct timespec ts = { .tv_sec = 1700000000, .tv_nsec = 123456789 };
        struct tm tm;
        char buf[64], want[64], small[8];
        size_t n;

        assert_non_null(localtime_r(&ts.tv_sec, &tm));
        strftime(want, sizeof(want), "%Y-%m-%d %H:%M:%S.123 warning: ", &tm);
        assert_int_equal(log_format_prefix(buf, sizeof(buf), LOG_WARNING, false, &ts), strlen(want));
        assert_string_equal(buf, want);
        assert_int_equal(log_format_prefix(buf, sizeof(buf), LOG_WARNING, true, &ts), 3);
        assert_string_equal(buf, "<4>");
        assert_int_equal(log_format_prefix(buf, sizeof(buf), LOG_ERR, false, NULL), 7);
        assert_string_equal(buf, "error: ");
        /* cut, never overrun */
        n = log_format_prefix(small, sizeof(small), LOG_INFO, false, &ts);
        assert_int_equal(n, strlen(small));
        assert_true(strlen(small) < sizeof(small));

        /* and the daemon's sink uses it */
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
        log_set_timestamps(true);
        stderr_capture_begin();
        log_info("stamped");
        {
                const char *out = stderr_capture_end();
                int y, mo, d, h, mi, s, ms, end = 0;

                log_set_timestamps(false);
                assert_int_equal(sscanf(out, "%4d-%2d-%2d %2d:%2d:%2d.%3d info: stamped%n", &y, &mo, &d, &h, &mi, &s,
                                        &ms, &end),
                                 7);
                assert_string_equal(out + end, "\n");
        }
}

/* ---- rate limit ---- */

static void test_ratelimit(void **state) {
#define S UINT64_C(1000000)
        static const struct {
                const char *what;
                uint64_t interval;
                unsigned burst;
                uint64_t now[8];
                size_t n;
                const char *want;        /* one char a call: y logged, n suppressed */
                unsigned suppressed;
        } cases[] = {
                { "burst then silence within the window", 10 * S, 2, { 1 * S, 2 * S, 3 * S, 4 * S }, 4, "yynn", 2 },
                { "a new window after interval", 10 * S, 2, { 1 * S, 2 * S, 3 * S, 11 * S, 12 * S, 13 * S }, 6,
                  "yynyyn", 2 },
                { "exactly interval later opens a window", 10 * S, 1, { 5 * S, 15 * S - 1, 15 * S }, 3, "yny", 1 },
                { "time zero is a time like any other", 10 * S, 1, { 0, 0, 1 * S, 10 * S }, 4, "ynny", 2 },
                { "clock going back opens a window", 10 * S, 1, { 50 * S, 51 * S, 40 * S, 41 * S }, 4, "ynyn", 2 },
                { "burst 0: no limit", 10 * S, 0, { 1, 1, 1, 1 }, 4, "yyyy", 0 },
                { "interval 0: no limit", 0, 1, { 1, 1, 1, 1 }, 4, "yyyy", 0 },
                { "near UINT64_MAX does not wrap", 10 * S, 1, { UINT64_MAX - 5 * S, UINT64_MAX - 1, UINT64_MAX }, 3,
                  "ynn", 2 },
        };
#undef S

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct log_ratelimit rl = { .interval_usec = cases[i].interval, .burst = cases[i].burst };
                char got[9] = "";

                for (size_t k = 0; k < cases[i].n; k++)
                        got[k] = log_ratelimit_ok(&rl, cases[i].now[k]) ? 'y' : 'n';
                print_message("case: %s: %s\n", cases[i].what, got);
                assert_string_equal(got, cases[i].want);
                assert_int_equal(rl.suppressed, cases[i].suppressed);
        }
}

/* ---- once-only failures and rate-limited repeats ---- */

static void test_action_failure_once(void **state) {
#define S UINT64_C(1000000)
        _cleanup_(action_done) struct action irq = mk(KNOB_IRQ, 73, "eth0", 5, "3", "9", ACTION_REASON_CPU_HOT, "hot");
        _cleanup_(action_done) struct action rps = mk(KNOB_RPS, 0, "eth0", 2, "", "0-1", ACTION_REASON_LONE_HOT_QUEUE, "lone hot queue");
        _cleanup_(action_done) struct action sock = mk(KNOB_SOCKFLOW, 0, "", -1, NULL, NULL, ACTION_REASON_RFS, "RFS on");
        _cleanup_(action_done) struct action thr = mk(KNOB_THREAD, 0, "", -1, "0-3", "1", ACTION_REASON_WORKER_SPREAD, "spread");
        static const struct {
                const char *what;
                int object;              /* 0 irq, 1 rps, 2 rps_sock_flow_entries, 3 thread */
                int r;                   /* < 0 failure; 0 success (forget) */
                uint64_t now;
                int priority;            /* of the message expected; -1 none */
                const char *message;     /* substring of MESSAGE */
        } steps[] = {
                /* the one message for a kernel-managed IRQ (the policy adds none) */
                { "managed IRQ: said once at info", 0, -EIO, 1 * S, LOG_INFO, "managed by the kernel" },
                { "the same again: debug repeat", 0, -EIO, 2 * S, LOG_DEBUG, "still failing (permanent)" },
                { "again: repeat burst (2) used up", 0, -EIO, 3 * S, LOG_DEBUG, "still failing" },
                { "again: rate limited, silent", 0, -EIO, 4 * S, -1, NULL },
                { "other object, same class: its own first", 1, -EACCES, 5 * S, LOG_WARNING, "cannot be changed" },
                { "rps again: limiter shared by repeats, silent", 1, -EACCES, 6 * S, -1, NULL },
                { "IRQ changes class: said again, with the CPU's count", 0, -ENOSPC, 7 * S, LOG_NOTICE,
                  "no free vector on CPU9, where 200 IRQs are delivered" },
                { "a minute later the repeat limit opens", 0, -ENOSPC, 70 * S, LOG_DEBUG, "still failing (capacity)" },
                { "IRQ succeeds: forgotten", 0, 0, 71 * S, -1, NULL },
                { "the same failure is news again", 0, -ENOSPC, 72 * S, LOG_NOTICE, "no free vector" },
                { "vanished object at info", 1, -ENOENT, 73 * S, LOG_INFO, "object vanished" },
                { "busy at debug, once", 1, -EBUSY, 74 * S, LOG_DEBUG, "busy" },
                { "rps_sock_flow_entries absent: a namespace", 2, -ENOENT, 75 * S, LOG_INFO, "not visible here" },
                { "rps_sock_flow_entries refused: RFS off", 2, -EACCES, 76 * S, LOG_NOTICE, "RFS stays off" },
                { "kernel thread refuses", 3, -EINVAL, 77 * S, LOG_NOTICE, "refuses affinity changes" },
                { "IRQ file read-only: not the kernel's", 0, -EACCES, 78 * S, LOG_WARNING, "cannot be changed" },
        };
#undef S
        struct failures fs = { .rl = { .interval_usec = 60 * UINT64_C(1000000), .burst = 2 } };
        unsigned used[16] = { [9] = 200 }, limit[16] = { [9] = 200 };
        const struct vectors vec = { .max_cpu = 15, .used = used, .limit = limit };

        capture_start(LOG_DEBUG);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                const struct action *objects[] = { &irq, &rps, &sock, &thr };
                const struct action *a = objects[steps[i].object];
                char line[384], prio[16];

                print_message("step: %s\n", steps[i].what);
                assert_int_equal(action_format(a, line, sizeof(line)), 0);
                n_captured = 0;
                if (steps[i].r < 0)
                        failures_log(&fs, a, line, steps[i].r, steps[i].now, &vec);
                else
                        failures_forget(&fs, a);
                if (steps[i].priority < 0) {
                        assert_int_equal(n_captured, 0);
                        continue;
                }
                assert_int_equal(n_captured, 1);
                snprintf(prio, sizeof(prio), "%d", steps[i].priority);
                assert_string_equal(entry_field(&captured[0], "PRIORITY"), prio);
                assert_non_null(strstr(entry_field(&captured[0], "MESSAGE"), steps[i].message));
                assert_non_null(strstr(entry_field(&captured[0], "MESSAGE"), line));
                assert_non_null(entry_field(&captured[0], "ERRNO"));
        }
        capture_on = false;
        failures_free(&fs);
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
}

/* "Failed to read the NIC inventory, skipping this tick" repeats within
 * the limit, then falls silent, then says how many it left out. */
static void test_tick_failure_ratelimited(void **state) {
#define S UINT64_C(1000000)
        static const struct {
                uint64_t now;
                const char *message;     /* NULL: suppressed */
        } steps[] = {
                { 1 * S, "Failed to read the NIC inventory, skipping this tick: No such file or directory" },
                { 2 * S, "Failed to read the NIC inventory, skipping this tick: No such file or directory" },
                { 3 * S, NULL },
                { 4 * S, NULL },
                { 5 * S, NULL },
                { 11 * S, "Failed to read the NIC inventory, skipping this tick: No such file or directory "
                          "(3 similar messages suppressed)" },
                { 12 * S, "Failed to read the NIC inventory, skipping this tick: No such file or directory" },
                { 13 * S, NULL },
        };
#undef S
        struct log_ratelimit rl = { .interval_usec = 10 * UINT64_C(1000000), .burst = 2 };

        capture_start(LOG_INFO);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                n_captured = 0;
                engine_log_tick_failure(&rl, -ENOENT, "read the NIC inventory", steps[i].now);
                if (!steps[i].message) {
                        assert_int_equal(n_captured, 0);
                        continue;
                }
                assert_int_equal(n_captured, 1);
                assert_string_equal(entry_field(&captured[0], "MESSAGE"), steps[i].message);
                assert_string_equal(entry_field(&captured[0], "PRIORITY"), "4");
        }
        capture_on = false;
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
}

/* Nothing is cut without a sign: CPU lists too long for the journal
 * fields end in "(N CPUs)", an action line keeps its reason, and a message
 * over the 2 KB of log_internal ends in "...". */
static void test_cuts_marked(void **state) {
        _cleanup_(action_done) struct action a = mk(KNOB_RPS, 0, "eth0", 0, NULL, NULL, ACTION_REASON_LONE_HOT_QUEUE, "lone hot queue");
        char line[384], big[3000];
        const char *from, *to, *msg;
        cpuset_t odd, even;
        (void) state;

        /* 128 odd and 128 even CPUs: about 450 characters each as lists */
        cpuset_zero(&odd);
        cpuset_zero(&even);
        for (int c = 0; c < 256; c++)
                assert_int_equal(cpuset_set(c % 2 ? &odd : &even, c), 0);
        assert_int_equal(action_set_cpus(&a, &even, &odd), 0);
        assert_int_equal(action_format(&a, line, sizeof(line)), 0);
        assert_non_null(strstr(line, "(128 CPUs)"));
        assert_non_null(strstr(line, ": lone hot queue"));
        capture_start(LOG_INFO);
        engine_log_action(&a, line, 0);
        capture_on = false;
        assert_int_equal(n_captured, 1);
        from = entry_field(&captured[0], "CPU_FROM");
        to = entry_field(&captured[0], "CPU_TO");
        assert_non_null(from);
        assert_non_null(to);
        assert_true(strncmp(from, "1,3,5,", 6) == 0 && strstr(from, ",... (128 CPUs)"));
        assert_true(strncmp(to, "0,2,4,", 6) == 0 && strstr(to, ",... (128 CPUs)"));

        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        capture_start(LOG_INFO);
        log_info("%s", big);
        capture_on = false;
        assert_int_equal(n_captured, 1);
        msg = entry_field(&captured[0], "MESSAGE");
        assert_non_null(msg);
        assert_int_equal(strlen(msg), 2047);
        assert_string_equal(msg + 2044, "...");
}

/* A failing policy is said once per condition, not every tick. */
static void test_policy_failure_once(void **state) {
        static const struct {
                int r;
                const char *message;     /* NULL: nothing at info and above */
        } steps[] = {
                { 0, NULL },
                { -EINVAL, "Policy failed: Invalid argument; nothing is changed until it works again (said once)" },
                { -EINVAL, NULL },
                { -EINVAL, NULL },
                { -ENOMEM, "Policy failed: Cannot allocate memory; nothing is changed until it works again (said once)" },
                { -ENOMEM, NULL },
                { 0, "The policy works again" },
                { 0, NULL },
                { -EINVAL, "Policy failed: Invalid argument; nothing is changed until it works again (said once)" },
        };
        int last = 0;
        (void) state;

        capture_start(LOG_INFO);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                n_captured = 0;
                engine_log_policy_result(&last, steps[i].r);
                if (!steps[i].message) {
                        assert_int_equal(n_captured, 0);
                        continue;
                }
                assert_int_equal(n_captured, 1);
                assert_string_equal(entry_field(&captured[0], "MESSAGE"), steps[i].message);
        }
        capture_on = false;
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_action_journal_fields),
                cmocka_unit_test(test_note_journal_fields),
                cmocka_unit_test(test_cuts_marked),
                cmocka_unit_test(test_policy_failure_once),
                cmocka_unit_test(test_stderr_sink),
                cmocka_unit_test(test_stderr_prefix),
                cmocka_unit_test(test_ratelimit),
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_action_failure_once),
                cmocka_unit_test(test_tick_failure_ratelimited),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
