/* Log sink: journal (structured fields) or stderr. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"
#include "util.h"

static int log_max_level = LOG_INFO;
static bool log_use_journal;
static bool log_stderr_journal;
static bool log_timestamps;

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg",   [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit",
        [LOG_ERR] = "error",     [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",     [LOG_DEBUG] = "debug",
};

/* stderr is the journal when JOURNAL_STREAM names its device:inode. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%lu:%lu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return st.st_dev == dev && st.st_ino == ino;
}

void log_setup(enum log_target target, int max_level) {
        log_max_level = max_level;
        log_stderr_journal = stderr_is_journal();
        log_use_journal = target == LOG_TARGET_JOURNAL || (target == LOG_TARGET_AUTO && log_stderr_journal);
}

void log_set_timestamps(bool on) {
        log_timestamps = on;
}

size_t log_format_prefix(char *buf, size_t size, int level, bool stream_is_journal, const struct timespec *ts) {
        char stamp[48] = "";
        struct tm tm;
        int r;

        if (size == 0)
                return 0;
        /* "<N>" is a priority to journald, noise elsewhere */
        if (stream_is_journal)
                r = snprintf(buf, size, "<%d>", level & 7);
        else {
                size_t n = ts && localtime_r(&ts->tv_sec, &tm) ?
                           strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm) : 0;

                if (n > 0)
                        snprintf(stamp + n, sizeof(stamp) - n, ".%03ld ", ts->tv_nsec / 1000000);
                r = snprintf(buf, size, "%s%s: ", stamp, level_names[level & 7]);
        }
        return r < 0 ? 0 : MIN((size_t) r, size - 1);
}

void log_set_max_level(int level) {
        log_max_level = level;
}

int log_get_max_level(void) {
        return log_max_level;
}

int log_level_from_string(const char *s) {
        if (strcasecmp(s, "err") == 0)
                return LOG_ERR;
        for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
                if (level_names[i] && strcasecmp(s, level_names[i]) == 0)
                        return (int) i;
        return -EINVAL;
}

const char *log_level_to_string(int level) {
        if (level < 0 || (size_t) level >= ELEMENTSOF(level_names))
                return NULL;
        return level_names[level];
}

static void emit_raw(int level, int error, const char *const *fields, const char *msg) {
        if (log_use_journal) {
                struct iovec iov[40];
                char *m, pbuf[32], ebuf[32];
                size_t n = 0;
                int r;

                if (asprintf(&m, "MESSAGE=%s", msg) < 0)
                        m = NULL;
                iov[n++] = m ? (struct iovec){ m, strlen(m) } :
                               (struct iovec){ (char *) "MESSAGE=(out of memory)", 23 };
                snprintf(pbuf, sizeof(pbuf), "PRIORITY=%d", level);
                iov[n++] = (struct iovec){ pbuf, strlen(pbuf) };
                iov[n++] = (struct iovec){ (char *) "SYSLOG_IDENTIFIER=irqsteerd", 27 };
                if (error) {
                        snprintf(ebuf, sizeof(ebuf), "ERRNO=%d", error);
                        iov[n++] = (struct iovec){ ebuf, strlen(ebuf) };
                }
                for (size_t i = 0; fields && fields[i] && n < ELEMENTSOF(iov); i++)
                        iov[n++] = (struct iovec){ (char *) fields[i], strlen(fields[i]) };
                r = sd_journal_sendv(iov, (int) n);
                free(m);
                if (r >= 0)
                        return;
                /* journal gone: fall through to stderr */
        }
        char prefix[64];
        struct timespec ts;
        bool stamp = log_timestamps && clock_gettime(CLOCK_REALTIME, &ts) == 0;
        size_t pl = log_format_prefix(prefix, sizeof(prefix), level, log_stderr_journal, stamp ? &ts : NULL);
        /* one write: lines of concurrent writers do not interleave */
        struct iovec line[] = { { prefix, pl }, { (char *) msg, strlen(msg) }, { (char *) "\n", 1 } };

        (void) !writev(STDERR_FILENO, line, ELEMENTSOF(line));
}

/* One message to the journal or stderr, control bytes escaped: an outside
 * name (a comm with a newline) forges no line nor reaches a terminal. */
static void emit(int level, int error, const char *const *fields, const char *msg) {
        size_t ml = strlen(msg);
        char *e;

        if (!util_needs_cescape(msg, ml, true)) {
                emit_raw(level, error, fields, msg);
                return;
        }
        e = malloc(UTIL_CESCAPE_SIZE(ml));
        emit_raw(level, error, fields, e ? util_cescape(msg, ml, true, e, UTIL_CESCAPE_SIZE(ml)) :
                                           "(a message with control bytes, and out of memory)");
        free(e);
}

int log_internal(int level, int error, const char *const *fields, const char *fmt, ...) {
        int saved_errno = errno;
        char msg[2048];
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > log_max_level)
                return -error;

        errno = error;  /* for %m */
        va_start(ap, fmt);
        util_mark_cut(msg, sizeof(msg), vsnprintf(msg, sizeof(msg), fmt, ap));
        va_end(ap);
        emit(level, error, fields, msg);
        errno = saved_errno;
        return -error;
}

void log_text(int level, const char *text) {
        int saved_errno = errno;

        if (level > log_max_level || !text)
                return;
        emit(level, 0, NULL, text);
        errno = saved_errno;
}

bool log_ratelimit_ok(struct log_ratelimit *rl, uint64_t now) {
        if (rl->interval_usec == 0 || rl->burst == 0)
                return true;
        /* a window opens at the first call, after interval, or when the
         * clock went back (0 is a valid time: `started`) */
        if (!rl->started || now < rl->begin || now - rl->begin >= rl->interval_usec) {
                rl->started = true;
                rl->begin = now;
                rl->num = 0;
        }
        if (rl->num < rl->burst) {
                rl->num++;
                return true;
        }
        rl->suppressed++;
        return false;
}

void log_object_fields(unsigned irq, const char *device, int queue, char *f_irq, char *f_dev, char *f_queue,
                       size_t len, const char **fields, size_t *n) {
        if (irq) {
                snprintf(f_irq, len, "IRQ=%u", irq);
                fields[(*n)++] = f_irq;
        }
        if (device && device[0]) {
                snprintf(f_dev, len, "DEVICE=%s", device);
                fields[(*n)++] = f_dev;
                if (queue >= 0) {
                        snprintf(f_queue, len, "QUEUE=%d", queue);
                        fields[(*n)++] = f_queue;
                }
        }
}
