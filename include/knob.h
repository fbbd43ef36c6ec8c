/* Knobs: the kernel objects irqsteerd changes (an IRQ's affinity, a rx
 * queue's RPS mask and flow count, a tx queue's XPS mask,
 * rps_sock_flow_entries, a thread's affinity, the default affinity of new
 * IRQs, a NIC's threaded NAPI switch), in one vocabulary: the
 * key that names one (with its identity), the one spelling of its path,
 * and reading, validating, writing, comparing and formatting its value.
 * Actions, apply, the undo journal, the inventory refresh and the daemon's
 * failure registry all use it; it uses none of them.
 *
 * Values are text in the syntax of the journal (undo.h): a cpulist for an
 * IRQ (smp_affinity_list) and a thread (sched_getaffinity), the kernel's
 * comma-grouped hex mask for RPS, XPS and default_smp_affinity (kept with
 * its original width), decimal for the flow counts and threaded (0..2). */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cpuset.h"

enum knob_kind {
        KNOB_IRQ,                /* proc/irq/N/smp_affinity_list: cpus (one CPU for queue IRQs) */
        KNOB_RPS,                /* rx-N/rps_cpus: cpus */
        KNOB_XPS,                /* tx-N/xps_cpus: cpus */
        KNOB_FLOWCNT,            /* rx-N/rps_flow_cnt: value */
        KNOB_SOCKFLOW,           /* proc/sys/net/core/rps_sock_flow_entries: value */
        KNOB_THREAD,             /* pid/tid: cpus (sched_setaffinity) */
        KNOB_DEFAFF,             /* proc/irq/default_smp_affinity: cpus (the mask new IRQs get) */
        KNOB_THREADED,           /* sys/class/net/NIC/threaded: value (0 off, 1 on) */
        KNOB_KIND_MAX,
        KNOB_KIND_INVALID = -1,
};

/* Room for an IRQ's identity (its handler names, escaped); longer lists
 * are cut (the same IRQ is cut the same way each time). */
#define KNOB_ACTIONS_MAX 128
/* Room for any key knob_key_format() writes; the longest is an IRQ's:
 * "irq 4294967295 " and its identity. */
#define KNOB_KEY_MAX (16 + KNOB_ACTIONS_MAX)

/* Names one object; fields a kind does not use are zero. */
struct knob_key {
        enum knob_kind kind;
        unsigned irq;                 /* KNOB_IRQ */
        char actions[KNOB_ACTIONS_MAX]; /* KNOB_IRQ: its identity, "" when not read */
        char nic[IF_NAMESIZE];        /* KNOB_RPS, KNOB_XPS, KNOB_FLOWCNT, KNOB_THREADED */
        int queue;                    /* KNOB_RPS, KNOB_XPS, KNOB_FLOWCNT */
        pid_t pid, tid;               /* KNOB_THREAD */
        unsigned long long starttime; /* KNOB_THREAD: tells a reused TID */
};

/* The files, relative to the root. */
#define KNOB_IRQ_LIST "smp_affinity_list"
#define KNOB_IRQ_MASK "smp_affinity"
#define KNOB_IRQ_EFFECTIVE_LIST "effective_affinity_list"
#define KNOB_IRQ_EFFECTIVE_MASK "effective_affinity"
#define KNOB_RPS_FILE "rps_cpus"
#define KNOB_FLOWCNT_FILE "rps_flow_cnt"
#define KNOB_XPS_FILE "xps_cpus"
#define KNOB_SOCKFLOW_PATH "proc/sys/net/core/rps_sock_flow_entries"
#define KNOB_DEFAFF_PATH "proc/irq/default_smp_affinity"
#define KNOB_THREADED_FILE "threaded"

const char *knob_kind_to_string(enum knob_kind k);
enum knob_kind knob_kind_from_string(const char *s);
/* Whether s is usable as an interface name inside a sysfs path. */
bool knob_nic_valid(const char *s);
/* Whether the key's fields make a path (nic name, queue, pid/tid). */
bool knob_key_valid(const struct knob_key *k);
/* Formats the key as in the journal ("irq 73 eth0-TxRx-3", "rps eth0 3",
 * "sockflow", "thread 10 12 5678", "defaffinity", "threaded veth0"; an IRQ without its identity read is
 * "irq 73"). */
int knob_key_format(const struct knob_key *k, char *buf, size_t len);
bool knob_key_equal(const struct knob_key *a, const struct knob_key *b);

/* "proc/irq/IRQ/leaf" and "sys/class/net/NIC/queues/rx-N/leaf" (tx with
 * tx) into buf, without snprintf (the inventory refresh builds several a
 * tick); a path cut by size names no file.  Return buf. */
const char *knob_irq_path(char *buf, size_t size, unsigned irq, const char *leaf);
const char *knob_queue_path(char *buf, size_t size, const char *nic, bool tx, size_t index, const char *leaf);
/* "proc/PID/task/TID/leaf". */
int knob_task_path(char *buf, size_t size, pid_t pid, pid_t tid, const char *leaf);

/* Whether s is printable without spaces (an identity or boot id field). */
bool knob_word_valid(const char *s);
/* The identity of IRQ irq under rootfd into buf: the names of the handler
 * directories under proc/irq/IRQ/, sorted and joined with ',', bytes
 * outside '!'..'~' and ',' '\\' written as \xHH, "-" for none.  -ENOENT
 * when the IRQ has no directory. */
int knob_irq_actions(int rootfd, unsigned irq, char *buf, size_t len);

/* Whether value is well-formed for kind (used when loading a journal). */
bool knob_value_valid(enum knob_kind kind, const char *value);
/* Compares two values of kind by meaning ("00000003" == "3"); false if
 * either does not parse. */
bool knob_value_equal(enum knob_kind kind, const char *a, const char *b);
/* The CPU set a value of kind stands for (an IRQ's or thread's list, an
 * RPS/XPS or default affinity mask): 0, or -EINVAL for a kind that holds no CPU set or a
 * value that does not parse. */
int knob_value_cpus(enum knob_kind kind, const char *value, cpuset_t *ret);
/* The value of kind that holds cpus (IRQ, thread: a list; RPS, XPS,
 * default affinity: a mask as wide as current, the object's value) or value
 * (flow counts, threaded), in journal syntax.  -EINVAL for an empty IRQ,
 * thread or default-affinity set, or a threaded value above 2. */
int knob_target(enum knob_kind kind, const cpuset_t *cpus, uint32_t value, const char *current, char **ret);

/* Reads the object's current value, malloc'd into *ret.  A thread only
 * when root_is_host (else -EOPNOTSUPP), and -ESRCH when its TID's
 * starttime is not the key's (reused).  -EBADMSG for a value that does
 * not parse. */
int knob_read(int rootfd, bool root_is_host, const struct knob_key *k, char **ret);
/* Writes value (journal syntax) to the object: through rootfs for files
 * (an IRQ through smp_affinity when smp_affinity_list is missing),
 * sched_setaffinity for a thread after checking its starttime (-ESRCH
 * when reused).  0 or the -errno the kernel gave. */
int knob_write(int rootfd, bool root_is_host, const struct knob_key *k, const char *value);
/* An IRQ's effective_affinity_list into ret: 0, -ENOENT without the file,
 * -EBADMSG when it does not parse. */
int knob_irq_effective(int rootfd, unsigned irq, cpuset_t *ret);
