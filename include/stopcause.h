/* Why systemd stops the service: asked at SIGTERM, since systemd sends no
 * reason with it.  A start job of a unit that conflicts with ours
 * (Conflicts=irqbalance.service) is the one worth naming: the operator
 * then learns that starting irqbalance stopped irqsteerd. */
#pragma once

#include <stddef.h>

/* The unit whose start is stopping this service through a conflict, into
 * buf: 1 when found, 0 when none (a plain stop, or not run by systemd),
 * -errno when systemd could not be asked (no bus, a timeout). */
int stopcause_conflict(char *buf, size_t len);
