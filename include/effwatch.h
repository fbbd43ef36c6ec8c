/* The effective-affinity watch: written IRQs until they fire where set; one
 * kept elsewhere is said once, at notice. */
#pragma once

#include <stddef.h>

#include "apply.h"
#include "cpuset.h"
#include "inventory.h"
#include "procfs.h"

/* MESSAGE_ID= of "set to CPU N but fires on CPU M" (irqsteerd(8) MESSAGE IDS). */
#define EFFWATCH_MID_MISMATCH "128319ee5ccb45d6b411b4bb4c3d16c7"

struct effwatch {
        struct apply_eff_watch *v;
        size_t n, allocated;
};

/* Watches irq, just written with want (replacing an older watch). */
void effwatch_add(struct effwatch *ew, unsigned irq, const cpuset_t *want);
/* Stops watching irq (it vanished). */
void effwatch_forget(struct effwatch *ew, unsigned irq);
/* Each tick: the watched IRQs' effective affinity, with the last two
 * /proc/interrupts readings. */
void effwatch_check(struct effwatch *ew, int rootfd, const struct inventory *inv,
                    const struct procfs_interrupts *prev, const struct procfs_interrupts *cur);
void effwatch_free(struct effwatch *ew);
/* irq set to want fires on eff after ticks ticks (device NULL, queue < 0:
 * unknown), at notice. */
void effwatch_log_mismatch(unsigned irq, const char *name, const char *device, int queue, const char *want,
                           const char *eff, unsigned ticks);
