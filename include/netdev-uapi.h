/* Numbers of the kernel's "netdev" generic netlink family
 * (Documentation/netlink/specs/netdev.yaml, uapi <linux/netdev.h>) that
 * src/netdev.c uses.  Debian 12's linux-libc-dev (6.1) has no
 * <linux/netdev.h>, and the kernel's one is all enums, which a preprocessor
 * test cannot see; so these are ours, under a prefix of their own
 * (NETDEV_NL_) that cannot clash with the kernel's names should a newer
 * <linux/netdev.h> be included beside this one.  Each carries the kernel
 * name and the release it appeared in. */
#pragma once

#define NETDEV_NL_FAMILY_NAME    "netdev"   /* NETDEV_FAMILY_NAME, Linux 6.3 */
#define NETDEV_NL_FAMILY_VERSION 1          /* NETDEV_FAMILY_VERSION */

/* Commands (enum NETDEV_CMD_*).  The replies carry the request's command. */
#define NETDEV_NL_CMD_QUEUE_GET  10         /* NETDEV_CMD_QUEUE_GET, Linux 6.8 */
#define NETDEV_NL_CMD_NAPI_GET   11         /* NETDEV_CMD_NAPI_GET, Linux 6.8 */
#define NETDEV_NL_CMD_QSTATS_GET 12         /* NETDEV_CMD_QSTATS_GET, Linux 6.9 */

/* enum netdev_queue_type (queue-get's type, qstats' queue-type) */
#define NETDEV_NL_QUEUE_TYPE_RX  0          /* NETDEV_QUEUE_TYPE_RX, Linux 6.8 */
#define NETDEV_NL_QUEUE_TYPE_TX  1          /* NETDEV_QUEUE_TYPE_TX, Linux 6.8 */

/* queue attribute set (queue-get replies), all u32 */
#define NETDEV_NL_A_QUEUE_ID      1         /* NETDEV_A_QUEUE_ID, Linux 6.8 */
#define NETDEV_NL_A_QUEUE_IFINDEX 2         /* NETDEV_A_QUEUE_IFINDEX, Linux 6.8 */
#define NETDEV_NL_A_QUEUE_TYPE    3         /* NETDEV_A_QUEUE_TYPE, Linux 6.8 */
#define NETDEV_NL_A_QUEUE_NAPI_ID 4         /* NETDEV_A_QUEUE_NAPI_ID, Linux 6.8;
                                             * absent when the driver binds no NAPI */

/* napi attribute set (napi-get replies) */
#define NETDEV_NL_A_NAPI_IFINDEX  1         /* NETDEV_A_NAPI_IFINDEX, u32, Linux 6.8 */
#define NETDEV_NL_A_NAPI_ID       2         /* NETDEV_A_NAPI_ID, u32, Linux 6.8 */
#define NETDEV_NL_A_NAPI_IRQ      3         /* NETDEV_A_NAPI_IRQ, u32, Linux 6.8;
                                             * absent when the driver set none */
#define NETDEV_NL_A_NAPI_PID      4         /* NETDEV_A_NAPI_PID, u32, Linux 6.8;
                                             * only while a kthread polls it */
#define NETDEV_NL_A_NAPI_THREADED 8         /* NETDEV_A_NAPI_THREADED, uint, Linux 6.17
                                             * (5..7 are defer-hard-irqs,
                                             * gro-flush-timeout, irq-suspend-timeout) */

/* enum netdev_napi_threaded (the threaded attribute's value) */
#define NETDEV_NL_NAPI_THREADED_DISABLED  0
#define NETDEV_NL_NAPI_THREADED_ENABLED   1
#define NETDEV_NL_NAPI_THREADED_BUSY_POLL 2 /* Linux 6.18 */

/* enum netdev_qstats_scope */
#define NETDEV_NL_QSTATS_SCOPE_QUEUE 1      /* NETDEV_QSTATS_SCOPE_QUEUE, Linux 6.9 */

/* qstats attribute set (qstats-get request and replies); the counters are
 * uint: 4 bytes, or 8 once a value passes 32 bits */
#define NETDEV_NL_A_QSTATS_IFINDEX    1     /* NETDEV_A_QSTATS_IFINDEX, u32, Linux 6.9 */
#define NETDEV_NL_A_QSTATS_QUEUE_TYPE 2     /* NETDEV_A_QSTATS_QUEUE_TYPE, u32, Linux 6.9 */
#define NETDEV_NL_A_QSTATS_QUEUE_ID   3     /* NETDEV_A_QSTATS_QUEUE_ID, u32, Linux 6.9 */
#define NETDEV_NL_A_QSTATS_SCOPE      4     /* NETDEV_A_QSTATS_SCOPE, uint flags, Linux 6.9 */
#define NETDEV_NL_A_QSTATS_RX_PACKETS 8     /* NETDEV_A_QSTATS_RX_PACKETS, Linux 6.9 */
#define NETDEV_NL_A_QSTATS_RX_BYTES   9     /* NETDEV_A_QSTATS_RX_BYTES, Linux 6.9 */
#define NETDEV_NL_A_QSTATS_TX_PACKETS 10    /* NETDEV_A_QSTATS_TX_PACKETS, Linux 6.9 */
#define NETDEV_NL_A_QSTATS_TX_BYTES   11    /* NETDEV_A_QSTATS_TX_BYTES, Linux 6.9 */
