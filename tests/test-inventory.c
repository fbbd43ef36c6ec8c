/* NIC inventory: the IRQ name classifier, the host64 and vm2 fixture trees,
 * this host's virtio NIC and a veth with 4 queues in a network namespace. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "inventory.h"
#include "knob.h"
#include "procfs.h"
#include "rootfs.h"
#include "testlib.h"
#include "util.h"

/* ---- classifier ---- */

static void test_classify(_unused_ void **state) {
        static const struct {
                const char *what, *irq, *nic, *virtio, *pci;
                enum inventory_irq_role role;
                int queue;
        } cases[] = {
                /* per-queue families */
                { "ixgbe TxRx", "eth1-TxRx-3", "eth1", NULL, "0000:05:00.0", INVENTORY_IRQ_RXTX, 3 },
                { "igb TxRx queue 0", "enp4s0-TxRx-0", "enp4s0", NULL, NULL, INVENTORY_IRQ_RXTX, 0 },
                { "separate rx", "eth0-rx-2", "eth0", NULL, NULL, INVENTORY_IRQ_RX, 2 },
                { "separate tx", "eth0-tx-12", "eth0", NULL, NULL, INVENTORY_IRQ_TX, 12 },
                { "i40e prefix", "i40e-ens1f0-TxRx-15", "ens1f0", NULL, "0000:3b:00.0", INVENTORY_IRQ_RXTX, 15 },
                { "ice prefix", "ice-ens5f0-TxRx-7", "ens5f0", NULL, "0000:5e:00.0", INVENTORY_IRQ_RXTX, 7 },
                { "ice separate rx", "ice-ens5f0-rx-1", "ens5f0", NULL, NULL, INVENTORY_IRQ_RX, 1 },
                { "bnx2x fastpath", "eno49-fp-5", "eno49", NULL, NULL, INVENTORY_IRQ_RXTX, 5 },
                { "ena Tx-Rx", "eth0-Tx-Rx-2", "eth0", NULL, "0000:00:05.0", INVENTORY_IRQ_RXTX, 2 },
                { "mlx5 completion", "mlx5_comp7@pci:0000:af:00.0", "ens2f0", NULL, "0000:af:00.0",
                  INVENTORY_IRQ_RXTX, 7 },
                { "mlx5 completion, two digits", "mlx5_comp63@pci:0000:af:00.0", "ens2f0", NULL, "0000:af:00.0",
                  INVENTORY_IRQ_RXTX, 63 },
                { "virtio input = rx", "virtio2-input.0", "eth0", "virtio2", "0000:00:03.0", INVENTORY_IRQ_RX, 0 },
                { "virtio output = tx", "virtio2-output.3", "eth0", "virtio2", "0000:00:03.0", INVENTORY_IRQ_TX, 3 },
                /* single vector */
                { "e1000e named after the device", "eno1", "eno1", NULL, "0000:00:1f.6", INVENTORY_IRQ_RXTX, 0 },
                { "virtio shared vector", "virtio2-virtqueues", "eth0", "virtio2", NULL, INVENTORY_IRQ_RXTX, 0 },
                { "virtio INTx", "virtio2", "eth0", "virtio2", NULL, INVENTORY_IRQ_RXTX, 0 },
                /* admin vectors */
                { "virtio config", "virtio2-config", "eth0", "virtio2", "0000:00:03.0", INVENTORY_IRQ_OTHER, -1 },
                { "virtio control", "virtio2-control", "eth0", "virtio2", NULL, INVENTORY_IRQ_OTHER, -1 },
                { "mlx5 async", "mlx5_async0@pci:0000:af:00.0", "ens2f0", NULL, "0000:af:00.0",
                  INVENTORY_IRQ_OTHER, -1 },
                { "mlx5 pages eq", "mlx5_pages_eq@pci:0000:af:00.0", "ens2f0", NULL, "0000:af:00.0",
                  INVENTORY_IRQ_OTHER, -1 },
                { "i40e misc", "i40e-0000:3b:00.0:misc", "ens1f0", NULL, "0000:3b:00.0", INVENTORY_IRQ_OTHER, -1 },
                { "ice misc", "ice-0000:5e:00.0:misc", "ens5f0", NULL, "0000:5e:00.0", INVENTORY_IRQ_OTHER, -1 },
                { "ena management", "ena-mgmnt@pci:0000:00:05.0", "eth0", NULL, "0000:00:05.0", INVENTORY_IRQ_OTHER, -1 },
                { "VMD domain is another address", "i40e-10000:3b:00.0:misc", "ens1f0", NULL, "0000:3b:00.0",
                  INVENTORY_IRQ_NONE, -1 },
                /* negatives */
                { "eth10 is not eth1", "eth10-TxRx-1", "eth1", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "eth10 bare is not eth1", "eth10", "eth1", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "eth1 is not eth10", "eth1-TxRx-1", "eth10", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "mlx5 of another function", "mlx5_comp0@pci:0000:af:00.1", "ens2f0", NULL, "0000:af:00.0",
                  INVENTORY_IRQ_NONE, -1 },
                { "mlx5 async of another function", "mlx5_async0@pci:0000:af:00.1", "ens2f0", NULL,
                  "0000:af:00.0", INVENTORY_IRQ_NONE, -1 },
                { "misc of function .1 vs .10-like suffix", "i40e-0000:3b:00.1:misc", "ens1f0", NULL,
                  "0000:3b:00.0", INVENTORY_IRQ_NONE, -1 },
                { "virtio21 is not virtio2", "virtio21-input.0", "eth0", "virtio2", NULL, INVENTORY_IRQ_NONE, -1 },
                { "another virtio device", "virtio3-input.0", "eth0", "virtio2", NULL, INVENTORY_IRQ_NONE, -1 },
                { "virtio console names are not virtio-net", "virtio3-rx", "eth0", "virtio2", NULL, INVENTORY_IRQ_NONE, -1 },
                { "no queue number", "eth0-TxRx-", "eth0", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "garbage after number", "eth0-TxRx-1a", "eth0", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "negative queue", "eth0-rx--1", "eth0", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "huge queue", "eth0-rx-99999999999", "eth0", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "a word suffix is the device's admin vector", "eth0-lsc", "eth0", NULL, NULL, INVENTORY_IRQ_OTHER, -1 },
                { "a bare number is left to the driver's rule", "eth0-3", "eth0", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "case matters", "eth0-txrx-1", "eth0", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "other driver prefix", "ixgbe-eth0-TxRx-1", "eth0", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "unrelated IRQ", "ahci[0000:00:17.0]", "eth0", "virtio2", "0000:00:03.0", INVENTORY_IRQ_NONE, -1 },
                { "empty name", "", "eth0", NULL, NULL, INVENTORY_IRQ_NONE, -1 },
                { "no NIC facts", "eth0-TxRx-1", NULL, NULL, NULL, INVENTORY_IRQ_NONE, -1 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int q = -1;
                enum inventory_irq_role r = inventory_classify_irq_name(cases[i].irq, cases[i].nic, NULL, cases[i].virtio,
                                                                  cases[i].pci, &q);
                if (r != cases[i].role || (r != INVENTORY_IRQ_NONE && q != cases[i].queue))
                        fail_msg("%s: '%s' for %s gave %s queue %d, want %s queue %d", cases[i].what,
                                 cases[i].irq, cases[i].nic ? cases[i].nic : "(null)", inventory_irq_role_to_string(r),
                                 q, inventory_irq_role_to_string(cases[i].role), cases[i].queue);
        }
        assert_string_equal(inventory_map_source_to_string(INVENTORY_MAP_MSI_ORDER), "msi-order");
        assert_null(inventory_irq_role_to_string(INVENTORY_IRQ_ROLE_MAX));
}

/* Rules that need the driver, or number the device's vectors (the queue
 * given is the raw number inventory_read places). */
static void test_classify_driver(_unused_ void **state) {
        static const struct {
                const char *what, *irq, *nic, *driver, *pci;
                enum inventory_irq_role role;
                int queue;
        } cases[] = {
                { "tg3 tx-0 is transmit ring 0", "eth0-tx-0", "eth0", "tg3", NULL, INVENTORY_IRQ_TX, 0 },
                { "tg3 rx-1 is receive ring 0", "eth0-rx-1", "eth0", "tg3", NULL, INVENTORY_IRQ_RX, 0 },
                { "tg3 rx-4 is receive ring 3", "eth0-rx-4", "eth0", "tg3", NULL, INVENTORY_IRQ_RX, 3 },
                { "tg3 txrx-1 is ring pair 0", "eth0-txrx-1", "eth0", "tg3", NULL, INVENTORY_IRQ_RXTX, 0 },
                { "tg3 ring-less vector 0", "eth0-0", "eth0", "tg3", NULL, INVENTORY_IRQ_OTHER, -1 },
                { "tg3 rx-0 does not exist", "eth0-rx-0", "eth0", "tg3", NULL, INVENTORY_IRQ_NONE, -1 },
                { "without tg3, rx-1 is queue 1", "eth0-rx-1", "eth0", "e1000e", NULL, INVENTORY_IRQ_RX, 1 },
                { "sfc channel", "ens7-2", "ens7", "sfc", NULL, INVENTORY_IRQ_RXTX, 2 },
                { "sfc ptp", "ens7-ptp", "ens7", "sfc", NULL, INVENTORY_IRQ_OTHER, -1 },
                { "bnx2 numbers are left to msi order", "eth0-1", "eth0", "bnx2", NULL, INVENTORY_IRQ_NONE, -1 },
                { "vmxnet3 rxtx", "ens160-rxtx-3", "ens160", "vmxnet3", NULL, INVENTORY_IRQ_RXTX, 3 },
                { "vmxnet3 rx names carry the vector", "ens160-rx-2", "ens160", "vmxnet3", NULL, INVENTORY_IRQ_RX, 2 },
                { "vmxnet3 event", "ens160-event-4", "ens160", "vmxnet3", NULL, INVENTORY_IRQ_OTHER, -1 },
                { "cxgb4 Rx", "enp9s0f4-Rx2", "enp9s0f4", "cxgb4", NULL, INVENTORY_IRQ_RX, 2 },
                { "ionic rx", "ionic-enp10s0-L0-rx3", "enp10s0", "ionic", NULL, INVENTORY_IRQ_RXTX, 3 },
                { "ionic tx", "ionic-enp10s0-L0-tx3", "enp10s0", "ionic", NULL, INVENTORY_IRQ_TX, 3 },
                { "MANA queue", "mana_q5@pci:7870:00:00.0", "enP30832s1", "mana", "7870:00:00.0", INVENTORY_IRQ_RXTX, 5 },
                { "MANA hardware channel", "mana_hwc@pci:7870:00:00.0", "enP30832s1", "mana", "7870:00:00.0",
                  INVENTORY_IRQ_OTHER, -1 },
                { "MANA of another device", "mana_q5@pci:7870:00:00.1", "enP30832s1", "mana", "7870:00:00.0",
                  INVENTORY_IRQ_NONE, -1 },
                { "mlx4 completion EQ", "mlx4-13@0000:09:00.0", "enp9s0", "mlx4_core", "0000:09:00.0",
                  INVENTORY_IRQ_RXTX, 13 },
                { "mlx4 async EQ", "mlx4-async@pci:0000:09:00.0", "enp9s0", "mlx4_core", "0000:09:00.0",
                  INVENTORY_IRQ_OTHER, -1 },
                { "gve block", "gve-ntfy-blk3@pci:0000:00:08.0", "ens4", "gve", "0000:00:08.0", INVENTORY_IRQ_RXTX, 3 },
                { "gve management", "gve-mgmnt@pci:0000:00:08.0", "ens4", "gve", "0000:00:08.0", INVENTORY_IRQ_OTHER, -1 },
                { "hns3 counts combined vectors by two", "hns3-0000:7d:00.0-TxRx-6", "enp125s0f0", "hns3",
                  "0000:7d:00.0", INVENTORY_IRQ_RXTX, 3 },
                { "hns3 split rx", "hns3-0000:7d:00.0-Rx-1", "enp125s0f0", "hns3", "0000:7d:00.0", INVENTORY_IRQ_RX, 1 },
                { "hns3 of another function", "hns3-0000:7d:00.1-TxRx-0", "enp125s0f0", "hns3", "0000:7d:00.0",
                  INVENTORY_IRQ_NONE, -1 },
                { "hclge misc", "hclge-misc-0000:7d:00.0", "enp125s0f0", "hns3", "0000:7d:00.0", INVENTORY_IRQ_OTHER, -1 },
                { "i40e flow director", "ens2f0-fdir-TxRx-0", "ens2f0", "i40e", NULL, INVENTORY_IRQ_OTHER, -1 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int q = -1;
                enum inventory_irq_role r =
                        inventory_classify_irq_name(cases[i].irq, cases[i].nic, cases[i].driver, NULL, cases[i].pci, &q);
                if (r != cases[i].role || (r != INVENTORY_IRQ_NONE && q != cases[i].queue))
                        fail_msg("%s: '%s' gave %s queue %d, want %s queue %d", cases[i].what, cases[i].irq,
                                 inventory_irq_role_to_string(r), q, inventory_irq_role_to_string(cases[i].role),
                                 cases[i].queue);
        }
}

/* ---- fixture trees ---- */

static void load(const char *root, struct inventory *inv) {
        struct procfs_interrupts pi;
        int fd = rootfs_open(root);
        int r;

        if (fd < 0)
                fail_msg("cannot open %s: %s", root, strerror(-fd));
        r = procfs_interrupts_read(fd, &pi);
        if (r < 0)
                fail_msg("%s: procfs_interrupts_read: %s", root, strerror(-r));
        r = inventory_read(fd, &pi, inv);
        procfs_interrupts_free(&pi);
        close(fd);
        if (r < 0)
                fail_msg("%s: inventory_read: %s", root, strerror(-r));
}

static void load_fixture(const char *name, struct inventory *inv) {
        char path[4096];
        load(fixture_path(name, path, sizeof(path)), inv);
}

static void assert_list(const char *what, const cpuset_t *s, const char *want) {
        char buf[512];
        assert_int_equal(cpuset_format_list(s, buf, sizeof(buf)), 0);
        if (strcmp(buf, want) != 0)
                fail_msg("%s: got '%s', want '%s'", what, buf, want);
}

static void assert_kept(const char *what, const cpuset_kept_t *k, const char *want) {
        cpuset_t s = cpuset_kept_get(k);

        assert_list(what, &s, want);
}

struct nic_case {
        const char *name, *driver, *bus_id, *pci_addr;
        int ifindex, node;
        const char *local_cpus;
        bool has_device, up;
        int rx, tx;
        enum inventory_map_source map;
};

static void check_nics(const struct inventory *inv, const struct nic_case *cases, size_t n) {
        assert_int_equal(inv->n_nics, n);
        for (size_t i = 0; i < n; i++) {
                const struct nic_case *c = &cases[i];
                const struct inventory_nic *nic = inventory_nic(inv, c->name);
                char what[64];

                if (!nic)
                        fail_msg("NIC %s not found", c->name);
                /* sorted by name */
                assert_ptr_equal(nic, &inv->nics[i]);
                snprintf(what, sizeof(what), "%s local_cpus", c->name);
                assert_list(what, &nic->local_cpus, c->local_cpus);
                if (strcmp(nic->driver, c->driver) || strcmp(nic->bus_id, c->bus_id) ||
                    strcmp(nic->pci_addr, c->pci_addr) || nic->ifindex != c->ifindex || nic->node != c->node ||
                    nic->has_device != c->has_device || nic->up != c->up || nic->rx_queues != c->rx ||
                    nic->tx_queues != c->tx || nic->n_queues != (size_t) MAX(c->rx, c->tx) || nic->map != c->map ||
                    nic->combined_channels != -1)
                        fail_msg("%s: driver '%s' bus '%s' pci '%s' ifindex %d node %d dev %d up %d rx %d tx %d "
                                 "n %zu map %s channels %d",
                                 c->name, nic->driver, nic->bus_id, nic->pci_addr, nic->ifindex, nic->node,
                                 nic->has_device, nic->up, nic->rx_queues, nic->tx_queues, nic->n_queues,
                                 inventory_map_source_to_string(nic->map), nic->combined_channels);
        }
}

struct irq_case {
        unsigned irq;
        const char *nic;          /* NULL: no NIC */
        int queue;
        enum inventory_irq_role role;
        const char *affinity, *effective; /* effective NULL: none */
        int node;
        bool readable;
};

static void check_irqs(const struct inventory *inv, const struct irq_case *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const struct irq_case *c = &cases[i];
                const struct inventory_irq *irq = inventory_irq(inv, c->irq);
                const char *nic;
                char what[64];

                if (!irq)
                        fail_msg("IRQ %u not found", c->irq);
                nic = irq->nic >= 0 ? inv->nics[irq->nic].name : NULL;
                if ((nic == NULL) != (c->nic == NULL) || (nic && strcmp(nic, c->nic)) || irq->queue != c->queue ||
                    irq->role != c->role || irq->node != c->node || irq->affinity_readable != c->readable ||
                    irq->has_effective != (c->effective != NULL))
                        fail_msg("IRQ %u (%s): nic %s queue %d role %s node %d readable %d effective %d", c->irq,
                                 irq->name, nic ? nic : "-", irq->queue, inventory_irq_role_to_string(irq->role),
                                 irq->node, irq->affinity_readable, irq->has_effective);
                snprintf(what, sizeof(what), "IRQ %u affinity", c->irq);
                assert_kept(what, &irq->affinity, c->affinity);
                if (c->effective) {
                        snprintf(what, sizeof(what), "IRQ %u effective", c->irq);
                        assert_kept(what, &irq->effective, c->effective);
                }
        }
}

static void check_queue(const struct inventory *inv, const char *nic_name, int q, int rx_irq, int tx_irq) {
        const struct inventory_nic *nic = inventory_nic(inv, nic_name);
        assert_non_null(nic);
        assert_true((size_t) q < nic->n_queues);
        if (nic->queues[q].index != q || nic->queues[q].rx_irq != rx_irq || nic->queues[q].tx_irq != tx_irq)
                fail_msg("%s queue %d: index %d rx_irq %d tx_irq %d, want %d/%d", nic_name, q, nic->queues[q].index,
                         nic->queues[q].rx_irq, nic->queues[q].tx_irq, rx_irq, tx_irq);
}

static void test_host64(_unused_ void **state) {
        static const struct nic_case nics[] = {
                { "eno1", "e1000e", "0000:00:1f.6", "0000:00:1f.6", 4, -1, "0-63", true, true, 1, 1,
                  INVENTORY_MAP_SINGLE },
                { "enp4s0", "igb", "0000:04:00.0", "0000:04:00.0", 5, 0, "0-15,32-47", true, true, 2, 2,
                  INVENTORY_MAP_NAMES },
                { "ens1f0", "i40e", "0000:3b:00.0", "0000:3b:00.0", 2, 0, "0-15,32-47", true, true, 16, 16,
                  INVENTORY_MAP_NAMES },
                { "ens2f0", "mlx5_core", "0000:af:00.0", "0000:af:00.0", 3, 1, "16-31,48-63", true, true, 16, 16,
                  INVENTORY_MAP_NAMES },
                { "lo", "", "", "", 1, -1, "0-63", false, true, 1, 1, INVENTORY_MAP_NONE },
                { "veth0", "", "", "", 6, -1, "0-63", false, false, 1, 1, INVENTORY_MAP_NONE },
        };
        static const struct irq_case irqs[] = {
                { 0, NULL, -1, INVENTORY_IRQ_NONE, "0-63", "0", 0, true },
                { 30, "eno1", 0, INVENTORY_IRQ_RXTX, "1", "1", -1, true },
                { 50, "enp4s0", -1, INVENTORY_IRQ_OTHER, "0-15,32-47", "0", 0, true },
                { 51, "enp4s0", 0, INVENTORY_IRQ_RX, "8", "8", 0, true },
                { 52, "enp4s0", 1, INVENTORY_IRQ_RX, "9", "9", 0, true },
                { 53, "enp4s0", 0, INVENTORY_IRQ_TX, "8", "8", 0, true },
                { 54, "enp4s0", 1, INVENTORY_IRQ_TX, "9", "9", 0, true },
                { 100, "ens1f0", -1, INVENTORY_IRQ_OTHER, "0-15,32-47", "0", 0, true },
                { 101, "ens1f0", 0, INVENTORY_IRQ_RXTX, "0", "0", 0, true },
                { 116, "ens1f0", 15, INVENTORY_IRQ_RXTX, "15", "15", 0, true },
                { 120, "ens2f0", -1, INVENTORY_IRQ_OTHER, "16-31,48-63", "16", 1, true },
                { 121, "ens2f0", 0, INVENTORY_IRQ_RXTX, "16", "16", 1, true },
                { 136, "ens2f0", 15, INVENTORY_IRQ_RXTX, "31", "31", 1, true },
                { 140, NULL, -1, INVENTORY_IRQ_NONE, "20", "20", 1, true },
        };
        struct inventory inv;
        const struct inventory_nic *nic;

        load_fixture("host64", &inv);
        check_nics(&inv, nics, ELEMENTSOF(nics));
        assert_int_equal(inv.n_irqs, 45);
        for (size_t i = 1; i < inv.n_irqs; i++)
                assert_true(inv.irqs[i - 1].irq < inv.irqs[i].irq);
        check_irqs(&inv, irqs, ELEMENTSOF(irqs));
        assert_null(inventory_irq(&inv, 999));
        assert_null(inventory_nic(&inv, "bonding_masters"));
        assert_int_equal(inv.rps_sock_flow_entries, 32768);

        /* every queue of the two 16-queue NICs: one combined vector each */
        for (int q = 0; q < 16; q++) {
                check_queue(&inv, "ens1f0", q, 101 + q, 101 + q);
                check_queue(&inv, "ens2f0", q, 121 + q, 121 + q);
        }
        /* separate rx/tx vectors paired by queue index */
        check_queue(&inv, "enp4s0", 0, 51, 53);
        check_queue(&inv, "enp4s0", 1, 52, 54);
        check_queue(&inv, "eno1", 0, 30, 30);
        check_queue(&inv, "lo", 0, -1, -1);

        /* RPS / RFS / XPS */
        nic = inventory_nic(&inv, "ens1f0");
        assert_true(nic->queues[3].has_rx && nic->queues[3].has_tx && nic->queues[3].has_rps);
        assert_kept("ens1f0 rx-3 rps", &nic->queues[3].rps_cpus, "4-15,32-47");
        assert_int_equal(nic->queues[3].rps_flow_cnt, 2048);
        assert_true(nic->queues[0].has_rps);
        assert_kept("ens1f0 rx-0 rps", &nic->queues[0].rps_cpus, "");
        assert_int_equal(nic->queues[0].rps_flow_cnt, 0);
        assert_true(nic->queues[5].has_xps);
        assert_kept("ens1f0 tx-5 xps", &nic->queues[5].xps_cpus, "5");
        nic = inventory_nic(&inv, "eno1");
        /* the fixture has no statistics files: tolerated, not an error */
        assert_false(nic->has_stats);
        assert_true(nic->rx_packets == 0 && nic->tx_packets == 0);
        assert_true(nic->queues[0].has_rps);
        assert_kept("eno1 rx-0 rps", &nic->queues[0].rps_cpus, "2-31");
        assert_int_equal(nic->queues[0].rps_flow_cnt, 32768);
        assert_false(nic->queues[0].has_xps); /* single queue: xps_cpus unreadable */
        assert_kept("eno1 tx-0 xps", &nic->queues[0].xps_cpus, "");
        inventory_free(&inv);
        assert_int_equal(inv.n_nics, 0);
}

static void test_vm2(_unused_ void **state) {
        static const struct nic_case nics[] = {
                { "ens4", "acmenet", "0000:00:04.0", "0000:00:04.0", 3, -1, "0-3", true, true, 2, 2,
                  INVENTORY_MAP_MSI_ORDER },
                { "eth0", "virtio_net", "virtio2", "0000:00:03.0", 2, -1, "0-3", true, true, 2, 2, INVENTORY_MAP_NAMES },
                { "eth1", "e1000", "0000:00:05.0", "0000:00:05.0", 4, -1, "0-3", true, true, 1, 1, INVENTORY_MAP_SINGLE },
                { "lo", "", "", "", 1, -1, "0-2", false, true, 1, 1, INVENTORY_MAP_NONE },
        };
        static const struct irq_case irqs[] = {
                /* shared INTx line: "uhci_hcd:usb1, eth1" */
                { 11, "eth1", 0, INVENTORY_IRQ_RXTX, "0-3", "2", 0, true },
                { 24, NULL, -1, INVENTORY_IRQ_NONE, "0-3", "1", 0, true },
                { 37, "eth0", -1, INVENTORY_IRQ_OTHER, "0", "0", -1, true },
                { 38, "eth0", 0, INVENTORY_IRQ_RX, "0", "0", -1, true },
                { 39, "eth0", 0, INVENTORY_IRQ_TX, "0", "0", -1, true },
                { 40, "eth0", 1, INVENTORY_IRQ_RX, "1", "1", -1, true },
                { 41, "eth0", 1, INVENTORY_IRQ_TX, "1", "1", -1, true },
                /* unknown names: msi_irqs order, first vector = admin */
                { 44, "ens4", -1, INVENTORY_IRQ_OTHER, "0", "0", -1, true },
                /* only the hex smp_affinity, no effective affinity */
                { 45, "ens4", 0, INVENTORY_IRQ_RXTX, "2", NULL, -1, true },
                /* proc/irq/46 vanished: still mapped, affinity unknown */
                { 46, "ens4", 1, INVENTORY_IRQ_RXTX, "", NULL, -1, false },
        };
        struct inventory inv;

        load_fixture("vm2", &inv);
        check_nics(&inv, nics, ELEMENTSOF(nics));
        assert_int_equal(inv.n_irqs, 10);
        check_irqs(&inv, irqs, ELEMENTSOF(irqs));
        check_queue(&inv, "eth0", 0, 38, 39);
        check_queue(&inv, "eth0", 1, 40, 41);
        check_queue(&inv, "ens4", 0, 45, 45);
        check_queue(&inv, "ens4", 1, 46, 46);
        check_queue(&inv, "eth1", 0, 11, 11);
        /* missing proc/sys/net/core/rps_sock_flow_entries */
        assert_int_equal(inv.rps_sock_flow_entries, 0);
        inventory_free(&inv);
}

/* Names that are not this NIC's, on a device without msi_irqs, and an
 * empty /proc/interrupts: nothing mapped, nothing fails. */
static void test_empty_interrupts(_unused_ void **state) {
        struct procfs_interrupts pi = {};
        struct inventory inv;
        char path[4096];
        int fd = rootfs_open(fixture_path("host64", path, sizeof(path)));

        assert_true(fd >= 0);
        assert_int_equal(inventory_read(fd, &pi, &inv), 0);
        close(fd);
        assert_int_equal(inv.n_irqs, 0);
        assert_int_equal(inv.n_nics, 6);
        for (size_t i = 0; i < inv.n_nics; i++) {
                assert_int_equal(inv.nics[i].map, INVENTORY_MAP_NONE);
                for (size_t q = 0; q < inv.nics[i].n_queues; q++)
                        assert_int_equal(inv.nics[i].queues[q].rx_irq, -1);
        }
        inventory_free(&inv);

        fd = rootfs_open("/nonexistent-irqsteer-root");
        assert_int_equal(fd, -ENOENT);
}

/* ---- live ---- */

static int irq_by_name(const struct procfs_interrupts *pi, const char *name) {
        for (size_t i = 0; i < pi->n_irqs; i++)
                if (pi->irqs[i].numeric && strcmp(pi->irqs[i].name, name) == 0)
                        return (int) pi->irqs[i].irq;
        return -1;
}

static void test_live_host(_unused_ void **state) {
        struct procfs_interrupts pi;
        struct inventory inv;
        const struct inventory_nic *nic;
        char target[512], name[128], path[256];
        const char *bus_id;
        int fd, in_irq, out_irq, r;

        SKIP_UNLESS_ROOT();
        if (readlink("/sys/class/net/eth0/device", target, sizeof(target) - 1) < 0) {
                print_message("[  SKIP    ] %s: this host has no eth0 device\n", __func__);
                skip();
        }
        /* what follows is virtio-net's layout (virtioK-input.N names under
         * a PCI function); other NICs are covered by the fixture trees */
        memset(target, 0, sizeof(target));
        if (readlink("/sys/class/net/eth0/device/driver", target, sizeof(target) - 1) < 0 ||
            strcmp(strrchr(target, '/') ? strrchr(target, '/') + 1 : target, "virtio_net") != 0) {
                print_message("[  SKIP    ] %s: eth0 is not virtio-net (driver '%s')\n", __func__,
                              strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
                skip();
        }
        fd = rootfs_open("/");
        assert_true(fd >= 0);
        assert_int_equal(procfs_interrupts_read(fd, &pi), 0);
        assert_int_equal(inventory_read(fd, &pi, &inv), 0);

        nic = inventory_nic(&inv, "eth0");
        assert_non_null(nic);
        assert_true(nic->has_device);
        assert_string_equal(nic->driver, "virtio_net");
        assert_int_equal(strncmp(nic->bus_id, "virtio", 6), 0);
        assert_int_equal(nic->ifindex, (int) if_nametoindex("eth0"));
        /* the PCI function the virtio device hangs under */
        assert_true(strlen(nic->pci_addr) == 12);
        snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/%s", nic->pci_addr, nic->bus_id);
        assert_int_equal(rootfs_exists(fd, path), 1);
        bus_id = nic->bus_id;
        snprintf(name, sizeof(name), "%s-input.0", bus_id);
        in_irq = irq_by_name(&pi, name);
        snprintf(name, sizeof(name), "%s-output.0", bus_id);
        out_irq = irq_by_name(&pi, name);
        assert_true(in_irq > 0 && out_irq > 0);

        assert_int_equal(nic->map, INVENTORY_MAP_NAMES);
        assert_true(nic->rx_queues >= 1 && nic->n_queues >= 1);
        check_queue(&inv, "eth0", 0, in_irq, out_irq);
        /* packet counters: read, and never ahead of the kernel's */
        assert_true(nic->has_stats);
        for (int k = 0; k < 2; k++) {
                _cleanup_(freep) char *buf = NULL;
                uint64_t v;
                assert_int_equal(rootfs_readf(fd, &buf, NULL, "sys/class/net/eth0/statistics/%s_packets",
                                              k == 0 ? "rx" : "tx"), 0);
                assert_int_equal(util_parse_u64(util_strstrip(buf), (size_t) -1, &v), 0);
                assert_true((k == 0 ? nic->rx_packets : nic->tx_packets) <= v);
                assert_true(v > 0);
        }
        /* and the byte counter beside them */
        assert_true(nic->has_rx_bytes);
        {
                _cleanup_(freep) char *buf = NULL;
                uint64_t v;
                assert_int_equal(rootfs_read(fd, "sys/class/net/eth0/statistics/rx_bytes", &buf, NULL), 0);
                assert_int_equal(util_parse_u64(util_strstrip(buf), (size_t) -1, &v), 0);
                assert_true(nic->rx_bytes > 0 && nic->rx_bytes <= v);
        }
        for (int k = 0; k < 2; k++) {
                int n = k == 0 ? in_irq : out_irq;
                const struct inventory_irq *irq = inventory_irq(&inv, (unsigned) n);
                _cleanup_(freep) char *buf = NULL;
                cpuset_t want;

                assert_non_null(irq);
                assert_int_equal(irq->role, k == 0 ? INVENTORY_IRQ_RX : INVENTORY_IRQ_TX);
                assert_ptr_equal(&inv.nics[irq->nic], nic);
                assert_true(irq->affinity_readable);
                assert_true(irq->has_effective);
                assert_false(cpuset_kept_empty(&irq->affinity));
                assert_int_equal(rootfs_readf(fd, &buf, NULL, "proc/irq/%d/smp_affinity_list", n), 0);
                assert_int_equal(cpuset_parse_list(buf, &want), 0);
                assert_true(cpuset_kept_equal(&irq->affinity, &want));
        }
        snprintf(name, sizeof(name), "%s-config", bus_id);
        r = irq_by_name(&pi, name);
        if (r > 0)
                assert_int_equal(inventory_irq(&inv, (unsigned) r)->role, INVENTORY_IRQ_OTHER);

        /* netlink agrees with sysfs; virtio-net reports combined channels */
        assert_int_equal(inventory_netlink_refresh(&inv), 0);
        nic = inventory_nic(&inv, "eth0");
        assert_int_equal(nic->ifindex, (int) if_nametoindex("eth0"));
        assert_int_equal(nic->combined_channels, nic->rx_queues);
        nic = inventory_nic(&inv, "lo");
        assert_non_null(nic);
        assert_int_equal(nic->ifindex, 1);
        assert_int_equal(nic->map, INVENTORY_MAP_NONE);

        inventory_free(&inv);
        procfs_interrupts_free(&pi);
        close(fd);
}

#define NS_A "isinvA"
#define NS_B "isinvB"
#define VETH_A "isinv0"
#define VETH_B "isinv1"

static int run(const char *cmd) {
        int r = system(cmd);
        return r == -1 ? -errno : WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

static void netns_cleanup(void) {
        run("ip link del " VETH_A " >/dev/null 2>&1; ip netns del " NS_A " >/dev/null 2>&1; "
            "ip netns del " NS_B " >/dev/null 2>&1");
}

static int netns_teardown(_unused_ void **state) {
        netns_cleanup();
        return 0;
}

struct ns_result {
        int r_open, r_irq, r_read, r_nl;
        int found, n_nics, has_device, map, up;
        int rx, tx, n_queues, combined;
        int ifindex, want_ifindex, has_rps;
        /* refreshes through the fds kept open */
        int r_refresh, rps_kept, dir_kept, rps_seen, same_fd, r_shrunk, reread_has_rps, fd_after;
        /* the per-tick check by the queues dir's link count */
        int links_kept, r_counts_same, r_counts_shrunk;
};

/* A refresh reads rx-3/rps_cpus through the fd it keeps and sees a value
 * written by another writer; after `ethtool -L rx 2` it sees the changed
 * queue count, and re-reading the vanished queue drops its fd. */
static void live_refresh(int fd, const struct procfs_interrupts *pi, struct inventory *inv,
                         struct ns_result *res) {
        struct inventory_audit all = { 0 };
        struct inventory_nic *nic = (struct inventory_nic *) inventory_nic(inv, VETH_B);
        struct inventory_queue *q;
        int kept;

        if (!nic || nic->n_queues != 4)
                return;
        q = &nic->queues[3];
        res->r_refresh = inventory_refresh(fd, pi, inv, &all);
        kept = q->fd_rps;
        res->rps_kept = kept > 2;
        /* the queue count is checked by lookups in the kept queues dir */
        res->dir_kept = nic->fd_queues > 2;
        res->links_kept = nic->queues_links == (unsigned long) (2 + nic->rx_queues + nic->tx_queues);
        res->r_counts_same = inventory_queue_counts_changed(fd, inv);
        if (rootfs_write(fd, "sys/class/net/" VETH_B "/queues/rx-3/rps_cpus", "1") < 0 ||
            inventory_refresh(fd, pi, inv, &all) != 0)
                return;
        res->rps_seen = cpuset_kept_only(&q->rps_cpus) == 0;
        res->same_fd = q->fd_rps == kept;
        if (run("ethtool -L " VETH_B " rx 2") != 0)
                return;
        res->r_counts_shrunk = inventory_queue_counts_changed(fd, inv);
        res->r_shrunk = inventory_refresh(fd, pi, inv, &all);
        inventory_reread_queue(fd, nic, q, true);
        res->reread_has_rps = q->has_rps;
        res->fd_after = q->fd_rps;
}

/* In the child: a private mount namespace, network namespace B, and a
 * sysfs mounted there so that /sys/class/net shows B's devices. */
static void ns_child(int out) {
        struct ns_result res = { .r_open = -1 };
        struct procfs_interrupts pi;
        struct inventory inv;
        int nsfd, fd;

        nsfd = open("/run/netns/" NS_B, O_RDONLY | O_CLOEXEC);
        if (nsfd < 0 || unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            setns(nsfd, CLONE_NEWNET) < 0 || mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                res.r_open = -errno;
                goto out;
        }
        fd = rootfs_open("/");
        res.r_open = fd < 0 ? fd : 0;
        if (fd < 0)
                goto out;
        res.r_irq = procfs_interrupts_read(fd, &pi);
        if (res.r_irq < 0)
                goto out;
        res.r_read = inventory_read(fd, &pi, &inv);
        if (res.r_read < 0) {
                procfs_interrupts_free(&pi);
                goto out;
        }
        res.n_nics = (int) inv.n_nics;
        {
                const struct inventory_nic *nic = inventory_nic(&inv, VETH_B);
                if (nic) {
                        res.found = 1;
                        res.has_device = nic->has_device;
                        res.map = nic->map;
                        res.rx = nic->rx_queues;
                        res.tx = nic->tx_queues;
                        res.n_queues = (int) nic->n_queues;
                        res.has_rps = nic->n_queues == 4 && nic->queues[3].has_rps && nic->queues[3].has_rx;
                }
        }
        res.r_nl = inventory_netlink_refresh(&inv);
        {
                const struct inventory_nic *nic = inventory_nic(&inv, VETH_B);
                if (nic) {
                        res.up = nic->up;
                        res.combined = nic->combined_channels;
                        res.ifindex = nic->ifindex;
                }
        }
        res.want_ifindex = (int) if_nametoindex(VETH_B);
        live_refresh(fd, &pi, &inv, &res);
        procfs_interrupts_free(&pi);
        inventory_free(&inv);
        close(fd);
out:
        if (write(out, &res, sizeof(res)) != sizeof(res))
                _exit(2);
        _exit(0);
}

static void test_live_netns(_unused_ void **state) {
        struct ns_result res;
        int pipefd[2], status;
        pid_t pid;
        ssize_t n;

        /* adds two network namespaces and a veth pair to this host */
        SKIP_UNLESS_LIVE();
        /* the queue count is changed by ethtool -L (sh tools/deps.sh test installs it) */
        if (run("command -v ip >/dev/null && command -v ethtool >/dev/null") != 0) {
                print_message("[  SKIP    ] %s: needs ip and ethtool (Debian packages iproute2, ethtool)\n",
                              __func__);
                skip();
        }
        netns_cleanup();
        if (run("ip netns add " NS_A " && ip netns add " NS_B " && "
                "ip link add " VETH_A " numrxqueues 4 numtxqueues 4 type veth peer name " VETH_B
                " numrxqueues 4 numtxqueues 4 && "
                "ip link set " VETH_A " netns " NS_A " && ip link set " VETH_B " netns " NS_B " && "
                "ip -n " NS_A " link set " VETH_A " up && ip -n " NS_B " link set " VETH_B " up") != 0)
                fail_msg("creating the namespaces and the veth pair failed");

        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(pipefd[0]);
                ns_child(pipefd[1]);
        }
        close(pipefd[1]);
        n = read(pipefd[0], &res, sizeof(res));
        close(pipefd[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(n, sizeof(res));

        if (res.r_open || res.r_irq || res.r_read)
                fail_msg("child: setup/open %d, interrupts %d, inventory %d", res.r_open, res.r_irq, res.r_read);
        /* the namespace holds lo and our veth end, nothing of the host */
        assert_int_equal(res.n_nics, 2);
        assert_true(res.found);
        assert_false(res.has_device);
        assert_int_equal(res.map, INVENTORY_MAP_NONE);
        /* sysfs */
        assert_int_equal(res.rx, 4);
        assert_int_equal(res.tx, 4);
        assert_int_equal(res.n_queues, 4);
        assert_true(res.has_rps);
        /* netlink: rtnetlink and ethtool channels (veth: no combined) */
        assert_int_equal(res.r_nl, 0);
        assert_true(res.up);
        assert_int_equal(res.ifindex, res.want_ifindex);
        assert_int_equal(res.combined, 0);
        /* the refreshes through kept fds */
        assert_int_equal(res.r_refresh, 0);
        assert_true(res.rps_kept);
        assert_true(res.dir_kept);
        assert_true(res.rps_seen);
        assert_true(res.same_fd);
        assert_int_equal(res.r_shrunk, 1);
        assert_true(res.links_kept);
        assert_int_equal(res.r_counts_same, 0);
        assert_int_equal(res.r_counts_shrunk, 1);
        assert_false(res.reread_has_rps);
        assert_int_equal(res.fd_after, 0);
}

/* ---- per-tick audit ---- */

static void test_audit_slice(_unused_ void **state) {
        static const struct {
                const char *what;
                size_t n, per_tick, cursor;
                size_t first, count, next;   /* the slice and the cursor after */
                const char *members;         /* '1' for each object in the slice */
        } cases[] = {
                { "no objects", 0, 4, 3, 0, 0, 0, "" },
                { "0: everything", 5, 0, 2, 0, 5, 0, "11111" },
                { "budget covers all", 5, 5, 3, 0, 5, 0, "11111" },
                { "budget above the count", 5, 64, 3, 0, 5, 0, "11111" },
                { "from the start", 10, 3, 0, 0, 3, 3, "1110000000" },
                { "middle", 10, 3, 4, 4, 3, 7, "0000111000" },
                { "wraps past the end", 10, 4, 8, 8, 4, 2, "1100000011" },
                { "cursor beyond a shrunk set", 10, 3, 25, 5, 3, 8, "0000011100" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct inventory_audit a = { .per_tick = cases[i].per_tick, .cursor = cases[i].cursor };
                size_t first, count;
                char got[32] = "";

                inventory_audit_slice(&a, cases[i].n, &first, &count);
                for (size_t k = 0; k < cases[i].n; k++)
                        got[k] = inventory_audit_has(cases[i].n, first, count, k) ? '1' : '0';
                if (first != cases[i].first || count != cases[i].count || a.cursor != cases[i].next ||
                    strcmp(got, cases[i].members) != 0)
                        fail_msg("%s: slice %zu+%zu next %zu members %s, want %zu+%zu next %zu members %s",
                                 cases[i].what, first, count, a.cursor, got, cases[i].first, cases[i].count,
                                 cases[i].next, cases[i].members);
        }
}

/* The host64 fixture's interrupts and inventory; its root fd. */
/* Opens the tree at root and reads its interrupts and inventory. */
static int read_tree(const char *root, struct procfs_interrupts *pi, struct inventory *inv) {
        int fd = rootfs_open(root);

        assert_true(fd >= 0);
        assert_int_equal(procfs_interrupts_read(fd, pi), 0);
        assert_int_equal(inventory_read(fd, pi, inv), 0);
        return fd;
}

static int read_host64(struct procfs_interrupts *pi, struct inventory *inv) {
        char path[4096];

        return read_tree(fixture_path("host64", path, sizeof(path)), pi, inv);
}

/* A refresh reads the slice and the objects marked reread, no others:
 * values overwritten in memory come back only for those. */
static void test_refresh_audit(_unused_ void **state) {
        static const struct {
                const char *what;
                size_t per_tick, cursor;
                unsigned reread_irq;         /* 0: none */
                int reread_queue;            /* of ens1f0, -1: none */
                unsigned n_irqs, n_queues;   /* NIC IRQs / queues read back */
        } cases[] = {
                { "all", 0, 0, 0, -1, 0, 0 },
                { "one object: the first NIC IRQ", 1, 0, 0, -1, 1, 0 },
                { "slice plus a marked IRQ and queue", 1, 0, 51, 5, 2, 1 },
                { "slice in the queues", 2, 1000, 0, -1, 0, 2 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct inventory_audit a = { .per_tick = cases[i].per_tick, .cursor = cases[i].cursor };
                struct procfs_interrupts pi;
                struct inventory inv = {};
                unsigned n_irqs = 0, n_queues = 0, all_irqs = 0, all_queues = 0;
                int fd = read_host64(&pi, &inv);

                for (size_t k = 0; k < inv.n_irqs; k++)
                        if (inv.irqs[k].nic >= 0) {
                                cpuset_kept_free(&inv.irqs[k].affinity);
                                inv.irqs[k].reread = inv.irqs[k].irq == cases[i].reread_irq;
                                all_irqs++;
                        }
                for (size_t n = 0; n < inv.n_nics; n++)
                        for (size_t q = 0; q < inv.nics[n].n_queues; q++) {
                                inv.nics[n].queues[q].rps_flow_cnt = 12345;
                                inv.nics[n].queues[q].reread = strcmp(inv.nics[n].name, "ens1f0") == 0 &&
                                                               (int) q == cases[i].reread_queue;
                                all_queues++;
                        }
                if (cases[i].cursor == 1000)
                        a.cursor = all_irqs; /* the first queue */
                assert_int_equal(inventory_refresh(fd, &pi, &inv, &a), 0);
                for (size_t k = 0; k < inv.n_irqs; k++) {
                        if (inv.irqs[k].nic < 0)
                                continue;
                        n_irqs += !cpuset_kept_empty(&inv.irqs[k].affinity);
                        assert_int_equal(inv.irqs[k].fresh, !cpuset_kept_empty(&inv.irqs[k].affinity));
                        assert_false(inv.irqs[k].reread);
                }
                for (size_t n = 0; n < inv.n_nics; n++)
                        for (size_t q = 0; q < inv.nics[n].n_queues; q++) {
                                n_queues += inv.nics[n].queues[q].rps_flow_cnt != 12345;
                                assert_false(inv.nics[n].queues[q].reread);
                        }
                if (cases[i].per_tick == 0) {
                        if (n_irqs != all_irqs || n_queues != all_queues)
                                fail_msg("%s: read %u/%u IRQs, %u/%u queues", cases[i].what, n_irqs, all_irqs,
                                         n_queues, all_queues);
                } else if (n_irqs != cases[i].n_irqs || n_queues != cases[i].n_queues)
                        fail_msg("%s: read %u IRQs, %u queues, want %u, %u", cases[i].what, n_irqs, n_queues,
                                 cases[i].n_irqs, cases[i].n_queues);
                inventory_free(&inv);
                procfs_interrupts_free(&pi);
                close(fd);
        }
}

/* The per-tick queue count check on a copy of host64 (ens1f0: 16 rx and
 * 16 tx queues): a queue dir added or taken away shows; one more rx and one
 * fewer tx keeps the dir's link count, so it shows only in the refresh of
 * the next full tick. */
static void test_queue_counts(_unused_ void **state) {
        static const struct {
                const char *what;
                const char *add, *take;   /* queue dirs made and moved out */
                int changed, refresh;     /* the per-tick check; inventory_refresh() */
        } cases[] = {
                { "unchanged", NULL, NULL, 0, 0 },
                { "rx queue added", "rx-16", NULL, 1, 1 },
                { "tx queue taken away", NULL, "tx-15", 1, 1 },
                { "one rx more, one tx fewer", "rx-16", "tx-15", 0, 1 },
        };
        char tmpl[] = "/tmp/test-inventory-queues-XXXXXX", src[4096], cmd[8192], q[512], a[600], b[600], t[600];
        char *base = mkdtemp(tmpl);

        assert_non_null(base);
        snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s'", fixture_path("host64", src, sizeof(src)), base);
        assert_int_equal(system(cmd), 0);
        snprintf(q, sizeof(q), "%s/sys/class/net/ens1f0/queues", base);
        snprintf(t, sizeof(t), "%s/taken", base);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct inventory_audit all = { 0 };
                struct procfs_interrupts pi;
                struct inventory inv = {};
                const struct inventory_nic *nic;
                int fd = rootfs_open(base), changed, refresh;

                assert_true(fd >= 0);
                assert_int_equal(procfs_interrupts_read(fd, &pi), 0);
                assert_int_equal(inventory_read(fd, &pi, &inv), 0);
                nic = inventory_nic(&inv, "ens1f0");
                assert_non_null(nic);
                assert_int_equal(nic->rx_queues, 16);
                assert_int_equal(nic->tx_queues, 16);
                /* ext4 and tmpfs count subdirs in a dir's links, as sysfs does */
                assert_int_equal(nic->queues_links, 2 + 16 + 16);
                snprintf(a, sizeof(a), "%s/%s", q, cases[i].add ? cases[i].add : "");
                snprintf(b, sizeof(b), "%s/%s", q, cases[i].take ? cases[i].take : "");
                if (cases[i].add)
                        assert_int_equal(mkdir(a, 0755), 0);
                if (cases[i].take)
                        assert_int_equal(rename(b, t), 0);
                changed = inventory_queue_counts_changed(fd, &inv);
                refresh = inventory_refresh(fd, &pi, &inv, &all);
                if (cases[i].add)
                        assert_int_equal(rmdir(a), 0);
                if (cases[i].take)
                        assert_int_equal(rename(t, b), 0);
                if (changed != cases[i].changed || refresh != cases[i].refresh)
                        fail_msg("%s: check %d, refresh %d; want %d, %d", cases[i].what, changed, refresh,
                                 cases[i].changed, cases[i].refresh);
                inventory_free(&inv);
                procfs_interrupts_free(&pi);
                close(fd);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        assert_int_equal(system(cmd), 0);
}

/* An 8192-CPU host's masks: CPU 8191 is read into the kept sets and
 * read back; a narrower value read later replaces it. */
static void test_wide_sets(_unused_ void **state) {
        char tmpl[] = "/tmp/test-inventory-wide-XXXXXX", src[4096], cmd[8192], mask[256 * 9 + 2], rel[128];
        char *base = mkdtemp(tmpl);
        struct procfs_interrupts pi;
        struct inventory inv = {};
        struct inventory_queue *q;
        struct inventory_irq *irq = NULL;
        cpuset_t want;
        int fd;

        assert_non_null(base);
        snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s'", fixture_path("host64", src, sizeof(src)), base);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(cpuset_parse_list("0,8191", &want), 0);
        assert_int_equal(cpuset_format_mask(&want, 8192, mask, sizeof(mask) - 1), 0);
        strcat(mask, "\n");
        test_write_file(base, "sys/devices/virtual/net/lo/queues/rx-0/rps_cpus", mask);
        test_write_file(base, "sys/devices/virtual/net/lo/queues/tx-0/xps_cpus", mask);
        fd = read_tree(base, &pi, &inv);
        q = inventory_queue(inventory_nic(&inv, "lo"), 0);
        assert_non_null(q);
        assert_true(q->has_rps && q->has_xps);
        assert_true(cpuset_kept_equal(&q->rps_cpus, &want));
        assert_true(cpuset_kept_same(&q->rps_cpus, &q->xps_cpus));
        assert_int_equal(cpuset_kept_next(&q->xps_cpus, 1), 8191);

        for (size_t k = 0; k < inv.n_irqs && !irq; k++)
                if (inv.irqs[k].nic >= 0)
                        irq = &inv.irqs[k];
        assert_non_null(irq);
        snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity_list", irq->irq);
        test_write_file(base, rel, "8191\n");
        snprintf(rel, sizeof(rel), "proc/irq/%u/effective_affinity_list", irq->irq);
        test_write_file(base, rel, "8191\n");
        inventory_reread_irq(fd, irq, false);
        assert_int_equal(cpuset_kept_only(&irq->affinity), 8191);
        assert_int_equal(cpuset_kept_only(&irq->effective), 8191);

        test_write_file(base, "sys/devices/virtual/net/lo/queues/rx-0/rps_cpus", "4\n");
        inventory_reread_queue(fd, inventory_nic(&inv, "lo"), q, true);
        assert_int_equal(cpuset_kept_only(&q->rps_cpus), 2);
        assert_false(cpuset_kept_same(&q->rps_cpus, &q->xps_cpus));
        inventory_free(&inv);
        procfs_interrupts_free(&pi);
        close(fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        assert_int_equal(system(cmd), 0);
}

/* A tx queue whose xps_cpus is listed but fails to read (single-queue
 * devices: ENOENT or EINVAL; here a dangling link, which open() answers
 * with ENOENT) is not read again by a refresh, only by the next discovery. */
static void test_xps_unreadable(_unused_ void **state) {
        char tmpl[] = "/tmp/test-inventory-xps-XXXXXX", src[4096], cmd[8192], f[600];
        char *base = mkdtemp(tmpl);
        struct inventory_audit all = { 0 };
        struct procfs_interrupts pi;
        struct inventory inv = {};
        const struct inventory_queue *q;
        int fd;

        assert_non_null(base);
        snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s'", fixture_path("host64", src, sizeof(src)), base);
        assert_int_equal(system(cmd), 0);
        snprintf(f, sizeof(f), "%s/sys/devices/virtual/net/lo/queues/tx-0/xps_cpus", base);
        assert_int_equal(unlink(f), 0);
        assert_int_equal(symlink("no-such-file", f), 0);
        fd = read_tree(base, &pi, &inv);
        q = inventory_queue(inventory_nic(&inv, "lo"), 0);
        assert_non_null(q);
        assert_true(q->has_tx);
        assert_false(q->has_xps);
        assert_true(q->xps_unreadable);

        /* readable now: a refresh does not look */
        assert_int_equal(unlink(f), 0);
        test_write_file(base, "sys/devices/virtual/net/lo/queues/tx-0/xps_cpus", "1\n");
        assert_int_equal(inventory_refresh(fd, &pi, &inv, &all), 0);
        q = inventory_queue(inventory_nic(&inv, "lo"), 0);
        assert_false(q->has_xps);

        /* the next discovery does */
        inventory_free(&inv);
        inv = (struct inventory) {};
        assert_int_equal(inventory_read(fd, &pi, &inv), 0);
        q = inventory_queue(inventory_nic(&inv, "lo"), 0);
        assert_non_null(q);
        assert_true(q->has_xps);
        assert_false(q->xps_unreadable);
        assert_true(cpuset_kept_isset(&q->xps_cpus, 0));
        inventory_free(&inv);
        procfs_interrupts_free(&pi);
        close(fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        assert_int_equal(system(cmd), 0);
}

/* A refresh re-reads an IRQ's effective CPUs only when its mask has
 * several CPUs (the only case the policy looks at them); discovery and an
 * explicit re-read always do. */
static void test_refresh_effective(_unused_ void **state) {
        struct procfs_interrupts pi;
        struct inventory inv = {};
        unsigned single = 0, spread = 0;
        int fd = read_host64(&pi, &inv);
        cpuset_t far = cpuset_single(4000);

        for (size_t k = 0; k < inv.n_irqs; k++)
                if (inv.irqs[k].nic >= 0) {
                        assert_true(inv.irqs[k].has_effective);
                        assert_int_equal(cpuset_keep(&inv.irqs[k].effective, &far), 0);
                }
        assert_int_equal(inventory_refresh(fd, &pi, &inv, NULL), 0);
        for (size_t k = 0; k < inv.n_irqs; k++) {
                const struct inventory_irq *irq = &inv.irqs[k];

                if (irq->nic < 0)
                        continue;
                assert_true(irq->fresh);
                if (cpuset_kept_only(&irq->affinity) >= 0) {
                        assert_int_equal(cpuset_kept_only(&irq->effective), 4000);
                        single++;
                } else {
                        assert_false(cpuset_kept_isset(&irq->effective, 4000));
                        spread++;
                }
        }
        /* the fixture has NIC IRQs of both kinds */
        assert_true(single > 0 && spread > 0);
        for (size_t k = 0; k < inv.n_irqs; k++)
                if (inv.irqs[k].nic >= 0) {
                        inventory_reread_irq(fd, &inv.irqs[k], false);
                        assert_false(cpuset_kept_isset(&inv.irqs[k].effective, 4000));
                }
        inventory_free(&inv);
        procfs_interrupts_free(&pi);
        close(fd);
}

/* A NIC whose threaded file reads otherwise than discovery saw it makes a
 * refresh ask for a full read: its kthreads came or went.  A value only
 * patched in (a dry run's overlay) does not: the file did not change. */
static void test_refresh_threaded(_unused_ void **state) {
        static const struct {
                const char *what;
                int threaded;         /* as discovery read it (no file in the fixture) */
                bool napis, stale;
                int want;
        } cases[] = {
                { "no threaded file, as discovered", -1, true, false, 0 },
                { "threaded was 0, now no file", 0, true, false, 1 },
                { "no NAPIs: threaded not read", 0, false, false, 0 },
                { "patched by an action (dry run), file as read", -1, true, true, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct procfs_interrupts pi;
                struct inventory inv = {};
                int fd = read_host64(&pi, &inv), r;

                assert_true(inv.n_nics > 0);
                if (cases[i].napis) {
                        inv.nics[0].napis = calloc(1, sizeof(*inv.nics[0].napis));
                        assert_non_null(inv.nics[0].napis);
                        inv.nics[0].n_napis = 1;
                }
                inv.nics[0].threaded = inv.nics[0].threaded_read = cases[i].threaded;
                if (cases[i].stale) {
                        struct knob_key k = { .kind = KNOB_THREADED };
                        cpuset_t none;

                        cpuset_zero(&none);
                        snprintf(k.nic, sizeof(k.nic), "%s", inv.nics[0].name);
                        inventory_set_knob(&inv, &k, &none, 1, false);
                        assert_int_equal(inv.nics[0].threaded, 1);
                        assert_int_equal(inv.nics[0].threaded_read, -1);
                }
                r = inventory_refresh(fd, &pi, &inv, NULL);
                if (r != cases[i].want)
                        fail_msg("%s: refresh %d, want %d", cases[i].what, r, cases[i].want);
                inventory_free(&inv);
                procfs_interrupts_free(&pi);
                close(fd);
        }
}

/* The NAPI kthreads' CPU and start time from proc/PID/stat: what names a
 * thread for an affinity action; a vanished thread reads -1 and 0. */
static void test_napi_kthreads(_unused_ void **state) {
        char tmpl[] = "/tmp/test-inventory-napi-XXXXXX", path[256], cmd[128];
        char *base = mkdtemp(tmpl);
        struct inventory_napi napis[2] = { { .id = 514, .pid = 4242, .cpu = -1 }, { .id = 515, .pid = 4243, .cpu = 7 } };
        struct inventory_queue queues[1] = { { .index = 0, .napi_id = 514, .napi_pid = 4242, .napi_cpu = -1 } };
        struct inventory_nic nic = { .name = "veth0", .napis = napis, .n_napis = 2, .queues = queues, .n_queues = 1 };
        struct inventory inv = { .nics = &nic, .n_nics = 1 };
        int fd;

        assert_non_null(base);
        snprintf(path, sizeof(path), "%s/proc", base);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/proc/4242", base);
        assert_int_equal(mkdir(path, 0755), 0);
        test_write_file(base, "proc/4242/stat",
                        "4242 (napi/veth0-514) S 2 0 0 0 -1 2129984 0 0 0 0 30 770 0 0 20 0 1 0 123456 0 0 "
                        "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
        fd = rootfs_open(base);
        assert_true(fd >= 0);
        inventory_read_napi_cpus(fd, &inv);
        close(fd);
        assert_int_equal(napis[0].cpu, 1);
        assert_true(napis[0].starttime == 123456);
        assert_int_equal(napis[1].cpu, -1);
        assert_true(napis[1].starttime == 0);
        assert_int_equal(queues[0].napi_cpu, 1);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_classify),
                cmocka_unit_test(test_classify_driver),
                cmocka_unit_test(test_audit_slice),
                cmocka_unit_test(test_refresh_audit),
                cmocka_unit_test(test_queue_counts),
                cmocka_unit_test(test_xps_unreadable),
                cmocka_unit_test(test_wide_sets),
                cmocka_unit_test(test_refresh_effective),
                cmocka_unit_test(test_host64),
                cmocka_unit_test(test_vm2),
                cmocka_unit_test(test_empty_interrupts),
                cmocka_unit_test(test_napi_kthreads),
                cmocka_unit_test(test_refresh_threaded),
                cmocka_unit_test(test_live_host),
                cmocka_unit_test_teardown(test_live_netns, netns_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
