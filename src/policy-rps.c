/* Policy, RPS and RFS: the lone hot queue (DESIGN.md 5: one IRQ saturating
 * its CPU, irqbalance's blind spot) gets RPS to cool NUMA-local CPUs, widened
 * while its CPUs stay hot and narrowed when its work fits on fewer, with the
 * same hysteresis as hot CPUs; single-queue NICs get RPS from the start; RFS
 * sizes follow the kernel scaling guide. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "policy-internal.h"

static bool rps_allowed(struct pol_tick *t, const struct pol_unit *u) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        const struct pol_queue *q;

        if (!x->managed || !x->rps || !x->nic->queues[u->qi].has_rps)
                return false;
        q = pol_queue_get(t->st, x->nic->name, u->queue, false);
        return !(q && (q->rps_external || q->rps_broken));
}

/* The protocol part of the queue's work: what RPS can steer away. */
static double proto_work(const struct pol_unit *u) {
        return (1 - POL_NAPI_SHARE) * u->total;
}

/* Share of this queue's protocol work on cpu now. */
static double cur_share(const struct pol_unit *u, int cpu) {
        if (!u->rps_on)
                return cpu == u->target ? proto_work(u) : 0;
        return cpuset_isset(&u->rps, cpu) ? proto_work(u) / cpuset_count(&u->rps) : 0;
}

/* Load of cpu without this queue's protocol work. */
static double ex_load(const struct pol_tick *t, const struct pol_unit *u, int cpu) {
        return MAX(pol_load(t, cpu) - cur_share(u, cpu), 0);
}

/* Sorts CPUs by their load without u's protocol work, coolest first. */
static void sort_cool(const struct pol_tick *t, const struct pol_unit *u, int *v, size_t n) {
        for (size_t i = 1; i < n; i++) {
                int x = v[i];
                size_t k = i;
                while (k > 0 && ex_load(t, u, v[k - 1]) > ex_load(t, u, x)) {
                        v[k] = v[k - 1];
                        k--;
                }
                v[k] = x;
        }
}

/* Adds to *set the fewest of the coolest CPUs of cand (at least one) with
 * which every RPS CPU ends below limit; all of them if no number is
 * enough. */
static void size_set(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *cand, double limit,
                     cpuset_t *set) {
        double p = proto_work(u);
        /* the IRQ CPU in the set counts too, when its own NAPI part and
         * other load leave room at all */
        bool check_own = ex_load(t, u, u->target) < limit;
        int *v;
        size_t n = 0, k;

        v = calloc(cpuset_count(cand) + 1, sizeof(int));
        if (!v)
                return;
        CPUSET_FOREACH(cpu, cand)
                v[n++] = cpu;
        sort_cool(t, u, v, n);
        for (k = 1; k <= n; k++) {
                int m = cpuset_count(set) + (int) k;
                bool fits = true;

                CPUSET_FOREACH(cpu, set)
                        if ((cpu != u->target || check_own) && ex_load(t, u, cpu) + p / m >= limit)
                                fits = false;
                for (size_t i = 0; i < k; i++)
                        if (ex_load(t, u, v[i]) + p / m >= limit)
                                fits = false;
                if (fits)
                        break;
        }
        for (size_t i = 0; i < MIN(k, n); i++)
                cpuset_set(set, v[i]);
        free(v);
}

/* Emits the RPS action and updates the projected loads. */
static void emit_rps(struct pol_tick *t, struct pol_unit *u, const cpuset_t *to, const char *reason) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        const struct inv_queue *iq = &x->nic->queues[u->qi];
        struct action *a;
        cpuset_t aff;
        double p = proto_work(u);
        int m = cpuset_count(to);

        a = pol_add_queue(t, ACTION_RPS, x->nic->name, u->queue);
        if (!a)
                return;
        a->cpus = *to;
        a->from = iq->rps_cpus;
        snprintf(a->reason, sizeof(a->reason), "%s", reason);

        /* project: the protocol work leaves the old CPUs for the new ones
         * (back on the IRQ CPU when RPS is cleared) */
        cpuset_or(&aff, to, &u->rps);
        cpuset_set(&aff, u->target);
        CPUSET_FOREACH(cpu, &aff) {
                double now = cur_share(u, cpu), after;
                if (m == 0 || (m == 1 && cpuset_isset(to, u->target)))
                        after = cpu == u->target ? p : 0;
                else
                        after = cpuset_isset(to, cpu) ? p / m : 0;
                if (cpu <= t->max_cpu)
                        t->load[cpu] = MAX(t->load[cpu] - now + after, 0);
                pol_settle(t, cpu);
        }
        u->rps = *to;
        u->rps_on = m > 0;
        u->touched = true;
}

bool pol_rps_start(struct pol_tick *t, struct pol_unit *u, int cpu, bool single_queue) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        const struct inv_queue *iq = &x->nic->queues[u->qi];
        cpuset_t cand, set, remote;
        bool exclude;
        char list[128], reason[256];

        if (!rps_allowed(t, u) || cpu < 0)
                return false;
        /* Kernel scaling guide: with a high interrupt rate, leave the
         * interrupting CPU out of the RPS map; with a low one including it
         * is fine.  Before the first interval the rate is unknown: include.
         * rps_exclude_irq_rate = 0 means never leave it out
         * (irqsteer.conf(5)). */
        exclude = t->in->load && t->c->rps_exclude_irq_rate > 0 && u->rate >= t->c->rps_exclude_irq_rate;
        cpuset_zero(&set);
        if (!exclude && cpuset_isset(&x->allowed, cpu))
                cpuset_set(&set, cpu);

        if (single_queue) {
                /* from the start, over every local eligible CPU */
                cpuset_or(&set, &set, &x->cpus);
                if (exclude && cpuset_count(&set) > 1)
                        cpuset_clear(&set, cpu);
                if (cpuset_empty(&set) || (cpuset_count(&set) == 1 && cpuset_isset(&set, cpu)))
                        return false;
                snprintf(reason, sizeof(reason), "single-queue NIC %s: RPS over CPUs %s%s", x->nic->name,
                         pol_fmt_cpus(&set, list, sizeof(list)),
                         exclude ? " (the IRQ CPU left out: high interrupt rate)" : "");
        } else {
                /* cool local CPUs; remote only when no local one is cool */
                cpuset_andnot(&cand, &x->cpus, &t->hot);
                cpuset_clear(&cand, cpu);
                if (cpuset_empty(&cand)) {
                        cpuset_andnot(&remote, &x->allowed, &x->cpus);
                        cpuset_andnot(&cand, &remote, &t->hot);
                        cpuset_clear(&cand, cpu);
                }
                CPUSET_FOREACH(c, &cand)
                        if (pol_settling(t, c))
                                cpuset_clear(&cand, c);
                if (cpuset_empty(&cand))
                        return false;
                size_set(t, u, &cand, t->c->hot_exit, &set);
                snprintf(reason, sizeof(reason), "lone hot queue: CPU%d at %.0f%%, IRQ %u is %.0f%% of its load; RPS over CPUs %s%s",
                         cpu, 100 * pol_load(t, cpu), u->irq[0],
                         pol_load(t, cpu) > 0 ? 100 * MIN(u->work / pol_load(t, cpu), 1) : 0,
                         pol_fmt_cpus(&set, list, sizeof(list)),
                         exclude ? " (the IRQ CPU left out: high interrupt rate)" : "");
        }
        if (single_queue) {
                struct pol_queue *q = pol_queue_get(t->st, x->nic->name, u->queue, true);
                if (!q) {
                        t->r = -ENOMEM;
                        return false;
                }
                q->rps_static = true;
        }
        if (cpuset_equal(&set, &iq->rps_cpus)) {
                u->rps_ours = true;
                return true;
        }
        emit_rps(t, u, &set, reason);
        u->rps_ours = true;
        pol_rfs(t, u);
        return true;
}

static void adjust(struct pol_tick *t, struct pol_unit *u) {
        const struct config *c = t->c;
        const struct pol_nicctx *x = &t->nics[u->nic];
        struct pol_queue *q = pol_queue_get(t->st, x->nic->name, u->queue, false);
        cpuset_t span, cand, set, remote, others;
        double p = proto_work(u), limit;
        bool hot, settling = false, fits = true;
        int cpu = u->target, m = cpuset_count(&u->rps);
        char list[128], reason[256];

        if (!q || q->rps_static || !rps_allowed(t, u))
                return;
        span = u->rps;
        cpuset_set(&span, cpu);
        hot = cpuset_intersects(&span, &t->hot);
        CPUSET_FOREACH(s, &span)
                settling |= pol_settling(t, s) || cpuset_isset(&t->touched, s);

        if (hot) {
                cpuset_t hs;
                char hl[128];

                q->narrow_ticks = 0;
                /* Widening helps only CPUs that carry the steered protocol
                 * work: the RPS CPUs, and the IRQ CPU when it is in the set.
                 * A hot IRQ CPU left out keeps only the NAPI part. */
                cpuset_and(&hs, &u->rps, &t->hot);
                if (cpuset_empty(&hs) || settling || t->now - q->rps_change_usec < c->min_dwell_usec)
                        return;
                /* widen: keep the IRQ CPU in or out as it is */
                cpuset_andnot(&cand, &x->cpus, &span);
                cpuset_andnot(&cand, &cand, &t->hot);
                if (cpuset_empty(&cand)) {
                        cpuset_andnot(&remote, &x->allowed, &x->cpus);
                        cpuset_andnot(&remote, &remote, &span);
                        cpuset_andnot(&cand, &remote, &t->hot);
                }
                CPUSET_FOREACH(s, &cand)
                        if (pol_settling(t, s))
                                cpuset_clear(&cand, s);
                if (cpuset_empty(&cand))
                        return;
                set = u->rps;
                size_set(t, u, &cand, c->hot_exit, &set);
                snprintf(reason, sizeof(reason), "RPS widened: %s%s still hot (queue work %.0f%%); RPS over CPUs %s",
                         cpuset_count(&hs) > 1 ? "CPUs " : "CPU", pol_fmt_cpus(&hs, hl, sizeof(hl)), 100 * u->total,
                         pol_fmt_cpus(&set, list, sizeof(list)));
                emit_rps(t, u, &set, reason);
                pol_rfs(t, u);
                return;
        }

        /* Narrow with hysteresis: only when the work fits on one CPU fewer
         * one hysteresis band below hot_exit, for hot_samples samples in a
         * row and after the dwell. */
        limit = MAX(c->hot_exit - (c->hot_enter - c->hot_exit), c->hot_exit / 2);
        others = u->rps;
        cpuset_clear(&others, cpu);
        if (cpuset_count(&others) <= 1) {
                /* back to what it was: all the work on the IRQ CPU */
                const struct pol_queue *qq = q;
                set = qq->rps_orig;
                fits = ex_load(t, u, cpu) + p < limit;
        } else {
                int drop = -1;
                CPUSET_FOREACH(s, &others)
                        if (drop < 0 || ex_load(t, u, s) >= ex_load(t, u, drop))
                                drop = s;
                set = u->rps;
                cpuset_clear(&set, drop);
                CPUSET_FOREACH(s, &set)
                        if (ex_load(t, u, s) + p / (m - 1) >= limit)
                                fits = false;
        }
        if (!fits) {
                q->narrow_ticks = 0;
                return;
        }
        if (++q->narrow_ticks < MAX(c->hot_samples, 1u) || settling || t->now - q->rps_change_usec < c->min_dwell_usec)
                return;
        q->narrow_ticks = 0;
        if (cpuset_equal(&set, &q->rps_orig))
                snprintf(reason, sizeof(reason), "RPS no longer needed: queue work %.0f%% fits on CPU%d below %.0f%%; RPS back to %s",
                         100 * u->total, cpu, 100 * limit,
                         cpuset_empty(&set) ? "none" : pol_fmt_cpus(&set, list, sizeof(list)));
        else
                snprintf(reason, sizeof(reason), "RPS narrowed: queue work %.0f%% fits on fewer CPUs below %.0f%%; RPS over CPUs %s",
                         100 * u->total, 100 * limit, pol_fmt_cpus(&set, list, sizeof(list)));
        emit_rps(t, u, &set, reason);
        u->rps_ours = !cpuset_equal(&set, &q->rps_orig);
}

void pol_rps_adjust(struct pol_tick *t) {
        if (!t->in->load)
                return;
        for (size_t i = 0; i < t->n_units; i++) {
                struct pol_unit *u = &t->units[i];
                if (u->rps_ours && !u->touched && u->target >= 0)
                        adjust(t, u);
        }
}

static uint32_t pow2_floor(uint32_t v) {
        uint32_t p = 1;

        if (v == 0)
                return 0;
        while (p <= v / 2)
                p <<= 1;
        return p;
}

/* RFS (kernel scaling guide): rps_sock_flow_entries once for the host, and
 * rps_flow_cnt = entries / rx queues per queue, both powers of two. */
void pol_rfs(struct pol_tick *t, const struct pol_unit *u) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        const struct inv_queue *iq = &x->nic->queues[u->qi];
        const struct pol_queue *q;
        uint32_t entries = pow2_floor(t->c->rps_sock_flow_entries), per;
        int n_rx = x->nic->rx_queues > 0 ? x->nic->rx_queues : (int) x->nic->n_queues;
        struct action *a;

        if (!x->rfs || entries == 0 || !iq->has_rps)
                return;
        if (!t->st->sock_flow_done) {
                t->st->sock_flow_done = true;
                if (t->inv->rps_sock_flow_entries != entries) {
                        a = pol_add(t, ACTION_SOCK_FLOW_ENTRIES);
                        if (!a)
                                return;
                        a->value = entries;
                        a->from_value = t->inv->rps_sock_flow_entries;
                        snprintf(a->reason, sizeof(a->reason), "RFS for %s rx-%d (scaling guide: %u entries)",
                                 x->nic->name, u->queue, entries);
                }
        }
        q = pol_queue_get(t->st, x->nic->name, u->queue, false);
        if (q && (q->flow_external || q->flow_broken))
                return;
        per = pow2_floor(entries / (uint32_t) MAX(n_rx, 1));
        if (per == 0 || iq->rps_flow_cnt == per)
                return;
        a = pol_add_queue(t, ACTION_RPS_FLOW_CNT, x->nic->name, u->queue);
        if (!a)
                return;
        a->value = per;
        a->from_value = iq->rps_flow_cnt;
        snprintf(a->reason, sizeof(a->reason), "RFS: %u flow entries / %d rx queues", entries, MAX(n_rx, 1));
}
