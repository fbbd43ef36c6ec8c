/* Worker discovery: the processes and threads [worker] sections match
 * (comm, cmdline regex, unit cgroup, pidfile); kernel threads skipped. */
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
        char comm[64];           /* util_cescape()d: any user names a process */
        unsigned long long starttime; /* field 22 of proc/PID/stat: tells PID reuse */
        struct worker_thread *threads; /* sorted by tid */
        size_t n_threads;
};

struct worker_set {
        struct worker_proc *procs; /* sorted by (worker, pid) */
        size_t n_procs;
};

/* The most of /proc/PID/cmdline read: a process chooses its length. */
#define WORKERS_CMDLINE_MAX 4096

/* Scans proc/ for c->workers; what exits meanwhile is skipped. */
int workers_discover(int rootfd, const struct config *c, struct worker_set *ret);
void workers_free(struct worker_set *ws);
/* The thread k names gets cpus as allowed set, as a re-read after a write would. */
struct knob_key;
void workers_set_knob(struct worker_set *ws, const struct knob_key *k, const cpuset_t *cpus);
/* The lowest pid whose comm is comm: 1, 0 when none, -errno.  With
 * same_path, one whose mount namespace shows another file there does not count. */
int workers_find_comm(int rootfd, const char *comm, const char *same_path, pid_t *ret_pid);

/* Cpus_allowed_list of a status buffer: 0, -ENOENT, -EINVAL.  Pure. */
int workers_parse_status_cpus(const char *buf, size_t len, cpuset_t *ret);
/* Whether a cgroup path component is unit (or unit.service).  Pure. */
bool workers_cgroup_has_unit(const char *buf, size_t len, const char *unit);
