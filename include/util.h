/* Small helpers shared by every module: cleanup attributes, array size,
 * checked parsing, formatting, and the EINTR-proof read and write loops. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define UTIL_ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}

/* A decimal from [s, s+len) ((size_t)-1: a C string); -EINVAL, -ERANGE. */
int util_parse_u64(const char *s, size_t len, uint64_t *ret);

/* "<prefix><N><rest>" ("cpu12", "rx-3", "-TxRx-5"): N (decimal, fits an
 * int) into *ret when rest follows it exactly. */
bool util_parse_numbered(const char *s, const char *prefix, const char *rest, int *ret);

/* util_parse_u64 for a signed int (a leading '-'). */
int util_parse_int(const char *s, size_t len, int *ret);

/* "2s", "500ms", "0.5s", "5min", "1h" or bare seconds ("0.5") into
 * microseconds; -EINVAL, -ERANGE. */
int util_parse_duration_usec(const char *s, uint64_t *ret);

int util_parse_bool(const char *s, bool *ret);

char *util_strstrip(char *s);

/* After n = snprintf(buf, len, ...): when the text was cut (n >= len),
 * ends it in "..." so a reader sees the cut.  Returns buf. */
char *util_mark_cut(char *buf, size_t len, int n);

/* The digits of v written backwards ending before end (20 bytes, no NUL);
 * returns where they start.  No printf: status.json's numbers each tick. */
char *util_format_u64(char *end, uint64_t v);

/* v in at most 6 decimals, trailing zeros dropped ("23012.5"), "%.15g"
 * from 1e9 on, without printf; buf needs 32 bytes.  Returns the length. */
size_t util_format_fixed6(char *buf, double v);

uint64_t util_now_usec(clockid_t id);

/* C-style escaping of outside names (comm, ban files) into buf so none
 * forges a log line: "\\", "\t", "\n", "\r", else "\xHH" for bytes below
 * 0x20, DEL and above 0x7e; controls_only leaves "\\" and UTF-8 alone (a
 * whole log message).  A cut ends in "..."; UTIL_CESCAPE_SIZE(len) holds
 * any input whole.  Returns buf. */
#define UTIL_CESCAPE_SIZE(len) (4 * (len) + 1)
char *util_cescape(const char *s, size_t len, bool controls_only, char *buf, size_t size);

/* Whether util_cescape() would change s (len bytes). */
bool util_needs_cescape(const char *s, size_t len, bool controls_only);

/* A stream onto out with controls_only escaping but for newlines and
 * tabs, for terminal output of outside data; fclose() it (out stays
 * open).  NULL and errno on failure. */
FILE *util_escaping_stream(FILE *out);

/* Grows *array (zero-filled, *allocated elements of sz) to hold need: 0 or -ENOMEM. */
int util_grow(void **array, size_t *allocated, size_t need, size_t sz);

/* write(2) until all of buf is written.  0 or -errno. */
int util_write_all(int fd, const void *buf, size_t len);
/* read(2) until len bytes or EOF.  The bytes read, or -errno. */
ssize_t util_read_full(int fd, void *buf, size_t len);
