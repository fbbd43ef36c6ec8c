/* Policy records, the bottom layer: what the policy remembers between
 * ticks about each object it touched, and the lookups. */
#pragma once

#include <stdarg.h>

#include "policy.h"
#include "util.h"

struct pol_irq {
        unsigned irq;
        char nic[IF_NAMESIZE];   /* NIC it belongs to, for policy_forget_nic() */
        bool seen;               /* present in this tick's inventory */
        bool set;                /* last_set holds a value we wrote (confirmed) */
        cpuset_kept_t last_set;
        bool primary;            /* the queue's first IRQ: its placements count as moves */
        bool managed;            /* EIO/EPERM: kernel-managed, never again */
        bool external;           /* changed behind our back: left alone for external_hold */
        uint64_t external_usec;  /* when the change was seen */
        bool resync;             /* its NIC was reset: a changed value is the driver's, not an admin's */
        unsigned failures;
        cpuset_kept_t enospc;    /* CPUs whose vector space is full for this IRQ */
        bool noted_no_vector;    /* POLICY_NOTE_NO_VECTOR said, until it is placed */
        bool moved;              /* last_move/prev_cpu are meaningful */
        uint64_t last_move_usec;
        uint64_t dwell_usec;     /* current dwell: min_dwell, doubled on bounces */
        int prev_cpu;            /* the CPU it left at its last move, -1 */
};

struct pol_queue {
        char nic[IF_NAMESIZE];
        int index;
        bool seen;
        bool orig_known;         /* rps_orig, flow_orig: the values before we ever touched them */
        cpuset_kept_t rps_orig;
        uint32_t flow_orig;
        bool rps_set;            /* rps_last confirmed written by us */
        cpuset_kept_t rps_last;
        bool rps_static;         /* single-queue RPS from the start: not narrowed */
        bool rps_unmeasured;     /* ... chosen before any load was measured: chosen again once it is */
        bool rps_prior;          /* sized with the prior share: sized again once it is measured */
        uint64_t rps_change_usec;
        unsigned narrow_ticks;   /* consecutive ticks the work fit on fewer CPUs */
        bool rps_external, rps_broken;
        uint64_t rps_external_usec; /* when each external change was seen */
        uint64_t xps_external_usec, flow_external_usec;
        bool rps_kept;           /* set before irqsteerd started, takeover off: left as it is */
        bool flow_set;
        uint32_t flow_last;
        bool flow_external, flow_broken;
        bool xps_set;
        cpuset_kept_t xps_last;
        bool xps_orig_known;     /* xps_orig: the mask before we ever touched it */
        cpuset_kept_t xps_orig;
        bool xps_external, xps_broken;
        bool resync;             /* its NIC was reset: see pol_irq.resync */
        unsigned failures;
        double keep;             /* its receive work's share kept on the IRQ CPU (policy-share.c) */
        unsigned keep_n;         /* measurements in it, 0: the NIC's or the prior */
};

/* A trial of RPS or threaded NAPI on a NIC (pol_trial_start, pol_trial_sample). */
struct pol_trial {
        bool on;                 /* running */
        unsigned ticks;          /* samples since it started */
        bool bytes;              /* counting bytes, else packets */
        double base;             /* the rate (bytes or packets/s) of the interval before */
        uint64_t count0, usec0;  /* the counter and its time after the first sample */
        uint64_t block_until;    /* no new start before this (a failed trial) */
        uint64_t backoff_usec;   /* the last block's length, 0 after a passed trial */
};

struct pol_nic {
        char name[IF_NAMESIZE];
        bool seen;
        bool laid_out;           /* every queue IRQ confirmed where the layout put it */
        bool blind;              /* laid out before any load sample: looked at again with the first */
        unsigned blind_ticks;    /* samples since, none of which saw its interrupts */
        size_t n_queues;         /* queue count at layout: a change means the driver reset */
        bool start_known;
        int start;               /* its layout's first CPU in node order, kept across resets */
        bool noted_no_cpu;
        /* receive rate from the inventory's packet counters between ticks */
        bool stats_known;        /* rx_prev/stats_usec hold the last tick's reading */
        uint64_t rx_prev, tx_prev; /* tx: a counter that went back starts over */
        uint64_t stats_usec;
        bool rate_known;         /* rx_pps holds an average */
        double rx_pps;           /* smoothed (config smoothing), packets/s */
        bool bytes_known;        /* rxb_prev holds the last tick's rx_bytes */
        uint64_t rxb_prev;
        bool bps_known;          /* rx_bps_last holds the last interval's bytes/s */
        double rx_bps_last, rx_pps_last; /* the last interval's rates, unsmoothed */
        /* NIC without queue IRQs whose RPS we steer */
        double cost;             /* share of a CPU per received packet/s, from when RPS started */
        double event_work[2];    /* the most work per interrupt and per packet last measured (estimate()) */
        cpuset_t senders;        /* the hot CPUs its receive work ran on when RPS started */
        unsigned gone_ticks;     /* consecutive samples below POL_IRQLESS_PPS_EXIT */
        struct pol_trial rps_trial;      /* after RPS started */
        /* threaded NAPI switched on as a relief (policy-napi.c) */
        bool thr_ours;           /* threaded holds what we wrote, not thr_orig */
        int thr_orig;            /* its value before we first wrote it */
        bool thr_broken;         /* the write failed for good: left alone */
        uint64_t thr_change_usec;
        unsigned thr_gone_ticks;
        struct pol_trial thr_trial;
        double keep;             /* as pol_queue.keep, over its queues */
        unsigned keep_n;         /* measurements in it, 0: the prior */
        double keep_noted;       /* the value last said in a note, 0 none */
};

struct pol_thread {
        pid_t pid, tid;
        bool seen;
        bool set;
        cpuset_t last_set;
        bool external, broken;
        unsigned failures;
};

/* A threaded NAPI's kthread we place (policy-napi.c). */
struct pol_napi {
        pid_t pid;
        unsigned long long starttime; /* with pid, names the thread */
        bool seen;
        bool set;                /* cpu is confirmed written by us */
        int cpu;                 /* the one CPU we set, -1 none */
        uint64_t move_usec;      /* its last placement or move (dwell) */
        bool broken;             /* refused (EINVAL/EPERM) or failing: left alone */
        unsigned failures;
};

/* The levels that make a CPU hot (pol_cpu_enter), from the last policy
 * tick: the calm ticks between judge each CPU's smoothed load by them
 * (policy_observe), as the next policy tick would. */
struct pol_hot_levels {
        double enter;            /* hot_enter, scaled; 0 before the first tick */
        double least;            /* a steady load's least: min_gain and balance_floor over the mean */
        double accept;           /* the level RPS sets are accepted at (pol_accept) */
        bool steady;             /* under hot_enter (scaled): a steady load's level may be lower */
};

struct pol_cpu {
        unsigned above;          /* consecutive samples over the enter threshold */
        bool hot;
        bool saturated;
        uint64_t settle_until;   /* an action changed its load: the average has to catch up */
        uint64_t moved_usec;     /* the last tick that added to moved */
        double moved;            /* load actions moved onto or off it since it began settling
                                  * (pol_settle_by; HUGE_VAL unknown) */
        bool fast;               /* this tick: hot at once on the raw sample (update_hot) */
        double raw_load;         /* this tick: the raw irq+softirq share, when fast */
        uint64_t hot_since;      /* hot: when it turned hot or last had an action (fill_report) */
        char why[160];           /* this tick: why a hot CPU got no action ("" when it did) */
        /* the noise of its smoothed irq+softirq load (pol_noise_sample) */
        double noise_prev;       /* the last sample's load */
        double noise_var;        /* its variance, estimated from the changes between samples */
        unsigned noise_n;        /* samples in the estimate */
        unsigned noise_gap;      /* smoothing steps (ticks) since noise_prev */
        double level;            /* the mean of its samples since its load last changed */
        unsigned level_n;        /* those samples */
        int level_off;           /* samples in a row beyond the noise from it, + above, - below */
        bool level_unjudged;     /* the level changed (a step) and no policy tick judged it steady since */
        double noise_held;       /* the sum of their variance terms: noise only if the level holds */
        unsigned noise_held_n;   /* those terms */
        uint64_t gain_short;     /* hot, and no queue IRQ move gained min_gain at this level since (pol_gain_need), 0 none */
        uint64_t steady_short;   /* a steady peak (or lone hot queue) whose RPS gained under its least gain at this level since, 0 none */
};

struct pol_cursor {
        int node;
        int pos;
};

/* Open addressing over record positions (slot = position + 1, 0 empty),
 * at most half full; a removal marks it stale for the next lookup to
 * rebuild.  A tick looks up every record: linear searches cost n squared. */
struct pol_index {
        uint32_t *slot;
        size_t cap;              /* power of two, 0 before the first insert */
        bool stale;
};

struct policy_state {
        struct pol_cpu *cpus;
        size_t n_cpus, a_cpus;
        struct pol_irq *irqs;
        size_t n_irqs, a_irqs;
        struct pol_index irq_index;
        struct pol_queue *queues;
        size_t n_queues, a_queues;
        struct pol_index queue_index;
        struct pol_nic *nics;
        size_t n_nics, a_nics;
        struct pol_thread *threads;
        size_t n_threads, a_threads;
        struct pol_napi *napis;
        size_t n_napis, a_napis;
        struct pol_cursor *cursors;
        size_t n_cursors, a_cursors;
        uint64_t *moves;         /* times of confirmed placements, oldest first */
        size_t n_moves, a_moves;
        struct policy_note *notes; /* said by feedback, handed out with the next report */
        size_t n_notes, a_notes;
        bool sock_flow_done;
        /* proc/irq/default_smp_affinity */
        bool defaff_orig_known;  /* defaff_orig: the value before us, or the admin's after a reload */
        cpuset_t defaff_orig;
        bool defaff_set;         /* defaff_last confirmed written by us */
        cpuset_t defaff_last;
        bool defaff_external, defaff_broken;
        uint64_t defaff_external_usec; /* when the change was seen */
        uint64_t min_dwell_usec, max_dwell_usec; /* from the last tick's config, for feedback */
        struct pol_hot_levels levels; /* the last tick's (update_hot) */
        unsigned n_at_level;     /* CPUs not hot at their hot level in the last calm tick's sample */
        unsigned n_level_new;    /* CPUs whose changed level turned steady in the last calm tick's sample */
        bool oom;                /* an allocation failed where we could not return it */
        /* the steady re-layout (pol_replan) */
        unsigned plan_above;     /* consecutive decisions whose plan gained min_gain */
        uint64_t plan_usec;      /* when the last plan was taken, 0 never */
};

/* A record, created zeroed when create; NULL when none or on ENOMEM. */
struct pol_irq *pol_irq_get(struct policy_state *st, unsigned irq, bool create);
struct pol_queue *pol_queue_get(struct policy_state *st, const char *nic, int index, bool create);
struct pol_thread *pol_thread_get(struct policy_state *st, pid_t pid, pid_t tid, bool create);
struct pol_nic *pol_nic_get(struct policy_state *st, const char *name, bool create);
struct pol_napi *pol_napi_get(struct policy_state *st, pid_t pid, unsigned long long starttime, bool create);
/* Drops a record with what it owns; the last record takes its place. */
void pol_irq_drop(struct policy_state *st, struct pol_irq *r);
void pol_queue_drop(struct policy_state *st, struct pol_queue *q);
/* The queue's rps_cpus is what we set, not its original value. */
bool pol_rps_ours(struct policy_state *st, const struct inventory_nic *n, const struct inventory_queue *iq);
