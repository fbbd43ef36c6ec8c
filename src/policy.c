/* Policy core: state and its records, actuator feedback, hot-CPU detection
 * with hysteresis, the per-queue load model, and the tick that strings the
 * decision steps together (DESIGN.md 5).  Pure: no I/O, no clock. */
#include <math.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "policy-internal.h"

struct policy_state *policy_state_new(void) {
        return calloc(1, sizeof(struct policy_state));
}

void policy_state_free(struct policy_state *st) {
        if (!st)
                return;
        free(st->cpus);
        free(st->irqs);
        free(st->irq_index.slot);
        free(st->queues);
        free(st->queue_index.slot);
        free(st->nics);
        free(st->threads);
        free(st->napis);
        free(st->cursors);
        free(st->moves);
        free(st->notes);
        free(st);
}

const char *policy_trial_verdict_to_string(enum policy_trial_verdict v) {
        static const char *const names[POLICY_TRIAL_VERDICT_MAX] = {
                [POLICY_TRIAL_KEPT] = "kept",
                [POLICY_TRIAL_REVERTED] = "reverted",
                [POLICY_TRIAL_NO_VERDICT] = "no_verdict",
        };
        return v >= 0 && v < POLICY_TRIAL_VERDICT_MAX ? names[v] : NULL;
}

void policy_report_free(struct policy_report *r) {
        if (!r)
                return;
        free(r->hot_cpus);
        free(r->notes);
        free(r->kernel_managed_irqs);
        free(r->ref);
        *r = (struct policy_report){ 0 };
}

const char *pol_fmt_cpus(const cpuset_t *s, char *buf, size_t len) {
        return cpuset_to_text(s, "", buf, len);
}

static void note_append(struct policy_note **v, size_t *n, size_t *a, int level, const char *fmt, va_list ap,
                        bool *oom) {
        struct policy_note *no;

        if (util_grow((void **) v, a, *n + 1, sizeof(**v)) < 0) {
                *oom = true;
                return;
        }
        no = &(*v)[(*n)++];
        *no = (struct policy_note) { .level = level, .kind = POLICY_NOTE_PLAIN, .queue = -1 };
        util_mark_cut(no->text, sizeof(no->text), vsnprintf(no->text, sizeof(no->text), fmt, ap));
}

void pol_note_about(struct pol_tick *t, enum policy_note_kind kind, unsigned irq, const char *device,
                           int queue) {
        struct policy_note *no;

        if (t->r < 0 || t->rep->n_notes == 0)
                return;
        no = &t->rep->notes[t->rep->n_notes - 1];
        no->kind = kind;
        no->irq = irq;
        snprintf(no->device, sizeof(no->device), "%s", device ? device : "");
        no->queue = queue;
}

void pol_note(struct pol_tick *t, int level, const char *fmt, ...) {
        /* the report keeps no capacity: grow from its length each time */
        size_t allocated = t->rep->n_notes;
        bool oom = false;
        va_list ap;

        va_start(ap, fmt);
        note_append(&t->rep->notes, &t->rep->n_notes, &allocated, level, fmt, ap, &oom);
        va_end(ap);
        if (oom)
                t->r = -ENOMEM;
}

_printf_(3, 4) static void state_note(struct policy_state *st, int level, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        note_append(&st->notes, &st->n_notes, &st->a_notes, level, fmt, ap, &st->oom);
        va_end(ap);
}

void pol_index_forget(struct pol_index *ix) {
        ix->stale = true;
}

static uint32_t hash_irq(unsigned irq) {
        /* Fibonacci hashing: IRQ numbers come in dense runs */
        return (uint32_t) ((irq * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

static uint32_t hash_queue(const char *nic, int index) {
        uint32_t h = 2166136261u; /* FNV-1a */

        for (const char *p = nic; *p; p++)
                h = (h ^ (unsigned char) *p) * 16777619u;
        return hash_irq(h ^ (uint32_t) index);
}

/* Puts position pos (hash h) into a table with a free slot. */
static void index_put(struct pol_index *ix, uint32_t h, size_t pos) {
        size_t m = ix->cap - 1, i = h & m;

        while (ix->slot[i])
                i = (i + 1) & m;
        ix->slot[i] = (uint32_t) pos + 1;
}

/* Sized for n records and refilled from hashes of positions 0..n-1, or
 * -ENOMEM (the index then stays stale and lookups search linearly). */
static int index_rebuild(struct pol_index *ix, size_t n, uint32_t (*hash)(const struct policy_state *, size_t),
                         const struct policy_state *st) {
        size_t cap = ix->cap ? ix->cap : 64;

        while (cap < 2 * (n + 1))
                cap *= 2;
        if (cap != ix->cap) {
                uint32_t *v = calloc(cap, sizeof(*v));
                if (!v)
                        return -ENOMEM;
                free(ix->slot);
                ix->slot = v;
                ix->cap = cap;
        } else
                memset(ix->slot, 0, cap * sizeof(*ix->slot));
        for (size_t i = 0; i < n; i++)
                index_put(ix, hash(st, i), i);
        ix->stale = false;
        return 0;
}

static uint32_t hash_irq_at(const struct policy_state *st, size_t i) {
        return hash_irq(st->irqs[i].irq);
}

static uint32_t hash_queue_at(const struct policy_state *st, size_t i) {
        return hash_queue(st->queues[i].nic, st->queues[i].index);
}

/* Ready for lookups over n records, with room for one more. */
static bool index_ready(struct pol_index *ix, size_t n, uint32_t (*hash)(const struct policy_state *, size_t),
                        const struct policy_state *st) {
        if (!ix->stale && ix->cap >= 2 * (n + 1))
                return true;
        return index_rebuild(ix, n, hash, st) == 0;
}

struct pol_irq *pol_irq_get(struct policy_state *st, unsigned irq, bool create) {
        struct pol_index *ix = &st->irq_index;
        uint32_t h = hash_irq(irq);
        bool indexed = index_ready(ix, st->n_irqs, hash_irq_at, st);
        struct pol_irq *r;

        if (indexed) {
                for (size_t i = h & (ix->cap - 1); ix->slot[i]; i = (i + 1) & (ix->cap - 1))
                        if (st->irqs[ix->slot[i] - 1].irq == irq)
                                return &st->irqs[ix->slot[i] - 1];
        } else
                for (size_t i = 0; i < st->n_irqs; i++)
                        if (st->irqs[i].irq == irq)
                                return &st->irqs[i];
        if (!create || util_grow((void **) &st->irqs, &st->a_irqs, st->n_irqs + 1, sizeof(*st->irqs)) < 0)
                return NULL;
        if (indexed)
                index_put(ix, h, st->n_irqs);
        r = &st->irqs[st->n_irqs++];
        *r = (struct pol_irq){ .irq = irq, .prev_cpu = -1 };
        return r;
}

struct pol_queue *pol_queue_get(struct policy_state *st, const char *nic, int index, bool create) {
        struct pol_index *ix = &st->queue_index;
        uint32_t h = hash_queue(nic, index);
        bool indexed = index_ready(ix, st->n_queues, hash_queue_at, st);
        struct pol_queue *q;

        if (indexed) {
                for (size_t i = h & (ix->cap - 1); ix->slot[i]; i = (i + 1) & (ix->cap - 1)) {
                        q = &st->queues[ix->slot[i] - 1];
                        if (q->index == index && strcmp(q->nic, nic) == 0)
                                return q;
                }
        } else
                for (size_t i = 0; i < st->n_queues; i++)
                        if (st->queues[i].index == index && strcmp(st->queues[i].nic, nic) == 0)
                                return &st->queues[i];
        if (!create || util_grow((void **) &st->queues, &st->a_queues, st->n_queues + 1, sizeof(*st->queues)) < 0)
                return NULL;
        q = &st->queues[st->n_queues];
        *q = (struct pol_queue){ .index = index };
        snprintf(q->nic, sizeof(q->nic), "%s", nic);
        /* the stored name may be truncated: hash what is stored */
        if (indexed)
                index_put(ix, hash_queue(q->nic, index), st->n_queues);
        st->n_queues++;
        return q;
}

struct pol_thread *pol_thread_get(struct policy_state *st, pid_t pid, pid_t tid, bool create) {
        struct pol_thread *th;

        for (size_t i = 0; i < st->n_threads; i++)
                if (st->threads[i].tid == tid && st->threads[i].pid == pid)
                        return &st->threads[i];
        if (!create || util_grow((void **) &st->threads, &st->a_threads, st->n_threads + 1, sizeof(*st->threads)) < 0)
                return NULL;
        th = &st->threads[st->n_threads++];
        *th = (struct pol_thread){ .pid = pid, .tid = tid };
        return th;
}

static struct pol_nic *nic_get(struct policy_state *st, const char *name, bool create) {
        struct pol_nic *n;

        for (size_t i = 0; i < st->n_nics; i++)
                if (strcmp(st->nics[i].name, name) == 0)
                        return &st->nics[i];
        if (!create || util_grow((void **) &st->nics, &st->a_nics, st->n_nics + 1, sizeof(*st->nics)) < 0)
                return NULL;
        n = &st->nics[st->n_nics++];
        *n = (struct pol_nic){ 0 };
        snprintf(n->name, sizeof(n->name), "%s", name);
        return n;
}

/* An IRQ's rates, NULL when unknown or invalid this interval. */
static const struct sample_irq *rates_irq(const struct sample_rates *r, unsigned irq) {
        const struct sample_irq *si = sample_rates_irq(r, irq);

        return si && si->valid ? si : NULL;
}

static double irq_rate_on(const struct sample_rates *r, const struct sample_irq *si, int cpu) {
        double v = r ? sample_irq_on(si, r->max_cpu, cpu) : 0;

        return v > 0 ? v : 0;
}

/* The CPUs [*lo, *hi] of [0, n) where an IRQ's rate can be non-zero
 * (empty when lo > hi): its nz range when the sample knows it, else all. */
static void irq_range(const struct sample_rates *r, const struct sample_irq *si, int n, int *lo, int *hi) {
        *lo = 0;
        *hi = -1;
        if (!si || !si->per_cpu)
                return;
        *hi = MIN(n - 1, r->max_cpu);
        if (si->nz_known) {
                *lo = MAX(si->nz_lo, 0);
                *hi = MIN(*hi, si->nz_hi);
        }
}

double pol_load(const struct pol_tick *t, int cpu) {
        if (cpu < 0 || cpu > t->max_cpu)
                return 0;
        return t->load[cpu];
}

/* Settling from an action of an earlier tick: this tick's own actions are
 * in the projected loads already (t->touched says which CPUs they moved). */
bool pol_settling(const struct pol_tick *t, int cpu) {
        return cpu >= 0 && cpu < CPUSET_MAX && cpuset_isset(&t->settling, cpu);
}

/* The smoothed average lags an action by a few samples: until it has caught
 * up, the CPU's load says nothing about the action's effect, so no second
 * decision is taken on it.  The EWMA keeps (1 - smoothing)^k of the old
 * level after k samples: settled when that is under 10% (4 samples at the
 * default 0.5), and never sooner than hot_samples. */
void pol_settle(struct pol_tick *t, int cpu) {
        double keep = 1;
        unsigned k = 0;
        uint64_t settle;

        while (keep >= 0.10 && k < 20) {
                keep *= 1 - MIN(MAX(t->c->smoothing, 0.05), 1);
                k++;
        }
        settle = (uint64_t) MAX(k, t->c->hot_samples) * t->c->interval_usec;

        if (cpu < 0 || cpu >= CPUSET_MAX)
                return;
        cpuset_set(&t->touched, cpu);
        if (cpu >= 0 && (size_t) cpu < t->st->n_cpus)
                t->st->cpus[cpu].settle_until = t->now + settle;
}

struct action *pol_add(struct pol_tick *t, enum knob_kind type) {
        struct action *a = action_list_add(t->out, type);

        if (!a)
                t->r = -ENOMEM;
        return a;
}

bool pol_rps_ours(struct policy_state *st, const struct inventory_nic *n, const struct inventory_queue *iq) {
        const struct pol_queue *q = pol_queue_get(st, n->name, iq->index, false);

        return q && iq->has_rps && q->rps_set && !q->rps_external && cpuset_equal(&q->rps_last, &iq->rps_cpus) &&
               !cpuset_equal(&q->rps_last, &q->rps_orig);
}

struct action *pol_add_queue(struct pol_tick *t, enum knob_kind type, const char *nic, int queue) {
        struct action *a = pol_add(t, type);

        if (a) {
                snprintf(a->nic, sizeof(a->nic), "%s", nic);
                a->queue = queue;
        }
        return a;
}

/* ---- feedback ---- */

static void move_push(struct policy_state *st, uint64_t now) {
        size_t k = 0;

        /* drop what left the window first, so the ring stays small */
        while (k < st->n_moves && st->moves[k] + POL_MOVE_WINDOW_USEC <= now)
                k++;
        if (k > 0) {
                memmove(st->moves, st->moves + k, (st->n_moves - k) * sizeof(*st->moves));
                st->n_moves -= k;
        }
        if (util_grow((void **) &st->moves, &st->a_moves, st->n_moves + 1, sizeof(*st->moves)) < 0) {
                st->oom = true;
                return;
        }
        st->moves[st->n_moves++] = now;
}

/* A layout write failed: plan the NIC's layout again next tick. */
static void relayout(struct policy_state *st, const char *nic) {
        struct pol_nic *n = nic[0] ? nic_get(st, nic, false) : NULL;

        if (n)
                n->laid_out = false;
}

static void feedback_irq(struct policy_state *st, const struct action *a, int result, uint64_t now) {
        struct pol_irq *r = pol_irq_get(st, a->irq, true);
        enum action_failure f = action_failure_class(a->type, result);
        int to, from;

        if (!r) {
                st->oom = true;
                return;
        }
        if (a->nic[0])
                snprintf(r->nic, sizeof(r->nic), "%s", a->nic);
        /* failures are said by the daemon (once per object and class):
         * here only what they change in the plan */
        switch (f) {
        case ACTION_FAIL_NONE:
                r->set = true;
                r->last_set = a->cpus;
                r->failures = 0;
                /* a placement (the layout, or after a CPU went offline) was
                 * not made on load: it starts no dwell, and is no move */
                if (a->layout)
                        break;
                to = cpuset_only(&a->cpus);
                from = cpuset_only(&a->from);
                if (r->dwell_usec == 0)
                        r->dwell_usec = st->min_dwell_usec;
                /* A bounce: back to the CPU it left at its last move, within
                 * the back-off window (max_dwell).  Its dwell doubles up to
                 * max_dwell; an IRQ that stayed put max_dwell is forgiven. */
                if (r->moved && to >= 0 && to == r->prev_cpu && now - r->last_move_usec < st->max_dwell_usec)
                        r->dwell_usec = MIN(MAX(r->dwell_usec, st->min_dwell_usec) * 2, st->max_dwell_usec);
                else if (r->moved && now - r->last_move_usec >= st->max_dwell_usec)
                        r->dwell_usec = st->min_dwell_usec;
                r->prev_cpu = from;
                r->last_move_usec = now;
                r->moved = true;
                if (r->primary)
                        move_push(st, now);
                break;
        case ACTION_FAIL_PERMANENT:
                /* kernel-managed (EIO before 6.12, EPERM since): skipped
                 * quietly from now on */
                r->managed = true;
                break;
        case ACTION_FAIL_CAPACITY:
                CPUSET_FOREACH(cpu, &a->cpus)
                        cpuset_set(&r->enospc, cpu);
                relayout(st, r->nic);
                break;
        case ACTION_FAIL_GONE:
                *r = st->irqs[--st->n_irqs];
                pol_index_forget(&st->irq_index);
                break;
        case ACTION_FAIL_TRANSIENT:
                relayout(st, r->nic);
                break;
        default:
                /* bad or offline CPUs (the next tick decides on fresh
                 * topology), or something unforeseen: counted */
                relayout(st, r->nic);
                if (action_failure_counts(f) && ++r->failures == ACTION_MAX_FAILURES)
                        state_note(st, LOG_WARNING, "IRQ %u: setting its affinity failed %u times (%s); giving up",
                                   a->irq, r->failures, strerror(-result));
                break;
        }
}

static void feedback_queue(struct policy_state *st, const struct action *a, int result, uint64_t now) {
        struct pol_queue *q = pol_queue_get(st, a->nic, a->queue, true);
        enum action_failure f = action_failure_class(a->type, result);
        bool *broken;

        if (!q) {
                st->oom = true;
                return;
        }
        broken = a->type == KNOB_RPS ? &q->rps_broken : a->type == KNOB_XPS ? &q->xps_broken : &q->flow_broken;
        switch (f) {
        case ACTION_FAIL_NONE:
                q->failures = 0;
                if (a->type == KNOB_RPS) {
                        q->rps_set = true;
                        q->rps_last = a->cpus;
                        q->rps_change_usec = now;
                        q->narrow_ticks = 0;
                } else if (a->type == KNOB_XPS) {
                        q->xps_set = true;
                        q->xps_last = a->cpus;
                } else {
                        q->flow_set = true;
                        q->flow_last = a->value;
                }
                break;
        case ACTION_FAIL_GONE:
                *q = st->queues[--st->n_queues];
                pol_index_forget(&st->queue_index);
                break;
        case ACTION_FAIL_TRANSIENT:
                break;
        case ACTION_FAIL_PERMANENT:
                *broken = true;
                break;
        default:
                if (action_failure_counts(f) && ++q->failures >= ACTION_MAX_FAILURES) {
                        *broken = true;
                        state_note(st, LOG_WARNING, "%s %s queue %d: failed %u times (%s); giving up",
                                   action_type_to_string(a->type), a->nic, a->queue, q->failures,
                                   strerror(-result));
                }
                break;
        }
}

static void feedback_thread(struct policy_state *st, const struct action *a, int result) {
        struct pol_thread *th = pol_thread_get(st, a->pid, a->tid, true);
        enum action_failure f = action_failure_class(a->type, result);

        if (!th) {
                st->oom = true;
                return;
        }
        switch (f) {
        case ACTION_FAIL_NONE:
                th->set = true;
                th->last_set = a->cpus;
                th->failures = 0;
                break;
        case ACTION_FAIL_GONE:
                *th = st->threads[--st->n_threads];
                break;
        case ACTION_FAIL_PERMANENT:
                /* kernel thread, PF_NO_SETAFFINITY or not ours to change */
                th->broken = true;
                break;
        case ACTION_FAIL_TRANSIENT:
                break;
        default:
                if (action_failure_counts(f) && ++th->failures >= ACTION_MAX_FAILURES)
                        th->broken = true;
                break;
        }
}

static void feedback_defaff(struct policy_state *st, const struct action *a, int result) {
        switch (action_failure_class(a->type, result)) {
        case ACTION_FAIL_NONE:
                st->defaff_set = true;
                st->defaff_last = a->cpus;
                break;
        case ACTION_FAIL_TRANSIENT:
                break;
        default:
                /* one file with one meaning: a failure other than a busy
                 * moment will not go away (the daemon says which) */
                st->defaff_broken = true;
                break;
        }
}

void policy_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec) {
        if (!st || !a)
                return;
        switch (a->type) {
        case KNOB_IRQ:
                feedback_irq(st, a, result, now_usec);
                break;
        case KNOB_RPS:
        case KNOB_XPS:
        case KNOB_FLOWCNT:
                feedback_queue(st, a, result, now_usec);
                break;
        case KNOB_SOCKFLOW:
                /* set once: retried only after a transient failure (the
                 * daemon says why it failed) */
                if (action_failure_class(a->type, result) == ACTION_FAIL_TRANSIENT)
                        st->sock_flow_done = false;
                break;
        case KNOB_THREAD:
                if (!pol_napi_feedback(st, a, result, now_usec))
                        feedback_thread(st, a, result);
                break;
        case KNOB_DEFAFF:
                feedback_defaff(st, a, result);
                break;
        case KNOB_THREADED:
                pol_threaded_feedback(st, a, result, now_usec);
                break;
        default:
                break;
        }
}

void policy_adopt(struct policy_state *st, const struct action *a, uint64_t now_usec) {
        struct pol_queue *q;

        if (!st || !a || (a->type != KNOB_RPS && a->type != KNOB_XPS && a->type != KNOB_FLOWCNT))
                return;
        q = pol_queue_get(st, a->nic, a->queue, true);
        if (!q) {
                st->oom = true;
                return;
        }
        /* the original is the journal's, not what the queue holds now:
         * a mask irqsteerd set is not an operator's to keep */
        if (a->type == KNOB_RPS) {
                q->orig_known = true;
                q->rps_orig = a->from;
                q->rps_kept = false;
        } else if (a->type == KNOB_XPS) {
                q->xps_orig_known = true;
                q->xps_orig = a->from;
        } else
                q->flow_orig = a->from_value;
        feedback_queue(st, a, 0, now_usec);
}

void policy_forget_nic(struct policy_state *st, const char *nic) {
        struct pol_nic *n;

        if (!st || !nic)
                return;
        n = nic_get(st, nic, false);
        if (n)
                n->laid_out = false;
        /* What the driver reset shows at the next tick: values that still
         * match what we set are kept (a rebalanced IRQ stays where it is),
         * the others are placed again, without an external-change note.
         * Managed stays managed. */
        for (size_t i = 0; i < st->n_irqs; i++) {
                struct pol_irq *r = &st->irqs[i];
                if (strcmp(r->nic, nic) != 0)
                        continue;
                r->resync = true;
                r->external = false;
                r->failures = 0;
                cpuset_zero(&r->enospc);
        }
        for (size_t i = 0; i < st->n_queues; i++) {
                struct pol_queue *q = &st->queues[i];
                if (strcmp(q->nic, nic) != 0)
                        continue;
                q->resync = true;
                q->rps_external = q->xps_external = q->flow_external = false;
                q->failures = 0;
        }
}

void policy_reset(struct policy_state *st) {
        if (!st)
                return;
        /* The administrator's values become the baseline.  Managed IRQs
         * stay managed: the kernel still owns them. */
        for (size_t i = 0; i < st->n_irqs; i++) {
                struct pol_irq *r = &st->irqs[i];
                if (r->external)
                        r->set = false;
                r->external = false;
                r->failures = 0;
        }
        for (size_t i = 0; i < st->n_queues; i++) {
                struct pol_queue *q = &st->queues[i];
                if (q->rps_external)
                        q->rps_set = false;
                if (q->xps_external)
                        q->xps_set = false;
                if (q->flow_external)
                        q->flow_set = false;
                q->rps_external = q->xps_external = q->flow_external = false;
                q->rps_broken = q->xps_broken = q->flow_broken = false;
                q->failures = 0;
        }
        for (size_t i = 0; i < st->n_threads; i++) {
                struct pol_thread *th = &st->threads[i];
                if (th->external)
                        th->set = false;
                th->external = th->broken = false;
                th->failures = 0;
        }
        st->sock_flow_done = false;
        if (st->defaff_external) {
                /* the administrator's value becomes the one to give back */
                st->defaff_set = false;
                st->defaff_orig_known = false;
        }
        st->defaff_external = st->defaff_broken = false;
}

/* ---- hot CPUs ---- */

double pol_enter(const struct pol_tick *t) {
        return t->c->hot_enter * t->scale;
}

double pol_exit(const struct pol_tick *t) {
        return t->c->hot_exit * t->scale;
}

/* Narrowing an RPS set waits until the work fits one hysteresis band below
 * the exit threshold. */
double pol_narrow(const struct pol_tick *t) {
        const struct config *c = t->c;

        return MAX(c->hot_exit - (c->hot_enter - c->hot_exit), c->hot_exit / 2) * t->scale;
}

double pol_min_gain(const struct pol_tick *t) {
        return t->c->min_gain * t->scale;
}

/* The mean is the level every CPU would have with the work perfectly
 * spread; never below the narrowing limit, or a set sized to it would be
 * narrowed again at once. */
double pol_level(const struct pol_tick *t) {
        if (t->scale >= 1)
                return pol_exit(t);
        return MIN(pol_exit(t), MAX(t->mean, pol_narrow(t)));
}

/* A set is good enough when its CPUs end at most 10% over the level (the
 * estimate of a queue's work is no closer than that). */
double pol_accept(const struct pol_tick *t) {
        if (t->scale >= 1)
                return pol_exit(t);
        return MIN(pol_exit(t), 1.1 * MAX(t->mean, pol_narrow(t)));
}

/* Hot CPUs cool below this.  While the host is unbalanced it sits a third
 * of the way from the level RPS sets are sized to up to the enter
 * threshold, so that a set sized to the level, with the estimation error
 * of the queue's work, does not leave its CPUs hot and widen again. */
static double exit_level(const struct pol_tick *t) {
        double lvl;

        if (t->scale >= 1)
                return pol_exit(t);
        lvl = pol_level(t);
        return MAX(pol_exit(t), lvl + (pol_enter(t) - lvl) / 3);
}

/* The threshold scale of this tick.  A CPU far busier than the host's mean
 * is the same problem as a saturated one when the others idle (DESIGN.md 1:
 * CPU0 52.8% soft while three CPUs sat 85% idle), and the mean irq+softirq
 * load over the eligible CPUs does not depend on where the work is placed,
 * so it is a stable reference: the level that makes a CPU hot is
 * balance_ratio times the mean, from balance_floor up to hot_enter, and
 * hot_exit, the narrowing limit and min_gain scale with it so every band
 * keeps its proportions. */
static double threshold_scale(struct pol_tick *t) {
        const struct config *c = t->c;
        const struct sample_rates *l = t->in->load;
        double sum = 0, level;
        int n = 0;

        if (!l || c->balance_ratio <= 0 || c->hot_enter <= 0)
                return 1;
        CPUSET_FOREACH(cpu, &t->eligible) {
                if (cpu > t->max_cpu || cpu > l->max_cpu || !l->cpus[cpu].valid)
                        continue;
                sum += t->load[cpu];
                n++;
        }
        if (n == 0)
                return 1;
        t->mean = sum / n;
        level = MAX(c->balance_floor, c->balance_ratio * t->mean);
        return level < c->hot_enter ? level / c->hot_enter : 1;
}

/* Fast attack: the smoothed load of a CPU that went from idle to
 * saturated reaches the thresholds only after several samples (at the
 * default smoothing 0.5 and hot_samples 2, a flood through a veth on a
 * 2-CPU VM got its first RPS change 8 s after it began), while a CPU whose
 * newest raw interval shows it all but out of idle time (under half
 * saturated_idle) with at least saturated_share of it in irq+softirq is
 * the bottleneck now: it is hot at once.  Noise does not get there (a CPU
 * with 10% idle to spare is not saturated); moves stay held back by
 * min_gain, dwell and back-off, and the release is the same slow one. */
static bool raw_saturated(const struct pol_tick *t, int cpu) {
        const struct sample_rates *raw = t->in->raw;
        const struct sample_cpu *rc;

        if (!raw || cpu > raw->max_cpu || !raw->cpus[cpu].valid)
                return false;
        rc = &raw->cpus[cpu];
        return MAX(rc->idle, 0) < t->c->saturated_idle / 2 &&
               MAX(rc->irq, 0) + MAX(rc->softirq, 0) >= t->c->saturated_share;
}

/* A CPU hot by fast attack is planned for with its raw load: the smoothed
 * one is still a fraction of it and would size RPS sets too small. */
static void fast_attack(struct pol_tick *t, int cpu, double enter) {
        const struct sample_cpu *rc = &t->in->raw->cpus[cpu];
        struct pol_cpu *pc = &t->st->cpus[cpu];

        pc->hot = pc->fast = true;
        pc->raw_load = MAX(rc->irq, 0) + MAX(rc->softirq, 0);
        t->load[cpu] = MAX(t->load[cpu], pc->raw_load);
        t->idle[cpu] = MIN(t->idle[cpu], MAX(rc->idle, 0));
        pc->saturated = t->load[cpu] < enter;
}

/* A CPU is hot (DESIGN.md 5) when, for hot_samples consecutive samples,
 * either
 *   - its irq+softirq share >= hot_enter (scaled: threshold_scale), or
 *   - it is saturated (DESIGN.md 1, the nginx case: 52.8% soft, 6% idle while
 *     other CPUs sat 85% idle): idle < saturated_idle and irq+softirq >=
 *     saturated_share, while some other eligible CPU has room, i.e. idle >
 *     2 * saturated_idle and > saturated_share, and irq+softirq < hot_exit.
 *     Without room elsewhere a busy host is just busy: moving work would
 *     not help.
 * A hot CPU stays hot until irq+softirq < hot_exit (scaled); a CPU hot by
 * the saturated rule also stays hot while idle < 2 * saturated_idle and
 * irq+softirq >= saturated_share * hot_exit / hot_enter: the same exit band
 * as the load rule, in proportion (the nginx host after RPS, 29% soft and
 * 25% idle, is out).  A CPU the raw sample shows saturated, with room
 * elsewhere, is hot at once (raw_saturated). */
static void update_hot(struct pol_tick *t) {
        const struct config *c = t->c;
        const struct sample_rates *l = t->in->load;
        /* room: idle for the share a saturated CPU would shed (at least
         * saturated_share), or the CPU taking it is as busy after; on a
         * 2-CPU VM with both busy (veth, iperf3 unpinned) RPS to the other
         * CPU with 25% idle cost 26% of the throughput */
        double room_idle = 2 * c->saturated_idle, room_enter = MAX(room_idle, c->saturated_share), enter, exit_at;
        int n_room = 0;

        for (int cpu = 0; cpu <= t->max_cpu; cpu++) {
                const struct sample_cpu *sc;

                t->load[cpu] = t->idle[cpu] = 0;
                if (!l || cpu > l->max_cpu || !l->cpus[cpu].valid)
                        continue;
                sc = &l->cpus[cpu];
                t->load[cpu] = MAX(sc->irq, 0) + MAX(sc->softirq, 0);
                t->idle[cpu] = MAX(sc->idle, 0);
                if (cpuset_isset(&t->eligible, cpu) && t->idle[cpu] > room_enter && t->load[cpu] < c->hot_exit)
                        n_room++;
        }
        t->scale = threshold_scale(t);
        enter = pol_enter(t);
        exit_at = exit_level(t);

        for (int cpu = 0; cpu <= t->max_cpu; cpu++) {
                struct pol_cpu *pc = &t->st->cpus[cpu];
                double L = t->load[cpu], idle = t->idle[cpu];
                bool room, sat_enter, hot_now;

                pc->fast = false;

                if (!cpuset_isset(&t->topo->online, cpu)) {
                        pc->above = 0;
                        pc->hot = pc->saturated = false;
                        continue;
                }
                if (!l || cpu > l->max_cpu || !l->cpus[cpu].valid) {
                        /* no sample this interval: keep the state as it was */
                        if (pc->hot)
                                cpuset_set(&t->hot, cpu);
                        continue;
                }
                room = n_room - (cpuset_isset(&t->eligible, cpu) && idle > room_enter && L < c->hot_exit) > 0;
                sat_enter = idle < c->saturated_idle && L >= c->saturated_share && room;
                hot_now = L >= enter || sat_enter;

                if (pc->hot) {
                        bool stay = L >= exit_at;
                        if (!stay && pc->saturated)
                                stay = idle < room_idle && L >= c->saturated_share * c->hot_exit / c->hot_enter;
                        if (!stay) {
                                pc->hot = pc->saturated = false;
                                pc->above = 0;
                        }
                } else {
                        pc->above = hot_now ? pc->above + 1 : 0;
                        if (pc->above >= MAX(c->hot_samples, 1u)) {
                                pc->hot = true;
                                pc->saturated = L < enter;
                        } else if (room && raw_saturated(t, cpu)) {
                                fast_attack(t, cpu, enter);
                                pc->above = MAX(c->hot_samples, 1u);
                        }
                }
                if (pc->hot)
                        cpuset_set(&t->hot, cpu);
        }
}

/* ---- NICs, queues and the load model ---- */

/* The NIC's packet rates from its counters since the last tick, smoothed
 * like the CPU load (EWMA with the config's smoothing).  Counters that went
 * backwards (the device was re-created) start the average over. */
static void nic_rates(const struct pol_tick *t, struct pol_nic *rec, const struct inventory_nic *n) {
        double alpha = t->c->smoothing > 0 && t->c->smoothing <= 1 ? t->c->smoothing : 1, dt, rx, tx;

        if (!n->has_stats) {
                rec->stats_known = rec->rate_known = rec->bps_known = false;
                return;
        }
        if (rec->stats_known && t->now <= rec->stats_usec)
                return;
        if (rec->stats_known && n->rx_packets >= rec->rx_prev && n->tx_packets >= rec->tx_prev) {
                dt = (double) (t->now - rec->stats_usec) / 1e6;
                rx = (double) (n->rx_packets - rec->rx_prev) / dt;
                rec->rx_pps_last = rx;
                tx = (double) (n->tx_packets - rec->tx_prev) / dt;
                if (rec->rate_known) {
                        rec->rx_pps = alpha * rx + (1 - alpha) * rec->rx_pps;
                        rec->tx_pps = alpha * tx + (1 - alpha) * rec->tx_pps;
                } else {
                        rec->rx_pps = rx;
                        rec->tx_pps = tx;
                        rec->rate_known = true;
                }
        } else
                rec->rate_known = false;
        if (rec->stats_known && rec->bytes_known && n->has_rx_bytes && n->rx_bytes >= rec->rxb_prev) {
                rec->rx_bps_last = (double) (n->rx_bytes - rec->rxb_prev) / ((double) (t->now - rec->stats_usec) / 1e6);
                rec->bps_known = true;
        } else
                rec->bps_known = false;
        rec->rx_prev = n->rx_packets;
        rec->tx_prev = n->tx_packets;
        rec->rxb_prev = n->rx_bytes;
        rec->bytes_known = n->has_rx_bytes;
        rec->stats_usec = t->now;
        rec->stats_known = true;
}

static bool tri(enum tristate v, bool dflt) {
        return v == TRI_INHERIT ? dflt : v == TRI_YES;
}

static int build_nics(struct pol_tick *t) {
        struct policy_state *st = t->st;

        for (size_t i = 0; i < st->n_nics; i++)
                st->nics[i].seen = false;
        /* create every record first: growing the array moves them */
        for (size_t i = 0; i < t->inv->n_nics; i++)
                if (!nic_get(st, t->inv->nics[i].name, true))
                        return -ENOMEM;

        for (size_t i = 0; i < t->inv->n_nics; i++) {
                const struct inventory_nic *n = &t->inv->nics[i];
                const struct config_interface *ci = config_interface_for(t->c, n->name);
                struct pol_nicctx *x = &t->nics[i];

                x->nic = n;
                x->rec = nic_get(st, n->name, false);
                x->rec->seen = true;
                nic_rates(t, x->rec, n);
                x->managed = !ci || ci->manage;
                x->rps = tri(ci ? ci->rps : TRI_INHERIT, t->c->rps);
                x->rfs = tri(ci ? ci->rfs : TRI_INHERIT, t->c->rfs);
                x->xps = tri(ci ? ci->xps : TRI_INHERIT, t->c->xps);
                x->takeover = tri(ci ? ci->takeover : TRI_INHERIT, t->c->takeover);
                x->allowed = t->eligible;
                if (ci && !cpuset_empty(&ci->cpus))
                        cpuset_and(&x->allowed, &x->allowed, &ci->cpus);
                cpuset_and(&x->cpus, &x->allowed, &n->local_cpus);
                /* no eligible CPU on its node (or the node unknown and the
                 * list empty): the NIC's work still has to go somewhere */
                if (cpuset_empty(&x->cpus))
                        x->cpus = x->allowed;

                /* a queue count change means the driver re-requested its
                 * IRQs (DESIGN.md 4): lay it out again */
                if (x->rec->laid_out && x->rec->n_queues != n->n_queues) {
                        char name[IF_NAMESIZE];
                        snprintf(name, sizeof(name), "%s", n->name);
                        policy_forget_nic(st, name);
                }
        }
        return 0;
}

/* Where an IRQ fires: a single-CPU mask (what we or the administrator
 * set), else a single effective CPU inside the mask, the CPU taking most
 * of its interrupts, or the first online CPU of its mask.  The mask comes
 * first because effective_affinity lags on x86 until the IRQ next fires
 * (DESIGN.md 4): a quiet IRQ just moved to CPU0 still shows effective 1. */
static int irq_cpu(const struct pol_tick *t, const struct inventory_irq *ii, const struct sample_irq *si) {
        cpuset_t on;
        double best = 0;
        int cpu = -1;

        cpu = cpuset_only(&ii->affinity);
        if (cpu >= 0)
                return cpu;
        cpu = ii->has_effective ? cpuset_only(&ii->effective) : -1;
        if (cpu >= 0 && cpuset_isset(&ii->affinity, cpu))
                return cpu;
        cpu = -1;
        /* the CPU of its mask it fired on most: only its nz range can say */
        if (t->in->load) {
                int lo, hi;

                irq_range(t->in->load, si, CPUSET_MAX, &lo, &hi);
                for (int c = lo; c <= hi; c++) {
                        double r = cpuset_isset(&ii->affinity, c) ? irq_rate_on(t->in->load, si, c) : 0;
                        if (r > best) {
                                best = r;
                                cpu = c;
                        }
                }
        }
        if (cpu >= 0)
                return cpu;
        cpuset_and(&on, &ii->affinity, &t->topo->online);
        return cpuset_first(&on);
}

/* Checks one IRQ of a unit against what we set: external change, kernel
 * move after hot-unplug, managed.  Returns false if the unit must not be
 * moved. */
static bool check_irq(struct pol_tick *t, struct pol_unit *u, const struct inventory_irq *ii, bool managed_nic) {
        struct pol_irq *r = pol_irq_get(t->st, ii->irq, true);
        char was[64], now[64];

        if (!r) {
                t->r = -ENOMEM;
                return false;
        }
        r->seen = true;
        /* the same name on every tick but the first: no snprintf a queue IRQ */
        if (strncmp(r->nic, t->nics[u->nic].nic->name, sizeof(r->nic)) != 0)
                snprintf(r->nic, sizeof(r->nic), "%s", t->nics[u->nic].nic->name);
        if (r->resync) {
                r->resync = false;
                if (r->set && !cpuset_equal(&ii->affinity, &r->last_set)) {
                        /* the driver's reset, not a move: no history */
                        r->set = r->moved = false;
                        r->dwell_usec = 0;
                        r->prev_cpu = -1;
                }
        }
        if (r->managed || r->external || r->failures >= ACTION_MAX_FAILURES)
                return false;
        /* ban_irqs: the queue stays where it is, its pair with it */
        if (config_irq_banned(t->c, ii->irq))
                return false;
        if (!managed_nic || !r->set)
                return true;
        if (!cpuset_intersects(&r->last_set, &t->topo->online)) {
                /* the CPU we set went offline: the kernel moved the IRQ (its
                 * mask then lists the online CPUs) or, in a tree without a
                 * kernel behind it, the mask still names the offline CPU.
                 * Either way ours to place again, not someone else's change.
                 * Said again each tick until it is placed: a tick whose
                 * other actions already touch the unit (its RPS leaving the
                 * offline CPU) places it at the next. */
                u->replace = true;
                u->offline_cpu = cpuset_first(&r->last_set);
                return true;
        }
        if (cpuset_equal(&ii->affinity, &r->last_set))
                return true;
        r->external = true;
        pol_note(t, LOG_NOTICE, "IRQ %u was changed by someone else (CPU%s -> CPU%s); leaving it alone until reload",
                 ii->irq, pol_fmt_cpus(&r->last_set, was, sizeof(was)),
                 pol_fmt_cpus(&ii->affinity, now, sizeof(now)));
        pol_note_about(t, POLICY_NOTE_EXTERNAL, ii->irq, t->nics[u->nic].nic->name, ii->queue);
        return false;
}

static void check_queue(struct pol_tick *t, const struct pol_nicctx *x, const struct inventory_queue *iq) {
        const struct inventory_nic *n = x->nic;
        struct pol_queue *q = pol_queue_get(t->st, n->name, iq->index, true);
        char was[64], now[64];

        if (!q) {
                t->r = -ENOMEM;
                return;
        }
        q->seen = true;
        if (q->resync) {
                q->resync = false;
                if (q->rps_set && !cpuset_equal(&iq->rps_cpus, &q->rps_last))
                        q->rps_set = false;
                if (q->xps_set && !cpuset_equal(&iq->xps_cpus, &q->xps_last))
                        q->xps_set = false;
                if (q->flow_set && iq->rps_flow_cnt != q->flow_last)
                        q->flow_set = false;
        }
        if (iq->has_rps && !q->orig_known) {
                q->orig_known = true;
                q->rps_orig = iq->rps_cpus;
                q->flow_orig = iq->rps_flow_cnt;
                /* The kernel and the drivers leave RPS off: a mask found set
                 * is an operator's tuning, kept unless configured otherwise.
                 * (IRQ affinities and XPS masks are set by drivers too, so
                 * they cannot be told apart and are taken over.) */
                if (!cpuset_empty(&iq->rps_cpus) && !x->takeover) {
                        q->rps_kept = true;
                        pol_note(t, LOG_NOTICE,
                                 "kept: %s rx-%d RPS CPUs %s set before irqsteerd started (takeover = no)", n->name,
                                 iq->index, pol_fmt_cpus(&iq->rps_cpus, now, sizeof(now)));
                }
        }
        /* a reload with takeover = yes makes it ours */
        if (q->rps_kept && x->takeover)
                q->rps_kept = false;
        if (iq->has_xps && !q->xps_orig_known) {
                q->xps_orig_known = true;
                q->xps_orig = iq->xps_cpus;
        }
        if (iq->has_rps && q->rps_set && !q->rps_external && !cpuset_equal(&iq->rps_cpus, &q->rps_last)) {
                q->rps_external = true;
                pol_note(t, LOG_NOTICE,
                         "RPS of %s rx-%d was changed by someone else (%s -> %s); leaving it alone until reload",
                         n->name, iq->index, pol_fmt_cpus(&q->rps_last, was, sizeof(was)),
                         pol_fmt_cpus(&iq->rps_cpus, now, sizeof(now)));
                pol_note_about(t, POLICY_NOTE_EXTERNAL, 0, n->name, iq->index);
        }
        if (iq->has_xps && q->xps_set && !q->xps_external && !cpuset_equal(&iq->xps_cpus, &q->xps_last)) {
                q->xps_external = true;
                pol_note(t, LOG_NOTICE,
                         "XPS of %s tx-%d was changed by someone else (%s -> %s); leaving it alone until reload",
                         n->name, iq->index, pol_fmt_cpus(&q->xps_last, was, sizeof(was)),
                         pol_fmt_cpus(&iq->xps_cpus, now, sizeof(now)));
                pol_note_about(t, POLICY_NOTE_EXTERNAL, 0, n->name, iq->index);
        }
        if (iq->has_rps && q->flow_set && !q->flow_external && iq->rps_flow_cnt != q->flow_last) {
                q->flow_external = true;
                pol_note(t, LOG_NOTICE,
                         "rps_flow_cnt of %s rx-%d was changed by someone else (%u -> %u); leaving it alone until reload",
                         n->name, iq->index, q->flow_last, iq->rps_flow_cnt);
                pol_note_about(t, POLICY_NOTE_EXTERNAL, 0, n->name, iq->index);
        }
}

/* Packets/s of the queue behind IRQ irq from the kernel's per-queue
 * counters: rx and tx of a combined vector, rx or tx of a split one; -1
 * when they are not known. */
static double queue_pps(const struct sample_rates *l, const struct inventory_nic *n, const struct inventory_queue *iq,
                        unsigned irq) {
        const struct sample_queue *q;
        double pps = 0;

        if (!l || l->n_queues == 0 || n->ifindex <= 0 || iq->index < 0)
                return -1;
        if (iq->rx_irq == (int) irq) {
                q = sample_rates_queue(l, n->ifindex, NETDEV_QUEUE_RX, (uint32_t) iq->index);
                if (!q)
                        return -1;
                pps += q->pps;
        }
        if (iq->tx_irq == (int) irq) {
                q = sample_rates_queue(l, n->ifindex, NETDEV_QUEUE_TX, (uint32_t) iq->index);
                if (!q)
                        return -1;
                pps += q->pps;
        }
        return pps;
}

static int build_units(struct pol_tick *t) {
        size_t n = 0;

        /* at most one unit a queue: grown once, not a unit at a time */
        for (size_t ni = 0; ni < t->inv->n_nics; ni++)
                n += t->inv->nics[ni].n_queues;
        if (n > 0 && util_grow((void **) &t->units, &t->a_units, n, sizeof(*t->units)) < 0)
                return -ENOMEM;
        for (size_t ni = 0; ni < t->inv->n_nics; ni++) {
                const struct inventory_nic *n = &t->inv->nics[ni];
                struct pol_nicctx *x = &t->nics[ni];

                x->first_unit = t->n_units;
                for (size_t qi = 0; qi < n->n_queues; qi++) {
                        const struct inventory_queue *iq = &n->queues[qi];
                        const struct inventory_irq *ii[2] = { NULL, NULL };
                        struct pol_unit *u;
                        int irqs[2] = { iq->rx_irq, iq->tx_irq };
                        bool ok = true;

                        if (x->managed)
                                check_queue(t, x, iq);
                        if (irqs[1] == irqs[0])
                                irqs[1] = -1;
                        if (irqs[0] < 0) {
                                irqs[0] = irqs[1];
                                irqs[1] = -1;
                        }
                        if (irqs[0] < 0)
                                continue;
                        if (util_grow((void **) &t->units, &t->a_units, t->n_units + 1, sizeof(*t->units)) < 0)
                                return -ENOMEM;
                        u = &t->units[t->n_units];
                        *u = (struct pol_unit){ .nic = ni, .qi = qi, .queue = iq->index, .cpu = -1,
                                                .irq_cpu = { -1, -1 }, .offline_cpu = -1 };
                        u->keep = pol_share_keep(x->rec, pol_queue_get(t->st, n->name, iq->index, false));
                        for (int k = 0; k < 2 && irqs[k] >= 0; k++) {
                                const struct inventory_irq *x2 = inventory_irq(t->inv, (unsigned) irqs[k]);
                                if (!x2 || !x2->affinity_readable)
                                        continue;
                                ii[u->n_irq] = x2;
                                u->irq[u->n_irq++] = x2->irq;
                        }
                        if (u->n_irq == 0)
                                continue;
                        for (int k = 0; k < u->n_irq; k++)
                                if (!check_irq(t, u, ii[k], x->managed))
                                        ok = false;
                        u->fixed = !ok || !x->managed;
                        for (int k = 0; k < u->n_irq; k++) {
                                u->si[k] = rates_irq(t->in->load, u->irq[k]);
                                if (u->si[k])
                                        u->rate += u->si[k]->rate;
                                u->pps[k] = queue_pps(t->in->load, n, iq, u->irq[k]);
                        }
                        for (int k = 0; k < u->n_irq; k++)
                                u->irq_cpu[k] = irq_cpu(t, ii[k], u->si[k]);
                        u->cpu = u->irq_cpu[0];
                        u->target = u->cpu;
                        if (iq->has_rps && !cpuset_empty(&iq->rps_cpus) &&
                            (u->cpu < 0 || cpuset_only(&iq->rps_cpus) != u->cpu)) {
                                u->rps_on = true;
                                u->rps = iq->rps_cpus;
                                u->n_rps = cpuset_count(&u->rps);
                        }
                        if (x->managed)
                                u->rps_ours = u->rps_on && pol_rps_ours(t->st, n, iq);
                        t->n_units++;
                }
                x->n_units = t->n_units - x->first_unit;
        }
        return 0;
}

/* The load model (DESIGN.md 5).  A CPU's network share is its irq share plus
 * its softirq share scaled by net_frac (NET_RX+NET_TX among all softirq
 * runs; runs, not time, so this undercounts batched NET work and the model
 * errs toward not moving).  Without any softirq breakdown the whole share is
 * taken as network when queue IRQs fire there.  That share is split among
 * the queue IRQs firing on the CPU in proportion to their interrupt rates
 * there, or, when the kernel counts packets per queue for every one of
 * them (netdev qstats), to their queues' packet rates (each spread over
 * the CPUs as its IRQ fired, all on its CPU when it raised none): NAPI
 * polls many packets per interrupt, more the busier it is, so interrupts
 * undercount a busy queue.  A queue with RPS keeps its share (u->keep:
 * measured, else POL_NAPI_SHARE) of its work on its IRQ CPU and spreads
 * the rest evenly over its RPS CPUs, so its total is estimated
 * from its IRQ CPU part, and that steered work is first taken off the other
 * CPUs' shares before they are split among their own IRQs. */
/* IRQ k of u's CPU range in the load split: where it fired, or its CPU
 * when it raised no interrupt but its queue moved packets. */
static void unit_range(const struct pol_tick *t, const struct pol_unit *u, int k, int n, int *lo, int *hi) {
        irq_range(t->in->load, u->si[k], n, lo, hi);
        if ((!u->si[k] || u->si[k]->rate <= 0) && u->pps[k] > 0 && u->cpu >= 0 && u->cpu < n)
                *lo = *hi = u->cpu;
}

/* IRQ k of u's weight on cpu in the split of that CPU's network work:
 * packets/s when pkts (every IRQ there has them), else interrupts/s. */
static double unit_weight(const struct pol_tick *t, const struct pol_unit *u, int k, int cpu, bool pkts) {
        const struct sample_irq *si = u->si[k];
        double r = irq_rate_on(t->in->load, si, cpu);

        if (!pkts)
                return r;
        if (u->pps[k] < 0)
                return 0;
        if (si && si->rate > 0)
                return u->pps[k] * r / si->rate;
        return cpu == u->cpu ? u->pps[k] : 0;
}

static int estimate(struct pol_tick *t) {
        const struct sample_rates *l = t->in->load;
        double *sum_rate, *steered, *sum_pps;
        int n = t->max_cpu + 1;

        if (!l)
                return 0;
        sum_rate = calloc(n, sizeof(double));
        steered = calloc(n, sizeof(double));
        /* packets/s of the queues on each CPU; NAN once one lacks them */
        sum_pps = calloc(n, sizeof(double));
        if (!sum_rate || !steered || !sum_pps) {
                free(sum_rate);
                free(steered);
                free(sum_pps);
                return -ENOMEM;
        }
        /* Each IRQ fires on one or a few CPUs: only its nz range is walked,
         * not every CPU for every IRQ (256 x 320 steps on the 256-CPU host). */
        for (size_t i = 0; i < t->n_units; i++)
                for (int k = 0; k < t->units[i].n_irq; k++) {
                        const struct sample_irq *si = t->units[i].si[k];
                        int lo, hi;

                        irq_range(l, si, n, &lo, &hi);
                        for (int c = lo; c <= hi; c++)
                                sum_rate[c] += irq_rate_on(l, si, c);
                        unit_range(t, &t->units[i], k, n, &lo, &hi);
                        for (int c = lo; c <= hi; c++)
                                sum_pps[c] = t->units[i].pps[k] < 0 ? NAN :
                                        sum_pps[c] + unit_weight(t, &t->units[i], k, c, true);
                }
        for (int c = 0; c < n; c++) {
                const struct sample_cpu *sc;
                double f;

                if (c > l->max_cpu || !l->cpus[c].valid)
                        continue;
                sc = &l->cpus[c];
                if (sc->net_frac > 0 || sc->net_rx_rate > 0 || sc->net_tx_rate > 0)
                        f = MIN(MAX(sc->net_frac, 0), 1);
                else
                        f = sum_rate[c] > 0 || sum_pps[c] > 0 ? 1 : 0;
                t->net[c] = MAX(sc->irq, 0) + MAX(sc->softirq, 0) * f;
                /* fast attack: the raw load, in the smoothed proportions */
                if (c < (int) t->st->n_cpus && t->st->cpus[c].fast && sc->irq + sc->softirq > 0)
                        t->net[c] *= MAX(t->st->cpus[c].raw_load / (sc->irq + sc->softirq), 1);
        }

        for (int pass = 0; pass < 2; pass++) {
                for (size_t i = 0; i < t->n_units; i++) {
                        struct pol_unit *u = &t->units[i];
                        double w = 0, keep;

                        u->tx = 0;
                        for (int k = 0; k < u->n_irq; k++) {
                                double wk = 0;
                                int lo, hi;

                                unit_range(t, u, k, n, &lo, &hi);
                                for (int c = lo; c <= hi; c++) {
                                        bool pkts = sum_pps[c] > 0; /* false for NAN */
                                        double r = unit_weight(t, u, k, c, pkts), sum = pkts ? sum_pps[c] : sum_rate[c];
                                        if (r > 0 && sum > 0)
                                                wk += MAX(t->net[c] - steered[c], 0) * r / sum;
                                }
                                w += wk;
                                /* a separate tx IRQ's completions: not receive work */
                                if (k > 0)
                                        u->tx += wk;
                        }
                        u->work = w;
                        u->total = w;
                        if (u->rps_on) {
                                int m = u->n_rps;
                                keep = u->keep + (cpuset_isset(&u->rps, u->cpu) ? (1 - u->keep) / m : 0);
                                if (u->n_irq == 2 && u->irq_cpu[1] >= 0 && u->irq_cpu[1] == u->irq_cpu[0] && u->si[0] &&
                                    u->si[1] && u->si[0]->rate > 0) {
                                        /* A tx vector beside the rx one: its work is what a
                                         * receive interrupt costs, all of the receive work
                                         * counted (the assumption before RPS, and
                                         * policy-share.c's); split by the interrupt rates
                                         * it would take the share of what stays on the CPU,
                                         * and a tx part too small makes the steered
                                         * receive work too big (on the simulator's trial8
                                         * host, 78% of queue work for 65%). */
                                        double rho = u->si[1]->rate / u->si[0]->rate, rx = w / (keep + rho);
                                        u->tx = rho * rx;
                                        u->total = rx + u->tx;
                                } else
                                        u->total = u->tx + MAX(w - u->tx, 0) / keep;
                        }
                }
                if (pass == 1)
                        break;
                for (size_t i = 0; i < t->n_units; i++) {
                        const struct pol_unit *u = &t->units[i];
                        int m;
                        if (!u->rps_on)
                                continue;
                        m = u->n_rps;
                        CPUSET_FOREACH(c, &u->rps)
                                if (c != u->cpu && c < n)
                                        steered[c] += (1 - u->keep) * MAX(u->total - u->tx, 0) / m;
                }
        }
        free(sum_rate);
        free(steered);
        free(sum_pps);
        return 0;
}

size_t pol_hot_by_load(const struct pol_tick *t, int *order, size_t max) {
        size_t n = 0;

        CPUSET_FOREACH(cpu, &t->hot) {
                size_t k;

                if (n == max)
                        break;
                k = n++;
                while (k > 0 && t->load[order[k - 1]] < t->load[cpu]) {
                        order[k] = order[k - 1];
                        k--;
                }
                order[k] = cpu;
        }
        return n;
}

static void sweep(struct policy_state *st) {
        for (size_t i = 0; i < st->n_irqs;) {
                if (!st->irqs[i].seen && !st->irqs[i].managed) {
                        st->irqs[i] = st->irqs[--st->n_irqs];
                        pol_index_forget(&st->irq_index);
                } else
                        i++;
        }
        for (size_t i = 0; i < st->n_queues;) {
                if (!st->queues[i].seen) {
                        st->queues[i] = st->queues[--st->n_queues];
                        pol_index_forget(&st->queue_index);
                } else
                        i++;
        }
        for (size_t i = 0; i < st->n_nics;) {
                if (!st->nics[i].seen)
                        st->nics[i] = st->nics[--st->n_nics];
                else
                        i++;
        }
}

static int fill_report(struct pol_tick *t) {
        struct policy_state *st = t->st;
        struct policy_report *rep = t->rep;
        size_t k = 0;

        rep->hot = t->hot;
        rep->n_hot_cpus = cpuset_count(&t->hot);
        rep->enter = pol_enter(t);
        rep->ref_max_cpu = -1;
        if (t->in->raw && t->in->raw->max_cpu >= 0) {
                const struct sample_rates *raw = t->in->raw;

                rep->ref = malloc(((size_t) raw->max_cpu + 1) * sizeof(*rep->ref));
                if (!rep->ref)
                        return -ENOMEM;
                rep->ref_max_cpu = raw->max_cpu;
                for (int c = 0; c <= raw->max_cpu; c++) {
                        const struct sample_cpu *rc = &raw->cpus[c];

                        rep->ref[c] = rc->valid ? (struct policy_pace_ref) { .load = MAX(rc->irq, 0) + MAX(rc->softirq, 0),
                                                                             .idle = MAX(rc->idle, 0) }
                                                : (struct policy_pace_ref) { NAN, NAN };
                }
        }
        rep->busy = cpuset_count(&t->settling) > 0 || cpuset_count(&t->touched) > 0;
        for (size_t i = 0; i < st->n_cpus; i++) {
                struct pol_cpu *pc = &st->cpus[i];

                rep->n_rising += !pc->hot && pc->above > 0;
                if (!pc->hot)
                        pc->hot_since = 0;
                else if (pc->hot_since == 0 || (i < CPUSET_MAX && cpuset_isset(&t->touched, (int) i)))
                        pc->hot_since = t->now;
                /* A CPU hot with nothing to do for longer than the dwell
                 * (no cooler CPU, no busy queue, ...) is not worth a
                 * decision every tick: the daemon's periodic full tick
                 * looks again (policy_pace).  Within the dwell, once the
                 * CPUs have settled (busy above), what it waits for comes
                 * at a time known now (a queue's dwell ends) or shows in
                 * the raw shares (a CPU rising, at a threshold: a fast
                 * tick), so a decision every few ticks and one when the
                 * wait ends do: on the simulator's cost16 host with every
                 * load x2 the ticks after each RPS set had stayed full 30 s
                 * for this alone. */
                if (pc->hot) {
                        uint64_t end = pc->hot_since + MAX(t->c->min_dwell_usec, 10 * t->c->interval_usec);

                        if (t->now < end) {
                                rep->measuring = true;
                                if (rep->due_usec == 0 || end < rep->due_usec)
                                        rep->due_usec = end;
                        }
                }
        }
        for (size_t i = 0; i < st->n_nics; i++)
                rep->busy |= st->nics[i].trial || st->nics[i].thr_trial;
        /* RPS sets sized with the prior share wait for the share to be
         * measured and for the dwell before they are sized again
         * (pol_rps_adjust), and calm ticks run no policy: once the sets
         * made the host calm, the simulator's trial8 host (seed 2) had
         * two measurements, the next full tick 30 s later, and its RPS
         * CPUs stayed at 1.23 times the lower bound.  The wait needs no
         * decision at every tick, though: the loads a measurement reads
         * are smoothed, so measurements a tick apart say nearly the same,
         * and the dwell is counted in time.  So the daemon runs a full
         * tick every few ticks while it lasts (engine.h,
         * ENGINE_MEASURE_FULL_EVERY): on the simulator's cost16 host with
         * every load x2, 25 full ticks in a row after the last RPS change
         * had been 1.6-1.9 CPU s/h against 0.4-0.5 once calm.  Past the dwell
         * and 10 intervals more (the share not measurable), the periodic
         * full tick looks again. */
        for (size_t i = 0; i < st->n_queues; i++) {
                const struct pol_queue *q = &st->queues[i];

                if (q->seen && q->rps_prior &&
                    t->now - q->rps_change_usec < t->c->min_dwell_usec + 10 * t->c->interval_usec)
                        rep->measuring = true;
        }
        if (rep->n_hot_cpus > 0) {
                rep->hot_cpus = calloc(rep->n_hot_cpus, sizeof(*rep->hot_cpus));
                if (!rep->hot_cpus) {
                        rep->n_hot_cpus = 0;
                        return -ENOMEM;
                }
                CPUSET_FOREACH(cpu, &t->hot) {
                        const struct sample_rates *l = t->in->load;
                        struct policy_hot_cpu *h = &rep->hot_cpus[k++];
                        h->cpu = cpu;
                        h->saturated = st->cpus[cpu].saturated;
                        if (!cpuset_isset(&t->touched, cpu))
                                snprintf(h->why, sizeof(h->why), "%s", st->cpus[cpu].why);
                        if (l && cpu <= l->max_cpu && l->cpus[cpu].valid) {
                                h->load = l->cpus[cpu].irq + l->cpus[cpu].softirq;
                                h->idle = l->cpus[cpu].idle;
                        }
                }
        }
        for (size_t i = 0; i < t->n_units; i++) {
                const struct pol_unit *u = &t->units[i];
                if (!t->nics[u->nic].managed)
                        continue;
                for (int j = 0; j < u->n_irq; j++) {
                        const struct pol_irq *r = pol_irq_get(st, u->irq[j], false);
                        if (!r || (!r->managed && !r->external))
                                rep->n_queue_irqs++;
                }
                if (u->rps_ours)
                        rep->n_rps_queues++;
        }
        for (size_t i = 0; i < t->n_irqless; i++) {
                const struct pol_unit *u = &t->irqless[i];
                const struct inventory_nic *n = t->nics[u->nic].nic;
                if (!u->rps_ours)
                        continue;
                for (size_t q = 0; q < n->n_queues; q++)
                        rep->n_rps_queues += pol_rps_ours(st, n, &n->queues[q]);
        }
        while (st->n_moves > 0 && st->moves[0] + POL_MOVE_WINDOW_USEC <= t->now) {
                memmove(st->moves, st->moves + 1, (st->n_moves - 1) * sizeof(*st->moves));
                st->n_moves--;
        }
        rep->n_moves_10min = st->n_moves;
        for (size_t i = 0; i < st->n_irqs; i++) {
                rep->n_managed_irqs += st->irqs[i].managed;
                rep->n_external += st->irqs[i].external;
        }
        if (pol_irq_classes(t) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < st->n_queues; i++) {
                rep->n_kept += st->queues[i].rps_kept;
                rep->n_external += st->queues[i].rps_external + st->queues[i].xps_external +
                                   st->queues[i].flow_external;
        }
        for (size_t i = 0; i < st->n_threads; i++)
                rep->n_external += st->threads[i].external;
        return 0;
}

/* ---- pace ---- */

static const char *const pace_names[POLICY_PACE_MAX] = {
        [POLICY_PACE_CALM] = "calm",
        [POLICY_PACE_STEADY] = "steady",
        [POLICY_PACE_FAST] = "fast",
};

const char *policy_pace_to_string(enum policy_pace p) {
        return p >= 0 && p < POLICY_PACE_MAX ? pace_names[p] : NULL;
}

enum policy_pace policy_pace(const struct config *c, const struct policy_report *last, const struct sample_rates *raw) {
        enum policy_pace pace;

        if (!c || !last || !(last->enter > 0))
                return POLICY_PACE_STEADY;
        if (last->n_rising > 0)
                return POLICY_PACE_FAST;
        pace = last->busy ? POLICY_PACE_STEADY : POLICY_PACE_CALM;
        if (!raw)
                return pace;
        for (int cpu = 0; cpu <= raw->max_cpu; cpu++) {
                const struct sample_cpu *rc = &raw->cpus[cpu];
                double L, idle;

                if (!rc->valid)
                        continue;
                L = MAX(rc->irq, 0) + MAX(rc->softirq, 0);
                idle = MAX(rc->idle, 0);
                if (cpu < CPUSET_MAX && cpuset_isset(&last->hot, cpu))
                        continue;
                /* not hot yet and at the threshold: count the samples fast */
                if (L >= last->enter)
                        return POLICY_PACE_FAST;
                /* the onset of a spike: the next sample comes soon, so that
                 * a flood that began late in this interval is acted on
                 * within fast_interval, not a whole interval later.  Its
                 * network share alone shows it late: much of a flood's
                 * cost can be the sender's and receiver's own time (the
                 * veth flood of bench/README.md: about half of CPU0 in
                 * irq+softirq once saturated, all of its idle gone), so a
                 * fall in idle counts too when the network share rose
                 * with it. */
                if (last->ref && cpu <= last->ref_max_cpu) {
                        const struct policy_pace_ref *ref = &last->ref[cpu];

                        if (L - ref->load >= POL_PACE_RISE ||
                            (ref->idle - idle >= POL_PACE_RISE && L - ref->load >= POL_PACE_NET_RISE))
                                return POLICY_PACE_FAST;
                }
                /* the saturated rule may count it (unless no CPU has room:
                 * then sampling fast would change nothing) */
                if (idle < c->saturated_idle && L >= c->saturated_share)
                        pace = POLICY_PACE_STEADY;
        }
        return pace;
}

int policy_tick(struct policy_state *st, const struct policy_input *in, struct action_list *ret_actions,
                struct policy_report *ret_report) {
        struct pol_tick t = { 0 };
        int r, n;

        if (!st || !in || !in->config || !in->topo || !in->inv || !ret_actions || !ret_report)
                return -EINVAL;
        if (in->topo->max_cpu < 0 || in->topo->max_cpu >= CPUSET_MAX || !in->topo->cpus)
                return -EINVAL;

        action_list_clear(ret_actions);
        policy_report_free(ret_report);

        t.st = st;
        t.in = in;
        t.c = in->config;
        t.topo = in->topo;
        t.inv = in->inv;
        t.out = ret_actions;
        t.rep = ret_report;
        t.now = in->now_usec;
        t.scale = 1;
        t.max_cpu = in->topo->max_cpu;
        st->min_dwell_usec = t.c->min_dwell_usec;
        st->max_dwell_usec = MAX(t.c->max_dwell_usec, t.c->min_dwell_usec);

        /* notes said by feedback since the last tick */
        if (st->n_notes > 0) {
                ret_report->notes = st->notes;
                ret_report->n_notes = st->n_notes;
                st->notes = NULL;
                st->n_notes = st->a_notes = 0;
        }
        if (st->oom) {
                st->oom = false;
                pol_note(&t, LOG_WARNING, "policy state: out of memory while recording feedback");
        }

        n = t.max_cpu + 1;
        if (util_grow((void **) &st->cpus, &st->a_cpus, n, sizeof(*st->cpus)) < 0)
                return -ENOMEM;
        if (st->n_cpus < (size_t) n) {
                memset(st->cpus + st->n_cpus, 0, (n - st->n_cpus) * sizeof(*st->cpus));
                st->n_cpus = n;
        }
        t.load = calloc(n, sizeof(double));
        t.idle = calloc(n, sizeof(double));
        t.net = calloc(n, sizeof(double));
        t.nics = calloc(MAX(in->inv->n_nics, 1), sizeof(*t.nics));
        if (!t.load || !t.idle || !t.net || !t.nics) {
                r = -ENOMEM;
                goto finish;
        }

        /* Never a target (DESIGN.md 5): offline, isolated, nohz_full and
         * banned CPUs, whether banned by the configuration or at run time.
         * What still uses a CPU that is no longer eligible leaves it this
         * tick (pol_vacate_rps, pol_replace_offline), workers by the same
         * eligible set. */
        {
                cpuset_t banned = t.c->banned_cpus;

                if (in->bans)
                        cpuset_or(&banned, &banned, in->bans);
                topology_eligible(in->topo, &banned, &t.eligible);
        }

        for (size_t i = 0; i < st->n_irqs; i++)
                st->irqs[i].seen = false;
        for (size_t i = 0; i < st->n_queues; i++)
                st->queues[i].seen = false;

        cpuset_zero(&t.settling);
        for (size_t i = 0; i < st->n_cpus && i < CPUSET_MAX; i++)
                if (t.now < st->cpus[i].settle_until)
                        cpuset_set(&t.settling, (int) i);
        update_hot(&t);
        r = build_nics(&t);
        if (r < 0)
                goto finish;
        r = build_units(&t);
        if (r < 0)
                goto finish;
        r = estimate(&t);
        if (r < 0)
                goto finish;
        pol_share_measure(&t);
        if (t.r < 0) {
                r = t.r;
                goto finish;
        }
        r = pol_soft_build(&t);
        if (r < 0)
                goto finish;

        pol_unwanted(&t);
        pol_vacate_rps(&t);
        pol_layout(&t);
        pol_replace_offline(&t);
        pol_rebalance(&t);
        pol_other_irqs(&t);
        pol_rebalance_other(&t);
        pol_default_affinity(&t);
        pol_rps_adjust(&t);
        pol_soft(&t);
        pol_xps(&t);
        pol_workers(&t);
        pol_napi(&t);

        sweep(st);
        r = fill_report(&t);
        if (r == 0)
                r = t.r;
finish:
        free(t.load);
        free(t.idle);
        free(t.net);
        free(t.nics);
        free(t.units);
        free(t.irqless);
        free(t.others);
        return r;
}
