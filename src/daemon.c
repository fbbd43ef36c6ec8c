/* irqsteerd's event loop: startup, one tick per interval, reload, stop. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "apply.h"
#include "bans.h"
#include "caps.h"
#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "irqbalance-env.h"
#include "json.h"
#include "linkmon.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "problem.h"
#include "report.h"
#include "rootfs.h"
#include "state.h"
#include "stopcause.h"
#include "undo.h"
#include "util.h"

/* What the status files show that an operator acts on, beside the loads;
 * zeroed whole before it is filled, for memcmp(). */
struct status_key {
        cpuset_t hot;
        struct report_counters count;     /* the tick times zeroed */
        unsigned long report_gen, undo_gen;
        size_t n_undo, n_eff, n_link_events;
        unsigned n_queue_irqs, n_rps_queues, n_managed_irqs, n_external, n_kept;
        pid_t other_pid;
        bool have_avg;
        bool problems[PROBLEM_MAX];
};

struct daemon {
        const struct daemon_options *opts;
        const char *config_path;
        struct config config;
        char *state_dir;          /* fixed at startup */
        bool dry_run;
        uint64_t interval_usec;

        int rootfd;
        int lockfd;               /* STATE_LOCK_NAME */
        int root_lockfd;          /* STATE_ROOT_LOCK_NAME (not in dry-run) */
        bool all_banned;          /* no CPU left to use: warned */
        int startup_exit;         /* a failed startup's DAEMON_EXIT_*, when not FAILURE */
        char startup_error[512];  /* its first problem, FILE:LINE: KEY: message */
        const char *root;
        bool root_is_host;
        uint64_t caps;            /* kept after startup */
        uint64_t caps_start;      /* permitted at startup, before the drop */

        sd_event *event;
        sd_event_source *timer;
        sd_event_source *sig_hup, *sig_term, *sig_int;
        /* runtime bans: STATE_DIR/bans, watched with inotify */
        char *bans_dir;
        sd_event_source *bans_watch;
        struct bans bans;
        /* irqbalance's environment files: their directories watched (a
         * missing one's nearest ancestor, for it to appear), their stat()s
         * compared after each full tick (a symlink's target), at every tick
         * only while nothing could be watched */
        sd_event_source **env_watches;
        size_t n_env_watches;
        bool env_unwatched;
        char env_sig[1024];
        char env_problem[384];    /* the problem last logged, logged once */
        struct linkmon *linkmon;

        struct engine engine;

        uint64_t start_realtime_usec, start_monotonic_usec;
        char status[512];
        char restart_needed[160]; /* keys a reload changed that take a restart, "" if none */
        char reload_error[384];

        struct report out;
        /* what the files showed when last written (status_due()) */
        bool status_written;
        struct status_key status_key;
        uint64_t status_written_usec;
        uint64_t other_checked_usec; /* engine_find_other_writer() last run */
};

static uint64_t now_monotonic(struct daemon *d) {
        uint64_t t;

        if (d->event && sd_event_now(d->event, CLOCK_MONOTONIC, &t) >= 0)
                return t;
        return util_now_usec(CLOCK_MONOTONIC);
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

/* c checked against the daemon of status v (NULL: none): what c needs
 * that a live irqsteerd dropped at startup cannot apply.  The exit code. */
static int check_against(const char *path, const struct config *c, const struct json_value *v, FILE *err) {
        const char *dropped = NULL;
        int64_t pid = 0;
        uint64_t lost = 0;
        bool dry = false;
        char capbuf[128];

        if (!v || !state_status_live(v, &pid) || (json_get_bool(v, "dry_run", &dry) == 0 && dry) ||
            json_get_string(v, "capabilities_dropped", &dropped) < 0 || caps_parse(dropped, &lost) < 0)
                return DAEMON_EXIT_OK;
        lost &= caps_for_config(c, false);
        if (!lost)
                return DAEMON_EXIT_OK;
        caps_format(lost, capbuf, sizeof(capbuf));
        fprintf(err, "%s: valid, but the running irqsteerd (pid %" PRId64 ") cannot apply it: it needs %s, "
                "dropped at startup; restart irqsteerd to apply it\n",
                path ? path : CONFIG_DEFAULT_PATH, pid, capbuf);
        return DAEMON_EXIT_FAILURE;
}

int daemon_check_config(const char *path, const char *state_dir, FILE *out, FILE *err) {
        _cleanup_(json_freep) struct json_value *v = NULL;
        _cleanup_(freep) char *dir = NULL;
        struct config c = {};
        int r;

        if (config_load_print(path, "", &c, err) < 0)
                return DAEMON_EXIT_FAILURE;
        if (state_dir_choose(state_dir, c.state_dir, "/", true, false, &dir) >= 0)
                (void) state_read_status(dir, &v);
        r = check_against(path, &c, v, err);
        config_free(&c);
        if (r == DAEMON_EXIT_OK)
                fprintf(out, "configuration OK\n");
        return r;
}

/* A reload takes well under a second; systemd's ExecReload= timeout (90 s)
 * is above this. */
#define RELOAD_WAIT_USEC (30 * USEC_PER_SEC)

static bool status_reloads(const char *dir, int64_t pid, int64_t *ret_reloads, struct json_value **ret) {
        struct json_value *v = NULL;
        int64_t p = 0;

        if (state_read_status(dir, &v) < 0 || json_get_int(v, "pid", &p) < 0 || p != pid ||
            json_get_int(v, "reloads", ret_reloads) < 0) {
                json_free(v);
                return false;
        }
        *ret = v;
        return true;
}

int daemon_reload_running(pid_t pid, const struct daemon_options *running, FILE *out, FILE *err) {
        _cleanup_(json_freep) struct json_value *v = NULL;
        _cleanup_(freep) char *dir = NULL;
        struct config c = {};
        const char *root = running->root ? running->root : "/", *path = running->config_path, *why = NULL;
        int64_t before, now;
        uint64_t until;
        bool host;
        int fd, r;

        fd = rootfs_open(root);
        if (fd < 0) {
                fprintf(err, "irqsteerd --reload: root %s of pid %d: %s\n", root, (int) pid, strerror(-fd));
                return DAEMON_EXIT_FAILURE;
        }
        host = rootfs_is_host(fd);
        close(fd);
        /* the daemon's own options, whatever ExecReload= repeats of them */
        if (config_load_print(path, "", &c, err) < 0)
                return DAEMON_EXIT_FAILURE;
        r = state_dir_choose(running->state_dir, c.state_dir, root, host, false, &dir);
        if (r < 0 || !status_reloads(dir, pid, &before, &v)) {
                config_free(&c);
                fprintf(err, "irqsteerd --reload: no status.json of irqsteerd pid %d in %s (a state_dir changed "
                        "since it started takes a restart)\n", (int) pid, dir ? dir : "?");
                return DAEMON_EXIT_FAILURE;
        }
        r = check_against(path, &c, v, err);
        config_free(&c);
        if (r != DAEMON_EXIT_OK)
                return r;
        json_free(v);
        v = NULL;
        if (kill(pid, SIGHUP) < 0) {
                fprintf(err, "irqsteerd --reload: SIGHUP to pid %d: %s\n", (int) pid, strerror(errno));
                return DAEMON_EXIT_FAILURE;
        }
        until = util_now_usec(CLOCK_MONOTONIC) + RELOAD_WAIT_USEC;
        for (;;) {
                if (status_reloads(dir, pid, &now, &v) && now > before)
                        break;
                json_free(v);
                v = NULL;
                if (util_now_usec(CLOCK_MONOTONIC) >= until) {
                        fprintf(err, "irqsteerd --reload: irqsteerd pid %d gave no verdict in %s/%s within %d s\n",
                                (int) pid, dir, STATE_STATUS_NAME, (int) (RELOAD_WAIT_USEC / USEC_PER_SEC));
                        return DAEMON_EXIT_FAILURE;
                }
                (void) usleep(20000);
        }
        if (json_get_string(v, "reload_error", &why) == 0 && why && why[0]) {
                fprintf(err, "%s: not applied by irqsteerd (pid %d): %s\n", path ? path : CONFIG_DEFAULT_PATH,
                        (int) pid, why);
                return DAEMON_EXIT_FAILURE;
        }
        fprintf(out, "configuration reloaded\n");
        return DAEMON_EXIT_OK;
}

/* A metrics_file irqsteerd did not write is refused, never overwritten. */
static int check_metrics_file(const struct config *c, char *first_error, size_t len) {
        int r;

        if (!c->metrics_file)
                return 0;
        r = metrics_file_ours(c->metrics_file);
        if (r > 0)
                return 0;
        if (r == 0)
                snprintf(first_error, len, "metrics_file %s exists and was not written by irqsteerd "
                         "(it does not begin with its metrics); refusing to overwrite it: remove it or name "
                         "another file", c->metrics_file);
        else
                snprintf(first_error, len, "metrics_file %s cannot be checked: %s", c->metrics_file, strerror(-r));
        log_error("%s", first_error);
        return r == 0 ? -EEXIST : r;
}

/* The configuration with the overrides; its first problem in first_error. */
static int load_config(struct daemon *d, struct config *ret, char *first_error, size_t len) {
        const struct daemon_options *o = d->opts;
        struct config_errors errs = {};
        int r;

        r = config_load(d->config_path, !o->config_path, ret, &errs);
        for (size_t i = 0; i < errs.n; i++) {
                char buf[512];

                daemon_format_config_error(&errs.v[i], buf, sizeof(buf));
                log_error("%s", buf);
                if (i == 0)
                        snprintf(first_error, len, "%s", buf);
        }
        if (r < 0 && errs.n == 0) {
                log_error_errno(r, "Failed to load %s: %m", d->config_path);
                snprintf(first_error, len, "%s: %s", d->config_path, strerror(-r));
        }
        config_errors_free(&errs);
        if (r < 0)
                return r;
        /* the command line's settings win over every load */
        if (o->interval_usec) /* every tick that is not fast, calm ones too */
                ret->interval_usec = ret->calm_interval_usec = o->interval_usec;
        if (o->log_level >= 0)
                ret->log_level = o->log_level;
        if (o->dry_run)
                ret->dry_run = true;
        /* per-host bans on top of a file shared by many hosts */
        cpuset_or(&ret->banned_cpus, &ret->banned_cpus, &o->ban_cpus);
        r = check_metrics_file(ret, first_error, len);
        if (r < 0)
                config_free(ret);
        return r;
}

/* The inventory keeps attribute files open (rootfs_read_held): the soft
 * limit goes up to the hard one, at most 65536 (nothing uses select(2)). */
static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= MIN(rl.rlim_max, (rlim_t) 65536))
                return;
        rl.rlim_cur = MIN(rl.rlim_max, (rlim_t) 65536);
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_debug_errno(errno, "Failed to raise RLIMIT_NOFILE to %llu: %m",
                                (unsigned long long) rl.rlim_cur);
}

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
                .ticks = d->engine.ticks,
                .reload_error = d->reload_error,
                .unmatched_interfaces = d->engine.unmatched,
                .bans = &d->bans,
                .policy = &d->engine.report,
                .irq_readings = d->engine.irq_readings,
                .eff = d->engine.eff.v,
                .n_eff = d->engine.eff.n,
                .inv = &d->engine.inv,
                .config = &d->config,
                .undo = d->engine.apply ? apply_undo(d->engine.apply) : NULL,
                .load = d->engine.have_avg ? &d->engine.avg : NULL,
        };
}

/* A restart a reload asked for first (systemctl status shows the start of
 * the line), another writer last. */
static void status_add_notices(struct daemon *d) {
        char line[sizeof(d->status) + sizeof(d->restart_needed) + 32];

        if (d->restart_needed[0]) {
                snprintf(line, sizeof(line), "restart needed for %s; %s", d->restart_needed, d->status);
                memcpy(d->status, line, sizeof(d->status) - 1);
                d->status[sizeof(d->status) - 1] = 0;
        }
        if (d->engine.other_pid > 0) {
                size_t l = strlen(d->status);

                snprintf(d->status + l, sizeof(d->status) - l, "; irqbalance (pid %d) changes IRQs too",
                         (int) d->engine.other_pid);
        }
        problem_append_status(&d->out.problems, d->reload_error, d->status, sizeof(d->status));
}

static void status_key_fill(const struct daemon *d, struct status_key *k) {
        const struct policy_report *rep = &d->engine.report;
        const struct undo *u = d->engine.apply ? apply_undo(d->engine.apply) : NULL;

        memset(k, 0, sizeof(*k));
        k->hot = rep->hot;
        k->count = d->out.count;
        k->count.tick_usec_total = 0;
        k->count.last_tick_usec = 0;
        k->report_gen = d->out.gen;
        k->undo_gen = u ? u->gen : 0;
        k->n_undo = u ? u->n_entries : 0;
        k->n_eff = d->engine.eff.n;
        k->n_link_events = d->out.n_link_events;
        k->n_queue_irqs = rep->n_queue_irqs;
        k->n_rps_queues = rep->n_rps_queues;
        k->n_managed_irqs = rep->n_managed_irqs;
        k->n_external = rep->n_external;
        k->n_kept = rep->n_kept;
        k->other_pid = d->engine.other_pid;
        k->have_avg = d->engine.have_avg;
        memcpy(k->problems, d->out.problems.active, sizeof(k->problems));
}

/* After a full tick the status files are rewritten when status_key
 * changed, else every STATUS_REFRESH intervals: on a large host writing
 * them is much of a full tick's CPU time. */
#define STATUS_REFRESH 5

static bool status_changed(const struct daemon *d) {
        struct status_key k;

        status_key_fill(d, &k);
        return memcmp(&k, &d->status_key, sizeof(k)) != 0;
}

static bool status_due(const struct daemon *d, uint64_t now) {
        if (!d->status_written || now < d->status_written_usec ||
            now - d->status_written_usec >= STATUS_REFRESH * d->interval_usec)
                return true;
        return status_changed(d);
}

/* A problem in force or a change an operator acts on: the audits, which
 * rewrite the status files, stay frequent (engine_audit_found). */
static bool audit_found(const struct daemon *d) {
        for (size_t i = 0; i < PROBLEM_MAX; i++)
                if (d->out.problems.active[i])
                        return true;
        return !d->status_written || status_changed(d);
}

static void update_status(struct daemon *d, bool notify) {
        struct report_snapshot s;

        report_format_status(&d->engine.report, d->dry_run, d->reload_error, d->status, sizeof(d->status));
        status_add_notices(d);
        fill_snapshot(d, &s);
        /* The file first: whoever reacts to STATUS= finds it as new. */
        (void) report_write_status(&d->out, &s);
        (void) metrics_write(&d->out, &s);
        if (notify)
                notify_status(d->status);
        status_key_fill(d, &d->status_key);
        d->status_written = true;
        d->status_written_usec = now_monotonic(d);
}

/* ---- runtime bans ---- */

static bool ban_file_same(const struct ban_file *a, const struct ban_file *b) {
        return strcmp(a->name, b->name) == 0 && a->error == b->error && cpuset_equal(&a->cpus, &b->cpus) &&
               strcmp(a->asked, b->asked) == 0;
}

/* old (NULL: new) became f (NULL: gone). */
static void log_ban_change(struct daemon *d, const struct ban_file *old, const struct ban_file *f) {
        const char *raw = f ? f->name : old->name;
        char name[UTIL_CESCAPE_SIZE(BANS_NAME_MAX)], list[256];

        /* an invalid name is anything a user put there */
        util_cescape(raw, strlen(raw), false, name, sizeof(name));
        if (!f) {
                log_info("Ban %s lifted", name);
                return;
        }
        if (f->error < 0)
                problem_set(&d->out.problems, PROBLEM_BAN_FILE, 0, "Ban file %s/%s: %s; ignoring the whole file",
                            d->bans_dir, name, f->problem);
        else if (strcmp(f->asked, cpuset_to_text(&f->cpus, "", list, sizeof(list))) == 0)
                log_info("Ban %s: CPUs %s", name, f->asked);
        else {
                /* CPUs this host does not have */
                cpuset_t here;

                cpuset_and(&here, &f->cpus, &d->engine.topo.present);
                log_info("Ban %s: CPUs %s (%s%s on this host)", name, f->asked,
                         cpuset_empty(&here) ? "" : "CPUs ", cpuset_to_text(&here, "none", list, sizeof(list)));
        }
}

/* A warning, once, when no CPU is left to place anything on. */
static void check_all_banned(struct daemon *d) {
        char list[256];
        cpuset_t banned, eligible;

        cpuset_or(&banned, &d->config.banned_cpus, &d->bans.cpus);
        topology_eligible(&d->engine.topo, &banned, &eligible);
        if (!cpuset_empty(&eligible) || cpuset_empty(&d->engine.topo.online)) {
                d->all_banned = false;
                return;
        }
        if (d->all_banned)
                return;
        d->all_banned = true;
        log_warning("Every CPU is banned or not usable (runtime bans: CPUs %s): IRQs are left where they are "
                    "until a ban is lifted", cpuset_to_text(&d->bans.cpus, "none", list, sizeof(list)));
}

static void bans_changed(struct daemon *d, const cpuset_t *before) {
        char list[256];

        if (!cpuset_equal(before, &d->bans.cpus))
                log_notice("Runtime bans now keep CPUs %s free", cpuset_to_text(&d->bans.cpus, "none", list, sizeof(list)));
        engine_bans_changed(&d->engine);
        report_config_changed(&d->out);
        check_all_banned(d);
        for (size_t i = 0; i < d->bans.n_files; i++)
                if (d->bans.files[i].error < 0)
                        return;
        problem_clear(&d->out.problems, PROBLEM_BAN_FILE, "Every ban file in %s is valid again", d->bans_dir);
}

/* Reads the ban directory again; says once what changed. */
static void load_bans(struct daemon *d) {
        struct bans nb = { 0 };
        cpuset_t before = d->bans.cpus;
        bool changed = false;
        int r;

        r = bans_load(d->bans_dir, &nb);
        if (r < 0) {
                /* dropping the bans would put work on CPUs asked to be free */
                log_warning_errno(r, "Failed to read the ban directory %s, keeping the bans in force: %m", d->bans_dir);
                bans_free(&nb);
                return;
        }
        for (size_t i = 0; i < nb.n_files; i++) {
                const struct ban_file *f = &nb.files[i], *old = bans_find(&d->bans, f->name);

                if (old && ban_file_same(old, f))
                        continue;
                changed = true;
                log_ban_change(d, old, f);
        }
        for (size_t i = 0; i < d->bans.n_files; i++)
                if (!bans_find(&nb, d->bans.files[i].name)) {
                        changed = true;
                        log_ban_change(d, &d->bans.files[i], NULL);
                }
        bans_free(&d->bans);
        d->bans = nb;
        if (changed)
                bans_changed(d, &before);
}

/* Reads again only the file an inotify event names. */
static void load_ban(struct daemon *d, const char *name) {
        const struct ban_file *old = bans_find(&d->bans, name);
        cpuset_t before = d->bans.cpus;
        struct ban_file f;
        int r;

        r = bans_load_one(d->bans_dir, name, &f);
        if (r < 0 && r != -ENOENT) {
                load_bans(d);
                return;
        }
        if (r == -ENOENT ? !old : old && ban_file_same(old, &f))
                return;
        log_ban_change(d, old, r == -ENOENT ? NULL : &f);
        if (bans_update(&d->bans, name, r == -ENOENT ? NULL : &f) < 0) {
                log_warning_errno(ENOMEM, "Failed to take in a change of the ban directory %s: %m", d->bans_dir);
                return;
        }
        bans_changed(d, &before);
}

static int on_bans(sd_event_source *s _unused_, const struct inotify_event *ev, void *userdata) {
        struct daemon *d = userdata;

        /* a writer's temporary: the rename that follows is the event */
        if (ev->len > 0 && ev->name[0] == '.')
                return 0;
        if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
                log_warning("The ban directory %s was removed or moved: runtime bans are no longer watched "
                            "until irqsteerd restarts; the bans in force stay", d->bans_dir);
        if (ev->len > 0 && !(ev->mask & IN_Q_OVERFLOW))
                load_ban(d, ev->name);
        else
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

/* ---- irqbalance's environment files ---- */

/* fn for each of irqbalance_env_files, up to a negative return. */
static int env_for_each(struct daemon *d, int (*fn)(struct daemon *d, const char *path, void *arg), void *arg) {
        _cleanup_(freep) char *copy = NULL;
        char *save = NULL;
        int r;

        if (!d->config.irqbalance_env_files)
                return 0;
        copy = strdup(d->config.irqbalance_env_files);
        if (!copy)
                return -ENOMEM;
        for (char *p = strtok_r(copy, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
                r = fn(d, p, arg);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int env_sig_one(struct daemon *d _unused_, const char *path, void *arg) {
        char *sig = arg;
        size_t l = strlen(sig);
        struct stat st;

        if (l >= sizeof(d->env_sig) - 1)
                return 0;
        if (stat(path, &st) < 0)
                snprintf(sig + l, sizeof(d->env_sig) - l, "%s -;", path);
        else
                snprintf(sig + l, sizeof(d->env_sig) - l, "%s %ju:%ju:%jd:%jd.%09ld;", path, (uintmax_t) st.st_dev,
                         (uintmax_t) st.st_ino, (intmax_t) st.st_size, (intmax_t) st.st_mtim.tv_sec,
                         st.st_mtim.tv_nsec);
        return 0;
}

static int env_load_one(struct daemon *d, const char *path, void *arg) {
        cpuset_t *all = arg, one;
        char problem[256] = "out of memory";
        int r;

        r = irqbalance_env_load(path, &one, problem, sizeof(problem));
        if (r < 0) {
                char msg[sizeof(d->env_problem)];

                snprintf(msg, sizeof(msg), "%s: %s", path, problem);
                if (strcmp(msg, d->env_problem) != 0)
                        log_warning("irqbalance environment file %s; keeping the ban %s as it is", msg,
                                    IRQBALANCE_ENV_BAN_NAME);
                snprintf(d->env_problem, sizeof(d->env_problem), "%s", msg);
                return r;
        }
        cpuset_or(all, all, &one);
        return 0;
}

/* The ban file IRQBALANCE_ENV_BAN_NAME holds what the environment files
 * ban, as a runtime ban; a file that does not parse changes nothing. */
static void env_sync(struct daemon *d) {
        const struct ban_file *cur = bans_find(&d->bans, IRQBALANCE_ENV_BAN_NAME);
        cpuset_t all;
        int r;

        cpuset_zero(&all);
        if (env_for_each(d, env_load_one, &all) < 0)
                return;
        d->env_problem[0] = 0;
        if (cpuset_empty(&all)) {
                if (!cur)
                        return;
                r = bans_remove(d->bans_dir, IRQBALANCE_ENV_BAN_NAME);
                if (r < 0 && r != -ENOENT) {
                        log_warning_errno(r, "Failed to lift the ban %s: %m", IRQBALANCE_ENV_BAN_NAME);
                        return;
                }
        } else {
                if (cur && cur->error == 0 && cpuset_equal(&cur->cpus, &all))
                        return;
                r = bans_write(d->bans_dir, IRQBALANCE_ENV_BAN_NAME, &all);
                if (r < 0) {
                        log_warning_errno(r, "Failed to write the ban %s: %m", IRQBALANCE_ENV_BAN_NAME);
                        return;
                }
        }
        load_bans(d);
}

static void env_check(struct daemon *d, bool force) {
        char sig[sizeof(d->env_sig)] = "";

        (void) env_for_each(d, env_sig_one, sig);
        if (!force && strcmp(sig, d->env_sig) == 0)
                return;
        memcpy(d->env_sig, sig, sizeof(sig));
        env_sync(d);
}

static void env_unwatch(struct daemon *d) {
        for (size_t i = 0; i < d->n_env_watches; i++)
                sd_event_source_disable_unref(d->env_watches[i]);
        free(d->env_watches);
        d->env_watches = NULL;
        d->n_env_watches = 0;
}

static int env_add_watch(struct daemon *d, const char *dir, uint32_t mask, sd_event_inotify_handler_t cb) {
        sd_event_source **n = realloc(d->env_watches, (d->n_env_watches + 1) * sizeof(*n));
        int r;

        if (!n)
                return -ENOMEM;
        d->env_watches = n;
        r = sd_event_add_inotify(d->event, &n[d->n_env_watches], dir[0] ? dir : "/", mask | IN_ONLYDIR, cb, d);
        if (r >= 0)
                (void) sd_event_source_set_description(n[d->n_env_watches++], "irqbalance-env");
        return r;
}

static void env_setup(struct daemon *d);

/* A directory appeared where a file's was missing, or a watched one went:
 * watch again (and read the files). */
static int on_env_dir(sd_event_source *s _unused_, const struct inotify_event *ev, void *userdata) {
        if (ev->mask & (IN_ISDIR | IN_DELETE_SELF | IN_MOVE_SELF))
                env_setup(userdata);
        return 0;
}

static int on_env(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF))
                return on_env_dir(s, ev, userdata);
        env_check(userdata, false);
        return 0;
}

static int env_watch_one(struct daemon *d, const char *path, void *arg _unused_) {
        _cleanup_(freep) char *dir = strdup(path);
        char *slash;
        int r;

        if (!dir)
                return -ENOMEM;
        *strrchr(dir, '/') = 0;
        r = env_add_watch(d, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF |
                          IN_MOVE_SELF, on_env);
        /* missing: its nearest ancestor, for the directory to appear */
        while (r == -ENOENT && (slash = strrchr(dir, '/'))) {
                *slash = 0;
                r = env_add_watch(d, dir, IN_CREATE | IN_MOVED_TO, on_env_dir);
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* the tick's stat() still sees the file once it exists */
                log_debug_errno(r, "Not watching the directory of %s: %m", path);
                d->env_unwatched = true;
        }
        return 0;
}

static void env_setup(struct daemon *d) {
        env_unwatch(d);
        d->env_unwatched = false;
        if (env_for_each(d, env_watch_one, NULL) < 0)
                log_error_errno(ENOMEM, "Out of memory");
        env_check(d, true);
}

/* ---- the tick ---- */

/* How often a full tick looks whether irqbalance, once seen, still runs. */
#define OTHER_WRITER_RECHECK_USEC (60 * USEC_PER_SEC)

static int tick(struct daemon *d) {
        struct engine_tick_result res;
        struct report_snapshot s;
        int r;

        if (d->env_unwatched)
                env_check(d, false);
        r = engine_tick(&d->engine, now_monotonic(d), &d->bans.cpus, &res);
        if (r <= 0)
                return r;
        if (res.full) {
                uint64_t now = now_monotonic(d);

                if (d->engine.other_pid > 0 && now - d->other_checked_usec >= OTHER_WRITER_RECHECK_USEC) {
                        engine_find_other_writer(&d->engine);
                        d->other_checked_usec = now;
                }
                env_check(d, false);
                /* a line per CPU per tick is for an operator watching, not the journal */
                fill_snapshot(d, &s);
                report_log_load(&s, d->opts->foreground ? LOG_INFO : LOG_DEBUG);
                if (audit_found(d))
                        engine_audit_found(&d->engine);
                if (status_due(d, now))
                        update_status(d, true);
        }
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        uint64_t interval, now;
        int r;

        r = tick(d);
        if (r < 0)
                return r;
        if (d->opts->once && d->engine.ticks >= 1) {
                log_info("--once: decision cycle done; changes stay in place ('irqsteerctl restore' undoes them)");
                return sd_event_exit(d->event, 0);
        }
        /* sd-event passes when the timer was due: after a stall (a paused
         * VM, SIGSTOP) due + interval is past, and the missed ticks would
         * run back to back.  They are skipped: the next comes an interval
         * after now. */
        interval = engine_next_interval(&d->engine, d->interval_usec);
        now = now_monotonic(d);
        r = sd_event_source_set_time(s, usec + interval > now ? usec + interval : now + interval);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* ---- signals ---- */

static int on_reload(sd_event_source *s _unused_, const struct signalfd_siginfo *si _unused_, void *userdata) {
        struct daemon *d = userdata;
        _cleanup_(freep) char *sd = NULL;
        struct config c = {};
        char err[sizeof(d->reload_error)] = "", restart[sizeof(d->restart_needed)] = "", capbuf[128];
        uint64_t lost;

        notify_reloading(util_now_usec(CLOCK_MONOTONIC));
        log_info("Reloading configuration from %s", d->config_path);
        if (load_config(d, &c, err, sizeof(err)) < 0) {
                snprintf(d->reload_error, sizeof(d->reload_error), "%s", err);
                problem_set(&d->out.problems, PROBLEM_RELOAD, 0,
                            "Configuration reload failed (%s), keeping the previous configuration", err);
                goto done;
        }

        /* said again at each reload; a file set back clears it */
        if (!d->opts->state_dir && d->state_dir &&
            state_dir_choose(NULL, c.state_dir, d->root, d->root_is_host, false, &sd) == 0 &&
            strcmp(sd, d->state_dir) != 0) {
                log_warning("state_dir changed to %s: takes effect at the next start", sd);
                strcpy(restart, "state_dir");
        }
        if (c.dry_run != d->dry_run) {
                log_warning("dry_run changed: takes effect at the next start");
                strcat(restart, restart[0] ? ", dry_run" : "dry_run");
        }
        c.dry_run = d->dry_run;
        /* A capability dropped at start cannot come back: the reload is
         * refused whole, lest new sections show as in force while their
         * writes fail.  One never permitted (a container) is the start's
         * situation: accepted here. */
        lost = caps_for_config(&c, d->dry_run) & ~d->caps & d->caps_start;
        if (lost) {
                caps_format(lost, capbuf, sizeof(capbuf));
                snprintf(d->reload_error, sizeof(d->reload_error),
                         "needs %s, dropped at startup: restart irqsteerd to apply it", capbuf);
                problem_set(&d->out.problems, PROBLEM_RELOAD, 0,
                            "Configuration reload refused: the new configuration needs %s, dropped at startup; "
                            "restart irqsteerd to apply it. Keeping the previous configuration", capbuf);
                config_free(&c);
                goto done;
        }
        snprintf(d->restart_needed, sizeof(d->restart_needed), "%s", restart);
        config_free(&d->config);
        d->config = c;
        report_config_changed(&d->out);
        d->reload_error[0] = 0;
        log_set_max_level(d->config.log_level);
        if (d->interval_usec != d->config.interval_usec) {
                d->interval_usec = d->config.interval_usec;
                (void) sd_event_source_set_time(d->timer, now_monotonic(d) + d->interval_usec);
        }
        engine_config_changed(&d->engine);
        env_setup(d);
        log_info("Configuration reloaded");
        check_all_banned(d);
        log_dropins(&d->config);
        engine_check_unmatched(&d->engine, true);
        /* a metrics_file refused is part of the file that did not apply
         * (irqsteerd(8), RELOAD) */
        update_status(d, false);
        if (d->config.metrics_file && d->out.problems.active[PROBLEM_METRICS_FILE]) {
                snprintf(d->reload_error, sizeof(d->reload_error), "%s: %s",
                         problem_to_string(PROBLEM_METRICS_FILE), d->out.problems.what[PROBLEM_METRICS_FILE]);
                problem_set(&d->out.problems, PROBLEM_RELOAD, 0,
                            "Configuration reloaded, but not all of it applies: %s", d->reload_error);
        } else
                problem_clear(&d->out.problems, PROBLEM_RELOAD, "Configuration reload succeeded");
done:
        /* each failure above said why in reload_error */
        report_count_reload(&d->out, !d->reload_error[0]);
        update_status(d, false);
        notify_ready(d->status);
        return 0;
}

static int on_stop(sd_event_source *s _unused_, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;
        char unit[256];

        notify_stopping();
        /* SIGTERM says no reason; a conflict is the one that surprises */
        if (si->ssi_signo == SIGTERM && stopcause_conflict(unit, sizeof(unit)) > 0)
                log_fields(LOG_WARNING, ((const char *[]) { "MESSAGE_ID=" DAEMON_MID_CONFLICT, "REASON=conflict-start",
                                                            NULL }),
                           "Received SIGTERM, stopping: %s is being started and conflicts with irqsteerd "
                           "(Conflicts=%s); the original IRQ affinities and masks are put back. If %s does not "
                           "run after all (a condition of its unit, such as irqbalance's "
                           "ConditionVirtualization=!container), nothing balances IRQs: "
                           "systemctl mask --now %s; systemctl start irqsteerd",
                           unit, unit, unit, unit);
        else
                log_info("Received %s, stopping", si->ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
        return sd_event_exit(d->event, 0);
}

/* ---- link monitor ---- */

static void on_link(const struct linkmon_event *ev, void *userdata) {
        /* the plain changes; own: the link's placement starts over */
        static const struct {
                const char *what;
                bool own;
        } plain[LINKMON_CHANGE_MAX] = {
                [LINKMON_ADDED] = { "appeared, rediscovering", false },
                [LINKMON_REMOVED] = { "vanished, rediscovering", true },
                /* the driver's open() re-requested its IRQs at default affinity */
                [LINKMON_UP] = { "link up, re-applying", true },
                [LINKMON_DOWN] = { "link down", false },
        };
        struct engine *e = &((struct daemon *) userdata)->engine;
        const char *name = ev->link.name[0] ? ev->link.name : "?";

        if (ev->change == LINKMON_RENAMED) {
                engine_link_event(e, "%s: renamed from %s, rediscovering", name, ev->old_name);
                engine_link_changed(e, ev->old_name, false);
                engine_link_changed(e, name, true);
        } else if (ev->change == LINKMON_QUEUES) {
                engine_link_event(e, "%s: queues changed (rx %u -> %u, tx %u -> %u), re-applying", name,
                                  ev->old_rx, ev->link.num_rx, ev->old_tx, ev->link.num_tx);
                engine_link_changed(e, name, true);
        } else if (ev->change == LINKMON_RESYNC) {
                engine_link_event(e, "link notifications were lost, rediscovering all interfaces");
                engine_link_changed(e, NULL, true);
        } else if (ev->change >= 0 && ev->change < LINKMON_CHANGE_MAX && plain[ev->change].what) {
                engine_link_event(e, "%s: %s", name, plain[ev->change].what);
                engine_link_changed(e, plain[ev->change].own ? name : NULL, true);
        }
}

/* ---- startup and shutdown ---- */

/* A restore summary's tail: "" or ": OBJECT: error" of the first failure. */
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
                /* another root's originals: a new journal would hide them */
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

static void drop_capabilities(struct daemon *d) {
        uint64_t want = caps_for_config(&d->config, d->dry_run), have = caps_permitted();
        char buf[128];
        int r;

        d->caps_start = have;

        if (want & ~have) {
                /* e.g. systemd-nspawn without --private-network */
                caps_format(want & ~have, buf, sizeof(buf));
                log_warning("Missing %s, which the configuration needs: those writes will fail", buf);
                want &= have;
        }
        r = caps_drop(want);
        caps_format(want, buf, sizeof(buf));
        d->caps = caps_effective();
        if (r < 0)
                log_warning_errno(r, "Failed to reduce capabilities to %s: %m", buf);
        else
                log_info("Capabilities kept: %s", buf);
}

static int setup_event(struct daemon *d) {
        const struct {
                int sig;
                sd_event_signal_handler_t cb;
                const char *what;
                sd_event_source **s;
        } sigs[] = {
                { SIGHUP, on_reload, "signal-reload", &d->sig_hup },
                { SIGTERM, on_stop, "signal-term", &d->sig_term },
                { SIGINT, on_stop, "signal-int", &d->sig_int },
        };
        sigset_t ss;
        int r;

        /* not the default loop: sd_event_prepare() checks its thread with a
         * gettid() at every iteration */
        r = sd_event_new(&d->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");

        sigemptyset(&ss);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaddset(&ss, sigs[i].sig);
        if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++) {
                r = sd_event_add_signal(d->event, sigs[i].s, sigs[i].sig, sigs[i].cb, d);
                if (r < 0)
                        return log_error_errno(r, "Failed to add signal sources: %m");
                (void) sd_event_source_set_description(*sigs[i].s, sigs[i].what);
        }
        (void) sd_event_source_set_exit_on_failure(d->sig_hup, true);

        r = sd_event_add_time(d->event, &d->timer, CLOCK_MONOTONIC, now_monotonic(d) + d->interval_usec,
                              d->interval_usec / 50, on_timer, d);
        if (r < 0)
                return log_error_errno(r, "Failed to add the tick timer: %m");
        (void) sd_event_source_set_description(d->timer, "tick");
        (void) sd_event_source_set_exit_on_failure(d->timer, true);

        return 0;
}

/* On the host, what the writes need, said once before any is tried rather
 * than a "Permission denied" for each IRQ after Ready. */
static int check_privileges(struct daemon *d) {
        uint64_t missing;
        char buf[128];

        if (!d->root_is_host || d->dry_run)
                return 0;
        missing = caps_for_config(&d->config, d->dry_run) & ~caps_permitted();
        if (geteuid() != 0)
                snprintf(d->startup_error, sizeof(d->startup_error),
                         "irqsteerd must run as root (uid 0 writes /proc/irq/N/smp_affinity); "
                         "use --dry-run to only watch and log");
        else if (missing) {
                caps_format(missing, buf, sizeof(buf));
                snprintf(d->startup_error, sizeof(d->startup_error),
                         "irqsteerd lacks %s, which the configuration needs (cap_net_admin: RPS, RFS, XPS; "
                         "cap_sys_nice: [worker] sections); use --dry-run to only watch and log", buf);
        } else
                return 0;
        log_error("%s", d->startup_error);
        return -EPERM;
}

/* One irqsteerd changes a root at a time (STATE_ROOT_LOCK_NAME). */
static int lock_root(struct daemon *d) {
        _cleanup_(freep) char *dir = NULL;
        pid_t holder = 0;
        char why[400];

        if (d->dry_run)
                return 0;
        d->root_lockfd = state_lock_root(d->root, d->root_is_host, &dir, &holder, why, sizeof(why));
        if (d->root_lockfd == -EBUSY) {
                d->startup_exit = DAEMON_EXIT_LOCKED;
                if (holder > 0)
                        return log_error_errno(d->root_lockfd, "Another irqsteerd (pid %d) is running on root %s "
                                               "(it holds %s/%s); not starting a second one", (int) holder, d->root,
                                               dir, STATE_ROOT_LOCK_NAME);
                return log_error_errno(d->root_lockfd, "Another irqsteerd is running on root %s (%s/%s is locked); "
                                       "not starting a second one", d->root, dir, STATE_ROOT_LOCK_NAME);
        }
        if (d->root_lockfd == -EPERM && why[0]) {
                d->startup_exit = DAEMON_EXIT_UNTRUSTED;
                snprintf(d->startup_error, sizeof(d->startup_error), "untrusted state directory: %s", why);
                return log_error_errno(d->root_lockfd, "Refusing the directory of the root's lock %s: %s; it must be "
                                       "owned by root and writable by no one else", dir, why);
        }
        if (d->root_lockfd < 0)
                return log_error_errno(d->root_lockfd, "Failed to lock root %s (%s/%s): %s", d->root,
                                       dir ? dir : "?", STATE_ROOT_LOCK_NAME, state_strerror(d->root_lockfd));
        return 0;
}

static int startup(struct daemon *d) {
        char why[400];
        pid_t holder = 0;
        int r;

        r = load_config(d, &d->config, d->startup_error, sizeof(d->startup_error));
        if (r < 0) {
                d->startup_exit = DAEMON_EXIT_CONFIG;
                return r;
        }
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
        r = state_dir_check(d->state_dir, why, sizeof(why));
        if (r < 0) {
                d->startup_exit = r == -EPERM ? DAEMON_EXIT_UNTRUSTED : 0;
                snprintf(d->startup_error, sizeof(d->startup_error), "untrusted state directory: %s", why);
                return log_error_errno(r, "Refusing the state directory %s: %s; it must be owned by root and "
                                       "writable by no one else, as everything in it", d->state_dir, why);
        }

        /* before the journal is read: another instance's is no crash's */
        d->lockfd = state_lock(d->state_dir, &holder);
        if (d->lockfd == -EBUSY) {
                d->startup_exit = DAEMON_EXIT_LOCKED;
                if (holder > 0)
                        return log_error_errno(d->lockfd, "Another irqsteerd (pid %d) is running on state directory %s; "
                                               "not starting a second one", (int) holder, d->state_dir);
                return log_error_errno(d->lockfd, "Another irqsteerd is running on state directory %s (%s/%s is locked); "
                                       "not starting a second one", d->state_dir, d->state_dir, STATE_LOCK_NAME);
        }
        if (d->lockfd < 0)
                return log_error_errno(d->lockfd, "Failed to lock %s/%s: %s", d->state_dir, STATE_LOCK_NAME,
                                       state_strerror(d->lockfd));
        r = lock_root(d);
        if (r < 0)
                return r;

        r = recover_crash_journal(d);
        if (r < 0)
                return r;

        d->engine.rootfd = d->rootfd;
        d->engine.root = d->root;
        d->engine.root_is_host = d->root_is_host;
        d->engine.state_dir = d->state_dir;
        d->engine.dry_run = d->dry_run;
        d->engine.once = d->opts->once;
        d->engine.config = &d->config;
        d->engine.out = &d->out;
        r = engine_start(&d->engine, util_now_usec(CLOCK_MONOTONIC));
        if (r < 0)
                return r;

        r = setup_event(d);
        if (r < 0)
                return r;
        r = setup_bans(d);
        if (r < 0)
                return r;
        env_setup(d);

        /* warned, not refused: the operator may be moving over */
        engine_find_other_writer(&d->engine);
        if (d->engine.other_pid > 0 && d->config.other_irqs)
                log_warning("%s", d->engine.other_writer);
        else if (d->engine.other_pid > 0)
                /* other_irqs = no: running beside it is the intent */
                log_info("irqbalance (pid %d) runs beside irqsteerd; other_irqs = no leaves it the IRQs that "
                         "serve no NIC queue", (int) d->engine.other_pid);
        if (d->root_is_host) {
                r = linkmon_new(d->event, on_link, d, &d->linkmon);
                if (r < 0)
                        log_warning_errno(r, "Failed to open rtnetlink, continuing without link monitoring: %m");
                else {
                        d->engine.have_linkmon = true;
                        log_debug("Link monitor: %zu links", linkmon_count(d->linkmon));
                }
        }

        drop_capabilities(d);
        return 0;
}

static void shutdown_restore(struct daemon *d) {
        struct undo_report rep = {};
        char why[256];
        int r;

        if (!d->engine.apply || d->opts->once)
                return;
        if (!d->config.restore_on_exit) {
                log_info("restore_on_exit=no: leaving changes in place ('irqsteerctl restore' undoes them)");
                return;
        }
        if (d->dry_run)
                return;
        r = apply_restore_all(d->engine.apply, &rep);
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
        env_unwatch(d);
        sd_event_unref(d->event);
        engine_free(&d->engine);
        config_free(&d->config);
        report_free(&d->out);
        bans_free(&d->bans);
        free(d->bans_dir);
        free(d->state_dir);
        if (d->rootfd >= 0)
                close(d->rootfd);
        if (d->lockfd >= 0)
                close(d->lockfd);
        if (d->root_lockfd >= 0)
                close(d->root_lockfd);
}

int daemon_run(const struct daemon_options *o) {
        struct daemon d = {
                .opts = o,
                .config_path = o->config_path ? o->config_path : CONFIG_DEFAULT_PATH,
                .root = o->root ? o->root : "/",
                .rootfd = -1,
                .lockfd = -1,
                .root_lockfd = -1,
        };
        int r, ret = DAEMON_EXIT_OK;

        engine_init(&d.engine);
        d.start_realtime_usec = util_now_usec(CLOCK_REALTIME);
        d.start_monotonic_usec = util_now_usec(CLOCK_MONOTONIC);

        r = startup(&d);
        if (r >= 0) {
                /* the initial layout needs no load: decided right away */
                report_format_status(&d.engine.report, d.dry_run, NULL, d.status, sizeof(d.status));
                if (!o->once && engine_decide(&d.engine, now_monotonic(&d), &d.bans.cpus, NULL) == -ENOMEM) {
                        snprintf(d.startup_error, sizeof(d.startup_error), "out of memory");
                        r = -ENOMEM;
                }
        }
        if (r < 0) {
                char msg[600];

                /* systemctl status keeps the last STATUS=: FILE:LINE */
                snprintf(msg, sizeof(msg), "startup failed: %s",
                         d.startup_error[0] ? d.startup_error : strerror(-r));
                notify_errno(-r, msg);
                daemon_free(&d);
                return d.startup_exit ? d.startup_exit : DAEMON_EXIT_FAILURE;
        }
        update_status(&d, false);
        notify_ready(d.status);
        log_info("Ready: %s", d.status);

        /* WATCHDOG=1 at half WATCHDOG_USEC; a stuck tick stops them */
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
                metrics_remove(&s);
        }
        daemon_free(&d);
        return ret;
}
