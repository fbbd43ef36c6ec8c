/* Config parser: every key, every range end, every kind of error with its
 * exact file:line: key: text, glob lookup, load/missing/reload semantics, and
 * that the shipped example file documents the real defaults. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

/* Not "config.h": from tests/ that name finds autoconf's build config.h. */
#include "config.h"
#include "testlib.h"
#include "util.h"

#define SEC 1000000ULL

/* Runs config_errors_print into a string (caller frees). */
static char *errors_text(const struct config_errors *errs) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        config_errors_print(errs, f);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static int parse_str(const char *text, struct config *c, struct config_errors *errs) {
        return config_parse("t.conf", text, strlen(text), c, errs);
}

/* metrics_file is the one path that may be empty: off. */
static void test_metrics_file_off(_unused_ void **state) {
        struct config_errors errs = {};
        struct config c;

        assert_int_equal(parse_str("[daemon]\nmetrics_file =\n", &c, &errs), 0);
        assert_null(c.metrics_file);
        config_free(&c);
        assert_int_equal(parse_str("[daemon]\nmetrics_file = \"\"\n", &c, &errs), 0);
        assert_null(c.metrics_file);
        config_free(&c);
        /* irqbalance_env_files: both of irqbalance's files by default, empty reads none */
        assert_int_equal(parse_str("", &c, &errs), 0);
        assert_string_equal(c.irqbalance_env_files, "/etc/sysconfig/irqbalance /etc/default/irqbalance");
        config_free(&c);
        assert_int_equal(parse_str("[daemon]\nirqbalance_env_files =\n", &c, &errs), 0);
        assert_null(c.irqbalance_env_files);
        config_free(&c);
}

static char *read_all(const char *path, size_t *ret_len) {
        FILE *f = fopen(path, "re");
        char *buf;
        long n;

        if (!f)
                fail_msg("cannot open %s", path);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        n = ftell(f);
        assert_true(n >= 0);
        rewind(f);
        buf = malloc((size_t) n + 1);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t) n, f), (size_t) n);
        buf[n] = 0;
        fclose(f);
        *ret_len = (size_t) n;
        return buf;
}

/* Field-by-field equality of everything a config holds. */
static bool config_same(const struct config *a, const struct config *b, const char **what) {
#define SAME(f)                         \
        if (a->f != b->f) {             \
                *what = #f;             \
                return false;           \
        }
#define SAME_STR(f)                                                          \
        if ((!a->f != !b->f) || (a->f && strcmp(a->f, b->f) != 0)) {         \
                *what = #f;                                                  \
                return false;                                                \
        }
        SAME(interval_usec);
        SAME(irq_rate_interval_usec);
        SAME_STR(state_dir);
        SAME_STR(metrics_file);
        SAME_STR(irqbalance_env_files);
        SAME(log_level);
        SAME(restore_on_exit);
        SAME(dry_run);
        SAME(hot_enter);
        SAME(hot_exit);
        SAME(hot_samples);
        SAME(balance_ratio);
        SAME(balance_floor);
        SAME(saturated_idle);
        SAME(saturated_share);
        SAME(smoothing);
        SAME(min_gain);
        SAME(min_dwell_usec);
        SAME(max_dwell_usec);
        SAME(external_hold_usec);
        SAME(max_moves);
        SAME(initial_layout);
        SAME(rps);
        SAME(rfs);
        SAME(rps_sock_flow_entries);
        SAME(xps);
        SAME(single_queue_rps);
        SAME(rps_trial);
        SAME(takeover);
        SAME(rps_exclude_irq_rate);
        if (a->other_irqs != b->other_irqs) {
                *what = "other_irqs";
                return false;
        }
        if (a->ban_irqs.n != b->ban_irqs.n ||
            memcmp(a->ban_irqs.v, b->ban_irqs.v, a->ban_irqs.n * sizeof(a->ban_irqs.v[0])) != 0) {
                *what = "ban_irqs";
                return false;
        }
        if (!cpuset_equal(&a->banned_cpus, &b->banned_cpus)) {
                *what = "banned_cpus";
                return false;
        }
        SAME(n_interfaces);
        SAME(n_workers);
        for (size_t i = 0; i < a->n_interfaces; i++) {
                SAME_STR(interfaces[i].match);
                SAME(interfaces[i].manage);
                SAME(interfaces[i].rps);
                SAME(interfaces[i].xps);
                SAME(interfaces[i].rfs);
                SAME(interfaces[i].takeover);
                if (!cpuset_equal(&a->interfaces[i].cpus, &b->interfaces[i].cpus)) {
                        *what = "interfaces[].cpus";
                        return false;
                }
        }
        for (size_t i = 0; i < a->n_workers; i++) {
                SAME_STR(workers[i].name);
                SAME_STR(workers[i].match_name);
                SAME_STR(workers[i].match_cmdline);
                SAME_STR(workers[i].match_unit);
                SAME_STR(workers[i].pidfile);
                SAME_STR(workers[i].interface);
                SAME(workers[i].policy);
                if (!cpuset_equal(&a->workers[i].cpus, &b->workers[i].cpus)) {
                        *what = "workers[].cpus";
                        return false;
                }
        }
        return true;
#undef SAME
#undef SAME_STR
}

/* The default values themselves are not restated here: test_example_file
 * holds them against the shipped irqsteer.conf.example, which documents
 * them (and man-lint against irqsteer.conf(5)). */
static void test_defaults(_unused_ void **state) {
        struct config c;

        assert_int_equal(config_defaults(&c), 0);
        assert_null(c.path);
        assert_null(c.metrics_file);
        assert_true(cpuset_empty(&c.banned_cpus));
        assert_int_equal(c.n_interfaces, 0);
        assert_int_equal(c.n_workers, 0);
        config_free(&c);
        /* config_free leaves a zeroed struct: a second free is harmless. */
        config_free(&c);
}

enum kind { K_BOOL, K_TRI, K_UINT, K_U32, K_U64, K_DOUBLE, K_INT, K_STR, K_CPUS, K_POLICY };
enum where { W_CONFIG, W_INTERFACE, W_WORKER };

#define CF(f) W_CONFIG, offsetof(struct config, f)
#define IF(f) W_INTERFACE, offsetof(struct config_interface, f)
#define WF(f) W_WORKER, offsetof(struct config_worker, f)

static void test_good_values(_unused_ void **state) {
        static const struct {
                const char *what, *key, *value;
                enum kind kind;
                enum where where;
                size_t off;
                double d;       /* K_DOUBLE; K_UINT/U32/U64/INT/BOOL/TRI/POLICY as integer */
                const char *s;  /* K_STR, K_CPUS (formatted list) */
        } cases[] = {
                { "interval seconds", "interval", "5s", K_U64, CF(interval_usec), 5 * SEC, NULL },
                { "interval bare number is seconds", "interval", "3", K_U64, CF(interval_usec), 3 * SEC, NULL },
                { "interval fraction of seconds, as -i takes it", "interval", "0.5", K_U64, CF(interval_usec),
                  500000, NULL },
                { "interval 0.5s", "interval", "0.5s", K_U64, CF(interval_usec), 500000, NULL },
                { "interval 1.25s", "interval", "1.25s", K_U64, CF(interval_usec), 1250000, NULL },
                { "interval 500ms", "interval", "500ms", K_U64, CF(interval_usec), 500000, NULL },
                { "interval 0.1min", "interval", "0.1min", K_U64, CF(interval_usec), 6 * SEC, NULL },
                { "min_dwell 2.5ms (fraction of a smaller unit)", "min_dwell", "2500.5ms", K_U64, CF(min_dwell_usec),
                  2500500, NULL },
                { "interval lower end", "interval", "100ms", K_U64, CF(interval_usec), 100000, NULL },
                { "interval upper end", "interval", "60s", K_U64, CF(interval_usec), 60 * SEC, NULL },
                { "interval 1min = upper end", "interval", "1min", K_U64, CF(interval_usec), 60 * SEC, NULL },
                { "irq_rate_interval off", "irq_rate_interval", "0", K_U64, CF(irq_rate_interval_usec), 0, NULL },
                { "irq_rate_interval", "irq_rate_interval", "30s", K_U64, CF(irq_rate_interval_usec), 30 * SEC, NULL },
                { "irq_rate_interval upper end", "irq_rate_interval", "10min", K_U64, CF(irq_rate_interval_usec),
                  600 * SEC, NULL },
                { "state_dir", "state_dir", "/var/lib/irqsteer", K_STR, CF(state_dir), 0, "/var/lib/irqsteer" },
                { "state_dir quoted with space", "state_dir", "\"/run/irq steer\"", K_STR, CF(state_dir), 0,
                  "/run/irq steer" },
                { "metrics_file", "metrics_file", "/var/lib/prometheus/node-exporter/irqsteer.prom", K_STR,
                  CF(metrics_file), 0, "/var/lib/prometheus/node-exporter/irqsteer.prom" },
                { "irqbalance_env_files: blanks between paths", "irqbalance_env_files",
                  "\"/etc/default/irqbalance \t /srv/irqbalance.env\"", K_STR, CF(irqbalance_env_files), 0,
                  "/etc/default/irqbalance /srv/irqbalance.env" },
                { "log_level debug", "log_level", "debug", K_INT, CF(log_level), LOG_DEBUG, NULL },
                { "log_level notice", "log_level", "notice", K_INT, CF(log_level), LOG_NOTICE, NULL },
                { "log_level warning", "log_level", "warning", K_INT, CF(log_level), LOG_WARNING, NULL },
                { "log_level err", "log_level", "err", K_INT, CF(log_level), LOG_ERR, NULL },
                { "log_level info", "log_level", "info", K_INT, CF(log_level), LOG_INFO, NULL },
                { "restore_on_exit no", "restore_on_exit", "no", K_BOOL, CF(restore_on_exit), 0, NULL },
                { "dry_run yes", "dry_run", "yes", K_BOOL, CF(dry_run), 1, NULL },
                { "dry_run true", "dry_run", "true", K_BOOL, CF(dry_run), 1, NULL },
                { "dry_run On", "dry_run", "On", K_BOOL, CF(dry_run), 1, NULL },
                { "dry_run 1", "dry_run", "1", K_BOOL, CF(dry_run), 1, NULL },

                { "hot_enter bare", "hot_enter", "90", K_DOUBLE, CF(hot_enter), 0.90, NULL },
                { "hot_enter with %", "hot_enter", "90%", K_DOUBLE, CF(hot_enter), 0.90, NULL },
                { "hot_enter upper end", "hot_enter", "100", K_DOUBLE, CF(hot_enter), 1.0, NULL },
                { "hot_enter fraction", "hot_enter", "85.5%", K_DOUBLE, CF(hot_enter), 0.855, NULL },
                { "hot_exit lower end", "hot_exit", "1", K_DOUBLE, CF(hot_exit), 0.01, NULL },
                { "hot_exit", "hot_exit", "70%", K_DOUBLE, CF(hot_exit), 0.70, NULL },
                { "hot_samples lower end", "hot_samples", "1", K_UINT, CF(hot_samples), 1, NULL },
                { "hot_samples upper end", "hot_samples", "100", K_UINT, CF(hot_samples), 100, NULL },
                { "balance_ratio off", "balance_ratio", "0", K_DOUBLE, CF(balance_ratio), 0, NULL },
                { "balance_ratio lowest on", "balance_ratio", "1.2", K_DOUBLE, CF(balance_ratio), 1.2, NULL },
                { "balance_ratio upper end", "balance_ratio", "10", K_DOUBLE, CF(balance_ratio), 10, NULL },
                { "balance_floor", "balance_floor", "50%", K_DOUBLE, CF(balance_floor), 0.50, NULL },
                { "balance_floor lower end", "balance_floor", "1", K_DOUBLE, CF(balance_floor), 0.01, NULL },
                { "saturated_idle zero disables", "saturated_idle", "0", K_DOUBLE, CF(saturated_idle), 0, NULL },
                { "saturated_idle upper end", "saturated_idle", "100%", K_DOUBLE, CF(saturated_idle), 1.0, NULL },
                { "saturated_share", "saturated_share", "25", K_DOUBLE, CF(saturated_share), 0.25, NULL },
                { "smoothing lower end", "smoothing", "0.05", K_DOUBLE, CF(smoothing), 0.05, NULL },
                { "smoothing upper end", "smoothing", "1", K_DOUBLE, CF(smoothing), 1.0, NULL },
                { "smoothing leading dot", "smoothing", ".3", K_DOUBLE, CF(smoothing), 0.3, NULL },
                { "min_gain", "min_gain", "5", K_DOUBLE, CF(min_gain), 0.05, NULL },
                { "min_dwell zero", "min_dwell", "0", K_U64, CF(min_dwell_usec), 0, NULL },
                { "min_dwell upper end", "min_dwell", "1h", K_U64, CF(min_dwell_usec), 3600 * SEC, NULL },
                { "max_dwell upper end", "max_dwell", "24h", K_U64, CF(max_dwell_usec), 86400 * SEC, NULL },
                { "max_dwell equal to min_dwell", "max_dwell", "30s", K_U64, CF(max_dwell_usec), 30 * SEC, NULL },
                { "external_hold zero", "external_hold", "0", K_U64, CF(external_hold_usec), 0, NULL },
                { "external_hold upper end", "external_hold", "24h", K_U64, CF(external_hold_usec), 86400 * SEC, NULL },
                { "max_moves lower end", "max_moves", "1", K_UINT, CF(max_moves), 1, NULL },
                { "max_moves upper end", "max_moves", "1000", K_UINT, CF(max_moves), 1000, NULL },
                { "initial_layout off", "initial_layout", "off", K_BOOL, CF(initial_layout), 0, NULL },
                { "rps no", "rps", "no", K_BOOL, CF(rps), 0, NULL },
                { "rfs yes", "rfs", "yes", K_BOOL, CF(rfs), 1, NULL },
                { "xps false", "xps", "false", K_BOOL, CF(xps), 0, NULL },
                { "single_queue_rps 0", "single_queue_rps", "0", K_BOOL, CF(single_queue_rps), 0, NULL },
                { "rps_trial no", "rps_trial", "no", K_BOOL, CF(rps_trial), 0, NULL },
                { "other_irqs no", "other_irqs", "no", K_BOOL, CF(other_irqs), 0, NULL },
                { "rps_sock_flow_entries zero leaves alone", "rps_sock_flow_entries", "0", K_U32,
                  CF(rps_sock_flow_entries), 0, NULL },
                { "rps_sock_flow_entries lower end", "rps_sock_flow_entries", "1024", K_U32,
                  CF(rps_sock_flow_entries), 1024, NULL },
                { "rps_sock_flow_entries upper end", "rps_sock_flow_entries", "1048576", K_U32,
                  CF(rps_sock_flow_entries), 1048576, NULL },
                { "rps_exclude_irq_rate never", "rps_exclude_irq_rate", "0", K_DOUBLE, CF(rps_exclude_irq_rate),
                  0, NULL },
                { "rps_exclude_irq_rate upper end", "rps_exclude_irq_rate", "10000000", K_DOUBLE,
                  CF(rps_exclude_irq_rate), 10000000, NULL },
                { "banned_cpus", "banned_cpus", "0,2-3", K_CPUS, CF(banned_cpus), 0, "0,2-3" },
                { "banned_cpus empty", "banned_cpus", "", K_CPUS, CF(banned_cpus), 0, "" },

                { "interface manage no", "manage", "no", K_BOOL, IF(manage), 0, NULL },
                { "interface cpus", "cpus", "4-7", K_CPUS, IF(cpus), 0, "4-7" },
                { "interface rps yes", "rps", "yes", K_TRI, IF(rps), TRI_YES, NULL },
                { "interface xps no", "xps", "no", K_TRI, IF(xps), TRI_NO, NULL },
                { "interface rfs yes", "rfs", "yes", K_TRI, IF(rfs), TRI_YES, NULL },

                { "worker match_name 15 chars", "match_name", "abcdefghijklmno", K_STR, WF(match_name), 0,
                  "abcdefghijklmno" },
                { "worker match_cmdline", "match_cmdline", "^/usr/sbin/nginx( |$)", K_STR, WF(match_cmdline), 0,
                  "^/usr/sbin/nginx( |$)" },
                { "worker match_cmdline quoted keeps inner quotes", "match_cmdline", "\"a \"b\" c\"", K_STR,
                  WF(match_cmdline), 0, "a \"b\" c" },
                { "worker match_unit", "match_unit", "nginx.service", K_STR, WF(match_unit), 0, "nginx.service" },
                { "worker match_unit template", "match_unit", "memcached@11211.service", K_STR, WF(match_unit), 0,
                  "memcached@11211.service" },
                { "worker match_unit without suffix", "match_unit", "nginx", K_STR, WF(match_unit), 0, "nginx" },
                { "worker match_unit slice", "match_unit", "web.slice", K_STR, WF(match_unit), 0, "web.slice" },
                { "worker pidfile", "pidfile", "/run/nginx.pid", K_STR, WF(pidfile), 0, "/run/nginx.pid" },
                { "worker policy spread", "policy", "spread", K_POLICY, WF(policy), WORKER_SPREAD, NULL },
                { "worker policy avoid-net", "policy", "avoid-net", K_POLICY, WF(policy), WORKER_AVOID_NET, NULL },
                { "worker policy colocate", "policy", "colocate", K_POLICY, WF(policy), WORKER_COLOCATE, NULL },
                { "worker cpus", "cpus", "1-3", K_CPUS, WF(cpus), 0, "1-3" },
                { "worker interface", "interface", "eth0", K_STR, WF(interface), 0, "eth0" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct config_errors errs = {};
                struct config c;
                char text[512];
                const char *base;
                int r;

                switch (cases[i].where) {
                case W_CONFIG: {
                        bool daemon = strcmp(cases[i].key, "interval") == 0 ||
                                      strcmp(cases[i].key, "irq_rate_interval") == 0 ||
                                      strcmp(cases[i].key, "state_dir") == 0 ||
                                      strcmp(cases[i].key, "metrics_file") == 0 ||
                                      strcmp(cases[i].key, "irqbalance_env_files") == 0 ||
                                      strcmp(cases[i].key, "log_level") == 0 ||
                                      strcmp(cases[i].key, "restore_on_exit") == 0 ||
                                      strcmp(cases[i].key, "dry_run") == 0;
                        /* hot_exit must stay below hot_enter, max_dwell above min_dwell. */
                        const char *extra = strcmp(cases[i].key, "hot_exit") == 0 ? "hot_enter = 90\n" :
                                            strcmp(cases[i].key, "hot_enter") == 0 ? "hot_exit = 1\n" :
                                            strcmp(cases[i].key, "min_dwell") == 0 ? "max_dwell = 24h\n" : "";
                        snprintf(text, sizeof(text), "[%s]\n%s = %s\n%s", daemon ? "daemon" : "balance", cases[i].key,
                                 cases[i].value, extra);
                        break;
                }
                case W_INTERFACE:
                        snprintf(text, sizeof(text), "[interface eth*]\n%s = %s\n", cases[i].key, cases[i].value);
                        break;
                case W_WORKER:
                        snprintf(text, sizeof(text), "[worker w]\n%s = %s\n%s%s", cases[i].key, cases[i].value,
                                 strcmp(cases[i].key, "match_name") == 0 ? "" : "match_name = w\n",
                                 strcmp(cases[i].key, "policy") == 0 ? "" : "policy = colocate\n");
                        break;
                }
                r = parse_str(text, &c, &errs);
                if (r != 0) {
                        char *e = errors_text(&errs);
                        fail_msg("%s: parse gave %d: %s", cases[i].what, r, e);
                }
                assert_int_equal(errs.n, 0);
                assert_string_equal(c.path, "t.conf");
                base = cases[i].where == W_CONFIG      ? (const char *) &c :
                       cases[i].where == W_INTERFACE ? (const char *) &c.interfaces[0] :
                                                       (const char *) &c.workers[0];
                if (cases[i].where == W_INTERFACE) {
                        assert_int_equal(c.n_interfaces, 1);
                        assert_string_equal(c.interfaces[0].match, "eth*");
                        assert_int_equal(c.interfaces[0].line, 1);
                }
                if (cases[i].where == W_WORKER) {
                        assert_int_equal(c.n_workers, 1);
                        assert_string_equal(c.workers[0].name, "w");
                }
                base += cases[i].off;
                switch (cases[i].kind) {
                case K_BOOL:
                        if (*(const bool *) base != (cases[i].d != 0))
                                fail_msg("%s: got %d", cases[i].what, *(const bool *) base);
                        break;
                case K_TRI:
                        if (*(const enum tristate *) base != (enum tristate) cases[i].d)
                                fail_msg("%s: got %d", cases[i].what, *(const enum tristate *) base);
                        break;
                case K_POLICY:
                        if (*(const enum worker_policy *) base != (enum worker_policy) cases[i].d)
                                fail_msg("%s: got %d", cases[i].what, *(const enum worker_policy *) base);
                        break;
                case K_UINT:
                        if (*(const unsigned *) base != (unsigned) cases[i].d)
                                fail_msg("%s: got %u", cases[i].what, *(const unsigned *) base);
                        break;
                case K_U32:
                        if (*(const uint32_t *) base != (uint32_t) cases[i].d)
                                fail_msg("%s: got %u", cases[i].what, *(const uint32_t *) base);
                        break;
                case K_U64:
                        if (*(const uint64_t *) base != (uint64_t) cases[i].d)
                                fail_msg("%s: got %llu", cases[i].what,
                                         (unsigned long long) *(const uint64_t *) base);
                        break;
                case K_INT:
                        if (*(const int *) base != (int) cases[i].d)
                                fail_msg("%s: got %d", cases[i].what, *(const int *) base);
                        break;
                case K_DOUBLE:
                        if (fabs(*(const double *) base - cases[i].d) > 1e-12)
                                fail_msg("%s: got %.17g, want %.17g", cases[i].what, *(const double *) base,
                                         cases[i].d);
                        break;
                case K_STR:
                        if (!*(char *const *) base || strcmp(*(char *const *) base, cases[i].s) != 0)
                                fail_msg("%s: got '%s', want '%s'", cases[i].what,
                                         *(char *const *) base ? *(char *const *) base : "(null)", cases[i].s);
                        break;
                case K_CPUS: {
                        char buf[256];

                        assert_int_equal(cpuset_format_list((const cpuset_t *) base, buf, sizeof(buf)), 0);
                        if (strcmp(buf, cases[i].s) != 0)
                                fail_msg("%s: got '%s', want '%s'", cases[i].what, buf, cases[i].s);
                        break;
                }
                }
                config_free(&c);
        }
}

/* Each case: a whole file and the exact config_errors_print output. */
static void test_bad(_unused_ void **state) {
        static const struct {
                const char *what, *text, *want;
        } cases[] = {
                /* [daemon] */
                { "interval below range", "[daemon]\ninterval = 99ms\n",
                  "t.conf:2: interval: \"99ms\" is out of range (100ms..60s)\n" },
                { "interval above range", "[daemon]\ninterval = 61s\n",
                  "t.conf:2: interval: \"61s\" is out of range (100ms..60s)\n" },
                { "interval overflow", "[daemon]\ninterval = 99999999999999999999\n",
                  "t.conf:2: interval: \"99999999999999999999\" is out of range (100ms..60s)\n" },
                { "irq_rate_interval above range", "[daemon]\nirq_rate_interval = 11min\n",
                  "t.conf:2: irq_rate_interval: \"11min\" is out of range (0..10min)\n" },
                { "interval not a duration", "[daemon]\ninterval = fast\n",
                  "t.conf:2: interval: invalid duration \"fast\" (expected e.g. 500ms, 2s, 5min)\n" },
                { "interval fraction without digits", "[daemon]\ninterval = 1.s\n",
                  "t.conf:2: interval: invalid duration \"1.s\" (expected e.g. 500ms, 2s, 5min)\n" },
                { "interval fraction without a whole part", "[daemon]\ninterval = .5s\n",
                  "t.conf:2: interval: invalid duration \".5s\" (expected e.g. 500ms, 2s, 5min)\n" },
                { "interval fraction below range", "[daemon]\ninterval = 0.05\n",
                  "t.conf:2: interval: \"0.05\" is out of range (100ms..60s)\n" },
                { "trailing comment is part of the value", "[daemon]\ninterval = 2s # fast\n",
                  "t.conf:2: interval: invalid duration \"2s # fast\" (expected e.g. 500ms, 2s, 5min)\n" },
                { "irqbalance_env_files: one relative path spoils it",
                  "[daemon]\nirqbalance_env_files = /etc/default/irqbalance sysconfig/irqbalance\n",
                  "t.conf:2: irqbalance_env_files: \"sysconfig/irqbalance\" is not an absolute path of a file\n" },
                { "irqbalance_env_files: a directory", "[daemon]\nirqbalance_env_files = /etc/default/\n",
                  "t.conf:2: irqbalance_env_files: \"/etc/default/\" is not an absolute path of a file\n" },
                { "state_dir relative", "[daemon]\nstate_dir = run/irqsteer\n",
                  "t.conf:2: state_dir: \"run/irqsteer\" is not an absolute path\n" },
                { "state_dir empty", "[daemon]\nstate_dir =\n", "t.conf:2: state_dir: empty value\n" },
                { "metrics_file relative", "[daemon]\nmetrics_file = irqsteer.prom\n",
                  "t.conf:2: metrics_file: \"irqsteer.prom\" is not an absolute path\n" },
                { "metrics_file a directory", "[daemon]\nmetrics_file = /var/lib/prometheus/node-exporter/\n",
                  "t.conf:2: metrics_file: \"/var/lib/prometheus/node-exporter/\" names a directory, not a file\n" },
                { "state_dir empty quotes", "[daemon]\nstate_dir = \"\"\n", "t.conf:2: state_dir: empty value\n" },
                { "unterminated quote", "[daemon]\nstate_dir = \"/run/x\n",
                  "t.conf:2: state_dir: unterminated quoted value\n" },
                { "lone quote", "[daemon]\nstate_dir = \"\n", "t.conf:2: state_dir: unterminated quoted value\n" },
                { "log_level unknown", "[daemon]\nlog_level = loud\n",
                  "t.conf:2: log_level: invalid log level \"loud\" (expected debug, info, notice, warning or err)\n" },
                { "log_level is case sensitive", "[daemon]\nlog_level = INFO\n",
                  "t.conf:2: log_level: invalid log level \"INFO\" (expected debug, info, notice, warning or err)\n" },
                { "bool typo", "[daemon]\nrestore_on_exit = maybe\n",
                  "t.conf:2: restore_on_exit: invalid boolean \"maybe\" (expected yes or no)\n" },
                { "bool empty", "[daemon]\ndry_run = \n", "t.conf:2: dry_run: empty value\n" },

                /* [balance] */
                { "hot_enter zero", "[balance]\nhot_enter = 0\n",
                  "t.conf:2: hot_enter: \"0\" is out of range (1%..100%)\n" },
                { "hot_enter above 100", "[balance]\nhot_enter = 100.5%\n",
                  "t.conf:2: hot_enter: \"100.5%\" is out of range (1%..100%)\n" },
                { "hot_enter negative", "[balance]\nhot_enter = -5\n",
                  "t.conf:2: hot_enter: invalid percentage \"-5\"\n" },
                { "hot_enter word", "[balance]\nhot_enter = high\n",
                  "t.conf:2: hot_enter: invalid percentage \"high\"\n" },
                { "percent sign alone", "[balance]\nhot_enter = %\n", "t.conf:2: hot_enter: invalid percentage \"%\"\n" },
                { "two dots", "[balance]\nmin_gain = 1.2.3\n", "t.conf:2: min_gain: invalid percentage \"1.2.3\"\n" },
                { "hot_exit equal to hot_enter", "[balance]\nhot_exit = 80\n",
                  "t.conf:2: hot_exit: 80% must be below hot_enter (80%)\n" },
                { "hot_enter lowered below default hot_exit", "[balance]\nhot_enter = 50\n",
                  "t.conf:2: hot_exit: 60% must be below hot_enter (50%)\n" },
                { "hot_exit above hot_enter, line of hot_exit", "[balance]\nhot_enter = 70\nhot_exit = 75\n",
                  "t.conf:3: hot_exit: 75% must be below hot_enter (70%)\n" },
                { "hot_samples zero", "[balance]\nhot_samples = 0\n",
                  "t.conf:2: hot_samples: \"0\" is out of range (1..100)\n" },
                { "hot_samples 101", "[balance]\nhot_samples = 101\n",
                  "t.conf:2: hot_samples: \"101\" is out of range (1..100)\n" },
                { "hot_samples negative", "[balance]\nhot_samples = -1\n",
                  "t.conf:2: hot_samples: invalid number \"-1\"\n" },
                { "hot_samples with unit", "[balance]\nhot_samples = 3x\n",
                  "t.conf:2: hot_samples: invalid number \"3x\"\n" },
                { "saturated_idle above 100", "[balance]\nsaturated_idle = 101\n",
                  "t.conf:2: saturated_idle: \"101\" is out of range (0%..100%)\n" },
                { "saturated_share zero", "[balance]\nsaturated_share = 0\n",
                  "t.conf:2: saturated_share: \"0\" is out of range (1%..100%)\n" },
                { "smoothing below range", "[balance]\nsmoothing = 0.04\n",
                  "t.conf:2: smoothing: \"0.04\" is out of range (0.05..1)\n" },
                { "smoothing above range", "[balance]\nsmoothing = 1.01\n",
                  "t.conf:2: smoothing: \"1.01\" is out of range (0.05..1)\n" },
                { "smoothing as percent", "[balance]\nsmoothing = 50%\n",
                  "t.conf:2: smoothing: invalid number \"50%\"\n" },
                { "min_gain zero", "[balance]\nmin_gain = 0\n", "t.conf:2: min_gain: \"0\" is out of range (1%..100%)\n" },
                { "min_dwell above 1h", "[balance]\nmin_dwell = 61min\nmax_dwell = 24h\n",
                  "t.conf:2: min_dwell: \"61min\" is out of range (0..1h)\n" },
                { "external_hold above 24h", "[balance]\nexternal_hold = 25h\n",
                  "t.conf:2: external_hold: \"25h\" is out of range (0..24h)\n" },
                { "max_dwell above 24h", "[balance]\nmax_dwell = 25h\n",
                  "t.conf:2: max_dwell: \"25h\" is out of range (0..24h)\n" },
                { "max_dwell below min_dwell", "[balance]\nmin_dwell = 1min\nmax_dwell = 30s\n",
                  "t.conf:3: max_dwell: 30s must not be below min_dwell (60s)\n" },
                { "min_dwell above default max_dwell", "[balance]\nmin_dwell = 11min\n",
                  "t.conf:2: max_dwell: 10min must not be below min_dwell (11min)\n" },
                { "max_moves zero", "[balance]\nmax_moves = 0\n",
                  "t.conf:2: max_moves: \"0\" is out of range (1..1000)\n" },
                { "max_moves 1001", "[balance]\nmax_moves = 1001\n",
                  "t.conf:2: max_moves: \"1001\" is out of range (1..1000)\n" },
                { "flow entries not a power of two", "[balance]\nrps_sock_flow_entries = 3000\n",
                  "t.conf:2: rps_sock_flow_entries: \"3000\" must be 0 or a power of two from 1024 to 1048576\n" },
                { "flow entries below range", "[balance]\nrps_sock_flow_entries = 512\n",
                  "t.conf:2: rps_sock_flow_entries: \"512\" must be 0 or a power of two from 1024 to 1048576\n" },
                { "flow entries above range", "[balance]\nrps_sock_flow_entries = 2097152\n",
                  "t.conf:2: rps_sock_flow_entries: \"2097152\" must be 0 or a power of two from 1024 to 1048576\n" },
                { "irq rate above range", "[balance]\nrps_exclude_irq_rate = 10000001\n",
                  "t.conf:2: rps_exclude_irq_rate: \"10000001\" is out of range (0..10000000)\n" },
                { "balance_ratio between 0 and 1.2", "[balance]\nbalance_ratio = 1.1\n",
                  "t.conf:2: balance_ratio: 1.1 must be 0 (off) or at least 1.2\n" },
                { "balance_ratio over 10", "[balance]\nbalance_ratio = 11\n",
                  "t.conf:2: balance_ratio: \"11\" is out of range (0..10)\n" },
                { "balance_floor zero", "[balance]\nbalance_floor = 0\n",
                  "t.conf:2: balance_floor: \"0\" is out of range (1%..100%)\n" },
                { "irq rate negative", "[balance]\nrps_exclude_irq_rate = -1\n",
                  "t.conf:2: rps_exclude_irq_rate: invalid number \"-1\"\n" },
                { "banned_cpus syntax", "[balance]\nbanned_cpus = 0-\n",
                  "t.conf:2: banned_cpus: invalid CPU list \"0-\" (expected e.g. 0-3,8)\n" },
                { "banned_cpus too large", "[balance]\nbanned_cpus = 8192\n",
                  "t.conf:2: banned_cpus: CPU number too large in \"8192\" (at most 8191)\n" },
                { "ban_irqs garbage", "[balance]\nban_irqs = 11,x\n",
                  "t.conf:2: ban_irqs: invalid IRQ list \"11,x\" (expected IRQ numbers, e.g. 11,57,120-123)\n" },
                { "ban_irqs trailing comma", "[balance]\nban_irqs = 11,\n",
                  "t.conf:2: ban_irqs: invalid IRQ list \"11,\" (trailing comma)\n" },
                { "ban_irqs reversed range", "[balance]\nban_irqs = 5-3\n",
                  "t.conf:2: ban_irqs: invalid IRQ range in \"5-3\"\n" },
                { "ban_irqs beyond 32 bits", "[balance]\nban_irqs = 4294967296\n",
                  "t.conf:2: ban_irqs: invalid IRQ list \"4294967296\" (expected IRQ numbers, e.g. 11,57,120-123)\n" },
                { "ban_irqs too many", "[balance]\nban_irqs = 0-1024\n", "t.conf:2: ban_irqs: more than 1024 IRQs\n" },

                /* structure */
                { "unknown key", "[daemon]\nintervall = 2s\n", "t.conf:2: intervall: unknown key in [daemon]\n" },
                { "balance key in daemon", "[daemon]\nhot_enter = 80\n", "t.conf:2: hot_enter: unknown key in [daemon]\n" },
                { "unknown section", "[global]\ninterval = 2s\n", "t.conf:1: unknown section [global]\n" },
                { "section names are case sensitive", "[Daemon]\n", "t.conf:1: unknown section [Daemon]\n" },
                { "key outside a section", "# c\ninterval = 2s\n[daemon]\n",
                  "t.conf:2: interval: key outside of any section\n" },
                { "duplicate key", "[daemon]\ninterval = 2s\ninterval = 3s\n",
                  "t.conf:3: interval: duplicate key (first set on line 2)\n" },
                { "duplicate key after a bad first value", "[daemon]\ninterval = x\ninterval = 3s\n",
                  "t.conf:2: interval: invalid duration \"x\" (expected e.g. 500ms, 2s, 5min)\n"
                  "t.conf:3: interval: duplicate key (first set on line 2)\n" },
                { "duplicate [daemon]", "[daemon]\n[balance]\n[daemon]\n",
                  "t.conf:3: duplicate section [daemon] (first on line 1)\n" },
                { "duplicate [balance], key set in both", "[balance]\nmax_moves = 3\n[balance]\nmax_moves = 4\n",
                  "t.conf:3: duplicate section [balance] (first on line 1)\n"
                  "t.conf:4: max_moves: duplicate key (first set on line 2)\n" },
                { "duplicate [interface X]", "[interface eth*]\n[interface eth0]\n[interface eth*]\n",
                  "t.conf:3: duplicate section [interface eth*] (first on line 1)\n" },
                { "duplicate [worker X]",
                  "[worker a]\nmatch_name = a\npolicy = spread\n[worker a]\nmatch_name = b\npolicy = spread\n",
                  "t.conf:4: duplicate section [worker a] (first on line 1)\n" },
                { "missing ]", "[daemon\ninterval = 1ms\n", "t.conf:1: section header without closing ']'\n" },
                { "text after ]", "[daemon] x\n", "t.conf:1: unexpected text after ']' in section header\n" },
                { "daemon with a name", "[daemon main]\n", "t.conf:1: section [daemon] takes no name\n" },
                { "interface without a pattern", "[interface]\nmanage = no\n",
                  "t.conf:1: section [interface] needs a name pattern, e.g. [interface eth*]\n" },
                { "interface pattern with space", "[interface eth 0]\n",
                  "t.conf:1: interface pattern \"eth 0\" contains white space\n" },
                { "worker without a name", "[worker]\n", "t.conf:1: section [worker] needs a name, e.g. [worker nginx]\n" },
                { "line without =", "[daemon]\ninterval\n",
                  "t.conf:2: expected \"key = value\" or a [section] header, got \"interval\"\n" },
                { "= without key", "[daemon]\n= 2s\n", "t.conf:2: missing key before '='\n" },

                /* [interface] */
                { "interface bad bool", "[interface eth0]\nrps = maybe\n",
                  "t.conf:2: rps: invalid boolean \"maybe\" (expected yes or no)\n" },
                { "interface unknown key", "[interface eth0]\npolicy = spread\n",
                  "t.conf:2: policy: unknown key in [interface eth0]\n" },
                { "interface cpus all banned", "[balance]\nbanned_cpus = 0-1\n[interface eth0]\ncpus = 1\n",
                  "t.conf:3: cpus: every CPU of [interface eth0] is in banned_cpus\n" },
                { "interface cpus bad", "[interface eth0]\ncpus = one\n",
                  "t.conf:2: cpus: invalid CPU list \"one\" (expected e.g. 0-3,8)\n" },

                /* [worker] */
                { "worker without policy", "[worker web]\nmatch_name = nginx\n",
                  "t.conf:1: policy: missing in [worker web] (spread, colocate or avoid-net)\n" },
                { "worker without match", "[worker web]\npolicy = spread\n",
                  "t.conf:1: [worker web] needs at least one of match_name, match_cmdline, match_unit, pidfile\n" },
                { "worker with nothing", "[worker web]\n[daemon]\n",
                  "t.conf:1: [worker web] needs at least one of match_name, match_cmdline, match_unit, pidfile\n"
                  "t.conf:1: policy: missing in [worker web] (spread, colocate or avoid-net)\n" },
                { "worker bad policy", "[worker web]\nmatch_name = nginx\npolicy = pack\n",
                  "t.conf:3: policy: invalid policy \"pack\" (expected spread, colocate or avoid-net)\n" },
                { "worker regex with stacked repetitions", "[worker web]\nmatch_cmdline = a++++\npolicy = spread\n",
                  "t.conf:2: match_cmdline: invalid regular expression \"a++++\": a repetition (*, +, ?, {n}) "
                  "follows another\n" },
                { "worker bad regex", "[worker web]\nmatch_cmdline = (nginx\npolicy = spread\n",
                  "t.conf:2: match_cmdline: invalid regular expression \"(nginx\": Unmatched ( or \\(\n" },
                { "worker bad regex alone still counts as a match key", "[worker web]\nmatch_cmdline = a{2,1}\npolicy = spread\n",
                  "t.conf:2: match_cmdline: invalid regular expression \"a{2,1}\": Invalid content of \\{\\}\n" },
                { "worker comm too long", "[worker web]\nmatch_name = abcdefghijklmnop\npolicy = spread\n",
                  "t.conf:2: match_name: \"abcdefghijklmnop\" is longer than 15 characters, the most a process name "
                  "(comm) holds\n" },
                { "worker unit type without a cgroup", "[worker web]\nmatch_unit = multi-user.target\npolicy = spread\n",
                  "t.conf:2: match_unit: \"multi-user.target\" is not a unit name (expected e.g. nginx.service)\n" },
                { "worker unit bad chars", "[worker web]\nmatch_unit = ng/inx.service\npolicy = spread\n",
                  "t.conf:2: match_unit: \"ng/inx.service\" is not a unit name (expected e.g. nginx.service)\n" },
                { "worker pidfile relative", "[worker web]\npidfile = nginx.pid\npolicy = spread\n",
                  "t.conf:2: pidfile: \"nginx.pid\" is not an absolute path\n" },
                { "worker interface with spread", "[worker web]\nmatch_name = nginx\npolicy = spread\ninterface = eth0\n",
                  "t.conf:4: interface: only used with policy = colocate, not spread\n" },
                { "worker interface bad name", "[worker web]\nmatch_name = nginx\npolicy = colocate\ninterface = a/b\n",
                  "t.conf:4: interface: \"a/b\" is not an interface name\n" },
                { "worker interface too long", "[worker web]\nmatch_name = n\npolicy = colocate\ninterface = abcdefghijklmnop\n",
                  "t.conf:4: interface: \"abcdefghijklmnop\" is not an interface name\n" },
                { "worker empty match_name", "[worker web]\nmatch_name =\npolicy = spread\n",
                  "t.conf:2: match_name: empty value\n" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct config_errors errs = {};
                struct config c;
                char *got;
                int r;

                memset(&c, 0x5a, sizeof(c));
                r = parse_str(cases[i].text, &c, &errs);
                if (r != -EINVAL)
                        fail_msg("%s: parse gave %d, want -EINVAL", cases[i].what, r);
                /* *ret is untouched on failure. */
                for (size_t b = 0; b < sizeof(c); b++)
                        if (((unsigned char *) &c)[b] != 0x5a)
                                fail_msg("%s: *ret was written at byte %zu", cases[i].what, b);
                got = errors_text(&errs);
                if (strcmp(got, cases[i].want) != 0)
                        fail_msg("%s:\ngot:\n%swant:\n%s", cases[i].what, got, cases[i].want);
                free(got);
                config_errors_free(&errs);
                assert_int_equal(errs.n, 0);
        }
}

/* Lexical details: comments, blank lines, white space, quoting, CRLF, BOM. */
static void test_lexical(_unused_ void **state) {
        static const struct {
                const char *what, *text;
                size_t len; /* 0 = strlen */
                int r;
                uint64_t interval_usec;
                const char *state_dir;
        } cases[] = {
                { "comments and blanks", "# a\n; b\n\n   \n[daemon]\n  # indented\ninterval=5s\n", 0, 0, 5 * SEC, "/run/irqsteer" },
                { "white space around = and header", "  [ daemon ]  \n\tinterval \t=\t 5s  \n", 0, 0, 5 * SEC, "/run/irqsteer" },
                { "no final newline", "[daemon]\ninterval = 7s", 0, 0, 7 * SEC, "/run/irqsteer" },
                { "CRLF line ends", "[daemon]\r\ninterval = 7s\r\n", 0, 0, 7 * SEC, "/run/irqsteer" },
                { "UTF-8 BOM", "\xef\xbb\xbf[daemon]\ninterval = 7s\n", 0, 0, 7 * SEC, "/run/irqsteer" },
                { "quotes keep spaces", "[daemon]\nstate_dir = \"/run/a b \"\n", 0, 0, 2 * SEC, "/run/a b " },
                { "# inside a quoted value", "[daemon]\nstate_dir = \"/run/#x\"\n", 0, 0, 2 * SEC, "/run/#x" },
                { "# inside a bare value", "[daemon]\nstate_dir = /run/#x\n", 0, 0, 2 * SEC, "/run/#x" },
                { "= inside a value", "[daemon]\nstate_dir = /run/a=b\n", 0, 0, 2 * SEC, "/run/a=b" },
                { "empty file", "", 0, 0, 2 * SEC, "/run/irqsteer" },
                { "empty sections", "[daemon]\n[balance]\n", 0, 0, 2 * SEC, "/run/irqsteer" },
                { "length bounds the buffer", "[daemon]\ninterval = 7sXXX", 22, 0, 7 * SEC, "/run/irqsteer" },
                { "NUL byte", "[daemon]\ninter\0val = 7s\n", 24, -EINVAL, 0, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct config_errors errs = {};
                struct config c;
                size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
                int r = config_parse("t.conf", cases[i].text, len, &c, &errs);

                if (r != cases[i].r) {
                        char *e = errors_text(&errs);
                        fail_msg("%s: parse gave %d, want %d: %s", cases[i].what, r, cases[i].r, e);
                }
                if (r == 0) {
                        if (c.interval_usec != cases[i].interval_usec)
                                fail_msg("%s: interval %llu", cases[i].what, (unsigned long long) c.interval_usec);
                        if (strcmp(c.state_dir, cases[i].state_dir) != 0)
                                fail_msg("%s: state_dir '%s'", cases[i].what, c.state_dir);
                        config_free(&c);
                } else {
                        char *e = errors_text(&errs);
                        assert_string_equal(e, "t.conf:2: line contains a NUL byte\n");
                        free(e);
                }
                config_errors_free(&errs);
        }
}

/* Many problems in one file are all reported, in line order, in one pass. */
static void test_many_errors_golden(_unused_ void **state) {
        char path[4096];
        size_t len, wlen;
        char *text = read_all(fixture_path("config/bad-many.conf", path, sizeof(path)), &len);
        char *want = read_all(fixture_path("config/bad-many.expected", path, sizeof(path)), &wlen);
        struct config_errors errs = {};
        struct config c;
        char *got;

        assert_int_equal(config_parse("bad-many.conf", text, len, &c, &errs), -EINVAL);
        got = errors_text(&errs);
        if (strcmp(got, want) != 0)
                fail_msg("got:\n%swant:\n%s", got, want);
        /* More than a handful, so "collect everything" is really exercised. */
        assert_true(errs.n >= 10);
        free(got);
        config_errors_free(&errs);

        /* Through config_load the messages carry the path as given. */
        fixture_path("config/bad-many.conf", path, sizeof(path));
        memset(&c, 0x5a, sizeof(c));
        assert_int_equal(config_load(path, true, &c, &errs), -EINVAL);
        assert_int_equal(((unsigned char *) &c)[sizeof(c) - 1], 0x5a);
        assert_true(errs.n >= 10);
        assert_string_equal(errs.v[0].file, path);
        assert_int_equal(errs.v[0].line, 2);
        assert_string_equal(errs.v[0].key, "interval");
        assert_string_equal(errs.v[0].message, "key outside of any section");
        free(text);
        free(want);
        config_errors_free(&errs);
}

/* A runaway file (not a config at all) is capped, not listed line by line. */
static void test_error_cap(_unused_ void **state) {
        struct config_errors errs = {};
        struct config c;
        size_t n = 500;
        char *text = malloc(n * 8 + 1), *p = text;
        char *out;

        assert_non_null(text);
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "garbage\n");
        assert_int_equal(config_parse("t.conf", text, strlen(text), &c, &errs), -EINVAL);
        assert_int_equal(errs.n, 101);
        assert_string_equal(errs.v[100].message, "too many errors, not listing further ones");
        assert_int_equal(errs.v[100].line, 101);
        out = errors_text(&errs);
        assert_non_null(strstr(out, "t.conf:1: expected \"key = value\" or a [section] header, got \"garbage\"\n"));
        free(out);
        free(text);
        config_errors_free(&errs);
}

/* Errors are appended to what the caller's list already holds, and a NULL
 * list is allowed (the caller only wants the verdict). */
/* ban_irqs: numbers and ranges, sorted and merged; empty is none. */
static void test_ban_irqs(_unused_ void **state) {
        static const char text[] = "[balance]\nban_irqs = 57,11,120-122,11\n";
        struct config c;
        struct config_errors errs = { 0 };

        assert_int_equal(config_parse("t.conf", text, strlen(text), &c, &errs), 0);
        assert_int_equal(c.ban_irqs.n, 5);
        assert_int_equal(c.ban_irqs.v[0], 11);
        assert_int_equal(c.ban_irqs.v[1], 57);
        assert_int_equal(c.ban_irqs.v[4], 122);
        assert_true(config_irq_banned(&c, 11) && config_irq_banned(&c, 121) && config_irq_banned(&c, 57));
        assert_false(config_irq_banned(&c, 12) || config_irq_banned(&c, 123) || config_irq_banned(&c, 0));
        config_free(&c);
        assert_int_equal(config_parse("t.conf", "[balance]\nban_irqs =\n", 21, &c, &errs), 0);
        assert_int_equal(c.ban_irqs.n, 0);
        config_free(&c);
        config_errors_free(&errs);
}

static void test_errors_append(_unused_ void **state) {
        struct config_errors errs = {};
        struct config c;
        char *out;

        assert_int_equal(parse_str("[x]\n", &c, &errs), -EINVAL);
        assert_int_equal(config_parse("u.conf", "[y]\n", 4, &c, &errs), -EINVAL);
        assert_int_equal(errs.n, 2);
        out = errors_text(&errs);
        assert_string_equal(out, "t.conf:1: unknown section [x]\nu.conf:1: unknown section [y]\n");
        free(out);
        /* A good parse leaves an existing list alone and succeeds. */
        assert_int_equal(parse_str("[daemon]\n", &c, &errs), 0);
        assert_int_equal(errs.n, 2);
        config_free(&c);
        config_errors_free(&errs);

        assert_int_equal(parse_str("[x]\n", &c, NULL), -EINVAL);
        assert_int_equal(parse_str("[daemon]\n", &c, NULL), 0);
        config_free(&c);
}

static void test_interface_for(_unused_ void **state) {
        static const char text[] = "[interface eth0]\nmanage = no\n"
                                   "[interface eth*]\ncpus = 0-1\n"
                                   "[interface ens[12]f?]\nrps = no\n"
                                   "[interface *]\nxps = no\n";
        static const struct {
                const char *what, *ifname;
                int section; /* index, -1 = NULL */
        } cases[] = {
                { "exact name before a glob that also matches", "eth0", 0 },
                { "glob", "eth1", 1 },
                { "glob matches longer names", "eth10", 1 },
                { "bracket glob (header closes at the last ])", "ens1f0", 2 },
                { "bracket glob other", "ens2f1", 2 },
                { "bracket glob miss falls to catch-all", "ens3f0", 3 },
                { "catch-all", "lo", 3 },
        };
        struct config c;

        assert_int_equal(parse_str(text, &c, NULL), 0);
        assert_int_equal(c.n_interfaces, 4);
        assert_string_equal(c.interfaces[2].match, "ens[12]f?");
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const struct config_interface *ci = config_interface_for(&c, cases[i].ifname);
                const struct config_interface *want = cases[i].section < 0 ? NULL : &c.interfaces[cases[i].section];

                if (ci != want)
                        fail_msg("%s: %s matched section %ld", cases[i].what, cases[i].ifname,
                                 ci ? (long) (ci - c.interfaces) : -1L);
        }
        /* Inherit unless set; manage defaults to yes. */
        assert_false(c.interfaces[0].manage);
        assert_int_equal(c.interfaces[0].rps, TRI_INHERIT);
        assert_true(c.interfaces[1].manage);
        assert_int_equal(c.interfaces[2].rps, TRI_NO);
        assert_int_equal(c.interfaces[2].xps, TRI_INHERIT);
        assert_int_equal(c.interfaces[3].line, 7);
        config_free(&c);

        assert_int_equal(parse_str("[interface eth*]\n", &c, NULL), 0);
        assert_null(config_interface_for(&c, "ens1"));
        assert_null(config_interface_for(&c, NULL));
        config_free(&c);
        assert_int_equal(config_defaults(&c), 0);
        assert_null(config_interface_for(&c, "eth0"));
        config_free(&c);
}

static void test_policy_strings(_unused_ void **state) {
        static const struct {
                const char *what, *s;
                enum worker_policy p;
        } cases[] = {
                { "spread", "spread", WORKER_SPREAD },
                { "colocate", "colocate", WORKER_COLOCATE },
                { "avoid-net", "avoid-net", WORKER_AVOID_NET },
                { "underscore is not dash", "avoid_net", WORKER_POLICY_INVALID },
                { "case sensitive", "Spread", WORKER_POLICY_INVALID },
                { "empty", "", WORKER_POLICY_INVALID },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                enum worker_policy p = worker_policy_from_string(cases[i].s);

                if (p != cases[i].p)
                        fail_msg("%s: got %d", cases[i].what, p);
                if (p != WORKER_POLICY_INVALID)
                        assert_string_equal(worker_policy_to_string(p), cases[i].s);
        }
        assert_int_equal(worker_policy_from_string(NULL), WORKER_POLICY_INVALID);
        assert_null(worker_policy_to_string(WORKER_POLICY_MAX));
        assert_null(worker_policy_to_string(WORKER_POLICY_INVALID));
}

static void test_load_missing(_unused_ void **state) {
        static const char *missing = "/nonexistent-irqsteer-test/irqsteer.conf";
        struct config_errors errs = {};
        struct config c, d;
        const char *what = NULL;
        char *out;

        assert_int_equal(config_load(missing, true, &c, &errs), 0);
        assert_int_equal(errs.n, 0);
        assert_null(c.path);
        assert_int_equal(config_defaults(&d), 0);
        if (!config_same(&c, &d, &what))
                fail_msg("missing file: %s differs from the defaults", what);
        config_free(&c);
        config_free(&d);

        memset(&c, 0x5a, sizeof(c));
        assert_int_equal(config_load(missing, false, &c, &errs), -ENOENT);
        assert_int_equal(((unsigned char *) &c)[0], 0x5a);
        out = errors_text(&errs);
        assert_string_equal(out,
                            "/nonexistent-irqsteer-test/irqsteer.conf: cannot read: No such file or directory\n");
        free(out);
        config_errors_free(&errs);

        /* A directory is not a config file, allow_missing or not. */
        assert_int_equal(config_load("/", true, &c, &errs), -EISDIR);
        assert_int_equal(errs.n, 1);
        config_errors_free(&errs);
}

/* Reads the shipped example files under tests/fixtures/config (the man
 * page's EXAMPLES) and checks what each one sets. */
static void test_load_examples(_unused_ void **state) {
        char path[4096];
        struct config_errors errs = {};
        struct config c;
        const struct config_interface *ci;
        char buf[64];

        /* LVS director */
        fixture_path("config/lvs.conf", path, sizeof(path));
        if (config_load(path, false, &c, &errs) != 0) {
                char *e = errors_text(&errs);
                fail_msg("lvs.conf: %s", e);
        }
        assert_string_equal(c.path, path);
        assert_int_equal(c.interval_usec, 1 * SEC);
        assert_true(c.hot_enter == 0.70);
        assert_true(c.hot_exit == 0.50);
        assert_int_equal(c.max_moves, 4);
        assert_int_equal(c.n_workers, 0);
        assert_int_equal(cpuset_format_list(&c.banned_cpus, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0");
        assert_false(c.rfs);
        assert_null(config_interface_for(&c, "ens1f1"));
        ci = config_interface_for(&c, "eno1");
        assert_non_null(ci);
        assert_false(ci->manage);
        assert_null(config_interface_for(&c, "lo"));
        config_free(&c);

        /* memcached, single-queue NIC */
        fixture_path("config/memcached.conf", path, sizeof(path));
        if (config_load(path, false, &c, &errs) != 0) {
                char *e = errors_text(&errs);
                fail_msg("memcached.conf: %s", e);
        }
        assert_true(c.single_queue_rps);
        assert_true(c.rps_exclude_irq_rate == 10000);
        assert_int_equal(c.n_workers, 1);
        assert_string_equal(c.workers[0].name, "memcached");
        assert_string_equal(c.workers[0].match_unit, "memcached.service");
        assert_int_equal(c.workers[0].policy, WORKER_AVOID_NET);
        config_free(&c);

        /* nginx, colocated workers */
        fixture_path("config/nginx.conf", path, sizeof(path));
        if (config_load(path, false, &c, &errs) != 0) {
                char *e = errors_text(&errs);
                fail_msg("nginx.conf: %s", e);
        }
        assert_int_equal(c.n_workers, 1);
        assert_null(c.workers[0].match_name);
        assert_string_equal(c.workers[0].match_unit, "nginx.service");
        assert_string_equal(c.workers[0].match_cmdline, "^nginx: worker process");
        assert_null(c.workers[0].pidfile);
        assert_int_equal(c.workers[0].policy, WORKER_COLOCATE);
        assert_string_equal(c.workers[0].interface, "eth0");
        assert_int_equal(c.n_interfaces, 1);
        assert_int_equal(cpuset_format_list(&c.interfaces[0].cpus, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0-3");
        assert_int_equal(c.interfaces[0].rfs, TRI_YES);
        assert_int_equal(c.interfaces[0].rps, TRI_INHERIT);
        config_free(&c);
        assert_int_equal(errs.n, 0);
}

/* The daemon's reload, as a caller writes it: parse into a fresh struct and
 * swap only on success.  A bad file must leave the running config as it was,
 * byte for byte, and must not write the fresh struct either. */
static void test_reload_keeps_old(_unused_ void **state) {
        static const char good[] = "[daemon]\ninterval = 1s\nstate_dir = /run/a\n"
                                   "[balance]\nhot_enter = 90\nbanned_cpus = 3\n"
                                   "[interface eth*]\ncpus = 0-1\n"
                                   "[worker w]\nmatch_name = w\npolicy = spread\n";
        static const char bad[] = "[daemon]\ninterval = 3s\nstate_dir = /run/b\n"
                                  "[balance]\nhot_enter = 95\nbanned_cpus = 5\nmax_moves = 0\n"
                                  "[interface ens*]\n"
                                  "[worker w]\nmatch_name = x\npolicy = colocate\n";
        struct config cur, next, snap_bytes;
        struct config_errors errs = {};
        char *state_dir_copy, *match_copy, *worker_copy;
        char buf[64];

        assert_int_equal(parse_str(good, &cur, NULL), 0);
        memcpy(&snap_bytes, &cur, sizeof(cur));
        state_dir_copy = strdup(cur.state_dir);
        match_copy = strdup(cur.interfaces[0].match);
        worker_copy = strdup(cur.workers[0].match_name);

        memset(&next, 0xa5, sizeof(next));
        if (parse_str(bad, &next, &errs) == 0) {
                config_free(&cur);
                cur = next; /* the swap that must not happen */
        }
        assert_int_equal(errs.n, 1);
        for (size_t b = 0; b < sizeof(next); b++)
                if (((unsigned char *) &next)[b] != 0xa5)
                        fail_msg("the fresh struct was written at byte %zu", b);
        assert_memory_equal(&cur, &snap_bytes, sizeof(cur));
        assert_string_equal(cur.state_dir, state_dir_copy);
        assert_string_equal(cur.interfaces[0].match, match_copy);
        assert_string_equal(cur.workers[0].match_name, worker_copy);
        assert_int_equal(cur.interval_usec, 1 * SEC);
        assert_true(cur.hot_enter == 0.90);
        assert_int_equal(cpuset_format_list(&cur.banned_cpus, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "3");
        config_errors_free(&errs);

        /* And a good reload does swap. */
        assert_int_equal(parse_str("[daemon]\ninterval = 4s\n", &next, &errs), 0);
        config_free(&cur);
        cur = next;
        assert_int_equal(cur.interval_usec, 4 * SEC);
        assert_int_equal(cur.n_workers, 0);
        config_free(&cur);
        free(state_dir_copy);
        free(match_copy);
        free(worker_copy);
}

/* systemd/irqsteer.conf.example has every key commented out with its
 * default: it parses to the defaults as shipped, and still does with every
 * "#key = value" line of [daemon] and [balance] uncommented.  This keeps the
 * example (and so the man page, which shows the same defaults) honest. */
static void test_example_file(_unused_ void **state) {
        const char *src = getenv("IRQSTEER_SRCDIR");
        char path[4096];
        size_t len;
        char *text, *out, *o, *line, *save = NULL;
        struct config c, d;
        struct config_errors errs = {};
        const char *what = NULL;
        unsigned uncommented = 0;
        bool stop = false;

        snprintf(path, sizeof(path), "%s/systemd/irqsteer.conf.example", src ? src : ".");
        text = read_all(path, &len);
        assert_int_equal(config_defaults(&d), 0);

        if (config_parse("example", text, len, &c, &errs) != 0) {
                char *e = errors_text(&errs);
                fail_msg("example as shipped: %s", e);
        }
        if (!config_same(&c, &d, &what))
                fail_msg("example as shipped: %s differs from the defaults", what);
        config_free(&c);

        out = o = calloc(1, len + 1);
        assert_non_null(out);
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (strncmp(line, "#[", 2) == 0)
                        stop = true; /* commented-out example sections follow */
                if (!stop && line[0] == '#') {
                        size_t n = strspn(line + 1, "abcdefghijklmnopqrstuvwxyz_");

                        if (n > 0 && strncmp(line + 1 + n, " =", 2) == 0) {
                                line++;
                                uncommented++;
                        }
                }
                o += sprintf(o, "%s\n", line);
        }
        /* All 10 [daemon] and 27 [balance] keys. */
        assert_int_equal(uncommented, 37);
        if (config_parse("example", out, strlen(out), &c, &errs) != 0) {
                char *e = errors_text(&errs);
                fail_msg("example uncommented: %s\n%s", e, out);
        }
        if (!config_same(&c, &d, &what))
                fail_msg("example uncommented: %s differs from the defaults", what);
        config_free(&c);
        config_free(&d);
        free(out);
        free(text);
}

/* config_format() writes what the parser reads: the dump of a configuration
 * parses back to the same configuration, every key included. */
static void test_format_roundtrip(_unused_ void **state) {
        static const struct {
                const char *what;
                const char *text;
                unsigned keys;           /* "key = value" lines in the dump */
        } cases[] = {
                { "defaults: 9 [daemon] keys with a value and all 27 [balance] keys", "", 36 },
                { "every type set, with sections",
                  "[daemon]\ninterval = 500ms\nirq_rate_interval = 0\nstate_dir = /run/x\nlog_level = err\n"
                  "restore_on_exit = no\ndry_run = yes\n"
                  "[balance]\nhot_enter = 85%\nhot_exit = 62.5%\nhot_samples = 3\nsmoothing = 0.35\n"
                  "min_dwell = 90s\nmax_dwell = 2h\nexternal_hold = 30min\nrps_sock_flow_entries = 0\nbanned_cpus = 2-3,7\nban_irqs = 11,57,120-121\nother_irqs = no\n"
                  "balance_ratio = 0\nbalance_floor = 20%\nrps_exclude_irq_rate = 1500.5\n"
                  "[interface eth*]\nmanage = no\n"
                  "[interface eno1]\ncpus = 0-3\nrps = yes\nxps = no\ntakeover = yes\n"
                  "[worker mc]\nmatch_name = memcached\npolicy = colocate\ninterface = eno1\ncpus = 4-7\n"
                  "[worker web]\nmatch_cmdline = ^nginx: worker\nmatch_unit = nginx.service\n"
                  "pidfile = /run/nginx.pid\npolicy = avoid-net\n",
                  36 + 2 + 5 + 4 + 5 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct config c, d;
                struct config_errors errs = {};
                const char *what = NULL;
                char *out = NULL, *out2 = NULL;
                size_t len = 0, len2 = 0;
                unsigned keys = 0;
                FILE *f;

                print_message("case: %s\n", cases[i].what);
                if (config_parse("t", cases[i].text, strlen(cases[i].text), &c, &errs) != 0)
                        fail_msg("input: %s", errors_text(&errs));
                f = open_memstream(&out, &len);
                assert_non_null(f);
                config_format(f, &c);
                assert_int_equal(fclose(f), 0);
                for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                        if (*l != '[' && *l != '\n' && strstr(l, " =") && strstr(l, " =") < strchr(l, '\n'))
                                keys++;
                if (config_parse("dump", out, len, &d, &errs) != 0)
                        fail_msg("dump does not parse: %s\n%s", errors_text(&errs), out);
                if (!config_same(&c, &d, &what))
                        fail_msg("%s differs after the round trip:\n%s", what, out);
                f = open_memstream(&out2, &len2);
                assert_non_null(f);
                config_format(f, &d);
                assert_int_equal(fclose(f), 0);
                assert_string_equal(out, out2);
                assert_int_equal(keys, cases[i].keys);
                config_free(&c);
                config_free(&d);
                free(out);
                free(out2);
        }
}

/* The longest CPU list a key can hold (two CPUs of every three up to
 * CPUSET_MAX, the most commas and ranges) is dumped whole and parses back. */
static void test_format_longest_list(_unused_ void **state) {
        char *text = malloc(CPUSET_LIST_MAX + 64), *out = NULL, *p;
        struct config c, d;
        struct config_errors errs = {};
        const char *what = NULL;
        size_t len = 0;
        FILE *f;

        assert_non_null(text);
        p = text + sprintf(text, "[balance]\nbanned_cpus = ");
        for (int cpu = 0; cpu + 1 < CPUSET_MAX; cpu += 3)
                p += sprintf(p, "%s%d-%d", cpu ? "," : "", cpu, cpu + 1);
        strcpy(p, "\n");
        if (config_parse("t", text, strlen(text), &c, &errs) != 0)
                fail_msg("input: %s", errors_text(&errs));
        f = open_memstream(&out, &len);
        assert_non_null(f);
        config_format(f, &c);
        assert_int_equal(fclose(f), 0);
        assert_non_null(strstr(out, strchr(text, '\n') + 1));
        if (config_parse("dump", out, len, &d, &errs) != 0)
                fail_msg("dump does not parse: %s", errors_text(&errs));
        if (!config_same(&c, &d, &what))
                fail_msg("%s differs after the round trip", what);
        config_free(&c);
        config_free(&d);
        free(out);
        free(text);
}

/* A scratch directory holding irqsteer.conf and irqsteer.conf.d/. */
struct dropin_dir {
        char base[64];
        char conf[128];
        char dir[128];
};

static void dropin_setup(struct dropin_dir *t, const char *main_text) {
        snprintf(t->base, sizeof(t->base), "/tmp/irqsteer-test-dropin.XXXXXX");
        assert_non_null(mkdtemp(t->base));
        snprintf(t->conf, sizeof(t->conf), "%s/irqsteer.conf", t->base);
        snprintf(t->dir, sizeof(t->dir), "%s/irqsteer.conf.d", t->base);
        if (main_text)
                test_write_file(t->base, "irqsteer.conf", main_text);
        assert_int_equal(mkdir(t->dir, 0755), 0);
}

static void dropin_cleanup(struct dropin_dir *t) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->base);
        assert_int_equal(system(cmd), 0);
}

/* Loads t->conf, failing the test with the error list on a problem. */
static void dropin_load_ok(const struct dropin_dir *t, bool allow_missing, struct config *c) {
        struct config_errors errs = {};

        if (config_load(t->conf, allow_missing, c, &errs) != 0)
                fail_msg("load: %s", errors_text(&errs));
        assert_int_equal(errs.n, 0);
}

/* PATH.d/NAME.conf read after PATH in strcmp order, the later value of a
 * key winning; files of other names ignored. */
static void test_dropin_order(_unused_ void **state) {
        struct dropin_dir t;
        struct config c;
        char buf[256];

        dropin_setup(&t, "[daemon]\ninterval = 2s\nlog_level = err\n[balance]\nhot_enter = 70%\nmax_moves = 3\n"
                         "banned_cpus = 0-1\n");
        /* "10-" sorts before "9-" (strcmp, as systemd sorts): 9-late is last */
        test_write_file(t.dir, "10-early.conf", "[daemon]\ninterval = 1s\n[balance]\nmax_moves = 5\n");
        test_write_file(t.dir, "9-late.conf", "[daemon]\ninterval = 3s\n[balance]\nbanned_cpus =\n");
        /* none of these is a drop-in: read, each would change the result or fail */
        test_write_file(t.dir, "50-x.conf.bak", "[daemon]\ninterval = 9s\n");
        test_write_file(t.dir, "README", "not a config\n");
        test_write_file(t.dir, ".60-hidden.conf", "[daemon]\nbogus = 1\n");
        test_write_file(t.dir, "70-x.conf~", "[daemon]\nbogus = 1\n");
        test_write_file(t.dir, ".conf", "[daemon]\nbogus = 1\n");
        snprintf(buf, sizeof(buf), "%s/80-sub.conf", t.dir);
        assert_int_equal(mkdir(buf, 0755), 0);
        /* a link to /dev/null masks a drop-in, as with systemd */
        snprintf(buf, sizeof(buf), "%s/90-masked.conf", t.dir);
        assert_int_equal(symlink("/dev/null", buf), 0);

        dropin_load_ok(&t, false, &c);
        assert_int_equal(c.interval_usec, 3 * SEC);     /* 9-late.conf */
        assert_int_equal(c.max_moves, 5);               /* 10-early.conf */
        assert_int_equal(c.log_level, LOG_ERR);         /* the main file only */
        assert_true(c.hot_enter == 0.70);
        assert_true(cpuset_empty(&c.banned_cpus));      /* emptied by 9-late.conf */
        assert_string_equal(c.path, t.conf);
        assert_int_equal(c.n_dropins, 2);
        assert_string_equal(strrchr(c.dropins[0], '/') + 1, "10-early.conf");
        assert_string_equal(strrchr(c.dropins[1], '/') + 1, "9-late.conf");
        assert_int_equal(strncmp(c.dropins[0], t.dir, strlen(t.dir)), 0);
        config_free(&c);
        dropin_cleanup(&t);
}

/* A section named in several files is one section; a section a later file
 * adds goes before the earlier files' ones (the first match wins). */
static void test_dropin_sections(_unused_ void **state) {
        struct dropin_dir t;
        const struct config_interface *ci;
        struct config c;
        char buf[64];

        dropin_setup(&t, "[interface eth*]\ncpus = 0-3\nrps = no\n"
                         "[worker web]\nmatch_name = nginx\npolicy = colocate\ninterface = eth0\n");
        test_write_file(t.dir, "host.conf",
                        "[interface eth*]\nrps = yes\n"
                        "[interface eth1]\nmanage = no\n"
                        "[worker web]\ncpus = 4-7\n"
                        "[worker cache]\nmatch_unit = memcached.service\npolicy = avoid-net\n");
        dropin_load_ok(&t, false, &c);

        assert_int_equal(c.n_interfaces, 2);
        ci = config_interface_for(&c, "eth1");
        assert_non_null(ci);
        assert_string_equal(ci->match, "eth1");
        assert_false(ci->manage);
        assert_string_equal(strrchr(ci->file, '/') + 1, "host.conf");
        assert_int_equal(ci->line, 3);
        ci = config_interface_for(&c, "eth0");
        assert_non_null(ci);
        assert_string_equal(ci->match, "eth*");
        assert_int_equal(cpuset_format_list(&ci->cpus, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0-3");                /* the main file's */
        assert_int_equal(ci->rps, TRI_YES);             /* the drop-in's */
        assert_ptr_equal(ci->file, c.path);
        assert_int_equal(ci->line, 1);

        assert_int_equal(c.n_workers, 2);
        assert_string_equal(c.workers[0].name, "cache");
        assert_string_equal(c.workers[1].name, "web");
        assert_string_equal(c.workers[1].match_name, "nginx");
        assert_int_equal(c.workers[1].policy, WORKER_COLOCATE);
        assert_int_equal(cpuset_format_list(&c.workers[1].cpus, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "4-7");
        config_free(&c);
        dropin_cleanup(&t);
}

/* Every problem of every file as FILE:LINE, the drop-in's own path; main
 * file first, then the drop-ins in order; checks across keys on the merged
 * values, at the line that set the value. */
static void test_dropin_errors(_unused_ void **state) {
        struct config_errors errs = {};
        struct dropin_dir t;
        struct config c;
        char *got, want[2048];

        dropin_setup(&t, "[balance]\nhot_exit = 70%\nmax_moves = 0\n[worker w]\nmatch_name = w\n");
        test_write_file(t.dir, "a.conf", "[balance]\nhot_samples = 0\nhot_samples = 3\n");
        test_write_file(t.dir, "b.conf", "\n[balance]\nhot_enter = 65%\n[daemon]\ncolour = blue\n");
        test_write_file(t.dir, "c.conf", "[balance]\nmax_moves = 2\n");
        memset(&c, 0x5a, sizeof(c));
        assert_int_equal(config_load(t.conf, false, &c, &errs), -EINVAL);
        assert_int_equal(((unsigned char *) &c)[0], 0x5a);
        got = errors_text(&errs);
        snprintf(want, sizeof(want),
                 "%s:3: max_moves: \"0\" is out of range (1..1000)\n"
                 "%s:4: policy: missing in [worker w] (spread, colocate or avoid-net)\n"
                 "%s/a.conf:2: hot_samples: \"0\" is out of range (1..100)\n"
                 "%s/a.conf:3: hot_samples: duplicate key (first set on line 2)\n"
                 "%s/b.conf:3: hot_exit: 70%% must be below hot_enter (65%%)\n"
                 "%s/b.conf:5: colour: unknown key in [daemon]\n",
                 t.conf, t.conf, t.dir, t.dir, t.dir, t.dir);
        if (strcmp(got, want) != 0)
                fail_msg("got:\n%swant:\n%s", got, want);
        free(got);
        config_errors_free(&errs);
        dropin_cleanup(&t);
}

/* No PATH.d is no drop-ins; a PATH.d that cannot be listed is an error,
 * not a silent "none"; drop-ins apply on top of the defaults when the main
 * file may be missing and is. */
static void test_dropin_dir(_unused_ void **state) {
        struct config_errors errs = {};
        struct dropin_dir t;
        struct config c;
        char *got, want[512];

        dropin_setup(&t, "[daemon]\ninterval = 5s\n");
        assert_int_equal(rmdir(t.dir), 0);
        dropin_load_ok(&t, false, &c);
        assert_int_equal(c.interval_usec, 5 * SEC);
        assert_int_equal(c.n_dropins, 0);
        config_free(&c);

        /* a file where the directory should be */
        test_write_file(t.base, "irqsteer.conf.d", "[daemon]\ninterval = 1s\n");
        assert_int_equal(config_load(t.conf, false, &c, &errs), -EINVAL);
        got = errors_text(&errs);
        snprintf(want, sizeof(want), "%s: cannot read the drop-in directory: Not a directory\n", t.dir);
        assert_string_equal(got, want);
        free(got);
        config_errors_free(&errs);
        assert_int_equal(unlink(t.dir), 0);

        /* no main file: the defaults, then the drop-ins */
        assert_int_equal(unlink(t.conf), 0);
        assert_int_equal(mkdir(t.dir, 0755), 0);
        test_write_file(t.dir, "host.conf", "[balance]\nbanned_cpus = 3\n");
        dropin_load_ok(&t, true, &c);
        assert_null(c.path);
        assert_int_equal(c.n_dropins, 1);
        assert_true(cpuset_isset(&c.banned_cpus, 3));
        assert_int_equal(c.interval_usec, 2 * SEC);
        config_free(&c);
        assert_int_equal(config_load(t.conf, false, &c, &errs), -ENOENT);
        config_errors_free(&errs);

        /* a dangling link named *.conf is a drop-in that cannot be read */
        snprintf(want, sizeof(want), "%s/zz.conf", t.dir);
        assert_int_equal(symlink("/nonexistent-irqsteer-test", want), 0);
        assert_int_equal(config_load(t.conf, true, &c, &errs), -EINVAL);
        got = errors_text(&errs);
        assert_non_null(strstr(got, "/zz.conf: cannot read: No such file or directory\n"));
        free(got);
        config_errors_free(&errs);
        dropin_cleanup(&t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_metrics_file_off),
                cmocka_unit_test(test_good_values),
                cmocka_unit_test(test_bad),
                cmocka_unit_test(test_lexical),
                cmocka_unit_test(test_many_errors_golden),
                cmocka_unit_test(test_error_cap),
                cmocka_unit_test(test_errors_append),
                cmocka_unit_test(test_ban_irqs),
                cmocka_unit_test(test_interface_for),
                cmocka_unit_test(test_policy_strings),
                cmocka_unit_test(test_load_missing),
                cmocka_unit_test(test_load_examples),
                cmocka_unit_test(test_reload_keeps_old),
                cmocka_unit_test(test_example_file),
                cmocka_unit_test(test_format_roundtrip),
                cmocka_unit_test(test_format_longest_list),
                cmocka_unit_test(test_dropin_order),
                cmocka_unit_test(test_dropin_sections),
                cmocka_unit_test(test_dropin_errors),
                cmocka_unit_test(test_dropin_dir),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
