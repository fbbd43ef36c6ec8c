/* The tick engine: one decision cycle for irqsteerd and `irqsteerctl plan`
 * (docs/DESIGN.md, The tick).  The caller gives the time, configuration,
 * bans and root; it owns no event loop and writes no status file. */
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
#include "log.h"
#include "policy.h"
#include "report.h"
#include "sample.h"
#include "topology.h"
#include "util.h"
#include "workers.h"
#include "vectors.h"

/* MESSAGE_ID= values (irqsteerd(8), MESSAGE IDS). */
#define ENGINE_MID_LINK "9a151362ce8b4f19851d4e9db2d87f4c"      /* a NIC appeared, went, changed queues */
#define ENGINE_MID_EXTERNAL "aa17a772fe3d47739d4694ab4213943d"  /* changed by someone else, left alone */

/* Each action carried out or tried (not APPLY_UNCHANGED), after its log. */
typedef void (*engine_action_fn)(void *userdata, const struct action *a, const char *line, int result);

/* A calm host still gets a full tick every this many (audit, status file,
 * the policy's slow release); public for the policy tests. */
#define ENGINE_FULL_TICK_EVERY 30

/* An audit that finds nothing doubles the calm ticks to the next, up to
 * this much time of calm ticks (a tenth of the hour's audits); any other
 * full tick brings them back to ENGINE_FULL_TICK_EVERY (irqsteerd(8)). */
#define ENGINE_AUDIT_MAX_USEC (300 * USEC_PER_SEC)

/* A full tick every this many while the policy measures (policy_report.
 * measuring), and one at its due_usec. */
#define ENGINE_MEASURE_FULL_EVERY 5

/* The caller fills "in" before engine_start() (config: the one in force,
 * engine_config_changed() after a swap); the rest is the engine's. */
struct engine {
        /* in */
        int rootfd;
        const char *root;         /* for messages */
        bool root_is_host;
        const char *state_dir;    /* the undo journal's (only read in a dry run) */
        bool dry_run;
        bool once;                /* --once: every tick in full */
        const struct config *config;
        struct report *out;       /* counts and last actions/link events */
        bool have_linkmon;        /* link events come from the link monitor */
        engine_action_fn on_action;
        void *userdata;

        enum policy_pace pace;    /* of the next tick (policy_pace) */
        unsigned calm_run;        /* calm ticks since the last full one */
        unsigned audit_every;     /* calm ticks between audits (engine_audit_every) */
        cpuset_t audit_hot;       /* the hot CPUs the last audit left */
        unsigned ticks;

        struct topology topo;
        struct inventory inv;
        bool inventory_dirty;           /* full rediscovery at the next tick */
        unsigned ticks_since_full; /* refreshed ticks since the last full discovery */
        struct inventory_audit audit;   /* which per-object values a refresh re-reads */
        struct sample_snapshot prev;
        struct sample_rates avg;
        bool have_avg;
        /* irq_force: read /proc/interrupts next tick; irq_ref[cpu]: the
         * smoothed irq+softirq share at the last reading (NAN: none) */
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
        /* vanished NICs: one back under another name was renamed */
        struct {
                char name[IF_NAMESIZE];
                int ifindex;
        } gone_nics[16];
        unsigned n_gone_nics;

        struct failures failures;
        struct effwatch eff;      /* IRQs written, until they fire where set */
        struct vectors vectors;   /* per CPU: counted before each decision, moved by each write */
        char (*msi_warned)[IFNAMSIZ]; /* NICs warned about the msi_irqs-order guess */
        size_t n_msi_warned, allocated_msi_warned;
        struct log_ratelimit tick_rl; /* sampling/inventory failures, a limiter of their own */
        int policy_errno;         /* errno of the failing policy, said once; 0 when it works */
        int softnet_errno;        /* errno of the failing softnet_stat read, said once; 0 when it works */
        bool journal_failing;     /* the undo journal could not be saved (said once) */
};

/* The engine's own fields to their start; the caller fills "in" after. */
void engine_init(struct engine *e);
/* Topology, a first snapshot, the inventory, apply and the policy; each
 * failure logged; 0 or -errno. */
int engine_start(struct engine *e, uint64_t now);
void engine_free(struct engine *e);

/* One decision (raw: this tick's unsmoothed rates, NULL at start): policy,
 * notes, actions.  0, or the policy's -errno (said once). */
int engine_decide(struct engine *e, uint64_t now, const cpuset_t *bans, const struct sample_rates *raw);

struct engine_tick_result {
        const char *full;         /* why this tick ran in full; NULL for a calm tick */
        bool decided;             /* the policy ran (its report is this tick's) */
};
/* One tick at now (monotonic usec), after engine_start(): 1 when it ran, 0
 * when a sampling or inventory failure skipped it (logged), -ENOMEM. */
int engine_tick(struct engine *e, uint64_t now, const cpuset_t *bans, struct engine_tick_result *ret);
/* The calm ticks before the next audit after a full tick, with every the
 * last wait: twice every after an audit that found nothing (quiet), at most
 * ENGINE_AUDIT_MAX_USEC of calm_usec ticks, else ENGINE_FULL_TICK_EVERY.
 * Pure. */
unsigned engine_audit_every(unsigned every, bool quiet, uint64_t calm_usec);
/* Whether the audit just made found nothing (gen, n_external: the action
 * count and held objects before it). */
bool engine_audit_quiet(const struct engine *e, unsigned long gen, unsigned n_external);
/* The per-object values a full tick re-reads when audits come every
 * `every` calm ticks: more as they come further apart, so that each object
 * is re-read as soon as at ENGINE_FULL_TICK_EVERY.  Pure. */
size_t engine_audit_slice(unsigned every);
/* fast_interval while a CPU nears hot, calm_interval while all are calm,
 * else interval. */
uint64_t engine_next_interval(const struct engine *e, uint64_t interval);

/* After a full tick: the caller saw something (a problem in force, a
 * change an operator acts on), so the next audit comes after
 * ENGINE_FULL_TICK_EVERY calm ticks. */
void engine_audit_found(struct engine *e);
/* After a reload: the policy starts over, the next tick is full. */
void engine_config_changed(struct engine *e);
/* Runtime bans changed: the next tick runs in full. */
void engine_bans_changed(struct engine *e);
/* A link event: name's placement starts over; rediscover: full inventory next. */
void engine_link_changed(struct engine *e, const char *name, bool rediscover);
/* Records and logs a link event (MESSAGE_ID=ENGINE_MID_LINK). */
void engine_link_event(struct engine *e, const char *fmt, ...) _printf_(2, 3);
/* [interface] sections matching no NIC into e->unmatched (say: warn). */
void engine_check_unmatched(struct engine *e, bool say);
/* Another writer of IRQ affinities (irqbalance) into e->other_writer/pid. */
void engine_find_other_writer(struct engine *e);

/* ---- logging, exported for tests/test-log ---- */

struct policy_note;
/* A policy note at its level with its journal fields; other (or NULL) names
 * who else writes. */
void engine_log_note(const struct policy_note *no, const char *other);
/* One applied action at info with ACTION=, IRQ=, CPU_FROM=, CPU_TO=,
 * DEVICE=, QUEUE=, REASON=; line from action_format(), result >= 0. */
void engine_log_action(const struct action *a, const char *line, int result);

/* "Failed to WHAT, skipping this tick: %m" at warning, as rl allows. */
void engine_log_tick_failure(struct log_ratelimit *rl, int r, const char *what, uint64_t now);
/* A policy failure logged once per errno (*last), and its recovery. */
void engine_log_policy_result(int *last, int r);
