/* irqsteerd's event loop: startup, one tick per interval, reload, stop. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>

#include <systemd/sd-event.h>

#include "action.h"
#include "apply.h"
#include "bans.h"
#include "caps.h"
#include "config.h"
#include "daemon.h"
#include "inventory.h"
#include "knob.h"
#include "json.h"
#include "linkmon.h"
#include "log.h"
#include "notify.h"
#include "policy.h"
#include "report.h"
#include "rootfs.h"
#include "sample.h"
#include "state.h"
#include "topology.h"
#include "undo.h"
#include "util.h"
#include "workers.h"

#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)

struct daemon {
        const struct daemon_options *opts;
        const char *config_path;  /* what config_load reads */
        bool config_allow_missing;
        struct config config;
        bool have_config;
        char *state_dir;          /* fixed at startup */
        bool dry_run;
        uint64_t interval_usec;
        enum policy_pace pace;    /* of the next tick (policy_pace) */
        unsigned calm_run;        /* calm ticks since the last full one */

        int rootfd;
        int lockfd;               /* flock on STATE_LOCK_NAME, held while running */
        bool locked_out;          /* another instance holds the state directory */
        bool config_invalid;      /* the configuration did not load at start */
        char startup_error[512];  /* its first problem, FILE:LINE: KEY: message */
        const char *root;
        bool root_is_host;
        uint64_t caps;            /* kept after startup */
        uint64_t caps_start;      /* permitted at startup, before the drop */

        sd_event *event;
        sd_event_source *timer;
        sd_event_source *sig_hup, *sig_term, *sig_int;
        /* runtime bans (bans.h): STATE_DIR/bans, watched with inotify */
        char *bans_dir;
        sd_event_source *bans_watch;
        struct bans bans;
        struct linkmon *linkmon;

        struct topology topo;
        struct inventory inv;
        bool have_inv;
        bool inv_dirty;           /* full rediscovery at the next tick */
        unsigned ticks_since_full; /* refreshed ticks since the last full discovery */
        struct inv_audit audit;   /* which per-object values a refresh re-reads */
        struct sample_snapshot prev;
        bool have_prev;
        struct sample_rates avg;
        bool have_avg;
        /* /proc/interrupts readings (irq_reading_due): irq_force asks for
         * one at the next tick; irq_ref[cpu] is the CPU's smoothed
         * irq+softirq share at the last one (NAN: none) */
        bool irq_force;
        unsigned eff_read_until;  /* read at every tick before this one (EFF_READ_TICKS) */
        double *irq_ref;
        int irq_ref_max_cpu;
        uint64_t irq_readings;
        struct worker_set workers;

        struct policy_state *policy;
        struct policy_report report;
        struct action_list actions;
        struct apply *apply;
        /* dry run: what we "set", laid over each fresh inventory so the
         * policy does not mistake its own unapplied decisions for external
         * changes */
        struct action_list overlay;

        uint64_t start_realtime_usec, start_monotonic_usec;
        unsigned ticks;
        bool stopping_by_signal;
        char status[512];
        char other_writer[160];   /* "irqbalance (pid N) is running ...", "" if none seen */
        pid_t other_pid;          /* that irqbalance, 0 if none seen */
        char restart_needed[160]; /* keys a reload changed that take a restart, "" if none */
        char unmatched[256];      /* "[interface eth9] (FILE:LINE), ...": sections no NIC here matches */
        /* NICs that vanished, by ifindex: one that comes back under another
         * name is the same device renamed, and its saved originals follow */
        struct {
                char name[IF_NAMESIZE];
                int ifindex;
        } gone_nics[16];
        unsigned n_gone_nics;
        char reload_error[384];

        struct report out;        /* status.json, load lines */

        struct daemon_failures failures;
        /* IRQs written, until they fire where set (apply_effective_step) */
        struct apply_eff_watch *eff;
        size_t n_eff, allocated_eff;
        /* NICs whose msi_irqs-order fallback was warned about */
        char (*msi_warned)[IFNAMSIZ];
        size_t n_msi_warned, allocated_msi_warned;
        /* tick-level failures (sampling, inventory); apart from the
         * failures' own limiter so debug repeats cannot use up its burst */
        struct log_ratelimit tick_rl;
        int policy_errno;         /* errno of the failing policy, said once; 0 when it works */
        bool journal_failing;     /* the undo journal could not be saved (said once) */
};

static uint64_t now_clock(clockid_t id) {
        struct timespec ts;

        clock_gettime(id, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static uint64_t now_monotonic(struct daemon *d) {
        uint64_t t;

        if (d->event && sd_event_now(d->event, CLOCK_MONOTONIC, &t) >= 0)
                return t;
        return now_clock(CLOCK_MONOTONIC);
}

int daemon_format_config_error(const struct config_error *e, char *buf, size_t len) {
        char line[32] = "";
        int n;

        if (e->line > 0)
                snprintf(line, sizeof(line), ":%u", e->line);
        n = snprintf(buf, len, "%s%s: %s%s%s", e->file ? e->file : "(defaults)", line,
                     e->key ? e->key : "", e->key ? ": " : "", e->message ? e->message : "invalid");
        return n < 0 || (size_t) n >= len ? -ENOBUFS : 0;
}

/* ---- configuration ---- */

static void log_config_errors(const struct config_errors *errs, int level) {
        for (size_t i = 0; i < errs->n; i++) {
                char buf[512];

                daemon_format_config_error(&errs->v[i], buf, sizeof(buf));
                log_internal(level, 0, NULL, "%s", buf);
        }
}

/* The capabilities the irqsteerd running on state_dir (if any) dropped at
 * startup that c needs: such a file cannot be applied by a reload, and
 * `systemctl reload` runs --check-config first so that it fails saying so.
 * 0 when no daemon runs there or it runs in dry-run mode. */
static uint64_t caps_lost_for_running(const struct config *c, const char *state_dir, int64_t *ret_pid) {
        _cleanup_(json_freep) struct json_value *v = NULL;
        _cleanup_(freep) char *dir = NULL;
        const char *dropped = NULL;
        uint64_t lost = 0;
        bool dry = false;

        if (state_dir_choose(state_dir, c->state_dir, "/", true, false, &dir) < 0 ||
            state_read_status(dir, &v) < 0 || !state_status_live(v, ret_pid))
                return 0;
        if (json_get_bool(v, "dry_run", &dry) == 0 && dry)
                return 0;
        if (json_get_string(v, "capabilities_dropped", &dropped) < 0 || caps_parse(dropped, &lost) < 0)
                return 0;
        return lost & caps_for_config(c, false);
}

int daemon_check_config(const char *path, const char *state_dir, FILE *out, FILE *err) {
        struct config_errors errs = {};
        struct config c = {};
        uint64_t lost;
        int64_t pid = 0;
        int r;

        r = config_load(path ? path : CONFIG_DEFAULT_PATH, !path, &c, &errs);
        if (r < 0) {
                if (errs.n > 0)
                        config_errors_print(&errs, err);
                else
                        fprintf(err, "%s: %s\n", path ? path : CONFIG_DEFAULT_PATH, strerror(-r));
                config_errors_free(&errs);
                return DAEMON_EXIT_FAILURE;
        }
        config_errors_free(&errs);
        lost = caps_lost_for_running(&c, state_dir, &pid);
        config_free(&c);
        if (lost) {
                char capbuf[128];

                caps_format(lost, capbuf, sizeof(capbuf));
                fprintf(err, "%s: valid, but the running irqsteerd (pid %" PRId64 ") cannot apply it: it needs %s, "
                        "dropped at startup; restart irqsteerd to apply it\n",
                        path ? path : CONFIG_DEFAULT_PATH, pid, capbuf);
                return DAEMON_EXIT_FAILURE;
        }
        fprintf(out, "configuration OK\n");
        return DAEMON_EXIT_OK;
}

/* Settings the command line overrides, re-applied after every load. */
static void apply_overrides(struct daemon *d, struct config *c) {
        const struct daemon_options *o = d->opts;

        if (o->interval_usec)
                c->interval_usec = o->interval_usec;
        if (o->log_level >= 0)
                c->log_level = o->log_level;
        if (o->dry_run)
                c->dry_run = true;
        /* per-host bans on top of a file shared by many hosts */
        cpuset_or(&c->banned_cpus, &c->banned_cpus, &o->ban_cpus);
}

static int load_config(struct daemon *d, struct config *ret, char *first_error, size_t len) {
        struct config_errors errs = {};
        int r;

        r = config_load(d->config_path, d->config_allow_missing, ret, &errs);
        if (r < 0) {
                if (errs.n > 0) {
                        log_config_errors(&errs, LOG_ERR);
                        if (first_error)
                                daemon_format_config_error(&errs.v[0], first_error, len);
                } else {
                        log_error_errno(r, "Failed to load %s: %m", d->config_path);
                        if (first_error)
                                snprintf(first_error, len, "%s: %s", d->config_path, strerror(-r));
                }
                config_errors_free(&errs);
                return r;
        }
        config_errors_free(&errs);
        apply_overrides(d, ret);
        return 0;
}

/* ---- logging what was found ---- */

/* [interface NAME] sections that match no NIC here: a warning, not an
 * error, since one file may serve several hosts; listed in status.json
 * until a NIC appears that matches (said once per start and reload). */
static void check_unmatched(struct daemon *d, bool say) {
        size_t l = 0;

        d->unmatched[0] = 0;
        for (size_t i = 0; i < d->config.n_interfaces; i++) {
                const struct config_interface *ci = &d->config.interfaces[i];
                const char *file;
                bool found = false;

                for (size_t k = 0; k < d->inv.n_nics && !found; k++)
                        found = fnmatch(ci->match, d->inv.nics[k].name, 0) == 0;
                if (found)
                        continue;
                /* the section's own file: the main file or a drop-in */
                file = ci->file ? ci->file : d->config.path ? d->config.path : "(config)";
                if (say)
                        log_warning("%s:%u: [interface %s] matches no interface on this host; kept for when one "
                                    "appears", file, ci->line, ci->match);
                if (l < sizeof(d->unmatched))
                        l += (size_t) snprintf(d->unmatched + l, sizeof(d->unmatched) - l, "%s[interface %s] (%s:%u)",
                                               l ? ", " : "", ci->match, file, ci->line);
        }
}

static void log_topology(const struct daemon *d) {
        char online[256], iso[128], nohz[128];

        log_info("topology: %d CPUs online (%s), %zu NUMA node(s), isolated: %s, nohz_full: %s",
                 cpuset_count(&d->topo.online), cpuset_to_text(&d->topo.online, "none", online, sizeof(online)),
                 d->topo.n_nodes > 0 ? d->topo.n_nodes : 1,
                 cpuset_to_text(&d->topo.isolated, "none", iso, sizeof(iso)),
                 cpuset_to_text(&d->topo.nohz_full, "none", nohz, sizeof(nohz)));
}

static void log_nic(const struct config *c, const struct inventory *inv, const struct inv_nic *n) {
        const struct config_interface *ci = config_interface_for(c, n->name);
        char map[768] = "";
        size_t off = 0;

        for (size_t q = 0; q < n->n_queues && off + 32 < sizeof(map); q++) {
                const struct inv_queue *iq = &n->queues[q];
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
                 inv_map_source_to_string(n->map), map[0] ? map : " none");
}

/* Unknown IRQ names: the queue map is a guess from msi_irqs order, which
 * an operator must know about.  Said once per NIC name for the
 * daemon's life, not at each rediscovery. */
static void warn_msi_order(struct daemon *d, const struct inv_nic *n) {
        if (n->map != INV_MAP_MSI_ORDER)
                return;
        for (size_t i = 0; i < d->n_msi_warned; i++)
                if (strcmp(d->msi_warned[i], n->name) == 0)
                        return;
        if (util_grow((void **) &d->msi_warned, &d->allocated_msi_warned, d->n_msi_warned + 1,
                      sizeof(*d->msi_warned)) == 0)
                snprintf(d->msi_warned[d->n_msi_warned++], IFNAMSIZ, "%s", n->name);
        log_warning("nic %s: IRQ names not recognised (driver %s); queue IRQs guessed from msi_irqs order, "
                    "check them with 'irqsteerctl inventory'", n->name, n->driver[0] ? n->driver : "none");
}

static void log_inventory(struct daemon *d) {
        for (size_t i = 0; i < d->inv.n_nics; i++) {
                log_nic(&d->config, &d->inv, &d->inv.nics[i]);
                warn_msi_order(d, &d->inv.nics[i]);
        }
        if (d->inv.n_nics == 0)
                log_info("no network interfaces found under %s", d->root);
}

/* ---- discovery ---- */

static void link_event(struct daemon *d, const char *fmt, ...) _printf_(2, 3);

/* What changed between two inventories.  Queue counts always: ethtool -L
 * changes the real queue count without any RTM_NEWLINK (measured on veth,
 * Linux 6.18), and drivers reset IRQ affinity then.  NICs appearing,
 * vanishing or going up only without the link monitor (fixture roots,
 * netlink unavailable), which reports those itself as they happen. */
/* The name a NIC that appears with ifindex had before, if it vanished
 * under another (in the last read, or earlier), or NULL; the match is
 * forgotten.  ifindex is not reused while the kernel runs (a counter per
 * network namespace), so the same one is the same device. */
static const char *renamed_from(struct daemon *d, const struct inventory *old, const struct inventory *new,
                                const struct inv_nic *n, char *buf, size_t len) {
        if (n->ifindex <= 0)
                return NULL;
        for (size_t i = 0; i < old->n_nics; i++)
                if (old->nics[i].ifindex == n->ifindex && strcmp(old->nics[i].name, n->name) != 0 &&
                    !inventory_nic(new, old->nics[i].name)) {
                        snprintf(buf, len, "%s", old->nics[i].name);
                        return buf;
                }
        for (unsigned i = 0; i < d->n_gone_nics; i++)
                if (d->gone_nics[i].ifindex == n->ifindex) {
                        snprintf(buf, len, "%s", d->gone_nics[i].name);
                        d->gone_nics[i] = d->gone_nics[--d->n_gone_nics];
                        return strcmp(buf, n->name) != 0 ? buf : NULL;
                }
        return NULL;
}

static void remember_gone(struct daemon *d, const struct inv_nic *n) {
        unsigned i;

        if (n->ifindex <= 0)
                return;
        for (i = 0; i < d->n_gone_nics && d->gone_nics[i].ifindex != n->ifindex; i++)
                ;
        if (i == d->n_gone_nics) {
                if (d->n_gone_nics == ELEMENTSOF(d->gone_nics))
                        i = 0; /* the oldest makes room */
                else
                        d->n_gone_nics++;
        }
        snprintf(d->gone_nics[i].name, sizeof(d->gone_nics[i].name), "%s", n->name);
        d->gone_nics[i].ifindex = n->ifindex;
}

static void diff_inventory(struct daemon *d, const struct inventory *old, const struct inventory *new) {
        for (size_t i = 0; i < new->n_nics; i++) {
                const struct inv_nic *n = &new->nics[i], *o = inventory_nic(old, n->name);
                char was[IF_NAMESIZE];
                const char *from;

                if (!o) {
                        if (!d->linkmon)
                                link_event(d, "%s: appeared", n->name);
                        from = renamed_from(d, old, new, n, was, sizeof(was));
                        if (from && d->apply) {
                                int r = apply_rename_nic(d->apply, from, n->name);

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
                        link_event(d, "%s: queues changed (rx %d -> %d, tx %d -> %d), re-applying", n->name,
                                   o->rx_queues, n->rx_queues, o->tx_queues, n->tx_queues);
                        policy_forget_nic(d->policy, n->name);
                }
                if (!d->linkmon && o->up != n->up) {
                        link_event(d, n->up ? "%s: link up, re-applying" : "%s: link down", n->name);
                        if (n->up)
                                policy_forget_nic(d->policy, n->name);
                }
        }
        for (size_t i = 0; i < old->n_nics; i++)
                if (!inventory_nic(new, old->nics[i].name)) {
                        if (!d->linkmon)
                                link_event(d, "%s: vanished", old->nics[i].name);
                        policy_forget_nic(d->policy, old->nics[i].name);
                        remember_gone(d, &old->nics[i]);
                }
}

/* One overlay action; with fresh_only only over an object re-read by this
 * refresh: the others still hold what was laid over them when the action
 * was recorded (run_actions()) or at an earlier refresh.  Copying every
 * overlaid 1 KB set each tick was 0.3M instructions a tick on a 256-CPU
 * host. */
static void overlay_one(struct inventory *inv, struct worker_set *ws, const struct action *a, bool fresh_only) {
        if (a->type != ACTION_THREAD_AFFINITY) {
                inventory_apply_action(inv, a, fresh_only);
                return;
        }
        for (size_t p = 0; ws && p < ws->n_procs; p++)
                for (size_t t = 0; t < ws->procs[p].n_threads; t++)
                        if (ws->procs[p].threads[t].tid == a->tid)
                                ws->procs[p].threads[t].allowed = a->cpus;
}

static void inventory_overlay(struct inventory *inv, struct worker_set *ws, const struct action_list *ov,
                              bool fresh_only) {
        for (size_t i = 0; i < ov->n; i++)
                overlay_one(inv, ws, &ov->v[i], fresh_only);
}

static bool same_object(const struct action *a, const struct action *b) {
        struct knob_key ka, kb;

        return a->type == b->type && knob_key_from_action(a, &ka) == 0 && knob_key_from_action(b, &kb) == 0 &&
               knob_key_equal(&ka, &kb);
}

static void overlay_record(struct daemon *d, const struct action *a) {
        struct action *o;

        for (size_t i = 0; i < d->overlay.n; i++)
                if (same_object(&d->overlay.v[i], a)) {
                        d->overlay.v[i] = *a;
                        return;
                }
        o = action_list_add(&d->overlay, a->type);
        if (o)
                *o = *a;
}

/* Per-object values (IRQ masks, a queue's rps_cpus/rps_flow_cnt/xps_cpus)
 * re-read a tick.  Reading all of them was ~1,300 open/read/close a tick
 * on a 256-CPU host with 8 NICs x 32 queues, ~7 ms of system time a tick;
 * what the policy needs fresh is what it changes (re-read the tick after,
 * inv_irq.reread) and what changed behind its back, which a rotating audit
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
 * queue, 13M instructions a tick on a 256-CPU host with 459 IRQs) at start,
 * after link events and CPU hotplug (inv_dirty), when inventory_refresh()
 * sees the layout change (IRQ set, NIC set, queue counts: ethtool -L sends
 * no netlink message, so queue dirs are counted each tick), and every
 * FULL_DISCOVERY_TICKS ticks. */
static int discover_inventory(struct daemon *d, const struct procfs_interrupts *interrupts);

/* Why this tick reads the whole inventory, NULL when a refresh does. */
static const char *discovery_due(const struct daemon *d) {
        return !d->have_inv ? "first tick" : d->inv_dirty ? "link event or CPU set change" :
               d->ticks_since_full >= FULL_DISCOVERY_TICKS ? "periodic check" : NULL;
}

static int refresh_inventory(struct daemon *d, const struct procfs_interrupts *interrupts) {
        const char *why = discovery_due(d);
        int r;

        if (why) {
                log_debug("Reading the whole inventory: %s", why);
                return discover_inventory(d, interrupts);
        }
        r = inventory_refresh(d->rootfd, interrupts, &d->inv, &d->audit);
        if (r != 0) {
                if (r < 0)
                        log_debug_errno(r, "Reading the whole inventory: refresh failed: %m");
                else
                        log_debug("Reading the whole inventory: IRQs, NICs or queue counts changed");
                /* something changed under a reading carried over from an
                 * earlier tick: the next tick reads the IRQs afresh */
                d->irq_force = true;
                return discover_inventory(d, interrupts);
        }
        d->ticks_since_full++;
        if (d->dry_run)
                inventory_overlay(&d->inv, NULL, &d->overlay, true);
        return 0;
}

static int discover_inventory(struct daemon *d, const struct procfs_interrupts *interrupts) {
        struct inventory inv = {};
        int r;

        d->ticks_since_full = 0;
        r = inventory_read(d->rootfd, interrupts, &inv);
        if (r < 0)
                return r;
        if (d->root_is_host) {
                r = inventory_netlink_refresh(&inv);
                if (r < 0)
                        log_debug_errno(r, "netlink inventory refresh failed, using sysfs values: %m");
                inventory_read_napi_cpus(d->rootfd, &inv); /* kthread start times: napi_threads */
        }
        if (d->dry_run)
                inventory_overlay(&inv, NULL, &d->overlay, false);
        if (d->have_inv) {
                if (d->policy)
                        diff_inventory(d, &d->inv, &inv);
                inventory_free(&d->inv);
        }
        d->inv = inv;
        d->have_inv = true;
        return 0;
}

/* The inventory keeps the attributes it re-reads each tick open
 * (rootfs_read_held): ~1,000 fds on a host with 8 NICs x 32 queues.  The
 * soft limit (1024 under systemd) goes up to the hard one, capped at
 * 65536; nothing here uses select(2).  What does not fit is read by path. */
static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= MIN(rl.rlim_max, (rlim_t) 65536))
                return;
        rl.rlim_cur = MIN(rl.rlim_max, (rlim_t) 65536);
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_debug_errno(errno, "Failed to raise RLIMIT_NOFILE to %llu: %m",
                                (unsigned long long) rl.rlim_cur);
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

static int reread_topology(struct daemon *d) {
        struct topology t = {};
        int r;

        r = topology_read(d->rootfd, &t);
        if (r < 0)
                return r;
        topology_free(&d->topo);
        d->topo = t;
        return 0;
}

/* ---- acting ---- */

/* The failure registry's name of a's object: its knob key (a TID with
 * its starttime), "?" for an action that names no object. */
static void object_key(const struct action *a, char *buf, size_t len) {
        struct knob_key k;

        if (knob_key_from_action(a, &k) < 0 || knob_key_format(&k, buf, len) < 0)
                snprintf(buf, len, "?");
}

static struct daemon_failed_object *failed_find(struct daemon_failures *fs, const char *key) {
        for (size_t i = 0; i < fs->n; i++)
                if (strcmp(fs->v[i].key, key) == 0)
                        return &fs->v[i];
        return NULL;
}

void daemon_failures_forget(struct daemon_failures *fs, const struct action *a) {
        struct daemon_failed_object *f;
        char key[64];

        object_key(a, key, sizeof(key));
        f = failed_find(fs, key);
        if (f)
                *f = fs->v[--fs->n];
}

void daemon_failures_free(struct daemon_failures *fs) {
        free(fs->v);
        fs->v = NULL;
        fs->n = fs->allocated = 0;
}

void daemon_log_action_failure(struct daemon_failures *fs, const struct action *a, const char *line, int r,
                               uint64_t now) {
        enum action_failure cls = action_failure_class(a->type, r);
        struct daemon_failed_object *f;
        char key[64];

        object_key(a, key, sizeof(key));
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
                if (a->type == ACTION_IRQ_AFFINITY && (r == -EIO || r == -EPERM))
                        /* expected (EIO before 6.12, EPERM since): skipped
                         * quietly from now on */
                        log_info_errno(r, "%s: managed by the kernel (%m); not touching it again", line);
                else if (a->type == ACTION_THREAD_AFFINITY)
                        log_full_errno(LOG_NOTICE, r, "%s: the thread refuses affinity changes (%m); leaving it alone",
                                       line);
                else if (a->type == ACTION_SOCK_FLOW_ENTRIES)
                        log_full_errno(LOG_NOTICE, r, "%s: rps_sock_flow_entries cannot be set (%m); RFS stays off",
                                       line);
                else
                        log_warning_errno(r, "%s: cannot be changed (%m); not touching it again", line);
                break;
        case ACTION_FAIL_CAPACITY:
                log_full_errno(LOG_NOTICE, r, "%s: no free vector on the target CPU (%m); choosing another CPU", line);
                break;
        case ACTION_FAIL_GONE:
                if (a->type == ACTION_SOCK_FLOW_ENTRIES)
                        /* the sysctl exists only in the initial network
                         * namespace, and its value applies to all */
                        log_info_errno(r, "%s: rps_sock_flow_entries is not visible here (a network namespace?); "
                                       "RFS uses the host's value", line);
                else if (daemon_failure_rediscovers(a->type, r))
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

bool daemon_failure_rediscovers(enum action_type type, int r) {
        /* A vanished thread is normal and workers are rediscovered each
         * tick anyway; a vanished IRQ or queue means the inventory is stale
         * (driver reload, ethtool -L, device removal). */
        return action_failure_class(type, r) == ACTION_FAIL_GONE && type != ACTION_THREAD_AFFINITY &&
               type != ACTION_SOCK_FLOW_ENTRIES; /* absent in a network namespace, by design */
}

/* ---- effective affinity: where a written IRQ really fires ---- */

static struct apply_eff_watch *eff_find(struct daemon *d, unsigned irq) {
        for (size_t i = 0; i < d->n_eff; i++)
                if (d->eff[i].irq == irq)
                        return &d->eff[i];
        return NULL;
}

static void eff_drop(struct daemon *d, struct apply_eff_watch *w) {
        *w = d->eff[--d->n_eff];
}

static void eff_watch(struct daemon *d, unsigned irq, const cpuset_t *want) {
        struct apply_eff_watch *w = eff_find(d, irq);

        if (!w) {
                if (util_grow((void **) &d->eff, &d->allocated_eff, d->n_eff + 1, sizeof(*d->eff)) < 0)
                        return; /* only a check is lost */
                w = &d->eff[d->n_eff++];
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
static void check_effective(struct daemon *d, const struct procfs_interrupts *prev,
                            const struct procfs_interrupts *cur) {
        for (size_t i = 0; i < d->n_eff;) {
                struct apply_eff_watch *w = &d->eff[i];
                const struct inv_irq *irq = inventory_irq(&d->inv, w->irq);
                char want[256], eff[256];
                int ok;

                if (!irq || !irq->affinity_readable || !cpuset_equal(&irq->affinity, &w->want)) {
                        eff_drop(d, w);
                        continue;
                }
                ok = apply_irq_effective_ok(d->rootfd, w->irq, &w->want, &w->eff);
                w->has_eff = ok >= 0;
                cpuset_to_text(&w->want, "?", want, sizeof(want));
                cpuset_to_text(&w->eff, "?", eff, sizeof(eff));
                switch (apply_effective_step(w, ok, irq_fired(prev, cur, w->irq), APPLY_EFFECTIVE_GRACE)) {
                case APPLY_EFF_MISMATCH:
                        daemon_log_effective_mismatch(w->irq, irq->name,
                                                      irq->nic >= 0 ? d->inv.nics[irq->nic].name : NULL,
                                                      irq->queue, want, eff, w->off_ticks);
                        break;
                case APPLY_EFF_RECOVERED:
                        log_info("IRQ %u (%s) now fires on CPU %s as set", w->irq, irq->name, eff);
                        eff_drop(d, w);
                        continue;
                case APPLY_EFF_SETTLED:
                        eff_drop(d, w);
                        continue;
                case APPLY_EFF_UNKNOWN:
                        if (ok != -ENOENT)
                                log_debug_errno(ok, "IRQ %u: effective affinity unreadable: %m", w->irq);
                        eff_drop(d, w);
                        continue;
                default:
                        break;
                }
                i++;
        }
}

void daemon_log_policy_result(int *last, int r) {
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

void daemon_log_tick_failure(struct log_ratelimit *rl, int r, const char *what, uint64_t now) {
        if (!log_ratelimit_ok(rl, now))
                return;
        if (rl->suppressed > 0) {
                log_warning_errno(r, "Failed to %s, skipping this tick: %m (%u similar messages suppressed)",
                                  what, rl->suppressed);
                rl->suppressed = 0;
        } else
                log_warning_errno(r, "Failed to %s, skipping this tick: %m", what);
}

static void record_action(struct daemon *d, const struct action *a, const char *line, int result) {
        report_record_action(&d->out, a, line, result, now_clock(CLOCK_REALTIME));
}

void daemon_log_action(const struct action *a, const char *line, int result) {
        char f_irq[32], f_from[300], f_to[300], f_dev[48], f_queue[32], f_reason[300], f_type[48];
        char from[256], to[256];
        const char *fields[8];
        size_t n = 0;

        cpuset_to_text(&a->from, "", from, sizeof(from));
        cpuset_to_text(&a->cpus, "", to, sizeof(to));
        snprintf(f_type, sizeof(f_type), "ACTION=%s", action_type_to_string(a->type));
        fields[n++] = f_type;
        if (a->type == ACTION_IRQ_AFFINITY) {
                snprintf(f_irq, sizeof(f_irq), "IRQ=%u", a->irq);
                fields[n++] = f_irq;
        }
        if (a->type != ACTION_RPS_FLOW_CNT && a->type != ACTION_SOCK_FLOW_ENTRIES) {
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
static bool action_current(struct daemon *d, const struct action *a) {
        struct inv_nic *n = a->nic[0] ? (struct inv_nic *) inventory_nic(&d->inv, a->nic) : NULL;
        struct inv_queue *q = n ? inventory_queue(n, a->queue) : NULL;
        struct inv_irq *irq;

        switch (a->type) {
        case ACTION_IRQ_AFFINITY:
                irq = inventory_irq(&d->inv, a->irq);
                if (!irq)
                        return true;
                irq->reread = true;
                if (irq->fresh)
                        return true;
                inventory_reread_irq(d->rootfd, irq);
                return !irq->affinity_readable || cpuset_equal(&irq->affinity, &a->from);
        case ACTION_RPS:
        case ACTION_XPS:
        case ACTION_RPS_FLOW_CNT:
                if (!q)
                        return true;
                q->reread = true;
                if (q->fresh)
                        return true;
                inventory_reread_queue(d->rootfd, n, q);
                if (a->type == ACTION_RPS)
                        return !q->has_rps || cpuset_equal(&q->rps_cpus, &a->from);
                if (a->type == ACTION_XPS)
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
static void check_journal(struct daemon *d) {
        int r = apply_journal_error(d->apply);

        if (r < 0 && !d->journal_failing)
                log_error_errno(r, "Cannot save the undo journal %s: %m; the state directory %s needs room or "
                                "repair, and nothing is changed until the journal can be saved",
                                apply_journal_path(d->apply), d->state_dir);
        else if (r == 0 && d->journal_failing)
                log_notice("The undo journal %s can be saved again", apply_journal_path(d->apply));
        d->journal_failing = r < 0;
}

/* After an IRQ is written, ticks that read /proc/interrupts to see where it
 * fires (EFFECTIVE AFFINITY): the grace and two more.  A watch that outlives
 * them (the IRQ is quiet, or fires elsewhere) goes on at the readings that
 * happen anyway. */
#define EFF_READ_TICKS (APPLY_EFFECTIVE_GRACE + 2)
static void run_actions(struct daemon *d, uint64_t now) {
        /* what the actions changed shows in the per-IRQ rates next tick */
        if (d->actions.n > 0)
                d->irq_force = true;
        for (size_t i = 0; i < d->actions.n; i++) {
                const struct action *a = &d->actions.v[i];
                char line[384];
                int r;

                if (!d->dry_run && !action_current(d, a)) {
                        log_debug("%s %s: changed since it was last read; deciding again next tick",
                                  action_type_to_string(a->type), a->nic[0] ? a->nic : "IRQ");
                        continue;
                }
                action_format(a, line, sizeof(line));
                r = apply_action(d->apply, a);
                check_journal(d);
                if (r < 0 && apply_failed_in_journal(d->apply)) {
                        /* nothing was written, and the object is not to
                         * blame: the policy decides again next tick */
                        record_action(d, a, line, r);
                        policy_feedback(d->policy, a, -EAGAIN, now);
                } else if (r >= 0) {
                        daemon_failures_forget(&d->failures, a);
                        if (r != APPLY_UNCHANGED) {
                                daemon_log_action(a, line, r);
                                record_action(d, a, line, r);
                        }
                        if (d->dry_run) {
                                overlay_record(d, a);
                                overlay_one(&d->inv, NULL, a, false);
                        } else if (a->type == ACTION_IRQ_AFFINITY && (r == APPLY_DONE || r == APPLY_READBACK_DIFFERS)) {
                                eff_watch(d, a->irq, &a->cpus);
                                d->eff_read_until = d->ticks + 1 + EFF_READ_TICKS;
                        }
                        policy_feedback(d->policy, a, 0, now);
                } else {
                        daemon_log_action_failure(&d->failures, a, line, r, now);
                        if (daemon_failure_rediscovers(a->type, r)) {
                                struct apply_eff_watch *w;

                                d->inv_dirty = true;
                                if (a->type == ACTION_IRQ_AFFINITY && (w = eff_find(d, a->irq)))
                                        eff_drop(d, w);
                        }
                        record_action(d, a, line, r);
                        policy_feedback(d->policy, a, r, now);
                }
        }
}

/* Which drop-ins the configuration in force came from, in the order read. */
static void log_dropins(const struct config *c) {
        char buf[1024];
        size_t l = 0;

        if (c->n_dropins == 0)
                return;
        buf[0] = 0;
        for (size_t i = 0; i < c->n_dropins; i++)
                l += (size_t) snprintf(buf + MIN(l, sizeof(buf)), l < sizeof(buf) ? sizeof(buf) - l : 0, "%s%s",
                                       i ? ", " : "", c->dropins[i]);
        log_info("Configuration drop-ins: %s", util_mark_cut(buf, sizeof(buf), (int) MIN(l, (size_t) INT32_MAX)));
}

/* ---- report ---- */

static void fill_snapshot(struct daemon *d, struct report_snapshot *s) {
        *s = (struct report_snapshot) {
                .pid = getpid(),
                .started_usec = d->start_realtime_usec,
                .uptime_usec = now_monotonic(d) - d->start_monotonic_usec,
                .status = d->status,
                .dry_run = d->dry_run,
                .root = d->root,
                .state_dir = d->state_dir,
                .caps = d->caps,
                .caps_dropped = d->caps_start & ~d->caps & caps_any_config(),
                .ticks = d->ticks,
                .reload_error = d->reload_error,
                .unmatched_interfaces = d->unmatched,
                .bans = &d->bans,
                .policy = &d->report,
                .irq_readings = d->irq_readings,
                .eff = d->eff,
                .n_eff = d->n_eff,
                .inv = d->have_inv ? &d->inv : NULL,
                .config = &d->config,
                .undo = d->apply ? apply_undo(d->apply) : NULL,
                .load = d->have_avg ? &d->avg : NULL,
        };
}

static void log_load_summary(struct daemon *d) {
        struct report_snapshot s;

        /* At info in the foreground (an operator watching); at debug under
         * the journal, where one line per CPU per tick would be spam. */
        fill_snapshot(d, &s);
        report_log_load(&s, d->opts->foreground ? LOG_INFO : LOG_DEBUG);
}

static void find_other_writer(struct daemon *d);

/* What the daemon adds to the report's status line: a restart the last
 * reload asked for first (systemctl status shows the start of the line),
 * another writer last. */
static void status_add_notices(struct daemon *d) {
        char line[sizeof(d->status) + sizeof(d->restart_needed) + 32];

        if (d->restart_needed[0]) {
                snprintf(line, sizeof(line), "restart needed for %s; %s", d->restart_needed, d->status);
                memcpy(d->status, line, sizeof(d->status) - 1);
                d->status[sizeof(d->status) - 1] = 0;
        }
        if (d->other_pid > 0) {
                size_t l = strlen(d->status);

                snprintf(d->status + l, sizeof(d->status) - l, "; irqbalance (pid %d) changes IRQs too",
                         (int) d->other_pid);
        }
}

static void update_status(struct daemon *d, bool notify) {
        struct report_snapshot s;

        /* irqbalance may have been stopped since we saw it */
        if (d->other_pid > 0 && d->ticks % 30 == 0)
                find_other_writer(d);
        report_format_status(&d->report, d->dry_run, d->reload_error, d->status, sizeof(d->status));
        status_add_notices(d);
        fill_snapshot(d, &s);
        /* The file first: whoever reacts to STATUS= finds it as new. */
        (void) report_write_status(&d->out, &s);
        (void) report_write_metrics(&d->out, &s);
        if (notify)
                notify_status(d->status);
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

void daemon_log_note(const struct policy_note *no, const char *other) {
        char f_irq[48], f_dev[48], f_queue[48];
        const char *fields[6];
        size_t n = 0;

        if (no->kind == POLICY_NOTE_EXTERNAL)
                fields[n++] = "MESSAGE_ID=" DAEMON_MID_EXTERNAL;
        object_fields(no->irq, no->device, no->queue, f_irq, f_dev, f_queue, sizeof(f_irq), fields, &n);
        fields[n] = NULL;
        if (other && other[0])
                log_fields(no->level, fields, "%s; %s", no->text, other);
        else
                log_fields(no->level, fields, "%s", no->text);
}

void daemon_log_effective_mismatch(unsigned irq, const char *name, const char *device, int queue, const char *want,
                                   const char *eff, unsigned ticks) {
        char f_irq[48], f_dev[48], f_queue[48];
        const char *fields[6] = { "MESSAGE_ID=" DAEMON_MID_EFFECTIVE };
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
static void find_other_writer(struct daemon *d) {
        pid_t pid;

        d->other_writer[0] = 0;
        d->other_pid = 0;
        /* one that works on another tree (a simulator's, bind-mounted over
         * its /proc/irq) changes nothing of ours */
        if (workers_find_comm(d->rootfd, "irqbalance", "proc/irq", &pid) > 0) {
                d->other_pid = pid;
                snprintf(d->other_writer, sizeof(d->other_writer),
                         "irqbalance (pid %d) is running and changes IRQ affinities too: "
                         "mask it (systemctl mask --now irqbalance.service)", (int) pid);
        }
}

static void log_notes(struct daemon *d) {
        const struct policy_report *rep = &d->report;
        bool looked = false;

        for (size_t i = 0; i < rep->n_notes; i++) {
                if (rep->notes[i].kind == POLICY_NOTE_EXTERNAL && !looked) {
                        find_other_writer(d);
                        looked = true;
                }
                daemon_log_note(&rep->notes[i],
                                rep->notes[i].kind == POLICY_NOTE_EXTERNAL ? d->other_writer : NULL);
        }
}

/* ---- runtime bans ---- */

static bool ban_file_same(const struct ban_file *a, const struct ban_file *b) {
        return strcmp(a->name, b->name) == 0 && a->error == b->error && cpuset_equal(&a->cpus, &b->cpus);
}

static const struct ban_file *ban_file_find(const struct bans *b, const char *name) {
        for (size_t i = 0; i < b->n_files; i++)
                if (strcmp(b->files[i].name, name) == 0)
                        return &b->files[i];
        return NULL;
}

/* Reads the ban directory again; says once what changed: each bad file
 * (ignored as a whole), each ban added, changed or lifted, and the union. */
static void load_bans(struct daemon *d) {
        struct bans nb = { 0 };
        char list[256];
        bool changed = false;
        int r;

        r = bans_load(d->bans_dir, &nb);
        if (r < 0) {
                /* keep the bans we have: dropping them would put work back
                 * on CPUs someone asked us to keep free */
                log_warning_errno(r, "Failed to read the ban directory %s, keeping the bans in force: %m", d->bans_dir);
                bans_free(&nb);
                return;
        }
        for (size_t i = 0; i < nb.n_files; i++) {
                const struct ban_file *f = &nb.files[i], *old = ban_file_find(&d->bans, f->name);

                if (old && ban_file_same(old, f))
                        continue;
                changed = true;
                if (f->error < 0)
                        log_warning("Ban file %s/%s: %s; ignoring the whole file", d->bans_dir, f->name, f->problem);
                else
                        log_info("Ban %s: CPUs %s", f->name, cpuset_to_text(&f->cpus, "none", list, sizeof(list)));
        }
        for (size_t i = 0; i < d->bans.n_files; i++)
                if (!ban_file_find(&nb, d->bans.files[i].name)) {
                        changed = true;
                        log_info("Ban %s lifted", d->bans.files[i].name);
                }
        if (!cpuset_equal(&nb.cpus, &d->bans.cpus))
                log_notice("Runtime bans now keep CPUs %s free", cpuset_to_text(&nb.cpus, "none", list, sizeof(list)));
        bans_free(&d->bans);
        d->bans = nb;
        if (changed) {
                d->irq_force = true;
                report_config_changed(&d->out);
        }
}

static int on_bans(sd_event_source *s _unused_, const struct inotify_event *ev, void *userdata) {
        struct daemon *d = userdata;

        /* a writer's temporary: the rename that follows is the event */
        if (ev->len > 0 && ev->name[0] == '.')
                return 0;
        if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
                log_warning("The ban directory %s was removed or moved: runtime bans are no longer watched "
                            "until irqsteerd restarts; the bans in force stay", d->bans_dir);
        load_bans(d);
        return 0;
}

static int setup_bans(struct daemon *d) {
        int r;

        if (asprintf(&d->bans_dir, "%s/%s", d->state_dir, BANS_DIR_NAME) < 0) {
                d->bans_dir = NULL;
                return log_error_errno(ENOMEM, "Out of memory");
        }
        r = state_dir_ensure(d->bans_dir);
        if (r < 0)
                return log_error_errno(r, "Failed to create the ban directory %s: %m", d->bans_dir);
        r = sd_event_add_inotify(d->event, &d->bans_watch, d->bans_dir,
                                 IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF |
                                 IN_MOVE_SELF | IN_ONLYDIR,
                                 on_bans, d);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the ban directory %s: %m", d->bans_dir);
        (void) sd_event_source_set_description(d->bans_watch, "bans");
        load_bans(d);
        return 0;
}

static int decide_and_act(struct daemon *d, uint64_t now, const struct sample_rates *raw) {
        struct policy_input in = {
                .config = &d->config,
                .topo = &d->topo,
                .inv = &d->inv,
                .load = d->have_avg ? &d->avg : NULL,
                .raw = raw,
                .workers = d->config.n_workers ? &d->workers : NULL,
                .bans = &d->bans.cpus,
                .now_usec = now,
        };
        int r;

        r = policy_tick(d->policy, &in, &d->actions, &d->report);
        daemon_log_policy_result(&d->policy_errno, r);
        if (r < 0)
                return r;
        log_notes(d);
        report_count_policy(&d->out, &d->report);
        run_actions(d, now);
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
static const char *irq_reading_due(const struct daemon *d, const struct sample_snapshot *cur, bool cpus_changed) {
        uint64_t last;

        if (!d->have_prev || d->irq_force)
                return "first tick, or after an action, a reload or an inventory change";
        if (d->n_eff > 0 && d->ticks < d->eff_read_until)
                return "effective affinity watched";
        if (discovery_due(d))
                return "inventory discovery";
        if (d->config.irq_rate_interval_usec == 0)
                return "irq_rate_interval = 0";
        last = sample_snapshot_irq_usec(&d->prev);
        if (cur->usec <= last || cur->usec - last >= d->config.irq_rate_interval_usec)
                return "irq_rate_interval passed";
        if (cpus_changed)
                return "CPU set changed";
        if (sample_load_drifted(&d->prev, cur, d->have_avg ? &d->avg : NULL, d->config.smoothing, d->irq_ref,
                                d->irq_ref_max_cpu, IRQ_RATE_DRIFT))
                return "CPU load moved";
        return NULL;
}

/* After a tick that read /proc/interrupts: the loads it saw. */
static void irq_ref_update(struct daemon *d) {
        int m = d->have_avg ? d->avg.max_cpu : -1;

        if (m > d->irq_ref_max_cpu) {
                double *v = reallocarray(d->irq_ref, (size_t) m + 1, sizeof(*v));
                if (!v) {
                        d->irq_force = true; /* no reference: read next time too */
                        return;
                }
                d->irq_ref = v;
        }
        d->irq_ref_max_cpu = m;
        for (int c = 0; c <= m; c++) {
                const struct sample_cpu *sc = &d->avg.cpus[c];
                d->irq_ref[c] = sc->valid && !sc->offline ? sc->irq + sc->softirq : NAN;
        }
}

/* A calm host still gets a full tick every this many ticks (60 s at the
 * default interval): the inventory audit (a change behind our back), a
 * fresh status file and the policy's slow release (narrowing RPS sets)
 * run on full ticks only.  On a calm 16-CPU host (make bench, cost16) a
 * full tick costs about 1.5 ms of CPU and a calm one 0.1 ms, most of it
 * the wake-up itself: at 30 s the periodic full ticks were about half of
 * the CPU time per hour. */
#define FULL_TICK_EVERY 30

/* Whether this tick runs in full (the inventory refresh, /proc/interrupts
 * when due, the policy, the status file) or is a calm tick that only
 * sampled /proc/stat and /proc/softirqs.  A calm tick cost 0.63 ms of CPU
 * at 16 CPUs in full, so at a 2 s interval irqsteerd spent about 5 times
 * what irqbalance spends per hour at its 10 s (make bench, cost16): on a
 * calm host nothing the policy would do can change between full ticks,
 * since no CPU is near a threshold (policy_pace).  The reason, or NULL
 * for a calm tick. */
static const char *full_tick_due(const struct daemon *d, enum policy_pace pace, bool cpus_changed) {
        if (pace != POLICY_PACE_CALM)
                return policy_pace_to_string(pace);
        if (!d->have_inv || !d->have_avg || d->opts->once)
                return "first ticks";
        if (d->inv_dirty || d->irq_force || cpus_changed)
                return "inventory, CPU set, bans or configuration changed";
        if (d->n_eff > 0 && d->ticks < d->eff_read_until)
                return "effective affinity watched";
        /* new worker threads are pinned at the next tick */
        if (d->config.n_workers > 0)
                return "workers configured";
        if (d->config.irq_rate_interval_usec == 0)
                return "irq_rate_interval = 0";
        if (d->calm_run + 1 >= FULL_TICK_EVERY)
                return "periodic audit";
        return NULL;
}

/* The interval after a tick: fast_interval while a CPU nears hot, so that
 * the samples hot_samples asks for come quickly (fast attack), the
 * configured one otherwise. */
static uint64_t next_interval(const struct daemon *d) {
        if (d->pace == POLICY_PACE_FAST && d->config.fast_interval_usec > 0)
                return MIN(d->config.fast_interval_usec, d->interval_usec);
        return d->interval_usec;
}

static int tick(struct daemon *d) {
        struct sample_snapshot cur = {};
        struct sample_rates raw = {};
        uint64_t now = now_monotonic(d);
        bool read_irqs = false, cpus_changed = false, have_raw = false;
        enum policy_pace pace_in;
        const char *full;
        int r;

        r = sample_snapshot_take_cpus(d->rootfd, now, &cur);
        if (r < 0) {
                daemon_log_tick_failure(&d->tick_rl, r, "sample /proc", now);
                return 0;
        }
        (void) sample_snapshot_take_napi(d->rootfd, d->have_inv ? &d->inv : NULL, &cur); /* -ENOMEM: none */
        if (d->have_prev) {
                cpus_changed = cpu_set_changed(&d->prev, &cur);
                /* the CPU shares of the interval before /proc/interrupts is
                 * read, if it is at all: as if prev's reading were carried */
                cur.irq_usec = sample_snapshot_irq_usec(&d->prev);
                r = sample_compute(&d->prev, &cur, &raw);
                cur.irq_usec = 0;
                have_raw = r >= 0;
                if (r < 0)
                        log_debug_errno(r, "Rates unavailable this tick: %m");
        }
        pace_in = policy_pace(&d->config, &d->report, have_raw ? &raw : NULL);
        full = full_tick_due(d, pace_in, cpus_changed);
        /* ethtool -L sends no link notification and the driver resets the
         * IRQ affinities: a calm tick still looks at the queue counts */
        if (!full && d->have_inv && inventory_queue_counts_changed(d->rootfd, &d->inv) != 0)
                full = "queue count changed";
        if (full) {
                const char *why = irq_reading_due(d, &cur, cpus_changed);

                read_irqs = why != NULL;
                if (read_irqs) {
                        log_debug("Reading /proc/interrupts: %s", why);
                        r = sample_snapshot_take_irqs(d->rootfd, d->have_prev ? &d->prev : NULL, &cur);
                        if (r < 0) {
                                daemon_log_tick_failure(&d->tick_rl, r, "sample /proc", now);
                                sample_rates_free(&raw);
                                return 0;
                        }
                        (void) sample_snapshot_take_qstats(d->have_inv ? &d->inv : NULL, now, &cur); /* else none */
                        if (have_raw) {
                                sample_rates_free(&raw);
                                r = sample_compute(&d->prev, &cur, &raw);
                                have_raw = r >= 0;
                                if (r < 0)
                                        log_debug_errno(r, "Rates unavailable this tick: %m");
                        }
                } else
                        sample_snapshot_carry_irqs(&d->prev, &cur);
        } else
                sample_snapshot_carry_irqs(&d->prev, &cur);
        if (have_raw) {
                r = sample_smooth(&d->avg, &raw, d->config.smoothing);
                if (r >= 0)
                        d->have_avg = true;
                else
                        log_debug_errno(r, "Rates unavailable this tick: %m");
        }
        if (read_irqs) {
                d->irq_readings++;
                d->irq_force = false;
                irq_ref_update(d);
        }
        r = 0;
        if (!full) {
                d->calm_run++;
                d->pace = POLICY_PACE_CALM;
                goto done;
        }
        log_debug("Full tick: %s", full);
        d->calm_run = 0;

        if (cpus_changed) {
                r = reread_topology(d);
                if (r < 0)
                        log_warning_errno(r, "CPU set changed but re-reading the topology failed: %m");
                else {
                        log_notice("CPU hotplug: topology re-read");
                        log_topology(d);
                        d->inv_dirty = true;
                }
        }

        /* The policy must see the current affinities each tick to tell
         * external changes: refresh_inventory() re-reads them. */
        r = refresh_inventory(d, &cur.interrupts);
        if (r < 0) {
                daemon_log_tick_failure(&d->tick_rl, r, "read the NIC inventory", now);
                goto out;
        }
        if (d->inv_dirty) {
                log_inventory(d);
                check_unmatched(d, false);
                d->inv_dirty = false;
        }
        /* whether a watched IRQ fired: between the last two readings */
        if (d->n_eff > 0 && read_irqs)
                check_effective(d, d->have_prev ? &d->prev.interrupts : NULL, &cur.interrupts);

        if (d->config.n_workers > 0) {
                struct worker_set ws = {};

                r = workers_discover(d->rootfd, &d->config, &ws);
                if (r < 0)
                        log_debug_errno(r, "Worker discovery failed: %m");
                else {
                        workers_free(&d->workers);
                        d->workers = ws;
                        if (d->dry_run)
                                inventory_overlay(&d->inv, &d->workers, &d->overlay, false);
                }
        }

        if (!d->opts->once || d->have_prev) {
                r = decide_and_act(d, now, have_raw ? &raw : NULL);
                if (r == -ENOMEM)
                        goto out;
                r = 0;
        }
        /* a tick that began fast (a CPU at a threshold or its load rising
         * since the last decision) is followed by a fast one: this tick's
         * report is the new reference, so the rise no longer shows in it */
        d->pace = MAX(pace_in, policy_pace(&d->config, &d->report, have_raw ? &raw : NULL));
done:
        d->ticks++;
        {
                uint64_t took = now_clock(CLOCK_MONOTONIC) - now;

                report_count_tick(&d->out, took);
                log_debug("tick %u (%s) took %.1f ms", d->ticks, full ? "full" : "calm",
                          (double) took / USEC_PER_MSEC);
        }
        if (full) {
                log_load_summary(d);
                update_status(d, true);
        }
out:
        sample_rates_free(&raw);
        if (d->have_prev)
                sample_snapshot_free(&d->prev);
        d->prev = cur;
        d->have_prev = true;
        return r == -ENOMEM ? r : 0;
}

/* When the tick after the one due at due runs.  sd-event passes the time a
 * timer was due, not when it fired: after a stall (a paused VM, SIGSTOP, a
 * slow /sys) due + interval lies in the past, and re-arming there runs the
 * missed ticks back to back, each over an interval of milliseconds.  Missed
 * ticks are skipped: the next one comes a full interval after now. */
static uint64_t daemon_next_tick(uint64_t due, uint64_t now, uint64_t interval) {
        if (due + interval > now)
                return due + interval;
        return now + interval;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        int r;

        r = tick(d);
        if (r < 0)
                return r;
        if (d->opts->once && d->ticks >= 1) {
                log_info("--once: decision cycle done; changes stay in place ('irqsteerctl restore' undoes them)");
                return sd_event_exit(d->event, 0);
        }
        r = sd_event_source_set_time(s, daemon_next_tick(usec, now_monotonic(d), next_interval(d)));
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* ---- signals ---- */

static int on_reload(sd_event_source *s _unused_, const struct signalfd_siginfo *si _unused_, void *userdata) {
        struct daemon *d = userdata;
        struct config c = {};
        char err[sizeof(d->reload_error)] = "";
        uint64_t need, lost;
        int r;

        notify_reloading(now_clock(CLOCK_MONOTONIC));
        log_info("Reloading configuration from %s", d->config_path);
        r = load_config(d, &c, err, sizeof(err));
        if (r < 0) {
                snprintf(d->reload_error, sizeof(d->reload_error), "%s", err);
                report_count_reload(&d->out, false);
                log_error("Configuration reload failed, keeping the previous configuration");
        } else {
                _cleanup_(freep) char *sd = NULL;

                char restart[sizeof(d->restart_needed)] = "";
                size_t rl = 0;

                /* Each reload says again what still differs from the
                 * running daemon; a file set back clears it. */
#define RESTART_KEY(...) \
        rl += (size_t) snprintf(restart + rl, rl < sizeof(restart) ? sizeof(restart) - rl : 0, __VA_ARGS__)
                if (!d->opts->state_dir && d->state_dir &&
                    state_dir_choose(NULL, c.state_dir, d->root, d->root_is_host, false, &sd) == 0 &&
                    strcmp(sd, d->state_dir) != 0) {
                        log_warning("state_dir changed to %s: takes effect at the next start", sd);
                        RESTART_KEY("%sstate_dir", rl ? ", " : "");
                }
                if (c.dry_run != d->dry_run) {
                        log_warning("dry_run changed: takes effect at the next start");
                        RESTART_KEY("%sdry_run", rl ? ", " : "");
                }
                c.dry_run = d->dry_run;
                need = caps_for_config(&c, d->dry_run);
                /* Only what the configuration at start needed is kept
                 * (irqsteerd(8), CAPABILITIES); a capability we had and
                 * dropped cannot come back without a restart.  Applying
                 * the rest would show the new sections as in force while
                 * their writes fail, so the reload is refused as a whole.
                 * One never permitted at all (a container withholding
                 * it) is the start's situation: refused there on the host,
                 * warned with --root; accepted here. */
                lost = need & ~d->caps & d->caps_start;
                if (lost) {
                        char capbuf[128];

                        caps_format(lost, capbuf, sizeof(capbuf));
                        snprintf(d->reload_error, sizeof(d->reload_error),
                                 "needs %s, dropped at startup: restart irqsteerd to apply it", capbuf);
                        log_error("Configuration reload refused: the new configuration needs %s, dropped at startup; "
                                  "restart irqsteerd to apply it. Keeping the previous configuration", capbuf);
                        config_free(&c);
                        report_count_reload(&d->out, false);
                        update_status(d, false);
                        notify_ready(d->status);
                        return 0;
                }
#undef RESTART_KEY
                snprintf(d->restart_needed, sizeof(d->restart_needed), "%s", restart);
                config_free(&d->config);
                d->config = c;
                report_config_changed(&d->out);
                report_count_reload(&d->out, true);
                d->reload_error[0] = 0;
                log_set_max_level(d->config.log_level);
                if (d->interval_usec != d->config.interval_usec) {
                        d->interval_usec = d->config.interval_usec;
                        (void) sd_event_source_set_time(d->timer, now_monotonic(d) + d->interval_usec);
                }
                policy_reset(d->policy);
                d->irq_force = true;
                log_info("Configuration reloaded");
                log_dropins(&d->config);
                check_unmatched(d, true);
        }
        update_status(d, false);
        notify_ready(d->status);
        return 0;
}

static int on_stop(sd_event_source *s _unused_, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;

        log_info("Received %s, stopping", si->ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
        notify_stopping();
        d->stopping_by_signal = true;
        return sd_event_exit(d->event, 0);
}

/* ---- link monitor ---- */

static void link_event(struct daemon *d, const char *fmt, ...) {
        char text[sizeof(d->out.link_events[0].text)];
        const char *stored;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        stored = report_record_link(&d->out, text, now_clock(CLOCK_REALTIME));
        log_fields(LOG_INFO, ((const char *[]){ "MESSAGE_ID=" DAEMON_MID_LINK, NULL }), "%s", stored);
}

static void on_link(const struct linkmon_event *ev, void *userdata) {
        struct daemon *d = userdata;
        const char *name = ev->link.name[0] ? ev->link.name : "?";

        switch (ev->change) {
        case LINKMON_ADDED:
                link_event(d, "%s: appeared, rediscovering", name);
                break;
        case LINKMON_REMOVED:
                link_event(d, "%s: vanished, rediscovering", name);
                policy_forget_nic(d->policy, name);
                break;
        case LINKMON_UP:
                /* The driver's open() re-requested its IRQs with default
                 * affinity: lay the NIC out again. */
                link_event(d, "%s: link up, re-applying", name);
                policy_forget_nic(d->policy, name);
                break;
        case LINKMON_DOWN:
                link_event(d, "%s: link down", name);
                break;
        case LINKMON_RENAMED:
                link_event(d, "%s: renamed from %s, rediscovering", name, ev->old_name);
                policy_forget_nic(d->policy, ev->old_name);
                policy_forget_nic(d->policy, name);
                break;
        case LINKMON_QUEUES:
                link_event(d, "%s: queues changed (rx %u -> %u, tx %u -> %u), re-applying", name, ev->old_rx,
                           ev->link.num_rx, ev->old_tx, ev->link.num_tx);
                policy_forget_nic(d->policy, name);
                break;
        case LINKMON_RESYNC:
                link_event(d, "link notifications were lost, rediscovering all interfaces");
                break;
        default:
                return;
        }
        d->inv_dirty = true;
}

/* ---- startup and shutdown ---- */

/* The tail of a restore summary: "" when it went well, else ": OBJECT:
 * error" naming the first object that failed. */
static const char *restore_error(int r, const struct undo_report *rep, char *buf, size_t len) {
        if (r >= 0)
                return "";
        snprintf(buf, len, ": %s%s%s", rep->first_failed, rep->first_failed[0] ? ": " : "", strerror(-r));
        return buf;
}

static int recover_crash_journal(struct daemon *d) {
        struct undo_report rep = {};
        char path[4096], why[256];
        int r;

        snprintf(path, sizeof(path), "%s/%s", d->state_dir, UNDO_JOURNAL_NAME);
        if (access(path, F_OK) < 0)
                return 0;
        if (d->dry_run) {
                log_warning("%s: a previous run's undo journal exists; dry-run leaves it for the next real run or 'irqsteerctl restore'",
                            path);
                return 0;
        }
        log_notice("%s: a previous run did not stop cleanly, restoring what it changed", path);
        r = undo_recover(d->rootfd, d->state_dir, &rep);
        if (r == -EXDEV)
                /* another root's originals: restoring them here would write
                 * its values into this tree, and a new journal would hide
                 * them from the root they belong to */
                return log_error_errno(r, "%s is not restored: %s; it is left in place. Use another --state-dir, "
                                       "or restore it with 'irqsteerctl restore' on its root",
                                       path, rep.refused);
        if (rep.refused[0]) {
                int q = undo_set_aside(d->state_dir);

                if (q < 0)
                        return log_error_errno(q, "%s is not restored: %s; and it cannot be moved aside: %m", path,
                                               rep.refused);
                log_warning("%s is not restored: %s; kept as %s.refused", path, rep.refused, path);
                return 0;
        }
        report_count_restore(&d->out, &rep);
        log_full_errno(r < 0 || rep.failed ? LOG_WARNING : LOG_NOTICE, r,
                       "Recovery: %u restored, %u already original, %u changed by others (left alone), %u gone, %u failed, %u unreadable journal lines%s",
                       rep.restored, rep.unchanged, rep.external, rep.gone, rep.failed, rep.corrupt,
                       restore_error(r, &rep, why, sizeof(why)));
        return 0;
}

static int drop_capabilities(struct daemon *d) {
        uint64_t want = caps_for_config(&d->config, d->dry_run), have = caps_permitted();
        char buf[128];
        int r;

        d->caps_start = have;

        if (want & ~have) {
                /* E.g. systemd-nspawn without --private-network withholds
                 * CAP_NET_ADMIN; the writes needing it will fail and be
                 * logged once each. */
                caps_format(want & ~have, buf, sizeof(buf));
                log_warning("Missing %s, which the configuration needs: those writes will fail", buf);
                want &= have;
        }
        r = caps_drop(want);
        caps_format(want, buf, sizeof(buf));
        if (r < 0) {
                log_warning_errno(r, "Failed to reduce capabilities to %s: %m", buf);
                d->caps = caps_effective();
                return 0;
        }
        d->caps = caps_effective();
        log_info("Capabilities kept: %s", buf);
        return 0;
}

static int setup_event(struct daemon *d) {
        sigset_t ss;
        int r;

        r = sd_event_default(&d->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");

        sigemptyset(&ss);
        sigaddset(&ss, SIGHUP);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");

        r = sd_event_add_signal(d->event, &d->sig_hup, SIGHUP, on_reload, d);
        if (r >= 0)
                r = sd_event_add_signal(d->event, &d->sig_term, SIGTERM, on_stop, d);
        if (r >= 0)
                r = sd_event_add_signal(d->event, &d->sig_int, SIGINT, on_stop, d);
        if (r < 0)
                return log_error_errno(r, "Failed to add signal sources: %m");
        (void) sd_event_source_set_description(d->sig_hup, "signal-reload");
        (void) sd_event_source_set_description(d->sig_term, "signal-term");
        (void) sd_event_source_set_description(d->sig_int, "signal-int");
        (void) sd_event_source_set_exit_on_failure(d->sig_hup, true);

        r = sd_event_add_time(d->event, &d->timer, CLOCK_MONOTONIC, now_monotonic(d) + d->interval_usec,
                              d->interval_usec / 50, on_timer, d);
        if (r < 0)
                return log_error_errno(r, "Failed to add the tick timer: %m");
        (void) sd_event_source_set_description(d->timer, "tick");
        (void) sd_event_source_set_exit_on_failure(d->timer, true);

        return 0;
}

/* On the host, what the writes need, said once before anything is tried:
 * otherwise every write fails on its own ("Permission denied" for each
 * IRQ) while the daemon reports Ready.  A fixture root (--root) is the
 * caller's own files, and --dry-run writes nothing. */
static int check_privileges(struct daemon *d) {
        uint64_t missing;
        char buf[128];

        if (!d->root_is_host || d->dry_run)
                return 0;
        if (geteuid() != 0) {
                snprintf(d->startup_error, sizeof(d->startup_error),
                         "irqsteerd must run as root (uid 0 writes /proc/irq/N/smp_affinity); "
                         "use --dry-run to only watch and log");
                log_error("%s", d->startup_error);
                return -EPERM;
        }
        missing = caps_for_config(&d->config, d->dry_run) & ~caps_permitted();
        if (missing) {
                caps_format(missing, buf, sizeof(buf));
                snprintf(d->startup_error, sizeof(d->startup_error),
                         "irqsteerd lacks %s, which the configuration needs (cap_net_admin: RPS, RFS, XPS; "
                         "cap_sys_nice: [worker] sections); use --dry-run to only watch and log", buf);
                log_error("%s", d->startup_error);
                return -EPERM;
        }
        return 0;
}

static int startup(struct daemon *d) {
        pid_t holder = 0;
        int r;

        r = load_config(d, &d->config, d->startup_error, sizeof(d->startup_error));
        if (r < 0) {
                d->config_invalid = true;
                return r;
        }
        d->have_config = true;
        log_set_max_level(d->config.log_level);
        d->dry_run = d->config.dry_run;
        d->interval_usec = d->config.interval_usec;
        d->rootfd = rootfs_open(d->root);
        if (d->rootfd < 0)
                return log_error_errno(d->rootfd, "Failed to open root %s: %m", d->root);
        d->root_is_host = rootfs_is_host(d->rootfd);
        r = check_privileges(d);
        if (r < 0)
                return r;
        r = state_dir_choose(d->opts->state_dir, d->config.state_dir, d->root, d->root_is_host, true, &d->state_dir);
        if (r == -EXDEV)
                return log_error_errno(r, "--state-dir %s is the host's state directory: a run on root %s keeps "
                                       "its own (omit --state-dir for %s/run/irqsteer, or name another)",
                                       d->opts->state_dir, d->root, d->root);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s/run for the state directory: %m "
                                       "(name one with --state-dir)", d->root);
        log_info("irqsteerd " IRQSTEER_VERSION " starting%s, configuration %s, root %s, state %s, interval %.3gs",
                 d->dry_run ? " (dry-run: no changes)" : "", d->config.path ? d->config.path : "(built-in defaults)",
                 d->root, d->state_dir, (double) d->interval_usec / USEC_PER_SEC);
        log_dropins(&d->config);

        raise_nofile();

        r = state_dir_ensure(d->state_dir);
        if (r < 0)
                return log_error_errno(r, "Failed to create state directory %s: %m", d->state_dir);

        /* before the journal is read: a second instance would take the
         * first one's journal for a crash and restore under its feet */
        d->lockfd = state_lock(d->state_dir, &holder);
        if (d->lockfd == -EBUSY) {
                d->locked_out = true;
                if (holder > 0)
                        return log_error_errno(d->lockfd, "Another irqsteerd (pid %d) is running on state directory %s; "
                                               "not starting a second one", (int) holder, d->state_dir);
                return log_error_errno(d->lockfd, "Another irqsteerd is running on state directory %s (%s/%s is locked); "
                                       "not starting a second one", d->state_dir, d->state_dir, STATE_LOCK_NAME);
        }
        if (d->lockfd < 0)
                return log_error_errno(d->lockfd, "Failed to lock %s/%s: %m", d->state_dir, STATE_LOCK_NAME);

        r = recover_crash_journal(d);
        if (r < 0)
                return r;

        r = topology_read(d->rootfd, &d->topo);
        if (r < 0)
                return log_error_errno(r, "Failed to read the CPU topology under %s: %m", d->root);
        (void) cpuset_set_limit(topology_cpu_bound(d->rootfd, &d->topo));
        log_topology(d);

        r = sample_snapshot_take(d->rootfd, now_clock(CLOCK_MONOTONIC), &d->prev);
        if (r < 0)
                return log_error_errno(r, "Failed to read /proc/stat, /proc/softirqs, /proc/interrupts under %s: %m",
                                       d->root);
        d->have_prev = true;
        r = discover_inventory(d, &d->prev.interrupts);
        if (r < 0)
                return log_error_errno(r, "Failed to read the NIC inventory under %s: %m", d->root);
        log_inventory(d);
        check_unmatched(d, true);

        r = apply_new(d->rootfd, d->root_is_host, d->state_dir, d->dry_run, &d->apply);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the actuators: %m");
        d->policy = policy_state_new();
        if (!d->policy)
                return log_error_errno(ENOMEM, "Out of memory");

        r = setup_event(d);
        if (r < 0)
                return r;
        r = setup_bans(d);
        if (r < 0)
                return r;

        /* Warned, not refused: the operator may be moving over from
         * irqbalance; the status line keeps saying it meanwhile. */
        find_other_writer(d);
        if (d->other_pid > 0 && d->config.other_irqs)
                log_warning("%s", d->other_writer);
        else if (d->other_pid > 0)
                /* other_irqs = no: running beside it is the intent */
                log_info("irqbalance (pid %d) runs beside irqsteerd; other_irqs = no leaves it the IRQs that "
                         "serve no NIC queue", (int) d->other_pid);
        if (d->root_is_host) {
                r = linkmon_new(d->event, on_link, d, &d->linkmon);
                if (r < 0)
                        log_warning_errno(r, "Failed to open rtnetlink, continuing without link monitoring: %m");
                else
                        log_debug("Link monitor: %zu links", linkmon_count(d->linkmon));
        }

        return drop_capabilities(d);
}

static void shutdown_restore(struct daemon *d) {
        struct undo_report rep = {};
        char why[256];
        int r;

        if (!d->apply || d->opts->once)
                return;
        if (!d->config.restore_on_exit) {
                log_info("restore_on_exit=no: leaving changes in place ('irqsteerctl restore' undoes them)");
                return;
        }
        if (d->dry_run)
                return;
        r = apply_restore_all(d->apply, &rep);
        log_full_errno(r < 0 || rep.failed ? LOG_WARNING :
                       rep.restored || rep.external || rep.gone ? LOG_INFO : LOG_DEBUG, r,
                       "Restored original values: %u restored, %u already original, %u changed by others (left alone), %u gone, %u failed%s",
                       rep.restored, rep.unchanged, rep.external, rep.gone, rep.failed,
                       restore_error(r, &rep, why, sizeof(why)));
}

static void daemon_free(struct daemon *d) {
        linkmon_free(d->linkmon);
        sd_event_source_disable_unref(d->timer);
        sd_event_source_disable_unref(d->sig_hup);
        sd_event_source_disable_unref(d->sig_term);
        sd_event_source_disable_unref(d->sig_int);
        sd_event_source_disable_unref(d->bans_watch);
        sd_event_unref(d->event);
        if (d->apply)
                apply_free(d->apply);
        policy_report_free(&d->report);
        policy_state_free(d->policy);
        action_list_free(&d->actions);
        action_list_free(&d->overlay);
        workers_free(&d->workers);
        if (d->have_avg || d->avg.cpus)
                sample_rates_free(&d->avg);
        if (d->have_prev)
                sample_snapshot_free(&d->prev);
        if (d->have_inv)
                inventory_free(&d->inv);
        topology_free(&d->topo);
        if (d->have_config)
                config_free(&d->config);
        daemon_failures_free(&d->failures);
        free(d->eff);
        free(d->irq_ref);
        report_free(&d->out);
        free(d->msi_warned);
        bans_free(&d->bans);
        free(d->bans_dir);
        free(d->state_dir);
        if (d->rootfd >= 0)
                close(d->rootfd);
        if (d->lockfd >= 0)
                close(d->lockfd);
}

int daemon_run(const struct daemon_options *o) {
        struct daemon d = {
                .opts = o,
                .config_path = o->config_path ? o->config_path : CONFIG_DEFAULT_PATH,
                .config_allow_missing = !o->config_path,
                .root = o->root ? o->root : "/",
                .rootfd = -1,
                .lockfd = -1,
                .failures.rl = { .interval_usec = 60 * USEC_PER_SEC, .burst = 10 },
                .tick_rl = { .interval_usec = 60 * USEC_PER_SEC, .burst = 10 },
                .avg = { .max_cpu = -1 },
                .irq_ref_max_cpu = -1,
                .irq_force = true,
                .audit = { .per_tick = AUDIT_PER_TICK },
        };
        int r, ret = DAEMON_EXIT_OK;

        d.start_realtime_usec = now_clock(CLOCK_REALTIME);
        d.start_monotonic_usec = now_clock(CLOCK_MONOTONIC);

        r = startup(&d);
        if (r < 0) {
                char msg[600];

                /* The last STATUS= is what systemctl status keeps: with a
                 * bad file it names FILE:LINE, not only the errno. */
                if (d.startup_error[0])
                        snprintf(msg, sizeof(msg), "startup failed: %s", d.startup_error);
                else
                        snprintf(msg, sizeof(msg), "startup failed: %s", strerror(-r));
                notify_errno(-r, msg);
                daemon_free(&d);
                if (d.locked_out)
                        return DAEMON_EXIT_LOCKED;
                return d.config_invalid ? DAEMON_EXIT_CONFIG : DAEMON_EXIT_FAILURE;
        }

        /* The first decision right away, from the discovery snapshot:
         * placement does not need load (the initial layout); the next
         * ticks have rates. */
        report_format_status(&d.report, d.dry_run, NULL, d.status, sizeof(d.status));
        if (!o->once) {
                r = decide_and_act(&d, now_monotonic(&d), NULL);
                if (r == -ENOMEM) {
                        notify_errno(ENOMEM, "startup failed: out of memory");
                        daemon_free(&d);
                        return DAEMON_EXIT_FAILURE;
                }
        }
        update_status(&d, false);
        notify_ready(d.status);
        log_info("Ready: %s", d.status);

        /* Pings WATCHDOG=1 at half of WATCHDOG_USEC when the manager asks
         * for it (only after READY=1); a stuck tick stops the pings. */
        r = sd_event_set_watchdog(d.event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog: %m");

        r = sd_event_loop(d.event);
        if (r < 0) {
                log_error_errno(r, "Event loop failed: %m");
                notify_stopping();
                ret = DAEMON_EXIT_FAILURE;
        }
        shutdown_restore(&d);
        if (!o->once) {
                struct report_snapshot s;

                (void) state_remove(d.state_dir, STATE_STATUS_NAME);
                fill_snapshot(&d, &s);
                report_remove_metrics(&s);
        }
        daemon_free(&d);
        return ret;
}
