/* Policy: a pure function of topology, inventory, load, workers, config,
 * now and its own state to actions with reason codes (docs/DESIGN.md
 * "Policy"); no I/O, no clock, notes instead of logs.  The caller passes
 * each tick the current values (a differing one is an external change, held
 * for external_hold) and fresh packet counters (the NIC rates), and hands
 * every action's result to policy_feedback() before the next tick. */
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
        const struct vectors *vectors;    /* vector room per CPU; NULL: counted from inv */
        uint64_t now_usec;                /* CLOCK_MONOTONIC, given by the caller */
};

enum policy_note_kind {
        POLICY_NOTE_PLAIN,
        POLICY_NOTE_EXTERNAL,             /* an object changed behind our back, now held */
        POLICY_NOTE_NO_VECTOR,            /* an IRQ left where it is: no free vector elsewhere */
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
        char why[160];                    /* why this tick did nothing for it, "" when it acted */
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
        struct policy_pace_ref *ref;      /* each CPU's raw shares, where a rise is measured from */
        int ref_max_cpu;                  /* last index of ref, -1 when none */
        double enter;                     /* this tick's hot_enter, scaled (balance_ratio) */
        bool busy;                        /* actions, settling CPUs, a trial: decide every tick */
        bool measuring;                   /* waiting for the share's measurement or a dwell */
        bool releasing;                   /* an RPS set counts samples towards narrowing */
        uint64_t due_usec;                /* with measuring, when a hot CPU's wait ends, 0 none */
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

/* The pace from the last report (zeroed: none), what policy_observe() saw
 * since (st, may be NULL) and the newest raw interval (may be NULL): FAST
 * near hot, STEADY while busy or near saturated, else CALM.  Pure. */
enum policy_pace policy_pace(const struct config *c, const struct policy_state *st, const struct policy_report *last,
                             const struct sample_rates *raw);

/* A fresh state (nothing laid out, nothing remembered), or NULL on ENOMEM. */
struct policy_state *policy_state_new(void);
void policy_state_free(struct policy_state *st);

/* One decision round into *ret_actions (cleared) and *ret_report (zeroed or
 * an earlier one, freed).  0, -EINVAL on malformed input, -ENOMEM. */
int policy_tick(struct policy_state *st, const struct policy_input *in, struct action_list *ret_actions,
                struct policy_report *ret_report);

/* A tick the policy does not decide (a calm one): its smoothed load still
 * feeds each CPU's noise estimate, so that is known after as many ticks
 * on a calm host as on a busy one, and a CPU it puts at the level that
 * makes it hot makes policy_pace() fast.  Every tick's load goes to this
 * or to policy_tick(), once.  Pure: a few operations a CPU, no allocation. */
void policy_observe(struct policy_state *st, const struct config *c, const struct sample_rates *load,
                    uint64_t now_usec);

/* The actuator's result for a, by action_failure_class(): 0 remembers the
 * value; permanent, never again; capacity, another CPU; gone, forgotten;
 * transient, retried; ACTION_MAX_FAILURES in a row give up (noted). */
void policy_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec);
/* An RPS/XPS mask or flow count an earlier run set (its journal): a->from
 * the original, a->cpus the value now, taken as ours.  Others ignored. */
void policy_adopt(struct policy_state *st, const struct action *a, uint64_t now_usec);

/* The NIC's driver reset its affinities: laid out again, not external. */
void policy_forget_nic(struct policy_state *st, const char *nic);

/* Config reload: external changes and give-ups forgotten. */
void policy_reset(struct policy_state *st);

/* Frees the arrays of a report and zeroes it. */
void policy_report_free(struct policy_report *r);
