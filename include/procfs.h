/* Parsers for /proc/stat, softirqs, interrupts and PID/stat: *_parse are
 * pure over a buffer (not NUL-terminated), *_read read via rootfs.  0 or
 * -errno (-EBADMSG, -EINVAL, -ERANGE); on error *ret is left zeroed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* 0, -EBADMSG or -ERANGE for what is no /proc/stat, -EAGAIN for a copy
 * cut short (no final newline), -ENOMEM; on error *ret is empty. */
int procfs_stat_parse(const char *buf, size_t len, struct procfs_stat *ret);
/* Reads proc/stat; a cut copy is read once more before -EAGAIN. */
int procfs_stat_read(int rootfd, struct procfs_stat *ret);
void procfs_stat_free(struct procfs_stat *s);
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

struct procfs_softirqs {
        int *cpus;               /* CPU numbers of the columns, ascending */
        size_t n_cpus;
        /* counts[row * n_cpus + col]; rows the file lacks are zero, not present */
        uint64_t *counts;
        bool present[SOFTIRQ_MAX];
};

int procfs_softirqs_parse(const char *buf, size_t len, struct procfs_softirqs *ret);
/* proc/softirqs as procfs_stat_read reads proc/stat. */
int procfs_softirqs_read(int rootfd, struct procfs_softirqs *ret);
void procfs_softirqs_free(struct procfs_softirqs *s);

/* Longest texts of a row kept, with the NUL: longer ones are cut. */
#define PROCFS_IRQ_ID_SIZE 16
#define PROCFS_IRQ_NAME_SIZE 128

struct procfs_irq {
        const char *id;          /* "38", "NMI", "LOC", ... */
        bool numeric;            /* a real IRQ line ("N:") */
        unsigned irq;            /* when numeric */
        /* Nonzero counts only (column nz_cols[k], ascending): an IRQ fires
         * on a few CPUs. */
        const uint32_t *nz_cols;
        const uint64_t *nz_counts;
        size_t n_nz;
        uint64_t total;
        /* the texts point into the reading's own block: a row is a few
         * dozen bytes of text, not the widest one's room */
        const char *name;        /* action name(s); a named row's description */
};

struct procfs_interrupts {
        int *cpus;               /* CPU numbers of the header columns, strictly ascending */
        size_t n_cpus;
        struct procfs_irq *irqs; /* rows in file order */
        size_t n_irqs;
        /* private: the rows' counts, numeric rows by IRQ number, texts */
        uint32_t *nz_cols;
        uint64_t *nz_vals;
        size_t *by_irq;
        size_t n_numeric;
        char *text;
};

int procfs_interrupts_parse(const char *buf, size_t len, struct procfs_interrupts *ret);
/* Reads proc/interrupts a chunk at a time, as procfs_interrupts_parse(). */
int procfs_interrupts_read(int rootfd, struct procfs_interrupts *ret);
void procfs_interrupts_free(struct procfs_interrupts *s);
/* The row of numeric IRQ irq, or NULL. */
const struct procfs_irq *procfs_interrupts_find(const struct procfs_interrupts *s, unsigned irq);
/* Column index of cpu in the header, or -1. */
int procfs_interrupts_column(const struct procfs_interrupts *s, int cpu);
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
/* Parses a stat line (comm may hold ')': fields count from the last one).
 * Pure.  0 or -EBADMSG. */
int procfs_parse_pid_stat(const char *buf, size_t len, struct procfs_pid_stat *ret);
