/* Policy records, the bottom layer: calls nothing of the policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-records.h"

static void irq_done(struct pol_irq *r) {
        cpuset_kept_free(&r->last_set);
        cpuset_kept_free(&r->enospc);
}

static void queue_done(struct pol_queue *q) {
        cpuset_kept_free(&q->rps_orig);
        cpuset_kept_free(&q->rps_last);
        cpuset_kept_free(&q->xps_last);
        cpuset_kept_free(&q->xps_orig);
}

struct policy_state *policy_state_new(void) {
        return calloc(1, sizeof(struct policy_state));
}

void policy_state_free(struct policy_state *st) {
        if (!st)
                return;
        free(st->cpus);
        for (size_t i = 0; i < st->n_irqs; i++)
                irq_done(&st->irqs[i]);
        free(st->irqs);
        free(st->irq_index.slot);
        for (size_t i = 0; i < st->n_queues; i++)
                queue_done(&st->queues[i]);
        free(st->queues);
        free(st->queue_index.slot);
        free(st->nics);
        free(st->threads);
        free(st->napis);
        free(st->cursors);
        free(st->moves);
        free(st->notes);
        free(st);
}

static uint32_t hash_irq(unsigned irq) {
        /* Fibonacci hashing: IRQ numbers come in dense runs */
        return (uint32_t) ((irq * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

static uint32_t hash_queue(const char *nic, int index) {
        uint32_t h = 2166136261u; /* FNV-1a */

        for (const char *p = nic; *p; p++)
                h = (h ^ (unsigned char) *p) * 16777619u;
        return hash_irq(h ^ (uint32_t) index);
}

/* Puts position pos (hash h) into a table with a free slot. */
static void index_put(struct pol_index *ix, uint32_t h, size_t pos) {
        size_t m = ix->cap - 1, i = h & m;

        while (ix->slot[i])
                i = (i + 1) & m;
        ix->slot[i] = (uint32_t) pos + 1;
}

/* The IRQ or queue index ready for lookups with room for one more record,
 * rebuilt when stale or small; false on ENOMEM (then searched linearly). */
static bool index_ready(const struct policy_state *st, struct pol_index *ix) {
        bool irqs = ix == &st->irq_index;
        size_t cap = ix->cap ? ix->cap : 64, n = irqs ? st->n_irqs : st->n_queues;

        if (!ix->stale && ix->cap >= 2 * (n + 1))
                return true;
        while (cap < 2 * (n + 1))
                cap *= 2;
        if (cap != ix->cap) {
                uint32_t *v = calloc(cap, sizeof(*v));
                if (!v)
                        return false;
                free(ix->slot);
                ix->slot = v;
                ix->cap = cap;
        } else
                memset(ix->slot, 0, cap * sizeof(*ix->slot));
        for (size_t i = 0; i < n; i++)
                index_put(ix, irqs ? hash_irq(st->irqs[i].irq) : hash_queue(st->queues[i].nic, st->queues[i].index), i);
        ix->stale = false;
        return true;
}

struct pol_irq *pol_irq_get(struct policy_state *st, unsigned irq, bool create) {
        struct pol_index *ix = &st->irq_index;
        uint32_t h = hash_irq(irq);
        bool indexed = index_ready(st, ix);
        struct pol_irq *r;

        if (indexed) {
                for (size_t i = h & (ix->cap - 1); ix->slot[i]; i = (i + 1) & (ix->cap - 1))
                        if (st->irqs[ix->slot[i] - 1].irq == irq)
                                return &st->irqs[ix->slot[i] - 1];
        } else
                for (size_t i = 0; i < st->n_irqs; i++)
                        if (st->irqs[i].irq == irq)
                                return &st->irqs[i];
        if (!create || util_grow((void **) &st->irqs, &st->a_irqs, st->n_irqs + 1, sizeof(*st->irqs)) < 0)
                return NULL;
        if (indexed)
                index_put(ix, h, st->n_irqs);
        r = &st->irqs[st->n_irqs++];
        *r = (struct pol_irq){ .irq = irq, .prev_cpu = -1 };
        return r;
}

struct pol_queue *pol_queue_get(struct policy_state *st, const char *nic, int index, bool create) {
        struct pol_index *ix = &st->queue_index;
        uint32_t h = hash_queue(nic, index);
        bool indexed = index_ready(st, ix);
        struct pol_queue *q;

        if (indexed) {
                for (size_t i = h & (ix->cap - 1); ix->slot[i]; i = (i + 1) & (ix->cap - 1)) {
                        q = &st->queues[ix->slot[i] - 1];
                        if (q->index == index && strcmp(q->nic, nic) == 0)
                                return q;
                }
        } else
                for (size_t i = 0; i < st->n_queues; i++)
                        if (st->queues[i].index == index && strcmp(st->queues[i].nic, nic) == 0)
                                return &st->queues[i];
        if (!create || util_grow((void **) &st->queues, &st->a_queues, st->n_queues + 1, sizeof(*st->queues)) < 0)
                return NULL;
        q = &st->queues[st->n_queues];
        *q = (struct pol_queue){ .index = index };
        snprintf(q->nic, sizeof(q->nic), "%s", nic);
        /* the stored name may be truncated: hash what is stored */
        if (indexed)
                index_put(ix, hash_queue(q->nic, index), st->n_queues);
        st->n_queues++;
        return q;
}

struct pol_thread *pol_thread_get(struct policy_state *st, pid_t pid, pid_t tid, bool create) {
        struct pol_thread *th;

        for (size_t i = 0; i < st->n_threads; i++)
                if (st->threads[i].tid == tid && st->threads[i].pid == pid)
                        return &st->threads[i];
        if (!create || util_grow((void **) &st->threads, &st->a_threads, st->n_threads + 1, sizeof(*st->threads)) < 0)
                return NULL;
        th = &st->threads[st->n_threads++];
        *th = (struct pol_thread){ .pid = pid, .tid = tid };
        return th;
}

struct pol_napi *pol_napi_get(struct policy_state *st, pid_t pid, unsigned long long starttime, bool create) {
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

struct pol_nic *pol_nic_get(struct policy_state *st, const char *name, bool create) {
        struct pol_nic *n;

        for (size_t i = 0; i < st->n_nics; i++)
                if (strcmp(st->nics[i].name, name) == 0)
                        return &st->nics[i];
        if (!create || util_grow((void **) &st->nics, &st->a_nics, st->n_nics + 1, sizeof(*st->nics)) < 0)
                return NULL;
        n = &st->nics[st->n_nics++];
        *n = (struct pol_nic){ 0 };
        snprintf(n->name, sizeof(n->name), "%s", name);
        return n;
}

void pol_irq_drop(struct policy_state *st, struct pol_irq *r) {
        irq_done(r);
        *r = st->irqs[--st->n_irqs];
        st->irq_index.stale = true;
}

void pol_queue_drop(struct policy_state *st, struct pol_queue *q) {
        queue_done(q);
        *q = st->queues[--st->n_queues];
        st->queue_index.stale = true;
}

bool pol_rps_ours(struct policy_state *st, const struct inventory_nic *n, const struct inventory_queue *iq) {
        const struct pol_queue *q = pol_queue_get(st, n->name, iq->index, false);

        return q && iq->has_rps && q->rps_set && !q->rps_external && cpuset_kept_same(&q->rps_last, &iq->rps_cpus) &&
               !cpuset_kept_same(&q->rps_orig, &iq->rps_cpus);
}

void policy_forget_nic(struct policy_state *st, const char *nic) {
        struct pol_nic *n;

        if (!st || !nic)
                return;
        n = pol_nic_get(st, nic, false);
        if (n)
                n->laid_out = false;
        /* values still ours are kept, the others placed again; managed stays */
        for (size_t i = 0; i < st->n_irqs; i++) {
                struct pol_irq *r = &st->irqs[i];
                if (strcmp(r->nic, nic) != 0)
                        continue;
                r->resync = true;
                r->external = false;
                r->failures = 0;
                cpuset_kept_free(&r->enospc);
        }
        for (size_t i = 0; i < st->n_queues; i++) {
                struct pol_queue *q = &st->queues[i];
                if (strcmp(q->nic, nic) != 0)
                        continue;
                q->resync = true;
                q->rps_external = q->xps_external = q->flow_external = false;
                q->failures = 0;
        }
}

void policy_reset(struct policy_state *st) {
        if (!st)
                return;
        /* the administrator's values become the baseline; managed stays */
        for (size_t i = 0; i < st->n_irqs; i++) {
                struct pol_irq *r = &st->irqs[i];
                r->set &= !r->external;
                r->external = false;
                r->failures = 0;
        }
        for (size_t i = 0; i < st->n_queues; i++) {
                struct pol_queue *q = &st->queues[i];
                q->rps_set &= !q->rps_external;
                q->xps_set &= !q->xps_external;
                q->flow_set &= !q->flow_external;
                q->rps_external = q->xps_external = q->flow_external = false;
                q->rps_broken = q->xps_broken = q->flow_broken = false;
                q->failures = 0;
        }
        for (size_t i = 0; i < st->n_threads; i++) {
                struct pol_thread *th = &st->threads[i];
                th->set &= !th->external;
                th->external = th->broken = false;
                th->failures = 0;
        }
        st->sock_flow_done = false;
        if (st->defaff_external) {
                /* the administrator's value becomes the one to give back */
                st->defaff_set = false;
                st->defaff_orig_known = false;
        }
        st->defaff_external = st->defaff_broken = false;
}
