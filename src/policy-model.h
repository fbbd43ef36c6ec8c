/* Policy model, above the records: this tick's view of the host (struct
 * pol_tick: hot CPUs, thresholds, the NICs' queues as units and their
 * estimated load, projected as actions are planned), the actions' and
 * notes' helpers, and the trials.  The steps (policy-steps.h) decide from
 * it; it calls no step. */
#pragma once

#include "policy-records.h"

/* Share of a queue's receive softirq work that stays on the IRQ CPU (the
 * NAPI poll, GRO, and what RPS itself costs there: IPIs, backlog
 * enqueueing) when RPS steers the protocol work elsewhere.  Measured per
 * queue and per NIC where the host shows it (policy-share.c); until then
 * this prior, derived from the single-queue field case of docs/DESIGN.md
 * "The problem".  Hosts differ widely (bench/README.md). */
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
 * tick sets the fast pace (policy_pace), so that a flood is acted on within
 * fast_interval, not a whole interval later (bench/README.md, veth flood). */
#define POL_PACE_RISE 0.10
/* ... or whose idle share fell that much while its irq+softirq share rose
 * at least this much: the onset of a flood whose cost is mostly its
 * receivers' (a pure user-load rise does not speed the pace). */
#define POL_PACE_NET_RISE 0.02

/* A queue IRQ counts as busy (worth a move) when it carries at least this
 * share of CPU time, or this fraction of its CPU's network load. */
#define POL_BUSY_ABS 0.05
#define POL_BUSY_FRAC 0.10

/* Work placed on another NUMA node than its NIC's costs this many times
 * its local cost: remote memory access is 30-50% slower (bench/README.md,
 * the simulator's remote_cost). */
#define POL_REMOTE_COST 1.3

/* The layout by load takes CPU loads within this of each other as equal:
 * one sample's noise must not send queues to SMT siblings before their
 * cores. */
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
 * lines on another CPU; where that is dear (a VM: each IPI is a VM exit)
 * RPS can cost throughput (bench/README.md).  A fall of more than
 * POL_TRIAL_LOSS gives the original masks back and keeps RPS off for
 * POL_TRIAL_BACKOFF_USEC, doubling after each failed trial up to
 * POL_TRIAL_BACKOFF_MAX_USEC (pol_trial_sample). */
#define POL_TRIAL_TICKS 3
#define POL_TRIAL_LOSS 0.05
/* A fall this large fails the trial at the first counted sample: no need
 * to average it out. */
#define POL_TRIAL_LOSS_FAST 0.20
#define POL_TRIAL_BACKOFF_USEC (600ULL * 1000000ULL)
#define POL_TRIAL_BACKOFF_MAX_USEC (3600ULL * 1000000ULL)

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
        bool tx_apart;           /* that tx IRQ fires on another CPU than the rx one: work
                                  * is then the rx CPU's part alone */
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
        bool rps_no_gain;        /* policy-rps.c: RPS would not lower the peak by min_gain */
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
double pol_load(const struct pol_tick *t, int cpu);
bool pol_settling(const struct pol_tick *t, int cpu);
void pol_settle(struct pol_tick *t, int cpu);
struct action *pol_add(struct pol_tick *t, enum knob_kind type);
/* An action on queue `queue` of NIC `nic` (RPS, XPS, rps_flow_cnt). */
struct action *pol_add_queue(struct pol_tick *t, enum knob_kind type, const char *nic, int queue);
/* Sets a's target and before sets (from may be NULL); ENOMEM fails the tick. */
void pol_set_cpus(struct pol_tick *t, struct action *a, const cpuset_t *to, const cpuset_t *from);
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

/* The network load on cpu left after the queue IRQs firing there: what
 * RPS or threaded NAPI for a NIC without queue IRQs may explain. */
double pol_unexplained(const struct pol_tick *t, int cpu);
/* The hot CPUs, hottest first (insertion by load), at most max of them;
 * returns how many. */
#define POL_HOT_ORDER_MAX (CPUSET_MAX > 1024 ? 1024 : CPUSET_MAX)
size_t pol_hot_by_load(const struct pol_tick *t, int *order, size_t max);


/* Objects changed by someone else (docs/DESIGN.md "Policy"): left alone
 * for external_hold from since, when the change was seen; at once taken
 * back when value (NULL: a count) uses a CPU that may not be used.
 * ACTION_REASON_INVALID while held, else the take-back's reason. */
enum action_reason pol_external_over(const struct pol_tick *t, uint64_t since, const cpuset_t *value);
/* The take-back's prose for reason why. */
const char *pol_external_why(const struct pol_tick *t, enum action_reason why, char *buf, size_t len);
/* The end of a change note: "leaving it alone for 600s (external_hold)"
 * or "taking it back". */
const char *pol_external_hold_text(const struct pol_tick *t, uint64_t since, const cpuset_t *value, char *buf,
                                   size_t len);
/* Whether IRQ ii is where we set it (r->last_set); else it was changed
 * behind our back: r->external, a note about it (device and queue: its
 * NIC's, or NULL and -1), and pol_irq_held's verdict. */
bool pol_irq_kept(struct pol_tick *t, struct pol_irq *r, const struct inventory_irq *ii, const char *device,
                  int queue);
/* For an IRQ changed by someone else (r->external): true while it is not
 * ours this tick: held, or an action taking it back to r->last_set was
 * just planned.  False once it is ours again: back at r->last_set, or
 * r->last_set itself may no longer be used (then r->set is cleared: the
 * value found is the baseline). */
bool pol_irq_held(struct pol_tick *t, struct pol_irq *r, const struct inventory_irq *ii, const char *device,
                  int queue);
/* Note said by feedback, handed out with the next tick's report. */
void pol_state_note(struct policy_state *st, int level, const char *fmt, ...) _printf_(3, 4);
/* The share of a queue's receive work that stays on its IRQ CPU under
 * RPS: the queue's measurement (q may be NULL), else its NIC's (n may be
 * NULL), else POL_NAPI_SHARE. */
double pol_share_keep(const struct pol_nic *n, const struct pol_queue *q);
/* The share of u's receive work that stays on its IRQ CPU is measured at
 * least `samples` times, not the prior. */
bool pol_share_measured(const struct pol_tick *t, const struct pol_unit *u, unsigned samples);
/* The model of this tick: hot CPUs (t->hot, the scaled thresholds), the
 * NICs and their units, and each unit's estimated work.  0 or -ENOMEM. */
int pol_model_build(struct pol_tick *t);
