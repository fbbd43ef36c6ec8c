/* irqsteerd: the sd-event loop that ties sampling, inventory, policy and the
 * actuators together, with sd_notify readiness/status/watchdog, SIGHUP
 * reload, SIGTERM/SIGINT stop with restore, the rtnetlink link monitor,
 * capability dropping; what it reports (status line, status.json, load
 * lines) comes from report.h.  main() only parses options. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "action.h"
#include "apply.h"
#include "config.h"
#include "cpuset.h"
#include "log.h"

/* Exit codes of irqsteerd. */
enum {
        DAEMON_EXIT_OK = 0,
        DAEMON_EXIT_FAILURE = 1,  /* startup failed, fatal loop error, --check-config found problems */
        DAEMON_EXIT_USAGE = 2,    /* bad command line */
        DAEMON_EXIT_LOCKED = 3,   /* another irqsteerd holds the state directory */
        DAEMON_EXIT_CONFIG = 4,   /* the configuration file is invalid or unreadable at start */
};

/* Command-line settings; the ones marked "override" win over the config
 * file, also across reloads. */
struct daemon_options {
        const char *config_path;  /* NULL: CONFIG_DEFAULT_PATH, which may be missing */
        const char *root;         /* NULL: "/" */
        const char *state_dir;    /* override, or NULL */
        uint64_t interval_usec;   /* override, or 0 */
        int log_level;            /* override, or -1 */
        bool foreground;          /* log to stderr; the load summary at info */
        bool dry_run;             /* override (only ever switches it on) */
        bool once;                /* one decision cycle, then exit leaving changes */
        cpuset_t ban_cpus;        /* --ban-cpus and IRQSTEER_BANNED_CPUS, added to banned_cpus */
};

/* Runs the daemon until stopped; returns the process exit code. */
int daemon_run(const struct daemon_options *o);

/* Whether a failed action with result r means the inventory is stale and
 * must be rediscovered at the next tick: a vanished IRQ or queue (ENOENT
 * and the other "gone" errors), not an exited thread (ESRCH is normal) nor
 * rps_sock_flow_entries (absent in a network namespace). */
bool daemon_failure_rediscovers(enum action_type type, int r);

/* --check-config: loads path (NULL: the default path, which may be
 * missing), prints "configuration OK" to out or every problem as
 * "FILE:LINE: KEY: problem" to err; also fails when the irqsteerd running
 * on state_dir (NULL: the configured one) dropped a capability the file
 * needs.  Returns the exit code (0 or 1). */
int daemon_check_config(const char *path, const char *state_dir, FILE *out, FILE *err);

/* Formats one config problem as "FILE:LINE: KEY: problem" (LINE and KEY
 * left out when unknown).  Pure. */
int daemon_format_config_error(const struct config_error *e, char *buf, size_t len);

/* MESSAGE_ID= values (from systemd-id128 new; irqsteerd(8) MESSAGE IDS):
 * journalctl MESSAGE_ID=... finds each kind of event. */
#define DAEMON_MID_LINK "9a151362ce8b4f19851d4e9db2d87f4c"      /* a NIC appeared, went, changed queues */
#define DAEMON_MID_EXTERNAL "aa17a772fe3d47739d4694ab4213943d"  /* changed by someone else, left alone */
#define DAEMON_MID_EFFECTIVE "128319ee5ccb45d6b411b4bb4c3d16c7" /* set to CPU N but fires on CPU M */

/* ---- action logging (src/daemon.c), exported for tests/test-log ---- */

struct policy_note;
/* Logs a policy note at its level, with MESSAGE_ID= for the kinds that have
 * one and IRQ=, DEVICE=, QUEUE= for the object it is about; other (may be
 * NULL) names who else writes, appended to the message. */
void daemon_log_note(const struct policy_note *no, const char *other);
/* Logs, at notice, that irq (name, on device's queue; device NULL or queue
 * < 0 when unknown) was set to want but fires on eff after ticks ticks. */
void daemon_log_effective_mismatch(unsigned irq, const char *name, const char *device, int queue, const char *want,
                                   const char *eff, unsigned ticks);

/* Logs one applied action at info with the journal fields ACTION=, IRQ=
 * (IRQ moves), CPU_FROM= and CPU_TO= (all but the flow counts), DEVICE=
 * and QUEUE= (when the action has them) and REASON=.  line is
 * action_format()'s; result an apply_action() result >= 0. */
void daemon_log_action(const struct action *a, const char *line, int result);

/* Objects whose failure was logged, so a persistent condition is said once
 * (STYLE.md 8) until it changes error class or succeeds; repeats go to
 * debug through rl. */
struct daemon_failed_object {
        char key[64];
        enum action_failure cls;
};
struct daemon_failures {
        struct daemon_failed_object *v;
        size_t n, allocated;
        struct log_ratelimit rl;
};
/* Logs a failed action (r < 0) once per object and error class; now in
 * microseconds feeds the repeat limit. */
void daemon_log_action_failure(struct daemon_failures *fs, const struct action *a, const char *line, int r,
                               uint64_t now);
/* The action's object succeeded: a later failure is news again. */
void daemon_failures_forget(struct daemon_failures *fs, const struct action *a);
void daemon_failures_free(struct daemon_failures *fs);

/* "Failed to WHAT, skipping this tick: %m" at warning, as rl allows; the
 * first message after a suppressed run says how many were left out. */
void daemon_log_tick_failure(struct log_ratelimit *rl, int r, const char *what, uint64_t now);
/* After each policy run (r its result): a failure is logged once per errno
 * (*last keeps it; the same failure again only at debug), and the first
 * success after one says the policy works again. */
void daemon_log_policy_result(int *last, int r);
