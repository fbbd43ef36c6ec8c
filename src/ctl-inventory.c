/* irqsteerctl inventory: CPUs, NICs, queues and every IRQ with its class,
 * as tables or JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify.h"
#include "config.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "log.h"
#include "procfs.h"
#include "rootfs.h"
#include "state.h"
#include "util.h"

/* A kept CPU set, or null when not known (!has). */
static void json_kept_if(struct json_writer *w, const char *key, bool has, const cpuset_kept_t *k) {
        cpuset_t s = cpuset_kept_get(k);

        json_key_cpuset_if(w, key, has, &s);
}

/* A queue's netdev-family view (null where the kernel did not answer) and
 * where its IRQs came from. */
static void json_queue_napi(struct json_writer *w, const struct inventory_nic *nic, const struct inventory_queue *qu) {
        const struct netdev_qstats *rs = &qu->rx_stats, *ts = &qu->tx_stats;

        json_key_string(w, "irq_source", qu->rx_irq < 0 && qu->tx_irq < 0 ? NULL :
                        inventory_map_source_to_string(qu->irq_netlink ? INVENTORY_MAP_NETLINK : nic->map));
        json_key_uint_if(w, "napi_id", qu->napi_id != 0, qu->napi_id);
        json_key_string(w, "napi_threaded", qu->napi_threaded == NETDEV_THREADED_UNKNOWN ?
                        NULL : netdev_threaded_to_string(qu->napi_threaded));
        json_key_int_if(w, "napi_pid", qu->napi_pid > 0, qu->napi_pid);
        json_key_int_if(w, "napi_cpu", qu->napi_cpu >= 0, qu->napi_cpu);
        json_key_uint_if(w, "rx_packets", rs->ifindex > 0 && rs->has_rx_packets, rs->rx_packets);
        json_key_uint_if(w, "rx_bytes", rs->ifindex > 0 && rs->has_rx_bytes, rs->rx_bytes);
        json_key_uint_if(w, "tx_packets", ts->ifindex > 0 && ts->has_tx_packets, ts->tx_packets);
        json_key_uint_if(w, "tx_bytes", ts->ifindex > 0 && ts->has_tx_bytes, ts->tx_bytes);
}

/* Every NAPI of the NIC (veth's queues name none); null without netdev. */
static void json_nic_napis(struct json_writer *w, const struct inventory *inv, const struct inventory_nic *nic) {
        if (!inv->has_netdev) {
                json_key_null(w, "napis");
                return;
        }
        json_key_begin_array(w, "napis");
        for (size_t k = 0; k < nic->n_napis; k++) {
                const struct inventory_napi *n = &nic->napis[k];

                json_begin_object(w);
                json_key_uint(w, "id", n->id);
                json_key_int_if(w, "irq", n->irq != -1, n->irq);
                json_key_string(w, "threaded", n->threaded == NETDEV_THREADED_UNKNOWN ?
                                NULL : netdev_threaded_to_string(n->threaded));
                json_key_int_if(w, "pid", n->pid != 0, n->pid);
                json_key_int_if(w, "cpu", n->cpu != -1, n->cpu);
                json_end_object(w);
        }
        json_end_array(w);
}

void ctl_inventory_json(struct json_writer *w, const struct topology *t, const struct inventory *inv,
                        const int *classes) {
        json_begin_object(w);
        json_key_int(w, "version", CTL_INVENTORY_VERSION);

        json_key_begin_array(w, "cpus");
        for (int c = 0; c <= t->max_cpu; c++) {
                const struct topology_cpu *tc = &t->cpus[c];

                if (!tc->present)
                        continue;
                json_begin_object(w);
                json_key_int(w, "cpu", tc->cpu);
                json_key_int_if(w, "node", tc->node >= 0, tc->node);
                json_key_int_if(w, "core", tc->core >= 0, tc->core);
                json_key_int_if(w, "package", tc->package_id >= 0, tc->package_id);
                json_key_int_if(w, "smt_index", tc->smt_index >= 0, tc->smt_index);
                json_key_bool(w, "online", tc->online);
                json_key_bool(w, "isolated", tc->isolated);
                json_key_bool(w, "nohz_full", tc->nohz_full);
                json_end_object(w);
        }
        json_end_array(w);

        json_key_begin_array(w, "nodes");
        for (size_t i = 0; i < t->n_nodes; i++) {
                json_begin_object(w);
                json_key_int(w, "node", t->nodes[i].id);
                json_key_cpuset(w, "cpus", &t->nodes[i].cpus);
                json_end_object(w);
        }
        json_end_array(w);

        json_key_begin_array(w, "nics");
        for (size_t n = 0; n < inv->n_nics; n++) {
                const struct inventory_nic *nic = &inv->nics[n];

                json_begin_object(w);
                json_key_string(w, "name", nic->name);
                json_key_int_if(w, "ifindex", nic->ifindex > 0, nic->ifindex);
                json_key_string(w, "driver", nic->driver[0] ? nic->driver : NULL);
                json_key_string(w, "bus_id", nic->bus_id[0] ? nic->bus_id : NULL);
                json_key_string(w, "pci_addr", nic->pci_addr[0] ? nic->pci_addr : NULL);
                json_key_int_if(w, "node", nic->node >= 0, nic->node);
                json_key_cpuset(w, "local_cpus", &nic->local_cpus);
                json_key_bool(w, "up", nic->up);
                json_key_int(w, "rx_queues", nic->rx_queues);
                json_key_int(w, "tx_queues", nic->tx_queues);
                json_key_int_if(w, "combined_channels", nic->combined_channels >= 0, nic->combined_channels);
                json_key_string(w, "mapping", inventory_map_source_to_string(nic->map));
                json_key_begin_array(w, "queues");
                for (size_t q = 0; q < nic->n_queues; q++) {
                        const struct inventory_queue *qu = &nic->queues[q];
                        unsigned flags;

                        json_begin_object(w);
                        json_key_int(w, "index", qu->index);
                        json_key_bool(w, "rx", qu->has_rx);
                        json_key_bool(w, "tx", qu->has_tx);
                        json_key_int_if(w, "rx_irq", qu->rx_irq >= 0, qu->rx_irq);
                        json_key_int_if(w, "tx_irq", qu->tx_irq >= 0, qu->tx_irq);
                        /* every IRQ tied to this queue, in IRQ order */
                        json_key_begin_array(w, "irqs");
                        flags = w->flags;
                        w->flags &= ~JSON_PRETTY; /* one line, like CPU lists */
                        for (size_t i = 0; i < inv->n_irqs; i++)
                                if (inv->irqs[i].nic == (int) n && inv->irqs[i].queue == qu->index)
                                        json_uint(w, inv->irqs[i].irq);
                        json_end_array(w);
                        w->flags = flags;
                        json_kept_if(w, "rps_cpus", qu->has_rps, &qu->rps_cpus);
                        json_key_uint_if(w, "rps_flow_cnt", qu->has_rps, qu->rps_flow_cnt);
                        json_kept_if(w, "xps_cpus", qu->has_xps, &qu->xps_cpus);
                        json_queue_napi(w, nic, qu);
                        json_end_object(w);
                }
                json_end_array(w);
                json_nic_napis(w, inv, nic);
                json_end_object(w);
        }
        json_end_array(w);

        json_key_begin_array(w, "irqs");
        for (size_t i = 0; i < inv->n_irqs; i++) {
                const struct inventory_irq *irq = &inv->irqs[i];
                bool has_nic = irq->nic >= 0 && (size_t) irq->nic < inv->n_nics;

                json_begin_object(w);
                json_key_uint(w, "irq", irq->irq);
                json_key_string(w, "name", irq->name);
                json_key_string(w, "nic", has_nic ? inv->nics[irq->nic].name : NULL);
                json_key_int_if(w, "queue", has_nic && irq->queue >= 0, irq->queue);
                json_key_string(w, "role", inventory_irq_role_to_string(irq->role));
                json_key_string(w, "class", classes ? classify_irq_class_to_string(classes[i]) : NULL);
                json_key_string(w, "device", classify_irq_device(inv, irq)[0] ? classify_irq_device(inv, irq) : NULL);
                json_kept_if(w, "affinity", irq->affinity_readable, &irq->affinity);
                json_kept_if(w, "effective", irq->has_effective, &irq->effective);
                json_key_int_if(w, "node", irq->node >= 0, irq->node);
                json_end_object(w);
        }
        json_end_array(w);

        json_key_uint(w, "rps_sock_flow_entries", inv->rps_sock_flow_entries);
        json_key_cpuset_if(w, "default_affinity", inv->has_default_affinity, &inv->default_affinity);
        json_end_object(w);
}

/* A cpulist, empty ("-"; "off" for an RPS/XPS mask: the feature is
 * disabled) for the empty set; long lists cut as cpuset_to_text does. */
static const char *fmt_kept(const cpuset_kept_t *k, const char *empty, char *buf, size_t len) {
        cpuset_t s = cpuset_kept_get(k);

        return cpuset_to_text(&s, empty, buf, len);
}

/* The affinity (or effective affinity) of a queue's IRQ: "A" for one
 * vector or equal masks, "A/B" for rx/tx vectors that differ, "-" unknown. */
static const char *fmt_queue_irqs(const struct inventory *inv, const struct inventory_queue *qu, bool effective,
                                  char *buf, size_t len) {
        int ids[2] = { qu->rx_irq, qu->tx_irq != qu->rx_irq ? qu->tx_irq : -1 };
        const cpuset_kept_t *sets[2] = { NULL, NULL };
        char x[128], y[128];

        for (int i = 0; i < 2; i++) {
                const struct inventory_irq *irq = ids[i] >= 0 ? inventory_irq(inv, (unsigned) ids[i]) : NULL;

                if (irq && (effective ? irq->has_effective : irq->affinity_readable))
                        sets[i] = effective ? &irq->effective : &irq->affinity;
        }
        if (sets[0] && sets[1] && !cpuset_kept_same(sets[0], sets[1]))
                snprintf(buf, len, "%s/%s", fmt_kept(sets[0], "-", x, sizeof(x)), fmt_kept(sets[1], "-", y, sizeof(y)));
        else if (sets[0] || sets[1])
                fmt_kept(sets[0] ? sets[0] : sets[1], "-", buf, len);
        else
                snprintf(buf, len, "-");
        return buf;
}

static const char *fmt_irq(int irq, char *buf, size_t len) {
        if (irq < 0)
                snprintf(buf, len, "-");
        else
                snprintf(buf, len, "%d", irq);
        return buf;
}

/* Inventory as tables, every IRQ with its class (as ctl_inventory_json). */
static void inventory_print(FILE *f, const struct topology *t, const struct inventory *inv, const int *classes) {
        unsigned n_class[CLASSIFY_IRQ_CLASS_MAX] = { 0 };
        char a[256], b[256], c[256], d[256];

        fprintf(f, "CPUs\n");
        fprintf(f, "  %-5s %-5s %-5s %-8s %-4s %-7s %-9s %s\n", "CPU", "NODE", "CORE", "PACKAGE", "SMT",
                "ONLINE", "ISOLATED", "NOHZ_FULL");
        for (int cpu = 0; cpu <= t->max_cpu; cpu++) {
                const struct topology_cpu *tc = &t->cpus[cpu];

                if (!tc->present)
                        continue;
                fprintf(f, "  %-5d %-5d %-5d %-8d %-4d %-7s %-9s %s\n", tc->cpu, tc->node, tc->core,
                        tc->package_id, tc->smt_index, tc->online ? "yes" : "no",
                        tc->isolated ? "yes" : "no", tc->nohz_full ? "yes" : "no");
        }
        for (size_t i = 0; i < t->n_nodes; i++)
                fprintf(f, "  node %d: CPUs %s\n", t->nodes[i].id, cpuset_to_text(&t->nodes[i].cpus, "-", a, sizeof(a)));

        for (size_t n = 0; n < inv->n_nics; n++) {
                const struct inventory_nic *nic = &inv->nics[n];

                fprintf(f, "\n%s: %s", nic->name, nic->up ? "up" : "down");
                if (nic->driver[0])
                        fprintf(f, ", driver %s", nic->driver);
                if (nic->bus_id[0])
                        fprintf(f, ", bus %s", nic->bus_id);
                if (nic->node >= 0)
                        fprintf(f, ", node %d", nic->node);
                fprintf(f, ", %d rx / %d tx queues", nic->rx_queues, nic->tx_queues);
                if (nic->combined_channels >= 0)
                        fprintf(f, ", %d combined channels", nic->combined_channels);
                fprintf(f, ", IRQ map: %s\n", inventory_map_source_to_string(nic->map));
                fprintf(f, "  local CPUs %s\n", cpuset_to_text(&nic->local_cpus, "-", a, sizeof(a)));
                if (nic->n_queues == 0)
                        continue;
                fprintf(f, "  %-5s %-6s %-6s %-10s %-10s %-10s %-10s\n", "QUEUE", "RX_IRQ", "TX_IRQ",
                        "AFFINITY", "EFFECTIVE", "RPS", "XPS");
                for (size_t q = 0; q < nic->n_queues; q++) {
                        const struct inventory_queue *qu = &nic->queues[q];
                        char rx[16], tx[16];

                        fprintf(f, "  %-5d %-6s %-6s %-10s %-10s %-10s %-10s\n", qu->index,
                                fmt_irq(qu->rx_irq, rx, sizeof(rx)), fmt_irq(qu->tx_irq, tx, sizeof(tx)),
                                fmt_queue_irqs(inv, qu, false, a, sizeof(a)),
                                fmt_queue_irqs(inv, qu, true, b, sizeof(b)),
                                qu->has_rps ? fmt_kept(&qu->rps_cpus, "off", c, sizeof(c)) : "-",
                                qu->has_xps ? fmt_kept(&qu->xps_cpus, "off", d, sizeof(d)) : "-");
                }
        }

        if (inv->n_irqs > 0) {
                fprintf(f, "\nIRQs\n  %-6s %-15s %-4s %-16s %-16s %s\n", "IRQ", "CLASS", "NODE", "AFFINITY", "EFFECTIVE",
                        "DEVICE");
                for (size_t i = 0; i < inv->n_irqs; i++) {
                        const struct inventory_irq *irq = &inv->irqs[i];
                        const char *dev = classify_irq_device(inv, irq);
                        char node[16];

                        if (classes)
                                n_class[classes[i]]++;
                        fmt_irq(irq->node, node, sizeof(node));
                        fprintf(f, "  %-6u %-15s %-4s %-16s %-16s %s", irq->irq,
                                classes ? classify_irq_class_to_string(classes[i]) : "?", node,
                                irq->affinity_readable ? fmt_kept(&irq->affinity, "-", a, 17) : "-",
                                irq->has_effective ? fmt_kept(&irq->effective, "-", b, 17) : "-", dev[0] ? dev : "-");
                        if (strcmp(dev, irq->name) != 0 && irq->name[0])
                                fprintf(f, " (%s)", irq->name);
                        fputc('\n', f);
                }
        }
        if (classes && inv->n_irqs > 0) {
                fprintf(f, "\nIRQ classes\n");
                for (int k = 0; k < CLASSIFY_IRQ_CLASS_MAX; k++)
                        fprintf(f, "  %-15s %5u  %s\n", classify_irq_class_to_string(k), n_class[k],
                                classify_irq_class_done(k));
        }
        fprintf(f, "\nrps_sock_flow_entries %u\n", inv->rps_sock_flow_entries);
        if (inv->has_default_affinity)
                fprintf(f, "default_smp_affinity %s\n", cpuset_to_text(&inv->default_affinity, "-", a, sizeof(a)));
}

/* Topology, proc/interrupts and inventory, saying what failed; on error
 * the caller frees what was read. */
static int read_model(int rootfd, struct topology *t, struct procfs_interrupts *pi, struct inventory *inv) {
        int r;

        r = topology_read(rootfd, t);
        if (r < 0) {
                ctl_error("cannot read the CPU topology: %s", strerror(-r));
                return r;
        }
        r = procfs_interrupts_read(rootfd, pi);
        if (r < 0) {
                /* NICs and queues are worth showing without their IRQs */
                ctl_error("cannot read proc/interrupts: %s, showing no IRQs", strerror(-r));
                memset(pi, 0, sizeof(*pi));
        }
        r = inventory_read(rootfd, pi, inv);
        if (r < 0) {
                ctl_error("cannot read the NIC inventory: %s", strerror(-r));
                return r;
        }
        if (rootfs_is_host(rootfd)) {
                r = inventory_netlink_refresh(inv);
                if (r < 0)
                        log_debug_errno(r, "netlink refresh failed, keeping sysfs values: %m");
                inventory_read_napi_cpus(rootfd, inv);
        }
        return 0;
}

/* The kernel-managed IRQs a daemon on this root found (only a write tells
 * them); 0 or -errno. */
static int read_kernel_managed(const char *state_dir, const char *root, bool *managed, const struct inventory *inv) {
        _cleanup_(json_freep) struct json_value *v = NULL;
        const struct json_value *a;
        const char *sroot;
        int r;

        r = state_read_status(state_dir, &v);
        if (r < 0)
                return r;
        if (json_get_string(v, "root", &sroot) < 0 || strcmp(sroot, root) != 0)
                return -EXDEV;
        a = json_get(v, "kernel_managed_irqs");
        for (size_t k = 0; k < json_count(a); k++) {
                const struct json_value *x = json_index(a, k);

                if (!x || x->type != JSON_NUMBER || !x->is_int)
                        continue;
                for (size_t i = 0; i < inv->n_irqs; i++)
                        if ((int64_t) inv->irqs[i].irq == x->integer)
                                managed[i] = true;
        }
        return 0;
}

static const char inventory_help[] =
        "Usage: irqsteerctl inventory [--root DIR] [--config FILE] [--json]\n"
        "Show CPUs, NUMA nodes, NICs, their queues, every IRQ with its class, affinity\n"
        "and RPS/XPS masks.\n\n"
        "  -r, --root DIR      read /proc and /sys under DIR (default /)\n"
        "  -c, --config FILE   configuration the IRQ classes follow (default " CONFIG_DEFAULT_PATH ";\n"
        "                      built-in defaults when that is absent)\n"
        "  -j, --json          print JSON (schema in irqsteerctl(8))\n"
        "  -h, --help          show this help\n";

int ctl_inventory(int argc, char **argv) {
        _cleanup_(topology_free) struct topology t = { 0 };
        _cleanup_(procfs_interrupts_free) struct procfs_interrupts pi = { 0 };
        _cleanup_(inventory_free) struct inventory inv = { 0 };
        _cleanup_(config_free) struct config cfg = { 0 };
        const char *root = "/", *config_path = NULL;
        _cleanup_(freep) int *classes = NULL;
        _cleanup_(freep) bool *managed = NULL;
        bool json = false;
        const struct ctl_option options[] = {
                CTL_OPT("root", 'r', CTL_OPT_STRING, &root),
                CTL_OPT("config", 'c', CTL_OPT_STRING, &config_path),
                CTL_OPT("json", 'j', CTL_OPT_FLAG, &json),
        };
        int rootfd, r, ret = CTL_EXIT_OK;

        r = ctl_options("inventory", argc, argv, inventory_help, options, ELEMENTSOF(options), false);
        if (r <= 0)
                return -r;
        if (config_load_print(config_path, "irqsteerctl: cannot load ", &cfg, stderr) < 0)
                return CTL_EXIT_ERROR;

        rootfd = ctl_open_root(root);
        r = rootfd < 0 ? rootfd : read_model(rootfd, &t, &pi, &inv);
        if (rootfd >= 0)
                close(rootfd);
        if (r < 0)
                return CTL_EXIT_ERROR;
        classes = calloc(inv.n_irqs + 1, sizeof(*classes));
        managed = calloc(inv.n_irqs + 1, sizeof(*managed));
        if (classes && managed) {
                r = read_kernel_managed(cfg.state_dir, root, managed, &inv);
                if (r < 0)
                        log_debug_errno(r, "no kernel-managed IRQs from irqsteerd's status.json: %m");
                for (size_t i = 0; i < inv.n_irqs; i++)
                        classes[i] = classify_irq(&cfg, &inv, &inv.irqs[i], managed[i]);
        } else {
                free(classes);
                classes = NULL;
        }

        if (json) {
                struct json_writer w;

                json_writer_init(&w, stdout, JSON_PRETTY);
                ctl_inventory_json(&w, &t, &inv, classes);
                fputc('\n', stdout);
                r = json_writer_finish(&w);
                if (r < 0)
                        ret = ctl_error("writing JSON failed: %s", strerror(-r));
        } else {
                /* outside names: escaped for the terminal */
                FILE *f = util_escaping_stream(stdout);

                inventory_print(f ? f : stdout, &t, &inv, classes);
                if (f && fclose(f) != 0)
                        ret = CTL_EXIT_ERROR;
                /* a queue map guessed must not be missed */
                for (size_t i = 0; i < inv.n_nics; i++)
                        if (inv.nics[i].map == INVENTORY_MAP_MSI_ORDER)
                                ctl_error("warning: %s: queue of each IRQ not known from its name; queue IRQs guessed from msi_irqs order",
                                          inv.nics[i].name);
        }
        if (fflush(stdout) != 0)
                ret = CTL_EXIT_ERROR;
        /* read_model() said why; a parsed file has a CPU header */
        if (pi.n_cpus == 0)
                ret = CTL_EXIT_ERROR;
        return ret;
}
