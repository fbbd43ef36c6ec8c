/* Action lists and their one-line rendering. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "json.h"
#include "util.h"

static const char *const type_names[ACTION_TYPE_MAX] = {
        [ACTION_IRQ_AFFINITY] = "irq-affinity",
        [ACTION_RPS] = "rps",
        [ACTION_RPS_FLOW_CNT] = "rps-flow-cnt",
        [ACTION_SOCK_FLOW_ENTRIES] = "rps-sock-flow-entries",
        [ACTION_XPS] = "xps",
        [ACTION_THREAD_AFFINITY] = "thread-affinity",
        [ACTION_DEFAULT_AFFINITY] = "default-affinity",
        [ACTION_THREADED_NAPI] = "threaded-napi",
};

const char *action_type_to_string(enum action_type t) {
        if (t < 0 || t >= ACTION_TYPE_MAX)
                return NULL;
        return type_names[t];
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

enum action_failure action_failure_class(enum action_type t, int r) {
        if (r >= 0)
                return ACTION_FAIL_NONE;
        switch (-r) {
        case EIO:
        case EPERM:
        case EACCES:
        case EROFS:
                return ACTION_FAIL_PERMANENT;
        case ENOSPC:
                /* a vector space is an IRQ's; a file refusing room is not a CPU */
                return t == ACTION_IRQ_AFFINITY ? ACTION_FAIL_CAPACITY : ACTION_FAIL_OTHER;
        case ENOENT:
        case ESRCH:
        case ENODEV:
        case ENXIO:
                return ACTION_FAIL_GONE;
        case EBUSY:
        case EAGAIN:
        case EINTR:
                return ACTION_FAIL_TRANSIENT;
        case EINVAL:
                /* sched_setaffinity's EINVAL: a kernel thread or a
                 * PF_NO_SETAFFINITY task, which never takes a mask */
                return t == ACTION_THREAD_AFFINITY ? ACTION_FAIL_PERMANENT : ACTION_FAIL_INVALID;
        case ERANGE:
        case EOVERFLOW:
                return ACTION_FAIL_INVALID;
        case EOPNOTSUPP:
                return ACTION_FAIL_UNSUPPORTED;
        default:
                return ACTION_FAIL_OTHER;
        }
}

const char *action_failure_to_string(enum action_failure f) {
        if (f < 0 || f >= ACTION_FAILURE_MAX)
                return NULL;
        return failure_names[f];
}

bool action_failure_counts(enum action_failure f) {
        return f == ACTION_FAIL_INVALID || f == ACTION_FAIL_UNSUPPORTED || f == ACTION_FAIL_OTHER;
}

struct action *action_list_add(struct action_list *l, enum action_type type) {
        struct action *a;

        if (util_grow((void **) &l->v, &l->allocated, l->n + 1, sizeof(*l->v)) < 0)
                return NULL;
        a = &l->v[l->n++];
        memset(a, 0, sizeof(*a));
        a->type = type;
        a->queue = -1;
        return a;
}

void action_list_clear(struct action_list *l) {
        l->n = 0;
}

void action_list_free(struct action_list *l) {
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
        int n;

        fmt_cpus(&a->from, from, cl);
        fmt_cpus(&a->cpus, to, cl);
        switch (a->type) {
        case ACTION_IRQ_AFFINITY:
                if (a->nic[0] && a->queue >= 0)
                        n = snprintf(buf, len, "IRQ %u (%s queue %d%s) %s -> %s: %s", a->irq, a->nic, a->queue,
                                     a->pair_irq ? ", with its pair" : "", from, to, a->reason);
                else
                        n = snprintf(buf, len, "IRQ %u %s -> %s: %s", a->irq, from, to, a->reason);
                break;
        case ACTION_RPS:
        case ACTION_XPS:
                n = snprintf(buf, len, "%s %s %s-%d %s -> %s: %s", a->type == ACTION_RPS ? "RPS" : "XPS", a->nic,
                             a->type == ACTION_RPS ? "rx" : "tx", a->queue, from, to, a->reason);
                break;
        case ACTION_RPS_FLOW_CNT:
                n = snprintf(buf, len, "rps_flow_cnt %s rx-%d %u -> %u: %s", a->nic, a->queue, a->from_value,
                             a->value, a->reason);
                break;
        case ACTION_SOCK_FLOW_ENTRIES:
                n = snprintf(buf, len, "rps_sock_flow_entries %u -> %u: %s", a->from_value, a->value, a->reason);
                break;
        case ACTION_THREAD_AFFINITY:
                n = snprintf(buf, len, "thread %d (pid %d) %s -> %s: %s", (int) a->tid, (int) a->pid, from, to,
                             a->reason);
                break;
        case ACTION_DEFAULT_AFFINITY:
                n = snprintf(buf, len, "default_smp_affinity %s -> %s: %s", from, to, a->reason);
                break;
        case ACTION_THREADED_NAPI:
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
        if (a->type == ACTION_IRQ_AFFINITY)
                json_key_uint(w, "irq", a->irq);
        else
                json_key_null(w, "irq");
        json_key_string(w, "nic", a->nic[0] ? a->nic : NULL);
        if (a->queue >= 0)
                json_key_int(w, "queue", a->queue);
        else
                json_key_null(w, "queue");
        if (a->type == ACTION_THREAD_AFFINITY) {
                json_key_int(w, "pid", a->pid);
                json_key_int(w, "tid", a->tid);
        }
        if (a->type == ACTION_RPS_FLOW_CNT || a->type == ACTION_SOCK_FLOW_ENTRIES || a->type == ACTION_THREADED_NAPI) {
                json_key_uint(w, "value", a->value);
                json_key_uint(w, "from_value", a->from_value);
        } else {
                json_key_cpuset(w, "cpus", &a->cpus);
                json_key_cpuset(w, "from", &a->from);
        }
}
