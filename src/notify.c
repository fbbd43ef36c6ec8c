/* sd_notify wrappers: one place that knows the message formats. */
#include <inttypes.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "notify.h"

/* STATUS is shown by systemctl on one line; keep it short and sane. */
#define NOTIFY_STATUS_MAX 512

char *notify_sanitize(const char *line, char *buf, size_t len) {
        size_t i;

        if (len == 0)
                return buf;
        for (i = 0; line && line[i] && i + 1 < len; i++)
                buf[i] = (unsigned char) line[i] < 0x20 || line[i] == 0x7f ? ' ' : line[i];
        buf[i] = 0;
        return buf;
}

static int send_msg(const char *msg) {
        int r = sd_notify(0, msg);
        if (r < 0)
                log_debug_errno(r, "sd_notify(\"%.40s...\") failed: %m", msg);
        return r;
}

/* head, then STATUS=status on a line of its own. */
static int send_with_status(const char *head, const char *status) {
        char s[NOTIFY_STATUS_MAX], msg[NOTIFY_STATUS_MAX + 48];

        snprintf(msg, sizeof(msg), "%s%sSTATUS=%s", head, *head ? "\n" : "",
                 notify_sanitize(status, s, sizeof(s)));
        return send_msg(msg);
}

int notify_ready(const char *status) {
        return send_with_status("READY=1", status);
}

int notify_status(const char *line) {
        return send_with_status("", line);
}

int notify_reloading(uint64_t monotonic_usec) {
        char msg[64];

        snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, monotonic_usec);
        return send_msg(msg);
}

int notify_stopping(void) {
        return send_msg("STOPPING=1");
}

int notify_errno(int err, const char *status) {
        char head[32];

        snprintf(head, sizeof(head), "ERRNO=%d", err < 0 ? -err : err);
        return send_with_status(head, status);
}
