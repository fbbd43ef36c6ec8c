/* rtnetlink link monitor: keeps a table of links and reports what matters
 * for IRQ placement (added, removed, up/down: drivers reset IRQ affinity on
 * open, renamed, queue count); carrier and statistics changes are not. */
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
        LINKMON_RESYNC,          /* notifications lost, table re-read: rediscover all */
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

/* The changes from old (NULL: unknown) to new into ret (room for n, 4 is enough).  Pure. */
size_t linkmon_diff(const struct linkmon_link *old, const struct linkmon_link *new, bool deleted,
                    struct linkmon_event *ret, size_t n);

/* Opens the monitor, dumps the links and attaches to e; handler gets each change. */
int linkmon_new(sd_event *e, linkmon_handler_t handler, void *userdata, struct linkmon **ret);
struct linkmon *linkmon_free(struct linkmon *m);
/* Reads pending notifications (a bounded number).  Lost ones re-read the
 * table (LINKMON_RESYNC), retried after a back-off when that fails. */
int linkmon_receive(struct linkmon *m);
size_t linkmon_count(const struct linkmon *m);
