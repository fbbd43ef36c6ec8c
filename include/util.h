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

/* C-style escaping of the len bytes at s (names that came from outside:
 * comm, cmdline, ban file names, IRQ names) into buf, so that none forges a
 * log line or reaches a terminal raw: backslash as "\\", tab, newline and
 * carriage return as "\t", "\n", "\r", every other byte below 0x20, DEL
 * and every byte above 0x7e as "\xHH".  With controls_only, only bytes
 * below 0x20 and DEL are escaped (a whole log message: its backslashes and
 * UTF-8 are its own).  At most size - 1 bytes and a NUL (size > 0); a cut
 * ends in "...".  UTIL_CESCAPE_SIZE(len) holds any input whole.  Returns
 * buf. */
#define UTIL_CESCAPE_SIZE(len) (4 * (len) + 1)
char *util_cescape(const char *s, size_t len, bool controls_only, char *buf, size_t size);

/* Whether util_cescape() would change s (len bytes). */
bool util_needs_cescape(const char *s, size_t len, bool controls_only);

/* A stream that writes what it is given to out with util_cescape()'s
 * controls_only escaping, newlines and tabs aside: text printed for a
 * terminal (irqsteerctl status, bans, inventory) from data that came from
 * outside sends no escape sequence to it.  fclose() it (out stays open;
 * it is flushed).  NULL and errno on failure. */
#include <stdio.h>
FILE *util_escaping_stream(FILE *out);

/* Grows *array (element size sz) so that it holds at least need elements;
 * *allocated tracks capacity.  Returns 0 or -ENOMEM. */
int util_grow(void **array, size_t *allocated, size_t need, size_t sz);

#include <unistd.h>
static inline void closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}
