/* The netdev genetlink family's dumps into plain records (libnl-genl-3). */
#include <errno.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "log.h"
#include "netdev-uapi.h"
#include "netdev.h"
#include "nlerr.h"
#include "util.h"

const char *netdev_threaded_to_string(enum netdev_threaded t) {
        switch (t) {
        case NETDEV_THREADED_OFF: return "off";
        case NETDEV_THREADED_ON: return "on";
        case NETDEV_THREADED_BUSY_POLL: return "busy-poll";
        default: return "unknown";
        }
}

/* "uint" attributes come as 4 or 8 bytes: either is taken for any integer,
 * so a later widening still reads.  An absent attribute leaves *ret. */
static int attr_uint(const struct nlattr *a, uint64_t *ret) {
        uint32_t v;

        if (!a)
                return 0;
        if (nla_len(a) == 8) {
                memcpy(ret, nla_data(a), 8);
                return 0;
        }
        if (nla_len(a) != 4)
                return -EBADMSG;
        memcpy(&v, nla_data(a), 4);
        *ret = v;
        return 0;
}

/* attr_uint for a value up to max: u32 ids, an int ifindex, IRQ or PID. */
static int attr_max(const struct nlattr *a, uint64_t max, uint64_t *ret) {
        if (a && (attr_uint(a, ret) < 0 || *ret > max))
                return -EBADMSG;
        return 0;
}

static int attr_u32(const struct nlattr *a, uint32_t *ret) {
        uint64_t v = *ret;
        int r = attr_max(a, UINT32_MAX, &v);

        *ret = (uint32_t) v;
        return r;
}

static int attr_int(const struct nlattr *a, int *ret) {
        uint64_t v = (uint64_t) (int64_t) *ret;
        int r = attr_max(a, INT32_MAX, &v);

        *ret = (int) v;
        return r;
}

static int attr_queue_type(const struct nlattr *a, enum netdev_queue_type *ret) {
        uint32_t v = UINT32_MAX;

        if (attr_u32(a, &v) < 0)
                return -EBADMSG;
        switch (v) {
        case NETDEV_NL_QUEUE_TYPE_RX: *ret = NETDEV_QUEUE_RX; return 0;
        case NETDEV_NL_QUEUE_TYPE_TX: *ret = NETDEV_QUEUE_TX; return 0;
        default: return -EBADMSG; /* a type added later: not a queue we could place */
        }
}

/* Above the highest attribute read here. */
#define ATTR_MAX 15

/* Checks the headers and the command, then parses the attributes into tb;
 * a cut attribute (libnl's parse stops quietly) is malformed. */
static int parse(const struct nlmsghdr *nlh, uint8_t cmd, struct nlattr *tb[ATTR_MAX + 1]) {
        struct nlmsghdr *h = (struct nlmsghdr *) nlh;
        const struct genlmsghdr *g;
        struct nlattr *a;
        int rem;

        if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
                return -EBADMSG;
        g = nlmsg_data(h);
        if (g->cmd != cmd)
                return -EINVAL;
        if (genlmsg_parse(h, 0, tb, ATTR_MAX, NULL) < 0)
                return -EBADMSG;
        nla_for_each_attr(a, genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0), rem)
                ;
        return rem > 0 ? -EBADMSG : 0;
}

int netdev_parse_queue(const struct nlmsghdr *nlh, struct netdev_queue *ret) {
        struct netdev_queue q = {};
        struct nlattr *tb[ATTR_MAX + 1];
        int r = parse(nlh, NETDEV_NL_CMD_QUEUE_GET, tb);

        if (r < 0)
                return r;
        if (!tb[NETDEV_NL_A_QUEUE_ID] || !tb[NETDEV_NL_A_QUEUE_IFINDEX] || !tb[NETDEV_NL_A_QUEUE_TYPE] ||
            attr_u32(tb[NETDEV_NL_A_QUEUE_ID], &q.id) < 0 ||
            attr_int(tb[NETDEV_NL_A_QUEUE_IFINDEX], &q.ifindex) < 0 ||
            attr_queue_type(tb[NETDEV_NL_A_QUEUE_TYPE], &q.type) < 0 ||
            attr_u32(tb[NETDEV_NL_A_QUEUE_NAPI_ID], &q.napi_id) < 0 || q.ifindex <= 0)
                return -EBADMSG;
        *ret = q;
        return 0;
}

int netdev_parse_napi(const struct nlmsghdr *nlh, struct netdev_napi *ret) {
        struct netdev_napi n = { .irq = -1, .threaded = NETDEV_THREADED_UNKNOWN };
        struct nlattr *tb[ATTR_MAX + 1];
        uint64_t threaded = UINT64_MAX;
        int r = parse(nlh, NETDEV_NL_CMD_NAPI_GET, tb);

        if (r < 0)
                return r;
        if (!tb[NETDEV_NL_A_NAPI_ID] || !tb[NETDEV_NL_A_NAPI_IFINDEX] ||
            attr_u32(tb[NETDEV_NL_A_NAPI_ID], &n.id) < 0 ||
            attr_int(tb[NETDEV_NL_A_NAPI_IFINDEX], &n.ifindex) < 0 ||
            attr_int(tb[NETDEV_NL_A_NAPI_IRQ], &n.irq) < 0 ||
            attr_int(tb[NETDEV_NL_A_NAPI_PID], &n.pid) < 0 ||
            attr_uint(tb[NETDEV_NL_A_NAPI_THREADED], &threaded) < 0 || n.id == 0 || n.ifindex <= 0)
                return -EBADMSG;
        /* a mode added after busy-poll: unknown */
        n.threaded = threaded == NETDEV_NL_NAPI_THREADED_DISABLED ? NETDEV_THREADED_OFF :
                     threaded == NETDEV_NL_NAPI_THREADED_ENABLED ? NETDEV_THREADED_ON :
                     threaded == NETDEV_NL_NAPI_THREADED_BUSY_POLL ? NETDEV_THREADED_BUSY_POLL :
                     NETDEV_THREADED_UNKNOWN;
        *ret = n;
        return 0;
}

int netdev_parse_qstats(const struct nlmsghdr *nlh, struct netdev_qstats *ret) {
        struct netdev_qstats s = {};
        struct nlattr *tb[ATTR_MAX + 1];
        int r = parse(nlh, NETDEV_NL_CMD_QSTATS_GET, tb);

        if (r < 0)
                return r;
        /* device scope (no queue attributes) was not asked for */
        if (!tb[NETDEV_NL_A_QSTATS_IFINDEX] || !tb[NETDEV_NL_A_QSTATS_QUEUE_TYPE] ||
            !tb[NETDEV_NL_A_QSTATS_QUEUE_ID] ||
            attr_int(tb[NETDEV_NL_A_QSTATS_IFINDEX], &s.ifindex) < 0 ||
            attr_queue_type(tb[NETDEV_NL_A_QSTATS_QUEUE_TYPE], &s.type) < 0 ||
            attr_u32(tb[NETDEV_NL_A_QSTATS_QUEUE_ID], &s.queue) < 0 ||
            attr_uint(tb[NETDEV_NL_A_QSTATS_RX_PACKETS], &s.rx_packets) < 0 ||
            attr_uint(tb[NETDEV_NL_A_QSTATS_RX_BYTES], &s.rx_bytes) < 0 ||
            attr_uint(tb[NETDEV_NL_A_QSTATS_TX_PACKETS], &s.tx_packets) < 0 ||
            attr_uint(tb[NETDEV_NL_A_QSTATS_TX_BYTES], &s.tx_bytes) < 0 || s.ifindex <= 0)
                return -EBADMSG;
        s.has_rx_packets = tb[NETDEV_NL_A_QSTATS_RX_PACKETS];
        s.has_rx_bytes = tb[NETDEV_NL_A_QSTATS_RX_BYTES];
        s.has_tx_packets = tb[NETDEV_NL_A_QSTATS_TX_PACKETS];
        s.has_tx_bytes = tb[NETDEV_NL_A_QSTATS_TX_BYTES];
        *ret = s;
        return 0;
}

const struct netdev_napi *netdev_info_napi(const struct netdev_info *info, uint32_t id) {
        if (id == 0)
                return NULL;
        for (size_t i = 0; i < info->n_napis; i++)
                if (info->napis[i].id == id)
                        return &info->napis[i];
        return NULL;
}

const struct netdev_queue *netdev_info_queue(const struct netdev_info *info, int ifindex,
                                             enum netdev_queue_type type, uint32_t id) {
        for (size_t i = 0; i < info->n_queues; i++) {
                const struct netdev_queue *q = &info->queues[i];

                if (q->ifindex == ifindex && q->type == type && q->id == id)
                        return q;
        }
        return NULL;
}

const struct netdev_qstats *netdev_info_qstats(const struct netdev_info *info, int ifindex,
                                               enum netdev_queue_type type, uint32_t id) {
        for (size_t i = 0; i < info->n_qstats; i++) {
                const struct netdev_qstats *s = &info->qstats[i];

                if (s->ifindex == ifindex && s->type == type && s->queue == id)
                        return s;
        }
        return NULL;
}

void netdev_info_free(struct netdev_info *info) {
        if (!info)
                return;
        free(info->queues);
        free(info->napis);
        free(info->qstats);
        memset(info, 0, sizeof(*info));
}

struct dump_ctx {
        struct netdev_info *info;
        uint8_t cmd;
        void *items;                    /* the table cmd fills: &info->queues... */
        size_t *n, size, allocated;
        int r;                          /* -ENOMEM from a callback */
};

static int on_reply(struct nl_msg *msg, void *arg) {
        struct dump_ctx *c = arg;
        const struct nlmsghdr *nlh = nlmsg_hdr(msg);
        union {
                struct netdev_queue q;
                struct netdev_napi n;
                struct netdev_qstats s;
        } u;
        int r;

        r = c->cmd == NETDEV_NL_CMD_QUEUE_GET ? netdev_parse_queue(nlh, &u.q) :
            c->cmd == NETDEV_NL_CMD_NAPI_GET ? netdev_parse_napi(nlh, &u.n) :
            netdev_parse_qstats(nlh, &u.s);
        if (r >= 0)
                r = util_grow((void **) c->items, &c->allocated, *c->n + 1, c->size);
        if (r >= 0)
                memcpy(*(char **) c->items + (*c->n)++ * c->size, &u, c->size);
        if (r == -ENOMEM) {
                c->r = r;
                return NL_STOP;
        }
        if (r < 0) {
                c->info->n_skipped++;
                log_debug_errno(r, "netdev: genetlink command %u reply skipped: %m", c->cmd);
                return NL_SKIP;
        }
        return NL_OK;
}

static int dump_one(struct nl_sock *sk, int family, uint8_t cmd, struct netdev_info *info) {
        bool queue = cmd == NETDEV_NL_CMD_QUEUE_GET, napi = cmd == NETDEV_NL_CMD_NAPI_GET;
        struct dump_ctx c = {
                .info = info, .cmd = cmd,
                .items = queue ? (void *) &info->queues :
                         napi ? (void *) &info->napis : (void *) &info->qstats,
                .n = queue ? &info->n_queues : napi ? &info->n_napis : &info->n_qstats,
                .size = queue ? sizeof(*info->queues) :
                        napi ? sizeof(*info->napis) : sizeof(*info->qstats),
        };
        int r = 0;

        /* a table that changed under the dump (NLM_F_DUMP_INTR) is read again */
        for (int attempt = 0; attempt < 3; attempt++) {
                struct nl_msg *msg = nlmsg_alloc();

                if (!msg)
                        return -ENOMEM;
                if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP, cmd,
                                 NETDEV_NL_FAMILY_VERSION) ||
                    (cmd == NETDEV_NL_CMD_QSTATS_GET &&
                     nla_put_u32(msg, NETDEV_NL_A_QSTATS_SCOPE, NETDEV_NL_QSTATS_SCOPE_QUEUE) < 0)) {
                        nlmsg_free(msg);
                        return -ENOMEM;
                }
                *c.n = 0; /* what an interrupted attempt left */
                /* set for each request: the socket outlives c */
                r = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_reply, &c);
                if (r >= 0)
                        r = nl_send_auto(sk, msg);
                nlmsg_free(msg);
                if (r < 0)
                        return nlerr_to_errno(r);
                r = nl_recvmsgs_default(sk);
                if (c.r < 0)
                        return c.r;
                if (r != -NLE_DUMP_INTR)
                        break;
        }
        return r < 0 ? nlerr_to_errno(r) : 0;
}

int netdev_genl_open(const char *name, struct nl_sock **ret) {
        struct nl_sock *sk = nl_socket_alloc();
        int r;

        if (!sk)
                return -ENOMEM;
        r = genl_connect(sk);
        if (r >= 0)
                r = genl_ctrl_resolve(sk, name);
        if (r < 0) {
                nl_socket_free(sk);
                return nlerr_to_errno(r);
        }
        *ret = sk;
        return r;
}

/* The whole dump or, without tables, only qstats, on a socket of its own;
 * *ret untouched on failure. */
static int dump(bool tables, struct netdev_info *ret) {
        struct netdev_info info = {};
        struct nl_sock *sk = NULL;
        int family, r = 0;

        /* before Linux 6.3 there is no such family: not an error to report */
        family = netdev_genl_open(NETDEV_NL_FAMILY_NAME, &sk);
        if (family < 0)
                return family == -ENOENT ? -EOPNOTSUPP : family;
        nl_socket_enable_msg_peek(sk); /* dump replies come as large as the buffer */
        /* 6.3 to 6.7 have the family without queue-get: EOPNOTSUPP. */
        if (tables) {
                r = dump_one(sk, family, NETDEV_NL_CMD_QUEUE_GET, &info);
                if (r >= 0)
                        r = dump_one(sk, family, NETDEV_NL_CMD_NAPI_GET, &info);
        }
        if (r >= 0) {
                r = dump_one(sk, family, NETDEV_NL_CMD_QSTATS_GET, &info);
                info.has_qstats = r >= 0;
                /* 6.8: queues and NAPIs without qstats-get */
                if (r == -EOPNOTSUPP && tables)
                        r = 0;
        }
        nl_socket_free(sk);
        if (r < 0) {
                netdev_info_free(&info);
                return r;
        }
        *ret = info;
        return 0;
}

int netdev_dump_qstats(struct netdev_info *ret) {
        return dump(false, ret);
}

int netdev_dump(struct netdev_info *ret) {
        return dump(true, ret);
}
