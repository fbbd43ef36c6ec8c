/* irqsteerctl plan (what the policy would do now, changing nothing) and
 * irqsteerctl restore (put back what a previous run saved). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "action.h"
#include "config.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "knob.h"
#include "log.h"
#include "policy.h"
#include "rootfs.h"
#include "sample.h"
#include "state.h"
#include "undo.h"
#include "util.h"
#include "workers.h"

/* ---- plan ---- */

struct plan_action {
        unsigned tick;
        struct action a;
};

/* The notes of every replay: each tick's report replaces the last, and a
 * note is said once, at the tick it happens ("kept: ..." at the first). */
struct plan_notes {
        struct policy_note *v;
        size_t n, allocated;
};

static int plan_notes_add(struct plan_notes *pn, const struct policy_report *rep) {
        for (size_t i = 0; i < rep->n_notes; i++) {
                if (util_grow((void **) &pn->v, &pn->allocated, pn->n + 1, sizeof(*pn->v)) < 0)
                        return -ENOMEM;
                pn->v[pn->n++] = rep->notes[i];
        }
        return 0;
}

/* Whether a planned action takes load off cpu. */
static bool plan_relieves(const struct plan_action *v, size_t n, int cpu) {
        for (size_t i = 0; i < n; i++)
                if (cpuset_isset(&v[i].a.from, cpu) && !cpuset_isset(&v[i].a.cpus, cpu))
                        return true;
        return false;
}

static void plan_json(FILE *f, double interval_s, const struct plan_action *v, size_t n,
                      const struct policy_report *rep, const struct plan_notes *pn) {
        struct json_writer w;

        json_writer_init(&w, f, JSON_PRETTY);
        json_begin_object(&w);
        json_key_int(&w, "version", 1);
        json_key_double(&w, "interval", interval_s);
        json_key_begin_array(&w, "hot_cpus");
        for (size_t i = 0; i < rep->n_hot_cpus; i++) {
                json_begin_object(&w);
                json_key_int(&w, "cpu", rep->hot_cpus[i].cpu);
                json_key_double(&w, "load", rep->hot_cpus[i].load);
                json_key_double(&w, "idle", rep->hot_cpus[i].idle);
                json_key_bool(&w, "saturated", rep->hot_cpus[i].saturated);
                if (rep->hot_cpus[i].why[0] && !plan_relieves(v, n, rep->hot_cpus[i].cpu))
                        json_key_string(&w, "why", rep->hot_cpus[i].why);
                else
                        json_key_null(&w, "why");
                json_end_object(&w);
        }
        json_end_array(&w);
        json_key_begin_array(&w, "actions");
        for (size_t i = 0; i < n; i++) {
                const struct action *a = &v[i].a;
                char text[512];

                if (action_format(a, text, sizeof(text)) < 0)
                        text[0] = '\0';
                json_begin_object(&w);
                json_key_uint(&w, "tick", v[i].tick);
                action_json_members(&w, a);
                json_key_string(&w, "reason", a->reason);
                json_key_string(&w, "text", text);
                json_end_object(&w);
        }
        json_end_array(&w);
        json_key_begin_array(&w, "notes");
        for (size_t i = 0; i < pn->n; i++)
                json_string(&w, pn->v[i].text);
        json_end_array(&w);
        json_end_object(&w);
        fputc('\n', f);
}

static void plan_print(FILE *f, const struct plan_action *v, size_t n, const struct policy_report *rep,
                       const struct plan_notes *pn) {
        fprintf(f, "Hot CPUs:");
        if (rep->n_hot_cpus == 0)
                fprintf(f, " none");
        for (size_t i = 0; i < rep->n_hot_cpus; i++)
                fprintf(f, "%s CPU%d (%.1f%% irq+softirq, %.1f%% idle%s)", i ? "," : "", rep->hot_cpus[i].cpu,
                        rep->hot_cpus[i].load * 100, rep->hot_cpus[i].idle * 100,
                        rep->hot_cpus[i].saturated ? ", saturated" : "");
        fputc('\n', f);
        /* a hot CPU the plan leaves as it is: say why */
        for (size_t i = 0; i < rep->n_hot_cpus; i++)
                if (rep->hot_cpus[i].why[0] && !plan_relieves(v, n, rep->hot_cpus[i].cpu))
                        fprintf(f, "  CPU%d stays: %s\n", rep->hot_cpus[i].cpu, rep->hot_cpus[i].why);
        for (size_t i = 0; i < pn->n; i++)
                fprintf(f, "Note: %s\n", pn->v[i].text);
        if (n == 0) {
                fprintf(f, "No actions: the current placement stays%s.\n",
                        rep->n_hot_cpus > 0 ? " (why for each hot CPU above)" : ": no CPU is hot");
                return;
        }
        fprintf(f, "%zu action%s (nothing was changed):\n", n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++) {
                char text[512];

                if (action_format(&v[i].a, text, sizeof(text)) < 0)
                        snprintf(text, sizeof(text), "%s: %s", action_type_to_string(v[i].a.type),
                                 v[i].a.reason);
                fprintf(f, "  [tick %u] %s\n", v[i].tick, text);
        }
}

static void plan_help(FILE *f) {
        fprintf(f, "Usage: irqsteerctl plan [--root DIR] [--config FILE] [--interval S] [--json]\n"
                   "Sample the load for one interval and print what irqsteerd would do if it\n"
                   "started now and the load persisted; nothing is changed.\n\n"
                   "  -r, --root DIR       read /proc and /sys under DIR (default /)\n"
                   "  -c, --config FILE    configuration (default %s;\n"
                   "                       built-in defaults when that file does not exist)\n"
                   "  -i, --interval S     sampling interval (default: the config's interval)\n"
                   "  -j, --json           print JSON (schema in irqsteerctl(8))\n"
                   "  -h, --help           show this help\n",
                CONFIG_DEFAULT_PATH);
}

int ctl_plan(int argc, char **argv) {
        static const struct option options[] = {
                { "root", required_argument, NULL, 'r' },
                { "config", required_argument, NULL, 'c' },
                { "interval", required_argument, NULL, 'i' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct config cfg = { 0 };
        struct config_errors errs = { 0 };
        struct topology t = { 0 };
        struct procfs_interrupts pi = { 0 };
        struct inventory inv = { 0 };
        struct sample_snapshot s0 = { 0 }, s1 = { 0 };
        struct sample_rates rates = { 0 };
        struct worker_set ws = { 0 };
        struct action_list actions = { 0 };
        struct policy_report rep = { 0 };
        struct policy_state *st = NULL;
        struct plan_action *plan = NULL;
        struct plan_notes notes = { 0 };
        size_t n_plan = 0, plan_alloc = 0;
        const char *root = "/", *config_path = NULL;
        uint64_t interval = 0, now;
        bool json = false, host, have_workers = false;
        int c, rootfd = -1, r, ret = CTL_EXIT_ERROR;
        unsigned ticks;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+r:c:i:jh", options, NULL)) >= 0) {
                switch (c) {
                case 'r': root = optarg; break;
                case 'c': config_path = optarg; break;
                case 'i':
                        if (ctl_parse_interval(optarg, &interval) < 0)
                                return ctl_usage_error("plan", "bad interval '%s'", optarg);
                        break;
                case 'j': json = true; break;
                case 'h': plan_help(stdout); return CTL_EXIT_OK;
                default: return ctl_usage_error("plan", "bad option");
                }
        }
        if (optind < argc)
                return ctl_usage_error("plan", "unexpected argument '%s'", argv[optind]);

        /* A file named on the command line must exist; the default one may
         * be absent (built-in defaults), as for the daemon. */
        r = config_load(config_path ? config_path : CONFIG_DEFAULT_PATH, !config_path, &cfg, &errs);
        if (r < 0) {
                if (errs.n > 0)
                        config_errors_print(&errs, stderr);
                else
                        ctl_error("cannot load %s: %s", config_path ? config_path : CONFIG_DEFAULT_PATH,
                                  strerror(-r));
                config_errors_free(&errs);
                return CTL_EXIT_ERROR;
        }
        config_errors_free(&errs);
        if (interval == 0)
                interval = cfg.interval_usec;

        rootfd = ctl_open_root(root);
        if (rootfd < 0)
                goto out;
        host = rootfs_is_host(rootfd);
        if (ctl_read_model(rootfd, host, &t, &pi, &inv) < 0)
                goto out;
        if (cfg.n_workers > 0) {
                r = workers_discover(rootfd, &cfg, &ws);
                if (r < 0)
                        ctl_error("worker discovery failed (%s), planning without workers", strerror(-r));
                else
                        have_workers = true;
        }

        ctl_catch_signals();
        r = sample_snapshot_take(rootfd, ctl_now_monotonic(), &s0);
        if (r < 0) {
                ctl_error("cannot sample under %s: %s", root, strerror(-r));
                goto out;
        }
        if (!ctl_sleep(interval))
                goto out;
        now = ctl_now_monotonic();
        r = sample_snapshot_take(rootfd, now, &s1);
        if (r == 0)
                r = sample_compute(&s0, &s1, &rates);
        if (r < 0) {
                ctl_error("sampling failed: %s", strerror(-r));
                goto out;
        }

        st = policy_state_new();
        if (!st) {
                ctl_error("out of memory");
                goto out;
        }
        /* A CPU must stay hot for hot_samples samples before the policy acts
         * on it: replay this one measurement that many times, one interval
         * apart, applying each tick's actions to the in-memory inventory
         * and confirming them, as the daemon would. */
        ticks = MAX(cfg.hot_samples, 1u);
        for (unsigned k = 0; k < ticks; k++) {
                struct policy_input in = {
                        .config = &cfg,
                        .topo = &t,
                        .inv = &inv,
                        .load = &rates,
                        .workers = have_workers ? &ws : NULL,
                        .now_usec = now + (uint64_t) k * interval,
                };

                r = policy_tick(st, &in, &actions, &rep);
                if (r == 0)
                        r = plan_notes_add(&notes, &rep);
                if (r < 0) {
                        ctl_error("policy failed: %s", strerror(-r));
                        goto out;
                }
                for (size_t i = 0; i < actions.n; i++) {
                        if (util_grow((void **) &plan, &plan_alloc, n_plan + 1, sizeof(*plan)) < 0) {
                                ctl_error("out of memory");
                                goto out;
                        }
                        plan[n_plan].tick = k + 1;
                        plan[n_plan].a = actions.v[i];
                        n_plan++;
                        struct knob_key k;

                        /* what the actuators would leave behind, as the daemon's re-read shows it,
                         * and for a thread, what the next discovery would read: without
                         * it the next replay takes our own pinning for someone else's */
                        if (knob_key_from_action(&actions.v[i], &k) == 0) {
                                inventory_set_knob(&inv, &k, &actions.v[i].cpus, actions.v[i].value, false);
                                if (have_workers)
                                        workers_set_knob(&ws, &k, &actions.v[i].cpus);
                        }
                        policy_feedback(st, &actions.v[i], 0, in.now_usec);
                }
        }

        if (json)
                plan_json(stdout, rates.interval_s, plan, n_plan, &rep, &notes);
        else
                plan_print(stdout, plan, n_plan, &rep, &notes);
        ret = fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_ERROR;
out:
        free(notes.v);
        free(plan);
        policy_report_free(&rep);
        action_list_free(&actions);
        policy_state_free(st);
        sample_rates_free(&rates);
        sample_snapshot_free(&s0);
        sample_snapshot_free(&s1);
        if (have_workers)
                workers_free(&ws);
        inventory_free(&inv);
        procfs_interrupts_free(&pi);
        topology_free(&t);
        config_free(&cfg);
        if (rootfd >= 0)
                close(rootfd);
        return ret;
}

/* ---- restore ---- */

static void restore_help(FILE *f) {
        fprintf(f, "Usage: irqsteerctl restore [--root DIR] [--state-dir DIR] [--force]\n"
                   "Put back the original IRQ affinities, RPS/XPS masks, flow counts and thread\n"
                   "affinities saved in DIR/%s by a previous irqsteerd run.\n\n"
                   "  -r, --root DIR       write /proc and /sys under DIR (default /)\n"
                   "  -s, --state-dir DIR  the daemon's state directory (default %s,\n"
                   "                       DIR/run/irqsteer with --root DIR)\n"
                   "  -f, --force          restore even though irqsteerd seems to be running\n"
                   "  -h, --help           show this help\n",
                UNDO_JOURNAL_NAME, CONFIG_DEFAULT_STATE_DIR);
}

/* Whether the status file names a live daemon: restoring under its feet
 * would look to it like an administrator's change. */
static bool daemon_running(const char *state_dir, int64_t *ret_pid) {
        _cleanup_(json_freep) struct json_value *v = NULL;

        return state_read_status(state_dir, &v) == 0 && state_status_live(v, ret_pid);
}

int ctl_restore(int argc, char **argv) {
        static const struct option options[] = {
                { "root", required_argument, NULL, 'r' },
                { "state-dir", required_argument, NULL, 's' },
                { "force", no_argument, NULL, 'f' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct undo_report rep = { 0 };
        struct undo *u = NULL;
        const char *root = "/", *asked_state_dir = NULL;
        _cleanup_(freep) char *state_dir = NULL;
        bool force = false, host;
        int64_t pid = 0;
        int c, rootfd, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+r:s:fh", options, NULL)) >= 0) {
                switch (c) {
                case 'r': root = optarg; break;
                case 's': asked_state_dir = optarg; break;
                case 'f': force = true; break;
                case 'h': restore_help(stdout); return CTL_EXIT_OK;
                default: return ctl_usage_error("restore", "bad option");
                }
        }
        if (optind < argc)
                return ctl_usage_error("restore", "unexpected argument '%s'", argv[optind]);

        rootfd = ctl_open_root(root);
        if (rootfd < 0)
                return CTL_EXIT_ERROR;
        host = rootfs_is_host(rootfd);
        close(rootfd);
        /* a --root run keeps its journal under its root (irqsteerd(8)) */
        r = state_dir_choose(asked_state_dir, NULL, root, host, false, &state_dir);
        if (r == -EXDEV) {
                ctl_error("--state-dir %s is the host's state directory, not that of root %s "
                          "(omit --state-dir for %s/run/irqsteer)", asked_state_dir, root, root);
                return CTL_EXIT_ERROR;
        }
        if (r < 0) {
                ctl_error("cannot choose the state directory: %s", strerror(-r));
                return CTL_EXIT_ERROR;
        }
        if (!force && daemon_running(state_dir, &pid)) {
                ctl_error("irqsteerd (pid %" PRId64 ") is running and restores on stop; "
                          "stop it, or use --force",
                          pid);
                return CTL_EXIT_ERROR;
        }

        /* List the journal first (read-only handle): the restore report
         * only counts. */
        r = undo_new(state_dir, NULL, true, &u);
        if (r < 0) {
                ctl_error("cannot read the undo journal in %s: %s", state_dir, strerror(-r));
                return CTL_EXIT_ERROR;
        }
        if (u->n_entries == 0 && u->corrupt == 0) {
                printf("Nothing to restore: no saved originals in %s/%s.\n", state_dir, UNDO_JOURNAL_NAME);
                undo_free(u);
                return CTL_EXIT_OK;
        }
        printf("Saved originals in %s/%s:\n", state_dir, UNDO_JOURNAL_NAME);
        for (size_t i = 0; i < u->n_entries; i++) {
                char key[128];

                if (knob_key_format(&u->entries[i].key, key, sizeof(key)) < 0)
                        snprintf(key, sizeof(key), "?");
                printf("  %-28s original %s\n", key, u->entries[i].original ? u->entries[i].original : "?");
        }
        undo_free(u);

        rootfd = ctl_open_root(root);
        if (rootfd < 0)
                return CTL_EXIT_ERROR;
        r = undo_recover(rootfd, state_dir, &rep);
        close(rootfd);
        if (rep.refused[0]) {
                ctl_error("%s/%s is not restored: %s; it is left as it is", state_dir, UNDO_JOURNAL_NAME,
                          rep.refused);
                return CTL_EXIT_ERROR;
        }
        printf("Restored %u, already original %u, changed by someone else since (left alone) %u, "
               "gone %u, failed %u, unreadable journal lines %u.\n",
               rep.restored, rep.unchanged, rep.external, rep.gone, rep.failed, rep.corrupt);
        if (r < 0 || rep.failed > 0) {
                ctl_error("restore incomplete: %s%s%s; the failed objects stay in the journal",
                          rep.first_failed, rep.first_failed[0] ? ": " : "", strerror(-(r < 0 ? r : rep.first_error)));
                return CTL_EXIT_ERROR;
        }
        return CTL_EXIT_OK;
}
