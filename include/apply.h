/* Actuators: carry out actions (IRQ affinity, RPS/RFS/XPS, thread affinity)
 * through rootfs, saving each object's original value in the undo journal
 * before the first change, and put the originals back on stop.  Only
 * writes and reports; deciding is the policy's job, logging above debug
 * the daemon's. */
#pragma once

#include <stdbool.h>

#include "action.h"
#include "cpuset.h"
#include "knob.h"
#include "undo.h"

/* Positive results of apply_action (errors are -errno). */
enum {
        APPLY_DONE = 0,          /* written, and reads back as asked */
        APPLY_UNCHANGED = 1,     /* already held the target: nothing written */
        APPLY_READBACK_DIFFERS = 2, /* written, but the kernel reports another
                                  * value (offline CPUs dropped, flow counts
                                  * rounded up to a power of two) */
        APPLY_DRY_RUN = 3,       /* dry run: would have written */
};

struct apply;

/* Creates an actuator writing under rootfd (kept open by the caller) with
 * its journal in state_dir (created if missing; NULL = the default
 * /run/irqsteer).  root_is_host: rootfd is the live system, so thread
 * actions call sched_setaffinity (tests may set it on a fixture tree when
 * they wrap sched_*affinity); otherwise they return -EOPNOTSUPP.  A journal
 * left by a previous run is loaded and its originals kept.  dry_run: no
 * write at all, not even the journal. */
int apply_new(int rootfd, bool root_is_host, const char *state_dir, bool dry_run, struct apply **ret);
/* Frees without restoring (what a crash leaves behind: the journal stays). */
void apply_free(struct apply *ap);

/* Carries out one action: reads the current value, returns APPLY_UNCHANGED
 * if it already matches, else journals the original and writes.  In a dry
 * run nothing is written: the value is recorded in the overlay instead
 * (APPLY_DRY_RUN), and the overlay's value counts as the current one for
 * later actions on the object.  Returns
 * APPLY_DONE, APPLY_READBACK_DIFFERS, APPLY_DRY_RUN, or the -errno the
 * kernel gave (see action_failure_class); -EINVAL for an empty IRQ or thread
 * set or a bad interface name.  When the journal cannot be saved first,
 * nothing is written and the -errno of the save is returned, with
 * apply_failed_in_journal() true: a full or broken state directory, never a
 * fact about the object (ENOSPC there is not a full vector space). */
int apply_action(struct apply *ap, const struct action *a);

/* Dry run: the values apply_action() would have written, one entry an
 * object changed (an object set back to the kernel's value leaves), in
 * journal syntax and as the action gave them (cpus for a CPU set, number
 * for a count or switch).  Laid over each fresh inventory and worker set
 * (inventory_set_knob, workers_set_knob) so that the policy does not take
 * its own unapplied decisions for external changes. */
struct apply_overlay_entry {
        struct knob_key key;
        char *value;
        cpuset_t cpus;
        uint32_t number;
};
/* The overlay's entries into *ret (valid until the next apply_action()),
 * their number returned; none outside a dry run. */
size_t apply_overlay(const struct apply *ap, const struct apply_overlay_entry **ret);

/* The -errno of the latest journal save of apply_action(), 0 when it
 * worked (or nothing was journalled yet).  A failed save after a write
 * that took effect is reported here too, with apply_action() >= 0. */
int apply_journal_error(const struct apply *ap);
/* Whether the last apply_action() failed because the journal could not be
 * saved before the write (nothing was written). */
bool apply_failed_in_journal(const struct apply *ap);
/* The journal file's path, for messages. */
const char *apply_journal_path(const struct apply *ap);

/* Puts back every original irqsteer changed (on SIGTERM/SIGINT), leaving
 * alone objects changed by others since; then removes the journal (keeps
 * only objects whose restore failed).  Returns 0 or the first error. */
int apply_restore_all(struct apply *ap, struct undo_report *ret);

/* The journal, read-only (for status output and tests). */
const struct undo *apply_undo(const struct apply *ap);

/* The NIC from is now called to (undo_rename_nic): the originals saved
 * under from follow it.  Entries moved, or -errno. */
int apply_rename_nic(struct apply *ap, const char *from, const char *to);

/* The journalled threads that are gone are forgotten (on the host only:
 * undo_forget_gone_threads).  How many went, or -errno. */
int apply_forget_gone_threads(struct apply *ap);


/* Whether IRQ irq already fires where asked: 1 when its
 * effective_affinity_list is a non-empty subset of want, 0 when not, -errno
 * (-ENOENT without the file).  effective affinity may lag until the next
 * interrupt on x86, so check it a tick later, not right after the write.
 * ret_eff (may be NULL) gets the effective CPUs when 0 or 1 is returned. */
int apply_irq_effective_ok(int rootfd, unsigned irq, const cpuset_t *want, cpuset_t *ret_eff);

/* Watching an IRQ after an affinity write until it fires where it was set.
 * effective_affinity_list changes only when the IRQ next fires (x86 moves
 * the vector then), so a tick counts against the IRQ only when it had
 * interrupts and its effective CPUs were still outside the set; a quiet
 * IRQ is never reported. */
#define APPLY_EFFECTIVE_GRACE 3  /* such ticks before it is reported */

enum apply_eff_event {
        APPLY_EFF_WAIT,          /* keep watching, nothing to say */
        APPLY_EFF_SETTLED,       /* fires inside the set: stop watching */
        APPLY_EFF_MISMATCH,      /* fired `grace` ticks outside the set: say so, once */
        APPLY_EFF_RECOVERED,     /* reported before, fires inside the set now: stop watching */
        APPLY_EFF_UNKNOWN,       /* no effective affinity to read: stop watching */
        APPLY_EFF_EVENT_MAX,
        APPLY_EFF_EVENT_INVALID = -1,
};

struct apply_eff_watch {
        unsigned irq;
        cpuset_kept_t want;      /* what was written */
        cpuset_kept_t eff;       /* where it fired at the last check */
        bool has_eff;            /* eff was read */
        unsigned off_ticks;      /* ticks with interrupts that fired outside want */
        bool mismatch;           /* reported (status shows it until it settles) */
};

/* Pure: one tick of a watch.  ok is apply_irq_effective_ok()'s result,
 * fired whether the IRQ had interrupts during the tick. */
enum apply_eff_event apply_effective_step(struct apply_eff_watch *w, int ok, bool fired, unsigned grace);
