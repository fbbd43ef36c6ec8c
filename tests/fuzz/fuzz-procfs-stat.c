/* /proc/stat (procfs_stat_parse): no crash on any bytes (the buffer is not
 * NUL-terminated, so ASan sees a read past len), and a result that keeps
 * the header's promises. */
#include <errno.h>

#include "cpuset.h"
#include "fuzz.h"
#include "procfs.h"

FUZZ_QUIET_LOG()

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* an exact-size copy: a read past the end is a heap overflow */
        char *buf = malloc(size ? size : 1);
        struct procfs_stat st;
        int r;

        memcpy(buf, data, size);
        r = procfs_stat_parse(buf, size, &st);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EAGAIN || r == -ERANGE || r == -ENOMEM);
        if (r < 0) {
                FUZZ_CHECK(st.cpus == NULL && st.n_cpus == 0);
        } else {
                FUZZ_CHECK(st.total.cpu == -1 && st.total.n_fields >= 4);
                for (size_t i = 0; i < st.n_cpus; i++) {
                        FUZZ_CHECK(st.cpus[i].cpu >= 0 && st.cpus[i].cpu < CPUSET_MAX);
                        FUZZ_CHECK(st.cpus[i].n_fields >= 4 && st.cpus[i].n_fields <= CPUSTAT_MAX);
                        FUZZ_CHECK(i == 0 || st.cpus[i].cpu > st.cpus[i - 1].cpu);
                        FUZZ_CHECK(procfs_stat_cpu(&st, st.cpus[i].cpu) == &st.cpus[i]);
                }
        }
        procfs_stat_free(&st);
        free(buf);
        return 0;
}
