/* Helpers every irqsteerctl subcommand file uses (ctl-internal.h). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl-internal.h"
#include "ctl.h"
#include "rootfs.h"
#include "util.h"

int ctl_error(const char *fmt, ...) {
        va_list ap;

        fputs("irqsteerctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return CTL_EXIT_ERROR;
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
                                /* where it fires: its effective affinity, else its mask */
                                cpus = cpuset_kept_get(irq->has_effective && !cpuset_kept_empty(&irq->effective) ?
                                                       &irq->effective : &irq->affinity);
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
        int r;

        if (!s || !*s)
                return -EINVAL;
        /* a bare number is seconds, a fraction too ("0.2"), as in the file */
        r = util_parse_duration_usec(s, &usec);
        if (r < 0)
                return r;
        if (usec < 1000 || usec > 3600ULL * 1000000)
                return -ERANGE;
        *ret_usec = usec;
        return 0;
}

static volatile sig_atomic_t ctl_quit;

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
        struct timespec ts = { .tv_sec = (time_t) (until / 1000000), .tv_nsec = (long) (until % 1000000) * 1000 };

        /* EINTR on a signal (no SA_RESTART): ctl_quit tells whether to stop */
        while (!ctl_quit && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        return !ctl_quit;
}
