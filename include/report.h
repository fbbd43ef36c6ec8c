/* What irqsteerd tells the outside about each tick: the one-line service
 * status (sd_notify STATUS=), status.json in the state directory and the
 * foreground load lines, all produced from one per-tick snapshot so the
 * formats say the same things. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "action.h"
#include "apply.h"
#include "bans.h"
#include "config.h"
#include "inventory.h"
#include "policy.h"
#include "problem.h"
#include "sample.h"
#include "undo.h"

/* How many actions status.json lists (newest last). */
#define REPORT_LAST_ACTIONS 32
/* How many link events status.json lists (newest last). */
#define REPORT_LAST_LINK_EVENTS 16
/* status.json is rewritten at every tick: each list that grows with the
 * host (managed objects, hot CPUs, IRQs firing elsewhere, kernel-managed
 * IRQs) holds at most this many entries beside its full count, so the
 * file stays a few tens of kB on a 1024-CPU host; `irqsteerctl status
 * --full` lists every managed object from the undo journal. */
#define REPORT_LIST_MAX 32

/* What became of an action, as a metrics label. */
enum report_result {
        REPORT_RESULT_DONE,
        REPORT_RESULT_DRY_RUN,
        REPORT_RESULT_READBACK_DIFFERS,
        REPORT_RESULT_FAILED,
        REPORT_RESULT_MAX,
        REPORT_RESULT_INVALID = -1,
};

/* The outcome classes of restoring objects (undo_report). */
enum report_restore {
        REPORT_RESTORE_RESTORED,
        REPORT_RESTORE_UNCHANGED,
        REPORT_RESTORE_EXTERNAL,
        REPORT_RESTORE_GONE,
        REPORT_RESTORE_FAILED,
        REPORT_RESTORE_CORRUPT,
        REPORT_RESTORE_MAX,
        REPORT_RESTORE_INVALID = -1,
};


/* Counters since the daemon started, for the metrics. */
struct report_counters {
        uint64_t actions[KNOB_KIND_MAX][ACTION_REASON_MAX][REPORT_RESULT_MAX]; /* by the reason code */
        uint64_t action_failures[KNOB_KIND_MAX][ACTION_FAILURE_MAX];
        uint64_t rps_trials[POLICY_TRIAL_VERDICT_MAX];
        uint64_t napi_trials[POLICY_TRIAL_VERDICT_MAX];
        uint64_t restore[REPORT_RESTORE_MAX];
        uint64_t reloads, reload_failures;
        uint64_t link_events;
        uint64_t tick_usec_total;        /* time spent in ticks */
        uint64_t last_tick_usec;
};

struct report_action_record {
        uint64_t realtime_usec;
        char line[384];           /* action_format() */
        struct action action;     /* its fields for status.json */
        int result;
};

struct report_link_record {
        uint64_t realtime_usec;
        char text[128];
};

/* One tick's view of the daemon.  Filled by the daemon before each
 * report_*() call; it only points at the daemon's data, which must stay
 * unchanged for the call. */
struct report_snapshot {
        int pid;
        uint64_t started_usec;            /* CLOCK_REALTIME at start */
        uint64_t uptime_usec;
        const char *status;               /* report_format_status()'s line */
        bool dry_run;
        const char *root;
        const char *state_dir;
        uint64_t caps;                    /* capabilities kept */
        uint64_t caps_dropped;            /* permitted at start, dropped: a reload cannot get them back */
        unsigned ticks;
        const char *reload_error;         /* "" or NULL: none */
        const char *unmatched_interfaces; /* [interface] sections no NIC matches; "" or NULL: none */
        const struct bans *bans;          /* runtime bans; NULL: none read */
        const struct policy_report *policy;
        uint64_t irq_readings;            /* /proc/interrupts readings so far */
        const struct apply_eff_watch *eff;
        size_t n_eff;
        const struct inventory *inv;      /* NULL before the first discovery */
        const struct config *config;
        const struct undo *undo;          /* NULL: none (no apply yet) */
        const struct sample_rates *load;  /* smoothed; NULL before the first interval */
};

/* What the report keeps between ticks: the recent actions and link
 * events, and status.json's slow-changing members as rendered last. */
struct report {
        struct report_action_record last_actions[REPORT_LAST_ACTIONS];
        size_t n_last_actions, last_actions_pos;
        struct report_link_record link_events[REPORT_LAST_LINK_EVENTS];
        size_t n_link_events, link_events_pos;
        /* counts reloads and actions: status.json's config, managed and
         * last_actions members (most of the file on a big host) are
         * rendered again only when it or the undo list changed */
        unsigned long gen;
        char *tail_json;
        size_t tail_len;
        const struct undo *tail_undo;
        unsigned long tail_undo_gen, tail_gen;
        bool status_write_failed;
        struct report_counters count;
        bool last_reload_failed;
        bool metrics_write_failed;       /* the state directory's copy */
        struct problems problems;        /* what the operator should act on (problem.h) */
};

/* status.json or metrics.prom in the state directory was written (r >= 0)
 * or not (-errno): PROBLEM_STATE_FILES begins or, both written, ends. */
void report_state_write(struct report *rp, bool *failed, int r, const char *path);

/* Remembers one action with its action_format() line and apply result
 * (status.json's last_actions), and counts it by kind, reason and result
 * (a failure also by its class). */
void report_record_action(struct report *rp, const struct action *a, const char *line, int result,
                          uint64_t realtime_usec);
/* Counts a policy tick's trial verdicts (rep->rps_trials, napi_trials). */
void report_count_policy(struct report *rp, const struct policy_report *rep);
/* Counts a configuration reload, successful or not. */
void report_count_reload(struct report *rp, bool ok);
/* Counts what a restore of the undo journal did. */
void report_count_restore(struct report *rp, const struct undo_report *u);
/* A tick took usec microseconds. */
void report_count_tick(struct report *rp, uint64_t usec);
/* Remembers one link event; returns the stored text (cut to fit). */
const char *report_record_link(struct report *rp, const char *text, uint64_t realtime_usec);
/* The configuration changed (a reload): status.json shows it again. */
void report_config_changed(struct report *rp);
void report_free(struct report *rp);

/* status.json of s as a malloc'd *ret of *ret_len bytes.  0 or -ENOMEM. */
int report_status_json(struct report *rp, const struct report_snapshot *s, char **ret, size_t *ret_len);

/* Writes status.json into s->state_dir atomically; a failure is logged
 * once, and its end.  0 or negative errno. */
int report_write_status(struct report *rp, const struct report_snapshot *s);

/* Formats the one-line service status for sd_notify STATUS= and status.json:
 * "hot: cpu3 (97%), cpu5 (88%); 48 queue IRQs, 4 RPS queues managed;
 * 3 moves/10min", prefixed with "dry-run: " and with a reload failure when
 * given.  Pure. */
int report_format_status(const struct policy_report *rep, bool dry_run, const char *reload_error,
                         char *buf, size_t len);

/* CPUs the per-tick load lines show at most. */
#define REPORT_LOAD_SHOWN 4
/* The per-tick load lines, each ending in '\n', into a malloc'd *ret:
 * "load: cpuA ... | cpuB ..." two CPUs a line (about 100 columns); up to
 * REPORT_LOAD_SHOWN CPUs every CPU in CPU order, beyond that a summary
 * line ("load: N CPUs, mean soft ...; busiest:") and the busiest
 * REPORT_LOAD_SHOWN by irq+softirq.  Offline and invalid CPUs are left
 * out.  0 or -ENOMEM. */
int report_format_load_lines(const struct sample_rates *avg, char **ret);

/* Logs s's load line at level (nothing when there is no load yet or the
 * level is filtered out). */
void report_log_load(const struct report_snapshot *s, int level);
