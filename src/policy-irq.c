/* Policy, queue IRQs: the initial layout, re-placing IRQs the kernel moved
 * off an unplugged CPU, rebalancing moves off hot CPUs, and XPS following
 * the rx IRQ (docs/DESIGN.md "Policy"). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "policy-steps.h"

/* Emits the affinity actions that put the IRQs `which` of unit u (bit j:
 * irq[j], unit_irqs) on cpu, pair together; IRQs already there get none
 * (no no-op actions).  False when the tick failed. */
static bool emit_unit(struct pol_tick *t, struct pol_unit *u, int cpu, unsigned which, bool layout,
                      enum action_reason code, const char *reason) {
        cpuset_t to = cpuset_single(cpu);

        for (int j = 0; j < u->n_irq; j++) {
                const struct inventory_irq *ii = inventory_irq(t->inv, u->irq[j]);
                struct pol_irq *r = pol_irq_get(t->st, u->irq[j], true);
                struct action *a;

                if (!(which & 1u << j))
                        continue;
                if (!r || !ii) {
                        t->r = -ENOMEM;
                        return false;
                }
                r->primary = j == 0;
                if (cpuset_kept_equal(&ii->affinity, &to)) {
                        /* already where we want it: ours from now on */
                        r->set = true;
                        if (cpuset_keep(&r->last_set, &to) < 0)
                                t->r = -ENOMEM;
                        continue;
                }
                a = pol_add(t, KNOB_IRQ);
                if (!a)
                        return false;
                pol_vector_move(t, ii, cpu);
                a->irq = u->irq[j];
                /* the rx IRQ's action names its pair, a tx IRQ moved alone none */
                a->pair_irq = u->n_irq == 2 && which & 1u ? u->irq[1 - j] : 0;
                snprintf(a->nic, sizeof(a->nic), "%s", t->nics[u->nic].nic->name);
                a->queue = u->queue;
                pol_set_cpus_kept(t, a, &to, &ii->affinity);
                a->layout = layout;
                action_set_reason(a, code, "%s", reason);
        }
        if (which & 1u)
                u->target = cpu;
        u->touched = true;
        return true;
}

/* The unit's IRQs (bit j: irq[j]) that a placement moves: all in a
 * layout, else all but a tx IRQ moved apart, which stays apart (its work
 * is not counted with the rx CPU's). */
static unsigned unit_irqs(const struct pol_unit *u, bool layout) {
        return u->n_irq == 2 && u->tx_apart && !layout ? 1u : (1u << u->n_irq) - 1;
}

/* Whether cpu takes the IRQs `which` of u by the counts v: none was
 * refused there (ENOSPC), and it has a free vector for each that is not
 * counted there already. */
static bool unit_fits(const struct pol_tick *t, const struct vectors *v, const struct pol_unit *u, int cpu,
                      unsigned which) {
        unsigned need = 0;

        for (int j = 0; j < u->n_irq; j++) {
                const struct pol_irq *r = pol_irq_get(t->st, u->irq[j], false);
                const struct inventory_irq *ii = inventory_irq(t->inv, u->irq[j]);

                if (!(which & 1u << j))
                        continue;
                if (r && cpuset_kept_isset(&r->enospc, cpu))
                        return false;
                need += !ii || vectors_irq_cpu(ii) != cpu;
        }
        return vectors_left(v, cpu) >= need;
}

/* u stays where it is for want of a vector on cand: noted per IRQ. */
static void unit_no_vector(struct pol_tick *t, const struct pol_unit *u, const cpuset_t *cand) {
        for (int j = 0; j < u->n_irq; j++) {
                const struct inventory_irq *ii = inventory_irq(t->inv, u->irq[j]);
                if (ii)
                        pol_note_no_vector(t, ii, t->nics[u->nic].nic->name, u->queue, cand);
        }
}

/* All of the unit's IRQs are where we last set them. */
static bool unit_intact(const struct pol_tick *t, const struct pol_unit *u) {
        for (int j = 0; j < u->n_irq; j++) {
                const struct pol_irq *r = pol_irq_get(t->st, u->irq[j], false);
                const struct inventory_irq *ii = inventory_irq(t->inv, u->irq[j]);
                if (!r || !r->set || !ii || !cpuset_kept_same(&r->last_set, &ii->affinity))
                        return false;
        }
        return true;
}

static struct pol_cursor *cursor_get(struct policy_state *st, int node) {
        for (size_t i = 0; i < st->n_cursors; i++)
                if (st->cursors[i].node == node)
                        return &st->cursors[i];
        if (util_grow((void **) &st->cursors, &st->a_cursors, st->n_cursors + 1, sizeof(*st->cursors)) < 0)
                return NULL;
        st->cursors[st->n_cursors] = (struct pol_cursor){ .node = node };
        return &st->cursors[st->n_cursors++];
}

/* Physical cores before SMT siblings (smt_index 0 first), then by number. */
static size_t layout_order(const struct pol_tick *t, const cpuset_t *cpus, int *order) {
        size_t n = 0;

        CPUSET_FOREACH(cpu, cpus) {
                int key = t->topo->cpus[cpu].smt_index;
                size_t k = n++;
                while (k > 0 && t->topo->cpus[order[k - 1]].smt_index > key) {
                        order[k] = order[k - 1];
                        k--;
                }
                order[k] = cpu;
        }
        return n;
}

static void move_load(struct pol_tick *t, int from, int to, double w) {
        if (from >= 0 && from <= t->max_cpu) {
                t->load[from] = MAX(t->load[from] - w, 0);
                t->net[from] = MAX(t->net[from] - w, 0);
        }
        if (to >= 0 && to <= t->max_cpu) {
                t->load[to] += w;
                t->net[to] += w;
        }
}

/* Whether the layout may put a queue of NIC x on cpu: not one busy (hot,
 * at the exit level, or short of idle) without the NIC's own queues and
 * the other devices' IRQs this tick moves off it. */
static bool layout_free(const struct pol_tick *t, const struct pol_nicctx *x, int cpu) {
        double own = 0;

        if (!t->in->load || cpu > t->max_cpu)
                return true;
        for (size_t i = 0; i < x->n_units; i++) {
                const struct pol_unit *u = &t->units[x->first_unit + i];
                if (u->cpu == cpu && !u->fixed)
                        own += u->work;
        }
        if (own <= 0 && t->leaving[cpu] <= 0 && cpuset_isset(&t->hot, cpu))
                return false;
        own += t->leaving[cpu];
        return t->load[cpu] - own < pol_exit(t) && t->idle[cpu] + own >= t->c->saturated_idle;
}

/* From the NIC's start on in order (n CPUs), the free CPUs first, the busy
 * ones after, into rot; returns how many are free. */
static size_t layout_cands(const struct pol_tick *t, const struct pol_nicctx *x, const int *order, size_t n,
                           size_t start, int *rot) {
        size_t n_free = 0;

        for (size_t i = 0; i < n; i++)
                if (layout_free(t, x, order[(start + i) % n]))
                        rot[n_free++] = order[(start + i) % n];
        for (size_t i = 0, k = n_free; i < n; i++)
                if (!layout_free(t, x, order[(start + i) % n]))
                        rot[k++] = order[(start + i) % n];
        return n_free;
}

/* A layout placement of u on cpu. */
static void place_unit(struct pol_tick *t, struct pol_unit *u, int cpu, enum action_reason code, const char *reason) {
        /* the next samples mix the old placement with the new one */
        pol_settle(t, u->cpu);
        pol_settle(t, cpu);
        if (u->cpu != cpu)
                move_load(t, u->cpu, cpu, u->work);
        emit_unit(t, u, cpu, unit_irqs(u, true), true, code, reason);
}

/* A rebalancing move of u from CPU from to CPU to, both settling. */
static void move_unit(struct pol_tick *t, struct pol_unit *u, int from, int to, enum action_reason code,
                      const char *reason) {
        emit_unit(t, u, to, unit_irqs(u, false), false, code, reason);
        move_load(t, from, to, u->work);
        pol_settle(t, from);
        pol_settle(t, to);
        t->moves++;
}

/* The layout by load: the NIC's queues in `place` (indexes into its units),
 * heaviest first (the NIC's work split by interrupt rate), each to the CPU
 * of cand[0..n_cand) it leaves least loaded (other devices' IRQs leaving
 * it this tick not counted; ties within POL_LAYOUT_TIE to
 * the fewest queues, then cand's order), work off the NIC's node (x->cpus)
 * at POL_REMOTE_COST; cand[n_cand..n_all) only when no other has a vector.
 * ret_cpu[i]: place[i]'s CPU, -1 none.  Returns the most these queues put
 * on one CPU, and in *ret_now (may be NULL) now. */
static double lpt(struct pol_tick *t, const struct pol_nicctx *x, const size_t *place, size_t n_place, const int *cand,
                  size_t n_cand, size_t n_all, int *ret_cpu, double *ret_now) {
        /* bg, cur: max_cpu + 1 each; w: n_place */
        _cleanup_(freep) double *bg = calloc(2 * ((size_t) t->max_cpu + 1) + n_place + 1, sizeof(double));
        _cleanup_(freep) unsigned *cnt = calloc(t->max_cpu + 1, sizeof(unsigned));
        _cleanup_(freep) size_t *ord = calloc(n_place + 1, sizeof(size_t));
        double *cur, *w, work = 0, rate = 0, peak = 0;
        struct vectors vec;
        int r = vectors_copy(&vec, &t->vec); /* this layout's counts, as it goes */

        if (ret_now)
                *ret_now = 0;
        for (size_t i = 0; i < n_place; i++)
                ret_cpu[i] = -1;
        if (!bg || !cnt || !ord || r < 0) {
                t->r = -ENOMEM;
                goto out;
        }
        cur = bg + t->max_cpu + 1;
        w = cur + t->max_cpu + 1;
        for (size_t i = 0; i < n_all; i++)
                bg[cand[i]] = MAX(t->load[cand[i]] - t->leaving[cand[i]], 0);
        for (size_t i = 0; i < n_place; i++) {
                const struct pol_unit *u = &t->units[x->first_unit + place[i]];
                if (u->cpu >= 0 && u->cpu <= t->max_cpu)
                        bg[u->cpu] = MAX(bg[u->cpu] - u->work, 0);
                work += u->work;
                rate += u->rate;
        }
        for (size_t i = 0; i < n_place; i++) {
                const struct pol_unit *u = &t->units[x->first_unit + place[i]];
                size_t k = i;

                w[i] = rate > 0 ? work * u->rate / rate : u->work;
                if (u->cpu >= 0 && u->cpu <= t->max_cpu)
                        cur[u->cpu] += pol_work_cost(t, u, u->cpu, w[i]);
                /* heaviest first, queue order among equals */
                while (k > 0 && w[ord[k - 1]] < w[i]) {
                        ord[k] = ord[k - 1];
                        k--;
                }
                ord[k] = i;
        }
        for (int c = 0; c <= t->max_cpu && ret_now; c++)
                *ret_now = MAX(*ret_now, cur[c]);
        for (size_t k = 0; k < n_place; k++) {
                size_t i = ord[k];
                const struct pol_unit *u = &t->units[x->first_unit + place[i]];
                int best = -1;
                double wb = 0;

                for (size_t pass = 0; pass < 2 && best < 0; pass++)
                        for (size_t j = pass == 0 ? 0 : n_cand; j < (pass == 0 ? n_cand : n_all); j++) {
                                int c = cand[j];
                                double wc = pol_work_cost(t, u, c, w[i]);

                                if (!unit_fits(t, &vec, u, c, unit_irqs(u, true)))
                                        continue;
                                if (best < 0 || bg[c] + wc < bg[best] + wb - POL_LAYOUT_TIE ||
                                    (bg[c] + wc < bg[best] + wb + POL_LAYOUT_TIE && cnt[c] < cnt[best])) {
                                        best = c;
                                        wb = wc;
                                }
                        }
                if (best < 0)
                        continue;
                for (int j = 0; j < u->n_irq; j++) {
                        const struct inventory_irq *ii = inventory_irq(t->inv, u->irq[j]);
                        if (ii)
                                vectors_move(&vec, vectors_irq_cpu(ii), best);
                }
                ret_cpu[i] = best;
                bg[best] += wb;
                cnt[best]++;
                /* cur now holds what this layout gives each CPU */
                if (k == 0)
                        memset(cur, 0, (t->max_cpu + 1) * sizeof(double));
                cur[best] += wb;
                peak = MAX(peak, cur[best]);
        }
out:
        vectors_free(&vec);
        return peak;
}

/* The least gain of a layout that spills: min_gain at the host's scale,
 * at least POL_GAIN_LEAST, without balance_floor: the layout is judged
 * once, not every tick (docs/DESIGN.md "Initial layout"). */
static double spill_gain(const struct pol_tick *t) {
        return MAX(t->c->min_gain * t->scale, POL_GAIN_LEAST);
}

/* The layout by load (lpt) of place over rot, the n local candidates
 * (n_free of them free), into to[] (*ret_now: lpt's).  Locality judged by
 * what it costs (docs/DESIGN.md "Initial layout"): the layout over the
 * other nodes' allowed CPUs too, their work at POL_REMOTE_COST, replaces
 * the local one when its projected peak is lower by spill_gain().  Returns
 * the peak of the layout in to[]; *ret_spill whether it spills. */
static double layout_by_load(struct pol_tick *t, const struct pol_nicctx *x, const size_t *place, size_t n_place,
                             const int *rot, size_t n_free, size_t n, int *to, double *ret_now, bool *ret_spill) {
        double peak = lpt(t, x, place, n_place, rot, n_free > 0 ? n_free : n, n, to, ret_now), p;
        _cleanup_(freep) int *cand = NULL;
        _cleanup_(freep) int *alt = NULL;
        cpuset_t remote;
        size_t n_rem, n_rem_free;
        int *order, *rrot;

        *ret_spill = false;
        cpuset_andnot(&remote, &x->allowed, &x->cpus);
        if (cpuset_empty(&remote) || n_place == 0)
                return peak;
        /* cand: n + remote; order, rrot: max_cpu + 1 each */
        cand = calloc(3 * ((size_t) t->max_cpu + 1), sizeof(int));
        alt = calloc(n_place, sizeof(int));
        if (!cand || !alt) {
                t->r = -ENOMEM;
                return peak;
        }
        order = cand + t->max_cpu + 1;
        rrot = order + t->max_cpu + 1;
        n_rem = layout_order(t, &remote, order);
        n_rem_free = layout_cands(t, x, order, n_rem, 0, rrot);
        /* the free CPUs of both nodes first, the busy ones after */
        memcpy(cand, rot, n_free * sizeof(int));
        memcpy(cand + n_free, rrot, n_rem_free * sizeof(int));
        memcpy(cand + n_free + n_rem_free, rot + n_free, (n - n_free) * sizeof(int));
        memcpy(cand + n + n_rem_free, rrot + n_rem_free, (n_rem - n_rem_free) * sizeof(int));
        p = lpt(t, x, place, n_place, cand, n_free + n_rem_free > 0 ? n_free + n_rem_free : n + n_rem, n + n_rem,
                alt, NULL);
        if (t->r < 0 || p >= peak - spill_gain(t) + 1e-9)
                return peak;
        for (size_t i = 0; i < n_place; i++)
                if (alt[i] >= 0 && !cpuset_isset(&x->cpus, alt[i]))
                        *ret_spill = true;
        memcpy(to, alt, n_place * sizeof(int));
        return p;
}

/* Initial layout (docs/DESIGN.md "Policy"), wrapping over rot; with a
 * sample, by load (layout_by_load).  Placements move the projected load for the next NIC. */
static void layout_nic(struct pol_tick *t, struct pol_nicctx *x) {
        struct pol_cursor *cur = cursor_get(t->st, x->nic->node);
        /* order, rot: max_cpu + 1 each; to: lpt's CPU for each of place */
        _cleanup_(freep) int *order = calloc(2 * ((size_t) t->max_cpu + 1) + x->n_units + 1, sizeof(int));
        _cleanup_(freep) size_t *place = calloc(x->n_units + 1, sizeof(size_t));
        size_t n, n_free, n_place = 0, wrap;
        int *rot, *to;
        bool spill = false;
        char reason[256];

        if (!order || !place || !cur) {
                t->r = -ENOMEM;
                return;
        }
        rot = order + t->max_cpu + 1;
        to = rot + t->max_cpu + 1;
        n = layout_order(t, &x->cpus, order);
        if (n == 0) {
                if (!x->rec->noted_no_cpu) {
                        x->rec->noted_no_cpu = true;
                        pol_note(t, LOG_WARNING, "%s: no eligible CPU for its queue IRQs; leaving them", x->nic->name);
                }
                return;
        }
        if (!x->rec->start_known) {
                x->rec->start_known = true;
                x->rec->start = cur->pos;
                cur->pos = (int) ((cur->pos + x->n_units) % n);
        }
        n_free = layout_cands(t, x, order, n, (size_t) x->rec->start % n, rot);
        wrap = n_free > 0 ? n_free : n;
        x->rec->blind = !t->in->load;
        x->rec->blind_ticks = 0;
        if (t->in->load) {
                for (size_t i = 0; i < x->n_units; i++)
                        if (!t->units[x->first_unit + i].fixed && !unit_intact(t, &t->units[x->first_unit + i]))
                                place[n_place++] = i;
                layout_by_load(t, x, place, n_place, rot, n_free, n, to, NULL, &spill);
        }
        for (size_t i = 0, k = 0; i < x->n_units; i++) {
                struct pol_unit *u = &t->units[x->first_unit + i];
                int cpu = -1;

                if (t->in->load) {
                        /* by load: lpt's choice for the units in place */
                        if (k == n_place || place[k] != i)
                                continue;
                        cpu = to[k++];
                } else if (u->fixed || unit_intact(t, u)) {
                        /* a unit we cannot move, or still where we put it,
                         * keeps its slot: a re-layout gives the same picture */
                        continue;
                } else {
                        /* wrapping over the free CPUs, the busy ones only
                         * when every free one is full for this IRQ */
                        for (size_t s = 0; s < n && cpu < 0; s++) {
                                int c = s < wrap ? rot[(i + s) % wrap] : rot[s];

                                if (unit_fits(t, &t->vec, u, c, unit_irqs(u, true)))
                                        cpu = c;
                        }
                }
                if (cpu < 0) {
                        unit_no_vector(t, u, &x->cpus);
                        continue;
                }
                snprintf(reason, sizeof(reason), "initial layout%s: %s queue %d of %zu on CPU%d (%zu local eligible CPUs%s)",
                         t->in->load ? " by load" : "", x->nic->name, u->queue, x->n_units, cpu, n,
                         spill ? ", other nodes' CPUs too at their remote cost" : "");
                place_unit(t, u, cpu, ACTION_REASON_INITIAL_LAYOUT, reason);
        }
}

/* A start-up layout is looked at again with the first sample that sees the
 * NIC's interrupts, while it stands and has no RPS of ours: by load (lpt)
 * when that spreads the NIC's own work better by min_gain (other devices'
 * IRQs leave by themselves), else only queues on busy CPUs move. */
static void relayout(struct pol_tick *t, struct pol_nicctx *x) {
        _cleanup_(freep) int *order = NULL;
        _cleanup_(freep) size_t *place = NULL;
        size_t n, n_free, n_place = 0;
        int *rot, *to;
        double now = 0, peak = 0, rate = 0;
        bool on_busy = false, by_load, spill = false;
        char reason[256];

        x->rec->blind = false;
        if (!x->rec->start_known)
                return;
        for (size_t i = 0; i < x->n_units; i++) {
                const struct pol_unit *u = &t->units[x->first_unit + i];
                /* an offline or no longer allowed CPU is pol_replace_offline's */
                if (u->rps_ours || (!u->fixed && !unit_intact(t, u)) ||
                    (!u->fixed && (u->replace || u->cpu < 0 || !cpuset_isset(&x->cpus, u->cpu))))
                        return;
                rate += u->rate;
        }
        /* order, rot: max_cpu + 1 each; to: lpt's CPU for each of place */
        order = calloc(2 * ((size_t) t->max_cpu + 1) + x->n_units + 1, sizeof(int));
        place = calloc(x->n_units + 1, sizeof(size_t));
        if (!order || !place) {
                t->r = -ENOMEM;
                return;
        }
        rot = order + t->max_cpu + 1;
        to = rot + t->max_cpu + 1;
        n = layout_order(t, &x->cpus, order);
        if (n == 0)
                return;
        n_free = layout_cands(t, x, order, n, (size_t) x->rec->start % n, rot);
        for (size_t i = 0; i < x->n_units; i++)
                if (!t->units[x->first_unit + i].fixed) {
                        place[n_place++] = i;
                        on_busy |= !layout_free(t, x, t->units[x->first_unit + i].cpu);
                }
        if (rate > 0)
                peak = layout_by_load(t, x, place, n_place, rot, n_free, n, to, &now, &spill);
        by_load = rate > 0 && peak < now - (spill ? spill_gain(t) : pol_min_gain(t));
        if (!by_load && on_busy && n_free > 0) {
                /* only the queues on busy CPUs move, onto the free ones */
                n_place = 0;
                for (size_t i = 0; i < x->n_units; i++) {
                        const struct pol_unit *u = &t->units[x->first_unit + i];
                        if (!u->fixed && !layout_free(t, x, u->cpu))
                                place[n_place++] = i;
                }
                lpt(t, x, place, n_place, rot, n_free, n_free, to, NULL);
        } else if (!by_load) {
                /* nothing seen to place by yet: wait a few samples */
                if (rate <= 0 && ++x->rec->blind_ticks < POL_RELAYOUT_SAMPLES)
                        x->rec->blind = true;
                return;
        }
        for (size_t i = 0; i < n_place; i++) {
                struct pol_unit *u = &t->units[x->first_unit + place[i]];

                if (to[i] < 0 || to[i] == u->cpu)
                        continue;
                if (by_load)
                        snprintf(reason, sizeof(reason), "layout by load: %s queue %d on CPU%d (queue work %.0f%% -> %.0f%%%s)",
                                 x->nic->name, u->queue, to[i], 100 * now, 100 * peak,
                                 spill ? ", other nodes' CPUs too, their work at its remote cost" : "");
                else
                        snprintf(reason, sizeof(reason), "layout by load: %s queue %d off busy CPU%d onto CPU%d",
                                 x->nic->name, u->queue, u->cpu, to[i]);
                place_unit(t, u, to[i], ACTION_REASON_LAYOUT_BY_LOAD, reason);
        }
}

/* Every movable queue IRQ of the NIC is where we last set it. */
static bool nic_placed(const struct pol_tick *t, const struct pol_nicctx *x) {
        for (size_t i = 0; i < x->n_units; i++) {
                const struct pol_unit *u = &t->units[x->first_unit + i];
                if (!u->fixed && !unit_intact(t, u))
                        return false;
        }
        return true;
}

bool pol_layout_nic(struct pol_tick *t, size_t nic) {
        struct pol_nicctx *x = &t->nics[nic];

        if (x->managed && x->n_units > 0 && x->rec->laid_out && x->rec->blind && t->in->load && t->c->initial_layout) {
                relayout(t, x);
                return false;
        }
        if (!x->managed || x->n_units == 0 || x->rec->laid_out)
                return false;
        x->rec->n_queues = x->nic->n_queues;
        /* a failed write (feedback) clears laid_out again: the
         * same layout is then planned again, without no-op actions */
        x->rec->laid_out = true;
        if (t->c->initial_layout && !nic_placed(t, x))
                layout_nic(t, x);
        return true;
}

/* The coolest CPU of cand for the IRQs `which` of unit u with a vector
 * for each, not `not`; when cool, not settling and not hot unless every
 * candidate is (on a host where all are hot the least loaded still takes
 * work off the busiest, when that gains min_gain). */
static int coolest(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *cand, int not,
                   unsigned which, bool cool) {
        int best = -1;
        bool best_hot = true;

        CPUSET_FOREACH(cpu, cand) {
                bool hot = cool && cpuset_isset(&t->hot, cpu);

                if (cpu == not || (cool && pol_settling(t, cpu)) || !unit_fits(t, &t->vec, u, cpu, which))
                        continue;
                if (best < 0 || (best_hot && !hot) || (hot == best_hot && pol_demand(t, cpu) < pol_demand(t, best))) {
                        best = cpu;
                        best_hot = hot;
                }
        }
        return best;
}

/* Whether an IRQ of u fires on a CPU its NIC may not use: left at once,
 * dwell and the move cap notwithstanding. */
static bool unit_off_allowed(const struct pol_tick *t, const struct pol_unit *u) {
        const cpuset_t *allowed = &t->nics[u->nic].allowed;

        for (int j = 0; j < u->n_irq; j++) {
                const struct inventory_irq *ii = inventory_irq(t->inv, u->irq[j]);
                cpuset_t on;

                if (!ii)
                        continue;
                cpuset_kept_and(&on, &ii->affinity, &t->topo->online);
                if (!cpuset_empty(&on) && !cpuset_subset(&on, allowed))
                        return true;
        }
        return false;
}

void pol_replace_offline(struct pol_tick *t) {
        char reason[256];

        for (size_t i = 0; i < t->n_units; i++) {
                struct pol_unit *u = &t->units[i];
                struct pol_nicctx *x = &t->nics[u->nic];
                bool vacate;
                int cpu;

                if (u->fixed || u->touched)
                        continue;
                vacate = !u->replace && unit_off_allowed(t, u);
                if (!u->replace && !vacate)
                        continue;
                /* the coolest local CPU, hot or settling as it may be */
                cpu = coolest(t, u, &x->cpus, -1, unit_irqs(u, true), false);
                if (cpu < 0) {
                        unit_no_vector(t, u, &x->cpus);
                        continue;
                }
                if (vacate)
                        snprintf(reason, sizeof(reason), "CPU%d may no longer be used (banned or not eligible); moving to CPU%d",
                                 u->cpu, cpu);
                else
                        snprintf(reason, sizeof(reason), "CPU%d went offline and the kernel moved the IRQ; re-placing on CPU%d",
                                 u->offline_cpu, cpu);
                emit_unit(t, u, cpu, unit_irqs(u, true), true,
                          vacate ? ACTION_REASON_CPU_BANNED : ACTION_REASON_CPU_OFFLINE, reason);
                move_load(t, u->cpu, cpu, u->work);
        }
}

static bool dwell_ok(const struct pol_tick *t, const struct pol_unit *u) {
        for (int j = 0; j < u->n_irq; j++) {
                const struct pol_irq *r = pol_irq_get(t->st, u->irq[j], false);
                if (r && r->moved && t->now - r->last_move_usec < MAX(r->dwell_usec, t->c->min_dwell_usec))
                        return false;
        }
        return true;
}

int pol_unit_clear(struct pol_tick *t, struct pol_unit *u, const cpuset_t *cand, bool dry, const char *reason) {
        unsigned which = unit_irqs(u, false);
        int to;

        if (u->fixed || u->touched || u->cpu != u->target || !dwell_ok(t, u) || t->moves >= pol_move_cap(t))
                return -1;
        to = coolest(t, u, cand, u->cpu, which, true);
        if (to >= 0 && !dry)
                move_unit(t, u, u->cpu, to, ACTION_REASON_CPU_HOT, reason);
        return to;
}

struct move {
        struct pol_unit *u;
        int to;
        double peak;
};

/* Best target for work w of u (its IRQs `which`) off cpu among cand, by the
 * pair's projected peak, remote work at POL_REMOTE_COST.  Off a CPU that
 * drops packets the peak is of demands (pol_demand): w is a share of what
 * it served, and the target must have room for that share of its demand. */
static struct move try_move(const struct pol_tick *t, struct pol_unit *u, int cpu, const cpuset_t *cand, double w,
                            unsigned which) {
        struct move m = { .u = u, .to = coolest(t, u, cand, cpu, which, true), .peak = HUGE_VAL };

        if (m.to >= 0) {
                double k = pol_demand_factor(t, cpu);

                m.peak = MAX(pol_demand(t, cpu) - w * k, pol_demand(t, m.to) + pol_work_cost(t, u, m.to, w * k));
        }
        return m;
}

/* Whether the best local move m off cpu falls short, so that other nodes'
 * CPUs are weighed too (their work at its remote cost): none, one that
 * leaves a CPU hot, or one that does not gain min_gain. */
static bool local_short(const struct pol_tick *t, int cpu, const struct move *m) {
        return m->to < 0 || m->peak >= pol_enter(t) || pol_demand(t, cpu) - m->peak < pol_min_gain(t) - 1e-9;
}

/* Whether u's share can still be measured (policy-share.c): a CPU of its
 * RPS set no queue IRQ fires on (irqs) and no other NIC's queue steers to. */
static bool share_measurable(const struct pol_tick *t, const struct pol_unit *u, const cpuset_t *irqs) {
        cpuset_t seen;

        cpuset_andnot(&seen, u->rps, irqs);
        for (size_t i = 0; i < t->n_units && !cpuset_empty(&seen); i++)
                if (t->units[i].nic != u->nic && t->units[i].rps_on)
                        cpuset_andnot(&seen, &seen, t->units[i].rps);
        return !cpuset_empty(&seen);
}

/* A tx IRQ apart (docs/DESIGN.md "Policy"), by try_move: the one whose
 * move lowers the peak most, by min_gain.  Returns whether it moved one. */
static bool tx_apart(struct pol_tick *t, int cpu, char *why) {
        double busy = pol_busy(t, cpu);
        struct pol_unit *bu = NULL;
        int bto = -1;
        double bpeak = HUGE_VAL; /* demands may pass 2 (pol_demand) */
        cpuset_t used, irqs;
        char reason[256];

        /* the CPUs queue IRQs fire on, and those or RPS steers to */
        cpuset_zero(&irqs);
        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *v = &t->units[i];
                for (int k = 0; k < v->n_irq; k++)
                        if (v->irq_cpu[k] >= 0)
                                cpuset_set(&irqs, v->irq_cpu[k]);
                if (v->target >= 0)
                        cpuset_set(&irqs, v->target);
        }
        used = irqs;
        for (size_t i = 0; i < t->n_units; i++)
                if (t->units[i].rps_on)
                        cpuset_or(&used, &used, t->units[i].rps);
        for (size_t i = 0; i < t->n_units; i++) {
                struct pol_unit *u = &t->units[i];
                struct pol_nicctx *x = &t->nics[u->nic];
                cpuset_t local, remote;
                struct move m;

                if (u->n_irq != 2 || u->irq_cpu[1] != cpu || u->tx_apart || u->target != cpu || u->tx < busy ||
                    u->fixed || u->touched || !dwell_ok(t, u))
                        continue;
                /* while the share is still to be measured (policy-share.c:
                 * not on a saturated CPU, over RPS CPUs without queue IRQs
                 * where its NIC alone steers), only onto a CPU no queue IRQ
                 * or RPS set uses: on an RPS CPU it would read as steered
                 * work */
                local = x->cpus;
                cpuset_andnot(&remote, &x->allowed, &x->cpus);
                if (u->rps_on && !pol_share_measured(t, u, POL_SHARE_NOTE_AFTER) &&
                    pol_load(t, cpu) < POL_SHARE_SATURATED && share_measurable(t, u, &irqs)) {
                        cpuset_andnot(&local, &local, &used);
                        cpuset_andnot(&remote, &remote, &used);
                }
                /* the tx IRQ alone: bit 1 (unit_irqs) */
                m = try_move(t, u, cpu, &local, u->tx, 2u);
                if (local_short(t, cpu, &m) && !cpuset_empty(&remote)) {
                        struct move r = try_move(t, u, cpu, &remote, u->tx, 2u);
                        if (r.to >= 0 && r.peak < m.peak - 1e-9)
                                m = r;
                }
                if (m.to >= 0 && m.peak < bpeak - 1e-9) {
                        bu = u;
                        bto = m.to;
                        bpeak = m.peak;
                }
        }
        if (!bu)
                return false;
        if (pol_demand(t, cpu) - bpeak < pol_gain_need(t, cpu, bto) - 1e-9) {
                if (!t->st->cpus[cpu].gain_short)
                        t->st->cpus[cpu].gain_short = t->now;
                return false;
        }
        snprintf(reason, sizeof(reason),
                 "CPU%d softirq+irq %.0f%%, no queue move gains min_gain: %s tx-%d IRQ apart from its rx IRQ; "
                 "projected peak %.0f%% -> %.0f%%", cpu, 100 * t->load[cpu], t->nics[bu->nic].nic->name, bu->queue,
                 100 * pol_demand(t, cpu), 100 * bpeak);
        if (!emit_unit(t, bu, bto, 2u, false,
                       t->st->cpus[cpu].saturated ? ACTION_REASON_CPU_SATURATED : ACTION_REASON_CPU_HOT, reason))
                return true;
        move_load(t, cpu, bto, bu->tx);
        pol_settle(t, cpu);
        pol_settle(t, bto);
        t->moves++;
        why[0] = 0;
        return true;
}

/* A saturated CPU's only busy queue, one that spreads with RPS already or
 * may not, to the local CPU it leaves the most idle on (docs/DESIGN.md
 * "Rebalance": user load differs by CPU, so its work may fit beside
 * another's), where that is the move's least gain more than the CPU has
 * and than half saturated_idle; a CPU of its RPS set leaves the set,
 * giving back only a measured share (the prior is no measure of a queue
 * whose work is mostly its own interrupt work).  Returns whether it moved. */
static bool room_move(struct pol_tick *t, int cpu, struct pol_unit *u) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        double k = pol_demand_factor(t, cpu), best_left = -HUGE_VAL;
        int best = -1;
        char reason[256];

        /* saturated as the hot rule has it, or short of saturated_idle by
         * the queue alone: a CPU that its user load keeps short without the
         * queue is short of room for that load, not for the queue */
        if (t->idle[cpu] >= t->c->saturated_idle ||
            (t->load[cpu] < t->c->saturated_share && t->idle[cpu] + u->work * k < t->c->saturated_idle) ||
            u->fixed || u->touched || !dwell_ok(t, u) || t->moves >= pol_move_cap(t))
                return false;
        CPUSET_FOREACH(to, &x->cpus) {
                bool in_set = u->rps_ours && u->rps_on && cpuset_isset(u->rps, to);
                double w = pol_work_cost(t, u, to, u->work * k), share = in_set ? pol_rps_share(u, to) : 0,
                       left = t->idle[to] - w + share, spread = 0;

                if (to == cpu || pol_settling(t, to) || !unit_fits(t, &t->vec, u, to, unit_irqs(u, false)) ||
                    (in_set && (u->n_rps < 3 || !pol_share_measured(t, u, POL_SHARE_NOTE_AFTER))))
                        continue;
                if (in_set)
                        spread = share / (u->n_rps - 1) + pol_rps_flow(t, u);
                if (left < MAX(t->idle[cpu], t->c->saturated_idle / 2) + pol_gain_need(t, cpu, to) ||
                    pol_demand(t, to) - share + w > pol_demand(t, cpu) + POL_LAYOUT_TIE)
                        continue;
                /* the set's other CPUs take its share: none ends saturated */
                if (in_set) {
                        bool room = true;
                        CPUSET_FOREACH(c, u->rps)
                                room &= c == to || (t->idle[c] - spread >= t->c->saturated_idle &&
                                                    pol_demand(t, c) + spread <= pol_demand(t, cpu) + POL_LAYOUT_TIE);
                        if (!room)
                                continue;
                }
                if (left > best_left) {
                        best_left = left;
                        best = to;
                }
        }
        if (best < 0)
                return false;
        snprintf(reason, sizeof(reason),
                 "CPU%d saturated (softirq+irq %.0f%%, idle %.0f%%), its only busy queue fits beside CPU%d's other "
                 "work: idle there %.0f%% -> %.0f%%",
                 cpu, 100 * t->load[cpu], 100 * t->idle[cpu], best, 100 * t->idle[best], 100 * best_left);
        if (u->rps_ours && u->rps_on && cpuset_isset(u->rps, best))
                pol_rps_irq_joins(t, u, best);
        move_unit(t, u, cpu, best, ACTION_REASON_CPU_SATURATED, reason);
        return true;
}

static void rebalance_cpu(struct pol_tick *t, int cpu) {
        const struct config *c = t->c;
        struct pol_unit *top = NULL, *spread = NULL;
        struct move best = { .peak = HUGE_VAL }, near = { .peak = HUGE_VAL };
        double busy = pol_busy(t, cpu);
        unsigned nb = 0, n_dwell = 0, n_fixed = 0;
        bool blocked;            /* a move may help once a dwell or the cap allows it */
        char reason[256], *why = t->st->cpus[cpu].why;
        size_t why_len = sizeof(t->st->cpus[cpu].why);

        for (size_t i = 0; i < t->n_units; i++) {
                struct pol_unit *u = &t->units[i];
                if (u->target != cpu || u->work < busy)
                        continue;
                nb++;
                if (!top || u->work > top->work)
                        top = u;
                if (!u->rps_ours && !u->touched && (!spread || u->work > spread->work))
                        spread = u;
        }
        if (nb == 0) {
                snprintf(why, why_len, "no busy queue IRQ of a managed NIC fires on it: its load is other work");
                return;
        }
        /* Once its busiest queue spreads with RPS, what it leaves here is
         * its own interrupt work, which no placement divides: every other
         * queue on the CPU is then worth a move from pol_busy_abs(). */
        if (top->rps_ours && busy > pol_busy_abs(t)) {
                busy = pol_busy_abs(t);
                nb = 0;
                for (size_t i = 0; i < t->n_units; i++)
                        nb += t->units[i].target == cpu && t->units[i].work >= busy;
        }

        /* Never move a CPU's only busy queue: that only moves the hot spot
         * (irqbalance's rule, and its blind spot: the lone hot queue below),
         * but off a saturated CPU to one with room (room_move), or from a
         * bigger flow another queue's RPS hashed here, which stays. */
        if (nb == 1 && pol_rps_flow_on(t, cpu) > top->work)
                nb = 2;
        blocked = nb >= 2 && t->moves >= pol_move_cap(t);
        if (nb >= 2 && !blocked) {
                for (size_t i = 0; i < t->n_units; i++) {
                        struct pol_unit *u = &t->units[i];
                        struct pol_nicctx *x = &t->nics[u->nic];
                        cpuset_t remote;
                        struct move m;

                        if (u->target != cpu || u->work < busy)
                                continue;
                        if (u->fixed || u->touched) {
                                n_fixed++;
                                continue;
                        }
                        if (!dwell_ok(t, u)) {
                                blocked = true;
                                n_dwell++;
                                continue;
                        }
                        /* the local node while a local move gains
                         * min_gain and leaves no CPU hot, past that
                         * whichever ends lower (try_move) */
                        m = try_move(t, u, cpu, &x->cpus, u->work, unit_irqs(u, false));
                        if (m.to >= 0 && m.peak < near.peak)
                                near = m;
                        cpuset_andnot(&remote, &x->allowed, &x->cpus);
                        if (local_short(t, cpu, &m) && !cpuset_empty(&remote)) {
                                struct move r = try_move(t, u, cpu, &remote, u->work, unit_irqs(u, false));
                                if (r.to >= 0 && r.peak < m.peak - 1e-9)
                                        m = r;
                        }
                        /* equal peaks: move the smaller queue, it disturbs less traffic */
                        if (m.to >= 0 && (m.peak < best.peak - 1e-9 ||
                                          (m.peak < best.peak + 1e-9 && best.u && u->work < best.u->work)))
                                best = m;
                }
        }
        /* a small epsilon so that a gain of exactly min_gain counts */
        if (best.u && pol_demand(t, cpu) - best.peak >= pol_gain_need(t, cpu, best.to) - 1e-9) {
                struct pol_cpu *pc = &t->st->cpus[cpu];

                if (pc->saturated)
                        snprintf(reason, sizeof(reason),
                                 "CPU%d saturated (softirq+irq %.0f%%, idle %.0f%%) for %u samples; projected peak %.0f%% -> %.0f%%",
                                 cpu, 100 * t->load[cpu], 100 * t->idle[cpu], c->hot_samples, 100 * pol_demand(t, cpu),
                                 100 * best.peak);
                else
                        snprintf(reason, sizeof(reason),
                                 "CPU%d softirq+irq %.0f%% for %u samples; projected peak %.0f%% -> %.0f%%", cpu,
                                 100 * t->load[cpu], c->hot_samples, 100 * pol_demand(t, cpu), 100 * best.peak);
                move_unit(t, best.u, cpu, best.to, pc->saturated ? ACTION_REASON_CPU_SATURATED : ACTION_REASON_CPU_HOT,
                          reason);
                return;
        }
        /* RPS first: it spreads the work, the move only finds it room */
        if (nb == 1 && (top->rps_ours || !pol_rps_allowed(t, top)) && room_move(t, cpu, top))
                return;
        /* why no move, for plan and status (the last cause found wins) */
        if (nb == 1)
                snprintf(why, why_len, "its only busy queue is not moved (that only moves the hot spot)");
        else if (t->moves >= pol_move_cap(t))
                snprintf(why, why_len, "max_moves (%u) reached this tick", pol_move_cap(t));
        else if (n_dwell > 0 && !best.u)
                snprintf(why, why_len, "its busy queues moved less than their dwell ago (min_dwell %.0f s)",
                         (double) c->min_dwell_usec / 1e6);
        else if (best.u || near.u) {
                const struct move *m = best.u && best.peak <= near.peak ? &best : &near;

                if (!blocked && !t->st->cpus[cpu].gain_short)
                        t->st->cpus[cpu].gain_short = t->now;

                snprintf(why, why_len,
                         "no move gains min_gain (%.0f%%): the best, IRQ of %s queue %d to CPU%d, lowers the peak "
                         "%.0f%% -> %.0f%%",
                         100 * pol_min_gain(t), t->nics[m->u->nic].nic->name, m->u->queue, m->to,
                         100 * pol_demand(t, cpu), 100 * m->peak);
        } else if (n_fixed == nb)
                snprintf(why, why_len, "its busy queues are pinned by configuration or already moved this tick");
        else
                snprintf(why, why_len, "no eligible CPU has room for one of its queues");
        /* no move gains min_gain: the busiest queue not yet spreading
         * gets RPS if that does (rps_start) */
        if (spread && !blocked) {
                /* planned with the others after the moves (pol_rebalance) */
                t->lone[t->n_lone] = spread;
                t->lone_cpu[t->n_lone++] = cpu;
                return;
        }
        /* every busy queue spreads already */
        if (!blocked && t->moves < pol_move_cap(t) && tx_apart(t, cpu, why))
                return;
        if (top && top->rps_ours)
                snprintf(why, why_len, "its busiest queue (%s rx-%d) already spreads with RPS%s",
                         t->nics[top->nic].nic->name, top->queue,
                         nb > 1 ? "; no move of another queue gains min_gain" : "");
}

void pol_rebalance(struct pol_tick *t) {
        int order[POL_HOT_ORDER_MAX];
        size_t n = pol_hot_by_load(t, order, ELEMENTSOF(order));

        t->n_lone = 0;
        t->lone = calloc(n + 1, sizeof(*t->lone));
        t->lone_cpu = calloc(n + 1, sizeof(*t->lone_cpu));
        if (!t->lone || !t->lone_cpu) {
                t->r = -ENOMEM;
                return;
        }
        for (size_t i = 0; i < n; i++) {
                char *why = t->st->cpus[order[i]].why;

                why[0] = 0;
                if (cpuset_isset(&t->touched, order[i]))
                        continue;
                if (pol_settling(t, order[i])) {
                        snprintf(why, sizeof(t->st->cpus[order[i]].why),
                                 "settling: a recent change on it has not shown in the smoothed load yet");
                        continue;
                }
                rebalance_cpu(t, order[i]);
        }
}

/* ---- the steady re-layout (docs/DESIGN.md "Steady re-layout") ---- */

/* A queue a plan may move, where it fires and where the plan puts it. */
struct plan_item {
        struct pol_unit *u;
        int from, to;
};

/* Whether a plan may move u: a queue of a laid-out NIC where we set it,
 * on the NIC's local CPUs, without RPS, past its dwell, untouched this
 * tick. */
static bool plan_movable(const struct pol_tick *t, const struct pol_unit *u) {
        const struct pol_nicctx *x = &t->nics[u->nic];

        return x->managed && x->rec->laid_out && !x->rec->blind && !u->fixed && !u->touched && !u->rps_on &&
               !u->replace && u->work > 0 && u->cpu >= 0 && u->cpu <= t->max_cpu && u->cpu == u->target &&
               cpuset_isset(&x->cpus, u->cpu) && unit_intact(t, u) && dwell_ok(t, u);
}

/* The highest of fin over the eligible CPUs. */
static double plan_peak(const struct pol_tick *t, const double *fin) {
        double peak = 0;

        CPUSET_FOREACH(cpu, &t->eligible)
                if (cpu <= t->max_cpu)
                        peak = MAX(peak, fin[cpu]);
        return peak;
}

/* The plan (docs/DESIGN.md "Steady re-layout"): a move at a time, the
 * queue off the CPU then busiest whose move to a CPU the NIC may use
 * leaves the two lowest (off its node at the remote cost, onto a CPU it
 * leaves no busier than its source), each queue once, while the peak
 * falls; then, last first, the moves the peak does not need undone.
 * fin: each CPU's projected load (max_cpu + 1); order: n slots.  Returns
 * the projected peak of the eligible CPUs. */
static double plan_moves(struct pol_tick *t, struct plan_item *it, size_t n, double *fin, size_t *order) {
        struct vectors vec;
        size_t n_moves = 0;
        double peak;

        if (vectors_copy(&vec, &t->vec) < 0) {
                t->r = -ENOMEM;
                return HUGE_VAL;
        }
        for (int c = 0; c <= t->max_cpu; c++)
                fin[c] = t->load[c];
        while (n_moves < n) {
                int p = -1, to = -1;
                size_t bi = n;
                double bv = HUGE_VAL, bt = HUGE_VAL;

                CPUSET_FOREACH(c, &t->eligible)
                        if (c <= t->max_cpu && (p < 0 || fin[c] > fin[p]))
                                p = c;
                for (size_t i = 0; p >= 0 && i < n; i++) {
                        const struct pol_unit *u = it[i].u;

                        if (it[i].from != p || it[i].to != p)
                                continue;
                        CPUSET_FOREACH(c, &t->nics[u->nic].allowed) {
                                double v, w;

                                if (c > t->max_cpu)
                                        break;
                                w = pol_work_cost(t, u, c, u->work);
                                /* off the node only in pieces that leave
                                 * the target no busier than the source */
                                if (w > u->work && fin[c] + w > fin[p] - u->work + 1e-9)
                                        continue;
                                v = MAX(fin[p] - u->work, fin[c] + w);
                                /* at an equal peak the target left lowest,
                                 * lest the first CPU take each move until it
                                 * is the busiest, with nothing of its own
                                 * to give */
                                if (c == p || v > bv + 1e-9 || (v > bv - 1e-9 && fin[c] + w >= bt - 1e-9))
                                        continue;
                                /* the vector count last: it looks records up */
                                if (unit_fits(t, &vec, u, c, unit_irqs(u, false))) {
                                        bv = v;
                                        bt = fin[c] + w;
                                        bi = i;
                                        to = c;
                                }
                        }
                }
                if (bi == n || bv >= fin[p] - 1e-9)
                        break;
                for (int j = 0; j < it[bi].u->n_irq; j++) {
                        const struct inventory_irq *ii = inventory_irq(t->inv, it[bi].u->irq[j]);
                        if (ii && (unit_irqs(it[bi].u, false) & 1u << j))
                                vectors_move(&vec, vectors_irq_cpu(ii), to);
                }
                fin[p] -= it[bi].u->work;
                fin[to] += pol_work_cost(t, it[bi].u, to, it[bi].u->work);
                it[bi].to = to;
                order[n_moves++] = bi;
        }
        peak = plan_peak(t, fin);
        while (n_moves-- > 0) {
                struct plan_item *m = &it[order[n_moves]];
                double w = m->u->work;

                if (fin[m->from] + w > peak + 1e-9)
                        continue;
                fin[m->to] -= pol_work_cost(t, m->u, m->to, w);
                fin[m->from] += w;
                m->to = m->from;
        }
        vectors_free(&vec);
        return plan_peak(t, fin);
}

/* The projected peak of the plan's moves with each moved queue carrying
 * its share of its source CPU's load not counted as network work (the
 * softirq time of runs that are not NET_RX/NET_TX, by the share of runs:
 * docs/DESIGN.md "Steady re-layout").  plan_moves() leaves that load on
 * the source; where it is the queue's own work undercounted, it goes
 * with the queue, and a plan that gains only by what it leaves behind
 * swaps a layout for its image.  fin: max_cpu + 1 slots. */
static double plan_peak_whole(const struct pol_tick *t, const struct plan_item *it, size_t n, double *fin) {
        for (int c = 0; c <= t->max_cpu; c++)
                fin[c] = t->load[c];
        for (size_t i = 0; i < n; i++) {
                const struct pol_unit *u = it[i].u;
                double w;

                if (it[i].to == it[i].from)
                        continue;
                w = MIN(u->work * pol_whole_factor(t, it[i].from), fin[it[i].from]);
                fin[it[i].from] -= w;
                fin[it[i].to] += pol_work_cost(t, u, it[i].to, w);
        }
        return plan_peak(t, fin);
}

/* Once the loads are steady (every eligible CPU's noise known, none hot
 * or settling, nothing else done this tick), the queues that may move are
 * laid out again together (plan_moves), the plan taken whole when it lowers
 * the peak by the plan's least gain on hot_samples decisions in a row, at
 * most once a min_dwell (docs/DESIGN.md "Steady re-layout"). */
void pol_replan(struct pol_tick *t) {
        struct policy_state *st = t->st;
        _cleanup_(freep) struct plan_item *it = NULL;
        _cleanup_(freep) double *fin = NULL;
        _cleanup_(freep) size_t *order = NULL;
        cpuset_t busy;
        double now = 0, peak;
        size_t n = 0, n_moved = 0;
        char reason[256];

        cpuset_or(&busy, &t->hot, &t->settling);
        cpuset_and(&busy, &busy, &t->eligible);
        if (!t->c->initial_layout || !t->in->load || !cpuset_empty(&t->touched) || !cpuset_empty(&busy) ||
            (st->plan_usec > 0 && t->now - st->plan_usec < t->c->min_dwell_usec)) {
                st->plan_above = 0;
                return;
        }
        CPUSET_FOREACH(cpu, &t->eligible)
                if (cpu <= t->max_cpu)
                        now = MAX(now, t->load[cpu]);
        /* no layout's peak is below the mean (work off its node costs more) */
        if (now - t->mean < POL_PLAN_LEAST - 1e-9) {
                st->plan_above = 0;
                return;
        }
        it = calloc(t->n_units + 1, sizeof(*it));
        fin = calloc((size_t) t->max_cpu + 1, sizeof(*fin));
        order = calloc(t->n_units + 1, sizeof(*order));
        if (!it || !fin || !order) {
                t->r = -ENOMEM;
                return;
        }
        for (size_t i = 0; i < t->n_units; i++)
                if (plan_movable(t, &t->units[i]))
                        it[n++] = (struct plan_item) { .u = &t->units[i], .from = t->units[i].cpu, .to = t->units[i].cpu };
        peak = n > 0 ? plan_moves(t, it, n, fin, order) : now;
        if (t->r < 0)
                return;
        /* the gain must hold whether the load not counted as network
         * work stays on the source or goes with its queues */
        if (n > 0)
                peak = MAX(peak, plan_peak_whole(t, it, n, fin));
        /* until the noise is known, a plan that may gain then is looked at
         * again soon (the calm pace decides every 30th tick) */
        if (!t->noise_known || now - peak < pol_plan_gain(t) - 1e-9) {
                st->plan_above = 0;
                t->plan_pending = !t->noise_known && now - peak >= POL_PLAN_LEAST - 1e-9;
                return;
        }
        if (++st->plan_above < MAX(t->c->hot_samples, 1u)) {
                t->plan_pending = true;
                return;
        }
        st->plan_above = 0;
        st->plan_usec = t->now;
        for (size_t i = 0; i < n; i++)
                n_moved += it[i].to != it[i].from;
        for (size_t i = 0; i < n; i++) {
                struct pol_unit *u = it[i].u;

                if (it[i].to == it[i].from)
                        continue;
                snprintf(reason, sizeof(reason),
                         "steady re-layout: %s queue %d CPU%d -> CPU%d, one of %zu moves; projected peak %.1f%% -> "
                         "%.1f%% (least gain %.1f%%)",
                         t->nics[u->nic].nic->name, u->queue, it[i].from, it[i].to, n_moved, 100 * now, 100 * peak,
                         100 * pol_plan_gain(t));
                move_unit(t, u, it[i].from, it[i].to, ACTION_REASON_LAYOUT_BY_LOAD, reason);
        }
}

/* XPS (docs/DESIGN.md "The problem"): transmit queue i on the CPU of rx queue i's IRQ, so
 * completions and transmits stay on one cache; follows the IRQ's moves. */
void pol_xps(struct pol_tick *t) {
        for (size_t i = 0; i < t->n_units; i++) {
                struct pol_unit *u = &t->units[i];
                struct pol_nicctx *x = &t->nics[u->nic];
                const struct inventory_queue *iq = &x->nic->queues[u->qi];
                const struct pol_queue *q;
                const struct pol_irq *r;
                cpuset_t to;
                struct action *a;

                if (!x->managed || !x->xps || !iq->has_xps || !iq->has_tx || u->target < 0 ||
                    !cpuset_isset(&t->eligible, u->target))
                        continue;
                q = pol_queue_get(t->st, x->nic->name, u->queue, false);
                if (q && (q->xps_external || q->xps_broken))
                        continue;
                /* only queues whose IRQ we placed (or the kernel manages) */
                r = pol_irq_get(t->st, u->irq[0], false);
                if (!u->touched && !(r && (r->set || r->managed)))
                        continue;
                /* no 1 KB set built and compared per queue: this runs for
                 * every queue on every tick */
                if (cpuset_kept_only(&iq->xps_cpus) == u->target)
                        continue;
                to = cpuset_single(u->target);
                a = pol_add_queue(t, KNOB_XPS, x->nic->name, u->queue);
                if (!a)
                        return;
                pol_set_cpus_kept(t, a, &to, &iq->xps_cpus);
                /* irq[0] is the receive IRQ, unless the queue has only a
                 * transmit one (tg3's tx-0, gve's transmit blocks) */
                action_set_reason(a, ACTION_REASON_XPS_FOLLOWS_RX, "XPS follows %s IRQ %u on CPU%d",
                                  iq->rx_irq == (int) u->irq[0] ? "rx" : "tx", u->irq[0], u->target);
        }
}
