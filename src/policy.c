/* Policy tick, the top layer: builds the model, calls the steps in order
 * (policy-steps.h), takes the actuators' feedback into the records and
 * fills the report (docs/DESIGN.md "Policy").  Pure: no I/O, no clock. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "policy-steps.h"

/* Confirmed placements are counted over this window (the report). */
#define POL_MOVE_WINDOW_USEC (600ULL * 1000000ULL)

const char *policy_trial_verdict_to_string(enum policy_trial_verdict v) {
        static const char *const names[POLICY_TRIAL_VERDICT_MAX] = {
                [POLICY_TRIAL_KEPT] = "kept",
                [POLICY_TRIAL_REVERTED] = "reverted",
                [POLICY_TRIAL_NO_VERDICT] = "no_verdict",
        };
        return v >= 0 && v < POLICY_TRIAL_VERDICT_MAX ? names[v] : NULL;
}

void policy_report_free(struct policy_report *r) {
        free(r->hot_cpus);
        free(r->notes);
        free(r->kernel_managed_irqs);
        free(r->ref);
        *r = (struct policy_report){ 0 };
}

/* ---- feedback ---- */

/* Drops the placements that left the window. */
static void moves_prune(struct policy_state *st, uint64_t now) {
        size_t k = 0;

        while (k < st->n_moves && st->moves[k] + POL_MOVE_WINDOW_USEC <= now)
                k++;
        if (k > 0) {
                memmove(st->moves, st->moves + k, (st->n_moves - k) * sizeof(*st->moves));
                st->n_moves -= k;
        }
}

static void move_push(struct policy_state *st, uint64_t now) {
        /* what left the window first, so the ring stays small */
        moves_prune(st, now);
        if (util_grow((void **) &st->moves, &st->a_moves, st->n_moves + 1, sizeof(*st->moves)) < 0) {
                st->oom = true;
                return;
        }
        st->moves[st->n_moves++] = now;
}

static void feedback_irq(struct policy_state *st, const struct action *a, int result, uint64_t now) {
        struct pol_irq *r = pol_irq_get(st, a->irq, true);
        enum action_failure f = action_failure_class(a->type, result);
        struct pol_nic *n;
        int to, from;

        if (!r) {
                st->oom = true;
                return;
        }
        if (a->nic[0])
                snprintf(r->nic, sizeof(r->nic), "%s", a->nic);
        /* a write failed short of for good: the NIC's layout is planned
         * again next tick */
        n = r->nic[0] && f != ACTION_FAIL_NONE && f != ACTION_FAIL_PERMANENT && f != ACTION_FAIL_GONE
                    ? pol_nic_get(st, r->nic, false) : NULL;
        if (n)
                n->laid_out = false;
        /* failures are said by the daemon (once per object and class):
         * here only what they change in the plan */
        switch (f) {
        case ACTION_FAIL_NONE:
                r->set = true;
                if (cpuset_kept_copy(&r->last_set, &a->cpus) < 0)
                        st->oom = true;
                r->failures = 0;
                r->noted_no_vector = false;
                /* a change taken back is ours again */
                r->external = false;
                /* a placement (the layout, or after a CPU went offline) was
                 * not made on load: it starts no dwell, and is no move */
                if (a->layout)
                        break;
                to = cpuset_kept_only(&r->last_set);
                from = cpuset_kept_only(&a->from);
                if (r->dwell_usec == 0)
                        r->dwell_usec = st->min_dwell_usec;
                /* A bounce: back to the CPU it left at its last move, within
                 * the back-off window (max_dwell).  Its dwell doubles up to
                 * max_dwell; an IRQ that stayed put max_dwell is forgiven. */
                if (r->moved && to >= 0 && to == r->prev_cpu && now - r->last_move_usec < st->max_dwell_usec)
                        r->dwell_usec = MIN(MAX(r->dwell_usec, st->min_dwell_usec) * 2, st->max_dwell_usec);
                else if (r->moved && now - r->last_move_usec >= st->max_dwell_usec)
                        r->dwell_usec = st->min_dwell_usec;
                r->prev_cpu = from;
                r->last_move_usec = now;
                r->moved = true;
                if (r->primary)
                        move_push(st, now);
                break;
        case ACTION_FAIL_PERMANENT:
                /* kernel-managed (EIO before 6.12, EPERM since): skipped
                 * quietly from now on */
                r->managed = true;
                break;
        case ACTION_FAIL_CAPACITY: {
                cpuset_t cpus = cpuset_kept_get(&a->cpus), full = cpuset_kept_get(&r->enospc);

                cpuset_or(&full, &full, &cpus);
                if (cpuset_keep(&r->enospc, &full) < 0)
                        st->oom = true;
                break;
        }
        case ACTION_FAIL_GONE:
                pol_irq_drop(st, r);
                break;
        default:
                /* transient, bad or offline CPUs (the next tick decides on
                 * fresh topology), or something unforeseen: counted but the
                 * transient */
                if (action_failure_counts(f) && ++r->failures == ACTION_MAX_FAILURES)
                        pol_state_note(st, LOG_WARNING, "IRQ %u: setting its affinity failed %u times (%s); giving up",
                                   a->irq, r->failures, strerror(-result));
                break;
        }
}

static void feedback_queue(struct policy_state *st, const struct action *a, int result, uint64_t now) {
        struct pol_queue *q = pol_queue_get(st, a->nic, a->queue, true);
        enum action_failure f = action_failure_class(a->type, result);
        bool *broken;

        if (!q) {
                st->oom = true;
                return;
        }
        broken = a->type == KNOB_RPS ? &q->rps_broken : a->type == KNOB_XPS ? &q->xps_broken : &q->flow_broken;
        switch (f) {
        case ACTION_FAIL_NONE:
                q->failures = 0;
                if (a->type == KNOB_RPS) {
                        q->rps_set = true;
                        q->rps_external = false;
                        if (cpuset_kept_copy(&q->rps_last, &a->cpus) < 0)
                                st->oom = true;
                        q->rps_change_usec = now;
                        q->narrow_ticks = 0;
                } else if (a->type == KNOB_XPS) {
                        q->xps_set = true;
                        q->xps_external = false;
                        if (cpuset_kept_copy(&q->xps_last, &a->cpus) < 0)
                                st->oom = true;
                } else {
                        q->flow_set = true;
                        q->flow_external = false;
                        q->flow_last = a->value;
                }
                break;
        case ACTION_FAIL_GONE:
                pol_queue_drop(st, q);
                break;
        case ACTION_FAIL_PERMANENT:
                *broken = true;
                break;
        default:
                if (action_failure_counts(f) && ++q->failures >= ACTION_MAX_FAILURES) {
                        *broken = true;
                        pol_state_note(st, LOG_WARNING, "%s %s queue %d: failed %u times (%s); giving up",
                                   action_type_to_string(a->type), a->nic, a->queue, q->failures,
                                   strerror(-result));
                }
                break;
        }
}

/* A worker's thread, or a threaded NAPI's kthread (pid == tid, a record
 * of policy-napi.c); one failing for good is left alone. */
static void feedback_thread(struct policy_state *st, const struct action *a, int result, uint64_t now) {
        struct pol_napi *np = a->pid == a->tid ? pol_napi_get(st, a->pid, a->starttime, false) : NULL;
        struct pol_thread *th = np ? NULL : pol_thread_get(st, a->pid, a->tid, true);
        enum action_failure f = action_failure_class(a->type, result);
        unsigned *failures = np ? &np->failures : th ? &th->failures : NULL;
        bool *broken = np ? &np->broken : th ? &th->broken : NULL;

        if (!failures) {
                st->oom = true;
                return;
        }
        if (f == ACTION_FAIL_NONE) {
                *failures = 0;
                if (np) {
                        /* the dwell counts from the first placement too */
                        np->move_usec = now;
                        np->set = true;
                        np->cpu = cpuset_kept_first(&a->cpus);
                } else {
                        th->set = true;
                        th->last_set = cpuset_kept_get(&a->cpus);
                }
        } else if (f == ACTION_FAIL_GONE) {
                /* threaded off, the device or the process gone */
                if (np)
                        *np = st->napis[--st->n_napis];
                else
                        *th = st->threads[--st->n_threads];
        } else if (f == ACTION_FAIL_PERMANENT || (action_failure_counts(f) && ++*failures >= ACTION_MAX_FAILURES)) {
                /* a kernel thread, PF_NO_SETAFFINITY or not ours to change */
                *broken = true;
        }
}

static void feedback_defaff(struct policy_state *st, const struct action *a, int result) {
        enum action_failure f = action_failure_class(a->type, result);

        if (f == ACTION_FAIL_NONE) {
                st->defaff_set = true;
                st->defaff_external = false;
                st->defaff_last = cpuset_kept_get(&a->cpus);
        } else if (f != ACTION_FAIL_TRANSIENT)
                /* one file with one meaning: a failure other than a busy
                 * moment will not go away (the daemon says which) */
                st->defaff_broken = true;
}

/* Threaded NAPI switched on as a relief (policy-napi.c). */
static void feedback_threaded(struct policy_state *st, const struct action *a, int result, uint64_t now_usec) {
        struct pol_nic *rec = pol_nic_get(st, a->nic, false);
        enum action_failure f = action_failure_class(a->type, result);

        if (!rec)
                return;
        if (f == ACTION_FAIL_NONE) {
                rec->thr_ours = (int) a->value != rec->thr_orig;
                rec->thr_change_usec = now_usec;
        } else if (f != ACTION_FAIL_TRANSIENT) {
                /* no such file (old kernel, driver without NAPI) or refused: for good */
                rec->thr_broken |= f == ACTION_FAIL_PERMANENT || f == ACTION_FAIL_INVALID || f == ACTION_FAIL_OTHER;
                rec->thr_trial.on = false;
        }
}

void policy_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec) {
        switch (a->type) {
        case KNOB_IRQ:
                feedback_irq(st, a, result, now_usec);
                break;
        case KNOB_RPS:
        case KNOB_XPS:
        case KNOB_FLOWCNT:
                feedback_queue(st, a, result, now_usec);
                break;
        case KNOB_SOCKFLOW:
                /* set once: retried only after a transient failure (the
                 * daemon says why it failed) */
                if (action_failure_class(a->type, result) == ACTION_FAIL_TRANSIENT)
                        st->sock_flow_done = false;
                break;
        case KNOB_THREAD:
                feedback_thread(st, a, result, now_usec);
                break;
        case KNOB_DEFAFF:
                feedback_defaff(st, a, result);
                break;
        case KNOB_THREADED:
                feedback_threaded(st, a, result, now_usec);
                break;
        default:
                break;
        }
}

void policy_adopt(struct policy_state *st, const struct action *a, uint64_t now_usec) {
        struct pol_queue *q;

        if (a->type != KNOB_RPS && a->type != KNOB_XPS && a->type != KNOB_FLOWCNT)
                return;
        q = pol_queue_get(st, a->nic, a->queue, true);
        if (!q) {
                st->oom = true;
                return;
        }
        /* the original is the journal's, not what the queue holds now:
         * a mask irqsteerd set is not an operator's to keep */
        if (a->type == KNOB_RPS) {
                q->orig_known = true;
                if (cpuset_kept_copy(&q->rps_orig, &a->from) < 0)
                        st->oom = true;
                q->rps_kept = false;
        } else if (a->type == KNOB_XPS) {
                q->xps_orig_known = true;
                if (cpuset_kept_copy(&q->xps_orig, &a->from) < 0)
                        st->oom = true;
        } else
                q->flow_orig = a->from_value;
        feedback_queue(st, a, 0, now_usec);
}

static void sweep(struct policy_state *st) {
        for (size_t i = 0; i < st->n_irqs;)
                if (!st->irqs[i].seen && !st->irqs[i].managed)
                        pol_irq_drop(st, &st->irqs[i]);
                else
                        i++;
        for (size_t i = 0; i < st->n_queues;)
                if (!st->queues[i].seen)
                        pol_queue_drop(st, &st->queues[i]);
                else
                        i++;
        for (size_t i = 0; i < st->n_nics;)
                if (!st->nics[i].seen)
                        st->nics[i] = st->nics[--st->n_nics];
                else
                        i++;
}

/* The report's IRQ classes and kernel-managed IRQ numbers.  0 or -ENOMEM. */
static int irq_classes(struct pol_tick *t) {
        struct policy_report *rep = t->rep;

        rep->kernel_managed_irqs = calloc(MAX(t->inv->n_irqs, 1), sizeof(*rep->kernel_managed_irqs));
        if (!rep->kernel_managed_irqs)
                return -ENOMEM;
        for (size_t i = 0; i < t->inv->n_irqs; i++) {
                const struct inventory_irq *ii = &t->inv->irqs[i];
                const struct pol_irq *r = pol_irq_get(t->st, ii->irq, false);
                /* the tick knows each NIC's manage: no pattern match an IRQ */
                bool nic_managed = ii->nic < 0 || (size_t) ii->nic >= t->inv->n_nics || t->nics[ii->nic].managed;
                enum classify_irq_class c = classify_irq_rules(t->c, t->inv, ii, r && r->managed, nic_managed);

                rep->n_irq_class[c]++;
                if (c == CLASSIFY_IRQ_KERNEL_MANAGED)
                        rep->kernel_managed_irqs[rep->n_kernel_managed_irqs++] = ii->irq;
        }
        return 0;
}

static int fill_report(struct pol_tick *t) {
        struct policy_state *st = t->st;
        struct policy_report *rep = t->rep;
        size_t k = 0;

        rep->hot = t->hot;
        rep->n_hot_cpus = cpuset_count(&t->hot);
        rep->enter = pol_enter(t);
        rep->ref_max_cpu = -1;
        if (t->in->raw && t->in->raw->max_cpu >= 0) {
                const struct sample_rates *raw = t->in->raw;

                rep->ref = malloc(((size_t) raw->max_cpu + 1) * sizeof(*rep->ref));
                if (!rep->ref)
                        return -ENOMEM;
                rep->ref_max_cpu = raw->max_cpu;
                for (int c = 0; c <= raw->max_cpu; c++) {
                        const struct sample_cpu *rc = &raw->cpus[c];

                        rep->ref[c] = rc->valid ? (struct policy_pace_ref) { pol_cpu_load(rc), MAX(rc->idle, 0) }
                                                : (struct policy_pace_ref) { NAN, NAN };
                }
        }
        rep->busy = cpuset_count(&t->settling) > 0 || cpuset_count(&t->touched) > 0;
        for (size_t i = 0; i < st->n_cpus; i++) {
                struct pol_cpu *pc = &st->cpus[i];
                uint64_t end;

                rep->n_rising += !pc->hot && pc->above > 0;
                if (!pc->hot) {
                        pc->hot_since = 0;
                        continue;
                }
                if (pc->hot_since == 0 || (i < CPUSET_MAX && cpuset_isset(&t->touched, (int) i)))
                        pc->hot_since = t->now;
                /* a CPU hot with nothing to do is not worth a decision
                 * every tick: within the dwell what it waits for ends at
                 * a known time or shows in the raw shares; past it the
                 * periodic full tick looks again (policy_pace) */
                end = pc->hot_since + MAX(t->c->min_dwell_usec, 10 * t->c->interval_usec);
                if (t->now < end) {
                        rep->measuring = true;
                        if (rep->due_usec == 0 || end < rep->due_usec)
                                rep->due_usec = end;
                }
        }
        for (size_t i = 0; i < st->n_nics; i++)
                rep->busy |= st->nics[i].rps_trial.on || st->nics[i].thr_trial.on;
        /* a plan to look at again (pol_replan), a steady peak waiting for
         * its level (pol_rps_steady) */
        rep->measuring |= t->plan_pending || t->steady_pending;
        if (t->single_due > t->now) {
                rep->measuring = true;
                if (rep->due_usec == 0 || t->single_due < rep->due_usec)
                        rep->due_usec = t->single_due;
        }
        /* RPS sets sized with the prior wait for a measured share and the
         * dwell (pol_rps_adjust), which calm ticks never bring: the daemon
         * runs a full tick every few (ENGINE_MEASURE_FULL_EVERY) meanwhile,
         * for up to 10 intervals past the dwell. */
        for (size_t i = 0; i < st->n_queues; i++) {
                const struct pol_queue *q = &st->queues[i];

                if (q->seen && q->rps_prior &&
                    t->now - q->rps_change_usec < t->c->min_dwell_usec + 10 * t->c->interval_usec) {
                        uint64_t end = q->rps_change_usec + t->c->min_dwell_usec;

                        rep->measuring = true;
                        /* the dwell's end is known: sized again then, not
                         * at the measuring cadence's next full tick */
                        if (t->now < end && (rep->due_usec == 0 || end < rep->due_usec))
                                rep->due_usec = end;
                }
                rep->n_kept += q->rps_kept;
                rep->n_external += q->rps_external + q->xps_external + q->flow_external;
                rep->releasing |= q->seen && q->narrow_ticks > 0;
        }
        rep->hot_cpus = calloc(MAX(rep->n_hot_cpus, 1), sizeof(*rep->hot_cpus));
        if (!rep->hot_cpus) {
                rep->n_hot_cpus = 0;
                return -ENOMEM;
        }
        CPUSET_FOREACH(cpu, &t->hot) {
                const struct sample_rates *l = t->in->load;
                struct policy_hot_cpu *h = &rep->hot_cpus[k++];
                h->cpu = cpu;
                h->saturated = st->cpus[cpu].saturated;
                if (!cpuset_isset(&t->touched, cpu))
                        snprintf(h->why, sizeof(h->why), "%s", st->cpus[cpu].why);
                if (l && cpu <= l->max_cpu && l->cpus[cpu].valid) {
                        h->load = l->cpus[cpu].irq + l->cpus[cpu].softirq;
                        h->idle = l->cpus[cpu].idle;
                }
        }
        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *u = &t->units[i];
                if (!t->nics[u->nic].managed)
                        continue;
                for (int j = 0; j < u->n_irq; j++) {
                        const struct pol_irq *r = pol_irq_get(st, u->irq[j], false);

                        rep->n_queue_irqs += !r || (!r->managed && !r->external);
                }
                rep->n_rps_queues += u->rps_ours;
        }
        for (size_t i = 0; i < t->n_irqless; i++) {
                const struct pol_unit *u = &t->irqless[i];
                const struct inventory_nic *n = t->nics[u->nic].nic;

                for (size_t q = 0; u->rps_ours && q < n->n_queues; q++)
                        rep->n_rps_queues += pol_rps_ours(st, n, &n->queues[q]);
        }
        moves_prune(st, t->now);
        rep->n_moves_10min = st->n_moves;
        for (size_t i = 0; i < st->n_irqs; i++) {
                rep->n_managed_irqs += st->irqs[i].managed;
                rep->n_external += st->irqs[i].external;
        }
        if (irq_classes(t) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < st->n_threads; i++)
                rep->n_external += st->threads[i].external;
        return 0;
}

/* ---- pace ---- */

static const char *const pace_names[POLICY_PACE_MAX] = {
        [POLICY_PACE_CALM] = "calm",
        [POLICY_PACE_STEADY] = "steady",
        [POLICY_PACE_FAST] = "fast",
};

const char *policy_pace_to_string(enum policy_pace p) {
        return p >= 0 && p < POLICY_PACE_MAX ? pace_names[p] : NULL;
}

enum policy_pace policy_pace(const struct config *c, const struct policy_state *st, const struct policy_report *last,
                             const struct sample_rates *raw) {
        enum policy_pace pace;

        if (!c || !last || !(last->enter > 0))
                return POLICY_PACE_STEADY;
        /* a CPU counting samples towards hot, at the last policy tick or
         * by a calm tick's sample since (policy_observe) */
        if (last->n_rising > 0 || (st && st->n_at_level > 0))
                return POLICY_PACE_FAST;
        pace = last->busy ? POLICY_PACE_STEADY : POLICY_PACE_CALM;
        /* a CPU's load that changed, up or down, and now holds its new
         * level: what the last policy tick planned on was still moving */
        if (st && st->n_level_new > 0)
                pace = POLICY_PACE_STEADY;
        if (!raw)
                return pace;
        for (int cpu = 0; cpu <= raw->max_cpu; cpu++) {
                const struct sample_cpu *rc = &raw->cpus[cpu];
                double L, idle;

                if (!rc->valid || (cpu < CPUSET_MAX && cpuset_isset(&last->hot, cpu)))
                        continue;
                L = pol_cpu_load(rc);
                idle = MAX(rc->idle, 0);
                /* not hot yet and its raw load at the threshold: the onset
                 * of a flood (its smoothed load at its own level, a steady
                 * load's lower one too, is policy_observe's) */
                if (L >= last->enter)
                        return POLICY_PACE_FAST;
                /* the onset of a spike: sample soon, so a flood is acted on
                 * within fast_interval; a fall in idle counts too when the
                 * network share rose with it (much of a flood's cost is
                 * its sender's and receiver's) */
                if (last->ref && cpu <= last->ref_max_cpu) {
                        const struct policy_pace_ref *ref = &last->ref[cpu];

                        if (L - ref->load >= POL_PACE_RISE ||
                            (ref->idle - idle >= POL_PACE_RISE && L - ref->load >= POL_PACE_NET_RISE))
                                return POLICY_PACE_FAST;
                }
                /* the saturated rule may count it (unless no CPU has room:
                 * then sampling fast would change nothing) */
                if (idle < c->saturated_idle && L >= c->saturated_share)
                        pace = POLICY_PACE_STEADY;
        }
        return pace;
}

void policy_observe(struct policy_state *st, const struct config *c, const struct sample_rates *load,
                    uint64_t now_usec) {
        if (!st || !c || !load || !load->cpus)
                return;
        st->n_at_level = st->n_level_new = 0;
        /* CPUs the policy has not seen yet start at its next tick */
        for (int cpu = 0; cpu <= load->max_cpu && (size_t) cpu < st->n_cpus; cpu++) {
                const struct sample_cpu *sc = &load->cpus[cpu];
                struct pol_cpu *pc = &st->cpus[cpu];
                double L;

                if (!sc->valid)
                        continue;
                L = pol_cpu_load(sc);
                pol_noise_sample(pc, c, L, now_usec < pc->settle_until);
                if (pc->level_unjudged && pol_cpu_steady(pc))
                        st->n_level_new++;
                /* what the next policy tick would count towards hot (the
                 * noise just sampled moves a steady load's level) */
                if (!pc->hot && st->levels.enter > 0 && pol_cpu_judged(pc, L) >= pol_cpu_enter(&st->levels, pc))
                        st->n_at_level++;
        }
}

int policy_tick(struct policy_state *st, const struct policy_input *in, struct action_list *ret_actions,
                struct policy_report *ret_report) {
        struct pol_tick t = { 0 };
        cpuset_t banned;
        int r, n;

        if (!st || !in || !in->config || !in->topo || !in->inv || !ret_actions || !ret_report)
                return -EINVAL;
        if (in->topo->max_cpu < 0 || in->topo->max_cpu >= CPUSET_MAX || !in->topo->cpus)
                return -EINVAL;

        action_list_clear(ret_actions);
        policy_report_free(ret_report);

        /* the report's n_rising speaks for this tick's sample */
        st->n_at_level = st->n_level_new = 0;
        t.st = st;
        t.in = in;
        t.c = in->config;
        t.topo = in->topo;
        t.inv = in->inv;
        t.out = ret_actions;
        t.rep = ret_report;
        t.now = in->now_usec;
        t.scale = 1;
        t.floor = t.c->balance_floor;
        t.max_cpu = in->topo->max_cpu;
        st->min_dwell_usec = t.c->min_dwell_usec;
        st->max_dwell_usec = MAX(t.c->max_dwell_usec, t.c->min_dwell_usec);

        /* notes said by feedback since the last tick */
        if (st->n_notes > 0) {
                ret_report->notes = st->notes;
                ret_report->n_notes = st->n_notes;
                st->notes = NULL;
                st->n_notes = st->a_notes = 0;
        }
        if (st->oom) {
                st->oom = false;
                pol_note(&t, LOG_WARNING, "policy state: out of memory while recording feedback");
        }

        n = t.max_cpu + 1;
        if (util_grow((void **) &st->cpus, &st->a_cpus, n, sizeof(*st->cpus)) < 0)
                return -ENOMEM;
        if (st->n_cpus < (size_t) n) {
                memset(st->cpus + st->n_cpus, 0, (n - st->n_cpus) * sizeof(*st->cpus));
                st->n_cpus = n;
        }
        /* load, idle, net and leaving in one block */
        t.load = calloc(4 * (size_t) n, sizeof(double));
        t.nics = calloc(MAX(in->inv->n_nics, 1), sizeof(*t.nics));
        if (!t.load || !t.nics) {
                r = -ENOMEM;
                goto finish;
        }
        t.idle = t.load + n;
        t.net = t.idle + n;
        t.leaving = t.net + n;

        /* eligible CPUs (docs/DESIGN.md "Policy"); what still uses another
         * leaves it this tick (pol_vacate_rps, pol_replace_offline) */
        banned = t.c->banned_cpus;
        if (in->bans)
                cpuset_or(&banned, &banned, in->bans);
        topology_eligible(in->topo, &banned, &t.eligible);

        for (size_t i = 0; i < st->n_irqs; i++)
                st->irqs[i].seen = false;
        for (size_t i = 0; i < st->n_queues; i++)
                st->queues[i].seen = false;

        for (size_t i = 0; i < st->n_cpus && i < CPUSET_MAX; i++)
                if (t.now < st->cpus[i].settle_until)
                        cpuset_set(&t.settling, (int) i);
        /* the policy's own counts: moved as it plans, its input untouched */
        t.vec = (struct vectors) { .max_cpu = -1 };
        r = in->vectors && in->vectors->used ? vectors_copy(&t.vec, in->vectors)
                                             : vectors_count(&t.vec, in->inv, t.max_cpu);
        if (r < 0)
                goto finish;
        r = pol_model_build(&t);
        if (r < 0)
                goto finish;
        pol_share_measure(&t);
        if (t.r < 0) {
                r = t.r;
                goto finish;
        }
        r = pol_soft_build(&t);
        if (r < 0)
                goto finish;

        pol_unwanted(&t);
        pol_vacate_rps(&t);
        pol_other_build(&t);
        for (size_t i = 0; i < in->inv->n_nics; i++)
                if (pol_layout_nic(&t, i))
                        pol_rps_single(&t, i);
        pol_replace_offline(&t);
        if (in->load) {
                /* RPS for the lone hot queues the moves leave, after them */
                pol_rps_pool(&t);
                pol_rebalance(&t);
                pol_rps_lone(&t);
                pol_replan(&t);
                pol_rps_steady(&t);
        }
        pol_other_irqs(&t);
        pol_rebalance_other(&t);
        pol_default_affinity(&t);
        pol_rps_adjust(&t);
        pol_rps_gran(&t);
        pol_soft(&t);
        pol_xps(&t);
        pol_workers(&t);
        pol_napi(&t);

        sweep(st);
        r = fill_report(&t);
        if (r == 0)
                r = t.r;
finish:
        free(t.load);
        free(t.nics);
        pol_units_free(t.units, t.n_units);
        pol_units_free(t.irqless, t.n_irqless);
        free(t.others);
        vectors_free(&t.vec);
        return r;
}
