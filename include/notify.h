/* sd_notify(3) messages to the service manager.  All of them are no-ops
 * (returning 0) when NOTIFY_SOCKET is unset, so the daemon runs the same
 * outside systemd.  Return > 0 when sent, 0 when there is no manager,
 * -errno on failure; callers ignore failures (debug log). */
#pragma once

#include <stdint.h>

/* "READY=1" plus STATUS=status when non-NULL, in one datagram. */
int notify_ready(const char *status);
/* "STATUS=line"; newlines in line are replaced by spaces. */
int notify_status(const char *line);
/* "RELOADING=1\nMONOTONIC_USEC=now" in one datagram, as systemd 253+
 * Type=notify-reload requires (and 252 ignores harmlessly). */
int notify_reloading(uint64_t monotonic_usec);
/* "STOPPING=1". */
int notify_stopping(void);
/* "ERRNO=err" (positive errno) plus STATUS=status when non-NULL. */
int notify_errno(int err, const char *status);
/* Copies line into buf with control characters turned into spaces and
 * truncated to len-1 bytes; returns buf.  Pure. */
char *notify_sanitize(const char *line, char *buf, size_t len);
