/* irqsteer-sim: a closed-loop host simulator over a fake root tree.
 *
 * It builds a directory laid out like / (proc/..., sys/..., with the
 * kernel's relative symlinks) for a host described by a scenario file, then
 * ticks: each tick it reads the placement a balancer wrote (IRQ affinity,
 * RPS masks), computes where the scenario's network work lands, and writes
 * proc/stat, proc/softirqs and proc/interrupts consistent with that work.
 * Metrics are computed from the true work, which the simulator knows and a
 * balancer has to infer.  The scenario format is described in
 * bench/README.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpuset.h"
#include "rootfs.h"
#include "util.h"

#define USER_HZ 100
#define MAX_NICS 16
#define MAX_STORAGE 8
#define MAX_NODES 8
#define MAX_Q 256
/* Network work run on another NUMA node than its device costs this much
 * more CPU than local work: packet buffers and rings are in the device's
 * node's memory (remote access 30-50% slower, Oracle SBC 10.0 install
 * guide "Multi-NUMA Node Environments"; I/O threads on the far socket
 * move 17% fewer bytes, i.e. 1.2x the cost, Hindawi Sci. Prog. 2018
 * 4120561, table 2).  bench/README.md, lower bound. */
#define REMOTE_COST 1.3
/* Packets a CPU-second of network work handles (about 1 us a packet). */
#define SIM_PKTS_PER_CPU_S 1e6

enum family {
        FAM_I40E,       /* i40e-DEV-TxRx-N + i40e-BDF:misc */
        FAM_TXRX,       /* DEV-TxRx-N (ixgbe, igb) */
        FAM_RXTX,       /* DEV-rx-N and DEV-tx-N: separate vectors */
        FAM_MLX5,       /* mlx5_compN@pci:BDF + mlx5_async0@pci:BDF */
        FAM_VIRTIO,     /* virtioK-input.N / virtioK-output.N + virtioK-config */
        FAM_SINGLE,     /* one MSI vector named DEV (e1000e on MSI) */
        FAM_MAX,
};

static const char *const family_names[FAM_MAX] = {
        [FAM_I40E] = "i40e", [FAM_TXRX] = "txrx", [FAM_RXTX] = "rxtx",
        [FAM_MLX5] = "mlx5", [FAM_VIRTIO] = "virtio", [FAM_SINGLE] = "single",
};

enum irq_kind { K_RXTX, K_RX, K_TX, K_ADMIN, K_STORAGE, K_LEGACY };

struct sim_irq {
        unsigned irq;
        char name[96];
        char chip[48];
        unsigned long hwirq;
        enum irq_kind kind;
        int owner;              /* nic or storage index, -1 */
        int queue;
        int node;
        cpuset_t mask;
        char *last_hex, *last_list; /* what the sim last wrote */
        uint64_t *counts;       /* per CPU */
        double *carry;          /* fractional interrupts per CPU */
        char dirname[96];       /* proc/irq/N/<action> */
};

struct sim_nic {
        char name[16];
        enum family fam;
        char bdf[16];
        int bus;
        char driver[24];
        int vendor, device;
        int node;
        int nq;
        int virtio_idx;
        double load;            /* CPUs of work at t=0 */
        double zipf_s;          /* 0: uniform */
        double weight[MAX_Q];
        int eleph_q;            /* -1 none */
        double eleph_load;      /* CPUs, one flow on eleph_q */
        int step_at;            /* -1 none */
        double step_factor;
        int ramp_from, ramp_to; /* ramp_to < 0: none */
        double ramp_factor;
        int swing_period;       /* ticks; 0: none */
        double swing_factor;
        int swing_sine;         /* 0: square wave */
        double noise;
        double irq_share, hardirq_share, tx_share, rps_overhead;
        double irq_share_spread; /* each queue's share: irq_share +- this, drawn once */
        double q_share[MAX_Q];   /* each queue's interrupt + NAPI share */
        double intr_rate;       /* interrupts/s per CPU of work */
        int rx_irq[MAX_Q], tx_irq[MAX_Q]; /* indexes into irqs[] */
        cpuset_t rps[MAX_Q];
        char *last_rps[MAX_Q];
};

struct sim_storage {
        char name[16];
        char bdf[16];
        int bus;
        int node;
        int nq;
        double load;
};

struct host {
        int ncpu, sockets, smt, cores_per_socket;
        cpuset_t isolated, nohz_full, banned, eligible, all;
        double user, system;
        double remote_cost;     /* network work on another node than its device: x this */
        double user_spread;     /* each CPU's user demand: user +- this, drawn once */
        double *cpu_user;       /* per CPU */
};

struct sim {
        struct host h;
        struct sim_nic nics[MAX_NICS];
        int n_nics;
        struct sim_storage stor[MAX_STORAGE];
        int n_stor;
        struct sim_irq *irqs;
        size_t n_irqs;
        int ticks, warmup;
        double tick_s;
        uint64_t seed;
        int rootfd;
        /* cumulative /proc/stat columns per CPU */
        double (*stat)[10];
        /* cumulative softirq runs per CPU, rows HI..RCU */
        double (*softirq)[10];
        /* cumulative /proc/net/softnet_stat columns per CPU: processed,
         * dropped, time_squeeze */
        double (*softnet)[3];
        double loc_carry;
};

static const char *const softirq_rows[10] = {
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
};

/* ---------- deterministic RNG (splitmix64) ---------- */

static uint64_t rng_state;

static uint64_t rng_next(void) {
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double rng_sym(void) {
        return (double)(rng_next() >> 11) / (double)(1ULL << 52) - 1.0;
}

static uint64_t hash2(uint64_t a, uint64_t b) {
        uint64_t save = rng_state, r;
        rng_state = a * 1000003ULL + b;
        r = rng_next();
        rng_state = save;
        return r;
}

/* ---------- tree writing ---------- */

static void die(const char *fmt, ...) _printf_(1, 2);
static void die(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("irqsteer-sim: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        exit(2);
}

static int rootfd = -1;

static void mkdir_p(const char *path) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = 0;
                if (mkdirat(rootfd, buf, 0755) < 0 && errno != EEXIST)
                        die("mkdir %s: %m", buf);
                *p = '/';
        }
        if (mkdirat(rootfd, buf, 0755) < 0 && errno != EEXIST)
                die("mkdir %s: %m", buf);
}

static void mkdirf(const char *fmt, ...) _printf_(1, 2);
static void mkdirf(const char *fmt, ...) {
        char path[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(path, sizeof path, fmt, ap);
        va_end(ap);
        mkdir_p(path);
}

/* Writes data to path via a temporary file and rename, so a reader sees the
 * old or the new file, never half of one. */
static void put_atomic(const char *path, const char *data, size_t len) {
        char tmp[1100];
        int fd;

        snprintf(tmp, sizeof tmp, "%s.sim-tmp", path);
        fd = openat(rootfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                die("open %s: %m", tmp);
        while (len > 0) {
                ssize_t n = write(fd, data, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        die("write %s: %m", tmp);
                }
                data += n;
                len -= n;
        }
        if (close(fd) < 0)
                die("close %s: %m", tmp);
        if (renameat(rootfd, tmp, rootfd, path) < 0)
                die("rename %s: %m", path);
}

/* proc/stat, rewritten in its inode as the kernel regenerates it: a reader
 * keeps it open and reads it from the start each tick (a kept fd on a file
 * replaced by rename reads the old copy).  One pwrite: a reader racing it
 * may see a cut or mixed copy, which irqsteerd's parser refuses when the
 * cut shows (no final newline).  No atime updates: /proc has none, and
 * each would dirty an inode for every reader. */
static void put_inplace(const char *path, const char *data, size_t len) {
        static int fd = -1;
        static size_t last_len;
        size_t off = 0;

        if (fd < 0) {
                int flags;

                fd = openat(rootfd, path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
                if (fd < 0)
                        die("open %s: %m", path);
                if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
                        flags |= FS_NOATIME_FL;
                        (void) ioctl(fd, FS_IOC_SETFLAGS, &flags); /* best effort */
                }
                last_len = SIZE_MAX;
        }
        while (off < len) {
                ssize_t n = pwrite(fd, data + off, len - off, (off_t) off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        die("write %s: %m", path);
                }
                off += (size_t) n;
        }
        if (len < last_len && ftruncate(fd, (off_t) len) < 0)
                die("truncate %s: %m", path);
        last_len = len;
}

static void putf(const char *path, const char *fmt, ...) _printf_(2, 3);
static void putf(const char *path, const char *fmt, ...) {
        char *s = NULL;
        va_list ap;
        int n;
        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                die("out of memory");
        put_atomic(path, s, n);
        free(s);
}

static void symlinkf(const char *target, const char *fmt, ...) _printf_(2, 3);
static void symlinkf(const char *target, const char *fmt, ...) {
        char path[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(path, sizeof path, fmt, ap);
        va_end(ap);
        unlinkat(rootfd, path, 0);
        if (symlinkat(target, rootfd, path) < 0)
                die("symlink %s -> %s: %m", path, target);
}

static char *fmt_list(const cpuset_t *s) {
        char buf[8192];
        if (cpuset_format_list(s, buf, sizeof buf) < 0)
                die("cpulist too long");
        return strdup(buf);
}

static char *fmt_mask(const cpuset_t *s, int ncpu) {
        char buf[4096];
        if (cpuset_format_mask(s, ncpu, buf, sizeof buf) < 0)
                die("mask too long");
        return strdup(buf);
}

/* ---------- scenario file ---------- */

static void parse_set(const char *v, cpuset_t *s, const char *file, int line) {
        if (cpuset_parse_list(v, s) < 0)
                die("%s:%d: bad cpulist '%s'", file, line, v);
}

static double parse_num(const char *v, const char *file, int line) {
        char *end;
        double d = strtod(v, &end);
        if (end == v || *util_strstrip(end))
                die("%s:%d: bad number '%s'", file, line, v);
        return d;
}

static void nic_defaults(struct sim_nic *n, int idx) {
        memset(n, 0, sizeof *n);
        snprintf(n->name, sizeof n->name, "eth%d", idx);
        n->fam = FAM_I40E;
        n->nq = 8;
        n->eleph_q = -1;
        n->step_at = -1;
        n->step_factor = 1;
        n->ramp_to = -1;
        n->irq_share = 0.4;
        n->hardirq_share = 0.1;
        n->tx_share = 0.15;
        n->rps_overhead = 0.05;
        n->intr_rate = 20000;
        n->virtio_idx = idx;
}

static void load_scenario(struct sim *S, const char *file) {
        FILE *f = fopen(file, "re");
        char line[1024], section[64] = "";
        int lineno = 0;
        struct sim_nic *nic = NULL;
        struct sim_storage *st = NULL;
        bool sockets_set = false;

        if (!f)
                die("%s: %m", file);
        S->h.ncpu = 16;
        S->h.sockets = 1;
        S->h.smt = 1;
        S->h.user = 0.10;
        S->h.system = 0.02;
        S->h.remote_cost = REMOTE_COST;
        S->ticks = 40;
        S->warmup = 10;
        S->tick_s = 1.0;
        S->seed = 1;
        while (fgets(line, sizeof line, f)) {
                char *s, *eq, *k, *v;
                lineno++;
                if ((s = strchr(line, '#')))
                        *s = 0;
                s = util_strstrip(line);
                if (!*s)
                        continue;
                if (*s == '[') {
                        char kind[32] = "", name[32] = "";
                        if (sscanf(s, "[%31[a-z] %31[^]]]", kind, name) < 1)
                                die("%s:%d: bad section", file, lineno);
                        snprintf(section, sizeof section, "%s", kind);
                        nic = NULL;
                        st = NULL;
                        if (!strcmp(kind, "nic")) {
                                if (S->n_nics >= MAX_NICS)
                                        die("%s:%d: too many NICs", file, lineno);
                                nic = &S->nics[S->n_nics];
                                nic_defaults(nic, S->n_nics);
                                S->n_nics++;
                                if (*name)
                                        /* At most IFNAMSIZ - 1 characters, as the kernel allows. */
                                        snprintf(nic->name, sizeof nic->name, "%.15s", name);
                        } else if (!strcmp(kind, "storage")) {
                                if (S->n_stor >= MAX_STORAGE)
                                        die("%s:%d: too many storage devices", file, lineno);
                                st = &S->stor[S->n_stor];
                                memset(st, 0, sizeof *st);
                                snprintf(st->name, sizeof st->name, "%.15s", *name ? name : "nvme0");
                                st->nq = 8;
                                st->load = 0.05;
                                S->n_stor++;
                        } else if (strcmp(kind, "host") && strcmp(kind, "run"))
                                die("%s:%d: unknown section [%s]", file, lineno, kind);
                        continue;
                }
                eq = strchr(s, '=');
                if (!eq)
                        die("%s:%d: expected key = value", file, lineno);
                *eq = 0;
                k = util_strstrip(s);
                v = util_strstrip(eq + 1);
                if (!strcmp(section, "run")) {
                        if (!strcmp(k, "ticks"))
                                S->ticks = (int)parse_num(v, file, lineno);
                        else if (!strcmp(k, "warmup"))
                                S->warmup = (int)parse_num(v, file, lineno);
                        else if (!strcmp(k, "seed"))
                                S->seed = (uint64_t)parse_num(v, file, lineno);
                        else if (!strcmp(k, "description"))
                                ;
                        else
                                die("%s:%d: unknown key %s", file, lineno, k);
                } else if (!strcmp(section, "host")) {
                        if (!strcmp(k, "cpus"))
                                S->h.ncpu = (int)parse_num(v, file, lineno);
                        else if (!strcmp(k, "sockets")) {
                                S->h.sockets = (int)parse_num(v, file, lineno);
                                sockets_set = true;
                        } else if (!strcmp(k, "smt"))
                                S->h.smt = (int)parse_num(v, file, lineno);
                        else if (!strcmp(k, "isolated"))
                                parse_set(v, &S->h.isolated, file, lineno);
                        else if (!strcmp(k, "nohz_full"))
                                parse_set(v, &S->h.nohz_full, file, lineno);
                        else if (!strcmp(k, "banned"))
                                parse_set(v, &S->h.banned, file, lineno);
                        else if (!strcmp(k, "remote_cost"))
                                S->h.remote_cost = parse_num(v, file, lineno);
                        else if (!strcmp(k, "user"))
                                S->h.user = parse_num(v, file, lineno);
                        else if (!strcmp(k, "user_spread"))
                                S->h.user_spread = parse_num(v, file, lineno);
                        else if (!strcmp(k, "system"))
                                S->h.system = parse_num(v, file, lineno);
                        else
                                die("%s:%d: unknown key %s", file, lineno, k);
                } else if (nic) {
                        if (!strcmp(k, "family")) {
                                int i;
                                for (i = 0; i < FAM_MAX; i++)
                                        if (!strcmp(v, family_names[i]))
                                                break;
                                if (i == FAM_MAX)
                                        die("%s:%d: unknown family %s", file, lineno, v);
                                nic->fam = i;
                        } else if (!strcmp(k, "queues"))
                                nic->nq = (int)parse_num(v, file, lineno);
                        else if (!strcmp(k, "node"))
                                nic->node = (int)parse_num(v, file, lineno);
                        else if (!strcmp(k, "load"))
                                nic->load = parse_num(v, file, lineno);
                        else if (!strcmp(k, "dist")) {
                                if (!strcmp(v, "uniform"))
                                        nic->zipf_s = 0;
                                else if (!strncmp(v, "zipf", 4))
                                        nic->zipf_s = parse_num(v + 4, file, lineno);
                                else
                                        die("%s:%d: dist is uniform or zipf S", file, lineno);
                        } else if (!strcmp(k, "elephant")) {
                                if (sscanf(v, "%d %lf", &nic->eleph_q, &nic->eleph_load) != 2)
                                        die("%s:%d: elephant = QUEUE LOAD", file, lineno);
                        } else if (!strcmp(k, "step")) {
                                if (sscanf(v, "%d %lf", &nic->step_at, &nic->step_factor) != 2)
                                        die("%s:%d: step = TICK FACTOR", file, lineno);
                        } else if (!strcmp(k, "ramp")) {
                                if (sscanf(v, "%d %d %lf", &nic->ramp_from, &nic->ramp_to,
                                           &nic->ramp_factor) != 3)
                                        die("%s:%d: ramp = FROM TO FACTOR", file, lineno);
                        } else if (!strcmp(k, "swing")) {
                                char shape[16] = "square";
                                int got = sscanf(v, "%d %lf %15s", &nic->swing_period, &nic->swing_factor, shape);
                                if (got < 2 || nic->swing_period < 2 || nic->swing_factor <= 0 ||
                                    (strcmp(shape, "square") && strcmp(shape, "sine")))
                                        die("%s:%d: swing = PERIOD FACTOR [square|sine], PERIOD >= 2 ticks, "
                                            "FACTOR > 0", file, lineno);
                                nic->swing_sine = !strcmp(shape, "sine");
                        } else if (!strcmp(k, "noise"))
                                nic->noise = parse_num(v, file, lineno);
                        else if (!strcmp(k, "irq_share"))
                                nic->irq_share = parse_num(v, file, lineno);
                        else if (!strcmp(k, "irq_share_spread"))
                                nic->irq_share_spread = parse_num(v, file, lineno);
                        else if (!strcmp(k, "hardirq_share"))
                                nic->hardirq_share = parse_num(v, file, lineno);
                        else if (!strcmp(k, "tx_share"))
                                nic->tx_share = parse_num(v, file, lineno);
                        else if (!strcmp(k, "rps_overhead"))
                                nic->rps_overhead = parse_num(v, file, lineno);
                        else if (!strcmp(k, "intr_rate"))
                                nic->intr_rate = parse_num(v, file, lineno);
                        else
                                die("%s:%d: unknown key %s", file, lineno, k);
                } else if (st) {
                        if (!strcmp(k, "queues"))
                                st->nq = (int)parse_num(v, file, lineno);
                        else if (!strcmp(k, "node"))
                                st->node = (int)parse_num(v, file, lineno);
                        else if (!strcmp(k, "load"))
                                st->load = parse_num(v, file, lineno);
                        else
                                die("%s:%d: unknown key %s", file, lineno, k);
                } else
                        die("%s:%d: key outside a section", file, lineno);
        }
        fclose(f);
        (void)sockets_set;
        if (S->h.remote_cost < 1)
                die("%s: remote_cost below 1 (remote work cheaper than local)", file);
        if (S->h.ncpu < 1 || S->h.ncpu > 4096 || S->h.sockets < 1 ||
            S->h.sockets > MAX_NODES || S->h.smt < 1 ||
            S->h.ncpu % (S->h.sockets * S->h.smt))
                die("%s: cpus must be a multiple of sockets * smt", file);
        S->h.cores_per_socket = S->h.ncpu / S->h.sockets / S->h.smt;
        for (int i = 0; i < S->n_nics; i++) {
                struct sim_nic *n = &S->nics[i];
                if (n->fam == FAM_SINGLE)
                        n->nq = 1;
                if (n->nq < 1 || n->nq > MAX_Q)
                        die("%s: %s: queues out of range", file, n->name);
                if (n->node < 0 || n->node >= S->h.sockets)
                        die("%s: %s: node out of range", file, n->name);
                if (n->eleph_q >= n->nq)
                        die("%s: %s: elephant queue out of range", file, n->name);
        }
        for (int i = 0; i < S->n_stor; i++)
                if (S->stor[i].nq < 1 || S->stor[i].nq > MAX_Q)
                        die("%s: %s: queues out of range", file, S->stor[i].name);
        if (S->warmup >= S->ticks)
                die("%s: warmup must be below ticks", file);
}

/* ---------- host topology ---------- */

/* Linux numbering on x86: first every core's first thread, socket by
 * socket, then the SMT siblings in the same order. */
static int cpu_socket(const struct host *h, int cpu) {
        return (cpu % (h->ncpu / h->smt)) / h->cores_per_socket;
}
static int cpu_core(const struct host *h, int cpu) {
        return (cpu % (h->ncpu / h->smt)) % h->cores_per_socket;
}
static cpuset_t node_cpus(const struct host *h, int node) {
        cpuset_t s;
        cpuset_zero(&s);
        for (int c = 0; c < h->ncpu; c++)
                if (cpu_socket(h, c) == node)
                        cpuset_set(&s, c);
        return s;
}
static cpuset_t thread_siblings(const struct host *h, int cpu) {
        cpuset_t s;
        int base = cpu % (h->ncpu / h->smt);
        cpuset_zero(&s);
        for (int t = 0; t < h->smt; t++)
                cpuset_set(&s, base + t * (h->ncpu / h->smt));
        return s;
}

static void write_cpu_tree(struct sim *S) {
        struct host *h = &S->h;
        char *l, *m;
        const char *cpu = "sys/devices/system/cpu";

        cpuset_zero(&h->all);
        for (int c = 0; c < h->ncpu; c++)
                cpuset_set(&h->all, c);
        cpuset_t banned;
        cpuset_or(&banned, &h->isolated, &h->nohz_full);
        /* banned: what the balancers are told to keep off (the harness
         * passes it to each), not something the kernel shows */
        cpuset_or(&banned, &banned, &h->banned);
        cpuset_andnot(&h->eligible, &h->all, &banned);

        mkdirf("%s", cpu);
        l = fmt_list(&h->all);
        putf("sys/devices/system/cpu/online", "%s\n", l);
        putf("sys/devices/system/cpu/possible", "%s\n", l);
        putf("sys/devices/system/cpu/present", "%s\n", l);
        putf("sys/devices/system/cpu/offline", "\n");
        putf("sys/devices/system/cpu/kernel_max", "8191\n");
        free(l);
        l = fmt_list(&h->isolated);
        putf("sys/devices/system/cpu/isolated", "%s\n", l);
        free(l);
        l = fmt_list(&h->nohz_full);
        putf("sys/devices/system/cpu/nohz_full", "%s\n", l);
        free(l);

        for (int c = 0; c < h->ncpu; c++) {
                char p[128];
                int sock = cpu_socket(h, c);
                cpuset_t sib = thread_siblings(h, c), pkg = node_cpus(h, sock);

                snprintf(p, sizeof p, "%s/cpu%d", cpu, c);
                mkdirf("%s/topology", p);
                mkdirf("%s/cache", p);
                {
                        char q[512];
#define PUT(name, ...) (snprintf(q, sizeof q, "%s/%s", p, name), putf(q, __VA_ARGS__))
                        PUT("online", "1\n");
                        PUT("topology/core_id", "%d\n", cpu_core(h, c));
                        PUT("topology/physical_package_id", "%d\n", sock);
                        PUT("topology/die_id", "0\n");
                        l = fmt_list(&sib);
                        m = fmt_mask(&sib, h->ncpu);
                        PUT("topology/thread_siblings_list", "%s\n", l);
                        PUT("topology/thread_siblings", "%s\n", m);
                        PUT("topology/core_cpus_list", "%s\n", l);
                        PUT("topology/core_cpus", "%s\n", m);
                        free(l);
                        free(m);
                        l = fmt_list(&pkg);
                        m = fmt_mask(&pkg, h->ncpu);
                        PUT("topology/core_siblings_list", "%s\n", l);
                        PUT("topology/core_siblings", "%s\n", m);
                        PUT("topology/package_cpus_list", "%s\n", l);
                        PUT("topology/package_cpus", "%s\n", m);
                        free(l);
                        free(m);
                        /* L1d, L1i, L2 per core; L3 per package. */
                        for (int k = 0; k < 4; k++) {
                                const cpuset_t *sh = k < 3 ? &sib : &pkg;
                                static const int level[] = { 1, 1, 2, 3 };
                                static const char *const type[] = { "Data", "Instruction", "Unified", "Unified" };
                                static const char *const size[] = { "48K", "32K", "2048K", "32768K" };
                                char d[64];
                                snprintf(d, sizeof d, "cache/index%d", k);
                                snprintf(q, sizeof q, "%s/%s", p, d);
                                mkdir_p(q);
                                l = fmt_list(sh);
                                m = fmt_mask(sh, h->ncpu);
                                snprintf(q, sizeof q, "%s/%s/level", p, d);
                                putf(q, "%d\n", level[k]);
                                snprintf(q, sizeof q, "%s/%s/type", p, d);
                                putf(q, "%s\n", type[k]);
                                snprintf(q, sizeof q, "%s/%s/size", p, d);
                                putf(q, "%s\n", size[k]);
                                snprintf(q, sizeof q, "%s/%s/id", p, d);
                                putf(q, "%d\n", k < 3 ? cpu_core(h, c) + sock * h->cores_per_socket : sock);
                                snprintf(q, sizeof q, "%s/%s/shared_cpu_map", p, d);
                                putf(q, "%s\n", m);
                                snprintf(q, sizeof q, "%s/%s/shared_cpu_list", p, d);
                                putf(q, "%s\n", l);
                                free(l);
                                free(m);
                        }
#undef PUT
                }
                {
                        char t[64], q[300];
                        snprintf(t, sizeof t, "../../node/node%d", sock);
                        snprintf(q, sizeof q, "%s/node%d", p, sock);
                        symlinkf(t, "%s", q);
                }
        }

        mkdirf("sys/devices/system/node");
        {
                cpuset_t nodes;
                cpuset_zero(&nodes);
                for (int n = 0; n < h->sockets; n++)
                        cpuset_set(&nodes, n);
                l = fmt_list(&nodes);
                putf("sys/devices/system/node/online", "%s\n", l);
                putf("sys/devices/system/node/possible", "%s\n", l);
                putf("sys/devices/system/node/has_cpu", "%s\n", l);
                putf("sys/devices/system/node/has_normal_memory", "%s\n", l);
                free(l);
        }
        for (int n = 0; n < h->sockets; n++) {
                cpuset_t nc = node_cpus(h, n);
                char q[128];
                mkdirf("sys/devices/system/node/node%d", n);
                l = fmt_list(&nc);
                m = fmt_mask(&nc, h->ncpu);
                snprintf(q, sizeof q, "sys/devices/system/node/node%d/cpulist", n);
                putf(q, "%s\n", l);
                snprintf(q, sizeof q, "sys/devices/system/node/node%d/cpumap", n);
                putf(q, "%s\n", m);
                free(l);
                free(m);
                for (int c = 0; c < h->ncpu; c++)
                        if (cpu_socket(h, c) == n) {
                                char t[64];
                                snprintf(t, sizeof t, "../../cpu/cpu%d", c);
                                symlinkf(t, "sys/devices/system/node/node%d/cpu%d", n, c);
                        }
        }
}

/* ---------- devices and IRQs ---------- */

static struct sim_irq *add_irq(struct sim *S, enum irq_kind kind, int owner, int queue, int node,
                               const char *chip, unsigned long hwirq, const char *fmt, ...) _printf_(8, 9);
static struct sim_irq *add_irq(struct sim *S, enum irq_kind kind, int owner, int queue, int node,
                               const char *chip, unsigned long hwirq, const char *fmt, ...) {
        struct sim_irq *q;
        va_list ap;
        static unsigned next_irq = 24;

        S->irqs = realloc(S->irqs, (S->n_irqs + 1) * sizeof *S->irqs);
        if (!S->irqs)
                die("out of memory");
        q = &S->irqs[S->n_irqs++];
        memset(q, 0, sizeof *q);
        q->irq = kind == K_LEGACY ? hwirq : next_irq++;
        va_start(ap, fmt);
        vsnprintf(q->name, sizeof q->name, fmt, ap);
        va_end(ap);
        snprintf(q->chip, sizeof q->chip, "%s", chip);
        q->hwirq = hwirq;
        q->kind = kind;
        q->owner = owner;
        q->queue = queue;
        q->node = node;
        q->mask = S->h.all;
        q->counts = calloc(S->h.ncpu, sizeof *q->counts);
        q->carry = calloc(S->h.ncpu, sizeof *q->carry);
        if (!q->counts || !q->carry)
                die("out of memory");
        return q;
}

static void write_pci_device(struct sim *S, const char *bdf, int bus, int node, const char *cls,
                             int vendor, int device, const char *driver, unsigned first_irq, int nvec,
                             const unsigned *vecs) {
        char d[128], q[256], t[256];
        cpuset_t nc = node_cpus(&S->h, node);
        char *l = fmt_list(&nc), *m = fmt_mask(&nc, S->h.ncpu);

        snprintf(d, sizeof d, "sys/devices/pci0000:%02x/%s", bus, bdf);
        mkdirf("%s/msi_irqs", d);
#define P(file, ...) (snprintf(q, sizeof q, "%s/%s", d, file), putf(q, __VA_ARGS__))
        P("class", "%s\n", cls);
        P("vendor", "0x%04x\n", vendor);
        P("device", "0x%04x\n", device);
        P("subsystem_vendor", "0x%04x\n", vendor);
        P("subsystem_device", "0x%04x\n", 0x0001);
        P("irq", "%u\n", first_irq);
        P("numa_node", "%d\n", S->h.sockets > 1 ? node : -1);
        P("local_cpus", "%s\n", m);
        P("local_cpulist", "%s\n", l);
        P("enable", "1\n");
        P("modalias", "pci:v%08Xd%08Xsv%08Xsd%08Xbc02sc00i00\n", vendor, device, vendor, 1);
        for (int i = 0; i < nvec; i++) {
                snprintf(q, sizeof q, "%s/msi_irqs/%u", d, vecs[i]);
                putf(q, "msix\n");
        }
#undef P
        mkdirf("sys/bus/pci/drivers/%s", driver);
        snprintf(t, sizeof t, "../../../bus/pci/drivers/%s", driver);
        symlinkf(t, "%s/driver", d);
        mkdirf("sys/bus/pci/devices");
        snprintf(t, sizeof t, "../../../devices/pci0000:%02x/%s", bus, bdf);
        symlinkf(t, "sys/bus/pci/devices/%s", bdf);
        free(l);
        free(m);
}

static void write_netdev(struct sim *S, struct sim_nic *n, int ifindex) {
        char d[192], q[320], t[256];
        const char *devlink;

        if (n->fam == FAM_VIRTIO) {
                snprintf(d, sizeof d, "sys/devices/pci0000:%02x/%s/virtio%d", n->bus, n->bdf, n->virtio_idx);
                mkdirf("%s", d);
                mkdirf("sys/bus/virtio/drivers/virtio_net");
                symlinkf("../../../../bus/virtio/drivers/virtio_net", "%s/driver", d);
                mkdirf("sys/bus/virtio/devices");
                snprintf(t, sizeof t, "../../../devices/pci0000:%02x/%s/virtio%d", n->bus, n->bdf, n->virtio_idx);
                symlinkf(t, "sys/bus/virtio/devices/virtio%d", n->virtio_idx);
                snprintf(q, sizeof q, "%s/net/%s", d, n->name);
                devlink = "../../../virtio%d";
        } else {
                snprintf(d, sizeof d, "sys/devices/pci0000:%02x/%s", n->bus, n->bdf);
                devlink = "../../../%s";
        }
        snprintf(q, sizeof q, "%s/net/%s", d, n->name);
        mkdir_p(q);
        if (n->fam == FAM_VIRTIO)
                snprintf(t, sizeof t, devlink, n->virtio_idx);
        else
                snprintf(t, sizeof t, devlink, n->bdf);
        symlinkf(t, "%s/device", q);
        {
                char f[512];
#define N(file, ...) (snprintf(f, sizeof f, "%s/%s", q, file), putf(f, __VA_ARGS__))
                N("ifindex", "%d\n", ifindex);
                N("operstate", "up\n");
                N("carrier", "1\n");
                N("flags", "0x1003\n");
                N("mtu", "1500\n");
                N("type", "1\n");
                N("address", "02:00:00:00:%02x:%02x\n", ifindex >> 8, ifindex & 0xff);
                N("tx_queue_len", "1000\n");
                N("speed", "25000\n");
                for (int i = 0; i < n->nq; i++) {
                        char *mk;
                        snprintf(f, sizeof f, "%s/queues/rx-%d", q, i);
                        mkdir_p(f);
                        snprintf(f, sizeof f, "%s/queues/tx-%d", q, i);
                        mkdir_p(f);
                        cpuset_zero(&n->rps[i]);
                        mk = fmt_mask(&n->rps[i], S->h.ncpu);
                        n->last_rps[i] = strdup(mk);
                        snprintf(f, sizeof f, "%s/queues/rx-%d/rps_cpus", q, i);
                        putf(f, "%s\n", mk);
                        snprintf(f, sizeof f, "%s/queues/rx-%d/rps_flow_cnt", q, i);
                        putf(f, "0\n");
                        snprintf(f, sizeof f, "%s/queues/tx-%d/xps_cpus", q, i);
                        putf(f, "%s\n", mk);
                        snprintf(f, sizeof f, "%s/queues/tx-%d/xps_rxqs", q, i);
                        putf(f, "0\n");
                        snprintf(f, sizeof f, "%s/queues/tx-%d/tx_maxrate", q, i);
                        putf(f, "0\n");
                        free(mk);
                }
#undef N
        }
        mkdirf("sys/class/net");
        {
                char rel[400];
                /* sys/class/net/DEV -> ../../devices/... like the kernel */
                snprintf(rel, sizeof rel, "../../%s", q + strlen("sys/"));
                symlinkf(rel, "sys/class/net/%s", n->name);
        }
}

/* The argument (an add_irq() call) is evaluated before S->irqs is read
 * here, after the realloc. */
static long irq_index(const struct sim *S, const struct sim_irq *p) {
        return p - S->irqs;
}
#define IDX(p) irq_index(S, (p))

static void build_devices(struct sim *S) {
        static const struct { int vendor, device; const char *driver; } ids[FAM_MAX] = {
                [FAM_I40E] = { 0x8086, 0x158b, "i40e" },
                [FAM_TXRX] = { 0x8086, 0x10fb, "ixgbe" },
                [FAM_RXTX] = { 0x8086, 0x10d3, "e1000e" },
                [FAM_MLX5] = { 0x15b3, 0x1017, "mlx5_core" },
                [FAM_VIRTIO] = { 0x1af4, 0x1000, "virtio-pci" },
                [FAM_SINGLE] = { 0x8086, 0x10d3, "e1000e" },
        };
        /* PCI buses per node, NICs and storage in ranges that do not meet:
         * two devices must never share a sysfs directory. */
        static const int nic_bus[4] = { 0x3b, 0xaf, 0x10, 0x80 };
        static const int stor_bus[4] = { 0x5e, 0xd8, 0x28, 0x98 };
        int bus_next[8] = { 0 };
        unsigned vecs[2 * MAX_Q + 4];

        /* Legacy IO-APIC lines every host has: tiny, constant, local. */
        add_irq(S, K_LEGACY, -1, -1, 0, "IR-IO-APIC", 0, "timer")->irq = 0;
        add_irq(S, K_LEGACY, -1, -1, 0, "IR-IO-APIC", 8, "rtc0")->irq = 8;
        add_irq(S, K_LEGACY, -1, -1, 0, "IR-IO-APIC", 9, "acpi")->irq = 9;

        for (int i = 0; i < S->n_nics; i++) {
                struct sim_nic *n = &S->nics[i];
                int nvec = 0;
                size_t first = S->n_irqs;

                n->bus = nic_bus[n->node % 4] + bus_next[n->node % 4]++;
                snprintf(n->bdf, sizeof n->bdf, "0000:%02x:00.0", n->bus);
                n->vendor = ids[n->fam].vendor;
                n->device = ids[n->fam].device;
                snprintf(n->driver, sizeof n->driver, "%s", ids[n->fam].driver);
                char chip[48];
                snprintf(chip, sizeof chip, "IR-PCI-MSIX-%s", n->bdf);
                unsigned long hw = (unsigned long)n->bus << 19;
                if (n->fam == FAM_I40E)
                        add_irq(S, K_ADMIN, i, -1, n->node, chip, hw++, "i40e-%s:misc", n->bdf);
                if (n->fam == FAM_MLX5)
                        add_irq(S, K_ADMIN, i, -1, n->node, chip, hw++, "mlx5_async0@pci:%s", n->bdf);
                if (n->fam == FAM_VIRTIO)
                        add_irq(S, K_ADMIN, i, -1, n->node, chip, hw++, "virtio%d-config", n->virtio_idx);
                for (int q = 0; q < n->nq; q++) {
                        /* indexes, not pointers: add_irq() reallocates irqs[] */
                        long rx = -1, tx = -1;
                        switch (n->fam) {
                        case FAM_I40E:
                                rx = IDX(add_irq(S, K_RXTX, i, q, n->node, chip, hw++, "i40e-%s-TxRx-%d", n->name, q));
                                break;
                        case FAM_TXRX:
                                rx = IDX(add_irq(S, K_RXTX, i, q, n->node, chip, hw++, "%s-TxRx-%d", n->name, q));
                                break;
                        case FAM_MLX5:
                                rx = IDX(add_irq(S, K_RXTX, i, q, n->node, chip, hw++, "mlx5_comp%d@pci:%s", q, n->bdf));
                                break;
                        case FAM_RXTX:
                                rx = IDX(add_irq(S, K_RX, i, q, n->node, chip, hw++, "%s-rx-%d", n->name, q));
                                tx = IDX(add_irq(S, K_TX, i, q, n->node, chip, hw++, "%s-tx-%d", n->name, q));
                                break;
                        case FAM_VIRTIO:
                                rx = IDX(add_irq(S, K_RX, i, q, n->node, chip, hw++, "virtio%d-input.%d", n->virtio_idx, q));
                                tx = IDX(add_irq(S, K_TX, i, q, n->node, chip, hw++, "virtio%d-output.%d", n->virtio_idx, q));
                                break;
                        case FAM_SINGLE:
                                snprintf(chip, sizeof chip, "IR-PCI-MSI-%s", n->bdf);
                                rx = IDX(add_irq(S, K_RXTX, i, q, n->node, chip, 0, "%s", n->name));
                                break;
                        default:
                                break;
                        }
                        n->rx_irq[q] = rx;
                        n->tx_irq[q] = tx >= 0 ? tx : rx;
                }
                for (size_t k = first; k < S->n_irqs; k++)
                        vecs[nvec++] = S->irqs[k].irq;
                write_pci_device(S, n->bdf, n->bus, n->node, "0x020000", n->vendor, n->device, n->driver,
                                 S->irqs[first].irq, nvec, vecs);
                write_netdev(S, n, i + 2);
        }
        for (int i = 0; i < S->n_stor; i++) {
                struct sim_storage *st = &S->stor[i];
                size_t first = S->n_irqs;
                int nvec = 0;
                char chip[48];

                st->bus = stor_bus[st->node % 4] + bus_next[4 + st->node % 4]++;
                snprintf(st->bdf, sizeof st->bdf, "0000:%02x:00.0", st->bus);
                snprintf(chip, sizeof chip, "IR-PCI-MSIX-%s", st->bdf);
                add_irq(S, K_ADMIN, i, -1, st->node, chip, 0, "%sq0", st->name);
                for (int q = 0; q < st->nq; q++)
                        add_irq(S, K_STORAGE, i, q, st->node, chip, q + 1, "%sq%d", st->name, q + 1);
                for (size_t k = first; k < S->n_irqs; k++)
                        vecs[nvec++] = S->irqs[k].irq;
                write_pci_device(S, st->bdf, st->bus, st->node, "0x010802", 0x144d, 0xa808, "nvme",
                                 S->irqs[first].irq, nvec, vecs);
        }
}

/* The IRQ_KEEP_* bits leave a file that already shows the mask as it is:
 * rewriting the file the balancer just wrote would race its next write. */
enum { IRQ_KEEP_HEX = 1, IRQ_KEEP_LIST = 2 };

static void write_irq_files(struct sim *S, struct sim_irq *q, bool create, unsigned keep) {
        char p[192];
        char *hex = fmt_mask(&q->mask, S->h.ncpu), *lst = fmt_list(&q->mask);
        cpuset_t eff = cpuset_single(cpuset_first(&q->mask));
        char *ehex = fmt_mask(&eff, S->h.ncpu), *elst = fmt_list(&eff);

        if (create) {
                mkdirf("proc/irq/%u", q->irq);
                snprintf(q->dirname, sizeof q->dirname, "%s", q->name);
                for (char *c = q->dirname; *c; c++)
                        if (*c == '/')
                                *c = '_';
                mkdirf("proc/irq/%u/%s", q->irq, q->dirname);
                snprintf(p, sizeof p, "proc/irq/%u/node", q->irq);
                putf(p, "%d\n", S->h.sockets > 1 ? q->node : 0);
                snprintf(p, sizeof p, "proc/irq/%u/affinity_hint", q->irq);
                {
                        cpuset_t z;
                        char *zh;
                        cpuset_zero(&z);
                        zh = fmt_mask(&z, S->h.ncpu);
                        putf(p, "%s\n", zh);
                        free(zh);
                }
                snprintf(p, sizeof p, "proc/irq/%u/spurious", q->irq);
                putf(p, "count 0\nunhandled 0\nlast_unhandled 0 ms\n");
        }
        snprintf(p, sizeof p, "proc/irq/%u/smp_affinity", q->irq);
        if (!(keep & IRQ_KEEP_HEX))
                putf(p, "%s\n", hex);
        snprintf(p, sizeof p, "proc/irq/%u/smp_affinity_list", q->irq);
        if (!(keep & IRQ_KEEP_LIST))
                putf(p, "%s\n", lst);
        snprintf(p, sizeof p, "proc/irq/%u/effective_affinity", q->irq);
        putf(p, "%s\n", ehex);
        snprintf(p, sizeof p, "proc/irq/%u/effective_affinity_list", q->irq);
        putf(p, "%s\n", elst);
        free(q->last_hex);
        free(q->last_list);
        q->last_hex = hex;
        q->last_list = lst;
        free(ehex);
        free(elst);
}

static void write_misc(struct sim *S) {
        char *m = fmt_mask(&S->h.all, S->h.ncpu);
        mkdirf("proc/irq");
        putf("proc/irq/default_smp_affinity", "%s\n", m);
        free(m);
        mkdirf("proc/sys/net/core");
        putf("proc/sys/net/core/rps_sock_flow_entries", "0\n");
        putf("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n");
        putf("proc/version", "Linux version 6.1.0-sim (irqsteer-sim)\n");
        putf("proc/uptime", "1000.00 1000.00\n");
        for (size_t i = 0; i < S->n_irqs; i++)
                write_irq_files(S, &S->irqs[i], true, 0);
}

/* ---------- reading the balancer's placement ---------- */

static struct timespec mtime_of(const char *path) {
        struct stat st;
        if (fstatat(rootfd, path, &st, 0) < 0)
                return (struct timespec){ 0, 0 };
        return st.st_mtim;
}

static int read_trim(const char *path, char **ret) {
        size_t len;
        int r = rootfs_read(rootfd, path, ret, &len);
        if (r < 0)
                return r;
        util_strstrip(*ret);
        return 0;
}

struct counters {
        long irq_moves, rps_moves, bad_writes;
};

/* Picks up a changed smp_affinity or smp_affinity_list (the newer one when
 * both changed: irqbalance writes the hex form, irqsteerd the list), then
 * rewrites both and the effective affinity consistently. */
static void read_irq(struct sim *S, struct sim_irq *q, struct counters *c) {
        char ph[160], pl[160];
        _cleanup_(freep) char *hex = NULL;
        _cleanup_(freep) char *lst = NULL;
        bool ch_hex, ch_lst;
        cpuset_t nm;
        int r = 0;

        snprintf(ph, sizeof ph, "proc/irq/%u/smp_affinity", q->irq);
        snprintf(pl, sizeof pl, "proc/irq/%u/smp_affinity_list", q->irq);
        if (read_trim(ph, &hex) < 0 || read_trim(pl, &lst) < 0) {
                char d[64];
                /* An IRQ folder a test took away (the IRQ was freed) stays away. */
                snprintf(d, sizeof d, "proc/irq/%u", q->irq);
                if (faccessat(rootfd, d, F_OK, 0) < 0)
                        return;
                c->bad_writes++;
                write_irq_files(S, q, false, 0);
                return;
        }
        ch_hex = strcmp(hex, q->last_hex) != 0;
        ch_lst = strcmp(lst, q->last_list) != 0;
        if (!ch_hex && !ch_lst)
                return;
        if (ch_hex && ch_lst) {
                struct timespec th = mtime_of(ph), tl = mtime_of(pl);
                if (th.tv_sec > tl.tv_sec || (th.tv_sec == tl.tv_sec && th.tv_nsec > tl.tv_nsec))
                        ch_lst = false;
                else
                        ch_hex = false;
        }
        if (ch_hex)
                r = cpuset_parse_mask(hex, &nm);
        else
                r = cpuset_parse_list(lst, &nm);
        /* The kernel refuses empty masks and masks without an online CPU. */
        if (r < 0 || !cpuset_intersects(&nm, &S->h.all)) {
                c->bad_writes++;
        } else {
                cpuset_and(&nm, &nm, &S->h.all);
                if (!cpuset_equal(&nm, &q->mask))
                        c->irq_moves++;
                q->mask = nm;
        }
        /* Written again since it was read: leave it for the next tick,
         * as a kernel would have taken the newer write. */
        {
                _cleanup_(freep) char *again = NULL;
                if (read_trim(ch_hex ? ph : pl, &again) < 0 || strcmp(again, ch_hex ? hex : lst) != 0)
                        return;
        }
        {
                _cleanup_(freep) char *fh = fmt_mask(&q->mask, S->h.ncpu);
                _cleanup_(freep) char *fl = fmt_list(&q->mask);
                unsigned keep = (ch_hex && r >= 0 && !strcmp(fh, hex) ? IRQ_KEEP_HEX : 0) |
                                (ch_lst && r >= 0 && !strcmp(fl, lst) ? IRQ_KEEP_LIST : 0);
                write_irq_files(S, q, false, keep);
        }
}

static void read_rps(struct sim *S, struct sim_nic *n, int qi, struct counters *c) {
        char p[192];
        _cleanup_(freep) char *v = NULL;
        cpuset_t nm;

        snprintf(p, sizeof p, "sys/class/net/%s/queues/rx-%d/rps_cpus", n->name, qi);
        if (read_trim(p, &v) < 0)
                return;
        if (!strcmp(v, n->last_rps[qi]))
                return;
        if (cpuset_parse_mask(v, &nm) < 0) {
                c->bad_writes++;
        } else {
                cpuset_and(&nm, &nm, &S->h.all);
                if (!cpuset_equal(&nm, &n->rps[qi]))
                        c->rps_moves++;
                n->rps[qi] = nm;
        }
        {
                _cleanup_(freep) char *again = NULL;
                /* Written again since it was read: the next tick takes it. */
                if (read_trim(p, &again) < 0 || strcmp(again, v) != 0)
                        return;
        }
        free(n->last_rps[qi]);
        n->last_rps[qi] = fmt_mask(&n->rps[qi], S->h.ncpu);
        /* A file that shows the mask as it is stays: rewriting it would
         * race the balancer's next write. */
        if (strcmp(n->last_rps[qi], v) != 0)
                putf(p, "%s\n", n->last_rps[qi]);
}

/* ---------- the load model ---------- */

static double profile_factor(const struct sim_nic *n, int t) {
        double f = 1.0;
        if (n->step_at >= 0 && t >= n->step_at)
                f *= n->step_factor;
        if (n->ramp_to > n->ramp_from) {
                if (t >= n->ramp_to)
                        f *= n->ramp_factor;
                else if (t > n->ramp_from)
                        f *= 1.0 + (n->ramp_factor - 1.0) * (t - n->ramp_from) / (n->ramp_to - n->ramp_from);
        }
        /* A load that keeps coming and going (day and night, batch jobs):
         * x1 in the first half of each period and xFACTOR in the second, or
         * a sine from x1 up to xFACTOR and back. */
        if (n->swing_period > 0) {
                int ph = t % n->swing_period;
                if (n->swing_sine)
                        f *= 1.0 + (n->swing_factor - 1.0) * (1.0 - cos(2 * M_PI * ph / n->swing_period)) / 2;
                else if (ph >= n->swing_period / 2)
                        f *= n->swing_factor;
        }
        return f;
}

static void init_weights(struct sim *S) {
        for (int i = 0; i < S->n_nics; i++) {
                struct sim_nic *n = &S->nics[i];
                double sum = 0;
                int perm[MAX_Q];
                for (int q = 0; q < n->nq; q++)
                        perm[q] = q;
                /* Which queue gets the largest Zipf share depends on the seed. */
                for (int q = n->nq - 1; q > 0; q--) {
                        int j = rng_next() % (q + 1), t = perm[q];
                        perm[q] = perm[j];
                        perm[j] = t;
                }
                for (int q = 0; q < n->nq; q++) {
                        n->weight[perm[q]] = n->zipf_s > 0 ? 1.0 / pow(q + 1, n->zipf_s) : 1.0;
                        sum += n->weight[perm[q]];
                }
                for (int q = 0; q < n->nq; q++)
                        n->weight[q] /= sum;
        }
        /* Per-queue interrupt + NAPI shares and per-CPU user demand are
         * drawn only when a spread is asked for, so scenarios without one
         * see the same random sequence as before. */
        for (int i = 0; i < S->n_nics; i++) {
                struct sim_nic *n = &S->nics[i];
                for (int q = 0; q < n->nq; q++) {
                        double v = n->irq_share + (n->irq_share_spread > 0 ? n->irq_share_spread * rng_sym() : 0);
                        n->q_share[q] = MIN(MAX(v, 0.02), 0.98);
                }
        }
        S->h.cpu_user = calloc(S->h.ncpu, sizeof(double));
        if (!S->h.cpu_user)
                die("out of memory");
        for (int c = 0; c < S->h.ncpu; c++) {
                double v = S->h.user + (S->h.user_spread > 0 ? S->h.user_spread * rng_sym() : 0);
                S->h.cpu_user[c] = MIN(MAX(v, 0), 1);
        }
}

struct tick_result {
        double lb, peak_demand, peak_served, demand, dropped, max_item;
        double remote;          /* extra cost paid for remote placement */
        int peak_cpu;
        double *net_share;      /* per CPU served irq+softirq share */
        double *idle;           /* per CPU idle share */
};

/* The hole a balancer should never leave open for long: a CPU with under
 * HOLE_BUSY_IDLE idle and at least HOLE_BUSY_NET network work while an
 * eligible CPU has over HOLE_FREE_IDLE idle and under HOLE_FREE_NET. */
#define HOLE_BUSY_IDLE 0.05
#define HOLE_BUSY_NET 0.25
#define HOLE_FREE_IDLE 0.40
#define HOLE_FREE_NET 0.02

static bool hole_open(const struct sim *S, const struct tick_result *R) {
        bool busy = false, free_cpu = false;

        for (int c = 0; c < S->h.ncpu; c++) {
                if (!cpuset_isset(&S->h.eligible, c))
                        continue;
                busy |= R->idle[c] < HOLE_BUSY_IDLE && R->net_share[c] >= HOLE_BUSY_NET;
                free_cpu |= R->idle[c] > HOLE_FREE_IDLE && R->net_share[c] < HOLE_FREE_NET;
        }
        return busy && free_cpu;
}

static double remote_factor(const struct sim *S, int cpu, int node) {
        return S->h.sockets > 1 && cpu_socket(&S->h, cpu) != node ? S->h.remote_cost : 1;
}

/* The least peak any placement can reach if work were divisible at will:
 * the smallest L such that, with every node's eligible CPUs filled with
 * its own work up to L each, what is left over fits in the other nodes'
 * room at remote_cost times its local cost.  Keeping work local is always
 * cheapest, so no placement gets its busiest CPU below L. */
static double numa_bound(const struct sim *S, const double *node_work) {
        int ne[MAX_NODES] = { 0 }, nodes = S->h.sockets, all = 0;
        double total = 0, lo = 0, hi;

        CPUSET_FOREACH(c, &S->h.eligible) {
                ne[cpu_socket(&S->h, c)]++;
                all++;
        }
        for (int k = 0; k < nodes; k++)
                total += node_work[k];
        if (all == 0)
                return 0;
        if (nodes == 1)
                return total / all;
        hi = total * S->h.remote_cost / all;
        lo = total / all;
        for (int it = 0; it < 60; it++) {
                double L = (lo + hi) / 2, excess = 0, room = 0;
                for (int k = 0; k < nodes; k++) {
                        double d = node_work[k] - ne[k] * L;
                        if (d > 0)
                                excess += d;
                        else
                                room -= d;
                }
                if (excess * S->h.remote_cost <= room)
                        hi = L;
                else
                        lo = L;
        }
        return hi;
}

static void simulate_tick(struct sim *S, int t, struct tick_result *R) {
        int nc = S->h.ncpu;
        double *hard = calloc(nc, sizeof(double)), *soft = calloc(nc, sizeof(double));
        double *intr_net = calloc(nc, sizeof(double)), *rps_runs = calloc(nc, sizeof(double));
        double *blk = calloc(nc, sizeof(double)), *txr = calloc(nc, sizeof(double));
        double total = 0, max_item = 0, ts = S->tick_s, remote = 0;
        double node_work[MAX_NODES] = { 0 };

        if (!hard || !soft || !intr_net || !rps_runs || !blk || !txr)
                die("out of memory");
/* The cost of NIC n's work w on CPU c, counted as remote when it is. */
#define COST(c, w) (remote_factor(S, (c), n->node) == 1 ? (w) : (remote += (w) * (S->h.remote_cost - 1), \
                                                          (w) * S->h.remote_cost))
        /* The noise draws happen in a fixed order whatever the placement, so
         * every balancer sees the same work for a seed. */
        for (int i = 0; i < S->n_nics; i++) {
                struct sim_nic *n = &S->nics[i];
                double f = profile_factor(n, t);
                for (int q = 0; q < n->nq; q++) {
                        double base = n->load * n->weight[q];
                        double el = q == n->eleph_q ? n->eleph_load : 0;
                        double noise = 1.0 + n->noise * rng_sym();
                        double W = (base + el) * f * noise;
                        double elw = el * f * noise;
                        double rxw = W * (1.0 - (K_RX == S->irqs[n->rx_irq[q]].kind ? n->tx_share : 0));
                        double txw = W - rxw;
                        double irqpart = rxw * n->q_share[q], proto = rxw - irqpart;
                        double el_proto = elw * (1.0 - n->q_share[q]) * (rxw / (W > 0 ? W : 1));
                        double mice = proto - el_proto;
                        struct sim_irq *rq = &S->irqs[n->rx_irq[q]];
                        int rc = cpuset_first(&rq->mask);
                        cpuset_t rps = n->rps[q];
                        int nr = cpuset_count(&rps);

                        total += W;
                        node_work[n->node] += W;
                        hard[rc] += COST(rc, irqpart * n->hardirq_share);
                        soft[rc] += COST(rc, irqpart * (1 - n->hardirq_share));
                        intr_net[rc] += W * n->intr_rate * ts;
                        /* A queue's interrupt work is indivisible, and what RPS
                         * moves off its CPU costs that CPU rps_overhead of it:
                         * no placement leaves the IRQ CPU less than both.  RPS
                         * splits the protocol work by flow, an elephant flow
                         * stays whole. */
                        max_item = MAX(max_item, irqpart + proto * n->rps_overhead);
                        max_item = MAX(max_item, el_proto);
                        if (nr == 0) {
                                soft[rc] += COST(rc, proto);
                        } else {
                                /* the kernel's get_rps_cpu(): the set's CPUs in
                                 * ascending order, reciprocal_scale(hash, len)
                                 * of the flow's 32-bit hash picks one */
                                int k = 0, ec = -1;
                                uint64_t h = ((hash2(i * 1000 + q, 7) & 0xffffffffULL) * (uint64_t)nr) >> 32;
                                CPUSET_FOREACH(c, &rps) {
                                        if ((uint64_t)k == h)
                                                ec = c;
                                        soft[c] += COST(c, mice / nr);
                                        rps_runs[c] += W * n->intr_rate * ts / nr;
                                        k++;
                                }
                                soft[ec] += COST(ec, el_proto);
                                /* IPIs and backlog enqueueing cost the IRQ CPU. */
                                soft[rc] += COST(rc, proto * n->rps_overhead);
                                total += proto * n->rps_overhead;
                                node_work[n->node] += proto * n->rps_overhead;
                        }
                        if (txw > 0) {
                                struct sim_irq *tq = &S->irqs[n->tx_irq[q]];
                                int tc = cpuset_first(&tq->mask);
                                hard[tc] += COST(tc, txw * n->hardirq_share);
                                soft[tc] += COST(tc, txw * (1 - n->hardirq_share));
                                txr[tc] += txw * n->intr_rate * ts;
                                max_item = MAX(max_item, txw);
                        } else {
                                txr[rc] += 0.1 * W * n->intr_rate * ts;
                        }
                }
        }
        for (size_t k = 0; k < S->n_irqs; k++) {
                struct sim_irq *q = &S->irqs[k];
                int c = cpuset_first(&q->mask);
                double ints;
                if (q->kind == K_STORAGE) {
                        double w = S->stor[q->owner].load / S->stor[q->owner].nq;
                        double rf = remote_factor(S, c, S->stor[q->owner].node);
                        hard[c] += 0.3 * w * rf;
                        soft[c] += 0.7 * w * rf;
                        remote += w * (rf - 1);
                        total += w;
                        node_work[S->stor[q->owner].node] += w;
                        blk[c] += w * 50000 * ts;
                        ints = w * 50000 * ts;
                } else if (q->kind == K_LEGACY || q->kind == K_ADMIN) {
                        ints = q->irq == 0 ? 0 : 0.2 * ts;
                } else {
                        continue;
                }
                q->carry[c] += ints;
                q->counts[c] += (uint64_t)q->carry[c];
                q->carry[c] -= (uint64_t)q->carry[c];
        }

        /* Capacity: network work first, what exceeds 100% is dropped (and a
         * saturated CPU polls instead of taking interrupts); user and system
         * time fill what is left. */
        R->peak_demand = R->peak_served = R->dropped = 0;
        R->peak_cpu = 0;
        for (int c = 0; c < nc; c++) {
                double D = hard[c] + soft[c], served = MIN(D, 1.0), scale = D > 0 ? served / D : 1;
                double sys = MIN(S->h.system, 1.0 - served), usr = MIN(S->h.cpu_user[c], 1.0 - served - sys);
                double idle = 1.0 - served - sys - usr;
                if (D > R->peak_demand) {
                        R->peak_demand = D;
                        R->peak_cpu = c;
                }
                R->peak_served = MAX(R->peak_served, served);
                R->dropped += D - served;
                R->net_share[c] = served;
                R->idle[c] = idle;
                S->stat[c][0] += usr * ts * USER_HZ;
                S->stat[c][2] += sys * ts * USER_HZ;
                S->stat[c][3] += idle * ts * USER_HZ;
                S->stat[c][5] += hard[c] * scale * ts * USER_HZ;
                S->stat[c][6] += soft[c] * scale * ts * USER_HZ;
                /* NET_RX runs: one per interrupt on the IRQ CPU, one per
                 * RPS IPI batch on the targets; a busy CPU batches more. */
                S->softirq[c][3] += (intr_net[c] + rps_runs[c]) * scale;
                /* Packets in proportion to work; the excess of a CPU is
                 * dropped there.  time_squeeze: net_rx_action left with
                 * work to do, about once a jiffy (HZ 250) while saturated. */
                S->softnet[c][0] += served * SIM_PKTS_PER_CPU_S * ts;
                S->softnet[c][1] += (D - served) * SIM_PKTS_PER_CPU_S * ts;
                S->softnet[c][2] += D > 1 ? 250 * ts : 0;
                S->softirq[c][2] += txr[c] * scale;
                S->softirq[c][4] += blk[c];
                S->softirq[c][1] += 250 * ts;
                S->softirq[c][7] += 80 * ts;
                S->softirq[c][9] += 60 * ts;
                S->softirq[c][8] += 2 * ts;
                S->softirq[c][0] += 0.01 * ts;
                S->softirq[c][6] += 0.5 * ts;
                intr_net[c] *= scale;
                txr[c] *= scale;
        }
        /* Interrupt counts of the NIC IRQs on the CPU they fire on. */
        for (int i = 0; i < S->n_nics; i++) {
                struct sim_nic *n = &S->nics[i];
                for (int q = 0; q < n->nq; q++) {
                        struct sim_irq *rq = &S->irqs[n->rx_irq[q]], *tq = &S->irqs[n->tx_irq[q]];
                        int rc = cpuset_first(&rq->mask), tc = cpuset_first(&tq->mask);
                        double D = hard[rc] + soft[rc], scale = D > 1 ? 1 / D : 1;
                        double base = n->load * n->weight[q] + (q == n->eleph_q ? n->eleph_load : 0);
                        double w1 = base * profile_factor(n, t) * n->intr_rate * ts, w = w1 * scale;
                        if (rq != tq) {
                                /* each vector slowed by its own CPU's saturation only */
                                double Dt = hard[tc] + soft[tc];
                                rq->carry[rc] += w * (1 - n->tx_share);
                                tq->carry[tc] += w1 * n->tx_share * (Dt > 1 ? 1 / Dt : 1);
                                tq->counts[tc] += (uint64_t)tq->carry[tc];
                                tq->carry[tc] -= (uint64_t)tq->carry[tc];
                        } else {
                                rq->carry[rc] += w;
                        }
                        rq->counts[rc] += (uint64_t)rq->carry[rc];
                        rq->carry[rc] -= (uint64_t)rq->carry[rc];
                }
        }
#undef COST
        R->demand = total;
        R->remote = remote;
        R->max_item = max_item;
        R->lb = MAX(numa_bound(S, node_work), max_item);
        free(hard);
        free(soft);
        free(intr_net);
        free(rps_runs);
        free(blk);
        free(txr);
}

/* ---------- proc files ---------- */

struct sbuf {
        char *p;
        size_t len, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) _printf_(2, 3);
static void sb_printf(struct sbuf *b, const char *fmt, ...) {
        va_list ap;
        for (;;) {
                int n;
                va_start(ap, fmt);
                n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
                va_end(ap);
                if (n < 0)
                        die("format error");
                if (b->len + n < b->cap) {
                        b->len += n;
                        return;
                }
                b->cap = (b->cap + n + 1) * 2;
                b->p = realloc(b->p, b->cap);
                if (!b->p)
                        die("out of memory");
        }
}

static void write_proc(struct sim *S, int t) {
        struct sbuf b = { 0 };
        int nc = S->h.ncpu, prec = 3;
        double tot[10] = { 0 };

        b.cap = 1 << 16;
        b.p = malloc(b.cap);
        if (!b.p)
                die("out of memory");

        /* proc/stat */
        for (int c = 0; c < nc; c++)
                for (int k = 0; k < 10; k++)
                        tot[k] += S->stat[c][k];
        sb_printf(&b, "cpu  %llu %llu %llu %llu %llu %llu %llu 0 0 0\n",
                  (unsigned long long)tot[0], (unsigned long long)tot[1], (unsigned long long)tot[2],
                  (unsigned long long)tot[3], (unsigned long long)tot[4], (unsigned long long)tot[5],
                  (unsigned long long)tot[6]);
        for (int c = 0; c < nc; c++) {
                char op[80];
                _cleanup_(freep) char *on = NULL;
                /* A test took the CPU offline: the kernel leaves it out of
                 * /proc/stat, which is how irqsteerd notices hotplug. */
                snprintf(op, sizeof op, "sys/devices/system/cpu/cpu%d/online", c);
                if (read_trim(op, &on) == 0 && !strcmp(on, "0"))
                        continue;
                sb_printf(&b, "cpu%d %llu %llu %llu %llu %llu %llu %llu 0 0 0\n", c,
                          (unsigned long long)S->stat[c][0], (unsigned long long)S->stat[c][1],
                          (unsigned long long)S->stat[c][2], (unsigned long long)S->stat[c][3],
                          (unsigned long long)S->stat[c][4], (unsigned long long)S->stat[c][5],
                          (unsigned long long)S->stat[c][6]);
        }
        {
                uint64_t intr = 0;
                for (size_t k = 0; k < S->n_irqs; k++)
                        for (int c = 0; c < nc; c++)
                                intr += S->irqs[k].counts[c];
                sb_printf(&b, "intr %llu\nctxt %llu\nbtime 1700000000\nprocesses %d\n"
                          "procs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
                          (unsigned long long)intr, (unsigned long long)(1000ULL * (t + 1) * nc), 1000 + t);
        }
        put_inplace("proc/stat", b.p, b.len);

        /* proc/softirqs: header of CPUn columns, rows right-aligned names */
        b.len = 0;
        sb_printf(&b, "                ");
        for (int c = 0; c < nc; c++)
                sb_printf(&b, "CPU%-8d", c);
        sb_printf(&b, "\n");
        for (int r = 0; r < 10; r++) {
                sb_printf(&b, "%12s:", softirq_rows[r]);
                for (int c = 0; c < nc; c++)
                        sb_printf(&b, " %10llu", (unsigned long long)S->softirq[c][r]);
                sb_printf(&b, "\n");
        }
        put_atomic("proc/softirqs", b.p, b.len);

        /* proc/net/softnet_stat, softnet_seq_show()'s 13 hex columns */
        b.len = 0;
        for (int c = 0; c < nc; c++)
                sb_printf(&b, "%08x %08x %08x 00000000 00000000 00000000 00000000 00000000 00000000 "
                          "00000000 00000000 00000000 %08x\n", (unsigned)(uint64_t)S->softnet[c][0],
                          (unsigned)(uint64_t)S->softnet[c][1], (unsigned)(uint64_t)S->softnet[c][2], c);
        put_atomic("proc/net/softnet_stat", b.p, b.len);

        /* proc/interrupts, in the kernel's show_interrupts() layout */
        b.len = 0;
        sb_printf(&b, "%*s", prec + 8, "");
        for (int c = 0; c < nc; c++)
                sb_printf(&b, "CPU%-8d", c);
        sb_printf(&b, "\n");
        {
                size_t *ord = malloc(S->n_irqs * sizeof *ord);
                if (!ord)
                        die("out of memory");
                for (size_t k = 0; k < S->n_irqs; k++)
                        ord[k] = k;
                for (size_t a = 1; a < S->n_irqs; a++)
                        for (size_t z = a; z > 0 && S->irqs[ord[z - 1]].irq > S->irqs[ord[z]].irq; z--) {
                                size_t tmp = ord[z];
                                ord[z] = ord[z - 1];
                                ord[z - 1] = tmp;
                        }
                for (size_t k = 0; k < S->n_irqs; k++) {
                        struct sim_irq *q = &S->irqs[ord[k]];
                        sb_printf(&b, "%*u:", prec, q->irq);
                        for (int c = 0; c < nc; c++)
                                sb_printf(&b, " %10llu", (unsigned long long)q->counts[c]);
                        sb_printf(&b, "  %-8s %lu-edge      %s\n", q->chip, q->hwirq, q->name);
                }
                free(ord);
        }
        {
                double loc = 250 * S->tick_s * (t + 1);
                sb_printf(&b, "%*s:", prec, "NMI");
                for (int c = 0; c < nc; c++)
                        sb_printf(&b, " %10llu", (unsigned long long)(t + 1));
                sb_printf(&b, "   Non-maskable interrupts\n");
                sb_printf(&b, "%*s:", prec, "LOC");
                for (int c = 0; c < nc; c++)
                        sb_printf(&b, " %10llu", (unsigned long long)loc);
                sb_printf(&b, "   Local timer interrupts\n");
                sb_printf(&b, "%*s: %10u\n", prec, "ERR", 0);
                sb_printf(&b, "%*s: %10u\n", prec, "MIS", 0);
        }
        put_atomic("proc/interrupts", b.p, b.len);
        free(b.p);
}

/* ---------- metrics ---------- */

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double quantile(const double *v, int n, double q) {
        double *s;
        double r;
        if (n <= 0)
                return NAN;
        s = malloc(n * sizeof *s);
        if (!s)
                die("out of memory");
        memcpy(s, v, n * sizeof *s);
        qsort(s, n, sizeof *s, cmp_double);
        /* nearest rank */
        {
                int k = (int)ceil(q * n) - 1;
                if (k < 0)
                        k = 0;
                if (k >= n)
                        k = n - 1;
                r = s[k];
        }
        free(s);
        return r;
}

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
        (void)sig;
        stop_flag = 1;
}

static void sleep_until(const struct timespec *ts) {
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts, NULL) == EINTR && !stop_flag)
                ;
}

static void usage(void) {
        fputs("usage: irqsteer-sim --scenario FILE --root DIR [--seed N] [--ticks N]\n"
              "         [--fast] [--ready FILE] [--go FILE] [--csv FILE] [--summary FILE]\n"
              "         [--init-only] [--real-tick SECONDS]\n"
              "Builds a fake root tree for the scenario's host under DIR, then ticks:\n"
              "reads the placement balancers wrote, writes proc/{stat,softirqs,interrupts}.\n"
              "--fast ticks without sleeping (for balancers that act once, before the run);\n"
              "--ready is created once the tree exists, then the run waits for --go;\n"
              "--real-tick sleeps SECONDS per simulated 1 s tick (accelerated runs).\n",
              stderr);
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "scenario", required_argument, NULL, 's' },
                { "root", required_argument, NULL, 'r' },
                { "seed", required_argument, NULL, 'S' },
                { "ticks", required_argument, NULL, 't' },
                { "warmup", required_argument, NULL, 'w' },
                { "fast", no_argument, NULL, 'f' },
                { "ready", required_argument, NULL, 'R' },
                { "go", required_argument, NULL, 'g' },
                { "csv", required_argument, NULL, 'c' },
                { "summary", required_argument, NULL, 'o' },
                { "init-only", no_argument, NULL, 'i' },
                { "real-tick", required_argument, NULL, 'T' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        static struct sim S;
        const char *scen = NULL, *root = NULL, *ready = NULL, *go = NULL, *csv = NULL, *summary = NULL;
        bool fast = false, init_only = false;
        long seed = -1, ticks = -1, warmup = -1;
        double real_tick = -1;
        int o;

        while ((o = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
                switch (o) {
                case 's': scen = optarg; break;
                case 'r': root = optarg; break;
                case 'S': seed = atol(optarg); break;
                case 't': ticks = atol(optarg); break;
                case 'w': warmup = atol(optarg); break;
                case 'f': fast = true; break;
                case 'R': ready = optarg; break;
                case 'g': go = optarg; break;
                case 'c': csv = optarg; break;
                case 'o': summary = optarg; break;
                case 'i': init_only = true; break;
                case 'T': real_tick = atof(optarg); break;
                case 'h': usage(); return 0;
                default: usage(); return 2;
                }
        }
        if (!scen || !root) {
                usage();
                return 2;
        }
        load_scenario(&S, scen);
        if (seed >= 0)
                S.seed = seed;
        if (ticks > 0)
                S.ticks = ticks;
        if (warmup >= 0)
                S.warmup = warmup;
        if (S.warmup >= S.ticks)
                S.warmup = S.ticks / 4;
        rng_state = S.seed;

        if (mkdir(root, 0755) < 0 && errno != EEXIST)
                die("mkdir %s: %m", root);
        rootfd = rootfs_open(root);
        if (rootfd < 0)
                die("open %s: %s", root, strerror(-rootfd));
        S.rootfd = rootfd;

        write_cpu_tree(&S);
        mkdir_p("proc/net");
        build_devices(&S);
        write_misc(&S);
        init_weights(&S);
        S.stat = calloc(S.h.ncpu, sizeof *S.stat);
        S.softirq = calloc(S.h.ncpu, sizeof *S.softirq);
        S.softnet = calloc(S.h.ncpu, sizeof *S.softnet);
        if (!S.stat || !S.softirq)
                die("out of memory");
        /* Some history so the first reader sees sane totals. */
        for (int c = 0; c < S.h.ncpu; c++) {
                S.stat[c][3] = 100000;
                S.stat[c][0] = 5000;
                S.stat[c][2] = 2000;
        }
        write_proc(&S, 0);
        if (init_only)
                return 0;
        if (ready) {
                int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd >= 0)
                        close(fd);
        }
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        if (go)
                while (access(go, F_OK) < 0 && !stop_flag)
                        usleep(20000);

        FILE *cf = NULL;
        if (csv) {
                cf = fopen(csv, "we");
                if (!cf)
                        die("%s: %m", csv);
                fprintf(cf, "tick,lb,peak_demand,peak_served,peak_cpu,demand,dropped,irq_moves,rps_moves");
                for (int c = 0; c < S.h.ncpu; c++)
                        fprintf(cf, ",cpu%d", c);
                fputc('\n', cf);
        }

        int n = S.ticks, done = 0, step_tick = -1;
        double *peak_d = calloc(n, sizeof(double)), *peak_s = calloc(n, sizeof(double));
        double *imb = calloc(n, sizeof(double));
        double sum_demand = 0, sum_dropped = 0, sum_banned = 0, sum_remote = 0;
        long moves_after = 0, moves_total = 0, rps_after = 0, bad = 0;
        struct tick_result R = { .net_share = calloc(S.h.ncpu, sizeof(double)),
                                 .idle = calloc(S.h.ncpu, sizeof(double)) };
        int hole_run = 0, hole_max = 0, hole_ticks = 0, hole_avoidable = 0;
        double min_user = 1;
        struct timespec next;

        if (!peak_d || !peak_s || !imb || !R.net_share || !R.idle)
                die("out of memory");
        CPUSET_FOREACH(k, &S.h.eligible)
                min_user = MIN(min_user, S.h.cpu_user[k]);
        for (int i = 0; i < S.n_nics; i++)
                if (S.nics[i].step_at >= 0)
                        step_tick = step_tick < 0 ? S.nics[i].step_at : MIN(step_tick, S.nics[i].step_at);
        clock_gettime(CLOCK_MONOTONIC, &next);
        for (int t = 0; t < n && !stop_flag; t++) {
                struct counters c = { 0 };
                for (size_t k = 0; k < S.n_irqs; k++)
                        read_irq(&S, &S.irqs[k], &c);
                for (int i = 0; i < S.n_nics; i++)
                        for (int q = 0; q < S.nics[i].nq; q++)
                                read_rps(&S, &S.nics[i], q, &c);
                simulate_tick(&S, t, &R);
                if (!fast) {
                        long ns = (long)((real_tick > 0 ? real_tick : S.tick_s) * 1e9);
                        next.tv_nsec += ns % 1000000000L;
                        next.tv_sec += ns / 1000000000L + next.tv_nsec / 1000000000L;
                        next.tv_nsec %= 1000000000L;
                        sleep_until(&next);
                        if (stop_flag)
                                break;
                }
                write_proc(&S, t + 1);
                peak_d[t] = R.peak_demand;
                peak_s[t] = R.peak_served;
                imb[t] = R.lb > 0 ? R.peak_demand / R.lb : 1;
                moves_total += c.irq_moves + c.rps_moves;
                bad += c.bad_writes;
                if (t >= S.warmup) {
                        sum_demand += R.demand;
                        sum_dropped += R.dropped;
                        sum_remote += R.remote;
                        moves_after += c.irq_moves + c.rps_moves;
                        rps_after += c.rps_moves;
                        if (hole_open(&S, &R)) {
                                hole_ticks++;
                                hole_run++;
                                /* a hole the best placement need not have:
                                 * every indivisible item fits beside the
                                 * least user load without saturating */
                                if (R.max_item < 1 - HOLE_BUSY_IDLE - S.h.system - min_user)
                                        hole_avoidable++;
                                hole_max = MAX(hole_max, hole_run);
                        } else
                                hole_run = 0;
                        for (int k = 0; k < S.h.ncpu; k++)
                                if (!cpuset_isset(&S.h.eligible, k))
                                        sum_banned += R.net_share[k];
                }
                if (cf) {
                        fprintf(cf, "%d,%.4f,%.4f,%.4f,%d,%.4f,%.4f,%ld,%ld", t, R.lb, R.peak_demand,
                                R.peak_served, R.peak_cpu, R.demand, R.dropped, c.irq_moves, c.rps_moves);
                        for (int k = 0; k < S.h.ncpu; k++)
                                fprintf(cf, ",%.4f", R.net_share[k]);
                        fputc('\n', cf);
                        fflush(cf);
                }
                done = t + 1;
        }
        if (cf)
                fclose(cf);

        if (summary && done > S.warmup) {
                FILE *sf = fopen(summary, "we");
                int m = done - S.warmup, ref = step_tick >= 0 && step_tick < done ? step_tick : 0;
                int tail = MAX(1, (done - ref) / 4), conv = -1;
                double fin = quantile(peak_d + done - tail, tail, 0.5);

                /* Converged: from this tick on the peak stays within 10% of
                 * its final level (median of the last quarter). */
                for (int k = done - 1; k >= ref; k--) {
                        if (fabs(peak_d[k] - fin) > 0.10 * fin)
                                break;
                        conv = k - ref;
                }
                if (!sf)
                        die("%s: %m", summary);
                fprintf(sf, "ticks=%d\nwarmup=%d\n", done, S.warmup);
                fprintf(sf, "peak_median=%.2f\npeak_p99=%.2f\n", 100 * quantile(peak_s + S.warmup, m, 0.5),
                        100 * quantile(peak_s + S.warmup, m, 0.99));
                fprintf(sf, "peak_demand_median=%.2f\n", 100 * quantile(peak_d + S.warmup, m, 0.5));
                fprintf(sf, "imbalance=%.3f\nimbalance_p99=%.3f\n", quantile(imb + S.warmup, m, 0.5),
                        quantile(imb + S.warmup, m, 0.99));
                fprintf(sf, "dropped_pct=%.2f\n", sum_demand > 0 ? 100 * sum_dropped / sum_demand : 0);
                /* what remote placement added to the work, % of its local cost */
                fprintf(sf, "remote_extra_pct=%.2f\n", sum_demand > 0 ? 100 * sum_remote / sum_demand : 0);
                fprintf(sf, "moves_per_hour=%.1f\n", moves_after * 3600.0 / (m * S.tick_s));
                fprintf(sf, "rps_moves_after_warmup=%ld\nmoves_total=%ld\nbad_writes=%ld\n", rps_after,
                        moves_total, bad);
                /* network work on isolated/nohz_full CPUs, % of one CPU */
                fprintf(sf, "isolated_load_pct=%.2f\n", 100 * sum_banned / m);
                fprintf(sf, "converge_ref=%d\nconverge_ticks=%d\n", ref, conv);
                /* ticks after warm-up with a saturated network CPU beside
                 * an idle one without network work, and the longest run */
                fprintf(sf, "hole_ticks=%d\nhole_run_max=%d\nhole_ticks_avoidable=%d\n", hole_ticks, hole_max,
                        hole_avoidable);
                fclose(sf);
        }
        free(peak_d);
        free(peak_s);
        free(imb);
        free(R.net_share);
        free(R.idle);
        return stop_flag && done < n ? 1 : 0;
}
