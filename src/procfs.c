/* Parsers for /proc/stat, /proc/softirqs and /proc/interrupts: one pass
 * over [buf, buf+len) with explicit bounds, no per-field allocation (they
 * run every tick). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "log.h"
#include "procfs.h"
#include "rootfs.h"
#include "util.h"

/* One line, [p, end); end never lies past the caller's len. */
struct cursor {
        const char *p, *end;
};

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static void skip_blanks(struct cursor *c) {
        while (c->p < c->end && is_blank(*c->p))
                c->p++;
}

/* The next blank-separated token of the line; false at its end. */
static bool next_token(struct cursor *c, const char **ret, size_t *ret_len) {
        const char *s;

        skip_blanks(c);
        if (c->p >= c->end)
                return false;
        s = c->p;
        while (c->p < c->end && !is_blank(*c->p))
                c->p++;
        *ret = s;
        *ret_len = (size_t) (c->p - s);
        return true;
}

static bool all_digits(const char *s, size_t len) {
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!is_digit(s[i]))
                        return false;
        return true;
}

/* A whole token of decimal digits: -EBADMSG if it is anything else, -ERANGE
 * beyond UINT64_MAX. */
static int parse_u64(const char *s, size_t len, uint64_t *ret) {
        int r = util_parse_u64(s, len, ret);

        return r == -EINVAL ? -EBADMSG : r;
}

/* A CPU number as in "cpu12" / "CPU12": bounded by CPUSET_MAX so that the
 * arrays indexed by CPU number elsewhere stay small whatever the input. */
static int parse_cpu_number(const char *s, size_t len, int *ret) {
        uint64_t v;
        int r;

        r = parse_u64(s, len, &v);
        if (r < 0)
                return r;
        if (v >= CPUSET_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

/* Advances *pos over the next line of [buf, buf+len); false at the end. */
static bool next_line(const char *buf, size_t len, size_t *pos, struct cursor *ret) {
        const char *s, *nl, *e;

        if (*pos >= len)
                return false;
        s = buf + *pos;
        nl = memchr(s, '\n', len - *pos);
        e = nl ? nl : buf + len;
        ret->p = s;
        ret->end = e;
        *pos = (size_t) (e - buf) + (nl ? 1 : 0);
        return true;
}

static bool line_is_blank(const struct cursor *line) {
        struct cursor c = *line;
        skip_blanks(&c);
        return c.p >= c.end;
}

static void copy_field(char *dst, size_t size, const char *s, size_t len) {
        if (len >= size)
                len = size - 1;
        memcpy(dst, s, len);
        dst[len] = 0;
}

static bool token_eq(const char *s, size_t len, const char *lit) {
        return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

static int cmp_int(const void *a, const void *b) {
        int x = *(const int *) a, y = *(const int *) b;
        return (x > y) - (x < y);
}

/* The index of cpu in a strictly ascending array, or -1. */
static int find_column(const int *cpus, size_t n, int cpu) {
        const int *p;

        /* no offline CPUs below it: its own column (the common case) */
        if (cpu >= 0 && (size_t) cpu < n && cpus[cpu] == cpu)
                return cpu;
        p = n > 0 ? bsearch(&cpu, cpus, n, sizeof(*cpus), cmp_int) : NULL;
        return p ? (int) (p - cpus) : -1;
}

/* ---- /proc/stat ---- */

/* The next token as a count in one pass (the per-tick hot loop): 1, 0 at
 * the end of the line, <0 for a token that is not one. */
static int next_count(struct cursor *c, uint64_t *ret) {
        const char *s, *e = c->end;
        uint64_t v = 0;
        int r;

        skip_blanks(c);
        if (c->p >= e)
                return 0;
        for (s = c->p; c->p < e && is_digit(*c->p); c->p++)
                v = v * 10 + (unsigned) (*c->p - '0');
        /* not 1 to 19 digits (which always fit): parse_u64() says what is wrong */
        if ((c->p < e && !is_blank(*c->p)) || c->p == s || c->p - s > 19) {
                while (c->p < e && !is_blank(*c->p))
                        c->p++;
                r = parse_u64(s, (size_t) (c->p - s), ret);
                return r < 0 ? r : 1;
        }
        *ret = v;
        return 1;
}

static int parse_cpustat_fields(struct cursor *line, struct procfs_cpustat *cs) {
        unsigned n = 0;
        uint64_t v;
        int r;

        while ((r = next_count(line, &v)) != 0) {
                if (r < 0)
                        return r;
                if (n < CPUSTAT_MAX)
                        cs->v[n] = v;
                if (n < UINT32_MAX)
                        n++;
        }
        if (n < 4) /* user nice system idle: Linux 2.4 */
                return -EBADMSG;
        cs->n_fields = MIN(n, (unsigned) CPUSTAT_MAX);
        return 0;
}

int procfs_stat_parse(const char *buf, size_t len, struct procfs_stat *ret) {
        _cleanup_(procfs_stat_free) struct procfs_stat s = { .total.cpu = -1 };
        size_t allocated = 0, pos = 0;
        bool have_total = false;
        struct cursor line;
        int r;

        if (!ret || (!buf && len > 0))
                return -EINVAL;
        *ret = (struct procfs_stat) { .total.cpu = -1 };
        /* Linux ends it with a newline: a cut copy (a read racing a rewrite
         * in place) could pass for a line with fewer columns */
        if (len > 0 && buf[len - 1] != '\n')
                return -EAGAIN;

        while (next_line(buf, len, &pos, &line)) {
                struct procfs_cpustat cs = { .cpu = -1 };
                const char *tok;
                size_t tl;

                if (!next_token(&line, &tok, &tl))
                        continue;
                if (tl < 3 || memcmp(tok, "cpu", 3) != 0)
                        continue; /* intr, ctxt, btime, ... */
                if (tl > 3) {
                        if (!is_digit(tok[3]))
                                continue; /* some other "cpu..." key */
                        r = parse_cpu_number(tok + 3, tl - 3, &cs.cpu);
                        if (r < 0)
                                return r;
                }
                r = parse_cpustat_fields(&line, &cs);
                if (r < 0)
                        return r;
                if (cs.cpu < 0) {
                        if (have_total)
                                return -EBADMSG;
                        s.total = cs;
                        have_total = true;
                        continue;
                }
                /* online CPUs ascend; anything else is not a /proc/stat */
                if (s.n_cpus > 0 && s.cpus[s.n_cpus - 1].cpu >= cs.cpu)
                        return -EBADMSG;
                r = util_grow((void **) &s.cpus, &allocated, s.n_cpus + 1, sizeof(*s.cpus));
                if (r < 0)
                        return r;
                s.cpus[s.n_cpus++] = cs;
        }
        if (!have_total)
                return -EBADMSG;
        *ret = s;
        s.cpus = NULL;
        return 0;
}

static int read_parse(int rootfd, const char *path, int (*parse)(const char *buf, size_t len, void *ret), void *ret) {
        _cleanup_(freep) char *own = NULL;
        size_t len;
        int r;

        /* a copy cut by a rewrite (-EAGAIN) is read once more */
        for (int tries = 0;; tries++) {
                r = rootfs_read(rootfd, path, &own, &len);
                if (r < 0)
                        return r;
                r = parse(own, len, ret);
                if (r != -EAGAIN || tries > 0)
                        break;
                free(own);
                own = NULL;
        }
        if (r < 0)
                log_debug_errno(r, "procfs: cannot parse %s: %m", path);
        return r;
}

static int stat_parse(const char *buf, size_t len, void *ret) {
        return procfs_stat_parse(buf, len, ret);
}

int procfs_stat_read(int rootfd, struct procfs_stat *ret) {
        *ret = (struct procfs_stat) { .total.cpu = -1 };
        return read_parse(rootfd, "proc/stat", stat_parse, ret);
}

void procfs_stat_free(struct procfs_stat *s) {
        if (!s)
                return;
        free(s->cpus);
        s->cpus = NULL;
        s->n_cpus = 0;
}

const struct procfs_cpustat *procfs_stat_cpu(const struct procfs_stat *s, int cpu) {
        struct procfs_cpustat key = { .cpu = cpu };

        if (!s || cpu < 0 || s->n_cpus == 0)
                return NULL;
        if ((size_t) cpu < s->n_cpus && s->cpus[cpu].cpu == cpu)
                return &s->cpus[cpu];
        /* the cpu field first: cmp_int compares it */
        return bsearch(&key, s->cpus, s->n_cpus, sizeof(key), cmp_int);
}

/* ---- CPU header shared by /proc/softirqs and /proc/interrupts ---- */

/* "CPU0 CPU2 CPU3": online CPUs only, so gaps are normal. */
static int parse_cpu_header(struct cursor *line, int **ret_cpus, size_t *ret_n) {
        _cleanup_(freep) int *cpus = NULL;
        size_t n = 0, allocated = 0;
        const char *tok;
        size_t tl;
        int r;

        while (next_token(line, &tok, &tl)) {
                int cpu;

                if (tl < 4 || memcmp(tok, "CPU", 3) != 0)
                        return -EBADMSG;
                r = parse_cpu_number(tok + 3, tl - 3, &cpu);
                if (r < 0)
                        return r;
                if (n > 0 && cpus[n - 1] >= cpu)
                        return -EBADMSG;
                r = util_grow((void **) &cpus, &allocated, n + 1, sizeof(*cpus));
                if (r < 0)
                        return r;
                cpus[n++] = cpu;
        }
        if (n == 0)
                return -EBADMSG;
        *ret_cpus = cpus;
        *ret_n = n;
        cpus = NULL;
        return 0;
}

/* Splits "  NAME: rest" at the first ':'; the name has no blanks. */
static int split_row_id(struct cursor *line, const char **ret_id, size_t *ret_len) {
        const char *colon, *s;

        skip_blanks(line);
        colon = memchr(line->p, ':', (size_t) (line->end - line->p));
        if (!colon || colon == line->p)
                return -EBADMSG;
        for (s = line->p; s < colon; s++)
                if (is_blank(*s))
                        return -EBADMSG;
        *ret_id = line->p;
        *ret_len = (size_t) (colon - line->p);
        line->p = colon + 1;
        return 0;
}

/* ---- /proc/softirqs ---- */

static const char *const softirq_names[SOFTIRQ_MAX] = {
        [SOFTIRQ_HI] = "HI",
        [SOFTIRQ_TIMER] = "TIMER",
        [SOFTIRQ_NET_TX] = "NET_TX",
        [SOFTIRQ_NET_RX] = "NET_RX",
        [SOFTIRQ_BLOCK] = "BLOCK",
        [SOFTIRQ_IRQ_POLL] = "IRQ_POLL",
        [SOFTIRQ_TASKLET] = "TASKLET",
        [SOFTIRQ_SCHED] = "SCHED",
        [SOFTIRQ_HRTIMER] = "HRTIMER",
        [SOFTIRQ_RCU] = "RCU",
};

const char *procfs_softirq_to_string(enum procfs_softirq s) {
        return s >= 0 && s < SOFTIRQ_MAX ? softirq_names[s] : NULL;
}

static enum procfs_softirq softirq_from_mem(const char *s, size_t len) {
        for (int i = 0; i < SOFTIRQ_MAX; i++)
                if (token_eq(s, len, softirq_names[i]))
                        return (enum procfs_softirq) i;
        if /* this slot's name before Linux 4.5 */ (token_eq(s, len, "BLOCK_IOPOLL"))
                return SOFTIRQ_IRQ_POLL;
        return SOFTIRQ_INVALID;
}

int procfs_softirqs_parse(const char *buf, size_t len, struct procfs_softirqs *ret) {
        _cleanup_(procfs_softirqs_free) struct procfs_softirqs s = {};
        size_t pos = 0;
        bool any = false;
        struct cursor line;
        int r;

        if (!ret || (!buf && len > 0))
                return -EINVAL;
        *ret = (struct procfs_softirqs) {};

        while (next_line(buf, len, &pos, &line)) {
                enum procfs_softirq row;
                const char *id;
                size_t il, col = 0;
                uint64_t v;

                if (line_is_blank(&line))
                        continue;
                if (!s.cpus) {
                        r = parse_cpu_header(&line, &s.cpus, &s.n_cpus);
                        if (r < 0)
                                return r;
                        s.counts = calloc((size_t) SOFTIRQ_MAX * s.n_cpus, sizeof(*s.counts));
                        if (!s.counts)
                                return -ENOMEM;
                        continue;
                }
                r = split_row_id(&line, &id, &il);
                if (r < 0)
                        return r;
                row = softirq_from_mem(id, il);
                if (row == SOFTIRQ_INVALID)
                        continue; /* a softirq a newer kernel added */
                if (s.present[row])
                        return -EBADMSG;
                while ((r = next_count(&line, &v)) != 0) {
                        if (r < 0)
                                return r;
                        if (col >= s.n_cpus)
                                return -EBADMSG;
                        s.counts[(size_t) row * s.n_cpus + col++] = v;
                }
                if (col != s.n_cpus)
                        return -EBADMSG;
                s.present[row] = true;
                any = true;
        }
        if (!any)
                return -EBADMSG;
        *ret = s;
        s = (struct procfs_softirqs) {};
        return 0;
}

static int softirqs_parse(const char *buf, size_t len, void *ret) {
        return procfs_softirqs_parse(buf, len, ret);
}

int procfs_softirqs_read(int rootfd, struct procfs_softirqs *ret) {
        *ret = (struct procfs_softirqs) {};
        return read_parse(rootfd, "proc/softirqs", softirqs_parse, ret);
}

void procfs_softirqs_free(struct procfs_softirqs *s) {
        if (!s)
                return;
        free(s->cpus);
        free(s->counts);
        *s = (struct procfs_softirqs) {};
}

int procfs_softirqs_column(const struct procfs_softirqs *s, int cpu) {
        return find_column(s->cpus, s->n_cpus, cpu);
}

/* ---- /proc/interrupts ---- */

/* A chip name with the flow handler glued to it by kernels before 3.x
 * ("IR-PCI-MSI-edge"). */
static bool glued_flow(const char *chip, size_t chip_len) {
        static const char *const flow_suffixes[] = {
                "-edge", "-fasteoi", "-level", "-simple", "-percpu", "-percpu_devid", "-edge_eoi",
        };

        for (size_t i = 0; i < ELEMENTSOF(flow_suffixes); i++) {
                size_t sl = strlen(flow_suffixes[i]);
                if (chip_len > sl && memcmp(chip + chip_len - sl, flow_suffixes[i], sl) == 0)
                        return true;
        }
        return false;
}

/* The rest of the line, trailing blanks cut, into dst. */
static void copy_rest(struct cursor *c, char *dst, size_t size) {
        skip_blanks(c);
        while (c->end > c->p && is_blank(c->end[-1]))
                c->end--;
        copy_field(dst, size, c->p, (size_t) (c->end - c->p));
}

/* arm's trigger type. */
static bool is_trigger(const char *tok, size_t tl) {
        return token_eq(tok, tl, "Level") || token_eq(tok, tl, "Edge");
}

/* The field after the chip: a hwirq ("27", "4138200989697-edge"), a flow
 * handler without hwirq ("-virq", "-"), or arm's Level/Edge with neither. */
static bool is_hwirq_token(const char *tok, size_t tl) {
        return is_digit(tok[0]) || tok[0] == '-' || is_trigger(tok, tl);
}

/* A row's texts while it is parsed, before they go to the reading's block. */
struct irq_text {
        char id[PROCFS_IRQ_ID_SIZE];
        char name[PROCFS_IRQ_NAME_SIZE];
};

/* Takes the next token when it is arm's Level/Edge (or, with flow, a
 * "-fasteoi" flow handler); else leaves c as it was. */
static void skip_optional(struct cursor *c, bool flow) {
        struct cursor save = *c;
        const char *tok;
        size_t tl;

        if (!next_token(c, &tok, &tl) || (flow ? tok[0] != '-' || tl < 2 : !is_trigger(tok, tl)))
                *c = save;
}

/* kernel/irq/proc.c show_interrupts() prints after the counts: chip,
 * hwirq (with a domain), Level/Edge (arm), "-" flow handler, then "  %s"
 * the action names joined by ", ": those into name.  A chip name may have
 * blanks ("Hyper-V PCIe MSI"), one apart: a token after a wider gap that
 * is no hwirq ends it (old kernels print no hwirq). */
static void parse_irq_tail(struct cursor *c, char *name, size_t size) {
        const char *chip, *tok;
        size_t chip_len, tl;
        struct cursor save;
        bool glued;

        if (!next_token(c, &chip, &chip_len))
                return;
        /* a glued chip ("IO-APIC-edge") has no hwirq: a number after it is an action */
        glued = glued_flow(chip, chip_len);
        for (;;) {
                const char *gap = c->p;

                save = *c;
                if (!next_token(c, &tok, &tl)) {
                        *c = save;
                        break;
                }
                if (is_hwirq_token(tok, tl) && !(glued && is_digit(tok[0]))) {
                        /* a bare "27" arm follows with "Level"/"Edge" and maybe "-fasteoi" */
                        bool level = is_trigger(tok, tl);

                        if (all_digits(tok, tl) || level) {
                                if (!level)
                                        skip_optional(c, false);
                                skip_optional(c, true);
                        }
                        break;
                }
                if (tok - gap != 1) {
                        *c = save;
                        break;
                }
        }
        copy_rest(c, name, size);
}

static int cmp_row_irq(const void *a, const void *b, void *irqs) {
        unsigned x = ((const struct procfs_irq *) irqs)[*(const size_t *) a].irq;
        unsigned y = ((const struct procfs_irq *) irqs)[*(const size_t *) b].irq;
        return (x > y) - (x < y);
}

/* Sorts by_irq by IRQ number; -EBADMSG on a duplicate. */
static int sort_by_irq(const struct procfs_irq *irqs, size_t *by_irq, size_t n) {
        qsort_r(by_irq, n, sizeof(*by_irq), cmp_row_irq, (void *) irqs);
        for (size_t i = 1; i < n; i++)
                if (irqs[by_irq[i]].irq == irqs[by_irq[i - 1]].irq)
                        return -EBADMSG;
        return 0;
}

/* The nonzero counts of a reading, every row's in row order. */
struct nz_buf {
        uint32_t *cols;
        uint64_t *vals;
        size_t n, cols_allocated, vals_allocated;
};

static int nz_push(struct nz_buf *b, size_t col, uint64_t v) {
        if (util_grow((void **) &b->cols, &b->cols_allocated, b->n + 1, sizeof(*b->cols)) < 0 ||
            util_grow((void **) &b->vals, &b->vals_allocated, b->n + 1, sizeof(*b->vals)) < 0)
                return -ENOMEM;
        b->cols[b->n] = (uint32_t) col;
        b->vals[b->n++] = v;
        return 0;
}

/* A " %10u" count of 0, most of a big host's file: two 8-byte compares. */
static bool zero_field(struct cursor *c) {
        static const char z[] = "          0";
        uint64_t a, b, za, zb;

        if (c->end - c->p < 11 || (c->end - c->p > 11 && !is_blank(c->p[11])))
                return false;
        memcpy(&a, c->p, 8);
        memcpy(&b, c->p + 3, 8);
        memcpy(&za, z, 8);
        memcpy(&zb, z + 3, 8);
        if (a != za || b != zb)
                return false;
        c->p += 11;
        return true;
}

void procfs_interrupts_free(struct procfs_interrupts *s) {
        if (!s)
                return;
        free(s->cpus);
        free(s->irqs);
        free(s->nz_cols);
        free(s->nz_vals);
        free(s->by_irq);
        free(s->text);
        *s = (struct procfs_interrupts) {};
}

/* One row: the id, the counts (the nonzero ones into nz), the tail. */
static int parse_row(struct cursor *line, size_t n_cpus, struct procfs_irq *irq, struct irq_text *tx,
                     struct nz_buf *nz) {
        const char *id;
        size_t il, col, first = nz->n;
        int r;

        r = split_row_id(line, &id, &il);
        if (r < 0)
                return r;
        *irq = (struct procfs_irq) {};
        tx->id[0] = tx->name[0] = 0;
        copy_field(tx->id, sizeof(tx->id), id, il);
        if (is_digit(id[0])) {
                uint64_t v;

                r = parse_u64(id, il, &v);
                if (r < 0)
                        return r;
                if (v > UINT32_MAX)
                        return -ERANGE;
                irq->numeric = true;
                irq->irq = (unsigned) v;
        }
        /* a count a column (which may overflow the %10u width); NMI, LOC,
         * ERR, MIS, IPI0: up to one a column, then a description */
        for (col = 0; col < n_cpus; col++) {
                struct cursor save = *line;
                uint64_t v;

                if (zero_field(line))
                        continue;
                r = next_count(line, &v);
                if (r == 0 || r == -EBADMSG) {
                        if (irq->numeric)
                                return -EBADMSG;
                        *line = save;
                        break;
                }
                if (r < 0)
                        return r;
                if (v == 0)
                        continue;
                if (__builtin_add_overflow(irq->total, v, &irq->total))
                        irq->total = UINT64_MAX;
                r = nz_push(nz, col, v);
                if (r < 0)
                        return r;
        }
        if (irq->numeric)
                parse_irq_tail(line, tx->name, sizeof(tx->name));
        else if (col == 0)
                return -EBADMSG;
        else
                copy_rest(line, tx->name, sizeof(tx->name));
        irq->n_nz = nz->n - first;
        return 0;
}

/* The parse of /proc/interrupts a line at a time, from a buffer or streamed. */
struct irq_parser {
        struct procfs_interrupts s;
        struct nz_buf nz;
        struct irq_text tx;
        size_t text_len, text_allocated; /* of s.text: each row's two texts, NUL-ended */
        size_t rows_allocated, n_numeric;
        bool sorted;
        unsigned last_irq;
};

static bool skip_said;

/* Appends the row's texts to the block (pointed at in parser_finish). */
static int text_add(struct irq_parser *p) {
        size_t li = strlen(p->tx.id) + 1, ln = strlen(p->tx.name) + 1;
        int r = util_grow((void **) &p->s.text, &p->text_allocated, p->text_len + li + ln, 1);

        if (r < 0)
                return r;
        memcpy(p->s.text + p->text_len, p->tx.id, li);
        memcpy(p->s.text + p->text_len + li, p->tx.name, ln);
        p->text_len += li + ln;
        return 0;
}

/* Gives back what a doubling array holds beyond n elements of sz (a
 * reading is kept until the next one). */
static void *shrink(void *v, size_t n, size_t sz) {
        void *x = n > 0 ? realloc(v, n * sz) : NULL;

        return x ? x : v;
}

static int parser_line(struct irq_parser *p, struct cursor *line) {
        const char *line_start = line->p, *line_end = line->end;
        size_t nz_before = p->nz.n;
        struct procfs_irq *irq;
        int r;

        if (line_is_blank(line))
                return 0;
        if (!p->s.cpus)
                return parse_cpu_header(line, &p->s.cpus, &p->s.n_cpus);
        r = util_grow((void **) &p->s.irqs, &p->rows_allocated, p->s.n_irqs + 1, sizeof(*p->s.irqs));
        if (r < 0)
                return r;
        irq = &p->s.irqs[p->s.n_irqs];
        r = parse_row(line, p->s.n_cpus, irq, &p->tx, &p->nz);
        if (r == -EBADMSG || r == -ERANGE) {
                /* an unreadable row (arm's "FIQ:  fiq_glue") is lost alone,
                 * said once: every tick meets it again */
                p->nz.n = nz_before;
                if (!skip_said)
                        log_debug("procfs: proc/interrupts: skipping a row it cannot read: \"%.*s\"",
                                  (int) MIN(line_end - line_start, (ptrdiff_t) 80), line_start);
                skip_said = true;
                return 0;
        }
        if (r < 0)
                return r;
        r = text_add(p);
        if (r < 0)
                return r;
        if (irq->numeric) {
                if (p->n_numeric > 0 && irq->irq <= p->last_irq)
                        p->sorted = false;
                p->last_irq = irq->irq;
                p->n_numeric++;
        }
        p->s.n_irqs++;
        return 0;
}

static void parser_free(struct irq_parser *p) {
        free(p->nz.cols);
        free(p->nz.vals);
        procfs_interrupts_free(&p->s);
}

/* The reading once every line is in; p is consumed either way. */
static int parser_finish(struct irq_parser *p, struct procfs_interrupts *ret) {
        struct procfs_interrupts *s = &p->s;
        size_t off = 0;
        int r;

        if (!s->cpus) {
                r = -EBADMSG;
                goto fail;
        }
        s->nz_cols = shrink(p->nz.cols, p->nz.n, sizeof(*s->nz_cols));
        s->nz_vals = shrink(p->nz.vals, p->nz.n, sizeof(*s->nz_vals));
        p->nz = (struct nz_buf) {};
        s->irqs = shrink(s->irqs, s->n_irqs, sizeof(*s->irqs));
        s->text = shrink(s->text, p->text_len, 1);
        for (size_t i = 0, t = 0; i < s->n_irqs; i++) {
                struct procfs_irq *q = &s->irqs[i];

                q->nz_cols = q->n_nz ? s->nz_cols + off : NULL;
                q->nz_counts = q->n_nz ? s->nz_vals + off : NULL;
                off += q->n_nz;
                q->id = s->text + t; /* as text_add() put them */
                t += strlen(q->id) + 1;
                q->name = s->text + t;
                t += strlen(q->name) + 1;
        }
        if (p->n_numeric > 0) {
                size_t k = 0;

                s->by_irq = malloc(p->n_numeric * sizeof(*s->by_irq));
                if (!s->by_irq) {
                        r = -ENOMEM;
                        goto fail;
                }
                for (size_t i = 0; i < s->n_irqs; i++)
                        if (s->irqs[i].numeric)
                                s->by_irq[k++] = i;
                if (!p->sorted) {
                        r = sort_by_irq(s->irqs, s->by_irq, p->n_numeric);
                        if (r < 0)
                                goto fail;
                }
        }
        s->n_numeric = p->n_numeric;
        *ret = *s;
        *s = (struct procfs_interrupts) {};
        return 0;
fail:
        parser_free(p);
        return r;
}

int procfs_interrupts_parse(const char *buf, size_t len, struct procfs_interrupts *ret) {
        struct irq_parser p = { .sorted = true };
        size_t pos = 0;
        struct cursor line;
        int r;

        if (!ret || (!buf && len > 0))
                return -EINVAL;
        *ret = (struct procfs_interrupts) {};
        while (next_line(buf, len, &pos, &line)) {
                r = parser_line(&p, &line);
                if (r < 0) {
                        parser_free(&p);
                        return r;
                }
        }
        return parser_finish(&p, ret);
}

/* Read size of the streamed parse: a few lines of a big host. */
#define IRQ_CHUNK (64 * 1024)

int procfs_interrupts_read(int rootfd, struct procfs_interrupts *ret) {
        struct irq_parser p = { .sorted = true };
        _cleanup_(closep) int fd = -1;
        _cleanup_(freep) char *buf = NULL;
        size_t have = 0, allocated = 0;
        bool eof = false;
        int r = 0;

        *ret = (struct procfs_interrupts) {};
        fd = rootfs_open_file(rootfd, "proc/interrupts");
        if (fd < 0)
                return fd;
        while (!eof && r >= 0) {
                size_t pos = 0, done;
                struct cursor line;
                const char *nl;
                ssize_t n;

                /* room for a chunk more than the partial line held */
                r = util_grow((void **) &buf, &allocated, have + IRQ_CHUNK, 1);
                if (r < 0)
                        break;
                n = read(fd, buf + have, allocated - have);
                if (n < 0) {
                        r = errno == EINTR ? 0 : -errno;
                        continue;
                }
                eof = n == 0;
                have += (size_t) n;
                /* whole lines only, but at the end the last one as it is */
                nl = eof ? buf + have : memrchr(buf, '\n', have);
                done = nl ? (size_t) (nl - buf) : 0;
                while (r >= 0 && next_line(buf, done, &pos, &line))
                        r = parser_line(&p, &line);
                if (nl && !eof)
                        done++;
                memmove(buf, buf + done, have - done);
                have -= done;
        }
        if (r < 0)
                parser_free(&p);
        else
                r = parser_finish(&p, ret);
        if (r < 0)
                log_debug_errno(r, "procfs: cannot parse proc/interrupts: %m");
        return r;
}

const struct procfs_irq *procfs_interrupts_find(const struct procfs_interrupts *s, unsigned irq) {
        size_t lo = 0, hi;

        if (!s || !s->by_irq)
                return NULL;
        hi = s->n_numeric;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const struct procfs_irq *row = &s->irqs[s->by_irq[mid]];
                if (row->irq == irq)
                        return row;
                if (row->irq < irq)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

int procfs_interrupts_column(const struct procfs_interrupts *s, int cpu) {
        return find_column(s->cpus, s->n_cpus, cpu);
}

int procfs_parse_pid_stat(const char *buf, size_t len, struct procfs_pid_stat *ret) {
        struct procfs_pid_stat st = { .processor = -1 };
        const char *open, *close = NULL, *p, *end = buf + len;
        uint64_t v, f[23] = { 0 }; /* f[N]: numeric field N of proc(5) */

        open = memchr(buf, '(', len);
        /* comm is "(...)" and may itself hold ") ": the last ')' ends it. */
        for (p = buf; p < end; p++)
                if (*p == ')')
                        close = p;
        if (!open || open < buf + 2 || open[-1] != ' ' || !close || close < open ||
            util_parse_u64(buf, (size_t) (open - 1 - buf), &v) < 0 || v == 0 || v > INT32_MAX)
                return -EBADMSG;
        st.pid = (int) v;
        st.comm_off = (size_t) (open + 1 - buf);
        st.comm_len = (size_t) (close - open - 1);
        p = close + 1;
        for (int field = 3; field <= 39; field++) {
                const char *s;
                size_t n;

                if (field > 22 && (p >= end || *p == '\n'))
                        break;
                if (p >= end || *p != ' ')
                        return -EBADMSG;
                s = ++p;
                while (p < end && *p != ' ' && *p != '\n')
                        p++;
                n = (size_t) (p - s);
                if (n == 0)
                        return -EBADMSG;
                if (field == 3) {
                        if (n != 1)
                                return -EBADMSG;
                        st.state = *s;
                } else if (field == 39) {
                        if (util_parse_int(s, n, &st.processor) < 0 || st.processor < 0)
                                return -EBADMSG;
                } else if (field == 4 || field == 9 || field == 14 || field == 15 || field == 22) {
                        if (util_parse_u64(s, n, &f[field]) < 0)
                                return -EBADMSG;
                }
        }
        if (f[4] > INT32_MAX || f[9] > UINT32_MAX)
                return -EBADMSG;
        st.ppid = (pid_t) f[4];
        st.flags = (unsigned) f[9];
        st.utime = f[14];
        st.stime = f[15];
        st.starttime = f[22];
        *ret = st;
        return 0;
}
