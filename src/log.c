/* Log sink: journal (structured fields) or stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"
#include "util.h"

static enum log_target log_target = LOG_TARGET_AUTO;
static int log_max_level = LOG_INFO;
static bool log_use_journal;
static bool log_tty;

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
        log_target = target;
        log_max_level = max_level;
        log_use_journal = target == LOG_TARGET_JOURNAL ||
                          (target == LOG_TARGET_AUTO && stderr_is_journal());
        log_tty = isatty(STDERR_FILENO);
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
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        if (log_use_journal) {
                struct iovec iov[40];
                char mbuf[sizeof(msg) + 16], pbuf[32], ebuf[32];
                size_t n = 0;

                snprintf(mbuf, sizeof(mbuf), "MESSAGE=%s", msg);
                snprintf(pbuf, sizeof(pbuf), "PRIORITY=%d", level);
                iov[n++] = (struct iovec){ mbuf, strlen(mbuf) };
                iov[n++] = (struct iovec){ pbuf, strlen(pbuf) };
                iov[n++] = (struct iovec){ (char *) "SYSLOG_IDENTIFIER=irqsteerd", 27 };
                if (error) {
                        snprintf(ebuf, sizeof(ebuf), "ERRNO=%d", error);
                        iov[n++] = (struct iovec){ ebuf, strlen(ebuf) };
                }
                for (size_t i = 0; fields && fields[i] && n < ELEMENTSOF(iov); i++)
                        iov[n++] = (struct iovec){ (char *) fields[i], strlen(fields[i]) };
                if (sd_journal_sendv(iov, (int) n) >= 0)
                        goto done;
                /* journal gone: fall through to stderr */
        }
        if (log_tty)
                fprintf(stderr, "%s: %s\n", level_names[level & 7], msg);
        else
                fprintf(stderr, "<%d>%s\n", level & 7, msg);
done:
        errno = saved_errno;
        return -error;
}

bool log_ratelimit_ok(struct log_ratelimit *rl, uint64_t now) {
        if (rl->interval_usec == 0 || rl->burst == 0)
                return true;
        if (rl->begin == 0 || now >= rl->begin + rl->interval_usec) {
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
