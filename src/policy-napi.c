/* Policy, threaded NAPI (napi_threads in irqsteer.conf(5)): with
 * /sys/class/net/DEV/threaded on, a queue's receive polling runs in a
 * kernel thread napi/DEV-ID instead of NET_RX softirq on the CPU the IRQ
 * fired on, and that thread goes wherever the scheduler puts it: moving
 * the IRQ no longer moves the work.  So the threads are placed like the
 * IRQs, with the same rules:
 *   - a NAPI whose queue has an IRQ we place: its thread on that IRQ's
 *     CPU (after this tick's moves), so the poll stays cache-local to the
 *     interrupt that wakes it;
 *   - a NAPI without one (veth registers no IRQ; 6.18): one CPU per
 *     thread, the coolest eligible CPUs the interface may use, and off a
 *     hot CPU to the coolest one after the dwell (min_dwell), one such
 *     move per NIC and tick.
 * Never onto a banned, isolated or nohz_full CPU (the tick's eligible
 * set, narrowed by the interface section).  A thread is named by its PID
 * and start time (a reused PID is another thread); napi kthreads accept
 * sched_setaffinity (no PF_NO_SETAFFINITY; checked on 6.18), and one that
 * refuses is left alone for good by the feedback.  The undo journal gives
 * each thread its original mask back on exit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "policy-internal.h"

static struct pol_napi *napi_get(struct policy_state *st, pid_t pid, unsigned long long starttime, bool create) {
        struct pol_napi *r;

        for (size_t i = 0; i < st->n_napis; i++)
                if (st->napis[i].pid == pid && st->napis[i].starttime == starttime)
                        return &st->napis[i];
        if (!create || util_grow((void **) &st->napis, &st->a_napis, st->n_napis + 1, sizeof(*st->napis)) < 0)
                return NULL;
        r = &st->napis[st->n_napis++];
        *r = (struct pol_napi){ .pid = pid, .starttime = starttime, .cpu = -1 };
        return r;
}

bool pol_napi_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec) {
        struct pol_napi *r;
        enum action_failure f;

        if (a->type != ACTION_THREAD_AFFINITY || a->pid != a->tid)
                return false;
        r = napi_get(st, a->pid, a->starttime, false);
        if (!r)
                return false;
        f = action_failure_class(a->type, result);
        switch (f) {
        case ACTION_FAIL_NONE:
                if (r->set && r->cpu != cpuset_first(&a->cpus))
                        r->move_usec = now_usec;
                r->set = true;
                r->cpu = cpuset_first(&a->cpus);
                r->failures = 0;
                break;
        case ACTION_FAIL_GONE:
                /* threaded turned off, or the device went: forgotten */
                *r = st->napis[--st->n_napis];
                break;
        case ACTION_FAIL_PERMANENT:
                r->broken = true;
                break;
        case ACTION_FAIL_TRANSIENT:
                break;
        default:
                if (action_failure_counts(f) && ++r->failures >= ACTION_MAX_FAILURES)
                        r->broken = true;
                break;
        }
        return true;
}

/* The CPU of the IRQ of the queue napi polls, after this tick's actions;
 * -1 when no queue of ours names it. */
static int napi_irq_cpu(const struct pol_tick *t, size_t ni, uint32_t napi_id) {
        const struct pol_nicctx *x = &t->nics[ni];
        const struct inv_nic *n = x->nic;

        for (size_t k = 0; k < x->n_units; k++) {
                const struct pol_unit *u = &t->units[x->first_unit + k];

                if (u->qi < n->n_queues && n->queues[u->qi].napi_id == napi_id && u->target >= 0)
                        return u->target;
        }
        return -1;
}

/* The coolest CPU of cpus (projected load), preferring those not in
 * avoid; -1 when cpus is empty. */
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

static void emit(struct pol_tick *t, const struct inv_nic *n, const struct inv_napi *np, const struct pol_napi *r,
                 int cpu, const char *why) {
        struct action *a = pol_add(t, ACTION_THREAD_AFFINITY);

        if (!a)
                return;
        a->pid = a->tid = np->pid;
        a->starttime = np->starttime;
        a->cpus = cpuset_single(cpu);
        if (r->set && r->cpu >= 0)
                a->from = cpuset_single(r->cpu);
        snprintf(a->nic, sizeof(a->nic), "%s", n->name);
        snprintf(a->reason, sizeof(a->reason), "NAPI %u of %s (kthread napi/%s-%u, pid %d) %s", np->id, n->name,
                 n->name, np->id, (int) np->pid, why);
}

static void place_nic(struct pol_tick *t, size_t ni) {
        const struct pol_nicctx *x = &t->nics[ni];
        const struct inv_nic *n = x->nic;
        cpuset_t cpus, taken;
        bool moved = false;

        cpuset_and(&cpus, &x->allowed, &t->eligible);
        cpuset_zero(&taken);
        /* first the threads that stay: their CPUs are taken */
        for (size_t k = 0; k < n->n_napis; k++) {
                const struct pol_napi *r = napi_get(t->st, n->napis[k].pid, n->napis[k].starttime, false);

                if (r && r->set && r->cpu >= 0 && cpuset_isset(&cpus, r->cpu))
                        cpuset_set(&taken, r->cpu);
        }
        for (size_t k = 0; k < n->n_napis; k++) {
                const struct inv_napi *np = &n->napis[k];
                struct pol_napi *r;
                char why[128];
                int irq_cpu, to;

                if (np->pid <= 0 || np->starttime == 0)
                        continue;
                r = napi_get(t->st, np->pid, np->starttime, true);
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
                        emit(t, n, np, r, irq_cpu, why);
                        continue;
                }
                if (cpuset_empty(&cpus))
                        continue;
                if (r->set && r->cpu >= 0 && cpuset_isset(&cpus, r->cpu)) {
                        /* placed: moves only off a hot CPU, after the dwell */
                        if (!cpuset_isset(&t->hot, r->cpu) || moved ||
                            t->now < r->move_usec + t->c->min_dwell_usec || pol_settling(t, r->cpu))
                                continue;
                        to = coolest(t, &cpus, &taken);
                        if (to < 0 || to == r->cpu || cpuset_isset(&t->hot, to) ||
                            pol_load(t, r->cpu) - pol_load(t, to) < pol_min_gain(t))
                                continue;
                        snprintf(why, sizeof(why), "off hot CPU%d (%.0f%%) to CPU%d (%.0f%%)", r->cpu,
                                 100 * pol_load(t, r->cpu), to, 100 * pol_load(t, to));
                        moved = true;
                        pol_settle(t, r->cpu);
                        pol_settle(t, to);
                } else {
                        to = coolest(t, &cpus, &taken);
                        if (to < 0)
                                continue;
                        if (r->set && r->cpu >= 0)
                                snprintf(why, sizeof(why), "off CPU%d, no longer eligible, to CPU%d", r->cpu, to);
                        else
                                snprintf(why, sizeof(why), "to CPU%d, the coolest eligible CPU free of its NIC's threads", to);
                }
                cpuset_set(&taken, to);
                emit(t, n, np, r, to, why);
        }
}

void pol_napi(struct pol_tick *t) {
        struct policy_state *st = t->st;

        for (size_t i = 0; i < st->n_napis; i++)
                st->napis[i].seen = false;
        if (t->c->napi_threads)
                for (size_t ni = 0; ni < t->inv->n_nics; ni++)
                        if (t->nics[ni].managed && t->inv->nics[ni].n_napis > 0)
                                place_nic(t, ni);
        /* threads gone from the inventory (threaded off, device gone) */
        for (size_t i = 0; i < st->n_napis;) {
                if (!st->napis[i].seen)
                        st->napis[i] = st->napis[--st->n_napis];
                else
                        i++;
        }
}
