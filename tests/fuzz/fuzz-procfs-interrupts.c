/* /proc/interrupts: the full parse (procfs_interrupts_parse) and the delta
 * parse (procfs_interrupts_parse_delta), which must give the same result
 * for any input whatever the earlier reading it is compared with.
 *
 * The input is two readings, "PREV\n%%\nCUR", or one reading PREV, from
 * which CUR is made by changing some of its digits (the common case: the
 * same rows with new counts).  Checked: full(CUR) == delta(CUR, full(PREV)),
 * then, as the daemon chains them (freeing each reading before the one
 * after next is parsed), full(PREV) == delta(PREV, that delta result) and
 * so on; PREV against itself; and the columns a delta result says did not
 * change equal the base's. */
#include <errno.h>

#include "cpuset.h"
#include "fuzz.h"
#include "procfs.h"

FUZZ_QUIET_LOG()

static const char marker[] = "\n%%\n";

static void check_valid(const struct procfs_interrupts *s) {
        for (size_t i = 0; i < s->n_cpus; i++) {
                FUZZ_CHECK(s->cpus[i] >= 0 && s->cpus[i] < CPUSET_MAX);
                FUZZ_CHECK(i == 0 || s->cpus[i] > s->cpus[i - 1]);
                FUZZ_CHECK(procfs_interrupts_column(s, s->cpus[i]) == (int) i);
        }
        for (size_t i = 0; i < s->n_irqs; i++) {
                const struct procfs_irq *q = &s->irqs[i];

                FUZZ_CHECK(memchr(q->id, 0, sizeof(q->id)) && memchr(q->chip, 0, sizeof(q->chip)) &&
                           memchr(q->hwirq, 0, sizeof(q->hwirq)) && memchr(q->name, 0, sizeof(q->name)));
                if (q->numeric)
                        FUZZ_CHECK(procfs_interrupts_find(s, q->irq) == q);
        }
}

static void check_equal(const struct procfs_interrupts *a, const struct procfs_interrupts *b) {
        FUZZ_CHECK(a->n_cpus == b->n_cpus);
        FUZZ_CHECK(a->n_cpus == 0 || memcmp(a->cpus, b->cpus, a->n_cpus * sizeof(*a->cpus)) == 0);
        FUZZ_CHECK(a->n_irqs == b->n_irqs);
        FUZZ_CHECK(a->n_numeric == b->n_numeric);
        for (size_t i = 0; i < a->n_irqs; i++) {
                const struct procfs_irq *x = &a->irqs[i], *y = &b->irqs[i];

                FUZZ_CHECK(strcmp(x->id, y->id) == 0);
                FUZZ_CHECK(x->numeric == y->numeric);
                FUZZ_CHECK(!x->numeric || x->irq == y->irq);
                FUZZ_CHECK(x->total == y->total);
                FUZZ_CHECK(strcmp(x->chip, y->chip) == 0);
                FUZZ_CHECK(strcmp(x->hwirq, y->hwirq) == 0);
                FUZZ_CHECK(strcmp(x->name, y->name) == 0);
                FUZZ_CHECK(a->n_cpus == 0 || memcmp(x->counts, y->counts, a->n_cpus * sizeof(uint64_t)) == 0);
        }
}

/* What procfs_interrupts_row_changes() promises of a delta result d
 * against its base. */
static void check_row_changes(const struct procfs_interrupts *d, const struct procfs_interrupts *base) {
        for (size_t row = 0; row < d->n_irqs; row++) {
                size_t b = d->layout[row].base_row, lo, hi;

                if (b == SIZE_MAX || !procfs_interrupts_row_changes(d, base, row, b, &lo, &hi))
                        continue;
                FUZZ_CHECK(b < base->n_irqs && d->n_cpus == base->n_cpus);
                for (size_t col = 0; col < d->n_cpus; col++)
                        if (lo > hi || col < lo || col > hi)
                                FUZZ_CHECK(d->irqs[row].counts[col] == base->irqs[b].counts[col]);
        }
}

/* full(text) and delta(text, base) agree, both on the result and on
 * failing; returns the delta result (or an empty one) for chaining. */
static void parse_both(const char *text, size_t len, const struct procfs_interrupts *base,
                       struct procfs_interrupts *ret_delta) {
        struct procfs_interrupts full;
        int r, rd;

        r = procfs_interrupts_parse(text, len, &full);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ERANGE || r == -ENOMEM);
        rd = procfs_interrupts_parse_delta(text, len, base, ret_delta);
        FUZZ_CHECK(r == rd);
        if (r == 0) {
                check_valid(&full);
                check_valid(ret_delta);
                check_equal(&full, ret_delta);
                if (base)
                        check_row_changes(ret_delta, base);
        }
        procfs_interrupts_free(&full);
}

/* An exact-size heap copy, so ASan sees any read past len. */
static char *copy(const uint8_t *p, size_t n) {
        char *b = malloc(n ? n : 1);

        memcpy(b, p, n);
        return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *m = memmem(data, size, marker, sizeof(marker) - 1);
        size_t prev_len = m ? (size_t) (m - data) + 1 : size;
        char *prev = copy(data, prev_len), *cur;
        size_t cur_len;
        struct procfs_interrupts p, same, d1, d2, d3, d4;

        if (m) {
                size_t off = prev_len + sizeof(marker) - 2;
                cur_len = size - off;
                cur = copy(data + off, cur_len);
        } else {
                /* every fifth digit changed, a different one each time */
                cur_len = prev_len;
                cur = copy(data, cur_len);
                for (size_t i = 0, k = 0; i < cur_len; i++)
                        if (cur[i] >= '0' && cur[i] <= '9' && k++ % 5 == 0)
                                cur[i] = (char) ('0' + (cur[i] - '0' + 1 + i % 9) % 10);
        }

        parse_both(prev, prev_len, NULL, &p);
        parse_both(prev, prev_len, &p, &same);
        parse_both(cur, cur_len, &p, &d1);
        /* freed as the daemon frees them: d2 may take p's counts over,
         * d3 d1's, d4 d2's */
        procfs_interrupts_free(&same);
        procfs_interrupts_free(&p);
        parse_both(prev, prev_len, &d1, &d2);
        procfs_interrupts_free(&d1);
        parse_both(cur, cur_len, &d2, &d3);
        procfs_interrupts_free(&d2);
        parse_both(prev, prev_len, &d3, &d4);

        procfs_interrupts_free(&d3);
        procfs_interrupts_free(&d4);
        free(prev);
        free(cur);
        return 0;
}
