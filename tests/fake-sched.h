/* A sched_{set,get}affinity seam for tests linked with
 * -Wl,--wrap=sched_setaffinity -Wl,--wrap=sched_getaffinity: the TIDs in
 * fakes[] are fake tasks, every other call passes through to the kernel. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "cpuset.h"

struct fake_task {
        pid_t tid;
        cpuset_t mask;
        cpuset_t clamp;          /* non-empty: what set keeps (a cpuset cgroup) */
        int set_errno, get_errno;
        unsigned set_calls;
};

#define FAKE_TASKS_MAX 16
extern struct fake_task fakes[FAKE_TASKS_MAX];
extern size_t n_fakes;

/* The fake task with this TID, or NULL (a real one). */
struct fake_task *fake_find(pid_t tid);
