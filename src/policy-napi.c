/* Policy, threaded NAPI (napi_threads in irqsteer.conf(5)): a threaded
 * queue polls in a kthread the scheduler places, so moving the IRQ no
 * longer moves the work.  Its thread goes to its queue IRQ's CPU to stay
 * cache-local; one without (veth) to the coolest eligible CPU, off a hot
 * one after the dwell, one move per NIC and tick.  A thread is its PID and
 * start time; one that refuses sched_setaffinity is left alone.
 *
 * As a relief (threaded_napi) for a NIC without queue IRQs whose receive
 * work runs on the sending CPU: it helps less than RPS and can cost
 * throughput (bench/README.md), so only where RPS may not act, on trial,
 * and given back when the packets stop or threaded_napi is turned off. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "policy-steps.h"

/* The CPU of the IRQ of the queue napi polls after this tick, else -1. */
static int napi_irq_cpu(const struct pol_tick *t, size_t ni, uint32_t napi_id) {
        const struct pol_nicctx *x = &t->nics[ni];
        const struct inventory_nic *n = x->nic;

        for (size_t k = 0; k < x->n_units; k++) {
                const struct pol_unit *u = &t->units[x->first_unit + k];

                if (u->qi < n->n_queues && n->queues[u->qi].napi_id == napi_id && u->target >= 0)
                        return u->target;
        }
        return -1;
}

/* The coolest CPU of cpus, preferring those not in avoid; -1 when empty. */
static int coolest(const struct pol_tick *t, const cpuset_t *cpus, const cpuset_t *avoid) {
        int best = -1;
        bool best_avoided = true;

        CPUSET_FOREACH(c, cpus) {
                bool av = cpuset_isset(avoid, c) || cpuset_isset(&t->hot, c);

                if (best < 0 || (best_avoided && !av) ||
                    (av == best_avoided && pol_load(t, c) < pol_load(t, best)))
                        best = c, best_avoided = av;
        }
        return best;
}

static void emit(struct pol_tick *t, const struct inventory_nic *n, const struct inventory_napi *np, const struct pol_napi *r,
                 int cpu, enum action_reason code, const char *why) {
        struct action *a = pol_add_queue(t, KNOB_THREAD, n->name, -1);
        cpuset_t to = cpuset_single(cpu), from = cpuset_single(r->cpu);

        if (!a)
                return;
        a->pid = a->tid = np->pid;
        a->starttime = np->starttime;
        pol_set_cpus(t, a, &to, r->set && r->cpu >= 0 ? &from : NULL);
        action_set_reason(a, code, "NAPI %u of %s (kthread napi/%s-%u, pid %d) %s", np->id, n->name,
                 n->name, np->id, (int) np->pid, why);
}

static void place_nic(struct pol_tick *t, size_t ni) {
        const struct pol_nicctx *x = &t->nics[ni];
        const struct inventory_nic *n = x->nic;
        cpuset_t cpus, taken;
        bool moved = false;

        cpuset_and(&cpus, &x->allowed, &t->eligible);
        cpuset_zero(&taken);
        /* first the threads that stay: their CPUs are taken */
        for (size_t k = 0; k < n->n_napis; k++) {
                const struct pol_napi *r = pol_napi_get(t->st, n->napis[k].pid, n->napis[k].starttime, false);

                if (r && r->set && r->cpu >= 0 && cpuset_isset(&cpus, r->cpu))
                        cpuset_set(&taken, r->cpu);
        }
        for (size_t k = 0; k < n->n_napis; k++) {
                const struct inventory_napi *np = &n->napis[k];
                struct pol_napi *r;
                char why[128];
                int irq_cpu, to;
                bool banned;

                if (np->pid <= 0 || np->starttime == 0)
                        continue;
                r = pol_napi_get(t->st, np->pid, np->starttime, true);
                if (!r) {
                        t->r = -ENOMEM;
                        return;
                }
                r->seen = true;
                if (r->broken)
                        continue;
                irq_cpu = napi_irq_cpu(t, ni, np->id);
                if (irq_cpu >= 0 && cpuset_isset(&cpus, irq_cpu)) {
                        if (r->set && r->cpu == irq_cpu)
                                continue;
                        snprintf(why, sizeof(why), "to CPU%d with its queue's IRQ", irq_cpu);
                        emit(t, n, np, r, irq_cpu, ACTION_REASON_NAPI_THREAD, why);
                        continue;
                }
                to = coolest(t, &cpus, &taken);
                if (to < 0)
                        continue;
                banned = r->set && r->cpu >= 0 && !cpuset_isset(&cpus, r->cpu);
                if (r->set && r->cpu >= 0 && !banned) {
                        /* placed: moves only off a hot CPU, after the dwell */
                        if (!cpuset_isset(&t->hot, r->cpu) || moved || t->now < r->move_usec + t->c->min_dwell_usec ||
                            pol_settling(t, r->cpu) || to == r->cpu || cpuset_isset(&t->hot, to) ||
                            pol_load(t, r->cpu) - pol_load(t, to) < pol_min_gain(t))
                                continue;
                        snprintf(why, sizeof(why), "off hot CPU%d (%.0f%%) to CPU%d (%.0f%%)", r->cpu,
                                 100 * pol_load(t, r->cpu), to, 100 * pol_load(t, to));
                        moved = true;
                        pol_settle(t, r->cpu);
                        pol_settle(t, to);
                } else if (banned)
                        snprintf(why, sizeof(why), "off CPU%d, no longer eligible, to CPU%d", r->cpu, to);
                else
                        snprintf(why, sizeof(why), "to CPU%d, the coolest eligible CPU free of its NIC's threads", to);
                cpuset_set(&taken, to);
                emit(t, n, np, r, to, banned ? ACTION_REASON_CPU_BANNED : ACTION_REASON_NAPI_THREAD, why);
        }
}

/* ---- threaded NAPI as a relief ---- */

static void threaded_emit(struct pol_tick *t, const struct inventory_nic *n, uint32_t from, uint32_t to,
                          enum action_reason code, const char *why) {
        struct action *a = pol_add_queue(t, KNOB_THREADED, n->name, -1);

        if (!a)
                return;
        a->from_value = from;
        a->value = to;
        action_set_reason(a, code, "%.*s", (int) sizeof(a->reason) - 1, why);
}

/* Receive work runs on the sender's CPU: no queue IRQs, NAPIs (veth). */
static bool threadable(const struct pol_nicctx *x) {
        const struct inventory_nic *n = x->nic;

        return x->managed && n->map == INVENTORY_MAP_NONE && x->n_units == 0 && strcmp(n->name, "lo") != 0 &&
               n->n_napis > 0 && n->threaded >= 0;
}

/* The hot CPU with the most network load no queue IRQ explains, -1 none. */
static int unexplained_hot(const struct pol_tick *t) {
        int top = -1;
        double top_w = 0;

        CPUSET_FOREACH(cpu, &t->hot) {
                double w;

                if (cpu > t->max_cpu || cpuset_isset(&t->touched, cpu) || pol_settling(t, cpu))
                        continue;
                w = pol_unexplained(t, cpu);
                if (w >= POL_BUSY_ABS && w > top_w) {
                        top = cpu;
                        top_w = w;
                }
        }
        return top;
}

/* One sample of the trial; true while it runs or once it gave back. */
static bool threaded_trial(struct pol_tick *t, const struct inventory_nic *n, struct pol_nic *rec) {
        struct pol_trial *tr = &rec->thr_trial;
        char why[256];
        double after = 0;
        enum pol_trial_step step = pol_trial_sample(tr, rec, true, t->now, t->rep->napi_trials, &after);

        if (step == POL_TRIAL_NONE)
                pol_note(t, LOG_INFO, "threaded NAPI on %s: no trial verdict (no receive counters); kept", n->name);
        else if (step == POL_TRIAL_PASSED)
                pol_note(t, LOG_INFO, "threaded NAPI kept on %s: it received %.0f %s/s with it, %.0f before (%+.0f%%)",
                         n->name, after, tr->bytes ? "bytes" : "packets", tr->base, 100 * (after / tr->base - 1));
        if (step != POL_TRIAL_FAILED)
                return step == POL_TRIAL_RUNNING;
        snprintf(why, sizeof(why),
                 "threaded NAPI cost throughput: %s received %.0f %s/s with it, %.0f before (%.0f%%): off again, "
                 "not tried for %llu min",
                 n->name, after, tr->bytes ? "bytes" : "packets", tr->base, 100 * (after / tr->base - 1),
                 (unsigned long long) (tr->backoff_usec / 60000000ULL));
        threaded_emit(t, n, 1, (uint32_t) rec->thr_orig, ACTION_REASON_NAPI_TRIAL_FAILED, why);
        return true;
}

static void threaded_relief(struct pol_tick *t) {
        bool started = false;

        for (size_t i = 0; i < t->inv->n_nics; i++) {
                const struct pol_nicctx *x = &t->nics[i];
                const struct inventory_nic *n = x->nic;
                struct pol_nic *rec = x->rec;
                double pps;
                char why[256];
                int cpu;

                if (!rec || !threadable(x) || rec->thr_broken)
                        continue;
                pps = rec->rate_known ? rec->rx_pps : 0;
                if (rec->thr_ours) {
                        if (n->threaded == rec->thr_orig) {
                                /* someone put it back: not ours any more */
                                rec->thr_ours = rec->thr_trial.on = false;
                                continue;
                        }
                        if (!t->c->threaded_napi) {
                                rec->thr_trial.on = false;
                                threaded_emit(t, n, (uint32_t) n->threaded, (uint32_t) rec->thr_orig,
                                              ACTION_REASON_BACK_TO_ORIGINAL,
                                              "threaded_napi = no: threaded NAPI back to its value before");
                                continue;
                        }
                        if (threaded_trial(t, n, rec))
                                continue;
                        rec->thr_gone_ticks = pps < POL_IRQLESS_PPS_EXIT ? rec->thr_gone_ticks + 1 : 0;
                        if (rec->thr_gone_ticks == 0 || rec->thr_gone_ticks < MAX(t->c->hot_samples, 1u) ||
                            t->now - rec->thr_change_usec < t->c->min_dwell_usec)
                                continue;
                        rec->thr_gone_ticks = 0;
                        snprintf(why, sizeof(why),
                                 "%s receives %.0f packets/s, below %.0f: threaded NAPI no longer needed, back to %d",
                                 n->name, pps, POL_IRQLESS_PPS_EXIT, rec->thr_orig);
                        threaded_emit(t, n, (uint32_t) n->threaded, (uint32_t) rec->thr_orig,
                                      ACTION_REASON_NAPI_NOT_NEEDED, why);
                        continue;
                }
                /* RPS first: it gives more (bench/README.md) */
                if (started || !t->c->threaded_napi || n->threaded != 0 ||
                    (x->rps && t->now >= rec->rps_trial.block_until) || t->now < rec->thr_trial.block_until ||
                    pps < POL_IRQLESS_PPS ||
                    (rec->thr_change_usec && t->now - rec->thr_change_usec < t->c->min_dwell_usec))
                        continue;
                cpu = unexplained_hot(t);
                if (cpu < 0)
                        continue;
                snprintf(why, sizeof(why),
                         "CPU%d net load %.0f%% not from queue IRQs; %s receives %.0f packets/s and %s: its NAPI polling "
                         "into kernel threads on cool CPUs, on trial",
                         cpu, 100 * t->net[cpu], n->name, pps, x->rps ? "its RPS trial failed" : "rps = no");
                rec->thr_orig = n->threaded;
                threaded_emit(t, n, 0, 1, ACTION_REASON_SOFTIRQ_HOT, why);
                pol_trial_start(&rec->thr_trial, rec);
                rec->thr_gone_ticks = 0;
                pol_settle(t, cpu);
                started = true;
        }
}

void pol_napi(struct pol_tick *t) {
        struct policy_state *st = t->st;

        for (size_t i = 0; i < st->n_napis; i++)
                st->napis[i].seen = false;
        if (t->in->load)
                threaded_relief(t);
        for (size_t ni = 0; ni < t->inv->n_nics; ni++)
                if (t->nics[ni].managed && t->inv->nics[ni].n_napis > 0 &&
                    (t->c->napi_threads || (t->nics[ni].rec && t->nics[ni].rec->thr_ours)))
                        place_nic(t, ni);
        /* threads gone from the inventory (threaded off, device gone) */
        for (size_t i = 0; i < st->n_napis;)
                if (!st->napis[i].seen)
                        st->napis[i] = st->napis[--st->n_napis];
                else
                        i++;
}
