/* Fixed-size CPU sets (up to CPUSET_MAX CPUs) and the two kernel text forms:
 * cpulists ("0-3,8,10-11") and hex masks ("ff,00000001", 32-bit chunks, most
 * significant first).  Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPUSET_MAX 8192
#define CPUSET_WORDS (CPUSET_MAX / 64)

typedef struct cpuset {
        uint64_t w[CPUSET_WORDS];
} cpuset_t;

/* Bounds every operation to the first ncpus CPUs (rounded up to 64), the
 * host's possible CPUs, measured once at start: a set then reads as if it
 * held no CPU at or above the bound.  -ERANGE outside [1, CPUSET_MAX]. */
int cpuset_set_limit(int ncpus);

void cpuset_zero(cpuset_t *s);
/* Adds cpu; returns -ERANGE (set unchanged) if cpu is outside [0, CPUSET_MAX). */
int cpuset_set(cpuset_t *s, int cpu);
void cpuset_clear(cpuset_t *s, int cpu);
bool cpuset_isset(const cpuset_t *s, int cpu);
int cpuset_count(const cpuset_t *s);
bool cpuset_empty(const cpuset_t *s);
/* The set's only CPU; -1 when it is empty or has more than one. */
int cpuset_only(const cpuset_t *s);
bool cpuset_equal(const cpuset_t *a, const cpuset_t *b);
/* First CPU >= from in the set, or -1. */
int cpuset_next(const cpuset_t *s, int from);
#define cpuset_first(s) cpuset_next((s), 0)
#define CPUSET_FOREACH(cpu, s) \
        for (int cpu = cpuset_first(s); cpu >= 0; cpu = cpuset_next((s), cpu + 1))
/* Highest CPU in the set, or -1. */
int cpuset_last(const cpuset_t *s);
void cpuset_and(cpuset_t *ret, const cpuset_t *a, const cpuset_t *b);
void cpuset_or(cpuset_t *ret, const cpuset_t *a, const cpuset_t *b);
/* ret = a & ~b */
void cpuset_andnot(cpuset_t *ret, const cpuset_t *a, const cpuset_t *b);
bool cpuset_intersects(const cpuset_t *a, const cpuset_t *b);
bool cpuset_subset(const cpuset_t *sub, const cpuset_t *super);
/* A set holding only cpu. */
cpuset_t cpuset_single(int cpu);

/* A set kept in a long-lived record (one per IRQ, queue or action):
 * only its words up to the last nonzero one, on the heap, where a
 * cpuset_t takes CPUSET_MAX's 1 kB on any host (bench/README.md, "Big
 * hosts").  Zero-initialised = empty; owned by its record, never copied
 * by value (cpuset_kept_copy). */
typedef struct cpuset_kept {
        uint64_t *w;
        uint32_t n;              /* words in w */
} cpuset_kept_t;

/* Stores s in k (replacing its value).  -ENOMEM leaves k unchanged. */
int cpuset_keep(cpuset_kept_t *k, const cpuset_t *s);
/* The kept set, as a whole cpuset_t. */
cpuset_t cpuset_kept_get(const cpuset_kept_t *k);
bool cpuset_kept_equal(const cpuset_kept_t *k, const cpuset_t *s);
/* Two kept sets hold the same CPUs, compared in place. */
bool cpuset_kept_same(const cpuset_kept_t *a, const cpuset_kept_t *b);
/* ret = k & s, without a whole copy of k first. */
void cpuset_kept_and(cpuset_t *ret, const cpuset_kept_t *k, const cpuset_t *s);
bool cpuset_kept_empty(const cpuset_kept_t *k);
/* cpuset_next() and cpuset_only() of the kept set, read in place. */
int cpuset_kept_next(const cpuset_kept_t *k, int from);
#define cpuset_kept_first(k) cpuset_kept_next((k), 0)
#define CPUSET_KEPT_FOREACH(cpu, k) \
        for (int cpu = cpuset_kept_first(k); cpu >= 0; cpu = cpuset_kept_next((k), cpu + 1))
int cpuset_kept_only(const cpuset_kept_t *k);
bool cpuset_kept_isset(const cpuset_kept_t *k, int cpu);
/* Stores src's value in ret; -ENOMEM leaves ret unchanged. */
int cpuset_kept_copy(cpuset_kept_t *ret, const cpuset_kept_t *src);
void cpuset_kept_free(cpuset_kept_t *k);

/* Parses a cpulist such as "0-3,8,10-11" or "0-15:2" (stride, as the kernel
 * accepts).  Leading/trailing white space and an empty list (= empty set) are
 * accepted.  -EINVAL on syntax errors, -ERANGE for CPUs >= CPUSET_MAX. */
int cpuset_parse_list(const char *s, cpuset_t *ret);
/* Room for any cpulist cpuset_format_list() writes, with its NUL: the
 * longest has every third CPU missing, "a-b," of up to 4-digit numbers for
 * each 3 CPUs (26568 characters for CPUSET_MAX 8192). */
#define CPUSET_LIST_MAX ((CPUSET_MAX / 3 + 1) * 10 + 1)
/* Formats as a cpulist; "" for the empty set.  -ENOBUFS if it does not fit. */
int cpuset_format_list(const cpuset_t *s, char *buf, size_t len);

/* The set as text for logs, the journal and reports: the cpulist; empty
 * for the empty set; never "" otherwise: a list that does not fit in len
 * is cut after a whole range and ends in ",... (N CPUs)", or is just
 * "(N CPUs)" when not even one range fits.  Returns buf. */
const char *cpuset_to_text(const cpuset_t *s, const char *empty, char *buf, size_t len);

/* Parses the kernel's hex mask ("00000000,0000ffff", chunks of up to 8 hex
 * digits separated by commas, most significant first; "0" is empty). */
int cpuset_parse_mask(const char *s, cpuset_t *ret);
/* Formats as a kernel hex mask with enough 32-bit chunks to hold nbits bits
 * (nbits 0 = as few as the set needs). -ENOBUFS if it does not fit. */
int cpuset_format_mask(const cpuset_t *s, int nbits, char *buf, size_t len);
