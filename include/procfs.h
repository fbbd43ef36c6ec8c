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
struct procfs_counts;

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
        uint64_t *counts;        /* n_cpus entries (columns of the header); for
                                  * rows with fewer columns (ERR, MIS) the rest are 0 */
        uint64_t total;
        char chip[64];           /* "PCI-MSIX-0000:00:03.0", "IR-PCI-MSI", "IO-APIC";
                                  * "" when the row has none */
        char hwirq[32];          /* hwirq and flow type as printed: "1-edge",
                                  * "524288-edge", "27 Level" (arm), "edge" for
                                  * old kernels' "IR-PCI-MSI-edge"; may be "" */
        char name[128];          /* action name(s): "virtio2-input.0", "eth0-TxRx-3";
                                  * for named rows the description text */
};

/* private: where a row sits in the text it was parsed from */
struct procfs_irq_layout {
        size_t off, len;         /* the line in text */
        size_t cols_off;         /* offset of the first count field in the line */
        bool fixed;              /* n_cpus counts, each in its own " %10u" field */
        size_t base_row;         /* row of the base reading it was compared with, or SIZE_MAX */
        uint32_t lo, hi;         /* columns whose counts may differ from that row (lo > hi: none) */
};

struct procfs_interrupts {
        int *cpus;               /* CPU numbers of the header columns, strictly ascending */
        size_t n_cpus;
        struct procfs_irq *irqs; /* rows in file order */
        size_t n_irqs;
        /* private: one block holding every row's counts, and the indexes of
         * the numeric rows sorted by IRQ number (for procfs_interrupts_find);
         * spare: a reference to the block of the reading this one was
         * delta-parsed against, for the next reading to reuse */
        struct procfs_counts *counts_block, *spare;
        size_t rows_allocated;   /* rows irqs, layout and counts_block have room for */
        size_t *by_irq;
        size_t n_numeric;
        /* private: the text itself and each row's place in it, kept so that
         * the next reading can skip what did not change; serial numbers tie
         * a delta parse to the reading it was compared with */
        char *text;
        size_t text_len;
        size_t header_off, header_len;
        struct procfs_irq_layout *layout;
        uint64_t serial, base_serial;
};

int procfs_interrupts_parse(const char *buf, size_t len, struct procfs_interrupts *ret);
int procfs_interrupts_read(int rootfd, struct procfs_interrupts *ret);
/* The same result as procfs_interrupts_parse(buf, len, ret) for any input,
 * cheaper when prev (an earlier reading of the same file, or NULL) shares
 * rows with it: with the same CPU header, a row whose bytes did not change
 * is copied from prev, and a changed row with fixed-width count fields has
 * only the fields whose bytes changed parsed.  A different header (CPU
 * hotplug), new, vanished or reshaped rows are parsed in full.  What prev
 * reports is only read, and prev may be freed afterwards; the counts block
 * it keeps for reuse may be taken over (so no two delta parses against
 * one prev at once from two threads). */
int procfs_interrupts_parse_delta(const char *buf, size_t len, const struct procfs_interrupts *prev,
                                  struct procfs_interrupts *ret);
int procfs_interrupts_read_delta(int rootfd, const struct procfs_interrupts *prev, struct procfs_interrupts *ret);
/* When s was delta-parsed against base (still the same reading) and its
 * row was compared with base's base_row: true, with [*ret_lo, *ret_hi] the
 * columns whose counts may differ (lo > hi: none); every other column
 * equals base's.  False when unknown (compare the counts yourself). */
bool procfs_interrupts_row_changes(const struct procfs_interrupts *s, const struct procfs_interrupts *base,
                                   size_t row, size_t base_row, size_t *ret_lo, size_t *ret_hi);
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
