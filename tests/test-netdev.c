/* netdev genetlink reply parsers over hand-built messages: the replies as
 * Linux 6.18 sends them (virtio_net, veth with threaded NAPI), attributes
 * missing, cut, mis-sized or out of range, and attributes we do not know,
 * which are ignored.  The lookups over a dump's records, a dump applied to
 * a hand-built inventory, and the kthread CPU from proc/PID/stat. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>

#include "inventory.h"
#include "netdev-uapi.h"
#include "netdev.h"
#include "procfs.h"
#include "sample.h"
#include "testlib.h"
#include "util.h"

/* One attribute: len is its payload size (4 and 8 carry value; any other
 * size is filled with 0x11 bytes).  A zero len ends a list. */
struct attr {
        uint16_t type, len;
        uint64_t value;
};

#define U32(t, v) { (t), 4, (v) }
#define U64(t, v) { (t), 8, (v) }

/* Builds nlmsghdr + genlmsghdr(cmd) + attrs, padded as the kernel pads,
 * minus cut bytes from the end, in a buffer of exactly nlmsg_len bytes so
 * that ASan sees a read past the message. */
static struct nlmsghdr *build(uint8_t cmd, const struct attr *attrs, size_t cut) {
        uint8_t buf[1024];
        size_t len = NLMSG_HDRLEN + GENL_HDRLEN;
        struct nlmsghdr *nlh;

        memset(buf, 0, sizeof(buf));
        ((struct genlmsghdr *) (buf + NLMSG_HDRLEN))->cmd = cmd;
        ((struct genlmsghdr *) (buf + NLMSG_HDRLEN))->version = NETDEV_NL_FAMILY_VERSION;
        for (const struct attr *a = attrs; a && a->len; a++) {
                struct nlattr *na = (struct nlattr *) (buf + len);

                assert_true(len + NLA_ALIGN(NLA_HDRLEN + a->len) <= sizeof(buf));
                na->nla_type = a->type;
                na->nla_len = (uint16_t) (NLA_HDRLEN + a->len);
                if (a->len == 4) {
                        uint32_t v = (uint32_t) a->value;

                        memcpy(buf + len + NLA_HDRLEN, &v, 4);
                } else if (a->len == 8) {
                        memcpy(buf + len + NLA_HDRLEN, &a->value, 8);
                } else {
                        memset(buf + len + NLA_HDRLEN, 0x11, a->len);
                }
                len += NLA_ALIGN(NLA_HDRLEN + a->len);
        }
        assert_true(cut <= len);
        len -= cut;
        nlh = malloc(len < sizeof(*nlh) ? sizeof(*nlh) : len);
        assert_non_null(nlh);
        memcpy(nlh, buf, len);
        nlh->nlmsg_len = (uint32_t) len;
        nlh->nlmsg_type = 20;        /* the family id Linux 6.18 gave netdev here */
        return nlh;
}

#define END { 0, 0, 0 }

static void test_queue(_unused_ void **state) {
        static const struct {
                const char *what;
                uint8_t cmd;
                struct attr attrs[8];
                size_t cut;
                int r;
                struct netdev_queue want;
        } cases[] = {
                { "virtio_net rx queue 0 bound to NAPI 257 (6.18)", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 0), U32(NETDEV_NL_A_QUEUE_IFINDEX, 4),
                    U32(NETDEV_NL_A_QUEUE_NAPI_ID, 257), END },
                  0, 0, { .ifindex = 4, .id = 0, .type = NETDEV_QUEUE_RX, .napi_id = 257 } },
                { "tx queue without NAPI", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 3), U32(NETDEV_NL_A_QUEUE_TYPE, 1), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2),
                    END },
                  0, 0, { .ifindex = 2, .id = 3, .type = NETDEV_QUEUE_TX, .napi_id = 0 } },
                { "unknown attributes ignored (dmabuf, io-uring, 300, nested flag)", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(5, 9), U32(NETDEV_NL_A_QUEUE_ID, 1), { 6, 12, 0 }, U32(NETDEV_NL_A_QUEUE_TYPE, 0),
                    { 300, 2, 0 }, U32(NETDEV_NL_A_QUEUE_IFINDEX, 7), { NLA_F_NESTED | 8, 0x10, 0 },
                    U32(NETDEV_NL_A_QUEUE_NAPI_ID, 9) },
                  0, 0, { .ifindex = 7, .id = 1, .type = NETDEV_QUEUE_RX, .napi_id = 9 } },
                { "a u32 sent as 8 bytes", NETDEV_NL_CMD_QUEUE_GET,
                  { U64(NETDEV_NL_A_QUEUE_ID, 5), U32(NETDEV_NL_A_QUEUE_TYPE, 1), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2),
                    END },
                  0, 0, { .ifindex = 2, .id = 5, .type = NETDEV_QUEUE_TX } },
                { "missing id", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_TYPE, 0), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2), END }, 0, -EBADMSG },
                { "missing ifindex", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 0), END }, 0, -EBADMSG },
                { "missing type", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2), END }, 0, -EBADMSG },
                { "no attributes", NETDEV_NL_CMD_QUEUE_GET, { END }, 0, -EBADMSG },
                { "unknown queue type 2", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 2), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2),
                    END },
                  0, -EBADMSG },
                { "ifindex 0", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 0), U32(NETDEV_NL_A_QUEUE_IFINDEX, 0),
                    END },
                  0, -EBADMSG },
                { "ifindex past INT32_MAX", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 0),
                    U32(NETDEV_NL_A_QUEUE_IFINDEX, 0x80000000u), END },
                  0, -EBADMSG },
                { "id of 8 bytes past 32 bits", NETDEV_NL_CMD_QUEUE_GET,
                  { U64(NETDEV_NL_A_QUEUE_ID, 1ull << 32), U32(NETDEV_NL_A_QUEUE_TYPE, 0),
                    U32(NETDEV_NL_A_QUEUE_IFINDEX, 2), END },
                  0, -EBADMSG },
                { "napi id of 2 bytes", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 0), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2),
                    { NETDEV_NL_A_QUEUE_NAPI_ID, 2, 0 }, END },
                  0, -EBADMSG },
                { "last attribute cut in its value", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 0), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2),
                    U32(NETDEV_NL_A_QUEUE_NAPI_ID, 257), END },
                  2, -EBADMSG },
                { "last attribute cut in its header", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 0), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2),
                    U32(NETDEV_NL_A_QUEUE_NAPI_ID, 257), END },
                  6, -EBADMSG },
                { "cut inside the genetlink header", NETDEV_NL_CMD_QUEUE_GET, { END }, 2, -EBADMSG },
                { "a napi-get reply", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_QUEUE_ID, 0), U32(NETDEV_NL_A_QUEUE_TYPE, 0), U32(NETDEV_NL_A_QUEUE_IFINDEX, 2),
                    END },
                  0, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct nlmsghdr *nlh = build(cases[i].cmd, cases[i].attrs, cases[i].cut);
                struct netdev_queue q = { .ifindex = -7 };
                int r = netdev_parse_queue(nlh, &q);

                if (r != cases[i].r)
                        fail_msg("%s: gave %d, want %d", cases[i].what, r, cases[i].r);
                if (r == 0 && memcmp(&q, &cases[i].want, sizeof(q)) != 0)
                        fail_msg("%s: ifindex %d id %u type %d napi %u", cases[i].what, q.ifindex, q.id, q.type,
                                 q.napi_id);
                if (r < 0 && q.ifindex != -7)
                        fail_msg("%s: failed but wrote the record", cases[i].what);
                free(nlh);
        }
}

static void test_napi(_unused_ void **state) {
        static const struct {
                const char *what;
                uint8_t cmd;
                struct attr attrs[9];
                size_t cut;
                int r;
                struct netdev_napi want;
        } cases[] = {
                { "veth with threaded NAPI, as 6.18 sends it", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 261), U32(NETDEV_NL_A_NAPI_IFINDEX, 3),
                    U32(NETDEV_NL_A_NAPI_THREADED, 1), U32(NETDEV_NL_A_NAPI_PID, 29022), U32(5, 0), U32(7, 0),
                    U64(6, 0), END },
                  0, 0, { .id = 261, .ifindex = 3, .irq = -1, .pid = 29022, .threaded = NETDEV_THREADED_ON } },
                { "virtio_net: no irq, no pid, threaded off", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 257), U32(NETDEV_NL_A_NAPI_IFINDEX, 4),
                    U32(NETDEV_NL_A_NAPI_THREADED, 0), END },
                  0, 0, { .id = 257, .ifindex = 4, .irq = -1, .pid = 0, .threaded = NETDEV_THREADED_OFF } },
                { "a NIC's NAPI with its IRQ, before 6.17 (no threaded)", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_IFINDEX, 6), U32(NETDEV_NL_A_NAPI_ID, 8193), U32(NETDEV_NL_A_NAPI_IRQ, 45),
                    END },
                  0, 0, { .id = 8193, .ifindex = 6, .irq = 45, .threaded = NETDEV_THREADED_UNKNOWN } },
                { "IRQ 0 is an IRQ", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_IFINDEX, 6), U32(NETDEV_NL_A_NAPI_ID, 1), U32(NETDEV_NL_A_NAPI_IRQ, 0), END },
                  0, 0, { .id = 1, .ifindex = 6, .irq = 0, .threaded = NETDEV_THREADED_UNKNOWN } },
                { "threaded busy-poll, 8 bytes", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 300), U32(NETDEV_NL_A_NAPI_IFINDEX, 3),
                    U64(NETDEV_NL_A_NAPI_THREADED, 2), U32(NETDEV_NL_A_NAPI_PID, 77), END },
                  0, 0, { .id = 300, .ifindex = 3, .irq = -1, .pid = 77, .threaded = NETDEV_THREADED_BUSY_POLL } },
                { "a threaded mode we do not know", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 300), U32(NETDEV_NL_A_NAPI_IFINDEX, 3),
                    U32(NETDEV_NL_A_NAPI_THREADED, 9), END },
                  0, 0, { .id = 300, .ifindex = 3, .irq = -1, .threaded = NETDEV_THREADED_UNKNOWN } },
                { "unknown attributes ignored", NETDEV_NL_CMD_NAPI_GET,
                  { { 0, 4, 1 }, U32(NETDEV_NL_A_NAPI_ID, 5), { 99, 3, 0 }, U32(NETDEV_NL_A_NAPI_IFINDEX, 2),
                    { 1000, 16, 0 }, END },
                  0, 0, { .id = 5, .ifindex = 2, .irq = -1, .threaded = NETDEV_THREADED_UNKNOWN } },
                { "missing id", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_IFINDEX, 3), U32(NETDEV_NL_A_NAPI_IRQ, 45), END }, 0, -EBADMSG },
                { "missing ifindex", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 257), U32(NETDEV_NL_A_NAPI_IRQ, 45), END }, 0, -EBADMSG },
                { "id 0", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 0), U32(NETDEV_NL_A_NAPI_IFINDEX, 3), END }, 0, -EBADMSG },
                { "irq past INT32_MAX", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 1), U32(NETDEV_NL_A_NAPI_IFINDEX, 3),
                    U32(NETDEV_NL_A_NAPI_IRQ, 0xffffffffu), END },
                  0, -EBADMSG },
                { "pid of 3 bytes", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 1), U32(NETDEV_NL_A_NAPI_IFINDEX, 3), { NETDEV_NL_A_NAPI_PID, 3, 0 },
                    END },
                  0, -EBADMSG },
                { "threaded of 1 byte", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 1), U32(NETDEV_NL_A_NAPI_IFINDEX, 3),
                    { NETDEV_NL_A_NAPI_THREADED, 1, 0 }, END },
                  0, -EBADMSG },
                { "cut in the last value", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 1), U32(NETDEV_NL_A_NAPI_IFINDEX, 3), U32(NETDEV_NL_A_NAPI_PID, 9),
                    END },
                  1, -EBADMSG },
                { "a queue-get reply", NETDEV_NL_CMD_QUEUE_GET,
                  { U32(NETDEV_NL_A_NAPI_ID, 1), U32(NETDEV_NL_A_NAPI_IFINDEX, 3), END }, 0, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct nlmsghdr *nlh = build(cases[i].cmd, cases[i].attrs, cases[i].cut);
                struct netdev_napi n = { .id = 4242 };
                int r = netdev_parse_napi(nlh, &n);

                if (r != cases[i].r)
                        fail_msg("%s: gave %d, want %d", cases[i].what, r, cases[i].r);
                if (r == 0 && memcmp(&n, &cases[i].want, sizeof(n)) != 0)
                        fail_msg("%s: id %u ifindex %d irq %d pid %d threaded %d", cases[i].what, n.id, n.ifindex,
                                 n.irq, n.pid, n.threaded);
                if (r < 0 && n.id != 4242)
                        fail_msg("%s: failed but wrote the record", cases[i].what);
                free(nlh);
        }
}

/* Field by field: the struct has padding memcmp would compare. */
static bool qstats_equal(const struct netdev_qstats *a, const struct netdev_qstats *b) {
        return a->ifindex == b->ifindex && a->type == b->type && a->queue == b->queue &&
               a->rx_packets == b->rx_packets && a->rx_bytes == b->rx_bytes && a->tx_packets == b->tx_packets &&
               a->tx_bytes == b->tx_bytes && a->has_rx_packets == b->has_rx_packets &&
               a->has_rx_bytes == b->has_rx_bytes && a->has_tx_packets == b->has_tx_packets &&
               a->has_tx_bytes == b->has_tx_bytes;
}

static void test_qstats(_unused_ void **state) {
        static const struct {
                const char *what;
                uint8_t cmd;
                struct attr attrs[9];
                size_t cut;
                int r;
                struct netdev_qstats want;
        } cases[] = {
                { "virtio_net rx queue 0, as 6.18 sends it", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 4), U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 0),
                    U32(NETDEV_NL_A_QSTATS_QUEUE_ID, 0), U32(NETDEV_NL_A_QSTATS_RX_PACKETS, 3489),
                    U32(NETDEV_NL_A_QSTATS_RX_BYTES, 97763698), END },
                  0, 0,
                  { .ifindex = 4, .type = NETDEV_QUEUE_RX, .queue = 0, .rx_packets = 3489, .rx_bytes = 97763698,
                    .has_rx_packets = true, .has_rx_bytes = true } },
                { "tx queue with tx-stop and tx-wake (ignored)", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 4), U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 1),
                    U32(NETDEV_NL_A_QSTATS_QUEUE_ID, 2), U32(NETDEV_NL_A_QSTATS_TX_PACKETS, 3034),
                    U32(NETDEV_NL_A_QSTATS_TX_BYTES, 234513), U32(33, 0), U32(34, 0), END },
                  0, 0,
                  { .ifindex = 4, .type = NETDEV_QUEUE_TX, .queue = 2, .tx_packets = 3034, .tx_bytes = 234513,
                    .has_tx_packets = true, .has_tx_bytes = true } },
                { "counters past 32 bits come as 8 bytes", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 9), U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 0),
                    U32(NETDEV_NL_A_QSTATS_QUEUE_ID, 7), U64(NETDEV_NL_A_QSTATS_RX_PACKETS, 5000000000ull),
                    U64(NETDEV_NL_A_QSTATS_RX_BYTES, 0xfffffffffffffff0ull), U32(12, 1), END },
                  0, 0,
                  { .ifindex = 9, .type = NETDEV_QUEUE_RX, .queue = 7, .rx_packets = 5000000000ull,
                    .rx_bytes = 0xfffffffffffffff0ull, .has_rx_packets = true, .has_rx_bytes = true } },
                { "a queue without counters", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 9), U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 1),
                    U32(NETDEV_NL_A_QSTATS_QUEUE_ID, 0), END },
                  0, 0, { .ifindex = 9, .type = NETDEV_QUEUE_TX, .queue = 0 } },
                { "device scope (no queue type or id)", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 4), U32(NETDEV_NL_A_QSTATS_RX_PACKETS, 3489), END }, 0,
                  -EBADMSG },
                { "missing queue id", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 4), U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 0), END }, 0, -EBADMSG },
                { "missing ifindex", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 0), U32(NETDEV_NL_A_QSTATS_QUEUE_ID, 0), END }, 0, -EBADMSG },
                { "counter of 6 bytes", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 4), U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 0),
                    U32(NETDEV_NL_A_QSTATS_QUEUE_ID, 0), { NETDEV_NL_A_QSTATS_RX_BYTES, 6, 0 }, END },
                  0, -EBADMSG },
                { "cut in the last counter", NETDEV_NL_CMD_QSTATS_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 4), U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 0),
                    U32(NETDEV_NL_A_QSTATS_QUEUE_ID, 0), U64(NETDEV_NL_A_QSTATS_RX_BYTES, 1), END },
                  4, -EBADMSG },
                { "a napi-get reply", NETDEV_NL_CMD_NAPI_GET,
                  { U32(NETDEV_NL_A_QSTATS_IFINDEX, 4), U32(NETDEV_NL_A_QSTATS_QUEUE_TYPE, 0),
                    U32(NETDEV_NL_A_QSTATS_QUEUE_ID, 0), END },
                  0, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct nlmsghdr *nlh = build(cases[i].cmd, cases[i].attrs, cases[i].cut);
                struct netdev_qstats s = { .ifindex = -7 };
                int r = netdev_parse_qstats(nlh, &s);

                if (r != cases[i].r)
                        fail_msg("%s: gave %d, want %d", cases[i].what, r, cases[i].r);
                if (r == 0 && !qstats_equal(&s, &cases[i].want))
                        fail_msg("%s: ifindex %d type %d queue %u rx %llu/%llu tx %llu/%llu has %d%d%d%d",
                                 cases[i].what, s.ifindex, s.type, s.queue, (unsigned long long) s.rx_packets,
                                 (unsigned long long) s.rx_bytes, (unsigned long long) s.tx_packets,
                                 (unsigned long long) s.tx_bytes, s.has_rx_packets, s.has_rx_bytes,
                                 s.has_tx_packets, s.has_tx_bytes);
                if (r < 0 && s.ifindex != -7)
                        fail_msg("%s: failed but wrote the record", cases[i].what);
                free(nlh);
        }
}

/* A message shorter than its nlmsghdr says is the caller's bug; one whose
 * nlmsg_len is below the headers is the sender's: refused. */
static void test_short_length(_unused_ void **state) {
        static const struct attr none[] = { END };
        struct nlmsghdr *nlh = build(NETDEV_NL_CMD_NAPI_GET, none, 0);
        struct netdev_napi n;

        nlh->nlmsg_len = NLMSG_HDRLEN;
        assert_int_equal(netdev_parse_napi(nlh, &n), -EBADMSG);
        nlh->nlmsg_len = 0;
        assert_int_equal(netdev_parse_napi(nlh, &n), -EBADMSG);
        free(nlh);
}

static void test_lookups(_unused_ void **state) {
        struct netdev_queue queues[] = {
                { .ifindex = 3, .id = 0, .type = NETDEV_QUEUE_RX, .napi_id = 262 },
                { .ifindex = 3, .id = 0, .type = NETDEV_QUEUE_TX, .napi_id = 0 },
                { .ifindex = 3, .id = 1, .type = NETDEV_QUEUE_RX, .napi_id = 263 },
        };
        struct netdev_napi napis[] = {
                { .id = 263, .ifindex = 3, .irq = -1, .pid = 11 },
                { .id = 262, .ifindex = 3, .irq = 40, .pid = 10 },
        };
        struct netdev_qstats qstats[] = {
                { .ifindex = 3, .type = NETDEV_QUEUE_TX, .queue = 0, .tx_packets = 5, .has_tx_packets = true },
        };
        struct netdev_info info = {
                .queues = queues, .n_queues = ELEMENTSOF(queues),
                .napis = napis, .n_napis = ELEMENTSOF(napis),
                .qstats = qstats, .n_qstats = ELEMENTSOF(qstats),
        };

        assert_ptr_equal(netdev_info_queue(&info, 3, NETDEV_QUEUE_RX, 1), &queues[2]);
        assert_ptr_equal(netdev_info_queue(&info, 3, NETDEV_QUEUE_TX, 0), &queues[1]);
        assert_null(netdev_info_queue(&info, 3, NETDEV_QUEUE_TX, 1));
        assert_null(netdev_info_queue(&info, 4, NETDEV_QUEUE_RX, 0));
        assert_ptr_equal(netdev_info_napi(&info, queues[0].napi_id), &napis[1]);
        assert_ptr_equal(netdev_info_napi(&info, 263), &napis[0]);
        assert_null(netdev_info_napi(&info, queues[1].napi_id));
        assert_null(netdev_info_napi(&info, 264));
        assert_ptr_equal(netdev_info_qstats(&info, 3, NETDEV_QUEUE_TX, 0), &qstats[0]);
        assert_null(netdev_info_qstats(&info, 3, NETDEV_QUEUE_RX, 0));

        assert_string_equal(netdev_threaded_to_string(NETDEV_THREADED_ON), "on");
        assert_string_equal(netdev_threaded_to_string(NETDEV_THREADED_OFF), "off");
        assert_string_equal(netdev_threaded_to_string(NETDEV_THREADED_BUSY_POLL), "busy-poll");
        assert_string_equal(netdev_threaded_to_string(NETDEV_THREADED_UNKNOWN), "unknown");
}

/* ---- the inventory side: inventory_netdev_apply, the stat CPU parser ---- */

/* A NIC of ifindex 6 with 2 queues and IRQs 39 (async), 40, 41 as the
 * names gave them (map), plus IRQ 50 of NIC 1 (ifindex 7, no queues). */
struct fake {
        struct inventory inv;
        struct inventory_nic nics[2];
        struct inventory_queue queues[2];
        struct inventory_irq irqs[4];
};

static void fake_init(struct fake *f, enum inventory_map_source map, int q0, int q1) {
        static const unsigned numbers[] = { 39, 40, 41, 50 };

        memset(f, 0, sizeof(*f));
        for (size_t i = 0; i < ELEMENTSOF(f->irqs); i++)
                f->irqs[i] = (struct inventory_irq) { .irq = numbers[i], .nic = -1, .queue = -1, .role = INVENTORY_IRQ_NONE };
        f->irqs[0].nic = 0;
        f->irqs[0].role = INVENTORY_IRQ_OTHER;
        f->irqs[3].nic = 1;
        f->irqs[3].role = INVENTORY_IRQ_RXTX;
        f->irqs[3].queue = 0;
        for (int i = 0; i < 2; i++) {
                int v = i ? q1 : q0;

                f->queues[i] = (struct inventory_queue) { .index = i, .has_rx = true, .has_tx = true, .rx_irq = v,
                                                    .tx_irq = v, .napi_threaded = NETDEV_THREADED_UNKNOWN,
                                                    .napi_cpu = -1 };
                if (v >= 0)
                        for (size_t k = 0; k < ELEMENTSOF(f->irqs); k++)
                                if (f->irqs[k].irq == (unsigned) v) {
                                        f->irqs[k].nic = 0;
                                        f->irqs[k].queue = i;
                                        f->irqs[k].role = INVENTORY_IRQ_RXTX;
                                }
        }
        snprintf(f->nics[0].name, sizeof(f->nics[0].name), "ens1");
        f->nics[0].ifindex = 6;
        f->nics[0].map = map;
        f->nics[0].queues = f->queues;
        f->nics[0].n_queues = 2;
        snprintf(f->nics[1].name, sizeof(f->nics[1].name), "ens2");
        f->nics[1].ifindex = 7;
        f->nics[1].map = INVENTORY_MAP_SINGLE;
        f->inv = (struct inventory) { .nics = f->nics, .n_nics = 2, .irqs = f->irqs, .n_irqs = 4 };
}

static void fake_free(struct fake *f) {
        for (size_t i = 0; i < f->inv.n_nics; i++)
                free(f->nics[i].napis);
}

/* What a dump holds: per queue index its NAPI (0 none) and per NAPI its IRQ. */
struct dump {
        uint32_t rx_napi[2], tx_napi[2];
        struct {
                uint32_t id;
                int irq, pid;
                enum netdev_threaded threaded;
        } napi[3];
};

static void dump_build(const struct dump *d, struct netdev_info *info, struct netdev_queue *q,
                       struct netdev_napi *n, struct netdev_qstats *s) {
        size_t k = 0;

        for (uint32_t i = 0; i < 2; i++) {
                q[k++] = (struct netdev_queue) { .ifindex = 6, .id = i, .type = NETDEV_QUEUE_RX,
                                                 .napi_id = d->rx_napi[i] };
                q[k++] = (struct netdev_queue) { .ifindex = 6, .id = i, .type = NETDEV_QUEUE_TX,
                                                 .napi_id = d->tx_napi[i] };
        }
        *info = (struct netdev_info) { .queues = q, .n_queues = k, .napis = n, .qstats = s, .n_qstats = 1,
                                       .has_qstats = true };
        for (size_t i = 0; i < ELEMENTSOF(d->napi) && d->napi[i].id; i++)
                n[info->n_napis++] = (struct netdev_napi) { .id = d->napi[i].id, .ifindex = 6,
                                                            .irq = d->napi[i].irq, .pid = d->napi[i].pid,
                                                            .threaded = d->napi[i].threaded };
        s[0] = (struct netdev_qstats) { .ifindex = 6, .type = NETDEV_QUEUE_RX, .queue = 1, .rx_packets = 1234,
                                        .has_rx_packets = true };
}

static void test_inventory_apply(_unused_ void **state) {
        static const struct {
                const char *what;
                enum inventory_map_source map;
                int q0, q1;              /* the names' (or msi order's) IRQ per queue */
                struct dump d;
                enum inventory_map_source want_map;
                int rx[2], tx[2];
                bool netlink[2];
                enum inventory_irq_role roles[4]; /* of IRQs 39, 40, 41, 50 */
                int queues[4];
        } cases[] = {
                { "mlx5-like: NAPIs name the IRQs the names gave", INVENTORY_MAP_NAMES, 40, 41,
                  { { 100, 101 }, { 100, 101 }, { { 100, 40, 0, NETDEV_THREADED_OFF }, { 101, 41, 0, NETDEV_THREADED_OFF } } },
                  INVENTORY_MAP_NETLINK, { 40, 41 }, { 40, 41 }, { true, true },
                  { INVENTORY_IRQ_OTHER, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX }, { -1, 0, 1, 0 } },
                { "NAPIs say the names had the queues swapped", INVENTORY_MAP_NAMES, 40, 41,
                  { { 100, 101 }, { 100, 101 }, { { 100, 41, 0, NETDEV_THREADED_OFF }, { 101, 40, 0, NETDEV_THREADED_OFF } } },
                  INVENTORY_MAP_NETLINK, { 41, 40 }, { 41, 40 }, { true, true },
                  { INVENTORY_IRQ_OTHER, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX }, { -1, 1, 0, 0 } },
                { "virtio_net-like: NAPIs without IRQs change no mapping", INVENTORY_MAP_NAMES, 40, 41,
                  { { 100, 101 }, { 0, 0 }, { { 100, -1, 0, NETDEV_THREADED_OFF }, { 101, -1, 0, NETDEV_THREADED_OFF } } },
                  INVENTORY_MAP_NAMES, { 40, 41 }, { 40, 41 }, { false, false },
                  { INVENTORY_IRQ_OTHER, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX }, { -1, 0, 1, 0 } },
                { "separate tx NAPIs with IRQs of their own", INVENTORY_MAP_NONE, -1, -1,
                  { { 100, 101 }, { 102, 0 }, { { 100, 40, 0, NETDEV_THREADED_OFF }, { 101, 41, 0, NETDEV_THREADED_OFF },
                                                { 102, 39, 0, NETDEV_THREADED_OFF } } },
                  INVENTORY_MAP_NETLINK, { 40, 41 }, { 39, -1 }, { true, true },
                  { INVENTORY_IRQ_TX, INVENTORY_IRQ_RX, INVENTORY_IRQ_RX, INVENTORY_IRQ_RXTX }, { 0, 0, 1, 0 } },
                { "msi order gave q0 the IRQ the NAPIs give q1; q1's old one becomes other", INVENTORY_MAP_MSI_ORDER, 40, 39,
                  { { 0, 101 }, { 0, 101 }, { { 101, 40, 0, NETDEV_THREADED_OFF } } },
                  INVENTORY_MAP_NETLINK, { -1, 40 }, { -1, 40 }, { false, true },
                  { INVENTORY_IRQ_OTHER, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_NONE, INVENTORY_IRQ_RXTX }, { -1, 1, -1, 0 } },
                { "an IRQ /proc/interrupts does not list is ignored", INVENTORY_MAP_NAMES, 40, 41,
                  { { 100, 0 }, { 100, 0 }, { { 100, 99, 0, NETDEV_THREADED_OFF } } },
                  INVENTORY_MAP_NAMES, { 40, 41 }, { 40, 41 }, { false, false },
                  { INVENTORY_IRQ_OTHER, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX }, { -1, 0, 1, 0 } },
                { "another NIC's IRQ is not taken", INVENTORY_MAP_NAMES, 40, 41,
                  { { 100, 0 }, { 100, 0 }, { { 100, 50, 0, NETDEV_THREADED_OFF } } },
                  INVENTORY_MAP_NAMES, { 40, 41 }, { 40, 41 }, { false, false },
                  { INVENTORY_IRQ_OTHER, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX }, { -1, 0, 1, 0 } },
                { "one queue by NAPI, one by name: the NIC map stays", INVENTORY_MAP_NAMES, 40, 41,
                  { { 100, 0 }, { 100, 0 }, { { 100, 40, 0, NETDEV_THREADED_OFF } } },
                  INVENTORY_MAP_NAMES, { 40, 41 }, { 40, 41 }, { true, false },
                  { INVENTORY_IRQ_OTHER, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX, INVENTORY_IRQ_RXTX }, { -1, 0, 1, 0 } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct netdev_queue q[4];
                struct netdev_napi n[3];
                struct netdev_qstats s[1];
                struct netdev_info info;
                struct fake f;

                fake_init(&f, cases[i].map, cases[i].q0, cases[i].q1);
                dump_build(&cases[i].d, &info, q, n, s);
                inventory_netdev_apply(&f.inv, &info);
                if (f.nics[0].map != cases[i].want_map)
                        fail_msg("%s: map %s, want %s", cases[i].what, inventory_map_source_to_string(f.nics[0].map),
                                 inventory_map_source_to_string(cases[i].want_map));
                for (int k = 0; k < 2; k++) {
                        const struct inventory_queue *qu = &f.queues[k];
                        uint32_t want_napi = cases[i].d.rx_napi[k] ? cases[i].d.rx_napi[k] : cases[i].d.tx_napi[k];

                        if (qu->rx_irq != cases[i].rx[k] || qu->tx_irq != cases[i].tx[k] ||
                            qu->irq_netlink != cases[i].netlink[k])
                                fail_msg("%s: queue %d: irqs %d/%d netlink %d, want %d/%d %d", cases[i].what, k,
                                         qu->rx_irq, qu->tx_irq, qu->irq_netlink, cases[i].rx[k], cases[i].tx[k],
                                         cases[i].netlink[k]);
                        if (qu->napi_id != want_napi)
                                fail_msg("%s: queue %d: napi %u, want %u", cases[i].what, k, qu->napi_id, want_napi);
                }
                for (int k = 0; k < 4; k++)
                        if (f.irqs[k].role != cases[i].roles[k] || f.irqs[k].queue != cases[i].queues[k])
                                fail_msg("%s: IRQ %u: role %s queue %d, want %s %d", cases[i].what, f.irqs[k].irq,
                                         inventory_irq_role_to_string(f.irqs[k].role), f.irqs[k].queue,
                                         inventory_irq_role_to_string(cases[i].roles[k]), cases[i].queues[k]);
                /* the other NIC is untouched; every NAPI of ens1 is listed */
                if (f.nics[1].map != INVENTORY_MAP_SINGLE || f.nics[1].n_napis != 0)
                        fail_msg("%s: ens2 changed", cases[i].what);
                if (f.nics[0].n_napis != info.n_napis)
                        fail_msg("%s: %zu NAPIs listed, want %zu", cases[i].what, f.nics[0].n_napis, info.n_napis);
                /* queue 1's rx counters, none for queue 0 */
                if (!f.queues[1].rx_stats.has_rx_packets || f.queues[1].rx_stats.rx_packets != 1234 ||
                    f.queues[0].rx_stats.ifindex != 0 || f.queues[1].tx_stats.ifindex != 0)
                        fail_msg("%s: qstats not where they belong", cases[i].what);
                assert_true(f.inv.has_netdev);
                fake_free(&f);
        }
}

/* A threaded veth's NAPIs: no queue names them, the NIC lists them, and
 * a queue naming one gets its kthread and threaded state. */
static void test_inventory_napis(_unused_ void **state) {
        struct netdev_queue q[1] = { { .ifindex = 6, .id = 1, .type = NETDEV_QUEUE_RX, .napi_id = 262 } };
        struct netdev_napi n[3] = {
                { .id = 263, .ifindex = 6, .irq = -1, .pid = 29023, .threaded = NETDEV_THREADED_ON },
                { .id = 262, .ifindex = 6, .irq = -1, .pid = 29022, .threaded = NETDEV_THREADED_ON },
                { .id = 264, .ifindex = 7, .irq = -1, .pid = 29030, .threaded = NETDEV_THREADED_BUSY_POLL },
        };
        struct netdev_info info = { .queues = q, .n_queues = 1, .napis = n, .n_napis = 3 };
        struct fake f;

        fake_init(&f, INVENTORY_MAP_NONE, -1, -1);
        inventory_netdev_apply(&f.inv, &info);
        assert_int_equal(f.nics[0].n_napis, 2);
        assert_int_equal(f.nics[0].napis[0].id, 263);
        assert_int_equal(f.nics[0].napis[0].pid, 29023);
        assert_int_equal(f.nics[0].napis[0].cpu, -1);
        assert_int_equal(f.nics[0].napis[1].id, 262);
        assert_int_equal(f.nics[1].n_napis, 1);
        assert_int_equal(f.nics[1].napis[0].threaded, NETDEV_THREADED_BUSY_POLL);
        assert_int_equal(f.queues[0].napi_id, 0);
        assert_int_equal(f.queues[0].napi_pid, 0);
        assert_int_equal(f.queues[0].napi_threaded, NETDEV_THREADED_UNKNOWN);
        assert_int_equal(f.queues[1].napi_id, 262);
        assert_int_equal(f.queues[1].napi_pid, 29022);
        assert_int_equal(f.queues[1].napi_threaded, NETDEV_THREADED_ON);
        assert_int_equal(f.nics[0].map, INVENTORY_MAP_NONE);
        assert_false(f.queues[1].irq_netlink);
        fake_free(&f);
}

/* Fields 3 to 38 of a stat line (state to exit_signal). */
#define F38 "S 1 0 0 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 25 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17"

/* Field 39 of a stat line as the inventory takes it: required. */
static int stat_cpu(const char *line, int *ret_cpu) {
        struct procfs_pid_stat st;
        int r = procfs_parse_pid_stat(line, strlen(line), &st);

        if (r < 0 || st.processor < 0)
                return r < 0 ? r : -EBADMSG;
        *ret_cpu = st.processor;
        return 0;
}

static void test_stat_cpu(_unused_ void **state) {
        static const struct {
                const char *what, *line;
                int r, cpu;
        } cases[] = {
                { "a NAPI kthread on CPU 1",
                  "12999 (napi/h6a-285) S 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 25 0 0 18446744073709551615 "
                  "0 0 0 0 0 0 0 2147483647 0 1 0 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n", 0, 1 },
                { "comm with spaces and ')'", "77 (a) b) c) " F38 " 63 0 0 0\n", 0, 63 },
                { "ends at field 39, no newline", "5 (k) " F38 " 3", 0, 3 },
                { "cut before field 39", "5 (k) " F38 "\n", -EBADMSG },
                { "field 39 not a number", "5 (k) " F38 " x 0\n", -EBADMSG },
                { "field 39 negative", "5 (k) " F38 " -1 0\n", -EBADMSG },
                { "no comm", "5 k S 1 0", -EBADMSG },
                { "empty", "", -EBADMSG },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int cpu = -7, r = stat_cpu(cases[i].line, &cpu);

                if (r != cases[i].r || (r == 0 && cpu != cases[i].cpu) || (r < 0 && cpu != -7))
                        fail_msg("%s: gave %d, cpu %d; want %d, cpu %d", cases[i].what, r, cpu, cases[i].r,
                                 cases[i].cpu);
        }
}

/* ---- the dump against the running kernel, and without the family ---- */

int __real_genl_ctrl_resolve(struct nl_sock *sk, const char *name);

static int resolve_fail;          /* NLE_* code genl_ctrl_resolve gives, 0: the real one */
static unsigned resolves;         /* calls, failed ones too */

int __wrap_genl_ctrl_resolve(struct nl_sock *sk, const char *name) {
        resolves++;
        if (resolve_fail)
                return -resolve_fail;
        return __real_genl_ctrl_resolve(sk, name);
}

/* Debian 12's own 6.1 has no netdev family: "not available", the result
 * untouched, and an inventory refresh that leaves every queue as it was. */
static void test_dump_without_family(_unused_ void **state) {
        struct netdev_queue marker = { .ifindex = 99 };
        struct netdev_info info = { .queues = &marker, .n_queues = 1 };

        struct fake f;

        resolve_fail = NLE_OBJ_NOTFOUND;
        assert_int_equal(netdev_dump(&info), -EOPNOTSUPP);
        assert_ptr_equal(info.queues, &marker);
        assert_int_equal(info.n_queues, 1);
        /* NICs this host does not have, so rtnetlink changes nothing either */
        fake_init(&f, INVENTORY_MAP_NAMES, 40, 41);
        (void) inventory_netlink_refresh(&f.inv);
        assert_false(f.inv.has_netdev);
        assert_int_equal(f.nics[0].map, INVENTORY_MAP_NAMES);
        assert_null(f.nics[0].napis);
        for (int k = 0; k < 2; k++) {
                assert_int_equal(f.queues[k].rx_irq, 40 + k);
                assert_int_equal(f.queues[k].tx_irq, 40 + k);
                assert_false(f.queues[k].irq_netlink);
                assert_int_equal(f.queues[k].napi_id, 0);
                assert_int_equal(f.queues[k].napi_threaded, NETDEV_THREADED_UNKNOWN);
                assert_int_equal(f.queues[k].napi_cpu, -1);
                assert_int_equal(f.queues[k].rx_stats.ifindex, 0);
        }
        assert_int_equal(f.irqs[1].role, INVENTORY_IRQ_RXTX);
        assert_int_equal(f.irqs[1].queue, 0);
        /* another failure of the lookup is said as what it is */
        resolve_fail = NLE_NOACCESS;
        assert_int_equal(netdev_dump(&info), -EACCES);
        assert_ptr_equal(info.queues, &marker);
        resolve_fail = 0;
}

/* This kernel: either it has queue-get (6.8+) and lo is in the dump with
 * rx and tx queue 0, or it has not and says so. */
static void test_dump_live(_unused_ void **state) {
        struct netdev_info info;
        int r = netdev_dump(&info);

        if (r == -EOPNOTSUPP) {
                print_message("[  SKIP    ] %s: the kernel has no netdev queue-get (Linux 6.8)\n", __func__);
                skip();
        }
        assert_int_equal(r, 0);
        assert_non_null(netdev_info_queue(&info, 1, NETDEV_QUEUE_RX, 0));
        assert_non_null(netdev_info_queue(&info, 1, NETDEV_QUEUE_TX, 0));
        assert_int_equal(info.n_skipped, 0);
        for (size_t i = 0; i < info.n_queues; i++)
                if (info.queues[i].napi_id)
                        assert_non_null(netdev_info_napi(&info, info.queues[i].napi_id));
        netdev_info_free(&info);
        assert_null(info.queues);
        assert_int_equal(info.n_napis, 0);
}

/* Without the netdev family in the inventory (a --root tree), the
 * sampler opens nothing; with it, a reading resolves the family (a socket
 * of its own each time). */
static void test_qstats_reading(_unused_ void **state) {
        struct inventory no_netdev = { .has_netdev = false };
        struct netdev_info info = {};
        struct sample_snapshot snap = {};
        int r;

        resolves = 0;
        assert_int_equal(sample_snapshot_take_qstats(&no_netdev, 1, &snap), 0);
        assert_false(snap.has_qstats);
        assert_int_equal(resolves, 0);

        r = netdev_dump_qstats(&info);
        if (r == -EOPNOTSUPP) {
                print_message("[  SKIP    ] %s: the kernel has no netdev qstats-get (Linux 6.9)\n", __func__);
                skip();
        }
        assert_int_equal(r, 0);
        assert_true(info.has_qstats);
        netdev_info_free(&info);
        assert_int_equal(resolves, 1);

        /* no family: -EOPNOTSUPP, silently */
        resolve_fail = NLE_OBJ_NOTFOUND;
        assert_int_equal(netdev_dump_qstats(&info), -EOPNOTSUPP);
        resolve_fail = 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_queue),
                cmocka_unit_test(test_napi),
                cmocka_unit_test(test_qstats),
                cmocka_unit_test(test_short_length),
                cmocka_unit_test(test_lookups),
                cmocka_unit_test(test_inventory_apply),
                cmocka_unit_test(test_inventory_napis),
                cmocka_unit_test(test_stat_cpu),
                cmocka_unit_test(test_dump_without_family),
                cmocka_unit_test(test_dump_live),
                cmocka_unit_test(test_qstats_reading),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
