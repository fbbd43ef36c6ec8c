/* irqbalance's environment files, where cri-o and tuned name CPUs to keep
 * free of IRQs (IRQBALANCE_BANNED_CPUS, a mask; IRQBALANCE_BANNED_CPULIST):
 * their union becomes the runtime ban IRQBALANCE_ENV_BAN_NAME. */
#pragma once

#include <stddef.h>

#include "cpuset.h"

#define IRQBALANCE_ENV_BAN_NAME "irqbalance-env"
#define IRQBALANCE_ENV_DEFAULT_FILES "/etc/sysconfig/irqbalance /etc/default/irqbalance"
#define IRQBALANCE_ENV_FILE_MAX 65536

/* Parses a file as a shell or EnvironmentFile= would assign it.  0 with
 * *ret, or -EINVAL / -ERANGE with problem "line N: KEY: what". */
int irqbalance_env_parse(const char *buf, size_t len, cpuset_t *ret, char *problem, size_t problem_len);

/* Reads and parses path (missing: bans nothing).  0, or -errno with problem. */
int irqbalance_env_load(const char *path, cpuset_t *ret, char *problem, size_t problem_len);
