/* Prints what netdev_dump() sees in the current network namespace, one
 * record a line, for tests/live-netdev.sh:
 *   queue IFINDEX rx|tx ID napi NAPI_ID
 *   napi ID ifindex IFINDEX irq IRQ pid PID threaded MODE
 *   qstats IFINDEX rx|tx ID rx_packets N rx_bytes N tx_packets N tx_bytes N
 * (a counter the driver does not report is "-").  With --rates MS instead:
 * the per-queue packet rates the daemon's sampling computes from two
 * qstats readings MS milliseconds apart (sample_snapshot_take_qstats,
 * sample_compute), one line a queue:
 *   rate IFINDEX rx|tx ID pps X
 * then "queue_rates N".  Exit 0, 77 when the kernel has no netdev family
 * (or no queue-get; --rates: no qstats-get), 1 on another error. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netdev.h"
#include "sample.h"

static const char *qtype(enum netdev_queue_type t) {
        return t == NETDEV_QUEUE_RX ? "rx" : "tx";
}

static void counter(const char *name, bool has, uint64_t v) {
        if (has)
                printf(" %s %" PRIu64, name, v);
        else
                printf(" %s -", name);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static int rates(long ms) {
        struct inventory inv = { .has_netdev = true };
        struct sample_snapshot a = {}, b = {};
        struct sample_rates r = {};
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };
        int k;

        a.usec = now_usec();
        k = sample_snapshot_take_qstats(&inv, a.usec, &a);
        if (k >= 0 && !a.has_qstats) {
                printf("qstats: not available\n");
                return 77;
        }
        nanosleep(&ts, NULL);
        b.usec = now_usec();
        if (k >= 0)
                k = sample_snapshot_take_qstats(&inv, b.usec, &b);
        if (k >= 0)
                k = sample_compute(&a, &b, &r);
        if (k < 0) {
                fprintf(stderr, "qstats rates: %s\n", strerror(-k));
                sample_snapshot_free(&a);
                sample_snapshot_free(&b);
                return 1;
        }
        for (size_t i = 0; i < r.n_queues; i++)
                printf("rate %d %s %" PRIu32 " pps %.0f\n", r.queues[i].ifindex,
                       qtype(r.queues[i].type), r.queues[i].queue, r.queues[i].pps);
        printf("queue_rates %zu\n", r.n_queues);
        sample_rates_free(&r);
        sample_snapshot_free(&a);
        sample_snapshot_free(&b);
        return 0;
}

int main(int argc, char **argv) {
        struct netdev_info info;
        int r;

        if (argc == 3 && strcmp(argv[1], "--rates") == 0)
                return rates(strtol(argv[2], NULL, 10));

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

                printf("queue %d %s %" PRIu32 " napi %" PRIu32 "\n", q->ifindex, qtype(q->type),
                       q->id, q->napi_id);
        }
        for (size_t i = 0; i < info.n_napis; i++) {
                const struct netdev_napi *n = &info.napis[i];

                printf("napi %" PRIu32 " ifindex %d irq %d pid %d threaded %s\n", n->id, n->ifindex, n->irq, n->pid,
                       netdev_threaded_to_string(n->threaded));
        }
        for (size_t i = 0; i < info.n_qstats; i++) {
                const struct netdev_qstats *s = &info.qstats[i];

                printf("qstats %d %s %" PRIu32, s->ifindex, qtype(s->type), s->queue);
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
