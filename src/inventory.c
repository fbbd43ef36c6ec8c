/* NIC inventory from sysfs, proc/irq and the names in /proc/interrupts. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inventory.h"
#include "knob.h"
#include "log.h"
#include "procfs.h"
#include "rootfs.h"
#include "util.h"

/* ---- the pure name classifier ---- */

/* s begins with prefix; returns the rest or NULL. */
static const char *skip_prefix(const char *s, const char *prefix) {
        size_t n = strlen(prefix);
        return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* pci_addr occurs in name as a whole token ("i40e-0000:3b:00.0:misc"). */
static bool contains_pci_token(const char *name, const char *pci_addr) {
        size_t n = strlen(pci_addr);

        for (const char *p = strstr(name, pci_addr); p; p = strstr(p + 1, pci_addr)) {
                /* "10000:3b:00.0" (a VMD domain) must not match "0000:3b:00.0" */
                bool left = p == name || !isxdigit((unsigned char) p[-1]);
                bool right = !isxdigit((unsigned char) p[n]);
                if (left && right)
                        return true;
        }
        return false;
}

/* The part of an IRQ name after the device name: "-TxRx-3" etc. */
static enum inventory_irq_role classify_dev_suffix(const char *rest, int *ret_queue) {
        static const struct {
                const char *suffix;
                enum inventory_irq_role role;
        } families[] = {
                { "-TxRx-", INVENTORY_IRQ_RXTX },  /* ixgbe, igb, i40e, ice, bnxt */
                { "-Tx-Rx-", INVENTORY_IRQ_RXTX }, /* ena */
                { "-fp-", INVENTORY_IRQ_RXTX },    /* bnx2x, qede */
                { "-rxtx-", INVENTORY_IRQ_RXTX },  /* vmxnet3 (buddy-shared), nfp, octeontx2, thunder nicvf */
                { "-rx-", INVENTORY_IRQ_RX },      /* e1000e, igb/ixgbe without pairing */
                { "-tx-", INVENTORY_IRQ_TX },
                { "-Rx", INVENTORY_IRQ_RX },       /* cxgb4 (cfg_queues_uld "%s-Rx%d") */
        };

        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                if (util_parse_numbered(rest, families[i].suffix, "", ret_queue))
                        return families[i].role;
        }
        return INVENTORY_IRQ_NONE;
}

static enum inventory_irq_role found(enum inventory_irq_role role, int q, int *ret_queue) {
        *ret_queue = q;
        return role;
}

/* tg3_request_irq(): "<dev>-txrx-k", "-tx-k", "-rx-k", "<dev>-k" with no
 * ring.  With RSS napi[0] has no rx ring (tg3_mem_rx_acquire), with TSS no
 * tx ring (tg3_mem_tx_acquire): vector k >= 1 serves ring k - 1. */
static enum inventory_irq_role classify_tg3(const char *rest, int *ret_queue) {
        int k;

        if (util_parse_numbered(rest, "-txrx-", "", &k) && k >= 1)
                return found(INVENTORY_IRQ_RXTX, k - 1, ret_queue);
        if (util_parse_numbered(rest, "-rx-", "", &k) && k >= 1)
                return found(INVENTORY_IRQ_RX, k - 1, ret_queue);
        if (util_parse_numbered(rest, "-tx-", "", &k) && k == 0)
                return found(INVENTORY_IRQ_TX, 0, ret_queue);
        if (util_parse_numbered(rest, "-", "", &k))
                return found(INVENTORY_IRQ_OTHER, -1, ret_queue);
        return INVENTORY_IRQ_NONE;
}

/* ionic_request_irq(): "ionic-<dev>-L<lif>-rx<N>" serves tx queue N too
 * unless "-L<lif>-tx<N>" exists (split interrupts). */
static enum inventory_irq_role classify_ionic(const char *rest, int *ret_queue) {
        const char *p = skip_prefix(rest, "-L");

        if (!p || !isdigit((unsigned char) *p))
                return INVENTORY_IRQ_NONE;
        while (isdigit((unsigned char) *p))
                p++;
        if (util_parse_numbered(p, "-rx", "", ret_queue))
                return INVENTORY_IRQ_RXTX;
        if (util_parse_numbered(p, "-tx", "", ret_queue))
                return INVENTORY_IRQ_TX;
        return INVENTORY_IRQ_NONE;
}

/* sfc efx_get_channel_name(): "<dev>-N" combined channel N, "-rx-N"/"-tx-N";
 * "-xdp-N" and "-ptp" hold no netdev queue. */
static enum inventory_irq_role classify_sfc(const char *rest, int *ret_queue) {
        int k;

        if (util_parse_numbered(rest, "-", "", &k))
                return found(INVENTORY_IRQ_RXTX, k, ret_queue);
        if (util_parse_numbered(rest, "-xdp-", "", &k) || strcmp(rest, "-ptp") == 0)
                return found(INVENTORY_IRQ_OTHER, -1, ret_queue);
        return INVENTORY_IRQ_NONE;
}

/* Vectors serving no queue: one word of letters ("-lsc", "-exn", "-err"),
 * vmxnet3's "-event-N", i40e's "-fdir-TxRx-N".  A number alone may be a
 * queue: left to the msi_irqs order. */
static bool is_admin_suffix(const char *rest) {
        int k;

        if (rest[0] != '-' || !rest[1])
                return false;
        if (util_parse_numbered(rest, "-event-", "", &k) || skip_prefix(rest, "-fdir-"))
                return true;
        for (const char *p = rest + 1; *p; p++)
                if (!isalpha((unsigned char) *p) && *p != '_')
                        return false;
        return true;
}

/* "<prefix><N><at><pci_addr>": mlx5 comp_irq_request() "mlx5_comp<N>@pci:"
 * is channel N's, MANA mana_gd_setup_irqs() "mana_q<N>@pci:" queue N's. */
static bool parse_at(const char *irq_name, const char *prefix, const char *at, const char *pci_addr, int *ret_queue) {
        char rest[64];

        snprintf(rest, sizeof(rest), "%s%s", at, pci_addr);
        return util_parse_numbered(irq_name, prefix, rest, ret_queue);
}

enum inventory_irq_role inventory_classify_irq_name(const char *irq_name, const char *nic_name, const char *driver,
                                                    const char *virtio_dev, const char *pci_addr, int *ret_queue) {
        /* Intel drivers put their name before the netdev's. */
        static const char *const driver_prefixes[] = { "i40e-", "ice-", "iavf-" };
        enum inventory_irq_role role;
        const char *rest;
        int q = -1;

        if (!irq_name || !irq_name[0])
                return INVENTORY_IRQ_NONE;
        driver = driver ? driver : "";

        if (nic_name && nic_name[0]) {
                rest = skip_prefix(irq_name, nic_name);
                if (rest && rest[0] == 0)
                        return found(INVENTORY_IRQ_RXTX, 0, ret_queue);
                if (rest && rest[0] == '-') {
                        if (strcmp(driver, "tg3") == 0)
                                role = classify_tg3(rest, &q);
                        else if (strcmp(driver, "sfc") == 0 && (role = classify_sfc(rest, &q)) != INVENTORY_IRQ_NONE)
                                ;
                        else
                                role = classify_dev_suffix(rest, &q);
                        if (role != INVENTORY_IRQ_NONE)
                                return found(role, q, ret_queue);
                        if (is_admin_suffix(rest))
                                return found(INVENTORY_IRQ_OTHER, -1, ret_queue);
                }
                rest = skip_prefix(irq_name, "ionic-");
                if (rest && (rest = skip_prefix(rest, nic_name)) && (role = classify_ionic(rest, &q)) != INVENTORY_IRQ_NONE)
                        return found(role, q, ret_queue);
                for (size_t i = 0; i < ELEMENTSOF(driver_prefixes); i++) {
                        rest = skip_prefix(irq_name, driver_prefixes[i]);
                        if (rest)
                                rest = skip_prefix(rest, nic_name);
                        if (rest && rest[0] && (role = classify_dev_suffix(rest, &q)) != INVENTORY_IRQ_NONE)
                                return found(role, q, ret_queue);
                }
        }

        if (virtio_dev && virtio_dev[0] && (rest = skip_prefix(irq_name, virtio_dev))) {
                /* virtio_pci: "virtioK-input.N"/"-output.N"; one shared
                 * "virtioK-virtqueues" or INTx "virtioK" serves all */
                if (rest[0] == 0 || strcmp(rest, "-virtqueues") == 0)
                        return found(INVENTORY_IRQ_RXTX, 0, ret_queue);
                if (util_parse_numbered(rest, "-input.", "", &q))
                        return found(INVENTORY_IRQ_RX, q, ret_queue);
                if (util_parse_numbered(rest, "-output.", "", &q))
                        return found(INVENTORY_IRQ_TX, q, ret_queue);
                if (rest[0] == '-') /* config, control, anything else of it */
                        return found(INVENTORY_IRQ_OTHER, -1, ret_queue);
        }

        if (pci_addr && pci_addr[0]) {
                char prefix[64];

                /* hns3_nic_init_irq(): "hns3-<addr>-TxRx-<2k>" (the index
                 * counts twice a combined vector), "-Rx-k", "-Tx-k" */
                snprintf(prefix, sizeof(prefix), "hns3-%s", pci_addr);
                if ((rest = skip_prefix(irq_name, prefix)) && rest[0] == '-') {
                        if (util_parse_numbered(rest, "-TxRx-", "", &q) && q % 2 == 0)
                                return found(INVENTORY_IRQ_RXTX, q / 2, ret_queue);
                        if (util_parse_numbered(rest, "-Rx-", "", &q))
                                return found(INVENTORY_IRQ_RX, q, ret_queue);
                        if (util_parse_numbered(rest, "-Tx-", "", &q))
                                return found(INVENTORY_IRQ_TX, q, ret_queue);
                }
                /* gve_alloc_notify_blocks(): block N, placed by inventory_read */
                if (parse_at(irq_name, "mlx5_comp", "@pci:", pci_addr, &q) ||
                    parse_at(irq_name, "mana_q", "@pci:", pci_addr, &q) ||
                    parse_at(irq_name, "gve-ntfy-blk", "@pci:", pci_addr, &q))
                        return found(INVENTORY_IRQ_RXTX, q, ret_queue);
                /* mlx4_init_eq_table(): EQ N, split between ports by inventory_read */
                if (parse_at(irq_name, "mlx4-", "@", pci_addr, &q) && q >= 1)
                        return found(INVENTORY_IRQ_RXTX, q, ret_queue);
                /* mlx5_async@pci:, ena-mgmnt@pci:, mana_hwc@pci:, gve-mgmnt@pci:,
                 * i40e-0000:3b:00.0:misc */
                if (contains_pci_token(irq_name, pci_addr))
                        return found(INVENTORY_IRQ_OTHER, -1, ret_queue);
        }
        return INVENTORY_IRQ_NONE;
}

const char *inventory_irq_role_to_string(enum inventory_irq_role r) {
        static const char *const names[INVENTORY_IRQ_ROLE_MAX] = {
                [INVENTORY_IRQ_NONE] = "none", [INVENTORY_IRQ_RXTX] = "rxtx", [INVENTORY_IRQ_RX] = "rx",
                [INVENTORY_IRQ_TX] = "tx",     [INVENTORY_IRQ_OTHER] = "other",
        };
        return r >= 0 && r < INVENTORY_IRQ_ROLE_MAX ? names[r] : NULL;
}

const char *inventory_map_source_to_string(enum inventory_map_source m) {
        static const char *const names[INVENTORY_MAP_MAX] = {
                [INVENTORY_MAP_NONE] = "none",
                [INVENTORY_MAP_NAMES] = "names",
                [INVENTORY_MAP_MSI_ORDER] = "msi-order",
                [INVENTORY_MAP_SINGLE] = "single",
                [INVENTORY_MAP_NETLINK] = "netlink",
        };
        return m >= 0 && m < INVENTORY_MAP_MAX ? names[m] : NULL;
}

/* ---- reading ---- */

void inventory_read_napi_cpus(int rootfd, struct inventory *inv) {
        for (size_t n = 0; n < inv->n_nics; n++) {
                struct inventory_nic *nic = &inv->nics[n];

                for (size_t k = 0; k < nic->n_napis; k++) {
                        struct inventory_napi *na = &nic->napis[k];
                        struct procfs_pid_stat st;
                        char path[48], buf[1024];
                        size_t len;

                        /* -1 and 0 when the kthread is gone or its stat does not read */
                        snprintf(path, sizeof(path), "proc/%d/stat", na->pid);
                        bool ok = na->pid > 0 && rootfs_read_small(rootfd, path, buf, sizeof(buf), &len) == 0 &&
                                  procfs_parse_pid_stat(buf, len, &st) == 0 && st.processor >= 0;
                        na->cpu = ok ? st.processor : -1;
                        na->starttime = ok ? st.starttime : 0;
                }
                for (size_t q = 0; q < nic->n_queues; q++) {
                        struct inventory_queue *qu = &nic->queues[q];

                        qu->napi_cpu = -1;
                        for (size_t k = 0; k < nic->n_napis; k++)
                                if (nic->napis[k].id == qu->napi_id && nic->napis[k].pid == qu->napi_pid)
                                        qu->napi_cpu = nic->napis[k].cpu;
                }
        }
}

/* Copies src into dst[len], truncating. */
static void copy_str(char *dst, size_t len, const char *src) {
        size_t n = strnlen(src, len - 1);
        memcpy(dst, src, n);
        dst[n] = 0;
}

/* Per-NIC facts needed while mapping, not kept in the result. */
struct nic_scratch {
        int dev_port;             /* port of a multi-port function, 0 unknown */
        char virtio_dev[64];
        char pcidir[64];          /* "device" or "device/..": the PCI function */
        unsigned *msi;            /* device's msi_irqs, sorted */
        size_t n_msi;
};

static bool is_pci_addr(const char *s) {
        unsigned dom, bus, dev, fn;
        char tail;
        size_t n = strlen(s);

        /* DDDD:BB:DD.F; VMD domains have more than four digits. */
        if (n < 12 || n > 16 || strspn(s, "0123456789abcdefABCDEF:.") != n)
                return false;
        if (sscanf(s, "%x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) != 4)
                return false;
        return s[n - 8] == ':' && s[n - 5] == ':' && s[n - 2] == '.';
}

static int cmp_unsigned(const void *a, const void *b) {
        unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;
        return (x > y) - (x < y);
}

/* Lists the numeric entries of a directory (msi_irqs) sorted. */
static int read_number_dir(int rootfd, const char *path, unsigned **ret, size_t *ret_n) {
        size_t n = 0, allocated = 0;
        unsigned *v = NULL;
        struct dirent *de;
        DIR *d;
        int r;

        *ret = NULL;
        *ret_n = 0;
        r = rootfs_fdopendir(rootfd, path, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                uint64_t x;
                if (util_parse_u64(de->d_name, (size_t) -1, &x) < 0 || x > UINT32_MAX)
                        continue;
                r = util_grow((void **) &v, &allocated, n + 1, sizeof(*v));
                if (r < 0)
                        break;
                v[n++] = (unsigned) x;
        }
        closedir(d);
        if (r < 0) {
                free(v);
                return r;
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), cmp_unsigned);
        *ret = v;
        *ret_n = n;
        return 0;
}

/* A small file into buf when it fits (no allocation per tick), else into
 * a malloc'd *heap; through *fd when non-NULL. */
static int read_text(int rootfd, const char *path, int *fd, char *buf, size_t size, char **heap, char **ret) {
        int r = fd ? rootfs_read_held(rootfd, path, fd, buf, size, NULL)
                   : rootfs_read_small(rootfd, path, buf, size, NULL);

        if (r == -ENOBUFS) {
                r = rootfs_read(rootfd, path, heap, NULL);
                if (r < 0)
                        return r;
                *ret = *heap;
                return 0;
        }
        *ret = buf;
        return r;
}

/* A hex-mask file (rps_cpus, xps_cpus, smp_affinity). */
static int read_mask(int rootfd, const char *path, int *fd, cpuset_t *ret) {
        _cleanup_(freep) char *heap = NULL;
        char buf[512], *text;
        int r;

        r = read_text(rootfd, path, fd, buf, sizeof(buf), &heap, &text);
        if (r < 0)
                return r;
        return cpuset_parse_mask(util_strstrip(text), ret);
}

/* One line as rootfs_read_line, through *fd when non-NULL. */
static int read_line_held(int rootfd, const char *path, int *fd, char *buf, size_t len) {
        size_t n;
        int r;

        if (!fd)
                return rootfs_read_line(rootfd, path, buf, len);
        r = rootfs_read_held(rootfd, path, fd, buf, len, &n);
        if (r < 0)
                return r;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                buf[--n] = 0;
        return 0;
}

/* A decimal file, through *fd when non-NULL; false (*ret untouched) when
 * it does not read or parse. */
static bool read_u64(int rootfd, const char *path, int *fd, uint64_t *ret) {
        char line[64];

        return read_line_held(rootfd, path, fd, line, sizeof(line)) == 0 &&
               util_parse_u64(util_strstrip(line), (size_t) -1, ret) == 0;
}

static bool read_int(int rootfd, const char *path, int *fd, int *ret) {
        char line[64];

        return read_line_held(rootfd, path, fd, line, sizeof(line)) == 0 &&
               util_parse_int(util_strstrip(line), (size_t) -1, ret) == 0;
}

static void read_u32(int rootfd, const char *path, int *fd, uint32_t *ret) {
        uint64_t v;

        if (read_u64(rootfd, path, fd, &v) && v <= UINT32_MAX)
                *ret = (uint32_t) v;
}

/* rps_sock_flow_entries and default_smp_affinity, with hold through kept fds. */
static void read_globals(int rootfd, struct inventory *inv, bool hold) {
        inv->rps_sock_flow_entries = 0;
        read_u32(rootfd, KNOB_SOCKFLOW_PATH, hold ? &inv->fd_sock_flow : NULL, &inv->rps_sock_flow_entries);
        inv->has_default_affinity = read_mask(rootfd, KNOB_DEFAFF_PATH, hold ? &inv->fd_default_affinity : NULL,
                                              &inv->default_affinity) == 0;
        if (!inv->has_default_affinity)
                cpuset_zero(&inv->default_affinity);
}

/* Stores what a read of result r gave in k; a failed read or -ENOMEM
 * leaves k empty.  Whether k holds a read value. */
static bool keep_read(int r, const cpuset_t *s, cpuset_kept_t *k) {
        if (r == 0 && cpuset_keep(k, s) == 0)
                return true;
        cpuset_kept_free(k);
        return false;
}

/* Reads a cpulist file, or the hex-mask file beside it. */
static int read_cpus(int rootfd, const char *list_path, const char *mask_path, int *fd, cpuset_t *ret) {
        _cleanup_(freep) char *heap = NULL;
        char buf[512], *text;
        int r;

        r = read_text(rootfd, list_path, fd, buf, sizeof(buf), &heap, &text);
        if (r == 0)
                return cpuset_parse_list(text, ret);
        if (r != -ENOENT || !mask_path)
                return r;
        return read_mask(rootfd, mask_path, NULL, ret);
}

/* With spread_only the effective CPUs are read only for a mask of several
 * CPUs: the policy consults them only then. */
void inventory_reread_irq(int rootfd, struct inventory_irq *irq, bool spread_only) {
        char lp[64], mp[64], ep[64], emp[64];
        cpuset_t s;
        int r;

        knob_irq_path(lp, sizeof(lp), irq->irq, KNOB_IRQ_LIST);
        knob_irq_path(mp, sizeof(mp), irq->irq, KNOB_IRQ_MASK);
        knob_irq_path(ep, sizeof(ep), irq->irq, KNOB_IRQ_EFFECTIVE_LIST);
        knob_irq_path(emp, sizeof(emp), irq->irq, KNOB_IRQ_EFFECTIVE_MASK);

        /* a missing proc/irq/N: the IRQ went away, nothing to steer; a NIC
         * vector's files are kept open (re-read every few ticks) */
        r = read_cpus(rootfd, lp, mp, irq->nic >= 0 ? &irq->fd_affinity : NULL, &s);
        irq->affinity_readable = keep_read(r, &s, &irq->affinity);
        irq->fresh = true;
        if (spread_only && irq->affinity_readable && cpuset_kept_only(&irq->affinity) >= 0)
                return;
        r = read_cpus(rootfd, ep, emp, irq->nic >= 0 ? &irq->fd_effective : NULL, &s);
        irq->has_effective = keep_read(r, &s, &irq->effective);
}

static int cmp_irq(const void *a, const void *b) {
        const struct inventory_irq *x = a, *y = b;
        return (x->irq > y->irq) - (x->irq < y->irq);
}

static int read_irqs(int rootfd, const struct procfs_interrupts *pi, struct inventory *inv) {
        size_t n = 0;

        inv->irqs = calloc(pi->n_irqs ? pi->n_irqs : 1, sizeof(*inv->irqs));
        if (!inv->irqs)
                return -ENOMEM;
        for (size_t i = 0; i < pi->n_irqs; i++) {
                struct inventory_irq *irq;
                char path[64];

                if (!pi->irqs[i].numeric)
                        continue;
                irq = &inv->irqs[n++];
                irq->irq = pi->irqs[i].irq;
                copy_str(irq->name, sizeof(irq->name), pi->irqs[i].name);
                irq->nic = -1;
                irq->queue = -1;
                inventory_reread_irq(rootfd, irq, false);
                knob_irq_path(path, sizeof(path), irq->irq, "node");
                if (!read_int(rootfd, path, NULL, &irq->node))
                        irq->node = -1;
        }
        inv->n_irqs = n;
        qsort(inv->irqs, n, sizeof(*inv->irqs), cmp_irq);
        return 0;
}

/* Closes what a NIC keeps open and frees its queues. */
static void nic_free(struct inventory_nic *nic) {
        for (size_t q = 0; q < nic->n_queues; q++) {
                cpuset_kept_free(&nic->queues[q].rps_cpus);
                cpuset_kept_free(&nic->queues[q].xps_cpus);
                rootfs_release(&nic->queues[q].fd_rps);
                rootfs_release(&nic->queues[q].fd_flow_cnt);
                rootfs_release(&nic->queues[q].fd_xps);
        }
        free(nic->queues);
        nic->queues = NULL;
        nic->n_queues = 0;
        free(nic->napis);
        nic->napis = NULL;
        nic->n_napis = 0;
        int *fds[] = { &nic->fd_ifindex, &nic->fd_flags, &nic->fd_rx_packets, &nic->fd_tx_packets,
                       &nic->fd_rx_bytes, &nic->fd_queues, &nic->fd_threaded };
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                rootfs_release(fds[i]);
}

/* The rx-N and tx-N entries of a NIC's queues dir: how many, and the
 * highest N of each (-1 for none). */
static int count_queue_dirs(int rootfd, const char *name, int *ret_rx, int *ret_tx, int *ret_max_rx,
                            int *ret_max_tx) {
        char path[64];
        struct dirent *de;
        DIR *d;
        int q, r;

        *ret_rx = *ret_tx = 0;
        *ret_max_rx = *ret_max_tx = -1;
        snprintf(path, sizeof(path), "sys/class/net/%s/queues", name);
        r = rootfs_fdopendir(rootfd, path, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                if (util_parse_numbered(de->d_name, "rx-", "", &q)) {
                        (*ret_rx)++;
                        *ret_max_rx = MAX(*ret_max_rx, q);
                } else if (util_parse_numbered(de->d_name, "tx-", "", &q)) {
                        (*ret_tx)++;
                        *ret_max_tx = MAX(*ret_max_tx, q);
                }
        }
        closedir(d);
        return 0;
}

static int read_queues(int rootfd, struct inventory_nic *nic) {
        char path[512];
        int max_rx, max_tx, r;

        r = count_queue_dirs(rootfd, nic->name, &nic->rx_queues, &nic->tx_queues, &max_rx, &max_tx);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "sys/class/net/%s/queues", nic->name);

        /* numbered densely from 0 (sized by the highest index to be safe);
         * dense, the refresh counts them by lookups (same_queue_count) */
        if (nic->rx_queues == max_rx + 1 && nic->tx_queues == max_tx + 1 &&
            rootfs_hold_dir(rootfd, path, &nic->fd_queues) >= 0) {
                struct stat st;

                /* sysfs, tmpfs and ext4 give a dir 2 + its subdirs links */
                if (fstat(nic->fd_queues, &st) == 0 &&
                    st.st_nlink == (nlink_t) (2 + nic->rx_queues + nic->tx_queues))
                        nic->queues_links = st.st_nlink;
        }
        nic->n_queues = (size_t) (MAX(max_rx, max_tx) + 1);
        if (nic->n_queues == 0)
                return 0;
        if (nic->n_queues > 65536)
                return -EBADMSG;
        nic->queues = calloc(nic->n_queues, sizeof(*nic->queues));
        if (!nic->queues)
                return -ENOMEM;
        for (size_t i = 0; i < nic->n_queues; i++) {
                struct inventory_queue *q = &nic->queues[i];

                q->index = (int) i;
                q->rx_irq = q->tx_irq = -1;
                q->napi_threaded = NETDEV_THREADED_UNKNOWN;
                q->napi_cpu = -1;
                q->has_rx = rootfs_exists(rootfd, knob_queue_path(path, sizeof(path), nic->name, false, i, "")) > 0;
                q->has_tx = rootfs_exists(rootfd, knob_queue_path(path, sizeof(path), nic->name, true, i, "")) > 0;
                inventory_reread_queue(rootfd, nic, q, false);
        }
        return 0;
}

/* A queue whose has_rx/has_tx are known; hold: what inventory_refresh() re-reads. */
void inventory_reread_queue(int rootfd, const struct inventory_nic *nic, struct inventory_queue *q, bool hold) {
        char path[512];
        size_t i = (size_t) q->index;
        cpuset_t s;
        int r;

        q->has_rps = q->has_xps = false;
        q->rps_flow_cnt = 0;
        if (q->has_rx) {
                knob_queue_path(path, sizeof(path), nic->name, false, i, KNOB_RPS_FILE);
                r = read_mask(rootfd, path, hold ? &q->fd_rps : NULL, &s);
                q->has_rps = keep_read(r, &s, &q->rps_cpus);
                knob_queue_path(path, sizeof(path), nic->name, false, i, KNOB_FLOWCNT_FILE);
                read_u32(rootfd, path, hold ? &q->fd_flow_cnt : NULL, &q->rps_flow_cnt);
        }
        if (!q->has_rps)
                cpuset_kept_free(&q->rps_cpus);
        /* single-queue devices list the file but fail its read: not retried */
        if (q->has_tx && !(hold && q->xps_unreadable)) {
                knob_queue_path(path, sizeof(path), nic->name, true, i, KNOB_XPS_FILE);
                r = read_mask(rootfd, path, hold ? &q->fd_xps : NULL, &s);
                q->has_xps = keep_read(r, &s, &q->xps_cpus);
                if (!hold)
                        q->xps_unreadable = r == -ENOENT || r == -EINVAL;
        }
        if (!q->has_xps)
                cpuset_kept_free(&q->xps_cpus);
        q->fresh = true;
}

/* The parent of the device from the canonical path of the net device:
 * sys/class/net/X -> ../../devices/.../<parent>/<device>/net/X. */
static void parent_of_device(int rootfd, const char *name, const char *bus_id, char *ret, size_t len) {
        char path[64], target[1024], *comp[64];
        size_t n = 0;

        ret[0] = 0;
        snprintf(path, sizeof(path), "sys/class/net/%s", name);
        if (rootfs_readlink(rootfd, path, target, sizeof(target)) < 0)
                return;
        for (char *save = NULL, *c = strtok_r(target, "/", &save); c && n < ELEMENTSOF(comp);
             c = strtok_r(NULL, "/", &save))
                comp[n++] = c;
        if (n < 4 || strcmp(comp[n - 1], name) != 0 || strcmp(comp[n - 2], "net") != 0 ||
            strcmp(comp[n - 3], bus_id) != 0)
                return;
        copy_str(ret, len, comp[n - 4]);
}

/* sys/class/net/NAME/leaf into path (128 bytes). */
static const char *nic_file(char *path, const struct inventory_nic *nic, const char *leaf) {
        snprintf(path, 128, "sys/class/net/%s/%s", nic->name, leaf);
        return path;
}

static void read_nic_device(int rootfd, const cpuset_t *online, struct inventory_nic *nic, struct nic_scratch *s) {
        char target[1024], parent[128], line[64], path[512], lp[512], mp[512];

        nic->node = -1;
        nic->local_cpus = *online;
        if (rootfs_readlink(rootfd, nic_file(path, nic, "device"), target, sizeof(target)) < 0)
                return;
        nic->has_device = true;
        copy_str(nic->bus_id, sizeof(nic->bus_id), basename(target));
        (void) read_int(rootfd, nic_file(path, nic, "dev_port"), NULL, &s->dev_port); /* 0 unless it reads */
        if (rootfs_readlink(rootfd, nic_file(path, nic, "device/driver"), target, sizeof(target)) == 0)
                copy_str(nic->driver, sizeof(nic->driver), basename(target));
        if (util_parse_numbered(nic->bus_id, "virtio", "", &(int) { 0 }))
                copy_str(s->virtio_dev, sizeof(s->virtio_dev), nic->bus_id);

        if (is_pci_addr(nic->bus_id)) {
                copy_str(nic->pci_addr, sizeof(nic->pci_addr), nic->bus_id);
                snprintf(s->pcidir, sizeof(s->pcidir), "device");
        } else {
                parent_of_device(rootfd, nic->name, nic->bus_id, parent, sizeof(parent));
                if (is_pci_addr(parent)) {
                        copy_str(nic->pci_addr, sizeof(nic->pci_addr), parent);
                        snprintf(s->pcidir, sizeof(s->pcidir), "device/..");
                }
        }

        /* the device's own, else its PCI function's (virtio has none); -1 unless it parses */
        snprintf(path, sizeof(path), "sys/class/net/%s/%s/numa_node", nic->name, s->pcidir);
        if (rootfs_read_line(rootfd, nic_file(lp, nic, "device/numa_node"), line, sizeof(line)) == 0 ||
            (s->pcidir[0] && rootfs_read_line(rootfd, path, line, sizeof(line)) == 0))
                (void) util_parse_int(util_strstrip(line), (size_t) -1, &nic->node);

        for (int k = 0; k < 2; k++) {
                const char *dir = k == 0 ? "device" : s->pcidir;
                cpuset_t cpus;
                if (!dir[0] || (k == 1 && strcmp(dir, "device") == 0))
                        continue;
                snprintf(lp, sizeof(lp), "sys/class/net/%s/%s/local_cpulist", nic->name, dir);
                snprintf(mp, sizeof(mp), "sys/class/net/%s/%s/local_cpus", nic->name, dir);
                if (read_cpus(rootfd, lp, mp, NULL, &cpus) == 0 && !cpuset_empty(&cpus)) {
                        nic->local_cpus = cpus;
                        break;
                }
        }

        if (s->pcidir[0]) {
                snprintf(path, sizeof(path), "sys/class/net/%s/%s/msi_irqs", nic->name, s->pcidir);
                (void) read_number_dir(rootfd, path, &s->msi, &s->n_msi); /* none on failure */
        }
}

/* ifindex, up and (counters) the packet counters, with hold through kept fds. */
static void read_nic_state(int rootfd, struct inventory_nic *nic, bool counters, bool hold) {
        char line[64], p[128];

        if (!read_int(rootfd, nic_file(p, nic, "ifindex"), hold ? &nic->fd_ifindex : NULL, &nic->ifindex))
                nic->ifindex = 0;
        nic->up = false;
        /* IFF_UP as netlink reports it; else operstate ("unknown": lo while up) */
        if (read_line_held(rootfd, nic_file(p, nic, "flags"), hold ? &nic->fd_flags : NULL, line, sizeof(line)) == 0)
                nic->up = strtoul(line, NULL, 16) & IFF_UP;
        else if (read_line_held(rootfd, nic_file(p, nic, "operstate"), NULL, line, sizeof(line)) == 0)
                nic->up = strcmp(line, "up") == 0 || strcmp(line, "unknown") == 0;

        /* the receive load of NICs without queue IRQs (veth) */
        nic->has_stats = counters &&
                read_u64(rootfd, nic_file(p, nic, "statistics/rx_packets"), hold ? &nic->fd_rx_packets : NULL,
                         &nic->rx_packets) &&
                read_u64(rootfd, nic_file(p, nic, "statistics/tx_packets"), hold ? &nic->fd_tx_packets : NULL,
                         &nic->tx_packets);
        if (!nic->has_stats)
                nic->rx_packets = nic->tx_packets = 0;
        nic->has_rx_bytes = nic->has_stats &&
                read_u64(rootfd, nic_file(p, nic, "statistics/rx_bytes"), hold ? &nic->fd_rx_bytes : NULL,
                         &nic->rx_bytes);
        if (!nic->has_rx_bytes)
                nic->rx_bytes = 0;
}

/* sys/class/net/NIC/threaded (Linux 5.12): 0, 1, 2; -1 without the file. */
static int read_threaded(int rootfd, struct inventory_nic *nic) {
        char p[128];
        int v;

        return read_int(rootfd, nic_file(p, nic, KNOB_THREADED_FILE), &nic->fd_threaded, &v) && v >= 0 ? v : -1;
}

static int read_nic(int rootfd, const cpuset_t *online, struct inventory_nic *nic, struct nic_scratch *s) {
        nic->combined_channels = -1;
        read_nic_state(rootfd, nic, true, false);
        nic->threaded = nic->threaded_read = read_threaded(rootfd, nic);
        read_nic_device(rootfd, online, nic, s);
        return read_queues(rootfd, nic);
}

/* Whether sys/class/net/name is a device: bonding_masters is a file there,
 * devices are (links to) dirs. */
static bool is_nic_dir(int rootfd, const char *name) {
        char path[512];
        int fd;

        if (name[0] == '.' || strlen(name) >= IF_NAMESIZE)
                return false;
        snprintf(path, sizeof(path), "sys/class/net/%s", name);
        fd = rootfs_opendir(rootfd, path);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

static int cmp_nic(const void *a, const void *b) {
        const struct inventory_nic *x = a, *y = b;
        return strcmp(x->name, y->name);
}

static int list_nics(int rootfd, struct inventory *inv) {
        size_t allocated = 0;
        struct dirent *de;
        DIR *d;
        int r;

        r = rootfs_fdopendir(rootfd, "sys/class/net", &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                if (!is_nic_dir(rootfd, de->d_name))
                        continue;
                r = util_grow((void **) &inv->nics, &allocated, inv->n_nics + 1, sizeof(*inv->nics));
                if (r < 0)
                        break;
                copy_str(inv->nics[inv->n_nics].name, IF_NAMESIZE, de->d_name);
                inv->n_nics++;
        }
        closedir(d);
        if (r < 0)
                return r;
        if (inv->n_nics > 1)
                qsort(inv->nics, inv->n_nics, sizeof(*inv->nics), cmp_nic);
        return 0;
}

/* ---- queue <-> IRQ mapping ---- */

/* Names that number a device's vectors, not the NIC's queues. */
enum vector_kind {
        VECTOR_NAMED,             /* the name says the queue */
        VECTOR_MLX4,              /* mlx4-<EQ>@<addr> */
        VECTOR_GVE,               /* gve-ntfy-blk<N>@pci:<addr> */
};

struct match {
        size_t irq;               /* index into inv->irqs */
        enum inventory_irq_role role;
        int queue;
        bool bare;                /* named after the device itself */
        enum vector_kind kind;
};

static enum vector_kind vector_kind_of(const char *action) {
        if (skip_prefix(action, "mlx4-") && isdigit((unsigned char) action[5]))
                return VECTOR_MLX4;
        if (skip_prefix(action, "gve-ntfy-blk"))
                return VECTOR_GVE;
        return VECTOR_NAMED;
}

/* The NICs on the PCI function of NIC i (mlx4's ports), in port order
 * (dev_port, then name): how many, and NIC i's place among them. */
static void port_of(const struct inventory *inv, const struct nic_scratch *scratch, size_t i, size_t *ret_n,
                    size_t *ret_index) {
        size_t n = 0, index = 0;

        for (size_t k = 0; k < inv->n_nics; k++) {
                if (strcmp(inv->nics[k].pci_addr, inv->nics[i].pci_addr) != 0)
                        continue;
                n++;
                if (k != i && (scratch[k].dev_port < scratch[i].dev_port ||
                               (scratch[k].dev_port == scratch[i].dev_port && k < i)))
                        index++;
        }
        *ret_n = n;
        *ret_index = index;
}

/* Queues of vectors numbered per device.  mlx4_enable_msi_x() splits the
 * EQs evenly between ports; mlx4_assign_eq() picks at run time, so ring n
 * on the port's n-th EQ is a guess.  gve_tx_idx_to_ntfy(): tx queue q is
 * block q, gve_rx_idx_to_ntfy(): rx queue q block n/2 + q.  Another port's
 * vector gets NONE. */
static void remap_device_vectors(const struct inventory *inv, const struct nic_scratch *scratch, size_t i,
                                 struct match *m, size_t n, bool *ret_guessed) {
        const struct inventory_nic *nic = &inv->nics[i];
        size_t n_mlx4 = 0, n_gve = 0, n_rx = 0, n_tx = 0, ports, port;
        int q;

        for (size_t k = 0; k < n; k++) {
                n_gve += m[k].kind == VECTOR_GVE;
                n_rx += m[k].role == INVENTORY_IRQ_RX;
                n_tx += m[k].role == INVENTORY_IRQ_TX;
        }
        /* the device's EQs, those another port took included */
        for (size_t k = 0; k < inv->n_irqs; k++)
                n_mlx4 += vector_kind_of(inv->irqs[k].name) == VECTOR_MLX4 &&
                          inventory_classify_irq_name(inv->irqs[k].name, NULL, NULL, NULL, nic->pci_addr, &q) ==
                                  INVENTORY_IRQ_RXTX;
        port_of(inv, scratch, i, &ports, &port);
        for (size_t k = 0; k < n; k++) {
                /* with its own tx vector, the combined one only receives (ionic) */
                if (m[k].role == INVENTORY_IRQ_RXTX && m[k].kind == VECTOR_NAMED)
                        for (size_t t = 0; t < n; t++)
                                if (m[t].role == INVENTORY_IRQ_TX && m[t].queue == m[k].queue)
                                        m[k].role = INVENTORY_IRQ_RX;
                if (m[k].kind == VECTOR_MLX4) {
                        size_t per = MAX(n_mlx4 / MAX(ports, (size_t) 1), (size_t) 1);
                        size_t eq = (size_t) m[k].queue - 1;

                        if (MIN(eq / per, ports - 1) != port) {
                                m[k].role = INVENTORY_IRQ_NONE;
                                continue;
                        }
                        m[k].queue = (int) (eq - port * per);
                        *ret_guessed = true;
                } else if (m[k].role == INVENTORY_IRQ_TX && strcmp(nic->driver, "bnxt_en") == 0 &&
                           (size_t) m[k].queue >= n_rx) {
                        /* bnxt_setup_msix(): unshared, "-tx-i" is tx queue i - rx_nr_rings */
                        m[k].queue -= (int) n_rx;
                } else if (m[k].role == INVENTORY_IRQ_RX && strcmp(nic->driver, "vmxnet3") == 0 &&
                           (size_t) m[k].queue >= n_tx) {
                        /* vmxnet3_request_irqs(): unshared, rx queue i is "-rx-<n_tx + i>" */
                        m[k].queue -= (int) n_tx;
                } else if (m[k].kind == VECTOR_GVE) {
                        size_t half = n_gve / 2, b = (size_t) m[k].queue;

                        m[k].role = b < half ? INVENTORY_IRQ_TX : INVENTORY_IRQ_RX;
                        m[k].queue = (int) (b < half ? b : b - half);
                }
        }
}

static bool in_sorted(const unsigned *v, size_t n, unsigned x) {
        return n > 0 && bsearch(&x, v, n, sizeof(*v), cmp_unsigned);
}

static void attach(struct inventory *inv, int nic_idx, size_t irq_idx, enum inventory_irq_role role, int queue) {
        struct inventory_nic *nic = &inv->nics[nic_idx];
        struct inventory_irq *irq = &inv->irqs[irq_idx];

        irq->nic = nic_idx;
        irq->role = role;
        irq->queue = role == INVENTORY_IRQ_OTHER ? -1 : queue;
        if (role == INVENTORY_IRQ_OTHER || queue < 0 || (size_t) queue >= nic->n_queues)
                return;
        /* in IRQ order: the first claiming a slot keeps it */
        if ((role == INVENTORY_IRQ_RXTX || role == INVENTORY_IRQ_RX) && nic->queues[queue].rx_irq < 0)
                nic->queues[queue].rx_irq = (int) irq->irq;
        if ((role == INVENTORY_IRQ_RXTX || role == INVENTORY_IRQ_TX) && nic->queues[queue].tx_irq < 0)
                nic->queues[queue].tx_irq = (int) irq->irq;
}

/* Whether another NIC shares the PCI function: msi_irqs order says nothing then. */
static bool shares_function(const struct inventory *inv, size_t i) {
        for (size_t k = 0; k < inv->n_nics; k++)
                if (k != i && inv->nics[i].pci_addr[0] &&
                    strcmp(inv->nics[k].pci_addr, inv->nics[i].pci_addr) == 0)
                        return true;
        return false;
}

/* The device's own name: a single vector, or the link vector beside per-queue ones. */
static bool is_bare_name(const char *a, const char *nic_name, const char *virtio_dev) {
        const char *rest;

        if (strcmp(a, nic_name) == 0)
                return true;
        if (!virtio_dev[0] || !(rest = skip_prefix(a, virtio_dev)))
                return false;
        return rest[0] == 0 || strcmp(rest, "-virtqueues") == 0;
}

/* First pass: IRQs whose names belong to the NIC; per-queue names win. */
static int map_by_names(struct inventory *inv, size_t i, const struct nic_scratch *scratch) {
        const struct nic_scratch *s = &scratch[i];
        struct inventory_nic *nic = &inv->nics[i];
        _cleanup_(freep) struct match *m = NULL;
        size_t n = 0, allocated = 0;
        bool queue_names = false, single_done = false, guessed = false;
        int r;

        for (size_t j = 0; j < inv->n_irqs; j++) {
                struct inventory_irq *irq = &inv->irqs[j];
                char name[sizeof(irq->name)];
                enum inventory_irq_role role = INVENTORY_IRQ_NONE;
                enum vector_kind kind = VECTOR_NAMED;
                bool bare = false;
                int q = -1;

                if (irq->nic >= 0)
                        continue;
                /* A shared line lists every action: "eth0, ehci_hcd:usb1". */
                copy_str(name, sizeof(name), irq->name);
                for (char *save = NULL, *a = strtok_r(name, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
                        a = util_strstrip(a);
                        role = inventory_classify_irq_name(a, nic->name, nic->driver, s->virtio_dev, nic->pci_addr, &q);
                        if (role != INVENTORY_IRQ_NONE) {
                                bare = role == INVENTORY_IRQ_RXTX && is_bare_name(a, nic->name, s->virtio_dev);
                                kind = role == INVENTORY_IRQ_RXTX ? vector_kind_of(a) : VECTOR_NAMED;
                                break;
                        }
                }
                if (role == INVENTORY_IRQ_NONE)
                        continue;
                r = util_grow((void **) &m, &allocated, n + 1, sizeof(*m));
                if (r < 0)
                        return r;
                m[n++] = (struct match) { .irq = j, .role = role, .queue = q, .bare = bare, .kind = kind };
        }
        remap_device_vectors(inv, scratch, i, m, n, &guessed);
        for (size_t k = 0; k < n; k++)
                if (!m[k].bare && m[k].role != INVENTORY_IRQ_OTHER && m[k].role != INVENTORY_IRQ_NONE)
                        queue_names = true;

        if (queue_names)
                nic->map = guessed ? INVENTORY_MAP_MSI_ORDER : INVENTORY_MAP_NAMES;
        for (size_t k = 0; k < n; k++) {
                if (m[k].role == INVENTORY_IRQ_NONE)
                        continue;
                if (queue_names)
                        attach(inv, (int) i, m[k].irq, m[k].bare ? INVENTORY_IRQ_OTHER : m[k].role, m[k].queue);
                else if (m[k].bare && !single_done) {
                        attach(inv, (int) i, m[k].irq, INVENTORY_IRQ_RXTX, 0);
                        nic->map = INVENTORY_MAP_SINGLE;
                        single_done = true;
                } else
                        attach(inv, (int) i, m[k].irq, INVENTORY_IRQ_OTHER, -1);
        }
        /* the function's other vectors (qed's "sp-0-18:00.00") are admin ones */
        if (queue_names && !shares_function(inv, i))
                for (size_t j = 0; j < inv->n_irqs; j++)
                        if (inv->irqs[j].nic < 0 && in_sorted(s->msi, s->n_msi, inv->irqs[j].irq))
                                attach(inv, (int) i, j, INVENTORY_IRQ_OTHER, -1);
        return 0;
}

/* Second pass, NICs no name mapped: the remaining MSI vectors in order,
 * one per queue; with more vectors than queues the first is the admin one
 * (virtio, mlx5, i40e, igb, ena, tg3 put it there). */
static void map_by_msi_order(struct inventory *inv, size_t i, const struct nic_scratch *s) {
        struct inventory_nic *nic = &inv->nics[i];
        size_t v = 0, q = 0;
        bool skip;

        if (s->n_msi == 0 || nic->n_queues == 0 || shares_function(inv, i))
                return;
        for (size_t j = 0; j < inv->n_irqs; j++)
                if (inv->irqs[j].nic < 0 && in_sorted(s->msi, s->n_msi, inv->irqs[j].irq))
                        v++;
        if (v == 0)
                return;
        skip = v > nic->n_queues;
        for (size_t j = 0; j < inv->n_irqs; j++) {
                if (inv->irqs[j].nic >= 0 || !in_sorted(s->msi, s->n_msi, inv->irqs[j].irq))
                        continue;
                if (skip) {
                        attach(inv, (int) i, j, INVENTORY_IRQ_OTHER, -1);
                        skip = false;
                } else if (q < nic->n_queues) {
                        attach(inv, (int) i, j, INVENTORY_IRQ_RXTX, (int) q);
                        q++;
                } else
                        attach(inv, (int) i, j, INVENTORY_IRQ_OTHER, -1);
        }
        nic->map = INVENTORY_MAP_MSI_ORDER;
}

int inventory_read(int rootfd, const struct procfs_interrupts *interrupts, struct inventory *ret) {
        struct inventory inv = {};
        struct nic_scratch *scratch = NULL;
        cpuset_t online;
        int r;

        if (read_cpus(rootfd, "sys/devices/system/cpu/online", NULL, NULL, &online) < 0)
                cpuset_zero(&online);
        read_globals(rootfd, &inv, false);

        r = read_irqs(rootfd, interrupts, &inv);
        if (r < 0)
                goto finish;
        r = list_nics(rootfd, &inv);
        if (r < 0)
                goto finish;
        scratch = calloc(inv.n_nics ? inv.n_nics : 1, sizeof(*scratch));
        if (!scratch) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < inv.n_nics; i++) {
                r = read_nic(rootfd, &online, &inv.nics[i], &scratch[i]);
                if (r == -ENOMEM)
                        goto finish;
                if (r < 0)
                        log_debug_errno(r, "inventory: %s: reading queues failed, ignoring: %m",
                                        inv.nics[i].name);
                r = 0;
        }
        /* drop NICs that disappeared while read: half-read facts are worthless */
        for (size_t i = 0, k = 0, n = inv.n_nics; i < n; i++) {
                char path[64];
                snprintf(path, sizeof(path), "sys/class/net/%s", inv.nics[i].name);
                if (rootfs_exists(rootfd, path) > 0) {
                        inv.nics[k] = inv.nics[i];
                        scratch[k++] = scratch[i];
                } else {
                        log_debug("inventory: %s vanished while reading, skipped", inv.nics[i].name);
                        nic_free(&inv.nics[i]);
                        free(scratch[i].msi);
                        inv.n_nics--;
                }
        }
        /* names for every NIC first: the msi_irqs fallback takes what is left */
        for (size_t i = 0; i < inv.n_nics && r >= 0; i++)
                if (inv.nics[i].has_device)
                        r = map_by_names(&inv, i, scratch);
        for (size_t i = 0; i < inv.n_nics && r >= 0; i++)
                if (inv.nics[i].has_device && inv.nics[i].map == INVENTORY_MAP_NONE)
                        map_by_msi_order(&inv, i, &scratch[i]);

finish:
        if (scratch)
                for (size_t i = 0; i < inv.n_nics; i++)
                        free(scratch[i].msi);
        free(scratch);
        if (r < 0) {
                inventory_free(&inv);
                return r;
        }
        *ret = inv;
        return 0;
}

/* Whether the kept queues dir has PREFIX(n-1) and no PREFIXn: queue dirs
 * come and go at the top, so this counts them without listing. */
static bool same_queue_count(int dirfd, const char *prefix, int n) {
        char name[32];
        struct stat st;

        snprintf(name, sizeof(name), "%s%d", prefix, n);
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                return false;
        if (n == 0)
                return true;
        snprintf(name, sizeof(name), "%s%d", prefix, n - 1);
        return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The NIC's rx and tx queue counts as at discovery. */
static int same_queues(int rootfd, const struct inventory_nic *nic) {
        int rx, tx, max_rx, max_tx, r;

        if (nic->fd_queues > 0)
                return same_queue_count(nic->fd_queues, "rx-", nic->rx_queues) &&
                       same_queue_count(nic->fd_queues, "tx-", nic->tx_queues);
        /* no queues dir: no queues */
        r = count_queue_dirs(rootfd, nic->name, &rx, &tx, &max_rx, &max_tx);
        if (r < 0 && r != -ENOENT)
                return r;
        return rx == nic->rx_queues && tx == nic->tx_queues;
}

/* Whether the kept queues dir still has its links: one fstat(), part of a
 * calm tick's cost (bench/README.md, "Per-tick cost and CPU per hour"). */
static int same_queue_links(const struct inventory_nic *nic) {
        struct stat st;

        if (fstat(nic->fd_queues, &st) < 0)
                return -errno;
        return st.st_nlink == (nlink_t) nic->queues_links;
}

int inventory_queue_counts_changed(int rootfd, const struct inventory *inv) {
        for (size_t i = 0; i < inv->n_nics; i++) {
                const struct inventory_nic *nic = &inv->nics[i];
                int r = nic->fd_queues > 0 && nic->queues_links > 0 ? same_queue_links(nic) : same_queues(rootfd, nic);

                if (r <= 0)
                        return r < 0 ? r : 1;
        }
        return 0;
}

/* Same NIC names as list_nics() would find now. */
static int same_nic_set(int rootfd, const struct inventory *inv) {
        size_t seen = 0;
        struct dirent *de;
        bool same = true;
        DIR *d;
        int r;

        r = rootfs_fdopendir(rootfd, "sys/class/net", &d);
        if (r < 0)
                return r;
        while (same && (de = readdir(d))) {
                if (inventory_nic(inv, de->d_name))
                        seen++;
                else if (is_nic_dir(rootfd, de->d_name))
                        same = false; /* a new device */
        }
        closedir(d);
        return same && seen == inv->n_nics;
}

/* Same numeric IRQs with the same names as read_irqs() would take. */
static bool same_irq_set(const struct procfs_interrupts *pi, const struct inventory *inv) {
        if (pi->n_numeric != inv->n_irqs || (pi->n_numeric > 0 && !pi->by_irq))
                return false;
        for (size_t k = 0; k < pi->n_numeric; k++) {
                const struct procfs_irq *p = &pi->irqs[pi->by_irq[k]];
                if (p->irq != inv->irqs[k].irq ||
                    strncmp(p->name, inv->irqs[k].name, sizeof(inv->irqs[k].name) - 1) != 0)
                        return false;
        }
        return true;
}

void inventory_audit_slice(struct inventory_audit *a, size_t n, size_t *ret_first, size_t *ret_count) {
        if (n == 0 || a->per_tick == 0 || a->per_tick >= n) {
                *ret_first = 0;
                *ret_count = n;
                a->cursor = 0;
                return;
        }
        /* the object count changes with rediscovery: wrap into range */
        *ret_first = a->cursor % n;
        *ret_count = a->per_tick;
        a->cursor = (*ret_first + a->per_tick) % n;
}

bool inventory_audit_has(size_t n, size_t first, size_t count, size_t k) {
        return k < n && (k + n - first) % n < count;
}

int inventory_refresh(int rootfd, const struct procfs_interrupts *interrupts, struct inventory *inv,
                      struct inventory_audit *audit) {
        struct inventory_audit all = { 0 };
        size_t n_objects = 0, first, count, k = 0;
        int r;

        if (!same_irq_set(interrupts, inv))
                return 1;
        r = same_nic_set(rootfd, inv);
        if (r <= 0)
                return r < 0 ? r : 1;
        for (size_t i = 0; i < inv->n_irqs; i++)
                n_objects += inv->irqs[i].nic >= 0;
        for (size_t i = 0; i < inv->n_nics; i++) {
                struct inventory_nic *nic = &inv->nics[i];
                int ifindex = nic->ifindex;
                bool up = nic->up;

                if (same_queues(rootfd, nic) <= 0)
                        return 1;
                /* threaded switched: only a full read's dump names the kthreads */
                if (nic->n_napis > 0 && nic->threaded_read >= 0 && read_threaded(rootfd, nic) != nic->threaded_read)
                        return 1;
                /* counters only where there are no queue IRQs to read load from */
                read_nic_state(rootfd, nic, nic->map == INVENTORY_MAP_NONE, true);
                if (nic->ifindex != ifindex || nic->up != up)
                        return 1;
                n_objects += nic->n_queues;
        }
        inventory_audit_slice(audit ? audit : &all, n_objects, &first, &count);
        /* NIC vectors by the audit; other IRQs only after a write (reread),
         * so the policy sees its own write, and at full discovery */
        for (size_t i = 0; i < inv->n_irqs; i++) {
                struct inventory_irq *irq = &inv->irqs[i];
                bool audited = irq->nic >= 0 && inventory_audit_has(n_objects, first, count, k++);

                irq->fresh = false;
                if (irq->reread || audited)
                        inventory_reread_irq(rootfd, irq, true);
                irq->reread = false;
        }
        for (size_t i = 0; i < inv->n_nics; i++)
                for (size_t q = 0; q < inv->nics[i].n_queues; q++, k++) {
                        struct inventory_queue *iq = &inv->nics[i].queues[q];

                        iq->fresh = false;
                        if (iq->reread || inventory_audit_has(n_objects, first, count, k))
                                inventory_reread_queue(rootfd, &inv->nics[i], iq, true);
                        iq->reread = false;
                }
        read_globals(rootfd, inv, true);
        return 0;
}

void inventory_free_sets(struct inventory *inv) {
        for (size_t i = 0; i < inv->n_nics; i++)
                for (size_t q = 0; q < inv->nics[i].n_queues; q++) {
                        cpuset_kept_free(&inv->nics[i].queues[q].rps_cpus);
                        cpuset_kept_free(&inv->nics[i].queues[q].xps_cpus);
                }
        for (size_t i = 0; i < inv->n_irqs; i++) {
                cpuset_kept_free(&inv->irqs[i].affinity);
                cpuset_kept_free(&inv->irqs[i].effective);
        }
}

void inventory_free(struct inventory *inv) {
        if (!inv)
                return;
        inventory_free_sets(inv);
        for (size_t i = 0; i < inv->n_nics; i++)
                nic_free(&inv->nics[i]);
        for (size_t i = 0; i < inv->n_irqs; i++) {
                rootfs_release(&inv->irqs[i].fd_affinity);
                rootfs_release(&inv->irqs[i].fd_effective);
        }
        rootfs_release(&inv->fd_sock_flow);
        rootfs_release(&inv->fd_default_affinity);
        free(inv->nics);
        free(inv->irqs);
        *inv = (struct inventory) {};
}

void inventory_set_knob(struct inventory *inv, const struct knob_key *k, const cpuset_t *cpus, uint32_t value,
                        bool fresh_only) {
        struct inventory_nic *n = k->nic[0] ? inventory_nic(inv, k->nic) : NULL;
        struct inventory_queue *q = n && (k->kind == KNOB_RPS || k->kind == KNOB_XPS || k->kind == KNOB_FLOWCNT) ?
                              inventory_queue(n, k->queue) : NULL;
        struct inventory_irq *irq;

        if (q) {
                if (fresh_only && !q->fresh)
                        return;
                /* -ENOMEM keeps the value read, as a failed write would */
                if (k->kind == KNOB_RPS)
                        (void) cpuset_keep(&q->rps_cpus, cpus);
                else if (k->kind == KNOB_XPS)
                        (void) cpuset_keep(&q->xps_cpus, cpus);
                else
                        q->rps_flow_cnt = value;
                return;
        }
        switch (k->kind) {
        case KNOB_IRQ:
                irq = inventory_irq(inv, k->irq);
                if (irq && (!fresh_only || irq->fresh)) {
                        (void) cpuset_keep(&irq->affinity, cpus);
                        /* what the kernel would report after the next interrupt */
                        if (irq->has_effective)
                                (void) cpuset_keep(&irq->effective, cpus);
                }
                break;
        case KNOB_SOCKFLOW:
                inv->rps_sock_flow_entries = value;
                break;
        case KNOB_DEFAFF:
                inv->default_affinity = *cpus;
                break;
        case KNOB_THREADED:
                if (n)
                        n->threaded = (int) value;
                break;
        default:
                break;
        }
}

struct inventory_nic *inventory_nic(const struct inventory *inv, const char *name) {
        for (size_t i = 0; i < inv->n_nics; i++)
                if (strcmp(inv->nics[i].name, name) == 0)
                        return &inv->nics[i];
        return NULL;
}

struct inventory_irq *inventory_irq(const struct inventory *inv, unsigned irq) {
        struct inventory_irq key = { .irq = irq };
        if (inv->n_irqs == 0)
                return NULL;
        return bsearch(&key, inv->irqs, inv->n_irqs, sizeof(*inv->irqs), cmp_irq);
}

struct inventory_queue *inventory_queue(const struct inventory_nic *nic, int index) {
        if (!nic || index < 0 || (size_t) index >= nic->n_queues || nic->queues[index].index != index)
                return NULL;
        return &nic->queues[index];
}
