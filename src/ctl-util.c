/* Helpers every irqsteerctl subcommand file uses (ctl-internal.h): error
 * messages, the root, the model read, signals and sleeping, the
 * configuration.  Calls only the library, never a subcommand. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "log.h"
#include "rootfs.h"
#include "util.h"

void ctl_error(const char *fmt, ...) {
        va_list ap;

        fputs("irqsteerctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

int ctl_usage_error(const char *cmd, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "irqsteerctl%s%s: ", cmd ? " " : "", cmd ? cmd : "");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'irqsteerctl %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
        return CTL_EXIT_USAGE;
}

int ctl_open_root(const char *dir) {
        int fd = rootfs_open(dir);

        if (fd < 0)
                ctl_error("cannot open root directory %s: %s", dir, strerror(-fd));
        return fd;
}

int ctl_read_model(int rootfd, bool host, struct topology *t, struct procfs_interrupts *pi,
                   struct inventory *inv) {
        int r;

        r = topology_read(rootfd, t);
        if (r < 0) {
                ctl_error("cannot read the CPU topology: %s", strerror(-r));
                return r;
        }
        r = procfs_interrupts_read(rootfd, pi);
        if (r < 0) {
                /* Without proc/interrupts NICs and queues are still worth
                 * showing; their IRQs are simply unknown. */
                ctl_error("cannot read proc/interrupts: %s, showing no IRQs", strerror(-r));
                memset(pi, 0, sizeof(*pi));
        }
        r = inventory_read(rootfd, pi, inv);
        if (r < 0) {
                ctl_error("cannot read the NIC inventory: %s", strerror(-r));
                topology_free(t);
                procfs_interrupts_free(pi);
                return r;
        }
        if (host) {
                r = inventory_netlink_refresh(inv);
                if (r < 0)
                        log_debug_errno(r, "netlink refresh failed, keeping sysfs values: %m");
                inventory_read_napi_cpus(rootfd, inv);
        }
        return 0;
}

/* The CPUs an IRQ fires on: its effective affinity when the kernel reports
 * one, else its affinity mask. */
static void irq_cpus(const struct inventory_irq *irq, cpuset_t *ret) {
        if (irq->has_effective && !cpuset_empty(&irq->effective))
                *ret = irq->effective;
        else
                *ret = irq->affinity;
}

void ctl_cpu_queues(const struct inventory *inv, int cpu, void (*fn)(const char *label, void *userdata),
                    void *userdata) {
        if (!inv)
                return;
        for (size_t n = 0; n < inv->n_nics; n++) {
                const struct inventory_nic *nic = &inv->nics[n];

                for (size_t q = 0; q < nic->n_queues; q++) {
                        const struct inventory_queue *qu = &nic->queues[q];
                        int irqs[2] = { qu->rx_irq, qu->tx_irq };
                        bool combined = qu->rx_irq >= 0 && qu->rx_irq == qu->tx_irq;

                        for (int k = 0; k < (combined ? 1 : 2); k++) {
                                const struct inventory_irq *irq;
                                cpuset_t cpus;
                                char label[IF_NAMESIZE + 24];

                                if (irqs[k] < 0)
                                        continue;
                                irq = inventory_irq(inv, (unsigned) irqs[k]);
                                if (!irq)
                                        continue;
                                irq_cpus(irq, &cpus);
                                if (!cpuset_isset(&cpus, cpu))
                                        continue;
                                snprintf(label, sizeof(label), "%s:%d%s", nic->name, qu->index,
                                         combined ? "" : k == 0 ? "rx" : "tx");
                                fn(label, userdata);
                        }
                }
        }
}

int ctl_parse_interval(const char *s, uint64_t *ret_usec) {
        uint64_t usec;
        char *end;
        double d;
        int r;

        if (!s || !*s)
                return -EINVAL;
        /* A bare number is seconds and may have a fraction ("0.2"), which
         * util_parse_duration_usec does not take. */
        errno = 0;
        d = strtod(s, &end);
        if (end != s && *end == '\0' && s[0] >= '0' && s[0] <= '9') {
                if (errno != 0 || !(d > 0) || d > 3600)
                        return -ERANGE;
                usec = (uint64_t) (d * 1e6 + 0.5);
        } else {
                r = util_parse_duration_usec(s, &usec);
                if (r < 0)
                        return r;
                if (usec > 3600ULL * 1000000)
                        return -ERANGE;
        }
        if (usec < 1000)
                return -ERANGE;
        *ret_usec = usec;
        return 0;
}

volatile sig_atomic_t ctl_quit;

static void on_signal(int sig) {
        (void) sig;
        ctl_quit = 1;
}

void ctl_catch_signals(void) {
        struct sigaction sa = { .sa_handler = on_signal };

        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
}

bool ctl_sleep(uint64_t usec) {
        uint64_t until = util_now_usec(CLOCK_MONOTONIC) + usec;

        /* nanosleep returns EINTR on a signal because the handlers are
         * installed without SA_RESTART; other wake-ups sleep the rest. */
        while (!ctl_quit) {
                uint64_t now = util_now_usec(CLOCK_MONOTONIC);
                struct timespec ts;

                if (now >= until)
                        return true;
                ts.tv_sec = (time_t) ((until - now) / 1000000);
                ts.tv_nsec = (long) ((until - now) % 1000000) * 1000;
                nanosleep(&ts, NULL);
        }
        return false;
}

int ctl_load_config(const char *path, struct config *ret) {
        struct config_errors errs = { 0 };
        int r;

        /* A file named on the command line must exist; the default one may
         * be absent (built-in defaults), as for the daemon. */
        r = config_load(path ? path : CONFIG_DEFAULT_PATH, !path, ret, &errs);
        if (r < 0) {
                if (errs.n > 0)
                        config_errors_print(&errs, stderr);
                else
                        ctl_error("cannot load %s: %s", path ? path : CONFIG_DEFAULT_PATH, strerror(-r));
                config_free(ret);
        }
        config_errors_free(&errs);
        return r;
}
