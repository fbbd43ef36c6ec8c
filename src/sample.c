/* Snapshots, the rates between two, their EWMA.  Matched by CPU and IRQ
 * number, never by column: hotplug moves the columns between readings. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "netdev.h"
#include "cpuset.h"
#include "procfs.h"
#include "rootfs.h"
#include "sample.h"
#include "util.h"

/* A reading into s failed with r (< 0): s is freed, its time kept. */
static int take_failed(struct sample_snapshot *s, int r) {
        if (r < 0) {
                uint64_t now_usec = s->usec;

                sample_snapshot_free(s);
                s->usec = now_usec;
        }
        return r;
}

int sample_snapshot_take_cpus(int rootfd, uint64_t now_usec, struct sample_snapshot *ret) {
        *ret = (struct sample_snapshot) { .usec = now_usec };
        return take_failed(ret, procfs_stat_read(rootfd, &ret->stat));
}

static void softnet_drop_arrays(struct sample_snapshot *s) {
        free(s->softnet_proc);
        free(s->softnet_drop);
        s->softnet_proc = s->softnet_drop = NULL;
        s->n_softnet = 0;
}

/* softnet_seq_show() (net/core/net-procfs.c): a line per possible CPU with
 * work, hex columns processed, dropped (backlog full), time_squeeze, ...,
 * and since 5.10 the CPU's number as the 13th; older lines are in CPU
 * order.  The counters are 32-bit. */
int sample_parse_softnet(const char *buf, size_t len, struct sample_snapshot *s) {
        size_t allocated = 0, pos = 0;
        int line = 0;

        softnet_drop_arrays(s);
        while (pos < len) {
                unsigned long v[13];
                size_t end = pos;
                int n = 0, cpu;
                char tmp[256];

                while (end < len && buf[end] != '\n')
                        end++;
                if (end - pos >= sizeof(tmp))
                        return -EBADMSG;
                memcpy(tmp, buf + pos, end - pos);
                tmp[end - pos] = 0;
                pos = end + 1;
                for (char *p = tmp, *e; n < 13; p = e) {
                        errno = 0;
                        v[n] = strtoul(p, &e, 16);
                        if (e == p || errno)
                                break;
                        n++;
                }
                if (n == 0)
                        continue;
                if (n < 3)
                        return -EBADMSG;
                cpu = n >= 13 ? (int) v[12] : line;
                line++;
                if (cpu < 0 || cpu >= CPUSET_MAX)
                        return -EBADMSG;
                if (cpu >= s->n_softnet) {
                        size_t a2 = allocated;
                        if (util_grow((void **) &s->softnet_proc, &allocated, (size_t) cpu + 1, sizeof(uint64_t)) < 0 ||
                            util_grow((void **) &s->softnet_drop, &a2, (size_t) cpu + 1, sizeof(uint64_t)) < 0)
                                return -ENOMEM;
                        for (int c = s->n_softnet; c <= cpu; c++)
                                s->softnet_proc[c] = s->softnet_drop[c] = UINT64_MAX;
                        s->n_softnet = cpu + 1;
                }
                s->softnet_proc[cpu] = v[0];
                s->softnet_drop[cpu] = v[1];
        }
        return 0;
}

int sample_snapshot_take_softnet(int rootfd, struct sample_snapshot *ret) {
        _cleanup_(freep) char *buf = NULL;
        size_t len = 0;
        int r;

        r = rootfs_read(rootfd, "proc/net/softnet_stat", &buf, &len);
        if (r >= 0)
                r = sample_parse_softnet(buf, len, ret);
        if (r < 0)
                softnet_drop_arrays(ret);
        return r;
}

int sample_snapshot_take_softirqs(int rootfd, struct sample_snapshot *ret) {
        procfs_softirqs_free(&ret->softirqs);
        ret->softirq_usec = 0;
        softnet_drop_arrays(ret);
        return take_failed(ret, procfs_softirqs_read(rootfd, &ret->softirqs));
}

void sample_snapshot_carry_softirqs(struct sample_snapshot *prev, struct sample_snapshot *ret) {
        procfs_softirqs_free(&ret->softirqs);
        ret->softirqs = prev->softirqs;
        ret->softirq_usec = sample_snapshot_softirq_usec(prev);
        prev->softirqs = (struct procfs_softirqs) {};
        softnet_drop_arrays(ret);
        ret->softnet_proc = prev->softnet_proc;
        ret->softnet_drop = prev->softnet_drop;
        ret->n_softnet = prev->n_softnet;
        prev->softnet_proc = prev->softnet_drop = NULL;
        prev->n_softnet = 0;
}

int sample_snapshot_take_irqs(int rootfd, struct sample_snapshot *ret) {
        procfs_interrupts_free(&ret->interrupts);
        ret->irq_usec = 0;
        return take_failed(ret, procfs_interrupts_read(rootfd, &ret->interrupts));
}

static void qstats_drop(struct sample_snapshot *s) {
        free(s->qstats);
        s->qstats = NULL;
        s->n_qstats = 0;
        s->has_qstats = false;
}

void sample_snapshot_carry_irqs(struct sample_snapshot *prev, struct sample_snapshot *ret) {
        procfs_interrupts_free(&ret->interrupts);
        ret->interrupts = prev->interrupts;
        ret->irq_usec = sample_snapshot_irq_usec(prev);
        prev->interrupts = (struct procfs_interrupts) {};
        free(ret->qstats);
        ret->qstats = prev->qstats;
        ret->n_qstats = prev->n_qstats;
        ret->has_qstats = prev->has_qstats;
        ret->qstats_usec = prev->qstats_usec;
        prev->qstats = NULL;
        qstats_drop(prev);
}

int sample_snapshot_take_qstats(const struct inventory *inv, uint64_t now_usec, struct sample_snapshot *ret) {
        struct netdev_info info = {};
        int r;

        qstats_drop(ret);
        if (!inv || !inv->has_netdev)
                return 0;
        r = netdev_dump_qstats(&info);
        if (r == -EOPNOTSUPP)
                return 0;
        if (r < 0)
                return r;
        ret->qstats = info.qstats;
        ret->n_qstats = info.n_qstats;
        ret->has_qstats = true;
        ret->qstats_usec = now_usec;
        info.qstats = NULL;
        netdev_info_free(&info);
        return 0;
}

int sample_snapshot_take(int rootfd, uint64_t now_usec, struct sample_snapshot *ret) {
        int r;

        r = sample_snapshot_take_cpus(rootfd, now_usec, ret);
        if (r >= 0)
                r = sample_snapshot_take_softirqs(rootfd, ret);
        if (r < 0)
                return r;
        return sample_snapshot_take_irqs(rootfd, ret);
}

void sample_snapshot_free(struct sample_snapshot *s) {
        if (!s)
                return;
        procfs_stat_free(&s->stat);
        procfs_softirqs_free(&s->softirqs);
        procfs_interrupts_free(&s->interrupts);
        softnet_drop_arrays(s);
        free(s->napi);
        s->napi = NULL;
        s->n_napi = 0;
        qstats_drop(s);
}

int sample_parse_napi_stat(const char *buf, size_t len, struct sample_napi *ret) {
        struct procfs_pid_stat st;
        int r;

        r = procfs_parse_pid_stat(buf, len, &st);
        if (r < 0)
                return r;
        if (st.processor < 0 || __builtin_add_overflow(st.utime, st.stime, &st.utime))
                return -EBADMSG;
        if (st.comm_len < 5 || memcmp(buf + st.comm_off, "napi/", 5) != 0)
                return -ESRCH;
        *ret = (struct sample_napi) {
                .pid = st.pid, .starttime = st.starttime, .ticks = st.utime, .cpu = st.processor,
        };
        return 0;
}

int sample_snapshot_take_napi(int rootfd, const struct inventory *inv, struct sample_snapshot *ret) {
        size_t allocated = 0;

        free(ret->napi);
        ret->napi = NULL;
        ret->n_napi = 0;
        for (size_t i = 0; inv && i < inv->n_nics; i++)
                for (size_t k = 0; k < inv->nics[i].n_napis; k++) {
                        int pid = inv->nics[i].napis[k].pid;
                        char path[48], buf[1024];
                        struct sample_napi sn;
                        size_t len;

                        if (pid <= 0)
                                continue;
                        snprintf(path, sizeof(path), "proc/%d/stat", pid);
                        if (rootfs_read_small(rootfd, path, buf, sizeof(buf), &len) < 0 ||
                            sample_parse_napi_stat(buf, len, &sn) < 0 || sn.pid != pid)
                                continue;
                        if (util_grow((void **) &ret->napi, &allocated, ret->n_napi + 1, sizeof(sn)) < 0)
                                return -ENOMEM;
                        ret->napi[ret->n_napi++] = sn;
                }
        return 0;
}

/* The NAPI share of cpu, at most its system share, where the kernel books
 * it: the ticks NAPI kthreads spent between the snapshots, booked on the
 * CPU they last ran on (exact for a pinned thread). */
static double napi_share(const struct sample_snapshot *prev, const struct sample_snapshot *cur, int cpu,
                         const uint64_t d[static CPUSTAT_MAX], uint64_t total) {
        uint64_t sum = 0;

        for (size_t i = 0; i < cur->n_napi; i++) {
                const struct sample_napi *b = &cur->napi[i];

                if (b->cpu != cpu)
                        continue;
                /* both read in the inventory's order: the same index first */
                for (size_t j = 0; j <= prev->n_napi; j++) {
                        const struct sample_napi *a = j == 0 ? (i < prev->n_napi ? &prev->napi[i] : NULL) : &prev->napi[j - 1];

                        if (a && a->pid == b->pid && a->starttime == b->starttime) {
                                if (b->ticks >= a->ticks)
                                        sum += b->ticks - a->ticks;
                                break;
                        }
                }
        }
        return (double) MIN(sum, d[CPUSTAT_SYSTEM]) / (double) total;
}

static int snapshot_max_cpu(const struct sample_snapshot *s) {
        int m = -1;

        /* the parsers keep the CPU lists ascending */
        if (s->stat.n_cpus > 0)
                m = MAX(m, s->stat.cpus[s->stat.n_cpus - 1].cpu);
        if (s->softirqs.n_cpus > 0)
                m = MAX(m, s->softirqs.cpus[s->softirqs.n_cpus - 1]);
        if (s->interrupts.n_cpus > 0)
                m = MAX(m, s->interrupts.cpus[s->interrupts.n_cpus - 1]);
        return m;
}

/* cpu's /proc/stat deltas between the snapshots into d[] and their sum;
 * false (and a debug line) when the interval is not usable for it. */
static bool stat_deltas(const struct sample_snapshot *prev, const struct sample_snapshot *cur, int cpu,
                        uint64_t d[static CPUSTAT_MAX], uint64_t *ret_total, bool *ret_offline) {
        const struct procfs_cpustat *a = procfs_stat_cpu(&prev->stat, cpu);
        const struct procfs_cpustat *b = procfs_stat_cpu(&cur->stat, cpu);
        uint64_t total = 0;

        *ret_offline = b == NULL;
        if (!a || !b) {
                if (a || b)
                        log_debug("sample: cpu%d %s between snapshots", cpu, a ? "went offline" : "came online");
                return false;
        }
        /* guest time is inside user and nice (cputime.c account_guest_time) */
        for (int f = 0; f < CPUSTAT_GUEST; f++) {
                if (b->v[f] < a->v[f]) {
                        /* proc(5): "the iowait value may decrease" */
                        if (f == CPUSTAT_IOWAIT)
                                continue;
                        log_debug("sample: cpu%d /proc/stat field %d went backwards", cpu, f);
                        return false;
                }
                d[f] = b->v[f] - a->v[f];
                if (__builtin_add_overflow(total, d[f], &total))
                        return false;
        }
        if (total == 0) {
                log_debug("sample: cpu%d had no ticks in the interval", cpu);
                return false;
        }
        *ret_total = total;
        return true;
}

bool sample_cpu_load_next(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                          const struct sample_rates *avg, double alpha, int cpu, double *ret) {
        uint64_t d[CPUSTAT_MAX] = {}, total;
        const struct sample_cpu *o;
        bool offline;
        double v;

        if (!prev || !cur || !ret || !stat_deltas(prev, cur, cpu, d, &total, &offline))
                return false;
        v = (double) (d[CPUSTAT_IRQ] + d[CPUSTAT_SOFTIRQ]) / (double) total + napi_share(prev, cur, cpu, d, total);
        o = avg && avg->cpus && cpu <= avg->max_cpu ? &avg->cpus[cpu] : NULL;
        /* sample_smooth() blends irq and softirq apart; the sum is the same */
        *ret = o && o->valid && !o->offline ? alpha * v + (1.0 - alpha) * (o->irq + o->softirq) : v;
        return true;
}

bool sample_load_drifted(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                         const struct sample_rates *avg, double alpha, const double *ref, int ref_max_cpu,
                         double drift) {
        for (size_t i = 0; i < cur->stat.n_cpus; i++) {
                int cpu = cur->stat.cpus[i].cpu;
                double v;

                if (!sample_cpu_load_next(prev, cur, avg, alpha, cpu, &v))
                        continue;
                if (!ref || cpu > ref_max_cpu || isnan(ref[cpu]) || fabs(v - ref[cpu]) >= drift)
                        return true;
        }
        return false;
}

/* The increase of a softirq or IRQ counter (unsigned int in the kernel:
 * modulo 2^32); false for a restart, told from a wrap by a delta of 2^31
 * or more. */
static bool counter_delta(uint64_t x, uint64_t y, uint64_t *ret) {
        uint32_t d;

        if (y >= x) {
                *ret = y - x;
                return true;
        }
        if (x > UINT32_MAX || y > UINT32_MAX)
                return false;
        d = (uint32_t) y - (uint32_t) x;
        if (d > INT32_MAX)
                return false;
        *ret = d;
        return true;
}

/* The share of cpu's packets dropped between the snapshots (32-bit
 * counters), 0 when unknown. */
static double softnet_drop_share(const struct sample_snapshot *prev, const struct sample_snapshot *cur, int cpu) {
        uint64_t p, d;

        if (cpu >= prev->n_softnet || cpu >= cur->n_softnet || prev->softnet_proc[cpu] == UINT64_MAX ||
            cur->softnet_proc[cpu] == UINT64_MAX)
                return 0;
        p = (uint32_t) (cur->softnet_proc[cpu] - prev->softnet_proc[cpu]);
        d = (uint32_t) (cur->softnet_drop[cpu] - prev->softnet_drop[cpu]);
        return p + d > 0 ? (double) d / (double) (p + d) : 0;
}

/* Fills cpu's shares; false when the interval is unusable.  dt_sirq 0:
 * softirqs carried, the NET fields stay 0. */
static bool compute_cpu(const struct sample_snapshot *prev, const struct sample_snapshot *cur, int cpu,
                        double dt_sirq, struct sample_cpu *ret) {
        uint64_t d[CPUSTAT_MAX] = {}, total = 0, sirq_all = 0, sirq_d[SOFTIRQ_MAX] = {};
        int pc, cc;

        if (!stat_deltas(prev, cur, cpu, d, &total, &ret->offline))
                return false;
        pc = procfs_softirqs_column(&prev->softirqs, cpu);
        cc = procfs_softirqs_column(&cur->softirqs, cpu);
        if (dt_sirq > 0 && (pc < 0 || cc < 0)) {
                log_debug("sample: cpu%d has no /proc/softirqs column in both snapshots", cpu);
                return false;
        }
        for (int s = 0; s < SOFTIRQ_MAX && dt_sirq > 0; s++) {
                uint64_t x, y;

                if (!prev->softirqs.present[s] || !cur->softirqs.present[s])
                        continue;
                x = prev->softirqs.counts[(size_t) s * prev->softirqs.n_cpus + (size_t) pc];
                y = cur->softirqs.counts[(size_t) s * cur->softirqs.n_cpus + (size_t) cc];
                if (!counter_delta(x, y, &sirq_d[s])) {
                        log_debug("sample: cpu%d softirq %s went backwards", cpu, procfs_softirq_to_string(s));
                        return false;
                }
                sirq_all = sirq_all > UINT64_MAX - sirq_d[s] ? UINT64_MAX : sirq_all + sirq_d[s];
        }

        double t = (double) total;
        ret->usr = (double) (d[CPUSTAT_USER] + d[CPUSTAT_NICE]) / t;
        ret->sys = (double) d[CPUSTAT_SYSTEM] / t;
        ret->idle = (double) d[CPUSTAT_IDLE] / t;
        ret->iowait = (double) d[CPUSTAT_IOWAIT] / t;
        ret->irq = (double) d[CPUSTAT_IRQ] / t;
        ret->softirq = (double) d[CPUSTAT_SOFTIRQ] / t;
        ret->steal = (double) d[CPUSTAT_STEAL] / t;
        ret->busy = MAX(1.0 - ret->idle - ret->iowait, 0.0);
        ret->net_frac = sirq_all ? (double) (sirq_d[SOFTIRQ_NET_RX] + sirq_d[SOFTIRQ_NET_TX]) / (double) sirq_all : 0;
        ret->net_rx_rate = dt_sirq > 0 ? (double) sirq_d[SOFTIRQ_NET_RX] / dt_sirq : 0;
        ret->net_tx_rate = dt_sirq > 0 ? (double) sirq_d[SOFTIRQ_NET_TX] / dt_sirq : 0;
        ret->napi = napi_share(prev, cur, cpu, d, total);
        ret->drop = dt_sirq > 0 ? softnet_drop_share(prev, cur, cpu) : 0;
        if (ret->napi > 0) {
                double net = ret->softirq * ret->net_frac;

                ret->sys -= ret->napi;
                ret->softirq += ret->napi;
                if (dt_sirq > 0)
                        ret->net_frac = (net + ret->napi) / ret->softirq;
        }
        return true;
}

/* Where the rates of the next IRQ go in a rates struct's two blocks. */
struct nz_cursor {
        double *rate;
        int *cpu;
};

/* Adds the pair (cpu, v) to d's sparse rates. */
static void nz_add(struct sample_irq *d, int cpu, double v) {
        d->per_cpu[d->n_nz] = v;
        d->nz_cpu[d->n_nz++] = cpu;
        if (d->nz_lo > d->nz_hi)
                d->nz_lo = cpu;
        d->nz_hi = cpu;
}

/* d's pairs are in: nz moves past them. */
static void nz_close(struct sample_irq *d, struct nz_cursor *nz) {
        if (d->n_nz == 0) {
                d->per_cpu = NULL;
                d->nz_cpu = NULL;
        }
        nz->rate += d->n_nz;
        nz->cpu += d->n_nz;
}

/* The rates of IRQ b of cur against a of prev, sparse: one merge of both
 * rows' nonzero counts by CPU number. */
static void compute_irq(const struct procfs_irq *a, const struct procfs_interrupts *prev,
                        const struct procfs_irq *b, const struct procfs_interrupts *cur, const int *prev_col,
                        double dt, struct sample_irq *ret, struct nz_cursor *nz) {
        size_t i = 0, j = 0;

        *ret = (struct sample_irq) { .irq = b->irq, .valid = true, .nz_known = true, .nz_lo = 1, .nz_hi = 0 };
        /* Same number, another owner: the IRQ was freed and re-requested. */
        if (strcmp(a->name, b->name) != 0) {
                log_debug("sample: IRQ %u changed from '%s' to '%s'", b->irq, a->name, b->name);
                ret->valid = false;
                return;
        }
        ret->per_cpu = nz->rate;
        ret->nz_cpu = nz->cpu;
        while (i < a->n_nz || j < b->n_nz) {
                int ca = i < a->n_nz ? prev->cpus[a->nz_cols[i]] : INT_MAX;
                int cb = j < b->n_nz ? cur->cpus[b->nz_cols[j]] : INT_MAX;
                int cpu = MIN(ca, cb), cj;
                uint64_t x = 0, y = 0, dc;

                if (ca == cpu)
                        x = a->nz_counts[i++];
                if (cb == cpu)
                        y = b->nz_counts[j++];
                /* only CPUs in both headers */
                cj = procfs_interrupts_column(cur, cpu);
                if (cj < 0 || prev_col[cj] < 0)
                        continue;
                if (!counter_delta(x, y, &dc)) {
                        log_debug("sample: IRQ %u count on cpu%d went backwards", b->irq, cpu);
                        *ret = (struct sample_irq) { .irq = b->irq, .nz_known = true, .nz_lo = 1, .nz_hi = 0 };
                        return;
                }
                if (dc == 0)
                        continue;
                nz_add(ret, cpu, (double) dc / dt);
                ret->rate += (double) dc / dt;
        }
        nz_close(ret, nz);
}

static int sample_queue_cmp(const void *a, const void *b) {
        const struct sample_queue *x = a, *y = b;

        if (x->ifindex != y->ifindex)
                return x->ifindex < y->ifindex ? -1 : 1;
        if (x->type != y->type)
                return x->type < y->type ? -1 : 1;
        return x->queue < y->queue ? -1 : x->queue > y->queue;
}

/* A queue's own packet counter (rx of rx, tx of tx); false when none. */
static bool qstats_packets(const struct netdev_qstats *q, uint64_t *ret) {
        if (q->type == NETDEV_QUEUE_RX && q->has_rx_packets)
                *ret = q->rx_packets;
        else if (q->type == NETDEV_QUEUE_TX && q->has_tx_packets)
                *ret = q->tx_packets;
        else
                return false;
        return true;
}

/* Queue packet rates between two qstats readings (r->queues, sorted). */
static int compute_queues(const struct sample_snapshot *prev, const struct sample_snapshot *cur,
                          struct sample_rates *r) {
        double dt;

        if (!prev->has_qstats || !cur->has_qstats || cur->qstats_usec <= prev->qstats_usec || cur->n_qstats == 0)
                return 0;
        dt = (double) (cur->qstats_usec - prev->qstats_usec) / 1e6;
        r->queues = calloc(cur->n_qstats, sizeof(*r->queues));
        if (!r->queues)
                return -ENOMEM;
        r->queues_read = true;
        /* a few entries per device: the kernel's order is not relied on */
        for (size_t j = 0; j < cur->n_qstats; j++) {
                const struct netdev_qstats *b = &cur->qstats[j];
                uint64_t pb, pa;

                if (!qstats_packets(b, &pb))
                        continue;
                for (size_t i = 0; i < prev->n_qstats; i++) {
                        const struct netdev_qstats *a = &prev->qstats[i];

                        if (a->ifindex != b->ifindex || a->type != b->type || a->queue != b->queue)
                                continue;
                        if (qstats_packets(a, &pa) && pb >= pa)
                                r->queues[r->n_queues++] = (struct sample_queue) {
                                        .ifindex = b->ifindex, .type = b->type, .queue = b->queue,
                                        .pps = (double) (pb - pa) / dt,
                                };
                        break;
                }
        }
        qsort(r->queues, r->n_queues, sizeof(*r->queues), sample_queue_cmp);
        return 0;
}

const struct sample_queue *sample_rates_queue(const struct sample_rates *r, int ifindex,
                                              enum netdev_queue_type type, uint32_t queue) {
        struct sample_queue key = { .ifindex = ifindex, .type = type, .queue = queue };

        if (!r || r->n_queues == 0)
                return NULL;
        return bsearch(&key, r->queues, r->n_queues, sizeof(key), sample_queue_cmp);
}

/* An empty rates struct with room for max_cpu+1 CPUs, n_irqs IRQs and
 * n_nz (CPU, rate) pairs among them, *ret_nz where the first IRQ's go. */
static int rates_alloc(struct sample_rates *ret, int max_cpu, size_t n_irqs, size_t n_nz, struct nz_cursor *ret_nz) {
        size_t ncpu = max_cpu >= 0 ? (size_t) max_cpu + 1 : 0;

        *ret = (struct sample_rates) { .max_cpu = max_cpu };
        if (ncpu > 0) {
                ret->cpus = calloc(ncpu, sizeof(*ret->cpus));
                if (!ret->cpus)
                        goto oom;
        }
        if (n_irqs > 0) {
                ret->irqs = calloc(n_irqs, sizeof(*ret->irqs));
                ret->per_cpu_storage = malloc(MAX(n_nz, (size_t) 1) * sizeof(double));
                ret->nz_cpu_storage = malloc(MAX(n_nz, (size_t) 1) * sizeof(int));
                if (!ret->irqs || !ret->per_cpu_storage || !ret->nz_cpu_storage)
                        goto oom;
        }
        *ret_nz = (struct nz_cursor) { ret->per_cpu_storage, ret->nz_cpu_storage };
        ret->n_irqs = n_irqs;
        return 0;
oom:
        sample_rates_free(ret); /* n_irqs still 0: the blocks, no per-IRQ rates */
        return -ENOMEM;
}

int sample_compute(const struct sample_snapshot *prev, const struct sample_snapshot *cur, struct sample_rates *ret) {
        const struct procfs_interrupts *pi, *ci;
        struct sample_rates r;
        _cleanup_(freep) int *prev_col = NULL;
        int max_cpu;
        size_t n_max, room = 0, i, j;
        double dt_irq = 0, dt_sirq = 0;
        struct nz_cursor nz;

        if (!ret)
                return -EINVAL;
        *ret = (struct sample_rates) { .max_cpu = -1 };
        if (!prev || !cur || cur->usec <= prev->usec)
                return -EINVAL;
        pi = &prev->interrupts;
        ci = &cur->interrupts;
        max_cpu = MAX(snapshot_max_cpu(prev), snapshot_max_cpu(cur));
        n_max = max_cpu >= 0 ? MIN(pi->n_numeric, ci->n_numeric) : 0;
        if (sample_snapshot_irq_usec(cur) <= sample_snapshot_irq_usec(prev))
                n_max = 0; /* cur's reading is prev's, carried over: no IRQ rates */
        else
                dt_irq = (double) (sample_snapshot_irq_usec(cur) - sample_snapshot_irq_usec(prev)) / 1e6;
        /* a CPU's rate is nonzero only where cur's count is */
        for (j = 0; n_max > 0 && j < ci->n_numeric; j++)
                room += ci->irqs[ci->by_irq[j]].n_nz;
        if (rates_alloc(&r, max_cpu, n_max, room, &nz) < 0)
                return -ENOMEM;
        r.n_irqs = 0;
        r.interval_s = (double) (cur->usec - prev->usec) / 1e6;
        r.irqs_carried = dt_irq == 0;
        if (sample_snapshot_softirq_usec(cur) <= sample_snapshot_softirq_usec(prev))
                r.softirqs_carried = true; /* cur's reading is prev's: NET runs unknown */
        else
                dt_sirq = (double) (sample_snapshot_softirq_usec(cur) - sample_snapshot_softirq_usec(prev)) / 1e6;
        for (int c = 0; c <= r.max_cpu; c++)
                r.cpus[c].valid = compute_cpu(prev, cur, c, dt_sirq, &r.cpus[c]);

        if (n_max > 0) {
                prev_col = malloc(ci->n_cpus * sizeof(*prev_col));
                if (!prev_col)
                        goto oom;
                /* Both headers ascend: one merge maps cur columns to prev. */
                for (i = 0, j = 0; j < ci->n_cpus; j++) {
                        while (i < pi->n_cpus && pi->cpus[i] < ci->cpus[j])
                                i++;
                        prev_col[j] = i < pi->n_cpus && pi->cpus[i] == ci->cpus[j] ? (int) i : -1;
                }
                /* Merge over the IRQ-sorted indexes: IRQs in both only. */
                for (i = 0, j = 0; i < pi->n_numeric && j < ci->n_numeric;) {
                        const struct procfs_irq *a = &pi->irqs[pi->by_irq[i]];
                        const struct procfs_irq *b = &ci->irqs[ci->by_irq[j]];

                        if (a->irq < b->irq) {
                                log_debug("sample: IRQ %u vanished", a->irq);
                                i++;
                        } else if (a->irq > b->irq) {
                                log_debug("sample: IRQ %u appeared", b->irq);
                                j++;
                        } else {
                                compute_irq(a, pi, b, ci, prev_col, dt_irq, &r.irqs[r.n_irqs], &nz);
                                r.n_irqs++;
                                i++;
                                j++;
                        }
                }
        }
        if (compute_queues(prev, cur, &r) < 0)
                goto oom;
        *ret = r;
        return 0;
oom:
        sample_rates_free(&r);
        return -ENOMEM;
}

void sample_rates_free(struct sample_rates *r) {
        if (!r)
                return;
        if (r->per_cpu_storage)
                free(r->per_cpu_storage);
        else
                for (size_t i = 0; i < r->n_irqs; i++)
                        free(r->irqs[i].per_cpu);
        free(r->nz_cpu_storage);
        free(r->irqs);
        free(r->cpus);
        free(r->queues);
        *r = (struct sample_rates) { .max_cpu = -1 };
}

static int cmp_irq(const void *a, const void *b) {
        unsigned x = ((const struct sample_irq *) a)->irq, y = ((const struct sample_irq *) b)->irq;
        return (x > y) - (x < y);
}

const struct sample_irq *sample_rates_irq(const struct sample_rates *r, unsigned irq) {
        struct sample_irq key = { .irq = irq };

        if (!r || !r->irqs || r->n_irqs == 0)
                return NULL;
        return bsearch(&key, r->irqs, r->n_irqs, sizeof(key), cmp_irq);
}

/* The pairs copy_irq() writes for src into rates of CPUs [0, dst_max_cpu]. */
static size_t irq_nz_size(const struct sample_irq *src, int src_max_cpu, int dst_max_cpu) {
        size_t n = 0;

        if (!src->per_cpu)
                return 0;
        if (src->nz_known) {
                for (unsigned k = 0; k < src->n_nz; k++)
                        n += src->nz_cpu[k] <= dst_max_cpu;
                return n;
        }
        for (int c = 0; c <= MIN(src_max_cpu, dst_max_cpu); c++)
                n += src->per_cpu[c] != 0;
        return n;
}

/* Copies src into dst, sparse (a dense hand-built src too), its pairs at
 * *nz, which moves past them; CPUs above dst_max_cpu are dropped. */
static void copy_irq(struct sample_irq *dst, int dst_max_cpu, const struct sample_irq *src, int src_max_cpu,
                     struct nz_cursor *nz) {
        *dst = (struct sample_irq) {
                .irq = src->irq, .valid = src->valid, .rate = src->rate, .nz_known = true,
                .nz_lo = 1, .nz_hi = 0, .per_cpu = nz->rate, .nz_cpu = nz->cpu,
        };
        if (src->per_cpu) {
                unsigned n = src->nz_known ? src->n_nz : (unsigned) MAX(src_max_cpu + 1, 0);

                for (unsigned k = 0; k < n; k++) {
                        int cpu = src->nz_known ? src->nz_cpu[k] : (int) k;
                        double v = src->per_cpu[k];

                        if (cpu <= dst_max_cpu && (src->nz_known || v != 0))
                                nz_add(dst, cpu, v);
                }
        }
        nz_close(dst, nz);
}

static int copy_queues(struct sample_rates *ret, const struct sample_queue *q, size_t n, bool read) {
        ret->queues_read = read;
        if (n == 0)
                return 0;
        ret->queues = malloc(n * sizeof(*q));
        if (!ret->queues)
                return -ENOMEM;
        memcpy(ret->queues, q, n * sizeof(*q));
        ret->n_queues = n;
        return 0;
}

int sample_rates_copy(struct sample_rates *ret, const struct sample_rates *src) {
        struct nz_cursor nz;
        size_t n_nz = 0;
        int r;

        for (size_t i = 0; i < src->n_irqs; i++)
                n_nz += irq_nz_size(&src->irqs[i], src->max_cpu, src->max_cpu);
        r = rates_alloc(ret, src->max_cpu, src->n_irqs, n_nz, &nz);
        if (r < 0)
                return r;
        r = copy_queues(ret, src->queues, src->n_queues, src->queues_read);
        if (r < 0) {
                sample_rates_free(ret);
                return r;
        }
        ret->interval_s = src->interval_s;
        ret->irqs_carried = src->irqs_carried;
        ret->softirqs_carried = src->softirqs_carried;
        if (src->max_cpu >= 0 && src->cpus)
                memcpy(ret->cpus, src->cpus, ((size_t) src->max_cpu + 1) * sizeof(*ret->cpus));
        for (size_t i = 0; i < src->n_irqs; i++)
                copy_irq(&ret->irqs[i], ret->max_cpu, &src->irqs[i], src->max_cpu, &nz);
        return 0;
}

static double blend(double avg, double v, double alpha) {
        return alpha * v + (1.0 - alpha) * avg;
}

/* Multiplies d's per-CPU rates (sparse, as copy_irq() leaves them) by k. */
static void scale_irq(struct sample_irq *d, double k) {
        if (k == 0) {
                /* fires nowhere: its pairs stay unused in the block */
                d->n_nz = 0;
                d->per_cpu = NULL;
                d->nz_cpu = NULL;
                d->nz_lo = 1;
                d->nz_hi = 0;
        }
        for (unsigned i = 0; i < d->n_nz; i++)
                d->per_cpu[i] *= k;
}

static void blend_cpu(struct sample_cpu *out, const struct sample_cpu *o, const struct sample_cpu *n, double alpha) {
        *out = *n;
        out->usr = blend(o->usr, n->usr, alpha);
        out->sys = blend(o->sys, n->sys, alpha);
        out->idle = blend(o->idle, n->idle, alpha);
        out->iowait = blend(o->iowait, n->iowait, alpha);
        out->irq = blend(o->irq, n->irq, alpha);
        out->softirq = blend(o->softirq, n->softirq, alpha);
        out->steal = blend(o->steal, n->steal, alpha);
        out->busy = blend(o->busy, n->busy, alpha);
        out->net_frac = blend(o->net_frac, n->net_frac, alpha);
        out->net_rx_rate = blend(o->net_rx_rate, n->net_rx_rate, alpha);
        out->net_tx_rate = blend(o->net_tx_rate, n->net_tx_rate, alpha);
        out->napi = blend(o->napi, n->napi, alpha);
        out->drop = blend(o->drop, n->drop, alpha);
}

/* The entry whose CPUs an IRQ's smoothed rates take: the newest valid one that fired. */
static const struct sample_irq *smooth_source(const struct sample_irq *o, const struct sample_irq *n) {
        if (!o || !o->valid)
                return n;
        if (!n->valid)
                return o;
        return n->rate > 0 ? n : o;
}

int sample_smooth(struct sample_rates *avg, const struct sample_rates *new, double alpha) {
        struct sample_rates out;
        struct nz_cursor nz;
        size_t n_nz = 0;
        int r;

        if (!avg || !new || !(alpha > 0.0 && alpha <= 1.0))
                return -EINVAL;
        if (avg->max_cpu < 0 || (!avg->cpus && avg->n_irqs == 0)) {
                r = sample_rates_copy(&out, new);
                if (r < 0)
                        return r;
                sample_rates_free(avg);
                *avg = out;
                return 0;
        }
        if (new->irqs_carried && avg->max_cpu == new->max_cpu && (avg->per_cpu_storage || avg->n_irqs == 0)) {
                /* no IRQ reading this interval: the average's IRQs move over */
                r = rates_alloc(&out, new->max_cpu, 0, 0, &nz);
                if (r < 0)
                        return r;
                out.irqs = avg->irqs;
                out.n_irqs = avg->n_irqs;
                out.per_cpu_storage = avg->per_cpu_storage;
                out.nz_cpu_storage = avg->nz_cpu_storage;
                avg->irqs = NULL;
                avg->n_irqs = 0;
                avg->per_cpu_storage = NULL;
                avg->nz_cpu_storage = NULL;
        } else if (new->irqs_carried) {
                /* the same, copied into rates of the new CPU count */
                for (size_t i = 0; i < avg->n_irqs; i++)
                        n_nz += irq_nz_size(&avg->irqs[i], avg->max_cpu, new->max_cpu);
                r = rates_alloc(&out, new->max_cpu, avg->n_irqs, n_nz, &nz);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < avg->n_irqs; i++)
                        copy_irq(&out.irqs[i], out.max_cpu, &avg->irqs[i], avg->max_cpu, &nz);
        } else {
                /* each IRQ takes the pairs of new's or avg's entry (below) */
                for (size_t i = 0; i < new->n_irqs; i++) {
                        const struct sample_irq *n = &new->irqs[i];
                        const struct sample_irq *o = sample_rates_irq(avg, n->irq);
                        const struct sample_irq *from = smooth_source(o, n);

                        n_nz += irq_nz_size(from, from == n ? new->max_cpu : avg->max_cpu, new->max_cpu);
                }
                r = rates_alloc(&out, new->max_cpu, new->n_irqs, n_nz, &nz);
                if (r < 0)
                        return r;
        }
        out.interval_s = new->interval_s;
        for (int c = 0; c <= new->max_cpu && new->cpus; c++) {
                const struct sample_cpu *n = &new->cpus[c];
                const struct sample_cpu *o = c <= avg->max_cpu && avg->cpus ? &avg->cpus[c] : NULL;

                if (n->offline)
                        out.cpus[c] = (struct sample_cpu) { .offline = true }; /* gone: dropped */
                else if (!o || !o->valid)
                        out.cpus[c] = *n; /* new, or nothing to keep */
                else if (!n->valid) {
                        out.cpus[c] = *o; /* keep the average through a bad interval */
                        out.cpus[c].offline = false;
                } else {
                        blend_cpu(&out.cpus[c], o, n, alpha);
                        if (new->softirqs_carried) {
                                /* no NET runs counted this interval */
                                out.cpus[c].net_frac = o->net_frac;
                                out.cpus[c].net_rx_rate = o->net_rx_rate;
                                out.cpus[c].net_tx_rate = o->net_tx_rate;
                                out.cpus[c].drop = o->drop;
                        }
                }
        }
        for (size_t i = 0; i < new->n_irqs; i++) {
                const struct sample_irq *n = &new->irqs[i];
                const struct sample_irq *o = sample_rates_irq(avg, n->irq);
                const struct sample_irq *from = smooth_source(o, n);
                struct sample_irq *d = &out.irqs[i];

                copy_irq(d, out.max_cpu, from, from == n ? new->max_cpu : avg->max_cpu, &nz);
                if (o && o->valid && n->valid) {
                        /* where it fires is a placement, not noise: the
                         * smoothed rate spread as in the newest interval
                         * (blending CPUs kept a moved IRQ's ghost) */
                        double rate = blend(o->rate, n->rate, alpha);

                        scale_irq(d, from->rate > 0 ? rate / from->rate : 0);
                        d->irq = n->irq;
                        d->valid = true;
                        d->rate = rate;
                }
        }
        if (!new->queues_read) {
                r = copy_queues(&out, avg->queues, avg->n_queues, avg->queues_read);
        } else {
                r = copy_queues(&out, new->queues, new->n_queues, true);
                for (size_t i = 0; r >= 0 && i < out.n_queues; i++) {
                        struct sample_queue *d = &out.queues[i];
                        const struct sample_queue *o = sample_rates_queue(avg, d->ifindex, d->type, d->queue);

                        if (o)
                                d->pps = blend(o->pps, d->pps, alpha);
                }
        }
        if (r < 0) {
                sample_rates_free(&out);
                return r;
        }
        sample_rates_free(avg);
        *avg = out;
        return 0;
}
