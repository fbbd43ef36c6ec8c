/* Sampling: a snapshot reads /proc/stat, /proc/softirqs and
 * /proc/interrupts; two give rates, smoothed by an EWMA.  A CPU or IRQ whose
 * counters went backwards, appeared or vanished is invalid for the interval. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"
#include "procfs.h"

/* A threaded-NAPI kthread (napi/DEV-ID): receive work /proc/stat books as
 * system time, not softirq. */
struct sample_napi {
        int pid;
        uint64_t starttime;      /* field 22: tells a reused PID apart */
        uint64_t ticks;          /* utime + stime (fields 14, 15), USER_HZ ticks */
        int cpu;                 /* field 39: the CPU it last ran on */
};

struct sample_snapshot {
        uint64_t usec;           /* CLOCK_MONOTONIC of the reading, given by the caller */
        uint64_t irq_usec;       /* when interrupts was read if carried over, else 0 */
        uint64_t softirq_usec;   /* the same for softirqs */
        struct procfs_stat stat;
        struct procfs_softirqs softirqs;
        struct procfs_interrupts interrupts;
        struct sample_napi *napi; /* sample_snapshot_take_napi's, none if not */
        size_t n_napi;
        /* netdev qstats per queue, read and carried with /proc/interrupts */
        struct netdev_qstats *qstats;
        size_t n_qstats;
        bool has_qstats;
        uint64_t qstats_usec;    /* when they were read */
        /* /proc/net/softnet_stat per CPU (index = CPU), read on full
         * ticks while a CPU reads saturated: packets processed and
         * dropped; n_softnet 0 when not read */
        uint64_t *softnet_proc, *softnet_drop;
        int n_softnet;
};

/* Reads all three files; now_usec is stored as the time. */
int sample_snapshot_take(int rootfd, uint64_t now_usec, struct sample_snapshot *ret);
/* The parts of sample_snapshot_take(): _cpus starts *ret, each other file
 * is read or carried (moved) from prev, with the qstats.  On error *ret is freed. */
int sample_snapshot_take_cpus(int rootfd, uint64_t now_usec, struct sample_snapshot *ret);
/* Parses /proc/net/softnet_stat into s's softnet arrays. */
int sample_parse_softnet(const char *buf, size_t len, struct sample_snapshot *s);
/* Reads /proc/net/softnet_stat into *ret (its drop figures are none when
 * this fails: ENOENT on a kernel or tree without it, EBADMSG when malformed). */
int sample_snapshot_take_softnet(int rootfd, struct sample_snapshot *ret);
int sample_snapshot_take_softirqs(int rootfd, struct sample_snapshot *ret);
void sample_snapshot_carry_softirqs(struct sample_snapshot *prev, struct sample_snapshot *ret);
int sample_snapshot_take_irqs(int rootfd, struct sample_snapshot *ret);
void sample_snapshot_carry_irqs(struct sample_snapshot *prev, struct sample_snapshot *ret);
/* Reads the stat of each NAPI kthread inv knows into ret->napi; one gone
 * or not napi/... is left out.  0, or -ENOMEM. */
int sample_snapshot_take_napi(int rootfd, const struct inventory *inv, struct sample_snapshot *ret);
/* Reads every queue's qstats into ret->qstats when inv has the netdev
 * family and the kernel qstats-get (6.9); else leaves none.  0 or -errno. */
int sample_snapshot_take_qstats(const struct inventory *inv, uint64_t now_usec, struct sample_snapshot *ret);
/* Parses a proc/PID/stat line: 0, -EBADMSG, -ESRCH when not napi/.  Pure. */
int sample_parse_napi_stat(const char *buf, size_t len, struct sample_napi *ret);
static inline uint64_t sample_snapshot_irq_usec(const struct sample_snapshot *s) {
        return s->irq_usec ? s->irq_usec : s->usec;
}
static inline uint64_t sample_snapshot_softirq_usec(const struct sample_snapshot *s) {
        return s->softirq_usec ? s->softirq_usec : s->usec;
}
void sample_snapshot_free(struct sample_snapshot *s);

struct sample_cpu {
        bool valid;              /* false: offline, new, or counters reset */
        bool offline;            /* no /proc/stat line in the later snapshot */
        /* shares of the interval's ticks, 0..1 */
        double usr, sys, idle, iowait, irq, softirq, steal;
        double busy;             /* 1 - idle - iowait */
        double net_frac;         /* NET_RX+NET_TX share of softirq runs */
        double net_rx_rate, net_tx_rate;     /* softirq runs per second */
        /* NAPI kthreads' share on this CPU, moved from sys into softirq
         * (net_frac raised to match): the receive work NET_RX would do */
        double napi;
        /* Share of the packets for this CPU's network work that it dropped
         * (softnet_stat): its demand is its irq+softirq / (1 - drop). */
        double drop;
};

struct sample_irq {
        unsigned irq;
        bool valid;
        double rate;             /* interrupts per second, all CPUs */
        /* Rates a CPU: sparse when nz_known (per_cpu[k] on CPU nz_cpu[k],
         * ascending, nz_lo..nz_hi), dense per_cpu[cpu] otherwise (tests).
         * Read through sample_irq_on(). */
        double *per_cpu;
        int *nz_cpu;
        unsigned n_nz;
        bool nz_known;
        int nz_lo, nz_hi;
};

/* IRQ si's rate on cpu (0..max_cpu of its rates), 0 where it does not fire. */
static inline double sample_irq_on(const struct sample_irq *si, int max_cpu, int cpu) {
        unsigned lo = 0, hi;

        if (!si || !si->per_cpu || cpu < 0 || cpu > max_cpu)
                return 0;
        if (!si->nz_known)
                return si->per_cpu[cpu];
        hi = si->n_nz;
        while (lo < hi) {
                unsigned mid = lo + (hi - lo) / 2;
                if (si->nz_cpu[mid] == cpu)
                        return si->per_cpu[mid];
                if (si->nz_cpu[mid] < cpu)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return 0;
}

/* A queue's packet rate from its qstats (IRQ counts are only a proxy). */
struct sample_queue {
        int ifindex;
        enum netdev_queue_type type;
        uint32_t queue;
        double pps;              /* rx packets/s of an rx queue, tx of a tx queue */
};

struct sample_rates {
        double interval_s;
        int max_cpu;             /* highest CPU number seen; arrays hold max_cpu+1 */
        struct sample_cpu *cpus; /* indexed by CPU number */
        struct sample_irq *irqs; /* numeric IRQs present in both snapshots, by IRQ number order */
        size_t n_irqs;
        /* Blocks all per_cpu and nz_cpu point into; NULL: each per_cpu
         * is freed on its own (hand-built rates in tests) */
        double *per_cpu_storage;
        int *nz_cpu_storage;
        bool irqs_carried;       /* no interrupts reading this interval: irqs empty */
        bool softirqs_carried;   /* no softirqs reading: the net_* fields are 0 */
        /* sorted by ifindex, type, queue; those with counters in both readings */
        struct sample_queue *queues;
        size_t n_queues;
        bool queues_read;        /* computed from two readings, not carried */
};

/* Rates between prev and cur (cur later, else -EINVAL).  A CPU missing
 * from either, with a counter backwards (iowait clamped, proc(5)) or no
 * tick is invalid; so is an IRQ whose counts went back or name changed. */
int sample_compute(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                   struct sample_rates *ret);
void sample_rates_free(struct sample_rates *r);
const struct sample_irq *sample_rates_irq(const struct sample_rates *r, unsigned irq);
/* NULL when the queue's counters are not known. */
const struct sample_queue *sample_rates_queue(const struct sample_rates *r, int ifindex,
                                              enum netdev_queue_type type, uint32_t queue);

/* EWMA avg = alpha*new + (1-alpha)*avg per CPU, IRQ and queue: new entries
 * start from their value, invalid ones keep the average, gone ones are
 * dropped, carried readings leave avg's.  alpha in (0, 1], else -EINVAL. */
int sample_smooth(struct sample_rates *avg, const struct sample_rates *new, double alpha);
/* The irq+softirq share of cpu the next sample_smooth() would give,
 * without computing rates; false when the interval is unusable. */
bool sample_cpu_load_next(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                          const struct sample_rates *avg, double alpha, int cpu, double *ret);
/* Whether some CPU's projected load moves by drift or more from ref[cpu]
 * (NAN or beyond ref_max_cpu: none). */
bool sample_load_drifted(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                         const struct sample_rates *avg, double alpha, const double *ref, int ref_max_cpu,
                         double drift);
/* Deep copy; *ret is overwritten, not freed first. */
int sample_rates_copy(struct sample_rates *ret, const struct sample_rates *src);
