/* irqsteerctl status: reads STATE_DIR/status.json, which irqsteerd replaces
 * atomically every tick (schema in ctl.h), checks it and renders it. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "rootfs.h"
#include "state.h"
#include "util.h"

static bool is_int(const struct json_value *v) {
        int64_t i;

        /* json_get_int's rule: 5 and 5.0 and 5e0 count, 5.5 does not */
        if (!v || v->type != JSON_NUMBER)
                return false;
        if (v->is_int)
                return true;
        i = (int64_t) v->number;
        return v->number >= -9.2e18 && v->number <= 9.2e18 && (double) i == v->number;
}

static bool has_type(const struct json_value *v, enum json_type t) {
        return v && v->type == t;
}

/* Checks each element of array member key of v: an object whose members
 * named in fields have the given types ('s' string, 'S' string or null,
 * 'i' integer, 'n' number). */
static int check_array(const struct json_value *v, const char *key, const char *const *fields,
                       const char *types, const char **ret_why) {
        const struct json_value *a = json_get(v, key);

        if (!a)
                return 0;
        if (a->type != JSON_ARRAY) {
                *ret_why = key;
                return -EBADMSG;
        }
        for (size_t i = 0; i < a->n; i++) {
                const struct json_value *e = &a->items[i];

                if (e->type != JSON_OBJECT) {
                        *ret_why = key;
                        return -EBADMSG;
                }
                for (size_t f = 0; fields[f]; f++) {
                        const struct json_value *m = json_get(e, fields[f]);
                        bool ok;

                        switch (types[f]) {
                        case 's': ok = has_type(m, JSON_STRING); break;
                        case 'S': ok = has_type(m, JSON_STRING) || has_type(m, JSON_NULL); break;
                        case 'i': ok = is_int(m); break;
                        default: ok = has_type(m, JSON_NUMBER); break;
                        }
                        if (!ok) {
                                *ret_why = key;
                                return -EBADMSG;
                        }
                }
        }
        return 0;
}

int ctl_status_validate(const struct json_value *v, const char **ret_why) {
        static const char *const hot_fields[] = { "cpu", "load", NULL };
        static const char *const managed_fields[] = { "object", "current", "original", NULL };
        static const char *const action_fields[] = { "time", "action", "reason", NULL };
        const struct json_value *m;
        const char *why = NULL;
        int64_t version;
        int r;

        if (!has_type(v, JSON_OBJECT)) {
                why = "not a JSON object";
                goto bad;
        }
        if (json_get_int(v, "version", &version) < 0) {
                why = "version";
                goto bad;
        }
        if (version != CTL_STATUS_VERSION) {
                why = "unsupported version";
                goto bad;
        }
        m = json_get(v, "pid");
        if (!is_int(m) || m->number <= 0) {
                why = "pid";
                goto bad;
        }
        if (!has_type(json_get(v, "status"), JSON_STRING)) {
                why = "status";
                goto bad;
        }
        if ((m = json_get(v, "started_usec")) && !is_int(m)) {
                why = "started_usec";
                goto bad;
        }
        if ((m = json_get(v, "uptime_s")) && m->type != JSON_NUMBER) {
                why = "uptime_s";
                goto bad;
        }
        if ((m = json_get(v, "config")) && m->type != JSON_OBJECT) {
                why = "config";
                goto bad;
        }
        r = check_array(v, "hot_cpus", hot_fields, "in", &why);
        if (r == 0)
                r = check_array(v, "managed", managed_fields, "sSS", &why);
        if (r == 0)
                r = check_array(v, "last_actions", action_fields, "nsS", &why);
        if (r < 0)
                goto bad;
        return 0;
bad:
        if (ret_why)
                *ret_why = why;
        return -EBADMSG;
}

static void print_scalar(FILE *f, const struct json_value *v) {
        struct json_writer w;

        if (v && v->type == JSON_STRING) {
                fputs(v->string, f);
                return;
        }
        /* numbers, booleans, null and containers: their compact JSON text */
        json_writer_init(&w, f, 0);
        json_write_value(&w, v);
}

static void fmt_time(double t_s, char *buf, size_t len) {
        time_t t = (time_t) t_s;
        struct tm tm;

        if (t_s <= 0 || !localtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                snprintf(buf, len, "?");
}

static void fmt_duration(double s, char *buf, size_t len) {
        uint64_t t = s > 0 ? (uint64_t) s : 0;

        if (t >= 86400)
                snprintf(buf, len, "%" PRIu64 "d %02" PRIu64 "h %02" PRIu64 "m", t / 86400, t / 3600 % 24,
                         t / 60 % 60);
        else if (t >= 3600)
                snprintf(buf, len, "%" PRIu64 "h %02" PRIu64 "m %02" PRIu64 "s", t / 3600, t / 60 % 60, t % 60);
        else if (t >= 60)
                snprintf(buf, len, "%" PRIu64 "m %02" PRIu64 "s", t / 60, t % 60);
        else
                snprintf(buf, len, "%" PRIu64 "s", t);
}

/* Optional members the daemon adds beyond the required schema; shown when
 * present and of the expected type, ignored otherwise. */
static void print_extras(FILE *f, const struct json_value *v) {
        static const struct {
                const char *key, *label;
        } counters[] = {
                { "queue_irqs", "queue IRQs" },
                { "rps_queues", "RPS queues" },
                { "moves_10min", "moves in 10 min" },
                { "managed_irqs", "kernel-managed IRQs skipped" },
                { "external", "objects changed by others (left alone)" },
                { "interrupts_readings", "/proc/interrupts readings" },
        };
        const struct json_value *c;
        const char *s;
        bool b, first = true;
        int64_t n;

        if (json_get_bool(v, "dry_run", &b) == 0 && b)
                fprintf(f, "Mode: dry run (nothing is written)\n");
        if (json_get_string(v, "reload_error", &s) == 0 && *s)
                fprintf(f, "Last reload failed: %s\n", s);
        c = json_get(v, "counters");
        for (size_t i = 0; i < ELEMENTSOF(counters); i++) {
                if (json_get_int(c, counters[i].key, &n) < 0)
                        continue;
                fputs(first ? "Managing: " : ", ", f);
                fprintf(f, "%lld %s", (long long) n, counters[i].label);
                first = false;
        }
        if (!first)
                fputc('\n', f);

        /* IRQs whose effective_affinity_list stayed outside what was set
         * while they fired (irqsteerd(8), EFFECTIVE AFFINITY) */
        c = json_get(v, "effective_mismatch");
        for (size_t i = 0; i < json_count(c); i++) {
                const struct json_value *e = json_index(c, i);
                const char *name = "";
                int64_t irq = -1;

                json_get_int(e, "irq", &irq);
                json_get_string(e, "name", &name);
                fprintf(f, "Fires elsewhere than set: IRQ %" PRId64 "%s%s%s set to ", irq, *name ? " (" : "", name,
                        *name ? ")" : "");
                print_scalar(f, json_get(e, "affinity"));
                fputs(", fires on ", f);
                print_scalar(f, json_get(e, "effective"));
                fputc('\n', f);
        }
}

void ctl_status_print(FILE *f, const struct json_value *v, double now_s) {
        const struct json_value *a, *cfg;
        const char *status = "";
        int64_t pid = 0, started = 0;
        double uptime;
        char buf[64], buf2[64];

        json_get_int(v, "pid", &pid);
        json_get_string(v, "status", &status);
        fprintf(f, "irqsteerd: pid %" PRId64, pid);
        if (json_get_number(v, "uptime_s", &uptime) == 0) {
                fmt_duration(uptime, buf, sizeof(buf));
                fprintf(f, ", up %s", buf);
        }
        if (json_get_int(v, "started_usec", &started) == 0 && started > 0) {
                fmt_time((double) started / 1e6, buf, sizeof(buf));
                fprintf(f, " (since %s)", buf);
        }
        fprintf(f, "\nStatus: %s\n", status);
        print_extras(f, v);

        a = json_get(v, "hot_cpus");
        fprintf(f, "\nHot CPUs:");
        if (json_count(a) == 0)
                fprintf(f, " none");
        for (size_t i = 0; i < json_count(a); i++) {
                const struct json_value *e = json_index(a, i);
                int64_t cpu = -1;
                double load = 0;

                json_get_int(e, "cpu", &cpu);
                json_get_number(e, "load", &load);
                fprintf(f, "%s CPU%" PRId64 " (%.1f%%)", i ? "," : "", cpu, load * 100);
        }
        fputc('\n', f);

        a = json_get(v, "managed");
        fprintf(f, "\nManaged objects: %zu\n", json_count(a));
        if (json_count(a) > 0)
                fprintf(f, "  %-24s %-24s %s\n", "OBJECT", "CURRENT", "ORIGINAL");
        for (size_t i = 0; i < json_count(a); i++) {
                const struct json_value *e = json_index(a, i);
                const char *object = "?", *current = "?", *original = "?";

                json_get_string(e, "object", &object);
                json_get_string(e, "current", &current);
                json_get_string(e, "original", &original);
                fprintf(f, "  %-24s %-24s %s\n", object, current, original);
        }

        a = json_get(v, "last_actions");
        fprintf(f, "\nLast actions:%s\n", json_count(a) == 0 ? " none" : "");
        for (size_t i = 0; i < json_count(a); i++) {
                const struct json_value *e = json_index(a, i);
                const char *action = "?", *reason = NULL, *result;
                double t = 0;

                json_get_number(e, "time", &t);
                json_get_string(e, "action", &action);
                json_get_string(e, "reason", &reason);
                fmt_time(t / 1e6, buf, sizeof(buf));
                fmt_duration(now_s - t / 1e6, buf2, sizeof(buf2));
                fprintf(f, "  %s (%s ago)  %s", buf, buf2, action);
                if (json_get_string(e, "result", &result) == 0 && strcmp(result, "done") != 0) {
                        const char *error = NULL;

                        json_get_string(e, "error", &error);
                        fprintf(f, " [%s%s%s]", result, error ? ": " : "", error ? error : "");
                }
                fputc('\n', f);
                /* action_format lines already end in the reason; print it
                 * separately only when it adds something */
                if (reason && *reason && !strstr(action, reason))
                        fprintf(f, "      reason: %s\n", reason);
        }

        cfg = json_get(v, "config");
        if (cfg) {
                fprintf(f, "\nConfiguration in force:\n");
                for (size_t i = 0; i < cfg->n; i++) {
                        fprintf(f, "  %s = ", cfg->keys[i]);
                        print_scalar(f, &cfg->items[i]);
                        fputc('\n', f);
                }
        }
}

static void status_help(FILE *f) {
        fprintf(f, "Usage: irqsteerctl status [--state-dir DIR] [--json]\n"
                   "Show what the running irqsteerd is doing, from DIR/%s.\n\n"
                   "  -s, --state-dir DIR  the daemon's state directory (default %s)\n"
                   "  -j, --json           print the status document (checked) as JSON\n"
                   "  -h, --help           show this help\n",
                STATE_STATUS_NAME, CONFIG_DEFAULT_STATE_DIR);
}

int ctl_status(int argc, char **argv) {
        static const struct option options[] = {
                { "state-dir", required_argument, NULL, 's' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(json_freep) struct json_value *v = NULL;
        _cleanup_(freep) char *buf = NULL;
        const char *state_dir = CONFIG_DEFAULT_STATE_DIR, *why = NULL;
        bool json = false;
        int64_t pid;
        size_t len;
        int c, fd, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+s:jh", options, NULL)) >= 0) {
                switch (c) {
                case 's': state_dir = optarg; break;
                case 'j': json = true; break;
                case 'h': status_help(stdout); return CTL_EXIT_OK;
                default: return ctl_usage_error("status", "bad option");
                }
        }
        if (optind < argc)
                return ctl_usage_error("status", "unexpected argument '%s'", argv[optind]);

        /* The state directory is not under /proc or /sys, but rootfs reads
         * a whole file relative to a directory fd just as well. */
        fd = rootfs_open(state_dir);
        if (fd >= 0) {
                r = rootfs_read(fd, STATE_STATUS_NAME, &buf, &len);
                close(fd);
        } else
                r = fd;
        if (r == -ENOENT) {
                ctl_error("no status in %s/%s: irqsteerd is not running (or uses another --state-dir)",
                          state_dir, STATE_STATUS_NAME);
                return CTL_EXIT_ERROR;
        }
        if (r < 0) {
                ctl_error("cannot read %s/%s: %s", state_dir, STATE_STATUS_NAME, strerror(-r));
                return CTL_EXIT_ERROR;
        }
        r = json_parse(buf, len, &v);
        if (r < 0) {
                ctl_error("%s/%s is not valid JSON (%s)", state_dir, STATE_STATUS_NAME, strerror(-r));
                return CTL_EXIT_ERROR;
        }
        if (ctl_status_validate(v, &why) < 0) {
                ctl_error("%s/%s does not match the status schema: %s", state_dir, STATE_STATUS_NAME,
                          why ? why : "?");
                return CTL_EXIT_ERROR;
        }
        json_get_int(v, "pid", &pid);
        if (!ctl_pid_is_irqsteerd(pid)) {
                ctl_error("irqsteerd (pid %" PRId64 ") is not running; %s/%s is left over from it", pid,
                          state_dir, STATE_STATUS_NAME);
                return CTL_EXIT_ERROR;
        }

        if (json) {
                struct json_writer w;

                json_writer_init(&w, stdout, JSON_PRETTY);
                json_write_value(&w, v);
                fputc('\n', stdout);
                r = json_writer_finish(&w);
                if (r < 0)
                        return CTL_EXIT_ERROR;
        } else
                ctl_status_print(stdout, v, (double) ctl_now_realtime() / 1e6);
        return fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_ERROR;
}
