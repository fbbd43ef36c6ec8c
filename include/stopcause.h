/* Why systemd stops the service (SIGTERM has no reason): a conflicting
 * unit's start job, such as irqbalance's. */
#pragma once

#include <stddef.h>

/* The unit whose start stops us through a conflict into buf: 1 found, 0 none,
 * -errno when systemd could not be asked. */
int stopcause_conflict(char *buf, size_t len);
