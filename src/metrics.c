/* The Prometheus metrics (metrics.h): the text and its files. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "problem.h"
#include "report.h"
#include "state.h"
#include "util.h"

static const char *const result_names[REPORT_RESULT_MAX] = {
        [REPORT_RESULT_DONE] = "done",
        [REPORT_RESULT_DRY_RUN] = "dry_run",
        [REPORT_RESULT_READBACK_DIFFERS] = "readback_differs",
        [REPORT_RESULT_FAILED] = "failed",
};

static const char *const restore_names[REPORT_RESTORE_MAX] = {
        [REPORT_RESTORE_RESTORED] = "restored",
        [REPORT_RESTORE_UNCHANGED] = "unchanged",
        [REPORT_RESTORE_EXTERNAL] = "external",
        [REPORT_RESTORE_GONE] = "gone",
        [REPORT_RESTORE_FAILED] = "failed",
        [REPORT_RESTORE_CORRUPT] = "corrupt",
};

static void family(FILE *f, const char *name, const char *type, const char *help) {
        /* help texts are ours: no backslash or newline to escape */
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A value in 6 decimals as Go's ParseFloat reads it, without printf:
 * thousands of lines a tick on a big host. */
static void value(FILE *f, double v) {
        char buf[40];
        size_t n;

        if (isnan(v))
                fputs(" NaN\n", f);
        else if (isinf(v))
                fputs(v > 0 ? " +Inf\n" : " -Inf\n", f);
        else {
                buf[0] = ' ';
                n = 1 + util_format_fixed6(buf + 1, v);
                buf[n++] = '\n';
                fwrite(buf, 1, n, f);
        }
}

/* One series with one label: name{label="value"} v. */
static void labelled(FILE *f, const char *name, const char *label, const char *value, uint64_t v) {
        fprintf(f, "%s{%s=\"%s\"} %" PRIu64 "\n", name, label, value, v);
}

/* A family of one series without labels. */
static void single_u(FILE *f, const char *name, const char *type, const char *help, uint64_t v) {
        family(f, name, type, help);
        fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void single_d(FILE *f, const char *name, const char *type, const char *help, double v) {
        family(f, name, type, help);
        fputs(name, f);
        value(f, v);
}

static bool cpu_shown(const struct sample_cpu *c) {
        return c->valid && !c->offline;
}

/* name{cpu="N"} v or name{cpu="N",kind="K"} v, one write without printf. */
static void cpu_series(FILE *f, const char *name, int cpu, const char *kind, double v) {
        char line[256], num[24] = "", *e;

        /* names and kinds are ours, and short */
        e = stpcpy(stpcpy(line, name), "{cpu=\"");
        e = stpcpy(e, util_format_u64(num + sizeof(num) - 1, (uint64_t) cpu));
        if (kind)
                e = stpcpy(stpcpy(e, "\",kind=\""), kind);
        e = stpcpy(e, "\"}");
        if (isfinite(v)) {
                *e++ = ' ';
                e += util_format_fixed6(e, v);
                *e++ = '\n';
        }
        fwrite(line, 1, (size_t) (e - line), f);
        if (!isfinite(v))
                value(f, v);
}

static double cpu_load(const struct sample_cpu *c) {
        return c->irq + c->softirq;
}

/* Busiest first (in rates l), then by CPU number. */
static int cmp_load(const void *a, const void *b, void *l) {
        const struct sample_rates *r = l;
        int x = *(const int *) a, y = *(const int *) b;
        double lx = cpu_load(&r->cpus[x]), ly = cpu_load(&r->cpus[y]);

        if (lx != ly)
                return lx > ly ? -1 : 1;
        return x < y ? -1 : x > y;
}

/* Which CPUs get per-CPU series: all up to METRICS_CPUS_MAX, else the hot
 * ones, then the busiest.  -ENOMEM. */
static int cpus_shown(const struct report_snapshot *s, bool **ret) {
        const struct sample_rates *l = s->load;
        _cleanup_(freep) int *order = NULL;
        size_t n = 0, picked = 0;
        bool *shown;

        *ret = NULL;
        if (!l || l->max_cpu < 0)
                return 0;
        shown = calloc((size_t) l->max_cpu + 1, sizeof(*shown));
        order = malloc(((size_t) l->max_cpu + 1) * sizeof(*order));
        if (!shown || !order) {
                free(shown);
                return -ENOMEM;
        }
        for (int cpu = 0; cpu <= l->max_cpu; cpu++)
                if (cpu_shown(&l->cpus[cpu]))
                        order[n++] = cpu;
        if (n > METRICS_CPUS_MAX) {
                qsort_r(order, n, sizeof(*order), cmp_load, (void *) l);
                for (size_t i = 0; s->policy && i < n && picked < METRICS_CPUS_MAX; i++)
                        if (cpuset_isset(&s->policy->hot, order[i])) {
                                shown[order[i]] = true;
                                picked++;
                        }
        }
        for (size_t i = 0; i < n && picked < METRICS_CPUS_MAX; i++)
                if (!shown[order[i]]) {
                        shown[order[i]] = true;
                        picked++;
                }
        *ret = shown;
        return 0;
}

/* Every CPU's irq+softirq share as one histogram: bounded series. */
static void load_histogram(FILE *f, const struct sample_rates *l) {
        static const double le[] = { 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 1 };
        uint64_t n[ELEMENTSOF(le)] = {}, count = 0;
        double sum = 0;

        family(f, "irqsteer_cpu_load_ratio", "histogram",
               "Smoothed irq+softirq share of each online CPU (0-1), all CPUs.");
        for (int cpu = 0; l && cpu <= l->max_cpu; cpu++) {
                double v;

                if (!cpu_shown(&l->cpus[cpu]))
                        continue;
                v = cpu_load(&l->cpus[cpu]);
                for (size_t b = 0; b < ELEMENTSOF(le); b++)
                        n[b] += v <= le[b];
                sum += v;
                count++;
        }
        for (size_t b = 0; b < ELEMENTSOF(le); b++)
                fprintf(f, "irqsteer_cpu_load_ratio_bucket{le=\"%g\"} %" PRIu64 "\n", le[b], n[b]);
        fprintf(f, "irqsteer_cpu_load_ratio_bucket{le=\"+Inf\"} %" PRIu64 "\n", count);
        fputs("irqsteer_cpu_load_ratio_sum", f);
        value(f, sum);
        fprintf(f, "irqsteer_cpu_load_ratio_count %" PRIu64 "\n", count);
}

/* One gauge family per CPU shown: field read by get. */
static void per_cpu(FILE *f, const struct report_snapshot *s, const bool *shown, const char *name, const char *help,
                    double (*get)(const struct report_snapshot *s, int cpu)) {
        const struct sample_rates *l = s->load;

        family(f, name, "gauge", help);
        for (int cpu = 0; l && shown && cpu <= l->max_cpu; cpu++) {
                if (!shown[cpu])
                        continue;
                cpu_series(f, name, cpu, NULL, get(s, cpu));
        }
}

static double get_irq(const struct report_snapshot *s, int cpu) { return s->load->cpus[cpu].irq; }
static double get_softirq(const struct report_snapshot *s, int cpu) { return s->load->cpus[cpu].softirq; }
static double get_idle(const struct report_snapshot *s, int cpu) { return s->load->cpus[cpu].idle; }
static double get_hot(const struct report_snapshot *s, int cpu) {
        return s->policy && cpuset_isset(&s->policy->hot, cpu) ? 1 : 0;
}
static double get_saturated(const struct report_snapshot *s, int cpu) {
        for (size_t i = 0; s->policy && i < s->policy->n_hot_cpus; i++)
                if (s->policy->hot_cpus[i].cpu == cpu)
                        return s->policy->hot_cpus[i].saturated ? 1 : 0;
        return 0;
}

int metrics_text(const struct report *rp, const struct report_snapshot *s, char **ret, size_t *ret_len) {
        const struct report_counters *c = &rp->count;
        const struct sample_rates *l = s->load;
        const struct policy_report *pr = s->policy;
        unsigned managed[KNOB_KIND_MAX] = {}, n_mismatch = 0;
        _cleanup_(freep) bool *shown = NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        *ret = NULL;
        *ret_len = 0;
        if (cpus_shown(s, &shown) < 0)
                return -ENOMEM;
        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;

        family(f, "irqsteer_build_info", "gauge", "irqsteerd's version, as a label; always 1.");
        /* AC_INIT's version: nothing in it to escape */
        fprintf(f, "irqsteer_build_info{version=\"%s\"} 1\n", IRQSTEER_VERSION);
        single_d(f, "irqsteer_start_time_seconds", "gauge", "When irqsteerd started, in seconds since the Unix epoch.",
                 (double) s->started_usec / USEC_PER_SEC);
        single_u(f, "irqsteer_dry_run", "gauge", "1 when irqsteerd decides and logs but writes nothing.", s->dry_run);

        single_u(f, "irqsteer_ticks_total", "counter", "Decision cycles run.", s->ticks);
        single_d(f, "irqsteer_tick_duration_seconds", "gauge",
                 "How long the last tick took (sampling, policy, actions; not this report).",
                 (double) c->last_tick_usec / USEC_PER_SEC);
        single_d(f, "irqsteer_tick_seconds_total", "counter", "Time spent in ticks.",
                 (double) c->tick_usec_total / USEC_PER_SEC);
        single_u(f, "irqsteer_interrupts_readings_total", "counter", "Readings of /proc/interrupts.", s->irq_readings);

        per_cpu(f, s, shown, "irqsteer_cpu_irq_ratio", "Smoothed share of the CPU's time in hard interrupts (0-1).", get_irq);
        per_cpu(f, s, shown, "irqsteer_cpu_softirq_ratio", "Smoothed share of the CPU's time in softirqs (0-1).", get_softirq);
        per_cpu(f, s, shown, "irqsteer_cpu_idle_ratio", "Smoothed share of the CPU's time idle (0-1).", get_idle);
        per_cpu(f, s, shown, "irqsteer_cpu_hot", "1 while the policy holds the CPU hot.", get_hot);
        per_cpu(f, s, shown, "irqsteer_cpu_saturated", "1 while the CPU is hot by the saturated rule.", get_saturated);
        family(f, "irqsteer_cpu_net_softirqs_per_second", "gauge",
               "Smoothed NET_RX and NET_TX softirq runs per second (kind), from /proc/softirqs.");
        for (int cpu = 0; l && shown && cpu <= l->max_cpu; cpu++) {
                if (!shown[cpu])
                        continue;
                cpu_series(f, "irqsteer_cpu_net_softirqs_per_second", cpu, "net_rx", l->cpus[cpu].net_rx_rate);
                cpu_series(f, "irqsteer_cpu_net_softirqs_per_second", cpu, "net_tx", l->cpus[cpu].net_tx_rate);
        }

        load_histogram(f, l);

        single_u(f, "irqsteer_hot_cpus", "gauge", "CPUs the policy holds hot.", pr ? pr->n_hot_cpus : 0);
        single_u(f, "irqsteer_queue_irqs", "gauge", "Queue IRQs under management.", pr ? pr->n_queue_irqs : 0);
        single_u(f, "irqsteer_rps_queues", "gauge", "Receive queues whose RPS mask irqsteerd steers.",
                 pr ? pr->n_rps_queues : 0);
        single_u(f, "irqsteer_kernel_managed_irqs", "gauge", "Kernel-managed IRQs skipped.", pr ? pr->n_managed_irqs : 0);
        single_u(f, "irqsteer_external_objects", "gauge", "Objects changed by others and held (external_hold).",
                 pr ? pr->n_external : 0);
        for (size_t i = 0; i < s->n_eff; i++)
                n_mismatch += s->eff[i].mismatch;
        single_u(f, "irqsteer_effective_mismatch_irqs", "gauge", "IRQs that fire outside the CPUs they were set to.",
                 n_mismatch);
        single_u(f, "irqsteer_interfaces", "gauge", "Network interfaces in the inventory.", s->inv ? s->inv->n_nics : 0);

        /* the journal holds valid kinds only (undo_parse(), undo_begin()) */
        for (size_t i = 0; s->undo && i < s->undo->n_entries; i++)
                managed[s->undo->entries[i].key.kind]++;
        family(f, "irqsteer_managed_objects", "gauge",
               "Objects irqsteerd changed and will restore (the undo journal), by kind.");
        for (int k = 0; k < KNOB_KIND_MAX; k++)
                labelled(f, "irqsteer_managed_objects", "kind", knob_kind_to_string(k), managed[k]);

        family(f, "irqsteer_actions_total", "counter", "Actions taken, by kind, reason and result.");
        for (int t = 0; t < KNOB_KIND_MAX; t++)
                for (int r = 0; r < ACTION_REASON_MAX; r++)
                        for (int x = 0; x < REPORT_RESULT_MAX; x++) {
                                /* at 0 from the first write: rate() of an
                                 * absent series is empty */
                                bool zero = action_reason_fits(t, r) &&
                                            (x == REPORT_RESULT_DONE || x == REPORT_RESULT_FAILED);

                                if (!c->actions[t][r][x] && !zero)
                                        continue;
                                fprintf(f, "irqsteer_actions_total{kind=\"%s\",reason=\"%s\",result=\"%s\"} %" PRIu64 "\n",
                                        action_type_to_string(t), action_reason_to_string(r),
                                        result_names[x], c->actions[t][r][x]);
                        }
        family(f, "irqsteer_action_failures_total", "counter", "Failed actions, by kind and error class.");
        for (int t = 0; t < KNOB_KIND_MAX; t++)
                for (int x = 0; x < ACTION_FAILURE_MAX; x++) {
                        /* every class at 0 but none, which no failure has */
                        if (!c->action_failures[t][x] && x == ACTION_FAIL_NONE)
                                continue;
                        fprintf(f, "irqsteer_action_failures_total{kind=\"%s\",class=\"%s\"} %" PRIu64 "\n",
                                action_type_to_string(t), action_failure_to_string(x), c->action_failures[t][x]);
                }
        family(f, "irqsteer_rps_trials_total", "counter", "RPS trials ended, by verdict.");
        for (int v = 0; v < POLICY_TRIAL_VERDICT_MAX; v++)
                labelled(f, "irqsteer_rps_trials_total", "verdict", policy_trial_verdict_to_string(v), c->rps_trials[v]);
        family(f, "irqsteer_threaded_napi_trials_total", "counter", "Threaded NAPI trials ended, by verdict.");
        for (int v = 0; v < POLICY_TRIAL_VERDICT_MAX; v++)
                labelled(f, "irqsteer_threaded_napi_trials_total", "verdict", policy_trial_verdict_to_string(v),
                         c->napi_trials[v]);
        family(f, "irqsteer_restore_objects_total", "counter",
               "Objects of a previous run's undo journal handled at start (crash recovery), by result.");
        for (int x = 0; x < REPORT_RESTORE_MAX; x++)
                labelled(f, "irqsteer_restore_objects_total", "result", restore_names[x], c->restore[x]);
        family(f, "irqsteer_config_reloads_total", "counter", "Configuration reloads (SIGHUP), by result.");
        labelled(f, "irqsteer_config_reloads_total", "result", "ok", c->reloads);
        labelled(f, "irqsteer_config_reloads_total", "result", "failed", c->reload_failures);
        single_u(f, "irqsteer_config_last_reload_successful", "gauge",
                 "0 while the last reload failed (the previous configuration stays), else 1.", !rp->last_reload_failed);
        single_u(f, "irqsteer_link_events_total", "counter", "Link events seen (rtnetlink).", c->link_events);
        family(f, "irqsteer_problem", "gauge",
               "1 while a condition the operator should act on holds, by reason (irqsteerd(8), PROBLEMS).");
        for (int p = 0; p < PROBLEM_MAX; p++)
                labelled(f, "irqsteer_problem", "reason", problem_to_string(p), rp->problems.active[p] ? 1 : 0);
        family(f, "irqsteer_problems_total", "counter", "Times each such condition began, by reason.");
        for (int p = 0; p < PROBLEM_MAX; p++)
                labelled(f, "irqsteer_problems_total", "reason", problem_to_string(p), rp->problems.begun[p]);

        if (fclose(f) != 0 || !buf) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

/* dir and name of a metrics_file path (absolute, not ending in '/'). */
static int split_path(const char *path, char *dir, size_t dlen, const char **ret_name) {
        const char *slash = strrchr(path, '/');
        size_t n;

        if (!slash || !slash[1])
                return -EINVAL;
        n = slash == path ? 1 : (size_t) (slash - path);
        if (n >= dlen)
                return -ENAMETOOLONG;
        memcpy(dir, path, n);
        dir[n] = 0;
        *ret_name = slash + 1;
        return 0;
}

int metrics_file_ours(const char *path) {
        char dir[4096];
        const char *name;
        int r = split_path(path, dir, sizeof(dir), &name);

        return r < 0 ? r : state_file_ours(dir, name, METRICS_HEAD);
}

int metrics_write(struct report *rp, const struct report_snapshot *s) {
        _cleanup_(freep) char *text = NULL;
        char path[4096];
        size_t len;
        int r, ret;

        r = metrics_text(rp, s, &text, &len);
        if (r < 0) {
                log_warning("Out of memory writing the metrics");
                return r;
        }
        /* node_exporter runs as another user: readable by all */
        ret = state_write_atomic(s->state_dir, METRICS_NAME, text, len, 0644, false);
        snprintf(path, sizeof(path), "%s/%s", s->state_dir, METRICS_NAME);
        report_state_write(rp, &rp->metrics_write_failed, ret, path);
        if (s->config && s->config->metrics_file) {
                char dir[4096];
                const char *name;

                r = split_path(s->config->metrics_file, dir, sizeof(dir), &name);
                if (r >= 0)
                        r = state_write_atomic(dir, name, text, len, 0644, false);
                /* EROFS: a directory made after start is outside ReadWritePaths= */
                if (r < 0)
                        problem_set(&rp->problems, PROBLEM_METRICS_FILE, r,
                                    "Failed to write the metrics to %s: %m%s", s->config->metrics_file,
                                    r == -EROFS ? " (a directory created after irqsteerd started: restart it)" : "");
                else
                        problem_clear(&rp->problems, PROBLEM_METRICS_FILE, "Writing the metrics to %s works again",
                                      s->config->metrics_file);
                if (r < 0 && ret >= 0)
                        ret = r;
        } else
                problem_clear(&rp->problems, PROBLEM_METRICS_FILE, "metrics_file is no longer set");
        return ret;
}

void metrics_remove(const struct report_snapshot *s) {
        char dir[4096];
        const char *name;

        (void) state_remove(s->state_dir, METRICS_NAME);
        /* never another program's file (one put there since) */
        if (s->config && s->config->metrics_file && split_path(s->config->metrics_file, dir, sizeof(dir), &name) >= 0 &&
            state_file_ours(dir, name, METRICS_HEAD) > 0)
                (void) state_remove(dir, name);
}
