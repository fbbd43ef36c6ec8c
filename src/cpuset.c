/* CPU sets and the kernel's cpulist / hex-mask text forms. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>

#include "cpuset.h"

/* The words in use: every loop below stops at the host's possible CPUs
 * (cpuset_set_limit), 4 words on a 256-CPU host instead of all 128.  Bits
 * above the limit may be set (a configuration written for a bigger host)
 * or undefined (the result of an operation on a set never zeroed); no
 * function reads them. */
static size_t n_words = CPUSET_WORDS;

int cpuset_set_limit(int ncpus) {
        if (ncpus <= 0 || ncpus > CPUSET_MAX)
                return -ERANGE;
        n_words = ((size_t) ncpus + 63) / 64;
        return 0;
}

/* What both set types do on n words of w (a kept set has fewer). */
static bool words_isset(const uint64_t *w, size_t n, int cpu) {
        if (cpu < 0 || (size_t) cpu >= n * 64)
                return false;
        return (w[cpu / 64] >> (cpu % 64)) & 1;
}

static int words_only(const uint64_t *w, size_t n) {
        int cpu = -1;

        for (size_t i = 0; i < n; i++) {
                if (!w[i])
                        continue;
                if (cpu >= 0 || (w[i] & (w[i] - 1)))
                        return -1;
                cpu = (int) i * 64 + __builtin_ctzll(w[i]);
        }
        return cpu;
}

static bool words_empty(const uint64_t *w, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (w[i])
                        return false;
        return true;
}

static int words_next(const uint64_t *w, size_t n, int from) {
        size_t i;
        uint64_t x;

        if (from < 0)
                from = 0;
        i = (size_t) from / 64;
        if (i >= n)
                return -1;
        x = w[i] & (~UINT64_C(0) << (from % 64));
        while (!x) {
                if (++i >= n)
                        return -1;
                x = w[i];
        }
        return (int) i * 64 + __builtin_ctzll(x);
}

/* a's na words and b's nb hold the same CPUs. */
static bool words_same(const uint64_t *a, size_t na, const uint64_t *b, size_t nb) {
        size_t n = na < nb ? na : nb;

        if (n > 0 && memcmp(a, b, n * sizeof(*a)) != 0)
                return false;
        /* the longer one's rest (it has words: never a NULL) */
        return na == nb || words_empty((na > nb ? a : b) + n, (na > nb ? na : nb) - n);
}

void cpuset_zero(cpuset_t *s) {
        memset(s, 0, sizeof(*s));
}

int cpuset_set(cpuset_t *s, int cpu) {
        if (cpu < 0 || cpu >= CPUSET_MAX)
                return -ERANGE;
        s->w[cpu / 64] |= UINT64_C(1) << (cpu % 64);
        return 0;
}

void cpuset_clear(cpuset_t *s, int cpu) {
        if (cpu < 0 || cpu >= CPUSET_MAX)
                return;
        s->w[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool cpuset_isset(const cpuset_t *s, int cpu) {
        return words_isset(s->w, n_words, cpu);
}

int cpuset_count(const cpuset_t *s) {
        int n = 0;
        for (size_t i = 0; i < n_words; i++)
                n += __builtin_popcountll(s->w[i]);
        return n;
}

int cpuset_only(const cpuset_t *s) {
        return words_only(s->w, n_words);
}

bool cpuset_empty(const cpuset_t *s) {
        return words_empty(s->w, n_words);
}

bool cpuset_equal(const cpuset_t *a, const cpuset_t *b) {
        return memcmp(a->w, b->w, n_words * sizeof(a->w[0])) == 0;
}

int cpuset_next(const cpuset_t *s, int from) {
        return words_next(s->w, n_words, from);
}

int cpuset_last(const cpuset_t *s) {
        for (size_t i = n_words; i-- > 0;)
                if (s->w[i])
                        return (int) i * 64 + 63 - __builtin_clzll(s->w[i]);
        return -1;
}

void cpuset_and(cpuset_t *ret, const cpuset_t *a, const cpuset_t *b) {
        for (size_t i = 0; i < n_words; i++)
                ret->w[i] = a->w[i] & b->w[i];
}

void cpuset_or(cpuset_t *ret, const cpuset_t *a, const cpuset_t *b) {
        for (size_t i = 0; i < n_words; i++)
                ret->w[i] = a->w[i] | b->w[i];
}

void cpuset_andnot(cpuset_t *ret, const cpuset_t *a, const cpuset_t *b) {
        for (size_t i = 0; i < n_words; i++)
                ret->w[i] = a->w[i] & ~b->w[i];
}

bool cpuset_intersects(const cpuset_t *a, const cpuset_t *b) {
        for (size_t i = 0; i < n_words; i++)
                if (a->w[i] & b->w[i])
                        return true;
        return false;
}

bool cpuset_subset(const cpuset_t *sub, const cpuset_t *super) {
        for (size_t i = 0; i < n_words; i++)
                if (sub->w[i] & ~super->w[i])
                        return false;
        return true;
}

cpuset_t cpuset_single(int cpu) {
        cpuset_t s;
        cpuset_zero(&s);
        (void) cpuset_set(&s, cpu);
        return s;
}

/* The kept words that are in use. */
static size_t kept_words(const cpuset_kept_t *k) {
        return k->n < n_words ? k->n : n_words;
}

int cpuset_keep(cpuset_kept_t *k, const cpuset_t *s) {
        size_t n = n_words;
        uint64_t *w = NULL;

        while (n > 0 && !s->w[n - 1])
                n--;
        if (n == k->n) {
                if (n > 0)
                        memcpy(k->w, s->w, n * sizeof(s->w[0]));
                return 0;
        }
        if (n > 0) {
                w = malloc(n * sizeof(*w));
                if (!w)
                        return -ENOMEM;
                memcpy(w, s->w, n * sizeof(*w));
        }
        free(k->w);
        k->w = w;
        k->n = (uint32_t) n;
        return 0;
}

cpuset_t cpuset_kept_get(const cpuset_kept_t *k) {
        cpuset_t s;
        size_t n = kept_words(k);

        if (n > 0)
                memcpy(s.w, k->w, n * sizeof(s.w[0]));
        memset(s.w + n, 0, (CPUSET_WORDS - n) * sizeof(s.w[0]));
        return s;
}

bool cpuset_kept_equal(const cpuset_kept_t *k, const cpuset_t *s) {
        return words_same(k->w, kept_words(k), s->w, n_words);
}

bool cpuset_kept_same(const cpuset_kept_t *a, const cpuset_kept_t *b) {
        return words_same(a->w, kept_words(a), b->w, kept_words(b));
}

void cpuset_kept_and(cpuset_t *ret, const cpuset_kept_t *k, const cpuset_t *s) {
        size_t n = kept_words(k);

        for (size_t i = 0; i < n_words; i++)
                ret->w[i] = i < n ? k->w[i] & s->w[i] : 0;
}

bool cpuset_kept_empty(const cpuset_kept_t *k) {
        return words_empty(k->w, kept_words(k));
}

int cpuset_kept_next(const cpuset_kept_t *k, int from) {
        return words_next(k->w, kept_words(k), from);
}

int cpuset_kept_only(const cpuset_kept_t *k) {
        return words_only(k->w, kept_words(k));
}

bool cpuset_kept_isset(const cpuset_kept_t *k, int cpu) {
        return words_isset(k->w, kept_words(k), cpu);
}

int cpuset_kept_copy(cpuset_kept_t *ret, const cpuset_kept_t *src) {
        cpuset_t s = cpuset_kept_get(src);

        return cpuset_keep(ret, &s);
}

void cpuset_kept_free(cpuset_kept_t *k) {
        free(k->w);
        *k = (cpuset_kept_t) { 0 };
}

/* Adds a..b (both < CPUSET_MAX) a word at a time. */
static void set_range(cpuset_t *s, int a, int b) {
        int wa = a / 64, wb = b / 64;
        uint64_t lo = ~UINT64_C(0) << (a % 64), hi = ~UINT64_C(0) >> (63 - b % 64);

        if (wa == wb) {
                s->w[wa] |= lo & hi;
                return;
        }
        s->w[wa] |= lo;
        for (int i = wa + 1; i < wb; i++)
                s->w[i] = ~UINT64_C(0);
        s->w[wb] |= hi;
}

/* Reads a decimal CPU number; -ERANGE past CPUSET_MAX, -EINVAL if no digit. */
static int parse_cpu(const char **p, int *ret) {
        char *end;
        unsigned long v;

        if (!isdigit((unsigned char) **p))
                return -EINVAL;
        v = strtoul(*p, &end, 10); /* ULONG_MAX on overflow: out of range too */
        if (v >= CPUSET_MAX)
                return -ERANGE;
        *p = end;
        *ret = (int) v;
        return 0;
}

int cpuset_parse_list(const char *s, cpuset_t *ret) {
        cpuset_t set;
        const char *p = s;
        int r;

        cpuset_zero(&set);
        while (isspace((unsigned char) *p))
                p++;
        while (*p && !isspace((unsigned char) *p)) {
                int a, b, stride = 1;

                r = parse_cpu(&p, &a);
                if (r < 0)
                        return r;
                b = a;
                if (*p == '-') {
                        p++;
                        r = parse_cpu(&p, &b);
                        if (r < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                        if (*p == ':') {
                                p++;
                                r = parse_cpu(&p, &stride);
                                if (r < 0)
                                        return r;
                                if (stride == 0)
                                        return -EINVAL;
                        }
                }
                if (stride == 1)
                        set_range(&set, a, b);
                else
                        for (int c = a; c <= b; c += stride)
                                (void) cpuset_set(&set, c);
                if (*p == ',') {
                        p++;
                        if (!isdigit((unsigned char) *p))
                                return -EINVAL;
                } else if (*p && !isspace((unsigned char) *p))
                        return -EINVAL;
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p)
                return -EINVAL;
        *ret = set;
        return 0;
}

/* The cpulist into buf (len > 0), whole ranges while they fit with room
 * for reserve more bytes; the length written, *ret_all when all did. */
static size_t format_ranges(const cpuset_t *s, char *buf, size_t len, size_t reserve, bool *ret_all) {
        char piece[32];
        size_t off = 0;

        buf[0] = 0;
        for (int a = cpuset_first(s); a >= 0;) {
                int b = a, pl;

                while (cpuset_isset(s, b + 1))
                        b++;
                pl = b == a ? snprintf(piece, sizeof(piece), "%s%d", off ? "," : "", a)
                            : snprintf(piece, sizeof(piece), "%s%d-%d", off ? "," : "", a, b);
                if (off + (size_t) pl + reserve >= len) {
                        *ret_all = false;
                        return off;
                }
                memcpy(buf + off, piece, (size_t) pl + 1);
                off += (size_t) pl;
                a = cpuset_next(s, b + 1);
        }
        *ret_all = true;
        return off;
}

int cpuset_format_list(const cpuset_t *s, char *buf, size_t len) {
        bool all;

        if (len == 0)
                return -ENOBUFS;
        format_ranges(s, buf, len, 0, &all);
        if (!all) {
                buf[0] = 0;
                return -ENOBUFS;
        }
        return 0;
}

int cpuset_parse_mask(const char *s, cpuset_t *ret) {
        const char *start, *end;
        cpuset_t set;
        int chunk = 0;

        while (isspace((unsigned char) *s))
                s++;
        start = s;
        end = s + strlen(s);
        while (end > start && isspace((unsigned char) end[-1]))
                end--;
        if (end == start)
                return -EINVAL;

        cpuset_zero(&set);
        /* Walk chunks from the least significant (last) one. */
        while (end > start) {
                const char *c = end;
                size_t len;
                uint32_t v;

                while (c > start && c[-1] != ',')
                        c--;
                len = (size_t) (end - c);
                if (len == 0 || len > 8 || strspn(c, "0123456789abcdefABCDEF") < len)
                        return -EINVAL;
                v = (uint32_t) strtoul(c, NULL, 16);
                if (v) {
                        if (chunk >= CPUSET_MAX / 32)
                                return -ERANGE;
                        set.w[chunk / 2] |= (uint64_t) v << (chunk % 2 * 32);
                }
                if (chunk < CPUSET_MAX / 32)
                        chunk++;
                end = c;
                if (end > start) {
                        end--; /* the comma */
                        if (end == start)
                                return -EINVAL;
                }
        }
        *ret = set;
        return 0;
}

int cpuset_format_mask(const cpuset_t *s, int nbits, char *buf, size_t len) {
        int last = cpuset_last(s);
        int chunks = nbits > 0 ? (nbits + 31) / 32 : 1;
        size_t off = 0;

        if (last >= 0 && last / 32 + 1 > chunks)
                chunks = last / 32 + 1;
        if (len == 0)
                return -ENOBUFS;
        for (int c = chunks - 1; c >= 0; c--) {
                /* chunks beyond the set (nbits from a wider file) are 0 */
                uint32_t v = (size_t) c / 2 < n_words ? (uint32_t) (s->w[c / 2] >> ((c % 2) * 32)) : 0;
                int n = snprintf(buf + off, len - off, c == chunks - 1 ? "%08" PRIx32 : ",%08" PRIx32, v);
                if (n < 0 || (size_t) n >= len - off) {
                        buf[0] = 0;
                        return -ENOBUFS;
                }
                off += n;
        }
        return 0;
}

const char *cpuset_to_text(const cpuset_t *s, const char *empty, char *buf, size_t len) {
        char tail[32];
        int n = cpuset_count(s), tl;
        size_t off;
        bool all;

        if (len == 0)
                return "";
        if (n == 0) {
                snprintf(buf, len, "%s", empty);
                return buf;
        }
        if (cpuset_format_list(s, buf, len) == 0)
                return buf;
        /* the whole list does not fit: the ranges that do with the mark */
        tl = snprintf(tail, sizeof(tail), ",... (%d CPUs)", n);
        off = format_ranges(s, buf, len, (size_t) tl, &all);
        if (off == 0)
                snprintf(buf, len, "(%d CPUs)", n); /* not even the first range: the count alone */
        else
                snprintf(buf + off, len - off, "%s", tail);
        return buf;
}
