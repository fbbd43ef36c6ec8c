/* irqsteerctl top: per-CPU load shares, NET_RX/NET_TX softirq rates and the
 * NIC queues each CPU serves, from two snapshots one interval apart. */
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ctl-internal.h"
#include "cpuset.h"
#include "ctl.h"
#include "log.h"
#include "sample.h"
#include "util.h"

static void queue_to_json(const char *label, void *userdata) {
        json_string(userdata, label);
}

/* A number in decimals, or null when not valid (a CPU's counters gave none). */
static void json_rate(struct json_writer *w, const char *key, bool valid, double v, int decimals) {
        json_key(w, key);
        if (valid)
                json_double_prec(w, v, decimals);
        else
                json_null(w);
}

void ctl_top_json(struct json_writer *w, double time_s, const struct sample_rates *r,
                  const struct inventory *inv) {
        json_begin_object(w);
        json_rate(w, "time", true, time_s, 3);
        json_rate(w, "interval", true, r->interval_s, 3);
        json_key_begin_array(w, "cpus");
        for (int cpu = 0; cpu <= r->max_cpu; cpu++) {
                const struct sample_cpu *c = &r->cpus[cpu];

                /* top shows every CPU online in the later snapshot */
                if (c->offline)
                        continue;
                json_begin_object(w);
                json_key_int(w, "cpu", cpu);
                /* shares are 0..1 in sample.h; top shows percentages */
                json_rate(w, "usr", c->valid, c->usr * 100.0, 2);
                json_rate(w, "sys", c->valid, c->sys * 100.0, 2);
                json_rate(w, "irq", c->valid, c->irq * 100.0, 2);
                json_rate(w, "soft", c->valid, c->softirq * 100.0, 2);
                json_rate(w, "idle", c->valid, c->idle * 100.0, 2);
                json_rate(w, "net_rx", c->valid, c->net_rx_rate, 1);
                json_rate(w, "net_tx", c->valid, c->net_tx_rate, 1);
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

static double cpu_netload(const struct sample_cpu *c) {
        return c->valid ? c->irq + c->softirq : -1;
}

/* The most irq+softirq first (what makes a CPU hot), then the busiest, then
 * by number; CPUs without numbers last. */
static const struct sample_rates *sort_rates;
static int cmp_load(const void *a, const void *b) {
        const struct sample_cpu *x = &sort_rates->cpus[*(const int *) a], *y = &sort_rates->cpus[*(const int *) b];
        double lx = cpu_netload(x), ly = cpu_netload(y);

        if (lx != ly)
                return lx > ly ? -1 : 1;
        if (x->valid && y->valid && x->busy != y->busy)
                return x->busy > y->busy ? -1 : 1;
        return *(const int *) a - *(const int *) b;
}

static int cmp_irq_rate(const void *a, const void *b) {
        const struct sample_irq *x = *(const struct sample_irq *const *) a, *y = *(const struct sample_irq *const *) b;

        if (x->rate != y->rate)
                return x->rate > y->rate ? -1 : 1;
        return x->irq < y->irq ? -1 : x->irq > y->irq;
}

static void print_cpu_row(FILE *f, const struct sample_rates *r, const struct inventory *inv, int cpu,
                          const struct ctl_top_view *view) {
        const struct sample_cpu *c = &r->cpus[cpu];
        char labels[512] = "";
        struct label_buf b = { labels, sizeof(labels), 0 };
        bool hot = c->valid && c->irq + c->softirq >= view->hot;
        size_t room = view->cols > 58 + 8 ? view->cols - 58 - 1 : view->cols ? 8 : 42;

        ctl_cpu_queues(inv, cpu, queue_to_buf, &b);
        /* the queue list is cut to keep a row within the terminal */
        util_mark_cut(labels, room + 1, (int) strlen(labels));
        if (!c->valid) {
                fprintf(f, " %4d %5s %5s %5s %5s %5s %9s %9s  %s\n", cpu, "-", "-", "-", "-", "-", "-", "-", labels);
                return;
        }
        fprintf(f, "%s%c%4d %5.1f %5.1f %5.1f %5.1f %5.1f %9.0f %9.0f  %s%s\n", hot && view->color ? "\033[7m" : "",
                hot ? '*' : ' ', cpu, c->usr * 100, c->sys * 100, c->irq * 100, c->softirq * 100, c->idle * 100,
                c->net_rx_rate, c->net_tx_rate, labels, hot && view->color ? "\033[0m" : "");
}

void ctl_top_print(FILE *f, const struct sample_rates *r, const struct inventory *inv,
                   const struct ctl_top_view *view) {
        _cleanup_(freep) int *order = NULL;
        _cleanup_(freep) const struct sample_irq **irqs = NULL;
        size_t n = 0, n_valid = 0, n_hot = 0, n_irqs = 0, cpu_rows, irq_rows;
        double usr = 0, sys = 0, irq = 0, soft = 0, idle = 0;

        order = calloc((size_t) r->max_cpu + 1, sizeof(*order));
        irqs = calloc(r->n_irqs + 1, sizeof(*irqs));
        if (!order || !irqs) {
                fprintf(f, "(out of memory)\n");
                return;
        }
        for (int cpu = 0; cpu <= r->max_cpu; cpu++) {
                const struct sample_cpu *c = &r->cpus[cpu];

                if (c->offline)
                        continue;
                order[n++] = cpu;
                if (!c->valid)
                        continue;
                n_valid++;
                usr += c->usr;
                sys += c->sys;
                irq += c->irq;
                soft += c->softirq;
                idle += c->idle;
                if (c->irq + c->softirq >= view->hot)
                        n_hot++;
        }
        if (!view->sort_cpu) {
                sort_rates = r;
                qsort(order, n, sizeof(*order), cmp_load);
        }
        for (size_t i = 0; i < r->n_irqs; i++)
                if (r->irqs[i].valid && r->irqs[i].rate >= 0.5)
                        irqs[n_irqs++] = &r->irqs[i];
        qsort(irqs, n_irqs, sizeof(*irqs), cmp_irq_rate);

        /* summary, header, CPU rows, a "more" line, the top IRQs */
        irq_rows = MIN(n_irqs, (size_t) (view->rows ? 5 : 10));
        cpu_rows = n;
        if (view->max_cpus > 0)
                cpu_rows = MIN(cpu_rows, view->max_cpus);
        if (view->rows > 0) {
                size_t fixed;

                /* a small window gives up IRQ rows before CPU rows */
                if (view->rows < 12)
                        irq_rows = 0;
                fixed = 2 + (irq_rows ? irq_rows + 2 : 0);
                if (cpu_rows > (view->rows > fixed ? view->rows - fixed : 1))
                        cpu_rows = view->rows > fixed + 1 ? view->rows - fixed - 1 : 1;
        }

        fprintf(f, "%zu CPUs, %.2f s: %%usr %.1f %%sys %.1f %%irq %.1f %%soft %.1f %%idle %.1f; %zu hot (*)\n", n,
                r->interval_s, n_valid ? usr * 100 / n_valid : 0, n_valid ? sys * 100 / n_valid : 0,
                n_valid ? irq * 100 / n_valid : 0, n_valid ? soft * 100 / n_valid : 0,
                n_valid ? idle * 100 / n_valid : 0, n_hot);
        fprintf(f, " %4s %5s %5s %5s %5s %5s %9s %9s  %s\n", "CPU", "%usr", "%sys", "%irq", "%soft", "%idle",
                "NET_RX/s", "NET_TX/s", "QUEUES");
        for (size_t i = 0; i < cpu_rows; i++)
                print_cpu_row(f, r, inv, order[i], view);
        if (cpu_rows < n)
                fprintf(f, "  ... %zu more CPU%s, less irq+softirq (%s)\n", n - cpu_rows, n - cpu_rows == 1 ? "" : "s",
                        view->sort_cpu ? "--cpus 0 shows all" : "a taller window or --cpus shows more");
        if (irq_rows == 0)
                return;
        fprintf(f, "\n %6s %10s  %-12s %s\n", "IRQ", "RATE/s", "CPUS", "NAME");
        for (size_t i = 0; i < irq_rows; i++) {
                const struct sample_irq *si = irqs[i];
                const struct inventory_irq *ii = inv ? inventory_irq(inv, si->irq) : NULL;
                char cpus[64] = "", queue[IF_NAMESIZE + 32] = "", raw[256], name[256];
                size_t room = view->cols > 33 + 8 ? view->cols - 33 - 1 : view->cols ? 8 : 66;
                cpuset_t on;

                cpuset_zero(&on);
                for (int cpu = 0; cpu <= r->max_cpu; cpu++)
                        if (sample_irq_on(si, r->max_cpu, cpu) > 0)
                                cpuset_set(&on, cpu);
                if (cpuset_format_list(&on, cpus, sizeof(cpus)) < 0 || strlen(cpus) > 12)
                        snprintf(cpus, sizeof(cpus), "%d CPUs", cpuset_count(&on));
                if (ii && ii->nic >= 0 && (size_t) ii->nic < inv->n_nics && ii->queue >= 0)
                        snprintf(queue, sizeof(queue), "%s%s queue %d%s%s", ii->name[0] ? " (" : "",
                                 inv->nics[ii->nic].name, ii->queue,
                                 ii->role == INVENTORY_IRQ_RX ? " rx" : ii->role == INVENTORY_IRQ_TX ? " tx" : "",
                                 ii->name[0] ? ")" : "");
                /* outside names: escaped for the terminal */
                snprintf(raw, sizeof(raw), "%s%s", ii ? ii->name : "", queue);
                util_cescape(raw, strlen(raw), false, name, sizeof(name));
                util_mark_cut(name, room + 1, (int) strlen(name));
                fprintf(f, " %6u %10.0f  %-12s %s\n", si->irq, si->rate, cpus, name);
        }
}

static const char top_help[] =
        "Usage: irqsteerctl top [--root DIR] [--interval S] [--count N] [--table | --json]\n"
        "                       [--cpus N] [--sort load|cpu]\n"
        "Per-CPU %usr %sys %irq %soft %idle, NET_RX/s and NET_TX/s softirq runs, and\n"
        "the NIC queue IRQs each CPU serves, then the IRQs that fire most, every\n"
        "interval.  Hot CPUs (irq+softirq >= 80%) are marked '*'.\n\n"
        "  -r, --root DIR       read /proc and /sys under DIR (default /)\n"
        "  -i, --interval S     seconds between samples (default 1; \"0.5\", \"500ms\")\n"
        "  -n, --count N        stop after N samples; 0 = until Ctrl-C\n"
        "                       (default: 0 for the table on a terminal, 1 otherwise)\n"
        "  -t, --table          the table, also when stdout is not a terminal\n"
        "  -j, --json           one JSON object per sample and line (the default\n"
        "                       when stdout is not a terminal)\n"
        "  -c, --cpus N         show at most N CPUs (0 = all; default: all, or what\n"
        "                       fits the terminal)\n"
        "  -s, --sort KEY       load: most irq+softirq first (default); cpu: by number\n"
        "  -h, --help           show this help\n";

int ctl_top(int argc, char **argv) {
        static const char *const sort_keys[] = { "load", "cpu", NULL };
        struct ctl_top_view view = { .hot = CTL_TOP_HOT };
        _cleanup_(sample_snapshot_free) struct sample_snapshot prev = { 0 };
        struct sample_snapshot cur = { 0 };
        _cleanup_(inventory_free) struct inventory inv = { 0 };
        const char *root = "/";
        uint64_t interval = 1000000, count = 0, cpus = 0;
        bool json = false, table = false, have_count = false, have_cpus = false, tty = isatty(STDOUT_FILENO);
        bool redraw;
        int sort_cpu = 0;
        const struct ctl_option options[] = {
                CTL_OPT("root", 'r', CTL_OPT_STRING, &root),
                CTL_OPT("interval", 'i', CTL_OPT_INTERVAL, &interval, .what = "interval"),
                CTL_OPT("count", 'n', CTL_OPT_COUNT, &count, .what = "count", .max = UINT64_MAX, .given = &have_count),
                CTL_OPT("json", 'j', CTL_OPT_FLAG, &json),
                CTL_OPT("table", 't', CTL_OPT_FLAG, &table),
                CTL_OPT("cpus", 'c', CTL_OPT_COUNT, &cpus, .what = "CPU count", .max = INT_MAX, .given = &have_cpus),
                CTL_OPT("sort", 's', CTL_OPT_CHOICE, &sort_cpu, .what = "sort key", .hint = " (load or cpu)",
                        .choices = sort_keys),
        };
        _cleanup_(closep) int rootfd = -1;
        int r, ret = CTL_EXIT_OK;

        r = ctl_options("top", argc, argv, top_help, options, ELEMENTSOF(options), false);
        if (r <= 0)
                return -r;
        view.max_cpus = (size_t) cpus;
        view.sort_cpu = sort_cpu;
        if (json && table)
                return ctl_usage_error("top", "--table and --json exclude each other");
        if (!tty && !table)
                json = true;
        if (!have_count)
                count = tty && !json ? 0 : 1;
        /* redrawn in place only when it repeats on a terminal */
        redraw = tty && !json && count != 1;
        if (tty && !json) {
                struct winsize ws;
                size_t rows;

                /* 24x80 when the terminal does not say */
                if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
                        ws = (struct winsize){ 0 };
                rows = ws.ws_row ? ws.ws_row : 24;
                view.cols = ws.ws_col ? ws.ws_col : 80;
                /* room for the lines around the table: the header never
                 * scrolls away */
                view.rows = rows > 4 ? rows - (redraw ? 3 : 2) : 1;
                view.color = true;
        }
        /* fully buffered with a buffer of our own: each frame is one write,
         * no flicker */
        if (redraw) {
                static char frame[1 << 16];

                setvbuf(stdout, frame, _IOFBF, sizeof(frame));
        }
        if (have_cpus)
                view.rows = 0;

        rootfd = ctl_open_root(root);
        if (rootfd < 0)
                return CTL_EXIT_ERROR;
        ctl_catch_signals();

        r = sample_snapshot_take(rootfd, util_now_usec(CLOCK_MONOTONIC), &prev);
        if (r < 0)
                return ctl_error("cannot read proc/stat, proc/softirqs or proc/interrupts under %s: %s", root,
                                 strerror(-r));
        for (uint64_t i = 0; count == 0 || i < count; i++) {
                struct sample_rates rates = { 0 };

                if (!ctl_sleep(interval))
                        break;
                r = sample_snapshot_take(rootfd, util_now_usec(CLOCK_MONOTONIC), &cur);
                if (r < 0) {
                        ret = ctl_error("sampling failed: %s", strerror(-r));
                        break;
                }
                r = sample_compute(&prev, &cur, &rates);
                if (r < 0) {
                        ret = ctl_error("computing rates failed: %s", strerror(-r));
                        sample_snapshot_free(&cur);
                        break;
                }
                /* the daemon may have moved IRQs; a failure costs the queue column */
                inventory_free(&inv); /* leaves it empty, as a failed read does */
                r = inventory_read(rootfd, &cur.interrupts, &inv);
                if (r < 0)
                        log_debug_errno(r, "inventory unavailable, no queue column: %m");

                if (json) {
                        struct json_writer w;

                        json_writer_init(&w, stdout, 0);
                        ctl_top_json(&w, (double) util_now_usec(CLOCK_REALTIME) / 1e6, &rates, &inv);
                        fputc('\n', stdout);
                        r = json_writer_finish(&w);
                } else {
                        if (redraw) {
                                /* home + clear: refresh in place */
                                fputs("\033[H\033[2J", stdout);
                                if (count == 0)
                                        printf("irqsteerctl top: every %.2f s, Ctrl-C quits\n\n", rates.interval_s);
                                else
                                        printf("irqsteerctl top: sample %" PRIu64 " of %" PRIu64 "\n\n", i + 1,
                                               count);
                        } else if (i > 0)
                                fputc('\n', stdout);
                        ctl_top_print(stdout, &rates, &inv, &view);
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
        return ret;
}
