/* Sampling: rates between two snapshots (hand-made, written out as /proc
 * text and parsed, so the numbers below are exact), CPU hotplug, counter
 * resets, vanished IRQs, EWMA smoothing, deep copy, and snapshots of the
 * fixture trees and of this machine. */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>

#include "policy-fixtures.h"
#include "sample.h"
#include "rootfs.h"
#include "testlib.h"
#include "util.h"

#define EPS 1e-12

struct hand_cpu {
        int cpu;
        uint64_t stat[CPUSTAT_MAX]; /* user nice system idle iowait irq softirq steal guest guest_nice */
        uint64_t timer, net_tx, net_rx, rcu;
};

struct hand_irq {
        unsigned irq;
        const char *name;
        uint64_t counts[8]; /* by column, i.e. in the order of hand_snap.cpus */
};

struct hand_snap {
        uint64_t usec;
        size_t n_cpus;
        struct hand_cpu cpus[8];
        size_t n_irqs;
        struct hand_irq irqs[4];
};

static char *text_end(FILE *f, char **buf) {
        assert_int_equal(fclose(f), 0);
        return *buf;
}

static void interrupts_text(const struct hand_snap *h, char **ret, size_t *ret_len);

/* Writes h out in the kernel's three formats and parses them. */
static void build(const struct hand_snap *h, struct sample_snapshot *ret) {
        char *buf = NULL;
        size_t len = 0;
        uint64_t tot[CPUSTAT_MAX] = {};
        FILE *f;

        *ret = (struct sample_snapshot) { .usec = h->usec };

        f = open_memstream(&buf, &len);
        for (size_t i = 0; i < h->n_cpus; i++)
                for (int k = 0; k < CPUSTAT_MAX; k++)
                        tot[k] += h->cpus[i].stat[k];
        fprintf(f, "cpu ");
        for (int k = 0; k < CPUSTAT_MAX; k++)
                fprintf(f, " %ju", (uintmax_t) tot[k]);
        fprintf(f, "\n");
        for (size_t i = 0; i < h->n_cpus; i++) {
                fprintf(f, "cpu%d", h->cpus[i].cpu);
                for (int k = 0; k < CPUSTAT_MAX; k++)
                        fprintf(f, " %ju", (uintmax_t) h->cpus[i].stat[k]);
                fprintf(f, "\n");
        }
        fprintf(f, "intr 0\nctxt 0\nbtime 0\n");
        text_end(f, &buf);
        assert_int_equal(procfs_stat_parse(buf, len, &ret->stat), 0);
        free(buf);

        f = open_memstream(&buf, &len);
        fprintf(f, "                    ");
        for (size_t i = 0; i < h->n_cpus; i++)
                fprintf(f, "CPU%-8d", h->cpus[i].cpu);
        fprintf(f, "\n");
        for (int s = 0; s < SOFTIRQ_MAX; s++) {
                fprintf(f, "%12s:", procfs_softirq_to_string(s));
                for (size_t i = 0; i < h->n_cpus; i++) {
                        const struct hand_cpu *c = &h->cpus[i];
                        uint64_t v = s == SOFTIRQ_TIMER    ? c->timer
                                     : s == SOFTIRQ_NET_TX ? c->net_tx
                                     : s == SOFTIRQ_NET_RX ? c->net_rx
                                     : s == SOFTIRQ_RCU    ? c->rcu
                                                           : 0;
                        fprintf(f, " %10ju", (uintmax_t) v);
                }
                fprintf(f, "\n");
        }
        text_end(f, &buf);
        assert_int_equal(procfs_softirqs_parse(buf, len, &ret->softirqs), 0);
        free(buf);

        interrupts_text(h, &buf, &len);
        assert_int_equal(procfs_interrupts_parse(buf, len, &ret->interrupts), 0);
        free(buf);
}

/* h's /proc/interrupts in the kernel's layout. */
static void interrupts_text(const struct hand_snap *h, char **ret, size_t *ret_len) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&buf, &len);
        fprintf(f, "           ");
        for (size_t i = 0; i < h->n_cpus; i++)
                fprintf(f, "CPU%-8d", h->cpus[i].cpu);
        fprintf(f, "\n");
        for (size_t j = 0; j < h->n_irqs; j++) {
                fprintf(f, "%3u: ", h->irqs[j].irq);
                for (size_t i = 0; i < h->n_cpus; i++)
                        fprintf(f, "%10ju ", (uintmax_t) h->irqs[j].counts[i]);
                fprintf(f, " PCI-MSIX-0000:00:03.0 %4zu-edge      %s\n", j, h->irqs[j].name);
        }
        fprintf(f, "LOC: ");
        for (size_t i = 0; i < h->n_cpus; i++)
                fprintf(f, "%10u ", 1000u);
        fprintf(f, "  Local timer interrupts\nERR:          0\n");
        text_end(f, &buf);
        *ret = buf;
        *ret_len = len;
}

static void compute(const struct hand_snap *a, const struct hand_snap *b, struct sample_rates *ret) {
        struct sample_snapshot sa, sb;

        build(a, &sa);
        build(b, &sb);
        assert_int_equal(sample_compute(&sa, &sb, ret), 0);
        sample_snapshot_free(&sa);
        sample_snapshot_free(&sb);
}

struct want_cpu {
        int cpu;
        bool valid, offline;
        double usr, sys, idle, iowait, irq, softirq, steal, busy, net_frac, net_rx_rate, net_tx_rate;
};

static void check_cpu(const char *what, const struct sample_rates *r, const struct want_cpu *w) {
        const struct sample_cpu *c;

        if (w->cpu > r->max_cpu)
                fail_msg("%s: cpu%d beyond max_cpu %d", what, w->cpu, r->max_cpu);
        c = &r->cpus[w->cpu];
        if (c->valid != w->valid || c->offline != w->offline)
                fail_msg("%s: cpu%d valid %d offline %d, want %d %d", what, w->cpu, c->valid, c->offline, w->valid,
                         w->offline);
        if (!w->valid)
                return;
        const double got[] = { c->usr,     c->sys,   c->idle,     c->iowait,      c->irq,        c->softirq,
                               c->steal,   c->busy,  c->net_frac, c->net_rx_rate, c->net_tx_rate };
        const double want[] = { w->usr,   w->sys,  w->idle,     w->iowait,      w->irq,        w->softirq,
                                w->steal, w->busy, w->net_frac, w->net_rx_rate, w->net_tx_rate };
        static const char *const names[] = { "usr",   "sys",  "idle",     "iowait",      "irq",        "softirq",
                                             "steal", "busy", "net_frac", "net_rx_rate", "net_tx_rate" };
        for (size_t k = 0; k < ELEMENTSOF(got); k++)
                if (fabs(got[k] - want[k]) > EPS)
                        fail_msg("%s: cpu%d %s = %.15g, want %.15g", what, w->cpu, names[k], got[k], want[k]);
}

static void check_irq(const char *what, const struct sample_rates *r, unsigned irq, bool valid, double rate,
                      const double *per_cpu) {
        const struct sample_irq *s = sample_rates_irq(r, irq);

        if (!s)
                fail_msg("%s: IRQ %u missing", what, irq);
        if (s->valid != valid || fabs(s->rate - rate) > EPS)
                fail_msg("%s: IRQ %u valid %d rate %g, want %d %g", what, irq, s->valid, s->rate, valid, rate);
        for (int c = 0; c <= r->max_cpu; c++)
                if (fabs(sample_irq_on(s, r->max_cpu, c) - per_cpu[c]) > EPS)
                        fail_msg("%s: IRQ %u cpu%d %g/s, want %g/s", what, irq, c, sample_irq_on(s, r->max_cpu, c),
                                 per_cpu[c]);
}

/* Two CPUs over 2 s.  cpu0: 1000 ticks of which user 200 (guest 50 inside
 * it: counting guest again would make 1050), system 100, idle 500, iowait
 * 50, irq 50, softirq 100; softirq runs NET_RX 600 + NET_TX 200 + TIMER 200.
 * cpu1: user 100, nice 100 (all guest_nice), idle 700, steal 100. */
static const struct hand_snap base_prev = {
        .usec = 1000000,
        .n_cpus = 2,
        .cpus = {
                { 0, { 1000, 10, 500, 8000, 100, 20, 200, 0, 300, 0 }, 1000, 10, 500, 100 },
                { 1, { 2000, 0, 100, 9000, 0, 0, 0, 50, 0, 0 }, 2000, 0, 0, 100 },
        },
        .n_irqs = 2,
        .irqs = { { 38, "virtio2-input.0", { 100, 200 } }, { 39, "virtio2-output.0", { 5, 5 } } },
};
static const struct hand_snap base_cur = {
        .usec = 3000000,
        .n_cpus = 2,
        .cpus = {
                { 0, { 1200, 10, 600, 8500, 150, 70, 300, 0, 350, 0 }, 1200, 210, 1100, 100 },
                { 1, { 2100, 100, 100, 9700, 0, 0, 0, 150, 0, 100 }, 2100, 0, 0, 200 },
        },
        .n_irqs = 2,
        .irqs = { { 38, "virtio2-input.0", { 1100, 3200 } }, { 39, "virtio2-output.0", { 5, 5 } } },
};

static void test_rates_normal(_unused_ void **state) {
        static const struct want_cpu want[] = {
                { 0, true, false, 0.2, 0.1, 0.5, 0.05, 0.05, 0.1, 0, 0.45, 0.8, 300, 100 },
                { 1, true, false, 0.2, 0, 0.7, 0, 0, 0, 0.1, 0.3, 0, 0, 0 },
        };
        struct sample_rates r;

        compute(&base_prev, &base_cur, &r);
        assert_true(fabs(r.interval_s - 2.0) < EPS);
        assert_int_equal(r.max_cpu, 1);
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                check_cpu("normal", &r, &want[i]);
        assert_int_equal(r.n_irqs, 2);
        assert_int_equal(r.irqs[0].irq, 38);
        assert_int_equal(r.irqs[1].irq, 39);
        check_irq("normal", &r, 38, true, 2000, (const double[]) { 500, 1500 });
        check_irq("normal", &r, 39, true, 0, (const double[]) { 0, 0 });
        assert_null(sample_rates_irq(&r, 40));
        sample_rates_free(&r);
        assert_null(r.cpus);
        assert_int_equal(r.max_cpu, -1);
}

/* A snapshot pair over 1 s for CPUs [cpus]: each CPU does 100 ticks (60
 * idle, 40 system) and 10 NET_RX runs; IRQ 40 fires 100 times a second
 * per (CPU number + 1). */
static void hotplug_snap(struct hand_snap *h, uint64_t usec, const int *cpus, size_t n, unsigned k) {
        *h = (struct hand_snap) { .usec = usec, .n_cpus = n, .n_irqs = 1 };
        h->irqs[0] = (struct hand_irq) { 40, "eth0-TxRx-0", {} };
        for (size_t i = 0; i < n; i++) {
                int c = cpus[i];
                h->cpus[i] = (struct hand_cpu) { c, { 1000 + 0, 0, 1000 + 40 * k, 5000 + 60 * k }, 0, 0, 10 * k, 0 };
                h->irqs[0].counts[i] = 7 + (uint64_t) (c + 1) * 100 * k;
        }
}

static void test_rates_hotplug(_unused_ void **state) {
        static const struct {
                const char *what;
                int prev[4], cur[4];
                size_t n_prev, n_cur;
                int max_cpu;
                int changed;      /* the CPU that went away or came */
                bool offline;     /* its offline flag */
                double per_cpu[4]; /* IRQ 40 */
                double rate;
        } cases[] = {
                { "cpu1 goes offline: its column vanishes", { 0, 1, 2 }, { 0, 2 }, 3, 2, 2, 1, true, { 100, 0, 300 }, 400 },
                { "cpu1 comes online: a column appears", { 0, 2 }, { 0, 1, 2 }, 2, 3, 2, 1, false, { 100, 0, 300 }, 400 },
                { "last cpu goes offline", { 0, 1, 3 }, { 0, 1 }, 3, 2, 3, 3, true, { 100, 200, 0, 0 }, 300 },
                { "gap stays, cpu3 comes online", { 0, 2 }, { 0, 2, 3 }, 2, 3, 3, 3, false, { 100, 0, 300, 0 }, 400 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct hand_snap a, b;
                struct sample_rates r;

                hotplug_snap(&a, 0, cases[i].prev, cases[i].n_prev, 1);
                hotplug_snap(&b, 1000000, cases[i].cur, cases[i].n_cur, 2);
                compute(&a, &b, &r);
                if (r.max_cpu != cases[i].max_cpu)
                        fail_msg("%s: max_cpu %d", cases[i].what, r.max_cpu);
                for (int c = 0; c <= r.max_cpu; c++) {
                        bool in_prev = false, in_cur = false;
                        for (size_t k = 0; k < cases[i].n_prev; k++)
                                in_prev |= cases[i].prev[k] == c;
                        for (size_t k = 0; k < cases[i].n_cur; k++)
                                in_cur |= cases[i].cur[k] == c;
                        struct want_cpu w = { c, in_prev && in_cur, !in_cur, 0, 0.4, 0.6, 0, 0, 0, 0, 0.4, 1, 10, 0 };
                        check_cpu(cases[i].what, &r, &w);
                }
                assert_false(r.cpus[cases[i].changed].valid);
                assert_int_equal(r.cpus[cases[i].changed].offline, cases[i].offline);
                check_irq(cases[i].what, &r, 40, true, cases[i].rate, cases[i].per_cpu);
                sample_rates_free(&r);
        }
}

static void test_rates_invalid(_unused_ void **state) {
        struct hand_snap a = base_prev, b = base_cur;
        struct sample_rates r;

        /* cpu0's user counter reset: cpu0 invalid, cpu1 untouched */
        b.cpus[0].stat[CPUSTAT_USER] = 3;
        compute(&a, &b, &r);
        assert_false(r.cpus[0].valid);
        assert_false(r.cpus[0].offline);
        check_cpu("user reset", &r, &(struct want_cpu) { 1, true, false, 0.2, 0, 0.7, 0, 0, 0, 0.1, 0.3, 0, 0, 0 });
        sample_rates_free(&r);

        /* a softirq counter went backwards by far more than a wrap
         * explains (a modular delta of 2^32 - 1 runs): a reset */
        b = base_cur;
        b.cpus[1].rcu = 99;
        compute(&a, &b, &r);
        assert_true(r.cpus[0].valid);
        assert_false(r.cpus[1].valid);
        sample_rates_free(&r);

        /* no tick passed at all */
        b = base_cur;
        memcpy(b.cpus[1].stat, a.cpus[1].stat, sizeof(b.cpus[1].stat));
        compute(&a, &b, &r);
        assert_true(r.cpus[0].valid);
        assert_false(r.cpus[1].valid);
        assert_false(r.cpus[1].offline);
        sample_rates_free(&r);

        /* iowait may decrease (proc(5)): clamped, the CPU stays valid;
         * cpu0 then has 950 ticks without iowait's 50 */
        b = base_cur;
        b.cpus[0].stat[CPUSTAT_IOWAIT] = 90;
        compute(&a, &b, &r);
        check_cpu("iowait backwards", &r,
                  &(struct want_cpu) { 0, true, false, 200.0 / 950, 100.0 / 950, 500.0 / 950, 0, 50.0 / 950,
                                       100.0 / 950, 0, 450.0 / 950, 0.8, 300, 100 });
        sample_rates_free(&r);

        /* IRQ counts: 38 went backwards on cpu1 -> invalid and 0; 39 fine */
        b = base_cur;
        b.irqs[0].counts[1] = 150;
        b.irqs[1].counts[0] = 25;
        compute(&a, &b, &r);
        check_irq("irq reset", &r, 38, false, 0, (const double[]) { 0, 0 });
        check_irq("irq reset", &r, 39, true, 10, (const double[]) { 10, 0 });
        assert_true(r.cpus[0].valid && r.cpus[1].valid);
        sample_rates_free(&r);

        /* the 32-bit counters wrap: NET_RX and IRQ 38 on cpu0 pass 2^32
         * during the interval and the rates are those of the base case */
        a = base_prev;
        b = base_cur;
        a.cpus[0].net_rx = UINT32_MAX - 99;     /* +600: 2^32 + 500 */
        b.cpus[0].net_rx = 500;
        a.cpus[1].timer = UINT32_MAX;           /* +100: 2^32 + 99 */
        b.cpus[1].timer = 99;
        a.irqs[0].counts[0] = UINT32_MAX - 399; /* +1000 */
        b.irqs[0].counts[0] = 600;
        a.irqs[0].counts[1] = UINT32_MAX;       /* +3000 */
        b.irqs[0].counts[1] = 2999;
        compute(&a, &b, &r);
        check_cpu("softirq wrap", &r,
                  &(struct want_cpu) { 0, true, false, 0.2, 0.1, 0.5, 0.05, 0.05, 0.1, 0, 0.45, 0.8, 300, 100 });
        check_cpu("softirq wrap", &r, &(struct want_cpu) { 1, true, false, 0.2, 0, 0.7, 0, 0, 0, 0.1, 0.3, 0, 0, 0 });
        check_irq("irq wrap", &r, 38, true, 2000, (const double[]) { 500, 1500 });
        sample_rates_free(&r);
        a = base_prev;

        /* IRQ 38 re-requested by another device: same number, new name */
        b = base_cur;
        b.irqs[0].name = "eth9-TxRx-0";
        compute(&a, &b, &r);
        check_irq("irq renamed", &r, 38, false, 0, (const double[]) { 0, 0 });
        sample_rates_free(&r);

        /* IRQ 38 vanished, IRQ 45 appeared: only 39 is in both */
        b = base_cur;
        b.irqs[0] = (struct hand_irq) { 39, "virtio2-output.0", { 7, 5 } };
        b.irqs[1] = (struct hand_irq) { 45, "virtio2-config", { 1, 1 } };
        compute(&a, &b, &r);
        assert_int_equal(r.n_irqs, 1);
        assert_null(sample_rates_irq(&r, 38));
        assert_null(sample_rates_irq(&r, 45));
        check_irq("irq vanished", &r, 39, true, 1, (const double[]) { 1, 0 });
        sample_rates_free(&r);
}

static void test_rates_interval(_unused_ void **state) {
        static const struct {
                const char *what;
                uint64_t prev, cur;
                int r;
        } cases[] = {
                { "zero interval", 5000000, 5000000, -EINVAL },
                { "cur earlier than prev", 5000000, 4000000, -EINVAL },
                { "one microsecond", 5000000, 5000001, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct hand_snap a = base_prev, b = base_cur;
                struct sample_snapshot sa, sb;
                struct sample_rates r;
                int ret;

                a.usec = cases[i].prev;
                b.usec = cases[i].cur;
                build(&a, &sa);
                build(&b, &sb);
                ret = sample_compute(&sa, &sb, &r);
                if (ret != cases[i].r)
                        fail_msg("%s: got %d, want %d", cases[i].what, ret, cases[i].r);
                if (ret < 0) {
                        assert_null(r.cpus);
                        assert_null(r.irqs);
                        assert_int_equal(r.max_cpu, -1);
                } else {
                        assert_true(fabs(r.cpus[0].net_rx_rate - 600e6) < 1e-3);
                }
                sample_rates_free(&r);
                sample_snapshot_free(&sa);
                sample_snapshot_free(&sb);
        }
        assert_int_equal(sample_compute(NULL, NULL, NULL), -EINVAL);
}

/* ---- EWMA ---- */

/* Hand-built rates, per_cpu malloc'd one by one (as a test elsewhere
 * might): sample_rates_free must cope. */
static void hand_rates(struct sample_rates *r, int max_cpu, const double *busy, const bool *valid, const bool *offline,
                       size_t n_irqs, const unsigned *irqs, const double *rates, const bool *irq_valid) {
        *r = (struct sample_rates) { .interval_s = 1, .max_cpu = max_cpu, .n_irqs = n_irqs };
        r->cpus = calloc((size_t) max_cpu + 1, sizeof(*r->cpus));
        r->irqs = calloc(n_irqs ? n_irqs : 1, sizeof(*r->irqs));
        assert_non_null(r->cpus);
        assert_non_null(r->irqs);
        for (int c = 0; c <= max_cpu; c++)
                r->cpus[c] = (struct sample_cpu) { .valid = valid[c], .offline = offline[c], .busy = busy[c],
                                                   .softirq = busy[c] / 2, .net_rx_rate = busy[c] * 1000 };
        for (size_t i = 0; i < n_irqs; i++) {
                r->irqs[i].irq = irqs[i];
                r->irqs[i].valid = irq_valid[i];
                r->irqs[i].rate = rates[i];
                r->irqs[i].per_cpu = calloc((size_t) max_cpu + 1, sizeof(double));
                assert_non_null(r->irqs[i].per_cpu);
                r->irqs[i].per_cpu[0] = rates[i];
        }
}

static void test_smooth(_unused_ void **state) {
        struct sample_rates avg = {}, n1, n2, n3;
        const struct sample_irq *irq;

        /* a zeroed avg is initialised from the first rates */
        hand_rates(&n1, 1, (const double[]) { 0.2, 0.6 }, (const bool[]) { true, true }, (const bool[]) { false, false },
                   2, (const unsigned[]) { 30, 31 }, (const double[]) { 100, 50 }, (const bool[]) { true, true });
        assert_int_equal(sample_smooth(&avg, &n1, 0.5), 0);
        assert_int_equal(avg.max_cpu, 1);
        assert_true(fabs(avg.cpus[0].busy - 0.2) < EPS && fabs(avg.cpus[1].busy - 0.6) < EPS);
        assert_int_equal(avg.n_irqs, 2);
        assert_true(avg.irqs[0].per_cpu != n1.irqs[0].per_cpu);

        /* bad alpha: refused, avg unchanged */
        static const double bad_alpha[] = { 0, -0.5, 1.5, NAN, INFINITY };
        for (size_t i = 0; i < ELEMENTSOF(bad_alpha); i++) {
                assert_int_equal(sample_smooth(&avg, &n1, bad_alpha[i]), -EINVAL);
                assert_true(fabs(avg.cpus[1].busy - 0.6) < EPS);
        }

        /* blend with alpha 0.25: cpu0 0.25*1.0 + 0.75*0.2; cpu1 invalid in
         * new keeps 0.6; cpu2 is new and starts from its value; IRQ 30
         * blends, IRQ 31 is gone, IRQ 32 is new, IRQ 33 invalid and new */
        hand_rates(&n2, 2, (const double[]) { 1.0, 0.0, 0.7 }, (const bool[]) { true, false, true },
                   (const bool[]) { false, false, false }, 3, (const unsigned[]) { 30, 32, 33 },
                   (const double[]) { 500, 10, 99 }, (const bool[]) { true, true, false });
        assert_int_equal(sample_smooth(&avg, &n2, 0.25), 0);
        assert_int_equal(avg.max_cpu, 2);
        assert_true(avg.cpus[0].valid);
        assert_true(fabs(avg.cpus[0].busy - (0.25 * 1.0 + 0.75 * 0.2)) < EPS);
        assert_true(fabs(avg.cpus[0].softirq - (0.25 * 0.5 + 0.75 * 0.1)) < EPS);
        assert_true(fabs(avg.cpus[0].net_rx_rate - (0.25 * 1000 + 0.75 * 200)) < 1e-9);
        assert_true(avg.cpus[1].valid);
        assert_true(fabs(avg.cpus[1].busy - 0.6) < EPS);
        assert_true(avg.cpus[2].valid);
        assert_true(fabs(avg.cpus[2].busy - 0.7) < EPS);
        assert_int_equal(avg.n_irqs, 3);
        irq = sample_rates_irq(&avg, 30);
        assert_non_null(irq);
        assert_true(irq->valid);
        assert_true(fabs(irq->rate - (0.25 * 500 + 0.75 * 100)) < EPS);
        assert_true(fabs(sample_irq_on(irq, avg.max_cpu, 0) - (0.25 * 500 + 0.75 * 100)) < EPS);
        assert_true(fabs(sample_irq_on(irq, avg.max_cpu, 2)) < EPS);
        assert_null(sample_rates_irq(&avg, 31));
        irq = sample_rates_irq(&avg, 32);
        assert_non_null(irq);
        assert_true(fabs(irq->rate - 10) < EPS);
        irq = sample_rates_irq(&avg, 33);
        assert_non_null(irq);
        assert_false(irq->valid);

        /* cpu1 goes offline: dropped; IRQ 30 invalid in new keeps its
         * average; alpha 1 takes cpu0 and IRQ 32 from new */
        hand_rates(&n3, 2, (const double[]) { 0.9, 0, 0.1 }, (const bool[]) { true, false, true },
                   (const bool[]) { false, true, false }, 2, (const unsigned[]) { 30, 32 },
                   (const double[]) { 7, 20 }, (const bool[]) { false, true });
        assert_int_equal(sample_smooth(&avg, &n3, 1.0), 0);
        assert_true(fabs(avg.cpus[0].busy - 0.9) < EPS);
        assert_false(avg.cpus[1].valid);
        assert_true(avg.cpus[1].offline);
        assert_true(fabs(avg.cpus[2].busy - 0.1) < EPS);
        irq = sample_rates_irq(&avg, 30);
        assert_true(irq->valid);
        assert_true(fabs(irq->rate - (0.25 * 500 + 0.75 * 100)) < EPS);
        assert_true(fabs(sample_rates_irq(&avg, 32)->rate - 20) < EPS);
        assert_null(sample_rates_irq(&avg, 33));

        /* a CPU beyond the new max_cpu is dropped too */
        sample_rates_free(&n1);
        hand_rates(&n1, 0, (const double[]) { 0.5 }, (const bool[]) { true }, (const bool[]) { false }, 0, NULL, NULL,
                   NULL);
        assert_int_equal(sample_smooth(&avg, &n1, 0.5), 0);
        assert_int_equal(avg.max_cpu, 0);
        assert_true(fabs(avg.cpus[0].busy - 0.7) < EPS);
        assert_int_equal(avg.n_irqs, 0);

        sample_rates_free(&avg);
        sample_rates_free(&n1);
        sample_rates_free(&n2);
        sample_rates_free(&n3);
        assert_int_equal(sample_smooth(NULL, &n1, 0.5), -EINVAL);
}

/* An IRQ that moved from cpu0 to cpu2 is on cpu2 alone in the average at
 * once, at the smoothed rate; an interval in which it did not fire keeps
 * the average's placement, scaled to the smoothed rate; an interval
 * without a reading keeps the average as it is. */
static void test_smooth_moved_irq(_unused_ void **state) {
        static const double busy[] = { 0.1, 0.1, 0.1 };
        static const bool yes[] = { true, true, true }, no[] = { false, false, false };
        struct sample_rates avg = {}, n1, n2, n3;
        const struct sample_irq *irq;

        hand_rates(&n1, 2, busy, yes, no, 1, (const unsigned[]) { 30 }, (const double[]) { 400 },
                   (const bool[]) { true });
        assert_int_equal(sample_smooth(&avg, &n1, 0.5), 0);
        hand_rates(&n2, 2, busy, yes, no, 1, (const unsigned[]) { 30 }, (const double[]) { 200 },
                   (const bool[]) { true });
        n2.irqs[0].per_cpu[0] = 0;
        n2.irqs[0].per_cpu[2] = 200;
        assert_int_equal(sample_smooth(&avg, &n2, 0.5), 0);
        irq = sample_rates_irq(&avg, 30);
        assert_non_null(irq);
        assert_true(fabs(irq->rate - 300) < EPS);
        assert_true(sample_irq_on(irq, avg.max_cpu, 0) == 0);
        assert_true(sample_irq_on(irq, avg.max_cpu, 1) == 0);
        assert_true(fabs(sample_irq_on(irq, avg.max_cpu, 2) - 300) < EPS);

        hand_rates(&n3, 2, busy, yes, no, 1, (const unsigned[]) { 30 }, (const double[]) { 0 },
                   (const bool[]) { true });
        assert_int_equal(sample_smooth(&avg, &n3, 0.5), 0);
        irq = sample_rates_irq(&avg, 30);
        assert_true(fabs(irq->rate - 150) < EPS);
        assert_true(sample_irq_on(irq, avg.max_cpu, 0) == 0);
        assert_true(fabs(sample_irq_on(irq, avg.max_cpu, 2) - 150) < EPS);

        /* an interval without a reading on a host with a CPU more: the
         * IRQ's average is copied into rows of the new width */
        sample_rates_free(&n1);
        hand_rates(&n1, 3, (const double[]) { 0.1, 0.1, 0.1, 0.1 }, (const bool[]) { true, true, true, true },
                   (const bool[]) { false, false, false, false }, 0, NULL, NULL, NULL);
        n1.irqs_carried = true;
        assert_int_equal(sample_smooth(&avg, &n1, 0.5), 0);
        assert_int_equal(avg.max_cpu, 3);
        irq = sample_rates_irq(&avg, 30);
        assert_non_null(irq);
        assert_true(fabs(irq->rate - 150) < EPS);
        assert_true(fabs(sample_irq_on(irq, avg.max_cpu, 2) - 150) < EPS);
        assert_true(sample_irq_on(irq, avg.max_cpu, 3) == 0);

        sample_rates_free(&avg);
        sample_rates_free(&n1);
        sample_rates_free(&n2);
        sample_rates_free(&n3);
}

/* Ticks that do not read /proc/interrupts: the reading is carried over, the
 * interval has CPU rates and no IRQ rates, smoothing keeps the average's
 * IRQs, and the next reading's rates span the time since the last one.
 * sample_cpu_load_next() projects the smoothed irq+softirq share exactly,
 * and sample_load_drifted() compares it with a reference. */
/* base_prev and base_cur into s1 and s2, and the average of their rates
 * (nothing carried) into avg. */
static void first_average(struct sample_snapshot *s1, struct sample_snapshot *s2, struct sample_rates *avg) {
        struct sample_rates r;

        build(&base_prev, s1);
        build(&base_cur, s2);
        assert_int_equal(sample_compute(s1, s2, &r), 0);
        assert_false(r.irqs_carried);
        assert_false(r.softirqs_carried);
        assert_int_equal(sample_smooth(avg, &r, 0.5), 0);
        sample_rates_free(&r);
}

static void test_carried_irqs(_unused_ void **state) {
        struct hand_snap h3 = base_cur, h4 = base_cur;
        struct sample_snapshot s1, s2, s3, s4;
        struct sample_rates r = {}, avg = {};
        const struct sample_irq *irq;
        double v0, v1, ref[2];

        first_average(&s1, &s2, &avg);

        /* t = 5 s: cpu0 does 100 more ticks, 40 of them softirq (the
         * share of the interval is 0.4); the IRQ counts are not read */
        h3.usec = 5000000;
        h3.cpus[0].stat[CPUSTAT_IDLE] += 60;
        h3.cpus[0].stat[CPUSTAT_SOFTIRQ] += 40;
        h3.cpus[1].stat[CPUSTAT_IDLE] += 100;
        build(&h3, &s3);
        sample_snapshot_carry_irqs(&s2, &s3);
        assert_int_equal(s2.interrupts.n_irqs, 0);
        assert_int_equal(s3.interrupts.n_numeric, 2);
        assert_int_equal(sample_snapshot_irq_usec(&s3), 3000000);
        assert_int_equal(sample_snapshot_irq_usec(&s2), 3000000);

        /* projected before computing: 0.5 * 0.4 + 0.5 * (0.05 + 0.1) */
        assert_true(sample_cpu_load_next(&s2, &s3, &avg, 0.5, 0, &v0));
        assert_true(fabs(v0 - 0.275) < EPS);
        assert_true(sample_cpu_load_next(&s2, &s3, &avg, 0.5, 1, &v1));
        assert_true(fabs(v1) < EPS);
        assert_false(sample_cpu_load_next(&s2, &s3, &avg, 0.5, 5, &v1));
        ref[0] = 0.15;
        ref[1] = 0;
        assert_true(sample_load_drifted(&s2, &s3, &avg, 0.5, ref, 1, 0.05));
        assert_false(sample_load_drifted(&s2, &s3, &avg, 0.5, ref, 1, 0.126));
        ref[0] = 0.25;
        assert_false(sample_load_drifted(&s2, &s3, &avg, 0.5, ref, 1, 0.05));
        ref[1] = NAN;
        assert_true(sample_load_drifted(&s2, &s3, &avg, 0.5, ref, 1, 0.05));
        assert_true(sample_load_drifted(&s2, &s3, &avg, 0.5, ref, 0, 0.05));
        assert_true(sample_load_drifted(&s2, &s3, &avg, 0.5, NULL, -1, 0.05));

        assert_int_equal(sample_compute(&s2, &s3, &r), 0);
        assert_true(r.irqs_carried);
        assert_int_equal(r.n_irqs, 0);
        assert_true(r.cpus[0].valid);
        assert_true(fabs(r.cpus[0].softirq - 0.4) < EPS);
        assert_int_equal(sample_smooth(&avg, &r, 0.5), 0);
        sample_rates_free(&r);
        assert_true(fabs(avg.cpus[0].irq + avg.cpus[0].softirq - v0) < EPS);
        /* the IRQs' averages stand as they were */
        assert_int_equal(avg.n_irqs, 2);
        irq = sample_rates_irq(&avg, 38);
        assert_non_null(irq);
        assert_true(fabs(irq->rate - 2000) < EPS);
        assert_true(fabs(sample_irq_on(irq, avg.max_cpu, 1) - 1500) < EPS);

        /* t = 7 s with a reading: IRQ 38 rates over the 4 s since t = 3 s */
        h4.usec = 7000000;
        for (int k = 0; k < CPUSTAT_MAX; k++) {
                h4.cpus[0].stat[k] = h3.cpus[0].stat[k] + (k == CPUSTAT_IDLE ? 100 : 0);
                h4.cpus[1].stat[k] = h3.cpus[1].stat[k] + (k == CPUSTAT_IDLE ? 100 : 0);
        }
        h4.irqs[0].counts[0] = 1100 + 4000;
        h4.irqs[0].counts[1] = 3200 + 800;
        build(&h4, &s4);
        assert_int_equal(sample_compute(&s3, &s4, &r), 0);
        assert_false(r.irqs_carried);
        assert_true(fabs(r.interval_s - 2.0) < EPS);
        check_irq("after carried", &r, 38, true, 1200, (const double[]) { 1000, 200 });
        assert_int_equal(sample_smooth(&avg, &r, 0.5), 0);
        irq = sample_rates_irq(&avg, 38);
        assert_true(fabs(irq->rate - (0.5 * 1200 + 0.5 * 2000)) < EPS);
        /* the smoothed rate, spread as in the newest interval */
        assert_true(fabs(sample_irq_on(irq, avg.max_cpu, 0) - 1600.0 * 1000 / 1200) < 1e-9);
        assert_true(fabs(sample_irq_on(irq, avg.max_cpu, 1) - 1600.0 * 200 / 1200) < 1e-9);

        sample_rates_free(&r);
        sample_rates_free(&avg);
        sample_snapshot_free(&s1);
        sample_snapshot_free(&s2);
        sample_snapshot_free(&s3);
        sample_snapshot_free(&s4);
}

/* A calm tick reads /proc/stat alone: its /proc/softirqs reading is
 * carried from the tick before, so the NET fields of that interval are
 * unknown (the average's stand) and the next reading's rates span the
 * time since the carried one was taken. */
static void test_carried_softirqs(_unused_ void **state) {
        struct hand_snap h3 = base_cur, h4;
        struct sample_snapshot s1, s2, s3, s4, s5;
        struct sample_rates r = {}, avg = {};

        first_average(&s1, &s2, &avg);

        /* t = 5 s: cpu0 spends 40 of 100 ticks in softirq; the NET_RX runs
         * its own /proc/softirqs would show (+1000) are not read */
        h3.usec = 5000000;
        h3.cpus[0].stat[CPUSTAT_IDLE] += 60;
        h3.cpus[0].stat[CPUSTAT_SOFTIRQ] += 40;
        h3.cpus[0].net_rx += 1000;
        h3.cpus[1].stat[CPUSTAT_IDLE] += 100;
        h4 = h3;
        build(&h3, &s3);
        s5 = s3;
        /* before a carry: a snapshot without a reading of its own but
         * dated as prev's (what the engine computes first) is valid too */
        s5.softirqs = (struct procfs_softirqs) {};
        s5.softirq_usec = sample_snapshot_softirq_usec(&s2);
        assert_int_equal(sample_compute(&s2, &s5, &r), 0);
        assert_true(r.softirqs_carried);
        assert_true(r.cpus[0].valid && r.cpus[1].valid);
        sample_rates_free(&r);

        sample_snapshot_carry_softirqs(&s2, &s3);
        assert_int_equal(s2.softirqs.n_cpus, 0);
        assert_int_equal(s3.softirqs.n_cpus, 2);
        assert_int_equal(sample_snapshot_softirq_usec(&s3), 3000000);
        assert_int_equal(sample_snapshot_softirq_usec(&s2), 3000000);
        assert_int_equal(sample_compute(&s2, &s3, &r), 0);
        assert_true(r.softirqs_carried);
        check_cpu("carried", &r, &(struct want_cpu) { 0, true, false, 0, 0, 0.6, 0, 0, 0.4, 0, 0.4, 0, 0, 0 });
        assert_int_equal(sample_smooth(&avg, &r, 0.5), 0);
        sample_rates_free(&r);
        /* the load blends; the NET fields are the average's as they were */
        assert_true(fabs(avg.cpus[0].softirq - (0.5 * 0.1 + 0.5 * 0.4)) < EPS);
        assert_true(fabs(avg.cpus[0].net_frac - 0.8) < EPS);
        assert_true(fabs(avg.cpus[0].net_rx_rate - 300) < EPS);
        assert_true(fabs(avg.cpus[0].net_tx_rate - 100) < EPS);

        /* t = 7 s with a reading: 2000 NET_RX runs since the one carried
         * from t = 3 s (not since h3's own), over those 4 s */
        h4.usec = 7000000;
        for (int k = 0; k < CPUSTAT_MAX; k++) {
                h4.cpus[0].stat[k] = h3.cpus[0].stat[k] + (k == CPUSTAT_IDLE ? 100 : 0);
                h4.cpus[1].stat[k] = h3.cpus[1].stat[k] + (k == CPUSTAT_IDLE ? 100 : 0);
        }
        h4.cpus[0].net_rx = base_cur.cpus[0].net_rx + 2000;
        build(&h4, &s4);
        assert_int_equal(sample_compute(&s3, &s4, &r), 0);
        assert_false(r.softirqs_carried);
        assert_true(fabs(r.interval_s - 2.0) < EPS);
        check_cpu("after carried", &r, &(struct want_cpu) { 0, true, false, 0, 0, 1, 0, 0, 0, 0, 0, 1, 500, 0 });
        assert_int_equal(sample_smooth(&avg, &r, 0.5), 0);
        assert_true(fabs(avg.cpus[0].net_rx_rate - (0.5 * 500 + 0.5 * 300)) < EPS);

        sample_rates_free(&r);
        sample_rates_free(&avg);
        sample_snapshot_free(&s1);
        sample_snapshot_free(&s2);
        sample_snapshot_free(&s3);
        sample_snapshot_free(&s4);
}

static void test_copy(_unused_ void **state) {
        struct sample_rates r, c;

        compute(&base_prev, &base_cur, &r);
        assert_int_equal(sample_rates_copy(&c, &r), 0);
        assert_int_equal(c.max_cpu, r.max_cpu);
        assert_int_equal(c.n_irqs, r.n_irqs);
        assert_true(c.cpus != r.cpus && c.irqs != r.irqs);
        assert_true(c.irqs[0].per_cpu != r.irqs[0].per_cpu);
        assert_memory_equal(c.cpus, r.cpus, sizeof(*c.cpus) * 2);
        for (size_t i = 0; i < r.n_irqs; i++) {
                assert_int_equal(c.irqs[i].irq, r.irqs[i].irq);
                assert_true(c.irqs[i].rate == r.irqs[i].rate);
                /* outside an IRQ's range the row is not written: compare
                 * what the accessor gives */
                for (int cpu = 0; cpu <= r.max_cpu; cpu++)
                        assert_true(sample_irq_on(&c.irqs[i], c.max_cpu, cpu) ==
                                    sample_irq_on(&r.irqs[i], r.max_cpu, cpu));
        }
        /* deep: changing the copy leaves the source alone */
        assert_true(fabs(sample_irq_on(&r.irqs[0], r.max_cpu, 1) - 1500) < EPS);
        for (int cpu = 0; cpu <= c.max_cpu; cpu++)
                if (sample_irq_on(&c.irqs[0], c.max_cpu, cpu) > 0)
                        c.irqs[0].per_cpu[0] = -1;
        c.cpus[0].busy = -1;
        assert_true(fabs(sample_irq_on(&r.irqs[0], r.max_cpu, 1) - 1500) < EPS);
        assert_true(fabs(r.cpus[0].busy - 0.45) < EPS);
        sample_rates_free(&c);
        sample_rates_free(&r);
        /* an empty source */
        r = (struct sample_rates) { .max_cpu = -1 };
        assert_int_equal(sample_rates_copy(&c, &r), 0);
        assert_int_equal(c.max_cpu, -1);
        assert_null(c.cpus);
        sample_rates_free(&c);
}

/* ---- snapshots of fixture trees and of this machine ---- */

static void test_snapshot_fixtures(_unused_ void **state) {
        static const struct {
                const char *what, *root;
                int r;
                size_t n_stat, n_numeric;
        } cases[] = {
                { "64-cpu host", "proc/host-64cpu", 0, 60, 78 },
                { "arm64 host", "proc/arm64-4cpu", 0, 4, 6 },
                { "2.6.32 host", "proc/host-2cpu", 0, 2, 9 },
                { .what = "no /proc/softirqs", .root = "proc/no-softirqs", .r = -ENOENT },
                { .what = "no /proc/interrupts", .root = "proc/no-interrupts", .r = -ENOENT },
                { .what = "not a tree at all", .root = "proc/cases", .r = -ENOENT },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char path[4096];
                struct sample_snapshot s;
                int fd = rootfs_open(fixture_path(cases[i].root, path, sizeof(path)));
                int r;

                assert_true(fd >= 0);
                r = sample_snapshot_take(fd, 42, &s);
                close(fd);
                if (r != cases[i].r)
                        fail_msg("%s: got %d, want %d", cases[i].what, r, cases[i].r);
                assert_int_equal(s.usec, 42);
                if (r < 0) {
                        assert_null(s.stat.cpus);
                        assert_null(s.softirqs.cpus);
                        assert_null(s.interrupts.irqs);
                        continue;
                }
                assert_int_equal(s.stat.n_cpus, cases[i].n_stat);
                assert_int_equal(s.interrupts.n_numeric, cases[i].n_numeric);
                sample_snapshot_free(&s);
        }
}

/* The same 256-CPU reading twice: no tick passed (CPUs invalid but
 * online), every IRQ valid at 0/s; and how long one compute takes. */
static void test_compute_256(_unused_ void **state) {
        char path[4096];
        struct sample_snapshot a, b;
        struct sample_rates r;
        struct timespec t0, t1;
        int fd = rootfs_open(fixture_path("proc/host-256cpu", path, sizeof(path)));

        assert_true(fd >= 0);
        assert_int_equal(sample_snapshot_take(fd, 0, &a), 0);
        assert_int_equal(sample_snapshot_take(fd, 1000000, &b), 0);
        close(fd);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(sample_compute(&a, &b, &r), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        print_message("[          ] 256-cpu compute: %.2f ms\n",
                      (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6);
        assert_int_equal(r.max_cpu, 255);
        for (int c = 0; c <= 255; c++) {
                assert_false(r.cpus[c].valid);
                assert_false(r.cpus[c].offline);
        }
        assert_int_equal(r.n_irqs, 299);
        for (size_t i = 0; i < r.n_irqs; i++) {
                assert_true(r.irqs[i].valid);
                assert_true(r.irqs[i].rate == 0);
                if (i > 0)
                        assert_true(r.irqs[i].irq > r.irqs[i - 1].irq);
        }
        sample_rates_free(&r);
        sample_snapshot_free(&a);
        sample_snapshot_free(&b);
}

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* This machine, 300 ms apart while we spin: our spinning shows as busy
 * time (the shares add up to 1 by construction, so that proves nothing). */
static void test_live(_unused_ void **state) {
        struct sample_snapshot a, b;
        struct sample_rates r;
        int fd = rootfs_open("/");
        int valid = 0;
        double busy = 0;
        uint64_t start;
        volatile uint64_t spin = 0;

        assert_true(fd >= 0);
        assert_int_equal(sample_snapshot_take(fd, now_usec(), &a), 0);
        start = now_usec();
        while (now_usec() - start < 300000)
                spin++;
        assert_int_equal(sample_snapshot_take(fd, now_usec(), &b), 0);
        close(fd);
        assert_int_equal(sample_compute(&a, &b, &r), 0);
        assert_true(r.interval_s >= 0.3);
        assert_true(r.max_cpu + 1 >= (int) sysconf(_SC_NPROCESSORS_ONLN));
        for (int c = 0; c <= r.max_cpu; c++) {
                const struct sample_cpu *s = &r.cpus[c];
                if (!s->valid)
                        continue;
                valid++;
                busy += s->busy;
                assert_true(s->busy >= 0 && s->busy <= 1);
                assert_true(s->net_frac >= 0 && s->net_frac <= 1);
        }
        /* 300 ms is 30 USER_HZ ticks per CPU: every online CPU has some */
        assert_int_equal(valid, (int) sysconf(_SC_NPROCESSORS_ONLN));
        /* one CPU spun for the whole interval (or another task ran there) */
        if (busy < 0.5)
                fail_msg("%.2f CPUs busy while this test spun on one", busy);
        assert_true(r.n_irqs > 0);
        sample_rates_free(&r);
        sample_snapshot_free(&a);
        sample_snapshot_free(&b);
}

/* The expected rate of ticks[t]'s IRQ j on column k from ticks[t-1],
 * dense: matched by IRQ and CPU number; false when the IRQ is invalid in
 * the interval (renamed, a count went backwards) or absent before. */
static bool expected_irq(const struct hand_snap *a, const struct hand_snap *b, size_t j, double *per_cpu, int max_cpu,
                         double *ret_rate) {
        const struct hand_irq *y = &b->irqs[j], *x = NULL;
        double dt = (double) (b->usec - a->usec) / 1e6;

        for (size_t i = 0; i < a->n_irqs; i++)
                if (a->irqs[i].irq == y->irq)
                        x = &a->irqs[i];
        *ret_rate = 0;
        for (int c = 0; c <= max_cpu; c++)
                per_cpu[c] = 0;
        if (!x || strcmp(x->name, y->name) != 0)
                return false;
        for (size_t k = 0; k < b->n_cpus; k++)
                for (size_t i = 0; i < a->n_cpus; i++) {
                        if (a->cpus[i].cpu != b->cpus[k].cpu)
                                continue;
                        if (y->counts[k] < x->counts[i]) {
                                for (int c = 0; c <= max_cpu; c++)
                                        per_cpu[c] = 0;
                                *ret_rate = 0;
                                return false;
                        }
                        per_cpu[b->cpus[k].cpu] = (double) (y->counts[k] - x->counts[i]) / dt;
                        *ret_rate += per_cpu[b->cpus[k].cpu];
                }
        return true;
}

/* Sparse rates and their EWMA equal, CPU by CPU, dense rates worked out
 * by hand from the counts (and their EWMA: hand-built dense rates through
 * sample_smooth), through IRQ moves, a counter reset, an IRQ re-requested
 * under another name, one vanishing and CPU hotplug. */
static void test_sparse_rates_match_dense(_unused_ void **state) {
#define CPU4(n) { .cpu = (n), .stat = { 100, 0, 50, 800, 0, 10, 40 }, .net_rx = 10 }
        static const struct hand_snap ticks[] = {
                { .usec = 1000000, .n_cpus = 4, .cpus = { CPU4(0), CPU4(1), CPU4(2), CPU4(3) }, .n_irqs = 3,
                  .irqs = { { 30, "eth0-TxRx-0", { 100, 0, 0, 0 } }, { 31, "eth0-TxRx-1", { 0, 50, 0, 0 } },
                            { 32, "nvme0q1", { 7, 7, 7, 7 } } } },
                { .usec = 2000000, .n_cpus = 4, .cpus = { CPU4(0), CPU4(1), CPU4(2), CPU4(3) }, .n_irqs = 3,
                  .irqs = { { 30, "eth0-TxRx-0", { 600, 0, 0, 0 } }, { 31, "eth0-TxRx-1", { 0, 50, 0, 0 } },
                            { 32, "nvme0q1", { 7, 7, 7, 7 } } } },
                /* IRQ 30 moves from CPU0 to CPU3; 31 starts on CPU2 */
                { .usec = 3000000, .n_cpus = 4, .cpus = { CPU4(0), CPU4(1), CPU4(2), CPU4(3) }, .n_irqs = 3,
                  .irqs = { { 30, "eth0-TxRx-0", { 600, 0, 0, 400 } }, { 31, "eth0-TxRx-1", { 0, 50, 90, 0 } },
                            { 32, "nvme0q1", { 7, 7, 7, 7 } } } },
                /* counter reset on IRQ 31 */
                { .usec = 4000000, .n_cpus = 4, .cpus = { CPU4(0), CPU4(1), CPU4(2), CPU4(3) }, .n_irqs = 3,
                  .irqs = { { 30, "eth0-TxRx-0", { 600, 0, 0, 900 } }, { 31, "eth0-TxRx-1", { 0, 0, 1, 0 } },
                            { 32, "nvme0q1", { 7, 7, 7, 8 } } } },
                /* IRQ 32 re-requested by another device */
                { .usec = 5000000, .n_cpus = 4, .cpus = { CPU4(0), CPU4(1), CPU4(2), CPU4(3) }, .n_irqs = 3,
                  .irqs = { { 30, "eth0-TxRx-0", { 600, 0, 0, 1500 } }, { 31, "eth0-TxRx-1", { 0, 0, 5, 0 } },
                            { 32, "eth1-TxRx-0", { 0, 0, 0, 0 } } } },
                /* IRQ 31 vanishes */
                { .usec = 6000000, .n_cpus = 4, .cpus = { CPU4(0), CPU4(1), CPU4(2), CPU4(3) }, .n_irqs = 2,
                  .irqs = { { 30, "eth0-TxRx-0", { 600, 0, 0, 2000 } }, { 32, "eth1-TxRx-0", { 0, 3, 0, 0 } } } },
                /* CPU2 goes offline: a column less */
                { .usec = 7000000, .n_cpus = 3, .cpus = { CPU4(0), CPU4(1), CPU4(3) }, .n_irqs = 2,
                  .irqs = { { 30, "eth0-TxRx-0", { 600, 0, 2600 } }, { 32, "eth1-TxRx-0", { 0, 9, 0 } } } },
                /* and comes back, with IRQ 31 */
                { .usec = 8000000, .n_cpus = 4, .cpus = { CPU4(0), CPU4(1), CPU4(2), CPU4(3) }, .n_irqs = 3,
                  .irqs = { { 30, "eth0-TxRx-0", { 600, 0, 0, 3000 } }, { 31, "eth0-TxRx-1", { 0, 0, 4, 0 } },
                            { 32, "eth1-TxRx-0", { 0, 9, 0, 0 } } } },
                { .usec = 9000000, .n_cpus = 4, .cpus = { CPU4(0), CPU4(1), CPU4(2), CPU4(3) }, .n_irqs = 3,
                  .irqs = { { 30, "eth0-TxRx-0", { 600, 0, 0, 3100 } }, { 31, "eth0-TxRx-1", { 0, 0, 8, 0 } },
                            { 32, "eth1-TxRx-0", { 0, 9, 0, 0 } } } },
        };
#undef CPU4
        struct sample_snapshot prev = {};
        struct sample_rates avg_s = { .max_cpu = -1 }, avg_d = { .max_cpu = -1 };

        for (size_t t = 0; t < ELEMENTSOF(ticks); t++) {
                struct sample_snapshot cur;

                build(&ticks[t], &cur);
                if (t > 0) {
                        struct sample_rates rs, rd;

                        assert_int_equal(sample_compute(&prev, &cur, &rs), 0);
                        /* the dense reference: rs's CPUs, IRQs by hand */
                        rd = (struct sample_rates) { .interval_s = rs.interval_s, .max_cpu = rs.max_cpu,
                                                     .n_irqs = rs.n_irqs };
                        rd.cpus = calloc((size_t) rs.max_cpu + 1, sizeof(*rd.cpus));
                        rd.irqs = calloc(rs.n_irqs + 1, sizeof(*rd.irqs));
                        assert_non_null(rd.cpus);
                        assert_non_null(rd.irqs);
                        memcpy(rd.cpus, rs.cpus, ((size_t) rs.max_cpu + 1) * sizeof(*rd.cpus));
                        for (size_t i = 0, j = 0; j < ticks[t].n_irqs; j++) {
                                struct sample_irq *d = &rd.irqs[i];
                                bool in_prev = false;

                                for (size_t k = 0; k < ticks[t - 1].n_irqs; k++)
                                        in_prev = in_prev || ticks[t - 1].irqs[k].irq == ticks[t].irqs[j].irq;
                                if (!in_prev)
                                        continue;
                                d->irq = ticks[t].irqs[j].irq;
                                d->per_cpu = calloc((size_t) rs.max_cpu + 1, sizeof(double));
                                assert_non_null(d->per_cpu);
                                d->valid = expected_irq(&ticks[t - 1], &ticks[t], j, d->per_cpu, rs.max_cpu, &d->rate);
                                assert_int_equal(rs.irqs[i].irq, d->irq);
                                assert_int_equal(rs.irqs[i].valid, d->valid);
                                assert_true(fabs(rs.irqs[i].rate - d->rate) < EPS);
                                assert_true(rs.irqs[i].nz_known);
                                for (int c = 0; c <= rs.max_cpu; c++)
                                        if (fabs(sample_irq_on(&rs.irqs[i], rs.max_cpu, c) - d->per_cpu[c]) > EPS)
                                                fail_msg("tick %zu IRQ %u cpu%d: %g, want %g", t, d->irq, c,
                                                         sample_irq_on(&rs.irqs[i], rs.max_cpu, c), d->per_cpu[c]);
                                i++;
                        }
                        assert_int_equal(sample_smooth(&avg_s, &rs, 0.3), 0);
                        assert_int_equal(sample_smooth(&avg_d, &rd, 0.3), 0);
                        assert_int_equal(avg_s.n_irqs, avg_d.n_irqs);
                        assert_int_equal(avg_s.max_cpu, avg_d.max_cpu);
                        for (size_t i = 0; i < avg_s.n_irqs; i++) {
                                const struct sample_irq *x = &avg_s.irqs[i], *y = &avg_d.irqs[i];

                                assert_int_equal(x->irq, y->irq);
                                assert_int_equal(x->valid, y->valid);
                                assert_true(fabs(x->rate - y->rate) < EPS);
                                for (int c = 0; c <= avg_s.max_cpu; c++) {
                                        double xv = sample_irq_on(x, avg_s.max_cpu, c);
                                        double yv = sample_irq_on(y, avg_d.max_cpu, c);
                                        if (fabs(xv - yv) > EPS)
                                                fail_msg("tick %zu IRQ %u cpu%d: %g (sparse) != %g (dense)", t, y->irq,
                                                         c, xv, yv);
                                }
                        }
                        sample_rates_free(&rs);
                        sample_rates_free(&rd);
                        sample_snapshot_free(&prev);
                }
                prev = cur;
        }
        sample_snapshot_free(&prev);
        sample_rates_free(&avg_s);
        sample_rates_free(&avg_d);
}

/* ---- threaded NAPI: kthread time as network load ---- */

static void test_napi_parse(_unused_ void **state) {
        static const struct {
                const char *what, *line;
                int r;
                int pid, cpu;
                uint64_t ticks, start;
        } cases[] = {
                { "veth kthread (6.18)",
                  "4242 (napi/veth0-514) S 2 0 0 0 -1 2129984 0 0 0 0 30 770 0 0 20 0 1 0 123456 0 0 "
                  "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
                  0, 4242, 1, 800, 123456 },
                { "name with space and paren",
                  "7 (napi/a b)c-1) R 2 0 0 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 9 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
                  "3\n",
                  0, 7, 3, 11, 9 },
                { "a userland process", "4242 (iperf3) R 1 0 0 0 -1 0 0 0 0 0 30 770 0 0 20 0 1 0 9 0 0 0 0 0 0 0 "
                  "0 0 0 0 0 0 0 0 0 1\n", -ESRCH },
                { "ksoftirqd", "15 (ksoftirqd/1) S 2 0 0 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 0 0 0 0 0 0 0 0 0 "
                  "0 0 0 0 0 0 1\n", -ESRCH },
                { "truncated before field 39", "4242 (napi/veth0-514) S 2 0 0 0 -1 0 0 0 0 0 30 770 0 0 20\n",
                  -EBADMSG },
                { "no name", "4242 S 2 0\n", -EBADMSG },
                { "bad utime", "4242 (napi/x-1) S 2 0 0 0 -1 0 0 0 0 0 3x 770 0 0 20 0 1 0 9 0 0 0 0 0 0 0 0 0 0 "
                  "0 0 0 0 0 0 1\n", -EBADMSG },
                { "no pid", "(napi/x-1) S 2 0 0 0 -1 0 0 0 0 0 3 770 0 0 20 0 1 0 9 0 0 0 0 0 0 0 0 0 0 "
                  "0 0 0 0 0 0 1\n", -EBADMSG },
                { "empty", "", -EBADMSG },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct sample_napi n = { .pid = -5 };
                int r = sample_parse_napi_stat(cases[i].line, strlen(cases[i].line), &n);

                if (r != cases[i].r)
                        fail_msg("%s: got %d, want %d", cases[i].what, r, cases[i].r);
                if (r < 0)
                        continue;
                if (n.pid != cases[i].pid || n.cpu != cases[i].cpu || n.ticks != cases[i].ticks ||
                    n.starttime != cases[i].start)
                        fail_msg("%s: pid %d cpu %d ticks %ju start %ju", cases[i].what, n.pid, n.cpu,
                                 (uintmax_t) n.ticks, (uintmax_t) n.starttime);
        }
}

/* Two CPUs over 1 s, 1000 ticks each, no softirq time at all (threaded NAPI
 * books none): cpu0 800 system, cpu1 100 system.  A napi kthread on cpu0
 * ran the given ticks; one on cpu1 (PID 11) 50. */
static void napi_pair(uint64_t napi0_ticks, uint64_t napi0_start_cur, struct sample_snapshot *a,
                      struct sample_snapshot *b) {
        static const struct hand_snap p = {
                .usec = 1000000, .n_cpus = 2,
                .cpus = { { 0, { 0, 0, 0, 0 }, 10, 0, 0, 0 }, { 1, { 0, 0, 0, 0 }, 10, 0, 0, 0 } },
        };
        static const struct hand_snap c = {
                .usec = 2000000, .n_cpus = 2,
                /* 20 TIMER runs and no NET runs: net_frac would say 0 */
                .cpus = { { 0, { 100, 0, 800, 100 }, 30, 0, 0, 0 }, { 1, { 0, 0, 100, 900 }, 30, 0, 0, 0 } },
        };

        build(&p, a);
        build(&c, b);
        a->napi = calloc(2, sizeof(*a->napi));
        b->napi = calloc(2, sizeof(*b->napi));
        assert_non_null(a->napi);
        assert_non_null(b->napi);
        a->n_napi = b->n_napi = 2;
        a->napi[0] = (struct sample_napi) { .pid = 10, .starttime = 500, .ticks = 1000, .cpu = 0 };
        b->napi[0] = (struct sample_napi) { .pid = 10, .starttime = napi0_start_cur, .ticks = 1000 + napi0_ticks, .cpu = 0 };
        /* the other order in the later reading: matched by PID, not index */
        b->napi[1] = b->napi[0];
        b->napi[0] = (struct sample_napi) { .pid = 11, .starttime = 600, .ticks = 250, .cpu = 1 };
        a->napi[1] = (struct sample_napi) { .pid = 11, .starttime = 600, .ticks = 200, .cpu = 1 };
}

static void test_napi_fold(_unused_ void **state) {
        static const struct {
                const char *what;
                uint64_t ticks, start;
                struct want_cpu cpu0;
                double napi0;
        } cases[] = {
                /* 800 of 1000 ticks in the kthread: all of cpu0's system
                 * time is receive work, softirq 0.8 and all of it NET */
                { "80% in a napi kthread", 800, 500,
                  { 0, true, false, 0.1, 0, 0.1, 0, 0, 0.8, 0, 0.9, 1, 0, 0 }, 0.8 },
                { "half of it", 400, 500, { 0, true, false, 0.1, 0.4, 0.1, 0, 0, 0.4, 0, 0.9, 1, 0, 0 }, 0.4 },
                /* more kthread ticks than system ticks (sampled at other
                 * moments): never more than the system share */
                { "capped at system", 900, 500, { 0, true, false, 0.1, 0, 0.1, 0, 0, 0.8, 0, 0.9, 1, 0, 0 }, 0.8 },
                /* PID reused by another thread: its ticks are not a delta */
                { "PID reused", 800, 501, { 0, true, false, 0.1, 0.8, 0.1, 0, 0, 0, 0, 0.9, 0, 0, 0 }, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct sample_snapshot a, b;
                struct sample_rates r, avg = { .max_cpu = -1 };
                double load;

                napi_pair(cases[i].ticks, cases[i].start, &a, &b);
                assert_int_equal(sample_compute(&a, &b, &r), 0);
                check_cpu(cases[i].what, &r, &cases[i].cpu0);
                if (fabs(r.cpus[0].napi - cases[i].napi0) > EPS)
                        fail_msg("%s: cpu0 napi %g, want %g", cases[i].what, r.cpus[0].napi, cases[i].napi0);
                /* cpu1: 50 of its 100 system ticks in PID 11 */
                check_cpu(cases[i].what, &r, &(struct want_cpu) { 1, true, false, 0, 0.05, 0.9, 0, 0, 0.05, 0, 0.1, 1, 0, 0 });
                /* the projection the daemon's drift check uses agrees */
                assert_true(sample_cpu_load_next(&a, &b, NULL, 0.5, 0, &load));
                if (fabs(load - cases[i].cpu0.softirq) > EPS)
                        fail_msg("%s: projected load %g, want %g", cases[i].what, load, cases[i].cpu0.softirq);
                /* smoothing carries it */
                assert_int_equal(sample_smooth(&avg, &r, 0.5), 0);
                assert_int_equal(sample_smooth(&avg, &r, 0.5), 0);
                assert_true(fabs(avg.cpus[0].napi - cases[i].napi0) < 1e-9);
                sample_rates_free(&avg);
                sample_rates_free(&r);
                sample_snapshot_free(&a);
                sample_snapshot_free(&b);
                assert_null(a.napi);
        }
}

/* /proc/net/softnet_stat: a CPU's dropped share of its packets between
 * two readings, by the CPU number of the 13th column (5.10+) or by line
 * on older kernels; the 32-bit counters wrap; a bad line drops the file. */
static void test_softnet_drop(_unused_ void **state) {
        static const struct {
                const char *what, *a, *b;
                int r;
                double drop0, drop1;
        } cases[] = {
                { "13 columns, CPU numbers",
                  "00000064 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
                  "00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001\n",
                  "000000e1 00000019 00000009 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
                  "00000020 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001\n",
                  0, 25.0 / 150, 0 },
                { "old kernel: by line, wrapped",
                  "fffffff0 00000000 00000000\n00000000 00000010 00000000\n",
                  "00000050 00000000 00000000\n00000030 00000040 00000000\n",
                  0, 0, 0.5 },
                { "bad line", "00000001\n", "00000001 00000000 00000000\n", -EBADMSG, 0, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct sample_snapshot a, b;
                struct sample_rates r;

                napi_pair(0, 500, &a, &b);
                assert_int_equal(sample_parse_softnet(cases[i].a, strlen(cases[i].a), &a), cases[i].r);
                assert_int_equal(sample_parse_softnet(cases[i].b, strlen(cases[i].b), &b), 0);
                assert_int_equal(sample_compute(&a, &b, &r), 0);
                if (fabs(r.cpus[0].drop - cases[i].drop0) > EPS || fabs(r.cpus[1].drop - cases[i].drop1) > EPS)
                        fail_msg("%s: drop %g %g, want %g %g", cases[i].what, r.cpus[0].drop, r.cpus[1].drop,
                                 cases[i].drop0, cases[i].drop1);
                sample_rates_free(&r);
                sample_snapshot_free(&a);
                sample_snapshot_free(&b);
        }
}

/* sample_snapshot_take_softnet over a tree: absent (a kernel or tree
 * without it) or malformed, no drop figures and an error for the caller
 * to say; a good file after a bad one is read again. */
static void test_softnet_take(_unused_ void **state) {
        char tmpl[] = "/tmp/test-sample-softnet-XXXXXX", cmd[128], path[256];
        char *base = mkdtemp(tmpl);
        struct sample_snapshot s = {};
        int fd;

        assert_non_null(base);
        for (const char *const *d = (const char *const[]) { "proc", "proc/net", NULL }; *d; d++) {
                snprintf(path, sizeof(path), "%s/%s", base, *d);
                assert_int_equal(mkdir(path, 0755), 0);
        }
        fd = rootfs_open(base);
        assert_true(fd >= 0);
        assert_int_equal(sample_snapshot_take_softnet(fd, &s), -ENOENT);
        assert_int_equal(s.n_softnet, 0);
        test_write_file(base, "proc/net/softnet_stat", "00000064 00000019 00000001\n00000010 00000000 00000000\n");
        assert_int_equal(sample_snapshot_take_softnet(fd, &s), 0);
        assert_int_equal(s.n_softnet, 2);
        assert_int_equal(s.softnet_drop[0], 0x19);
        test_write_file(base, "proc/net/softnet_stat", "00000064 zz\n");
        assert_int_equal(sample_snapshot_take_softnet(fd, &s), -EBADMSG);
        assert_int_equal(s.n_softnet, 0);
        assert_null(s.softnet_proc);
        close(fd);
        sample_snapshot_free(&s);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        assert_int_equal(system(cmd), 0);
}

/* The policy's view: a host whose /proc/stat softirq is 0 on every CPU but
 * whose napi kthread burns 80% of CPU0, behind two queue IRQs that fire
 * there, is network-hot on CPU0; the same host whose kthread was not seen
 * (its PID reused) is not. */
static void test_napi_policy_hot(_unused_ void **state) {
        static const struct {
                const char *what;
                uint64_t start;
                bool hot;
        } cases[] = {
                { "napi kthread seen", 500, true },
                { "napi kthread not seen", 501, false },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct sample_snapshot a, b;
                struct sample_rates r;
                struct fx f;

                napi_pair(800, cases[i].start, &a, &b);
                assert_int_equal(sample_compute(&a, &b, &r), 0);
                fx_init(&f, 2, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", -1, 2, true, 40, false, false);
                fx_place(&f, 40, 0);
                fx_place(&f, 41, 0);
                fx_rate(&f, 40, 0, 5000);
                fx_rate(&f, 41, 0, 5000);
                for (int c = 0; c < 2; c++)
                        f.load.cpus[c] = r.cpus[c];
                for (unsigned k = 1; k <= f.cfg.hot_samples + 1; k++)
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                if (cpuset_isset(&f.rep.hot, 0) != cases[i].hot)
                        fail_msg("%s: CPU0 hot %d, want %d", cases[i].what, cpuset_isset(&f.rep.hot, 0), cases[i].hot);
                fx_free(&f);
                sample_rates_free(&r);
                sample_snapshot_free(&a);
                sample_snapshot_free(&b);
        }
}

/* sample_snapshot_take_napi over a tree: the inventory's kthread PIDs, of
 * which one is gone and one is now a userland process. */
static void test_napi_take(_unused_ void **state) {
        char tmpl[] = "/tmp/test-sample-napi-XXXXXX";
        char *base = mkdtemp(tmpl);
        struct inventory_napi napis[] = {
                { .id = 514, .pid = 4242, .irq = -1, .cpu = -1 },
                { .id = 515, .pid = 4243, .irq = -1, .cpu = -1 },  /* gone */
                { .id = 516, .pid = 4244, .irq = -1, .cpu = -1 },  /* PID reused */
                { .id = 517, .pid = 0, .irq = -1, .cpu = -1 },     /* not threaded */
        };
        struct inventory_nic nic = { .name = "veth0", .napis = napis, .n_napis = ELEMENTSOF(napis) };
        struct inventory inv = { .nics = &nic, .n_nics = 1 };
        struct sample_snapshot s = {};
        char cmd[128];
        int fd;

        assert_non_null(base);
        for (const char *const *d = (const char *const[]) { "proc", "proc/4242", "proc/4244", NULL }; *d; d++) {
                char path[256];
                snprintf(path, sizeof(path), "%s/%s", base, *d);
                assert_int_equal(mkdir(path, 0755), 0);
        }
        test_write_file(base, "proc/4242/stat",
                        "4242 (napi/veth0-514) S 2 0 0 0 -1 0 0 0 0 0 30 770 0 0 20 0 1 0 77 0 0 0 0 0 0 0 0 0 "
                        "0 0 0 0 0 0 0 1\n");
        test_write_file(base, "proc/4244/stat",
                        "4244 (bash) S 2 0 0 0 -1 0 0 0 0 0 30 770 0 0 20 0 1 0 78 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
                        "0 0 1\n");
        fd = rootfs_open(base);
        assert_true(fd >= 0);
        assert_int_equal(sample_snapshot_take_napi(fd, &inv, &s), 0);
        assert_int_equal(s.n_napi, 1);
        assert_int_equal(s.napi[0].pid, 4242);
        assert_int_equal(s.napi[0].ticks, 800);
        assert_int_equal(s.napi[0].starttime, 77);
        assert_int_equal(s.napi[0].cpu, 1);
        /* no inventory: none, and the old reading is dropped */
        assert_int_equal(sample_snapshot_take_napi(fd, NULL, &s), 0);
        assert_int_equal(s.n_napi, 0);
        close(fd);
        sample_snapshot_free(&s);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        assert_int_equal(system(cmd), 0);
}

/* ---- per-queue packet rates (netdev qstats) ---- */

static void *dup_mem(const void *v, size_t len) {
        void *p = malloc(len);

        assert_non_null(p);
        memcpy(p, v, len);
        return p;
}

static struct netdev_qstats qs(int ifindex, enum netdev_queue_type type, uint32_t queue, uint64_t packets) {
        struct netdev_qstats q = { .ifindex = ifindex, .type = type, .queue = queue };

        if (type == NETDEV_QUEUE_RX) {
                q.rx_packets = packets;
                q.has_rx_packets = true;
        } else {
                q.tx_packets = packets;
                q.has_tx_packets = true;
        }
        return q;
}

static void snapshot_qstats(struct sample_snapshot *s, uint64_t usec, const struct netdev_qstats *v, size_t n) {
        *s = (struct sample_snapshot) { .usec = usec, .qstats_usec = usec, .has_qstats = true, .n_qstats = n };
        s->qstats = dup_mem(v, n * sizeof(*v));
}

/* Two readings 2 s apart: a rate per queue whose packet counter is in
 * both, sorted by ifindex, type, queue whatever the kernel's order; a
 * counter that went backwards (the device re-created), a queue only in
 * one reading or one without a packet counter has none. */
static void test_queue_rates(_unused_ void **state) {
        struct netdev_qstats before[] = {
                qs(3, NETDEV_QUEUE_RX, 0, 9000),
                qs(2, NETDEV_QUEUE_RX, 1, 500),
                qs(2, NETDEV_QUEUE_TX, 0, 50),
                qs(2, NETDEV_QUEUE_RX, 0, 1000),
                qs(6, NETDEV_QUEUE_RX, 0, 10),
        }, after[] = {
                qs(2, NETDEV_QUEUE_RX, 0, 3000),
                qs(2, NETDEV_QUEUE_TX, 0, 250),
                qs(2, NETDEV_QUEUE_RX, 1, 500),
                qs(3, NETDEV_QUEUE_RX, 0, 100),
                qs(5, NETDEV_QUEUE_RX, 0, 77),
                { .ifindex = 6, .type = NETDEV_QUEUE_RX, .queue = 0, .rx_bytes = 5, .has_rx_bytes = true },
        };
        struct sample_snapshot a, b, c = { .usec = 5 * SEC };
        struct sample_rates r;
        const struct sample_queue *q;

        snapshot_qstats(&a, 1 * SEC, before, ELEMENTSOF(before));
        snapshot_qstats(&b, 3 * SEC, after, ELEMENTSOF(after));
        assert_int_equal(sample_compute(&a, &b, &r), 0);
        assert_true(r.queues_read);
        assert_int_equal(r.n_queues, 3);
        q = sample_rates_queue(&r, 2, NETDEV_QUEUE_RX, 0);
        assert_non_null(q);
        assert_true(fabs(q->pps - 1000) < EPS);
        q = sample_rates_queue(&r, 2, NETDEV_QUEUE_TX, 0);
        assert_non_null(q);
        assert_true(fabs(q->pps - 100) < EPS);
        q = sample_rates_queue(&r, 2, NETDEV_QUEUE_RX, 1);
        assert_non_null(q);
        assert_true(fabs(q->pps - 0) < EPS);
        assert_null(sample_rates_queue(&r, 3, NETDEV_QUEUE_RX, 0));
        assert_null(sample_rates_queue(&r, 5, NETDEV_QUEUE_RX, 0));
        assert_null(sample_rates_queue(&r, 6, NETDEV_QUEUE_RX, 0));
        assert_null(sample_rates_queue(&r, 2, NETDEV_QUEUE_TX, 1));
        assert_true(r.queues[0].type == NETDEV_QUEUE_RX && r.queues[0].queue == 0);
        assert_true(r.queues[1].type == NETDEV_QUEUE_RX && r.queues[1].queue == 1);
        assert_true(r.queues[2].type == NETDEV_QUEUE_TX);
        sample_rates_free(&r);

        /* a tick that does not read them carries b's over with the IRQs:
         * no rates from it, and b is left without */
        sample_snapshot_carry_irqs(&b, &c);
        assert_false(b.has_qstats);
        assert_true(c.has_qstats && c.qstats_usec == 3 * SEC && c.n_qstats == ELEMENTSOF(after));
        assert_int_equal(sample_compute(&b, &c, &r), 0);
        assert_false(r.queues_read);
        assert_int_equal(r.n_queues, 0);
        sample_rates_free(&r);
        /* and neither from a reading whose time is not later */
        snapshot_qstats(&b, 6 * SEC, after, ELEMENTSOF(after));
        b.qstats_usec = 3 * SEC;
        assert_int_equal(sample_compute(&c, &b, &r), 0);
        assert_false(r.queues_read);
        sample_rates_free(&r);
        sample_snapshot_free(&a);
        sample_snapshot_free(&b);
        sample_snapshot_free(&c);
}

static struct sample_rates queue_rates(bool read, const struct sample_queue *v, size_t n) {
        struct sample_rates r = { .max_cpu = 0, .interval_s = 1, .queues_read = read, .n_queues = n };

        r.cpus = calloc(1, sizeof(*r.cpus));
        assert_non_null(r.cpus);
        r.cpus[0].valid = true;
        r.queues = n ? dup_mem(v, n * sizeof(*v)) : NULL;
        return r;
}

/* The EWMA per queue: blended when in both, new ones start from their
 * rate, ones gone are dropped; an interval without a reading keeps the
 * average's; copies are deep. */
static void test_queue_rates_smooth(_unused_ void **state) {
        const struct sample_queue q1[] = {
                { .ifindex = 2, .type = NETDEV_QUEUE_RX, .queue = 0, .pps = 1000 },
                { .ifindex = 2, .type = NETDEV_QUEUE_RX, .queue = 1, .pps = 400 },
        }, q2[] = {
                { .ifindex = 2, .type = NETDEV_QUEUE_RX, .queue = 0, .pps = 3000 },
                { .ifindex = 2, .type = NETDEV_QUEUE_RX, .queue = 2, .pps = 80 },
        };
        struct sample_rates avg = { .max_cpu = -1 }, n1 = queue_rates(true, q1, 2), n2 = queue_rates(true, q2, 2),
                            n3 = queue_rates(false, NULL, 0), copy;

        assert_int_equal(sample_smooth(&avg, &n1, 0.5), 0);
        assert_int_equal(avg.n_queues, 2);
        assert_int_equal(sample_smooth(&avg, &n2, 0.5), 0);
        assert_int_equal(avg.n_queues, 2);
        assert_true(fabs(sample_rates_queue(&avg, 2, NETDEV_QUEUE_RX, 0)->pps - 2000) < EPS);
        assert_true(fabs(sample_rates_queue(&avg, 2, NETDEV_QUEUE_RX, 2)->pps - 80) < EPS);
        assert_null(sample_rates_queue(&avg, 2, NETDEV_QUEUE_RX, 1));
        assert_int_equal(sample_smooth(&avg, &n3, 0.5), 0);
        assert_int_equal(avg.n_queues, 2);
        assert_true(avg.queues_read);
        assert_true(fabs(sample_rates_queue(&avg, 2, NETDEV_QUEUE_RX, 0)->pps - 2000) < EPS);
        assert_int_equal(sample_rates_copy(&copy, &avg), 0);
        assert_int_equal(copy.n_queues, 2);
        assert_ptr_not_equal(copy.queues, avg.queues);
        assert_true(fabs(sample_rates_queue(&copy, 2, NETDEV_QUEUE_RX, 2)->pps - 80) < EPS);
        sample_rates_free(&copy);
        sample_rates_free(&avg);
        sample_rates_free(&n1);
        sample_rates_free(&n2);
        sample_rates_free(&n3);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rates_normal),
                cmocka_unit_test(test_rates_hotplug),
                cmocka_unit_test(test_rates_invalid),
                cmocka_unit_test(test_rates_interval),
                cmocka_unit_test(test_smooth),
                cmocka_unit_test(test_smooth_moved_irq),
                cmocka_unit_test(test_carried_irqs),
                cmocka_unit_test(test_carried_softirqs),
                cmocka_unit_test(test_copy),
                cmocka_unit_test(test_snapshot_fixtures),
                cmocka_unit_test(test_compute_256),
                cmocka_unit_test(test_sparse_rates_match_dense),
                cmocka_unit_test(test_live),
                cmocka_unit_test(test_napi_parse),
                cmocka_unit_test(test_napi_fold),
                cmocka_unit_test(test_napi_take),
                cmocka_unit_test(test_napi_policy_hot),
                cmocka_unit_test(test_softnet_drop),
                cmocka_unit_test(test_softnet_take),
                cmocka_unit_test(test_queue_rates),
                cmocka_unit_test(test_queue_rates_smooth),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
