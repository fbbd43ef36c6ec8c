/* What irqsteerd tells the outside each tick (STATUS=, status.json, load
 * lines), all from one snapshot so they agree. */
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

/* Actions and link events status.json lists (newest last). */
#define REPORT_LAST_ACTIONS 32
#define REPORT_LAST_LINK_EVENTS 16
/* Entries at most of each status.json list that grows with the host, beside
 * its full count: the file is rewritten every tick. */
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

/* One tick's view of the daemon: pointers into its data, unchanged during
 * the report_*() call. */
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

/* Kept between ticks: recent actions and link events, status.json's
 * slow-changing members as rendered last. */
struct report {
        struct report_action_record last_actions[REPORT_LAST_ACTIONS];
        size_t n_last_actions, last_actions_pos;
        struct report_link_record link_events[REPORT_LAST_LINK_EVENTS];
        size_t n_link_events, link_events_pos;
        /* grows at each reload and action: the tail is rendered again only
         * when it or the undo list changed */
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

/* A state file written (r >= 0) or not: PROBLEM_STATE_FILES begins or ends. */
void report_state_write(struct report *rp, bool *failed, int r, const char *path);

/* Remembers one action for last_actions and counts it by kind, reason,
 * result (and failure class). */
void report_record_action(struct report *rp, const struct action *a, const char *line, int result,
                          uint64_t realtime_usec);
/* Counters: a tick's trial verdicts, a reload, a restore, a tick's time. */
void report_count_policy(struct report *rp, const struct policy_report *rep);
void report_count_reload(struct report *rp, bool ok);
void report_count_restore(struct report *rp, const struct undo_report *u);
void report_count_tick(struct report *rp, uint64_t usec);
/* Remembers one link event; returns the stored text (cut to fit). */
const char *report_record_link(struct report *rp, const char *text, uint64_t realtime_usec);
/* After a reload: status.json shows the configuration again. */
void report_config_changed(struct report *rp);
void report_free(struct report *rp);

/* The runtime bans as members of an open JSON object: "cpus", "files". */
struct json_writer;
void report_bans_members(struct json_writer *w, const struct bans *b);

/* status.json of s as a malloc'd *ret of *ret_len bytes.  0 or -ENOMEM. */
int report_status_json(struct report *rp, const struct report_snapshot *s, char **ret, size_t *ret_len);

/* status.json into s->state_dir atomically; a failure logged once.  0 or -errno. */
int report_write_status(struct report *rp, const struct report_snapshot *s);

/* The one-line service status: "hot: cpu3 (97%); 48 queue IRQs, 4 RPS queues
 * managed; 3 moves/10min", after "dry-run: " and a reload failure.  Pure. */
int report_format_status(const struct policy_report *rep, bool dry_run, const char *reload_error,
                         char *buf, size_t len);

/* CPUs the per-tick load lines show at most. */
#define REPORT_LOAD_SHOWN 4
/* The load lines into a malloc'd *ret, two CPUs a line: every online CPU
 * up to REPORT_LOAD_SHOWN, else a summary and the busiest.  0 or -ENOMEM. */
int report_format_load_lines(const struct sample_rates *avg, char **ret);

/* Logs s's load lines at level (none before the first interval). */
void report_log_load(const struct report_snapshot *s, int level);
