/* The effective-affinity watch (effwatch.h). */
#include <errno.h>
#include <stdlib.h>

#include "apply.h"
#include "effwatch.h"
#include "log.h"
#include "util.h"

static struct apply_eff_watch *eff_find(struct effwatch *ew, unsigned irq) {
        for (size_t i = 0; i < ew->n; i++)
                if (ew->v[i].irq == irq)
                        return &ew->v[i];
        return NULL;
}

static void eff_drop(struct effwatch *ew, struct apply_eff_watch *w) {
        cpuset_kept_free(&w->want);
        cpuset_kept_free(&w->eff);
        *w = ew->v[--ew->n];
}

void effwatch_add(struct effwatch *ew, unsigned irq, const cpuset_t *want) {
        struct apply_eff_watch *w = eff_find(ew, irq);

        if (!w) {
                if (util_grow((void **) &ew->v, &ew->allocated, ew->n + 1, sizeof(*ew->v)) < 0)
                        return; /* only a check is lost */
                w = &ew->v[ew->n++];
                *w = (struct apply_eff_watch) { 0 };
        }
        cpuset_kept_free(&w->eff);
        *w = (struct apply_eff_watch) { .irq = irq, .want = w->want };
        if (cpuset_keep(&w->want, want) < 0)
                eff_drop(ew, w); /* only a check is lost */
}

/* Whether IRQ irq had interrupts between the two readings. */
static bool irq_fired(const struct procfs_interrupts *prev, const struct procfs_interrupts *cur, unsigned irq) {
        const struct procfs_irq *a = procfs_interrupts_find(prev, irq);
        const struct procfs_irq *b = procfs_interrupts_find(cur, irq);

        return a && b && b->total > a->total;
}

/* An IRQ moved by someone else (or vanished) is no longer ours to check. */
void effwatch_check(struct effwatch *ew, int rootfd, const struct inventory *inv,
                    const struct procfs_interrupts *prev, const struct procfs_interrupts *cur) {
        for (size_t i = 0; i < ew->n;) {
                struct apply_eff_watch *w = &ew->v[i];
                const struct inventory_irq *irq = inventory_irq(inv, w->irq);
                char want[256], eff[256];
                cpuset_t want_set, eff_set;
                enum apply_eff_event ev;
                int ok;

                if (!irq || !irq->affinity_readable || !cpuset_kept_same(&w->want, &irq->affinity)) {
                        eff_drop(ew, w);
                        continue;
                }
                want_set = cpuset_kept_get(&w->want);
                eff_set = cpuset_kept_get(&w->eff);
                ok = apply_irq_effective_ok(rootfd, w->irq, &want_set, &eff_set);
                w->has_eff = ok >= 0;
                if (w->has_eff && cpuset_keep(&w->eff, &eff_set) < 0)
                        w->has_eff = false;
                cpuset_to_text(&want_set, "?", want, sizeof(want));
                cpuset_to_text(&eff_set, "?", eff, sizeof(eff));
                ev = apply_effective_step(w, ok, irq_fired(prev, cur, w->irq), APPLY_EFFECTIVE_GRACE);
                if (ev == APPLY_EFF_MISMATCH)
                        effwatch_log_mismatch(w->irq, irq->name, irq->nic >= 0 ? inv->nics[irq->nic].name : NULL,
                                              irq->queue, want, eff, w->off_ticks);
                else if (ev == APPLY_EFF_RECOVERED)
                        log_info("IRQ %u (%s) now fires on CPU %s as set", w->irq, irq->name, eff);
                else if (ev == APPLY_EFF_UNKNOWN && ok != -ENOENT)
                        log_debug_errno(ok, "IRQ %u: effective affinity unreadable: %m", w->irq);
                if (ev == APPLY_EFF_RECOVERED || ev == APPLY_EFF_SETTLED || ev == APPLY_EFF_UNKNOWN) {
                        eff_drop(ew, w);
                        continue;
                }
                i++;
        }
        /* the room of a first placement goes back once all settled */
        if (ew->n == 0)
                effwatch_free(ew);
}

void effwatch_forget(struct effwatch *ew, unsigned irq) {
        struct apply_eff_watch *w = eff_find(ew, irq);

        if (w)
                eff_drop(ew, w);
}

void effwatch_free(struct effwatch *ew) {
        while (ew->n > 0)
                eff_drop(ew, &ew->v[0]);
        free(ew->v);
        *ew = (struct effwatch) {};
}

void effwatch_log_mismatch(unsigned irq, const char *name, const char *device, int queue, const char *want,
                           const char *eff, unsigned ticks) {
        char f_irq[48], f_dev[48], f_queue[48];
        const char *fields[6] = { "MESSAGE_ID=" EFFWATCH_MID_MISMATCH };
        size_t n = 1;

        log_object_fields(irq, device, queue, f_irq, f_dev, f_queue, sizeof(f_irq), fields, &n);
        fields[n] = NULL;
        log_fields(LOG_NOTICE, fields,
                   "IRQ %u (%s) set to CPU %s but fires on CPU %s (effective_affinity_list) after %u "
                   "ticks with interrupts; the kernel or hardware keeps it there",
                   irq, name, want, eff, ticks);
}
