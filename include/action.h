/* Actions: what the policy decides and the actuators carry out.  Each
 * carries a human-readable reason for the log. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"

enum action_type {
        ACTION_IRQ_AFFINITY,     /* irq -> cpus (one CPU for queue IRQs) */
        ACTION_RPS,              /* nic/queue rx-N/rps_cpus -> cpus */
        ACTION_RPS_FLOW_CNT,     /* nic/queue rx-N/rps_flow_cnt -> value */
        ACTION_SOCK_FLOW_ENTRIES,/* proc/sys/net/core/rps_sock_flow_entries -> value */
        ACTION_XPS,              /* nic/queue tx-N/xps_cpus -> cpus */
        ACTION_THREAD_AFFINITY,  /* pid/tid -> cpus (sched_setaffinity) */
        ACTION_DEFAULT_AFFINITY, /* proc/irq/default_smp_affinity -> cpus (the mask new IRQs get) */
        ACTION_THREADED_NAPI,    /* nic: sys/class/net/NIC/threaded -> value (0 off, 1 on) */
        ACTION_TYPE_MAX,
        ACTION_TYPE_INVALID = -1,
};

/* What a failed action means, sorted by what to do next (after
 * irqbalance's activate.c).  The one classification of an action's errno:
 * the policy's feedback acts on it, the daemon logs by it (once per object
 * and class). */
enum action_failure {
        ACTION_FAIL_NONE,        /* not a failure */
        ACTION_FAIL_PERMANENT,   /* the object refuses for good: a kernel-managed IRQ (EIO
                                  * before 6.12, EPERM since), a file we may not write (EACCES,
                                  * EROFS, EPERM), a thread refusing affinity changes (EINVAL:
                                  * kernel thread or PF_NO_SETAFFINITY; EPERM): never touched
                                  * again */
        ACTION_FAIL_CAPACITY,    /* ENOSPC on an IRQ: the target CPU's vector space is full:
                                  * another CPU */
        ACTION_FAIL_GONE,        /* ENOENT, ESRCH, ENODEV, ENXIO: the object vanished: forgotten */
        ACTION_FAIL_TRANSIENT,   /* EBUSY, EAGAIN, EINTR: retried next tick, not counted */
        ACTION_FAIL_INVALID,     /* EINVAL, ERANGE, EOVERFLOW: bad or offline CPUs: decided again
                                  * on fresh topology, counted */
        ACTION_FAIL_UNSUPPORTED, /* EOPNOTSUPP: thread actions below a fixture root, counted */
        ACTION_FAIL_OTHER,       /* anything else, counted */
        ACTION_FAILURE_MAX,
        ACTION_FAILURE_INVALID = -1,
};

/* Consecutive counted failures (INVALID, UNSUPPORTED, OTHER) of one object
 * after which the policy gives it up; the other classes never count. */
#define ACTION_MAX_FAILURES 3

struct action {
        enum action_type type;
        unsigned irq;            /* ACTION_IRQ_AFFINITY */
        unsigned pair_irq;       /* the queue's other IRQ moved along, 0 if none (informational) */
        char nic[IF_NAMESIZE];   /* RPS/XPS/FLOW_CNT, and the IRQ's NIC if any */
        int queue;               /* queue index, -1 if none */
        pid_t pid, tid;          /* THREAD_AFFINITY */
        unsigned long long starttime; /* THREAD_AFFINITY: the TID's starttime when it was
                                  * discovered; a TID that no longer has it was
                                  * reused and is never written */
        cpuset_t cpus;           /* target set */
        cpuset_t from;           /* value before, for the log */
        uint32_t value;          /* FLOW_CNT / SOCK_FLOW_ENTRIES / THREADED_NAPI */
        uint32_t from_value;
        bool layout;             /* IRQ_AFFINITY: a placement, not a load decision (starts no dwell) */
        char reason[256];
};

struct action_list {
        struct action *v;
        size_t n, allocated;
};

/* Appends a zero-initialised action (queue = -1) and returns it, or NULL on ENOMEM. */
struct action *action_list_add(struct action_list *l, enum action_type type);
void action_list_clear(struct action_list *l);
void action_list_free(struct action_list *l);
const char *action_type_to_string(enum action_type t);
/* The class of result r (an apply_action() result: >= 0 is no failure)
 * of an action of type t.  Pure. */
enum action_failure action_failure_class(enum action_type t, int r);
const char *action_failure_to_string(enum action_failure f);
/* Whether a failure of class f counts toward ACTION_MAX_FAILURES. */
bool action_failure_counts(enum action_failure f);
/* One line for logs/plan: "IRQ 73 (eth0 rx/tx 5) CPU3 -> CPU9: <reason>". */
int action_format(const struct action *a, char *buf, size_t len);
/* The action's fields as members of an open JSON object, as the journal
 * has them: "type" (ACTION=), "irq" (IRQ=, null unless an IRQ affinity),
 * "nic" (DEVICE=, or null), "queue" (QUEUE=, or null), "pid"/"tid" for a
 * thread, then "value"/"from_value" for a count or "cpus" (CPU_TO=) and
 * "from" (CPU_FROM=) as CPU arrays. */
struct json_writer;
void action_json_members(struct json_writer *w, const struct action *a);
