/* irqsteerctl plan: what the policy would do now, changing nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "action.h"
#include "bans.h"
#include "engine.h"
#include "report.h"
#include "config.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "log.h"
#include "policy.h"
#include "rootfs.h"
#include "state.h"
#include "util.h"

struct plan_action {
        unsigned tick;
        struct action a;
        int result;               /* apply_action()'s: APPLY_DRY_RUN, or the -errno it would fail with */
};

struct plan_run {
        unsigned tick;
        struct plan_action *v;
        size_t n, allocated;
        size_t n_tick;            /* actions of the current tick */
        int error;
        /* the notes of every tick, each said once, at the tick it happens */
        struct policy_note *notes;
        size_t n_notes, allocated_notes;
};

/* Whether a planned action takes load off cpu. */
static bool plan_relieves(const struct plan_run *pr, int cpu) {
        for (size_t i = 0; i < pr->n; i++)
                if (cpuset_kept_isset(&pr->v[i].a.from, cpu) && !cpuset_kept_isset(&pr->v[i].a.cpus, cpu))
                        return true;
        return false;
}

static int plan_json(FILE *f, double interval_s, const struct plan_run *pr, const struct policy_report *rep) {
        const struct plan_action *v = pr->v;
        struct json_writer w;

        json_writer_init(&w, f, JSON_PRETTY);
        json_begin_object(&w);
        json_key_int(&w, "version", 1);
        json_key_double(&w, "interval", interval_s);
        json_key_uint(&w, "ticks", pr->tick);
        json_key_begin_array(&w, "hot_cpus");
        for (size_t i = 0; i < rep->n_hot_cpus; i++) {
                json_begin_object(&w);
                json_key_int(&w, "cpu", rep->hot_cpus[i].cpu);
                json_key_double(&w, "load", rep->hot_cpus[i].load);
                json_key_double(&w, "idle", rep->hot_cpus[i].idle);
                json_key_bool(&w, "saturated", rep->hot_cpus[i].saturated);
                json_key_string(&w, "why", rep->hot_cpus[i].why[0] && !plan_relieves(pr, rep->hot_cpus[i].cpu) ?
                                rep->hot_cpus[i].why : NULL);
                json_end_object(&w);
        }
        json_end_array(&w);
        json_key_begin_array(&w, "actions");
        for (size_t i = 0; i < pr->n; i++) {
                const struct action *a = &v[i].a;
                char text[512];

                if (action_format(a, text, sizeof(text)) < 0)
                        text[0] = '\0';
                json_begin_object(&w);
                json_key_uint(&w, "tick", v[i].tick);
                action_json_members(&w, a);
                json_key_string(&w, "reason", a->reason);
                json_key_string(&w, "text", text);
                json_key_string(&w, "error", v[i].result < 0 ? strerror(-v[i].result) : NULL);
                json_end_object(&w);
        }
        json_end_array(&w);
        json_key_begin_array(&w, "notes");
        for (size_t i = 0; i < pr->n_notes; i++)
                json_string(&w, pr->notes[i].text);
        json_end_array(&w);
        json_end_object(&w);
        fputc('\n', f);
        return json_writer_finish(&w);
}

static void plan_print(FILE *f, const struct plan_run *pr, const struct policy_report *rep) {
        const struct plan_action *v = pr->v;
        size_t n = pr->n;

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
                if (rep->hot_cpus[i].why[0] && !plan_relieves(pr, rep->hot_cpus[i].cpu))
                        fprintf(f, "  CPU%d stays: %s\n", rep->hot_cpus[i].cpu, rep->hot_cpus[i].why);
        for (size_t i = 0; i < pr->n_notes; i++)
                fprintf(f, "Note: %s\n", pr->notes[i].text);
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
                if (v[i].result < 0)
                        fprintf(f, "  [tick %u] %s (would fail here: %s)\n", v[i].tick, text, strerror(-v[i].result));
                else
                        fprintf(f, "  [tick %u] %s\n", v[i].tick, text);
        }
}

static const char plan_help[] =
        "Usage: irqsteerctl plan [--root DIR] [--config FILE] [--interval S] [--ticks N] [--json]\n"
        "Run irqsteerd's decision cycle in dry-run on the live load: the decision at\n"
        "start, then one tick per interval for as many ticks as the daemon needs to act\n"
        "(hot_samples, more while it still acts); print what it would do.  Nothing is\n"
        "changed.\n\n"
        "  -r, --root DIR       read /proc and /sys under DIR (default /)\n"
        "  -c, --config FILE    configuration (default " CONFIG_DEFAULT_PATH ";\n"
        "                       built-in defaults when that file does not exist)\n"
        "  -i, --interval S     sampling interval (default: the config's interval)\n"
        "  -t, --ticks N        run exactly N ticks after the decision at start\n"
        "  -j, --json           print JSON (schema in irqsteerctl(8))\n"
        "  -h, --help           show this help\n";

/* The ticks after hot_samples that plan runs at most while the daemon
 * would still act (a move cap, a queue moved after another). */
#define PLAN_EXTRA_TICKS_MAX 8

/* The engine's action callback: every action tried, as the daemon logs it. */
static void plan_record(void *userdata, const struct action *a, const char *line _unused_, int result) {
        struct plan_run *pr = userdata;

        if (util_grow((void **) &pr->v, &pr->allocated, pr->n + 1, sizeof(*pr->v)) < 0) {
                pr->error = -ENOMEM;
                return;
        }
        pr->v[pr->n] = (struct plan_action) { .tick = pr->tick, .result = result };
        if (action_copy(&pr->v[pr->n].a, a) < 0) {
                pr->error = -ENOMEM;
                return;
        }
        pr->n++;
        pr->n_tick++;
}

int ctl_plan(int argc, char **argv) {
        _cleanup_(config_free) struct config cfg = { 0 };
        struct engine e;
        _cleanup_(report_free) struct report out = { 0 };
        _cleanup_(bans_free) struct bans bans = { 0 };
        struct plan_run pr = { 0 };
        _cleanup_(freep) char *state_dir = NULL, *bans_dir = NULL;
        const char *root = "/", *config_path = NULL;
        uint64_t interval = 0, ticks = 0;
        unsigned hot;
        bool json = false;
        const struct ctl_option options[] = {
                CTL_OPT("root", 'r', CTL_OPT_STRING, &root),
                CTL_OPT("config", 'c', CTL_OPT_STRING, &config_path),
                CTL_OPT("interval", 'i', CTL_OPT_INTERVAL, &interval, .what = "interval"),
                CTL_OPT("ticks", 't', CTL_OPT_COUNT, &ticks, .what = "tick count", .hint = " (1-1000)", .min = 1,
                        .max = 1000),
                CTL_OPT("json", 'j', CTL_OPT_FLAG, &json),
        };
        int r, ret = CTL_EXIT_ERROR, level = log_get_max_level();

        r = ctl_options("plan", argc, argv, plan_help, options, ELEMENTSOF(options), false);
        if (r <= 0)
                return -r;
        if (config_load_print(config_path, "irqsteerctl: cannot load ", &cfg, stderr) < 0)
                return CTL_EXIT_ERROR;
        /* the daemon's dry run: the plan writes nothing either */
        cfg.dry_run = true;
        /* --interval overrides the file's, as irqsteerd's does */
        if (interval == 0)
                interval = cfg.interval_usec;
        cfg.interval_usec = interval;

        engine_init(&e);
        e.rootfd = ctl_open_root(root);
        if (e.rootfd < 0)
                goto out;
        e.root = root;
        e.root_is_host = rootfs_is_host(e.rootfd);
        e.dry_run = true;
        e.config = &cfg;
        e.out = &out;
        e.on_action = plan_record;
        e.userdata = &pr;
        /* the journal only read; the bans the daemon would see */
        r = state_dir_choose(NULL, cfg.state_dir, root, e.root_is_host, false, &state_dir);
        if (r < 0) {
                ctl_error("cannot choose the state directory: %s", strerror(-r));
                goto out;
        }
        e.state_dir = state_dir;
        if (asprintf(&bans_dir, "%s/%s", state_dir, BANS_DIR_NAME) < 0) {
                bans_dir = NULL;
                ctl_error("out of memory");
                goto out;
        }
        r = bans_load(bans_dir, &bans);
        if (r < 0)
                ctl_error("cannot read the runtime bans in %s (%s), planning without them", bans_dir, strerror(-r));

        /* the daemon's info lines only with -v (the plan prints them);
         * its warnings stay */
        if (level < LOG_DEBUG)
                log_set_max_level(LOG_WARNING);
        ctl_catch_signals();
        r = engine_start(&e, util_now_usec(CLOCK_MONOTONIC));
        if (r < 0) {
                ctl_error("cannot read the host under %s: %s", root, strerror(-r));
                goto out;
        }

        /* as irqsteerd: the decision at start, then one tick per interval
         * while the daemon would still act */
        hot = MAX(cfg.hot_samples, 1u);
        for (pr.tick = 0;; pr.tick++) {
                struct engine_tick_result res = { .full = "start", .decided = true };

                pr.n_tick = 0;
                if (pr.tick == 0)
                        r = engine_decide(&e, util_now_usec(CLOCK_MONOTONIC), &bans.cpus, NULL);
                else {
                        if (!ctl_sleep(engine_next_interval(&e, interval)))
                                goto out;
                        r = engine_tick(&e, util_now_usec(CLOCK_MONOTONIC), &bans.cpus, &res);
                        if (r == 0)
                                r = -EIO; /* sampling or the inventory failed, said above */
                }
                for (size_t i = 0; r >= 0 && res.decided && i < e.report.n_notes; i++) {
                        r = util_grow((void **) &pr.notes, &pr.allocated_notes, pr.n_notes + 1, sizeof(*pr.notes));
                        if (r >= 0)
                                pr.notes[pr.n_notes++] = e.report.notes[i];
                }
                if (r >= 0)
                        r = pr.error;
                if (r < 0) {
                        ctl_error("tick %u failed: %s", pr.tick, strerror(-r));
                        goto out;
                }
                if (ticks > 0 ? pr.tick >= ticks :
                    pr.tick >= hot && (pr.n_tick == 0 || pr.tick >= hot + PLAN_EXTRA_TICKS_MAX))
                        break;
        }

        if (json)
                r = plan_json(stdout, (double) interval / 1e6, &pr, &e.report);
        else
                plan_print(stdout, &pr, &e.report);
        ret = fflush(stdout) == 0 && !ferror(stdout) && r >= 0 ? CTL_EXIT_OK : CTL_EXIT_ERROR;
out:
        log_set_max_level(level);
        free(pr.notes);
        for (size_t i = 0; i < pr.n; i++)
                action_done(&pr.v[i].a);
        free(pr.v);
        if (e.rootfd >= 0)
                close(e.rootfd);
        engine_free(&e);
        return ret;
}
