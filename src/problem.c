/* Conditions an operator should act on (problem.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "problem.h"

const char *problem_to_string(enum problem p) {
        static const char *const names[PROBLEM_MAX] = {
                [PROBLEM_METRICS_FILE] = "metrics-file-write",
                [PROBLEM_STATE_FILES] = "state-file-write",
                [PROBLEM_UNDO_JOURNAL] = "undo-journal-save",
                [PROBLEM_BAN_FILE] = "ban-file-invalid",
                [PROBLEM_RELOAD] = "reload-failed",
                [PROBLEM_WRITE] = "write-failed",
        };
        return p >= 0 && p < PROBLEM_MAX ? names[p] : NULL;
}

static void say(int level, int err, enum problem p, const char *text) {
        char reason[64];

        snprintf(reason, sizeof(reason), "REASON=%s", problem_to_string(p));
        log_internal(level, err, (const char *[]) { "MESSAGE_ID=" PROBLEM_MID, reason, NULL }, "%s", text);
}

void problem_set(struct problems *ps, enum problem p, int err, const char *fmt, ...) {
        char text[sizeof(ps->what[0])];
        va_list ap;

        /* %m is the caller's err, not whatever errno is now */
        errno = err < 0 ? -err : err;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        if (ps->active[p] && strcmp(text, ps->what[p]) == 0)
                return;
        if (!ps->active[p])
                ps->begun[p]++;
        ps->active[p] = true;
        memcpy(ps->what[p], text, sizeof(text));
        /* nothing is changed while the journal cannot be saved: an error */
        say(p == PROBLEM_UNDO_JOURNAL ? LOG_ERR : LOG_WARNING, err, p, text);
}

void problem_clear(struct problems *ps, enum problem p, const char *fmt, ...) {
        char text[sizeof(ps->what[0])];
        va_list ap;

        if (!ps->active[p])
                return;
        ps->active[p] = false;
        ps->what[p][0] = 0;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        say(LOG_INFO, 0, p, text);
}

void problem_append_status(const struct problems *ps, const char *shown, char *buf, size_t len) {
        size_t l = strnlen(buf, len);

        for (int p = 0; p < PROBLEM_MAX && l + 1 < len; p++) {
                int n;

                /* a failed reload leads the line already */
                if (!ps->active[p] || p == PROBLEM_RELOAD || (shown && strstr(shown, ps->what[p])))
                        continue;
                n = snprintf(buf + l, len - l, "; %s: %s", problem_to_string(p), ps->what[p]);
                if (n < 0)
                        return;
                l += (size_t) n < len - l ? (size_t) n : len - l - 1;
        }
}
