/* The tick engine: one decision cycle of irqsteerd, used by the daemon's
 * event loop and by `irqsteerctl plan` alike.  A tick samples /proc (the
 * calm/full schedule and when /proc/interrupts is read), refreshes the
 * inventory (full rediscovery when due), runs the policy, carries out its
 * actions through apply (or, in dry-run, records them in apply's
 * in-memory overlay), feeds the results back to the policy and logs each
 * object's failure once.  What it cannot know itself comes in from the
 * caller: the time, the configuration, the runtime bans and the root.  It
 * owns no event loop and writes no status file (report.h does that from
 * what the engine holds). */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "action.h"
#include "apply.h"
#include "config.h"
#include "cpuset.h"
#include "effwatch.h"
#include "failures.h"
#include "inventory.h"
#include "knob.h"
#include "log.h"
#include "policy.h"
#include "report.h"
#include "sample.h"
#include "topology.h"
#include "util.h"
#include "workers.h"
#include "vectors.h"

/* MESSAGE_ID= values (from systemd-id128 new; irqsteerd(8) MESSAGE IDS):
 * journalctl MESSAGE_ID=... finds each kind of event. */
#define ENGINE_MID_LINK "9a151362ce8b4f19851d4e9db2d87f4c"      /* a NIC appeared, went, changed queues */
#define ENGINE_MID_EXTERNAL "aa17a772fe3d47739d4694ab4213943d"  /* changed by someone else, left alone */

/* Called for each action carried out or tried (result as apply_action()
 * returns it; APPLY_UNCHANGED is not reported), after it was logged. */
typedef void (*engine_action_fn)(void *userdata, const struct action *a, const char *line, int result);

/* A calm host still gets a full tick every this many ticks: the inventory
 * audit, a fresh status file and the policy's slow release (narrowing RPS
 * sets) run on full ticks only, and a full tick costs many calm ones
 * (bench/README.md, cost16).  Here for the policy tests that run the
 * policy on the ticks the daemon would. */
#define ENGINE_FULL_TICK_EVERY 30

/* A full tick every this many while the policy waits (policy_report.
 * measuring: RPS sets sized with the prior share wait for its measurement,
 * a CPU hot for less than min_dwell waits for it), and one when a hot
 * CPU's wait ends (due_usec): several measurements within the share's
 * wait at the default intervals. */
#define ENGINE_MEASURE_FULL_EVERY 5

/* The caller fills the part marked "in" before engine_start() and keeps
 * config pointing at the configuration in force (the daemon swaps the
 * struct it points to on reload, then calls engine_config_changed()).  The
 * rest is the engine's; the daemon reads it for status and metrics. */
struct engine {
        /* in */
        int rootfd;
        const char *root;         /* for messages */
        bool root_is_host;
        const char *state_dir;    /* the undo journal's (only read in a dry run) */
        bool dry_run;
        bool once;                /* --once: no decision without rates */
        const struct config *config;
        struct report *out;       /* counts and last actions/link events */
        bool have_linkmon;        /* link events come from the link monitor */
        engine_action_fn on_action;
        void *userdata;

        enum policy_pace pace;    /* of the next tick (policy_pace) */
        unsigned calm_run;        /* calm ticks since the last full one */
        unsigned ticks;

        struct topology topo;
        struct inventory inv;
        bool have_inv;
        bool inventory_dirty;           /* full rediscovery at the next tick */
        unsigned ticks_since_full; /* refreshed ticks since the last full discovery */
        struct inventory_audit audit;   /* which per-object values a refresh re-reads */
        struct sample_snapshot prev;
        bool have_prev;
        struct sample_files files;      /* /proc/stat and /proc/softirqs, kept open
                                         * (a calm tick reads /proc/stat alone) */
        /* the qstats reading's socket, opened at the first full tick that
         * reads them (only when the inventory has the netdev family: the
         * host's root) and kept for the engine's life */
        struct netdev_handle netdev;
        struct sample_rates avg;
        bool have_avg;
        /* /proc/interrupts readings (irq_reading_due): irq_force asks for
         * one at the next tick; irq_ref[cpu] is the CPU's smoothed
         * irq+softirq share at the last one (NAN: none) */
        bool irq_force;
        unsigned eff_read_until;  /* read at every tick before this one (EFF_READ_TICKS) */
        double *irq_ref;
        int irq_ref_max_cpu;
        uint64_t irq_readings;
        struct worker_set workers;

        struct policy_state *policy;
        struct policy_report report;
        struct action_list actions;
        struct apply *apply;

        char other_writer[160];   /* "irqbalance (pid N) is running ...", "" if none seen */
        pid_t other_pid;          /* that irqbalance, 0 if none seen */
        char unmatched[256];      /* "[interface eth9] (FILE:LINE), ...": sections no NIC here matches */
        /* NICs that vanished, by ifindex: one that comes back under another
         * name is the same device renamed, and its saved originals follow */
        struct {
                char name[IF_NAMESIZE];
                int ifindex;
        } gone_nics[16];
        unsigned n_gone_nics;

        struct failures failures;
        struct effwatch eff;      /* IRQs written, until they fire where set */
        /* interrupt vectors per CPU, counted before each decision and moved
         * by each IRQ written; an ENOSPC lowers the CPU's limit */
        struct vectors vectors;
        /* NICs whose msi_irqs-order fallback was warned about */
        char (*msi_warned)[IFNAMSIZ];
        size_t n_msi_warned, allocated_msi_warned;
        /* tick-level failures (sampling, inventory); apart from the
         * failures' own limiter so debug repeats cannot use up its burst */
        struct log_ratelimit tick_rl;
        int policy_errno;         /* errno of the failing policy, said once; 0 when it works */
        bool journal_failing;     /* the undo journal could not be saved (said once) */
};

/* Sets the engine's own fields to their starting values; the "in" fields
 * are the caller's to fill after. */
void engine_init(struct engine *e);
/* Reads the topology, a first /proc snapshot at now and the whole
 * inventory, logs them, and sets up apply (its journal in state_dir) and
 * the policy.  Each failure is logged; returns 0 or -errno. */
int engine_start(struct engine *e, uint64_t now);
void engine_free(struct engine *e);

/* One decision from what the engine holds, with raw as this tick's
 * unsmoothed rates (NULL: none, as at start): the policy, its notes, the
 * actions carried out or recorded.  0, or the policy's -errno (said once). */
int engine_decide(struct engine *e, uint64_t now, const cpuset_t *bans, const struct sample_rates *raw);

struct engine_tick_result {
        const char *full;         /* why this tick ran in full; NULL for a calm tick */
        bool decided;             /* the policy ran (its report is this tick's) */
};
/* One tick at now (monotonic microseconds): 1 when it ran (counted in
 * e->ticks), 0 when a failure to sample or read the inventory skipped it
 * (logged, rate limited), -ENOMEM. */
int engine_tick(struct engine *e, uint64_t now, const cpuset_t *bans, struct engine_tick_result *ret);
/* The interval after the last tick: fast_interval while a CPU nears hot,
 * so that the samples hot_samples asks for come quickly, calm_interval
 * while every CPU is calm, else interval. */
uint64_t engine_next_interval(const struct engine *e, uint64_t interval);

/* The configuration changed (reload): the policy starts over and the next
 * tick runs in full. */
void engine_config_changed(struct engine *e);
/* Runtime bans changed: the next tick runs in full. */
void engine_bans_changed(struct engine *e);
/* A link event: name's placement starts over (NULL: none) and, with
 * rediscover, the next tick reads the whole inventory. */
void engine_link_changed(struct engine *e, const char *name, bool rediscover);
/* Records and logs a link event (MESSAGE_ID=ENGINE_MID_LINK). */
void engine_link_event(struct engine *e, const char *fmt, ...) _printf_(2, 3);
/* [interface] sections that match no NIC, into e->unmatched; with say,
 * each is logged at warning. */
void engine_check_unmatched(struct engine *e, bool say);
/* Looks for another writer of IRQ affinities (irqbalance) into
 * e->other_writer and e->other_pid. */
void engine_find_other_writer(struct engine *e);

/* ---- logging, exported for tests/test-log ---- */

struct policy_note;
/* Logs a policy note at its level, with MESSAGE_ID= for the kinds that have
 * one and IRQ=, DEVICE=, QUEUE= for the object it is about; other (may be
 * NULL) names who else writes, appended to the message. */
void engine_log_note(const struct policy_note *no, const char *other);
/* Logs one applied action at info with the journal fields ACTION=, IRQ=
 * (IRQ moves), CPU_FROM= and CPU_TO= (all but the flow counts), DEVICE=
 * and QUEUE= (when the action has them) and REASON=.  line is
 * action_format()'s; result an apply_action() result >= 0. */
void engine_log_action(const struct action *a, const char *line, int result);

/* "Failed to WHAT, skipping this tick: %m" at warning, as rl allows; the
 * first message after a suppressed run says how many were left out. */
void engine_log_tick_failure(struct log_ratelimit *rl, int r, const char *what, uint64_t now);
/* After each policy run (r its result): a failure is logged once per errno
 * (*last keeps it; the same failure again only at debug), and the first
 * success after one says the policy works again. */
void engine_log_policy_result(int *last, int r);
