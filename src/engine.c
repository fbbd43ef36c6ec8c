/* The tick engine (engine.h): sampling schedule, inventory refresh and
 * discovery, policy, carrying out actions, feedback and the failure
 * registry, for irqsteerd and irqsteerctl plan. */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>

#include "action.h"
#include "apply.h"
#include "config.h"
#include "engine.h"
#include "inventory.h"
#include "knob.h"
#include "log.h"
#include "policy.h"
#include "report.h"
#include "rootfs.h"
#include "sample.h"
#include "topology.h"
#include "util.h"
#include "workers.h"

#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)

static uint64_t now_clock(clockid_t id) {
        struct timespec ts;

        clock_gettime(id, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* ---- logging what was found ---- */

/* [interface NAME] sections that match no NIC here: a warning, not an
 * error, since one file may serve several hosts; listed in status.json
 * until a NIC appears that matches (said once per start and reload). */
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

static void log_topology(const struct engine *e) {
        char online[256], iso[128], nohz[128];

        log_info("topology: %d CPUs online (%s), %zu NUMA node(s), isolated: %s, nohz_full: %s",
                 cpuset_count(&e->topo.online), cpuset_to_text(&e->topo.online, "none", online, sizeof(online)),
                 e->topo.n_nodes > 0 ? e->topo.n_nodes : 1,
                 cpuset_to_text(&e->topo.isolated, "none", iso, sizeof(iso)),
                 cpuset_to_text(&e->topo.nohz_full, "none", nohz, sizeof(nohz)));
}

static void log_nic(const struct config *c, const struct inventory *inv, const struct inventory_nic *n) {
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
        (void) inv;
        /* which NICs it manages, said at the start */
        log_info("nic %s: %s; driver %s, node %d, %s, %d rx / %d tx queues, IRQ map (%s):%s", n->name,
                 ci && !ci->manage ? "left alone ([interface] manage = no)" : "managed",
                 n->driver[0] ? n->driver : "none", n->node, n->up ? "up" : "down", n->rx_queues, n->tx_queues,
                 inventory_map_source_to_string(n->map), map[0] ? map : " none");
}

/* Unknown IRQ names: the queue map is a guess from msi_irqs order, which
 * an operator must know about.  Said once per NIC name for the
 * daemon's life, not at each rediscovery. */
static void warn_msi_order(struct engine *e, const struct inventory_nic *n) {
        if (n->map != INVENTORY_MAP_MSI_ORDER)
                return;
        for (size_t i = 0; i < e->n_msi_warned; i++)
                if (strcmp(e->msi_warned[i], n->name) == 0)
                        return;
        if (util_grow((void **) &e->msi_warned, &e->allocated_msi_warned, e->n_msi_warned + 1,
                      sizeof(*e->msi_warned)) == 0)
                snprintf(e->msi_warned[e->n_msi_warned++], IFNAMSIZ, "%s", n->name);
        log_warning("nic %s: IRQ names not recognised (driver %s); queue IRQs guessed from msi_irqs order, "
                    "check them with 'irqsteerctl inventory'", n->name, n->driver[0] ? n->driver : "none");
}

static void log_inventory(struct engine *e) {
        for (size_t i = 0; i < e->inv.n_nics; i++) {
                log_nic(e->config, &e->inv, &e->inv.nics[i]);
                warn_msi_order(e, &e->inv.nics[i]);
        }
        if (e->inv.n_nics == 0)
                log_info("no network interfaces found under %s", e->root);
}

/* ---- discovery ---- */


/* What changed between two inventories.  Queue counts always: ethtool -L
 * changes the real queue count without any RTM_NEWLINK (measured on veth,
 * Linux 6.18), and drivers reset IRQ affinity then.  NICs appearing,
 * vanishing or going up only without the link monitor (fixture roots,
 * netlink unavailable), which reports those itself as they happen. */
/* The name a NIC that appears with ifindex had before, if it vanished
 * under another (in the last read, or earlier), or NULL; the match is
 * forgotten.  ifindex is not reused while the kernel runs (a counter per
 * network namespace), so the same one is the same device. */
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

static void diff_inventory(struct engine *e, const struct inventory *old, const struct inventory *new) {
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

/* Dry run: what apply recorded as "written" (apply_overlay), laid over the
 * inventory and, when ws is given, the worker set; with fresh_only only
 * over an object re-read by this refresh: the others still hold what was
 * laid over them when the action was recorded (run_actions()) or at an
 * earlier refresh: an object not re-read still holds its overlaid value,
 * and laying it again would change nothing. */
static void overlay(struct engine *e, struct inventory *inv, struct worker_set *ws, bool fresh_only) {
        const struct apply_overlay_entry *v;
        size_t n;

        if (!e->dry_run || !e->apply)
                return;
        n = apply_overlay(e->apply, &v);
        for (size_t i = 0; i < n; i++) {
                if (v[i].key.kind == KNOB_THREAD) {
                        if (ws)
                                workers_set_knob(ws, &v[i].key, &v[i].cpus);
                } else
                        inventory_set_knob(inv, &v[i].key, &v[i].cpus, v[i].number, fresh_only);
        }
}

/* Per-object values (IRQ masks, a queue's rps_cpus/rps_flow_cnt/xps_cpus)
 * re-read a tick.  Reading all of them was ~1,300 open/read/close a tick
 * on a 256-CPU host with 8 NICs x 32 queues, ~7 ms of system time a tick;
 * what the policy needs fresh is what it changes (re-read the tick after,
 * inventory_irq.reread) and what changed behind its back, which a rotating audit
 * finds within ceil(objects / AUDIT_PER_TICK) ticks (9 s on that host at
 * 1 s ticks), sooner on a link event (full discovery).  Hosts with up to 64
 * NIC IRQs + queues read everything every tick, as before.  A stale value
 * never leads to a write: run_actions() re-reads an unaudited object before
 * acting on it. */
#define AUDIT_PER_TICK 64

/* Full discovery at least this often (ticks), whatever the cheap checks
 * of inventory_refresh() say: a safety net for layout changes they cannot
 * see (a driver rebound with the same IRQs and queue counts). */
#define FULL_DISCOVERY_TICKS 60

/* Per tick only the values the policy needs fresh are re-read; the whole
 * inventory (dir walks, device links, msi_irqs: ~5 files per IRQ and 5 per
 * queue, thousands of files on a 256-CPU host with 459 IRQs) at start,
 * after link events and CPU hotplug (inventory_dirty), when inventory_refresh()
 * sees the layout change (IRQ set, NIC set, queue counts: ethtool -L sends
 * no netlink message, so queue dirs are counted each tick), and every
 * FULL_DISCOVERY_TICKS ticks. */
static int discover_inventory(struct engine *e, const struct procfs_interrupts *interrupts);

/* Why this tick reads the whole inventory, NULL when a refresh does. */
static const char *discovery_due(const struct engine *e) {
        return !e->have_inv ? "first tick" : e->inventory_dirty ? "link event or CPU set change" :
               e->ticks_since_full >= FULL_DISCOVERY_TICKS ? "periodic check" : NULL;
}

static int refresh_inventory(struct engine *e, const struct procfs_interrupts *interrupts) {
        const char *why = discovery_due(e);
        int r;

        if (why) {
                log_debug("Reading the whole inventory: %s", why);
                return discover_inventory(e, interrupts);
        }
        r = inventory_refresh(e->rootfd, interrupts, &e->inv, &e->audit);
        if (r != 0) {
                if (r < 0)
                        log_debug_errno(r, "Reading the whole inventory: refresh failed: %m");
                else
                        log_debug("Reading the whole inventory: IRQs, NICs or queue counts changed");
                /* something changed under a reading carried over from an
                 * earlier tick: the next tick reads the IRQs afresh */
                e->irq_force = true;
                return discover_inventory(e, interrupts);
        }
        e->ticks_since_full++;
        overlay(e, &e->inv, NULL, true);
        return 0;
}

static int discover_inventory(struct engine *e, const struct procfs_interrupts *interrupts) {
        struct inventory inv = {};
        int r;

        e->ticks_since_full = 0;
        r = inventory_read(e->rootfd, interrupts, &inv);
        if (r < 0)
                return r;
        if (e->root_is_host) {
                r = inventory_netlink_refresh(&inv);
                if (r < 0)
                        log_debug_errno(r, "netlink inventory refresh failed, using sysfs values: %m");
                inventory_read_napi_cpus(e->rootfd, &inv); /* kthread start times: napi_threads */
        }
        overlay(e, &inv, NULL, false);
        if (e->have_inv) {
                if (e->policy)
                        diff_inventory(e, &e->inv, &inv);
                inventory_free(&e->inv);
        }
        e->inv = inv;
        e->have_inv = true;
        return 0;
}

/* CPU hotplug shows as a changed set of /proc/stat lines between two
 * snapshots (comparing with the topology instead would fire on every tick
 * of a host whose sysfs and procfs disagree). */
static void snapshot_cpus(const struct sample_snapshot *s, cpuset_t *ret) {
        cpuset_zero(ret);
        for (size_t i = 0; i < s->stat.n_cpus; i++)
                cpuset_set(ret, s->stat.cpus[i].cpu);
}

static bool cpu_set_changed(const struct sample_snapshot *prev, const struct sample_snapshot *cur) {
        cpuset_t a, b;

        snapshot_cpus(prev, &a);
        snapshot_cpus(cur, &b);
        return !cpuset_equal(&a, &b);
}

static int reread_topology(struct engine *e) {
        struct topology t = {};
        int r;

        r = topology_read(e->rootfd, &t);
        if (r < 0)
                return r;
        topology_free(&e->topo);
        e->topo = t;
        return 0;
}

/* ---- acting ---- */

static struct engine_failed_object *failed_find(struct engine_failures *fs, const char *key) {
        for (size_t i = 0; i < fs->n; i++)
                if (strcmp(fs->v[i].key, key) == 0)
                        return &fs->v[i];
        return NULL;
}

void engine_failures_forget(struct engine_failures *fs, const struct action *a) {
        struct engine_failed_object *f;
        char key[KNOB_KEY_MAX];

        action_key_text(a, key, sizeof(key));
        f = failed_find(fs, key);
        if (f)
                *f = fs->v[--fs->n];
}

void engine_failures_free(struct engine_failures *fs) {
        free(fs->v);
        fs->v = NULL;
        fs->n = fs->allocated = 0;
}

void engine_log_action_failure(struct engine_failures *fs, const struct action *a, const char *line, int r,
                               uint64_t now) {
        enum action_failure cls = action_failure_class(a->type, r);
        struct engine_failed_object *f;
        char key[KNOB_KEY_MAX];

        action_key_text(a, key, sizeof(key));
        f = failed_find(fs, key);
        if (f && f->cls == cls) {
                /* Said already; repeats only when the limit allows, at debug. */
                if (log_ratelimit_ok(&fs->rl, now))
                        log_debug_errno(r, "still failing (%s): %s: %m", action_failure_to_string(cls), line);
                return;
        }
        if (!f && util_grow((void **) &fs->v, &fs->allocated, fs->n + 1, sizeof(*fs->v)) == 0) {
                f = &fs->v[fs->n++];
                snprintf(f->key, sizeof(f->key), "%s", key);
        }
        if (f)
                f->cls = cls;

        /* the one place an action's failure is said; the policy only acts
         * on the class (action_failure_class) */
        switch (cls) {
        case ACTION_FAIL_PERMANENT:
                if (a->type == KNOB_IRQ && (r == -EIO || r == -EPERM))
                        /* expected (EIO before 6.12, EPERM since): skipped
                         * quietly from now on */
                        log_info_errno(r, "%s: managed by the kernel (%m); not touching it again", line);
                else if (a->type == KNOB_THREAD)
                        log_full_errno(LOG_NOTICE, r, "%s: the thread refuses affinity changes (%m); leaving it alone",
                                       line);
                else if (a->type == KNOB_SOCKFLOW)
                        log_full_errno(LOG_NOTICE, r, "%s: rps_sock_flow_entries cannot be set (%m); RFS stays off",
                                       line);
                else
                        log_warning_errno(r, "%s: cannot be changed (%m); not touching it again", line);
                break;
        case ACTION_FAIL_CAPACITY:
                log_full_errno(LOG_NOTICE, r, "%s: no free vector on the target CPU (%m); choosing another CPU", line);
                break;
        case ACTION_FAIL_GONE:
                if (a->type == KNOB_SOCKFLOW)
                        /* the sysctl exists only in the initial network
                         * namespace, and its value applies to all */
                        log_info_errno(r, "%s: rps_sock_flow_entries is not visible here (a network namespace?); "
                                       "RFS uses the host's value", line);
                else if (engine_failure_rediscovers(a->type, r))
                        log_info_errno(r, "%s: object vanished (%m); rediscovering at the next tick", line);
                else
                        log_info_errno(r, "%s: not there (%m)", line);
                break;
        case ACTION_FAIL_TRANSIENT:
                log_debug_errno(r, "%s: busy (%m), retrying next tick", line);
                break;
        default:
                log_warning_errno(r, "%s: failed (%s): %m", line, action_failure_to_string(cls));
                break;
        }
}

bool engine_failure_rediscovers(enum knob_kind type, int r) {
        /* A vanished thread is normal and workers are rediscovered each
         * tick anyway; a vanished IRQ or queue means the inventory is stale
         * (driver reload, ethtool -L, device removal). */
        return action_failure_class(type, r) == ACTION_FAIL_GONE && type != KNOB_THREAD &&
               type != KNOB_SOCKFLOW; /* absent in a network namespace, by design */
}

/* ---- effective affinity: where a written IRQ really fires ---- */

static struct apply_eff_watch *eff_find(struct engine *e, unsigned irq) {
        for (size_t i = 0; i < e->n_eff; i++)
                if (e->eff[i].irq == irq)
                        return &e->eff[i];
        return NULL;
}

static void eff_drop(struct engine *e, struct apply_eff_watch *w) {
        *w = e->eff[--e->n_eff];
}

static void eff_watch(struct engine *e, unsigned irq, const cpuset_t *want) {
        struct apply_eff_watch *w = eff_find(e, irq);

        if (!w) {
                if (util_grow((void **) &e->eff, &e->allocated_eff, e->n_eff + 1, sizeof(*e->eff)) < 0)
                        return; /* only a check is lost */
                w = &e->eff[e->n_eff++];
        }
        *w = (struct apply_eff_watch) { .irq = irq, .want = *want };
}

/* Whether IRQ irq had interrupts between the two readings. */
static bool irq_fired(const struct procfs_interrupts *prev, const struct procfs_interrupts *cur, unsigned irq) {
        const struct procfs_irq *a = prev ? procfs_interrupts_find(prev, irq) : NULL;
        const struct procfs_irq *b = procfs_interrupts_find(cur, irq);

        return a && b && b->total > a->total;
}

/* Each tick, for the IRQs written since they last settled.  An IRQ someone
 * else moved since (or that vanished) is no longer ours to check. */
static void check_effective(struct engine *e, const struct procfs_interrupts *prev,
                            const struct procfs_interrupts *cur) {
        for (size_t i = 0; i < e->n_eff;) {
                struct apply_eff_watch *w = &e->eff[i];
                const struct inventory_irq *irq = inventory_irq(&e->inv, w->irq);
                char want[256], eff[256];
                int ok;

                if (!irq || !irq->affinity_readable || !cpuset_equal(&irq->affinity, &w->want)) {
                        eff_drop(e, w);
                        continue;
                }
                ok = apply_irq_effective_ok(e->rootfd, w->irq, &w->want, &w->eff);
                w->has_eff = ok >= 0;
                cpuset_to_text(&w->want, "?", want, sizeof(want));
                cpuset_to_text(&w->eff, "?", eff, sizeof(eff));
                switch (apply_effective_step(w, ok, irq_fired(prev, cur, w->irq), APPLY_EFFECTIVE_GRACE)) {
                case APPLY_EFF_MISMATCH:
                        engine_log_effective_mismatch(w->irq, irq->name,
                                                      irq->nic >= 0 ? e->inv.nics[irq->nic].name : NULL,
                                                      irq->queue, want, eff, w->off_ticks);
                        break;
                case APPLY_EFF_RECOVERED:
                        log_info("IRQ %u (%s) now fires on CPU %s as set", w->irq, irq->name, eff);
                        eff_drop(e, w);
                        continue;
                case APPLY_EFF_SETTLED:
                        eff_drop(e, w);
                        continue;
                case APPLY_EFF_UNKNOWN:
                        if (ok != -ENOENT)
                                log_debug_errno(ok, "IRQ %u: effective affinity unreadable: %m", w->irq);
                        eff_drop(e, w);
                        continue;
                default:
                        break;
                }
                i++;
        }
}

void engine_log_policy_result(int *last, int r) {
        if (r >= 0) {
                if (*last)
                        log_notice("The policy works again");
                *last = 0;
                return;
        }
        if (*last == -r) {
                log_debug_errno(r, "Policy failed again: %m");
                return;
        }
        *last = -r;
        log_error_errno(r, "Policy failed: %m; nothing is changed until it works again (said once)");
}

void engine_log_tick_failure(struct log_ratelimit *rl, int r, const char *what, uint64_t now) {
        if (!log_ratelimit_ok(rl, now))
                return;
        if (rl->suppressed > 0) {
                log_warning_errno(r, "Failed to %s, skipping this tick: %m (%u similar messages suppressed)",
                                  what, rl->suppressed);
                rl->suppressed = 0;
        } else
                log_warning_errno(r, "Failed to %s, skipping this tick: %m", what);
}

static void record_action(struct engine *e, const struct action *a, const char *line, int result) {
        report_record_action(e->out, a, line, result, now_clock(CLOCK_REALTIME));
        if (e->on_action)
                e->on_action(e->userdata, a, line, result);
}

void engine_log_action(const struct action *a, const char *line, int result) {
        char f_irq[32], f_from[300], f_to[300], f_dev[48], f_queue[32], f_reason[300], f_type[48];
        char from[256], to[256];
        const char *fields[8];
        size_t n = 0;

        cpuset_to_text(&a->from, "", from, sizeof(from));
        cpuset_to_text(&a->cpus, "", to, sizeof(to));
        snprintf(f_type, sizeof(f_type), "ACTION=%s", action_type_to_string(a->type));
        fields[n++] = f_type;
        if (a->type == KNOB_IRQ) {
                snprintf(f_irq, sizeof(f_irq), "IRQ=%u", a->irq);
                fields[n++] = f_irq;
        }
        if (a->type != KNOB_FLOWCNT && a->type != KNOB_SOCKFLOW) {
                snprintf(f_from, sizeof(f_from), "CPU_FROM=%s", from);
                snprintf(f_to, sizeof(f_to), "CPU_TO=%s", to);
                fields[n++] = f_from;
                fields[n++] = f_to;
        }
        if (a->nic[0]) {
                snprintf(f_dev, sizeof(f_dev), "DEVICE=%s", a->nic);
                fields[n++] = f_dev;
        }
        if (a->queue >= 0) {
                snprintf(f_queue, sizeof(f_queue), "QUEUE=%d", a->queue);
                fields[n++] = f_queue;
        }
        util_mark_cut(f_reason, sizeof(f_reason), snprintf(f_reason, sizeof(f_reason), "REASON=%s", a->reason));
        fields[n++] = f_reason;
        fields[n] = NULL;

        if (result == APPLY_DRY_RUN)
                log_fields(LOG_INFO, fields, "dry-run: would set %s", line);
        else if (result == APPLY_READBACK_DIFFERS)
                log_fields(LOG_INFO, fields, "%s (the kernel reports a different value back)", line);
        else
                log_fields(LOG_INFO, fields, "%s", line);
}

/* The object an action changes: marked for a re-read at the next refresh
 * (where it is now, the effective CPU the kernel chose), and when its
 * values were not read this tick, read now.  Returns false when the value
 * the policy decided from is no longer there: changed behind our back
 * since the audit last saw it.  The action is then dropped; the next tick's
 * policy sees the new value (an external change, or a driver reset after
 * policy_forget_nic()) and decides again. */
static bool action_current(struct engine *e, const struct action *a) {
        struct inventory_nic *n = a->nic[0] ? (struct inventory_nic *) inventory_nic(&e->inv, a->nic) : NULL;
        struct inventory_queue *q = n ? inventory_queue(n, a->queue) : NULL;
        struct inventory_irq *irq;

        switch (a->type) {
        case KNOB_IRQ:
                irq = inventory_irq(&e->inv, a->irq);
                if (!irq)
                        return true;
                irq->reread = true;
                if (irq->fresh)
                        return true;
                inventory_reread_irq(e->rootfd, irq);
                return !irq->affinity_readable || cpuset_equal(&irq->affinity, &a->from);
        case KNOB_RPS:
        case KNOB_XPS:
        case KNOB_FLOWCNT:
                if (!q)
                        return true;
                q->reread = true;
                if (q->fresh)
                        return true;
                inventory_reread_queue(e->rootfd, n, q);
                if (a->type == KNOB_RPS)
                        return !q->has_rps || cpuset_equal(&q->rps_cpus, &a->from);
                if (a->type == KNOB_XPS)
                        return !q->has_xps || cpuset_equal(&q->xps_cpus, &a->from);
                return q->rps_flow_cnt == a->from_value;
        default:
                return true;
        }
}

/* A journal that cannot be saved is the state directory's problem (full,
 * read-only, gone): said once with its path, and once when it works again.
 * Nothing is changed meanwhile: apply_action() writes only after the
 * original is saved. */
static void check_journal(struct engine *e) {
        int r = apply_journal_error(e->apply);

        if (r < 0 && !e->journal_failing)
                log_error_errno(r, "Cannot save the undo journal %s: %m; the state directory %s needs room or "
                                "repair, and nothing is changed until the journal can be saved",
                                apply_journal_path(e->apply), e->state_dir);
        else if (r == 0 && e->journal_failing)
                log_notice("The undo journal %s can be saved again", apply_journal_path(e->apply));
        e->journal_failing = r < 0;
}

/* After an IRQ is written, ticks that read /proc/interrupts to see where it
 * fires (EFFECTIVE AFFINITY): the grace and two more.  A watch that outlives
 * them (the IRQ is quiet, or fires elsewhere) goes on at the readings that
 * happen anyway. */
#define EFF_READ_TICKS (APPLY_EFFECTIVE_GRACE + 2)
static void run_actions(struct engine *e, uint64_t now) {
        /* what the actions changed shows in the per-IRQ rates next tick */
        if (e->actions.n > 0)
                e->irq_force = true;
        for (size_t i = 0; i < e->actions.n; i++) {
                const struct action *a = &e->actions.v[i];
                char line[384];
                int r;

                if (!e->dry_run && !action_current(e, a)) {
                        log_debug("%s %s: changed since it was last read; deciding again next tick",
                                  action_type_to_string(a->type), a->nic[0] ? a->nic : "IRQ");
                        continue;
                }
                action_format(a, line, sizeof(line));
                r = apply_action(e->apply, a);
                check_journal(e);
                if (r < 0 && apply_failed_in_journal(e->apply)) {
                        /* nothing was written, and the object is not to
                         * blame: the policy decides again next tick */
                        record_action(e, a, line, r);
                        policy_feedback(e->policy, a, -EAGAIN, now);
                } else if (r >= 0) {
                        engine_failures_forget(&e->failures, a);
                        if (r != APPLY_UNCHANGED) {
                                engine_log_action(a, line, r);
                                record_action(e, a, line, r);
                        }
                        if (e->dry_run) {
                                struct knob_key k;

                                /* apply recorded it: the inventory shows it now */
                                if (action_knob_key(a, &k) == 0)
                                        inventory_set_knob(&e->inv, &k, &a->cpus, a->value, false);
                        } else if (a->type == KNOB_IRQ && (r == APPLY_DONE || r == APPLY_READBACK_DIFFERS)) {
                                eff_watch(e, a->irq, &a->cpus);
                                e->eff_read_until = e->ticks + 1 + EFF_READ_TICKS;
                        }
                        policy_feedback(e->policy, a, 0, now);
                } else {
                        engine_log_action_failure(&e->failures, a, line, r, now);
                        if (engine_failure_rediscovers(a->type, r)) {
                                struct apply_eff_watch *w;

                                e->inventory_dirty = true;
                                if (a->type == KNOB_IRQ && (w = eff_find(e, a->irq)))
                                        eff_drop(e, w);
                        }
                        record_action(e, a, line, r);
                        policy_feedback(e->policy, a, r, now);
                }
        }
}


/* ---- the tick ---- */

static void object_fields(unsigned irq, const char *device, int queue, char *f_irq, char *f_dev, char *f_queue,
                          size_t len, const char **fields, size_t *n) {
        if (irq) {
                snprintf(f_irq, len, "IRQ=%u", irq);
                fields[(*n)++] = f_irq;
        }
        if (device && device[0]) {
                snprintf(f_dev, len, "DEVICE=%s", device);
                fields[(*n)++] = f_dev;
                if (queue >= 0) {
                        snprintf(f_queue, len, "QUEUE=%d", queue);
                        fields[(*n)++] = f_queue;
                }
        }
}

void engine_log_note(const struct policy_note *no, const char *other) {
        char f_irq[48], f_dev[48], f_queue[48];
        const char *fields[6];
        size_t n = 0;

        if (no->kind == POLICY_NOTE_EXTERNAL)
                fields[n++] = "MESSAGE_ID=" ENGINE_MID_EXTERNAL;
        object_fields(no->irq, no->device, no->queue, f_irq, f_dev, f_queue, sizeof(f_irq), fields, &n);
        fields[n] = NULL;
        if (other && other[0])
                log_fields(no->level, fields, "%s; %s", no->text, other);
        else
                log_fields(no->level, fields, "%s", no->text);
}

void engine_log_effective_mismatch(unsigned irq, const char *name, const char *device, int queue, const char *want,
                                   const char *eff, unsigned ticks) {
        char f_irq[48], f_dev[48], f_queue[48];
        const char *fields[6] = { "MESSAGE_ID=" ENGINE_MID_EFFECTIVE };
        size_t n = 1;

        object_fields(irq, device, queue, f_irq, f_dev, f_queue, sizeof(f_irq), fields, &n);
        fields[n] = NULL;
        log_fields(LOG_NOTICE, fields,
                   "IRQ %u (%s) set to CPU %s but fires on CPU %s (effective_affinity_list) after %u "
                   "ticks with interrupts; the kernel or hardware keeps it there",
                   irq, name, want, eff, ticks);
}

/* Who else changes what we set: irqbalance is the usual one (a unit
 * started by hand, or an image that still enables it).  Looked up only
 * when a change behind our back is seen. */
void engine_find_other_writer(struct engine *e) {
        pid_t pid;

        e->other_writer[0] = 0;
        e->other_pid = 0;
        /* one that works on another tree (a simulator's, bind-mounted over
         * its /proc/irq) changes nothing of ours */
        if (workers_find_comm(e->rootfd, "irqbalance", "proc/irq", &pid) > 0) {
                e->other_pid = pid;
                snprintf(e->other_writer, sizeof(e->other_writer),
                         "irqbalance (pid %d) is running and changes IRQ affinities too: "
                         "mask it (systemctl mask --now irqbalance.service)", (int) pid);
        }
}

static void log_notes(struct engine *e) {
        const struct policy_report *rep = &e->report;
        bool looked = false;

        for (size_t i = 0; i < rep->n_notes; i++) {
                if (rep->notes[i].kind == POLICY_NOTE_EXTERNAL && !looked) {
                        engine_find_other_writer(e);
                        looked = true;
                }
                engine_log_note(&rep->notes[i],
                                rep->notes[i].kind == POLICY_NOTE_EXTERNAL ? e->other_writer : NULL);
        }
}

int engine_decide(struct engine *e, uint64_t now, const cpuset_t *bans, const struct sample_rates *raw) {
        struct policy_input in = {
                .config = e->config,
                .topo = &e->topo,
                .inv = &e->inv,
                .load = e->have_avg ? &e->avg : NULL,
                .raw = raw,
                .workers = e->config->n_workers ? &e->workers : NULL,
                .bans = bans,
                .now_usec = now,
        };
        int r;

        r = policy_tick(e->policy, &in, &e->actions, &e->report);
        engine_log_policy_result(&e->policy_errno, r);
        if (r < 0)
                return r;
        log_notes(e);
        report_count_policy(e->out, &e->report);
        run_actions(e, now);
        return 0;
}

/* Whether this tick reads /proc/interrupts (irqsteer.conf(5), irq_rate_interval).  Per-IRQ
 * rates only split a CPU's load among the IRQs on it, and a 256-CPU host's
 * /proc/interrupts is over a megabyte, more than everything else a tick
 * reads: it is read when something may have changed, i.e. a CPU's smoothed
 * irq+softirq share moved by IRQ_RATE_DRIFT since the last reading, the
 * CPU set, inventory or configuration changed, an action was taken or an
 * IRQ was written in the last EFF_READ_TICKS ticks; and at least every
 * irq_rate_interval.  The reason, or NULL when not due. */
#define IRQ_RATE_DRIFT 0.05
static const char *irq_reading_due(const struct engine *e, const struct sample_snapshot *cur, bool cpus_changed) {
        uint64_t last;

        if (!e->have_prev || e->irq_force)
                return "first tick, or after an action, a reload or an inventory change";
        if (e->n_eff > 0 && e->ticks < e->eff_read_until)
                return "effective affinity watched";
        if (discovery_due(e))
                return "inventory discovery";
        if (e->config->irq_rate_interval_usec == 0)
                return "irq_rate_interval = 0";
        last = sample_snapshot_irq_usec(&e->prev);
        if (cur->usec <= last || cur->usec - last >= e->config->irq_rate_interval_usec)
                return "irq_rate_interval passed";
        if (cpus_changed)
                return "CPU set changed";
        if (sample_load_drifted(&e->prev, cur, e->have_avg ? &e->avg : NULL, e->config->smoothing, e->irq_ref,
                                e->irq_ref_max_cpu, IRQ_RATE_DRIFT))
                return "CPU load moved";
        return NULL;
}

/* After a tick that read /proc/interrupts: the loads it saw. */
static void irq_ref_update(struct engine *e) {
        int m = e->have_avg ? e->avg.max_cpu : -1;

        if (m > e->irq_ref_max_cpu) {
                double *v = reallocarray(e->irq_ref, (size_t) m + 1, sizeof(*v));
                if (!v) {
                        e->irq_force = true; /* no reference: read next time too */
                        return;
                }
                e->irq_ref = v;
        }
        e->irq_ref_max_cpu = m;
        for (int c = 0; c <= m; c++) {
                const struct sample_cpu *sc = &e->avg.cpus[c];
                e->irq_ref[c] = sc->valid && !sc->offline ? sc->irq + sc->softirq : NAN;
        }
}

/* Whether this tick runs in full (the inventory refresh, /proc/interrupts
 * when due, /proc/softirqs, the policy, the status file) or is a calm tick
 * that only sampled /proc/stat.  A calm tick cost 0.63 ms of CPU
 * at 16 CPUs in full, so at a 2 s interval irqsteerd spent about 5 times
 * what irqbalance spends per hour at its 10 s (make bench, cost16): on a
 * calm host nothing the policy would do can change between full ticks,
 * since no CPU is near a threshold (policy_pace).  The reason, or NULL
 * for a calm tick. */
static const char *full_tick_due(const struct engine *e, uint64_t now, enum policy_pace pace, bool cpus_changed) {
        if (pace != POLICY_PACE_CALM)
                return policy_pace_to_string(pace);
        if (!e->have_inv || !e->have_avg || e->once)
                return "first ticks";
        if (e->inventory_dirty || e->irq_force || cpus_changed)
                return "inventory, CPU set, bans or configuration changed";
        if (e->n_eff > 0 && e->ticks < e->eff_read_until)
                return "effective affinity watched";
        /* new worker threads are pinned at the next tick */
        if (e->config->n_workers > 0)
                return "workers configured";
        if (e->config->irq_rate_interval_usec == 0)
                return "irq_rate_interval = 0";
        if (e->report.measuring && (e->calm_run + 1 >= ENGINE_MEASURE_FULL_EVERY ||
                                    (e->report.due_usec > 0 && now >= e->report.due_usec)))
                return "a hot CPU's dwell or a new RPS set's share measurement";
        if (e->calm_run + 1 >= ENGINE_FULL_TICK_EVERY)
                return "periodic audit";
        return NULL;
}

/* The interval after a tick: fast_interval while a CPU nears hot, so that
 * the samples hot_samples asks for come quickly (fast attack);
 * calm_interval while every CPU is calm, since on a calm host the wake-up
 * is most of what a tick costs (make bench, cost16: a process that only
 * wakes by sd-event every 2 s and reads /proc/stat costs what irqbalance
 * costs at its 10 s); the configured one otherwise. */
uint64_t engine_next_interval(const struct engine *e, uint64_t interval) {
        if (e->pace == POLICY_PACE_FAST && e->config->fast_interval_usec > 0)
                return MIN(e->config->fast_interval_usec, interval);
        if (e->pace == POLICY_PACE_CALM)
                return MAX(e->config->calm_interval_usec, interval);
        return interval;
}

int engine_tick(struct engine *e, uint64_t now, const cpuset_t *bans, struct engine_tick_result *ret) {
        struct sample_snapshot cur = {};
        struct sample_rates raw = {};
        bool read_irqs = false, cpus_changed = false, have_raw = false, counted = false;
        enum policy_pace pace_in;
        const char *full;
        int r;

        *ret = (struct engine_tick_result) {};
        r = sample_snapshot_take_cpus(e->rootfd, &e->files, now, &cur);
        if (r < 0) {
                engine_log_tick_failure(&e->tick_rl, r, "read /proc/stat", now);
                return 0;
        }
        (void) sample_snapshot_take_napi(e->rootfd, e->have_inv ? &e->inv : NULL, &cur); /* -ENOMEM: none */
        if (e->have_prev) {
                cpus_changed = cpu_set_changed(&e->prev, &cur);
                /* the CPU shares of the interval before /proc/softirqs and
                 * /proc/interrupts are read, if they are at all: as if
                 * prev's readings were carried (what decides whether the
                 * tick is full reads /proc/stat alone) */
                cur.irq_usec = sample_snapshot_irq_usec(&e->prev);
                cur.softirq_usec = sample_snapshot_softirq_usec(&e->prev);
                r = sample_compute(&e->prev, &cur, &raw);
                cur.irq_usec = cur.softirq_usec = 0;
                have_raw = r >= 0;
                if (r < 0)
                        log_debug_errno(r, "Rates unavailable this tick: %m");
        }
        pace_in = policy_pace(e->config, &e->report, have_raw ? &raw : NULL);
        full = full_tick_due(e, now, pace_in, cpus_changed);
        /* ethtool -L sends no link notification and the driver resets the
         * IRQ affinities: a calm tick still looks at the queue counts */
        if (!full && e->have_inv && inventory_queue_counts_changed(e->rootfd, &e->inv) != 0)
                full = "queue count changed";
        if (full) {
                const char *why = irq_reading_due(e, &cur, cpus_changed), *what = "read /proc/softirqs";

                read_irqs = why != NULL;
                r = sample_snapshot_take_softirqs(e->rootfd, &e->files, &cur);
                if (r >= 0 && read_irqs) {
                        log_debug("Reading /proc/interrupts: %s", why);
                        what = "read /proc/interrupts";
                        r = sample_snapshot_take_irqs(e->rootfd, e->have_prev ? &e->prev : NULL, &cur);
                }
                if (r < 0) {
                        engine_log_tick_failure(&e->tick_rl, r, what, now);
                        sample_rates_free(&raw);
                        return 0;
                }
                if (read_irqs)
                        (void) sample_snapshot_take_qstats(e->have_inv ? &e->inv : NULL, &e->netdev, now,
                                                           &cur); /* else none */
                else
                        sample_snapshot_carry_irqs(&e->prev, &cur);
                if (have_raw) {
                        sample_rates_free(&raw);
                        r = sample_compute(&e->prev, &cur, &raw);
                        have_raw = r >= 0;
                        if (r < 0)
                                log_debug_errno(r, "Rates unavailable this tick: %m");
                }
        } else {
                sample_snapshot_carry_softirqs(&e->prev, &cur);
                sample_snapshot_carry_irqs(&e->prev, &cur);
        }
        if (have_raw) {
                r = sample_smooth(&e->avg, &raw, e->config->smoothing);
                if (r >= 0)
                        e->have_avg = true;
                else
                        log_debug_errno(r, "Rates unavailable this tick: %m");
        }
        if (read_irqs) {
                e->irq_readings++;
                e->irq_force = false;
                irq_ref_update(e);
        }
        r = 0;
        if (!full) {
                e->calm_run++;
                e->pace = POLICY_PACE_CALM;
                goto done;
        }
        log_debug("Full tick: %s", full);
        e->calm_run = 0;

        if (cpus_changed) {
                r = reread_topology(e);
                if (r < 0)
                        log_warning_errno(r, "CPU set changed but re-reading the topology failed: %m");
                else {
                        log_notice("CPU hotplug: topology re-read");
                        log_topology(e);
                        e->inventory_dirty = true;
                }
        }

        /* The policy must see the current affinities each tick to tell
         * external changes: refresh_inventory() re-reads them. */
        r = refresh_inventory(e, &cur.interrupts);
        if (r < 0) {
                engine_log_tick_failure(&e->tick_rl, r, "read the NIC inventory", now);
                goto out;
        }
        if (e->inventory_dirty) {
                log_inventory(e);
                engine_check_unmatched(e, false);
                e->inventory_dirty = false;
        }
        /* whether a watched IRQ fired: between the last two readings */
        if (e->n_eff > 0 && read_irqs)
                check_effective(e, e->have_prev ? &e->prev.interrupts : NULL, &cur.interrupts);

        if (e->config->n_workers > 0) {
                struct worker_set ws = {};

                r = workers_discover(e->rootfd, e->config, &ws);
                if (r < 0)
                        log_debug_errno(r, "Worker discovery failed: %m");
                else {
                        workers_free(&e->workers);
                        e->workers = ws;
                        overlay(e, &e->inv, &e->workers, false);
                        /* the journal and status.json keep no thread that exited */
                        int gone = e->apply ? apply_forget_gone_threads(e->apply) : 0;

                        if (gone > 0)
                                log_debug("Forgot %d exited worker threads", gone);
                }
        }

        if (!e->once || e->have_prev) {
                r = engine_decide(e, now, bans, have_raw ? &raw : NULL);
                if (r == -ENOMEM)
                        goto out;
                ret->decided = r >= 0;
                r = 0;
        }
        /* a tick that began fast (a CPU at a threshold or its load rising
         * since the last decision) is followed by a fast one: this tick's
         * report is the new reference, so the rise no longer shows in it */
        e->pace = MAX(pace_in, policy_pace(e->config, &e->report, have_raw ? &raw : NULL));
done:
        e->ticks++;
        {
                uint64_t took = now_clock(CLOCK_MONOTONIC) - now;

                report_count_tick(e->out, took);
                log_debug("tick %u (%s) took %.1f ms", e->ticks, full ? "full" : "calm",
                          (double) took / USEC_PER_MSEC);
        }
        ret->full = full;
        counted = true;
out:
        sample_rates_free(&raw);
        if (e->have_prev)
                sample_snapshot_free(&e->prev);
        e->prev = cur;
        e->have_prev = true;
        return r == -ENOMEM ? r : counted;
}

void engine_link_event(struct engine *e, const char *fmt, ...) {
        char text[sizeof(e->out->link_events[0].text)];
        const char *stored;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        stored = report_record_link(e->out, text, now_clock(CLOCK_REALTIME));
        log_fields(LOG_INFO, ((const char *[]){ "MESSAGE_ID=" ENGINE_MID_LINK, NULL }), "%s", stored);
}

void engine_init(struct engine *e) {
        *e = (struct engine) {
                .rootfd = -1,
                .failures.rl = { .interval_usec = 60 * USEC_PER_SEC, .burst = 10 },
                .tick_rl = { .interval_usec = 60 * USEC_PER_SEC, .burst = 10 },
                .avg = { .max_cpu = -1 },
                .irq_ref_max_cpu = -1,
                .irq_force = true,
                .audit = { .per_tick = AUDIT_PER_TICK },
        };
}

int engine_start(struct engine *e, uint64_t now) {
        int r;

        r = topology_read(e->rootfd, &e->topo);
        if (r < 0)
                return log_error_errno(r, "Failed to read the CPU topology under %s: %m", e->root);
        (void) cpuset_set_limit(topology_cpu_bound(e->rootfd, &e->topo));
        log_topology(e);

        r = sample_snapshot_take(e->rootfd, now, &e->prev);
        if (r < 0)
                return log_error_errno(r, "Failed to read /proc/stat, /proc/softirqs, /proc/interrupts under %s: %m",
                                       e->root);
        e->have_prev = true;
        r = discover_inventory(e, &e->prev.interrupts);
        if (r < 0)
                return log_error_errno(r, "Failed to read the NIC inventory under %s: %m", e->root);
        log_inventory(e);
        engine_check_unmatched(e, true);

        r = apply_new(e->rootfd, e->root_is_host, e->state_dir, e->dry_run, &e->apply);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the actuators: %m");
        e->policy = policy_state_new();
        if (!e->policy)
                return log_error_errno(ENOMEM, "Out of memory");
        return 0;
}

void engine_free(struct engine *e) {
        if (e->apply)
                apply_free(e->apply);
        policy_report_free(&e->report);
        policy_state_free(e->policy);
        action_list_free(&e->actions);
        workers_free(&e->workers);
        if (e->have_avg || e->avg.cpus)
                sample_rates_free(&e->avg);
        if (e->have_prev)
                sample_snapshot_free(&e->prev);
        sample_files_free(&e->files);
        if (e->have_inv)
                inventory_free(&e->inv);
        topology_free(&e->topo);
        netdev_handle_close(&e->netdev);
        engine_failures_free(&e->failures);
        free(e->eff);
        free(e->irq_ref);
        free(e->msi_warned);
        e->apply = NULL;
        e->policy = NULL;
        e->have_avg = e->have_prev = e->have_inv = false;
}

void engine_config_changed(struct engine *e) {
        policy_reset(e->policy);
        e->irq_force = true;
}

void engine_bans_changed(struct engine *e) {
        e->irq_force = true;
}

void engine_link_changed(struct engine *e, const char *name, bool rediscover) {
        if (name)
                policy_forget_nic(e->policy, name);
        if (rediscover)
                e->inventory_dirty = true;
}
