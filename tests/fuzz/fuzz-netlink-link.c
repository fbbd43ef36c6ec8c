/* rtnetlink link messages (linkmon_parse, which turns an RTM_NEWLINK /
 * RTM_DELLINK into the monitor's link record, then linkmon_diff against
 * a known link and an unknown one).  The input is one byte choosing the message type
 * (RTM_NEWLINK, RTM_DELLINK or RTM_GETLINK by its value mod 3) and the
 * payload: struct ifinfomsg and the attributes, as the kernel sends them.
 * The harness adds the nlmsghdr with the length of what is there, as
 * libnl does for each message of a datagram it received. */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include "fuzz.h"
#include "linkmon.h"
#include "util.h"

FUZZ_QUIET_LOG()

static const struct linkmon_link known = {
        .ifindex = 2, .name = "eth0", .flags = IFF_UP, .num_rx = 4, .num_tx = 4,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct nlmsghdr *nlh;
        struct linkmon_link link;
        struct linkmon_event ev[4];
        bool deleted = false;
        size_t payload, n;
        int r;

        if (size < 1 || size - 1 > 65536 - NLMSG_HDRLEN)
                return 0;
        payload = size - 1;
        /* exact size, so ASan sees a read past the message */
        nlh = malloc(NLMSG_HDRLEN + payload);
        if (!nlh)
                abort();
        *nlh = (struct nlmsghdr) {
                .nlmsg_len = (uint32_t) (NLMSG_HDRLEN + payload),
                .nlmsg_type = (uint16_t) (RTM_NEWLINK + data[0] % 3),
        };
        memcpy((char *) nlh + NLMSG_HDRLEN, data + 1, payload);

        r = linkmon_parse(nlh, &link, &deleted);
        if (nlh->nlmsg_type == RTM_GETLINK)
                FUZZ_CHECK(r == -EINVAL);
        else
                FUZZ_CHECK(r == 0 || r == -EBADMSG);
        if (r == 0) {
                const struct ifinfomsg *ifi = NLMSG_DATA(nlh);

                FUZZ_CHECK(payload >= sizeof(*ifi));
                FUZZ_CHECK(link.ifindex == ifi->ifi_index && link.ifindex > 0);
                FUZZ_CHECK(link.flags == ifi->ifi_flags);
                FUZZ_CHECK(deleted == (nlh->nlmsg_type == RTM_DELLINK));
                FUZZ_CHECK(memchr(link.name, 0, sizeof(link.name)) != NULL);

                n = linkmon_diff(&known, &link, deleted, ev, ELEMENTSOF(ev));
                FUZZ_CHECK(n <= ELEMENTSOF(ev));
                FUZZ_CHECK(linkmon_diff(&known, &link, deleted, ev, 1) <= 1);
                n = linkmon_diff(NULL, &link, deleted, ev, ELEMENTSOF(ev));
                FUZZ_CHECK(deleted ? n == 0 : n >= 1);
        }
        free(nlh);
        return 0;
}
