/* What the engine found and what changed between two inventories, and the
 * link events it makes (engine-internal.h). */
#include <fnmatch.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apply.h"
#include "engine-internal.h"
#include "engine.h"
#include "log.h"
#include "policy.h"
#include "report.h"
#include "util.h"

/* [interface NAME] sections matching no NIC: a warning (one file may serve
 * several hosts), listed in status.json until one appears. */
void engine_check_unmatched(struct engine *e, bool say) {
        size_t l = 0;

        e->unmatched[0] = 0;
        for (size_t i = 0; i < e->config->n_interfaces; i++) {
                const struct config_interface *ci = &e->config->interfaces[i];
                const char *file;
                bool found = false;

                for (size_t k = 0; k < e->inv.n_nics && !found; k++)
                        found = fnmatch(ci->match, e->inv.nics[k].name, 0) == 0;
                if (found)
                        continue;
                /* the section's own file: the main file or a drop-in */
                file = ci->file ? ci->file : e->config->path ? e->config->path : "(config)";
                if (say)
                        log_warning("%s:%u: [interface %s] matches no interface on this host; kept for when one "
                                    "appears", file, ci->line, ci->match);
                if (l < sizeof(e->unmatched))
                        l += (size_t) snprintf(e->unmatched + l, sizeof(e->unmatched) - l, "%s[interface %s] (%s:%u)",
                                               l ? ", " : "", ci->match, file, ci->line);
        }
}

void engine_log_topology(const struct engine *e) {
        char online[256], iso[128], nohz[128];

        log_info("topology: %d CPUs online (%s), %zu NUMA node(s), isolated: %s, nohz_full: %s",
                 cpuset_count(&e->topo.online), cpuset_to_text(&e->topo.online, "none", online, sizeof(online)),
                 e->topo.n_nodes > 0 ? e->topo.n_nodes : 1,
                 cpuset_to_text(&e->topo.isolated, "none", iso, sizeof(iso)),
                 cpuset_to_text(&e->topo.nohz_full, "none", nohz, sizeof(nohz)));
}

static void log_nic(const struct config *c, const struct inventory_nic *n) {
        const struct config_interface *ci = config_interface_for(c, n->name);
        char map[768] = "";
        size_t off = 0;

        for (size_t q = 0; q < n->n_queues && off + 32 < sizeof(map); q++) {
                const struct inventory_queue *iq = &n->queues[q];
                int k;

                if (iq->rx_irq < 0 && iq->tx_irq < 0)
                        continue;
                if (iq->rx_irq == iq->tx_irq || iq->tx_irq < 0)
                        k = snprintf(map + off, sizeof(map) - off, " q%d:%d", iq->index, iq->rx_irq);
                else if (iq->rx_irq < 0)
                        k = snprintf(map + off, sizeof(map) - off, " q%d:tx%d", iq->index, iq->tx_irq);
                else
                        k = snprintf(map + off, sizeof(map) - off, " q%d:%d/%d", iq->index, iq->rx_irq, iq->tx_irq);
                if (k < 0 || (size_t) k >= sizeof(map) - off) {
                        snprintf(map + off, sizeof(map) - off, " ...");
                        break;
                }
                off += (size_t) k;
        }
        /* which NICs it manages, said at the start */
        log_info("nic %s: %s; driver %s, node %d, %s, %d rx / %d tx queues, IRQ map (%s):%s", n->name,
                 ci && !ci->manage ? "left alone ([interface] manage = no)" : "managed",
                 n->driver[0] ? n->driver : "none", n->node, n->up ? "up" : "down", n->rx_queues, n->tx_queues,
                 inventory_map_source_to_string(n->map), map[0] ? map : " none");
}

/* A queue map guessed from msi_irqs order: said once per NIC name. */
static void warn_msi_order(struct engine *e, const struct inventory_nic *n) {
        if (n->map != INVENTORY_MAP_MSI_ORDER)
                return;
        for (size_t i = 0; i < e->n_msi_warned; i++)
                if (strcmp(e->msi_warned[i], n->name) == 0)
                        return;
        if (util_grow((void **) &e->msi_warned, &e->allocated_msi_warned, e->n_msi_warned + 1,
                      sizeof(*e->msi_warned)) == 0)
                snprintf(e->msi_warned[e->n_msi_warned++], IFNAMSIZ, "%s", n->name);
        log_warning("nic %s: queue of each IRQ not known from its name (driver %s); queue IRQs guessed from msi_irqs order, "
                    "check them with 'irqsteerctl inventory'", n->name, n->driver[0] ? n->driver : "none");
}

void engine_log_inventory(struct engine *e) {
        for (size_t i = 0; i < e->inv.n_nics; i++) {
                log_nic(e->config, &e->inv.nics[i]);
                warn_msi_order(e, &e->inv.nics[i]);
        }
        if (e->inv.n_nics == 0)
                log_info("no network interfaces found under %s", e->root);
}

/* The name a NIC appearing with ifindex had when it vanished, or NULL (an
 * ifindex is not reused while the kernel runs); the match is forgotten. */
static const char *renamed_from(struct engine *e, const struct inventory *old, const struct inventory *new,
                                const struct inventory_nic *n, char *buf, size_t len) {
        if (n->ifindex <= 0)
                return NULL;
        for (size_t i = 0; i < old->n_nics; i++)
                if (old->nics[i].ifindex == n->ifindex && strcmp(old->nics[i].name, n->name) != 0 &&
                    !inventory_nic(new, old->nics[i].name)) {
                        snprintf(buf, len, "%s", old->nics[i].name);
                        return buf;
                }
        for (unsigned i = 0; i < e->n_gone_nics; i++)
                if (e->gone_nics[i].ifindex == n->ifindex) {
                        snprintf(buf, len, "%s", e->gone_nics[i].name);
                        e->gone_nics[i] = e->gone_nics[--e->n_gone_nics];
                        return strcmp(buf, n->name) != 0 ? buf : NULL;
                }
        return NULL;
}

static void remember_gone(struct engine *e, const struct inventory_nic *n) {
        unsigned i;

        if (n->ifindex <= 0)
                return;
        for (i = 0; i < e->n_gone_nics && e->gone_nics[i].ifindex != n->ifindex; i++)
                ;
        if (i == e->n_gone_nics) {
                if (e->n_gone_nics == ELEMENTSOF(e->gone_nics))
                        i = 0; /* the oldest makes room */
                else
                        e->n_gone_nics++;
        }
        snprintf(e->gone_nics[i].name, sizeof(e->gone_nics[i].name), "%s", n->name);
        e->gone_nics[i].ifindex = n->ifindex;
}

/* Queue counts always (ethtool -L sends no RTM_NEWLINK); NICs coming and
 * going only without the link monitor, which reports those itself. */
void engine_diff_inventory(struct engine *e, const struct inventory *old, const struct inventory *new) {
        for (size_t i = 0; i < new->n_nics; i++) {
                const struct inventory_nic *n = &new->nics[i], *o = inventory_nic(old, n->name);
                char was[IF_NAMESIZE];
                const char *from;

                if (!o) {
                        if (!e->have_linkmon)
                                engine_link_event(e, "%s: appeared", n->name);
                        from = renamed_from(e, old, new, n, was, sizeof(was));
                        if (from && e->apply) {
                                int r = apply_rename_nic(e->apply, from, n->name);

                                if (r < 0)
                                        log_warning_errno(r, "%s is %s renamed (ifindex %d); its saved originals "
                                                          "could not be moved to the new name in the journal: %m",
                                                          n->name, from, n->ifindex);
                                else
                                        log_info("%s is %s renamed (ifindex %d): %d saved originals follow it",
                                                 n->name, from, n->ifindex, r);
                        }
                        continue;
                }
                if (o->rx_queues != n->rx_queues || o->tx_queues != n->tx_queues) {
                        engine_link_event(e, "%s: queues changed (rx %d -> %d, tx %d -> %d), re-applying", n->name,
                                   o->rx_queues, n->rx_queues, o->tx_queues, n->tx_queues);
                        policy_forget_nic(e->policy, n->name);
                }
                if (!e->have_linkmon && o->up != n->up) {
                        engine_link_event(e, n->up ? "%s: link up, re-applying" : "%s: link down", n->name);
                        if (n->up)
                                policy_forget_nic(e->policy, n->name);
                }
        }
        for (size_t i = 0; i < old->n_nics; i++)
                if (!inventory_nic(new, old->nics[i].name)) {
                        if (!e->have_linkmon)
                                engine_link_event(e, "%s: vanished", old->nics[i].name);
                        policy_forget_nic(e->policy, old->nics[i].name);
                        remember_gone(e, &old->nics[i]);
                }
}

void engine_link_event(struct engine *e, const char *fmt, ...) {
        char text[sizeof(e->out->link_events[0].text)];
        const char *stored;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        stored = report_record_link(e->out, text, util_now_usec(CLOCK_REALTIME));
        log_fields(LOG_INFO, ((const char *[]){ "MESSAGE_ID=" ENGINE_MID_LINK, NULL }), "%s", stored);
}
