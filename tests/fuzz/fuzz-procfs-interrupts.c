/* /proc/interrupts: procfs_interrupts_parse() on any input fails with a
 * documented error or gives a reading whose invariants hold: CPU columns
 * ascending, every row found by number, each row's nonzero counts in
 * ascending columns within the header, and its total their sum (or
 * UINT64_MAX when it saturates). */
#include <errno.h>

#include "cpuset.h"
#include "fuzz.h"
#include "procfs.h"

FUZZ_QUIET_LOG()

static void check_valid(const struct procfs_interrupts *s) {
        for (size_t i = 0; i < s->n_cpus; i++) {
                FUZZ_CHECK(s->cpus[i] >= 0 && s->cpus[i] < CPUSET_MAX);
                FUZZ_CHECK(i == 0 || s->cpus[i] > s->cpus[i - 1]);
                FUZZ_CHECK(procfs_interrupts_column(s, s->cpus[i]) == (int) i);
        }
        for (size_t i = 0; i < s->n_irqs; i++) {
                const struct procfs_irq *q = &s->irqs[i];
                uint64_t sum = 0;
                bool sat = false;

                FUZZ_CHECK(q->id && q->name);
                FUZZ_CHECK(strlen(q->id) < PROCFS_IRQ_ID_SIZE && strlen(q->name) < PROCFS_IRQ_NAME_SIZE);
                if (q->numeric)
                        FUZZ_CHECK(procfs_interrupts_find(s, q->irq) == q);
                FUZZ_CHECK(q->n_nz <= s->n_cpus);
                for (size_t k = 0; k < q->n_nz; k++) {
                        FUZZ_CHECK(q->nz_cols[k] < s->n_cpus);
                        FUZZ_CHECK(k == 0 || q->nz_cols[k] > q->nz_cols[k - 1]);
                        FUZZ_CHECK(q->nz_counts[k] > 0);
                        sat = sat || __builtin_add_overflow(sum, q->nz_counts[k], &sum);
                }
                FUZZ_CHECK(q->total == (sat ? UINT64_MAX : sum));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* an exact-size heap copy, so ASan sees any read past size */
        char *text = malloc(size ? size : 1);
        struct procfs_interrupts s;
        int r;

        memcpy(text, data, size);
        r = procfs_interrupts_parse(text, size, &s);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ERANGE || r == -ENOMEM);
        if (r == 0)
                check_valid(&s);
        procfs_interrupts_free(&s);
        free(text);
        return 0;
}
