/* irqsteerctl metrics: the running daemon's Prometheus text file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "json.h"
#include "metrics.h"
#include "rootfs.h"
#include "state.h"
#include "util.h"

static const char metrics_help[] =
        "Usage: irqsteerctl metrics [--state-dir DIR]\n"
        "Print the running irqsteerd's metrics in the Prometheus text format,\n"
        "from DIR/" METRICS_NAME " (rewritten every tick).\n\n"
        "  -s, --state-dir DIR  the daemon's state directory (default " CONFIG_DEFAULT_STATE_DIR ")\n"
        "  -h, --help           show this help\n";

int ctl_metrics(int argc, char **argv) {
        _cleanup_(json_freep) struct json_value *v = NULL;
        _cleanup_(freep) char *text = NULL;
        const char *state_dir = CONFIG_DEFAULT_STATE_DIR;
        const struct ctl_option options[] = { CTL_OPT("state-dir", 's', CTL_OPT_STRING, &state_dir) };
        _cleanup_(closep) int fd = -1;
        size_t len;
        int64_t pid = 0;
        int r;

        r = ctl_options("metrics", argc, argv, metrics_help, options, ELEMENTSOF(options), false);
        if (r <= 0)
                return -r;
        fd = rootfs_open(state_dir);
        r = fd < 0 ? fd : rootfs_read(fd, METRICS_NAME, &text, &len);
        if (r == -ENOENT)
                return ctl_error("no metrics in %s/%s: irqsteerd is not running (or uses another --state-dir)",
                                 state_dir, METRICS_NAME);
        if (r < 0)
                return ctl_error("cannot read %s/%s: %s", state_dir, METRICS_NAME, strerror(-r));
        /* one left by a crash or --once must not pass for current */
        if (state_read_status(state_dir, &v) < 0 || !state_status_live(v, &pid))
                return ctl_error("irqsteerd is not running; %s/%s is left over from an earlier run", state_dir,
                                 METRICS_NAME);
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
                return ctl_error("cannot write the metrics: %s", strerror(errno));
        return CTL_EXIT_OK;
}
