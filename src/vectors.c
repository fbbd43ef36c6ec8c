/* Interrupt vectors per CPU (vectors.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "vectors.h"

int vectors_irq_cpu(const struct inventory_irq *irq) {
        int cpu = irq->affinity_readable ? cpuset_kept_only(&irq->affinity) : -1;

        /* a single CPU is where it fires; the inventory reads the
         * effective CPU only of a wider mask */
        if (cpu < 0 && irq->has_effective)
                cpu = cpuset_kept_first(&irq->effective);
        if (cpu < 0 && irq->affinity_readable)
                cpu = cpuset_kept_first(&irq->affinity);
        return cpu;
}

int vectors_count(struct vectors *v, const struct inventory *inv, int max_cpu) {
        size_t n = max_cpu >= 0 ? (size_t) max_cpu + 1 : 0;
        unsigned *used, *limit;

        if (!v || max_cpu < -1)
                return -EINVAL;
        used = calloc(MAX(n, (size_t) 1), sizeof(*used));
        limit = malloc(MAX(n, (size_t) 1) * sizeof(*limit));
        if (!used || !limit) {
                free(used);
                free(limit);
                return -ENOMEM;
        }
        for (size_t c = 0; c < n; c++)
                limit[c] = v->limit && (int) c <= v->max_cpu ? v->limit[c] : VECTORS_PER_CPU;
        for (size_t i = 0; inv && i < inv->n_irqs; i++) {
                int cpu = vectors_irq_cpu(&inv->irqs[i]);

                if (cpu >= 0 && cpu <= max_cpu)
                        used[cpu]++;
        }
        free(v->used);
        free(v->limit);
        *v = (struct vectors) { .max_cpu = max_cpu, .used = used, .limit = limit };
        return 0;
}

unsigned vectors_used(const struct vectors *v, int cpu) {
        return v && v->used && cpu >= 0 && cpu <= v->max_cpu ? v->used[cpu] : 0;
}

unsigned vectors_left(const struct vectors *v, int cpu) {
        if (!v || !v->used || cpu < 0 || cpu > v->max_cpu || v->used[cpu] >= v->limit[cpu])
                return 0;
        return v->limit[cpu] - v->used[cpu];
}

bool vectors_room(const struct vectors *v, int cpu) {
        return vectors_left(v, cpu) > 0;
}

int vectors_pick(const struct vectors *v, const cpuset_t *mask, int here) {
        int best = -1;

        if (here >= 0 && here < CPUSET_MAX && cpuset_isset(mask, here))
                return here;
        CPUSET_FOREACH(cpu, mask)
                if (vectors_left(v, cpu) > vectors_left(v, best))
                        best = cpu;
        return best;
}

void vectors_move(struct vectors *v, int from, int to) {
        if (!v || !v->used)
                return;
        if (from >= 0 && from <= v->max_cpu && v->used[from] > 0)
                v->used[from]--;
        if (to >= 0 && to <= v->max_cpu)
                v->used[to]++;
}

void vectors_full(struct vectors *v, int cpu) {
        if (v && v->used && cpu >= 0 && cpu <= v->max_cpu)
                v->limit[cpu] = MIN(v->limit[cpu], v->used[cpu]);
}

int vectors_copy(struct vectors *ret, const struct vectors *src) {
        size_t n = src->used && src->max_cpu >= 0 ? (size_t) src->max_cpu + 1 : 0;

        *ret = (struct vectors) { .max_cpu = src->max_cpu };
        if (n == 0)
                return 0;
        ret->used = malloc(n * sizeof(*ret->used));
        ret->limit = malloc(n * sizeof(*ret->limit));
        if (!ret->used || !ret->limit) {
                vectors_free(ret);
                return -ENOMEM;
        }
        memcpy(ret->used, src->used, n * sizeof(*ret->used));
        memcpy(ret->limit, src->limit, n * sizeof(*ret->limit));
        return 0;
}

void vectors_free(struct vectors *v) {
        if (!v)
                return;
        free(v->used);
        free(v->limit);
        *v = (struct vectors) { .max_cpu = -1 };
}
