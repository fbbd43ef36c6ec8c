/* Prints what netdev_dump() sees in the current network namespace, one
 * record a line, for tests/live-netdev.sh:
 *   queue IFINDEX rx|tx ID napi NAPI_ID
 *   napi ID ifindex IFINDEX irq IRQ pid PID threaded MODE
 *   qstats IFINDEX rx|tx ID rx_packets N rx_bytes N tx_packets N tx_bytes N
 * (a counter the driver does not report is "-").  Exit 0, 77 when the kernel
 * has no netdev family (or no queue-get), 1 on another error. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "netdev.h"

static void counter(const char *name, bool has, uint64_t v) {
        if (has)
                printf(" %s %" PRIu64, name, v);
        else
                printf(" %s -", name);
}

int main(void) {
        struct netdev_info info;
        int r;

        r = netdev_dump(&info);
        if (r == -EOPNOTSUPP) {
                printf("netdev family: not available\n");
                return 77;
        }
        if (r < 0) {
                fprintf(stderr, "netdev_dump: %s\n", strerror(-r));
                return 1;
        }
        for (size_t i = 0; i < info.n_queues; i++) {
                const struct netdev_queue *q = &info.queues[i];

                printf("queue %d %s %" PRIu32 " napi %" PRIu32 "\n", q->ifindex, netdev_queue_type_to_string(q->type),
                       q->id, q->napi_id);
        }
        for (size_t i = 0; i < info.n_napis; i++) {
                const struct netdev_napi *n = &info.napis[i];

                printf("napi %" PRIu32 " ifindex %d irq %d pid %d threaded %s\n", n->id, n->ifindex, n->irq, n->pid,
                       netdev_threaded_to_string(n->threaded));
        }
        for (size_t i = 0; i < info.n_qstats; i++) {
                const struct netdev_qstats *s = &info.qstats[i];

                printf("qstats %d %s %" PRIu32, s->ifindex, netdev_queue_type_to_string(s->type), s->queue);
                counter("rx_packets", s->has_rx_packets, s->rx_packets);
                counter("rx_bytes", s->has_rx_bytes, s->rx_bytes);
                counter("tx_packets", s->has_tx_packets, s->tx_packets);
                counter("tx_bytes", s->has_tx_bytes, s->tx_bytes);
                printf("\n");
        }
        printf("has_qstats %d skipped %zu\n", info.has_qstats, info.n_skipped);
        netdev_info_free(&info);
        return 0;
}
