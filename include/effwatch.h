/* The effective-affinity watch: the IRQs written, each tick until they
 * fire where they were set (apply_effective_step); one that the kernel or
 * hardware keeps elsewhere is said once, at notice. */
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
/* Each tick, for the IRQs written since they last settled: reads their
 * effective affinity under rootfd, with prev and cur (prev may be NULL)
 * the last two /proc/interrupts readings. */
void effwatch_check(struct effwatch *ew, int rootfd, const struct inventory *inv,
                    const struct procfs_interrupts *prev, const struct procfs_interrupts *cur);
void effwatch_free(struct effwatch *ew);
/* Logs, at notice, that irq (name, on device's queue; device NULL or queue
 * < 0 when unknown) was set to want but fires on eff after ticks ticks. */
void effwatch_log_mismatch(unsigned irq, const char *name, const char *device, int queue, const char *want,
                           const char *eff, unsigned ticks);
