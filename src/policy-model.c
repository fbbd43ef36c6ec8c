/* Policy model: this tick's view of the host (policy-model.h).  Calls only
 * the records below it. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <syslog.h>

#include "policy-model.h"

const char *pol_fmt_cpus(const cpuset_t *s, char *buf, size_t len) {
        return cpuset_to_text(s, "", buf, len);
}

static const char *pol_fmt_kept(const cpuset_kept_t *k, char *buf, size_t len) {
        cpuset_t s = cpuset_kept_get(k);

        return pol_fmt_cpus(&s, buf, len);
}

static void note_append(struct policy_note **v, size_t *n, size_t *a, int level, const char *fmt, va_list ap,
                        bool *oom) {
        struct policy_note *no;

        if (util_grow((void **) v, a, *n + 1, sizeof(**v)) < 0) {
                *oom = true;
                return;
        }
        no = &(*v)[(*n)++];
        *no = (struct policy_note) { .level = level, .kind = POLICY_NOTE_PLAIN, .queue = -1 };
        util_mark_cut(no->text, sizeof(no->text), vsnprintf(no->text, sizeof(no->text), fmt, ap));
}

void pol_note_about(struct pol_tick *t, enum policy_note_kind kind, unsigned irq, const char *device,
                           int queue) {
        struct policy_note *no;

        if (t->r < 0 || t->rep->n_notes == 0)
                return;
        no = &t->rep->notes[t->rep->n_notes - 1];
        no->kind = kind;
        no->irq = irq;
        snprintf(no->device, sizeof(no->device), "%s", device ? device : "");
        no->queue = queue;
}

void pol_note(struct pol_tick *t, int level, const char *fmt, ...) {
        /* the report keeps no capacity: grow from its length each time */
        size_t allocated = t->rep->n_notes;
        bool oom = false;
        va_list ap;

        va_start(ap, fmt);
        note_append(&t->rep->notes, &t->rep->n_notes, &allocated, level, fmt, ap, &oom);
        va_end(ap);
        if (oom)
                t->r = -ENOMEM;
}

int pol_vector_pick(const struct pol_tick *t, const struct inventory_irq *ii, const cpuset_t *mask) {
        return vectors_pick(&t->vec, mask, vectors_irq_cpu(ii));
}

void pol_vector_move(struct pol_tick *t, const struct inventory_irq *ii, int to) {
        vectors_move(&t->vec, vectors_irq_cpu(ii), to);
}

void pol_note_no_vector(struct pol_tick *t, const struct inventory_irq *ii, const char *device, int queue,
                        const cpuset_t *cand) {
        struct pol_irq *r = pol_irq_get(t->st, ii->irq, true);
        char cpus[64];

        if (!r) {
                t->r = -ENOMEM;
                return;
        }
        /* in this tick's inventory: the record outlives the tick */
        r->seen = true;
        if (r->noted_no_vector)
                return;
        r->noted_no_vector = true;
        pol_note(t, LOG_NOTICE, "IRQ %u: no free interrupt vector on CPU%s, where it may go; left on CPU%d", ii->irq,
                 pol_fmt_cpus(cand, cpus, sizeof(cpus)), vectors_irq_cpu(ii));
        pol_note_about(t, POLICY_NOTE_NO_VECTOR, ii->irq, device, queue);
}

void pol_state_note(struct policy_state *st, int level, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        note_append(&st->notes, &st->n_notes, &st->a_notes, level, fmt, ap, &st->oom);
        va_end(ap);
}

/* An IRQ's rates, NULL when unknown or invalid this interval. */
static const struct sample_irq *rates_irq(const struct sample_rates *r, unsigned irq) {
        const struct sample_irq *si = sample_rates_irq(r, irq);

        return si && si->valid ? si : NULL;
}

static double irq_rate_on(const struct sample_rates *r, const struct sample_irq *si, int cpu) {
        double v = r ? sample_irq_on(si, r->max_cpu, cpu) : 0;

        return v > 0 ? v : 0;
}

void pol_irq_range(const struct sample_rates *r, const struct sample_irq *si, int n, int *lo, int *hi) {
        *lo = 0;
        *hi = -1;
        if (!si || !si->per_cpu)
                return;
        *hi = MIN(n - 1, r->max_cpu);
        if (si->nz_known) {
                *lo = MAX(si->nz_lo, 0);
                *hi = MIN(*hi, si->nz_hi);
        }
}

double pol_load(const struct pol_tick *t, int cpu) {
        if (cpu < 0 || cpu > t->max_cpu)
                return 0;
        return t->load[cpu];
}

/* A CPU that drops packets (softnet_stat) serves less than it is asked:
 * its load stops at 100%, its demand does not.  Only a move off it (the
 * work it takes, the target's room) judges by demand (docs/DESIGN.md
 * "Policy"). */
double pol_demand_factor(const struct pol_tick *t, int cpu) {
        const struct sample_rates *l = t->in->load;
        double d;

        if (!l || cpu < 0 || cpu > l->max_cpu || !l->cpus[cpu].valid)
                return 1;
        d = MIN(MAX(l->cpus[cpu].drop, 0), 1 - 1 / POL_DEMAND_MAX);
        return 1 / (1 - d);
}

double pol_whole_factor(const struct pol_tick *t, int cpu) {
        if (cpu < 0 || cpu > t->max_cpu || t->net[cpu] <= 0)
                return 1;
        return MAX(t->load[cpu] / t->net[cpu], 1);
}

double pol_demand(const struct pol_tick *t, int cpu) {
        return pol_load(t, cpu) * pol_demand_factor(t, cpu);
}

/* Settling from an earlier tick's action (this tick's are in t->touched). */
bool pol_settling(const struct pol_tick *t, int cpu) {
        return cpu >= 0 && cpu < CPUSET_MAX && cpuset_isset(&t->settling, cpu);
}

/* The smoothed load lags an action: no second decision on the CPU until
 * the EWMA keeps under 10% of the old level, nor before hot_samples.  The
 * load moved meanwhile is counted for pol_settling_measurably(). */
void pol_settle_by(struct pol_tick *t, int cpu, double work) {
        double keep = 1;
        unsigned k = 0;
        uint64_t settle;
        struct pol_cpu *pc;

        while (keep >= 0.10 && k < 20) {
                keep *= 1 - MIN(MAX(t->c->smoothing, 0.05), 1);
                k++;
        }
        settle = (uint64_t) MAX(k, t->c->hot_samples) * t->c->interval_usec;

        if (cpu < 0 || cpu >= CPUSET_MAX)
                return;
        cpuset_set(&t->touched, cpu);
        if ((size_t) cpu >= t->st->n_cpus)
                return;
        pc = &t->st->cpus[cpu];
        /* a new settling window starts its count afresh */
        if (pc->moved_usec != t->now && t->now >= pc->settle_until)
                pc->moved = 0;
        pc->moved_usec = t->now;
        pc->moved += MAX(work, 0);
        pc->settle_until = t->now + settle;
}

/* An RPS set needs no wait for such a CPU's load to catch up. */
bool pol_settling_measurably(const struct pol_tick *t, int cpu) {
        return pol_settling(t, cpu) && ((size_t) cpu >= t->st->n_cpus || t->st->cpus[cpu].moved >= POL_GAIN_LEAST);
}

void pol_settle(struct pol_tick *t, int cpu) {
        pol_settle_by(t, cpu, HUGE_VAL);
}

struct action *pol_add(struct pol_tick *t, enum knob_kind type) {
        struct action *a = action_list_add(t->out, type);

        if (!a)
                t->r = -ENOMEM;
        return a;
}

void pol_set_cpus(struct pol_tick *t, struct action *a, const cpuset_t *to, const cpuset_t *from) {
        if (action_set_cpus(a, to, from) < 0)
                t->r = -ENOMEM;
}

void pol_set_cpus_kept(struct pol_tick *t, struct action *a, const cpuset_t *to, const cpuset_kept_t *from) {
        cpuset_t f = cpuset_kept_get(from);

        pol_set_cpus(t, a, to, &f);
}

const cpuset_t pol_no_rps;

void pol_unit_set_rps(struct pol_tick *t, struct pol_unit *u, const cpuset_t *to) {
        if (cpuset_empty(to)) {
                u->rps = &pol_no_rps;
                u->n_rps = 0;
                return;
        }
        if (!u->rps_own) {
                u->rps_own = malloc(sizeof(*u->rps_own));
                if (!u->rps_own) {
                        t->r = -ENOMEM;
                        return;
                }
        }
        if (to != u->rps_own)
                *u->rps_own = *to;
        u->rps = u->rps_own;
        u->n_rps = cpuset_count(to);
}

void pol_units_free(struct pol_unit *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].rps_own);
        free(v);
}

struct action *pol_add_queue(struct pol_tick *t, enum knob_kind type, const char *nic, int queue) {
        struct action *a = pol_add(t, type);

        if (a) {
                snprintf(a->nic, sizeof(a->nic), "%s", nic);
                a->queue = queue;
        }
        return a;
}

/* ---- hot CPUs ---- */

double pol_enter(const struct pol_tick *t) {
        return t->c->hot_enter * t->scale;
}

double pol_exit(const struct pol_tick *t) {
        return t->c->hot_exit * t->scale;
}

/* Narrowing an RPS set waits until the work fits one hysteresis band below
 * the exit threshold. */
double pol_narrow(const struct pol_tick *t) {
        const struct config *c = t->c;

        return MAX(c->hot_exit - (c->hot_enter - c->hot_exit), c->hot_exit / 2) * t->scale;
}

/* Scaled down on a light host, min_gain still keeps the floor: no move
 * for balance gains less than the noise of a stationary load. */
double pol_min_gain(const struct pol_tick *t) {
        double g = t->c->min_gain * t->scale;

        return t->scale < 1 ? MAX(g, MIN(t->floor, t->c->min_gain)) : g;
}

/* The least gain of a plan (pol_replan): as min_gain, with the noise of
 * the steady loads it is judged on down to POL_PLAN_LEAST. */
double pol_plan_gain(const struct pol_tick *t) {
        double g = t->c->min_gain * t->scale;

        if (t->scale >= 1 || !t->noise_known)
                return pol_min_gain(t);
        return MAX(g, MIN(MIN(t->c->balance_floor, t->c->min_gain), MAX(POL_PLAN_LEAST, t->noise_gain)));
}

/* The least gain of a move off cpu (onto to, or -1 for any): min_gain; on
 * a light host where cpu is judged by its steady level (pol_cpu_steady),
 * by the noise of the two CPUs down to POL_PLAN_LEAST (docs/DESIGN.md
 * "Policy": the level's error shrinks while nothing changes). */
static double gain_least(const struct pol_tick *t, int cpu, int to) {
        double var;

        if (t->scale >= 1 || !t->noise_known || cpu < 0 || (size_t) cpu >= t->st->n_cpus ||
            !pol_cpu_steady(&t->st->cpus[cpu]))
                return pol_min_gain(t);
        var = t->st->cpus[cpu].noise_var;
        if (to >= 0 && (size_t) to < t->st->n_cpus)
                var = MAX(var, t->st->cpus[to].noise_var);
        return MAX(t->c->min_gain * t->scale,
                   MIN(MIN(t->c->balance_floor, t->c->min_gain), MAX(POL_PLAN_LEAST, POL_NOISE_K * sqrt(var))));
}

double pol_gain_need(const struct pol_tick *t, int cpu, int to) {
        const struct pol_cpu *pc = &t->st->cpus[cpu];

        return gain_least(t, cpu, to) +
               (pc->gain_short && pc->gain_short < t->now ? POL_NOISE_K * sqrt(pc->noise_var) : 0);
}

/* A queue IRQ is busy (worth a move) from POL_BUSY_ABS, or from min_gain
 * where that is less (a light host): moving less cannot gain min_gain. */
double pol_busy_abs(const struct pol_tick *t) {
        return MIN(POL_BUSY_ABS, pol_min_gain(t));
}

/* ... or from POL_BUSY_FRAC of its CPU's network load, if more; off a
 * CPU judged by its level, from the least gain of a move off it. */
double pol_busy(const struct pol_tick *t, int cpu) {
        return MAX(MIN(POL_BUSY_ABS, gain_least(t, cpu, -1)), POL_BUSY_FRAC * t->net[cpu]);
}

/* The mean is the level every CPU would have with the work perfectly
 * spread; never below the narrowing limit, or a set sized to it would be
 * narrowed again at once. */
double pol_level(const struct pol_tick *t) {
        if (t->scale >= 1)
                return pol_exit(t);
        return MIN(pol_exit(t), MAX(t->mean, pol_narrow(t)));
}

/* A set is good enough when its CPUs end at most 10% over the level (the
 * estimate of a queue's work is no closer than that). */
double pol_accept(const struct pol_tick *t) {
        if (t->scale >= 1)
                return pol_exit(t);
        return MIN(pol_exit(t), 1.1 * MAX(t->mean, pol_narrow(t)));
}

/* Hot CPUs cool below this; while unbalanced, a third of the way from the
 * level up to enter, so a set sized to the level does not widen again. */
static double exit_level(const struct pol_tick *t) {
        double lvl;

        if (t->scale >= 1)
                return pol_exit(t);
        lvl = pol_level(t);
        return MAX(pol_exit(t), lvl + (pol_enter(t) - lvl) / 3);
}

/* The threshold scale of this tick (docs/DESIGN.md "Policy"): the level
 * that makes a CPU hot is balance_ratio times the eligible CPUs' mean load
 * (no placement changes it), at least balance_floor above it, up to
 * hot_enter; the other thresholds scale with it, keeping their bands. */
static double threshold_scale(struct pol_tick *t) {
        const struct config *c = t->c;
        const struct sample_rates *l = t->in->load;
        double sum = 0, level;
        int n = 0;

        if (!l || c->balance_ratio <= 0 || c->hot_enter <= 0)
                return 1;
        CPUSET_FOREACH(cpu, &t->eligible) {
                if (cpu > t->max_cpu || cpu > l->max_cpu || !l->cpus[cpu].valid)
                        continue;
                sum += t->load[cpu];
                n++;
        }
        if (n == 0)
                return 1;
        t->mean = sum / n;
        level = MAX(t->mean + c->balance_floor, c->balance_ratio * t->mean);
        return level < c->hot_enter ? level / c->hot_enter : 1;
}

/* Fast attack: a CPU whose newest raw interval shows it all but out of
 * idle time (under half saturated_idle) with at least saturated_share in
 * irq+softirq is the bottleneck now, before its smoothed load shows it.
 * Noise does not get there; moves stay held back by min_gain, dwell and
 * back-off. */
static bool raw_saturated(const struct pol_tick *t, int cpu) {
        const struct sample_rates *raw = t->in->raw;
        const struct sample_cpu *rc;

        if (!raw || cpu > raw->max_cpu || !raw->cpus[cpu].valid)
                return false;
        rc = &raw->cpus[cpu];
        return MAX(rc->idle, 0) < t->c->saturated_idle / 2 && pol_cpu_load(rc) >= t->c->saturated_share;
}

/* A CPU hot by fast attack is planned for with its raw load. */
static void fast_attack(struct pol_tick *t, int cpu, double enter) {
        const struct sample_cpu *rc = &t->in->raw->cpus[cpu];
        struct pol_cpu *pc = &t->st->cpus[cpu];

        pc->hot = pc->fast = true;
        pc->raw_load = pol_cpu_load(rc);
        t->load[cpu] = MAX(t->load[cpu], pc->raw_load);
        t->idle[cpu] = MIN(t->idle[cpu], MAX(rc->idle, 0));
        pc->saturated = t->load[cpu] < enter;
}

/* The level of a CPU's load (docs/DESIGN.md "Policy"): the mean of every
 * sample since it last changed (an action of ours, or hot_samples samples
 * in a row beyond POL_NOISE_K deviations on the same side).  Returns where
 * the sample left it: held, beyond (on the run's side, or turned: the run
 * before was noise), changed (a step) or started. */
enum level_step { LEVEL_HOLDS, LEVEL_BEYOND, LEVEL_BEYOND_TURNED, LEVEL_CHANGED, LEVEL_START };

/* The level starts over from the sample L. */
static enum level_step level_restart(struct pol_cpu *pc, double L, enum level_step step) {
        pc->level = L;
        pc->level_n = 1;
        pc->level_off = 0;
        pc->steady_short = 0;
        return step;
}

static enum level_step level_sample(struct pol_cpu *pc, const struct config *c, double L, bool settling) {
        double dev = L - pc->level, lim = POL_NOISE_K * sqrt(pc->noise_var);
        enum level_step r = LEVEL_HOLDS;

        if (pc->level_n == 0 || settling || pc->noise_n <= POL_NOISE_SAMPLES)
                return level_restart(pc, L, LEVEL_START);
        if (fabs(dev) >= lim) {
                r = pc->level_off != 0 && (pc->level_off > 0) != (dev > 0) ? LEVEL_BEYOND_TURNED : LEVEL_BEYOND;
                pc->level_off = dev > 0 ? MAX(pc->level_off, 0) + 1 : MIN(pc->level_off, 0) - 1;
                if ((unsigned) abs(pc->level_off) >= MAX(c->hot_samples, 1u))
                        return level_restart(pc, L, LEVEL_CHANGED);
        } else
                pc->level_off = 0;
        if (pc->level_n < UINT_MAX)
                pc->level_n++;
        pc->level += dev / pc->level_n;
        return r;
}

/* One variance term v into a CPU's noise estimate. */
static void noise_add(struct pol_cpu *pc, double v) {
        if (pc->noise_n == 1)
                pc->noise_var = v;
        else if (pc->noise_n > 1)
                pc->noise_var += (v - pc->noise_var) / (1 / POL_NOISE_GAIN + pc->level_n - 1);
}

/* The noise of a CPU's smoothed load (docs/DESIGN.md "Policy"): samples
 * k smoothing steps of weight a apart differ, for independent noise, by a
 * mean square of 2 (1 - (1 - a)^k) times the variance, so a step or a ramp
 * counts once.  An equal sample, our action's change and a step are no
 * noise.  A new sample weighs less the longer the level holds, so the
 * thresholds sized by it do not wander with its own sampling error. */
void pol_noise_sample(struct pol_cpu *pc, const struct config *c, double L, bool settling) {
        double a = MIN(MAX(c->smoothing, 0.05), 1), d = L - pc->noise_prev, v;
        enum level_step step;

        if (pc->noise_gap < UINT_MAX)
                pc->noise_gap++;
        if (pc->noise_n > 0 && d == 0)
                return;
        step = level_sample(pc, c, L, settling);
        /* samples beyond the noise from the level count as noise once
         * the level holds after them, never when it starts over: a step
         * is no noise, as the change of our own moves is not */
        if ((step == LEVEL_HOLDS || step == LEVEL_BEYOND_TURNED) && pc->noise_held_n > 0) {
                double each = pc->noise_held / pc->noise_held_n;

                for (unsigned i = 0; i < pc->noise_held_n; i++)
                        noise_add(pc, each);
        }
        if (step == LEVEL_CHANGED)
                pc->level_unjudged = true;
        if (step != LEVEL_BEYOND && step != LEVEL_BEYOND_TURNED) {
                pc->noise_held = 0;
                pc->noise_held_n = 0;
        }
        if (pc->noise_n > 0 && settling) {
                pc->noise_prev = L;
                pc->noise_gap = 0;
                return;
        }
        v = d * d / (2 * (pc->noise_gap == 1 ? a : 1 - pow(1 - a, pc->noise_gap)));
        if (step == LEVEL_BEYOND || step == LEVEL_BEYOND_TURNED) {
                pc->noise_held += v;
                pc->noise_held_n++;
        } else if (step != LEVEL_CHANGED)
                noise_add(pc, v);
        pc->noise_prev = L;
        pc->noise_gap = 0;
        if (pc->noise_n <= POL_NOISE_SAMPLES)
                pc->noise_n++;
}

/* The least gain of this tick's moves (pol_min_gain): balance_floor until
 * the noise of every eligible CPU is known, then POL_NOISE_K deviations of
 * the noisiest one's, down to POL_GAIN_LEAST (docs/DESIGN.md "Policy").  A
 * CPU whose load never changed (an idle one) has no noise to count. */
static double noise_floor(struct pol_tick *t, bool *ret_known) {
        const struct sample_rates *l = t->in->load;
        double var = 0;
        bool known = false;

        *ret_known = false;
        if (!l)
                return t->c->balance_floor;
        CPUSET_FOREACH(cpu, &t->eligible) {
                const struct pol_cpu *pc = &t->st->cpus[cpu];

                if (cpu > t->max_cpu || cpu > l->max_cpu || !l->cpus[cpu].valid || pc->noise_n <= 1)
                        continue;
                if (pc->noise_n <= POL_NOISE_SAMPLES)
                        return t->c->balance_floor;
                var = MAX(var, pc->noise_var);
                known = true;
        }
        if (!known)
                return t->c->balance_floor;
        *ret_known = true;
        t->noise_gain = POL_NOISE_K * sqrt(var);
        return MIN(t->c->balance_floor, MAX(POL_GAIN_LEAST, POL_NOISE_K * sqrt(var)));
}

/* The level that makes a CPU hot: enter, or below it, where its noise is
 * known, POL_NOISE_K deviations above the level sets are accepted at, and
 * min_gain (no placement gains more than the excess over the mean) and
 * balance_floor above the mean. */
double pol_cpu_enter(const struct pol_hot_levels *lv, const struct pol_cpu *pc) {
        if (!lv->steady || pc->noise_n <= POL_NOISE_SAMPLES)
                return lv->enter;
        return MIN(lv->enter, MAX(lv->least, lv->accept + POL_NOISE_K * sqrt(pc->noise_var)));
}

/* This tick's levels, kept for the calm ticks until the next. */
static void keep_levels(struct pol_tick *t) {
        t->st->levels = (struct pol_hot_levels) {
                .enter = pol_enter(t),
                .least = t->mean + MAX(t->c->balance_floor, pol_min_gain(t)),
                .accept = pol_accept(t),
                .steady = t->scale < 1,
        };
}

/* A CPU is hot (docs/DESIGN.md "Policy") after hot_samples samples at
 * hot_enter (scaled), or saturated while another eligible CPU has room
 * (else a busy host is just busy); at once when raw_saturated().  It stays
 * hot down to hot_exit, a saturated one in the same proportion. */
static void update_hot(struct pol_tick *t) {
        const struct config *c = t->c;
        const struct sample_rates *l = t->in->load;
        /* room: idle for what a saturated CPU would shed */
        double room_idle = 2 * c->saturated_idle, room_enter = MAX(room_idle, c->saturated_share), enter, exit_at;
        int n_room = 0;

        for (int cpu = 0; cpu <= t->max_cpu; cpu++) {
                const struct sample_cpu *sc;

                t->load[cpu] = t->idle[cpu] = 0;
                if (!l || cpu > l->max_cpu || !l->cpus[cpu].valid)
                        continue;
                sc = &l->cpus[cpu];
                t->load[cpu] = pol_cpu_load(sc);
                t->idle[cpu] = MAX(sc->idle, 0);
                pol_noise_sample(&t->st->cpus[cpu], t->c, t->load[cpu], pol_settling(t, cpu));
                /* a changed level is judged here once it holds (policy_pace) */
                if (pol_cpu_steady(&t->st->cpus[cpu]))
                        t->st->cpus[cpu].level_unjudged = false;
                t->load[cpu] = pol_cpu_judged(&t->st->cpus[cpu], t->load[cpu]);
                if (cpuset_isset(&t->eligible, cpu) && t->idle[cpu] > room_enter && t->load[cpu] < c->hot_exit)
                        n_room++;
        }
        t->floor = noise_floor(t, &t->noise_known);
        t->scale = threshold_scale(t);
        keep_levels(t);
        enter = pol_enter(t);
        exit_at = exit_level(t);

        for (int cpu = 0; cpu <= t->max_cpu; cpu++) {
                struct pol_cpu *pc = &t->st->cpus[cpu];
                double L = t->load[cpu], idle = t->idle[cpu], c_enter = pol_cpu_enter(&t->st->levels, pc),
                       c_exit = exit_at;
                bool room, sat_enter, hot_now;

                pc->fast = false;

                if (!cpuset_isset(&t->topo->online, cpu)) {
                        pc->above = 0;
                        pc->hot = pc->saturated = false;
                        continue;
                }
                if (!l || cpu > l->max_cpu || !l->cpus[cpu].valid) {
                        /* no sample this interval: keep the state as it was */
                        if (pc->hot)
                                cpuset_set(&t->hot, cpu);
                        continue;
                }
                room = n_room - (cpuset_isset(&t->eligible, cpu) && idle > room_enter && L < c->hot_exit) > 0;
                sat_enter = idle < c->saturated_idle && L >= c->saturated_share && room;
                hot_now = L >= c_enter || sat_enter;
                /* the same hysteresis below a lower enter level */
                if (c_enter < enter)
                        c_exit = MIN(exit_at, pol_level(t) + (c_enter - pol_level(t)) / 3);

                if (pc->hot) {
                        bool stay = L >= c_exit;
                        if (!stay && pc->saturated)
                                stay = idle < room_idle && L >= c->saturated_share * c->hot_exit / c->hot_enter;
                        if (!stay) {
                                pc->hot = pc->saturated = false;
                                pc->above = 0;
                        }
                } else {
                        pc->above = hot_now ? pc->above + 1 : 0;
                        if (pc->above >= MAX(c->hot_samples, 1u)) {
                                pc->hot = true;
                                pc->saturated = L < c_enter;
                        } else if (room && raw_saturated(t, cpu)) {
                                fast_attack(t, cpu, enter);
                                pc->above = MAX(c->hot_samples, 1u);
                        }
                }
                if (pc->hot)
                        cpuset_set(&t->hot, cpu);
                if (!pc->hot || pc->level_n <= 1)
                        pc->gain_short = 0;
        }
}

/* ---- NICs, queues and the load model ---- */

/* The NIC's packet rates since the last tick, smoothed like the CPU load;
 * counters gone backwards start over. */
static void nic_rates(const struct pol_tick *t, struct pol_nic *rec, const struct inventory_nic *n) {
        double alpha = t->c->smoothing > 0 && t->c->smoothing <= 1 ? t->c->smoothing : 1, rx;

        if (!n->has_stats) {
                rec->stats_known = rec->rate_known = rec->bps_known = false;
                return;
        }
        if (rec->stats_known && t->now <= rec->stats_usec)
                return;
        if (rec->stats_known && n->rx_packets >= rec->rx_prev && n->tx_packets >= rec->tx_prev) {
                rx = (double) (n->rx_packets - rec->rx_prev) / ((double) (t->now - rec->stats_usec) / 1e6);
                rec->rx_pps_last = rx;
                rec->rx_pps = rec->rate_known ? alpha * rx + (1 - alpha) * rec->rx_pps : rx;
                rec->rate_known = true;
        } else
                rec->rate_known = false;
        if (rec->stats_known && rec->bytes_known && n->has_rx_bytes && n->rx_bytes >= rec->rxb_prev) {
                rec->rx_bps_last = (double) (n->rx_bytes - rec->rxb_prev) / ((double) (t->now - rec->stats_usec) / 1e6);
                rec->bps_known = true;
        } else
                rec->bps_known = false;
        rec->rx_prev = n->rx_packets;
        rec->tx_prev = n->tx_packets;
        rec->rxb_prev = n->rx_bytes;
        rec->bytes_known = n->has_rx_bytes;
        rec->stats_usec = t->now;
        rec->stats_known = true;
}

static bool tri(enum tristate v, bool dflt) {
        return v == TRI_INHERIT ? dflt : v == TRI_YES;
}

static int build_nics(struct pol_tick *t) {
        struct policy_state *st = t->st;

        for (size_t i = 0; i < st->n_nics; i++)
                st->nics[i].seen = false;
        /* create every record first: growing the array moves them */
        for (size_t i = 0; i < t->inv->n_nics; i++)
                if (!pol_nic_get(st, t->inv->nics[i].name, true))
                        return -ENOMEM;

        for (size_t i = 0; i < t->inv->n_nics; i++) {
                const struct inventory_nic *n = &t->inv->nics[i];
                const struct config_interface *ci = config_interface_for(t->c, n->name);
                struct pol_nicctx *x = &t->nics[i];

                x->nic = n;
                x->rec = pol_nic_get(st, n->name, false);
                x->rec->seen = true;
                nic_rates(t, x->rec, n);
                x->managed = !ci || ci->manage;
                x->rps = tri(ci ? ci->rps : TRI_INHERIT, t->c->rps);
                x->rfs = tri(ci ? ci->rfs : TRI_INHERIT, t->c->rfs);
                x->xps = tri(ci ? ci->xps : TRI_INHERIT, t->c->xps);
                x->takeover = tri(ci ? ci->takeover : TRI_INHERIT, t->c->takeover);
                x->allowed = t->eligible;
                if (ci && !cpuset_empty(&ci->cpus))
                        cpuset_and(&x->allowed, &x->allowed, &ci->cpus);
                cpuset_and(&x->cpus, &x->allowed, &n->local_cpus);
                /* none local: the NIC's work still has to go somewhere */
                if (cpuset_empty(&x->cpus))
                        x->cpus = x->allowed;

                /* a queue count change means the driver re-requested its
                 * IRQs (docs/DESIGN.md "Kernel traps"): lay it out again */
                if (x->rec->laid_out && x->rec->n_queues != n->n_queues)
                        policy_forget_nic(st, n->name);
        }
        return 0;
}

/* Where an IRQ fires: a single-CPU mask, else a single effective CPU in it,
 * its busiest CPU, or its first online one.  The mask first: effective
 * affinity lags until the IRQ fires (docs/DESIGN.md "Kernel traps"). */
static int irq_cpu(const struct pol_tick *t, const struct inventory_irq *ii, const struct sample_irq *si) {
        cpuset_t on;
        double best = 0;
        int cpu = cpuset_kept_only(&ii->affinity);

        if (cpu >= 0)
                return cpu;
        cpu = ii->has_effective ? cpuset_kept_only(&ii->effective) : -1;
        if (cpu >= 0 && cpuset_kept_isset(&ii->affinity, cpu))
                return cpu;
        cpu = -1;
        /* the CPU of its mask it fired on most: only its nz range can say */
        if (t->in->load) {
                int lo, hi;

                pol_irq_range(t->in->load, si, CPUSET_MAX, &lo, &hi);
                for (int c = lo; c <= hi; c++) {
                        double r = cpuset_kept_isset(&ii->affinity, c) ? irq_rate_on(t->in->load, si, c) : 0;
                        if (r > best) {
                                best = r;
                                cpu = c;
                        }
                }
        }
        if (cpu >= 0)
                return cpu;
        cpuset_kept_and(&on, &ii->affinity, &t->topo->online);
        return cpuset_first(&on);
}

enum action_reason pol_external_over(const struct pol_tick *t, uint64_t since, const cpuset_t *value) {
        cpuset_t on;

        /* bans win over the hold: what may not be used is left at once */
        if (value) {
                cpuset_and(&on, value, &t->topo->online);
                if (!cpuset_subset(&on, &t->eligible))
                        return ACTION_REASON_CPU_BANNED;
        }
        if (t->now - since >= t->c->external_hold_usec)
                return ACTION_REASON_EXTERNAL_CHANGE_EXPIRED;
        return ACTION_REASON_INVALID;
}

const char *pol_external_why(const struct pol_tick *t, enum action_reason why, char *buf, size_t len) {
        if (why == ACTION_REASON_CPU_BANNED)
                snprintf(buf, len, "changed by someone else onto CPUs that may not be used: taken back at once");
        else
                snprintf(buf, len, "changed by someone else, left alone for external_hold (%llus): taken back",
                         (unsigned long long) (t->c->external_hold_usec / USEC_PER_SEC));
        return buf;
}

const char *pol_external_hold_text(const struct pol_tick *t, uint64_t since, const cpuset_t *value, char *buf,
                                   size_t len) {
        if (pol_external_over(t, since, value) != ACTION_REASON_INVALID)
                snprintf(buf, len, "taking it back");
        else
                snprintf(buf, len, "leaving it alone for %llus (external_hold)",
                         (unsigned long long) (t->c->external_hold_usec / USEC_PER_SEC));
        return buf;
}

bool pol_irq_held(struct pol_tick *t, struct pol_irq *r, const struct inventory_irq *ii, const char *device,
                  int queue) {
        enum action_reason why;
        struct action *a;
        char buf[160], cpus[64];
        cpuset_t to, last, cur;
        bool full;

        if (!r->external)
                return false;
        if (cpuset_kept_same(&r->last_set, &ii->affinity)) {
                /* our take-back took effect, or whoever changed it put it back */
                r->external = false;
                return false;
        }
        last = cpuset_kept_get(&r->last_set);
        cur = cpuset_kept_get(&ii->affinity);
        why = pol_external_over(t, r->external_usec, &cur);
        if (why == ACTION_REASON_INVALID)
                return true;
        cpuset_and(&to, &last, &t->eligible);
        full = !cpuset_empty(&to) && pol_vector_pick(t, ii, &to) < 0;
        if (full || cpuset_empty(&to) || !cpuset_equal(&to, &last)) {
                /* our CPU filled up meanwhile, or our own value may not be
                 * used either: the value found becomes the baseline and the
                 * usual rules place it */
                r->external = r->set = false;
                pol_note(t, LOG_INFO, "IRQ %u: %s; CPU%s %s, so placed afresh", ii->irq,
                         pol_external_why(t, why, buf, sizeof(buf)), pol_fmt_cpus(&last, cpus, sizeof(cpus)),
                         full ? "has no free vector" : "may not be used either");
                return false;
        }
        a = pol_add(t, KNOB_IRQ);
        if (!a)
                return true;
        a->irq = ii->irq;
        snprintf(a->nic, sizeof(a->nic), "%s", device ? device : "");
        a->queue = queue;
        pol_set_cpus(t, a, &last, &cur);
        pol_vector_move(t, ii, pol_vector_pick(t, ii, &last));
        /* back where we had it: a placement, not a load decision */
        a->layout = true;
        action_set_reason(a, why, "%s", pol_external_why(t, why, buf, sizeof(buf)));
        cpuset_or(&t->touched, &t->touched, &last);
        cpuset_and(&to, &cur, &t->topo->online);
        cpuset_or(&t->touched, &t->touched, &to);
        return true;
}

bool pol_irq_kept(struct pol_tick *t, struct pol_irq *r, const struct inventory_irq *ii, const char *device,
                  int queue) {
        char was[64], now[64], hold[64];
        cpuset_t last, cur;

        if (cpuset_kept_same(&r->last_set, &ii->affinity))
                return true;
        last = cpuset_kept_get(&r->last_set);
        cur = cpuset_kept_get(&ii->affinity);
        r->external = true;
        r->external_usec = t->now;
        pol_note(t, LOG_NOTICE, "IRQ %u was changed by someone else (CPU%s -> CPU%s); %s", ii->irq,
                 pol_fmt_cpus(&last, was, sizeof(was)), pol_fmt_cpus(&cur, now, sizeof(now)),
                 pol_external_hold_text(t, t->now, &cur, hold, sizeof(hold)));
        pol_note_about(t, POLICY_NOTE_EXTERNAL, ii->irq, device, queue);
        return !pol_irq_held(t, r, ii, device, queue);
}

/* Checks one IRQ of a unit against what we set: external change, kernel
 * move after hot-unplug, managed.  Returns false if the unit must not be
 * moved. */
static bool check_irq(struct pol_tick *t, struct pol_unit *u, const struct inventory_irq *ii, bool managed_nic) {
        struct pol_irq *r = pol_irq_get(t->st, ii->irq, true);
        cpuset_t last;

        if (!r) {
                t->r = -ENOMEM;
                return false;
        }
        r->seen = true;
        /* the same name on every tick but the first: no snprintf a queue IRQ */
        if (strncmp(r->nic, t->nics[u->nic].nic->name, sizeof(r->nic)) != 0)
                snprintf(r->nic, sizeof(r->nic), "%s", t->nics[u->nic].nic->name);
        if (r->resync) {
                r->resync = false;
                if (r->set && !cpuset_kept_same(&r->last_set, &ii->affinity)) {
                        /* the driver's reset, not a move: no history */
                        r->set = r->moved = false;
                        r->dwell_usec = 0;
                        r->prev_cpu = -1;
                }
        }
        if (r->managed || r->failures >= ACTION_MAX_FAILURES)
                return false;
        if (pol_irq_held(t, r, ii, t->nics[u->nic].nic->name, ii->queue))
                return false;
        /* ban_irqs: the queue stays where it is, its pair with it */
        if (config_irq_banned(t->c, ii->irq))
                return false;
        if (!managed_nic || !r->set)
                return true;
        last = cpuset_kept_get(&r->last_set);
        if (!cpuset_intersects(&last, &t->topo->online)) {
                /* the CPU we set went offline: the kernel moved the IRQ (or,
                 * in a tree without a kernel behind it, the mask still names
                 * that CPU).  Ours to place again, not someone else's change;
                 * said each tick until placed (a tick whose other actions
                 * touch the unit, its RPS leaving the CPU, places it next). */
                u->replace = true;
                u->offline_cpu = cpuset_first(&last);
                return true;
        }
        return pol_irq_kept(t, r, ii, t->nics[u->nic].nic->name, ii->queue);
}

/* A knob of a queue changed by someone else (*external): ours again once
 * it holds our value, taken back when the hold is over (pol_external_over):
 * a mask to our last one less the CPUs that may not be used (empty turns
 * RPS or XPS off, which uses none), a count (cur, last: mask NULL) to ours. */
static void queue_take_back(struct pol_tick *t, const char *nic, int queue, enum knob_kind kind, bool *external,
                            uint64_t since, const cpuset_kept_t *cur, const cpuset_kept_t *last, uint32_t cur_value,
                            uint32_t last_value) {
        enum action_reason why;
        struct action *a;
        char buf[160];
        cpuset_t now;

        if (cur ? cpuset_kept_same(cur, last) : cur_value == last_value) {
                *external = false;
                return;
        }
        if (cur)
                now = cpuset_kept_get(cur);
        why = pol_external_over(t, since, cur ? &now : NULL);
        if (why == ACTION_REASON_INVALID)
                return;
        a = pol_add_queue(t, kind, nic, queue);
        if (!a)
                return;
        if (cur) {
                cpuset_t to;

                cpuset_kept_and(&to, last, &t->eligible);
                pol_set_cpus(t, a, &to, &now);
        } else {
                a->value = last_value;
                a->from_value = cur_value;
        }
        action_set_reason(a, why, "%s", pol_external_why(t, why, buf, sizeof(buf)));
}

/* Notes a queue's RPS or XPS set changed by someone else. */
static void queue_external_note(struct pol_tick *t, const struct inventory_nic *n, int index, const char *what,
                                const char *dir, const cpuset_kept_t *last, const cpuset_kept_t *cur) {
        char was[64], now[64], hold[64];
        cpuset_t c = cpuset_kept_get(cur);

        pol_note(t, LOG_NOTICE, "%s of %s %s-%d was changed by someone else (%s -> %s); %s", what, n->name, dir, index,
                 pol_fmt_kept(last, was, sizeof(was)), pol_fmt_cpus(&c, now, sizeof(now)),
                 pol_external_hold_text(t, t->now, &c, hold, sizeof(hold)));
        pol_note_about(t, POLICY_NOTE_EXTERNAL, 0, n->name, index);
}

static void check_queue(struct pol_tick *t, const struct pol_nicctx *x, const struct inventory_queue *iq) {
        const struct inventory_nic *n = x->nic;
        struct pol_queue *q = pol_queue_get(t->st, n->name, iq->index, true);

        if (!q) {
                t->r = -ENOMEM;
                return;
        }
        /* every queue on every tick: the sets compared in place, whole
         * ones built only for what is noted */
        q->seen = true;
        if (q->resync) {
                q->resync = false;
                q->rps_set &= cpuset_kept_same(&iq->rps_cpus, &q->rps_last);
                q->xps_set &= cpuset_kept_same(&iq->xps_cpus, &q->xps_last);
                q->flow_set &= iq->rps_flow_cnt == q->flow_last;
        }
        if (iq->has_rps && !q->orig_known) {
                q->orig_known = true;
                if (cpuset_kept_copy(&q->rps_orig, &iq->rps_cpus) < 0)
                        t->r = -ENOMEM;
                q->flow_orig = iq->rps_flow_cnt;
                /* The kernel and the drivers leave RPS off: a mask found set
                 * is an operator's tuning, kept unless configured otherwise.
                 * (IRQ affinities and XPS masks are set by drivers too, so
                 * they cannot be told apart and are taken over.) */
                if (!cpuset_kept_empty(&iq->rps_cpus) && !x->takeover) {
                        char now[64];

                        q->rps_kept = true;
                        pol_note(t, LOG_NOTICE,
                                 "kept: %s rx-%d RPS CPUs %s set before irqsteerd started (takeover = no)", n->name,
                                 iq->index, pol_fmt_kept(&iq->rps_cpus, now, sizeof(now)));
                }
        }
        /* a reload with takeover = yes makes it ours */
        if (q->rps_kept && x->takeover)
                q->rps_kept = false;
        if (iq->has_xps && !q->xps_orig_known) {
                q->xps_orig_known = true;
                if (cpuset_kept_copy(&q->xps_orig, &iq->xps_cpus) < 0)
                        t->r = -ENOMEM;
        }
        if (iq->has_rps && q->rps_set && !q->rps_external && !cpuset_kept_same(&iq->rps_cpus, &q->rps_last)) {
                q->rps_external = true;
                q->rps_external_usec = t->now;
                queue_external_note(t, n, iq->index, "RPS", "rx", &q->rps_last, &iq->rps_cpus);
        }
        if (iq->has_xps && q->xps_set && !q->xps_external && !cpuset_kept_same(&iq->xps_cpus, &q->xps_last)) {
                q->xps_external = true;
                q->xps_external_usec = t->now;
                queue_external_note(t, n, iq->index, "XPS", "tx", &q->xps_last, &iq->xps_cpus);
        }
        if (iq->has_rps && q->flow_set && !q->flow_external && iq->rps_flow_cnt != q->flow_last) {
                char hold[64];

                q->flow_external = true;
                q->flow_external_usec = t->now;
                pol_note(t, LOG_NOTICE, "rps_flow_cnt of %s rx-%d was changed by someone else (%u -> %u); %s",
                         n->name, iq->index, q->flow_last, iq->rps_flow_cnt,
                         pol_external_hold_text(t, t->now, NULL, hold, sizeof(hold)));
                pol_note_about(t, POLICY_NOTE_EXTERNAL, 0, n->name, iq->index);
        }
        if (q->rps_external && !q->rps_broken)
                queue_take_back(t, n->name, iq->index, KNOB_RPS, &q->rps_external, q->rps_external_usec,
                                &iq->rps_cpus, &q->rps_last, 0, 0);
        if (q->xps_external && !q->xps_broken)
                queue_take_back(t, n->name, iq->index, KNOB_XPS, &q->xps_external, q->xps_external_usec,
                                &iq->xps_cpus, &q->xps_last, 0, 0);
        if (q->flow_external && !q->flow_broken)
                queue_take_back(t, n->name, iq->index, KNOB_FLOWCNT, &q->flow_external, q->flow_external_usec, NULL,
                                NULL, iq->rps_flow_cnt, q->flow_last);
}

/* Packets/s of the queue behind IRQ irq from the kernel's per-queue
 * counters: rx and tx of a combined vector, rx or tx of a split one; -1
 * when they are not known. */
static double queue_pps(const struct sample_rates *l, const struct inventory_nic *n, const struct inventory_queue *iq,
                        unsigned irq) {
        const struct sample_queue *q;
        double pps = 0;

        if (!l || l->n_queues == 0 || n->ifindex <= 0 || iq->index < 0)
                return -1;
        if (iq->rx_irq == (int) irq) {
                q = sample_rates_queue(l, n->ifindex, NETDEV_QUEUE_RX, (uint32_t) iq->index);
                if (!q)
                        return -1;
                pps += q->pps;
        }
        if (iq->tx_irq == (int) irq) {
                q = sample_rates_queue(l, n->ifindex, NETDEV_QUEUE_TX, (uint32_t) iq->index);
                if (!q)
                        return -1;
                pps += q->pps;
        }
        return pps;
}

static int build_units(struct pol_tick *t) {
        size_t n = 0;

        /* at most one unit a queue: grown once, not a unit at a time */
        for (size_t ni = 0; ni < t->inv->n_nics; ni++)
                n += t->inv->nics[ni].n_queues;
        if (n > 0 && util_grow((void **) &t->units, &t->a_units, n, sizeof(*t->units)) < 0)
                return -ENOMEM;
        for (size_t ni = 0; ni < t->inv->n_nics; ni++) {
                const struct inventory_nic *n = &t->inv->nics[ni];
                struct pol_nicctx *x = &t->nics[ni];

                x->first_unit = t->n_units;
                for (size_t qi = 0; qi < n->n_queues; qi++) {
                        const struct inventory_queue *iq = &n->queues[qi];
                        const struct inventory_irq *ii[2] = { NULL, NULL };
                        struct pol_unit *u;
                        const int irqs[2] = { iq->rx_irq, iq->tx_irq };
                        bool ok = true;

                        if (x->managed)
                                check_queue(t, x, iq);
                        u = &t->units[t->n_units];
                        *u = (struct pol_unit){ .nic = ni, .qi = qi, .queue = iq->index, .cpu = -1,
                                                .irq_cpu = { -1, -1 }, .offline_cpu = -1, .rps = &pol_no_rps };
                        u->keep = pol_share_keep(x->rec, pol_queue_get(t->st, n->name, iq->index, false));
                        /* rx (or combined) first; a combined one counts once */
                        for (int k = 0; k < 2; k++) {
                                const struct inventory_irq *x2;

                                if (irqs[k] < 0 || (k == 1 && irqs[1] == irqs[0]))
                                        continue;
                                x2 = inventory_irq(t->inv, (unsigned) irqs[k]);
                                if (!x2 || !x2->affinity_readable)
                                        continue;
                                ii[u->n_irq] = x2;
                                u->irq[u->n_irq++] = x2->irq;
                        }
                        if (u->n_irq == 0)
                                continue;
                        for (int k = 0; k < u->n_irq; k++)
                                if (!check_irq(t, u, ii[k], x->managed))
                                        ok = false;
                        u->fixed = !ok || !x->managed;
                        for (int k = 0; k < u->n_irq; k++) {
                                u->si[k] = rates_irq(t->in->load, u->irq[k]);
                                if (u->si[k])
                                        u->rate += u->si[k]->rate;
                                u->pps[k] = queue_pps(t->in->load, n, iq, u->irq[k]);
                                u->irq_cpu[k] = irq_cpu(t, ii[k], u->si[k]);
                        }
                        u->cpu = u->irq_cpu[0];
                        u->target = u->cpu;
                        if (iq->has_rps && !cpuset_kept_empty(&iq->rps_cpus) &&
                            (u->cpu < 0 || cpuset_kept_only(&iq->rps_cpus) != u->cpu)) {
                                u->rps_on = true;
                                cpuset_t rps = cpuset_kept_get(&iq->rps_cpus);

                                pol_unit_set_rps(t, u, &rps);
                        }
                        if (x->managed)
                                u->rps_ours = u->rps_on && pol_rps_ours(t->st, n, iq);
                        t->n_units++;
                }
                x->n_units = t->n_units - x->first_unit;
        }
        return 0;
}

/* The load model (docs/DESIGN.md "Policy"): a CPU's network share (irq,
 * and softirq times net_frac) is split among the queue IRQs firing there by
 * interrupt rate, or by packet rate when netdev qstats has every queue
 * (NAPI batching makes interrupts undercount busy queues).  A queue with
 * RPS keeps u->keep on its IRQ CPU, the rest spread over its RPS CPUs: its
 * total comes from the IRQ CPU part, its steered work off the others. */
/* IRQ k of u's CPUs in the split: where it fired, else its CPU. */
static void unit_range(const struct pol_tick *t, const struct pol_unit *u, int k, int n, int *lo, int *hi) {
        pol_irq_range(t->in->load, u->si[k], n, lo, hi);
        if ((!u->si[k] || u->si[k]->rate <= 0) && u->pps[k] > 0 && u->cpu >= 0 && u->cpu < n)
                *lo = *hi = u->cpu;
}

/* IRQ k of u's weight on cpu in the split of that CPU's network work:
 * packets/s when pkts (every IRQ there has them), else interrupts/s. */
static double unit_weight(const struct pol_tick *t, const struct pol_unit *u, int k, int cpu, bool pkts) {
        const struct sample_irq *si = u->si[k];
        double r = irq_rate_on(t->in->load, si, cpu);

        if (!pkts)
                return r;
        if (u->pps[k] < 0)
                return 0;
        if (si && si->rate > 0)
                return u->pps[k] * r / si->rate;
        return cpu == u->cpu ? u->pps[k] : 0;
}

/* The part of IRQ k of u's receive work its CPU keeps: with RPS, u->keep
 * and its even share if the set holds it. */
static double irq_part(const struct pol_unit *u, int k) {
        if (!u->rps_on || k > 0)
                return 1;
        return u->keep + (cpuset_isset(u->rps, u->cpu) ? (1 - u->keep) / u->n_rps : 0);
}

/* The most work per interrupt ([0]) and per packet ([1]) of each NIC's
 * queues on the CPUs where no set steers (n_sets[cpu]) nor a queue with
 * RPS fires (n_sets[n + cpu]), whose share kept is in doubt: where the
 * split is not. */
static void work_per_event(const struct pol_tick *t, const double *sum_rate, const double *sum_pps,
                           const unsigned *n_sets, double *ret) {
        int n = t->max_cpu + 1;

        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *u = &t->units[i];

                if (u->rps_on)
                        continue;
                for (int k = 0; k < u->n_irq; k++) {
                        int lo, hi;

                        unit_range(t, u, k, n, &lo, &hi);
                        for (int c = lo; c <= hi; c++) {
                                bool pkts = sum_pps[c] > 0; /* false for NAN */
                                double sum = pkts ? sum_pps[c] : sum_rate[c];

                                if (n_sets[c] == 0 && n_sets[n + c] == 0 && sum > 0 &&
                                    unit_weight(t, u, k, c, pkts) > 0)
                                        ret[2 * u->nic + pkts] = MAX(ret[2 * u->nic + pkts], t->net[c] / sum);
                        }
                }
        }
}

static int estimate(struct pol_tick *t) {
        const struct sample_rates *l = t->in->load;
        double *sum_rate, *steered, *sum_pps, *other_rate, *per_event;
        unsigned *n_sets;
        int n = t->max_cpu + 1;

        if (!l)
                return 0;
        sum_rate = calloc(4 * (size_t) n + 2 * t->inv->n_nics, sizeof(double));
        n_sets = calloc(2 * (size_t) n, sizeof(*n_sets));
        if (!sum_rate || !n_sets) {
                free(sum_rate);
                free(n_sets);
                return -ENOMEM;
        }
        steered = sum_rate + n;
        /* packets/s of the queues on each CPU; NAN once one lacks them */
        sum_pps = steered + n;
        /* interrupts/s of other devices' IRQs (not a NIC queue's) */
        other_rate = sum_pps + n;
        per_event = other_rate + n;
        /* the RPS sets steering to each CPU (not their IRQ CPU's), and
         * after them the queues with RPS firing on each */
        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *u = &t->units[i];

                if (!u->rps_on)
                        continue;
                CPUSET_FOREACH(c, u->rps)
                        if (c < n && c != u->cpu)
                                n_sets[c]++;
                if (u->cpu >= 0 && u->cpu < n)
                        n_sets[n + u->cpu]++;
        }
        for (size_t i = 0; i < t->inv->n_irqs; i++) {
                const struct inventory_irq *ii = &t->inv->irqs[i];
                const struct sample_irq *si;
                int lo, hi;

                if (ii->role == INVENTORY_IRQ_RXTX || ii->role == INVENTORY_IRQ_RX || ii->role == INVENTORY_IRQ_TX ||
                    !(si = rates_irq(l, ii->irq)))
                        continue;
                pol_irq_range(l, si, n, &lo, &hi);
                for (int c = lo; c <= hi; c++)
                        other_rate[c] += irq_rate_on(l, si, c);
        }
        /* only each IRQ's nz range is walked, not every CPU */
        for (size_t i = 0; i < t->n_units; i++)
                for (int k = 0; k < t->units[i].n_irq; k++) {
                        const struct sample_irq *si = t->units[i].si[k];
                        int lo, hi;

                        pol_irq_range(l, si, n, &lo, &hi);
                        for (int c = lo; c <= hi; c++)
                                sum_rate[c] += irq_rate_on(l, si, c);
                        unit_range(t, &t->units[i], k, n, &lo, &hi);
                        for (int c = lo; c <= hi; c++)
                                sum_pps[c] = t->units[i].pps[k] < 0 ? NAN :
                                        sum_pps[c] + unit_weight(t, &t->units[i], k, c, true);
                }
        for (int c = 0; c < n; c++) {
                const struct sample_cpu *sc;
                double f;

                if (c > l->max_cpu || !l->cpus[c].valid)
                        continue;
                sc = &l->cpus[c];
                if (sc->net_frac > 0 || sc->net_rx_rate > 0 || sc->net_tx_rate > 0)
                        f = MIN(MAX(sc->net_frac, 0), 1);
                else
                        f = sum_rate[c] > 0 || sum_pps[c] > 0 ? 1 : 0;
                /* the interrupt time split as the softirq time is: by
                 * the network share of the interrupts taken there */
                t->net[c] = MAX(sc->irq, 0) * (other_rate[c] > 0 ? sum_rate[c] / (sum_rate[c] + other_rate[c]) : 1) +
                            MAX(sc->softirq, 0) * f;
                /* in the proportion the load is judged in (pol_cpu_judged) */
                if (c < (int) t->st->n_cpus && pol_cpu_load(sc) > 0)
                        t->net[c] *= pol_cpu_judged(&t->st->cpus[c], pol_cpu_load(sc)) / pol_cpu_load(sc);
                /* fast attack: the raw load, in the smoothed proportions */
                if (c < (int) t->st->n_cpus && t->st->cpus[c].fast && sc->irq + sc->softirq > 0)
                        t->net[c] *= MAX(t->st->cpus[c].raw_load / (sc->irq + sc->softirq), 1);
        }
        work_per_event(t, sum_rate, sum_pps, n_sets, per_event);
        /* sets over every CPU leave none to measure it on: the last
         * measured holds, lest a flow read as the IRQ's work beside it */
        for (size_t ni = 0; ni < t->inv->n_nics; ni++)
                for (int k = 0; k < 2 && t->nics[ni].rec; k++) {
                        if (per_event[2 * ni + k] > 0)
                                t->nics[ni].rec->event_work[k] = per_event[2 * ni + k];
                        else
                                per_event[2 * ni + k] = t->nics[ni].rec->event_work[k];
                }

        for (int pass = 0; pass < 2; pass++) {
                for (size_t i = 0; i < t->n_units; i++) {
                        struct pol_unit *u = &t->units[i];
                        double w = 0, keep;

                        u->tx = 0;
                        for (int k = 0; k < u->n_irq; k++) {
                                double wk = 0;
                                int lo, hi;

                                unit_range(t, u, k, n, &lo, &hi);
                                for (int c = lo; c <= hi; c++) {
                                        bool pkts = sum_pps[c] > 0; /* false for NAN */
                                        double r = unit_weight(t, u, k, c, pkts), sum = pkts ? sum_pps[c] : sum_rate[c];
                                        double x, most = per_event[2 * u->nic + pkts];
                                        unsigned own = u->rps_on && cpuset_isset(u->rps, c) && c != u->cpu;

                                        if (r <= 0 || sum <= 0)
                                                continue;
                                        x = MAX(t->net[c] - steered[c], 0) * r / sum;
                                        /* where another queue's RPS set steers, work beyond
                                         * what the NIC's queues do per interrupt (or packet)
                                         * where none does, by more than two even shares of
                                         * the steered work (flow_bound()'s big flow), is a
                                         * flow RPS hashed there whole */
                                        if (pass == 1 && n_sets[c] > own && most > 0 &&
                                            x - most * r * irq_part(u, k) > 2 * steered[c])
                                                x = most * r * irq_part(u, k);
                                        wk += x;
                                }
                                w += wk;
                                /* a separate tx IRQ's completions: not receive work */
                                if (k > 0)
                                        u->tx += wk;
                        }
                        /* a tx IRQ moved apart is not the rx CPU's work */
                        u->tx_apart = u->n_irq == 2 && u->irq_cpu[1] >= 0 && u->irq_cpu[0] >= 0 &&
                                      u->irq_cpu[1] != u->irq_cpu[0];
                        u->work = u->tx_apart ? MAX(w - u->tx, 0) : w;
                        u->total = w;
                        if (u->rps_on) {
                                keep = u->keep + (cpuset_isset(u->rps, u->cpu) ? (1 - u->keep) / u->n_rps : 0);
                                if (u->n_irq == 2 && u->irq_cpu[1] >= 0 && u->irq_cpu[1] == u->irq_cpu[0] && u->si[0] &&
                                    u->si[1] && u->si[0]->rate > 0) {
                                        /* a tx vector beside the rx one costs what a
                                         * receive interrupt does (as policy-share.c
                                         * assumes), lest the steered part grow */
                                        double rho = u->si[1]->rate / u->si[0]->rate, rx = w / (keep + rho);
                                        u->tx = rho * rx;
                                        u->total = rx + u->tx;
                                } else
                                        u->total = u->tx + MAX(w - u->tx, 0) / keep;
                        }
                }
                if (pass == 1)
                        break;
                for (size_t i = 0; i < t->n_units; i++) {
                        const struct pol_unit *u = &t->units[i];

                        if (!u->rps_on)
                                continue;
                        CPUSET_FOREACH(c, u->rps)
                                if (c != u->cpu && c < n)
                                        steered[c] += (1 - u->keep) * MAX(u->total - u->tx, 0) / u->n_rps;
                }
        }
        free(sum_rate);
        free(n_sets);
        return 0;
}

double pol_unexplained(const struct pol_tick *t, int cpu) {
        double w = t->net[cpu];

        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *u = &t->units[i];
                if (u->target == cpu)
                        w -= u->work;
                else if (u->tx_apart && u->irq_cpu[1] == cpu)
                        w -= u->tx;
        }
        return MAX(w, 0);
}

size_t pol_hot_by_load(const struct pol_tick *t, int *order, size_t max) {
        size_t n = 0;

        CPUSET_FOREACH(cpu, &t->hot) {
                size_t k;

                if (n == max)
                        break;
                k = n++;
                while (k > 0 && t->load[order[k - 1]] < t->load[cpu]) {
                        order[k] = order[k - 1];
                        k--;
                }
                order[k] = cpu;
        }
        return n;
}

bool pol_share_measured(const struct pol_tick *t, const struct pol_unit *u, unsigned samples) {
        const struct pol_nicctx *x = &t->nics[u->nic];
        const struct pol_queue *q = pol_queue_get(t->st, x->nic->name, u->queue, false);

        return (q && q->keep_n >= samples) || (x->rec && x->rec->keep_n >= samples);
}

double pol_share_keep(const struct pol_nic *n, const struct pol_queue *q) {
        if (q && q->keep_n > 0)
                return q->keep;
        if (n && n->keep_n > 0)
                return n->keep;
        return POL_NAPI_SHARE;
}

int pol_model_build(struct pol_tick *t) {
        int r;

        update_hot(t);
        r = build_nics(t);
        if (r >= 0)
                r = build_units(t);
        if (r >= 0)
                r = estimate(t);
        return r;
}

/* ---- trials ---- */

void pol_trial_start(struct pol_trial *tr, const struct pol_nic *rec) {
        tr->on = rec->stats_known;
        tr->ticks = 0;
        tr->bytes = rec->bps_known;
        tr->base = rec->bps_known ? rec->rx_bps_last : rec->rx_pps_last;
}

/* The counter a trial follows. */
static uint64_t trial_count(const struct pol_trial *tr, const struct pol_nic *rec) {
        return tr->bytes ? rec->rxb_prev : rec->rx_prev;
}

static enum pol_trial_step trial_end(struct pol_trial *tr, unsigned *verdicts, enum policy_trial_verdict v) {
        static const enum pol_trial_step step[POLICY_TRIAL_VERDICT_MAX] = {
                [POLICY_TRIAL_KEPT] = POL_TRIAL_PASSED,
                [POLICY_TRIAL_REVERTED] = POL_TRIAL_FAILED,
                [POLICY_TRIAL_NO_VERDICT] = POL_TRIAL_NONE,
        };

        tr->on = false;
        verdicts[v]++;
        return step[v];
}

enum pol_trial_step pol_trial_sample(struct pol_trial *tr, const struct pol_nic *rec, bool enabled, uint64_t now,
                                     unsigned *verdicts, double *ret_after) {
        double after;

        if (!tr->on)
                return POL_TRIAL_IDLE;
        /* trials off, nothing to compare with, or the counters gone or
         * restarted (the device was re-created) */
        if (!enabled || !(tr->base > 0) || !rec->stats_known || (tr->bytes && !rec->bytes_known) ||
            (tr->ticks > 0 && (trial_count(tr, rec) < tr->count0 || rec->stats_usec <= tr->usec0)))
                return trial_end(tr, verdicts, POLICY_TRIAL_NO_VERDICT);
        /* the first sample has the flows moving: counted from its end */
        if (tr->ticks++ == 0) {
                tr->count0 = trial_count(tr, rec);
                tr->usec0 = rec->stats_usec;
                return POL_TRIAL_RUNNING;
        }
        after = (double) (trial_count(tr, rec) - tr->count0) / ((double) (rec->stats_usec - tr->usec0) / 1e6);
        *ret_after = after;
        if (tr->ticks <= POL_TRIAL_TICKS && after >= tr->base * (1 - POL_TRIAL_LOSS_FAST))
                return POL_TRIAL_RUNNING;
        if (after >= tr->base * (1 - POL_TRIAL_LOSS)) {
                tr->backoff_usec = 0;
                return trial_end(tr, verdicts, POLICY_TRIAL_KEPT);
        }
        tr->backoff_usec = tr->backoff_usec ? MIN(2 * tr->backoff_usec, POL_TRIAL_BACKOFF_MAX_USEC)
                                            : POL_TRIAL_BACKOFF_USEC;
        tr->block_until = now + tr->backoff_usec;
        return trial_end(tr, verdicts, POLICY_TRIAL_REVERTED);
}
