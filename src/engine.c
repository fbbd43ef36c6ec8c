/* The tick engine (engine.h): sampling schedule, inventory refresh and
 * discovery, policy, carrying out actions and feedback, for irqsteerd and
 * irqsteerctl plan.  What was found and what changed is engine-diff.c's,
 * failures are said by failures.c, written IRQs watched by effwatch.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action.h"
#include "apply.h"
#include "config.h"
#include "effwatch.h"
#include "engine-internal.h"
#include "engine.h"
#include "failures.h"
#include "inventory.h"
#include "knob.h"
#include "log.h"
#include "policy.h"
#include "problem.h"
#include "report.h"
#include "sample.h"
#include "topology.h"
#include "undo.h"
#include "util.h"
#include "workers.h"

/* ---- discovery ---- */

/* Dry run: what apply recorded as written, laid over the inventory (and ws);
 * fresh_only: over objects this refresh re-read, the others hold it still. */
static void overlay(struct engine *e, struct inventory *inv, struct worker_set *ws, bool fresh_only) {
        const struct apply_overlay_entry *v;
        size_t n;

        if (!e->dry_run || !e->apply)
                return;
        n = apply_overlay(e->apply, &v);
        /* each takes only the kinds it holds */
        for (size_t i = 0; i < n; i++) {
                if (ws)
                        workers_set_knob(ws, &v[i].key, &v[i].cpus);
                inventory_set_knob(inv, &v[i].key, &v[i].cpus, v[i].number, fresh_only);
        }
}

/* Per-object values audited a tick (docs/DESIGN.md, The tick); a stale one
 * never leads to a write: action_current() re-reads it first. */
#define AUDIT_PER_TICK 64

/* Full discovery at least this often (ticks): a driver rebound with the same
 * IRQs and queue counts escapes inventory_refresh()'s checks. */
#define FULL_DISCOVERY_TICKS 60

/* The whole inventory, thousands of files on a big host: only when
 * discovery_due() or inventory_refresh() sees the layout change. */
static int discover_inventory(struct engine *e, const struct procfs_interrupts *interrupts) {
        struct inventory inv = {};
        int r;

        e->ticks_since_full = 0;
        r = inventory_read(e->rootfd, interrupts, &inv);
        if (r < 0)
                return r;
        if (e->root_is_host) {
                r = inventory_netlink_refresh(&inv);
                if (r < 0)
                        log_debug_errno(r, "netlink inventory refresh failed, using sysfs values: %m");
                inventory_read_napi_cpus(e->rootfd, &inv); /* kthread start times: napi_threads */
        }
        overlay(e, &inv, NULL, false);
        /* none at engine_start(): no policy yet, e->inv still empty */
        if (e->policy)
                engine_diff_inventory(e, &e->inv, &inv);
        inventory_free(&e->inv);
        e->inv = inv;
        return 0;
}

/* Why this tick reads the whole inventory, NULL when a refresh does. */
static const char *discovery_due(const struct engine *e) {
        return e->inventory_dirty ? "link event or CPU set change" :
               e->ticks_since_full >= FULL_DISCOVERY_TICKS ? "periodic check" : NULL;
}

static int refresh_inventory(struct engine *e, const struct procfs_interrupts *interrupts) {
        const char *why = discovery_due(e);
        int r;

        if (why) {
                log_debug("Reading the whole inventory: %s", why);
                return discover_inventory(e, interrupts);
        }
        e->audit.per_tick = engine_audit_slice(e->audit_every);
        r = inventory_refresh(e->rootfd, interrupts, &e->inv, &e->audit);
        if (r != 0) {
                if (r < 0)
                        log_debug_errno(r, "Reading the whole inventory: refresh failed: %m");
                else
                        log_debug("Reading the whole inventory: IRQs, NICs or queue counts changed");
                /* a reading carried over may be stale */
                e->irq_force = true;
                return discover_inventory(e, interrupts);
        }
        e->ticks_since_full++;
        overlay(e, &e->inv, NULL, true);
        return 0;
}

/* CPU hotplug: the set of /proc/stat lines changed (sysfs and procfs may
 * disagree for good, so not against the topology); the lines ascend. */
static bool cpu_set_changed(const struct sample_snapshot *prev, const struct sample_snapshot *cur) {
        if (prev->stat.n_cpus != cur->stat.n_cpus)
                return true;
        for (size_t i = 0; i < cur->stat.n_cpus; i++)
                if (prev->stat.cpus[i].cpu != cur->stat.cpus[i].cpu)
                        return true;
        return false;
}

/* ---- acting ---- */

void engine_log_policy_result(int *last, int r) {
        if (r >= 0) {
                if (*last)
                        log_notice("The policy works again");
                *last = 0;
                return;
        }
        if (*last == -r) {
                log_debug_errno(r, "Policy failed again: %m");
                return;
        }
        *last = -r;
        log_error_errno(r, "Policy failed: %m; nothing is changed until it works again (said once)");
}

/* Whether a CPU of this tick's raw sample reads saturated: only then is
 * softnet_stat read, for the packets it drops (its load stops at 100%). */
static bool any_saturated(const struct config *c, const struct sample_rates *raw) {
        for (int cpu = 0; cpu <= raw->max_cpu; cpu++)
                if (raw->cpus[cpu].valid && raw->cpus[cpu].idle < c->saturated_idle)
                        return true;
        return false;
}

/* Without softnet_stat the policy has no drop figures and judges saturated
 * CPUs on their load alone: said once, nothing else is lost. */
static void take_softnet(struct engine *e, struct sample_snapshot *cur) {
        int r = sample_snapshot_take_softnet(e->rootfd, cur);

        if (r < 0 && r != e->softnet_errno) {
                if (r == -ENOENT)
                        log_info("No /proc/net/softnet_stat: saturated CPUs are judged without their drops");
                else
                        log_warning_errno(r, "Failed to read /proc/net/softnet_stat, saturated CPUs are judged "
                                          "without their drops: %m");
        }
        e->softnet_errno = r < 0 ? r : 0;
}

void engine_log_tick_failure(struct log_ratelimit *rl, int r, const char *what, uint64_t now) {
        if (!log_ratelimit_ok(rl, now))
                return;
        if (rl->suppressed > 0) {
                log_warning_errno(r, "Failed to %s, skipping this tick: %m (%u similar messages suppressed)",
                                  what, rl->suppressed);
                rl->suppressed = 0;
        } else
                log_warning_errno(r, "Failed to %s, skipping this tick: %m", what);
}

static void record_action(struct engine *e, const struct action *a, const char *line, int result) {
        report_record_action(e->out, a, line, result, util_now_usec(CLOCK_REALTIME));
        if (e->on_action)
                e->on_action(e->userdata, a, line, result);
}

void engine_log_action(const struct action *a, const char *line, int result) {
        char f_irq[32], f_from[300], f_to[300], f_dev[48], f_queue[32], f_why[64], f_reason[300], f_type[48];
        char from[256], to[256];
        const char *fields[9];
        size_t n = 0;
        cpuset_t set = cpuset_kept_get(&a->from);

        cpuset_to_text(&set, "", from, sizeof(from));
        set = cpuset_kept_get(&a->cpus);
        cpuset_to_text(&set, "", to, sizeof(to));
        snprintf(f_type, sizeof(f_type), "ACTION=%s", action_type_to_string(a->type));
        fields[n++] = f_type;
        if (a->type == KNOB_IRQ) {
                snprintf(f_irq, sizeof(f_irq), "IRQ=%u", a->irq);
                fields[n++] = f_irq;
        }
        if (a->type != KNOB_FLOWCNT && a->type != KNOB_SOCKFLOW) {
                snprintf(f_from, sizeof(f_from), "CPU_FROM=%s", from);
                snprintf(f_to, sizeof(f_to), "CPU_TO=%s", to);
                fields[n++] = f_from;
                fields[n++] = f_to;
        }
        if (a->nic[0]) {
                snprintf(f_dev, sizeof(f_dev), "DEVICE=%s", a->nic);
                fields[n++] = f_dev;
        }
        if (a->queue >= 0) {
                snprintf(f_queue, sizeof(f_queue), "QUEUE=%d", a->queue);
                fields[n++] = f_queue;
        }
        /* the code to match on, the prose to read */
        snprintf(f_why, sizeof(f_why), "REASON=%s", action_reason_to_string(a->why) ?: "other");
        fields[n++] = f_why;
        util_mark_cut(f_reason, sizeof(f_reason), snprintf(f_reason, sizeof(f_reason), "REASON_TEXT=%s", a->reason));
        fields[n++] = f_reason;
        fields[n] = NULL;

        if (result == APPLY_DRY_RUN)
                log_fields(LOG_INFO, fields, "dry-run: would set %s", line);
        else if (result == APPLY_READBACK_DIFFERS)
                log_fields(LOG_INFO, fields, "%s (the kernel reports a different value back)", line);
        else
                log_fields(LOG_INFO, fields, "%s", line);
}

/* Marks a's object for a re-read next refresh and reads it now if stale;
 * false when it no longer holds the value the policy decided from. */
static bool action_current(struct engine *e, const struct action *a) {
        struct inventory_nic *n = a->nic[0] ? (struct inventory_nic *) inventory_nic(&e->inv, a->nic) : NULL;
        struct inventory_queue *q = n ? inventory_queue(n, a->queue) : NULL;
        struct inventory_irq *irq;

        switch (a->type) {
        case KNOB_IRQ:
                irq = inventory_irq(&e->inv, a->irq);
                if (!irq)
                        return true;
                irq->reread = true;
                if (irq->fresh)
                        return true;
                inventory_reread_irq(e->rootfd, irq, false);
                return !irq->affinity_readable || cpuset_kept_same(&a->from, &irq->affinity);
        case KNOB_RPS:
        case KNOB_XPS:
        case KNOB_FLOWCNT:
                if (!q)
                        return true;
                q->reread = true;
                if (q->fresh)
                        return true;
                inventory_reread_queue(e->rootfd, n, q, true);
                if (a->type == KNOB_RPS)
                        return !q->has_rps || cpuset_kept_same(&a->from, &q->rps_cpus);
                if (a->type == KNOB_XPS)
                        return !q->has_xps || cpuset_kept_same(&a->from, &q->xps_cpus);
                return q->rps_flow_cnt == a->from_value;
        default:
                return true;
        }
}

/* An unsavable journal (state directory full, read-only, gone): said once,
 * and once when it works again; apply_action() writes nothing meanwhile. */
static void check_journal(struct engine *e) {
        int r = apply_journal_error(e->apply);

        if (r < 0 && !e->journal_failing)
                problem_set(&e->out->problems, PROBLEM_UNDO_JOURNAL, r,
                            "Cannot save the undo journal %s: %m; the state directory %s needs room or "
                            "repair, and nothing is changed until the journal can be saved",
                            apply_undo(e->apply)->path, e->state_dir);
        else if (r == 0 && e->journal_failing)
                problem_clear(&e->out->problems, PROBLEM_UNDO_JOURNAL, "The undo journal %s can be saved again",
                              apply_undo(e->apply)->path);
        e->journal_failing = r < 0;
}

/* A write refused for good or unexpectedly: the operator's problem while
 * any such object remains. */
static void check_failures(struct engine *e) {
        const struct failures_object *f = failures_to_act(&e->failures);

        if (f)
                problem_set(&e->out->problems, PROBLEM_WRITE, 0, "%s", f->line);
        else
                problem_clear(&e->out->problems, PROBLEM_WRITE, "No write is failing any more");
}

/* Ticks after an IRQ write that read /proc/interrupts to see where it fires. */
#define EFF_READ_TICKS (APPLY_EFFECTIVE_GRACE + 2)
/* Room for actions kept from one tick to the next. */
#define ENGINE_ACTIONS_KEPT 64
static void run_actions(struct engine *e, uint64_t now) {
        /* what the actions changed shows in the per-IRQ rates next tick */
        if (e->actions.n > 0)
                e->irq_force = true;
        for (size_t i = 0; i < e->actions.n; i++) {
                const struct action *a = &e->actions.v[i];
                const cpuset_t cpus = cpuset_kept_get(&a->cpus);
                char line[384];
                int r, here = -1, to = -1;

                if (!e->dry_run && !action_current(e, a)) {
                        log_debug("%s %s: changed since it was last read; deciding again next tick",
                                  action_type_to_string(a->type), a->nic[0] ? a->nic : "IRQ");
                        continue;
                }
                if (a->type == KNOB_IRQ && e->vectors.used) {
                        const struct inventory_irq *ii = inventory_irq(&e->inv, a->irq);

                        here = ii ? vectors_irq_cpu(ii) : -1;
                        to = vectors_pick(&e->vectors, &cpus, here);
                        if (to < 0) {
                                /* a CPU refused one this tick (ENOSPC): the
                                 * policy plans again with what it learned */
                                log_debug("IRQ %u: no free vector on CPU%d any more; deciding again next tick", a->irq,
                                          cpuset_first(&cpus));
                                policy_feedback(e->policy, a, -EAGAIN, now);
                                continue;
                        }
                }
                action_format(a, line, sizeof(line));
                r = apply_action(e->apply, a);
                check_journal(e);
                if (r < 0 && apply_failed_in_journal(e->apply)) {
                        /* nothing written, not the object's fault */
                        record_action(e, a, line, r);
                        policy_feedback(e->policy, a, -EAGAIN, now);
                } else if (r >= 0) {
                        failures_forget(&e->failures, a);
                        if (r != APPLY_UNCHANGED) {
                                engine_log_action(a, line, r);
                                record_action(e, a, line, r);
                        }
                        if (e->dry_run) {
                                struct knob_key k;

                                /* apply recorded it: the inventory shows it now */
                                if (action_knob_key(a, &k) == 0)
                                        inventory_set_knob(&e->inv, &k, &cpus, a->value, false);
                                if (a->type == KNOB_IRQ)
                                        vectors_move(&e->vectors, here, to);
                        } else if (a->type == KNOB_IRQ && (r == APPLY_DONE || r == APPLY_READBACK_DIFFERS)) {
                                vectors_move(&e->vectors, here, to);
                                effwatch_add(&e->eff, a->irq, &cpus);
                                e->eff_read_until = e->ticks + 1 + EFF_READ_TICKS;
                        }
                        policy_feedback(e->policy, a, 0, now);
                } else {
                        if (action_failure_class(a->type, r) == ACTION_FAIL_CAPACITY)
                                vectors_full(&e->vectors, to >= 0 ? to : cpuset_first(&cpus));
                        failures_log(&e->failures, a, line, r, now, &e->vectors);
                        if (failures_rediscovers(a->type, r)) {
                                e->inventory_dirty = true;
                                if (a->type == KNOB_IRQ)
                                        effwatch_forget(&e->eff, a->irq);
                        }
                        record_action(e, a, line, r);
                        policy_feedback(e->policy, a, r, now);
                }
        }
        check_failures(e);
}

/* ---- the tick ---- */

void engine_log_note(const struct policy_note *no, const char *other) {
        char f_irq[48], f_dev[48], f_queue[48];
        const char *fields[6];
        size_t n = 0;

        if (no->kind == POLICY_NOTE_EXTERNAL)
                fields[n++] = "MESSAGE_ID=" ENGINE_MID_EXTERNAL;
        log_object_fields(no->irq, no->device, no->queue, f_irq, f_dev, f_queue, sizeof(f_irq), fields, &n);
        fields[n] = NULL;
        if (other && other[0])
                log_fields(no->level, fields, "%s; %s", no->text, other);
        else
                log_fields(no->level, fields, "%s", no->text);
}

/* Who else changes what we set (irqbalance); looked up on an external change. */
void engine_find_other_writer(struct engine *e) {
        pid_t pid;

        e->other_writer[0] = 0;
        e->other_pid = 0;
        /* one working on another tree (a simulator's) is not ours */
        if (workers_find_comm(e->rootfd, "irqbalance", "proc/irq", &pid) > 0) {
                e->other_pid = pid;
                snprintf(e->other_writer, sizeof(e->other_writer),
                         "irqbalance (pid %d) is running and changes IRQ affinities too: "
                         "mask it (systemctl mask --now irqbalance.service)", (int) pid);
        }
}

static void log_notes(struct engine *e) {
        const struct policy_report *rep = &e->report;
        bool looked = false;

        for (size_t i = 0; i < rep->n_notes; i++) {
                if (rep->notes[i].kind == POLICY_NOTE_EXTERNAL && !looked) {
                        engine_find_other_writer(e);
                        looked = true;
                }
                engine_log_note(&rep->notes[i],
                                rep->notes[i].kind == POLICY_NOTE_EXTERNAL ? e->other_writer : NULL);
        }
}

/* manage = no: the NIC's IRQs back to their journal originals, unless
 * someone else changed them since; the policy never decides for them. */
static int give_back_unmanaged(struct engine *e) {
        const struct undo *u = e->apply ? apply_undo(e->apply) : NULL;

        for (size_t i = 0; u && i < u->n_entries; i++) {
                const struct undo_entry *ue = &u->entries[i];
                const struct inventory_irq *ii;
                const struct config_interface *ci;
                const char *nic;
                cpuset_t orig, last;
                struct action *a;

                if (ue->key.kind != KNOB_IRQ || !(ii = inventory_irq(&e->inv, ue->key.irq)) || ii->nic < 0 ||
                    (size_t) ii->nic >= e->inv.n_nics || !ii->affinity_readable)
                        continue;
                nic = e->inv.nics[ii->nic].name;
                ci = config_interface_for(e->config, nic);
                if (!ci || ci->manage || cpuset_parse_list(ue->original, &orig) < 0 ||
                    cpuset_parse_list(ue->last, &last) < 0 || cpuset_empty(&orig) ||
                    cpuset_kept_equal(&ii->affinity, &orig) || !cpuset_kept_equal(&ii->affinity, &last))
                        continue;
                a = action_list_add(&e->actions, KNOB_IRQ);
                if (!a)
                        return -ENOMEM;
                a->irq = ii->irq;
                snprintf(a->nic, sizeof(a->nic), "%s", nic);
                a->queue = ii->queue;
                /* last is the IRQ's mask, as the test above found */
                if (action_set_cpus(a, &orig, &last) < 0)
                        return -ENOMEM;
                a->layout = true;
                snprintf(a->reason, sizeof(a->reason), "manage = no for %s: IRQ back to the original", nic);
        }
        return 0;
}

int engine_decide(struct engine *e, uint64_t now, const cpuset_t *bans, const struct sample_rates *raw) {
        struct policy_input in = {
                .config = e->config,
                .topo = &e->topo,
                .inv = &e->inv,
                .load = e->have_avg ? &e->avg : NULL,
                .raw = raw,
                .workers = e->config->n_workers ? &e->workers : NULL,
                .bans = bans,
                .vectors = &e->vectors,
                .now_usec = now,
        };
        int r;

        /* from the inventory the policy sees, at start too; the limits
         * ENOSPC taught stay */
        if (vectors_count(&e->vectors, &e->inv, e->topo.max_cpu) < 0)
                log_debug("Out of memory counting interrupt vectors: last counts kept");
        r = policy_tick(e->policy, &in, &e->actions, &e->report);
        engine_log_policy_result(&e->policy_errno, r);
        if (r < 0)
                return r;
        log_notes(e);
        r = give_back_unmanaged(e);
        if (r < 0)
                return r;
        report_count_policy(e->out, &e->report);
        run_actions(e, now);
        /* a first placement's thousands of actions: the room goes back */
        if (e->actions.allocated > ENGINE_ACTIONS_KEPT)
                action_list_free(&e->actions);
        return 0;
}

/* Why this tick reads /proc/interrupts (large on big hosts: only when
 * something may have changed, irqsteer.conf(5) irq_rate_interval), or NULL. */
#define IRQ_RATE_DRIFT 0.05
static const char *irq_reading_due(const struct engine *e, const struct sample_snapshot *cur, bool cpus_changed) {
        uint64_t last;

        if (e->irq_force)
                return "first tick, or after an action, a reload or an inventory change";
        if (e->eff.n > 0 && e->ticks < e->eff_read_until)
                return "effective affinity watched";
        if (discovery_due(e))
                return "inventory discovery";
        if (e->config->irq_rate_interval_usec == 0)
                return "irq_rate_interval = 0";
        last = sample_snapshot_irq_usec(&e->prev);
        if (cur->usec <= last || cur->usec - last >= e->config->irq_rate_interval_usec)
                return "irq_rate_interval passed";
        if (cpus_changed)
                return "CPU set changed";
        if (sample_load_drifted(&e->prev, cur, e->have_avg ? &e->avg : NULL, e->config->smoothing, e->irq_ref,
                                e->irq_ref_max_cpu, IRQ_RATE_DRIFT))
                return "CPU load moved";
        return NULL;
}

/* After a tick that read /proc/interrupts: the loads it saw. */
static void irq_ref_update(struct engine *e) {
        int m = e->have_avg ? e->avg.max_cpu : -1;

        if (m > e->irq_ref_max_cpu) {
                double *v = reallocarray(e->irq_ref, (size_t) m + 1, sizeof(*v));
                if (!v) {
                        e->irq_force = true; /* no reference: read next time too */
                        return;
                }
                e->irq_ref = v;
        }
        e->irq_ref_max_cpu = m;
        for (int c = 0; c <= m; c++) {
                const struct sample_cpu *sc = &e->avg.cpus[c];
                e->irq_ref[c] = sc->valid && !sc->offline ? sc->irq + sc->softirq : NAN;
        }
}

static const char audit_why[] = "periodic audit";

/* Why this tick runs in full, or NULL for a calm one (/proc/stat alone:
 * docs/DESIGN.md, The tick). */
static const char *full_tick_due(const struct engine *e, uint64_t now, enum policy_pace pace, bool cpus_changed) {
        if (pace != POLICY_PACE_CALM)
                return policy_pace_to_string(pace);
        if (!e->have_avg || e->once)
                return "first ticks";
        if (e->inventory_dirty || e->irq_force || cpus_changed)
                return "inventory, CPU set, bans or configuration changed";
        if (e->eff.n > 0 && e->ticks < e->eff_read_until)
                return "effective affinity watched";
        /* new worker threads are pinned at the next tick */
        if (e->config->n_workers > 0)
                return "workers configured";
        if (e->config->irq_rate_interval_usec == 0)
                return "irq_rate_interval = 0";
        if (e->report.measuring && (e->calm_run + 1 >= ENGINE_MEASURE_FULL_EVERY ||
                                    (e->report.due_usec > 0 && now >= e->report.due_usec)))
                return "a hot CPU's dwell or a new RPS set's share measurement";
        if (e->calm_run + 1 >= e->audit_every)
                return audit_why;
        return NULL;
}

size_t engine_audit_slice(unsigned every) {
        return (size_t) AUDIT_PER_TICK * MAX(every, ENGINE_FULL_TICK_EVERY) / ENGINE_FULL_TICK_EVERY;
}

unsigned engine_audit_every(unsigned every, bool quiet, uint64_t calm_usec) {
        unsigned most = ENGINE_FULL_TICK_EVERY;

        if (calm_usec > 0)
                most = (unsigned) MAX((uint64_t) most, ENGINE_AUDIT_MAX_USEC / calm_usec);
        if (!quiet || every < ENGINE_FULL_TICK_EVERY)
                return ENGINE_FULL_TICK_EVERY;
        return every > most / 2 ? most : 2 * every;
}

/* An audit found nothing: no action or link event recorded (gen), nothing
 * to say, no object newly held, no inventory change, no CPU hot but those
 * the last audit left (a hot CPU no move relieves holds no more than an
 * idle one: a change of load brings a full tick by itself), nothing
 * pending or measured, no written IRQ still watched for where it fires
 * (effwatch reads on full ticks), and the host still calm. */
bool engine_audit_quiet(const struct engine *e, unsigned long gen, unsigned n_external) {
        const struct policy_report *rep = &e->report;

        return (!e->out || e->out->gen == gen) && rep->n_notes == 0 && rep->n_external == n_external &&
               e->eff.n == 0 &&
               !e->inventory_dirty && !e->irq_force && cpuset_equal(&rep->hot, &e->audit_hot) && !rep->measuring &&
               !rep->releasing && !rep->busy && e->pace == POLICY_PACE_CALM;
}

/* engine.h says which interval when. */
uint64_t engine_next_interval(const struct engine *e, uint64_t interval) {
        if (e->pace == POLICY_PACE_FAST && e->config->fast_interval_usec > 0)
                return MIN(e->config->fast_interval_usec, interval);
        if (e->pace == POLICY_PACE_CALM)
                return MAX(e->config->calm_interval_usec, interval);
        return interval;
}

int engine_tick(struct engine *e, uint64_t now, const cpuset_t *bans, struct engine_tick_result *ret) {
        struct sample_snapshot cur = {};
        struct sample_rates raw = {};
        bool read_irqs = false, cpus_changed = false, have_raw = false, counted = false;
        enum policy_pace pace_in;
        unsigned long gen = 0;
        unsigned n_external = 0, audit_every = e->audit_every;
        uint64_t took;
        const char *full;
        int r;

        *ret = (struct engine_tick_result) {};
        r = sample_snapshot_take_cpus(e->rootfd, now, &cur);
        if (r < 0) {
                engine_log_tick_failure(&e->tick_rl, r, "read /proc/stat", now);
                return 0;
        }
        (void) sample_snapshot_take_napi(e->rootfd, &e->inv, &cur); /* -ENOMEM: none */
        cpus_changed = cpu_set_changed(&e->prev, &cur);
        /* shares from /proc/stat alone: prev's other readings carried */
        cur.irq_usec = sample_snapshot_irq_usec(&e->prev);
        cur.softirq_usec = sample_snapshot_softirq_usec(&e->prev);
        r = sample_compute(&e->prev, &cur, &raw);
        cur.irq_usec = cur.softirq_usec = 0;
        have_raw = r >= 0;
        if (r < 0)
                log_debug_errno(r, "Rates unavailable this tick: %m");
        pace_in = policy_pace(e->config, e->policy, &e->report, have_raw ? &raw : NULL);
        full = full_tick_due(e, now, pace_in, cpus_changed);
        /* ethtool -L sends no link notification and the driver resets the
         * IRQ affinities: a calm tick still looks at the queue counts */
        if (!full && inventory_queue_counts_changed(e->rootfd, &e->inv) != 0)
                full = "queue count changed";
        if (full) {
                const char *why = irq_reading_due(e, &cur, cpus_changed), *what = "read /proc/softirqs";

                read_irqs = why != NULL;
                r = sample_snapshot_take_softirqs(e->rootfd, &cur);
                if (r >= 0 && have_raw && any_saturated(e->config, &raw))
                        take_softnet(e, &cur);
                if (r >= 0 && read_irqs) {
                        log_debug("Reading /proc/interrupts: %s", why);
                        what = "read /proc/interrupts";
                        r = sample_snapshot_take_irqs(e->rootfd, &cur);
                }
                if (r < 0) {
                        engine_log_tick_failure(&e->tick_rl, r, what, now);
                        sample_rates_free(&raw);
                        return 0;
                }
                if (read_irqs)
                        (void) sample_snapshot_take_qstats(&e->inv, now, &cur); /* else none */
                else
                        sample_snapshot_carry_irqs(&e->prev, &cur);
                if (have_raw) {
                        sample_rates_free(&raw);
                        r = sample_compute(&e->prev, &cur, &raw);
                        have_raw = r >= 0;
                        if (r < 0)
                                log_debug_errno(r, "Rates unavailable this tick: %m");
                }
        } else {
                sample_snapshot_carry_softirqs(&e->prev, &cur);
                sample_snapshot_carry_irqs(&e->prev, &cur);
        }
        if (have_raw) {
                r = sample_smooth(&e->avg, &raw, e->config->smoothing);
                if (r >= 0) {
                        e->have_avg = true;
                        /* the noise estimate takes every tick's sample */
                        if (!full)
                                policy_observe(e->policy, e->config, &e->avg, now);
                } else
                        log_debug_errno(r, "Rates unavailable this tick: %m");
        }
        if (read_irqs) {
                e->irq_readings++;
                e->irq_force = false;
                irq_ref_update(e);
        }
        r = 0;
        if (!full) {
                e->calm_run++;
                /* calm unless this sample put a CPU at its hot level
                 * (policy_observe): then the next tick comes fast */
                e->pace = policy_pace(e->config, e->policy, &e->report, NULL);
                goto done;
        }
        log_debug("Full tick: %s", full);
        e->calm_run = 0;
        /* back to the shortest wait unless this audit ends quiet */
        e->audit_every = ENGINE_FULL_TICK_EVERY;
        gen = e->out ? e->out->gen : 0;
        n_external = e->report.n_external;

        if (cpus_changed) {
                struct topology t = {};

                r = topology_read(e->rootfd, &t);
                if (r < 0)
                        log_warning_errno(r, "CPU set changed but re-reading the topology failed: %m");
                else {
                        topology_free(&e->topo);
                        e->topo = t;
                        log_notice("CPU hotplug: topology re-read");
                        engine_log_topology(e);
                        e->inventory_dirty = true;
                }
        }

        /* current affinities each tick: external changes show */
        r = refresh_inventory(e, &cur.interrupts);
        if (r < 0) {
                engine_log_tick_failure(&e->tick_rl, r, "read the NIC inventory", now);
                goto out;
        }
        if (e->inventory_dirty) {
                engine_log_inventory(e);
                engine_check_unmatched(e, false);
                e->inventory_dirty = false;
        }
        /* whether a watched IRQ fired: between the last two readings */
        if (e->eff.n > 0 && read_irqs)
                effwatch_check(&e->eff, e->rootfd, &e->inv, &e->prev.interrupts, &cur.interrupts);

        if (e->config->n_workers > 0) {
                struct worker_set ws = {};

                r = workers_discover(e->rootfd, e->config, &ws);
                if (r < 0)
                        log_debug_errno(r, "Worker discovery failed: %m");
                else {
                        workers_free(&e->workers);
                        e->workers = ws;
                        overlay(e, &e->inv, &e->workers, false);
                        /* the journal and status.json keep no thread that exited */
                        int gone = e->apply ? apply_forget_gone_threads(e->apply) : 0;

                        if (gone > 0)
                                log_debug("Forgot %d exited worker threads", gone);
                }
        }

        r = engine_decide(e, now, bans, have_raw ? &raw : NULL);
        if (r == -ENOMEM)
                goto out;
        ret->decided = r >= 0;
        r = 0;
        /* a tick that began fast is followed by a fast one: this report is
         * the new reference, where the rise no longer shows */
        e->pace = MAX(pace_in, policy_pace(e->config, e->policy, &e->report, have_raw ? &raw : NULL));
        if (full == audit_why && ret->decided) {
                if (engine_audit_quiet(e, gen, n_external)) {
                        e->audit_every = engine_audit_every(audit_every, true,
                                                            MAX(e->config->calm_interval_usec, e->config->interval_usec));
                        log_debug("Audit found nothing: the next after %u calm ticks", e->audit_every);
                }
                e->audit_hot = e->report.hot;
        }
done:
        e->ticks++;
        took = util_now_usec(CLOCK_MONOTONIC) - now;
        report_count_tick(e->out, took);
        log_debug("tick %u (%s) took %.1f ms", e->ticks, full ? "full" : "calm", (double) took / USEC_PER_MSEC);
        ret->full = full;
        counted = true;
out:
        sample_rates_free(&raw);
        sample_snapshot_free(&e->prev);
        e->prev = cur;
        return r == -ENOMEM ? r : counted;
}

void engine_init(struct engine *e) {
        *e = (struct engine) {
                .rootfd = -1,
                .failures.rl = { .interval_usec = 60 * USEC_PER_SEC, .burst = 10 },
                .tick_rl = { .interval_usec = 60 * USEC_PER_SEC, .burst = 10 },
                .avg = { .max_cpu = -1 },
                .irq_ref_max_cpu = -1,
                .irq_force = true,
                .audit_every = ENGINE_FULL_TICK_EVERY,
                .audit = { .per_tick = AUDIT_PER_TICK },
        };
}

/* A dry run beside a running daemon: the queue masks its journal lists, still
 * as written, are the policy's (RPS/XPS first: flow counts hang on them). */
static void adopt_journal(struct engine *e, uint64_t now) {
        const struct undo *u = apply_undo(e->apply);

        for (int pass = 0; u && pass < 2; pass++)
                for (size_t i = 0; i < u->n_entries; i++) {
                        const struct undo_entry *ue = &u->entries[i];
                        const struct inventory_nic *n;
                        const struct inventory_queue *q;
                        struct action a = { .type = ue->key.kind, .queue = ue->key.queue };
                        uint64_t v;

                        if ((pass == 0) != (a.type == KNOB_RPS || a.type == KNOB_XPS) ||
                            (pass == 1 && a.type != KNOB_FLOWCNT))
                                continue;
                        n = inventory_nic(&e->inv, ue->key.nic);
                        q = n ? inventory_queue(n, ue->key.queue) : NULL;
                        if (!q)
                                continue;
                        snprintf(a.nic, sizeof(a.nic), "%s", ue->key.nic);
                        /* a running daemon's value: LAST or PENDING */
                        if (a.type == KNOB_FLOWCNT) {
                                char now_text[16];

                                if (util_parse_u64(ue->original, strlen(ue->original), &v) < 0 || v > UINT32_MAX)
                                        continue;
                                a.from_value = (uint32_t) v;
                                a.value = q->rps_flow_cnt;
                                snprintf(now_text, sizeof(now_text), "%" PRIu32, q->rps_flow_cnt);
                                if (strcmp(ue->last, now_text) != 0 && !(ue->pending && strcmp(ue->pending, now_text) == 0))
                                        continue;
                        } else {
                                const cpuset_kept_t *cur = a.type == KNOB_RPS ? &q->rps_cpus : &q->xps_cpus;
                                cpuset_t from, last, pending;

                                if (cpuset_parse_mask(ue->original, &from) < 0 ||
                                    !((cpuset_parse_mask(ue->last, &last) == 0 && cpuset_kept_equal(cur, &last)) ||
                                      (ue->pending && cpuset_parse_mask(ue->pending, &pending) == 0 &&
                                       cpuset_kept_equal(cur, &pending))))
                                        continue;
                                last = cpuset_kept_get(cur);
                                if (action_set_cpus(&a, &last, &from) < 0)
                                        continue;
                        }
                        policy_adopt(e->policy, &a, now);
                        action_done(&a);
                }
}

int engine_start(struct engine *e, uint64_t now) {
        int r;

        r = topology_read(e->rootfd, &e->topo);
        if (r < 0)
                return log_error_errno(r, "Failed to read the CPU topology under %s: %m", e->root);
        (void) cpuset_set_limit(topology_cpu_bound(e->rootfd, &e->topo));
        engine_log_topology(e);

        /* the parts one by one: an error names the one file that is wrong */
        r = sample_snapshot_take_cpus(e->rootfd, now, &e->prev);
        if (r < 0)
                return log_error_errno(r, "Failed to read /proc/stat under %s: %m", e->root);
        r = sample_snapshot_take_softirqs(e->rootfd, &e->prev);
        if (r < 0)
                return log_error_errno(r, "Failed to read /proc/softirqs under %s: %m", e->root);
        r = sample_snapshot_take_irqs(e->rootfd, &e->prev);
        if (r < 0)
                return log_error_errno(r, "Failed to read /proc/interrupts under %s: %m", e->root);
        r = discover_inventory(e, &e->prev.interrupts);
        if (r < 0)
                return log_error_errno(r, "Failed to read the NIC inventory under %s: %m", e->root);
        engine_log_inventory(e);
        engine_check_unmatched(e, true);

        r = apply_new(e->rootfd, e->root_is_host, e->state_dir, e->dry_run, &e->apply);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the actuators: %m");
        e->policy = policy_state_new();
        if (!e->policy)
                return log_error_errno(ENOMEM, "Out of memory");
        if (e->dry_run)
                adopt_journal(e, now);
        return 0;
}

void engine_free(struct engine *e) {
        apply_free(e->apply);
        policy_report_free(&e->report);
        policy_state_free(e->policy);
        action_list_free(&e->actions);
        workers_free(&e->workers);
        sample_rates_free(&e->avg);
        sample_snapshot_free(&e->prev);
        inventory_free(&e->inv);
        topology_free(&e->topo);
        failures_free(&e->failures);
        effwatch_free(&e->eff);
        vectors_free(&e->vectors);
        free(e->irq_ref);
        free(e->msi_warned);
}

void engine_audit_found(struct engine *e) {
        if (e->audit_every != ENGINE_FULL_TICK_EVERY)
                log_debug("Audit found something: the next after %u calm ticks", ENGINE_FULL_TICK_EVERY);
        e->audit_every = ENGINE_FULL_TICK_EVERY;
}

void engine_config_changed(struct engine *e) {
        policy_reset(e->policy);
        e->irq_force = true;
}

void engine_bans_changed(struct engine *e) {
        e->irq_force = true;
}

void engine_link_changed(struct engine *e, const char *name, bool rediscover) {
        if (name)
                policy_forget_nic(e->policy, name);
        if (rediscover)
                e->inventory_dirty = true;
}
