/* Knobs: the kernel objects irqsteerd changes: key, path, value.  Values are
 * journal text (undo.h): a cpulist for IRQs and threads, the kernel's hex
 * mask for RPS, XPS and the default affinity, decimal for counts. */
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

/* Room for an IRQ's identity (handler names, escaped); longer ones are cut. */
#define KNOB_ACTIONS_MAX 128
/* Room for any key knob_key_format() writes: "irq 4294967295 " and an identity. */
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
/* An action on kind k: "irq-affinity", "rps", "rps-flow-cnt"... */
const char *action_type_to_string(enum knob_kind k);
enum knob_kind knob_kind_from_string(const char *s);
bool knob_nic_valid(const char *s);
/* Whether the key's fields make a path. */
bool knob_key_valid(const struct knob_key *k);
/* The key as in the journal: "irq 73 eth0-TxRx-3", "rps eth0 3", "sockflow"... */
int knob_key_format(const struct knob_key *k, char *buf, size_t len);
bool knob_key_equal(const struct knob_key *a, const struct knob_key *b);

/* "proc/irq/IRQ/leaf", "sys/class/net/NIC/queues/rx-N/leaf" into buf;
 * a cut path names no file. */
const char *knob_irq_path(char *buf, size_t size, unsigned irq, const char *leaf);
const char *knob_queue_path(char *buf, size_t size, const char *nic, bool tx, size_t index, const char *leaf);

/* Whether s is printable without spaces. */
bool knob_word_valid(const char *s);
/* IRQ irq's identity: its proc/irq/IRQ/ handler dirs sorted, ','-joined,
 * escaped as \xHH, "-" for none.  -ENOENT without the IRQ. */
int knob_irq_actions(int rootfd, unsigned irq, char *buf, size_t len);

/* Whether value is well-formed for kind. */
bool knob_value_valid(enum knob_kind kind, const char *value);
/* Compares two values by meaning ("00000003" == "3"); false if either does not parse. */
bool knob_value_equal(enum knob_kind kind, const char *a, const char *b);
/* The CPU set a value stands for: 0, or -EINVAL (no CPU set kind, or a bad value). */
int knob_value_cpus(enum knob_kind kind, const char *value, cpuset_t *ret);
/* The value holding cpus (a mask as wide as current) or value, in journal
 * syntax.  -EINVAL for an empty IRQ, thread or default set, threaded > 2. */
int knob_target(enum knob_kind kind, const cpuset_t *cpus, uint32_t value, const char *current, char **ret);

/* Reads the object's value, malloc'd.  Threads need root_is_host (else
 * -EOPNOTSUPP); -ESRCH for a reused TID, -EBADMSG for a bad value. */
int knob_read(int rootfd, bool root_is_host, const struct knob_key *k, char **ret);
/* Writes value to the object (a thread after checking its starttime).
 * 0 or the kernel's -errno. */
int knob_write(int rootfd, bool root_is_host, const struct knob_key *k, const char *value);
/* An IRQ's effective_affinity_list: 0, -ENOENT, -EBADMSG. */
int knob_irq_effective(int rootfd, unsigned irq, cpuset_t *ret);
