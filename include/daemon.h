/* irqsteerd's lifecycle and sd-event loop around the tick engine: load and
 * reload, capabilities, crash recovery, sd_notify, signals, runtime bans,
 * the link monitor (docs/DESIGN.md, The tick).  main() parses options. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "cpuset.h"

/* MESSAGE_ID= of a stop caused by a conflicting unit (irqsteerd(8)). */
#define DAEMON_MID_CONFLICT "502d96179ee3415a82590b64ae26fda7"

enum {
        DAEMON_EXIT_OK = 0,
        DAEMON_EXIT_FAILURE = 1,
        DAEMON_EXIT_USAGE = 2,
        DAEMON_EXIT_LOCKED = 3,   /* another irqsteerd holds the state directory or the root */
        DAEMON_EXIT_UNTRUSTED = 77, /* EX_NOPERM: another user may write the state directory */
        DAEMON_EXIT_CONFIG = 78,    /* EX_CONFIG: the configuration is invalid at start */
};

/* Command-line settings; "override" ones win over the file across reloads. */
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

/* Runs the daemon until stopped; the exit code. */
int daemon_run(const struct daemon_options *o);

/* --check-config: "configuration OK" to out, or each problem to err; also
 * fails when the running irqsteerd dropped a capability the file needs. */
int daemon_check_config(const char *path, const char *state_dir, FILE *out, FILE *err);

/* --reload PID (started with options running): checks the file as
 * --check-config, sends SIGHUP, waits for status.json's verdict. */
int daemon_reload_running(pid_t pid, const struct daemon_options *running, FILE *out, FILE *err);
/* "FILE:LINE: KEY: problem", LINE and KEY only when known. */
int daemon_format_config_error(const struct config_error *e, char *buf, size_t len);
