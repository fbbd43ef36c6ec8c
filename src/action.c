/* Action lists and their one-line rendering. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "json.h"
#include "util.h"

static const char *const reason_names[ACTION_REASON_MAX] = {
#define REASON_NAME(name, text) [ACTION_REASON_##name] = text,
        ACTION_REASONS(REASON_NAME)
#undef REASON_NAME
};

const char *action_reason_to_string(enum action_reason r) {
        if (r < 0 || r >= ACTION_REASON_MAX)
                return NULL;
        return reason_names[r];
}

#define K(kind) (1U << KNOB_##kind)
/* Which kinds of action each reason is given to (policy*.c). */
static const unsigned reason_kinds[ACTION_REASON_MAX] = {
        [ACTION_REASON_INITIAL_LAYOUT] = K(IRQ),
        [ACTION_REASON_CPU_OFFLINE] = K(IRQ) | K(RPS),
        [ACTION_REASON_CPU_HOT] = K(IRQ),
        [ACTION_REASON_CPU_SATURATED] = K(IRQ),
        [ACTION_REASON_CPU_BANNED] = K(IRQ) | K(RPS) | K(XPS) | K(THREAD) | K(DEFAFF),
        [ACTION_REASON_XPS_FOLLOWS_RX] = K(XPS),
        [ACTION_REASON_SINGLE_QUEUE_RPS] = K(RPS),
        [ACTION_REASON_LONE_HOT_QUEUE] = K(RPS),
        [ACTION_REASON_QUEUE_GRANULARITY] = K(RPS),
        [ACTION_REASON_STEADY_PEAK] = K(RPS),
        [ACTION_REASON_SOFTIRQ_HOT] = K(RPS) | K(THREADED),
        [ACTION_REASON_RPS_WIDENED] = K(RPS),
        [ACTION_REASON_RPS_NARROWED] = K(RPS),
        [ACTION_REASON_RPS_NOT_NEEDED] = K(RPS),
        [ACTION_REASON_RPS_TRIAL_FAILED] = K(RPS),
        [ACTION_REASON_BACK_TO_ORIGINAL] = K(RPS) | K(XPS) | K(FLOWCNT) | K(DEFAFF) | K(THREADED),
        [ACTION_REASON_RFS] = K(FLOWCNT) | K(SOCKFLOW),
        [ACTION_REASON_WORKER_SPREAD] = K(THREAD),
        [ACTION_REASON_WORKER_COLOCATE] = K(THREAD),
        [ACTION_REASON_WORKER_AVOID_NET] = K(THREAD),
        [ACTION_REASON_LAYOUT_BY_LOAD] = K(IRQ),
        [ACTION_REASON_RPS_OFF_HOT] = K(RPS),
        [ACTION_REASON_RPS_RESIZED] = K(RPS),
        [ACTION_REASON_IRQ_NUMA_LOCAL] = K(IRQ),
        [ACTION_REASON_IRQ_BUSY] = K(IRQ),
        [ACTION_REASON_NAPI_THREAD] = K(THREAD),
        [ACTION_REASON_NAPI_TRIAL_FAILED] = K(THREADED),
        [ACTION_REASON_NAPI_NOT_NEEDED] = K(THREADED),
        [ACTION_REASON_CPUS_ELIGIBLE] = K(DEFAFF),
        [ACTION_REASON_EXTERNAL_CHANGE_EXPIRED] = K(IRQ) | K(RPS) | K(XPS) | K(FLOWCNT) | K(DEFAFF),
};
#undef K

bool action_reason_fits(enum knob_kind t, enum action_reason r) {
        if (t < 0 || t >= KNOB_KIND_MAX || r < 0 || r >= ACTION_REASON_MAX)
                return false;
        return reason_kinds[r] & (1U << t);
}

struct action *action_set_reason(struct action *a, enum action_reason why, const char *fmt, ...) {
        va_list ap;

        a->why = why;
        va_start(ap, fmt);
        (void) vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
        va_end(ap);
        return a;
}

static const char *const failure_names[ACTION_FAILURE_MAX] = {
        [ACTION_FAIL_NONE] = "none",
        [ACTION_FAIL_PERMANENT] = "permanent",
        [ACTION_FAIL_CAPACITY] = "capacity",
        [ACTION_FAIL_GONE] = "gone",
        [ACTION_FAIL_TRANSIENT] = "transient",
        [ACTION_FAIL_INVALID] = "invalid",
        [ACTION_FAIL_UNSUPPORTED] = "unsupported",
        [ACTION_FAIL_OTHER] = "other",
};

enum action_failure action_failure_class(enum knob_kind t, int r) {
        static const struct {
                enum action_failure cls;
                int errnos[4];
        } classes[] = {
                /* EIO: a kernel-managed IRQ before 6.12, EPERM since */
                { ACTION_FAIL_PERMANENT, { EIO, EPERM, EACCES, EROFS } },
                { ACTION_FAIL_GONE, { ENOENT, ESRCH, ENODEV, ENXIO } },
                { ACTION_FAIL_TRANSIENT, { EBUSY, EAGAIN, EINTR } },
                { ACTION_FAIL_INVALID, { ERANGE, EOVERFLOW } },
                { ACTION_FAIL_UNSUPPORTED, { EOPNOTSUPP } },
        };

        if (r >= 0)
                return ACTION_FAIL_NONE;
        /* a vector space is an IRQ's; a file refusing room is not a CPU */
        if (r == -ENOSPC)
                return t == KNOB_IRQ ? ACTION_FAIL_CAPACITY : ACTION_FAIL_OTHER;
        /* sched_setaffinity's EINVAL: a kernel thread or a PF_NO_SETAFFINITY
         * task, which never takes a mask */
        if (r == -EINVAL)
                return t == KNOB_THREAD ? ACTION_FAIL_PERMANENT : ACTION_FAIL_INVALID;
        for (size_t i = 0; i < ELEMENTSOF(classes); i++)
                for (size_t j = 0; j < ELEMENTSOF(classes[i].errnos); j++)
                        if (classes[i].errnos[j] == -r)
                                return classes[i].cls;
        return ACTION_FAIL_OTHER;
}

const char *action_failure_to_string(enum action_failure f) {
        if (f < 0 || f >= ACTION_FAILURE_MAX)
                return NULL;
        return failure_names[f];
}

bool action_failure_counts(enum action_failure f) {
        return f == ACTION_FAIL_INVALID || f == ACTION_FAIL_UNSUPPORTED || f == ACTION_FAIL_OTHER;
}

struct action *action_list_add(struct action_list *l, enum knob_kind type) {
        struct action *a;

        if (util_grow((void **) &l->v, &l->allocated, l->n + 1, sizeof(*l->v)) < 0)
                return NULL;
        a = &l->v[l->n++];
        memset(a, 0, sizeof(*a));
        a->type = type;
        a->queue = -1;
        a->why = ACTION_REASON_OTHER;
        return a;
}

int action_set_cpus(struct action *a, const cpuset_t *to, const cpuset_t *from) {
        cpuset_kept_t c = { 0 }, f = { 0 };
        cpuset_t none;

        if (!from) {
                cpuset_zero(&none);
                from = &none;
        }
        if (cpuset_keep(&c, to) < 0 || cpuset_keep(&f, from) < 0) {
                cpuset_kept_free(&c);
                return -ENOMEM;
        }
        action_done(a);
        a->cpus = c;
        a->from = f;
        return 0;
}

int action_copy(struct action *ret, const struct action *a) {
        *ret = *a;
        ret->cpus = ret->from = (cpuset_kept_t) { 0 };
        if (cpuset_kept_copy(&ret->cpus, &a->cpus) < 0 || cpuset_kept_copy(&ret->from, &a->from) < 0) {
                action_done(ret);
                return -ENOMEM;
        }
        return 0;
}

void action_done(struct action *a) {
        cpuset_kept_free(&a->cpus);
        cpuset_kept_free(&a->from);
}

void action_list_clear(struct action_list *l) {
        for (size_t i = 0; i < l->n; i++)
                action_done(&l->v[i]);
        l->n = 0;
}

void action_list_free(struct action_list *l) {
        action_list_clear(l);
        free(l->v);
        *l = (struct action_list){ 0 };
}

/* "CPU3" for a single CPU, "CPUs 0-3" otherwise, "none" when empty. */
static void fmt_cpus(const cpuset_t *s, char *buf, size_t len) {
        char list[512];

        if (cpuset_empty(s)) {
                snprintf(buf, len, "none");
                return;
        }
        /* the list cut to what "CPUs " leaves of len */
        cpuset_to_text(s, "", list, MIN(sizeof(list), len > 5 ? len - 5 : 1));
        if (cpuset_count(s) == 1)
                snprintf(buf, len, "CPU%s", list);
        else
                snprintf(buf, len, "CPUs %s", list);
}

int action_format(const struct action *a, char *buf, size_t len) {
        char from[600], to[600];
        /* each list gets a quarter of the line, so the reason stays */
        size_t cl = MIN(sizeof(from), MAX(len / 4, (size_t) 40));
        cpuset_t set = cpuset_kept_get(&a->from);
        int n;

        fmt_cpus(&set, from, cl);
        set = cpuset_kept_get(&a->cpus);
        fmt_cpus(&set, to, cl);
        switch (a->type) {
        case KNOB_IRQ:
                if (a->nic[0] && a->queue >= 0)
                        n = snprintf(buf, len, "IRQ %u (%s queue %d%s) %s -> %s: %s", a->irq, a->nic, a->queue,
                                     a->pair_irq ? ", with its pair" : "", from, to, a->reason);
                else
                        n = snprintf(buf, len, "IRQ %u %s -> %s: %s", a->irq, from, to, a->reason);
                break;
        case KNOB_RPS:
        case KNOB_XPS:
                n = snprintf(buf, len, "%s %s %s-%d %s -> %s: %s", a->type == KNOB_RPS ? "RPS" : "XPS", a->nic,
                             a->type == KNOB_RPS ? "rx" : "tx", a->queue, from, to, a->reason);
                break;
        case KNOB_FLOWCNT:
                n = snprintf(buf, len, "rps_flow_cnt %s rx-%d %u -> %u: %s", a->nic, a->queue, a->from_value,
                             a->value, a->reason);
                break;
        case KNOB_SOCKFLOW:
                n = snprintf(buf, len, "rps_sock_flow_entries %u -> %u: %s", a->from_value, a->value, a->reason);
                break;
        case KNOB_THREAD:
                n = snprintf(buf, len, "thread %d (pid %d) %s -> %s: %s", (int) a->tid, (int) a->pid, from, to,
                             a->reason);
                break;
        case KNOB_DEFAFF:
                n = snprintf(buf, len, "default_smp_affinity %s -> %s: %s", from, to, a->reason);
                break;
        case KNOB_THREADED:
                n = snprintf(buf, len, "%s threaded NAPI %" PRIu32 " -> %" PRIu32 ": %s", a->nic, a->from_value, a->value,
                             a->reason);
                break;
        default:
                return -EINVAL;
        }
        if (n < 0)
                return -EINVAL;
        util_mark_cut(buf, len, n);
        return 0;
}

void action_json_members(struct json_writer *w, const struct action *a) {
        json_key_string(w, "type", action_type_to_string(a->type));
        json_key_uint_if(w, "irq", a->type == KNOB_IRQ, a->irq);
        json_key_string(w, "nic", a->nic[0] ? a->nic : NULL);
        json_key_int_if(w, "queue", a->queue >= 0, a->queue);
        if (a->type == KNOB_THREAD) {
                json_key_int(w, "pid", a->pid);
                json_key_int(w, "tid", a->tid);
        }
        if (a->type == KNOB_FLOWCNT || a->type == KNOB_SOCKFLOW || a->type == KNOB_THREADED) {
                json_key_uint(w, "value", a->value);
                json_key_uint(w, "from_value", a->from_value);
        } else {
                cpuset_t set = cpuset_kept_get(&a->cpus);

                json_key_cpuset(w, "cpus", &set);
                set = cpuset_kept_get(&a->from);
                json_key_cpuset(w, "from", &set);
        }
}

/* ---- the object an action changes ---- */

const char *action_key_text(const struct action *a, char *buf, size_t len) {
        struct knob_key k;

        if (action_knob_key(a, &k) < 0 || knob_key_format(&k, buf, len) < 0)
                snprintf(buf, len, "?");
        return buf;
}

int action_knob_key(const struct action *a, struct knob_key *k) {
        *k = (struct knob_key){ .kind = a->type };
        switch (a->type) {
        case KNOB_IRQ:
                k->irq = a->irq;
                break;
        case KNOB_RPS:
        case KNOB_XPS:
        case KNOB_FLOWCNT:
        case KNOB_THREADED:
                if (strnlen(a->nic, sizeof(a->nic)) >= sizeof(a->nic))
                        return -EINVAL;
                strcpy(k->nic, a->nic);
                if (a->type != KNOB_THREADED)
                        k->queue = a->queue;
                break;
        case KNOB_SOCKFLOW:
        case KNOB_DEFAFF:
                break;
        case KNOB_THREAD:
                k->pid = a->pid;
                k->tid = a->tid;
                /* the task the policy decided for, not whatever holds the
                 * TID now */
                k->starttime = a->starttime;
                break;
        default:
                return -EINVAL;
        }
        return knob_key_valid(k) ? 0 : -EINVAL;
}

int action_target(const struct action *a, const char *current, char **ret) {
        cpuset_t cpus = cpuset_kept_get(&a->cpus);

        return knob_target(a->type, &cpus, a->value, current, ret);
}
