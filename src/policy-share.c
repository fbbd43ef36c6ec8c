/* Policy, the receive model: the share of a queue's receive work that
 * stays on its IRQ CPU under RPS.  It differs between hosts
 * (bench/README.md), so it is measured; POL_NAPI_SHARE stands in until then.
 * RPS CPUs where only one NIC's queues steer carry its steered work x; IRQ
 * CPUs serving one queue alone carry what stays, y, plus its tx vector's
 * work, costed per interrupt as receive work.  keep = y / (x + y).
 * Settling, fast-attack and saturated CPUs are left out. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "policy-steps.h"

/* Early measurements average with the prior, later ones weigh POL_SHARE_GAIN. */
static void share_update(double *keep, unsigned *n, double obs) {
        double prior = *n > 0 ? *keep : POL_NAPI_SHARE, w;

        obs = MIN(MAX(obs, POL_SHARE_MIN), POL_SHARE_MAX);
        w = MAX(1.0 / (*n + 2), POL_SHARE_GAIN);
        *keep = MIN(MAX(prior + w * (obs - prior), POL_SHARE_MIN), POL_SHARE_MAX);
        if (*n < 1000)
                (*n)++;
}

/* A CPU whose load can be read for the measurement. */
static bool readable(const struct pol_tick *t, int cpu) {
        const struct sample_rates *l = t->in->load;

        if (cpu < 0 || cpu > t->max_cpu || cpu > l->max_cpu || !l->cpus[cpu].valid)
                return false;
        if (pol_settling(t, cpu) || (cpu < (int) t->st->n_cpus && t->st->cpus[cpu].fast))
                return false;
        return t->load[cpu] < POL_SHARE_SATURATED;
}

struct share_obs {
        double W;                /* the IRQ CPU's network load */
        double rho;              /* tx / rx interrupts when its tx vector fires there too, else 0 */
        double f;                /* the fraction of its RPS CPUs that are measurable */
        bool own;                /* its IRQ CPU is in its RPS set */
        int m;                   /* CPUs in its RPS set */
};

/* r = x / y from S = r * sum_u f_u * y_u, y_u = W_u / (1 + rho_u (1 + r) +
 * own_u * r / m_u), by fixed point from r0; false on too little to see. */
static bool solve(double S, const struct share_obs *o, size_t n, double r0, double *ret_r) {
        double r = r0;

        for (int it = 0; it < 30; it++) {
                double d = 0;

                for (size_t i = 0; i < n; i++)
                        d += o[i].f * o[i].W / (1 + o[i].rho * (1 + r) + (o[i].own ? r / o[i].m : 0));
                if (d <= 0 || S + d < POL_SHARE_EVIDENCE)
                        return false;
                r = S / d;
        }
        *ret_r = r;
        return true;
}

struct share_ctx {
        int n;                   /* CPUs */
        unsigned char *irqs;     /* queue IRQs firing per CPU (saturating) */
        unsigned short *steer;   /* rx queues whose RPS mask holds the CPU (saturating) */
};

/* Unit u's IRQ CPU shows what stays of its work alone. */
static bool irq_cpu_clean(const struct pol_tick *t, const struct share_ctx *c, const struct pol_unit *u) {
        int cpu = u->cpu, own = 0;

        if (!u->rps_on || u->irqless || cpu < 0 || cpu >= c->n || !readable(t, cpu))
                return false;
        for (int k = 0; k < u->n_irq; k++) {
                if (u->irq_cpu[k] < 0)
                        return false;
                own += u->irq_cpu[k] == cpu;
        }
        return c->irqs[cpu] == own && c->steer[cpu] == (cpuset_isset(u->rps, cpu) ? 1 : 0) && t->net[cpu] > 0 &&
               u->si[0] && u->si[0]->rate > 0;
}

static void note_nic(struct pol_tick *t, struct pol_nic *rec, const char *name) {
        if (rec->keep_n < POL_SHARE_NOTE_AFTER)
                return;
        if (rec->keep_noted > 0 && fabs(rec->keep - rec->keep_noted) < POL_SHARE_NOTE_DELTA)
                return;
        rec->keep_noted = rec->keep;
        pol_note(t, LOG_INFO,
                 "%s: %.0f%% of its receive work stays on the IRQ CPU under RPS (measured over %u samples; "
                 "prior %.0f%%)",
                 name, 100 * rec->keep, rec->keep_n, 100 * POL_NAPI_SHARE);
        pol_note_about(t, POLICY_NOTE_PLAIN, 0, name, -1);
}

/* The NIC's units with clean IRQ CPUs, over RPS CPUs only they steer to. */
static void measure_nic(struct pol_tick *t, const struct share_ctx *c, size_t ni, unsigned short *mine,
                        struct share_obs *o, size_t *idx) {
        const struct pol_nicctx *x = &t->nics[ni];
        size_t k = 0;
        double S = 0, r;

        for (size_t i = 0; i < x->n_units; i++) {
                struct pol_unit *u = &t->units[x->first_unit + i];

                if (!irq_cpu_clean(t, c, u))
                        continue;
                CPUSET_FOREACH(cpu, u->rps)
                        if (cpu < c->n && cpu != u->cpu && mine[cpu] < 0xffff)
                                mine[cpu]++;
                idx[k++] = x->first_unit + i;
        }
        if (k == 0)
                return;
        for (size_t i = 0; i < k; i++) {
                const struct pol_unit *u = &t->units[idx[i]];
                int seen = 0, solo = 0;
                double s_solo = 0, r1;

                CPUSET_FOREACH(cpu, u->rps) {
                        if (cpu == u->cpu || cpu >= c->n || c->irqs[cpu] > 0 || c->steer[cpu] != mine[cpu] ||
                            !readable(t, cpu))
                                continue;
                        seen++;
                        if (mine[cpu] == 1) {
                                solo++;
                                s_solo += MAX(t->net[cpu], 0);
                        }
                }
                o[i].W = t->net[u->cpu];
                o[i].rho = u->n_irq == 2 && u->irq_cpu[1] == u->cpu && u->si[1] ? u->si[1]->rate / u->si[0]->rate : 0;
                o[i].own = cpuset_isset(u->rps, u->cpu);
                o[i].m = MAX(u->n_rps, 1);
                o[i].f = (double) seen / o[i].m;
                /* the queue alone on some of its RPS CPUs: its own share */
                if (solo > 0) {
                        struct share_obs so = o[i];
                        struct pol_queue *q = pol_queue_get(t->st, x->nic->name, u->queue, true);

                        if (!q) {
                                t->r = -ENOMEM;
                                return;
                        }
                        so.f = (double) solo / so.m;
                        if (solve(s_solo, &so, 1, (1 - u->keep) / u->keep, &r1))
                                share_update(&q->keep, &q->keep_n, 1 / (1 + r1));
                }
        }
        CPUSET_FOREACH(cpu, &t->eligible)
                if (cpu < c->n && mine[cpu] > 0 && c->irqs[cpu] == 0 && c->steer[cpu] == mine[cpu] && readable(t, cpu))
                        S += MAX(t->net[cpu], 0);
        if (solve(S, o, k, (1 - pol_share_keep(x->rec, NULL)) / pol_share_keep(x->rec, NULL), &r)) {
                share_update(&x->rec->keep, &x->rec->keep_n, 1 / (1 + r));
                note_nic(t, x->rec, x->nic->name);
        }
}

void pol_share_measure(struct pol_tick *t) {
        struct share_ctx c = { .n = t->max_cpu + 1 };
        _cleanup_(freep) unsigned char *irqs = NULL;
        _cleanup_(freep) unsigned short *steer = NULL; /* c.steer, then mine */
        _cleanup_(freep) struct share_obs *o = NULL;
        _cleanup_(freep) size_t *idx = NULL;
        unsigned short *mine;

        if (!t->in->load || t->n_units == 0)
                return;
        c.irqs = irqs = calloc(c.n, sizeof(*irqs));
        c.steer = steer = calloc(2 * (size_t) c.n, sizeof(*steer));
        o = calloc(t->n_units, sizeof(*o));
        idx = calloc(t->n_units, sizeof(*idx));
        if (!irqs || !steer || !o || !idx) {
                t->r = -ENOMEM;
                return;
        }
        mine = steer + c.n;
        for (size_t i = 0; i < t->n_units; i++)
                for (int k = 0; k < t->units[i].n_irq; k++) {
                        int cpu = t->units[i].irq_cpu[k];
                        if (cpu >= 0 && cpu < c.n && c.irqs[cpu] < 0xff)
                                c.irqs[cpu]++;
                }
        /* every rx queue's RPS, NICs without queue IRQs too */
        for (size_t ni = 0; ni < t->inv->n_nics; ni++) {
                const struct inventory_nic *n = &t->inv->nics[ni];
                for (size_t qi = 0; qi < n->n_queues; qi++) {
                        if (!n->queues[qi].has_rps)
                                continue;
                        CPUSET_KEPT_FOREACH(cpu, &n->queues[qi].rps_cpus)
                                if (cpu < c.n && c.steer[cpu] < 0xffff)
                                        c.steer[cpu]++;
                }
        }
        for (size_t ni = 0; ni < t->inv->n_nics && t->r == 0; ni++) {
                if (t->nics[ni].n_units == 0)
                        continue;
                memset(mine, 0, c.n * sizeof(*mine));
                measure_nic(t, &c, ni, mine, o, idx);
        }
}
