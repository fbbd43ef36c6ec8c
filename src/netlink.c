/* Live refinement of the inventory: rtnetlink links, ethtool channels and
 * the netdev family's queues and NAPIs (netdev.c). */
#include <errno.h>
#include <net/if.h>

#include <linux/ethtool_netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "inventory.h"
#include "log.h"
#include "netdev.h"
#include "nlerr.h"
#include "util.h"

static int refresh_links(struct inventory *inv) {
        struct nl_sock *sk;
        struct nl_cache *cache = NULL;
        int r;

        sk = nl_socket_alloc();
        if (!sk)
                return -ENOMEM;
        r = nl_connect(sk, NETLINK_ROUTE);
        if (r >= 0)
                r = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
        for (size_t i = 0; r >= 0 && i < inv->n_nics; i++) {
                struct inventory_nic *nic = &inv->nics[i];
                struct rtnl_link *link = rtnl_link_get_by_name(cache, nic->name);

                if (!link) /* gone, or another namespace's sysfs */
                        continue;
                /* a virtual NIC's driver: its IFLA_INFO_KIND (veth, bridge) */
                if (!nic->driver[0] && rtnl_link_get_type(link))
                        snprintf(nic->driver, sizeof(nic->driver), "%s", rtnl_link_get_type(link));
                nic->ifindex = rtnl_link_get_ifindex(link);
                nic->up = rtnl_link_get_flags(link) & IFF_UP;
                rtnl_link_put(link);
        }
        if (cache)
                nl_cache_free(cache);
        nl_socket_free(sk);
        return r < 0 ? nlerr_to_errno(r) : 0;
}

/* The kernel leaves out a kind of channel whose maximum is 0: none of it. */
static int channel_count(struct nlattr *a) {
        uint32_t v = a ? nla_get_u32(a) : 0;
        return v > INT32_MAX ? -1 : (int) v;
}

/* One ETHTOOL_MSG_CHANNELS_GET_REPLY of the dump. */
static int channels_reply(struct nl_msg *msg, void *arg) {
        struct inventory *inv = arg;
        struct nlattr *tb[ETHTOOL_A_CHANNELS_MAX + 1], *hdr[ETHTOOL_A_HEADER_MAX + 1];
        struct inventory_nic *nic;

        if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, ETHTOOL_A_CHANNELS_MAX, NULL) < 0 ||
            !tb[ETHTOOL_A_CHANNELS_HEADER])
                return NL_SKIP;
        if (nla_parse_nested(hdr, ETHTOOL_A_HEADER_MAX, tb[ETHTOOL_A_CHANNELS_HEADER], NULL) < 0 ||
            !hdr[ETHTOOL_A_HEADER_DEV_NAME])
                return NL_SKIP;
        nic = inventory_nic(inv, nla_get_string(hdr[ETHTOOL_A_HEADER_DEV_NAME]));
        if (!nic)
                return NL_SKIP;
        nic->combined_channels = channel_count(tb[ETHTOOL_A_CHANNELS_COMBINED_COUNT]);
        return NL_OK;
}

/* One dump for all devices: the kernel skips devices whose driver has no
 * get_channels (EOPNOTSUPP), so those keep -1. */
static int refresh_channels(struct inventory *inv) {
        struct nl_sock *sk;
        int family, r;

        /* missing before Linux 5.6: -ENOENT to the caller */
        family = netdev_genl_open(ETHTOOL_GENL_NAME, &sk);
        if (family < 0)
                return family;
        r = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, channels_reply, inv);
        if (r >= 0)
                r = genl_send_simple(sk, family, ETHTOOL_MSG_CHANNELS_GET, ETHTOOL_GENL_VERSION,
                                     NLM_F_DUMP);
        if (r >= 0)
                r = nl_recvmsgs_default(sk);
        nl_socket_free(sk);
        return r < 0 ? nlerr_to_errno(r) : 0;
}

/* The IRQ the NAPI serving queue (type, id) of ifindex reported, -1 none;
 * *ret_napi that NAPI (NULL when the queue names none). */
static int napi_irq(const struct netdev_info *info, int ifindex, enum netdev_queue_type type, int id,
                    const struct netdev_napi **ret_napi) {
        const struct netdev_queue *q = netdev_info_queue(info, ifindex, type, (uint32_t) id);
        const struct netdev_napi *n = q ? netdev_info_napi(info, q->napi_id) : NULL;

        *ret_napi = n;
        /* a NAPI of another device would be a kernel bug: not trusted */
        return n && n->ifindex == ifindex ? n->irq : -1;
}

struct qmap {
        int prev_rx, prev_tx;   /* the queue's IRQs before (names, msi order) */
        int nl_rx, nl_tx;       /* the IRQs its NAPIs reported, -1 none */
};

/* irq is what the NAPIs of a queue other than self reported. */
static bool claimed(const struct qmap *m, size_t n, size_t self, int irq) {
        for (size_t i = 0; i < n; i++)
                if (i != self && (m[i].nl_rx == irq || m[i].nl_tx == irq))
                        return true;
        return false;
}

/* A NAPI's IRQ is taken when /proc/interrupts lists it and no other NIC's names claimed it. */
static int usable_irq(const struct inventory *inv, size_t ni, int irq) {
        const struct inventory_irq *rec;

        if (irq < 0)
                return -1;
        rec = inventory_irq(inv, (unsigned) irq);
        return rec && (rec->nic < 0 || rec->nic == (int) ni) ? irq : -1;
}

static void apply_nic(struct inventory *inv, size_t ni, const struct netdev_info *info) {
        struct inventory_nic *nic = &inv->nics[ni];
        _cleanup_(freep) struct qmap *m = NULL;
        bool any = false, all = true;

        /* without room for the map the IRQs stay as the names gave them */
        if (nic->n_queues > 0)
                m = calloc(nic->n_queues, sizeof(*m));
        for (size_t i = 0; i < nic->n_queues; i++) {
                struct inventory_queue *qu = &nic->queues[i];
                const struct netdev_napi *rn, *tn, *n;
                const struct netdev_qstats *s;
                int rirq, tirq;

                rirq = napi_irq(info, nic->ifindex, NETDEV_QUEUE_RX, qu->index, &rn);
                tirq = napi_irq(info, nic->ifindex, NETDEV_QUEUE_TX, qu->index, &tn);
                n = rn ? rn : tn;
                qu->napi_id = n ? n->id : 0;
                qu->napi_threaded = n ? (int) n->threaded : NETDEV_THREADED_UNKNOWN;
                qu->napi_pid = n ? n->pid : 0;
                s = netdev_info_qstats(info, nic->ifindex, NETDEV_QUEUE_RX, (uint32_t) qu->index);
                qu->rx_stats = s ? *s : (struct netdev_qstats) {};
                s = netdev_info_qstats(info, nic->ifindex, NETDEV_QUEUE_TX, (uint32_t) qu->index);
                qu->tx_stats = s ? *s : (struct netdev_qstats) {};
                if (!m)
                        continue;
                m[i] = (struct qmap) {
                        .prev_rx = qu->rx_irq, .prev_tx = qu->tx_irq,
                        .nl_rx = usable_irq(inv, ni, rirq), .nl_tx = usable_irq(inv, ni, tirq),
                };
                any = any || m[i].nl_rx >= 0 || m[i].nl_tx >= 0;
        }
        /* virtio_net and veth (6.18) register no IRQ with their NAPIs */
        if (!any)
                return;

        for (size_t i = 0; i < nic->n_queues; i++) {
                struct inventory_queue *qu = &nic->queues[i];

                qu->irq_netlink = m[i].nl_rx >= 0 || m[i].nl_tx >= 0;
                /* the NAPIs win; a named vector they put on another queue is not this one's */
                if (m[i].nl_rx >= 0)
                        qu->rx_irq = m[i].nl_rx;
                else if (qu->rx_irq >= 0 && claimed(m, nic->n_queues, i, qu->rx_irq))
                        qu->rx_irq = -1;
                if (m[i].nl_tx >= 0)
                        qu->tx_irq = m[i].nl_tx;
                else if (qu->tx_irq >= 0 && claimed(m, nic->n_queues, i, qu->tx_irq) && qu->tx_irq != qu->rx_irq)
                        qu->tx_irq = -1;
                if (!qu->irq_netlink && (qu->rx_irq >= 0 || qu->tx_irq >= 0))
                        all = false;
        }

        /* The IRQ records follow the queues. */
        for (size_t i = 0; i < nic->n_queues; i++) {
                const struct inventory_queue *qu = &nic->queues[i];
                struct inventory_irq *rx, *tx;

                if (!qu->irq_netlink)
                        continue;
                rx = qu->rx_irq >= 0 ? inventory_irq(inv, (unsigned) qu->rx_irq) : NULL;
                tx = qu->tx_irq >= 0 ? inventory_irq(inv, (unsigned) qu->tx_irq) : NULL;
                if (rx) {
                        rx->nic = (int) ni;
                        rx->queue = qu->index;
                        rx->role = rx == tx ? INVENTORY_IRQ_RXTX : INVENTORY_IRQ_RX;
                }
                if (tx && tx != rx) {
                        tx->nic = (int) ni;
                        tx->queue = qu->index;
                        tx->role = INVENTORY_IRQ_TX;
                }
        }
        /* A vector some queue had before and none keeps now is not a queue's. */
        for (size_t i = 0; i < nic->n_queues; i++)
                for (int k = 0; k < 2; k++) {
                        int v = k ? m[i].prev_tx : m[i].prev_rx;
                        struct inventory_irq *irq = v >= 0 ? inventory_irq(inv, (unsigned) v) : NULL;
                        bool kept = false;

                        if (!irq || irq->nic != (int) ni || irq->role == INVENTORY_IRQ_OTHER)
                                continue;
                        for (size_t j = 0; j < nic->n_queues && !kept; j++)
                                kept = nic->queues[j].rx_irq == v || nic->queues[j].tx_irq == v;
                        if (kept)
                                continue;
                        log_debug("inventory: %s: IRQ %d serves no queue by its NAPIs, now other", nic->name, v);
                        irq->role = INVENTORY_IRQ_OTHER;
                        irq->queue = -1;
                }
        if (all)
                nic->map = INVENTORY_MAP_NETLINK;
}

/* All the NIC's NAPIs, named by its queues or not; none out of memory. */
static void list_napis(struct inventory_nic *nic, const struct netdev_info *info) {
        size_t allocated = 0;

        free(nic->napis);
        nic->napis = NULL;
        nic->n_napis = 0;
        for (size_t k = 0; k < info->n_napis; k++) {
                const struct netdev_napi *n = &info->napis[k];

                if (n->ifindex != nic->ifindex)
                        continue;
                if (util_grow((void **) &nic->napis, &allocated, nic->n_napis + 1, sizeof(*nic->napis)) < 0)
                        return;
                nic->napis[nic->n_napis++] = (struct inventory_napi) {
                        .id = n->id, .irq = n->irq, .pid = n->pid, .threaded = (int) n->threaded, .cpu = -1,
                };
        }
}

void inventory_netdev_apply(struct inventory *inv, const struct netdev_info *info) {
        inv->has_netdev = true;
        for (size_t ni = 0; ni < inv->n_nics; ni++)
                if (inv->nics[ni].ifindex > 0) {
                        list_napis(&inv->nics[ni], info);
                        apply_nic(inv, ni, info);
                }
}

/* The netdev family's view, where the kernel has it (6.8+). */
static int refresh_netdev(struct inventory *inv) {
        struct netdev_info info;
        int r;

        r = netdev_dump(&info);
        if (r < 0)
                return r;
        if (info.n_skipped > 0)
                log_debug("inventory: %zu netdev replies did not parse, skipped", info.n_skipped);
        inventory_netdev_apply(inv, &info);
        netdev_info_free(&info);
        return 0;
}

int inventory_netlink_refresh(struct inventory *inv) {
        int r, r2, r3;

        r = refresh_links(inv);
        if (r < 0)
                log_debug_errno(r, "inventory: rtnetlink link dump failed: %m");
        r2 = refresh_channels(inv);
        if (r2 < 0)
                log_debug_errno(r2, "inventory: ethtool channels dump failed: %m");
        /* needs refresh_links' ifindex; its failure leaves the inventory as it was */
        r3 = r < 0 ? 0 : refresh_netdev(inv);
        if (r3 == -EOPNOTSUPP)
                log_debug("inventory: the kernel has no netdev queue/NAPI dumps (Linux 6.8), IRQs by name");
        else if (r3 < 0)
                log_debug_errno(r3, "inventory: netdev dumps failed, IRQs by name: %m");
        return r < 0 ? r : r2;
}
