/* Logging: to the journal with structured fields when running under systemd
 * (JOURNAL_STREAM matches stderr), otherwise to stderr: with a "<N>" priority
 * prefix (systemd's stderr convention) when stderr is the journal's stream,
 * else as plain text, "[timestamp ]level: message".
 * Library code logs at debug only; the layer that decides logs above it. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

enum log_target {
        LOG_TARGET_AUTO,    /* journal if stderr is the journal, else stderr */
        LOG_TARGET_STDERR,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_MAX,
        LOG_TARGET_INVALID = -1,
};

void log_setup(enum log_target target, int max_level);
void log_set_max_level(int level);
/* Prefixes stderr lines that do not go to the journal with the local time. */
void log_set_timestamps(bool on);
/* Writes the stderr prefix of a line into buf (NUL-terminated; returns its
 * length): "<N>" when the stream is the journal, else "[YYYY-MM-DD
 * HH:MM:SS.mmm ]level: " (the time when ts is not NULL). */
struct timespec;
size_t log_format_prefix(char *buf, size_t size, int level, bool stream_is_journal, const struct timespec *ts);
int log_get_max_level(void);
/* "debug", "info", "notice", "warning", "err"/"error", "crit" -> LOG_*; -EINVAL. */
int log_level_from_string(const char *s);
const char *log_level_to_string(int level);

/* Logs fmt at level; fields is NULL or a NULL-terminated array of extra
 * journal fields ("IRQ=73").  error (errno, either sign) fills %m and ERRNO=.
 * Returns -abs(error) so callers can `return log_...`. */
int log_internal(int level, int error, const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Logs text as it is: no format, and no length limit (log_internal cuts
 * at 2 KB; the per-tick load line of a 256-CPU host is ~15 KB). */
void log_text(int level, const char *text);

#define log_full_errno(level, error, ...) log_internal((level), (error), NULL, __VA_ARGS__)
#define log_debug(...) log_internal(LOG_DEBUG, 0, NULL, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, NULL, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, NULL, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, NULL, __VA_ARGS__)
#define log_error(...) log_internal(LOG_ERR, 0, NULL, __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_DEBUG, (e), NULL, __VA_ARGS__)
#define log_info_errno(e, ...) log_internal(LOG_INFO, (e), NULL, __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, (e), NULL, __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_ERR, (e), NULL, __VA_ARGS__)
/* Structured: log_fields(LOG_INFO, ((const char *[]){"IRQ=73", NULL}), "...") */
#define log_fields(level, fields, ...) log_internal((level), 0, (fields), __VA_ARGS__)
/* Appends the journal fields IRQ= (irq > 0), DEVICE= (device non-empty)
 * and QUEUE= (with a device, queue >= 0) to fields[*n], formatted in
 * f_irq, f_dev and f_queue (len bytes each). */
void log_object_fields(unsigned irq, const char *device, int queue, char *f_irq, char *f_dev, char *f_queue,
                       size_t len, const char **fields, size_t *n);

/* Rate limit for repeated conditions: at most burst messages per interval;
 * returns true when this one may be logged.  now in microseconds (passed
 * in: no clock read).  interval or burst 0: no limit.  suppressed counts
 * the refusals; the caller reports and clears it. */
struct log_ratelimit {
        uint64_t interval_usec;
        unsigned burst;
        bool started;
        uint64_t begin;
        unsigned num;
        unsigned suppressed;
};
bool log_ratelimit_ok(struct log_ratelimit *rl, uint64_t now);
