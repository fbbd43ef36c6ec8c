/* The kernel's netdev genetlink family: queues, their NAPIs, each NAPI's
 * IRQ and kthread, per-queue counters; the kernel's own queue -> IRQ map
 * (queue-get/napi-get 6.8, qstats-get 6.9, NAPI threaded 6.17). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nl_sock;
struct nlmsghdr;

enum netdev_queue_type {
        NETDEV_QUEUE_RX,
        NETDEV_QUEUE_TX,
        NETDEV_QUEUE_TYPE_MAX,
        NETDEV_QUEUE_TYPE_INVALID = -1,
};

enum netdev_threaded {
        NETDEV_THREADED_UNKNOWN = -1,   /* not reported (kernels before 6.17) */
        NETDEV_THREADED_OFF,
        NETDEV_THREADED_ON,
        NETDEV_THREADED_BUSY_POLL,      /* kthread busy-polls (6.18) */
        NETDEV_THREADED_MAX,
};

/* One queue-get reply. */
struct netdev_queue {
        int ifindex;
        uint32_t id;                    /* queue index within its type */
        enum netdev_queue_type type;
        uint32_t napi_id;               /* 0: the driver bound no NAPI */
};

/* One napi-get reply. */
struct netdev_napi {
        uint32_t id;
        int ifindex;
        int irq;                        /* -1: the driver registered none */
        int pid;                        /* polling kthread, 0: none */
        enum netdev_threaded threaded;
};

/* One queue-scope qstats-get reply; has_ says which counters came. */
struct netdev_qstats {
        int ifindex;
        enum netdev_queue_type type;
        uint32_t queue;
        uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
        bool has_rx_packets, has_rx_bytes, has_tx_packets, has_tx_bytes;
};

/* Everything one netdev_dump() saw, in the kernel's order. */
struct netdev_info {
        struct netdev_queue *queues;
        size_t n_queues;
        struct netdev_napi *napis;
        size_t n_napis;
        struct netdev_qstats *qstats;
        size_t n_qstats;
        bool has_qstats;                /* the kernel has qstats-get (6.9+) */
        size_t n_skipped;               /* replies that did not parse */
};

const char *netdev_threaded_to_string(enum netdev_threaded t);

/* Parse one reply (nlmsg_len bytes): -EINVAL for another command,
 * -EBADMSG when cut, malformed or missing a key attribute.  Pure. */
int netdev_parse_queue(const struct nlmsghdr *nlh, struct netdev_queue *ret);
int netdev_parse_napi(const struct nlmsghdr *nlh, struct netdev_napi *ret);
int netdev_parse_qstats(const struct nlmsghdr *nlh, struct netdev_qstats *ret);

/* Dumps queues, NAPIs and qstats of every device on a socket of its own.
 * -EOPNOTSUPP (silently) without queue-get; other failures -errno. */
int netdev_dump(struct netdev_info *ret);
/* Only the qstats, as netdev_dump.  -EOPNOTSUPP (silently) without qstats-get. */
int netdev_dump_qstats(struct netdev_info *ret);
/* A connected genetlink socket in *ret and family name's id, or -errno
 * (-ENOENT: no such family) and no socket. */
int netdev_genl_open(const char *name, struct nl_sock **ret);
void netdev_info_free(struct netdev_info *info);

/* Lookups; NULL when absent. */
const struct netdev_napi *netdev_info_napi(const struct netdev_info *info, uint32_t id);
const struct netdev_queue *netdev_info_queue(const struct netdev_info *info, int ifindex,
                                             enum netdev_queue_type type, uint32_t id);
const struct netdev_qstats *netdev_info_qstats(const struct netdev_info *info, int ifindex,
                                               enum netdev_queue_type type, uint32_t id);
