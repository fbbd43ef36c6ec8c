/* netdev genetlink reply parsers over hand-built messages: the replies as
 * Linux 6.18 sends them (virtio_net, veth with threaded NAPI), attributes
 * missing, cut, mis-sized or out of range, and attributes we do not know,
 * which are ignored.  Plus the lookups over a dump's records. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "netdev-uapi.h"
#include "netdev.h"
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

        assert_string_equal(netdev_queue_type_to_string(NETDEV_QUEUE_RX), "rx");
        assert_string_equal(netdev_queue_type_to_string(NETDEV_QUEUE_TX), "tx");
        assert_string_equal(netdev_queue_type_to_string(NETDEV_QUEUE_TYPE_INVALID), "invalid");
        assert_string_equal(netdev_threaded_to_string(NETDEV_THREADED_ON), "on");
        assert_string_equal(netdev_threaded_to_string(NETDEV_THREADED_OFF), "off");
        assert_string_equal(netdev_threaded_to_string(NETDEV_THREADED_BUSY_POLL), "busy-poll");
        assert_string_equal(netdev_threaded_to_string(NETDEV_THREADED_UNKNOWN), "unknown");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_queue),
                cmocka_unit_test(test_napi),
                cmocka_unit_test(test_qstats),
                cmocka_unit_test(test_short_length),
                cmocka_unit_test(test_lookups),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
