/* CPU topology from sysfs (via rootfs): online CPUs, NUMA nodes, cores,
 * packages, SMT siblings, shared caches, isolated and nohz_full CPUs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"

struct topology_cpu {
        int cpu;
        bool present;            /* has a cpuN directory */
        bool online;
        int node;                /* NUMA node, 0 when the host has none */
        int core_id;             /* topology/core_id (unique within a package only) */
        int package_id;          /* topology/physical_package_id */
        int core;                /* host-unique core number: SMT siblings share it */
        int smt_index;           /* 0 for the first thread of its core, 1.. for siblings */
        int l2_id, l3_id;        /* lowest CPU sharing that cache level, -1 unknown */
        bool isolated;           /* /sys/devices/system/cpu/isolated */
        bool nohz_full;          /* /sys/devices/system/cpu/nohz_full */
};

struct topology_node {
        int id;
        cpuset_t cpus;           /* online CPUs of the node */
};

struct topology {
        int max_cpu;             /* highest present CPU number */
        struct topology_cpu *cpus;   /* indexed by CPU number, max_cpu+1 entries */
        cpuset_t present, online, isolated, nohz_full;
        struct topology_node *nodes;
        size_t n_nodes;
};

/* Reads sys/devices/system/cpu and sys/devices/system/node.  Missing optional
 * files (caches, nohz_full, nodes on non-NUMA hosts) are tolerated. */
int topology_read(int rootfd, struct topology *ret);
void topology_free(struct topology *t);
/* The CPU numbers this host can ever have: one past the highest of
 * sys/devices/system/cpu/possible and t's present CPUs, CPUSET_MAX when
 * "possible" is missing or unreadable (a fixture tree).  For
 * cpuset_set_limit(): possible CPUs do not change while the system runs. */
int topology_cpu_bound(int rootfd, const struct topology *t);
/* Online CPUs that are not isolated, not nohz_full and not in banned. */
void topology_eligible(const struct topology *t, const cpuset_t *banned, cpuset_t *ret);
