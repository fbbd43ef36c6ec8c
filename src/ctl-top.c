/* irqsteerctl top: per-CPU load shares, NET_RX/NET_TX softirq rates and the
 * NIC queues each CPU serves, from two snapshots one interval apart. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl-internal.h"
#include "ctl.h"
#include "log.h"
#include "rootfs.h"
#include "sample.h"
#include "util.h"

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

static uint64_t now_clock(clockid_t id) {
        struct timespec ts;

        clock_gettime(id, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

uint64_t ctl_now_monotonic(void) {
        return now_clock(CLOCK_MONOTONIC);
}

uint64_t ctl_now_realtime(void) {
        return now_clock(CLOCK_REALTIME);
}

bool ctl_sleep(uint64_t usec) {
        uint64_t until = ctl_now_monotonic() + usec;

        /* nanosleep returns EINTR on a signal because the handlers are
         * installed without SA_RESTART; other wake-ups sleep the rest. */
        while (!ctl_quit) {
                uint64_t now = ctl_now_monotonic();
                struct timespec ts;

                if (now >= until)
                        return true;
                ts.tv_sec = (time_t) ((until - now) / 1000000);
                ts.tv_nsec = (long) ((until - now) % 1000000) * 1000;
                nanosleep(&ts, NULL);
        }
        return false;
}

/* Whether top shows cpu: every CPU online in the later snapshot. */
static bool cpu_shown(const struct sample_rates *r, int cpu) {
        return !r->cpus[cpu].offline;
}

static void queue_to_json(const char *label, void *userdata) {
        json_string(userdata, label);
}

/* Shares are 0..1 in sample.h; top shows percentages with two decimals. */
static void json_pct(struct json_writer *w, const char *key, bool valid, double share) {
        json_key(w, key);
        if (valid)
                json_double_prec(w, share * 100.0, 2);
        else
                json_null(w);
}

void ctl_top_json(struct json_writer *w, double time_s, const struct sample_rates *r,
                  const struct inventory *inv) {
        json_begin_object(w);
        json_key(w, "time");
        json_double_prec(w, time_s, 3);
        json_key(w, "interval");
        json_double_prec(w, r->interval_s, 3);
        json_key_begin_array(w, "cpus");
        for (int cpu = 0; cpu <= r->max_cpu; cpu++) {
                const struct sample_cpu *c = &r->cpus[cpu];

                if (!cpu_shown(r, cpu))
                        continue;
                json_begin_object(w);
                json_key_int(w, "cpu", cpu);
                json_pct(w, "usr", c->valid, c->usr);
                json_pct(w, "sys", c->valid, c->sys);
                json_pct(w, "irq", c->valid, c->irq);
                json_pct(w, "soft", c->valid, c->softirq);
                json_pct(w, "idle", c->valid, c->idle);
                json_key(w, "net_rx");
                if (c->valid)
                        json_double_prec(w, c->net_rx_rate, 1);
                else
                        json_null(w);
                json_key(w, "net_tx");
                if (c->valid)
                        json_double_prec(w, c->net_tx_rate, 1);
                else
                        json_null(w);
                json_key_begin_array(w, "queues");
                ctl_cpu_queues(inv, cpu, queue_to_json, w);
                json_end_array(w);
                json_end_object(w);
        }
        json_end_array(w);
        json_end_object(w);
}

struct label_buf {
        char *buf;
        size_t len, used;
};

static void queue_to_buf(const char *label, void *userdata) {
        struct label_buf *b = userdata;
        int n;

        if (b->used >= b->len)
                return;
        n = snprintf(b->buf + b->used, b->len - b->used, "%s%s", b->used ? " " : "", label);
        if (n > 0)
                b->used = MIN(b->len, b->used + (size_t) n);
}

void ctl_top_print(FILE *f, const struct sample_rates *r, const struct inventory *inv) {
        fprintf(f, "%4s %6s %6s %6s %6s %6s %10s %10s  %s\n", "CPU", "%usr", "%sys", "%irq", "%soft", "%idle",
                "NET_RX/s", "NET_TX/s", "QUEUES");
        for (int cpu = 0; cpu <= r->max_cpu; cpu++) {
                const struct sample_cpu *c = &r->cpus[cpu];
                char labels[512] = "";
                struct label_buf b = { labels, sizeof(labels), 0 };

                if (!cpu_shown(r, cpu))
                        continue;
                ctl_cpu_queues(inv, cpu, queue_to_buf, &b);
                if (!c->valid) {
                        fprintf(f, "%4d %6s %6s %6s %6s %6s %10s %10s  %s\n", cpu, "-", "-", "-", "-", "-", "-",
                                "-", labels);
                        continue;
                }
                fprintf(f, "%4d %6.1f %6.1f %6.1f %6.1f %6.1f %10.0f %10.0f  %s\n", cpu, c->usr * 100,
                        c->sys * 100, c->irq * 100, c->softirq * 100, c->idle * 100, c->net_rx_rate,
                        c->net_tx_rate, labels);
        }
}

static void top_help(FILE *f) {
        fprintf(f, "Usage: irqsteerctl top [--root DIR] [--interval S] [--count N] [--json]\n"
                   "Per-CPU %%usr %%sys %%irq %%soft %%idle, NET_RX/s and NET_TX/s softirq runs, and\n"
                   "the NIC queue IRQs each CPU serves, every interval.\n\n"
                   "  -r, --root DIR       read /proc and /sys under DIR (default /)\n"
                   "  -i, --interval S     seconds between samples (default 1; \"0.5\", \"500ms\")\n"
                   "  -n, --count N        stop after N samples; 0 = until Ctrl-C\n"
                   "                       (default: 0 on a terminal, 1 otherwise)\n"
                   "  -j, --json           one JSON object per sample and line (also when\n"
                   "                       stdout is not a terminal)\n"
                   "  -h, --help           show this help\n");
}

int ctl_top(int argc, char **argv) {
        static const struct option options[] = {
                { "root", required_argument, NULL, 'r' },
                { "interval", required_argument, NULL, 'i' },
                { "count", required_argument, NULL, 'n' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct sample_snapshot prev = { 0 }, cur = { 0 };
        struct inventory inv = { 0 };
        const char *root = "/";
        uint64_t interval = 1000000, count = 0;
        bool json = false, have_count = false, tty = isatty(STDOUT_FILENO);
        int c, rootfd, r, ret = CTL_EXIT_OK;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+r:i:n:jh", options, NULL)) >= 0) {
                switch (c) {
                case 'r':
                        root = optarg;
                        break;
                case 'i':
                        if (ctl_parse_interval(optarg, &interval) < 0)
                                return ctl_usage_error("top", "bad interval '%s'", optarg);
                        break;
                case 'n':
                        if (util_parse_u64(optarg, (size_t) -1, &count) < 0)
                                return ctl_usage_error("top", "bad count '%s'", optarg);
                        have_count = true;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'h':
                        top_help(stdout);
                        return CTL_EXIT_OK;
                default:
                        return ctl_usage_error("top", "bad option");
                }
        }
        if (optind < argc)
                return ctl_usage_error("top", "unexpected argument '%s'", argv[optind]);
        if (!tty)
                json = true;
        if (!have_count)
                count = tty ? 0 : 1;

        rootfd = ctl_open_root(root);
        if (rootfd < 0)
                return CTL_EXIT_ERROR;
        ctl_catch_signals();

        r = sample_snapshot_take(rootfd, ctl_now_monotonic(), &prev);
        if (r < 0) {
                ctl_error("cannot read proc/stat, proc/softirqs or proc/interrupts under %s: %s", root,
                          strerror(-r));
                close(rootfd);
                return CTL_EXIT_ERROR;
        }
        for (uint64_t i = 0; count == 0 || i < count; i++) {
                struct sample_rates rates = { 0 };

                if (!ctl_sleep(interval))
                        break;
                r = sample_snapshot_take(rootfd, ctl_now_monotonic(), &cur);
                if (r < 0) {
                        ctl_error("sampling failed: %s", strerror(-r));
                        ret = CTL_EXIT_ERROR;
                        break;
                }
                r = sample_compute(&prev, &cur, &rates);
                if (r < 0) {
                        ctl_error("computing rates failed: %s", strerror(-r));
                        sample_snapshot_free(&cur);
                        ret = CTL_EXIT_ERROR;
                        break;
                }
                /* Re-read each sample: the daemon may have moved IRQs.  A
                 * failure only costs the queue column. */
                inventory_free(&inv);
                memset(&inv, 0, sizeof(inv));
                r = inventory_read(rootfd, &cur.interrupts, &inv);
                if (r < 0) {
                        log_debug_errno(r, "inventory unavailable, no queue column: %m");
                        memset(&inv, 0, sizeof(inv));
                }

                if (json) {
                        struct json_writer w;

                        json_writer_init(&w, stdout, 0);
                        ctl_top_json(&w, (double) ctl_now_realtime() / 1e6, &rates, &inv);
                        fputc('\n', stdout);
                        r = json_writer_finish(&w);
                } else {
                        /* home + clear: refresh in place */
                        fputs("\033[H\033[2J", stdout);
                        printf("irqsteerctl top: every %.2f s, Ctrl-C quits\n\n", rates.interval_s);
                        ctl_top_print(stdout, &rates, &inv);
                        r = 0;
                }
                sample_rates_free(&rates);
                sample_snapshot_free(&prev);
                prev = cur;
                memset(&cur, 0, sizeof(cur));
                if (r < 0 || fflush(stdout) != 0) {
                        /* e.g. the reader of a pipe went away */
                        ret = CTL_EXIT_ERROR;
                        break;
                }
        }

        inventory_free(&inv);
        sample_snapshot_free(&prev);
        close(rootfd);
        return ret;
}
