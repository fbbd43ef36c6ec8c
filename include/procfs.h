/* Parsers for /proc/stat, /proc/softirqs, /proc/interrupts and
 * /proc/PID/stat.  The *_parse
 * functions are pure over a buffer; the *_read wrappers read via rootfs.
 * All return 0 or -errno (-EBADMSG on malformed input, -EINVAL on bad
 * arguments, -ERANGE on numbers that do not fit in 64 bits or CPU numbers
 * >= CPUSET_MAX) and never crash on garbage.  The buffer need not be
 * NUL-terminated: nothing past len is read.  On error *ret is left zeroed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rootfs_held_file;

enum procfs_cpustat_field {
        CPUSTAT_USER,
        CPUSTAT_NICE,
        CPUSTAT_SYSTEM,
        CPUSTAT_IDLE,
        CPUSTAT_IOWAIT,
        CPUSTAT_IRQ,
        CPUSTAT_SOFTIRQ,
        CPUSTAT_STEAL,
        CPUSTAT_GUEST,
        CPUSTAT_GUEST_NICE,
        CPUSTAT_MAX,
};

struct procfs_cpustat {
        int cpu;                 /* -1 for the aggregate "cpu" line */
        uint64_t v[CPUSTAT_MAX]; /* USER_HZ ticks; missing trailing columns are 0 */
        unsigned n_fields;       /* how many columns the line had (>= 4) */
};

struct procfs_stat {
        struct procfs_cpustat total;
        struct procfs_cpustat *cpus; /* online CPUs, in file order (ascending) */
        size_t n_cpus;
};

int procfs_stat_parse(const char *buf, size_t len, struct procfs_stat *ret);
/* Reads and parses proc/stat: through held's kept fd and buffer when held
 * is non-NULL (a reader at every tick), else opened afresh.  0 or -errno. */
int procfs_stat_read(int rootfd, struct rootfs_held_file *held, struct procfs_stat *ret);
void procfs_stat_free(struct procfs_stat *s);
/* Entry for cpu, or NULL. */
const struct procfs_cpustat *procfs_stat_cpu(const struct procfs_stat *s, int cpu);

enum procfs_softirq {
        SOFTIRQ_HI,
        SOFTIRQ_TIMER,
        SOFTIRQ_NET_TX,
        SOFTIRQ_NET_RX,
        SOFTIRQ_BLOCK,
        SOFTIRQ_IRQ_POLL,
        SOFTIRQ_TASKLET,
        SOFTIRQ_SCHED,
        SOFTIRQ_HRTIMER,
        SOFTIRQ_RCU,
        SOFTIRQ_MAX,
        SOFTIRQ_INVALID = -1,
};

const char *procfs_softirq_to_string(enum procfs_softirq s);
enum procfs_softirq procfs_softirq_from_string(const char *s);

struct procfs_softirqs {
        int *cpus;               /* CPU numbers of the columns (online CPUs),
                                  * strictly ascending */
        size_t n_cpus;
        /* counts[row * n_cpus + col]; rows by enum procfs_softirq; rows the
         * file lacks are all zero and flagged absent */
        uint64_t *counts;
        bool present[SOFTIRQ_MAX];
};

int procfs_softirqs_parse(const char *buf, size_t len, struct procfs_softirqs *ret);
/* proc/softirqs as procfs_stat_read reads proc/stat. */
int procfs_softirqs_read(int rootfd, struct rootfs_held_file *held, struct procfs_softirqs *ret);
void procfs_softirqs_free(struct procfs_softirqs *s);
/* Count for (row, cpu); false if cpu has no column. */
bool procfs_softirqs_get(const struct procfs_softirqs *s, enum procfs_softirq row, int cpu, uint64_t *ret);

struct procfs_irq {
        char id[16];             /* "38", "NMI", "LOC", ... */
        bool numeric;            /* a real IRQ line ("N:") */
        unsigned irq;            /* when numeric */
        /* The nonzero counts only: nz_counts[k] is the count of header
         * column nz_cols[k], columns ascending; every other column is 0
         * (an IRQ fires on one CPU or a few: dense, a 1024-CPU host's
         * counts would be 15 MB a reading).  Read with procfs_irq_count(). */
        const uint32_t *nz_cols;
        const uint64_t *nz_counts;
        size_t n_nz;
        uint64_t total;
        char chip[64];           /* "PCI-MSIX-0000:00:03.0", "IR-PCI-MSI", "IO-APIC";
                                  * "" when the row has none */
        char hwirq[32];          /* hwirq and flow type as printed: "1-edge",
                                  * "524288-edge", "27 Level" (arm), "edge" for
                                  * old kernels' "IR-PCI-MSI-edge"; may be "" */
        char name[128];          /* action name(s): "virtio2-input.0", "eth0-TxRx-3";
                                  * for named rows the description text */
};

struct procfs_interrupts {
        int *cpus;               /* CPU numbers of the header columns, strictly ascending */
        size_t n_cpus;
        struct procfs_irq *irqs; /* rows in file order */
        size_t n_irqs;
        /* private: every row's nonzero counts in row order, and the indexes
         * of the numeric rows sorted by IRQ number (for procfs_interrupts_find) */
        uint32_t *nz_cols;
        uint64_t *nz_vals;
        size_t *by_irq;
        size_t n_numeric;
};

int procfs_interrupts_parse(const char *buf, size_t len, struct procfs_interrupts *ret);
/* Reads proc/interrupts a chunk at a time (never the whole file at once)
 * and parses it as procfs_interrupts_parse() would. */
int procfs_interrupts_read(int rootfd, struct procfs_interrupts *ret);
/* The count of row irq in header column col (0 for a column it lacks).
 * O(log n_nz). */
uint64_t procfs_irq_count(const struct procfs_irq *irq, size_t col);
void procfs_interrupts_free(struct procfs_interrupts *s);
/* The row of numeric IRQ irq, or NULL.  O(log n). */
const struct procfs_irq *procfs_interrupts_find(const struct procfs_interrupts *s, unsigned irq);
/* Column index of cpu in the header, or -1.  O(log n). */
int procfs_interrupts_column(const struct procfs_interrupts *s, int cpu);
/* Column index of cpu in the header, or -1.  O(log n). */
int procfs_softirqs_column(const struct procfs_softirqs *s, int cpu);

/* The fields of proc/PID/stat (or proc/PID/task/TID/stat) we use. */
struct procfs_pid_stat {
        int pid;
        size_t comm_off, comm_len;    /* comm (field 2) in the buffer, without its parentheses */
        char state;                   /* 'R', 'S', 'Z', ... */
        pid_t ppid;
        unsigned flags;               /* PF_* (PF_KTHREAD = 0x00200000) */
        uint64_t utime, stime;        /* fields 14 and 15, clock ticks */
        unsigned long long starttime; /* field 22, clock ticks since boot: tells a reused TID */
        int processor;                /* field 39, the CPU it last ran on; -1 when the line ends before */
};
/* Parses a stat line: the PID, comm (which may hold spaces and ')', so
 * fields are counted from its last ')') and fields 3 to 22, each after
 * one space, then field 39 when there.  Pure.  0 or -EBADMSG. */
int procfs_parse_pid_stat(const char *buf, size_t len, struct procfs_pid_stat *ret);
