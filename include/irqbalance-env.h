/* irqbalance's environment files (/etc/sysconfig/irqbalance,
 * /etc/default/irqbalance), where cri-o and tuned write the CPUs they want
 * kept free of IRQs: IRQBALANCE_BANNED_CPUS (a hex mask in irqbalance's
 * form, comma-separated 32-bit groups, most significant first) and
 * IRQBALANCE_BANNED_CPULIST (a CPU list).  irqsteerd keeps their union free
 * as the runtime ban IRQBALANCE_ENV_BAN_NAME (bans.h).  Other lines of the
 * files are irqbalance's business and ignored. */
#pragma once

#include <stddef.h>

#include "cpuset.h"

#define IRQBALANCE_ENV_BAN_NAME "irqbalance-env"
#define IRQBALANCE_ENV_DEFAULT_FILES "/etc/sysconfig/irqbalance /etc/default/irqbalance"
#define IRQBALANCE_ENV_FILE_MAX 65536

/* Parses a file's contents as a shell or systemd EnvironmentFile= would
 * assign them: KEY=VALUE lines, "export " allowed, values in double or
 * single quotes or bare, '#' and ';' comment lines, a bare value ending at
 * " #"; a key set twice counts the last time.  An empty or unset value
 * bans nothing; both keys set: their union.  0 with *ret, or -EINVAL /
 * -ERANGE with *ret untouched and problem holding "line N: KEY: what". */
int irqbalance_env_parse(const char *buf, size_t len, cpuset_t *ret, char *problem, size_t problem_len);

/* Reads and parses path: a missing file bans nothing (0, empty set).  0, or
 * negative errno with problem filled as by irqbalance_env_parse (or with
 * why the file cannot be read). */
int irqbalance_env_load(const char *path, cpuset_t *ret, char *problem, size_t problem_len);
