/* The report module's Prometheus exposition: reason
 * codes, the text format (HELP/TYPE once per family, samples grouped,
 * counters named _total), counters that only grow across ticks, and the
 * atomic write; and status.json's configuration dump, every key of the
 * parser's tables in it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>

#include "action.h"
#include "apply.h"
#include "config.h"
#include "json.h"
#include "policy.h"
#include "metrics.h"
#include "problem.h"
#include "report.h"
#include "testlib.h"
#include "util.h"

/* The metrics' reason labels are the action codes: each named, once, in
 * snake_case, and the labels dashboards knew before the codes all still
 * there. */
static void test_reason_codes(void **state) {
        static const char *const known[] = {
                "initial_layout", "cpu_offline", "cpu_hot", "cpu_saturated", "cpu_banned", "xps_follows_rx",
                "single_queue_rps", "lone_hot_queue", "softirq_hot", "rps_widened", "rps_narrowed", "rps_not_needed",
                "rps_trial_failed", "back_to_original", "rfs", "worker_spread", "worker_colocate", "worker_avoid_net",
                "other",
        };

        for (int r = 0; r < ACTION_REASON_MAX; r++) {
                const char *n = action_reason_to_string(r);

                assert_non_null(n);
                assert_int_equal(strspn(n, "abcdefghijklmnopqrstuvwxyz_"), strlen(n));
                for (int o = 0; o < r; o++)
                        assert_string_not_equal(n, action_reason_to_string(o));
        }
        assert_null(action_reason_to_string(ACTION_REASON_MAX));
        assert_null(action_reason_to_string(ACTION_REASON_INVALID));
        for (size_t i = 0; i < ELEMENTSOF(known); i++) {
                int r = 0;

                while (r < ACTION_REASON_MAX && strcmp(action_reason_to_string(r), known[i]) != 0)
                        r++;
                if (r == ACTION_REASON_MAX)
                        fail_msg("reason label %s is gone", known[i]);
        }
}

/* A snapshot of 4 CPUs: cpu1 offline, cpu3 new (not valid), cpu2 hot and
 * saturated. */
struct fixture {
        struct config config;
        struct sample_cpu cpus[4];
        struct sample_rates load;
        struct policy_hot_cpu hot[1];
        struct policy_report policy;
        struct report_snapshot snap;
        struct report rp;
};

static void fixture_init(struct fixture *x, const char *state_dir) {
        memset(x, 0, sizeof(*x));
        assert_int_equal(config_defaults(&x->config), 0);
        x->cpus[0] = (struct sample_cpu){ .valid = true, .irq = 0.01, .softirq = 0.25, .idle = 0.5,
                                          .net_rx_rate = 1500, .net_tx_rate = 20 };
        x->cpus[1] = (struct sample_cpu){ .offline = true };
        x->cpus[2] = (struct sample_cpu){ .valid = true, .irq = 0.125, .softirq = 0.5, .idle = 0.0625,
                                          .net_rx_rate = 250000, .net_tx_rate = 0 };
        x->cpus[3] = (struct sample_cpu){ .valid = false };
        x->load = (struct sample_rates){ .interval_s = 1, .max_cpu = 3, .cpus = x->cpus };
        x->hot[0] = (struct policy_hot_cpu){ .cpu = 2, .load = 0.625, .idle = 0.0625, .saturated = true };
        cpuset_zero(&x->policy.hot);
        cpuset_set(&x->policy.hot, 2);
        x->policy.hot_cpus = x->hot;
        x->policy.n_hot_cpus = 1;
        x->policy.n_queue_irqs = 8;
        x->policy.n_rps_queues = 1;
        x->snap = (struct report_snapshot){
                .pid = 1234,
                .started_usec = UINT64_C(1700000000000000),
                .status = "hot: cpu2 (62%)",
                .root = "/",
                .state_dir = state_dir,
                .ticks = 5,
                .policy = &x->policy,
                .irq_readings = 3,
                .config = &x->config,
                .load = &x->load,
        };
}

static void fixture_free(struct fixture *x) {
        report_free(&x->rp);
        config_free(&x->config);
}

static char *metrics(struct fixture *x) {
        char *text = NULL;
        size_t len = 0;

        assert_int_equal(metrics_text(&x->rp, &x->snap, &text, &len), 0);
        assert_non_null(text);
        assert_int_equal(strlen(text), len);
        return text;
}

static bool has_line(const char *text, const char *line) {
        size_t n = strlen(line);

        for (const char *p = text; (p = strstr(p, line)); p++)
                if ((p == text || p[-1] == '\n') && p[n] == '\n')
                        return true;
        return false;
}

/* The metric name of a sample line ("name{...} v" or "name v"). */
static void sample_name(const char *line, char *buf, size_t len) {
        size_t n = strcspn(line, "{ ");

        assert_true(n < len);
        memcpy(buf, line, n);
        buf[n] = 0;
}

/* The 0.0.4 text format as Prometheus parses it: every sample's family has
 * one HELP and one TYPE before its samples, the family's samples are
 * together, names are irqsteer_*, counters end in _total, values parse. */
static void check_format(const char *text) {
        char families[64][96], type[16], cur[96] = "", *copy = strdup(text), *save = NULL;
        size_t n_families = 0;

        assert_non_null(copy);
        assert_true(text[0] && text[strlen(text) - 1] == '\n');
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char name[96];

                if (strncmp(line, "# HELP ", 7) == 0) {
                        sample_name(line + 7, name, sizeof(name));
                        for (size_t i = 0; i < n_families; i++)
                                if (strcmp(families[i], name) == 0)
                                        fail_msg("%s: HELP twice or family split", name);
                        assert_true(n_families < ELEMENTSOF(families));
                        snprintf(families[n_families++], sizeof(families[0]), "%s", name);
                        snprintf(cur, sizeof(cur), "%s", name);
                        type[0] = 0;
                        continue;
                }
                if (strncmp(line, "# TYPE ", 7) == 0) {
                        char t[96];

                        assert_int_equal(sscanf(line + 7, "%95s %15s", t, type), 2);
                        if (strcmp(t, cur) != 0)
                                fail_msg("TYPE %s not after its HELP", t);
                        if (strcmp(type, "counter") != 0 && strcmp(type, "gauge") != 0 &&
                            strcmp(type, "histogram") != 0)
                                fail_msg("%s: type %s", t, type);
                        if ((strcmp(type, "counter") == 0) != (strlen(t) > 6 && strcmp(t + strlen(t) - 6, "_total") == 0))
                                fail_msg("%s: a counter is named _total, and only a counter", t);
                        continue;
                }
                assert_true(line[0] != '#');
                sample_name(line, name, sizeof(name));
                /* a histogram's samples are NAME_bucket, NAME_sum, NAME_count */
                if (strcmp(type, "histogram") == 0) {
                        size_t l = strlen(cur);

                        if (strncmp(name, cur, l) == 0 &&
                            (!strcmp(name + l, "_bucket") || !strcmp(name + l, "_sum") || !strcmp(name + l, "_count")))
                                name[l] = 0;
                }
                if (strcmp(name, cur) != 0 || !type[0])
                        fail_msg("sample \"%s\" outside its family's block (current %s)", line, cur);
                if (strncmp(name, "irqsteer_", 9) != 0)
                        fail_msg("%s: no irqsteer_ prefix", name);
                {
                        const char *v = strrchr(line, ' ');
                        char *end;

                        assert_non_null(v);
                        errno = 0;
                        (void) strtod(v + 1, &end);
                        if (*end || errno)
                                fail_msg("\"%s\": value does not parse", line);
                }
        }
        free(copy);
}

/* A problem begins once however often it is set, its message updates,
 * and the status line shows each active one but the reload's (which leads
 * the line) and one already shown there. */
static void test_problems(_unused_ void **state) {
        struct problems ps = { 0 };
        char line[256] = "hot: none";

        problem_set(&ps, PROBLEM_BAN_FILE, 0, "Ban file %s: bad", "a");
        problem_set(&ps, PROBLEM_BAN_FILE, 0, "Ban file %s: bad", "a");
        problem_set(&ps, PROBLEM_BAN_FILE, 0, "Ban file %s: bad", "b");
        assert_true(ps.active[PROBLEM_BAN_FILE]);
        assert_int_equal(ps.begun[PROBLEM_BAN_FILE], 1);
        assert_string_equal(ps.what[PROBLEM_BAN_FILE], "Ban file b: bad");
        problem_set(&ps, PROBLEM_RELOAD, 0, "reload: x");
        problem_set(&ps, PROBLEM_METRICS_FILE, -EROFS, "Failed to write %s: %m", "/m.prom");
        assert_string_equal(ps.what[PROBLEM_METRICS_FILE], "Failed to write /m.prom: Read-only file system");
        problem_append_status(&ps, "metrics-file-write: Failed to write /m.prom: Read-only file system", line,
                              sizeof(line));
        assert_string_equal(line, "hot: none; ban-file-invalid: Ban file b: bad");
        problem_clear(&ps, PROBLEM_BAN_FILE, "valid again");
        problem_clear(&ps, PROBLEM_BAN_FILE, "valid again");
        assert_false(ps.active[PROBLEM_BAN_FILE]);
        problem_set(&ps, PROBLEM_BAN_FILE, 0, "Ban file c: bad");
        assert_int_equal(ps.begun[PROBLEM_BAN_FILE], 2);
        for (int p = 0; p < PROBLEM_MAX; p++)
                assert_non_null(problem_to_string(p));
        assert_null(problem_to_string(PROBLEM_MAX));
}

/* The most series the exposition can have, every counter of every action
 * kind, reason, result and failure class filled: 7 per CPU for at most
 * METRICS_CPUS_MAX CPUs plus a constant, whatever the IRQ count.
 * irqsteerctl(8), irqsteer.conf(5) and the README state this bound; a new
 * action kind, reason, result or series changes it, and this test then
 * says by how much. */
#define METRICS_PER_CPU 7
#define METRICS_OTHERS 1108
static void test_metrics_cardinality(void **state) {
        static const int ncpus[] = { 1, 16, 64, 65, 256, 1024 };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(ncpus); i++) {
                static struct report rp;
                struct report_snapshot s = { .state_dir = "/tmp" };
                struct sample_rates l = { .max_cpu = ncpus[i] - 1 };
                char *text = NULL;
                size_t len;
                int n = 0;

                memset(&rp, 0, sizeof(rp));
                l.cpus = calloc((size_t) ncpus[i], sizeof(*l.cpus));
                assert_non_null(l.cpus);
                for (int c = 0; c < ncpus[i]; c++)
                        l.cpus[c].valid = true;
                s.load = &l;
                for (int t = 0; t < KNOB_KIND_MAX; t++) {
                        for (int r = 0; r < ACTION_REASON_MAX; r++)
                                for (int x = 0; x < REPORT_RESULT_MAX; x++)
                                        rp.count.actions[t][r][x] = 1;
                        /* from 1: a failed action never has ACTION_FAILURE_NONE */
                        for (int x = 1; x < ACTION_FAILURE_MAX; x++)
                                rp.count.action_failures[t][x] = 1;
                }
                assert_int_equal(metrics_text(&rp, &s, &text, &len), 0);
                for (const char *p = text; *p;) {
                        const char *e = strchr(p, '\n');

                        n += *p != '#' && *p != '\n';
                        if (!e)
                                break;
                        p = e + 1;
                }
                if (n != METRICS_PER_CPU * MIN(ncpus[i], METRICS_CPUS_MAX) + METRICS_OTHERS)
                        fail_msg("%d CPUs: %d series, the documented bound is %d", ncpus[i], n,
                                 METRICS_PER_CPU * MIN(ncpus[i], METRICS_CPUS_MAX) + METRICS_OTHERS);
                free(text);
                free(l.cpus);
        }
}

/* Metric values in 6 decimals without printf, the trailing zeros dropped,
 * and "%.15g" from 1e9 on. */
static void test_format_fixed6(_unused_ void **state) {
        static const struct {
                double v;
                const char *want;
        } cases[] = {
                { 0, "0" }, { -0.0, "0" }, { 1, "1" }, { -1, "-1" }, { 0.25, "0.25" },
                { 0.0625, "0.0625" }, { 0.420131654654159, "0.420132" }, { 0.0000004, "0" },
                { -0.0000004, "0" }, { 0.0000005, "0.000001" }, { 0.9999996, "1" },
                { 23012.5, "23012.5" }, { 250000, "250000" }, { 1700000000.123456, "1700000000.12346" },
                { -3.5, "-3.5" }, { 999999999.5, "999999999.5" }, { 999999999.123456, "999999999.123456" },
                { 1e9, "1000000000" },
                { 1.5e20, "1.5e+20" }, { -2e15, "-2e+15" },
        };
        char buf[32];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                size_t n = util_format_fixed6(buf, cases[i].v);

                if (strcmp(buf, cases[i].want) != 0 || n != strlen(cases[i].want))
                        fail_msg("%.17g: \"%s\" (%zu), want \"%s\"", cases[i].v, buf, n, cases[i].want);
        }
        /* a sweep of ratios and rates: the nearest millionth (a tie may go
         * either way: the product v * 1e6 is rounded first), plain decimal
         * digits, no trailing zero */
        for (int i = 0; i < 200000; i++) {
                double v = i * 0.000123457 - 3, back;
                size_t n = util_format_fixed6(buf, v);
                char *end;

                back = strtod(buf, &end);
                if (*end || fabs(back - v) > 0.5e-6 + 1e-12 || strspn(buf, "-0123456789.") != n ||
                    (strchr(buf, '.') && buf[n - 1] == '0'))
                        fail_msg("%.17g: \"%s\"", v, buf);
        }
}

static void test_metrics_text(void **state) {
        struct fixture x;
        char *text;

        fixture_init(&x, "/nonexistent");
        text = metrics(&x);
        check_format(text);

        assert_true(has_line(text, "# TYPE irqsteer_cpu_softirq_ratio gauge"));
        assert_true(has_line(text, "irqsteer_cpu_softirq_ratio{cpu=\"0\"} 0.25"));
        assert_true(has_line(text, "irqsteer_cpu_softirq_ratio{cpu=\"2\"} 0.5"));
        assert_true(has_line(text, "irqsteer_cpu_irq_ratio{cpu=\"2\"} 0.125"));
        assert_true(has_line(text, "irqsteer_cpu_idle_ratio{cpu=\"2\"} 0.0625"));
        /* offline and not-yet-valid CPUs have no series */
        assert_null(strstr(text, "cpu=\"1\""));
        assert_null(strstr(text, "cpu=\"3\""));
        assert_true(has_line(text, "irqsteer_cpu_hot{cpu=\"0\"} 0"));
        assert_true(has_line(text, "irqsteer_cpu_hot{cpu=\"2\"} 1"));
        assert_true(has_line(text, "irqsteer_cpu_saturated{cpu=\"2\"} 1"));
        assert_true(has_line(text, "irqsteer_cpu_net_softirqs_per_second{cpu=\"0\",kind=\"net_rx\"} 1500"));
        assert_true(has_line(text, "irqsteer_cpu_net_softirqs_per_second{cpu=\"2\",kind=\"net_rx\"} 250000"));
        assert_true(has_line(text, "irqsteer_cpu_net_softirqs_per_second{cpu=\"0\",kind=\"net_tx\"} 20"));
        assert_true(has_line(text, "irqsteer_hot_cpus 1"));
        assert_true(has_line(text, "irqsteer_queue_irqs 8"));
        assert_true(has_line(text, "irqsteer_ticks_total 5"));
        assert_true(has_line(text, "irqsteer_start_time_seconds 1700000000"));
        assert_true(has_line(text, "irqsteer_build_info{version=\"" IRQSTEER_VERSION "\"} 1"));
        assert_true(has_line(text, "# TYPE irqsteer_actions_total counter"));
        assert_true(has_line(text, "irqsteer_rps_trials_total{verdict=\"reverted\"} 0"));
        assert_true(has_line(text, "irqsteer_config_reloads_total{result=\"failed\"} 0"));
        assert_true(has_line(text, "irqsteer_managed_objects{kind=\"irq\"} 0"));
        /* nothing per IRQ, per interface or per thread */
        assert_null(strstr(text, "irq=\""));
        assert_null(strstr(text, "device=\""));
        free(text);

        /* before the first interval: no per-CPU series, still valid */
        x.snap.load = NULL;
        x.snap.policy = NULL;
        text = metrics(&x);
        check_format(text);
        assert_null(strstr(text, "cpu=\""));
        assert_true(has_line(text, "irqsteer_hot_cpus 0"));
        free(text);
        fixture_free(&x);
}

/* A fresh daemon's first metrics text: every action counter family has
 * its series at 0 (a rate over an absent series is empty, not 0), one per
 * kind and reason the policy can give it, done and failed, and one per
 * kind and failure class; never a pair the policy cannot produce. */
static void test_metrics_counters_at_zero(void **state) {
        struct fixture x;
        char *text, line[256];
        int n_actions = 0, n_fits = 0, n_failures = 0;

        (void) state;
        fixture_init(&x, "/nonexistent");
        text = metrics(&x);
        check_format(text);
        for (int t = 0; t < KNOB_KIND_MAX; t++) {
                bool any = false;

                for (int r = 0; r < ACTION_REASON_MAX; r++) {
                        bool fits = action_reason_fits(t, r);

                        n_fits += fits;
                        any |= fits;
                        for (int x = 0; x < 2; x++) {
                                snprintf(line, sizeof(line),
                                         "irqsteer_actions_total{kind=\"%s\",reason=\"%s\",result=\"%s\"} 0",
                                         action_type_to_string(t), action_reason_to_string(r), x ? "failed" : "done");
                                if (has_line(text, line) != fits)
                                        fail_msg("%s: %s", fits ? "missing" : "a pair the policy never gives", line);
                        }
                }
                if (!any)
                        fail_msg("kind %s has no reason at 0", action_type_to_string(t));
                for (int c = 1; c < ACTION_FAILURE_MAX; c++) {
                        snprintf(line, sizeof(line), "irqsteer_action_failures_total{kind=\"%s\",class=\"%s\"} 0",
                                 action_type_to_string(t), action_failure_to_string(c));
                        if (!has_line(text, line))
                                fail_msg("missing: %s", line);
                }
        }
        for (const char *p = text; (p = strstr(p, "\nirqsteer_action")); p++) {
                n_actions += strncmp(p, "\nirqsteer_actions_total{", strlen("\nirqsteer_actions_total{")) == 0;
                n_failures += strncmp(p, "\nirqsteer_action_failures_total{",
                                      strlen("\nirqsteer_action_failures_total{")) == 0;
        }
        /* done and failed for each pair, nothing else; none-class never */
        assert_int_equal(n_actions, 2 * n_fits);
        assert_int_equal(n_failures, KNOB_KIND_MAX * (ACTION_FAILURE_MAX - 1));
        assert_null(strstr(text, "result=\"dry_run\"} 0"));
        free(text);
        fixture_free(&x);
}

/* Every _total series of text as "series value" pairs. */
struct series {
        char name[192];
        double v;
};

static size_t counters_of(const char *text, struct series *out, size_t max) {
        char *copy = strdup(text), *save = NULL;
        size_t n = 0;

        assert_non_null(copy);
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *sp = strrchr(line, ' '), name[96];

                if (line[0] == '#' || !sp)
                        continue;
                sample_name(line, name, sizeof(name));
                if (strlen(name) < 6 || strcmp(name + strlen(name) - 6, "_total") != 0)
                        continue;
                assert_true(n < max);
                *sp = 0;
                snprintf(out[n].name, sizeof(out[n].name), "%s", line);
                out[n].v = strtod(sp + 1, NULL);
                n++;
        }
        free(copy);
        return n;
}

static double counter(const struct series *s, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(s[i].name, name) == 0)
                        return s[i].v;
        return NAN;
}

static void one_tick(struct fixture *x, int result) {
        struct action a = { .type = KNOB_IRQ, .irq = 40, .queue = 0 };
        struct undo_report u = { .restored = 2, .gone = 1 };

        action_set_reason(&a, ACTION_REASON_CPU_HOT, "CPU1 softirq+irq 95%% for 2 samples; projected peak 95%% -> 50%%");
        report_record_action(&x->rp, &a, "IRQ 40 CPU1 -> CPU2: hot", result, 1);
        x->policy.rps_trials[POLICY_TRIAL_KEPT] = 1;
        report_count_policy(&x->rp, &x->policy);
        report_count_tick(&x->rp, 1500);
        report_count_reload(&x->rp, result >= 0);
        report_count_restore(&x->rp, &u);
        report_record_link(&x->rp, "eth0 down", 1);
        x->snap.ticks++;
}

static void test_counters_monotonic(void **state) {
        static struct series before[512], after[512];
        struct fixture x;
        size_t nb, na;
        char *text;

        fixture_init(&x, "/nonexistent");
        one_tick(&x, APPLY_DONE);
        text = metrics(&x);
        nb = counters_of(text, before, ELEMENTSOF(before));
        free(text);
        assert_true(nb > 10);
        assert_true(counter(before, nb, "irqsteer_actions_total{kind=\"irq-affinity\",reason=\"cpu_hot\",result=\"done\"}") == 1);

        for (int i = 0; i < 3; i++)
                one_tick(&x, i == 1 ? -EIO : APPLY_DONE);
        text = metrics(&x);
        check_format(text);
        na = counters_of(text, after, ELEMENTSOF(after));
        free(text);

        /* no series goes away or down */
        for (size_t i = 0; i < nb; i++) {
                double v = counter(after, na, before[i].name);
                if (isnan(v) || v < before[i].v)
                        fail_msg("%s: %g, then %g", before[i].name, before[i].v, v);
        }
        assert_true(counter(after, na, "irqsteer_actions_total{kind=\"irq-affinity\",reason=\"cpu_hot\",result=\"done\"}") == 3);
        assert_true(counter(after, na, "irqsteer_actions_total{kind=\"irq-affinity\",reason=\"cpu_hot\",result=\"failed\"}") == 1);
        assert_true(counter(after, na, "irqsteer_action_failures_total{kind=\"irq-affinity\",class=\"permanent\"}") == 1);
        assert_true(counter(after, na, "irqsteer_rps_trials_total{verdict=\"kept\"}") == 4);
        assert_true(counter(after, na, "irqsteer_ticks_total") == 9);
        assert_true(fabs(counter(after, na, "irqsteer_tick_seconds_total") - 0.006) < 1e-9);
        assert_true(counter(after, na, "irqsteer_config_reloads_total{result=\"ok\"}") == 3);
        assert_true(counter(after, na, "irqsteer_config_reloads_total{result=\"failed\"}") == 1);
        assert_true(counter(after, na, "irqsteer_restore_objects_total{result=\"restored\"}") == 8);
        assert_true(counter(after, na, "irqsteer_link_events_total") == 4);
        fixture_free(&x);
}

static char *make_tmpdir(void) {
        char tmpl[] = "/tmp/test-report.XXXXXX";
        char *d = mkdtemp(tmpl);

        assert_non_null(d);
        return strdup(d);
}

static char *slurp(const char *path) {
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t len = 0;

        if (!f)
                return NULL;
        assert_int_equal(getdelim(&buf, &len, 0, f) >= 0, 1);
        fclose(f);
        return buf;
}

static size_t dir_entries(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *e;
        size_t n = 0;

        assert_non_null(d);
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}

static void test_write_atomic(void **state) {
        char *sdir = make_tmpdir(), *pdir = make_tmpdir(), path[512], spath[512], old[64];
        char *text, *got;
        struct fixture x;
        struct stat st;
        mode_t mask;
        int fd;

        fixture_init(&x, sdir);
        snprintf(path, sizeof(path), "%s/irqsteer.prom", pdir);
        snprintf(spath, sizeof(spath), "%s/%s", sdir, METRICS_NAME);
        x.config.metrics_file = strdup(path);
        assert_non_null(x.config.metrics_file);

        /* an old file held open by a reader: it must keep reading the
         * old text whole (a rename, not a rewrite in place) */
        test_write_file(pdir, "irqsteer.prom", "# old\n");
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);

        mask = umask(077); /* the unit's UMask=0077: node_exporter must still read it */
        assert_int_equal(metrics_write(&x.rp, &x.snap), 0);
        umask(mask);

        text = metrics(&x);
        got = slurp(path);
        assert_non_null(got);
        assert_string_equal(got, text);
        free(got);
        got = slurp(spath);
        assert_non_null(got);
        assert_string_equal(got, text);
        free(got);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        memset(old, 0, sizeof(old));
        assert_int_equal(read(fd, old, sizeof(old) - 1), 6);
        assert_string_equal(old, "# old\n");
        close(fd);
        /* no temporary left beside them */
        assert_int_equal(dir_entries(pdir), 1);
        assert_int_equal(dir_entries(sdir), 1);

        /* a metrics_file in a missing directory: an error, the state
         * directory's copy still written */
        assert_int_equal(unlink(spath), 0);
        free(x.config.metrics_file);
        x.config.metrics_file = strdup("/nonexistent-irqsteer-test/irqsteer.prom");
        assert_int_equal(metrics_write(&x.rp, &x.snap), -ENOENT);
        assert_true(x.rp.problems.active[PROBLEM_METRICS_FILE]);
        got = slurp(spath);
        assert_non_null(got);
        /* the next write shows it in the metrics: a problem, and it began once */
        assert_int_equal(metrics_write(&x.rp, &x.snap), -ENOENT);
        free(got);
        got = slurp(spath);
        assert_non_null(strstr(got, "\nirqsteer_problem{reason=\"metrics-file-write\"} 1\n"));
        assert_non_null(strstr(got, "\nirqsteer_problems_total{reason=\"metrics-file-write\"} 1\n"));
        assert_non_null(strstr(got, "\nirqsteer_problem{reason=\"state-file-write\"} 0\n"));
        free(got);
        free(text);
        /* and its end */
        free(x.config.metrics_file);
        x.config.metrics_file = strdup(path);
        assert_int_equal(metrics_write(&x.rp, &x.snap), 0);
        assert_false(x.rp.problems.active[PROBLEM_METRICS_FILE]);
        assert_int_equal(x.rp.problems.begun[PROBLEM_METRICS_FILE], 1);

        /* stopping removes both */
        free(x.config.metrics_file);
        x.config.metrics_file = strdup(path);
        metrics_remove(&x.snap);
        assert_int_equal(dir_entries(pdir), 0);
        assert_int_equal(dir_entries(sdir), 0);
        assert_int_equal(rmdir(pdir), 0);
        assert_int_equal(rmdir(sdir), 0);
        free(pdir);
        free(sdir);
        fixture_free(&x);
}

/* The JSON key of a configuration key: durations carry their unit. */
static const struct json_value *config_member(const struct json_value *o, const char *key) {
        char s_key[96];

        if (json_get(o, key))
                return json_get(o, key);
        snprintf(s_key, sizeof(s_key), "%s_s", key);
        return json_get(o, s_key);
}

/* The keys of SECTION_keys[] in src/config.c, read as man-lint.sh reads
 * them.  How many. */
static size_t parser_keys(const char *section, char keys[][64], size_t max) {
        char path[4096], line[512], table[64];
        const char *dir = getenv("IRQSTEER_SRCDIR"), *k;
        bool in = false;
        size_t n = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/src/config.c", dir ? dir : ".");
        snprintf(table, sizeof(table), " %s_keys[] = {", section);
        f = fopen(path, "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f) && !(in && strncmp(line, "};", 2) == 0)) {
                if (strstr(line, table))
                        in = true;
                else if (in && (k = strstr(line, "KEY(\"")) && n < max && sscanf(k + 5, "%63[a-z_]", keys[n]) == 1)
                        n++;
        }
        fclose(f);
        return n;
}

/* status.json's "config" holds every key the parser accepts, in every
 * section (irqsteerctl(8) promises all of them): walked from the parser's
 * own key tables, so a key added to the parser and not to the dump fails
 * here.  state_dir there and in config_text is the one in force. */
static void test_status_config_every_key(void **state) {
        static const char text[] =
                "[daemon]\nstate_dir = /var/lib/irqsteer-from-file\nmetrics_file = /run/m/irqsteer.prom\n"
                "[balance]\ntakeover = yes\n"
                "[interface eth0]\ntakeover = no\n"
                "[interface eth1]\nrps = yes\n"
                "[worker web]\nmatch_name = nginx\npolicy = spread\n";
        static const char *const named[] = { "interface", "worker" };
        static const char *const args[] = { "eth0", "web" };
        _cleanup_(json_freep) struct json_value *v = NULL;
        const struct json_value *cfg, *dropins;
        struct config_errors errs = {};
        struct fixture x;
        const char *s;
        char *json = NULL;
        size_t len = 0, walked = 0;
        char keys[64][64];
        bool b;

        fixture_init(&x, "/run/irqsteer-in-force");
        config_free(&x.config);
        assert_int_equal(config_parse("/etc/irqsteer/irqsteer.conf", text, strlen(text), &x.config, &errs), 0);
        assert_int_equal(report_status_json(&x.rp, &x.snap, &json, &len), 0);
        assert_int_equal(json_parse(json, len, &v), 0);
        cfg = json_get(v, "config");
        assert_non_null(cfg);

        for (size_t k = 0; k < 2; k++) {
                const char *sec = k == 0 ? "daemon" : "balance";
                size_t n = parser_keys(sec, keys, ELEMENTSOF(keys));

                for (size_t i = 0; i < n; i++, walked++)
                        if (!config_member(cfg, keys[i]))
                                fail_msg("[%s] %s is not in status.json's config", sec, keys[i]);
        }
        for (size_t k = 0; k < ELEMENTSOF(named); k++) {
                size_t n = parser_keys(named[k], keys, ELEMENTSOF(keys));
                char plural[32];
                const struct json_value *o;

                snprintf(plural, sizeof(plural), "%ss", named[k]);
                o = json_get(json_get(cfg, plural), args[k]);
                if (!o)
                        fail_msg("config.%s.%s missing", plural, args[k]);
                assert_true(n > 0);
                for (size_t i = 0; i < n; i++, walked++)
                        if (!config_member(o, keys[i]))
                                fail_msg("[%s] %s is not in status.json's config.%s", named[k], keys[i], plural);
        }
        /* the walk saw the tables (40 keys when this was written) */
        assert_true(walked >= 40);

        assert_int_equal(json_get_string(cfg, "state_dir", &s), 0);
        assert_string_equal(s, "/run/irqsteer-in-force");
        assert_int_equal(json_get_string(cfg, "metrics_file", &s), 0);
        assert_string_equal(s, "/run/m/irqsteer.prom");
        assert_int_equal(json_get_bool(cfg, "takeover", &b), 0);
        assert_true(b);
        assert_int_equal(json_get_string(json_get(json_get(cfg, "interfaces"), "eth0"), "takeover", &s), 0);
        assert_string_equal(s, "no");
        assert_int_equal(json_get_string(json_get(json_get(cfg, "interfaces"), "eth1"), "takeover", &s), 0);
        assert_string_equal(s, "inherit");
        dropins = json_get(cfg, "dropins");
        assert_non_null(dropins);
        assert_int_equal(dropins->type, JSON_ARRAY);
        assert_int_equal(json_count(dropins), 0);

        assert_int_equal(json_get_string(v, "config_text", &s), 0);
        assert_non_null(strstr(s, "\nstate_dir = /run/irqsteer-in-force\n"));
        assert_null(strstr(s, "irqsteer-from-file"));
        /* the daemon's own copy is left as the file has it */
        assert_string_equal(x.config.state_dir, "/var/lib/irqsteer-from-file");
        free(json);
        fixture_free(&x);
}

/* status.json's IRQ classes: every class with its count and what is done,
 * and the kernel-managed IRQs by number. */
static void test_status_irq_classes(void **state) {
        static unsigned managed[] = { 24, 57 };
        _cleanup_(json_freep) struct json_value *v = NULL;
        const struct json_value *a, *km;
        struct fixture x;
        char *json = NULL;
        size_t len = 0;

        (void) state;
        fixture_init(&x, "/run/irqsteer");
        x.policy.n_irq_class[CLASSIFY_IRQ_NIC_QUEUE] = 8;
        x.policy.n_irq_class[CLASSIFY_IRQ_OTHER] = 5;
        x.policy.n_irq_class[CLASSIFY_IRQ_KERNEL_MANAGED] = 2;
        x.policy.kernel_managed_irqs = managed;
        x.policy.n_kernel_managed_irqs = 2;
        assert_int_equal(report_status_json(&x.rp, &x.snap, &json, &len), 0);
        assert_int_equal(json_parse(json, len, &v), 0);
        a = json_get(v, "irq_classes");
        assert_int_equal(json_count(a), CLASSIFY_IRQ_CLASS_MAX);
        for (int c = 0; c < CLASSIFY_IRQ_CLASS_MAX; c++) {
                const struct json_value *e = json_index(a, (size_t) c);
                const char *s;
                int64_t n;

                assert_int_equal(json_get_string(e, "class", &s), 0);
                assert_string_equal(s, classify_irq_class_to_string(c));
                assert_int_equal(json_get_int(e, "irqs", &n), 0);
                assert_int_equal(n, x.policy.n_irq_class[c]);
                assert_int_equal(json_get_string(e, "done", &s), 0);
                assert_string_equal(s, classify_irq_class_done(c));
        }
        km = json_get(v, "kernel_managed_irqs");
        assert_int_equal(json_count(km), 2);
        assert_int_equal(json_index(km, 1)->integer, 57);
        x.policy.kernel_managed_irqs = NULL;
        free(json);
        fixture_free(&x);
}

/* A 1024-CPU host: status.json lists at most REPORT_LIST_MAX managed
 * objects (the newest) and hot CPUs (the busiest) beside their counts,
 * and metrics.prom has per-CPU series for METRICS_CPUS_MAX CPUs, the hot
 * ones first, then the busiest: both bounded whatever the host. */
static void test_big_host_bounded(void **state) {
        enum { NCPU = 1024, NHOT = 200, NMANAGED = 3000 };
        _cleanup_(json_freep) struct json_value *v = NULL;
        static struct sample_cpu cpus[NCPU];
        static struct policy_hot_cpu hot[NHOT];
        struct undo *u = calloc(1, sizeof(*u));
        char *journal = NULL, *json = NULL, *text = NULL, series[64];
        size_t jlen = 0, len = 0;
        const struct json_value *a;
        struct fixture x;
        int64_t n;
        FILE *f;

        (void) state;
        assert_non_null(u);
        fixture_init(&x, "/run/irqsteer");
        for (int c = 0; c < NCPU; c++)
                cpus[c] = (struct sample_cpu){ .valid = true, .softirq = (double) (c % 100) / 1000 };
        cpus[700].softirq = 0.9; /* the busiest */
        cpus[3].softirq = 0;     /* hot by the policy's word, not busy */
        x.load = (struct sample_rates){ .interval_s = 1, .max_cpu = NCPU - 1, .cpus = cpus };
        cpuset_zero(&x.policy.hot);
        for (int i = 0; i < NHOT; i++) {
                hot[i] = (struct policy_hot_cpu){ .cpu = 3 + i, .load = 0.5 + (double) i / 1000 };
                cpuset_set(&x.policy.hot, 3 + i);
        }
        x.policy.hot_cpus = hot;
        x.policy.n_hot_cpus = NHOT;
        f = open_memstream(&journal, &jlen);
        assert_non_null(f);
        for (int i = 0; i < NMANAGED; i++)
                fprintf(f, "irq %d eth0-TxRx-%d 0-1023 0-1023 %d\n", 100 + i, i, i % NCPU);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(undo_parse(u, journal, jlen), 0);
        assert_int_equal(u->n_entries, NMANAGED);
        x.snap.undo = u;

        assert_int_equal(report_status_json(&x.rp, &x.snap, &json, &len), 0);
        if (len >= 64 * 1024)
                fail_msg("status.json %zu bytes", len);
        assert_int_equal(json_parse(json, len, &v), 0);
        assert_int_equal(json_get_int(v, "managed_count", &n), 0);
        assert_int_equal(n, NMANAGED);
        a = json_get(v, "managed");
        assert_int_equal(json_count(a), REPORT_LIST_MAX);
        {
                const char *o;

                assert_int_equal(json_get_string(json_index(a, REPORT_LIST_MAX - 1), "object", &o), 0);
                assert_non_null(strstr(o, "3099"));
        }
        assert_int_equal(json_get_int(v, "hot_cpus_count", &n), 0);
        assert_int_equal(n, NHOT);
        a = json_get(v, "hot_cpus");
        assert_int_equal(json_count(a), REPORT_LIST_MAX);
        for (size_t i = 0; i < json_count(a); i++) {
                int64_t cpu;

                assert_int_equal(json_get_int(json_index(a, i), "cpu", &cpu), 0);
                assert_true(cpu >= 3 + NHOT - REPORT_LIST_MAX && cpu < 3 + NHOT);
        }

        text = metrics(&x);
        check_format(text);
        n = 0;
        for (const char *p = text; (p = strstr(p, "\nirqsteer_cpu_idle_ratio{")); p++)
                n++;
        assert_int_equal(n, METRICS_CPUS_MAX);
        /* more hot CPUs than the bound: the busiest of them */
        snprintf(series, sizeof(series), "\nirqsteer_cpu_hot{cpu=\"199\"} 1\n");
        assert_non_null(strstr(text, series));
        assert_null(strstr(text, "\nirqsteer_cpu_idle_ratio{cpu=\"202\"}"));
        assert_null(strstr(text, "\nirqsteer_cpu_idle_ratio{cpu=\"700\"}"));
        assert_non_null(strstr(text, "\nirqsteer_cpu_load_ratio_count 1024\n"));
        free(text);

        /* fewer hot CPUs than the bound: the busiest fill the rest */
        x.policy.n_hot_cpus = 10;
        cpuset_zero(&x.policy.hot);
        for (int i = 0; i < 10; i++)
                cpuset_set(&x.policy.hot, 3 + i);
        text = metrics(&x);
        assert_non_null(strstr(text, "\nirqsteer_cpu_idle_ratio{cpu=\"700\"}"));
        assert_non_null(strstr(text, "\nirqsteer_cpu_idle_ratio{cpu=\"3\"}"));
        assert_null(strstr(text, "\nirqsteer_cpu_idle_ratio{cpu=\"0\"}"));
        free(text);

        x.policy.hot_cpus = NULL;
        free(json);
        free(journal);
        undo_free(u);
        fixture_free(&x);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_status_irq_classes),
                cmocka_unit_test(test_big_host_bounded),
                cmocka_unit_test(test_reason_codes),
                cmocka_unit_test(test_format_fixed6),
                cmocka_unit_test(test_metrics_text),
                cmocka_unit_test(test_problems),
                cmocka_unit_test(test_metrics_cardinality),
                cmocka_unit_test(test_counters_monotonic),
                cmocka_unit_test(test_write_atomic),
                cmocka_unit_test(test_status_config_every_key),
                cmocka_unit_test(test_metrics_counters_at_zero),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
