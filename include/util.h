/* Small helpers shared by every module: cleanup attributes, array size,
 * checked integer parsing.  No I/O here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd);

/* Parses a whole decimal unsigned 64-bit number from [s, s+len); -EINVAL on
 * anything but digits, -ERANGE on overflow.  len may be (size_t)-1 for a C string. */
int util_parse_u64(const char *s, size_t len, uint64_t *ret);

/* Like util_parse_u64 for a signed int (accepts a leading '-'). */
int util_parse_int(const char *s, size_t len, int *ret);

/* Parses a duration such as "2s", "500ms", "0.5s", "5min", "1h" or a bare
 * number of seconds ("2", "0.5") into microseconds; -EINVAL / -ERANGE on
 * bad input. */
int util_parse_duration_usec(const char *s, uint64_t *ret);

/* Parses yes/no/true/false/on/off/1/0; -EINVAL otherwise. */
int util_parse_bool(const char *s, bool *ret);

/* Returns s with leading and trailing white space removed (in place). */
char *util_strstrip(char *s);

/* After n = snprintf(buf, len, ...): when the text was cut (n >= len),
 * ends it in "..." so a reader sees the cut.  Returns buf. */
char *util_mark_cut(char *buf, size_t len, int n);

/* The decimal digits of v, written backwards to end just before end (no
 * terminator; 20 bytes before end are enough); returns where they start.
 * status.json and the metrics are written at every full tick, where
 * printf's format parsing would be most of their cost. */
char *util_format_u64(char *end, uint64_t v);

/* v (finite) into buf in at most 6 decimals, trailing zeros dropped
 * ("0.420132", "23012.5", "-1"), without printf; as "%.15g" when |v| is
 * 1e9 or more (6 decimals there are more digits than a double holds).
 * buf needs 32 bytes.  Returns the length. */
size_t util_format_fixed6(char *buf, double v);

/* Clock id (CLOCK_MONOTONIC, CLOCK_REALTIME) now, in microseconds. */
uint64_t util_now_usec(clockid_t id);

/* Grows *array (element size sz) so that it holds at least need elements;
 * *allocated tracks capacity.  Returns 0 or -ENOMEM. */
int util_grow(void **array, size_t *allocated, size_t need, size_t sz);

#include <unistd.h>
static inline void closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}
