/* Actions: what the policy decides and the actuators carry out, each with a
 * reason code and the prose built beside it. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "knob.h"

/* What a failed action means, sorted by what to do next (after irqbalance's
 * activate.c); the policy's feedback and the daemon's log act on it. */
enum action_failure {
        ACTION_FAIL_NONE,        /* not a failure */
        ACTION_FAIL_PERMANENT,   /* refused for good (managed IRQ, read-only file, kernel
                                  * thread; action_failure_class()): never touched again */
        ACTION_FAIL_CAPACITY,    /* ENOSPC on an IRQ: vector space full: another CPU */
        ACTION_FAIL_GONE,        /* ENOENT, ESRCH, ENODEV, ENXIO: the object vanished: forgotten */
        ACTION_FAIL_TRANSIENT,   /* EBUSY, EAGAIN, EINTR: retried next tick, not counted */
        ACTION_FAIL_INVALID,     /* EINVAL, ERANGE, EOVERFLOW: bad or offline CPUs, counted */
        ACTION_FAIL_UNSUPPORTED, /* EOPNOTSUPP: thread actions below a fixture root, counted */
        ACTION_FAIL_OTHER,       /* anything else, counted */
        ACTION_FAILURE_MAX,
        ACTION_FAILURE_INVALID = -1,
};

/* Consecutive counted failures after which the policy gives an object up. */
#define ACTION_MAX_FAILURES 3

/* Why an action was decided: the metrics' `reason` label and REASON= (names
 * stable); match it, never the prose. */
#define ACTION_REASONS(X)                                                                                        \
        X(INITIAL_LAYOUT, "initial_layout")       /* a queue IRQ's first placement (also by load) */         \
        X(CPU_OFFLINE, "cpu_offline")             /* its CPU went offline */                                 \
        X(CPU_HOT, "cpu_hot")                     /* off a CPU above hot_enter */                            \
        X(CPU_SATURATED, "cpu_saturated")         /* off a CPU with no idle left */                          \
        X(CPU_BANNED, "cpu_banned")               /* off CPUs that may not be used (banned, isolated, ...) */ \
        X(XPS_FOLLOWS_RX, "xps_follows_rx")       /* XPS onto the rx IRQ's CPU */                            \
        X(SINGLE_QUEUE_RPS, "single_queue_rps")   /* RPS for a NIC with one queue */                         \
        X(LONE_HOT_QUEUE, "lone_hot_queue")       /* RPS for a queue too heavy for one CPU */                \
        X(SOFTIRQ_HOT, "softirq_hot")             /* load not from queue IRQs: RPS or threaded NAPI */       \
        X(RPS_WIDENED, "rps_widened")             /* RPS onto more CPUs */                                   \
        X(RPS_NARROWED, "rps_narrowed")           /* RPS onto fewer CPUs */                                  \
        X(RPS_NOT_NEEDED, "rps_not_needed")       /* RPS back to the original, the load gone */              \
        X(RPS_TRIAL_FAILED, "rps_trial_failed")   /* RPS cost throughput: back to the original */            \
        X(BACK_TO_ORIGINAL, "back_to_original")   /* a knob back to its value before (config off) */         \
        X(RFS, "rfs")                             /* RFS flow tables sized */                                \
        X(WORKER_SPREAD, "worker_spread")         /* a worker thread, one CPU per thread */                  \
        X(WORKER_COLOCATE, "worker_colocate")     /* a worker thread onto its queue's CPU */                 \
        X(WORKER_AVOID_NET, "worker_avoid_net")   /* a worker thread off the queue IRQs' CPUs */             \
        X(LAYOUT_BY_LOAD, "layout_by_load")       /* queue IRQs laid out again by their load */              \
        X(RPS_OFF_HOT, "rps_off_hot")             /* RPS steering work off a hot CPU */                      \
        X(RPS_RESIZED, "rps_resized")             /* RPS sets planned again with the measured share */       \
        X(IRQ_NUMA_LOCAL, "irq_numa_local")       /* another device's IRQ onto its node's CPUs */            \
        X(IRQ_BUSY, "irq_busy")                   /* a busy other IRQ onto the least loaded local CPU */     \
        X(NAPI_THREAD, "napi_thread")             /* a NAPI kthread placed */                                \
        X(NAPI_TRIAL_FAILED, "napi_trial_failed") /* threaded NAPI cost throughput: off again */             \
        X(NAPI_NOT_NEEDED, "napi_not_needed")     /* threaded NAPI back, the load gone */                    \
        X(CPUS_ELIGIBLE, "cpus_eligible")         /* default_smp_affinity back, every CPU usable again */    \
        X(EXTERNAL_CHANGE_EXPIRED, "external_change_expired") /* changed by someone else: taken back */       \
        X(QUEUE_GRANULARITY, "queue_granularity") /* RPS off CPUs with a queue more than others */     \
        X(STEADY_PEAK, "steady_peak")             /* RPS for a CPU whose level holds above the mean */ \
        X(OTHER, "other")

enum action_reason {
#define ACTION_REASON_ENUM(name, text) ACTION_REASON_##name,
        ACTION_REASONS(ACTION_REASON_ENUM)
#undef ACTION_REASON_ENUM
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
        unsigned long long starttime; /* THREAD_AFFINITY: a TID without it was reused */
        cpuset_kept_t cpus;      /* target set (action_set_cpus) */
        cpuset_kept_t from;      /* value before, for the log */
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
/* Sets a's target set and the value before (from may be NULL: empty).
 * -ENOMEM leaves both as they were. */
int action_set_cpus(struct action *a, const cpuset_t *to, const cpuset_t *from);
/* A copy of a in ret (its sets its own); -ENOMEM leaves ret without sets. */
int action_copy(struct action *ret, const struct action *a);
/* Frees what a owns (its sets), for an action outside a list. */
void action_done(struct action *a);
void action_list_free(struct action_list *l);
/* "cpu_banned", ...; NULL for a code out of range. */
const char *action_reason_to_string(enum action_reason r);
/* Whether kind t can have reason r: the pairs the metrics show at 0. */
bool action_reason_fits(enum knob_kind t, enum action_reason r);
/* Sets a's reason code and its prose (printf).  Returns a. */
struct action *action_set_reason(struct action *a, enum action_reason why, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The key of a's object (an IRQ's identity left empty).  0 or -EINVAL. */
int action_knob_key(const struct action *a, struct knob_key *ret);
/* That key as text ("?" for none), the failure registry's name.  Returns buf. */
const char *action_key_text(const struct action *a, char *buf, size_t len);
/* The value a asks for, in journal syntax (knob_target). */
int action_target(const struct action *a, const char *current, char **ret);
/* The class of apply_action() result r for an action of type t.  Pure. */
enum action_failure action_failure_class(enum knob_kind t, int r);
const char *action_failure_to_string(enum action_failure f);
/* Whether a failure of class f counts toward ACTION_MAX_FAILURES. */
bool action_failure_counts(enum action_failure f);
/* One line for logs/plan: "IRQ 73 (eth0 rx/tx 5) CPU3 -> CPU9: <reason>". */
int action_format(const struct action *a, char *buf, size_t len);
/* The action's fields as members of an open JSON object, named as the
 * journal's (irqsteerctl(8), STATUS JSON). */
struct json_writer;
void action_json_members(struct json_writer *w, const struct action *a);
