/* NIC inventory: devices, queues, the queue <-> IRQ map, RPS/XPS masks and
 * IRQ affinities, from sysfs and /proc/interrupts; refined by netlink. */
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
        INVENTORY_MAP_NETLINK,         /* each queue's NAPI named its IRQ (netdev family, 6.8+) */
        INVENTORY_MAP_MAX,
};

struct inventory_irq {
        unsigned irq;
        char name[128];          /* action name from /proc/interrupts */
        int nic;                 /* index into inventory.nics, -1 if none */
        int queue;               /* queue index, -1 if none */
        enum inventory_irq_role role;
        /* kept: a cpuset_t is 1 kB on any host (bench/README.md, "Big hosts") */
        cpuset_kept_t affinity;  /* smp_affinity_list (or smp_affinity) */
        cpuset_kept_t effective; /* effective_affinity_list (see inventory_refresh) */
        bool has_effective;
        int node;                /* irq/N/node, -1 unknown */
        bool affinity_readable;  /* false: no proc/irq/N (e.g. IRQ vanished) */
        bool reread;             /* inventory_refresh() re-reads it whatever the audit slice */
        bool fresh;              /* masks read by the last inventory_read/refresh */
        int fd_affinity, fd_effective; /* kept open by inventory_refresh(), 0 none */
};

struct inventory_queue {
        int index;
        bool has_rx, has_tx;     /* rx-N / tx-N directories exist */
        int rx_irq, tx_irq;      /* IRQ numbers, -1 if none; equal for a combined vector */
        cpuset_kept_t rps_cpus;  /* rx-N/rps_cpus (kept, as inventory_irq's sets) */
        uint32_t rps_flow_cnt;   /* rx-N/rps_flow_cnt */
        cpuset_kept_t xps_cpus;  /* tx-N/xps_cpus */
        bool has_rps, has_xps;   /* the files exist and were readable */
        bool xps_unreadable;     /* xps_cpus unreadable at discovery (single queue): not retried */
        bool reread, fresh;      /* as inventory_irq */
        int fd_rps, fd_flow_cnt, fd_xps; /* kept open, as inventory_irq's */
        /* From the netdev genetlink family; defaults where it did not answer */
        bool irq_netlink;        /* rx_irq/tx_irq are the IRQs its NAPIs reported */
        uint32_t napi_id;        /* the NAPI polling rx-N (else tx-N), 0 none */
        int napi_threaded;       /* that NAPI's enum netdev_threaded, -1 unknown */
        int napi_pid;            /* its polling kthread, 0 none */
        int napi_cpu;            /* CPU that kthread last ran on, -1 unknown */
        struct netdev_qstats rx_stats, tx_stats; /* queue counters; ifindex 0: none */
};

/* One NAPI of a NIC, from the netdev family, named by a queue or not (veth). */
struct inventory_napi {
        uint32_t id;
        int irq;                 /* -1: the driver registered none */
        int pid;                 /* polling kthread (threaded NAPI), 0 none */
        int threaded;            /* enum netdev_threaded, -1 unknown */
        int cpu;                 /* CPU the kthread last ran on, -1 unknown */
        unsigned long long starttime; /* proc/PID/stat field 22, 0 unknown: names the kthread */
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
        int combined_channels;   /* ethtool channels, -1 unknown */
        enum inventory_map_source map;
        struct inventory_queue *queues;
        size_t n_queues;         /* max(rx_queues, tx_queues) */
        uint64_t rx_packets, tx_packets; /* statistics/: may restart with the device */
        bool has_stats;          /* both counters were read */
        uint64_t rx_bytes;       /* statistics/rx_bytes, read with them */
        bool has_rx_bytes;
        /* kept open by inventory_refresh(); fd_queues is the queues dir (O_PATH) */
        int fd_ifindex, fd_flags, fd_rx_packets, fd_tx_packets, fd_rx_bytes, fd_queues, fd_threaded;
        unsigned long queues_links; /* queues dir's link count when it counts subdirs, else 0 */
        struct inventory_napi *napis;  /* inventory_netdev_apply, in the kernel's order */
        size_t n_napis;
        int threaded;            /* NIC/threaded: 0 off, 1 on, 2 busy-poll, -1 none; may be patched */
        int threaded_read;       /* as discovery read it: what inventory_refresh() compares with */
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
        bool has_netdev;         /* the netdev family answered: NAPI fields are not defaults */
};

/* Builds the inventory from sysfs, proc/irq and the parsed interrupts; what
 * vanishes meanwhile is skipped.  Queue IRQs come from the names, else from
 * msi_irqs order (INVENTORY_MAP_MSI_ORDER: the caller warns). */
int inventory_read(int rootfd, const struct procfs_interrupts *interrupts, struct inventory *ret);
void inventory_free(struct inventory *inv);
/* Frees the kept sets of every IRQ and queue (leaving them empty), not the
 * arrays: inventory_free() does both; for an inventory built by hand. */
void inventory_free_sets(struct inventory *inv);

/* Objects a refresh re-reads: NIC IRQs in IRQ order, then every queue;
 * each refresh takes the next per_tick of them, wrapping. */
struct inventory_audit {
        size_t per_tick;         /* 0: every object on every refresh */
        size_t cursor;           /* first object of the next slice */
};

/* The slice (first, count, modulo n) this refresh audits; advances the cursor. */
void inventory_audit_slice(struct inventory_audit *a, size_t n, size_t *ret_first, size_t *ret_count);
/* Object k is in the slice (first, count) of n objects.  Pure. */
bool inventory_audit_has(size_t n, size_t first, size_t count, size_t k);

/* Re-reads in place what changes while the devices stay, the per-object
 * values of the audit slice (all when NULL) and reread objects.  1 when the
 * layout may have changed (the caller reads anew), 0, or -errno. */
int inventory_refresh(int rootfd, const struct procfs_interrupts *interrupts, struct inventory *inv,
                      struct inventory_audit *audit);
/* Whether a NIC's queue count changed (`ethtool -L` sends no link
 * notification); one fstat() a NIC.  1 changed, 0 not, -errno. */
int inventory_queue_counts_changed(int rootfd, const struct inventory *inv);
/* Re-read one object's values now (the refresh's per-object reads): an
 * IRQ's masks, a queue's RPS/XPS values (with hold through fds kept in it). */
void inventory_reread_irq(int rootfd, struct inventory_irq *irq, bool spread_only);
void inventory_reread_queue(int rootfd, const struct inventory_nic *nic, struct inventory_queue *q, bool hold);
/* Queue `index` of a NIC, or NULL. */
struct inventory_queue *inventory_queue(const struct inventory_nic *nic, int index);
/* Sets the object k names as a re-read after a write would (the dry-run
 * overlay); with fresh_only only on an object the last read re-read. */
struct knob_key;
void inventory_set_knob(struct inventory *inv, const struct knob_key *k, const cpuset_t *cpus, uint32_t value,
                        bool fresh_only);

/* Live refinement through netlink (root "/" only): ifindex, IFF_UP,
 * ethtool channels and the netdev family's dumps where the kernel has it.  0, or -errno of the first failing step. */
int inventory_netlink_refresh(struct inventory *inv);

/* Applies a netdev dump: NAPIs, per-queue NAPI facts and counters.  IRQs
 * the NAPIs report replace the name map (INVENTORY_MAP_NETLINK when all
 * queue IRQs came so).  Pure. */
void inventory_netdev_apply(struct inventory *inv, const struct netdev_info *info);
/* Each NAPI kthread's last CPU and start time from proc/PID/stat; -1 and 0 when gone. */
void inventory_read_napi_cpus(int rootfd, struct inventory *inv);

struct inventory_nic *inventory_nic(const struct inventory *inv, const char *name);
struct inventory_irq *inventory_irq(const struct inventory *inv, unsigned irq);

const char *inventory_irq_role_to_string(enum inventory_irq_role r);
const char *inventory_map_source_to_string(enum inventory_map_source m);

/* Role of one /proc/interrupts action name for a NIC (names may be NULL),
 * the queue in *ret_queue (-1 for OTHER); mlx4/gve give the vector number.  Pure. */
enum inventory_irq_role inventory_classify_irq_name(const char *irq_name, const char *nic_name, const char *driver,
                                                    const char *virtio_dev, const char *pci_addr, int *ret_queue);
