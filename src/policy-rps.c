/* Policy, RPS and RFS: a lone hot queue (docs/DESIGN.md "Policy") gets RPS
 * to cool local CPUs, widened and narrowed with the hot CPUs' hysteresis;
 * single-queue NICs get it from the start; CPUs a queue more than others on
 * a light host, planned together; RFS per the kernel scaling guide. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "policy-steps.h"

bool pol_rps_allowed(struct pol_tick *t, const struct pol_unit *u) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        const struct pol_queue *q;

        if (!x->managed || !x->rps || !x->nic->queues[u->qi].has_rps)
                return false;
        q = pol_queue_get(t->st, x->nic->name, u->queue, false);
        return !(q && (q->rps_external || q->rps_broken || q->rps_kept));
}

static void rfs(struct pol_tick *t, size_t nic, size_t qi);
static double flow_excess(const struct pol_tick *t, const struct pol_unit *u, int cpu);
static double shown_share(const struct pol_tick *t, const struct pol_unit *u, int cpu);

/* "CPU" before "1", "CPUs " before "1-2", for reasons. */
static const char *cpus_word(const cpuset_t *s) {
        return cpuset_count(s) > 1 ? "CPUs " : "CPU";
}

/* The protocol part of the queue's work: what RPS can steer away. */
static double proto_work(const struct pol_unit *u) {
        return (1 - u->keep) * MAX(u->total - u->tx, 0);
}

double pol_rps_share(const struct pol_unit *u, int cpu) {
        if (!u->rps_on)
                return cpu == u->target ? proto_work(u) : 0;
        return cpuset_isset(u->rps, cpu) ? proto_work(u) / u->n_rps : 0;
}

/* Load of cpu without this queue's protocol work. */
static double ex_load(const struct pol_tick *t, const struct pol_unit *u, int cpu) {
        return MAX(pol_load(t, cpu) - pol_rps_share(u, cpu), 0);
}

static int busiest_eligible(const struct pol_tick *t) {
        int top = -1;

        CPUSET_FOREACH(cpu, &t->eligible)
                if (cpu <= t->max_cpu && (top < 0 || pol_load(t, cpu) > pol_load(t, top)))
                        top = cpu;
        return top;
}

/* Leaves other busy queues' IRQ CPUs out of cand while the rest have room:
 * with shares of protocol work too they would end the busiest. */
static void leave_irq_cpus(const struct pol_tick *t, const struct pol_unit *u, double need, cpuset_t *cand) {
        cpuset_t rest = *cand;
        double room = 0;

        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *v = &t->units[i];
                if (v != u && v->target >= 0 && v->work >= pol_busy_abs(t))
                        cpuset_clear(&rest, v->target);
        }
        CPUSET_FOREACH(cpu, &rest)
                room += MAX(pol_level(t) - ex_load(t, u, cpu), 0);
        if (room >= need && !cpuset_empty(&rest))
                *cand = rest;
}

/* Whether a CPU of s settles from an earlier tick's action or this tick's. */
static bool any_settling(const struct pol_tick *t, const cpuset_t *s) {
        CPUSET_FOREACH(c, s)
                if (pol_settling(t, c) || cpuset_isset(&t->touched, c))
                        return true;
        return false;
}

/* Takes the settling CPUs out of s, but those whose settling moved no
 * measurable load (a quiet IRQ's move): their load has nothing to catch up. */
static void drop_settling(const struct pol_tick *t, cpuset_t *s) {
        CPUSET_FOREACH(c, s)
                if (pol_settling_measurably(t, c))
                        cpuset_clear(s, c);
}

/* The cool CPUs for u's protocol work beside span in *ret: local ones, and
 * remote ones too when the local lack room for need; not settling, nor
 * (leave_irq_cpus()) another's IRQ CPU; false when none. */
static bool cool_cands(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *span, double need,
                       const cpuset_t *hot, cpuset_t *ret) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        cpuset_t remote;
        double room = 0;

        cpuset_andnot(ret, &x->cpus, hot);
        cpuset_andnot(ret, ret, span);
        CPUSET_FOREACH(c, ret)
                room += MAX(pol_level(t) - ex_load(t, u, c), 0);
        if (room < need) {
                cpuset_andnot(&remote, &x->allowed, &x->cpus);
                cpuset_andnot(&remote, &remote, hot);
                cpuset_andnot(&remote, &remote, span);
                cpuset_or(ret, ret, &remote);
        }
        drop_settling(t, ret);
        leave_irq_cpus(t, u, need, ret);
        return !cpuset_empty(ret);
}

/* The CPUs of cand, sorted by their load without u's protocol work,
 * coolest first, in a new array of *ret_n; NULL on ENOMEM. */
static int *cool_order(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *cand, size_t *ret_n) {
        int *v = calloc(cpuset_count(cand) + 1, sizeof(int));
        size_t n = 0;

        *ret_n = 0;
        if (!v)
                return NULL;
        CPUSET_FOREACH(cpu, cand) {
                size_t k = n++;

                while (k > 0 && ex_load(t, u, v[k - 1]) > ex_load(t, u, cpu)) {
                        v[k] = v[k - 1];
                        k--;
                }
                v[k] = cpu;
        }
        *ret_n = n;
        return v;
}

/* Adds to *set the fewest coolest CPUs of cand (at least one, at most all)
 * that leave every RPS CPU below limit with p of protocol work. */
static void size_work(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *cand, double limit,
                      double p, cpuset_t *set) {
        /* the IRQ CPU counts too, if it has room at all */
        bool check_own = ex_load(t, u, u->target) < limit;
        size_t n, k;
        int *v = cool_order(t, u, cand, &n);

        if (!v)
                return;
        for (k = 1; k <= n; k++) {
                int m = cpuset_count(set) + (int) k;
                bool fits = true;

                CPUSET_FOREACH(cpu, set)
                        if ((cpu != u->target || check_own) && ex_load(t, u, cpu) + pol_work_cost(t, u, cpu, p / m) >= limit)
                                fits = false;
                for (size_t i = 0; i < k; i++)
                        if (ex_load(t, u, v[i]) + pol_work_cost(t, u, v[i], p / m) >= limit)
                                fits = false;
                if (fits)
                        break;
        }
        for (size_t i = 0; i < MIN(k, n); i++)
                cpuset_set(set, v[i]);
        free(v);
}

/* size_work() with u's protocol work. */
static void size_set(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *cand, double limit,
                     cpuset_t *set) {
        size_work(t, u, cand, limit, proto_work(u), set);
}

/* u's protocol work as its set CPUs' whole load shows it: each CPU's
 * share scaled by its load over its network load, the softirq time of
 * runs not counted as NET_RX/NET_TX (docs/DESIGN.md "Steady re-layout").
 * A narrower set is judged with it too: the load goes where the queue's
 * work goes, and a set given back on the undercount leaves the IRQ CPU
 * at the steady peak that made it (seed 23021). */
static double proto_whole(const struct pol_tick *t, const struct pol_unit *u) {
        double p = 0;

        if (!u->rps_on)
                return proto_work(u);
        CPUSET_FOREACH(c, u->rps)
                p += pol_rps_share(u, c) * pol_whole_factor(t, c);
        return MAX(p, proto_work(u));
}

/* The unit's RPS set without the most loaded CPU of droppable, in *ret;
 * true if the steered work fits on what is left, every CPU below limit. */
static bool narrower(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *droppable, double limit,
                     cpuset_t *ret) {
        int drop = -1, m = u->n_rps;

        CPUSET_FOREACH(s, droppable)
                if (drop < 0 || ex_load(t, u, s) >= ex_load(t, u, drop))
                        drop = s;
        *ret = *u->rps;
        if (drop >= 0)
                cpuset_clear(ret, drop);
        if (m < 2)
                return false;
        CPUSET_FOREACH(s, ret)
                if (ex_load(t, u, s) + proto_whole(t, u) / (m - 1) >= limit)
                        return false;
        return true;
}

/* Whether a condition that holds now has held for hot_samples samples in
 * a row (counted in *ticks) and may act now (not wait); the count starts
 * again when it acts or stops holding. */
static bool held(const struct pol_tick *t, unsigned *ticks, bool holds, bool wait) {
        if (!holds) {
                *ticks = 0;
                return false;
        }
        if (++*ticks < MAX(t->c->hot_samples, 1u) || wait)
                return false;
        *ticks = 0;
        return true;
}

/* The queue's flow count back to the original if we changed it, with reason
 * or one built from why; false on ENOMEM. */
static bool flow_back(struct pol_tick *t, const struct inventory_nic *n, const struct inventory_queue *iq,
                      const struct pol_queue *q, const char *reason, const char *why) {
        struct action *a;

        if (!q || !q->orig_known || !q->flow_set || q->flow_external || q->flow_broken ||
            iq->rps_flow_cnt == q->flow_orig)
                return true;
        a = pol_add_queue(t, KNOB_FLOWCNT, n->name, iq->index);
        if (!a)
                return false;
        a->value = q->flow_orig;
        a->from_value = iq->rps_flow_cnt;
        if (reason)
                action_set_reason(a, ACTION_REASON_BACK_TO_ORIGINAL, "%s", reason);
        else
                action_set_reason(a, ACTION_REASON_BACK_TO_ORIGINAL, "%s for %s: rps_flow_cnt back to the original", why,
                                  n->name);
        return true;
}

/* The RPS action for queue qi of the unit's NIC; RFS goes back with RPS. */
static void rps_action(struct pol_tick *t, const struct pol_unit *u, size_t qi, const cpuset_t *to,
                       enum action_reason code, const char *reason) {
        const struct inventory_nic *n = t->nics[u->nic].nic;
        const struct inventory_queue *iq = &n->queues[qi];
        const struct pol_queue *q = pol_queue_get(t->st, n->name, iq->index, false);
        struct action *a = pol_add_queue(t, KNOB_RPS, n->name, iq->index);

        if (!a)
                return;
        pol_set_cpus_kept(t, a, to, &iq->rps_cpus);
        action_set_reason(a, code, "%s", reason);
        /* a flow table left behind keeps sending flows to their readers'
         * CPUs with rps_cpus empty (the kernel's get_rps_cpu() looks at
         * either) */
        if (q && q->orig_known && cpuset_kept_equal(&q->rps_orig, to))
                (void) flow_back(t, n, iq, q, "RFS back to the original with RPS", NULL);
}

/* Projects the unit's new RPS set: the protocol work moves to its CPUs, or
 * back to the IRQ CPU (if any) when cleared; the CPUs settle if settle. */
static void project_rps(struct pol_tick *t, struct pol_unit *u, const cpuset_t *to, bool settle) {
        cpuset_t aff;
        double p = proto_work(u);
        int m = cpuset_count(to);
        bool own = u->target >= 0 && cpuset_isset(to, u->target);

        cpuset_or(&aff, to, u->rps);
        if (u->target >= 0)
                cpuset_set(&aff, u->target);
        CPUSET_FOREACH(cpu, &aff) {
                double now = pol_rps_share(u, cpu), after;
                if (m == 0 || (m == 1 && own))
                        after = cpu == u->target ? p : 0;
                else
                        after = cpuset_isset(to, cpu) ? p / m : 0;
                if (cpu <= t->max_cpu)
                        t->load[cpu] = MAX(t->load[cpu] - now + after, 0);
                if (settle)
                        pol_settle(t, cpu);
        }
        pol_unit_set_rps(t, u, to);
        u->rps_on = m > 0;
        u->touched = true;
}

static void emit_rps(struct pol_tick *t, struct pol_unit *u, const cpuset_t *to, enum action_reason code,
                     const char *reason) {
        rps_action(t, u, u->qi, to, code, reason);
        project_rps(t, u, to, true);
}

void pol_rps_irq_joins(struct pol_tick *t, struct pol_unit *u, int cpu) {
        cpuset_t set = *u->rps;
        char list[128], reason[256];

        cpuset_clear(&set, cpu);
        snprintf(reason, sizeof(reason), "%s rx-%d: RPS over CPUs %s, without CPU%d, where its IRQ moves for room",
                 t->nics[u->nic].nic->name, u->queue, pol_fmt_cpus(&set, list, sizeof(list)), cpu);
        emit_rps(t, u, &set, ACTION_REASON_RPS_NARROWED, reason);
}

/* The busiest of the IRQ CPU and set once u's protocol work is over set. */
static double set_peak(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *set) {
        int m = cpuset_count(set);
        double p = proto_work(u), peak = ex_load(t, u, u->target) + (m == 0 ? p : 0);

        CPUSET_FOREACH(cpu, set)
                peak = MAX(peak, ex_load(t, u, cpu) + pol_work_cost(t, u, cpu, p / m));
        return peak;
}

/* The host's peak demand (pol_demand()) once u's protocol work is over
 * set: a CPU that drops packets asks its load over the share it kept, the
 * queue's share there too, and set shares what the old set asked evenly.
 * It serves 100% at any width, and so may the IRQ CPU left out of the
 * set: only demand shows what a wider set gains. */
static double set_demand_peak(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *set) {
        int m = cpuset_count(set);
        double d = 0, peak = 0;

        CPUSET_FOREACH(c, u->rps)
                d += pol_rps_share(u, c) * pol_demand_factor(t, c);
        CPUSET_FOREACH(c, &t->eligible) {
                double v = ex_load(t, u, c) * pol_demand_factor(t, c);

                if (m > 0 && cpuset_isset(set, c))
                        v += pol_work_cost(t, u, c, d / m);
                peak = MAX(peak, v);
        }
        return peak;
}

/* A wider set of CPUs that drop packets gains when it lowers the host's
 * peak demand by min_gain: judged by the set's own CPUs, the sets whose
 * dwell ends first take the idle CPUs the busiest set needs. */
static bool widen_drops(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *set) {
        bool drops = false;

        CPUSET_FOREACH(c, u->rps)
                drops = drops || pol_demand_factor(t, c) > 1;
        return drops && set_demand_peak(t, u, set) <= set_demand_peak(t, u, u->rps) - pol_min_gain(t);
}

/* The set with the lower projected peak; a on a tie (the IRQ CPU's cache). */
static const cpuset_t *lower_peak(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *a,
                                  const cpuset_t *b) {
        return set_peak(t, u, b) < set_peak(t, u, a) - 1e-9 ? b : a;
}

/* The IRQ CPU (with_irq) and the fewest coolest CPUs of cand in *set
 * that give the lowest projected peak, none below level counted lower
 * (by_peak), or bring the IRQ CPU nearest to level (when the cool CPUs
 * lack room, each IRQ CPU should end near the mean); *set is left as it
 * was if there is no memory. */
static void size_cool(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *cand, bool with_irq,
                      bool by_peak, double level, cpuset_t *set) {
        double p = proto_work(u), own = ex_load(t, u, u->target), best = -1;
        size_t n, k_best = 0;
        int *v = cool_order(t, u, cand, &n);
        cpuset_t s;

        if (!v)
                return;
        cpuset_zero(&s);
        if (with_irq)
                cpuset_set(&s, u->target);
        for (size_t k = 1; k <= n; k++) {
                double d;

                cpuset_set(&s, v[k - 1]);
                d = by_peak ? MAX(set_peak(t, u, &s), level) : fabs(own + p / (double) (k + 1) - level);
                if (best < 0 || d < best - 1e-9) {
                        best = d;
                        k_best = k;
                }
        }
        cpuset_zero(set);
        if (with_irq)
                cpuset_set(set, u->target);
        for (size_t i = 0; i < k_best; i++)
                cpuset_set(set, v[i]);
        free(v);
}

/* The fewest coolest CPUs of cand in *set, with the IRQ CPU when own,
 * whose projected peak is within a /proc/stat count (POL_GAIN_LEAST / 2)
 * of the lowest such a set reaches, and not above cap unless the lowest
 * is: a CPU more that lowers it less is no measured gain, only more IPIs,
 * unless the set needs it to gain at all. */
static void size_least(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *cand, bool own, double cap,
                       cpuset_t *set) {
        size_t n, k_best = 0;
        int *v = cool_order(t, u, cand, &n);
        double *peak = calloc(n + 1, sizeof(double)), best = -1;

        cpuset_zero(set);
        if (own)
                cpuset_set(set, u->target);
        if (!v || !peak) {
                free(v);
                free(peak);
                return;
        }
        for (size_t k = 1; k <= n; k++) {
                cpuset_set(set, v[k - 1]);
                peak[k] = set_peak(t, u, set);
                if (best < 0 || peak[k] < best)
                        best = peak[k];
        }
        for (size_t k = n; k >= 1; k--)
                if (peak[k] <= best + POL_GAIN_LEAST / 2 && (peak[k] <= cap || peak[k] <= best))
                        k_best = k;
        cpuset_zero(set);
        if (own && k_best > 0)
                cpuset_set(set, u->target);
        for (size_t i = 0; i < k_best; i++)
                cpuset_set(set, v[i]);
        free(v);
        free(peak);
}

/* A lone hot queue's candidates in *ret: cool, not settling, not its IRQ
 * CPU nor (while others have room) another's; false when none. */
static bool start_cand(const struct pol_tick *t, const struct pol_unit *u, int cpu, double need, const cpuset_t *hot,
                       cpuset_t *ret) {
        cpuset_t self = cpuset_single(cpu);

        return cool_cands(t, u, &self, need, hot, ret);
}

/* Kernel scaling guide: a high interrupt rate keeps the IRQ CPU out of the
 * RPS map; unknown before the first interval, never with
 * rps_exclude_irq_rate = 0 (irqsteer.conf(5)). */
static bool irq_rate_high(const struct pol_tick *t, const struct pol_unit *u) {
        return t->in->load && t->c->rps_exclude_irq_rate > 0 && u->rate >= t->c->rps_exclude_irq_rate;
}

/* The IRQ CPU may take a share of its queue's protocol work. */
static bool own_allowed(const struct pol_tick *t, const struct pol_unit *u, int cpu) {
        return !irq_rate_high(t, u) && cpuset_isset(&t->nics[u->nic].allowed, cpu);
}

/* Why the IRQ CPU cpu is not in u's set, for a reason. */
static const char *own_left_out(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *set, int cpu) {
        if (irq_rate_high(t, u))
                return " (the IRQ CPU left out: high interrupt rate)";
        if (own_allowed(t, u, cpu) && !cpuset_isset(set, cpu))
                return " (the IRQ CPU left out: its own interrupt work keeps it busiest)";
        return "";
}

static bool saturated(const struct pol_tick *t, int cpu) {
        return cpu >= 0 && cpu < (int) t->st->n_cpus && t->st->cpus[cpu].saturated;
}

/* cpu's load without u's protocol work, its big flow's excess on a set
 * CPU (flow_excess()) taken as u's too. */
static double other_load(const struct pol_tick *t, const struct pol_unit *u, int cpu) {
        return ex_load(t, u, cpu) - (u->rps_on && cpuset_isset(u->rps, cpu) ? flow_excess(t, u, cpu) : 0);
}

/* The projected peak of the CPUs of span once u's protocol work is over
 * set: a CPU of span out of the set keeps its other work.  RPS hashes
 * flows whole, so u's biggest flow (pol_rps_flow()) lands on one CPU of
 * any set: projected on each, the set's peak is where it lands worst. */
static double span_peak(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *set,
                        const cpuset_t *span) {
        int m = cpuset_count(set);
        double p = proto_work(u), f = m > 0 ? MIN(pol_rps_flow(t, u), p) : 0;
        double peak = other_load(t, u, u->target) + (m == 0 ? p : 0);

        CPUSET_FOREACH(c, set)
                peak = MAX(peak, other_load(t, u, c) + pol_work_cost(t, u, c, (p - f) / m + f));
        CPUSET_FOREACH(c, span)
                if (!cpuset_isset(set, c))
                        peak = MAX(peak, other_load(t, u, c));
        return peak;
}

/* A single-queue NIC's set (docs/DESIGN.md "Policy"): every local eligible
 * CPU, the IRQ CPU in or out by the lower projected peak; with a sample,
 * then, the CPU that would end busiest with its share leaves while that
 * lowers the projected peak of the local CPUs (its other work keeps it
 * busier than its share relieves the rest), down to none: the work back
 * on the IRQ CPU.  In *span the CPUs judged. */
static void single_set(const struct pol_tick *t, const struct pol_unit *u, int cpu, cpuset_t *set, cpuset_t *span) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        bool own_ok = own_allowed(t, u, cpu);
        cpuset_t with, without;

        without = x->cpus;
        cpuset_clear(&without, cpu);
        with = without;
        cpuset_set(&with, cpu);
        *span = with;
        if (u->rps_on)
                cpuset_or(span, span, u->rps);
        if (!own_ok || !t->in->load)
                *set = own_ok ? with : without;
        else
                *set = *lower_peak(t, u, &with, &without);
        while (t->in->load) {
                double p = proto_work(u), top = -1;
                int m = cpuset_count(set), drop = -1;
                cpuset_t fewer;

                CPUSET_FOREACH(c, set) {
                        double l = other_load(t, u, c) + pol_work_cost(t, u, c, p / m);
                        if (c != cpu && l > top) {
                                top = l;
                                drop = c;
                        }
                }
                if (drop < 0)
                        break;
                fewer = *set;
                cpuset_clear(&fewer, drop);
                if (cpuset_only(&fewer) == cpu)
                        cpuset_zero(&fewer);
                if (span_peak(t, u, &fewer, span) >= span_peak(t, u, set, span) - 1e-9)
                        break;
                *set = fewer;
        }
}

/* The least gain of a steady peak's set: min_gain, and POL_NOISE_K
 * deviations of its noise more once a set fell short at its level (as
 * pol_gain_need() for a move: a gain at the least gain is not taken by
 * noise later). */
static double steady_need(const struct pol_tick *t, int cpu) {
        const struct pol_cpu *pc = &t->st->cpus[cpu];

        return pol_min_gain(t) + (pc->steady_short && pc->steady_short < t->now ? POL_NOISE_K * sqrt(pc->noise_var) : 0);
}

/* The least gain of a lone hot queue's set: min_gain; on a CPU judged by
 * its level (pol_cpu_steady) below full scale, POL_NOISE_K deviations of
 * its noise, at least one sample's resolution (POL_GAIN_LEAST: the set is
 * projected with a share that may be the prior's), and POL_NOISE_K more
 * once a set fell short at its level (as steady_need()).  Such a CPU is
 * hot from min_gain at the host's scale over the mean, so asking that much
 * of the set too would leave it hot beside cooler CPUs.  Only on the
 * host's busiest CPU: elsewhere such a set lowers no peak (bench/README,
 * "Light hosts"). */
static double lone_need(const struct pol_tick *t, int cpu) {
        const struct pol_cpu *pc;

        if (cpu < 0 || (size_t) cpu >= t->st->n_cpus || t->scale >= 1 || !t->noise_known ||
            cpu != busiest_eligible(t))
                return pol_min_gain(t);
        pc = &t->st->cpus[cpu];
        if (!pol_cpu_steady(pc))
                return pol_min_gain(t);
        return MAX(POL_GAIN_LEAST, POL_NOISE_K * sqrt(pc->noise_var)) +
               (pc->steady_short && pc->steady_short < t->now ? POL_NOISE_K * sqrt(pc->noise_var) : 0);
}

/* Why a queue gets RPS (rps_start): a lone hot queue (START_ALONE: the
 * only one this tick), a single-queue NIC, or the steady peak of a light
 * host (pol_rps_steady). */
enum start_kind { START_LONE, START_ALONE, START_SINGLE, START_STEADY };

static bool rps_start(struct pol_tick *t, struct pol_unit *u, int cpu, enum start_kind kind) {
        bool single_queue = kind == START_SINGLE;
        double need = kind == START_STEADY ? steady_need(t, cpu) : lone_need(t, cpu);
        const struct pol_nicctx *x = &t->nics[u->nic];
        const struct inventory_queue *iq = &x->nic->queues[u->qi];
        cpuset_t cand, set, with, without;
        bool own_ok;
        char list[128], reason[256];

        if (!pol_rps_allowed(t, u) || cpu < 0)
                return false;
        own_ok = own_allowed(t, u, cpu);

        if (single_queue) {
                cpuset_t span;
                struct pol_queue *q;
                bool none;

                /* from the start, over the local eligible CPUs; none by
                 * load: judged again as loads change */
                single_set(t, u, cpu, &set, &span);
                none = cpuset_empty(&set) || cpuset_only(&set) == cpu;
                if (none && !t->in->load)
                        return false;
                q = pol_queue_get(t->st, x->nic->name, u->queue, true);
                if (!q) {
                        t->r = -ENOMEM;
                        return false;
                }
                q->rps_static = true;
                q->rps_unmeasured = !t->in->load;
                if (none)
                        return false;
                snprintf(reason, sizeof(reason), "single-queue NIC %s: RPS over CPUs %s%s", x->nic->name,
                         pol_fmt_cpus(&set, list, sizeof(list)), own_left_out(t, u, &set, cpu));
        } else {
                /* a CPU that drops packets served less than its queue asks:
                 * a queue started alone is sized by what it asks
                 * (pol_demand()), not to wait min_dwell to widen while it
                 * drops; queues started together share the room by what
                 * they were served */
                double p = proto_work(u) * (kind == START_ALONE ? pol_demand_factor(t, cpu) : 1);

                if (!start_cand(t, u, cpu, p, &t->hot, &cand))
                        return false;
                if (kind == START_STEADY) {
                        /* a steady peak's excess is small beside the room a
                         * set sized to the level needs: the fewest CPUs that
                         * end about lowest, the IRQ CPU in or out */
                        size_least(t, u, &cand, false, pol_load(t, cpu) - need, &set);
                        if (own_ok) {
                                size_least(t, u, &cand, true, pol_load(t, cpu) - need, &with);
                                set = *lower_peak(t, u, &set, &with);
                        }
                } else {
                        cpuset_zero(&without);
                        size_work(t, u, &cand, pol_level(t), p, &without);
                        set = without;
                        if (own_ok) {
                                cpuset_t near;

                                with = cpuset_single(cpu);
                                size_work(t, u, &cand, pol_level(t), p, &with);
                                set = *lower_peak(t, u, &with, &without);
                                /* cool CPUs short of room: IRQ CPUs take a share */
                                if (t->pool_short && t->scale < 1) {
                                        size_cool(t, u, &cand, true, false, t->mean, &near);
                                        if (set_peak(t, u, &near) < pol_accept(t))
                                                set = near;
                                        else if (set_peak(t, u, &with) < pol_accept(t))
                                                set = with;
                                }
                        }
                }
                /* as for a move (docs/DESIGN.md "Policy"), only when it lowers
                 * the peak by min_gain; a saturated CPU gains idle time,
                 * which this does not measure, but not by making a CPU as
                 * busy as it looks */
                if (set_peak(t, u, &set) > pol_load(t, cpu) - (saturated(t, cpu) ? 0 : need) + 1e-9) {
                        u->rps_no_gain = true;
                        /* short at its level: a later gain there needs the
                         * noise's deviations more (lone_need) */
                        if (kind != START_STEADY && need < pol_min_gain(t) && !t->st->cpus[cpu].steady_short)
                                t->st->cpus[cpu].steady_short = t->now;
                        return false;
                }
                if (kind == START_STEADY)
                        snprintf(reason, sizeof(reason),
                                 "steady peak: CPU%d at %.1f%% (mean %.1f%%), IRQ %u is %.0f%% of its load; RPS over "
                                 "CPUs %s%s, projected peak %.1f%%",
                                 cpu, 100 * pol_load(t, cpu), 100 * t->mean, u->irq[0],
                                 pol_load(t, cpu) > 0 ? 100 * MIN(u->work / pol_load(t, cpu), 1) : 0,
                                 pol_fmt_cpus(&set, list, sizeof(list)), own_left_out(t, u, &set, cpu),
                                 100 * set_peak(t, u, &set));
                else
                        snprintf(reason, sizeof(reason),
                                 "lone hot queue: CPU%d at %.0f%%, IRQ %u is %.0f%% of its load; RPS over CPUs %s%s",
                                 cpu, 100 * pol_load(t, cpu), u->irq[0],
                                 pol_load(t, cpu) > 0 ? 100 * MIN(u->work / pol_load(t, cpu), 1) : 0,
                                 pol_fmt_cpus(&set, list, sizeof(list)), own_left_out(t, u, &set, cpu));
        }
        if (cpuset_kept_equal(&iq->rps_cpus, &set)) {
                u->rps_ours = true;
                return true;
        }
        emit_rps(t, u, &set,
                 single_queue           ? ACTION_REASON_SINGLE_QUEUE_RPS
                 : kind == START_STEADY ? ACTION_REASON_STEADY_PEAK
                                        : ACTION_REASON_LONE_HOT_QUEUE,
                 reason);
        u->rps_ours = true;
        rfs(t, u->nic, u->qi);
        return true;
}

/* The least level L at which the CPUs of s can carry their load: local
 * ones (on a node of the queues' NICs) up to L each, and what is left over
 * on the others' room below L at POL_REMOTE_COST times its work, as the
 * lower bound spreads it (bench/README.md "Metrics"); the mean where all
 * are local.  A set sized to it stops at the fewest CPUs within the
 * estimate's 10% of it (pol_accept()): each remote CPU more moves work at
 * the remote cost into room the sets after it need. */
static double spill_level(const struct pol_tick *t, struct pol_unit **us, size_t n, const cpuset_t *s) {
        cpuset_t local;
        double lo = 0, hi = 0, sum = 0;
        int m = 0;

        cpuset_zero(&local);
        for (size_t i = 0; i < n; i++)
                cpuset_or(&local, &local, &t->nics[us[i]->nic].cpus);
        CPUSET_FOREACH(c, s) {
                hi = MAX(hi, pol_load(t, c));
                sum += pol_load(t, c);
                m += cpuset_isset(&local, c);
        }
        if (m == 0 || m == cpuset_count(s))
                return cpuset_empty(s) ? 0 : sum / cpuset_count(s);
        for (int k = 0; k < 50; k++) {
                double mid = (lo + hi) / 2, over = 0;

                CPUSET_FOREACH(c, s)
                        over += cpuset_isset(&local, c) ? pol_load(t, c) - mid
                                                        : -MAX(mid - pol_load(t, c), 0) / POL_REMOTE_COST;
                if (over > 0)
                        lo = mid;
                else
                        hi = mid;
        }
        return 1.1 * hi;
}

/* Several queues' RPS sets planned together (docs/DESIGN.md "Policy"; hot:
 * no candidates).  With room on the cool CPUs each queue is started alone;
 * without, biggest first, each IRQ CPU not busier than the spread keeps a
 * share (size_cool()) and no set takes another's IRQ CPU, whose room up to
 * the even level is its own queue's alone.  Room depends on the share RPS
 * can move, only a prior before RPS: replan() plans again once measured. */
static void start_together(struct pol_tick *t, struct pol_unit **us, const int *cpus, size_t n, bool *ret_ok,
                           const cpuset_t *hot, bool only_short, enum action_reason code, const char *why) {
        cpuset_t pool, span, cand, irqs;
        double demand = 0, room = 0, sum = 0, spread, even, level = pol_level(t);
        size_t *order;

        cpuset_zero(&pool);
        cpuset_zero(&span);
        cpuset_zero(&irqs);
        for (size_t i = 0; i < n; i++) {
                ret_ok[i] = false;
                if (cpus[i] >= 0)
                        cpuset_set(&irqs, cpus[i]);
                if (pol_rps_allowed(t, us[i]) && cpus[i] >= 0)
                        demand += proto_work(us[i]);
        }
        /* other queues' IRQ CPUs are candidates unless the others have
         * room for all of it */
        for (size_t i = 0; i < n; i++) {
                if (!pol_rps_allowed(t, us[i]) || cpus[i] < 0 || !start_cand(t, us[i], cpus[i], demand, hot, &cand))
                        continue;
                cpuset_andnot(&cand, &cand, &irqs);
                cpuset_or(&pool, &pool, &cand);
                cpuset_set(&span, cpus[i]);
        }
        CPUSET_FOREACH(c, &pool) {
                room += MAX(level - pol_load(t, c), 0);
                sum += pol_load(t, c);
        }
        if (demand <= room || cpuset_empty(&pool)) {
                for (size_t i = 0; i < n && !only_short; i++)
                        ret_ok[i] = rps_start(t, us[i], cpus[i], n == 1 ? START_ALONE : START_LONE);
                return;
        }
        /* the candidates' level with all the queues' protocol work, and
         * the level of the candidates and the IRQ CPUs together */
        spread = (sum + demand) / cpuset_count(&pool);
        cpuset_or(&span, &span, &pool);
        even = spill_level(t, us, n, &span);
        /* the biggest queues first */
        order = calloc(n, sizeof(*order));
        if (!order) {
                t->r = -ENOMEM;
                return;
        }
        for (size_t i = 0; i < n; i++) {
                size_t k = i;
                while (k > 0 && proto_work(us[order[k - 1]]) < proto_work(us[i])) {
                        order[k] = order[k - 1];
                        k--;
                }
                order[k] = i;
        }
        for (size_t j = 0; j < n; j++) {
                size_t i = order[j];
                struct pol_unit *u = us[i];
                const struct inventory_queue *iq = &t->nics[u->nic].nic->queues[u->qi];
                int cpu = cpus[i];
                bool own;
                cpuset_t set;
                char list[128], reason[256];

                if (!pol_rps_allowed(t, u) || cpu < 0 || !start_cand(t, u, cpu, demand, hot, &cand))
                        continue;
                /* each IRQ CPU here takes a share of its own queue alone */
                cpuset_andnot(&cand, &cand, &irqs);
                if (cpuset_empty(&cand))
                        continue;
                own = own_allowed(t, u, cpu) && ex_load(t, u, cpu) < spread;
                cpuset_zero(&set);
                if (own)
                        size_cool(t, u, &cand, true, true, even, &set);
                else
                        size_set(t, u, &cand, even, &set);
                snprintf(reason, sizeof(reason),
                         "%s: CPU%d at %.0f%%, IRQ %u is %.0f%% of its load; %zu queues need more "
                         "than the cool CPUs' room: RPS over CPUs %s%s", why,
                         cpu, 100 * pol_load(t, cpu), u->irq[0],
                         pol_load(t, cpu) > 0 ? 100 * MIN(u->work / pol_load(t, cpu), 1) : 0, n,
                         pol_fmt_cpus(&set, list, sizeof(list)), own ? "" : " (the IRQ CPU left out)");
                ret_ok[i] = true;
                u->rps_ours = true;
                if (cpuset_kept_equal(&iq->rps_cpus, &set))
                        continue;
                emit_rps(t, u, &set, code, reason);
                rfs(t, u->nic, u->qi);
        }
        free(order);
}

static void start_lone(struct pol_tick *t, struct pol_unit **us, const int *cpus, size_t n, bool *ret_ok) {
        bool prior = n < 2 || !t->in->load;

        for (size_t i = 0; i < n && !prior; i++)
                prior = !pol_share_measured(t, us[i], 1);
        if (!prior) {
                start_together(t, us, cpus, n, ret_ok, &t->hot, false, ACTION_REASON_LONE_HOT_QUEUE, "lone hot queue");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                ret_ok[i] = rps_start(t, us[i], cpus[i], n == 1 ? START_ALONE : START_LONE);
                if (ret_ok[i] && n > 1 && t->in->load) {
                        struct pol_queue *q = pol_queue_get(t->st, t->nics[us[i]->nic].nic->name, us[i]->queue, true);
                        if (!q) {
                                t->r = -ENOMEM;
                                return;
                        }
                        q->rps_prior = true;
                }
        }
}

void pol_rps_lone(struct pol_tick *t) {
        bool *ok = calloc(t->n_lone + 1, sizeof(*ok));

        if (!ok)
                t->r = -ENOMEM;
        if (ok && t->lone && t->lone_cpu) {
                start_lone(t, t->lone, t->lone_cpu, t->n_lone, ok);
                for (size_t i = 0; i < t->n_lone; i++) {
                        const struct pol_unit *u = t->lone[i];
                        char *why = t->st->cpus[t->lone_cpu[i]].why;
                        size_t l = strlen(why), why_len = sizeof(t->st->cpus[t->lone_cpu[i]].why);

                        if (!ok[i] && l < why_len)
                                snprintf(why + l, why_len - l, "; RPS for its busiest queue (%s rx-%d) %s",
                                         t->nics[u->nic].nic->name, u->queue,
                                         u->rps_no_gain           ? "does not lower the peak by min_gain"
                                         : !pol_rps_allowed(t, u) ? "is off or not ours to set"
                                                                  : "finds no cool CPU to take its work");
                }
        }
        free(t->lone);
        free(t->lone_cpu);
        free(ok);
        t->lone = NULL;
        t->lone_cpu = NULL;
        t->n_lone = 0;
}

/* One set for the steady peak of a light host (docs/DESIGN.md "Policy"):
 * the busiest CPU no set of this tick touched, judged by its level
 * (pol_cpu_steady()) at the level it would be hot at without
 * balance_floor and not below the narrowing limit (the set would be given
 * back), gets RPS for its busiest queue not yet spreading (rps_start());
 * false when none is made.  A set that falls short marks its CPU only
 * when it is the tick's first (the later ones' candidates are fewer by
 * the sets before them). */
static bool steady_set(struct pol_tick *t, bool first, cpuset_t *at_level) {
        struct policy_state *st = t->st;
        struct pol_unit *best = NULL;
        int peak = -1;

        CPUSET_FOREACH(cpu, &t->eligible) {
                const struct pol_cpu *pc;
                double level, gain;
                bool ready;

                if (cpu > t->max_cpu || (size_t) cpu >= st->n_cpus || pol_settling(t, cpu) ||
                    cpuset_isset(&t->touched, cpu))
                        continue;
                pc = &st->cpus[cpu];
                ready = pol_cpu_steady(pc);
                /* before the noise is known, min_gain is balance_floor:
                 * the least it may come down to */
                gain = ready ? pol_min_gain(t) : MIN(pol_min_gain(t), MAX(t->c->min_gain * t->scale, POL_GAIN_LEAST));
                /* the noise over 1.1 times the mean, not over
                 * pol_accept(): the set is sized to the least peak it
                 * reaches, and the narrowing limit is a term of its own */
                level = MAX(MAX(t->mean + gain, 1.1 * t->mean + POL_NOISE_K * sqrt(pc->noise_var)), pol_narrow(t));
                if (t->load[cpu] < level)
                        continue;
                cpuset_set(at_level, cpu);
                /* at the level before it is judged: the next decision
                 * comes within ENGINE_MEASURE_FULL_EVERY ticks, not at
                 * the next audit */
                if (!ready) {
                        t->steady_pending |= !pc->steady_short;
                        continue;
                }
                if (peak < 0 || t->load[cpu] > t->load[peak])
                        peak = cpu;
        }
        if (peak < 0)
                return false;
        for (size_t i = 0; i < t->n_units; i++) {
                struct pol_unit *u = &t->units[i];

                if (u->target != peak || u->work < pol_busy(t, peak) || u->rps_ours || u->touched ||
                    !pol_rps_allowed(t, u))
                        continue;
                if (!best || u->work > best->work)
                        best = u;
        }
        if (best && rps_start(t, best, peak, START_STEADY))
                return true;
        if (first && best && best->rps_no_gain && !st->cpus[peak].steady_short)
                st->cpus[peak].steady_short = t->now;
        return false;
}

void pol_rps_single(struct pol_tick *t, size_t nic) {
        const struct pol_nicctx *x = &t->nics[nic];

        /* docs/DESIGN.md "The problem": a single-queue NIC's one IRQ
         * saturates one CPU; RPS alone lifts its throughput */
        if (x->nic->n_queues == 1 && x->n_units == 1 && t->c->single_queue_rps) {
                struct pol_unit *u = &t->units[x->first_unit];
                if (!u->rps_ours)
                        rps_start(t, u, u->target, START_SINGLE);
        }
}

/* The busiest CPU of set once u's protocol work is over it (set_peak()
 * without the IRQ CPU's own work, which no set changes). */
static double rps_peak(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *set) {
        int m = cpuset_count(set);
        double p = proto_work(u), peak = 0;

        CPUSET_FOREACH(cpu, set)
                peak = MAX(peak, ex_load(t, u, cpu) + pol_work_cost(t, u, cpu, p / m));
        return peak;
}

/* A set sized with the prior share that the measured share puts above
 * the level it was sized for (pol_accept(): the estimate's 10%), where the
 * cool CPUs have room: its CPUs kept, the fewest coolest candidates more
 * that bring every set CPU below that level, or none.  adjust() widens
 * only a hot CPU's set, and a light host's set CPU sits under the hot
 * level (balance_floor over the mean) at any width. */
static void widen_measured(struct pol_tick *t, struct pol_unit *u) {
        double p = proto_work(u), limit = pol_accept(t), was = rps_peak(t, u, u->rps);
        cpuset_t span = *u->rps, cand, set = *u->rps;
        char list[128], reason[256];

        if (!u->rps_on || was <= limit)
                return;
        cpuset_set(&span, u->target);
        if (!cool_cands(t, u, &span, p, &t->hot, &cand))
                return;
        size_set(t, u, &cand, limit, &set);
        if (rps_peak(t, u, &set) >= limit)
                return;
        snprintf(reason, sizeof(reason),
                 "RPS sized again with the measured share: its CPUs at %.1f%% against the level's %.1f%%; RPS over "
                 "CPUs %s",
                 100 * was, 100 * limit, pol_fmt_cpus(&set, list, sizeof(list)));
        emit_rps(t, u, &set, ACTION_REASON_RPS_RESIZED, reason);
        rfs(t, u->nic, u->qi);
}

/* What a resize (replan) or a tick's steady sets change, to take it back
 * when it gains nothing. */
struct resize_undo {
        cpuset_t *was;           /* each unit's set before */
        bool *ours;              /* and its rps_ours */
        uint64_t *settle_until, *moved_usec;
        double *moved;           /* each CPU's settling (pol_settle_by) */
        cpuset_t touched;
        size_t n_actions;
        bool sock_flow_done;
};

/* The undo's arrays for t's units and CPUs; false if one is missing. */
static bool resize_alloc(const struct pol_tick *t, struct resize_undo *z) {
        z->was = calloc(t->n_units + 1, sizeof(*z->was));
        z->ours = calloc(t->n_units + 1, sizeof(*z->ours));
        z->settle_until = calloc(t->st->n_cpus + 1, sizeof(*z->settle_until));
        z->moved_usec = calloc(t->st->n_cpus + 1, sizeof(*z->moved_usec));
        z->moved = calloc(t->st->n_cpus + 1, sizeof(*z->moved));
        return z->was && z->ours && z->settle_until && z->moved_usec && z->moved;
}

static void resize_free(struct resize_undo *z) {
        free(z->was);
        free(z->ours);
        free(z->settle_until);
        free(z->moved_usec);
        free(z->moved);
}

static void resize_save(const struct pol_tick *t, struct pol_unit **us, size_t n, struct resize_undo *z) {
        for (size_t i = 0; i < n; i++) {
                z->was[i] = *us[i]->rps;
                z->ours[i] = us[i]->rps_ours;
        }
        for (size_t c = 0; c < t->st->n_cpus; c++) {
                z->settle_until[c] = t->st->cpus[c].settle_until;
                z->moved_usec[c] = t->st->cpus[c].moved_usec;
                z->moved[c] = t->st->cpus[c].moved;
        }
        z->touched = t->touched;
        z->n_actions = t->out->n;
        z->sock_flow_done = t->st->sock_flow_done;
}

static void resize_undo(struct pol_tick *t, struct pol_unit **us, size_t n, const struct resize_undo *z) {
        for (size_t i = t->out->n; i > z->n_actions; i--)
                action_done(&t->out->v[i - 1]);
        t->out->n = z->n_actions;
        for (size_t i = 0; i < n; i++) {
                project_rps(t, us[i], &z->was[i], false);
                us[i]->rps_ours = z->ours[i];
                us[i]->touched = false;
        }
        for (size_t c = 0; c < t->st->n_cpus; c++) {
                t->st->cpus[c].settle_until = z->settle_until[c];
                t->st->cpus[c].moved_usec = z->moved_usec[c];
                t->st->cpus[c].moved = z->moved[c];
        }
        t->touched = z->touched;
        t->st->sock_flow_done = z->sock_flow_done;
}

/* Only while nothing is hot or settling: steady_set() for the busiest
 * steady peak, then the next as projected, until a set falls short or
 * none is left (docs/DESIGN.md "Policy").  The sets are a plan, taken
 * whole when they lower the host's projected peak by pol_plan_gain(), the
 * steady peaks still waiting for a set aside; else none of them, their
 * CPUs marked short (steady_need()): a CPU the noise put over the level
 * beside others at it is relieved while the host's peak stays. */
void pol_rps_steady(struct pol_tick *t) {
        struct pol_unit **us;
        struct resize_undo z = { 0 };
        size_t n = 0;
        double peak0, peak1;
        bool any = false;
        cpuset_t at_level;
        int top;

        if (t->scale >= 1 || !cpuset_empty(&t->hot) || !cpuset_empty(&t->touched) ||
            cpuset_intersects(&t->settling, &t->eligible))
                return;
        us = calloc(t->n_units + 1, sizeof(*us));
        if (!us || !resize_alloc(t, &z)) {
                t->r = -ENOMEM;
                goto out;
        }
        /* steady_set() takes only units no step of this tick touched */
        for (size_t i = 0; i < t->n_units; i++)
                if (!t->units[i].touched)
                        us[n++] = &t->units[i];
        top = busiest_eligible(t);
        peak0 = top >= 0 ? pol_load(t, top) : 0;
        resize_save(t, us, n, &z);
        cpuset_zero(&at_level);
        for (bool first = true; steady_set(t, first, &at_level); first = false)
                any = true;
        /* a steady peak no set touched yet gets its own once judged, or
         * once the sets before it settle: the plan's peak is the others' */
        cpuset_andnot(&at_level, &at_level, &t->touched);
        peak1 = 0;
        CPUSET_FOREACH(cpu, &t->eligible)
                if (cpu <= t->max_cpu && !cpuset_isset(&at_level, cpu))
                        peak1 = MAX(peak1, pol_load(t, cpu));
        if (!any || peak1 <= peak0 - pol_plan_gain(t) + 1e-9)
                goto out;
        pol_note(t, LOG_DEBUG, "steady peak: RPS not set: the host's projected peak %.1f%% -> %.1f%%, under %.1f%% less",
                 100 * peak0, 100 * peak1, 100 * pol_plan_gain(t));
        for (size_t i = 0; i < n; i++) {
                struct pol_cpu *pc;

                if (!us[i]->touched || us[i]->target < 0 || (size_t) us[i]->target >= t->st->n_cpus)
                        continue;
                pc = &t->st->cpus[us[i]->target];
                if (!pc->steady_short)
                        pc->steady_short = t->now;
        }
        resize_undo(t, us, n, &z);
out:
        free(us);
        resize_free(&z);
}

/* Whether u's set shows a big flow as its loads show it: a set CPU (its
 * IRQ CPU aside) whose share beyond the coolest other's (flow_excess()) is
 * over twice what the others show on average, and a /proc/stat count at
 * least.  Not flow_bound(): its even share is the model's, from the NIC's
 * measured share, which a queue with a big flow can be far from
 * (bench/README.md "User load and holes", seed 23016). */
static bool shows_flow(const struct pol_tick *t, const struct pol_unit *u) {
        double sum = 0, most = -1, flow;
        int m = 0, f = -1;

        if (!u->rps_on)
                return false;
        CPUSET_FOREACH(c, u->rps) {
                double w;

                if (c == u->target)
                        continue;
                w = shown_share(t, u, c);
                sum += w;
                m++;
                if (w > most) {
                        most = w;
                        f = c;
                }
        }
        if (m < 2 || f < 0)
                return false;
        flow = flow_excess(t, u, f);
        return flow >= POL_GAIN_LEAST && flow > 2 * (sum - most) / (m - 1);
}

/* Sets sized with the prior share, planned again together per NIC once
 * it is measured and their CPUs settled (start_together() if the cool
 * CPUs lack room, else widen_measured()); otherwise adjust() widens and
 * narrows them, and a set that shows a big flow (shows_flow()) is left
 * to it.  A plan (pol_rps_gran): taken whole when it lowers the
 * host's projected peak by any gain (the sets were decided, this only
 * corrects their size), else none of it and not again. */
static void replan(struct pol_tick *t) {
        cpuset_t nohot;
        struct pol_unit **us;
        struct resize_undo z = { 0 };
        int *cpus;
        bool *ok;

        us = calloc(t->n_units + 1, sizeof(*us));
        cpus = calloc(t->n_units + 1, sizeof(*cpus));
        ok = calloc(t->n_units + 1, sizeof(*ok));
        if (!us || !cpus || !ok || !resize_alloc(t, &z)) {
                t->r = -ENOMEM;
                goto out;
        }
        for (size_t ni = 0; ni < t->inv->n_nics; ni++) {
                const struct pol_nicctx *x = &t->nics[ni];
                size_t n = 0;
                bool wait = false;
                double peak0, peak1;
                int top;

                for (size_t i = 0; i < x->n_units; i++) {
                        struct pol_unit *u = &t->units[x->first_unit + i];
                        struct pol_queue *q = pol_queue_get(t->st, x->nic->name, u->queue, false);
                        cpuset_t span = *u->rps;

                        if (!q || !q->rps_prior)
                                continue;
                        if (u->touched) {
                                wait = true;
                                continue;
                        }
                        if (!u->rps_ours || u->target < 0 || !pol_rps_allowed(t, u)) {
                                q->rps_prior = false;
                                continue;
                        }
                        cpuset_set(&span, u->target);
                        wait |= any_settling(t, &span);
                        /* a settled estimate, after the dwell */
                        if (!pol_share_measured(t, u, POL_SHARE_NOTE_AFTER) ||
                            t->now - q->rps_change_usec < t->c->min_dwell_usec) {
                                wait = true;
                                continue;
                        }
                        /* only when the prior is off by more than the
                         * estimate's 10% (pol_accept()) */
                        if (fabs((1 - u->keep) / (1 - POL_NAPI_SHARE) - 1) <= 0.1) {
                                q->rps_prior = false;
                                continue;
                        }
                        /* RPS hashes a big flow whole onto one CPU of a set,
                         * which a set of another size moves to the CPU at
                         * its new index, which a resize does not choose
                         * (flow_landing() does), and even shares take it
                         * off the CPU it is on: the set stays for
                         * adjust(), whose guard keeps a flow where it is */
                        if (shows_flow(t, u)) {
                                pol_note(t, LOG_DEBUG, "%s rx-%d: its RPS set shows a big flow: not sized again "
                                         "with the measured share", x->nic->name, u->queue);
                                q->rps_prior = false;
                                continue;
                        }
                        us[n] = u;
                        cpus[n++] = u->target;
                }
                if (n == 0 || wait)
                        continue;
                top = busiest_eligible(t);
                peak0 = top >= 0 ? pol_load(t, top) : 0;
                resize_save(t, us, n, &z);
                for (size_t i = 0; i < n; i++) {
                        pol_queue_get(t->st, x->nic->name, us[i]->queue, false)->rps_prior = false;
                        project_rps(t, us[i], &pol_no_rps, false);
                }
                /* hot CPUs are candidates: these queues make them hot */
                cpuset_zero(&nohot);
                start_together(t, us, cpus, n, ok, &nohot, true, ACTION_REASON_RPS_RESIZED,
                               "RPS sized again with the measured share");
                /* a set that stays stays in the projection */
                for (size_t i = 0; i < n; i++)
                        if (us[i]->n_rps == 0) {
                                cpuset_t cur = cpuset_kept_get(&x->nic->queues[us[i]->qi].rps_cpus);

                                project_rps(t, us[i], &cur, false);
                        }
                for (size_t i = 0; i < n; i++)
                        if (!ok[i])
                                widen_measured(t, us[i]);
                top = busiest_eligible(t);
                peak1 = top >= 0 ? pol_load(t, top) : peak0;
                if (t->out->n > z.n_actions && peak1 > peak0 - 1e-9) {
                        pol_note(t, LOG_DEBUG,
                                 "%s: RPS not sized again with the measured share: the host's projected peak "
                                 "%.1f%% -> %.1f%%", x->nic->name, 100 * peak0, 100 * peak1);
                        resize_undo(t, us, n, &z);
                }
        }
out:
        free(us);
        free(cpus);
        free(ok);
        resize_free(&z);
}

/* What the model puts on cpu from unit v. */
static double unit_on(const struct pol_unit *v, int cpu) {
        double w = pol_rps_share(v, cpu);

        if (cpu == v->target && !v->irqless)
                w += MAX(v->total - proto_work(v) - (v->tx_apart ? v->tx : 0), 0);
        else if (v->tx_apart && cpu == v->irq_cpu[1])
                w += v->tx;
        return w;
}

/* cpu's load without what the model puts there from units other than u. */
static double own_load(const struct pol_tick *t, const struct pol_unit *u, int cpu) {
        double l = pol_load(t, cpu);

        for (size_t i = 0; i < t->n_units; i++)
                if (&t->units[i] != u)
                        l -= unit_on(&t->units[i], cpu);
        for (size_t i = 0; i < t->n_irqless; i++)
                if (&t->irqless[i] != u)
                        l -= unit_on(&t->irqless[i], cpu);
        return MAX(l, 0);
}

/* u's protocol work on a CPU of its set as the loads show it: what other
 * queues' and devices' work does not explain there. */
static double shown_share(const struct pol_tick *t, const struct pol_unit *u, int cpu) {
        double w = own_load(t, u, cpu);

        if (cpu == u->target)
                w -= unit_on(u, cpu) - pol_rps_share(u, cpu);
        for (size_t i = 0; i < t->n_others; i++)
                if (t->others[i].cpu == cpu)
                        w -= t->others[i].work;
        return MAX(w, 0);
}

/* What a CPU of u's set shows of u's work beyond the coolest other CPU of
 * the set, at most all but its even share: RPS hashes flows whole, so a
 * big one lands on one CPU; errors of u's estimate show on every CPU of
 * the set alike and cancel. */
static double flow_excess(const struct pol_tick *t, const struct pol_unit *u, int cpu) {
        double lo = -1;

        CPUSET_FOREACH(c, u->rps)
                if (c != cpu)
                        lo = lo < 0 ? shown_share(t, u, c) : MIN(lo, shown_share(t, u, c));
        if (lo < 0)
                return 0;
        return MIN(MAX(shown_share(t, u, cpu) - lo, 0), proto_work(u) - pol_rps_share(u, cpu));
}

double pol_rps_flow(const struct pol_tick *t, const struct pol_unit *u) {
        double most = 0;

        if (u->rps_on)
                CPUSET_FOREACH(c, u->rps)
                        most = MAX(most, flow_excess(t, u, c));
        return most;
}

double pol_rps_flow_on(const struct pol_tick *t, int cpu) {
        double most = 0;

        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *u = &t->units[i];
                if (u->rps_on && cpu != u->target && cpuset_isset(u->rps, cpu))
                        most = MAX(most, flow_excess(t, u, cpu));
        }
        return most;
}

/* The CPU of u's set (IRQ CPU aside) with the most load, other queues'
 * work taken out (own_load()), -1 if none; that load in *hi, the least in
 * *lo. */
static int flow_cpu(const struct pol_tick *t, const struct pol_unit *u, double *lo, double *hi) {
        int f = -1;

        *lo = *hi = -1;
        CPUSET_FOREACH(cpu, u->rps) {
                double l;
                if (cpu == u->target)
                        continue;
                l = own_load(t, u, cpu);
                *lo = *lo < 0 ? l : MIN(*lo, l);
                if (l > *hi) {
                        *hi = l;
                        f = cpu;
                }
        }
        return f;
}

/* RPS hashes whole flows: a set CPU (IRQ CPU aside) more than two even
 * shares above the coolest, other queues' work taken out, carries one big
 * flow that a wider set would only move. */
static bool flow_bound(const struct pol_tick *t, const struct pol_unit *u) {
        double lo, hi;

        return u->n_rps >= 2 && flow_cpu(t, u, &lo, &hi) >= 0 && hi - lo > 2 * proto_work(u) / u->n_rps;
}

/* The busiest other queues on cpu that this tick's moves left take off
 * it to dump (pol_unit_clear(); a queue that may not move yet stays), up
 * to 16; act: moved.  Their work on cpu. */
static double clear_for_flow(struct pol_tick *t, const struct pol_unit *u, int cpu, const cpuset_t *dump, bool act,
                             const char *reason) {
        unsigned left = pol_move_cap(t) > t->moves ? pol_move_cap(t) - t->moves : 0;
        struct pol_unit *pick[16];
        size_t n = 0;
        double w = 0;

        while (n < MIN(left, 16u)) {
                struct pol_unit *top = NULL;

                for (size_t i = 0; i < t->n_units; i++) {
                        struct pol_unit *v = &t->units[i];
                        bool taken = false;

                        if (v == u || v->target != cpu || v->work < pol_busy_abs(t))
                                continue;
                        for (size_t k = 0; k < n; k++)
                                taken |= pick[k] == v;
                        if (!taken && (!top || unit_on(v, cpu) > unit_on(top, cpu)) &&
                            pol_unit_clear(t, v, dump, true, NULL) >= 0)
                                top = v;
                }
                if (!top)
                        break;
                pick[n++] = top;
                w += unit_on(top, cpu);
        }
        for (size_t k = 0; act && k < n; k++)
                (void) pol_unit_clear(t, pick[k], dump, false, reason);
        return w;
}

/* The position-keeping half of flow_home(): RPS picks a flow's CPU by its
 * hash and the set's size alone, as the index floor(phi * len) into the
 * set's CPUs in ascending order (the kernel's reciprocal_scale(hash, len)
 * over the rps_map), phi the hash's fixed fractional place.  The flow seen
 * at index idx of n CPUs has phi in [idx/n, (idx+1)/n): a set of any size
 * s that this interval maps to one index j of, with a local CPU g at j,
 * lands the flow on g (a size that splits the interval is left: the flow
 * could land on either CPU).  g is the local cool CPU whose load, its
 * other busy queues' work taken off in the same tick (clear_for_flow():
 * to the coolest local CPUs outside the set, or to the flow's own CPU f,
 * which the flow leaves, when every local CPU is as busy), the flow and an
 * even share of the rest (mice: the coolest set CPU's at the same size,
 * the queue's work beyond the flow over s otherwise) leave lowest, with
 * the set's other places the coolest CPUs below and above g, the set's own
 * first; the same size wins a tie.  Taken when that lowers the flow's CPU
 * by min_gain.  True if it did. */
static bool flow_landing(struct pol_tick *t, struct pol_unit *u, int f, double flow, double mice, double now,
                         double beat) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        size_t n = (size_t) cpuset_count(u->rps), idx = 0, m;
        double best = -1, rest = MAX(proto_work(u) - flow, 0), f_left;
        cpuset_t pool, cand, best_set, best_dump;
        int *v, g_best = -1;
        size_t s_best = 0, j_best = 0;
        char list[128], reason[256];

        CPUSET_FOREACH(c, u->rps) {
                if (c == f)
                        break;
                idx++;
        }
        if (n == 0 || idx >= n)
                return false;
        /* f without the flow: what it carries for the queues it takes */
        f_left = MAX(ex_load(t, u, f) - pol_work_cost(t, u, f, flow), 0);
        cpuset_andnot(&pool, &t->eligible, &t->hot);
        cpuset_clear(&pool, u->target);
        drop_settling(t, &pool);
        CPUSET_FOREACH(c, u->rps)
                if (c != f)
                        cpuset_set(&pool, c);
        cpuset_clear(&pool, f);
        cpuset_and(&cand, &pool, &x->cpus);
        v = cool_order(t, u, &pool, &m);
        if (!v)
                return false;
        /* the same size first: a tie keeps it */
        for (size_t i = 1; i <= m + 1; i++) {
                size_t s = i == 1 ? n : i, j;
                double sm;

                if (i > 1 && s == n)
                        continue;
                if (s < 2 || s > m + 1)
                        continue;
                j = idx * s / n;
                if (((idx + 1) * s - 1) / n != j)
                        continue;
                sm = s == n ? mice : rest / (double) s;
                CPUSET_FOREACH(g, &cand) {
                        size_t below = 0, above = 0;
                        double peak = 0;
                        cpuset_t set, dump, home;

                        cpuset_zero(&set);
                        cpuset_set(&set, g);
                        /* the set's own CPUs first, then the coolest */
                        for (int pass = 0; pass < 2; pass++)
                                for (size_t k = 0; k < m; k++) {
                                        int c = v[k];
                                        if (c == g || cpuset_isset(&set, c) ||
                                            (pass == 0) != cpuset_isset(u->rps, c))
                                                continue;
                                        if (c < g ? below >= j : above >= s - 1 - j)
                                                continue;
                                        *(c < g ? &below : &above) += 1;
                                        cpuset_set(&set, c);
                                        peak = MAX(peak, ex_load(t, u, c) + pol_work_cost(t, u, c, sm));
                                }
                        if (below != j || above != s - 1 - j)
                                continue;
                        /* g's other busy queues move off to the local CPUs
                         * outside the set, the least loaded taking them
                         * all, or to f, which the flow leaves */
                        cpuset_andnot(&dump, &cand, &set);
                        cpuset_andnot(&dump, &dump, u->rps);
                        cpuset_zero(&home);
                        cpuset_set(&home, f);
                        for (int to_f = 0; to_f < 2; to_f++) {
                                const cpuset_t *d = to_f ? &home : &dump;
                                double mv, least = -1, p = peak;

                                if (to_f && (cpuset_isset(&set, f) || !cpuset_isset(&t->eligible, f)))
                                        continue;
                                mv = clear_for_flow(t, u, g, d, false, NULL);
                                if (to_f && mv <= 0)
                                        continue;
                                p = MAX(p, ex_load(t, u, g) - mv + flow + sm);
                                if (mv > 0 && !to_f) {
                                        CPUSET_FOREACH(c, d)
                                                least = least < 0 ? pol_load(t, c) : MIN(least, pol_load(t, c));
                                        p = MAX(p, least + mv);
                                } else if (to_f)
                                        p = MAX(p, f_left + pol_work_cost(t, u, f, mv));
                                if (best < 0 || p < best - 1e-9) {
                                        best = p;
                                        g_best = g;
                                        s_best = s;
                                        j_best = j;
                                        best_set = set;
                                        best_dump = *d;
                                }
                        }
                }
        }
        free(v);
        if (g_best < 0 || best > now - (saturated(t, f) ? 0 : pol_min_gain(t)) + 1e-9 || best >= now ||
            best > beat + 1e-9 || cpuset_equal(&best_set, u->rps))
                return false;
        snprintf(reason, sizeof(reason), "CPU%d cleared for a big flow RPS lands there from CPU%d of another node", g_best,
                 f);
        (void) clear_for_flow(t, u, g_best, &best_dump, true, reason);
        snprintf(reason, sizeof(reason),
                 "RPS home: a big flow on CPU%d of another node (%.0f%%); RPS over CPUs %s, CPU%d at its place (%zu of "
                 "%zu, was %zu of %zu) (projected peak %.0f%% -> %.0f%%)",
                 f, 100 * flow, pol_fmt_cpus(&best_set, list, sizeof(list)), g_best, j_best, s_best, idx, n, 100 * now,
                 100 * best);
        emit_rps(t, u, &best_set, ACTION_REASON_RPS_OFF_HOT, reason);
        rfs(t, u->nic, u->qi);
        return true;
}

/* A big flow (flow_bound()) on a hot CPU of the set on another node than
 * the NIC's costs POL_REMOTE_COST times its work there, and RPS hashes it
 * whole onto whichever CPU of a set: the set comes home, to the fewest
 * coolest local CPUs (two at least, so the guard keeps holding) whose
 * busiest would carry the flow and its even share of the rest, if that
 * lowers the flow's CPU by min_gain (a saturated one: not as busy as it
 * looks).  True if it did. */
static bool flow_home(struct pol_tick *t, struct pol_unit *u, const cpuset_t *hs) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        double lo, hi, flow, rest, best = -1, now;
        int f = flow_cpu(t, u, &lo, &hi), *v;
        size_t n, k_best = 0;
        cpuset_t cand, set;
        char list[128], reason[256];

        if (f < 0 || !cpuset_isset(hs, f) || cpuset_isset(&x->cpus, f))
                return false;
        flow = (hi - lo) / POL_REMOTE_COST;
        rest = MAX(proto_work(u) - flow, 0);
        cpuset_andnot(&cand, &x->cpus, &t->hot);
        cpuset_clear(&cand, u->target);
        drop_settling(t, &cand);
        leave_irq_cpus(t, u, flow, &cand);
        v = cool_order(t, u, &cand, &n);
        if (!v)
                return false;
        for (size_t k = 2; k <= n; k++) {
                double w = ex_load(t, u, v[k - 1]) + flow + rest / (double) k;
                if (best < 0 || w < best - 1e-9) {
                        best = w;
                        k_best = k;
                }
        }
        cpuset_zero(&set);
        for (size_t i = 0; i < k_best; i++)
                cpuset_set(&set, v[i]);
        free(v);
        now = pol_load(t, f);
        if (k_best == 0 || best > now - (saturated(t, f) ? 0 : pol_min_gain(t)) + 1e-9 || best >= now)
                return flow_landing(t, u, f, flow, lo, now, now);
        if (flow_landing(t, u, f, flow, lo, now, best))
                return true;
        snprintf(reason, sizeof(reason),
                 "RPS home: a big flow on CPU%d of another node (%.0f%% beyond the coolest set CPU); RPS over CPUs "
                 "%s (projected peak %.0f%% -> %.0f%%)",
                 f, 100 * (hi - lo), pol_fmt_cpus(&set, list, sizeof(list)), 100 * now, 100 * best);
        emit_rps(t, u, &set, ACTION_REASON_RPS_OFF_HOT, reason);
        rfs(t, u->nic, u->qi);
        return true;
}

/* A hot IRQ CPU in its own RPS set (hs: the set's hot CPUs) leaves it when
 * that lowers the peak by min_gain, judged when it is saturated (its share
 * unmeasurable) by what the other set CPUs would carry. */
static bool irq_cpu_leaves(struct pol_tick *t, struct pol_unit *u, const cpuset_t *hs) {
        int cpu = u->target, m = u->n_rps;
        double others = 0;
        cpuset_t set;
        char list[128], reason[256];

        if (!cpuset_isset(hs, cpu) || m < 2)
                return false;
        set = *u->rps;
        cpuset_clear(&set, cpu);
        CPUSET_FOREACH(c, &set)
                others = MAX(others, pol_load(t, c) + own_load(t, u, c) / (m - 1));
        if (set_peak(t, u, &set) > set_peak(t, u, u->rps) - pol_min_gain(t) &&
            !(pol_load(t, cpu) >= POL_SHARE_SATURATED && others <= pol_load(t, cpu) - pol_min_gain(t)))
                return false;
        snprintf(reason, sizeof(reason),
                 "RPS off its IRQ CPU%d at %.0f%% (its own interrupt work keeps it busiest); RPS over CPUs %s", cpu,
                 100 * pol_load(t, cpu), pol_fmt_cpus(&set, list, sizeof(list)));
        emit_rps(t, u, &set, ACTION_REASON_RPS_OFF_HOT, reason);
        rfs(t, u->nic, u->qi);
        return true;
}

/* A single-queue NIC's set judged by load (single_set()): first once
 * measured, as the start's; then, as any move, when the new set lowers
 * the projected peak of the local CPUs by min_gain with them settled, so
 * a set CPU whose other work grew leaves it, and the set comes back when
 * the IRQ CPU's load needs it.  single_plan(): the set it would take and
 * whether it would (a first judgement always does); single_judge() takes
 * it, adjust() names the dwell's end as due for it. */
static bool single_plan(const struct pol_tick *t, const struct pol_unit *u, bool first, cpuset_t *set, double *before,
                        double *after) {
        cpuset_t cur, span;

        single_set(t, u, u->target, set, &span);
        if (cpuset_only(set) == u->target)
                cpuset_zero(set);
        if (u->rps_on)
                cur = *u->rps;
        else
                cpuset_zero(&cur);
        if (cpuset_equal(set, &cur) || (!first && any_settling(t, &span)))
                return false;
        *before = span_peak(t, u, &cur, &span);
        *after = span_peak(t, u, set, &span);
        return first || *after <= *before - pol_min_gain(t) + 1e-9;
}

static void single_judge(struct pol_tick *t, struct pol_unit *u, struct pol_queue *q) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        int cpu = u->target;
        bool first = q->rps_unmeasured;
        cpuset_t set;
        double before = 0, after = 0;
        char list[128], reason[256];

        q->rps_unmeasured = false;
        if (!single_plan(t, u, first, &set, &before, &after))
                return;
        if (cpuset_empty(&set)) {
                set = cpuset_kept_get(&q->rps_orig);
                snprintf(reason, sizeof(reason),
                         "single-queue NIC %s: RPS back to %s: the other CPUs' work keeps them busier than a share "
                         "relieves CPU%d (projected peak %.0f%% -> %.0f%%)", x->nic->name,
                         cpuset_to_text(&set, "none", list, sizeof(list)), cpu, 100 * before, 100 * after);
                emit_rps(t, u, &set, ACTION_REASON_RPS_NOT_NEEDED, reason);
                u->rps_ours = !cpuset_kept_equal(&q->rps_orig, &set);
                return;
        }
        snprintf(reason, sizeof(reason), "single-queue NIC %s: RPS over CPUs %s%s (projected peak %.0f%% -> %.0f%%)",
                 x->nic->name, pol_fmt_cpus(&set, list, sizeof(list)),
                 own_left_out(t, u, &set, cpu), 100 * before, 100 * after);
        emit_rps(t, u, &set, ACTION_REASON_SINGLE_QUEUE_RPS, reason);
        u->rps_ours = true;
        rfs(t, u->nic, u->qi);
}

static void adjust(struct pol_tick *t, struct pol_unit *u) {
        const struct config *c = t->c;
        const struct pol_nicctx *x = &t->nics[u->nic];
        struct pol_queue *q = pol_queue_get(t->st, x->nic->name, u->queue, false);
        cpuset_t span, cand, set, others;
        double p = proto_work(u), limit;
        bool hot, settling, fits = true;
        int cpu = u->target;
        char list[128], reason[256];

        if (!q || !pol_rps_allowed(t, u))
                return;
        span = *u->rps;
        cpuset_set(&span, cpu);
        hot = cpuset_intersects(&span, &t->hot);
        settling = any_settling(t, &span);
        if (q->rps_static) {
                /* judged once measured, then as loads change */
                if (!settling && (q->rps_unmeasured || t->now - q->rps_change_usec >= c->min_dwell_usec))
                        single_judge(t, u, q);
                else if (!settling) {
                        /* a change that gains now waits for the dwell: a
                         * full tick is due when it ends, not at the audit */
                        cpuset_t set;
                        double before, after;
                        uint64_t end = q->rps_change_usec + c->min_dwell_usec;

                        if (single_plan(t, u, false, &set, &before, &after) &&
                            (t->single_due == 0 || end < t->single_due))
                                t->single_due = end;
                }
                return;
        }

        if (hot) {
                cpuset_t hs, shed;
                char hl[128];

                q->narrow_ticks = 0;
                /* widening helps only the CPUs of the set */
                cpuset_and(&hs, u->rps, &t->hot);
                if (cpuset_empty(&hs) || settling || t->now - q->rps_change_usec < c->min_dwell_usec)
                        return;
                if (irq_cpu_leaves(t, u, &hs))
                        return;
                if (flow_bound(t, u)) {
                        (void) flow_home(t, u, &hs);
                        return;
                }
                /* a set CPU at the level only with the queue's share
                 * beyond the even one (a big flow) is cooled neither by a
                 * wider set nor by leaving it: RPS hands the flow on whole */
                CPUSET_FOREACH(h, &hs)
                        if (h != cpu && pol_load(t, h) >= pol_level(t) &&
                            pol_load(t, h) - flow_excess(t, u, h) < pol_level(t))
                                cpuset_clear(&hs, h);
                if (cpuset_empty(&hs))
                        return;
                /* a hot set CPU (not the IRQ CPU) at the level without this
                 * queue's share leaves the set, lest every set widen over
                 * every CPU; its share is the even one and the big flow's
                 * excess (flow_excess()), or a CPU hot with the queue's
                 * own flow would only hand it on to the next CPU */
                cpuset_zero(&shed);
                CPUSET_FOREACH(h, &hs)
                        if (h != cpu && ex_load(t, u, h) - flow_excess(t, u, h) >= pol_level(t))
                                cpuset_set(&shed, h);
                /* widen: keep the IRQ CPU in or out as it is */
                if (!cool_cands(t, u, &span, p, &t->hot, &cand) && cpuset_empty(&shed))
                        return;
                cpuset_andnot(&set, u->rps, &shed);
                size_set(t, u, &cand, pol_level(t), &set);
                if (!cpuset_empty(&shed)) {
                        double was = 0;
                        cpuset_t rest = set;

                        CPUSET_FOREACH(h, &shed)
                                was = MAX(was, pol_load(t, h));
                        cpuset_clear(&rest, cpu);
                        /* something left to steer to, and worth it */
                        if (cpuset_empty(&rest) || set_peak(t, u, &set) > was - pol_min_gain(t))
                                return;
                        snprintf(reason, sizeof(reason),
                                 "RPS off hot %s%s (other work keeps it at the level; queue work %.0f%%); RPS over CPUs %s",
                                 cpus_word(&shed), pol_fmt_cpus(&shed, hl, sizeof(hl)), 100 * u->total,
                                 pol_fmt_cpus(&set, list, sizeof(list)));
                } else if (set_peak(t, u, &set) > set_peak(t, u, u->rps) - pol_min_gain(t) &&
                           !widen_drops(t, u, &set))
                        /* as any move, a wider set must gain min_gain: a CPU
                         * hot with its own IRQ work is not cooled by a share;
                         * a dropping set's gain is in its demand */
                        return;
                else
                        snprintf(reason, sizeof(reason), "RPS widened: %s%s still hot (queue work %.0f%%); RPS over CPUs %s",
                                 cpuset_count(&hs) > 1 ? "CPUs " : "CPU", pol_fmt_cpus(&hs, hl, sizeof(hl)),
                                 100 * u->total, pol_fmt_cpus(&set, list, sizeof(list)));
                if (cpuset_equal(&set, u->rps))
                        return;
                emit_rps(t, u, &set, cpuset_empty(&shed) ? ACTION_REASON_RPS_WIDENED : ACTION_REASON_RPS_OFF_HOT,
                         reason);
                rfs(t, u->nic, u->qi);
                return;
        }

        /* Narrow with hysteresis: only when the work fits on one CPU fewer
         * one hysteresis band below hot_exit, for hot_samples samples in a
         * row and after the dwell. */
        limit = pol_narrow(t);
        others = *u->rps;
        cpuset_clear(&others, cpu);
        if (cpuset_count(&others) <= 1) {
                /* back to what it was: all the work on the IRQ CPU */
                set = cpuset_kept_get(&q->rps_orig);
                fits = ex_load(t, u, cpu) + proto_whole(t, u) < limit;
        } else
                fits = narrower(t, u, &others, limit, &set);
        if (!held(t, &q->narrow_ticks, fits, settling || t->now - q->rps_change_usec < c->min_dwell_usec))
                return;
        if (cpuset_kept_equal(&q->rps_orig, &set))
                snprintf(reason, sizeof(reason), "RPS no longer needed: queue work %.0f%% fits on CPU%d below %.0f%%; RPS back to %s",
                         100 * u->total, cpu, 100 * limit, cpuset_to_text(&set, "none", list, sizeof(list)));
        else
                snprintf(reason, sizeof(reason), "RPS narrowed: queue work %.0f%% fits on fewer CPUs below %.0f%%; RPS over CPUs %s",
                         100 * u->total, 100 * limit, pol_fmt_cpus(&set, list, sizeof(list)));
        emit_rps(t, u, &set,
                 cpuset_kept_equal(&q->rps_orig, &set) ? ACTION_REASON_RPS_NOT_NEEDED : ACTION_REASON_RPS_NARROWED, reason);
        u->rps_ours = !cpuset_kept_equal(&q->rps_orig, &set);
}

/* The protocol work of the queues on hot CPUs whose RPS is not ours yet
 * against the room the cool eligible CPUs have below the level. */
void pol_rps_pool(struct pol_tick *t) {
        double demand = 0, room = 0, level = pol_level(t);

        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *u = &t->units[i];
                if (u->target >= 0 && cpuset_isset(&t->hot, u->target) && !u->rps_ours && pol_rps_allowed(t, u))
                        demand += proto_work(u);
        }
        CPUSET_FOREACH(cpu, &t->eligible)
                if (!cpuset_isset(&t->hot, cpu))
                        room += MAX(level - pol_load(t, cpu), 0);
        t->pool_short = demand > room;
}

void pol_rps_adjust(struct pol_tick *t) {
        if (!t->in->load)
                return;
        replan(t);
        for (size_t i = 0; i < t->n_units; i++) {
                struct pol_unit *u = &t->units[i];
                const struct pol_nicctx *x = &t->nics[u->nic];
                struct pol_queue *q;

                if (u->touched || u->target < 0)
                        continue;
                if (u->rps_ours) {
                        adjust(t, u);
                        continue;
                }
                /* a single-queue NIC's set we gave back (single_judge)
                 * comes back when the IRQ CPU needs it */
                q = pol_queue_get(t->st, x->nic->name, u->queue, false);
                if (q && q->rps_static && !q->rps_unmeasured && x->nic->n_queues == 1 && x->n_units == 1 &&
                    t->c->single_queue_rps && pol_rps_allowed(t, u) &&
                    cpuset_kept_same(&q->rps_orig, &x->nic->queues[u->qi].rps_cpus) &&
                    t->now - q->rps_change_usec >= t->c->min_dwell_usec)
                        single_judge(t, u, q);
        }
}

/* The least gain of a whole-queue granularity plan: judged on the CPUs'
 * levels, whose error shrinks while nothing changes, it is min_gain at
 * the host's scale and POL_NOISE_K deviations of the noisiest CPU's
 * noise, without the one sample's resolution (POL_GAIN_LEAST). */
static double gran_need(const struct pol_tick *t) {
        double var = 0;

        CPUSET_FOREACH(cpu, &t->eligible)
                if ((size_t) cpu < t->st->n_cpus)
                        var = MAX(var, t->st->cpus[cpu].noise_var);
        return MAX(t->c->min_gain * t->scale, POL_NOISE_K * sqrt(var));
}

struct gran_step {
        struct pol_unit *u;
        cpuset_t was;            /* its RPS set before the plan */
        int cpu;                 /* its IRQ CPU, the busiest when planned */
        double from;             /* that CPU's load then */
};

/* Whole-queue granularity (docs/DESIGN.md "Policy"): the busiest CPU,
 * while it carries two queue IRQs or more, gets RPS for its busiest queue
 * without one, then the next busiest as projected; the plan is taken
 * whole if it lowers the host's peak by the least gain, else none of it. */
void pol_rps_gran(struct pol_tick *t) {
        struct gran_step *plan;
        size_t n = 0, cap = (size_t) cpuset_count(&t->eligible);
        double need, peak0, peak1;
        int top;

        if (!t->in->load || !t->st->levels.steady || !cpuset_empty(&t->hot) || cap == 0)
                return;
        CPUSET_FOREACH(cpu, &t->eligible)
                if (cpu > t->max_cpu || (size_t) cpu >= t->st->n_cpus || pol_settling(t, cpu) ||
                    cpuset_isset(&t->touched, cpu) || t->st->cpus[cpu].noise_n <= POL_NOISE_SAMPLES)
                        return;
        /* every eligible CPU counts: there is a busiest */
        need = gran_need(t);
        peak0 = pol_load(t, busiest_eligible(t));
        plan = calloc(cap, sizeof(*plan));
        if (!plan) {
                t->r = -ENOMEM;
                return;
        }
        while (n < cap && (top = busiest_eligible(t)) >= 0) {
                struct pol_unit *u = NULL;
                cpuset_t cand, set, low;
                int nq = 0;

                for (size_t i = 0; i < t->n_units; i++) {
                        struct pol_unit *v = &t->units[i];
                        if (v->target != top || v->irqless || !(v->total > 0))
                                continue;
                        nq++;
                        if (!v->rps_on && !v->touched && !v->fixed && pol_rps_allowed(t, v) &&
                            (!u || proto_work(v) > proto_work(u)))
                                u = v;
                }
                if (nq < 2 || !u || !start_cand(t, u, top, proto_work(u), &t->hot, &cand))
                        break;
                /* near the mean, or where the cool CPUs lack room for
                 * that, as low as it goes */
                cpuset_zero(&set);
                size_set(t, u, &cand, t->mean, &set);
                cpuset_zero(&low);
                size_cool(t, u, &cand, false, true, 0, &low);
                if (set_peak(t, u, &low) < set_peak(t, u, &set) - 1e-9)
                        set = low;
                if (cpuset_empty(&set) || set_peak(t, u, &set) > pol_load(t, top) - need + 1e-9)
                        break;
                plan[n] = (struct gran_step) { .u = u, .was = *u->rps, .cpu = top, .from = pol_load(t, top) };
                project_rps(t, u, &set, false);
                n++;
        }
        peak1 = pol_load(t, busiest_eligible(t));
        /* back as it was, last first, leaving no step to take */
        if (peak0 - peak1 < need - 1e-9)
                while (n > 0) {
                        struct gran_step *g = &plan[--n];
                        project_rps(t, g->u, &g->was, false);
                        g->u->rps_on = g->u->touched = false;
                }
        for (size_t i = 0; i < n; i++) {
                struct pol_unit *u = plan[i].u;
                char list[128], reason[256];

                snprintf(reason, sizeof(reason),
                         "whole-queue granularity: CPU%d at %.1f%% carries 2 queues or more; the host's peak "
                         "%.1f%% -> %.1f%% with %zu RPS sets; RPS over CPUs %s",
                         plan[i].cpu, 100 * plan[i].from, 100 * peak0, 100 * peak1, n,
                         pol_fmt_cpus(u->rps, list, sizeof(list)));
                rps_action(t, u, u->qi, u->rps, ACTION_REASON_QUEUE_GRANULARITY, reason);
                pol_settle(t, u->target);
                CPUSET_FOREACH(c, u->rps)
                        pol_settle(t, c);
                u->rps_ours = true;
                rfs(t, u->nic, u->qi);
        }
        free(plan);
}

static uint32_t pow2_floor(uint32_t v) {
        uint32_t p = 1;

        while (p <= v / 2)
                p <<= 1;
        return v > 0 ? p : 0;
}

/* RFS (kernel scaling guide): rps_sock_flow_entries once for the host, and
 * rps_flow_cnt = entries / rx queues per queue, both powers of two. */
static void rfs(struct pol_tick *t, size_t nic, size_t qi) {
        const struct pol_nicctx *x = &t->nics[nic];
        const struct inventory_queue *iq = &x->nic->queues[qi];
        const struct pol_queue *q;
        uint32_t entries = pow2_floor(t->c->rps_sock_flow_entries), per;
        int n_rx = x->nic->rx_queues > 0 ? x->nic->rx_queues : (int) x->nic->n_queues;
        struct action *a;

        if (!x->rfs || entries == 0 || !iq->has_rps)
                return;
        if (!t->st->sock_flow_done) {
                t->st->sock_flow_done = true;
                if (t->inv->rps_sock_flow_entries != entries) {
                        a = pol_add(t, KNOB_SOCKFLOW);
                        if (!a)
                                return;
                        a->value = entries;
                        a->from_value = t->inv->rps_sock_flow_entries;
                        action_set_reason(a, ACTION_REASON_RFS, "RFS for %s rx-%d (scaling guide: %u entries)",
                                 x->nic->name, iq->index, entries);
                }
        }
        q = pol_queue_get(t->st, x->nic->name, iq->index, false);
        if (q && (q->flow_external || q->flow_broken))
                return;
        per = pow2_floor(entries / (uint32_t) MAX(n_rx, 1));
        if (per == 0 || iq->rps_flow_cnt == per)
                return;
        a = pol_add_queue(t, KNOB_FLOWCNT, x->nic->name, iq->index);
        if (!a)
                return;
        a->value = per;
        a->from_value = iq->rps_flow_cnt;
        action_set_reason(a, ACTION_REASON_RFS, "RFS: %u flow entries / %d rx queues", entries, MAX(n_rx, 1));
}

/* ---- what the configuration no longer allows ---- */

/* An RPS or XPS mask back to orig; false when out of memory. */
static bool back_mask(struct pol_tick *t, enum knob_kind type, const struct inventory_nic *n, const struct inventory_queue *iq,
                      const char *why, const cpuset_kept_t *orig, const cpuset_kept_t *cur) {
        struct action *a = pol_add_queue(t, type, n->name, iq->index);
        cpuset_t to;

        if (!a)
                return false;
        to = cpuset_kept_get(orig);
        pol_set_cpus_kept(t, a, &to, cur);
        action_set_reason(a, ACTION_REASON_BACK_TO_ORIGINAL, "%s for %s: %s back to the original", why, n->name,
                 type == KNOB_RPS ? "RPS" : "XPS");
        return true;
}

void pol_unwanted(struct pol_tick *t) {
        for (size_t ni = 0; ni < t->inv->n_nics; ni++) {
                const struct pol_nicctx *x = &t->nics[ni];
                const struct inventory_nic *n = x->nic;

                if (x->managed && x->rps && x->rfs && x->xps)
                        continue;
                for (size_t qi = 0; qi < n->n_queues; qi++) {
                        const struct inventory_queue *iq = &n->queues[qi];
                        const struct pol_queue *q = pol_queue_get(t->st, n->name, iq->index, false);

                        if (!q)
                                continue;
                        if ((!x->managed || !x->rps) && q->orig_known && iq->has_rps && q->rps_set &&
                            !q->rps_external && !q->rps_broken && !cpuset_kept_same(&iq->rps_cpus, &q->rps_orig) &&
                            !back_mask(t, KNOB_RPS, n, iq, x->managed ? "rps = no" : "manage = no", &q->rps_orig,
                                       &iq->rps_cpus))
                                return;
                        if ((!x->managed || !x->rfs || !x->rps) && iq->has_rps &&
                            !flow_back(t, n, iq, q, NULL,
                                       !x->managed ? "manage = no" : !x->rps ? "rps = no" : "rfs = no"))
                                return;
                        if ((!x->managed || !x->xps) && q->xps_orig_known && iq->has_xps && q->xps_set &&
                            !q->xps_external && !q->xps_broken && !cpuset_kept_same(&iq->xps_cpus, &q->xps_orig) &&
                            !back_mask(t, KNOB_XPS, n, iq, x->managed ? "xps = no" : "manage = no", &q->xps_orig,
                                       &iq->xps_cpus))
                                return;
                }
        }
}

/* ---- NICs without queue IRQs ----
 *
 * A veth's receive work runs on the sending CPU (veth_xmit -> netif_rx)
 * unless rps_cpus send it elsewhere: RPS is the only lever.  Unexplained
 * hot CPUs while such a NIC receives POL_IRQLESS_PPS get one set on all its
 * rx queues, widened, narrowed and given back as for a lone hot queue.
 * XPS moves no work on a veth and is left alone. */

static const char *fmt_pps(double pps, char *buf, size_t len) {
        if (pps >= 10000)
                snprintf(buf, len, "%.0fk", pps / 1000);
        else
                snprintf(buf, len, "%.0f", pps);
        return buf;
}

/* A queue we may write RPS on. */
static bool soft_queue_ok(struct pol_tick *t, const struct inventory_nic *n, const struct inventory_queue *iq) {
        const struct pol_queue *q;

        if (!iq->has_rx || !iq->has_rps)
                return false;
        q = pol_queue_get(t->st, n->name, iq->index, false);
        return !(q && (q->rps_external || q->rps_broken || q->rps_kept));
}

/* No queue IRQ of its own; not lo, whose receive is the sender's own work. */
static bool irqless_nic(const struct pol_nicctx *x) {
        return x->nic->map == INVENTORY_MAP_NONE && x->n_units == 0 && strcmp(x->nic->name, "lo") != 0;
}

int pol_soft_build(struct pol_tick *t) {
        for (size_t i = 0; i < t->inv->n_nics; i++) {
                const struct pol_nicctx *x = &t->nics[i];
                const struct inventory_nic *n = x->nic;
                struct pol_unit *u;
                int first = -1, ours = -1;

                if (!x->managed || !x->rps || !irqless_nic(x))
                        continue;
                for (size_t q = 0; q < n->n_queues; q++) {
                        if (!n->queues[q].has_rx || !n->queues[q].has_rps)
                                continue;
                        if (first < 0)
                                first = (int) q;
                        if (ours < 0 && pol_rps_ours(t->st, n, &n->queues[q]))
                                ours = (int) q;
                }
                if (first < 0)
                        continue;
                if (util_grow((void **) &t->irqless, &t->a_irqless, t->n_irqless + 1, sizeof(*t->irqless)) < 0)
                        return -ENOMEM;
                u = &t->irqless[t->n_irqless++];
                /* one whose mask we set stands for the NIC, so one changed by
                 * someone else does not strand the others */
                *u = (struct pol_unit){ .nic = i, .qi = (size_t) (ours >= 0 ? ours : first), .cpu = -1, .target = -1,
                                        .offline_cpu = -1, .keep = 0, .irqless = true, .rps_ours = ours >= 0,
                                        .rps = &pol_no_rps };
                u->queue = n->queues[u->qi].index;
                cpuset_t rps = cpuset_kept_get(&n->queues[u->qi].rps_cpus);

                pol_unit_set_rps(t, u, &rps);
                u->rps_on = u->n_rps > 0;
                if (u->rps_ours && x->rec->rate_known)
                        u->total = x->rec->rx_pps * x->rec->cost;
        }
        return 0;
}

/* The same RPS set, and RFS, on every rx queue of an irqless NIC. */
static void soft_emit(struct pol_tick *t, struct pol_unit *u, const cpuset_t *to, enum action_reason code,
                      const char *reason) {
        const struct inventory_nic *n = t->nics[u->nic].nic;

        for (size_t q = 0; q < n->n_queues; q++) {
                const struct inventory_queue *iq = &n->queues[q];
                if (!soft_queue_ok(t, n, iq))
                        continue;
                if (!cpuset_kept_equal(&iq->rps_cpus, to))
                        rps_action(t, u, q, to, code, reason);
                if (!cpuset_empty(to))
                        rfs(t, u->nic, q);
        }
        project_rps(t, u, to, true);
}

/* Gives every queue its original mask back. */
static void soft_restore(struct pol_tick *t, struct pol_unit *u, enum action_reason code, const char *reason) {
        const struct inventory_nic *n = t->nics[u->nic].nic;

        for (size_t q = 0; q < n->n_queues; q++) {
                const struct inventory_queue *iq = &n->queues[q];
                const struct pol_queue *pq = pol_queue_get(t->st, n->name, iq->index, false);
                cpuset_t orig;

                if (!soft_queue_ok(t, n, iq) || !pol_rps_ours(t->st, n, iq))
                        continue;
                orig = cpuset_kept_get(&pq->rps_orig);
                rps_action(t, u, q, &orig, code, reason);
        }
        project_rps(t, u, &pol_no_rps, true);
        u->rps_ours = false;
}

/* Cool, not settling candidates for an irqless NIC beside span; remote only
 * when no local one is. */
static void soft_cand(const struct pol_tick *t, const struct pol_nicctx *x, const cpuset_t *span, cpuset_t *ret) {
        cpuset_t remote;

        cpuset_andnot(ret, &x->cpus, span);
        cpuset_andnot(ret, ret, &t->hot);
        if (cpuset_empty(ret)) {
                cpuset_andnot(&remote, &x->allowed, &x->cpus);
                cpuset_andnot(&remote, &remote, span);
                cpuset_andnot(ret, &remote, &t->hot);
        }
        drop_settling(t, ret);
}

static void soft_adjust(struct pol_tick *t, struct pol_unit *u) {
        const struct config *c = t->c;
        const struct pol_nicctx *x = &t->nics[u->nic];
        struct pol_nic *rec = x->rec;
        struct pol_queue *q = pol_queue_get(t->st, x->nic->name, u->queue, false);
        double pps = rec->rate_known ? rec->rx_pps : 0, p = proto_work(u), limit;
        bool wait;
        cpuset_t hs, cand, set, span;
        char list[128], hl[128], rate[32], reason[256];

        if (!q)
                return;
        wait = any_settling(t, u->rps) || t->now - q->rps_change_usec < c->min_dwell_usec;

        /* the load is gone: back to the original masks */
        if (pps < POL_IRQLESS_PPS_EXIT) {
                q->narrow_ticks = 0;
                if (!held(t, &rec->gone_ticks, true, wait))
                        return;
                snprintf(reason, sizeof(reason),
                         "%s receives %s packets/s, below %.0f for %u samples: RPS no longer needed, back to the original",
                         x->nic->name, fmt_pps(pps, rate, sizeof(rate)), POL_IRQLESS_PPS_EXIT, MAX(c->hot_samples, 1u));
                soft_restore(t, u, ACTION_REASON_RPS_NOT_NEEDED, reason);
                return;
        }
        rec->gone_ticks = 0;

        /* its RPS CPUs hot: widen, never onto the senders' CPUs */
        cpuset_and(&hs, u->rps, &t->hot);
        if (!cpuset_empty(&hs)) {
                q->narrow_ticks = 0;
                if (wait)
                        return;
                cpuset_or(&span, u->rps, &rec->senders);
                soft_cand(t, x, &span, &cand);
                if (cpuset_empty(&cand))
                        return;
                set = *u->rps;
                size_set(t, u, &cand, pol_level(t), &set);
                snprintf(reason, sizeof(reason), "RPS widened: %s%s still hot; %s receives %s packets/s: RPS over %s%s",
                         cpus_word(&hs), pol_fmt_cpus(&hs, hl, sizeof(hl)), x->nic->name,
                         fmt_pps(pps, rate, sizeof(rate)), cpus_word(&set), pol_fmt_cpus(&set, list, sizeof(list)));
                soft_emit(t, u, &set, ACTION_REASON_RPS_WIDENED, reason);
                return;
        }

        /* narrow as adjust() does; the last CPU stays until the packets
         * stop (narrower() keeps one) */
        limit = pol_narrow(t);
        if (!held(t, &q->narrow_ticks, narrower(t, u, u->rps, limit, &set), wait))
                return;
        snprintf(reason, sizeof(reason), "RPS narrowed: %s receive work %.0f%% fits on fewer CPUs below %.0f%%; RPS over %s%s",
                 x->nic->name, 100 * p, 100 * limit, cpus_word(&set), pol_fmt_cpus(&set, list, sizeof(list)));
        soft_emit(t, u, &set, ACTION_REASON_RPS_NARROWED, reason);
}

/* Network work on cpu that a queue IRQ or an RPS set we know of accounts
 * for: a busy queue IRQ firing there (the rebalancing's business), work
 * steered there by RPS, or a irqless NIC's RPS set (widening's business). */
static bool explained(const struct pol_tick *t, int cpu) {
        double busy = pol_busy(t, cpu);

        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *u = &t->units[i];
                if (u->target == cpu && u->work >= busy)
                        return true;
                if (u->rps_on && cpu != u->target && cpuset_isset(u->rps, cpu) &&
                    proto_work(u) / u->n_rps >= busy)
                        return true;
        }
        for (size_t i = 0; i < t->n_irqless; i++)
                if (t->irqless[i].rps_on && cpuset_isset(t->irqless[i].rps, cpu))
                        return true;
        return false;
}

/* May this irqless NIC get RPS now? */
static bool irqless_startable(struct pol_tick *t, const struct pol_unit *u) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        const struct pol_queue *q = pol_queue_get(t->st, x->nic->name, u->queue, false);

        /* someone else's RPS, or our own: not a start */
        if (u->rps_ours || u->rps_on || u->touched || !soft_queue_ok(t, x->nic, &x->nic->queues[u->qi]))
                return false;
        if (!x->rec->rate_known || x->rec->rx_pps < POL_IRQLESS_PPS)
                return false;
        /* a failed trial's block, and the dwell after we gave it back */
        if (t->now < x->rec->rps_trial.block_until)
                return false;
        return !(q && q->rps_set && t->now - q->rps_change_usec < t->c->min_dwell_usec);
}

static void soft_start(struct pol_tick *t) {
        double *w, sum_pps = 0;
        cpuset_t src;
        int top = -1;

        cpuset_zero(&src);
        w = calloc(t->max_cpu + 1, sizeof(double));
        if (!w) {
                t->r = -ENOMEM;
                return;
        }
        CPUSET_FOREACH(cpu, &t->hot) {
                if (cpu > t->max_cpu || cpuset_isset(&t->touched, cpu) || pol_settling(t, cpu) || explained(t, cpu))
                        continue;
                w[cpu] = pol_unexplained(t, cpu);
                /* hot from TIMER/RCU/BLOCK work or the IRQs of other devices */
                if (w[cpu] < POL_BUSY_ABS)
                        continue;
                cpuset_set(&src, cpu);
                if (top < 0 || pol_load(t, cpu) > pol_load(t, top))
                        top = cpu;
        }
        for (size_t i = 0; top >= 0 && i < t->n_irqless; i++)
                if (irqless_startable(t, &t->irqless[i]))
                        sum_pps += t->nics[t->irqless[i].nic].rec->rx_pps;

        /* the unexplained load split among busy irqless NICs by packet rate */
        for (size_t i = 0; sum_pps > 0 && i < t->n_irqless; i++) {
                struct pol_unit *u = &t->irqless[i];
                const struct pol_nicctx *x = &t->nics[u->nic];
                double pps = x->rec->rx_pps, W = 0;
                cpuset_t cand, set;
                char list[128], sl[128], rate[32], reason[256];

                if (!irqless_startable(t, u))
                        continue;
                CPUSET_FOREACH(cpu, &src)
                        W += w[cpu] * pps / sum_pps;
                soft_cand(t, x, &src, &cand);
                if (cpuset_empty(&cand))
                        continue;
                u->total = W;
                u->target = top;
                cpuset_zero(&set);
                size_set(t, u, &cand, pol_level(t), &set);
                snprintf(reason, sizeof(reason),
                         "%s%s softirq+irq %.0f%% for %u samples, not from queue IRQs; %s receives %s packets/s: RPS over %s%s",
                         cpus_word(&src), pol_fmt_cpus(&src, sl, sizeof(sl)),
                         100 * pol_load(t, top), t->c->hot_samples, x->nic->name, fmt_pps(pps, rate, sizeof(rate)),
                         cpus_word(&set), pol_fmt_cpus(&set, list, sizeof(list)));
                soft_emit(t, u, &set, ACTION_REASON_SOFTIRQ_HOT, reason);
                u->rps_ours = true;
                /* what a packet costs, for sizing later from the rate alone */
                x->rec->cost = pps > 0 ? W / pps : 0;
                x->rec->senders = src;
                x->rec->gone_ticks = 0;
                pol_trial_start(&x->rec->rps_trial, x->rec);
        }
        free(w);
}

/* A receive rate for a reason: bits/s from bytes/s, else packets/s. */
static const char *fmt_rate(double v, bool bytes, char *buf, size_t len) {
        char p[32];

        if (!bytes)
                snprintf(buf, len, "%s packets/s", fmt_pps(v, p, sizeof(p)));
        else if (v * 8 >= 1e9)
                snprintf(buf, len, "%.2f Gbit/s", v * 8 / 1e9);
        else
                snprintf(buf, len, "%.1f Mbit/s", v * 8 / 1e6);
        return buf;
}

/* The trial of an irqless NIC's RPS: true while it runs and when it failed
 * and gave the original masks back. */
static bool soft_trial(struct pol_tick *t, struct pol_unit *u) {
        struct pol_nic *rec = t->nics[u->nic].rec;
        struct pol_trial *tr = &rec->rps_trial;
        char before[48], after_s[48], rates[192], reason[320];
        double after = 0;
        enum pol_trial_step step = pol_trial_sample(tr, rec, t->c->rps_trial, t->now, t->rep->rps_trials, &after);

        if (step != POL_TRIAL_PASSED && step != POL_TRIAL_FAILED)
                return step == POL_TRIAL_RUNNING;
        /* the verdict, either way, with the rates it compared */
        snprintf(rates, sizeof(rates), "%s received %s in %u sample%s with RPS, %s before",
                 t->nics[u->nic].nic->name, fmt_rate(after, tr->bytes, after_s, sizeof(after_s)),
                 tr->ticks - 1, tr->ticks - 1 == 1 ? "" : "s", fmt_rate(tr->base, tr->bytes, before, sizeof(before)));
        if (step == POL_TRIAL_PASSED) {
                pol_note(t, LOG_INFO, "RPS kept: %s (%+.0f%%)", rates, 100 * (after / tr->base - 1));
                return false;
        }
        snprintf(reason, sizeof(reason), "RPS cost throughput: %s (%.0f%%): back to the original, no RPS for it for %llu min",
                 rates, 100 * (after / tr->base - 1), (unsigned long long) (tr->backoff_usec / 60000000ULL));
        soft_restore(t, u, ACTION_REASON_RPS_TRIAL_FAILED, reason);
        return true;
}

void pol_soft(struct pol_tick *t) {
        if (!t->in->load || t->n_irqless == 0)
                return;
        for (size_t i = 0; i < t->n_irqless; i++) {
                struct pol_unit *u = &t->irqless[i];
                if (u->rps_ours && !u->touched && !soft_trial(t, u))
                        soft_adjust(t, u);
        }
        soft_start(t);
}

void pol_vacate_rps(struct pol_tick *t) {
        struct pol_unit *sets[2] = { t->units, t->irqless };
        size_t counts[2] = { t->n_units, t->n_irqless };
        char list[64], reason[256];

        for (int k = 0; k < 2; k++)
                for (size_t i = 0; i < counts[k]; i++) {
                        struct pol_unit *u = &sets[k][i];
                        const struct pol_nicctx *x = &t->nics[u->nic];
                        cpuset_t to;

                        if (!u->rps_ours || u->touched || !x->managed || !x->rps || cpuset_subset(u->rps, &x->allowed))
                                continue;
                        cpuset_and(&to, u->rps, &x->allowed);
                        snprintf(reason, sizeof(reason), "RPS of %s leaves CPUs no longer eligible (banned): now %s",
                                 x->nic->name, cpuset_to_text(&to, "off", list, sizeof(list)));
                        if (u->irqless)
                                soft_emit(t, u, &to, ACTION_REASON_CPU_BANNED, reason);
                        else
                                emit_rps(t, u, &to, ACTION_REASON_CPU_BANNED, reason);
                        if (cpuset_empty(&to))
                                u->rps_ours = false;
                }
}
