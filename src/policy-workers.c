/* Policy, workers (docs/DESIGN.md "Policy"): threads of the [worker]
 * sections pinned by their policy, spread (one CPU each, off hot and queue
 * IRQ CPUs), colocate (with the queues' IRQs) or avoid-net (off queue IRQ
 * CPUs).  Only threads off target get an action. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

#include "policy-steps.h"

struct wthread {
        const struct worker_proc *p;
        const struct worker_thread *th;
        bool skip;
        int cpu;                 /* spread's target, -1 none */
};

/* External change check; false if the thread must be left alone. */
static bool check_thread(struct pol_tick *t, const struct worker_proc *p, const struct worker_thread *th) {
        struct pol_thread *r = pol_thread_get(t->st, p->pid, th->tid, true);
        char was[64], now[64];

        if (!r) {
                t->r = -ENOMEM;
                return false;
        }
        r->seen = true;
        if (r->broken || r->external)
                return false;
        if (!r->set || cpuset_equal(&th->allowed, &r->last_set))
                return true;
        if (!cpuset_intersects(&r->last_set, &t->topo->online)) {
                /* its CPUs went offline: the kernel widened its mask */
                r->set = false;
                return true;
        }
        r->external = true;
        pol_note(t, LOG_NOTICE,
                 "thread %d of %s (pid %d) was re-pinned by someone else (CPUs %s -> %s); leaving it alone until reload",
                 (int) th->tid, p->comm, (int) p->pid, pol_fmt_cpus(&r->last_set, was, sizeof(was)),
                 pol_fmt_cpus(&th->allowed, now, sizeof(now)));
        return false;
}

static void emit_thread(struct pol_tick *t, const struct wthread *w, cpuset_t to, enum action_reason code,
                        const char *reason) {
        struct action *a;

        if (cpuset_equal(&w->th->allowed, &to))
                return;
        a = pol_add(t, KNOB_THREAD);
        if (!a)
                return;
        a->pid = w->p->pid;
        a->tid = w->th->tid;
        a->starttime = w->th->starttime;
        pol_set_cpus(t, a, &to, &w->th->allowed);
        action_set_reason(a, code, "%s", reason);
}

/* One CPU per thread: a thread keeps its CPU up to a fair share, the rest
 * go to the emptiest, so placements stay put as threads come and go.  cand
 * is not empty (spread_default). */
static void spread(struct pol_tick *t, struct wthread *v, size_t n, const cpuset_t *cand, const char *why,
                   const char *name) {
        int n_cand = cpuset_count(cand), fair = 0;
        _cleanup_(freep) unsigned *count = calloc(t->max_cpu + 1, sizeof(unsigned));
        char list[128], reason[256];

        if (!count) {
                t->r = -ENOMEM;
                return;
        }
        for (size_t i = 0; i < n; i++)
                fair += !v[i].skip;
        fair = (fair + n_cand - 1) / n_cand;
        snprintf(reason, sizeof(reason), "worker %s: spread, one CPU per thread over CPUs %s (%s)", name,
                 pol_fmt_cpus(cand, list, sizeof(list)), why);
        for (size_t i = 0; i < n; i++) {
                int c = cpuset_first(&v[i].th->allowed);
                if (v[i].skip || cpuset_count(&v[i].th->allowed) != 1 || !cpuset_isset(cand, c) ||
                    (int) count[c] >= fair)
                        continue;
                v[i].cpu = c;
                count[c]++;
        }
        for (size_t i = 0; i < n; i++) {
                if (v[i].skip)
                        continue;
                if (v[i].cpu < 0) {
                        CPUSET_FOREACH(c, cand)
                                if (v[i].cpu < 0 || count[c] < count[v[i].cpu])
                                        v[i].cpu = c;
                        count[v[i].cpu]++;
                }
                emit_thread(t, &v[i], cpuset_single(v[i].cpu), ACTION_REASON_WORKER_SPREAD, reason);
        }
}

static void spread_default(struct pol_tick *t, struct wthread *v, size_t n, const cpuset_t *base,
                           const cpuset_t *net, const char *name) {
        cpuset_t cool, quiet;

        cpuset_andnot(&cool, base, &t->hot);
        cpuset_andnot(&quiet, &cool, net);
        if (!cpuset_empty(&quiet))
                spread(t, v, n, &quiet, "not hot, serving no queue IRQ", name);
        else if (!cpuset_empty(&cool))
                spread(t, v, n, &cool, "not hot", name);
        else
                spread(t, v, n, base, "every allowed CPU is hot", name);
}

/* The configured NIC, else the busiest managed one with queue IRQs. */
static const struct pol_nicctx *colocate_nic(const struct pol_tick *t, const struct config_worker *cw) {
        const struct pol_nicctx *best = NULL;
        double best_w = -1;

        for (size_t i = 0; i < t->inv->n_nics; i++) {
                const struct pol_nicctx *x = &t->nics[i];
                double w = 0;

                if (!x->managed || x->n_units == 0)
                        continue;
                if (cw->interface) {
                        if (fnmatch(cw->interface, x->nic->name, 0) == 0)
                                return x;
                        continue;
                }
                for (size_t k = 0; k < x->n_units; k++)
                        w += t->units[x->first_unit + k].total;
                if (!best || w > best_w + 1e-9 || (w > best_w - 1e-9 && x->n_units > best->n_units)) {
                        best = x;
                        best_w = w;
                }
        }
        return best;
}

static void colocate(struct pol_tick *t, struct wthread *v, size_t n, const cpuset_t *base, const cpuset_t *net,
                     const struct config_worker *cw) {
        const struct pol_nicctx *x = colocate_nic(t, cw);
        _cleanup_(freep) const struct pol_unit **qs = NULL;
        size_t nq = 0, k = 0;
        char reason[256];

        qs = x ? calloc(x->n_units, sizeof(*qs)) : NULL;
        if (x && !qs) {
                t->r = -ENOMEM;
                return;
        }
        for (size_t i = 0; x && i < x->n_units; i++) {
                const struct pol_unit *u = &t->units[x->first_unit + i];
                if (u->target >= 0 && cpuset_isset(base, u->target))
                        qs[nq++] = u;
        }
        if (nq == 0) {
                /* no queue on an allowed CPU: spread instead */
                spread_default(t, v, n, base, net, cw->name);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const struct pol_unit *u = qs[k % nq];

                if (v[i].skip)
                        continue;
                k++;
                snprintf(reason, sizeof(reason), "worker %s: colocate with %s queue %d (IRQ %u on CPU%d)", cw->name,
                         x->nic->name, u->queue, u->irq[0], u->target);
                emit_thread(t, &v[i], cpuset_single(u->target), ACTION_REASON_WORKER_COLOCATE, reason);
        }
}

void pol_workers(struct pol_tick *t) {
        const struct worker_set *ws = t->in->workers;
        struct policy_state *st = t->st;
        _cleanup_(freep) struct wthread *v = NULL;
        size_t a_v = 0;
        cpuset_t net;

        for (size_t i = 0; i < st->n_threads; i++)
                st->threads[i].seen = false;

        cpuset_zero(&net);
        for (size_t i = 0; i < t->n_units; i++)
                if (t->units[i].target >= 0)
                        cpuset_set(&net, t->units[i].target);

        for (size_t w = 0; ws && w < t->c->n_workers; w++) {
                const struct config_worker *cw = &t->c->workers[w];
                cpuset_t base, to;
                size_t n = 0;
                char list[128], reason[256];

                for (size_t i = 0; i < ws->n_procs; i++) {
                        const struct worker_proc *p = &ws->procs[i];
                        if (p->worker != (int) w)
                                continue;
                        for (size_t j = 0; j < p->n_threads; j++) {
                                if (util_grow((void **) &v, &a_v, n + 1, sizeof(*v)) < 0) {
                                        t->r = -ENOMEM;
                                        goto out;
                                }
                                v[n] = (struct wthread){ .p = p, .th = &p->threads[j], .cpu = -1 };
                                v[n].skip = !check_thread(t, p, &p->threads[j]);
                                n++;
                        }
                }
                if (n == 0)
                        continue;
                base = t->eligible;
                if (!cpuset_empty(&cw->cpus))
                        cpuset_and(&base, &base, &cw->cpus);
                if (cpuset_empty(&base))
                        continue;

                switch (cw->policy) {
                case WORKER_SPREAD:
                        spread_default(t, v, n, &base, &net, cw->name);
                        break;
                case WORKER_COLOCATE:
                        colocate(t, v, n, &base, &net, cw);
                        break;
                case WORKER_AVOID_NET:
                        cpuset_andnot(&to, &base, &net);
                        if (cpuset_empty(&to))
                                to = base;
                        snprintf(reason, sizeof(reason), "worker %s: avoid-net, CPUs %s serve no queue IRQ%s", cw->name,
                                 pol_fmt_cpus(&to, list, sizeof(list)),
                                 cpuset_equal(&to, &base) && cpuset_intersects(&base, &net) ? " (none free: all allowed)" : "");
                        for (size_t i = 0; i < n; i++)
                                if (!v[i].skip)
                                        emit_thread(t, &v[i], to, ACTION_REASON_WORKER_AVOID_NET, reason);
                        break;
                default:
                        break;
                }
        }
out:
        for (size_t i = 0; i < st->n_threads;)
                if (!st->threads[i].seen)
                        st->threads[i] = st->threads[--st->n_threads];
                else
                        i++;
}
