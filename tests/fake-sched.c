/* The sched_*affinity seam of tests/fake-sched.h: fake TIDs only, the rest
 * pass through. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <sched.h>

#include "fake-sched.h"

struct fake_task fakes[FAKE_TASKS_MAX];
size_t n_fakes;

int __real_sched_setaffinity(pid_t pid, size_t sz, const cpu_set_t *set);
int __real_sched_getaffinity(pid_t pid, size_t sz, cpu_set_t *set);
int __wrap_sched_setaffinity(pid_t pid, size_t sz, const cpu_set_t *set);
int __wrap_sched_getaffinity(pid_t pid, size_t sz, cpu_set_t *set);

struct fake_task *fake_find(pid_t tid) {
        for (size_t i = 0; i < n_fakes; i++)
                if (fakes[i].tid == tid)
                        return &fakes[i];
        return NULL;
}

int __wrap_sched_setaffinity(pid_t pid, size_t sz, const cpu_set_t *set) {
        struct fake_task *t = fake_find(pid);

        if (!t)
                return __real_sched_setaffinity(pid, sz, set);
        t->set_calls++;
        if (t->set_errno) {
                errno = t->set_errno;
                return -1;
        }
        cpuset_zero(&t->mask);
        for (int c = 0; c < (int) (sz * 8) && c < CPUSET_MAX; c++)
                if (CPU_ISSET_S(c, sz, set))
                        cpuset_set(&t->mask, c);
        if (!cpuset_empty(&t->clamp))
                cpuset_and(&t->mask, &t->mask, &t->clamp);
        return 0;
}

int __wrap_sched_getaffinity(pid_t pid, size_t sz, cpu_set_t *set) {
        struct fake_task *t = fake_find(pid);

        if (!t)
                return __real_sched_getaffinity(pid, sz, set);
        if (t->get_errno) {
                errno = t->get_errno;
                return -1;
        }
        CPU_ZERO_S(sz, set);
        CPUSET_FOREACH(c, &t->mask)
                if (c < (int) (sz * 8))
                        CPU_SET_S(c, sz, set);
        return 0;
}
