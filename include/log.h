/* Logging to the journal with structured fields, or to stderr ("<N>" when
 * it is the journal's stream, else "[time ]level: message").  Library code
 * logs at debug only; the layer that decides logs above it. */
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
/* Local time before stderr lines that do not go to the journal. */
void log_set_timestamps(bool on);
/* A stderr line's prefix into buf, its length returned. */
struct timespec;
size_t log_format_prefix(char *buf, size_t size, int level, bool stream_is_journal, const struct timespec *ts);
int log_get_max_level(void);
/* "debug", "info", "notice", "warning", "err"/"error", "crit" -> LOG_*; -EINVAL. */
int log_level_from_string(const char *s);
const char *log_level_to_string(int level);

/* fields: NULL or extra journal fields ("IRQ=73"), NULL-terminated; error
 * (either sign) fills %m and ERRNO=.  -abs(error), for `return log_...`. */
int log_internal(int level, int error, const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* text as it is, without log_internal's 2 KB cut (the load lines). */
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
/* Appends IRQ= (irq > 0), DEVICE= and QUEUE= (queue >= 0) to fields[*n],
 * formatted in f_irq, f_dev and f_queue (len bytes each). */
void log_object_fields(unsigned irq, const char *device, int queue, char *f_irq, char *f_dev, char *f_queue,
                       size_t len, const char **fields, size_t *n);

/* At most burst messages per interval (0: no limit); suppressed counts the
 * refusals, which the caller reports and clears. */
struct log_ratelimit {
        uint64_t interval_usec;
        unsigned burst;
        bool started;
        uint64_t begin;
        unsigned num;
        unsigned suppressed;
};
bool log_ratelimit_ok(struct log_ratelimit *rl, uint64_t now);
