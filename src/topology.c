/* CPU topology from sys/devices/system/{cpu,node}, read through rootfs. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "rootfs.h"
#include "topology.h"
#include "util.h"

#define CPU_DIR "sys/devices/system/cpu"
#define NODE_DIR "sys/devices/system/node"

/* Reads a cpulist file; a missing or empty file is the empty set.  Other
 * errors are returned, with the empty set. */
static int read_cpulist_optional(int rootfd, const char *path, cpuset_t *ret) {
        _cleanup_(freep) char *buf = NULL;
        int r;

        cpuset_zero(ret);
        r = rootfs_read(rootfd, path, &buf, NULL);
        if (r == -ENOENT)
                return 0;
        if (r >= 0)
                r = cpuset_parse_list(buf, ret);
        if (r < 0)
                cpuset_zero(ret);
        return r;
}

static int read_int_file(int rootfd, const char *path, int *ret) {
        char line[64];
        int r;

        r = rootfs_read_line(rootfd, path, line, sizeof(line));
        if (r < 0)
                return r;
        return util_parse_int(util_strstrip(line), (size_t) -1, ret);
}

/* Present CPUs: the "present" file, else the cpuN directories. */
static int read_present(int rootfd, cpuset_t *ret) {
        struct dirent *de;
        DIR *d;
        int r;

        r = read_cpulist_optional(rootfd, CPU_DIR "/present", ret);
        if (r < 0)
                return r;
        if (!cpuset_empty(ret))
                return 0;

        r = rootfs_fdopendir(rootfd, CPU_DIR, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                int cpu;

                if (util_parse_numbered(de->d_name, "cpu", "", &cpu) && cpu < CPUSET_MAX)
                        cpuset_set(ret, cpu);
        }
        closedir(d);
        return cpuset_empty(ret) ? -ENOENT : 0;
}

/* Online CPUs: the "online" file, else per-CPU cpuN/online where a missing
 * file means online (cpu0 usually cannot be offlined and has none). */
static int read_online(int rootfd, const cpuset_t *present, cpuset_t *ret) {
        int r;

        r = read_cpulist_optional(rootfd, CPU_DIR "/online", ret);
        if (r < 0)
                return r;
        if (!cpuset_empty(ret))
                return 0;
        CPUSET_FOREACH(cpu, present) {
                char path[128];
                int v;

                snprintf(path, sizeof(path), CPU_DIR "/cpu%d/online", cpu);
                r = read_int_file(rootfd, path, &v);
                if (r == -ENOENT || (r == 0 && v != 0))
                        cpuset_set(ret, cpu);
        }
        return 0;
}

static int node_cmp(const void *a, const void *b) {
        const struct topology_node *x = a, *y = b;
        return (x->id > y->id) - (x->id < y->id);
}

/* NUMA nodes from sys/devices/system/node/nodeN/cpulist.  No node directory
 * at all (CONFIG_NUMA=n) means one node 0 holding every online CPU. */
static int read_nodes(int rootfd, struct topology *t) {
        size_t allocated = 0;
        struct dirent *de;
        DIR *d;
        int r;

        r = rootfs_fdopendir(rootfd, NODE_DIR, &d);
        if (r == 0) {
                while ((de = readdir(d))) {
                        struct topology_node *n;
                        char path[128];
                        int id;

                        if (!util_parse_numbered(de->d_name, "node", "", &id))
                                continue;
                        r = util_grow((void **) &t->nodes, &allocated, t->n_nodes + 1, sizeof(*t->nodes));
                        if (r < 0)
                                break;
                        n = &t->nodes[t->n_nodes];
                        n->id = id;
                        snprintf(path, sizeof(path), NODE_DIR "/node%d/cpulist", id);
                        /* a garbled node file: keep the node, CPU-less */
                        (void) read_cpulist_optional(rootfd, path, &n->cpus);
                        cpuset_and(&n->cpus, &n->cpus, &t->online);
                        t->n_nodes++;
                }
                closedir(d);
                if (r < 0)
                        return r;
        } else if (r != -ENOENT)
                return r;

        if (t->n_nodes == 0) {
                t->nodes = calloc(1, sizeof(*t->nodes));
                if (!t->nodes)
                        return -ENOMEM;
                t->nodes[0].id = 0;
                t->nodes[0].cpus = t->online;
                t->n_nodes = 1;
        }
        qsort(t->nodes, t->n_nodes, sizeof(*t->nodes), node_cmp);
        for (size_t i = 0; i < t->n_nodes; i++)
                CPUSET_FOREACH(cpu, &t->nodes[i].cpus)
                        if (cpu <= t->max_cpu && t->cpus[cpu].node < 0)
                                t->cpus[cpu].node = t->nodes[i].id;
        return 0;
}

/* Host-unique core numbers and SMT indexes.  Siblings from
 * thread_siblings_list, else the same (package, core_id); cores numbered
 * in the order of their lowest online CPU. */
static void number_cores(struct topology *t, const cpuset_t *siblings) {
        int next_core = 0;

        CPUSET_FOREACH(cpu, &t->online) {
                struct topology_cpu *c;
                cpuset_t sib;
                int first;

                if (cpu > t->max_cpu)
                        break;
                c = &t->cpus[cpu];
                cpuset_and(&sib, &siblings[cpu], &t->online);
                if (cpuset_empty(&sib) && c->core_id >= 0)
                        for (int o = 0; o < cpu; o++)
                                if (cpuset_isset(&t->online, o) && t->cpus[o].core_id == c->core_id &&
                                    t->cpus[o].package_id == c->package_id)
                                        cpuset_set(&sib, o);
                cpuset_set(&sib, cpu);

                first = cpuset_first(&sib);
                if (first == cpu || t->cpus[first].core < 0) {
                        c->core = next_core++;
                        c->smt_index = 0;
                } else {
                        c->core = t->cpus[first].core;
                        c->smt_index = 0;
                        CPUSET_FOREACH(o, &sib)
                                c->smt_index += o < cpu && t->cpus[o].core == c->core;
                }
        }
}

int topology_cpu_bound(int rootfd, const struct topology *t) {
        cpuset_t possible;
        int last;

        /* missing (an empty set), unparsable or empty: no bound */
        if (read_cpulist_optional(rootfd, CPU_DIR "/possible", &possible) < 0 || cpuset_empty(&possible))
                return CPUSET_MAX;
        last = MAX(cpuset_last(&possible), t ? t->max_cpu : -1);
        return last + 1;
}

int topology_read(int rootfd, struct topology *ret) {
        _cleanup_(topology_free) struct topology t = {};
        _cleanup_(freep) cpuset_t *siblings = NULL;
        int r;

        r = read_present(rootfd, &t.present);
        if (r < 0)
                return r;
        r = read_online(rootfd, &t.present, &t.online);
        if (r < 0)
                return r;
        cpuset_or(&t.present, &t.present, &t.online);
        t.max_cpu = cpuset_last(&t.present);
        if (t.max_cpu < 0)
                return -ENOENT;

        /* unparsable is empty: some kernels print "(null)" in nohz_full */
        (void) read_cpulist_optional(rootfd, CPU_DIR "/isolated", &t.isolated);
        (void) read_cpulist_optional(rootfd, CPU_DIR "/nohz_full", &t.nohz_full);

        t.cpus = calloc(t.max_cpu + 1, sizeof(*t.cpus));
        siblings = calloc(t.max_cpu + 1, sizeof(*siblings));
        if (!t.cpus || !siblings)
                return -ENOMEM;
        for (int cpu = 0; cpu <= t.max_cpu; cpu++) {
                struct topology_cpu *c = &t.cpus[cpu];
                char path[160];

                *c = (struct topology_cpu) {
                        .cpu = cpu,
                        .present = cpuset_isset(&t.present, cpu),
                        .online = cpuset_isset(&t.online, cpu),
                        .node = -1,
                        .core_id = -1,
                        .package_id = -1,
                        .core = -1,
                        .smt_index = -1,
                        .isolated = cpuset_isset(&t.isolated, cpu),
                        .nohz_full = cpuset_isset(&t.nohz_full, cpu),
                };
                cpuset_zero(&siblings[cpu]);
                if (!c->online) /* no topology directory */
                        continue;
                snprintf(path, sizeof(path), CPU_DIR "/cpu%d/topology/core_id", cpu);
                (void) read_int_file(rootfd, path, &c->core_id); /* -1 unless it reads */
                snprintf(path, sizeof(path), CPU_DIR "/cpu%d/topology/physical_package_id", cpu);
                (void) read_int_file(rootfd, path, &c->package_id);
                snprintf(path, sizeof(path), CPU_DIR "/cpu%d/topology/thread_siblings_list", cpu);
                (void) read_cpulist_optional(rootfd, path, &siblings[cpu]);
        }
        number_cores(&t, siblings);

        r = read_nodes(rootfd, &t);
        if (r < 0)
                return r;
        /* CPUs no node lists: the cpuN/nodeM link, else a one-node host's node */
        for (int cpu = 0; cpu <= t.max_cpu; cpu++) {
                struct topology_cpu *c = &t.cpus[cpu];
                char path[160];

                if (c->node >= 0 || !c->present)
                        continue;
                for (size_t i = 0; i < t.n_nodes; i++) {
                        snprintf(path, sizeof(path), CPU_DIR "/cpu%d/node%d", cpu, t.nodes[i].id);
                        if (rootfs_exists(rootfd, path) > 0) {
                                c->node = t.nodes[i].id;
                                break;
                        }
                }
                if (c->node < 0 && t.n_nodes == 1)
                        c->node = t.nodes[0].id;
        }

        *ret = t;
        t = (struct topology) {};
        return 0;
}

void topology_free(struct topology *t) {
        if (!t)
                return;
        free(t->cpus);
        free(t->nodes);
        *t = (struct topology) {};
}

void topology_eligible(const struct topology *t, const cpuset_t *banned, cpuset_t *ret) {
        cpuset_andnot(ret, &t->online, &t->isolated);
        cpuset_andnot(ret, ret, &t->nohz_full);
        if (banned)
                cpuset_andnot(ret, ret, banned);
}
