/* irqbalance's environment files (irqbalance_env_parse): no crash on any
 * bytes, a known result code, the set untouched on error, and a problem
 * named whenever it fails. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "irqbalance-env.h"

FUZZ_QUIET_LOG()

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char problem[256] = "";
        cpuset_t set, canary;
        int r;

        cpuset_zero(&canary);
        cpuset_set(&canary, 7);
        set = canary;
        r = irqbalance_env_parse((const char *) data, size, &set, problem, sizeof(problem));
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE || r == -ENOMEM);
        if (r < 0 && r != -ENOMEM) {
                FUZZ_CHECK(cpuset_equal(&set, &canary));
                FUZZ_CHECK(problem[0] != 0);
        }
        return 0;
}
