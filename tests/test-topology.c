/* Topology from fixture trees: host64 (2 sockets x 16 cores x 2 threads),
 * vm2 (no NUMA, no caches, an offline CPU) and small generated trees for
 * the fallbacks. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

#include "rootfs.h"
#include "topology.h"
#include "testlib.h"
#include "util.h"

static int open_fixture(const char *name) {
        char path[4096];
        int fd = rootfs_open(fixture_path(name, path, sizeof(path)));
        if (fd < 0)
                fail_msg("cannot open fixture %s: %s", path, strerror(-fd));
        return fd;
}

static void assert_list(const char *what, const cpuset_t *s, const char *want) {
        char buf[512];
        assert_int_equal(cpuset_format_list(s, buf, sizeof(buf)), 0);
        if (strcmp(buf, want) != 0)
                fail_msg("%s: got '%s', want '%s'", what, buf, want);
}

static void test_host64(_unused_ void **state) {
        static const struct {
                const char *what;
                int cpu, node, package_id, core_id, core, smt_index;
                bool isolated;
        } cases[] = {
                { "cpu0: first thread of core 0", 0, 0, 0, 0, 0, 0, false },
                { "cpu32: SMT sibling of cpu0", 32, 0, 0, 0, 0, 1, false },
                { "cpu7: core_id hole (8) but dense core 7", 7, 0, 0, 8, 7, 0, false },
                { "cpu16: package 1 reuses core_id 0", 16, 1, 1, 0, 16, 0, false },
                { "cpu48: sibling of cpu16", 48, 1, 1, 0, 16, 1, false },
                { "cpu47: node 0 second thread", 47, 0, 0, 17, 15, 1, false },
                { "cpu31: last core of package 1", 31, 1, 1, 17, 31, 0, false },
                { "cpu62: isolated", 62, 1, 1, 16, 30, 1, true },
                { "cpu63: isolated", 63, 1, 1, 17, 31, 1, true },
        };
        struct topology t;
        int fd = open_fixture("host64");
        cpuset_t elig, banned, cores;

        assert_int_equal(topology_read(fd, &t), 0);
        close(fd);

        assert_int_equal(t.max_cpu, 63);
        assert_list("present", &t.present, "0-63");
        assert_list("online", &t.online, "0-63");
        assert_list("isolated", &t.isolated, "62-63");
        assert_list("nohz_full (empty file)", &t.nohz_full, "");
        assert_int_equal(t.n_nodes, 2);
        assert_int_equal(t.nodes[0].id, 0);
        assert_list("node0", &t.nodes[0].cpus, "0-15,32-47");
        assert_int_equal(t.nodes[1].id, 1);
        assert_list("node1", &t.nodes[1].cpus, "16-31,48-63");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const struct topology_cpu *c = &t.cpus[cases[i].cpu];
                if (c->cpu != cases[i].cpu || !c->present || !c->online || c->node != cases[i].node ||
                    c->package_id != cases[i].package_id || c->core_id != cases[i].core_id ||
                    c->core != cases[i].core || c->smt_index != cases[i].smt_index ||
                    c->isolated != cases[i].isolated || c->nohz_full)
                        fail_msg("%s: cpu %d node %d pkg %d core_id %d core %d smt %d iso %d",
                                 cases[i].what, c->cpu, c->node, c->package_id, c->core_id, c->core,
                                 c->smt_index, c->isolated);
        }

        /* 32 cores, two threads each, siblings on the same node. */
        cpuset_zero(&cores);
        for (int cpu = 0; cpu <= t.max_cpu; cpu++) {
                const struct topology_cpu *c = &t.cpus[cpu];
                int n = 0;
                cpuset_set(&cores, c->core);
                for (int o = 0; o <= t.max_cpu; o++)
                        if (t.cpus[o].core == c->core) {
                                n++;
                                assert_int_equal(t.cpus[o].node, c->node);
                        }
                if (n != 2)
                        fail_msg("core %d of cpu %d has %d threads", c->core, cpu, n);
                assert_int_equal(c->smt_index, cpu >= 32);
        }
        assert_list("core numbers", &cores, "0-31");

        topology_eligible(&t, NULL, &elig);
        assert_list("eligible: online minus isolated", &elig, "0-61");
        assert_int_equal(cpuset_parse_list("0,32", &banned), 0);
        topology_eligible(&t, &banned, &elig);
        assert_list("eligible minus banned", &elig, "1-31,33-61");
        topology_free(&t);
}

static void test_vm2(_unused_ void **state) {
        struct topology t;
        int fd = open_fixture("vm2");
        cpuset_t elig;

        assert_int_equal(topology_read(fd, &t), 0);
        assert_int_equal(topology_cpu_bound(fd, &t), 4);
        close(fd);
        assert_int_equal(t.max_cpu, 3);
        assert_list("present", &t.present, "0-3");
        assert_list("online", &t.online, "0-2");
        assert_list("isolated (empty)", &t.isolated, "");
        assert_list("nohz_full (missing)", &t.nohz_full, "");
        assert_int_equal(t.n_nodes, 1);
        assert_int_equal(t.nodes[0].id, 0);
        assert_list("no node dir: node 0 = online", &t.nodes[0].cpus, "0-2");
        for (int cpu = 0; cpu <= 2; cpu++) {
                const struct topology_cpu *c = &t.cpus[cpu];
                assert_true(c->online);
                assert_int_equal(c->node, 0);
                assert_int_equal(c->core, cpu);
                assert_int_equal(c->smt_index, 0);
        }
        /* Offline: present, no topology directory. */
        assert_true(t.cpus[3].present);
        assert_false(t.cpus[3].online);
        assert_int_equal(t.cpus[3].core, -1);
        assert_int_equal(t.cpus[3].core_id, -1);
        assert_int_equal(t.cpus[3].node, 0);
        topology_eligible(&t, NULL, &elig);
        assert_list("eligible", &elig, "0-2");
        topology_free(&t);
}

/* ---- small trees built by the test for the fallbacks ---- */

static void put(const char *root, const char *rel, const char *content) {
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = 0;
                mkdir(path, 0755);
                *p = '/';
        }
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(content, f);
        assert_int_equal(fclose(f), 0);
}

static int rm_one(const char *path, _unused_ const struct stat *st, _unused_ int flag, _unused_ struct FTW *ftw) {
        return remove(path);
}

static void rm_tree(const char *root) {
        nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_fallbacks(_unused_ void **state) {
        static const struct {
                const char *what;
                const char *files[24][2];
                int r;
                const char *online, *nohz_full;
                int node_of_1, core_of_1, smt_of_1, n_nodes;
                int bound;       /* topology_cpu_bound */
        } cases[] = {
                { "no online file: cpu0 without cpuN/online is online, cpu2 offline",
                  { { "present", "0-2\n" },
                    { "cpu1/online", "1\n" }, { "cpu2/online", "0\n" },
                    { "cpu0/topology/core_id", "0\n" }, { "cpu0/topology/physical_package_id", "0\n" },
                    { "cpu1/topology/core_id", "0\n" }, { "cpu1/topology/physical_package_id", "0\n" },
                    { "nohz_full", "(null)\n" } },
                  0, "0-1", "", 0, 0, 1, 1, CPUSET_MAX },
                { "siblings unreadable: (package, core_id) pairs CPUs",
                  { { "present", "0-3\n" }, { "online", "0-3\n" },
                    { "cpu0/topology/core_id", "0\n" }, { "cpu0/topology/physical_package_id", "0\n" },
                    { "cpu1/topology/core_id", "1\n" }, { "cpu1/topology/physical_package_id", "0\n" },
                    { "cpu2/topology/core_id", "0\n" }, { "cpu2/topology/physical_package_id", "0\n" },
                    { "cpu3/topology/core_id", "1\n" }, { "cpu3/topology/physical_package_id", "0\n" },
                    { "cpu1/topology/thread_siblings_list", "garbage\n" },
                    { "nohz_full", "3\n" }, { "possible", "0-7\n" } },
                  0, "0-3", "3", 0, 1, 0, 1, 8 },
                { "no present file: cpuN dirs count, node dirs with a gap",
                  { { "cpu0/topology/core_id", "0\n" }, { "cpu1/topology/core_id", "0\n" },
                    { "cpu1/topology/thread_siblings_list", "1\n" },
                    { "../node/node2/cpulist", "1\n" }, { "../node/node0/cpulist", "0\n" },
                    { "possible", "0\n" } },
                  0, "0-1", "", 2, 1, 0, 2, 2 },
                { "no cpu directory at all", { { "../node/node0/cpulist", "0\n" } },
                  -ENOENT, NULL, NULL, 0, 0, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char root[] = "/tmp/test-topology.XXXXXX";
                struct topology t;
                int fd, r, bound = 0;

                assert_non_null(mkdtemp(root));
                put(root, "sys/devices/system/.keep", "");
                for (size_t k = 0; k < ELEMENTSOF(cases[i].files) && cases[i].files[k][0]; k++) {
                        char rel[256];
                        snprintf(rel, sizeof(rel), "sys/devices/system/cpu/%s", cases[i].files[k][0]);
                        put(root, rel, cases[i].files[k][1]);
                }
                fd = rootfs_open(root);
                assert_true(fd >= 0);
                r = topology_read(fd, &t);
                if (r == 0)
                        bound = topology_cpu_bound(fd, &t);
                close(fd);
                rm_tree(root);
                if (r != cases[i].r)
                        fail_msg("%s: topology_read gave %d, want %d", cases[i].what, r, cases[i].r);
                if (r < 0)
                        continue;
                assert_list(cases[i].what, &t.online, cases[i].online);
                assert_list(cases[i].what, &t.nohz_full, cases[i].nohz_full);
                if (bound != cases[i].bound)
                        fail_msg("%s: CPU bound %d, want %d", cases[i].what, bound, cases[i].bound);
                if (t.cpus[1].node != cases[i].node_of_1 || t.cpus[1].core != cases[i].core_of_1 ||
                    t.cpus[1].smt_index != cases[i].smt_of_1 || (int) t.n_nodes != cases[i].n_nodes)
                        fail_msg("%s: cpu1 node %d core %d smt %d, %zu nodes", cases[i].what, t.cpus[1].node,
                                 t.cpus[1].core, t.cpus[1].smt_index, t.n_nodes);
                topology_free(&t);
        }
}

static void test_live(_unused_ void **state) {
        struct topology t;
        int fd = rootfs_open("/");
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        assert_true(fd >= 0);
        assert_int_equal(topology_read(fd, &t), 0);
        close(fd);
        assert_int_equal(cpuset_count(&t.online), n);
        assert_true(t.n_nodes >= 1);
        CPUSET_FOREACH(cpu, &t.online) {
                assert_true(t.cpus[cpu].core >= 0);
                assert_true(t.cpus[cpu].node >= 0);
        }
        topology_free(&t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_host64),
                cmocka_unit_test(test_vm2),
                cmocka_unit_test(test_fallbacks),
                cmocka_unit_test(test_live),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
