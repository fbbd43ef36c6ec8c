/* Policy, IRQs that serve no NIC queue: on local eligible CPUs, busy ones
 * one a CPU, moved off hot CPUs with the queue IRQs' hysteresis
 * (docs/DESIGN.md "Policy"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "policy-steps.h"

/* Interrupts/s from which another device's IRQ is placed by its load (a
 * loaded disk, not a timer); one placed stays while quiet. */
#define POL_OTHER_RATE 200.0
/* The least CPU share an interrupt and its completion cost, where the
 * non-network time cannot be told apart. */
#define POL_OTHER_COST 2e-6

/* The NIC an IRQ that is no queue's belongs to (its admin vector), or NULL. */
static const struct inventory_nic *nic_of(const struct pol_tick *t, const struct inventory_irq *ii) {
        return ii->nic >= 0 && (size_t) ii->nic < t->inv->n_nics ? &t->inv->nics[ii->nic] : NULL;
}

/* A NIC queue's rx, tx or combined vector. */
static bool queue_irq(const struct inventory_irq *ii) {
        return ii->role == INVENTORY_IRQ_RXTX || ii->role == INVENTORY_IRQ_RX || ii->role == INVENTORY_IRQ_TX;
}

/* The eligible CPUs of node, or all when it is unknown or has none. */
static void local_cpus(const struct pol_tick *t, int node, cpuset_t *ret) {
        cpuset_zero(ret);
        for (size_t k = 0; node >= 0 && k < t->topo->n_nodes; k++)
                if (t->topo->nodes[k].id == node)
                        cpuset_and(ret, &t->topo->nodes[k].cpus, &t->eligible);
        if (cpuset_empty(ret))
                *ret = t->eligible;
}

/* The irq+softirq share the IRQ explains: its part of the other devices'
 * interrupts on each CPU of that CPU's non-network share, at least
 * POL_OTHER_COST an interrupt. */
static double other_work(const struct pol_tick *t, const struct sample_irq *si, const double *other_rate) {
        const struct sample_rates *l = t->in->load;
        double w = 0;
        int lo, hi;

        if (!si || !l)
                return 0;
        pol_irq_range(l, si, t->max_cpu + 1, &lo, &hi);
        for (int c = lo; c <= hi; c++) {
                double r = sample_irq_on(si, l->max_cpu, c);
                if (r > 0 && other_rate[c] > 0)
                        w += MAX(t->load[c] - t->net[c], 0) * r / other_rate[c];
        }
        return MAX(w, si->rate * POL_OTHER_COST);
}

/* Moves o's projected load from where it fires now to cpu; with settle,
 * those CPUs settle too. */
static void shift_load(struct pol_tick *t, const struct pol_other *o, int cpu, bool settle) {
        const struct sample_rates *l = t->in->load;
        int lo, hi;

        if (o->work <= 0 || !l || !o->si || o->si->rate <= 0)
                return;
        pol_irq_range(l, o->si, t->max_cpu + 1, &lo, &hi);
        for (int c = lo; c <= hi; c++) {
                double r = sample_irq_on(o->si, l->max_cpu, c);

                if (r > 0) {
                        t->load[c] = MAX(t->load[c] - o->work * r / o->si->rate, 0);
                        if (settle)
                                pol_settle_by(t, c, o->work * r / o->si->rate);
                }
        }
        if (cpu >= 0 && cpu <= t->max_cpu)
                t->load[cpu] += o->work;
}

enum pick {
        PICK_ANY,
        PICK_NOT_HOT,
        PICK_COOL,               /* not hot, not settling from an earlier tick's action */
};

/* The one CPU all of o's interrupts land on now, -1 when none or several. */
static int fires_on(const struct pol_tick *t, const struct pol_other *o) {
        const struct sample_rates *l = t->in->load;
        int lo, hi, cpu = -1;

        if (!o->si || !l || o->si->rate <= 0)
                return -1;
        pol_irq_range(l, o->si, t->max_cpu + 1, &lo, &hi);
        for (int c = lo; c <= hi; c++)
                if (sample_irq_on(o->si, l->max_cpu, c) > 0) {
                        if (cpu >= 0)
                                return -1;
                        cpu = c;
                }
        return cpu;
}

/* cpu's projected load without o's own work: the CPU it fires on is
 * judged as if it had left, so staying competes fairly with a move. */
static double load_without(const struct pol_tick *t, const struct pol_other *o, int cpu) {
        double r = o->si && o->si->rate > 0 ? sample_irq_on(o->si, t->in->load->max_cpu, cpu) : 0;

        return r > 0 ? MAX(t->load[cpu] - o->work * r / o->si->rate, 0) : t->load[cpu];
}

/* The least loaded CPU of cand for the IRQ o (staying where it fires, then
 * physical cores before SMT siblings on a tie), not `not`, skipping CPUs
 * without a free vector for it (counted, or refused with ENOSPC), those
 * `pick` rules out and those in took (may be NULL).  The CPU all of o's
 * interrupts land on is not ruled out for an action of this or an earlier
 * tick there, nor for being hot unless o is of a mass (which leaves that
 * CPU): pinning it where it fires moves no work, and it is judged without
 * o's own. */
static int least_loaded(const struct pol_tick *t, const struct pol_other *o, const cpuset_t *cand, int not,
                        enum pick pick, const cpuset_t *took) {
        int best = -1, here = vectors_irq_cpu(o->ii), fires = fires_on(t, o);
        double best_load = 0;

        CPUSET_FOREACH(cpu, cand) {
                double load;

                if (cpu == not || cpu > t->max_cpu || (o->r && cpuset_kept_isset(&o->r->enospc, cpu)) ||
                    (cpu != here && !vectors_room(&t->vec, cpu)) || (took && cpuset_isset(took, cpu)))
                        continue;
                if (pick >= PICK_NOT_HOT && (cpu != fires || o->massed) && cpuset_isset(&t->hot, cpu))
                        continue;
                if (pick >= PICK_COOL && cpu != fires && pol_settling(t, cpu))
                        continue;
                load = load_without(t, o, cpu);
                if (best < 0 || load < best_load - 1e-9 ||
                    (load < best_load + 1e-9 && best != fires &&
                     (cpu == fires || t->topo->cpus[cpu].smt_index < t->topo->cpus[best].smt_index))) {
                        best = cpu;
                        best_load = load;
                }
        }
        return best;
}

/* Places o on `to`; false, and nothing planned, when no CPU of `to` has a
 * free vector for it.  A layout placement off CPUs gone or not allowed
 * has that reason instead of code. */
static bool emit(struct pol_tick *t, struct pol_other *o, const cpuset_t *to, bool layout, enum action_reason code,
                 const char *reason) {
        int cpu = pol_vector_pick(t, o->ii, to);
        struct action *a;

        if (cpu < 0)
                return false;
        if (!o->r) {
                o->r = pol_irq_get(t->st, o->ii->irq, true);
                if (!o->r) {
                        t->r = -ENOMEM;
                        return false;
                }
                o->r->seen = true;
        }
        /* its placements count as moves, as a queue's first IRQ's do */
        o->r->primary = true;
        if (nic_of(t, o->ii))
                snprintf(o->r->nic, sizeof(o->r->nic), "%s", nic_of(t, o->ii)->name);
        a = pol_add(t, KNOB_IRQ);
        if (!a)
                return false;
        pol_vector_move(t, o->ii, cpu);
        a->irq = o->ii->irq;
        a->queue = -1;
        pol_set_cpus_kept(t, a, to, &o->ii->affinity);
        a->layout = layout;
        if (layout && (o->stranded || o->ineligible))
                code = o->stranded ? ACTION_REASON_CPU_OFFLINE : ACTION_REASON_CPU_BANNED;
        action_set_reason(a, code, "%s", reason);
        o->touched = true;
        o->cpu = cpuset_only(to);
        return true;
}

static int cmp_work(const void *a, const void *b) {
        const struct pol_other *x = *(const struct pol_other *const *) a, *y = *(const struct pol_other *const *) b;

        if (x->work != y->work)
                return x->work < y->work ? 1 : -1;
        return (x->ii->irq > y->ii->irq) - (x->ii->irq < y->ii->irq);
}

/* Checks the IRQ against what we set.  Returns false when it is not ours
 * to change: kernel-managed, changed behind our back (and held), given up. */
static bool check_other(struct pol_tick *t, const struct inventory_irq *ii, struct pol_irq *r) {
        const struct inventory_nic *n = nic_of(t, ii);
        cpuset_t last;

        r->seen = true;
        if (r->resync) {
                /* its NIC was reset: the driver's value, not an admin's */
                r->resync = false;
                if (r->set && !cpuset_kept_same(&r->last_set, &ii->affinity))
                        r->set = r->moved = false;
        }
        if (r->managed || r->failures >= ACTION_MAX_FAILURES || pol_irq_held(t, r, ii, n ? n->name : NULL, -1))
                return false;
        if (!r->set)
                return true;
        last = cpuset_kept_get(&r->last_set);
        if (!cpuset_intersects(&last, &t->topo->online)) {
                /* the CPU we set went offline and the kernel moved it */
                r->set = false;
                return true;
        }
        return pol_irq_kept(t, r, ii, n ? n->name : NULL, -1);
}

static int build_others(struct pol_tick *t, double *other_rate) {
        const struct sample_rates *l = t->in->load;

        /* the other devices' interrupts per CPU, to split the CPU's
         * non-network share among them */
        for (size_t i = 0; l && i < t->inv->n_irqs; i++) {
                const struct inventory_irq *ii = &t->inv->irqs[i];
                const struct sample_irq *si;
                int lo, hi;

                if (queue_irq(ii))
                        continue;
                si = sample_rates_irq(l, ii->irq);
                if (!si || !si->valid || si->rate <= 0)
                        continue;
                pol_irq_range(l, si, t->max_cpu + 1, &lo, &hi);
                for (int c = lo; c <= hi; c++)
                        other_rate[c] += sample_irq_on(si, l->max_cpu, c);
        }
        for (size_t i = 0; i < t->inv->n_irqs; i++) {
                const struct inventory_irq *ii = &t->inv->irqs[i];
                const struct inventory_nic *n = nic_of(t, ii);
                struct pol_other *o;
                struct pol_irq *r;
                cpuset_t on;

                /* another device's IRQ the configuration lets us place: not
                 * of a NIC with manage = no, not in ban_irqs */
                if (queue_irq(ii) || (n && !t->nics[ii->nic].managed) || !ii->affinity_readable ||
                    config_irq_banned(t->c, ii->irq))
                        continue;
                r = pol_irq_get(t->st, ii->irq, false);
                if (r && !check_other(t, ii, r))
                        continue;
                cpuset_kept_and(&on, &ii->affinity, &t->topo->online);
                if (util_grow((void **) &t->others, &t->a_others, t->n_others + 1, sizeof(*t->others)) < 0)
                        return -ENOMEM;
                o = &t->others[t->n_others++];
                /* its node: its own (proc/irq/N/node), else its NIC's */
                *o = (struct pol_other){ .ii = ii, .r = r, .node = ii->node >= 0 ? ii->node : n ? n->node : -1,
                                         .cpu = cpuset_only(&on) };
                o->si = l ? sample_rates_irq(l, ii->irq) : NULL;
                if (o->si && !o->si->valid)
                        o->si = NULL;
                o->rate = o->si ? o->si->rate : 0;
                o->busy = o->rate >= POL_OTHER_RATE;
                o->work = other_work(t, o->si, other_rate);
                o->ineligible = !cpuset_subset(&on, &t->eligible);
                /* a kernel widens such a mask itself; a tree without one
                 * behind it (--root) keeps naming the offline CPUs */
                o->stranded = cpuset_empty(&on);
        }
        return 0;
}

static int cmp_rate(const void *a, const void *b) {
        const struct pol_other *x = *(const struct pol_other *const *) a, *y = *(const struct pol_other *const *) b;

        if (x->rate != y->rate)
                return x->rate < y->rate ? 1 : -1;
        return (x->ii->irq > y->ii->irq) - (x->ii->irq < y->ii->irq);
}

/* Quiet IRQs on masks of several CPUs whose interrupts all land on one CPU
 * (a platform fires such a mask on one of its CPUs): together they load
 * it as a busy IRQ would.  While they add up to POL_OTHER_RATE there, the
 * heaviest count as busy, so each gets a CPU of its own; those left come
 * to less than one busy IRQ.  0 or -ENOMEM. */
static int mark_massed(struct pol_tick *t) {
        _cleanup_(freep) struct pol_other **v = NULL;
        _cleanup_(freep) double *sum = NULL;
        size_t n = 0;

        if (t->n_others == 0 || !t->in->load)
                return 0;
        v = calloc(t->n_others, sizeof(*v));
        sum = calloc(t->max_cpu + 1, sizeof(double));
        if (!v || !sum)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_others; i++) {
                struct pol_other *o = &t->others[i];
                int c;

                if (o->busy || o->cpu >= 0 || (c = fires_on(t, o)) < 0)
                        continue;
                sum[c] += o->rate;
                v[n++] = o;
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), cmp_rate);
        for (size_t i = 0; i < n; i++) {
                int c = fires_on(t, v[i]);

                if (sum[c] < POL_OTHER_RATE)
                        continue;
                sum[c] -= v[i]->rate;
                v[i]->busy = v[i]->massed = true;
        }
        return 0;
}

void pol_other_build(struct pol_tick *t) {
        _cleanup_(freep) double *other_rate = NULL;

        if (!t->c->other_irqs)
                return;
        other_rate = calloc(t->max_cpu + 1, sizeof(double));
        if (!other_rate || build_others(t, other_rate) < 0 || mark_massed(t) < 0) {
                t->r = -ENOMEM;
                return;
        }
        for (size_t i = 0; i < t->n_others; i++) {
                const struct pol_other *o = &t->others[i];
                int c;

                /* a mass's IRQs each get a CPU of their own (the
                 * first may stay); a busy IRQ stays where it fires */
                if (o->massed && (c = fires_on(t, o)) >= 0)
                        t->leaving[c] += o->work;
        }
}

/* Whether a CPU of cand settles from an earlier tick's action or was
 * changed by this tick's before (before): its load is not yet what it
 * will be. */
static bool unsettled(const struct pol_tick *t, const cpuset_t *cand, const cpuset_t *before) {
        CPUSET_FOREACH(cpu, cand)
                if (pol_settling(t, cpu) || cpuset_isset(before, cpu))
                        return true;
        return false;
}

void pol_other_irqs(struct pol_tick *t) {
        _cleanup_(freep) struct pol_other **busy = NULL;
        size_t n_busy = 0;
        char reason[256];
        cpuset_t local, took, before;

        if (!t->c->other_irqs)
                return;
        if (t->n_others > 0 && !(busy = calloc(t->n_others, sizeof(*busy)))) {
                t->r = -ENOMEM;
                return;
        }

        /* quiet IRQs: their node's eligible CPUs, unless within them */
        for (size_t i = 0; i < t->n_others; i++) {
                struct pol_other *o = &t->others[i];
                cpuset_t on;

                if (o->busy) {
                        busy[n_busy++] = o;
                        continue;
                }
                local_cpus(t, o->node, &local);
                cpuset_kept_and(&on, &o->ii->affinity, &t->topo->online);
                if ((!o->stranded && cpuset_subset(&on, &local)) || cpuset_empty(&local))
                        continue;
                if (o->stranded || o->ineligible)
                        snprintf(reason, sizeof(reason), "%s: %s onto %s", o->ii->name[0] ? o->ii->name : "IRQ",
                                 o->stranded ? "every CPU it had went offline;"
                                             : "off CPUs that may not be used (banned, isolated or nohz_full),",
                                 o->node >= 0 ? "its node's eligible CPUs" : "the eligible CPUs");
                else
                        snprintf(reason, sizeof(reason), "%s: NUMA-local, onto node %d's eligible CPUs",
                                 o->ii->name[0] ? o->ii->name : "IRQ", o->node);
                if (!emit(t, o, &local, true, ACTION_REASON_IRQ_NUMA_LOCAL, reason))
                        pol_note_no_vector(t, o->ii, nic_of(t, o->ii) ? nic_of(t, o->ii)->name : NULL, -1, &local);
        }

        /* busy IRQs, heaviest first, each on the local CPU its projected
         * load leaves least loaded, the IRQs placed before it counted
         * (docs/DESIGN.md "Policy", "Everything else") */
        cpuset_zero(&took);
        before = t->touched;
        if (n_busy > 1)
                qsort(busy, n_busy, sizeof(*busy), cmp_work);
        for (size_t i = 0; i < n_busy; i++) {
                struct pol_other *o = busy[i];
                cpuset_t to;
                int cpu;

                local_cpus(t, o->node, &local);
                if (o->cpu >= 0 && cpuset_isset(&local, o->cpu))
                        continue;
                /* while a local CPU's load lags an action, all wait
                 * (unless where it fires is not allowed): placed around
                 * such a CPU, they took a CPU each beside the queues
                 * while the CPU they left sat idle; a quiet IRQ of a mass
                 * moves too little work to wait for the samples (took
                 * keeps them a CPU each) */
                if (!o->massed && !o->ineligible && !o->stranded && unsettled(t, &local, &before))
                        continue;
                cpu = least_loaded(t, o, &local, -1, PICK_NOT_HOT, o->massed ? &took : NULL);
                if (cpu < 0 && (o->ineligible || o->stranded))
                        cpu = least_loaded(t, o, &local, -1, PICK_ANY, NULL);
                if (cpu < 0) {
                        if (least_loaded(t, o, &local, -1, PICK_ANY, NULL) < 0)
                                pol_note_no_vector(t, o->ii, nic_of(t, o->ii) ? nic_of(t, o->ii)->name : NULL, -1,
                                                   &local);
                        continue;
                }
                cpuset_set(&took, cpu);
                if (o->massed)
                        snprintf(reason, sizeof(reason),
                                 "%.40s: %.0f interrupts/s, of quiet IRQs that together load CPU%d as a busy one; "
                                 "on CPU%d, the least loaded of its %d NUMA-local eligible CPUs",
                                 o->ii->name[0] ? o->ii->name : "IRQ", o->rate, fires_on(t, o), cpu,
                                 cpuset_count(&local));
                else
                        snprintf(reason, sizeof(reason),
                                 "%s: %.0f interrupts/s; on CPU%d, the least loaded of its %d NUMA-local eligible CPUs%s",
                                 o->ii->name[0] ? o->ii->name : "IRQ", o->rate, cpu, cpuset_count(&local),
                                 o->stranded ? " (every CPU it had went offline)"
                                 : o->ineligible ? " (it fired on CPUs that may not be used)" : "");
                to = cpuset_single(cpu);
                shift_load(t, o, cpu, true);
                pol_settle_by(t, cpu, o->work);
                emit(t, o, &to, true, ACTION_REASON_IRQ_BUSY, reason);
        }
}

/* A hot CPU shared by busy IRQs of other devices: the one move to a cool
 * local CPU that lowers the peak most, by min_gain, dwell and cap allowing. */
static void rebalance_other_cpu(struct pol_tick *t, int cpu) {
        struct pol_other *best = NULL;
        double best_peak = 2;
        int best_to = -1;
        cpuset_t local, dest;
        char reason[256];
        struct pol_cpu *pc = &t->st->cpus[cpu];
        const struct pol_other *top = NULL;
        unsigned n_dwell = 0;

        for (size_t i = 0; i < t->n_others; i++) {
                struct pol_other *o = &t->others[i];
                double peak;
                int to;

                if (!o->busy || o->touched || o->cpu != cpu || o->work <= 0)
                        continue;
                if (!top || o->work > top->work)
                        top = o;
                if (o->r && o->r->moved &&
                    t->now - o->r->last_move_usec < MAX(o->r->dwell_usec, t->c->min_dwell_usec)) {
                        n_dwell++;
                        continue;
                }
                local_cpus(t, o->node, &local);
                to = least_loaded(t, o, &local, cpu, PICK_COOL, NULL);
                if (to < 0)
                        continue;
                peak = MAX(t->load[cpu] - o->work, t->load[to] + o->work);
                if (peak < best_peak - 1e-9) {
                        best = o;
                        best_peak = peak;
                        best_to = to;
                }
        }
        if (!best || t->load[cpu] - best_peak < pol_min_gain(t) - 1e-9) {
                /* why, for plan and status, when no queue explains the load */
                if (!top || strncmp(pc->why, "no busy queue IRQ", 17) != 0)
                        return;
                if (best)
                        snprintf(pc->why, sizeof(pc->why),
                                 "no move of another device's IRQ gains min_gain (%.0f%%): the best, %.40s to CPU%d, "
                                 "lowers the peak %.0f%% -> %.0f%%", 100 * pol_min_gain(t), best->ii->name, best_to,
                                 100 * t->load[cpu], 100 * best_peak);
                else if (n_dwell > 0)
                        snprintf(pc->why, sizeof(pc->why),
                                 "its busy IRQs of other devices moved less than their dwell ago (min_dwell %.0f s)",
                                 (double) t->c->min_dwell_usec / 1e6);
                else
                        snprintf(pc->why, sizeof(pc->why), "no cool NUMA-local CPU for %.40s, its busiest IRQ",
                                 top->ii->name);
                return;
        }
        if (t->moves >= pol_move_cap(t)) {
                snprintf(pc->why, sizeof(pc->why), "max_moves (%u) reached this tick", pol_move_cap(t));
                return;
        }
        snprintf(reason, sizeof(reason),
                 "CPU%d softirq+irq %.0f%% for %u samples; %s (%.0f interrupts/s) moves: projected peak %.0f%% -> %.0f%%",
                 cpu, 100 * t->load[cpu], t->c->hot_samples, best->ii->name[0] ? best->ii->name : "IRQ", best->rate,
                 100 * t->load[cpu], 100 * best_peak);
        dest = cpuset_single(best_to);
        shift_load(t, best, best_to, false);
        emit(t, best, &dest, false, ACTION_REASON_CPU_HOT, reason);
        pol_settle_by(t, cpu, best->work);
        pol_settle_by(t, best_to, best->work);
        t->moves++;
        pc->why[0] = 0;
}

void pol_rebalance_other(struct pol_tick *t) {
        int order[POL_HOT_ORDER_MAX];
        size_t n;

        if (!t->c->other_irqs || !t->in->load || t->n_others == 0)
                return;
        n = pol_hot_by_load(t, order, ELEMENTSOF(order));
        for (size_t i = 0; i < n; i++)
                if (!cpuset_isset(&t->touched, order[i]) && !pol_settling(t, order[i]))
                        rebalance_other_cpu(t, order[i]);
}

/* default_smp_affinity without the CPUs that may not be used while there
 * are any, so new IRQs never fire there (an operator's narrower default is
 * kept narrow); else its value before back. */
void pol_default_affinity(struct pol_tick *t) {
        const struct inventory *inv = t->inv;
        struct policy_state *st = t->st;
        char was[64], now[64], hold[64], buf[160];
        struct action *a;
        cpuset_t want;
        const char *why;
        enum action_reason code, taken = ACTION_REASON_INVALID;
        bool give_back = false;

        if (!inv->has_default_affinity || st->defaff_broken)
                return;
        if (!st->defaff_orig_known) {
                st->defaff_orig_known = true;
                st->defaff_orig = inv->default_affinity;
        }
        if (st->defaff_set && !st->defaff_external && !cpuset_equal(&inv->default_affinity, &st->defaff_last)) {
                st->defaff_external = true;
                st->defaff_external_usec = t->now;
                pol_note(t, LOG_NOTICE, "default_smp_affinity was changed by someone else (CPU%s -> CPU%s); %s",
                         pol_fmt_cpus(&st->defaff_last, was, sizeof(was)),
                         pol_fmt_cpus(&inv->default_affinity, now, sizeof(now)),
                         pol_external_hold_text(t, t->now, &inv->default_affinity, hold, sizeof(hold)));
                pol_note_about(t, POLICY_NOTE_EXTERNAL, 0, NULL, -1);
        }
        if (st->defaff_external) {
                if (cpuset_equal(&inv->default_affinity, &st->defaff_last)) {
                        st->defaff_external = false;
                } else {
                        /* over: decided below as if we had set it, and
                         * ours again once it holds what we decide */
                        taken = pol_external_over(t, st->defaff_external_usec, &inv->default_affinity);
                        if (taken == ACTION_REASON_INVALID)
                                return;
                }
        }
        if (t->c->other_irqs && !cpuset_empty(&t->eligible) && !cpuset_subset(&t->topo->online, &t->eligible)) {
                cpuset_and(&want, &st->defaff_orig, &t->eligible);
                if (cpuset_empty(&want))
                        want = t->eligible;
                why = "new IRQs start off CPUs that may not be used (banned, isolated or nohz_full)";
                code = ACTION_REASON_CPU_BANNED;
        } else if (st->defaff_set) {
                want = st->defaff_orig;
                give_back = true;
                why = t->c->other_irqs ? "every CPU may be used again: the value before irqsteerd" :
                                         "other_irqs = no: the value before irqsteerd";
                code = t->c->other_irqs ? ACTION_REASON_CPUS_ELIGIBLE : ACTION_REASON_BACK_TO_ORIGINAL;
        } else
                return;
        if (cpuset_equal(&want, &inv->default_affinity)) {
                /* back at the original: nothing of ours to watch */
                if (give_back)
                        st->defaff_set = false;
                st->defaff_external = false;
                return;
        }
        a = pol_add(t, KNOB_DEFAFF);
        if (!a)
                return;
        pol_set_cpus(t, a, &want, &inv->default_affinity);
        if (taken != ACTION_REASON_INVALID)
                action_set_reason(a, taken, "%s: %s", pol_external_why(t, taken, buf, sizeof(buf)), why);
        else
                action_set_reason(a, code, "%s", why);
}
