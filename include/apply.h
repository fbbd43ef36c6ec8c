/* Actuators: carry out actions, journalling each object's original value
 * before the first change, and put the originals back on stop. */
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
        APPLY_READBACK_DIFFERS = 2, /* written, the kernel reports another value */
        APPLY_DRY_RUN = 3,       /* dry run: would have written */
};

struct apply;

/* An actuator writing under rootfd, its journal in state_dir (a previous
 * run's is loaded).  Thread actions need
 * root_is_host (else -EOPNOTSUPP).  dry_run writes nothing, no journal. */
int apply_new(int rootfd, bool root_is_host, const char *state_dir, bool dry_run, struct apply **ret);
/* Frees without restoring (what a crash leaves behind: the journal stays). */
void apply_free(struct apply *ap);

/* Carries out one action: journals the original, then writes (a dry run
 * records the overlay).  A failed journal save writes nothing and returns
 * its -errno with apply_failed_in_journal() true. */
int apply_action(struct apply *ap, const struct action *a);

/* Dry run: what apply_action() would have written, laid over each fresh
 * inventory so the policy does not take its own decisions for others'. */
struct apply_overlay_entry {
        struct knob_key key;
        char *value;
        cpuset_t cpus;
        uint32_t number;
};
/* The overlay's entries (valid until the next apply_action()) and their number. */
size_t apply_overlay(const struct apply *ap, const struct apply_overlay_entry **ret);

/* The -errno of the latest journal save, 0 when it worked (also after a write). */
int apply_journal_error(const struct apply *ap);
/* Whether the last apply_action() failed saving the journal before the write. */
bool apply_failed_in_journal(const struct apply *ap);

/* Puts back every original not changed by others since; the journal keeps
 * only failed restores.  0 or the first error. */
int apply_restore_all(struct apply *ap, struct undo_report *ret);

const struct undo *apply_undo(const struct apply *ap);

/* The originals saved under NIC from follow its new name to.  Entries moved, or -errno. */
int apply_rename_nic(struct apply *ap, const char *from, const char *to);

/* Forgets journalled threads that are gone (host only).  How many, or -errno. */
int apply_forget_gone_threads(struct apply *ap);

/* 1 when IRQ irq's effective CPUs are a non-empty subset of want, 0 when
 * not, -errno; they lag until the next interrupt on x86. */
int apply_irq_effective_ok(int rootfd, unsigned irq, const cpuset_t *want, cpuset_t *ret_eff);

/* Watching an IRQ after a write until it fires where set: only a tick
 * with interrupts counts, since x86 moves the vector when it next fires. */
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

/* One tick of a watch: ok from apply_irq_effective_ok(), fired: it had interrupts.  Pure. */
enum apply_eff_event apply_effective_step(struct apply_eff_watch *w, int ok, bool fired, unsigned grace);
