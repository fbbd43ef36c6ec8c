/* irqsteerd: the lifecycle and the sd-event loop around the tick engine
 * (engine.h): configuration load and reload, capability dropping, crash
 * journal recovery, sd_notify readiness/status/watchdog, SIGHUP reload,
 * SIGTERM/SIGINT stop with restore, runtime bans (inotify), the rtnetlink
 * link monitor; what it reports (status line, status.json, metrics, load
 * lines) comes from report.h.  main() only parses options. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "action.h"
#include "apply.h"
#include "config.h"
#include "cpuset.h"
#include "log.h"

/* MESSAGE_ID= of the stop a conflicting unit's start caused (irqsteerd(8),
 * LOGGING). */
#define DAEMON_MID_CONFLICT "502d96179ee3415a82590b64ae26fda7"

/* Exit codes of irqsteerd. */
enum {
        DAEMON_EXIT_OK = 0,
        DAEMON_EXIT_FAILURE = 1,  /* startup failed, fatal loop error, --check-config found problems */
        DAEMON_EXIT_USAGE = 2,    /* bad command line */
        DAEMON_EXIT_LOCKED = 3,   /* another irqsteerd holds the state directory or the root */
        DAEMON_EXIT_UNTRUSTED = 77, /* the state directory or a file in it may be written by another user
                                     * (EX_NOPERM) */
        DAEMON_EXIT_CONFIG = 78, /* the configuration file is invalid or unreadable at start (EX_CONFIG,
                                   * which systemd shows as CONFIG) */
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

/* --check-config: loads path (NULL: the default path, which may be
 * missing), prints "configuration OK" to out or every problem as
 * "FILE:LINE: KEY: problem" to err; also fails when the irqsteerd running
 * on state_dir (NULL: the configured one) dropped a capability the file
 * needs.  Returns the exit code (0 or 1). */
int daemon_check_config(const char *path, const char *state_dir, FILE *out, FILE *err);

/* --reload PID: reloads the irqsteerd running as pid, whose own options
 * (its command line) are running, and waits for its verdict: checks the
 * file as --check-config does, sends SIGHUP, waits until the daemon's
 * status.json counts one more reload and says whether it applied it (a
 * failure's reason to err).  Returns the exit code (0 or 1). */
int daemon_reload_running(pid_t pid, const struct daemon_options *running, FILE *out, FILE *err);
/* Formats one config problem as "FILE:LINE: KEY: problem" (LINE and KEY
 * left out when unknown).  Pure. */
int daemon_format_config_error(const struct config_error *e, char *buf, size_t len);
