/* Vector space per CPU (vectors.c) against a simulated kernel that, like
 * arch/x86/kernel/apic/vector.c, refuses with ENOSPC an IRQ whose target
 * CPU has no vector left: write() is wrapped (-Wl,--wrap=write) for the
 * smp_affinity_list files of a temporary tree, and everything else passes
 * through. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "cpuset.h"
#include "inventory.h"
#include "rootfs.h"
#include "testlib.h"
#include "util.h"
#include "vectors.h"

enum { NCPU = 4, NIRQ = 260 };

static char tree[] = "/tmp/test-vectors.XXXXXX";
/* What each CPU of the simulated kernel takes. */
static unsigned kernel_limit[NCPU];

ssize_t __real_write(int fd, const void *buf, size_t count);

/* The IRQ whose smp_affinity_list fd is, or -1. */
static int affinity_irq(int fd) {
        char link[64], path[PATH_MAX];
        ssize_t n;
        int irq;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof(path) - 1);
        if (n <= 0)
                return -1;
        path[n] = 0;
        if (strncmp(path, tree, strlen(tree)) != 0 ||
            sscanf(path + strlen(tree), "/proc/irq/%d/smp_affinity_list", &irq) != 1 ||
            !strstr(path, "/smp_affinity_list"))
                return -1;
        return irq;
}

static int effective_of(int irq) {
        char path[PATH_MAX];
        int cpu = -1;
        FILE *f;

        snprintf(path, sizeof(path), "%s/proc/irq/%d/effective_affinity_list", tree, irq);
        f = fopen(path, "re");
        assert_non_null(f);
        assert_int_equal(fscanf(f, "%d", &cpu), 1);
        fclose(f);
        return cpu;
}

static void set_effective(int irq, int cpu) {
        char path[PATH_MAX], val[16];

        snprintf(path, sizeof(path), "proc/irq/%d/effective_affinity_list", irq);
        snprintf(val, sizeof(val), "%d\n", cpu);
        test_write_file(tree, path, val);
}

/* The kernel's side of a write to smp_affinity_list: the IRQ moves to the
 * first CPU of the list (x86 physical destination mode) if that CPU has a
 * vector left, else -ENOSPC and nothing changes. */
ssize_t __wrap_write(int fd, const void *buf, size_t count) {
        int irq = affinity_irq(fd), target, used = 0;
        char val[64];
        cpuset_t set;

        if (irq < 0)
                return __real_write(fd, buf, count);
        snprintf(val, sizeof(val), "%.*s", (int) MIN(count, sizeof(val) - 1), (const char *) buf);
        if (cpuset_parse_list(val, &set) < 0 || (target = cpuset_first(&set)) < 0 || target >= NCPU) {
                errno = EINVAL;
                return -1;
        }
        for (int i = 0; i < NIRQ; i++)
                used += i != irq && effective_of(i) == target;
        if (effective_of(irq) != target && (unsigned) used >= kernel_limit[target]) {
                errno = ENOSPC;
                return -1;
        }
        set_effective(irq, target);
        return __real_write(fd, buf, count);
}

/* The inventory's view of the tree: every IRQ's affinity and effective CPU. */
static void read_inventory(int rootfd, struct inventory *inv) {
        for (int i = 0; i < NIRQ; i++) {
                struct inventory_irq *q = &inv->irqs[i];
                char path[64], val[64];

                q->irq = (unsigned) i;
                snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", i);
                assert_int_equal(rootfs_read_line(rootfd, path, val, sizeof(val)), 0);
                assert_int_equal(test_keep_list(&q->affinity, val), 0);
                q->affinity_readable = true;
                snprintf(path, sizeof(path), "proc/irq/%d/effective_affinity_list", i);
                assert_int_equal(rootfs_read_line(rootfd, path, val, sizeof(val)), 0);
                assert_int_equal(test_keep_list(&q->effective, val), 0);
                q->has_effective = true;
        }
        inv->n_irqs = NIRQ;
}

static int setup(void **state) {
        (void) state;
        memcpy(tree + strlen(tree) - 6, "XXXXXX", 6);
        assert_non_null(mkdtemp(tree));
        for (int i = 0; i < NIRQ; i++) {
                char dir[PATH_MAX], val[16];

                snprintf(dir, sizeof(dir), "%s/proc", tree);
                (void) mkdir(dir, 0755);
                snprintf(dir, sizeof(dir), "%s/proc/irq", tree);
                (void) mkdir(dir, 0755);
                snprintf(dir, sizeof(dir), "%s/proc/irq/%d", tree, i);
                assert_int_equal(mkdir(dir, 0755), 0);
                snprintf(dir, sizeof(dir), "proc/irq/%d/smp_affinity_list", i);
                snprintf(val, sizeof(val), "%d\n", i % NCPU);
                test_write_file(tree, dir, val);
                set_effective(i, i % NCPU);
        }
        return 0;
}

static int teardown(void **state) {
        char cmd[PATH_MAX + 16];

        (void) state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
        return system(cmd) == 0 ? 0 : -1;
}

/* IRQs are piled on CPU1 as long as vectors_room() allows: exactly 200
 * go, the count read back from the tree agrees, and one more (the 201st,
 * written without asking) is refused by the kernel. */
static void test_pile_stops_at_the_limit(void **state) {
        struct inventory inv = {};
        struct vectors v = { .max_cpu = -1 };
        int fd = rootfs_open(tree), moved = 0, extra = -1;

        (void) state;
        assert_true(fd >= 0);
        for (int c = 0; c < NCPU; c++)
                kernel_limit[c] = VECTORS_PER_CPU;
        inv.irqs = calloc(NIRQ, sizeof(*inv.irqs));
        assert_non_null(inv.irqs);
        read_inventory(fd, &inv);
        assert_int_equal(vectors_count(&v, &inv, NCPU - 1), 0);
        assert_int_equal(vectors_used(&v, 1), NIRQ / NCPU);
        for (int i = 0; i < NIRQ; i++) {
                char path[64];
                int from = effective_of(i);

                if (from == 1)
                        continue;
                snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", i);
                if (!vectors_room(&v, 1)) {
                        extra = i;
                        break;
                }
                assert_int_equal(rootfs_write(fd, path, "1"), 0);
                vectors_move(&v, from, 1);
                moved++;
        }
        assert_int_equal(vectors_used(&v, 1), VECTORS_PER_CPU);
        assert_int_equal(moved, VECTORS_PER_CPU - NIRQ / NCPU);
        assert_true(extra >= 0);
        /* the kernel agrees: the 201st is refused */
        {
                char path[64];

                snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", extra);
                assert_int_equal(rootfs_write(fd, path, "1"), -ENOSPC);
        }
        /* counted afresh from what the tree says */
        read_inventory(fd, &inv);
        assert_int_equal(vectors_count(&v, &inv, NCPU - 1), 0);
        assert_int_equal(vectors_used(&v, 1), VECTORS_PER_CPU);
        assert_false(vectors_room(&v, 1));
        assert_true(vectors_room(&v, 2));
        /* a copy moves on its own */
        {
                struct vectors c;

                assert_int_equal(vectors_copy(&c, &v), 0);
                vectors_move(&c, 1, 2);
                assert_true(vectors_room(&c, 1));
                assert_false(vectors_room(&v, 1));
                assert_int_equal(vectors_used(&c, 2), vectors_used(&v, 2) + 1);
                vectors_free(&c);
        }
        inventory_free_sets(&inv);
        free(inv.irqs);
        vectors_free(&v);
        close(fd);
}

/* The first CPU of candidates with room, or -1. */
static int first_with_room(const struct vectors *v, const cpuset_t *candidates) {
        CPUSET_FOREACH(cpu, candidates)
                if (vectors_room(v, cpu))
                        return cpu;
        return -1;
}

/* A kernel with fewer vectors on CPU2 than assumed: the refusal is learned
 * (vectors_full), CPU2 takes nothing more, a recount keeps what was
 * learned, and the IRQ goes to the next candidate. */
static void test_enospc_learned(void **state) {
        struct inventory inv = {};
        struct vectors v = { .max_cpu = -1 };
        int fd = rootfs_open(tree), refused = -1;
        cpuset_t candidates;

        (void) state;
        assert_true(fd >= 0);
        for (int c = 0; c < NCPU; c++)
                kernel_limit[c] = VECTORS_PER_CPU;
        kernel_limit[2] = 80;
        inv.irqs = calloc(NIRQ, sizeof(*inv.irqs));
        assert_non_null(inv.irqs);
        read_inventory(fd, &inv);
        assert_int_equal(vectors_count(&v, &inv, NCPU - 1), 0);
        cpuset_zero(&candidates);
        cpuset_set(&candidates, 2);
        cpuset_set(&candidates, 3);
        for (int i = 0; i < NIRQ && refused < 0; i++) {
                char path[64], val[16];
                int from = effective_of(i), to;

                if (from == 2 || from == 3)
                        continue;
                to = first_with_room(&v, &candidates);
                assert_true(to >= 0);
                snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", i);
                snprintf(val, sizeof(val), "%d", to);
                if (rootfs_write(fd, path, val) == -ENOSPC) {
                        assert_int_equal(to, 2);
                        vectors_full(&v, to);
                        refused = i;
                        /* elsewhere */
                        to = first_with_room(&v, &candidates);
                        assert_int_equal(to, 3);
                        snprintf(val, sizeof(val), "%d", to);
                        assert_int_equal(rootfs_write(fd, path, val), 0);
                }
                vectors_move(&v, from, to);
        }
        assert_true(refused >= 0);
        assert_int_equal(vectors_used(&v, 2), 80);
        assert_false(vectors_room(&v, 2));
        read_inventory(fd, &inv);
        assert_int_equal(vectors_count(&v, &inv, NCPU - 1), 0);
        assert_int_equal(vectors_used(&v, 2), 80);
        assert_false(vectors_room(&v, 2));
        assert_int_equal(effective_of(refused), 3);
        inventory_free_sets(&inv);
        free(inv.irqs);
        vectors_free(&v);
        close(fd);
}

/* No counts: no room anywhere, no crash. */
static void test_empty(void **state) {
        struct vectors v = { .max_cpu = -1 };
        cpuset_t all;

        (void) state;
        cpuset_zero(&all);
        cpuset_set(&all, 0);
        assert_false(vectors_room(&v, 0));
        assert_int_equal(first_with_room(&v, &all), -1);
        assert_int_equal(vectors_used(NULL, 0), 0);
        vectors_move(&v, 0, 1);
        vectors_full(&v, 0);
        assert_int_equal(vectors_count(&v, NULL, 3), 0);
        assert_int_equal(vectors_used(&v, 3), 0);
        assert_true(vectors_room(&v, 3));
        assert_false(vectors_room(&v, 4));
        vectors_free(&v);
}

/* Where a write of a mask lands (vectors_pick, as x86 picks), and the CPU
 * an IRQ counts on (vectors_irq_cpu). */
static void test_pick(void **state) {
        static const struct {
                const char *what;
                const char *mask;
                int here;
                int want;
        } cases[] = {
                { "its CPU in the mask: stays", "0-3", 2, 2 },
                { "its CPU full but in the mask: stays", "0-3", 1, 1 },
                { "elsewhere: the CPU with the most left", "0-2", 3, 2 },
                { "only full CPUs: refused", "1", 3, -1 },
                { "nowhere yet: the most left", "0,1", -1, 0 },
                { "outside the counts: refused", "7", 0, -1 },
        };
        struct vectors v = { .max_cpu = -1 };
        struct inventory_irq irq = {};

        (void) state;
        /* CPU0 10 used, CPU1 full, CPU2 5, CPU3 0 with a limit of 0 */
        assert_int_equal(vectors_count(&v, NULL, 3), 0);
        for (int i = 0; i < 10; i++)
                vectors_move(&v, -1, 0);
        for (int i = 0; i < VECTORS_PER_CPU; i++)
                vectors_move(&v, -1, 1);
        for (int i = 0; i < 5; i++)
                vectors_move(&v, -1, 2);
        vectors_full(&v, 3);
        assert_int_equal(vectors_left(&v, 0), VECTORS_PER_CPU - 10);
        assert_int_equal(vectors_left(&v, 1), 0);
        assert_int_equal(vectors_left(&v, 3), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cpuset_t m;
                int got;

                assert_int_equal(cpuset_parse_list(cases[i].mask, &m), 0);
                got = vectors_pick(&v, &m, cases[i].here);
                if (got != cases[i].want)
                        fail_msg("%s: CPU%d, want CPU%d", cases[i].what, got, cases[i].want);
        }

        /* a single-CPU mask counts there, whatever an effective affinity
         * read before the write says; a wider one on its effective CPU */
        irq.affinity_readable = true;
        KEEP(&irq.affinity, cpuset_single(2));
        irq.has_effective = true;
        KEEP(&irq.effective, cpuset_single(0));
        assert_int_equal(vectors_irq_cpu(&irq), 2);
        assert_int_equal(test_keep_list(&irq.affinity, "1-3"), 0);
        KEEP(&irq.effective, cpuset_single(3));
        assert_int_equal(vectors_irq_cpu(&irq), 3);
        irq.has_effective = false;
        assert_int_equal(vectors_irq_cpu(&irq), 1);
        irq.affinity_readable = false;
        assert_int_equal(vectors_irq_cpu(&irq), -1);
        cpuset_kept_free(&irq.affinity);
        cpuset_kept_free(&irq.effective);
        vectors_free(&v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_pick),
                cmocka_unit_test_setup_teardown(test_pile_stops_at_the_limit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_enospc_learned, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
