/* The report: status line, status.json and load lines from one snapshot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "classify.h"
#include "json.h"
#include "knob.h"
#include "log.h"
#include "report.h"
#include "state.h"
#include "util.h"

static enum report_result result_of(int result) {
        if (result < 0)
                return REPORT_RESULT_FAILED;
        if (result == APPLY_DRY_RUN)
                return REPORT_RESULT_DRY_RUN;
        if (result == APPLY_READBACK_DIFFERS)
                return REPORT_RESULT_READBACK_DIFFERS;
        return REPORT_RESULT_DONE;
}

void report_record_action(struct report *rp, const struct action *a, const char *line, int result,
                          uint64_t realtime_usec) {
        struct report_action_record *rec = &rp->last_actions[rp->last_actions_pos];
        if (a->type >= 0 && a->type < KNOB_KIND_MAX && a->why >= 0 && a->why < ACTION_REASON_MAX) {
                rp->count.actions[a->type][a->why][result_of(result)]++;
                /* action_failure_class() returns a class in range */
                if (result < 0)
                        rp->count.action_failures[a->type][action_failure_class(a->type, result)]++;
        }

        rec->realtime_usec = realtime_usec;
        snprintf(rec->line, sizeof(rec->line), "%s", line);
        action_done(&rec->action);
        (void) action_copy(&rec->action, a); /* without its sets on ENOMEM */
        rec->result = result;
        rp->last_actions_pos = (rp->last_actions_pos + 1) % REPORT_LAST_ACTIONS;
        rp->gen++;
        if (rp->n_last_actions < REPORT_LAST_ACTIONS)
                rp->n_last_actions++;
}

const char *report_record_link(struct report *rp, const char *text, uint64_t realtime_usec) {
        struct report_link_record *rec = &rp->link_events[rp->link_events_pos];

        rec->realtime_usec = realtime_usec;
        snprintf(rec->text, sizeof(rec->text), "%s", text);
        rp->count.link_events++;
        rp->link_events_pos = (rp->link_events_pos + 1) % REPORT_LAST_LINK_EVENTS;
        if (rp->n_link_events < REPORT_LAST_LINK_EVENTS)
                rp->n_link_events++;
        return rec->text;
}

void report_count_policy(struct report *rp, const struct policy_report *rep) {
        for (int v = 0; v < POLICY_TRIAL_VERDICT_MAX; v++) {
                rp->count.rps_trials[v] += rep->rps_trials[v];
                rp->count.napi_trials[v] += rep->napi_trials[v];
        }
}

void report_count_reload(struct report *rp, bool ok) {
        if (ok)
                rp->count.reloads++;
        else
                rp->count.reload_failures++;
        rp->last_reload_failed = !ok;
}

void report_count_restore(struct report *rp, const struct undo_report *u) {
        rp->count.restore[REPORT_RESTORE_RESTORED] += u->restored;
        rp->count.restore[REPORT_RESTORE_UNCHANGED] += u->unchanged;
        rp->count.restore[REPORT_RESTORE_EXTERNAL] += u->external;
        rp->count.restore[REPORT_RESTORE_GONE] += u->gone;
        rp->count.restore[REPORT_RESTORE_FAILED] += u->failed;
        rp->count.restore[REPORT_RESTORE_CORRUPT] += u->corrupt;
}

void report_count_tick(struct report *rp, uint64_t usec) {
        rp->count.tick_usec_total += usec;
        rp->count.last_tick_usec = usec;
}

void report_config_changed(struct report *rp) {
        rp->gen++;
}

void report_free(struct report *rp) {
        for (size_t i = 0; i < REPORT_LAST_ACTIONS; i++)
                action_done(&rp->last_actions[i].action);
        free(rp->tail_json);
        rp->tail_json = NULL;
        rp->tail_len = 0;
}

/* ---- the service status line ---- */

int report_format_status(const struct policy_report *rep, bool dry_run, const char *reload_error,
                         char *buf, size_t len) {
        size_t off = 0;
        int n;

#define APPEND(...) do {                                                \
                n = snprintf(buf + off, len - off, __VA_ARGS__);       \
                if (n < 0 || (size_t) n >= len - off)                   \
                        return -ENOBUFS;                                \
                off += (size_t) n;                                      \
        } while (0)

        /* off < len after each APPEND: a cut or len 0 is -ENOBUFS */
        if (reload_error && reload_error[0])
                APPEND("config reload failed: %s; ", reload_error);
        if (dry_run)
                APPEND("dry-run: ");
        APPEND("hot: ");
        if (!rep || rep->n_hot_cpus == 0)
                APPEND("none");
        for (size_t i = 0; rep && i < rep->n_hot_cpus; i++) {
                /* Many hot CPUs: name a few, count the rest. */
                if (i == 4) {
                        APPEND(" +%zu more", rep->n_hot_cpus - i);
                        break;
                }
                APPEND("%scpu%d (%.0f%%)", i ? ", " : "", rep->hot_cpus[i].cpu, rep->hot_cpus[i].load * 100.0);
        }
        APPEND("; %u queue IRQs, %u RPS queues managed; %u moves/10min",
               rep ? rep->n_queue_irqs : 0, rep ? rep->n_rps_queues : 0, rep ? rep->n_moves_10min : 0);
        if (rep && rep->n_managed_irqs)
                APPEND("; %u kernel-managed IRQs skipped", rep->n_managed_irqs);
        if (rep && rep->n_external)
                APPEND("; %u changed by others, left alone", rep->n_external);
#undef APPEND
        return 0;
}

/* ---- the load line ---- */

static void format_rate(double v, char *buf, size_t len) {
        if (v >= 1e6)
                snprintf(buf, len, "%.1fM", v / 1e6);
        else if (v >= 1e3)
                snprintf(buf, len, "%.1fk", v / 1e3);
        else
                snprintf(buf, len, "%.0f", v);
}

/* A CPU's "cpu0 soft 12% irq 1% idle 80% net_rx 1.2k/s", with the NUL */
#define LOAD_CPU_MAX 192
static double cpu_busy_net(const struct sample_cpu *c) {
        double v = c->softirq + c->irq;

        return v == v ? v : -1; /* NaN last */
}

int report_format_load_lines(const struct sample_rates *avg, char **ret) {
        size_t n = avg && avg->max_cpu >= 0 ? (size_t) avg->max_cpu + 1 : 0, n_valid = 0, n_pick;
        _cleanup_(freep) int *pick = NULL;
        double soft = 0, irq = 0, idle = 0, rx = 0;
        char *buf, *p;

        *ret = NULL;
        pick = malloc((n + 1) * sizeof(*pick));
        buf = malloc(REPORT_LOAD_SHOWN * (LOAD_CPU_MAX + 8) + 256);
        if (!pick || !buf) {
                free(buf);
                return -ENOMEM;
        }
        for (size_t cpu = 0; cpu < n; cpu++) {
                const struct sample_cpu *c = &avg->cpus[cpu];

                if (c->offline || !c->valid)
                        continue;
                pick[n_valid++] = (int) cpu;
                soft += c->softirq;
                irq += c->irq;
                idle += c->idle;
                rx += c->net_rx_rate;
        }
        /* the busiest by a partial selection; a small host: all, in order */
        n_pick = MIN(n_valid, (size_t) REPORT_LOAD_SHOWN);
        if (n_valid > REPORT_LOAD_SHOWN)
                for (size_t k = 0; k < n_pick; k++) {
                        size_t best = k;

                        for (size_t j = k + 1; j < n_valid; j++)
                                if (cpu_busy_net(&avg->cpus[pick[j]]) > cpu_busy_net(&avg->cpus[pick[best]]))
                                        best = j;
                        int t = pick[k];
                        pick[k] = pick[best];
                        pick[best] = t;
                }
        p = buf;
        if (n_valid > REPORT_LOAD_SHOWN) {
                char r[64];

                format_rate(rx, r, sizeof(r));
                p += sprintf(p, "load: %zu CPUs, mean soft %.0f%% irq %.0f%% idle %.0f%%, net_rx %s/s in all; busiest:\n",
                             n_valid, soft * 100 / n_valid, irq * 100 / n_valid, idle * 100 / n_valid, r);
        }
        /* two CPUs a line: about 100 columns */
        for (size_t k = 0; k < n_pick; k++) {
                const struct sample_cpu *c = &avg->cpus[pick[k]];
                char r[32];
                int l;

                if (k % 2 == 0)
                        p = stpcpy(p, "load: ");
                format_rate(c->net_rx_rate, r, sizeof(r));
                l = snprintf(p, LOAD_CPU_MAX, "%scpu%d soft %.0f%% irq %.0f%% idle %.0f%% net_rx %s/s",
                             k % 2 == 0 ? "" : " | ", pick[k], c->softirq * 100.0, c->irq * 100.0,
                             c->idle * 100.0, r);
                p += l < 0 ? 0 : MIN(l, LOAD_CPU_MAX - 1);
                if (k % 2 == 1 || k + 1 == n_pick)
                        *p++ = '\n';
        }
        *p = 0;
        *ret = buf;
        return 0;
}

void report_log_load(const struct report_snapshot *s, int level) {
        _cleanup_(freep) char *buf = NULL;
        char *line, *save = NULL;

        if (!s->load || level > log_get_max_level())
                return;
        if (report_format_load_lines(s->load, &buf) < 0 || !buf[0])
                return;
        for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                log_text(level, line);
}

/* ---- status.json ---- */

/* A managed value's CPUs, null when not a CPU set or over REPORT_LIST_MAX
 * CPUs (the text says it shorter). */
static void managed_cpus(struct json_writer *w, const char *key, enum knob_kind kind, const char *value) {
        cpuset_t cpus;

        json_key_cpuset_if(w, key, knob_value_cpus(kind, value, &cpus) == 0 && cpuset_count(&cpus) <= REPORT_LIST_MAX,
                           &cpus);
}

/* The newest REPORT_LIST_MAX managed objects and their count. */
static void managed_array(struct json_writer *w, const struct undo *u) {
        size_t n = u ? u->n_entries : 0;

        json_key_uint(w, "managed_count", n);
        json_key_begin_array(w, "managed");
        for (size_t i = n > REPORT_LIST_MAX ? n - REPORT_LIST_MAX : 0; i < n; i++) {
                const struct undo_entry *e = &u->entries[i];
                const char *current = e->pending ? e->pending : e->last ? e->last : e->original;
                char key[96];

                knob_key_format(&e->key, key, sizeof(key));
                json_begin_object(w);
                json_key_string(w, "object", key);
                json_key_string(w, "current", current);
                json_key_string(w, "original", e->original);
                json_key_string(w, "kind", knob_kind_to_string(e->key.kind));
                managed_cpus(w, "current_cpus", e->key.kind, current);
                managed_cpus(w, "original_cpus", e->key.kind, e->original);
                json_end_object(w);
        }
        json_end_array(w);
}

/* The members that change only on a reload, an action or an undo change. */
static void status_tail_members(const struct report *rp, const struct report_snapshot *s, struct json_writer *w,
                                const struct undo *u) {
        struct config shown = *s->config;
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        /* every key (tests/test-report checks), in JSON and in the file's
         * syntax, with the state_dir in force */
        if (s->state_dir)
                shown.state_dir = (char *) s->state_dir;
        json_key_begin_object(w, "config");
        config_json(w, &shown);
        json_end_object(w);
        f = open_memstream(&text, &len);
        if (f) {
                config_format(f, &shown);
                if (fclose(f) == 0)
                        json_key_string(w, "config_text", text);
                free(text);
        }

        managed_array(w, u);

        json_key_begin_array(w, "last_actions");
        for (size_t k = 0; k < rp->n_last_actions; k++) {
                size_t idx = (rp->last_actions_pos + REPORT_LAST_ACTIONS - rp->n_last_actions + k) % REPORT_LAST_ACTIONS;
                const struct report_action_record *rec = &rp->last_actions[idx];

                json_begin_object(w);
                json_key_uint(w, "time", rec->realtime_usec);
                json_key_string(w, "action", rec->line);
                json_key_string(w, "reason", rec->action.reason);
                action_json_members(w, &rec->action);
                if (rec->result < 0) {
                        json_key_string(w, "result", "failed");
                        json_key_string(w, "error", strerror(-rec->result));
                } else {
                        json_key_string(w, "result", rec->result == APPLY_DRY_RUN ? "dry-run" :
                                        rec->result == APPLY_READBACK_DIFFERS ? "readback-differs" : "done");
                }
                json_end_object(w);
        }
        json_end_array(w);
}

/* Those members as text, kept until they change; NULL when out of memory. */
static const char *status_tail(struct report *rp, const struct report_snapshot *s, const struct undo *u,
                               size_t *ret_len) {
        if (!rp->tail_json || rp->tail_undo != u || (u && rp->tail_undo_gen != u->gen) || rp->tail_gen != rp->gen) {
                struct json_writer mw;
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);

                if (f) {
                        json_writer_init_members(&mw, f, JSON_PRETTY, 1);
                        status_tail_members(rp, s, &mw, u);
                        if (fclose(f) != 0 || mw.error) {
                                free(buf);
                                buf = NULL;
                        }
                }
                free(rp->tail_json);
                rp->tail_json = buf;
                rp->tail_len = buf ? len : 0;
                rp->tail_undo = u;
                rp->tail_undo_gen = u ? u->gen : 0;
                rp->tail_gen = rp->gen;
        }
        *ret_len = rp->tail_len;
        return rp->tail_json;
}

void report_bans_members(struct json_writer *w, const struct bans *b) {
        json_key_cpuset(w, "cpus", &b->cpus);
        json_key_begin_array(w, "files");
        for (size_t i = 0; i < b->n_files; i++) {
                json_begin_object(w);
                json_key_string(w, "name", b->files[i].name);
                json_key_cpuset(w, "cpus", &b->files[i].cpus);
                json_key_string(w, "error", b->files[i].error < 0 ? b->files[i].problem : NULL);
                json_end_object(w);
        }
        json_end_array(w);
}

/* Whether h is among the REPORT_LIST_MAX most loaded (ties: lower CPU). */
static bool hot_cpu_listed(const struct policy_report *p, const struct policy_hot_cpu *h) {
        size_t above = 0;

        if (p->n_hot_cpus <= REPORT_LIST_MAX)
                return true;
        for (size_t i = 0; i < p->n_hot_cpus && above < REPORT_LIST_MAX; i++) {
                const struct policy_hot_cpu *o = &p->hot_cpus[i];

                above += o->load > h->load || (o->load == h->load && o->cpu < h->cpu);
        }
        return above < REPORT_LIST_MAX;
}

/* status.json up to status_tail()'s members, the object left open. */
static void write_status_head(const struct report *rp, const struct report_snapshot *s, struct json_writer *w) {
        size_t n_mismatch = 0;
        char capbuf[128];

        json_begin_object(w);
        json_key_int(w, "version", 1);
        json_key_int(w, "pid", s->pid);
        json_key_uint(w, "started_usec", s->started_usec);
        json_key_double6(w, "uptime_s", (double) s->uptime_usec / USEC_PER_SEC);
        json_key_string(w, "status", s->status);
        json_key_bool(w, "dry_run", s->dry_run);
        json_key_string(w, "root", s->root);
        json_key_string(w, "state_dir", s->state_dir);
        caps_format(s->caps, capbuf, sizeof(capbuf));
        json_key_string(w, "capabilities", capbuf);
        caps_format(s->caps_dropped, capbuf, sizeof(capbuf));
        json_key_string(w, "capabilities_dropped", capbuf);
        json_key_uint(w, "ticks", s->ticks);
        /* irqsteerd --reload waits for this to grow, then reads reload_error */
        json_key_uint(w, "reloads", rp->count.reloads + rp->count.reload_failures);
        json_key_string(w, "reload_error", s->reload_error && s->reload_error[0] ? s->reload_error : NULL);
        json_key_string(w, "unmatched_interfaces",
                        s->unmatched_interfaces && s->unmatched_interfaces[0] ? s->unmatched_interfaces : NULL);
        if (s->bans) {
                json_key_begin_object(w, "runtime_bans");
                report_bans_members(w, s->bans);
                json_end_object(w);
        }

        json_key_uint(w, "hot_cpus_count", s->policy->n_hot_cpus);
        json_key_begin_array(w, "hot_cpus");
        for (size_t i = 0; i < s->policy->n_hot_cpus; i++) {
                const struct policy_hot_cpu *h = &s->policy->hot_cpus[i];

                if (!hot_cpu_listed(s->policy, h))
                        continue;
                json_begin_object(w);
                json_key_int(w, "cpu", h->cpu);
                json_key_double6(w, "load", h->load);
                json_key_double6(w, "idle", h->idle);
                json_key_bool(w, "saturated", h->saturated);
                json_key_string(w, "why", h->why[0] ? h->why : NULL);
                json_end_object(w);
        }
        json_end_array(w);

        json_key_begin_object(w, "counters");
        json_key_uint(w, "queue_irqs", s->policy->n_queue_irqs);
        json_key_uint(w, "rps_queues", s->policy->n_rps_queues);
        json_key_uint(w, "moves_10min", s->policy->n_moves_10min);
        json_key_uint(w, "kernel_managed_irqs_skipped", s->policy->n_managed_irqs);
        /* the old name of the same count, kept while version is 1 */
        json_key_uint(w, "managed_irqs", s->policy->n_managed_irqs);
        json_key_uint(w, "external", s->policy->n_external);
        json_key_uint(w, "kept", s->policy->n_kept);
        json_key_uint(w, "interrupts_readings", s->irq_readings);
        json_end_object(w);

        /* every IRQ of the inventory by what is done with it */
        json_key_begin_array(w, "irq_classes");
        for (int c = 0; c < CLASSIFY_IRQ_CLASS_MAX; c++) {
                json_begin_object(w);
                json_key_string(w, "class", classify_irq_class_to_string(c));
                json_key_uint(w, "irqs", s->policy->n_irq_class[c]);
                json_key_string(w, "done", classify_irq_class_done(c));
                json_end_object(w);
        }
        json_end_array(w);
        json_key_begin_array(w, "kernel_managed_irqs");
        {
                unsigned flags = w->flags;

                w->flags &= ~JSON_PRETTY; /* one line, like CPU lists */
                for (size_t i = 0; i < MIN(s->policy->n_kernel_managed_irqs, (size_t) REPORT_LIST_MAX); i++)
                        json_uint(w, s->policy->kernel_managed_irqs[i]);
                json_end_array(w);
                w->flags = flags;
        }

        for (size_t i = 0; i < s->n_eff; i++)
                n_mismatch += s->eff[i].mismatch;
        json_key_uint(w, "effective_mismatch_count", n_mismatch);
        json_key_begin_array(w, "effective_mismatch");
        for (size_t i = 0, shown = 0; i < s->n_eff && shown < REPORT_LIST_MAX; i++) {
                const struct apply_eff_watch *e = &s->eff[i];
                const struct inventory_irq *irq = s->inv ? inventory_irq(s->inv, e->irq) : NULL;

                if (!e->mismatch)
                        continue;
                shown++;
                json_begin_object(w);
                json_key_uint(w, "irq", e->irq);
                json_key_string(w, "name", irq ? irq->name : "");
                cpuset_t want = cpuset_kept_get(&e->want), eff = cpuset_kept_get(&e->eff);

                json_key_cpuset(w, "affinity", &want);
                json_key_cpuset_if(w, "effective", e->has_eff, &eff);
                json_end_object(w);
        }
        json_end_array(w);

        json_key_begin_array(w, "nics");
        for (size_t i = 0; s->inv && i < s->inv->n_nics; i++) {
                const struct inventory_nic *n = &s->inv->nics[i];

                json_begin_object(w);
                json_key_string(w, "name", n->name);
                json_key_int(w, "ifindex", n->ifindex);
                json_key_string(w, "driver", n->driver);
                json_key_bool(w, "up", n->up);
                json_key_int(w, "rx_queues", n->rx_queues);
                json_key_int(w, "tx_queues", n->tx_queues);
                json_key_string(w, "irq_map", inventory_map_source_to_string(n->map));
                json_end_object(w);
        }
        json_end_array(w);

        json_key_begin_array(w, "link_events");
        for (size_t k = 0; k < rp->n_link_events; k++) {
                size_t idx = (rp->link_events_pos + REPORT_LAST_LINK_EVENTS - rp->n_link_events + k) % REPORT_LAST_LINK_EVENTS;

                json_begin_object(w);
                json_key_uint(w, "time", rp->link_events[idx].realtime_usec);
                json_key_string(w, "event", rp->link_events[idx].text);
                json_end_object(w);
        }
        json_end_array(w);
}

int report_status_json(struct report *rp, const struct report_snapshot *s, char **ret, size_t *ret_len) {
        struct json_writer w;
        const char *tail;
        char *buf = NULL;
        size_t len = 0, tail_len = 0;
        FILE *f;
        int r;

        *ret = NULL;
        *ret_len = 0;
        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        json_writer_init(&w, f, JSON_PRETTY);
        write_status_head(rp, s, &w);
        tail = status_tail(rp, s, s->undo, &tail_len);
        if (tail)
                fwrite(tail, 1, tail_len, f);
        else
                status_tail_members(rp, s, &w, s->undo); /* out of memory: directly */
        json_end_object(&w);
        r = json_writer_finish(&w);
        fputc('\n', f);
        if (fclose(f) != 0 || !buf || r < 0) {
                free(buf);
                return r < 0 ? r : -ENOMEM;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

int report_write_status(struct report *rp, const struct report_snapshot *s) {
        char *buf = NULL, path[4096];
        size_t len = 0;
        int r;

        r = report_status_json(rp, s, &buf, &len);
        if (r == -ENOMEM) {
                log_warning("Out of memory writing the status file");
                return r;
        }
        if (r >= 0)
                r = state_write_atomic(s->state_dir, STATE_STATUS_NAME, buf, len, 0644, false);
        free(buf);
        snprintf(path, sizeof(path), "%s/%s", s->state_dir, STATE_STATUS_NAME);
        report_state_write(rp, &rp->status_write_failed, r, path);
        return r;
}

void report_state_write(struct report *rp, bool *failed, int r, const char *path) {
        *failed = r < 0;
        if (r < 0)
                problem_set(&rp->problems, PROBLEM_STATE_FILES, r, "Failed to write %s: %m", path);
        else if (!rp->status_write_failed && !rp->metrics_write_failed)
                problem_clear(&rp->problems, PROBLEM_STATE_FILES, "Writing %s works again", path);
}
