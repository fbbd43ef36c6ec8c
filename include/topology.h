/* CPU topology from sysfs: CPUs, nodes, cores, SMT, isolation. */
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

/* Reads sys/devices/system/cpu and node; optional files may be missing. */
int topology_read(int rootfd, struct topology *ret);
void topology_free(struct topology *t);
/* One past the highest possible or present CPU (CPUSET_MAX without
 * "possible"), for cpuset_set_limit(). */
int topology_cpu_bound(int rootfd, const struct topology *t);
/* Online CPUs that are not isolated, not nohz_full and not in banned. */
void topology_eligible(const struct topology *t, const cpuset_t *banned, cpuset_t *ret);
