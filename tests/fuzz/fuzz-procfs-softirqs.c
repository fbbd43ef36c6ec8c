/* /proc/softirqs (procfs_softirqs_parse): no crash on any bytes, and a
 * result that keeps the header's promises. */
#include <errno.h>

#include "cpuset.h"
#include "fuzz.h"
#include "procfs.h"

FUZZ_QUIET_LOG()

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size ? size : 1);
        struct procfs_softirqs s;
        int r;

        memcpy(buf, data, size);
        r = procfs_softirqs_parse(buf, size, &s);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ERANGE || r == -ENOMEM);
        if (r < 0) {
                FUZZ_CHECK(s.cpus == NULL && s.counts == NULL && s.n_cpus == 0);
        } else {
                for (size_t i = 0; i < s.n_cpus; i++) {
                        FUZZ_CHECK(s.cpus[i] >= 0 && s.cpus[i] < CPUSET_MAX);
                        FUZZ_CHECK(i == 0 || s.cpus[i] > s.cpus[i - 1]);
                        FUZZ_CHECK(procfs_softirqs_column(&s, s.cpus[i]) == (int) i);
                }
                for (int row = 0; row < SOFTIRQ_MAX; row++)
                        for (size_t i = 0; i < s.n_cpus; i++)
                                FUZZ_CHECK(s.present[row] || s.counts[row * s.n_cpus + i] == 0);
        }
        procfs_softirqs_free(&s);
        free(buf);
        return 0;
}
