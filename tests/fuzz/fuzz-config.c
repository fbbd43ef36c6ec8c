/* The configuration file (config_parse, the pure buffer parser behind
 * config_load): no crash on any bytes, an error list exactly when it
 * refuses, and what it accepts passes its own cross-checks. */
#include <errno.h>

#include "config.h"
#include "fuzz.h"

FUZZ_QUIET_LOG()

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size ? size : 1);
        struct config_errors errs = {};
        struct config c;
        int r;

        if (!devnull && !(devnull = fopen("/dev/null", "we")))
                abort();
        memcpy(buf, data, size);
        r = config_parse("fuzz.conf", buf, size, &c, &errs);
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
        if (r == 0) {
                FUZZ_CHECK(errs.n == 0);
                FUZZ_CHECK(c.hot_exit < c.hot_enter);
                FUZZ_CHECK(c.smoothing > 0 && c.smoothing <= 1);
                for (size_t i = 0; i < c.n_interfaces; i++)
                        FUZZ_CHECK(c.interfaces[i].match != NULL);
                for (size_t i = 0; i < c.n_workers; i++)
                        FUZZ_CHECK(c.workers[i].name != NULL);
                (void) config_interface_for(&c, "eth0");
                config_free(&c);
        } else if (r == -EINVAL) {
                FUZZ_CHECK(errs.n > 0);
                config_errors_print(&errs, devnull);
        }
        config_errors_free(&errs);
        free(buf);
        return 0;
}
