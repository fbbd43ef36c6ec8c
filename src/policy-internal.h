/* Shared between the policy files (policy.c: state, feedback, hot CPUs and
 * the load model; policy-irq.c: queue IRQ layout and moves, XPS;
 * policy-other.c: other devices' IRQs; policy-rps.c: RPS/RFS;
 * policy-workers.c: thread affinity).  Not a public interface. */
#pragma once

#include <stdarg.h>

#include "policy.h"
#include "util.h"

/* Share of a queue's receive softirq work that stays on the IRQ CPU (the
 * NAPI poll, GRO, and what RPS itself costs there: IPIs, backlog
 * enqueueing) when RPS steers the protocol work elsewhere.  Measured per
 * queue and per NIC where the host shows it (policy-share.c); until then
 * this prior, derived from the field case in DESIGN.md 1: a single-queue
 * NIC at 52.8% soft fell to 29% with RPS over all 4 CPUs; N + P = 0.528 and
 * N + P/4 = 0.29 give N = 0.21, P = 0.32, so N is about 40% of the receive
 * work.  Hosts differ: 20-80% in the simulator's scenarios. */
#define POL_NAPI_SHARE 0.4
/* A measured share is held within these bounds: a queue's interrupt and
 * NAPI work never vanishes, and RPS always moves something. */
#define POL_SHARE_MIN 0.05
#define POL_SHARE_MAX 0.95
/* Weight of a new measurement in the running estimate once there are a
 * few (the first ones average with the prior as if it were one). */
#define POL_SHARE_GAIN 0.25
/* A measurement needs this much receive work (share of a CPU) to see,
 * and CPUs below this irq+softirq load: a saturated CPU's load is capped
 * and says nothing about the split. */
#define POL_SHARE_EVIDENCE 0.05
#define POL_SHARE_SATURATED 0.95
/* Measurements before an estimate is reported in a note, and the change
 * from the last noted value that is noted again. */
#define POL_SHARE_NOTE_AFTER 3
#define POL_SHARE_NOTE_DELTA 0.10

/* A CPU whose raw irq+softirq share rose this much since the last policy
 * tick sets the fast pace (policy_pace): on the veth flood of bench/README.md
 * a flood that began 1 s before a 2 s tick showed as 16 points there, and
 * the next tick, a whole interval later, was the first to act (3.0 s). */
#define POL_PACE_RISE 0.10
/* ... or whose idle share fell that much while its irq+softirq share rose
 * at least this much: the onset of a flood whose cost is mostly its
 * receivers' (a pure user-load rise does not speed the pace). */
#define POL_PACE_NET_RISE 0.02

/* A queue IRQ counts as busy (worth a move) when it carries at least this
 * share of CPU time, or this fraction of its CPU's network load. */
#define POL_BUSY_ABS 0.05
#define POL_BUSY_FRAC 0.10
/* A queue is a "lone hot queue" when it carries more than this fraction of
 * its hot CPU's network load (the "most" of DESIGN.md 5). */
#define POL_LONE_FRAC 0.5

/* The layout by load takes CPU loads within this of each other as equal:
 * one sample's noise (+-10% of a queue in the simulator's noisy scenario)
 * must not send queues to SMT siblings before their cores. */
#define POL_LAYOUT_TIE 0.02
/* The second look at a start-up layout waits this many samples for one
 * that sees the NIC's interrupts; a NIC without traffic by then is left to
 * the rebalancing and its hysteresis. */
#define POL_RELAYOUT_SAMPLES 3

/* NICs without queue IRQs (veth: the receive work runs as NET_RX on the
 * sending CPU).  RPS is considered from POL_IRQLESS_PPS received packets/s:
 * at a few microseconds a packet that is under 1% of a CPU, too little to
 * explain a hot CPU.  It is given back once the rate stays below
 * POL_IRQLESS_PPS_EXIT, half of it (the hysteresis band), for hot_samples
 * samples after the dwell. */
#define POL_IRQLESS_PPS 1000.0
#define POL_IRQLESS_PPS_EXIT 500.0
/* RPS for such a NIC is a trial: its receive throughput (bytes, packets
 * without a byte counter) over POL_TRIAL_TICKS intervals with RPS, after
 * the first (the flows moving), is held against the last interval's rate
 * before (not the average: a stream that just started is still ramping).
 * Spreading costs an IPI per remote backlog batch and the packet's cache
 * lines on another CPU; where that is dear (a VM: each IPI is a VM exit) a
 * TCP stream on this repository's 2-vCPU VM got 0-44% less through with
 * RPS, depending on the minute.  A fall of more than POL_TRIAL_LOSS gives
 * the original masks back and keeps RPS off for POL_TRIAL_BACKOFF_USEC,
 * doubling after each failed trial up to POL_TRIAL_BACKOFF_MAX_USEC. */
#define POL_TRIAL_TICKS 3
#define POL_TRIAL_LOSS 0.05
/* A fall this large fails the trial at the first counted sample: no need
 * to average it out (a TCP stream here lost 44% with RPS). */
#define POL_TRIAL_LOSS_FAST 0.20
#define POL_TRIAL_BACKOFF_USEC (600ULL * 1000000ULL)
#define POL_TRIAL_BACKOFF_MAX_USEC (3600ULL * 1000000ULL)

#define POL_MOVE_WINDOW_USEC (600ULL * 1000000ULL)

struct pol_irq {
        unsigned irq;
        char nic[IF_NAMESIZE];   /* NIC it belongs to, for policy_forget_nic() */
        bool seen;               /* present in this tick's inventory */
        bool set;                /* last_set holds a value we wrote (confirmed) */
        cpuset_t last_set;
        bool primary;            /* the queue's first IRQ: its placements count as moves */
        bool managed;            /* EIO/EPERM: kernel-managed, never again */
        bool external;           /* changed behind our back: left alone until reset */
        bool resync;             /* its NIC was reset: a changed value is the driver's, not an admin's */
        unsigned failures;
        cpuset_t enospc;         /* CPUs whose vector space is full for this IRQ */
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
        cpuset_t rps_orig;
        uint32_t flow_orig;
        bool rps_set;            /* rps_last confirmed written by us */
        cpuset_t rps_last;
        bool rps_static;         /* single-queue RPS from the start: not narrowed */
        bool rps_unmeasured;     /* ... chosen before any load was measured: chosen again once it is */
        bool rps_prior;          /* lone hot queue's set sized with the prior share: sized again,
                                  * with its NIC's other such queues, once the share is measured */
        uint64_t rps_change_usec;
        unsigned narrow_ticks;   /* consecutive ticks the work fit on fewer CPUs */
        bool rps_external, rps_broken;
        bool rps_kept;           /* set before irqsteerd started, takeover off: left as it is */
        bool flow_set;
        uint32_t flow_last;
        bool flow_external, flow_broken;
        bool xps_set;
        cpuset_t xps_last;
        bool xps_orig_known;     /* xps_orig: the mask before we ever touched it */
        cpuset_t xps_orig;
        bool xps_external, xps_broken;
        bool resync;             /* its NIC was reset: see pol_irq.resync */
        unsigned failures;
        /* measured share of its receive work that stays on the IRQ CPU
         * under RPS (policy-share.c), when its RPS CPUs show its work alone */
        double keep;
        unsigned keep_n;         /* measurements in it, 0: the NIC's or the prior */
};

/* A trial of something switched on for a NIC (RPS for a NIC without queue
 * IRQs, threaded NAPI): its receive throughput with it against the rate
 * before (pol_trial_start, pol_trial_sample). */
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
        bool start_known;        /* start: where its layout begins in its node's CPU order, */
        int start;               /* kept so a re-layout after a driver reset is the same */
        bool noted_no_cpu;
        /* receive rate from the inventory's packet counters between ticks */
        bool stats_known;        /* rx_prev/stats_usec hold the last tick's reading */
        uint64_t rx_prev, tx_prev;
        uint64_t stats_usec;
        bool rate_known;         /* rx_pps/tx_pps hold an average */
        double rx_pps, tx_pps;   /* smoothed (config smoothing), packets/s */
        bool bytes_known;        /* rxb_prev holds the last tick's rx_bytes */
        uint64_t rxb_prev;
        bool bps_known;          /* rx_bps_last holds the last interval's bytes/s */
        double rx_bps_last, rx_pps_last; /* the last interval's rates, unsmoothed */
        /* NIC without queue IRQs whose RPS we steer */
        double cost;             /* share of a CPU per received packet/s, from when RPS started */
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
        /* measured share of the receive work that stays on the IRQ CPUs
         * under RPS, over its queues (policy-share.c) */
        double keep;
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

struct pol_cpu {
        unsigned above;          /* consecutive samples over the enter threshold */
        bool hot;
        bool saturated;
        uint64_t settle_until;   /* an action changed its load: the average has to catch up */
        bool fast;               /* this tick: hot at once on the raw sample (update_hot) */
        double raw_load;         /* this tick: the raw irq+softirq share, when fast */
        uint64_t hot_since;      /* hot: when it turned hot or last had an action (fill_report) */
        char why[160];           /* this tick: why a hot CPU got no action ("" when it did) */
};

struct pol_cursor {
        int node;
        int pos;
};

/* Open addressing over record positions (slot = position + 1, 0 empty),
 * at most half full.  The record arrays stay in insertion order with
 * swap-removal; a removal marks the index stale and the next lookup
 * rebuilds it.  ~900 lookups a full tick over ~320 IRQ and 256 queue
 * records of 1-4 KB each on the 256-CPU host: a linear search there took
 * a full tick from 2.67 to 2.78 ms of CPU, and it grows with the square
 * of the records where this stays flat. */
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
        bool defaff_orig_known;  /* defaff_orig: the value before we touched it (or the
                                  * administrator's, after a reload) */
        cpuset_t defaff_orig;
        bool defaff_set;         /* defaff_last confirmed written by us */
        cpuset_t defaff_last;
        bool defaff_external, defaff_broken;
        uint64_t min_dwell_usec, max_dwell_usec; /* from the last tick's config, for feedback */
        bool oom;                /* an allocation failed where we could not return it */
};

/* One queue: its rx and tx IRQ (or its one combined IRQ), moved together. */
struct pol_unit {
        size_t nic;              /* index into the tick's nics (= inv->nics) */
        size_t qi;               /* index into nic->queues */
        int queue;               /* queue index */
        unsigned irq[2];         /* rx (or combined) first */
        const struct sample_irq *si[2]; /* their rates this tick, NULL unknown or invalid */
        int n_irq;
        int cpu;                 /* where it fires now, -1 unknown */
        int irq_cpu[2];          /* where each of its IRQs fires, -1 unknown */
        int target;              /* where it fires after this tick's actions */
        double rate;             /* interrupts/s of its IRQs, all CPUs */
        /* Packets/s of the queue each IRQ serves, from the kernel's
         * per-queue counters (netdev qstats; rx+tx of a combined IRQ); -1
         * unknown.  Where known, they split a CPU's network work among
         * its queues instead of the interrupt rates. */
        double pps[2];
        double work;             /* estimated irq+softirq share on its IRQ CPU */
        double total;            /* estimated receive work, with what RPS steers elsewhere */
        double tx;               /* part of total on a separate tx IRQ: RPS does not steer it */
        double keep;             /* share of the receive work that stays on the IRQ CPU
                                  * under RPS: measured (pol_share_keep), else
                                  * POL_NAPI_SHARE; 0 for a NIC without queue IRQs,
                                  * whose receive runs wholly where RPS sends it */
        bool irqless;               /* a whole NIC without queue IRQs (qi: its first rx queue) */
        bool rps_on;             /* a non-empty rps_cpus other than its own CPU */
        cpuset_t rps;            /* current rps_cpus */
        int n_rps;               /* CPUs in rps (asked in every load estimate) */
        bool rps_ours;           /* we steer its RPS (after this tick's actions) */
        bool fixed;              /* managed, changed behind us, failing, or NIC not managed */
        bool replace;            /* its CPU went offline: the kernel moved it */
        int offline_cpu;
        bool touched;            /* an action of this tick concerns it */
        bool rps_no_gain;        /* pol_rps_start(): RPS would not lower the peak by min_gain */
};

/* An IRQ of another device (pol_other_irqs): this tick's view of it. */
struct pol_other {
        const struct inventory_irq *ii;
        struct pol_irq *r;       /* its record, NULL until we first act on it */
        const struct sample_irq *si; /* its rates, NULL unknown */
        int node;                /* its NUMA node, -1 unknown (all nodes local) */
        int cpu;                 /* the one online CPU of its mask, -1 when several */
        double rate;             /* interrupts/s, smoothed */
        double work;             /* estimated irq+softirq share it explains */
        bool busy;               /* rate >= POL_OTHER_RATE: a CPU of its own */
        bool ineligible;         /* its mask has CPUs that may not be used */
        bool stranded;           /* every CPU of its mask is offline */
        bool touched;            /* an action of this tick concerns it */
};

struct pol_nicctx {
        const struct inventory_nic *nic;
        struct pol_nic *rec;
        bool managed;            /* manage=yes */
        cpuset_t cpus;           /* NUMA-local eligible CPUs the interface section allows */
        cpuset_t allowed;        /* all eligible CPUs the interface section allows */
        bool rps, rfs, xps;
        bool takeover;           /* RPS masks found set at the start are ours to change */
        size_t first_unit, n_units;
};

struct pol_tick {
        struct policy_state *st;
        const struct policy_input *in;
        const struct config *c;
        const struct topology *topo;
        const struct inventory *inv;
        struct action_list *out;
        struct policy_report *rep;
        uint64_t now;
        int max_cpu;
        cpuset_t eligible;
        cpuset_t hot;
        double *load;            /* per CPU irq+softirq, projected as actions are planned */
        double *idle;
        double *net;             /* per CPU network share (irq + NET part of softirq) */
        struct pol_unit *units;
        size_t n_units, a_units;
        struct pol_unit *irqless;   /* NICs without queue IRQs, one unit each */
        size_t n_irqless, a_irqless;
        struct pol_nicctx *nics; /* one per inv->nics entry */
        struct pol_other *others; /* IRQs of other devices we may place */
        size_t n_others, a_others;
        double scale;            /* this tick's thresholds: the config's times scale (update_hot) */
        double mean;             /* mean irq+softirq load of the eligible CPUs */
        bool pool_short;         /* the cool CPUs cannot take the hot queues' protocol work alone */
        struct pol_unit **lone;  /* pol_rebalance: lone hot queues to get RPS together, */
        int *lone_cpu;           /* their hot IRQ CPUs */
        size_t n_lone;
        unsigned moves;          /* rebalancing moves planned this tick */
        cpuset_t touched;        /* CPUs whose load an action of this tick changed */
        cpuset_t settling;       /* CPUs an earlier tick's action changed, not yet caught up */
        int r;                   /* first error (-ENOMEM) */
};

/* policy.c */
/* This tick's thresholds: hot_enter, hot_exit, the narrowing limit and
 * min_gain, scaled down together while the host is unbalanced (update_hot). */
double pol_enter(const struct pol_tick *t);
double pol_exit(const struct pol_tick *t);
double pol_narrow(const struct pol_tick *t);
double pol_min_gain(const struct pol_tick *t);
/* The level RPS sets are sized to: hot_exit (scaled), and nearer the mean
 * while the host is unbalanced. */
double pol_level(const struct pol_tick *t);
/* The highest projected load a new RPS set may leave on its CPUs. */
double pol_accept(const struct pol_tick *t);
void pol_note(struct pol_tick *t, int level, const char *fmt, ...) _printf_(3, 4);
/* Marks the note just added as being about an object, for the journal's
 * IRQ=, DEVICE= and QUEUE= fields (device NULL or "", queue -1: none). */
void pol_note_about(struct pol_tick *t, enum policy_note_kind kind, unsigned irq, const char *device, int queue);
struct pol_irq *pol_irq_get(struct policy_state *st, unsigned irq, bool create);
struct pol_queue *pol_queue_get(struct policy_state *st, const char *nic, int index, bool create);
/* Marks the IRQ / queue index stale after removing records directly. */
void pol_index_forget(struct pol_index *ix);
struct pol_thread *pol_thread_get(struct policy_state *st, pid_t pid, pid_t tid, bool create);
double pol_load(const struct pol_tick *t, int cpu);
bool pol_settling(const struct pol_tick *t, int cpu);
void pol_settle(struct pol_tick *t, int cpu);
struct action *pol_add(struct pol_tick *t, enum knob_kind type);
/* The queue's rps_cpus is what we set, not its original value. */
bool pol_rps_ours(struct policy_state *st, const struct inventory_nic *n, const struct inventory_queue *iq);
/* An action on queue `queue` of NIC `nic` (RPS, XPS, rps_flow_cnt). */
struct action *pol_add_queue(struct pol_tick *t, enum knob_kind type, const char *nic, int queue);
/* "4-7" / "3", for reasons. */
const char *pol_fmt_cpus(const cpuset_t *s, char *buf, size_t len);

/* Starts trial tr of what was just switched on for NIC rec: against the
 * last interval's rate (not the average: a stream that just started is
 * still ramping), in bytes where rec counts them. */
void pol_trial_start(struct pol_trial *tr, const struct pol_nic *rec);
/* What a trial's sample says (pol_trial_sample). */
enum pol_trial_step {
        POL_TRIAL_IDLE,          /* none running */
        POL_TRIAL_RUNNING,       /* no verdict yet: nothing else changes the object meanwhile */
        POL_TRIAL_PASSED,        /* throughput held: kept */
        POL_TRIAL_FAILED,        /* throughput fell: give it back; no new start for tr->backoff_usec */
        POL_TRIAL_NONE,          /* no verdict (counters gone or restarted, trials off): kept */
};
/* One sample of trial tr on NIC rec; enabled: trials are on.  A verdict
 * (PASSED, FAILED, NONE) ends the trial and is counted in
 * verdicts[POLICY_TRIAL_*]; *ret_after: the rate with it, for a verdict
 * that compared. */
enum pol_trial_step pol_trial_sample(struct pol_trial *tr, const struct pol_nic *rec, bool enabled, uint64_t now,
                                     unsigned *verdicts, double *ret_after);

/* The hot CPUs, hottest first (insertion by load), at most max of them;
 * returns how many. */
#define POL_HOT_ORDER_MAX (CPUSET_MAX > 1024 ? 1024 : CPUSET_MAX)
size_t pol_hot_by_load(const struct pol_tick *t, int *order, size_t max);

/* policy-irq.c */
void pol_layout(struct pol_tick *t);
void pol_replace_offline(struct pol_tick *t);
void pol_rebalance(struct pol_tick *t);
void pol_xps(struct pol_tick *t);

/* policy-other.c */
/* IRQs that are no NIC queue's (other devices', a NIC's admin vector), with
 * other_irqs = yes and not in ban_irqs: a quiet one onto its node's
 * eligible CPUs unless within them already; a busy one (by its interrupt
 * rate) onto the least loaded of them alone.  Off CPUs that are not
 * eligible at once; external changes and managed IRQs left alone. */
void pol_other_irqs(struct pol_tick *t);
/* The report's IRQ classes and kernel-managed IRQ numbers.  0 or -ENOMEM. */
int pol_irq_classes(struct pol_tick *t);
/* Busy IRQs of other devices leave hot CPUs with the queue IRQs'
 * hysteresis (min_gain, dwell and back-off, max_moves). */
void pol_rebalance_other(struct pol_tick *t);
/* default_smp_affinity (the mask new IRQs get) without the CPUs that are
 * not eligible while there are such CPUs, its value before back once
 * there are none (or other_irqs = no); left alone when changed behind us. */
void pol_default_affinity(struct pol_tick *t);

/* policy-rps.c */
bool pol_rps_start(struct pol_tick *t, struct pol_unit *u, int cpu, bool single_queue);
/* RPS for this tick's lone hot queues us[i] on their IRQ CPUs cpus[i]:
 * together once their receive share is measured, else one by one and
 * together again once it is (pol_rps_adjust); ret_ok[i]: the queue's RPS
 * is ours now. */
void pol_rps_start_lone(struct pol_tick *t, struct pol_unit **us, const int *cpus, size_t n, bool *ret_ok);
void pol_rps_adjust(struct pol_tick *t);
/* Sets t->pool_short for this tick's lone hot queues. */
void pol_rps_pool(struct pol_tick *t);
/* RFS for queue qi of NIC nic (an index into the tick's nics). */
void pol_rfs(struct pol_tick *t, size_t nic, size_t qi);
/* NICs without queue IRQs (veth): units for those we may steer, then RPS
 * away from hot CPUs their receive load explains. */
int pol_soft_build(struct pol_tick *t);
void pol_soft(struct pol_tick *t);
/* Our RPS, flow counts and XPS back to the originals where the
 * configuration no longer allows them (a reload with rps, rfs or xps = no,
 * or manage = no). */
void pol_unwanted(struct pol_tick *t);
/* Our RPS sets lose the CPUs that are no longer eligible for their NIC (a
 * ban, at run time or by a reload), this tick, without hysteresis. */
void pol_vacate_rps(struct pol_tick *t);

/* policy-share.c */
/* The share of a queue's receive work that stays on its IRQ CPU under
 * RPS: the queue's measurement (q may be NULL), else its NIC's (n may be
 * NULL), else POL_NAPI_SHARE. */
double pol_share_keep(const struct pol_nic *n, const struct pol_queue *q);
/* Measures that share where this tick's loads show it (the units' work
 * from estimate()): RPS CPUs that carry one NIC's steered work and nothing
 * else against what stays on IRQ CPUs that serve one queue alone.  Updates
 * the queue and NIC records for the next tick; notes a NIC's estimate
 * once it stands and again when it moves. */
void pol_share_measure(struct pol_tick *t);

/* policy-workers.c */
void pol_workers(struct pol_tick *t);

/* policy-napi.c */
/* NAPI kthreads of managed NICs (napi_threads = yes) onto their queue
 * IRQ's CPU, or spread over the coolest eligible CPUs and off hot ones. */
void pol_napi(struct pol_tick *t);
/* policy_feedback() for a thread action on a NAPI kthread we place: false
 * when the action is not about one. */
bool pol_napi_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec);
/* policy_feedback() for KNOB_THREADED. */
void pol_threaded_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec);
