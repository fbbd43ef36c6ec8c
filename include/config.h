/* Configuration parsed into a fresh struct and validated, then swapped in
 * by the caller; others only read it.  Keys: irqsteer.conf(5). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cpuset.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/irqsteer/irqsteer.conf"
#define CONFIG_DEFAULT_STATE_DIR "/run/irqsteer"

enum worker_policy {
        WORKER_SPREAD,           /* one CPU per thread, away from hot network CPUs */
        WORKER_COLOCATE,         /* thread i next to queue i of the interface */
        WORKER_AVOID_NET,        /* only CPUs that serve no queue */
        WORKER_POLICY_MAX,
        WORKER_POLICY_INVALID = -1,
};

enum tristate {
        TRI_INHERIT = -1,        /* take the [balance] value */
        TRI_NO = 0,
        TRI_YES = 1,
};

#define CONFIG_BAN_IRQS_MAX 1024

struct config_interface {
        char *match;             /* glob on the interface name ("eth*") */
        bool manage;             /* false: leave its IRQs and masks alone */
        cpuset_t cpus;           /* allowed CPUs (empty = all eligible) */
        enum tristate rps, xps, rfs;
        enum tristate takeover;  /* take over RPS masks set before the start; inherit [balance] */
        const char *file;        /* where the section first appears, for messages */
        unsigned line;
};

struct config_worker {
        char *name;
        char *match_name;        /* comm (/proc/PID/comm), exact; or NULL */
        char *match_cmdline;     /* POSIX extended regex on the command line; or NULL */
        char *match_unit;        /* systemd unit whose cgroup holds the processes; or NULL */
        char *pidfile;           /* path to a pidfile; or NULL */
        enum worker_policy policy;
        cpuset_t cpus;           /* allowed CPUs (empty = all eligible) */
        char *interface;         /* for colocate: interface whose queues to follow; or NULL = busiest */
        const char *file;        /* as in config_interface */
        unsigned line;
};

struct config {
        char *path;              /* file it came from, NULL for built-in defaults */
        char **dropins;          /* the drop-ins read after it (PATH.d/NAME.conf), in order */
        size_t n_dropins;

        /* [daemon] */
        uint64_t interval_usec;  /* sampling interval */
        uint64_t calm_interval_usec; /* while every CPU is calm (policy_pace); below interval: interval */
        uint64_t fast_interval_usec; /* while a CPU nears hot (policy_pace); 0 = never faster */
        uint64_t irq_rate_interval_usec; /* /proc/interrupts at least this often; 0 = every tick */
        char *state_dir;
        char *metrics_file;      /* Prometheus text file written each tick; NULL = none */
        char *irqbalance_env_files; /* irqbalance's environment files, blank-separated; NULL = none */
        int log_level;           /* LOG_* */
        bool restore_on_exit;
        bool dry_run;

        /* [balance] */
        double hot_enter;        /* share 0..1 of CPU time in irq+softirq */
        double hot_exit;         /* < hot_enter */
        unsigned hot_samples;
        double balance_ratio;    /* imbalance (load / mean load) that makes a CPU hot below hot_enter; 0 = off */
        double balance_floor;    /* ... and at least this share above the mean; the least gain of a move */
        double saturated_idle;   /* idle share below which a CPU counts as saturated */
        double saturated_share;  /* irq+softirq share of a saturated CPU that makes it hot */
        double smoothing;        /* EWMA alpha in (0, 1] */
        double min_gain;         /* minimum drop of the projected peak, share 0..1 */
        uint64_t min_dwell_usec;
        uint64_t max_dwell_usec; /* back-off cap for objects that bounce */
        uint64_t external_hold_usec; /* an object changed by someone else is left alone this long */
        unsigned max_moves;      /* per tick */
        bool initial_layout;
        bool rps;
        bool rfs;
        uint32_t rps_sock_flow_entries;
        bool xps;
        bool single_queue_rps;   /* RPS on single-queue NICs from the start */
        bool takeover;           /* RPS masks set before the start are irqsteerd's to change */
        bool rps_trial;          /* RPS for NICs without queue IRQs given back when it costs throughput */
        double rps_exclude_irq_rate; /* interrupts/s above which the IRQ CPU leaves the RPS set */
        cpuset_t banned_cpus;
        bool other_irqs;         /* IRQs that serve no NIC queue kept off banned/isolated CPUs */
        bool napi_threads;       /* threaded NAPI's kthreads placed like queue IRQs (policy-napi.c) */
        bool threaded_napi;      /* threaded NAPI turned on as a relief, kept by a trial */
        /* irqbalance's --banirq; fixed, so that a struct config copies */
        struct config_irqlist {
                unsigned v[CONFIG_BAN_IRQS_MAX]; /* ascending, no duplicates */
                size_t n;
        } ban_irqs;

        struct config_interface *interfaces;
        size_t n_interfaces;
        struct config_worker *workers;
        size_t n_workers;
};

bool config_irq_banned(const struct config *c, unsigned irq);

struct config_error {
        char *file;
        unsigned line;           /* 0 when not tied to a line */
        char *key;               /* may be NULL */
        char *message;
};

struct config_errors {
        struct config_error *v;
        size_t n;
};

int config_defaults(struct config *c);
/* buf (file path's text) on top of the defaults into *ret: 0, or -EINVAL
 * with every problem in errs (caller frees). */
int config_parse(const char *path, const char *buf, size_t len, struct config *ret,
                 struct config_errors *errs);
/* path, then PATH.d/NAME.conf in strcmp order, each on top of the ones
 * before (a later file's sections come first).  A missing path is -ENOENT
 * unless allow_missing; a missing PATH.d is none, an unreadable one an
 * error. */
int config_load(const char *path, bool allow_missing, struct config *ret, struct config_errors *errs);
void config_free(struct config *c);
void config_errors_free(struct config_errors *errs);
/* Each error as "FILE:LINE: KEY: message". */
void config_errors_print(const struct config_errors *errs, FILE *f);
/* config_load() of path (NULL: CONFIG_DEFAULT_PATH, which may be missing),
 * its problems printed to err; one without any as "PREFIXPATH: error". */
int config_load_print(const char *path, const char *prefix, struct config *ret, FILE *err);

/* c in the file's syntax, every key with a value: it parses back the same. */
void config_format(FILE *f, const struct config *c);

/* c's members in an open JSON object: path, dropins, every key of
 * [daemon] and [balance], objects interfaces and workers. */
struct json_writer;
void config_json(struct json_writer *w, const struct config *c);

/* The first interface section matching ifname, or NULL. */
const struct config_interface *config_interface_for(const struct config *c, const char *ifname);

const char *worker_policy_to_string(enum worker_policy p);
enum worker_policy worker_policy_from_string(const char *s);
