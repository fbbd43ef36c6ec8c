/* rtnetlink link monitor. */
#include <errno.h>
#include <net/if.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "linkmon.h"
#include "log.h"
#include "nlerr.h"
#include "util.h"

struct linkmon {
        struct nl_sock *sock;     /* multicast notifications */
        sd_event_source *source;
        linkmon_handler_t handler;
        void *userdata;
        bool dumping;             /* filling the table: no events */
        sd_event *event;
        sd_event_source *retry;   /* re-read after a back-off */
        uint64_t backoff_usec;    /* 0: not backing off */
        struct linkmon_link *links;
        size_t n_links, allocated;
};

static bool get_u32(const struct nlattr *a, uint32_t *ret) {
        if (!a || nla_len(a) < (int) sizeof(uint32_t))
                return false;
        *ret = nla_get_u32((struct nlattr *) a);
        return true;
}

int linkmon_parse(const struct nlmsghdr *nlh, struct linkmon_link *ret, bool *ret_deleted) {
        struct nlattr *tb[IFLA_MAX + 1];
        const struct ifinfomsg *ifi;
        struct nlattr *a;
        int r, rem;

        if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
                return -EINVAL;
        if (!nlmsg_valid_hdr((struct nlmsghdr *) nlh, sizeof(struct ifinfomsg)))
                return -EBADMSG;
        r = nlmsg_parse((struct nlmsghdr *) nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX, NULL);
        if (r < 0)
                return -EBADMSG;
        /* libnl drops a cut last attribute silently: malformed here */
        nla_for_each_attr(a, nlmsg_attrdata(nlh, sizeof(struct ifinfomsg)),
                          nlmsg_attrlen(nlh, sizeof(struct ifinfomsg)), rem)
                ;
        if (rem > 0)
                return -EBADMSG;
        ifi = nlmsg_data(nlh);
        if (ifi->ifi_index <= 0)
                return -EBADMSG;

        memset(ret, 0, sizeof(*ret));
        ret->ifindex = ifi->ifi_index;
        ret->flags = ifi->ifi_flags;
        if (tb[IFLA_IFNAME]) {
                int len = nla_len(tb[IFLA_IFNAME]);
                const char *s = nla_data(tb[IFLA_IFNAME]);
                size_t n = strnlen(s, len > 0 ? (size_t) len : 0);

                if (n == 0 || n >= IF_NAMESIZE)
                        return -EBADMSG;
                memcpy(ret->name, s, n);
                ret->name[n] = 0;
        }
        get_u32(tb[IFLA_NUM_RX_QUEUES], &ret->num_rx);
        get_u32(tb[IFLA_NUM_TX_QUEUES], &ret->num_tx);
        *ret_deleted = nlh->nlmsg_type == RTM_DELLINK;
        return 0;
}

size_t linkmon_diff(const struct linkmon_link *old, const struct linkmon_link *new, bool deleted,
                    struct linkmon_event *ret, size_t n) {
        size_t k = 0;

#define EMIT(c, l) do {                                         \
                if (k < n) {                                    \
                        memset(&ret[k], 0, sizeof(ret[k]));     \
                        ret[k].change = (c);                    \
                        ret[k].link = *(l);                     \
                }                                               \
                k++;                                            \
        } while (0)

        if (deleted) {
                if (old)
                        EMIT(LINKMON_REMOVED, old);
                return MIN(k, n);
        }
        if (!old) {
                EMIT(LINKMON_ADDED, new);
                if (new->flags & IFF_UP)
                        EMIT(LINKMON_UP, new);
                return MIN(k, n);
        }
        if (new->name[0] && strcmp(old->name, new->name) != 0) {
                EMIT(LINKMON_RENAMED, new);
                if (k <= n)
                        memcpy(ret[k - 1].old_name, old->name, IF_NAMESIZE);
        }
        /* some notifications omit the queue counts: 0 says nothing */
        if ((new->num_rx && new->num_rx != old->num_rx) || (new->num_tx && new->num_tx != old->num_tx)) {
                EMIT(LINKMON_QUEUES, new);
                if (k <= n) {
                        ret[k - 1].old_rx = old->num_rx;
                        ret[k - 1].old_tx = old->num_tx;
                }
        }
        if ((old->flags ^ new->flags) & IFF_UP)
                EMIT(new->flags & IFF_UP ? LINKMON_UP : LINKMON_DOWN, new);
#undef EMIT
        return MIN(k, n);
}

static struct linkmon_link *table_find(struct linkmon *m, int ifindex) {
        for (size_t i = 0; i < m->n_links; i++)
                if (m->links[i].ifindex == ifindex)
                        return &m->links[i];
        return NULL;
}

static int on_message(struct nl_msg *msg, void *arg) {
        struct linkmon *m = arg;
        struct nlmsghdr *nlh = nlmsg_hdr(msg);
        struct linkmon_event ev[4];
        struct linkmon_link l, *old;
        bool deleted;
        size_t n;

        if (linkmon_parse(nlh, &l, &deleted) < 0)
                return NL_SKIP;
        old = table_find(m, l.ifindex);
        if (old && !l.name[0])
                memcpy(l.name, old->name, IF_NAMESIZE);
        if (old && !deleted) {
                if (!l.num_rx)
                        l.num_rx = old->num_rx;
                if (!l.num_tx)
                        l.num_tx = old->num_tx;
        }
        n = m->dumping ? 0 : linkmon_diff(old, &l, deleted, ev, ELEMENTSOF(ev));

        if (deleted) {
                if (old)
                        *old = m->links[--m->n_links];
        } else if (old) {
                *old = l;
        } else if (util_grow((void **) &m->links, &m->allocated, m->n_links + 1, sizeof(*m->links)) == 0) {
                m->links[m->n_links++] = l;
        }

        for (size_t i = 0; i < n; i++)
                m->handler(&ev[i], m->userdata);
        return NL_OK;
}

/* Fills the table from a dump on a socket of its own, apart from the
 * notifications (those that raced with it replay harmlessly). */
static int dump_links(struct linkmon *m) {
        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
        struct nl_sock *s;
        int r;

        s = nl_socket_alloc();
        if (!s)
                return -ENOMEM;
        r = nl_connect(s, NETLINK_ROUTE);
        if (r >= 0)
                r = nl_socket_modify_cb(s, NL_CB_VALID, NL_CB_CUSTOM, on_message, m);
        if (r >= 0)
                r = nl_send_simple(s, RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof(ifi));
        if (r >= 0) {
                m->dumping = true;
                r = nl_recvmsgs_default(s);
                m->dumping = false;
        }
        nl_socket_free(s);
        return r < 0 ? nlerr_to_errno(r) : 0;
}

/* Notifications read per wakeup at most: a flood must not starve the tick. */
#define RECV_MAX 256
/* Back-off after a failed re-read, doubling. */
#define BACKOFF_MIN_USEC UINT64_C(100000)
#define BACKOFF_MAX_USEC UINT64_C(30000000)

static int backoff(struct linkmon *m, int error);

/* Notifications lost or memory short (both NLE_NOMEM): re-read the table. */
static int resync(struct linkmon *m) {
        struct linkmon_event ev = { .change = LINKMON_RESYNC };
        int r;

        m->n_links = 0;
        r = dump_links(m);
        if (r < 0)
                return r;
        m->backoff_usec = 0;
        m->handler(&ev, m->userdata);
        return 0;
}

static int on_retry(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata) {
        struct linkmon *m = userdata;
        int r;

        r = resync(m);
        if (r < 0) {
                /* an error return would make sd-event disable this source */
                (void) backoff(m, r);
                return 0;
        }
        log_info("Link monitor: link table re-read, watching link changes again");
        return sd_event_source_set_enabled(m->source, SD_EVENT_ON);
}

/* Stops reading the socket for a while (it stays readable: reading at
 * once would spin), then re-reads the table. */
static int backoff(struct linkmon *m, int error) {
        uint64_t now;
        int r;

        if (!m->backoff_usec)
                log_warning_errno(error, "Link monitor: link notifications cannot be read, or lost and the links "
                                  "cannot be re-read (%m); retrying with back-off");
        m->backoff_usec = m->backoff_usec ? MIN(m->backoff_usec * 2, BACKOFF_MAX_USEC) : BACKOFF_MIN_USEC;
        log_debug("linkmon: retrying in %llu ms", (unsigned long long) (m->backoff_usec / 1000));
        (void) sd_event_source_set_enabled(m->source, SD_EVENT_OFF);
        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return r;
        if (!m->retry) {
                r = sd_event_add_time(m->event, &m->retry, CLOCK_MONOTONIC, now + m->backoff_usec, 0, on_retry, m);
                if (r >= 0)
                        (void) sd_event_source_set_description(m->retry, "rtnetlink-link-retry");
        } else {
                r = sd_event_source_set_time(m->retry, now + m->backoff_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->retry, SD_EVENT_ONESHOT);
        }
        return r < 0 ? r : error;
}

int linkmon_receive(struct linkmon *m) {
        bool resynced = false;

        for (unsigned i = 0; i < RECV_MAX; i++) {
                int r = nl_recvmsgs_default(m->sock);

                if (r >= 0)
                        continue;
                if (r == -NLE_AGAIN)
                        return 0;
                if (r == -NLE_NOMEM || r == -NLE_DUMP_INTR || r == -NLE_MSG_OVERFLOW) {
                        log_debug("linkmon: notifications lost (%s), re-reading links", nl_geterror(r));
                        /* twice in one wakeup: the socket is not draining */
                        r = resynced ? nlerr_to_errno(r) : resync(m);
                        if (r < 0)
                                return backoff(m, r);
                        resynced = true;
                        continue;
                }
                /* anything else may leave it readable too: the same back-off */
                log_debug("linkmon: receive failed: %s", nl_geterror(r));
                return backoff(m, nlerr_to_errno(r));
        }
        return 0;
}

static int on_io(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_, void *userdata) {
        /* errors are logged where they happen; the monitor keeps running */
        (void) linkmon_receive(userdata);
        return 0;
}

int linkmon_new(sd_event *e, linkmon_handler_t handler, void *userdata, struct linkmon **ret) {
        struct linkmon *m;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->handler = handler;
        m->userdata = userdata;
        m->event = e;
        m->sock = nl_socket_alloc();
        if (!m->sock) {
                free(m);
                return -ENOMEM;
        }
        nl_socket_disable_seq_check(m->sock);
        r = nl_socket_modify_cb(m->sock, NL_CB_VALID, NL_CB_CUSTOM, on_message, m);
        if (r < 0)
                goto fail_nl;
        r = nl_connect(m->sock, NETLINK_ROUTE);
        if (r < 0)
                goto fail_nl;
        /* a burst (many VLANs at once) must not overrun the default 212 KiB */
        (void) nl_socket_set_buffer_size(m->sock, 1 << 20, 0);
        r = nl_socket_add_memberships(m->sock, RTNLGRP_LINK, 0);
        if (r < 0)
                goto fail_nl;
        r = nl_socket_set_nonblocking(m->sock);
        if (r < 0)
                goto fail_nl;
        r = dump_links(m);
        if (r < 0)
                goto fail;
        r = sd_event_add_io(e, &m->source, nl_socket_get_fd(m->sock), EPOLLIN, on_io, m);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_description(m->source, "rtnetlink-link");
        *ret = m;
        return 0;

fail_nl:
        r = nlerr_to_errno(r);
fail:
        linkmon_free(m);
        return r;
}

struct linkmon *linkmon_free(struct linkmon *m) {
        if (!m)
                return NULL;
        sd_event_source_disable_unref(m->source);
        sd_event_source_disable_unref(m->retry);
        nl_socket_free(m->sock);
        free(m->links);
        free(m);
        return NULL;
}

size_t linkmon_count(const struct linkmon *m) {
        return m ? m->n_links : 0;
}
