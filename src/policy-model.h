/* Policy model, above the records: this tick's view of the host (struct
 * pol_tick: hot CPUs, thresholds, units and their projected load), action
 * and note helpers, the trials.  The steps decide from it; it calls none. */
#pragma once

#include "policy-records.h"

/* Share of a queue's receive work that stays on the IRQ CPU under RPS
 * (NAPI poll, GRO, IPIs): the prior until policy-share.c measures it
 * (docs/DESIGN.md "The problem"). */
#define POL_NAPI_SHARE 0.4
/* Bounds of a measured share: some work always stays, some always moves. */
#define POL_SHARE_MIN 0.05
#define POL_SHARE_MAX 0.95
/* Weight of a new measurement once there are a few. */
#define POL_SHARE_GAIN 0.25
/* A measurement needs this much receive work, on CPUs below saturation
 * (a capped load says nothing about the split). */
#define POL_SHARE_EVIDENCE 0.05
#define POL_SHARE_SATURATED 0.95
/* Measurements before an estimate is noted, and the change noted again. */
#define POL_SHARE_NOTE_AFTER 3
#define POL_SHARE_NOTE_DELTA 0.10

/* A CPU whose irq+softirq share rose this much since the last tick sets the
 * fast pace (policy_pace): a flood is acted on within fast_interval. */
#define POL_PACE_RISE 0.10
/* ... or whose idle share fell that much while its irq+softirq share rose
 * at least this much: the onset of a flood whose cost is mostly its
 * receivers' (a pure user-load rise does not speed the pace). */
#define POL_PACE_NET_RISE 0.02

/* A queue IRQ counts as busy (worth a move) when it carries at least this
 * share of CPU time (or min_gain, where less: pol_busy_abs), or this
 * fraction of its CPU's network load. */
#define POL_BUSY_ABS 0.05
#define POL_BUSY_FRAC 0.10

/* Below balance_ratio a CPU is hot from POL_NOISE_K deviations of its own
 * load's noise above the level RPS sets are accepted at (pol_accept); new
 * samples weigh POL_NOISE_GAIN (less while the level holds), and the noise
 * is trusted after POL_NOISE_SAMPLES of them (docs/DESIGN.md "Policy"). */
#define POL_NOISE_K 3.0
#define POL_NOISE_GAIN 0.1
#define POL_NOISE_SAMPLES 10
/* The least gain of a move for balance, however small the noise:
 * /proc/stat counts in USER_HZ ticks (100/s), so a load sampled each
 * second is known to 1% of a CPU, and less than two counts is no
 * measured difference. */
#define POL_GAIN_LEAST 0.02
/* A plan's (pol_replan) is judged on loads every CPU of which is steady
 * (its noise known): their averages resolve one count, and the noise
 * term covers their jitter. */
#define POL_PLAN_LEAST 0.01

/* Cost of work on another NUMA node than its NIC's, relative to local. */
#define POL_REMOTE_COST 1.3

/* Loads this close are equal to the layout: noise must not pick siblings. */
#define POL_LAYOUT_TIE 0.02
/* Samples a start-up layout waits for one that sees the NIC's interrupts;
 * after that the rebalancing takes over. */
#define POL_RELAYOUT_SAMPLES 3

/* An irqless NIC's RPS starts from this many received packets/s (less
 * cannot explain a hot CPU) and is given back below the exit rate. */
#define POL_IRQLESS_PPS 1000.0
#define POL_IRQLESS_PPS_EXIT 500.0
/* Such RPS is a trial, as IPIs can cost more than they spread (a VM): the
 * throughput over POL_TRIAL_TICKS intervals, the first aside, against the
 * last one before; a fall over POL_TRIAL_LOSS gives it back and blocks it
 * for a backoff doubling up to the max (pol_trial_sample). */
#define POL_TRIAL_TICKS 3
#define POL_TRIAL_LOSS 0.05
/* A fall this large fails the trial at the first counted sample. */
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
        /* packets/s of each IRQ's queue (netdev qstats), -1 unknown: where
         * known they split a CPU's network work instead of the IRQ rates */
        double pps[2];
        double work;             /* estimated irq+softirq share on its IRQ CPU */
        double total;            /* estimated receive work, with what RPS steers elsewhere */
        double tx;               /* part of total on a separate tx IRQ: RPS does not steer it */
        bool tx_apart;           /* that tx IRQ fires on another CPU than the rx one: work
                                  * is then the rx CPU's part alone */
        double keep;             /* share of the receive work that stays on the IRQ CPU
                                  * under RPS (pol_share_keep); 0 when irqless */
        bool irqless;               /* a whole NIC without queue IRQs (qi: its first rx queue) */
        bool rps_on;             /* a non-empty rps_cpus other than its own CPU */
        /* current rps_cpus: pol_no_rps, or rps_own (set by pol_unit_set_rps):
         * a 1 kB set only for the few units with RPS */
        const cpuset_t *rps;
        cpuset_t *rps_own;
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
        bool busy;               /* rate >= POL_OTHER_RATE: placed by its load */
        bool massed;             /* busy as one of quiet IRQs that fire on one CPU together */
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
        double *leaving;         /* per CPU other devices' work pol_other_irqs moves off it this tick */
        struct pol_unit *units;
        size_t n_units, a_units;
        struct pol_unit *irqless;   /* NICs without queue IRQs, one unit each */
        size_t n_irqless, a_irqless;
        struct pol_nicctx *nics; /* one per inv->nics entry */
        struct pol_other *others; /* IRQs of other devices we may place */
        size_t n_others, a_others;
        double scale;            /* this tick's thresholds: the config's times scale (update_hot) */
        double mean;             /* mean irq+softirq load of the eligible CPUs */
        double floor;            /* least gain of a move: balance_floor, less where the noise is known small */
        bool noise_known;        /* every eligible CPU's noise is estimated (floor from it) */
        double noise_gain;       /* then POL_NOISE_K deviations of the noisiest one's */
        bool plan_pending;       /* pol_replan: a plan waits for its next decision (measuring) */
        bool steady_pending;     /* pol_rps_steady: a CPU at a steady peak's level, not yet judged by its level */
        uint64_t single_due;     /* a single-queue set's change waiting for its dwell: when it ends, 0 none */
        bool pool_short;         /* the cool CPUs cannot take the hot queues' protocol work alone */
        struct pol_unit **lone;  /* pol_rebalance: lone hot queues to get RPS together, */
        int *lone_cpu;           /* their hot IRQ CPUs */
        size_t n_lone;
        unsigned moves;          /* rebalancing moves planned this tick */
        cpuset_t touched;        /* CPUs whose load an action of this tick changed */
        cpuset_t settling;       /* CPUs an earlier tick's action changed, not yet caught up */
        struct vectors vec;      /* IRQs per CPU and their limits, moved as IRQ actions are planned */
        int r;                   /* first error (-ENOMEM) */
};

/* This tick's thresholds: hot_enter, hot_exit, the narrowing limit and
 * min_gain, scaled down together while the host is unbalanced (update_hot). */
double pol_enter(const struct pol_tick *t);
double pol_exit(const struct pol_tick *t);
double pol_narrow(const struct pol_tick *t);
double pol_min_gain(const struct pol_tick *t);
/* The gain a queue IRQ move off hot cpu onto to (-1: any) needs: min_gain
 * as gain_least() judges it, and from the tick after one where no move
 * gained that at cpu's level, POL_NOISE_K deviations of its noise more,
 * until the level changes or the CPU cools (noise takes no decision back). */
double pol_gain_need(const struct pol_tick *t, int cpu, int to);
double pol_busy_abs(const struct pol_tick *t);
double pol_plan_gain(const struct pol_tick *t);
/* The least work of a queue IRQ on cpu that is worth a move there. */
double pol_busy(const struct pol_tick *t, int cpu);
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
/* A dropping CPU's demand: its load over the share of packets it kept. */
#define POL_DEMAND_MAX 4.0
double pol_demand_factor(const struct pol_tick *t, int cpu);
double pol_demand(const struct pol_tick *t, int cpu);
/* A CPU's load over its network load, at least 1: what the softirq time
 * of runs not counted as NET_RX/NET_TX adds to network work measured
 * there (docs/DESIGN.md "Steady re-layout"). */
double pol_whole_factor(const struct pol_tick *t, int cpu);
bool pol_settling(const struct pol_tick *t, int cpu);
/* Work of u's NIC placed on cpu: dearer off the NIC's node (the simulator's
 * and the lower bound's remote cost). */
static inline double pol_work_cost(const struct pol_tick *t, const struct pol_unit *u, int cpu, double work) {
        return cpuset_isset(&t->nics[u->nic].cpus, cpu) ? work : work * POL_REMOTE_COST;
}

/* The moves a tick may make: max_moves for each 32 eligible CPUs, so a
 * tick disturbs the same share of a host whatever its size. */
static inline unsigned pol_move_cap(const struct pol_tick *t) {
        return t->c->max_moves * (unsigned) MAX(1, cpuset_count(&t->eligible) / 32);
}

/* A CPU's load as the policy judges it: its irq+softirq share, the same on
 * the policy's ticks and the calm ones that only feed the noise. */
static inline double pol_cpu_load(const struct sample_cpu *sc) {
        return MAX(sc->irq, 0) + MAX(sc->softirq, 0);
}
/* The load of a CPU as the policy judges it, from its sample L: the level
 * (pol_noise_sample), or L while L is beyond the noise from it (a change
 * yet to be confirmed). */
static inline double pol_cpu_judged(const struct pol_cpu *pc, double L) {
        return pc->level_off != 0 || pc->level_n == 0 ? L : pc->level;
}
/* A CPU judged by its steady level: its noise known, the level held for
 * POL_NOISE_SAMPLES samples with none beyond the noise since. */
static inline bool pol_cpu_steady(const struct pol_cpu *pc) {
        return pc->noise_n > POL_NOISE_SAMPLES && pc->level_off == 0 && pc->level_n >= POL_NOISE_SAMPLES;
}
/* One tick's sample of a CPU's smoothed irq+softirq load L into its noise
 * estimate and its steady level; settling: an action of ours still shows
 * in it. */
void pol_noise_sample(struct pol_cpu *pc, const struct config *c, double L, bool settling);
/* The level at which cpu's smoothed irq+softirq load counts towards hot
 * (update_hot), by the levels of a policy tick; the calm ticks between
 * judge by it too (policy_observe). */
double pol_cpu_enter(const struct pol_hot_levels *lv, const struct pol_cpu *pc);
/* cpu settles from an action of this tick (t->touched) that moves an
 * unknown load onto or off it (pol_settle_by: work of it). */
void pol_settle(struct pol_tick *t, int cpu);
void pol_settle_by(struct pol_tick *t, int cpu, double work);
/* Settling from an earlier tick's actions that moved at least
 * POL_GAIN_LEAST onto or off it while it settles (a measured change). */
bool pol_settling_measurably(const struct pol_tick *t, int cpu);
struct action *pol_add(struct pol_tick *t, enum knob_kind type);
/* An action on queue `queue` of NIC `nic` (RPS, XPS, rps_flow_cnt). */
struct action *pol_add_queue(struct pol_tick *t, enum knob_kind type, const char *nic, int queue);
/* Sets a's target and before sets (from may be NULL); ENOMEM fails the tick. */
void pol_set_cpus(struct pol_tick *t, struct action *a, const cpuset_t *to, const cpuset_t *from);
/* The same with the value it replaces kept (an inventory set). */
void pol_set_cpus_kept(struct pol_tick *t, struct action *a, const cpuset_t *to, const cpuset_kept_t *from);
/* The RPS set of a unit without one. */
extern const cpuset_t pol_no_rps;
/* Makes to (and its count) u's RPS set; ENOMEM fails the tick, the set unchanged. */
void pol_unit_set_rps(struct pol_tick *t, struct pol_unit *u, const cpuset_t *to);
/* Frees the units' RPS sets. */
void pol_units_free(struct pol_unit *v, size_t n);
/* u's IRQs off its CPU to the coolest CPU of cand (cool, settled, with
 * vectors) for a big flow another set lands there; dry: only which CPU.
 * The CPU, -1 if u may not move yet or none takes it (policy-irq.c). */
int pol_unit_clear(struct pol_tick *t, struct pol_unit *u, const cpuset_t *cand, bool dry, const char *reason);
/* "4-7" / "3", for reasons. */
const char *pol_fmt_cpus(const cpuset_t *s, char *buf, size_t len);

/* Starts trial tr of what was just switched on for NIC rec. */
void pol_trial_start(struct pol_trial *tr, const struct pol_nic *rec);
/* What a trial's sample says (pol_trial_sample). */
enum pol_trial_step {
        POL_TRIAL_IDLE,          /* none running */
        POL_TRIAL_RUNNING,       /* no verdict yet: nothing else changes the object meanwhile */
        POL_TRIAL_PASSED,        /* throughput held: kept */
        POL_TRIAL_FAILED,        /* throughput fell: give it back; no new start for tr->backoff_usec */
        POL_TRIAL_NONE,          /* no verdict (counters gone or restarted, trials off): kept */
};
/* One sample of trial tr; a verdict ends it, counted in verdicts[], with
 * the rate it compared in *ret_after. */
enum pol_trial_step pol_trial_sample(struct pol_trial *tr, const struct pol_nic *rec, bool enabled, uint64_t now,
                                     unsigned *verdicts, double *ret_after);

/* The network load on cpu the queue IRQs firing there leave unexplained. */
double pol_unexplained(const struct pol_tick *t, int cpu);
/* The CPUs [*lo, *hi] of [0, n) where IRQ si's rate can be non-zero (none
 * when lo > hi): its nz range when known, else all. */
void pol_irq_range(const struct sample_rates *r, const struct sample_irq *si, int n, int *lo, int *hi);
/* The hot CPUs, hottest first, at most max of them; returns how many. */
#define POL_HOT_ORDER_MAX (CPUSET_MAX > 1024 ? 1024 : CPUSET_MAX)
size_t pol_hot_by_load(const struct pol_tick *t, int *order, size_t max);

/* Where IRQ ii ends when mask is written (vectors_pick), -1 when no CPU
 * there has a vector left.  pol_vector_move() counts the move. */
int pol_vector_pick(const struct pol_tick *t, const struct inventory_irq *ii, const cpuset_t *mask);
void pol_vector_move(struct pol_tick *t, const struct inventory_irq *ii, int to);
/* Notes once, until placed again, that no CPU of cand has a vector for ii. */
void pol_note_no_vector(struct pol_tick *t, const struct inventory_irq *ii, const char *device, int queue,
                        const cpuset_t *cand);

/* A change by someone else seen at since (docs/DESIGN.md "Policy"):
 * ACTION_REASON_INVALID while held, else why it is taken back (value NULL:
 * a count, never onto a banned CPU). */
enum action_reason pol_external_over(const struct pol_tick *t, uint64_t since, const cpuset_t *value);
/* The take-back's prose for reason why. */
const char *pol_external_why(const struct pol_tick *t, enum action_reason why, char *buf, size_t len);
/* The end of a change note: left alone for external_hold, or taken back. */
const char *pol_external_hold_text(const struct pol_tick *t, uint64_t since, const cpuset_t *value, char *buf,
                                   size_t len);
/* Whether IRQ ii is where we set it; else marks and notes the change behind
 * our back and returns !pol_irq_held(). */
bool pol_irq_kept(struct pol_tick *t, struct pol_irq *r, const struct inventory_irq *ii, const char *device,
                  int queue);
/* An IRQ changed by someone else: true while held or being taken back;
 * false once ours again (back, or our value no longer allowed). */
bool pol_irq_held(struct pol_tick *t, struct pol_irq *r, const struct inventory_irq *ii, const char *device,
                  int queue);
/* Note said by feedback, handed out with the next tick's report. */
void pol_state_note(struct policy_state *st, int level, const char *fmt, ...) _printf_(3, 4);
/* The share that stays on the IRQ CPU under RPS: the queue's measurement,
 * else its NIC's (either may be NULL), else POL_NAPI_SHARE. */
double pol_share_keep(const struct pol_nic *n, const struct pol_queue *q);
/* u's share is measured at least `samples` times. */
bool pol_share_measured(const struct pol_tick *t, const struct pol_unit *u, unsigned samples);
/* Builds this tick's model: hot CPUs, NICs, units, their work; 0 or -ENOMEM. */
int pol_model_build(struct pol_tick *t);
