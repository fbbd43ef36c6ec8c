/* Files kept open between reads (rootfs_read_held, rootfs_hold_dir): over
 * a tree of regular files, where a file can be rewritten in place,
 * replaced by rename or removed, and over this machine's /proc/irq, where
 * the kernel regenerates the value at each read from offset 0. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cpuset.h"
#include "rootfs.h"
#include "testlib.h"
#include "util.h"

static char dir[] = "/tmp/irqsteer-test-rootfs.XXXXXX";
static int rootfd = -1;

/* The truncation seam: a failing ftruncate stands for a kill between
 * rootfs_write's write and its truncation. */
static bool fail_ftruncate;
int __real_ftruncate(int fd, off_t len);
int __wrap_ftruncate(int fd, off_t len);
int __wrap_ftruncate(int fd, off_t len) {
        if (fail_ftruncate) {
                errno = EIO;
                return -1;
        }
        return __real_ftruncate(fd, len);
}

static int setup(_unused_ void **state) {
        if (!mkdtemp(dir))
                return -1;
        rootfd = rootfs_open(dir);
        return rootfd < 0 ? -1 : 0;
}

static int teardown(_unused_ void **state) {
        char cmd[128];

        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* Reads rel through *fd, asserting the result and the text. */
static void read_expect(const char *rel, int *fd, int want_r, const char *want) {
        char buf[16];
        size_t n = 99;
        int r = rootfs_read_held(rootfd, rel, fd, buf, sizeof(buf), &n);

        if (r != want_r)
                fail_msg("%s: got %d, want %d", rel, r, want_r);
        if (r == 0 && (strcmp(buf, want) != 0 || n != strlen(want)))
                fail_msg("%s: read '%s' (%zu bytes), want '%s'", rel, buf, n, want);
}

static void test_regular_files(_unused_ void **state) {
        size_t base = rootfs_held_count();
        char from[512], to[512];
        int fd = 0, kept;

        test_write_file(dir, "value", "5\n");
        read_expect("value", &fd, 0, "5\n");
        assert_true(fd > 2);
        assert_int_equal(rootfs_held_count(), base + 1);
        kept = fd;

        /* rewritten in place (as rootfs_write does): same fd, new value */
        test_write_file(dir, "value", "0-3\n");
        read_expect("value", &fd, 0, "0-3\n");
        assert_int_equal(fd, kept);
        /* shorter again: nothing of the longer value is left */
        test_write_file(dir, "value", "7\n");
        read_expect("value", &fd, 0, "7\n");
        assert_int_equal(fd, kept);

        /* replaced by rename (the simulator, atomic writers): the kept fd
         * has the old file, with no name left: opened again */
        test_write_file(dir, "value.new", "9\n");
        snprintf(from, sizeof(from), "%s/value.new", dir);
        snprintf(to, sizeof(to), "%s/value", dir);
        assert_int_equal(rename(from, to), 0);
        read_expect("value", &fd, 0, "9\n");
        assert_true(fd > 2);
        assert_int_equal(rootfs_held_count(), base + 1);

        /* removed: -ENOENT, and nothing kept */
        assert_int_equal(unlink(to), 0);
        read_expect("value", &fd, -ENOENT, NULL);
        assert_int_equal(fd, 0);
        assert_int_equal(rootfs_held_count(), base);

        /* never there: nothing kept either */
        read_expect("missing", &fd, -ENOENT, NULL);
        assert_int_equal(fd, 0);

        /* no trailing newline: read to the end all the same */
        test_write_file(dir, "bare", "abc");
        read_expect("bare", &fd, 0, "abc");
        /* too long for the buffer: -ENOBUFS, the fd kept for the next try */
        test_write_file(dir, "bare", "0123456789abcdefghij\n");
        read_expect("bare", &fd, -ENOBUFS, NULL);
        assert_true(fd > 2);
        /* exactly the buffer's room (15 bytes and the NUL) fits */
        test_write_file(dir, "bare", "0123456789abcd\n");
        read_expect("bare", &fd, 0, "0123456789abcd\n");
        rootfs_release(&fd);
        assert_int_equal(fd, 0);
        assert_int_equal(rootfs_held_count(), base);
        rootfs_release(&fd);
        assert_int_equal(rootfs_held_count(), base);
}

/* This machine's /proc/stat through a kept fd (procfs: kept): read again
 * from offset 0 it is generated afresh (the counters move on, never back). */
static void test_live_proc_stat(_unused_ void **state) {
        static char buf[1 << 20];
        unsigned long long a[4], b[4];
        int host = rootfs_open("/"), fd = 0, kept;

        assert_true(host >= 0);
        assert_int_equal(rootfs_read_held(host, "proc/stat", &fd, buf, sizeof(buf), NULL), 0);
        assert_int_equal(sscanf(buf, "cpu %llu %llu %llu %llu", &a[0], &a[1], &a[2], &a[3]), 4);
        kept = fd;
        assert_true(kept > 2);
        /* 0.1 s: about 10 USER_HZ ticks a CPU, idle or not */
        usleep(100000);
        assert_int_equal(rootfs_read_held(host, "proc/stat", &fd, buf, sizeof(buf), NULL), 0);
        assert_int_equal(fd, kept);
        assert_int_equal(sscanf(buf, "cpu %llu %llu %llu %llu", &b[0], &b[1], &b[2], &b[3]), 4);
        for (int i = 0; i < 4; i++)
                assert_true(b[i] >= a[i]);
        assert_true(b[0] + b[1] + b[2] + b[3] > a[0] + a[1] + a[2] + a[3]);
        rootfs_release(&fd);
        close(host);
}

/* A kept procfs fd whose file went away (a process reaped: its /proc/PID
 * files, as a freed IRQ's /proc/irq/N ones) fails the read, and the name
 * looked up again gives -ENOENT with nothing kept: procfs and sysfs files
 * are read without the check for a name left that regular files get. */
static void test_live_proc_gone(_unused_ void **state) {
        size_t base = rootfs_held_count();
        char path[64], buf[64];
        int host = rootfs_open("/"), fd = 0, status;
        pid_t pid;

        assert_true(host >= 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                pause();
                _exit(0);
        }
        snprintf(path, sizeof(path), "proc/%d/comm", (int) pid);
        assert_int_equal(rootfs_read_held(host, path, &fd, buf, sizeof(buf), NULL), 0);
        assert_true(fd > 2);
        assert_int_equal(rootfs_held_count(), base + 1);
        assert_int_equal(rootfs_read_held(host, path, &fd, buf, sizeof(buf), NULL), 0);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(rootfs_read_held(host, path, &fd, buf, sizeof(buf), NULL), -ENOENT);
        assert_int_equal(fd, 0);
        assert_int_equal(rootfs_held_count(), base);
        close(host);
}

/* An O_PATH fd of a directory answers lookups relative to it; a directory
 * removed and made again under the same name is another one. */
static void test_hold_dir(_unused_ void **state) {
        size_t base = rootfs_held_count();
        char path[512], cmd[600];
        struct stat st;
        int fd = 0, kept;

        snprintf(path, sizeof(path), "%s/queues", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        test_write_file(dir, "queues/rx-0", "");
        assert_int_equal(rootfs_hold_dir(rootfd, "queues", &fd), 0);
        assert_true(fd > 2);
        assert_int_equal(rootfs_held_count(), base + 1);
        kept = fd;
        /* kept already: nothing opened */
        assert_int_equal(rootfs_hold_dir(rootfd, "queues", &fd), 0);
        assert_int_equal(fd, kept);
        assert_int_equal(rootfs_held_count(), base + 1);
        assert_int_equal(fstatat(fd, "rx-0", &st, AT_SYMLINK_NOFOLLOW), 0);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", path);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(mkdir(path, 0755), 0);
        test_write_file(dir, "queues/rx-0", "");
        assert_int_equal(fstatat(fd, "rx-0", &st, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(errno, ENOENT);
        rootfs_release(&fd);
        assert_int_equal(rootfs_held_count(), base);
        assert_int_equal(rootfs_hold_dir(rootfd, "no-such-dir", &fd), -ENOENT);
        assert_int_equal(fd, 0);
}

/* The files held open stay within RLIMIT_NOFILE with room left for the
 * rest of the daemon: a property, not rootfs_held_max()'s formula again. */
static void test_budget(_unused_ void **state) {
        struct rlimit rl;
        size_t max = rootfs_held_max();

        assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
        assert_true(max > 0);
        if (rl.rlim_cur != RLIM_INFINITY)
                assert_true(max <= (size_t) rl.rlim_cur / 2 || max + 256 <= (size_t) rl.rlim_cur);
}

/* This machine's /proc/irq: a kept smp_affinity_list shows a value
 * written through another fd (the kernel regenerates it at offset 0). */
static void test_live_proc_irq(_unused_ void **state) {
        char want[80], path[64], orig[64];
        int host, fd = 0, kept;
        bool done = false;

        SKIP_UNLESS_HOST_LOCKED();
        host = rootfs_open("/");
        assert_true(host >= 0);
        for (unsigned irq = 0; irq < 4096 && !done; irq++) {
                char first[64], second[64];
                int r1, r2, kept2;

                snprintf(path, sizeof(path), "proc/irq/%u/smp_affinity_list", irq);
                /* an IRQ not on CPU 0 alone that takes a write of CPU 0
                 * (managed ones refuse) */
                if (rootfs_read_line(host, path, orig, sizeof(orig)) < 0 || strcmp(orig, "0") == 0 ||
                    rootfs_write(host, path, "0") < 0)
                        continue;
                r1 = rootfs_read_held(host, path, &fd, first, sizeof(first), NULL);
                kept = fd;
                /* put it back before asserting anything */
                assert_int_equal(rootfs_write(host, path, orig), 0);
                r2 = rootfs_read_held(host, path, &fd, second, sizeof(second), NULL);
                kept2 = fd;
                rootfs_release(&fd);
                assert_int_equal(r1, 0);
                assert_string_equal(first, "0\n");
                assert_true(kept > 2);
                assert_int_equal(r2, 0);
                assert_int_equal(kept2, kept);
                snprintf(want, sizeof(want), "%s\n", orig);
                assert_string_equal(second, want);
                done = true;
        }
        close(host);
        if (!done) {
                print_message("[  SKIP    ] %s: no IRQ here takes an affinity write\n", __func__);
                skip();
        }
}

/* rootfs_write over regular files: exactly the value afterwards, and a
 * write the file system refuses leaves the old value, not an empty file
 * (what an O_TRUNC open followed by a kill or a failed write left). */
static void test_write(_unused_ void **state) {
        struct rlimit old, none = { 0, 0 };
        char buf[16];
        int r;

        test_write_file(dir, "w", "0-3\n");
        assert_int_equal(rootfs_write(rootfd, "w", "7\n"), 0);
        assert_int_equal(rootfs_read_small(rootfd, "w", buf, sizeof(buf), NULL), 0);
        assert_string_equal(buf, "7\n");
        assert_int_equal(rootfs_write(rootfd, "w", "0-3\n"), 0);
        assert_int_equal(rootfs_read_small(rootfd, "w", buf, sizeof(buf), NULL), 0);
        assert_string_equal(buf, "0-3\n");
        assert_int_equal(rootfs_write(rootfd, "missing", "1\n"), -ENOENT);

        /* RLIMIT_FSIZE 0: every write fails with EFBIG (SIGXFSZ ignored) */
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        none.rlim_max = old.rlim_max;
        signal(SIGXFSZ, SIG_IGN);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
        r = rootfs_write(rootfd, "w", "5\n");
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        signal(SIGXFSZ, SIG_DFL);
        assert_int_equal(r, -EFBIG);
        assert_int_equal(rootfs_read_small(rootfd, "w", buf, sizeof(buf), NULL), 0);
        assert_string_equal(buf, "0-3\n");
}

/* A shorter value over a longer one, stopped before the truncation: the
 * file holds the new value and blank lines, which read back as the new
 * value, never as the new value followed by the old one's tail. */
static void test_write_torn(_unused_ void **state) {
        char line[32], buf[32];
        cpuset_t s, want;

        test_write_file(dir, "t", "0-15,17\n");
        fail_ftruncate = true;
        assert_int_equal(rootfs_write(rootfd, "t", "0-3\n"), -EIO);
        fail_ftruncate = false;
        assert_int_equal(rootfs_read_small(rootfd, "t", buf, sizeof(buf), NULL), 0);
        assert_string_equal(buf, "0-3\n\n\n\n\n");
        assert_int_equal(rootfs_read_line(rootfd, "t", line, sizeof(line)), 0);
        assert_string_equal(line, "0-3");
        assert_int_equal(cpuset_parse_list(buf, &s), 0);
        assert_int_equal(cpuset_parse_list("0-3", &want), 0);
        assert_true(cpuset_equal(&s, &want));
        /* the next write over it ends at its own length */
        assert_int_equal(rootfs_write(rootfd, "t", "5\n"), 0);
        assert_int_equal(rootfs_read_small(rootfd, "t", buf, sizeof(buf), NULL), 0);
        assert_string_equal(buf, "5\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_regular_files),
                cmocka_unit_test(test_hold_dir),
                cmocka_unit_test(test_live_proc_stat),
                cmocka_unit_test(test_live_proc_gone),
                cmocka_unit_test(test_budget),
                cmocka_unit_test(test_write),
                cmocka_unit_test(test_write_torn),
                cmocka_unit_test(test_live_proc_irq),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
