/* netdev genetlink replies (netdev_parse_queue, netdev_parse_napi,
 * netdev_parse_qstats).  The input is one byte choosing the parser (queue,
 * napi, qstats by its value mod 3) and the payload: genlmsghdr and the
 * attributes, as the kernel sends them.  The harness adds the nlmsghdr with
 * the length of what is there, as libnl does for each message of a datagram
 * it received.  A record that parses is encoded again and must parse back
 * to the same record. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "fuzz.h"
#include "netdev-uapi.h"
#include "netdev.h"

FUZZ_QUIET_LOG()

static const uint8_t cmds[3] = { NETDEV_NL_CMD_QUEUE_GET, NETDEV_NL_CMD_NAPI_GET, NETDEV_NL_CMD_QSTATS_GET };

static struct nlmsghdr *wrap(const uint8_t *payload, size_t len) {
        /* exact size, so ASan sees a read past the message */
        struct nlmsghdr *nlh = malloc(NLMSG_HDRLEN + len);

        if (!nlh)
                abort();
        *nlh = (struct nlmsghdr) { .nlmsg_len = (uint32_t) (NLMSG_HDRLEN + len), .nlmsg_type = 20 };
        memcpy((char *) nlh + NLMSG_HDRLEN, payload, len);
        return nlh;
}

/* An encoder of our own, for the round trip. */
struct enc {
        uint8_t buf[256];
        size_t len;
};

static void enc_start(struct enc *e, uint8_t cmd) {
        memset(e, 0, sizeof(*e));
        ((struct genlmsghdr *) e->buf)->cmd = cmd;
        e->len = GENL_HDRLEN;
}

static void enc_u32(struct enc *e, uint16_t type, uint32_t v) {
        struct nlattr a = { .nla_len = NLA_HDRLEN + 4, .nla_type = type };

        memcpy(e->buf + e->len, &a, sizeof(a));
        memcpy(e->buf + e->len + NLA_HDRLEN, &v, 4);
        e->len += NLA_HDRLEN + 4;
}

static void enc_u64(struct enc *e, uint16_t type, uint64_t v) {
        struct nlattr a = { .nla_len = NLA_HDRLEN + 8, .nla_type = type };

        memcpy(e->buf + e->len, &a, sizeof(a));
        memcpy(e->buf + e->len + NLA_HDRLEN, &v, 8);
        e->len += NLA_HDRLEN + 8;
}

static void check_queue(const struct nlmsghdr *nlh) {
        struct netdev_queue q, q2;
        struct nlmsghdr *again;
        struct enc e;
        int r = netdev_parse_queue(nlh, &q);

        if (r < 0)
                return;
        FUZZ_CHECK(q.ifindex > 0);
        FUZZ_CHECK(q.type == NETDEV_QUEUE_RX || q.type == NETDEV_QUEUE_TX);
        enc_start(&e, NETDEV_NL_CMD_QUEUE_GET);
        enc_u32(&e, NETDEV_NL_A_QUEUE_ID, q.id);
        enc_u32(&e, NETDEV_NL_A_QUEUE_IFINDEX, (uint32_t) q.ifindex);
        enc_u32(&e, NETDEV_NL_A_QUEUE_TYPE, q.type == NETDEV_QUEUE_RX ? NETDEV_NL_QUEUE_TYPE_RX : NETDEV_NL_QUEUE_TYPE_TX);
        if (q.napi_id)
                enc_u32(&e, NETDEV_NL_A_QUEUE_NAPI_ID, q.napi_id);
        again = wrap(e.buf, e.len);
        FUZZ_CHECK(netdev_parse_queue(again, &q2) == 0);
        FUZZ_CHECK(q2.ifindex == q.ifindex && q2.id == q.id && q2.type == q.type && q2.napi_id == q.napi_id);
        free(again);
}

static void check_napi(const struct nlmsghdr *nlh) {
        struct netdev_napi n, n2;
        struct nlmsghdr *again;
        struct enc e;
        int r = netdev_parse_napi(nlh, &n);

        if (r < 0)
                return;
        FUZZ_CHECK(n.id != 0 && n.ifindex > 0 && n.irq >= -1 && n.pid >= 0);
        FUZZ_CHECK(n.threaded >= NETDEV_THREADED_UNKNOWN && n.threaded < NETDEV_THREADED_MAX);
        enc_start(&e, NETDEV_NL_CMD_NAPI_GET);
        enc_u32(&e, NETDEV_NL_A_NAPI_ID, n.id);
        enc_u32(&e, NETDEV_NL_A_NAPI_IFINDEX, (uint32_t) n.ifindex);
        if (n.irq >= 0)
                enc_u32(&e, NETDEV_NL_A_NAPI_IRQ, (uint32_t) n.irq);
        if (n.pid > 0)
                enc_u32(&e, NETDEV_NL_A_NAPI_PID, (uint32_t) n.pid);
        if (n.threaded != NETDEV_THREADED_UNKNOWN)
                enc_u64(&e, NETDEV_NL_A_NAPI_THREADED, (uint64_t) n.threaded);
        again = wrap(e.buf, e.len);
        FUZZ_CHECK(netdev_parse_napi(again, &n2) == 0);
        FUZZ_CHECK(n2.id == n.id && n2.ifindex == n.ifindex && n2.irq == n.irq && n2.pid == n.pid &&
                   n2.threaded == n.threaded);
        free(again);
}

static void check_qstats(const struct nlmsghdr *nlh) {
        struct netdev_qstats s, s2;
        struct nlmsghdr *again;
        struct enc e;
        int r = netdev_parse_qstats(nlh, &s);

        if (r < 0)
                return;
        FUZZ_CHECK(s.ifindex > 0);
        FUZZ_CHECK(s.type == NETDEV_QUEUE_RX || s.type == NETDEV_QUEUE_TX);
        FUZZ_CHECK(s.has_rx_packets || s.rx_packets == 0);
        FUZZ_CHECK(s.has_tx_bytes || s.tx_bytes == 0);
        enc_start(&e, NETDEV_NL_CMD_QSTATS_GET);
        enc_u32(&e, NETDEV_NL_A_QSTATS_IFINDEX, (uint32_t) s.ifindex);
        enc_u32(&e, NETDEV_NL_A_QSTATS_QUEUE_TYPE,
                s.type == NETDEV_QUEUE_RX ? NETDEV_NL_QUEUE_TYPE_RX : NETDEV_NL_QUEUE_TYPE_TX);
        enc_u32(&e, NETDEV_NL_A_QSTATS_QUEUE_ID, s.queue);
        if (s.has_rx_packets)
                enc_u64(&e, NETDEV_NL_A_QSTATS_RX_PACKETS, s.rx_packets);
        if (s.has_rx_bytes)
                enc_u64(&e, NETDEV_NL_A_QSTATS_RX_BYTES, s.rx_bytes);
        if (s.has_tx_packets)
                enc_u64(&e, NETDEV_NL_A_QSTATS_TX_PACKETS, s.tx_packets);
        if (s.has_tx_bytes)
                enc_u64(&e, NETDEV_NL_A_QSTATS_TX_BYTES, s.tx_bytes);
        again = wrap(e.buf, e.len);
        FUZZ_CHECK(netdev_parse_qstats(again, &s2) == 0);
        FUZZ_CHECK(s2.ifindex == s.ifindex && s2.type == s.type && s2.queue == s.queue &&
                   s2.rx_packets == s.rx_packets && s2.rx_bytes == s.rx_bytes && s2.tx_packets == s.tx_packets &&
                   s2.tx_bytes == s.tx_bytes && s2.has_rx_packets == s.has_rx_packets &&
                   s2.has_rx_bytes == s.has_rx_bytes && s2.has_tx_packets == s.has_tx_packets &&
                   s2.has_tx_bytes == s.has_tx_bytes);
        free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct nlmsghdr *nlh;
        size_t payload;
        unsigned which;
        int r[3];

        if (size < 1 || size - 1 > 65536 - NLMSG_HDRLEN)
                return 0;
        which = data[0] % 3;
        payload = size - 1;
        nlh = wrap(data + 1, payload);

        /* Whatever the parser, the outcome is one of three, and only the
         * parser of the message's own command can accept it. */
        {
                struct netdev_queue q;
                struct netdev_napi n;
                struct netdev_qstats s;

                r[0] = netdev_parse_queue(nlh, &q);
                r[1] = netdev_parse_napi(nlh, &n);
                r[2] = netdev_parse_qstats(nlh, &s);
        }
        for (unsigned i = 0; i < 3; i++) {
                FUZZ_CHECK(r[i] == 0 || r[i] == -EBADMSG || r[i] == -EINVAL);
                if (payload < GENL_HDRLEN)
                        FUZZ_CHECK(r[i] == -EBADMSG);
                else
                        FUZZ_CHECK((r[i] == -EINVAL) == (data[1] != cmds[i]));
        }
        if (which == 0)
                check_queue(nlh);
        else if (which == 1)
                check_napi(nlh);
        else
                check_qstats(nlh);
        free(nlh);
        return 0;
}
