/* NIC inventory: network devices, their rx/tx queues, the queue <-> IRQ map
 * (rx and tx IRQ of one queue index paired, or one combined IRQ), RPS/XPS
 * masks, and every numeric IRQ with its affinity.  Built from sysfs and
 * /proc/interrupts names via rootfs; on the live host refined through
 * rtnetlink (libnl-route-3) and ethtool channels (libnl-genl-3). */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "netdev.h"
#include "procfs.h"

enum inventory_irq_role {
        INVENTORY_IRQ_NONE,            /* not a NIC queue IRQ */
        INVENTORY_IRQ_RXTX,            /* combined rx+tx vector of one queue */
        INVENTORY_IRQ_RX,
        INVENTORY_IRQ_TX,
        INVENTORY_IRQ_OTHER,           /* NIC admin/async/config/misc vector: not a queue */
        INVENTORY_IRQ_ROLE_MAX,
        INVENTORY_IRQ_ROLE_INVALID = -1,
};

enum inventory_map_source {
        INVENTORY_MAP_NONE,            /* no IRQs (veth, loopback, ...) */
        INVENTORY_MAP_NAMES,           /* /proc/interrupts names matched a known family */
        INVENTORY_MAP_MSI_ORDER,       /* unknown names: fell back to msi_irqs order (warned) */
        INVENTORY_MAP_SINGLE,          /* single-vector NIC, IRQ named after the device */
        INVENTORY_MAP_NETLINK,         /* the kernel's netdev family: each queue's NAPI named
                                  * its IRQ (inventory_netlink_refresh, Linux 6.8+) */
        INVENTORY_MAP_MAX,
};

struct inventory_irq {
        unsigned irq;
        char name[128];          /* action name from /proc/interrupts */
        int nic;                 /* index into inventory.nics, -1 if none */
        int queue;               /* queue index, -1 if none */
        enum inventory_irq_role role;
        cpuset_t affinity;       /* smp_affinity_list (or smp_affinity) */
        cpuset_t effective;      /* effective_affinity_list (see inventory_refresh) */
        bool has_effective;
        int node;                /* irq/N/node, -1 unknown */
        bool affinity_readable;  /* false: no proc/irq/N (e.g. IRQ vanished) */
        bool reread;             /* inventory_refresh() re-reads it whatever the audit slice */
        bool fresh;              /* masks read by the last inventory_read/refresh */
        /* smp_affinity_list and effective_affinity_list kept open by
         * inventory_refresh() (rootfs_read_held; 0 none, inventory_free closes) */
        int fd_affinity, fd_effective;
};

struct inventory_queue {
        int index;
        bool has_rx, has_tx;     /* rx-N / tx-N directories exist */
        int rx_irq, tx_irq;      /* IRQ numbers, -1 if none; equal for a combined vector */
        cpuset_t rps_cpus;       /* rx-N/rps_cpus */
        uint32_t rps_flow_cnt;   /* rx-N/rps_flow_cnt */
        cpuset_t xps_cpus;       /* tx-N/xps_cpus */
        bool has_rps, has_xps;   /* the files exist and were readable */
        bool xps_unreadable;     /* tx-N/xps_cpus listed but not readable at discovery
                                  * (single-queue devices): not read again until the next */
        bool reread, fresh;      /* as inventory_irq */
        int fd_rps, fd_flow_cnt, fd_xps; /* kept open, as inventory_irq's */
        /* From the kernel's netdev genetlink family (inventory_netlink_refresh;
         * the defaults where it did not answer) */
        bool irq_netlink;        /* rx_irq/tx_irq are the IRQs its NAPIs reported,
                                  * not the NIC's map's guess */
        uint32_t napi_id;        /* the NAPI polling rx-N (tx-N's when rx-N names
                                  * none), 0 none */
        int napi_threaded;       /* that NAPI's enum netdev_threaded, -1 unknown */
        int napi_pid;            /* its polling kthread, 0 none */
        int napi_cpu;            /* CPU that kthread last ran on, -1 unknown
                                  * (inventory_read_napi_cpus) */
        struct netdev_qstats rx_stats, tx_stats; /* queue counters; ifindex 0: none */
};

/* One NAPI instance of a NIC, from the netdev family: with or without a
 * queue naming it (veth binds none to its queues, 6.18). */
struct inventory_napi {
        uint32_t id;
        int irq;                 /* -1: the driver registered none */
        int pid;                 /* polling kthread (threaded NAPI), 0 none */
        int threaded;            /* enum netdev_threaded, -1 unknown */
        int cpu;                 /* CPU the kthread last ran on, -1 unknown */
        unsigned long long starttime; /* the kthread's start time (proc/PID/stat field 22),
                                  * 0 unknown: with pid, names it for an affinity action */
};

struct inventory_nic {
        char name[IF_NAMESIZE];
        int ifindex;             /* 0 when unknown */
        char driver[32];         /* basename of device/driver, "" for virtual */
        char bus_id[64];         /* basename of the device link: "0000:3b:00.0", "virtio2" */
        char pci_addr[32];       /* PCI address of the device or its parent, "" if none */
        int node;                /* device/numa_node, -1 unknown */
        cpuset_t local_cpus;     /* device/local_cpulist (all online if unknown) */
        bool has_device;         /* has a device link (physical or virtio) */
        bool up;                 /* operstate up / IFF_UP from netlink */
        int rx_queues, tx_queues;/* from the queues dir: the kernel's real_num_*_queues */
        int max_rx_queues, max_tx_queues; /* allocated maximum, IFLA_NUM_RX/TX_QUEUES
                                  * (netlink only), -1 unknown */
        int combined_channels;   /* ethtool channels, -1 unknown (no netlink or the
                                  * driver has no channels support) */
        int rx_channels, tx_channels; /* ethtool rx-only / tx-only channels, -1 unknown */
        enum inventory_map_source map;
        struct inventory_queue *queues;
        size_t n_queues;         /* max(rx_queues, tx_queues) */
        /* statistics/rx_packets and tx_packets (counters since the device
         * was created; they may wrap or restart when it is re-created) */
        uint64_t rx_packets, tx_packets;
        bool has_stats;          /* both counters were read */
        uint64_t rx_bytes;       /* statistics/rx_bytes, read with them */
        bool has_rx_bytes;
        /* kept open by inventory_refresh(), as inventory_irq's: the attributes it
         * reads each tick, and the queues dir (O_PATH) it counts queues in */
        int fd_ifindex, fd_flags, fd_rx_packets, fd_tx_packets, fd_rx_bytes, fd_queues, fd_threaded;
        /* the queues dir's link count at discovery, when it counted its
         * rx-/tx- subdirs (2 + rx_queues + tx_queues); 0 otherwise */
        unsigned long queues_links;
        struct inventory_napi *napis;  /* inventory_netdev_apply, in the kernel's order */
        size_t n_napis;
        int threaded;            /* sys/class/net/NIC/threaded: 0 off, 1 on, 2 busy-poll;
                                  * -1 no such file (patched by inventory_set_knob) */
        int threaded_read;       /* ... as discovery read it: inventory_refresh()
                                  * compares the file with this, not with a patched value
                                  * (a dry run's overlay would ask for a full read each tick) */
};

struct inventory {
        struct inventory_nic *nics;
        size_t n_nics;
        struct inventory_irq *irqs;    /* every numeric IRQ in /proc/interrupts, sorted */
        size_t n_irqs;
        uint32_t rps_sock_flow_entries; /* proc/sys/net/core/rps_sock_flow_entries */
        int fd_sock_flow;        /* kept open, as inventory_irq's */
        cpuset_t default_affinity; /* proc/irq/default_smp_affinity: the mask new IRQs get */
        bool has_default_affinity; /* ... was read */
        int fd_default_affinity; /* kept open, as inventory_irq's */
        bool has_netdev;         /* the kernel's netdev family answered: the NAPI
                                  * fields are its word, not defaults */
};

/* Builds the inventory from sys/class/net, the device links, msi_irqs,
 * proc/irq and the names in interrupts (already parsed).  NICs or IRQs that
 * vanish while reading are skipped, not errors (an IRQ whose proc/irq/N is
 * gone stays listed with affinity_readable false).  NICs are sorted by name.
 * Queue IRQs come from the names first (INVENTORY_MAP_NAMES / INVENTORY_MAP_SINGLE); a
 * NIC no name matched but whose PCI function has msi_irqs gets them in
 * ascending order, one per queue, the first skipped as the admin vector
 * when there are more vectors than queues (INVENTORY_MAP_MSI_ORDER: the caller
 * should warn).  Name-matched vectors beyond the queue count keep their
 * queue number but are not in nic->queues. */
int inventory_read(int rootfd, const struct procfs_interrupts *interrupts, struct inventory *ret);
void inventory_free(struct inventory *inv);

/* Which per-object values a refresh re-reads.  The objects are the NIC
 * IRQs (smp_affinity_list + effective_affinity_list) in IRQ order, then
 * every NIC's queues (rps_cpus, rps_flow_cnt, xps_cpus) in NIC and queue
 * order; each refresh audits the next per_tick of them, wrapping, so all
 * are read within ceil(n / per_tick) refreshes. */
struct inventory_audit {
        size_t per_tick;         /* 0: every object on every refresh */
        size_t cursor;           /* first object of the next slice */
};

/* The slice of n objects this refresh audits: objects first .. first +
 * count - 1, modulo n; advances the cursor.  Pure. */
void inventory_audit_slice(struct inventory_audit *a, size_t n, size_t *ret_first, size_t *ret_count);
/* Object k is in the slice (first, count) of n objects.  Pure. */
bool inventory_audit_has(size_t n, size_t first, size_t count, size_t k);

/* Re-reads in place, into an inventory from inventory_read() (with the
 * same interrupts layout), what changes while the devices stay: up and
 * ifindex of every NIC, packet counters of NICs without queue IRQs
 * (INVENTORY_MAP_NONE; has_stats false for the others), rps_sock_flow_entries,
 * default_smp_affinity, and the
 * per-object values (IRQ masks of NIC vectors, RPS/XPS masks and flow
 * counts) of the audit slice (all when audit is NULL) and of the objects
 * marked reread (cleared).  An IRQ's effective CPUs are re-read only when
 * its mask has several CPUs; with one they stay as last read.  Returns 1 without finishing when the layout
 * may have changed (numeric IRQs or their names, the NIC set, a queue
 * count, ifindex or up, the threaded switch of a NIC with NAPIs: its
 * kthreads came or went): the caller then does a full inventory_read(); 0
 * when refreshed; -errno. */
int inventory_refresh(int rootfd, const struct procfs_interrupts *interrupts, struct inventory *inv,
                      struct inventory_audit *audit);
/* Whether a NIC's queue count differs from inv's: `ethtool -L` changes it
 * without any link notification, and the driver resets its IRQ affinities
 * then.  One fstat() of each NIC's kept queues dir (its link count counts
 * the queue dirs), cheap enough for every tick; a change that keeps
 * rx + tx the same shows in inventory_refresh() only.  Two lookups per
 * direction where the filesystem does not count subdirs.  1 changed, 0
 * not, -errno. */
int inventory_queue_counts_changed(int rootfd, const struct inventory *inv);
/* Re-read one object's values now (the refresh's per-object reads). */
void inventory_reread_irq(int rootfd, struct inventory_irq *irq);
void inventory_reread_queue(int rootfd, const struct inventory_nic *nic, struct inventory_queue *q);
/* Queue `index` of a NIC, or NULL. */
struct inventory_queue *inventory_queue(const struct inventory_nic *nic, int index);
/* Shows a value as the current one of the object k names, as a re-read
 * after a successful write would: cpus for an IRQ, RPS/XPS mask or the
 * default affinity, value for a flow count, rps_sock_flow_entries or a
 * NIC's threaded switch (threads are the workers' module's).  With
 * fresh_only only on an object the last read or refresh re-read.  The
 * dry-run overlay (apply_overlay) is laid over each inventory so. */
struct knob_key;
void inventory_set_knob(struct inventory *inv, const struct knob_key *k, const cpuset_t *cpus, uint32_t value,
                        bool fresh_only);

/* Live refinement through netlink: ifindex, link up state (IFF_UP) and the
 * allocated queue counts (rtnetlink IFLA_NUM_RX/TX_QUEUES into max_*_queues;
 * rx_queues/tx_queues stay the sysfs real counts, which the queue array
 * follows), ethtool channels (genl, one dump) and, where the kernel has the
 * netdev family, its queue, NAPI and qstats dumps (inventory_netdev_apply;
 * without it nothing changes and nothing is logged above debug).  Only for the root "/" in
 * the current network namespace; NICs netlink does not know keep their sysfs
 * values.  Drivers without channels support keep -1.  Returns 0, or -errno
 * of the first failing step (values read before it are kept). */
int inventory_netlink_refresh(struct inventory *inv);

/* Applies a netdev dump (netdev_dump) to an inventory: each NIC's NAPIs,
 * per queue its NAPI id, threaded state, kthread PID and counters.  Where a NIC's NAPIs report
 * IRQs, those are its queues' IRQs (irq_netlink; an IRQ record moved to the
 * queue its NAPI serves, a name-mapped vector no queue keeps then OTHER),
 * and the NIC's map is INVENTORY_MAP_NETLINK when every queue IRQ came so.  A NIC
 * whose NAPIs report no IRQ (virtio_net, veth) keeps its map.  Pure. */
void inventory_netdev_apply(struct inventory *inv, const struct netdev_info *info);
/* The CPU each NAPI kthread last ran on, from proc/PID/stat (field 39),
 * into the queues' napi_cpu and the NAPIs' cpu, and its start time into
 * the NAPIs' starttime; -1 and 0 when it is gone or unreadable. */
void inventory_read_napi_cpus(int rootfd, struct inventory *inv);

struct inventory_nic *inventory_nic(const struct inventory *inv, const char *name);
struct inventory_irq *inventory_irq(const struct inventory *inv, unsigned irq);

const char *inventory_irq_role_to_string(enum inventory_irq_role r);
const char *inventory_map_source_to_string(enum inventory_map_source m);

/* Classifies one /proc/interrupts action name against NIC nic_name (driven
 * by driver, whose virtio device is virtio_dev, e.g. "virtio2", and PCI
 * address pci_addr; any may be NULL/""): returns the role and sets
 * *ret_queue (-1 for OTHER), or INVENTORY_IRQ_NONE if the name does not
 * belong to that NIC.  A name equal to the device ("eth0", "virtio2",
 * "virtio2-virtqueues") is RXTX queue 0: the single-vector case;
 * inventory_read demotes it to OTHER when the NIC also has per-queue
 * vectors (igb/ixgbe/bnx2x name their link vector after the device).
 * Names that number the device's vectors rather than the NIC's queues
 * ("mlx4-<EQ>@<addr>", "gve-ntfy-blk<N>@pci:<addr>") are RXTX with that
 * number: inventory_read places them.  Pure. */
enum inventory_irq_role inventory_classify_irq_name(const char *irq_name, const char *nic_name, const char *driver,
                                                    const char *virtio_dev, const char *pci_addr, int *ret_queue);
