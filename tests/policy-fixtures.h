/* In-memory hosts for the policy tests: topology, inventory, smoothed
 * rates, config and workers built directly, plus a tiny closed-loop model
 * (loads follow where the IRQs and RPS masks are) and an "actuator" that
 * applies actions to the inventory and feeds the result back. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "util.h"
#include "config.h"
#include "cpuset.h"
#include "inventory.h"
#include "policy.h"
#include "sample.h"
#include "topology.h"
#include "workers.h"
#include "testlib.h"

#define SEC 1000000ULL
#define FX_MAX_CPUS 64
#define FX_MAX_QUEUES 32

enum fx_smt {
        FX_SMT_NONE,             /* every CPU its own core */
        FX_SMT_SPLIT,            /* CPU i and i + n/2 are siblings (Intel numbering) */
        FX_SMT_INTERLEAVED,      /* CPU 2k and 2k+1 are siblings */
};

struct fx_queue_model {
        double work;             /* irq+softirq share the queue's receive work takes */
        double rate;             /* interrupts/s of its rx (or combined) IRQ */
        double share;            /* part of it that stays on the IRQ CPU under RPS;
                                  * 0: the host's (fx.napi_share) */
        double tx_work;          /* a separate tx IRQ's work, on its CPU (RPS does not steer it) */
        double tx_rate;          /* interrupts/s of that tx IRQ */
        double elephant;         /* part of the steered work in one flow: RPS hashes
                                  * it whole to the last CPU of the set */
        double flow_at;          /* or, if set, the flow hash's fractional place phi:
                                  * index floor(phi * len) of the set, as the
                                  * kernel's reciprocal_scale() */
};

struct fx {
        int n_cpus;
        struct topology topo;
        struct inventory inv;
        struct sample_rates load;
        bool have_load;
        bool drops;                    /* fx_model shows a CPU's excess as softnet drops */
        struct config cfg;
        struct worker_set ws;
        cpuset_t bans;           /* runtime bans handed to every tick */
        /* closed-loop model */
        double base[FX_MAX_CPUS];      /* irq+softirq not from NIC queues */
        double user[FX_MAX_CPUS];      /* user+sys share beside it */
        struct fx_queue_model q[4][FX_MAX_QUEUES]; /* [nic][queue] */
        /* interrupt + NAPI share of a queue's receive work that stays on
         * its IRQ CPU under RPS (0.4 unless a test sets it), and what RPS
         * costs the IRQ CPU, as a fraction of the work it moves */
        double napi_share;
        double rps_cost;
        double remote_cost;          /* work off the NIC's node costs this many times more; 0: 1 */
        /* NICs without queue IRQs (fx_add_veth): received packets/s and
         * the CPU that sends them, where the receive work runs without RPS */
        double pps[4];
        double pkt_bytes[4];     /* a veth's packet size (rx_bytes), 1000 unless set */
        int sender[4];
        /* IRQs of other devices: each fires at its rate on the first
         * online CPU of its mask (x86 delivers a multi-CPU mask to one)
         * and puts its work there as non-network softirq, other_hard of
         * it as interrupt time (0 unless a test sets it) */
        struct fx_other_model { unsigned irq; double rate, work; } other[8];
        size_t n_other;
        double other_hard;
        /* what the actuator saw */
        unsigned feedback_calls;
        /* the policy under test and its last tick */
        struct policy_state *st;
        struct action_list l;
        struct policy_report rep;
};

/* The library's defaults (config_defaults), ticking every second, with
 * the absolute thresholds alone: most tables pin down hot_enter/hot_exit,
 * hot_samples = 3 and the mechanisms behind them; the relative balancing
 * (balance_ratio) and the shipped defaults have tables of their own
 * (fx_shipped_defaults). */
static inline void fx_config_defaults(struct config *c) {
        if (config_defaults(c) < 0)
                abort();
        c->interval_usec = 1 * SEC;
        c->balance_ratio = 0;
        c->hot_samples = 3;
}

/* Exactly the shipped defaults, ticking every second. */
static inline void fx_shipped_defaults(struct config *c) {
        config_free(c);
        if (config_defaults(c) < 0)
                abort();
        c->interval_usec = 1 * SEC;
}

/* n CPUs in nodes contiguous blocks, with the SMT numbering given. */
static inline void fx_init(struct fx *f, int n, int nodes, enum fx_smt smt) {
        memset(f, 0, sizeof(*f));
        f->n_cpus = n;
        f->topo.max_cpu = n - 1;
        f->topo.cpus = calloc(n, sizeof(*f->topo.cpus));
        f->topo.n_nodes = nodes;
        f->topo.nodes = calloc(nodes, sizeof(*f->topo.nodes));
        for (int i = 0; i < nodes; i++)
                f->topo.nodes[i].id = i;
        for (int c = 0; c < n; c++) {
                struct topology_cpu *tc = &f->topo.cpus[c];
                tc->cpu = c;
                tc->present = tc->online = true;
                tc->node = c / (n / nodes);
                switch (smt) {
                case FX_SMT_NONE:
                        tc->core = c;
                        break;
                case FX_SMT_SPLIT:
                        tc->core = c % (n / 2);
                        tc->smt_index = c / (n / 2);
                        break;
                case FX_SMT_INTERLEAVED:
                        tc->core = c / 2;
                        tc->smt_index = c % 2;
                        break;
                }
                tc->core_id = tc->core;
                cpuset_set(&f->topo.present, c);
                cpuset_set(&f->topo.online, c);
                cpuset_set(&f->topo.nodes[tc->node].cpus, c);
        }
        fx_config_defaults(&f->cfg);
        f->napi_share = 0.4;
        f->st = policy_state_new();
        if (!f->st || !f->topo.cpus || !f->topo.nodes)
                abort();
        f->inv.rps_sock_flow_entries = 0;
        f->load.max_cpu = n - 1;
        f->load.interval_s = 1;
        f->load.cpus = calloc(n, sizeof(*f->load.cpus));
        for (int c = 0; c < n; c++) {
                f->load.cpus[c].valid = true;
                f->load.cpus[c].idle = 1;
                f->load.cpus[c].net_frac = 1;
        }
}

static inline void fx_cpu_offline(struct fx *f, int cpu) {
        f->topo.cpus[cpu].online = false;
        cpuset_clear(&f->topo.online, cpu);
        for (size_t i = 0; i < f->topo.n_nodes; i++)
                cpuset_clear(&f->topo.nodes[i].cpus, cpu);
        f->load.cpus[cpu].valid = false;
}

static inline void fx_isolate(struct fx *f, int cpu) {
        f->topo.cpus[cpu].isolated = true;
        cpuset_set(&f->topo.isolated, cpu);
}

static inline void fx_nohz(struct fx *f, int cpu) {
        f->topo.cpus[cpu].nohz_full = true;
        cpuset_set(&f->topo.nohz_full, cpu);
}

static inline struct inventory_irq *fx_irq(struct fx *f, unsigned irq) {
        for (size_t i = 0; i < f->inv.n_irqs; i++)
                if (f->inv.irqs[i].irq == irq)
                        return &f->inv.irqs[i];
        return NULL;
}

static inline void fx_add_irq(struct fx *f, unsigned irq, const char *name, int nic, int queue,
                              enum inventory_irq_role role) {
        struct inventory_irq *ii;
        size_t k;

        f->inv.irqs = realloc(f->inv.irqs, (f->inv.n_irqs + 1) * sizeof(*f->inv.irqs));
        /* keep sorted by number, as the inventory does */
        for (k = f->inv.n_irqs; k > 0 && f->inv.irqs[k - 1].irq > irq; k--)
                f->inv.irqs[k] = f->inv.irqs[k - 1];
        ii = &f->inv.irqs[k];
        f->inv.n_irqs++;
        memset(ii, 0, sizeof(*ii));
        ii->irq = irq;
        snprintf(ii->name, sizeof(ii->name), "%s", name);
        ii->nic = nic;
        ii->queue = queue;
        ii->role = role;
        KEEP(&ii->affinity, f->topo.online); /* never touched: all CPUs */
        ii->node = -1;
        ii->affinity_readable = true;
}

/* A NIC with nq queues on node (-1: all CPUs local).  combined: one TxRx
 * IRQ per queue numbered first_irq + i; else rx first_irq + i and tx
 * first_irq + nq + i.  has_rps/has_xps as given. */
static inline int fx_add_nic(struct fx *f, const char *name, int node, int nq, bool combined, unsigned first_irq,
                             bool rps, bool xps) {
        struct inventory_nic *n;
        int idx = (int) f->inv.n_nics;
        char irqname[64];

        f->inv.nics = realloc(f->inv.nics, (f->inv.n_nics + 1) * sizeof(*f->inv.nics));
        n = &f->inv.nics[f->inv.n_nics++];
        memset(n, 0, sizeof(*n));
        snprintf(n->name, sizeof(n->name), "%s", name);
        n->ifindex = idx + 2;
        n->node = node;
        n->local_cpus = node >= 0 ? f->topo.nodes[node].cpus : f->topo.online;
        n->has_device = n->up = true;
        n->rx_queues = n->tx_queues = nq;
        n->combined_channels = combined ? nq : 0;
        n->map = nq == 1 && combined ? INVENTORY_MAP_SINGLE : INVENTORY_MAP_NAMES;
        n->n_queues = nq;
        n->queues = calloc(nq, sizeof(*n->queues));
        for (int i = 0; i < nq; i++) {
                struct inventory_queue *q = &n->queues[i];
                q->index = i;
                q->has_rx = q->has_tx = true;
                q->has_rps = rps;
                q->has_xps = xps;
                if (combined) {
                        q->rx_irq = q->tx_irq = (int) (first_irq + i);
                        if (nq == 1)
                                snprintf(irqname, sizeof(irqname), "%s", name);
                        else
                                snprintf(irqname, sizeof(irqname), "%s-TxRx-%d", name, i);
                        fx_add_irq(f, first_irq + i, irqname, idx, i, INVENTORY_IRQ_RXTX);
                } else {
                        q->rx_irq = (int) (first_irq + i);
                        q->tx_irq = (int) (first_irq + nq + i);
                        snprintf(irqname, sizeof(irqname), "%s-rx-%d", name, i);
                        fx_add_irq(f, first_irq + i, irqname, idx, i, INVENTORY_IRQ_RX);
                        snprintf(irqname, sizeof(irqname), "%s-tx-%d", name, i);
                        fx_add_irq(f, first_irq + nq + i, irqname, idx, i, INVENTORY_IRQ_TX);
                }
        }
        return idx;
}

/* A veth: nq rx/tx queues with rps_cpus and xps_cpus, no IRQs, packet
 * counters; its receive work is f->q[nic][*].work at f->pps[nic] packets/s,
 * sent from f->sender[nic]. */
static inline int fx_add_veth(struct fx *f, const char *name, int nq) {
        struct inventory_nic *n;
        int idx = (int) f->inv.n_nics;

        f->inv.nics = realloc(f->inv.nics, (f->inv.n_nics + 1) * sizeof(*f->inv.nics));
        n = &f->inv.nics[f->inv.n_nics++];
        memset(n, 0, sizeof(*n));
        snprintf(n->name, sizeof(n->name), "%s", name);
        n->ifindex = idx + 2;
        n->node = -1;
        n->local_cpus = f->topo.online;
        n->up = true;
        n->rx_queues = n->tx_queues = nq;
        n->combined_channels = -1;
        n->map = INVENTORY_MAP_NONE;
        n->has_stats = true;
        n->has_rx_bytes = true;
        n->n_queues = nq;
        n->queues = calloc(nq, sizeof(*n->queues));
        for (int i = 0; i < nq; i++)
                n->queues[i] = (struct inventory_queue){ .index = i, .has_rx = true, .has_tx = true, .rx_irq = -1,
                                                   .tx_irq = -1, .has_rps = true, .has_xps = true };
        return idx;
}

static inline void fx_place(struct fx *f, unsigned irq, int cpu) {
        KEEP(&fx_irq(f, irq)->affinity, cpuset_single(cpu));
}

static inline struct sample_irq *fx_rate_entry(struct fx *f, unsigned irq) {
        struct sample_irq *si;
        size_t k;

        for (size_t i = 0; i < f->load.n_irqs; i++)
                if (f->load.irqs[i].irq == irq)
                        return &f->load.irqs[i];
        f->load.irqs = realloc(f->load.irqs, (f->load.n_irqs + 1) * sizeof(*f->load.irqs));
        for (k = f->load.n_irqs; k > 0 && f->load.irqs[k - 1].irq > irq; k--)
                f->load.irqs[k] = f->load.irqs[k - 1];
        si = &f->load.irqs[k];
        f->load.n_irqs++;
        memset(si, 0, sizeof(*si));
        si->irq = irq;
        si->valid = true;
        si->per_cpu = calloc(f->n_cpus, sizeof(double));
        return si;
}

/* Interrupt rate of irq, all on cpu. */
static inline void fx_rate(struct fx *f, unsigned irq, int cpu, double rate) {
        struct sample_irq *si = fx_rate_entry(f, irq);
        memset(si->per_cpu, 0, f->n_cpus * sizeof(double));
        si->per_cpu[cpu] = rate;
        si->rate = rate;
        f->have_load = true;
}

/* CPU load: irq+softirq share (all softirq, net_frac 1) and user share. */
static inline void fx_cpu(struct fx *f, int cpu, double soft, double user) {
        struct sample_cpu *sc = &f->load.cpus[cpu];
        sc->irq = 0;
        sc->softirq = soft;
        sc->usr = user;
        sc->idle = MAX(1 - soft - user, 0);
        sc->busy = 1 - sc->idle;
        f->have_load = true;
}

static inline int fx_irq_cpu(struct fx *f, int irq) {
        struct inventory_irq *ii = fx_irq(f, (unsigned) irq);
        return cpuset_first(KEPT(&ii->affinity));
}

/* Closed loop: CPU loads and IRQ rates from where the queue IRQs and RPS
 * masks are now (RPS keeps the queue's share on the IRQ CPU, f->napi_share
 * unless the queue has its own, plus f->rps_cost of what it moves; the
 * rest even over the mask), plus the base load.  noise (may be NULL)
 * multiplies each CPU's share. */
/* What a unit of n's work costs on cpu. */
static inline double fx_cost(const struct fx *f, const struct inventory_nic *n, int cpu) {
        return f->remote_cost > 0 && n->node >= 0 && !cpuset_isset(&n->local_cpus, cpu) ? f->remote_cost : 1;
}

static inline void fx_model(struct fx *f, const double *noise) {
        double soft[FX_MAX_CPUS], other[FX_MAX_CPUS];

        for (int c = 0; c < f->n_cpus; c++) {
                soft[c] = f->base[c];
                other[c] = 0;
        }
        for (size_t i = 0; i < f->load.n_irqs; i++) {
                memset(f->load.irqs[i].per_cpu, 0, f->n_cpus * sizeof(double));
                f->load.irqs[i].rate = 0;
        }
        for (size_t ni = 0; ni < f->inv.n_nics; ni++) {
                struct inventory_nic *n = &f->inv.nics[ni];
                if (n->map == INVENTORY_MAP_NONE) {
                        /* veth: all of the receive work where RPS sends it,
                         * else on the sender; a second of packets */
                        double k = noise ? noise[f->sender[ni]] : 1;
                        n->rx_packets += (uint64_t) (f->pps[ni] * k);
                        n->rx_bytes += (uint64_t) (f->pps[ni] * k * (f->pkt_bytes[ni] > 0 ? f->pkt_bytes[ni] : 1000));
                        n->tx_packets += (uint64_t) (f->pps[ni] * k / 2);
                        for (size_t qi = 0; qi < n->n_queues; qi++) {
                                struct inventory_queue *q = &n->queues[qi];
                                int nm = cpuset_count(KEPT(&q->rps_cpus));
                                if (nm == 0)
                                        soft[f->sender[ni]] += f->q[ni][qi].work;
                                CPUSET_KEPT_FOREACH(c, &q->rps_cpus)
                                        soft[c] += f->q[ni][qi].work / nm;
                        }
                        continue;
                }
                for (size_t qi = 0; qi < n->n_queues; qi++) {
                        struct inventory_queue *q = &n->queues[qi];
                        struct fx_queue_model *m = &f->q[ni][qi];
                        int cpu = fx_irq_cpu(f, q->rx_irq);
                        int nm = cpuset_count(KEPT(&q->rps_cpus));

                        if (nm > 0 && !(nm == 1 && cpuset_isset(KEPT(&q->rps_cpus), cpu))) {
                                double keep = m->share > 0 ? m->share : f->napi_share;
                                soft[cpu] += fx_cost(f, n, cpu) * (keep * m->work + f->rps_cost * (1 - keep) * m->work);
                                double el = m->elephant * (1 - keep) * m->work;
                                int last = -1, at = m->flow_at > 0 ? (int) (m->flow_at * nm) : nm - 1, k = 0;

                                CPUSET_KEPT_FOREACH(c, &q->rps_cpus) {
                                        soft[c] += fx_cost(f, n, c) * ((1 - keep) * m->work - el) / nm;
                                        if (k++ <= at)
                                                last = c;
                                }
                                soft[last] += fx_cost(f, n, last) * el;
                        } else
                                soft[cpu] += fx_cost(f, n, cpu) * m->work;
                        if (m->rate > 0) {
                                struct sample_irq *si = fx_rate_entry(f, (unsigned) q->rx_irq);
                                si->per_cpu[cpu] = m->rate;
                                si->rate = m->rate;
                        }
                        if (q->tx_irq >= 0 && q->tx_irq != q->rx_irq && m->tx_rate > 0) {
                                struct sample_irq *si = fx_rate_entry(f, (unsigned) q->tx_irq);
                                int tc = fx_irq_cpu(f, q->tx_irq);
                                soft[tc] += m->tx_work;
                                si->per_cpu[tc] = m->tx_rate;
                                si->rate = m->tx_rate;
                        }
                }
        }
        for (size_t i = 0; i < f->n_other; i++) {
                struct fx_other_model *m = &f->other[i];
                struct sample_irq *si = fx_rate_entry(f, m->irq);
                cpuset_t on;
                int cpu;

                cpuset_and(&on, KEPT(&fx_irq(f, m->irq)->affinity), &f->topo.online);
                cpu = cpuset_first(&on);
                if (cpu < 0)
                        continue;
                si->per_cpu[cpu] = m->rate;
                si->rate = m->rate;
                other[cpu] += m->work;
                soft[cpu] += m->work;
        }
        for (int c = 0; c < f->n_cpus; c++) {
                double s = soft[c] * (noise ? noise[c] : 1);
                /* the kernel serves 100% and drops the rest */
                f->load.cpus[c].drop = f->drops && s > 1 ? 1 - 1 / s : 0;
                if (s > 1)
                        s = 1;
                fx_cpu(f, c, s, MIN(f->user[c], 1 - s));
                /* the NET part of the softirq runs: what is not the other
                 * devices' (left as the test set it when there are none) */
                if (f->n_other > 0)
                        f->load.cpus[c].net_frac = soft[c] > 0 ? 1 - other[c] / soft[c] : 1;
                /* the other devices' interrupt time out of the softirq */
                if (f->other_hard > 0 && other[c] > 0 && soft[c] > 0) {
                        double h = f->other_hard * other[c];

                        f->load.cpus[c].irq = s * h / soft[c];
                        f->load.cpus[c].softirq = s - f->load.cpus[c].irq;
                        f->load.cpus[c].net_frac = soft[c] > h ? 1 - (other[c] - h) / (soft[c] - h) : 1;
                }
        }
}

static inline struct policy_input fx_input(struct fx *f, uint64_t now) {
        return (struct policy_input){
                .config = &f->cfg,
                .topo = &f->topo,
                .inv = &f->inv,
                .load = f->have_load ? &f->load : NULL,
                .workers = f->ws.n_procs ? &f->ws : NULL,
                .bans = &f->bans,
                .now_usec = now,
        };
}

static inline struct inventory_queue *fx_queue(struct fx *f, const char *nic, int q) {
        for (size_t i = 0; i < f->inv.n_nics; i++)
                if (strcmp(f->inv.nics[i].name, nic) == 0)
                        return &f->inv.nics[i].queues[q];
        return NULL;
}

/* The actuator: applies each action to the inventory / workers and feeds
 * back result (0 unless fail_irq matches an IRQ action, which gets fail_r). */
static inline void fx_apply(struct fx *f, uint64_t now, unsigned fail_irq, int fail_r) {
        for (size_t i = 0; i < f->l.n; i++) {
                const struct action *a = &f->l.v[i];
                int r = 0;

                /* the metrics show these pairs at 0 before they happen */
                if (!action_reason_fits(a->type, a->why))
                        fail_msg("a %s action for %s: add it to action.c's reason_kinds",
                                 action_type_to_string(a->type), action_reason_to_string(a->why));
                switch (a->type) {
                case KNOB_IRQ:
                        if (a->irq == fail_irq)
                                r = fail_r;
                        else
                                assert_int_equal(cpuset_kept_copy(&fx_irq(f, a->irq)->affinity, &a->cpus), 0);
                        break;
                case KNOB_RPS:
                        assert_int_equal(cpuset_kept_copy(&fx_queue(f, a->nic, a->queue)->rps_cpus, &a->cpus), 0);
                        break;
                case KNOB_XPS:
                        assert_int_equal(cpuset_kept_copy(&fx_queue(f, a->nic, a->queue)->xps_cpus, &a->cpus), 0);
                        break;
                case KNOB_FLOWCNT:
                        fx_queue(f, a->nic, a->queue)->rps_flow_cnt = a->value;
                        break;
                case KNOB_SOCKFLOW:
                        f->inv.rps_sock_flow_entries = a->value;
                        break;
                case KNOB_DEFAFF:
                        f->inv.default_affinity = cpuset_kept_get(&a->cpus);
                        break;
                case KNOB_THREAD:
                        for (size_t p = 0; p < f->ws.n_procs; p++)
                                for (size_t t = 0; t < f->ws.procs[p].n_threads; t++)
                                        if (f->ws.procs[p].threads[t].tid == a->tid)
                                                f->ws.procs[p].threads[t].allowed = cpuset_kept_get(&a->cpus);
                        break;
                default:
                        break;
                }
                policy_feedback(f->st, a, r, now);
                f->feedback_calls++;
        }
}

/* One tick into f->l and f->rep, applied with success. */
static inline int fx_step(struct fx *f, uint64_t now) {
        struct policy_input in = fx_input(f, now);
        int r = policy_tick(f->st, &in, &f->l, &f->rep);
        if (r == 0)
                fx_apply(f, now, 0, 0);
        return r;
}

/* The closed loop without noise, one tick a second from second `from` to
 * `to`; f->l and f->rep hold the last tick's.  0 or the first error. */
static inline int fx_ticks(struct fx *f, unsigned from, unsigned to) {
        for (unsigned k = from; k <= to; k++) {
                int r;
                fx_model(f, NULL);
                r = fx_step(f, k * SEC);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A worker process with n threads (tids pid+1..pid+n, allowed = all CPUs). */
static inline void fx_add_proc(struct fx *f, int worker, pid_t pid, int n) {
        struct worker_proc *p;

        f->ws.procs = realloc(f->ws.procs, (f->ws.n_procs + 1) * sizeof(*f->ws.procs));
        p = &f->ws.procs[f->ws.n_procs++];
        memset(p, 0, sizeof(*p));
        p->worker = worker;
        p->pid = pid;
        snprintf(p->comm, sizeof(p->comm), "w%d", worker);
        p->threads = calloc(n, sizeof(*p->threads));
        p->n_threads = n;
        for (int i = 0; i < n; i++) {
                p->threads[i].tid = pid + 1 + i;
                p->threads[i].starttime = 50000 + (unsigned long long) (pid + 1 + i);
                p->threads[i].allowed = f->topo.online;
        }
}

static inline void fx_free(struct fx *f) {
        free(f->topo.cpus);
        free(f->topo.nodes);
        inventory_free_sets(&f->inv);
        for (size_t i = 0; i < f->inv.n_nics; i++)
                free(f->inv.nics[i].queues);
        free(f->inv.nics);
        free(f->inv.irqs);
        for (size_t i = 0; i < f->load.n_irqs; i++)
                free(f->load.irqs[i].per_cpu);
        free(f->load.irqs);
        free(f->load.cpus);
        for (size_t i = 0; i < f->ws.n_procs; i++)
                free(f->ws.procs[i].threads);
        free(f->ws.procs);
        free(f->cfg.interfaces);
        free(f->cfg.workers);
        free(f->cfg.state_dir);
        free(f->cfg.irqbalance_env_files);
        free(f->cfg.path);
        action_list_free(&f->l);
        policy_report_free(&f->rep);
        policy_state_free(f->st);
}

/* Deterministic PRNG (xorshift64*) for noise. */
static inline double fx_rand(uint64_t *s) {
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return (double) ((*s * 2685821657736338717ULL) >> 11) / (double) (1ULL << 53);
}

/* "irq-affinity 73 -> 5", "rps eth0/0 -> 4-7", ... one line per action, for
 * exact comparisons in the tests. */
static inline void fx_fmt(const struct action_list *l, char *buf, size_t len) {
        size_t off = 0;
        buf[0] = 0;
        for (size_t i = 0; i < l->n && off < len; i++) {
                const struct action *a = &l->v[i];
                char cpus[256];
                int n;

                if (cpuset_format_list(KEPT(&a->cpus), cpus, sizeof(cpus)) < 0)
                        snprintf(cpus, sizeof(cpus), "?");
                switch (a->type) {
                case KNOB_IRQ:
                        n = snprintf(buf + off, len - off, "irq %u>%s;", a->irq, cpus);
                        break;
                case KNOB_RPS:
                        n = snprintf(buf + off, len - off, "rps %s/%d>%s;", a->nic, a->queue, cpus);
                        break;
                case KNOB_XPS:
                        n = snprintf(buf + off, len - off, "xps %s/%d>%s;", a->nic, a->queue, cpus);
                        break;
                case KNOB_FLOWCNT:
                        n = snprintf(buf + off, len - off, "flowcnt %s/%d>%u;", a->nic, a->queue, a->value);
                        break;
                case KNOB_SOCKFLOW:
                        n = snprintf(buf + off, len - off, "sockflow>%u;", a->value);
                        break;
                case KNOB_THREAD:
                        n = snprintf(buf + off, len - off, "thread %d>%s;", (int) a->tid, cpus);
                        break;
                case KNOB_DEFAFF:
                        n = snprintf(buf + off, len - off, "defaff>%s;", cpus);
                        break;
                default:
                        n = snprintf(buf + off, len - off, "?;");
                        break;
                }
                if (n < 0)
                        break;
                off += (size_t) n;
        }
}
