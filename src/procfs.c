/* Parsers for /proc/stat, /proc/softirqs and /proc/interrupts.
 *
 * Every parser walks [buf, buf+len) line by line with explicit bounds: the
 * buffer need not be NUL-terminated and nothing past len is touched.  One
 * pass, no per-field allocation: arrays grow geometrically and a whole
 * /proc/interrupts keeps its counts in one block (a 256-CPU host with ~300
 * IRQs is parsed every tick). */
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

/* skip_blanks() for the count rows of next_count_or_end(): /proc/softirqs
 * right-aligns each count in 10 columns, so runs of spaces go 8 at a time
 * (next_count() inlines the same loop: a shared function costs the parsers
 * more instructions). */
static void skip_blanks_fast(struct cursor *c) {
        const char *p = c->p, *e = c->end;

        /* one blank: /proc/stat's fields */
        if (e - p >= 2 && p[0] == ' ' && p[1] != ' ') {
                c->p = p + 1;
                return;
        }
        while (e - p >= 8) {
                uint64_t w;
                memcpy(&w, p, 8);
                w ^= UINT64_C(0x2020202020202020);
                if (w != 0) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                        /* straight to the first byte that is not a space */
                        p += __builtin_ctzll(w) / 8;
#endif
                        break;
                }
                p += 8;
        }
        while (p < e && is_blank(*p))
                p++;
        c->p = p;
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
 * beyond UINT64_MAX (18446744073709551615 still fits). */
static int parse_u64(const char *s, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        /* 19 digits always fit: no overflow check per digit */
        if (len > 0 && len <= 19) {
                for (size_t i = 0; i < len; i++) {
                        if (!is_digit(s[i]))
                                return -EBADMSG;
                        v = v * 10 + (unsigned) (s[i] - '0');
                }
                *ret = v;
                return 0;
        }
        if (!all_digits(s, len))
                return -EBADMSG;
        for (size_t i = 0; i < len; i++) {
                unsigned d = (unsigned) (s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
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

/* Binary search of cpu in a strictly ascending array. */
static int find_column(const int *cpus, size_t n, int cpu) {
        size_t lo = 0, hi = n;

        /* no offline CPUs below it: its own column (the common case) */
        if (cpu >= 0 && (size_t) cpu < n && cpus[cpu] == cpu)
                return cpu;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cpus[mid] == cpu)
                        return (int) mid;
                if (cpus[mid] < cpu)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* ---- /proc/stat ---- */

/* One count of a numeric row into *ret, the same result as next_token() +
 * parse_u64(): -EBADMSG when the line ends or the token is not all digits,
 * -ERANGE beyond 64 bits.  The per-tick hot loop (a 256-CPU host with ~460
 * IRQs has ~120k counts, most of them "0" padded to 10 columns), so blanks
 * go 8 at a time and digits are summed in the same pass. */
static int next_count(struct cursor *c, uint64_t *ret) {
        const char *p = c->p, *e = c->end, *s;
        uint64_t v = 0;

        while (e - p >= 8) {
                uint64_t w;
                memcpy(&w, p, 8);
                w ^= UINT64_C(0x2020202020202020);
                if (w != 0) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                        /* straight to the first byte that is not a space */
                        p += __builtin_ctzll(w) / 8;
#endif
                        break;
                }
                p += 8;
        }
        while (p < e && is_blank(*p))
                p++;
        s = p;
        while (p < e && is_digit(*p)) {
                v = v * 10 + (unsigned) (*p - '0');
                p++;
        }
        if (p < e && !is_blank(*p)) {
                /* not a count: let the slow path say what is wrong */
                while (p < e && !is_blank(*p))
                        p++;
                c->p = p;
                return p == s ? -EBADMSG : parse_u64(s, (size_t) (p - s), ret);
        }
        c->p = p;
        if (p == s)
                return -EBADMSG;
        /* 19 digits always fit; longer ones may overflow (or be zeros) */
        if (p - s > 19)
                return parse_u64(s, (size_t) (p - s), ret);
        *ret = v;
        return 0;
}

/* next_count() that tells the end of the line: 1 with a count, 0 at the
 * end, <0 for a token that is not one. */
static int next_count_or_end(struct cursor *c, uint64_t *ret) {
        int r;

        skip_blanks_fast(c);
        if (c->p >= c->end)
                return 0;
        r = next_count(c, ret);
        return r < 0 ? r : 1;
}

static int parse_cpustat_fields(struct cursor *line, struct procfs_cpustat *cs) {
        unsigned n = 0;
        uint64_t v;
        int r;

        while ((r = next_count_or_end(line, &v)) != 0) {
                if (r < 0)
                        return r;
                /* Columns beyond guest_nice (a future kernel) are ignored. */
                if (n < CPUSTAT_MAX)
                        cs->v[n] = v;
                if (n < UINT32_MAX)
                        n++;
        }
        /* user nice system idle is the oldest format (Linux 2.4). */
        if (n < 4)
                return -EBADMSG;
        cs->n_fields = MIN(n, (unsigned) CPUSTAT_MAX);
        return 0;
}

int procfs_stat_parse(const char *buf, size_t len, struct procfs_stat *ret) {
        struct procfs_stat s = { .total.cpu = -1 };
        size_t allocated = 0, pos = 0;
        bool have_total = false;
        struct cursor line;
        int r;

        if (!ret || (!buf && len > 0))
                return -EINVAL;
        *ret = (struct procfs_stat) { .total.cpu = -1 };

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
                                goto fail;
                }
                r = parse_cpustat_fields(&line, &cs);
                if (r < 0)
                        goto fail;
                if (cs.cpu < 0) {
                        if (have_total) {
                                r = -EBADMSG;
                                goto fail;
                        }
                        s.total = cs;
                        have_total = true;
                        continue;
                }
                /* The kernel prints online CPUs in ascending order; anything
                 * else (a duplicate included) is not a /proc/stat. */
                if (s.n_cpus > 0 && s.cpus[s.n_cpus - 1].cpu >= cs.cpu) {
                        r = -EBADMSG;
                        goto fail;
                }
                r = util_grow((void **) &s.cpus, &allocated, s.n_cpus + 1, sizeof(*s.cpus));
                if (r < 0)
                        goto fail;
                s.cpus[s.n_cpus++] = cs;
        }
        if (!have_total) {
                r = -EBADMSG;
                goto fail;
        }
        *ret = s;
        return 0;
fail:
        free(s.cpus);
        return r;
}

/* path whole: through held when there is one, else read afresh into a
 * buffer returned in *ret_own for the caller to free. */
static int read_whole(int rootfd, const char *path, struct rootfs_held_file *held, char **ret_own,
                      const char **ret_buf, size_t *ret_len) {
        int r;

        *ret_own = NULL;
        if (held) {
                r = rootfs_held_file_read(rootfd, path, held, ret_len);
                *ret_buf = held->buf;
        } else {
                r = rootfs_read(rootfd, path, ret_own, ret_len);
                *ret_buf = *ret_own;
        }
        return r;
}

int procfs_stat_read(int rootfd, struct rootfs_held_file *held, struct procfs_stat *ret) {
        _cleanup_(freep) char *own = NULL;
        const char *buf;
        size_t len;
        int r;

        if (!ret)
                return -EINVAL;
        *ret = (struct procfs_stat) { .total.cpu = -1 };
        r = read_whole(rootfd, "proc/stat", held, &own, &buf, &len);
        if (r < 0)
                return r;
        r = procfs_stat_parse(buf, len, ret);
        if (r < 0)
                log_debug_errno(r, "procfs: cannot parse proc/stat: %m");
        return r;
}

void procfs_stat_free(struct procfs_stat *s) {
        if (!s)
                return;
        free(s->cpus);
        s->cpus = NULL;
        s->n_cpus = 0;
}

const struct procfs_cpustat *procfs_stat_cpu(const struct procfs_stat *s, int cpu) {
        size_t lo = 0, hi;

        if (!s || cpu < 0)
                return NULL;
        /* no offline CPUs below it: at its own index (the common case) */
        if ((size_t) cpu < s->n_cpus && s->cpus[cpu].cpu == cpu)
                return &s->cpus[cpu];
        hi = s->n_cpus;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (s->cpus[mid].cpu == cpu)
                        return &s->cpus[mid];
                if (s->cpus[mid].cpu < cpu)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* ---- CPU header shared by /proc/softirqs and /proc/interrupts ---- */

/* "CPU0 CPU2 CPU3": online CPUs only, so gaps are normal. */
static int parse_cpu_header(struct cursor *line, int **ret_cpus, size_t *ret_n) {
        size_t n = 0, allocated = 0;
        int *cpus = NULL;
        const char *tok;
        size_t tl;
        int r;

        while (next_token(line, &tok, &tl)) {
                int cpu;

                if (tl < 4 || memcmp(tok, "CPU", 3) != 0) {
                        r = -EBADMSG;
                        goto fail;
                }
                r = parse_cpu_number(tok + 3, tl - 3, &cpu);
                if (r < 0)
                        goto fail;
                if (n > 0 && cpus[n - 1] >= cpu) {
                        r = -EBADMSG;
                        goto fail;
                }
                r = util_grow((void **) &cpus, &allocated, n + 1, sizeof(*cpus));
                if (r < 0)
                        goto fail;
                cpus[n++] = cpu;
        }
        if (n == 0) {
                r = -EBADMSG;
                goto fail;
        }
        *ret_cpus = cpus;
        *ret_n = n;
        return 0;
fail:
        free(cpus);
        return r;
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
        if (s < 0 || s >= SOFTIRQ_MAX)
                return NULL;
        return softirq_names[s];
}

static enum procfs_softirq softirq_from_mem(const char *s, size_t len) {
        for (int i = 0; i < SOFTIRQ_MAX; i++)
                if (token_eq(s, len, softirq_names[i]))
                        return (enum procfs_softirq) i;
        /* The same slot was called BLOCK_IOPOLL before Linux 4.5. */
        if (token_eq(s, len, "BLOCK_IOPOLL"))
                return SOFTIRQ_IRQ_POLL;
        return SOFTIRQ_INVALID;
}

enum procfs_softirq procfs_softirq_from_string(const char *s) {
        if (!s)
                return SOFTIRQ_INVALID;
        return softirq_from_mem(s, strlen(s));
}

int procfs_softirqs_parse(const char *buf, size_t len, struct procfs_softirqs *ret) {
        struct procfs_softirqs s = {};
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

                if (line_is_blank(&line))
                        continue;
                if (!s.cpus) {
                        r = parse_cpu_header(&line, &s.cpus, &s.n_cpus);
                        if (r < 0)
                                goto fail;
                        s.counts = calloc((size_t) SOFTIRQ_MAX * s.n_cpus, sizeof(*s.counts));
                        if (!s.counts) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        continue;
                }
                r = split_row_id(&line, &id, &il);
                if (r < 0)
                        goto fail;
                row = softirq_from_mem(id, il);
                if (row == SOFTIRQ_INVALID)
                        continue; /* a softirq a newer kernel added */
                if (s.present[row]) {
                        r = -EBADMSG;
                        goto fail;
                }
                for (;;) {
                        uint64_t v;

                        r = next_count_or_end(&line, &v);
                        if (r == 0)
                                break;
                        if (r < 0)
                                goto fail;
                        if (col >= s.n_cpus) {
                                r = -EBADMSG;
                                goto fail;
                        }
                        s.counts[(size_t) row * s.n_cpus + col++] = v;
                }
                if (col != s.n_cpus) {
                        r = -EBADMSG;
                        goto fail;
                }
                s.present[row] = true;
                any = true;
        }
        if (!any) {
                r = -EBADMSG;
                goto fail;
        }
        *ret = s;
        return 0;
fail:
        free(s.cpus);
        free(s.counts);
        return r;
}

int procfs_softirqs_read(int rootfd, struct rootfs_held_file *held, struct procfs_softirqs *ret) {
        _cleanup_(freep) char *own = NULL;
        const char *buf;
        size_t len;
        int r;

        if (!ret)
                return -EINVAL;
        *ret = (struct procfs_softirqs) {};
        r = read_whole(rootfd, "proc/softirqs", held, &own, &buf, &len);
        if (r < 0)
                return r;
        r = procfs_softirqs_parse(buf, len, ret);
        if (r < 0)
                log_debug_errno(r, "procfs: cannot parse proc/softirqs: %m");
        return r;
}

void procfs_softirqs_free(struct procfs_softirqs *s) {
        if (!s)
                return;
        free(s->cpus);
        free(s->counts);
        *s = (struct procfs_softirqs) {};
}

int procfs_softirqs_column(const struct procfs_softirqs *s, int cpu) {
        if (!s)
                return -1;
        return find_column(s->cpus, s->n_cpus, cpu);
}

bool procfs_softirqs_get(const struct procfs_softirqs *s, enum procfs_softirq row, int cpu, uint64_t *ret) {
        int col;

        if (!s || row < 0 || row >= SOFTIRQ_MAX || !s->counts)
                return false;
        col = find_column(s->cpus, s->n_cpus, cpu);
        if (col < 0)
                return false;
        if (ret)
                *ret = s->counts[(size_t) row * s->n_cpus + (size_t) col];
        return true;
}

/* ---- /proc/interrupts ---- */

/* Lines in [buf, buf+len): an upper bound on the rows, to size the arrays
 * once instead of growing (and copying) them row by row. */
static size_t count_lines(const char *buf, size_t len) {
        size_t n = 1;
        const char *p = buf, *e = buf + len, *nl;

        while (p < e && (nl = memchr(p, '\n', (size_t) (e - p)))) {
                n++;
                p = nl + 1;
        }
        return n;
}

/* Kernels before 3.x printed chip and flow handler as one word
 * ("IR-PCI-MSI-edge", "IO-APIC-fasteoi"); these are the handler names. */
static const char *const flow_suffixes[] = {
        "-edge", "-fasteoi", "-level", "-simple", "-percpu", "-percpu_devid", "-edge_eoi",
};

/* After the counts of a numeric row, kernel/irq/proc.c show_interrupts()
 * prints: " %8s" chip (or the chip's irq_print_chip()), " %*lu" hwirq when
 * the IRQ has a domain (blanks otherwise), " %-8s" Level/Edge with
 * GENERIC_IRQ_SHOW_LEVEL (arm), "-%-8s" the flow handler name when set,
 * then "  %s" the action names joined by ", " (nothing when no action). */

/* The field after the chip: a hwirq ("27", "4138200989697-edge"), a flow
 * handler without hwirq ("-virq", "-"), or arm's Level/Edge with neither. */
static bool is_hwirq_token(const char *tok, size_t tl) {
        return is_digit(tok[0]) || tok[0] == '-' || token_eq(tok, tl, "Level") || token_eq(tok, tl, "Edge");
}

/* A chip name may have blanks ("Hyper-V PCIe MSI", pci-hyperv's
 * hv_msi_irq_chip): it runs from the first token to the hwirq field.  Its
 * words are one blank apart, while the action names follow the fields
 * before them after two blanks or more ("  %s"): a token after a wider gap
 * that is no hwirq field ends the chip there (old kernels print no hwirq:
 * "XT-PIC  Intel EtherExpress Pro 10/100 Ethernet"). */
static void parse_irq_tail(struct cursor *c, struct procfs_irq *irq) {
        const char *chip, *tok, *h_start = NULL, *h_end = NULL;
        size_t chip_len, tl;
        struct cursor save;
        bool glued = false;

        if (!next_token(c, &chip, &chip_len))
                return;
        /* kernels that glue the flow handler to the chip ("IO-APIC-edge")
         * print no hwirq: a number after it is an action name */
        for (size_t i = 0; i < ELEMENTSOF(flow_suffixes); i++) {
                size_t sl = strlen(flow_suffixes[i]);
                if (chip_len > sl && memcmp(chip + chip_len - sl, flow_suffixes[i], sl) == 0)
                        glued = true;
        }
        for (;;) {
                const char *gap = c->p;

                save = *c;
                if (!next_token(c, &tok, &tl)) {
                        *c = save;
                        break;
                }
                if (is_hwirq_token(tok, tl) && !(glued && is_digit(tok[0]))) {
                        h_start = tok;
                        h_end = tok + tl;
                        break;
                }
                if (tok - gap != 1) {
                        *c = save;
                        break;
                }
                chip_len = (size_t) (tok + tl - chip);
        }
        if (h_start) {
                /* "2-edge", "-virq" (no domain), or a bare "27" (or no
                 * hwirq) that arm follows with "Level"/"Edge" and maybe
                 * "-fasteoi" */
                bool level = token_eq(h_start, (size_t) (h_end - h_start), "Level") ||
                             token_eq(h_start, (size_t) (h_end - h_start), "Edge");

                if (all_digits(h_start, (size_t) (h_end - h_start)) || level) {
                        save = *c;
                        if (!level && next_token(c, &tok, &tl) && (token_eq(tok, tl, "Level") || token_eq(tok, tl, "Edge")))
                                h_end = tok + tl;
                        else
                                *c = save;
                        save = *c;
                        if (next_token(c, &tok, &tl) && tok[0] == '-' && tl > 1)
                                h_end = tok + tl;
                        else
                                *c = save;
                }
        } else {
                for (size_t i = 0; i < ELEMENTSOF(flow_suffixes); i++) {
                        size_t sl = strlen(flow_suffixes[i]);
                        if (chip_len > sl && memcmp(chip + chip_len - sl, flow_suffixes[i], sl) == 0) {
                                h_start = chip + chip_len - sl + 1;
                                h_end = chip + chip_len;
                                chip_len -= sl;
                                break;
                        }
                }
        }
        copy_field(irq->chip, sizeof(irq->chip), chip, chip_len);
        if (h_start) {
                /* Collapse the padding between "27" and "Level" to one blank. */
                size_t o = 0;
                bool blank = false;
                for (const char *p = h_start; p < h_end && o + 1 < sizeof(irq->hwirq); p++) {
                        if (is_blank(*p)) {
                                blank = true;
                                continue;
                        }
                        if (blank && o + 2 < sizeof(irq->hwirq))
                                irq->hwirq[o++] = ' ';
                        blank = false;
                        irq->hwirq[o++] = *p;
                }
                irq->hwirq[o] = 0;
        }
        skip_blanks(c);
        while (c->end > c->p && is_blank(c->end[-1]))
                c->end--;
        copy_field(irq->name, sizeof(irq->name), c->p, (size_t) (c->end - c->p));
}

struct irq_key {
        unsigned irq;
        size_t row;
};

static int cmp_irq_key(const void *a, const void *b) {
        unsigned x = ((const struct irq_key *) a)->irq, y = ((const struct irq_key *) b)->irq;
        return x < y ? -1 : x > y;
}

/* Fills by_irq with the numeric rows sorted by IRQ number; -EBADMSG on a
 * duplicate.  Only reached for input the kernel would not print. */
static int sort_by_irq(const struct procfs_irq *irqs, size_t *by_irq, size_t n) {
        _cleanup_(freep) struct irq_key *keys = malloc(n * sizeof(*keys));

        if (!keys)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                keys[i] = (struct irq_key) { irqs[by_irq[i]].irq, by_irq[i] };
        qsort(keys, n, sizeof(*keys), cmp_irq_key);
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && keys[i].irq == keys[i - 1].irq)
                        return -EBADMSG;
                by_irq[i] = keys[i].row;
        }
        return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b) {
        uint64_t s;
        return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

/* A reading's counts, rows x n_cpus, in a refcounted block: a reading
 * holds its own and, when delta-parsed, a reference to its base's (spare).
 * The reading after it takes the spare over once nothing else holds it
 * (the daemon frees each reading before parsing the one after next): the
 * block still has the base's counts, which differ from prev's only in the
 * columns prev's layout names, so the counts that did not change are
 * neither copied nor read: on a large host nearly every row changes in a
 * column or two a second, so copying whole rows would move the whole file
 * twice a reading (and sharing unchanged rows would not help). */
struct procfs_counts {
        unsigned refs;
        uint64_t serial;        /* the reading whose counts it holds */
        size_t n_cpus, rows;    /* room for rows rows of n_cpus */
        uint64_t v[];
};

static struct procfs_counts *counts_new(size_t rows, size_t n_cpus, uint64_t serial) {
        struct procfs_counts *c;

        if (n_cpus > 0 && rows > (SIZE_MAX - sizeof(*c)) / sizeof(uint64_t) / n_cpus)
                return NULL;
        c = malloc(sizeof(*c) + rows * n_cpus * sizeof(uint64_t));
        if (c)
                *c = (struct procfs_counts) { .refs = 1, .serial = serial, .n_cpus = n_cpus, .rows = rows };
        return c;
}

static struct procfs_counts *counts_ref(struct procfs_counts *c) {
        if (c)
                c->refs++;
        return c;
}

static void counts_unref(struct procfs_counts *c) {
        if (c && --c->refs == 0)
                free(c);
}

static void interrupts_free_parts(struct procfs_interrupts *s) {
        free(s->cpus);
        free(s->irqs);
        counts_unref(s->counts_block);
        counts_unref(s->spare);
        free(s->by_irq);
        free(s->text);
        free(s->layout);
        *s = (struct procfs_interrupts) {};
}

/* kernel/irq/proc.c prints every count as " %10u" (older kernels "%10u "
 * after "N: "): after the colon, column j is the 11 bytes at 11*j, a blank,
 * blanks, then digits.  Rows laid out so ("fixed") can be compared with the
 * previous reading column by column. */
#define FIELD_WIDTH 11

/* Counts of row a that need zeroing after a short row (ERR, MIS). */
static void zero_u64(uint64_t *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                v[i] = 0;
}

static void copy_u64(uint64_t *dst, const uint64_t *src, size_t n) {
        memcpy(dst, src, n * sizeof(*dst));
}

/* One row the slow way: the id, every count token, the tail.  Fills the
 * row's layout (fixed or not) for the next delta parse. */
static int parse_row(struct cursor *line, const char *line_start, size_t n_cpus, struct procfs_irq *irq,
                     uint64_t *counts, struct procfs_irq_layout *lay) {
        const char *id, *tok;
        size_t il, tl, col = 0;
        int r;

        r = split_row_id(line, &id, &il);
        if (r < 0)
                return r;
        *irq = (struct procfs_irq) {};
        lay->cols_off = (size_t) (line->p - line_start);
        lay->fixed = true;

        if (is_digit(id[0])) {
                uint64_t v;

                r = parse_u64(id, il, &v);
                if (r < 0)
                        return r;
                if (v > UINT32_MAX)
                        return -ERANGE;
                irq->numeric = true;
                irq->irq = (unsigned) v;
                copy_field(irq->id, sizeof(irq->id), id, il);
                /* One count per header column, whatever the padding:
                 * on big hosts counts overflow the %10u width. */
                for (col = 0; col < n_cpus; col++) {
                        size_t field = lay->cols_off + col * FIELD_WIDTH;

                        r = next_count(line, &counts[col]);
                        if (r < 0)
                                return r;
                        irq->total = add_sat(irq->total, counts[col]);
                        if ((size_t) (line->p - line_start) != field + FIELD_WIDTH || !is_blank(line_start[field]))
                                lay->fixed = false;
                }
                parse_irq_tail(line, irq);
        } else {
                struct cursor save;

                /* NMI, LOC, ..., ERR and MIS (one count), arm's IPI0:
                 * up to one count per column, then a description. */
                copy_field(irq->id, sizeof(irq->id), id, il);
                for (;;) {
                        save = *line;
                        if (col >= n_cpus || !next_token(line, &tok, &tl) || !all_digits(tok, tl)) {
                                *line = save;
                                break;
                        }
                        r = parse_u64(tok, tl, &counts[col]);
                        if (r < 0)
                                return r;
                        irq->total = add_sat(irq->total, counts[col]);
                        if ((size_t) (tok + tl - line_start) != lay->cols_off + (col + 1) * FIELD_WIDTH ||
                            !is_blank(line_start[lay->cols_off + col * FIELD_WIDTH]))
                                lay->fixed = false;
                        col++;
                }
                if (col == 0)
                        return -EBADMSG;
                if (col < n_cpus) {
                        lay->fixed = false;
                        zero_u64(counts + col, n_cpus - col);
                }
                skip_blanks(line);
                while (line->end > line->p && is_blank(line->end[-1]))
                        line->end--;
                copy_field(irq->name, sizeof(irq->name), line->p, (size_t) (line->end - line->p));
        }
        return 0;
}

/* One count field [f, f+FIELD_WIDTH) of a fixed row: a blank, blanks, then
 * at least one digit up to its end.  False for anything else (the slow
 * parse then says what is wrong). */
static bool parse_field(const char *f, uint64_t *ret) {
        size_t i = 1;
        uint64_t v = 0;

        if (!is_blank(f[0]))
                return false;
        while (i < FIELD_WIDTH && is_blank(f[i]))
                i++;
        if (i == FIELD_WIDTH)
                return false;
        for (; i < FIELD_WIDTH; i++) {
                if (!is_digit(f[i]))
                        return false;
                v = v * 10 + (unsigned) (f[i] - '0');
        }
        *ret = v;
        return true;
}

/* First index >= from where a and b differ, or n.  Equal stretches go by
 * memcmp (vectorised) 256 bytes at a time: a changed row of a 256-CPU host
 * is 2.8 KB with usually one changed column. */
static size_t first_difference(const char *a, const char *b, size_t from, size_t n) {
        size_t k = from;

        while (n - k >= 256 && memcmp(a + k, b + k, 256) == 0)
                k += 256;
        /* then 8 bytes at a time, the byte from the lowest set bit */
        while (n - k >= 8) {
                uint64_t x, y;

                memcpy(&x, a + k, 8);
                memcpy(&y, b + k, 8);
                if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                        return k + (size_t) __builtin_ctzll(x ^ y) / 8;
#else
                        break;
#endif
                }
                k += 8;
        }
        while (k < n && a[k] == b[k])
                k++;
        return k;
}

/* Row new_line (cursor at its start) against the same row of the previous
 * reading: identical bytes copy the parsed row; a fixed row of the same
 * length re-parses only the count fields whose bytes changed, and the tail
 * only when it changed.  has_base: counts holds the row prev's row was
 * compared with (a taken-over block), so only prev's changed columns are
 * copied.  Returns false when the row must go the slow way; true with the
 * same result parse_row() would give. */
static bool parse_row_delta(const struct cursor *line, size_t n_cpus, const struct procfs_interrupts *prev,
                            size_t prow, bool has_base, struct procfs_irq *irq, uint64_t *counts,
                            struct procfs_irq_layout *lay) {
        const struct procfs_irq_layout *pl = &prev->layout[prow];
        const char *a = prev->text + pl->off, *b = line->p;
        size_t n = (size_t) (line->end - line->p), cols_end, k;
        uint64_t total;

        if (!pl->fixed || pl->len != n)
                return false;
        cols_end = pl->cols_off + n_cpus * FIELD_WIDTH;
        /* the row id and colon must be the same */
        if (memcmp(a, b, pl->cols_off) != 0)
                return false;
        *irq = prev->irqs[prow];
        irq->counts = NULL;
        lay->cols_off = pl->cols_off;
        lay->fixed = true;
        lay->lo = 1;
        lay->hi = 0;
        if (!has_base)
                copy_u64(counts, prev->irqs[prow].counts, n_cpus);
        else if (pl->lo <= pl->hi)
                copy_u64(counts + pl->lo, prev->irqs[prow].counts + pl->lo, pl->hi - pl->lo + 1);

        /* One pass over the count fields, no memcmp of the whole line
         * first: on a 256-CPU host nearly every row changes in a column or
         * two each second, and that memcmp read the bytes up to the first
         * change twice.  Fixed fields hold at most 10 digits: the total of
         * up to CPUSET_MAX of them cannot saturate, so it is updated by
         * differences. */
        total = irq->total;
        for (k = first_difference(a, b, pl->cols_off, cols_end); k < cols_end;
             k = first_difference(a, b, k, cols_end)) {
                size_t col = (k - pl->cols_off) / FIELD_WIDTH;
                uint64_t v;

                if (!parse_field(b + pl->cols_off + col * FIELD_WIDTH, &v))
                        return false;
                total = total - counts[col] + v;
                counts[col] = v;
                if (lay->lo > lay->hi)
                        lay->lo = (uint32_t) col;
                lay->hi = (uint32_t) col;
                k = pl->cols_off + (col + 1) * FIELD_WIDTH;
        }
        irq->total = total;
        if (memcmp(a + cols_end, b + cols_end, n - cols_end) != 0) {
                struct cursor c = { b + cols_end, line->end };

                /* the last count must end there, as next_count() wants */
                if (c.p < c.end && !is_blank(*c.p))
                        return false;
                if (irq->numeric) {
                        irq->chip[0] = irq->hwirq[0] = irq->name[0] = 0;
                        parse_irq_tail(&c, irq);
                } else {
                        /* the slow parse stops at n_cpus counts too: what
                         * follows is the description, digits or not */
                        skip_blanks(&c);
                        while (c.end > c.p && is_blank(c.end[-1]))
                                c.end--;
                        copy_field(irq->name, sizeof(irq->name), c.p, (size_t) (c.end - c.p));
                }
        }
        return true;
}

/* The row of prev to compare new row id [id, id+il) with: the next one in
 * order, or one a few rows on (IRQs freed since); SIZE_MAX for none (a new
 * IRQ).  *k is prev's row cursor. */
static size_t match_prev_row(const struct procfs_interrupts *prev, size_t *k, const char *id, size_t il) {
        for (size_t j = *k; j < prev->n_irqs && j < *k + 8; j++)
                if (token_eq(id, il, prev->irqs[j].id) && il < sizeof(prev->irqs[j].id) - 1) {
                        *k = j + 1;
                        return j;
                }
        return SIZE_MAX;
}

/* Room for rows rows in s's per-row arrays, keeping the first n_irqs.
 * Every element is written by the parse: no zeroing.  Pointers into them
 * (irq->counts) are set once the rows are all in.  A counts block that
 * another reading holds (a taken-over spare) is copied, not moved. */
static int grow_rows(struct procfs_interrupts *s, size_t rows) {
        void *irqs, *layout;
        struct procfs_counts *counts;

        rows = MAX(rows, (size_t) 1);
        if (rows > SIZE_MAX / sizeof(*s->irqs) ||
            (s->n_cpus > 0 && rows > (SIZE_MAX - sizeof(*counts)) / sizeof(uint64_t) / s->n_cpus))
                return -ENOMEM;
        irqs = realloc(s->irqs, rows * sizeof(*s->irqs));
        if (!irqs)
                return -ENOMEM;
        s->irqs = irqs;
        layout = realloc(s->layout, rows * sizeof(*s->layout));
        if (!layout)
                return -ENOMEM;
        s->layout = layout;
        if (s->counts_block && s->counts_block->rows >= rows)
                counts = s->counts_block;
        else if (s->counts_block && s->counts_block->refs == 1) {
                counts = realloc(s->counts_block, sizeof(*counts) + rows * s->n_cpus * sizeof(uint64_t));
                if (!counts)
                        return -ENOMEM;
                counts->rows = rows;
        } else {
                counts = counts_new(rows, s->n_cpus, s->serial);
                if (!counts)
                        return -ENOMEM;
                if (s->counts_block)
                        copy_u64(counts->v, s->counts_block->v, s->n_irqs * s->n_cpus);
                counts_unref(s->counts_block);
        }
        s->counts_block = counts;
        s->rows_allocated = rows;
        return 0;
}

static uint64_t next_serial(void) {
        static uint64_t serial;
        return __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
}

/* The parser behind procfs_interrupts_parse(_delta) and _read(_delta):
 * text is buf itself when owned (the reader's buffer, taken over), else a
 * copy is kept for the next delta parse.  prev may be NULL. */
static int interrupts_parse(const char *buf, size_t len, char *owned, const struct procfs_interrupts *prev,
                            struct procfs_interrupts *ret) {
        struct procfs_interrupts s = {};
        size_t pos = 0, rows, n_numeric = 0, pk = 0;
        bool sorted = true, has_base = false;
        unsigned last_irq = 0;
        struct cursor line;
        int r;

        *ret = (struct procfs_interrupts) {};
        s.serial = next_serial();
        if (owned)
                s.text = owned;
        else {
                s.text = malloc(len + 1);
                if (!s.text) {
                        r = -ENOMEM;
                        goto fail;
                }
                if (len > 0)
                        memcpy(s.text, buf, len);
                s.text[len] = 0;
        }
        buf = s.text;
        s.text_len = len;

        while (next_line(buf, len, &pos, &line)) {
                struct procfs_irq *irq;
                struct procfs_irq_layout *lay;
                const char *line_start = line.p;
                uint64_t *counts;

                if (line_is_blank(&line))
                        continue;
                if (!s.cpus) {
                        r = parse_cpu_header(&line, &s.cpus, &s.n_cpus);
                        if (r < 0)
                                goto fail;
                        /* Same header (same CPU columns): rows can be
                         * compared with prev's; hotplug parses all anew. */
                        if (prev && prev->text && prev->layout && prev->n_cpus == s.n_cpus &&
                            prev->header_len == (size_t) (line.end - line_start) &&
                            memcmp(prev->text + prev->header_off, line_start, prev->header_len) == 0)
                                s.base_serial = prev->serial;
                        else
                                prev = NULL;
                        s.header_off = (size_t) (line_start - buf);
                        s.header_len = (size_t) (line.end - line_start);
                        /* A reading like prev has about its rows: room
                         * for a few new IRQs spares a pass over the text
                         * (a megabyte on a 256-CPU host) to count lines. */
                        rows = prev ? prev->n_irqs + 16 : count_lines(buf + pos, len - pos);
                        if (prev && prev->spare && prev->spare->refs == 1 && prev->spare->serial == prev->base_serial &&
                            prev->spare->n_cpus == s.n_cpus) {
                                /* prev's base is gone: its counts are ours
                                 * to update (prev keeps its reference,
                                 * but the serial says they are not its
                                 * base's any more); more rows than it has
                                 * room for copy it */
                                s.counts_block = counts_ref(prev->spare);
                                s.counts_block->serial = s.serial;
                                rows = s.counts_block->rows;
                                has_base = true;
                        }
                        r = grow_rows(&s, rows);
                        if (r < 0)
                                goto fail;
                        continue;
                }
                if (s.n_irqs == s.rows_allocated) {
                        const struct procfs_counts *before = s.counts_block;

                        r = grow_rows(&s, s.n_irqs * 2);
                        if (r < 0)
                                goto fail;
                        /* a copy holds the base's rows no further */
                        has_base = has_base && s.counts_block == before;
                }
                irq = &s.irqs[s.n_irqs];
                lay = &s.layout[s.n_irqs];
                counts = s.counts_block->v + s.n_irqs * s.n_cpus;
                lay->off = (size_t) (line_start - buf);
                lay->len = (size_t) (line.end - line_start);
                lay->base_row = SIZE_MAX;
                lay->lo = 0;
                lay->hi = s.n_cpus > 0 ? (uint32_t) (s.n_cpus - 1) : 0;

                if (prev) {
                        struct cursor c = line;
                        const char *id;
                        size_t il, prow;

                        skip_blanks(&c);
                        id = c.p;
                        while (c.p < c.end && *c.p != ':' && !is_blank(*c.p))
                                c.p++;
                        il = (size_t) (c.p - id);
                        prow = il > 0 ? match_prev_row(prev, &pk, id, il) : SIZE_MAX;
                        /* the taken-over block has the base's row
                         * prev's row was compared with if it is this one */
                        if (prow != SIZE_MAX &&
                            parse_row_delta(&line, s.n_cpus, prev, prow, has_base && prev->layout[prow].base_row == s.n_irqs,
                                            irq, counts, lay)) {
                                lay->base_row = prow;
                                goto parsed;
                        }
                        lay->lo = 0;
                        lay->hi = s.n_cpus > 0 ? (uint32_t) (s.n_cpus - 1) : 0;
                }
                r = parse_row(&line, line_start, s.n_cpus, irq, counts, lay);
                if (r == -EBADMSG || r == -ERANGE) {
                        /* A row we cannot read (arm's "FIQ:  fiq_glue" of
                         * show_fiq_list, a row cut short) loses that row
                         * only.  Said once: a delta parse meets it again
                         * every tick.  Its counts may have reached the block:
                         * the base's rows there are not to be trusted. */
                        has_base = false;
                        if (!prev)
                                log_debug("procfs: proc/interrupts: skipping a row it cannot read: \"%.*s\"",
                                          (int) MIN(line.end - line_start, (ptrdiff_t) 80), line_start);
                        continue;
                }
                if (r < 0)
                        goto fail;
        parsed:
                if (irq->numeric) {
                        if (n_numeric > 0 && irq->irq <= last_irq)
                                sorted = false;
                        last_irq = irq->irq;
                        n_numeric++;
                }
                s.n_irqs++;
        }
        if (!s.cpus) {
                r = -EBADMSG;
                goto fail;
        }
        for (size_t i = 0; i < s.n_irqs; i++)
                s.irqs[i].counts = s.counts_block->v + i * s.n_cpus;
        /* for the reading after this one to take over once prev is freed */
        if (prev)
                s.spare = counts_ref(prev->counts_block);

        if (n_numeric > 0) {
                size_t k = 0;

                s.by_irq = malloc(n_numeric * sizeof(*s.by_irq));
                if (!s.by_irq) {
                        r = -ENOMEM;
                        goto fail;
                }
                for (size_t i = 0; i < s.n_irqs; i++)
                        if (s.irqs[i].numeric)
                                s.by_irq[k++] = i;
                /* The kernel prints IRQs in ascending order; sort only if not. */
                if (!sorted) {
                        r = sort_by_irq(s.irqs, s.by_irq, n_numeric);
                        if (r < 0)
                                goto fail;
                }
        }
        s.n_numeric = n_numeric;
        *ret = s;
        return 0;
fail:
        interrupts_free_parts(&s);
        return r;
}

int procfs_interrupts_parse(const char *buf, size_t len, struct procfs_interrupts *ret) {
        return procfs_interrupts_parse_delta(buf, len, NULL, ret);
}

int procfs_interrupts_parse_delta(const char *buf, size_t len, const struct procfs_interrupts *prev,
                                  struct procfs_interrupts *ret) {
        if (!ret || (!buf && len > 0))
                return -EINVAL;
        return interrupts_parse(buf, len, NULL, prev, ret);
}

int procfs_interrupts_read(int rootfd, struct procfs_interrupts *ret) {
        return procfs_interrupts_read_delta(rootfd, NULL, ret);
}

int procfs_interrupts_read_delta(int rootfd, const struct procfs_interrupts *prev, struct procfs_interrupts *ret) {
        char *buf = NULL;
        size_t len;
        int r;

        if (!ret)
                return -EINVAL;
        *ret = (struct procfs_interrupts) {};
        r = rootfs_read_sized(rootfd, "proc/interrupts", prev ? prev->text_len : 0, &buf, &len);
        if (r < 0)
                return r;
        /* the parser owns buf from here, freed on error too */
        r = interrupts_parse(buf, len, buf, prev, ret);
        if (r < 0)
                log_debug_errno(r, "procfs: cannot parse proc/interrupts: %m");
        return r;
}

bool procfs_interrupts_row_changes(const struct procfs_interrupts *s, const struct procfs_interrupts *base,
                                   size_t row, size_t base_row, size_t *ret_lo, size_t *ret_hi) {
        const struct procfs_irq_layout *l;

        if (!s || !base || !s->layout || s->base_serial == 0 || s->base_serial != base->serial || row >= s->n_irqs)
                return false;
        l = &s->layout[row];
        if (l->base_row != base_row)
                return false;
        *ret_lo = l->lo;
        *ret_hi = l->hi;
        return true;
}

void procfs_interrupts_free(struct procfs_interrupts *s) {
        if (!s)
                return;
        interrupts_free_parts(s);
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
        if (!s)
                return -1;
        return find_column(s->cpus, s->n_cpus, cpu);
}

int procfs_parse_pid_stat(const char *buf, size_t len, struct procfs_pid_stat *ret) {
        struct procfs_pid_stat st = { .processor = -1 };
        const char *open, *close = NULL, *p, *end = buf + len;
        uint64_t v;

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
                        if (util_parse_u64(s, n, &v) < 0)
                                return -EBADMSG;
                        if (field == 4) {
                                if (v > INT32_MAX)
                                        return -EBADMSG;
                                st.ppid = (pid_t) v;
                        } else if (field == 9) {
                                if (v > UINT32_MAX)
                                        return -EBADMSG;
                                st.flags = (unsigned) v;
                        } else if (field == 14)
                                st.utime = v;
                        else if (field == 15)
                                st.stime = v;
                        else
                                st.starttime = v;
                }
        }
        *ret = st;
        return 0;
}
