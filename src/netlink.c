/* Live refinement of the inventory: rtnetlink links (libnl-route-3) and
 * ethtool channels (ethtool generic netlink, libnl-genl-3). */
#include <errno.h>
#include <net/if.h>
#include <string.h>

#include <linux/ethtool_netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "inventory.h"
#include "log.h"
#include "nlerr.h"
#include "util.h"

static struct inv_nic *find_nic(struct inventory *inv, const char *name) {
        for (size_t i = 0; i < inv->n_nics; i++)
                if (strcmp(inv->nics[i].name, name) == 0)
                        return &inv->nics[i];
        return NULL;
}

static int refresh_links(struct inventory *inv) {
        struct nl_sock *sk;
        struct nl_cache *cache = NULL;
        int r;

        sk = nl_socket_alloc();
        if (!sk)
                return -ENOMEM;
        r = nl_connect(sk, NETLINK_ROUTE);
        if (r < 0)
                goto out;
        r = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < inv->n_nics; i++) {
                struct inv_nic *nic = &inv->nics[i];
                struct rtnl_link *link = rtnl_link_get_by_name(cache, nic->name);
                uint32_t n;

                /* Gone since sysfs was read, or another namespace's sysfs. */
                if (!link)
                        continue;
                /* A virtual NIC has no device/driver link; its link
                 * kind (IFLA_INFO_KIND: veth, bridge, ...) says what it is. */
                if (!nic->driver[0] && rtnl_link_get_type(link))
                        snprintf(nic->driver, sizeof(nic->driver), "%s", rtnl_link_get_type(link));
                nic->ifindex = rtnl_link_get_ifindex(link);
                nic->up = rtnl_link_get_flags(link) & IFF_UP;
                /* 0 means the attribute was absent (kernels before 2.6.35). */
                n = rtnl_link_get_num_rx_queues(link);
                if (n > 0 && n <= INT32_MAX)
                        nic->max_rx_queues = (int) n;
                n = rtnl_link_get_num_tx_queues(link);
                if (n > 0 && n <= INT32_MAX)
                        nic->max_tx_queues = (int) n;
                rtnl_link_put(link);
        }
        r = 0;
out:
        if (cache)
                nl_cache_free(cache);
        nl_socket_free(sk);
        return r < 0 ? nlerr_to_errno(r) : 0;
}

static int u32_attr_as_int(struct nlattr *a) {
        uint32_t v = nla_get_u32(a);
        return v > INT32_MAX ? -1 : (int) v;
}

/* One ETHTOOL_MSG_CHANNELS_GET_REPLY of the dump. */
static int channels_reply(struct nl_msg *msg, void *arg) {
        struct inventory *inv = arg;
        struct nlattr *tb[ETHTOOL_A_CHANNELS_MAX + 1], *hdr[ETHTOOL_A_HEADER_MAX + 1];
        struct inv_nic *nic;

        if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, ETHTOOL_A_CHANNELS_MAX, NULL) < 0 ||
            !tb[ETHTOOL_A_CHANNELS_HEADER])
                return NL_SKIP;
        if (nla_parse_nested(hdr, ETHTOOL_A_HEADER_MAX, tb[ETHTOOL_A_CHANNELS_HEADER], NULL) < 0 ||
            !hdr[ETHTOOL_A_HEADER_DEV_NAME])
                return NL_SKIP;
        nic = find_nic(inv, nla_get_string(hdr[ETHTOOL_A_HEADER_DEV_NAME]));
        if (!nic)
                return NL_SKIP;
        /* The kernel leaves out a kind of channel whose maximum is 0: the
         * driver has channels, just none of that kind. */
        nic->combined_channels = tb[ETHTOOL_A_CHANNELS_COMBINED_COUNT] ?
                u32_attr_as_int(tb[ETHTOOL_A_CHANNELS_COMBINED_COUNT]) : 0;
        nic->rx_channels = tb[ETHTOOL_A_CHANNELS_RX_COUNT] ? u32_attr_as_int(tb[ETHTOOL_A_CHANNELS_RX_COUNT]) : 0;
        nic->tx_channels = tb[ETHTOOL_A_CHANNELS_TX_COUNT] ? u32_attr_as_int(tb[ETHTOOL_A_CHANNELS_TX_COUNT]) : 0;
        return NL_OK;
}

/* One dump for all devices: the kernel skips devices whose driver has no
 * get_channels (EOPNOTSUPP), so those keep -1. */
static int refresh_channels(struct inventory *inv) {
        struct nl_sock *sk;
        struct nl_msg *msg = NULL;
        int family, r;

        sk = nl_socket_alloc();
        if (!sk)
                return -ENOMEM;
        r = genl_connect(sk);
        if (r < 0)
                goto out;
        /* Missing before Linux 5.6 (ethtool netlink): -ENOENT to the caller. */
        family = genl_ctrl_resolve(sk, ETHTOOL_GENL_NAME);
        if (family < 0) {
                r = family;
                goto out;
        }
        msg = nlmsg_alloc();
        if (!msg) {
                r = -NLE_NOMEM;
                goto out;
        }
        if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP, ETHTOOL_MSG_CHANNELS_GET,
                         ETHTOOL_GENL_VERSION)) {
                r = -NLE_NOMEM;
                goto out;
        }
        r = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, channels_reply, inv);
        if (r < 0)
                goto out;
        r = nl_send_auto(sk, msg);
        if (r < 0)
                goto out;
        r = nl_recvmsgs_default(sk);
out:
        nlmsg_free(msg);
        nl_socket_free(sk);
        return r < 0 ? nlerr_to_errno(r) : 0;
}

int inventory_netlink_refresh(struct inventory *inv) {
        int r, r2;

        r = refresh_links(inv);
        if (r < 0)
                log_debug_errno(r, "inventory: rtnetlink link dump failed: %m");
        r2 = refresh_channels(inv);
        if (r2 < 0)
                log_debug_errno(r2, "inventory: ethtool channels dump failed: %m");
        return r < 0 ? r : r2;
}
