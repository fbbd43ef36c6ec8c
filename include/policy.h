/* Policy: a pure function of (topology, inventory = current placement,
 * smoothed load, discovered workers, config, now, previous policy state) to
 * a list of actions, each with a reason code and its prose (docs/DESIGN.md
 * "Policy").  No I/O, no clock reads, no logging above debug: what deserves
 * a log line is returned as a note in the report.
 *
 * Contract with the caller (the daemon):
 * - the inventory passed to each tick shows the current values (IRQ
 *   affinity, rps_cpus, xps_cpus, rps_flow_cnt): re-read, or patched after
 *   each successful write.  A value that differs from what we last set (as
 *   confirmed by policy_feedback() with 0) is an external change: it is noted
 *   once and the object is left alone for external_hold (at once taken back
 *   when it uses a CPU that may not be used), or until policy_reset();
 * - every action handed to the actuators comes back through
 *   policy_feedback() with the actuator's result before the next tick;
 * - load is the smoothed rates (sample_smooth), NULL before the first
 *   interval;
 * - the inventory's packet counters (inventory_nic.rx_packets, tx_packets and
 *   rx_bytes) are read afresh each tick: the policy keeps the previous
 *   counts and now_usec and derives each NIC's packet rate from them, which
 *   is what shows the receive load of NICs without queue IRQs (veth), whose
 *   RPS it steers, and whether that RPS costs throughput (its trial). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "action.h"
#include "classify.h"
#include "config.h"
#include "cpuset.h"
#include "inventory.h"
#include "sample.h"
#include "topology.h"
#include "vectors.h"
#include "workers.h"

struct policy_state;

struct policy_input {
        const struct config *config;
        const struct topology *topo;
        const struct inventory *inv;
        const struct sample_rates *load;  /* smoothed; NULL on the first tick before any interval */
        const struct sample_rates *raw;   /* the newest interval unsmoothed (fast attack); may be NULL */
        const struct worker_set *workers; /* may be NULL */
        const cpuset_t *bans;             /* runtime bans (bans.h) on top of banned_cpus; may be NULL */
        const struct vectors *vectors;    /* IRQs per CPU and what each CPU takes (limits lowered by
                                           * ENOSPC); NULL: counted from inv at VECTORS_PER_CPU */
        uint64_t now_usec;                /* CLOCK_MONOTONIC, given by the caller */
};

enum policy_note_kind {
        POLICY_NOTE_PLAIN,
        POLICY_NOTE_EXTERNAL,             /* an object changed behind our back, now held */
        POLICY_NOTE_NO_VECTOR,            /* an IRQ left where it is: no CPU it may go to has a
                                           * free vector */
        POLICY_NOTE_KIND_MAX,
};

struct policy_note {
        int level;                        /* LOG_INFO, LOG_NOTICE, LOG_WARNING, ... */
        char text[256];
        enum policy_note_kind kind;
        unsigned irq;                     /* the IRQ it is about, 0 if none */
        char device[32];                  /* the interface it is about, "" if none */
        int queue;                        /* its queue, -1 if none */
};

struct policy_hot_cpu {
        int cpu;
        double load;                      /* irq+softirq share, smoothed */
        double idle;
        bool saturated;                   /* hot by the saturated rule, not by hot_enter */
        char why[160];                    /* why this tick did nothing for it ("" when it
                                           * acted): no busy queue, dwell, min_gain, ... */
};

/* How an RPS trial (rps_trial in irqsteer.conf(5)) ended. */
enum policy_trial_verdict {
        POLICY_TRIAL_KEPT,                /* throughput held: RPS stays */
        POLICY_TRIAL_REVERTED,            /* RPS cost throughput: given back */
        POLICY_TRIAL_NO_VERDICT,          /* counters vanished or restarted, or trials turned off */
        POLICY_TRIAL_VERDICT_MAX,
        POLICY_TRIAL_VERDICT_INVALID = -1,
};

const char *policy_trial_verdict_to_string(enum policy_trial_verdict v);

/* A CPU's raw shares at the last policy tick (NaN: no sample). */
struct policy_pace_ref {
        double load; /* irq + softirq */
        double idle;
};

struct policy_report {
        cpuset_t hot;                     /* CPUs hot after this tick's samples */
        struct policy_hot_cpu *hot_cpus;  /* one entry per CPU in hot, ascending */
        size_t n_hot_cpus;
        struct policy_note *notes;        /* things worth a log line, each said once */
        size_t n_notes;
        unsigned n_queue_irqs;            /* queue IRQs under management */
        unsigned n_rps_queues;            /* rx queues whose RPS mask we steer */
        unsigned n_moves_10min;           /* IRQ placements confirmed in the last 10 minutes */
        unsigned n_managed_irqs;          /* kernel-managed IRQs we skip */
        unsigned n_external;              /* objects held: changed behind our back */
        unsigned rps_trials[POLICY_TRIAL_VERDICT_MAX]; /* trials that ended this tick */
        unsigned napi_trials[POLICY_TRIAL_VERDICT_MAX]; /* threaded NAPI's, the same */
        unsigned n_kept;                  /* RPS masks set before the start, kept (takeover = no) */
        unsigned n_irq_class[CLASSIFY_IRQ_CLASS_MAX]; /* the inventory's IRQs by class */
        unsigned *kernel_managed_irqs;    /* their numbers, ascending */
        size_t n_kernel_managed_irqs;
        /* for policy_pace(): */
        unsigned n_rising;                /* CPUs counting samples towards hot */
        struct policy_pace_ref *ref;      /* each CPU's raw shares at this tick, the levels a rise
                                           * is measured from */
        int ref_max_cpu;                  /* last index of ref, -1 when none */
        double enter;                     /* this tick's hot_enter, scaled (balance_ratio) */
        bool busy;                        /* an action, settling CPUs, an RPS trial: decide every
                                           * tick */
        bool measuring;                   /* RPS sets sized with the prior NAPI share wait for its
                                           * measurement and the dwell, or a CPU hot for less than
                                           * min_dwell waits for it: decide now and then */
        uint64_t due_usec;                /* with measuring, when a hot CPU's wait ends (0: none):
                                           * decide then */
};

/* How the daemon runs its next tick (irqsteer.conf(5), fast_interval). */
enum policy_pace {
        POLICY_PACE_CALM,                 /* nothing near a threshold: the policy need not run */
        POLICY_PACE_STEADY,               /* decide at the configured interval */
        POLICY_PACE_FAST,                 /* a CPU nears hot: sample at fast_interval */
        POLICY_PACE_MAX,
        POLICY_PACE_INVALID = -1,
};

const char *policy_pace_to_string(enum policy_pace p);

/* The pace from the last policy_tick()'s report (zeroed: none yet) and the
 * newest raw interval (NULL: none).  Pure.  FAST while a CPU counts
 * towards hot, or a CPU not hot shows in raw a load at the enter
 * threshold; STEADY while the report is busy or a CPU not hot shows in
 * raw what the saturated rule counts; CALM otherwise: every action comes
 * from a hot CPU, a layout or a change the daemon sees by itself. */
enum policy_pace policy_pace(const struct config *c, const struct policy_report *last, const struct sample_rates *raw);

/* A fresh state (nothing laid out, nothing remembered), or NULL on ENOMEM. */
struct policy_state *policy_state_new(void);
void policy_state_free(struct policy_state *st);

/* One decision round.  Clears *ret_actions and fills it (possibly empty);
 * *ret_report must be zero-initialised or a report from an earlier tick (its
 * old contents are freed).  Returns 0, -EINVAL on a malformed input, -ENOMEM. */
int policy_tick(struct policy_state *st, const struct policy_input *in, struct action_list *ret_actions,
                struct policy_report *ret_report);

/* The actuator's result for action a, acted on by its class
 * (action_failure_class): 0 remembers what we set (external-change
 * detection, dwell and back-off); permanent: never touched again (a
 * managed IRQ is counted as such); capacity: that CPU is full for that
 * IRQ, pick another; gone: forgotten; transient: retried next tick; the
 * rest counts, and ACTION_MAX_FAILURES in a row give the object up.  Says
 * nothing about the failure itself (the daemon does, once); only giving up
 * is noted. */
void policy_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec);
/* A queue's RPS or XPS mask or flow count that an earlier run changed (its
 * undo journal): a->from (from_value) is the original, a->cpus (value)
 * what it set and the queue holds now.  Taken as set by us, so such a mask
 * is never "kept" as an operator's (irqsteerctl plan beside the daemon).
 * Other action types are ignored. */
void policy_adopt(struct policy_state *st, const struct action *a, uint64_t now_usec);

/* The NIC went down/up or its queues changed: its driver reset the affinity,
 * so forget what we set on it and lay it out again next tick (not an
 * external change). */
void policy_forget_nic(struct policy_state *st, const char *nic);

/* Config reload: forget the "changed behind our back" and "managed" marks so
 * those objects are considered again. */
void policy_reset(struct policy_state *st);

/* Frees the arrays of a report and zeroes it. */
void policy_report_free(struct policy_report *r);
