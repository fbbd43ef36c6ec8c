/* The kernel's netdev generic netlink family (libnl-genl-3): the device
 * queues, the NAPI instance each is bound to, that NAPI's IRQ, its polling
 * kthread and threaded state, and per-queue packet and byte counters.
 * Where the kernel answers, this is its own queue -> NAPI -> IRQ map; the
 * IRQ-name heuristics of inventory.c are the fallback.  The family exists
 * since Linux 6.3, queue-get and napi-get since 6.8, qstats-get since 6.9,
 * the per-NAPI threaded attribute since 6.17.  Parsers are pure functions
 * over one reply message (nlmsghdr, genlmsghdr, attributes). */
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

/* One qstats-get reply of scope queue.  A driver reports the counters it
 * keeps; the has_ flags say which came. */
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

const char *netdev_queue_type_to_string(enum netdev_queue_type t);
const char *netdev_threaded_to_string(enum netdev_threaded t);

/* Parse one reply of queue-get / napi-get / qstats-get.  The message must
 * hold nlmsg_len bytes.  -EINVAL when the genetlink command is another
 * one; -EBADMSG when the message is cut, an attribute is cut or has a size
 * its type cannot have, a value is out of range, or an attribute the reply
 * always carries is missing (queue: id, ifindex, type; napi: id, ifindex;
 * qstats: ifindex, queue-type, queue-id).  Attributes unknown to us are
 * ignored.  Pure. */
int netdev_parse_queue(const struct nlmsghdr *nlh, struct netdev_queue *ret);
int netdev_parse_napi(const struct nlmsghdr *nlh, struct netdev_napi *ret);
int netdev_parse_qstats(const struct nlmsghdr *nlh, struct netdev_qstats *ret);

/* A genetlink socket with the netdev family resolved, kept between
 * requests: the daemon reads qstats at every full tick.  Zeroed it is
 * closed; a request opens it when it is, and closes it again when a
 * failure may have left it unusable. */
struct netdev_handle {
        struct nl_sock *sk;             /* NULL: closed */
        int family;
};

/* Dumps queues, NAPIs and queue-scope qstats of every device in the
 * current network namespace into *ret (netdev_info_free it), on a socket
 * of its own.  -EOPNOTSUPP, logging nothing, when the kernel has no netdev
 * family or no queue-get (before 6.8); qstats-get missing (6.8) leaves
 * has_qstats false.  Other failures -errno, *ret untouched. */
int netdev_dump(struct netdev_info *ret);
/* Only the queue-scope qstats of every device, into ret->qstats with
 * has_qstats set (netdev_info_free it): the per-tick reading, on h's
 * socket (opened if closed; a request failing on a kept socket is tried
 * once more on a new one, the family resolved again).  -EOPNOTSUPP,
 * logging nothing, without the family or qstats-get (before 6.9); other
 * failures -errno; *ret untouched on failure. */
int netdev_dump_qstats(struct netdev_handle *h, struct netdev_info *ret);
/* Closes h's socket, if open; h can be used again. */
void netdev_handle_close(struct netdev_handle *h);
void netdev_info_free(struct netdev_info *info);

/* The NAPI with this id, or NULL (id 0 is never one). */
const struct netdev_napi *netdev_info_napi(const struct netdev_info *info, uint32_t id);
/* The queue of ifindex, type and id, or NULL. */
const struct netdev_queue *netdev_info_queue(const struct netdev_info *info, int ifindex,
                                             enum netdev_queue_type type, uint32_t id);
/* Its qstats, or NULL. */
const struct netdev_qstats *netdev_info_qstats(const struct netdev_info *info, int ifindex,
                                               enum netdev_queue_type type, uint32_t id);
