/* Helpers every irqsteerctl subcommand file uses (ctl-internal.h). */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
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

/* An option's argument into its target: false when it is bad. */
static bool option_set(const struct ctl_option *o, const char *arg) {
        uint64_t v;

        switch (o->type) {
        case CTL_OPT_STRING: *(const char **) o->target = arg; return true;
        case CTL_OPT_FLAG: *(bool *) o->target = true; return true;
        case CTL_OPT_INTERVAL: return ctl_parse_interval(arg, o->target) == 0;
        case CTL_OPT_COUNT:
                if (util_parse_u64(arg, (size_t) -1, &v) < 0 || v < o->min || v > o->max)
                        return false;
                *(uint64_t *) o->target = v;
                return true;
        case CTL_OPT_CHOICE:
                for (int i = 0; o->choices[i]; i++)
                        if (strcmp(arg, o->choices[i]) == 0) {
                                *(int *) o->target = i;
                                return true;
                        }
                return false;
        default: return false;
        }
}

#define CTL_OPTIONS_MAX 16
int ctl_options(const char *cmd, int argc, char **argv, const char *help, const struct ctl_option *opts, size_t n,
                bool operands) {
        struct option longs[CTL_OPTIONS_MAX + 2] = {};
        char shorts[2 * CTL_OPTIONS_MAX + 3] = "+", *s = shorts + 1;
        int c;

        assert(n <= CTL_OPTIONS_MAX);
        for (size_t i = 0; i < n; i++) {
                bool arg = opts[i].type != CTL_OPT_FLAG && opts[i].type != CTL_OPT_REFUSED;

                longs[i] = (struct option) { opts[i].name, arg ? required_argument : no_argument, NULL, opts[i].key };
                *s++ = opts[i].key;
                if (arg)
                        *s++ = ':';
        }
        longs[n] = (struct option) { "help", no_argument, NULL, 'h' };
        *s = 'h';
        optind = 0;
        while ((c = getopt_long(argc, argv, shorts, longs, NULL)) >= 0) {
                const struct ctl_option *o = NULL;

                for (size_t i = 0; !o && i < n; i++)
                        if (c == opts[i].key)
                                o = &opts[i];
                if (c == 'h') {
                        fputs(help, stdout);
                        return -CTL_EXIT_OK;
                }
                if (!o)
                        return -ctl_usage_error(cmd, "bad option");
                if (o->type == CTL_OPT_REFUSED)
                        return -ctl_usage_error(cmd, "%s", o->what);
                if (!option_set(o, optarg))
                        return -ctl_usage_error(cmd, "bad %s '%s'%s", o->what, optarg, o->hint ? o->hint : "");
                if (o->given)
                        *o->given = true;
        }
        if (!operands && optind < argc)
                return -ctl_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
        return optind;
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
