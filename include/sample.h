/* Sampling: a snapshot is one reading of /proc/stat, /proc/softirqs and
 * /proc/interrupts; two snapshots give rates.  Smoothing is an EWMA over
 * rates.  Nonsense is never produced: a CPU or IRQ whose counters went
 * backwards, appeared or vanished between snapshots is marked invalid for
 * that interval (logged at debug). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"
#include "procfs.h"
#include "rootfs.h"

/* One threaded-NAPI polling kthread (napi/DEV-ID) as proc/PID/stat shows
 * it.  Its CPU time is receive work that /proc/stat books as system time,
 * not softirq, so a model of softirq time alone goes blind on a host that
 * uses threaded NAPI. */
struct sample_napi {
        int pid;
        uint64_t starttime;      /* field 22: tells a reused PID apart */
        uint64_t ticks;          /* utime + stime (fields 14, 15), USER_HZ ticks */
        int cpu;                 /* field 39: the CPU it last ran on */
};

struct sample_snapshot {
        uint64_t usec;           /* CLOCK_MONOTONIC of the reading, given by the caller */
        /* When interrupts was read, if earlier than usec (carried over from
         * an earlier snapshot by sample_snapshot_carry_irqs); 0: at usec. */
        uint64_t irq_usec;
        /* The same for softirqs (sample_snapshot_carry_softirqs). */
        uint64_t softirq_usec;
        struct procfs_stat stat;
        struct procfs_softirqs softirqs;
        struct procfs_interrupts interrupts;
        /* the NAPI kthreads read by sample_snapshot_take_napi, none if not */
        struct sample_napi *napi;
        size_t n_napi;
        /* Per-queue counters of the kernel's netdev family (qstats-get,
         * scope queue), read by sample_snapshot_take_qstats with
         * /proc/interrupts and carried over with it; has_qstats false when
         * not read (no netdev family, a kernel before 6.9, not yet). */
        struct netdev_qstats *qstats;
        size_t n_qstats;
        bool has_qstats;
        uint64_t qstats_usec;    /* when they were read */
};

/* The files read at every tick, kept open between ticks (a calm tick on
 * a host is mostly its wake-up and these two reads). */
struct sample_files {
        struct rootfs_held_file stat, softirqs;
};
/* Closes and frees both; f holds nothing after. */
void sample_files_free(struct sample_files *f);

/* Reads all three files under rootfd; now_usec is stored as the time. */
int sample_snapshot_take(int rootfd, uint64_t now_usec, struct sample_snapshot *ret);
/* The parts of sample_snapshot_take(), for a caller that decides from the
 * CPU load what else to read (a calm tick needs /proc/stat alone; a
 * 1024-CPU host's /proc/interrupts is 20 MB): _cpus reads /proc/stat into
 * a new *ret (through files when non-NULL, else opened afresh); then
 * either _softirqs reads /proc/softirqs into it, or _carry_softirqs moves
 * prev's reading into it, leaving prev without one; and either _irqs reads
 * /proc/interrupts into it, or _carry_irqs moves prev's reading into it.
 * On error *ret is freed. */
int sample_snapshot_take_cpus(int rootfd, struct sample_files *files, uint64_t now_usec,
                              struct sample_snapshot *ret);
int sample_snapshot_take_softirqs(int rootfd, struct sample_files *files, struct sample_snapshot *ret);
void sample_snapshot_carry_softirqs(struct sample_snapshot *prev, struct sample_snapshot *ret);
int sample_snapshot_take_irqs(int rootfd, struct sample_snapshot *ret);
void sample_snapshot_carry_irqs(struct sample_snapshot *prev, struct sample_snapshot *ret);
/* (_carry_irqs moves prev's queue counters along with the IRQs: both are
 * the reading of a full tick.) */
/* Reads proc/PID/stat of each NAPI kthread inv knows (inventory_nic.napis[].pid)
 * into ret->napi, replacing what it held.  A thread that is gone, whose
 * stat does not parse or whose name is not napi/... (its PID reused since
 * the inventory was read) is left out.  0, or -ENOMEM (ret->napi empty). */
int sample_snapshot_take_napi(int rootfd, const struct inventory *inv, struct sample_snapshot *ret);
/* Reads the per-queue counters of every device in the current network
 * namespace (netdev_dump_qstats on nd's socket) into ret->qstats at
 * now_usec, replacing what it held, when inv says the kernel has the
 * netdev family; else, without nd, or when the kernel has no qstats-get
 * (before 6.9), leaves none (and opens no socket).  0 or -errno (ret
 * without qstats then). */
int sample_snapshot_take_qstats(const struct inventory *inv, struct netdev_handle *nd, uint64_t now_usec,
                                struct sample_snapshot *ret);
/* Parses one proc/PID/stat line into *ret (pid from field 1): 0,
 * -EBADMSG when malformed, -ESRCH when the task is not a NAPI kthread (its
 * name does not start with "napi/").  Pure. */
int sample_parse_napi_stat(const char *buf, size_t len, struct sample_napi *ret);
/* When s's /proc/interrupts reading was taken. */
static inline uint64_t sample_snapshot_irq_usec(const struct sample_snapshot *s) {
        return s->irq_usec ? s->irq_usec : s->usec;
}
/* When s's /proc/softirqs reading was taken. */
static inline uint64_t sample_snapshot_softirq_usec(const struct sample_snapshot *s) {
        return s->softirq_usec ? s->softirq_usec : s->usec;
}
void sample_snapshot_free(struct sample_snapshot *s);

struct sample_cpu {
        bool valid;              /* false: offline, new, or counters reset */
        bool offline;            /* no /proc/stat line in the later snapshot
                                  * (implies !valid); zero in hand-built rates */
        /* shares of the interval's ticks, 0..1 (sum of all ~1) */
        double usr, sys, idle, iowait, irq, softirq, steal;
        double busy;             /* 1 - idle - iowait */
        /* NET_RX+NET_TX runs / all softirq runs on this CPU in the interval
         * (0 when there were none): tells NET work from TIMER/RCU/... */
        double net_frac;
        double net_rx_rate, net_tx_rate;     /* softirq runs per second */
        /* Threaded NAPI (sample_snapshot_take_napi in both snapshots): the
         * share of the interval's ticks the NAPI kthreads spent while this
         * was the CPU they last ran on.  That time is moved from sys into
         * softirq (and net_frac raised so that softirq * net_frac grows by
         * exactly napi): it is the same receive work NET_RX softirq would
         * have done, so everything that reads irq+softirq or the NET part of
         * softirq sees it without knowing about threads. */
        double napi;
};

struct sample_irq {
        unsigned irq;
        bool valid;
        double rate;             /* interrupts per second, all CPUs */
        /* Where it fires, interrupts per second a CPU.  Sparse when
         * nz_known (what the sample functions build: an IRQ fires on one
         * CPU or a few): per_cpu[k] is the rate on CPU nz_cpu[k], k < n_nz,
         * CPUs ascending, nz_lo and nz_hi the first and last of them (lo >
         * hi and per_cpu NULL: none).  Dense when not (hand-built rates in
         * tests): per_cpu[0..max_cpu].  Read through sample_irq_on(). */
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

/* A queue's packet rate from the netdev family's per-queue counters: what
 * the queue moved, where the IRQ count is only a proxy for it (NAPI polls
 * many packets per interrupt, and more of them the busier it is). */
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
        /* When non-NULL, every irqs[i].per_cpu and nz_cpu point into these
         * two blocks (what sample_compute/smooth/copy build: sparse, so
         * their size follows the IRQs, not IRQs x CPUs); when NULL,
         * sample_rates_free frees each per_cpu on its own (hand-built
         * rates in tests). */
        double *per_cpu_storage;
        int *nz_cpu_storage;
        /* No /proc/interrupts reading in this interval (it was carried
         * over): irqs is empty, and sample_smooth() keeps the average's. */
        bool irqs_carried;
        /* No /proc/softirqs reading in this interval (cur's is prev's,
         * carried over): every CPU's net_frac, net_rx_rate and net_tx_rate
         * are 0 for unknown, and sample_smooth() keeps the average's. */
        bool softirqs_carried;
        /* Queue packet rates, sorted by ifindex, type, queue: those with
         * counters in both snapshots' qstats readings (none when either
         * lacks them or cur's was carried over; a counter that went
         * backwards leaves its queue out).  Read with sample_rates_queue. */
        struct sample_queue *queues;
        size_t n_queues;
        bool queues_read;        /* computed from two readings, not carried */
};

/* Rates between prev and cur (cur later).  -EINVAL if cur is not later.
 * Shares come from /proc/stat ticks (guest/guest_nice are already inside
 * user/nice and are not added again); usr = user + nice.  A CPU is invalid
 * when it lacks a stat line or a softirqs column in either snapshot, a
 * counter went backwards (iowait excepted: proc(5) documents that it may
 * decrease; its delta is clamped to 0) or no tick passed.  An IRQ whose
 * counts went backwards or whose action name changed is invalid (rate 0);
 * IRQ columns are matched by CPU number, so hotplug between snapshots
 * leaves the other CPUs' rates intact.  IRQ rates are over the time between
 * the two /proc/interrupts readings; when cur's was carried over from prev
 * there are none (irqs_carried).  NAPI kthreads read in both snapshots
 * (same PID and start time) are folded into their CPU's shares (napi). */
int sample_compute(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                   struct sample_rates *ret);
void sample_rates_free(struct sample_rates *r);
/* The rates of irq, or NULL. */
const struct sample_irq *sample_rates_irq(const struct sample_rates *r, unsigned irq);
/* The packet rate of a queue, or NULL when its counters are not known. */
const struct sample_queue *sample_rates_queue(const struct sample_rates *r, int ifindex,
                                              enum netdev_queue_type type, uint32_t queue);

/* EWMA: avg = alpha*new + (1-alpha)*avg, per CPU, per IRQ and per queue
 * (a queue new in new starts from its rate; when new has no queue
 * reading, avg's queues stay as they are; else those absent from new are
 * dropped); an IRQ's
 * per-CPU rates are its smoothed rate spread over the CPUs as in the newest
 * interval in which it fired (new's, or else avg's).  An empty avg
 * (max_cpu < 0 / zeroed struct) is initialised from new; entries invalid in
 * new keep their average; entries new in new start from their value; IRQs or
 * CPUs gone from new (IRQ absent, CPU offline) are dropped; when new has
 * irqs_carried, avg's IRQs stay as they are.  alpha in
 * (0, 1], else -EINVAL.  On error avg is unchanged. */
int sample_smooth(struct sample_rates *avg, const struct sample_rates *new, double alpha);
/* The irq+softirq share (NAPI kthreads' included) of cpu that sample_smooth(avg, rates of prev..cur,
 * alpha) would give, without computing the rates: the share in the
 * interval, blended with avg's when avg has the CPU.  False when the
 * interval is not usable for the CPU (no stat line in both, no ticks,
 * counters backwards). */
bool sample_cpu_load_next(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                          const struct sample_rates *avg, double alpha, int cpu, double *ret);
/* Whether some CPU of cur's /proc/stat would move by drift or more from
 * ref[cpu] (a smoothed irq+softirq share; NAN or beyond ref_max_cpu: none)
 * by the next sample_smooth(avg, ...), as sample_cpu_load_next() projects
 * it.  CPUs whose interval is not usable are skipped. */
bool sample_load_drifted(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                         const struct sample_rates *avg, double alpha, const double *ref, int ref_max_cpu,
                         double drift);
/* Deep copy; *ret is overwritten, not freed first. */
int sample_rates_copy(struct sample_rates *ret, const struct sample_rates *src);
