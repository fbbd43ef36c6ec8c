/* Actions: what the policy decides and the actuators carry out.  Each
 * carries a reason code, set where the decision is made, and the prose for
 * the log built beside it. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "knob.h"

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

/* Why an action was decided.  The code is the metrics' `reason` label and
 * the journal's REASON= field; match it, never the prose.  Stable names
 * (action_reason_to_string):
 *   initial_layout    a queue IRQ's first placement (also by load)
 *   cpu_offline       its CPU went offline
 *   cpu_hot           off a CPU above hot_enter
 *   cpu_saturated     off a CPU with no idle left
 *   cpu_banned        off CPUs that may not be used (banned, isolated,
 *                     nohz_full, no longer eligible)
 *   xps_follows_rx    XPS onto the rx IRQ's CPU
 *   single_queue_rps  RPS for a NIC with one queue
 *   lone_hot_queue    RPS for a queue too heavy for one CPU
 *   softirq_hot       network load not from queue IRQs: RPS or threaded
 *                     NAPI for a NIC without them
 *   rps_widened       RPS onto more CPUs
 *   rps_narrowed      RPS onto fewer CPUs
 *   rps_not_needed    RPS back to the original, the load gone
 *   rps_trial_failed  RPS cost throughput: back to the original
 *   back_to_original  a knob back to its value before irqsteerd (config)
 *   rfs               RFS flow tables sized
 *   worker_spread     a worker thread, one CPU per thread
 *   worker_colocate   a worker thread onto its queue's CPU
 *   worker_avoid_net  a worker thread off the queue IRQs' CPUs
 *   layout_by_load    queue IRQs laid out again by their load
 *   rps_off_hot       RPS steering work off a hot CPU
 *   rps_resized       RPS sets planned again with the measured share
 *   irq_numa_local    another IRQ onto its node's CPUs
 *   irq_busy          a busy other IRQ onto the least loaded local CPU
 *   napi_thread       a NAPI kthread placed
 *   napi_trial_failed threaded NAPI cost throughput: off again
 *   napi_not_needed   threaded NAPI back, the load gone
 *   cpus_eligible     default_smp_affinity back, every CPU usable again
 *   other             anything else */
enum action_reason {
        ACTION_REASON_INITIAL_LAYOUT,
        ACTION_REASON_CPU_OFFLINE,
        ACTION_REASON_CPU_HOT,
        ACTION_REASON_CPU_SATURATED,
        ACTION_REASON_CPU_BANNED,
        ACTION_REASON_XPS_FOLLOWS_RX,
        ACTION_REASON_SINGLE_QUEUE_RPS,
        ACTION_REASON_LONE_HOT_QUEUE,
        ACTION_REASON_SOFTIRQ_HOT,
        ACTION_REASON_RPS_WIDENED,
        ACTION_REASON_RPS_NARROWED,
        ACTION_REASON_RPS_NOT_NEEDED,
        ACTION_REASON_RPS_TRIAL_FAILED,
        ACTION_REASON_BACK_TO_ORIGINAL,
        ACTION_REASON_RFS,
        ACTION_REASON_WORKER_SPREAD,
        ACTION_REASON_WORKER_COLOCATE,
        ACTION_REASON_WORKER_AVOID_NET,
        ACTION_REASON_LAYOUT_BY_LOAD,
        ACTION_REASON_RPS_OFF_HOT,
        ACTION_REASON_RPS_RESIZED,
        ACTION_REASON_IRQ_NUMA_LOCAL,
        ACTION_REASON_IRQ_BUSY,
        ACTION_REASON_NAPI_THREAD,
        ACTION_REASON_NAPI_TRIAL_FAILED,
        ACTION_REASON_NAPI_NOT_NEEDED,
        ACTION_REASON_CPUS_ELIGIBLE,
        ACTION_REASON_OTHER,
        ACTION_REASON_MAX,
        ACTION_REASON_INVALID = -1,
};

struct action {
        enum knob_kind type;
        unsigned irq;            /* KNOB_IRQ */
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
        enum action_reason why;  /* the code; reason is its prose */
        char reason[256];
};

struct action_list {
        struct action *v;
        size_t n, allocated;
};

/* Appends a zero-initialised action (queue = -1) and returns it, or NULL on ENOMEM. */
struct action *action_list_add(struct action_list *l, enum knob_kind type);
void action_list_clear(struct action_list *l);
void action_list_free(struct action_list *l);
const char *action_type_to_string(enum knob_kind t);
/* "cpu_banned", ...; NULL for a code out of range. */
const char *action_reason_to_string(enum action_reason r);
/* Sets a's reason code and its prose (printf).  Returns a. */
struct action *action_set_reason(struct action *a, enum action_reason why, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The key of the object an action changes (pure: an IRQ's identity is
 * left empty, see knob_irq_actions).  0 or -EINVAL. */
int action_knob_key(const struct action *a, struct knob_key *ret);
/* The key of a's object formatted into buf (an IRQ without its identity,
 * a thread with its starttime), "?" when a names no object: the name the
 * engine's failure registry keeps.  Returns buf. */
const char *action_key_text(const struct action *a, char *buf, size_t len);
/* The value a asks for, in journal syntax (knob_target). */
int action_target(const struct action *a, const char *current, char **ret);
/* The class of result r (an apply_action() result: >= 0 is no failure)
 * of an action of type t.  Pure. */
enum action_failure action_failure_class(enum knob_kind t, int r);
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
