/* rtnetlink link monitor (libnl-route-3): subscribes to RTNLGRP_LINK,
 * keeps a table of links (from an initial dump) and reports what matters
 * for IRQ placement: a link appearing or vanishing, going administratively
 * up or down (drivers reset IRQ affinity on open), being renamed, or
 * changing its queue count (ethtool -L).  Carrier, statistics and address
 * changes, which also arrive as RTM_NEWLINK, are filtered out. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

struct nlmsghdr;

enum linkmon_change {
        LINKMON_ADDED,
        LINKMON_REMOVED,
        LINKMON_UP,
        LINKMON_DOWN,
        LINKMON_RENAMED,
        LINKMON_QUEUES,
        LINKMON_RESYNC,          /* notifications were lost (socket overrun):
                                  * the table was re-read, rediscover all */
        LINKMON_CHANGE_MAX,
        LINKMON_CHANGE_INVALID = -1,
};

struct linkmon_link {
        int ifindex;
        char name[IF_NAMESIZE];
        unsigned flags;          /* IFF_* from ifinfomsg */
        uint32_t num_rx, num_tx; /* IFLA_NUM_RX/TX_QUEUES, 0 when absent */
};

struct linkmon_event {
        enum linkmon_change change;
        struct linkmon_link link;     /* state after the change (before, for REMOVED) */
        char old_name[IF_NAMESIZE];   /* RENAMED */
        uint32_t old_rx, old_tx;      /* QUEUES */
};

typedef void (*linkmon_handler_t)(const struct linkmon_event *ev, void *userdata);

struct linkmon;


/* Parses an RTM_NEWLINK/RTM_DELLINK message; *ret_deleted tells which.
 * -EINVAL for other types, -EBADMSG for malformed ones.  Pure. */
int linkmon_parse(const struct nlmsghdr *nlh, struct linkmon_link *ret, bool *ret_deleted);

/* The changes from old (NULL: link unknown so far) to new (deleted: it
 * vanished) into ret (room for n, 4 is enough).  Returns the count.  Pure. */
size_t linkmon_diff(const struct linkmon_link *old, const struct linkmon_link *new, bool deleted,
                    struct linkmon_event *ret, size_t n);

/* Opens the monitor in the current network namespace, dumps the existing
 * links and attaches the socket to e as an io source.  handler is called
 * for each change.  -errno when netlink is unavailable. */
int linkmon_new(sd_event *e, linkmon_handler_t handler, void *userdata, struct linkmon **ret);
struct linkmon *linkmon_free(struct linkmon *m);
/* Reads the notifications the socket holds (the event loop calls it when
 * the socket is readable; at most a bounded number per call).  Lost
 * notifications re-read the table (LINKMON_RESYNC); when that fails, or
 * fails again within one call, the socket is left alone for a back-off
 * (100 ms doubling to 30 s) and the re-read retried then.  0 or -errno. */
int linkmon_receive(struct linkmon *m);
/* Number of links in the table. */
size_t linkmon_count(const struct linkmon *m);
