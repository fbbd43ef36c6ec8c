/* sd_notify(3) messages: > 0 when sent, 0 without a manager
 * (NOTIFY_SOCKET unset), -errno on failure, which callers ignore. */
#pragma once

#include <stdint.h>

/* "READY=1" plus STATUS=status, in one datagram. */
int notify_ready(const char *status);
/* "STATUS=line"; newlines in line are replaced by spaces. */
int notify_status(const char *line);
/* "RELOADING=1" with MONOTONIC_USEC=, as Type=notify-reload requires. */
int notify_reloading(uint64_t monotonic_usec);
int notify_stopping(void);
/* "ERRNO=err" (positive errno) plus STATUS=status. */
int notify_errno(int err, const char *status);
/* line into buf, control characters as spaces, cut at len-1; buf. */
char *notify_sanitize(const char *line, char *buf, size_t len);
