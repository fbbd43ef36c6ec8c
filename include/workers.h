/* Worker discovery: the processes and threads that [worker] sections of the
 * config match (by comm, command-line regex, systemd unit cgroup or
 * pidfile), read through rootfs from proc/.  Kernel threads are skipped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "cpuset.h"

struct worker_thread {
        pid_t tid;
        unsigned long long starttime; /* field 22 of proc/PID/task/TID/stat: tells TID reuse */
        cpuset_t allowed;        /* Cpus_allowed_list from proc/PID/task/TID/status */
};

struct worker_proc {
        int worker;              /* index into config->workers */
        pid_t pid;
        char comm[64];           /* util_cescape()d: it is logged and shown, and any user names a process */
        unsigned long long starttime; /* field 22 of proc/PID/stat: tells PID reuse */
        struct worker_thread *threads; /* sorted by tid */
        size_t n_threads;
};

struct worker_set {
        struct worker_proc *procs; /* sorted by (worker, pid) */
        size_t n_procs;
};

/* The most of /proc/PID/cmdline read: a match_cmdline regex sees the
 * start of the command line only (a process chooses its length: 1.9 MB
 * ones read and matched whole at every scan cost seconds a minute). */
#define WORKERS_CMDLINE_MAX 4096

/* Scans proc/ under rootfd for processes matching c->workers.  Processes or
 * threads that exit while being read are skipped, not errors. */
int workers_discover(int rootfd, const struct config *c, struct worker_set *ret);
void workers_free(struct worker_set *ws);
/* What a thread-affinity write leaves behind, as the next discovery would
 * read it: the allowed set of the thread k names (matched by pid, tid and
 * starttime) becomes cpus; other kinds of knob change nothing. */
struct knob_key;
void workers_set_knob(struct worker_set *ws, const struct knob_key *k, const cpuset_t *cpus);
/* The lowest pid of a process whose /proc/PID/comm is comm (under rootfd):
 * 1 with *ret_pid set, 0 when none runs, negative errno.  With same_path
 * (relative to the root, e.g. "proc/irq"), a process whose own root shows
 * another file there (its mount namespace has something else mounted
 * over it) does not count. */
int workers_find_comm(int rootfd, const char *comm, const char *same_path, pid_t *ret_pid);

/* Cpus_allowed_list of a proc/PID/status buffer.  Pure.  0, -ENOENT
 * without the line, -EINVAL when it does not parse. */
int workers_parse_status_cpus(const char *buf, size_t len, cpuset_t *ret);
/* Whether a proc/PID/cgroup buffer puts the process under unit: some path
 * component equals unit (or unit + ".service" when unit has no suffix).
 * Pure. */
bool workers_cgroup_has_unit(const char *buf, size_t len, const char *unit);
