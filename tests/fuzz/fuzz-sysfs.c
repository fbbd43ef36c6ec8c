/* sysfs and procfs attribute values, read as inventory.c and topology.c
 * read them: the input is written to a file in a temporary root (on
 * /dev/shm when there is one) and read back through the rootfs readers
 * (rootfs_read_line, rootfs_read_small with the rootfs_read fallback,
 * rootfs_read_held through a kept fd), then given to the parsers of
 * numbers (ifindex, numa_node, counters, flow counts), hex flags, hex
 * masks (rps_cpus, xps_cpus, smp_affinity) and cpulists
 * (smp_affinity_list, local_cpulist, cpu/online); and the Cpus_allowed_list
 * of /proc/PID/status (workers_parse_status_cpus) and the fields of
 * /proc/PID/task/TID/stat (procfs_parse_pid_stat) from the input itself.  No crash, each reader
 * returns what the file holds or a clear error. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "cpuset.h"
#include "fuzz.h"
#include "knob.h"
#include "procfs.h"
#include "rootfs.h"
#include "util.h"
#include "workers.h"

static int rootfd = -1, attrfd = -1, held;
static char dir[64];

static void cleanup(void) {
        unlinkat(rootfd, "attr", 0);
        rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        (void) argc;
        (void) argv;
        log_set_max_level(LOG_CRIT);
        snprintf(dir, sizeof(dir), "%s/irqsteer-fuzz-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir))
                abort();
        rootfd = rootfs_open(dir);
        attrfd = openat(rootfd, "attr", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (rootfd < 0 || attrfd < 0)
                abort();
        atexit(cleanup);
        return 0;
}

/* What inventory.c does with a line it read. */
static void parse_line(char *line) {
        uint64_t u;
        int v;

        (void) strtoul(line, NULL, 16);
        line = util_strstrip(line);
        (void) util_parse_int(line, (size_t) -1, &v);
        (void) util_parse_u64(line, (size_t) -1, &u);
}

static void parse_text(char *text) {
        cpuset_t set;

        (void) cpuset_parse_list(text, &set);
        (void) cpuset_parse_mask(util_strstrip(text), &set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char line[64], small[512], *heap = NULL;
        size_t n, len = 0;
        struct procfs_pid_stat ts;
        cpuset_t set;
        int r;

        FUZZ_CHECK(ftruncate(attrfd, 0) == 0);
        FUZZ_CHECK(pwrite(attrfd, data, size, 0) == (ssize_t) size);

        r = rootfs_read_line(rootfd, "attr", line, sizeof(line));
        FUZZ_CHECK(r == 0 || r == -ENOBUFS);
        if (r == 0)
                parse_line(line);

        r = rootfs_read_small(rootfd, "attr", small, sizeof(small), &n);
        FUZZ_CHECK(r == 0 || r == -ENOBUFS);
        if (r == 0) {
                FUZZ_CHECK(n == size && memcmp(small, data, n) == 0 && small[n] == 0);
                parse_text(small);
        } else {
                FUZZ_CHECK(size >= sizeof(small) - 1);
                FUZZ_CHECK(rootfs_read(rootfd, "attr", &heap, &len) == 0);
                FUZZ_CHECK(len == size && memcmp(heap, data, len) == 0 && heap[len] == 0);
                parse_text(heap);
                free(heap);
        }

        r = rootfs_read_held(rootfd, "attr", &held, line, sizeof(line), &n);
        FUZZ_CHECK(r == 0 || r == -ENOBUFS);
        if (r == 0) {
                FUZZ_CHECK(n == size && memcmp(line, data, n) == 0);
                parse_line(line);
        }

        r = workers_parse_status_cpus((const char *) data, size, &set);
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOENT || r == -ENOMEM);
        r = procfs_parse_pid_stat((const char *) data, size, &ts);
        FUZZ_CHECK(r == 0 || r == -EBADMSG);
        return 0;
}
