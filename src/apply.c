/* Actuators: each change journalled before it is made. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "knob.h"
#include "log.h"
#include "undo.h"
#include "util.h"

struct apply {
        int rootfd;
        bool root_is_host;
        bool dry_run;
        struct undo *undo;
        int journal_error;       /* -errno of the last journal save, 0 when it worked */
        bool failed_in_journal;  /* the last apply_action wrote nothing: its save failed */
        struct apply_overlay_entry *overlay; /* dry run: apply_overlay() */
        size_t n_overlay, allocated_overlay;
};

int apply_new(int rootfd, bool root_is_host, const char *state_dir, bool dry_run, struct apply **ret) {
        struct undo_identity id;
        struct apply *ap;
        int r;

        ap = calloc(1, sizeof(*ap));
        if (!ap)
                return -ENOMEM;
        ap->rootfd = rootfd;
        ap->root_is_host = root_is_host;
        ap->dry_run = dry_run;
        r = undo_identity_get(rootfd, &id);
        if (r >= 0)
                r = undo_new(state_dir, &id, dry_run, &ap->undo);
        if (r < 0) {
                free(ap);
                return r;
        }
        if (!dry_run) {
                /* a journal of another root or boot is never appended to: the
                 * caller deals with it first (undo_recover, undo_set_aside) */
                if (ap->undo->refused != UNDO_OK) {
                        r = undo_refusal_errno(ap->undo->refused);
                        apply_free(ap);
                        return r;
                }
                /* a kill during a full save leaves its temporary behind */
                r = undo_remove_temporaries(state_dir);
                if (r < 0)
                        log_debug_errno(r, "apply: cannot look for stale journal temporaries: %m");
                else if (r > 0)
                        log_debug("apply: removed %d stale journal temporaries", r);
        }
        if (ap->undo->n_entries > 0)
                log_debug("apply: adopting %zu objects from an existing undo journal", ap->undo->n_entries);
        *ret = ap;
        return 0;
}

static struct apply_overlay_entry *overlay_find(const struct apply *ap, const struct knob_key *k) {
        for (size_t i = 0; i < ap->n_overlay; i++)
                if (knob_key_equal(&ap->overlay[i].key, k))
                        return &ap->overlay[i];
        return NULL;
}

/* Dry run: k would now hold target; back at the kernel's value (real) it leaves. */
static int overlay_set(struct apply *ap, const struct knob_key *k, const struct action *a, const char *target,
                       const char *real) {
        struct apply_overlay_entry *o = overlay_find(ap, k);
        char *v;

        if (knob_value_equal(k->kind, real, target)) {
                if (o) {
                        free(o->value);
                        *o = ap->overlay[--ap->n_overlay];
                }
                return 0;
        }
        v = strdup(target);
        if (!v)
                return -ENOMEM;
        if (!o) {
                if (util_grow((void **) &ap->overlay, &ap->allocated_overlay, ap->n_overlay + 1,
                              sizeof(*ap->overlay)) < 0) {
                        free(v);
                        return -ENOMEM;
                }
                o = &ap->overlay[ap->n_overlay++];
                *o = (struct apply_overlay_entry) { .key = *k };
        }
        free(o->value);
        o->value = v;
        o->cpus = cpuset_kept_get(&a->cpus);
        o->number = a->value;
        return 0;
}

size_t apply_overlay(const struct apply *ap, const struct apply_overlay_entry **ret) {
        *ret = ap->overlay;
        return ap->n_overlay;
}

void apply_free(struct apply *ap) {
        if (!ap)
                return;
        for (size_t i = 0; i < ap->n_overlay; i++)
                free(ap->overlay[i].value);
        free(ap->overlay);
        undo_free(ap->undo);
        free(ap);
}

const struct undo *apply_undo(const struct apply *ap) {
        return ap->undo;
}

int apply_rename_nic(struct apply *ap, const char *from, const char *to) {
        return undo_rename_nic(ap->undo, from, to);
}

int apply_forget_gone_threads(struct apply *ap) {
        if (!ap->root_is_host || ap->dry_run)
                return 0;
        return undo_forget_gone_threads(ap->undo, ap->rootfd);
}

int apply_action(struct apply *ap, const struct action *a) {
        _cleanup_(freep) char *cur = NULL, *target = NULL, *now = NULL;
        const struct apply_overlay_entry *o;
        struct undo_entry *e;
        struct knob_key k;
        char key[KNOB_KEY_MAX];
        int r;

        ap->failed_in_journal = false;
        r = action_knob_key(a, &k);
        if (r >= 0 && k.kind == KNOB_IRQ) /* the identity: what it serves now */
                r = knob_irq_actions(ap->rootfd, a->irq, k.actions, sizeof(k.actions));
        else if (r >= 0 && k.kind == KNOB_THREAD && !ap->root_is_host)
                r = -EOPNOTSUPP;
        if (r < 0)
                return r;
        r = knob_read(ap->rootfd, ap->root_is_host, &k, &cur);
        if (r < 0)
                return r;
        r = action_target(a, cur, &target);
        if (r < 0)
                return r;
        if (ap->dry_run) {
                /* what an earlier dry-run action "wrote" is the value now */
                o = overlay_find(ap, &k);
                if (knob_value_equal(k.kind, o ? o->value : cur, target))
                        return APPLY_UNCHANGED;
                r = overlay_set(ap, &k, a, target, cur);
                return r < 0 ? r : APPLY_DRY_RUN;
        }
        if (knob_value_equal(k.kind, cur, target))
                return APPLY_UNCHANGED;

        /* The original must be on disk before the object changes. */
        r = undo_begin(ap->undo, &k, cur, target, &e);
        ap->journal_error = MIN(r, 0);
        if (r < 0) {
                ap->failed_in_journal = true;
                return r;
        }
        if (knob_key_format(&k, key, sizeof(key)) < 0)
                snprintf(key, sizeof(key), "?");
        r = knob_write(ap->rootfd, ap->root_is_host, &k, target);
        if (r < 0) {
                log_debug_errno(r, "apply: %s %s -> %s failed: %m", key, cur, target);
                (void) undo_end(ap->undo, e, false, NULL);
                return r;
        }
        if (knob_read(ap->rootfd, ap->root_is_host, &k, &now) < 0)
                now = NULL;
        /* changed whatever the journal says: PENDING names the value
         * written, so a restore still knows it as ours */
        r = undo_end(ap->undo, e, true, now);
        if (r < 0)
                ap->journal_error = r;
        log_debug("apply: %s %s -> %s%s%s", key, cur, target, now ? ", reads back " : "", now ? now : "");
        if (now && !knob_value_equal(k.kind, now, target))
                return APPLY_READBACK_DIFFERS;
        return APPLY_DONE;
}

int apply_journal_error(const struct apply *ap) {
        return ap->journal_error;
}

bool apply_failed_in_journal(const struct apply *ap) {
        return ap->failed_in_journal;
}

int apply_restore_all(struct apply *ap, struct undo_report *ret) {
        return undo_restore(ap->undo, ap->rootfd, ap->root_is_host, ret);
}

int apply_irq_effective_ok(int rootfd, unsigned irq, const cpuset_t *want, cpuset_t *ret_eff) {
        int r = knob_irq_effective(rootfd, irq, ret_eff);

        if (r < 0)
                return r;
        return !cpuset_empty(ret_eff) && cpuset_subset(ret_eff, want);
}

enum apply_eff_event apply_effective_step(struct apply_eff_watch *w, int ok, bool fired, unsigned grace) {
        if (ok < 0)
                return APPLY_EFF_UNKNOWN;
        if (ok > 0) {
                if (w->mismatch) {
                        w->mismatch = false;
                        return APPLY_EFF_RECOVERED;
                }
                return APPLY_EFF_SETTLED;
        }
        if (w->mismatch)
                return APPLY_EFF_WAIT;
        if (fired)
                w->off_ticks++;
        if (w->off_ticks < MAX(grace, 1u))
                return APPLY_EFF_WAIT;
        w->mismatch = true;
        return APPLY_EFF_MISMATCH;
}
