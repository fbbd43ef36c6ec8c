/* irqsteerctl status: STATE_DIR/status.json checked and rendered. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cpuset.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "knob.h"
#include "rootfs.h"
#include "state.h"
#include "undo.h"
#include "util.h"

static bool has_type(const struct json_value *v, enum json_type t) {
        return v && v->type == t;
}

/* Each element of array key of v: an object whose fields have the types
 * ('s' string, 'S' string or null, 'i' integer, 'n' number). */
static int check_array(const struct json_value *v, const char *key, const char *const *fields,
                       const char *types, const char **ret_why) {
        const struct json_value *a = json_get(v, key);
        bool ok = !a || a->type == JSON_ARRAY;

        for (size_t i = 0; ok && a && i < a->n; i++) {
                const struct json_value *e = &a->items[i];

                ok = e->type == JSON_OBJECT;
                for (size_t f = 0; ok && fields[f]; f++) {
                        const struct json_value *m = json_get(e, fields[f]);
                        int64_t n;

                        switch (types[f]) {
                        case 's': ok = has_type(m, JSON_STRING); break;
                        case 'S': ok = has_type(m, JSON_STRING) || has_type(m, JSON_NULL); break;
                        case 'i': ok = json_as_int(m, &n) == 0; break;
                        default: ok = has_type(m, JSON_NUMBER); break;
                        }
                }
        }
        if (!ok)
                *ret_why = key;
        return ok ? 0 : -EBADMSG;
}

int ctl_status_validate(const struct json_value *v, const char **ret_why) {
        static const char *const hot_fields[] = { "cpu", "load", NULL };
        static const char *const managed_fields[] = { "object", "current", "original", NULL };
        static const char *const action_fields[] = { "time", "action", "reason", NULL };
        const struct json_value *m;
        const char *why = NULL;
        int64_t version, n;

        if (!has_type(v, JSON_OBJECT))
                why = "not a JSON object";
        else if (json_get_int(v, "version", &version) < 0)
                why = "version";
        else if (version != CTL_STATUS_VERSION)
                why = "unsupported version";
        else if (json_get_int(v, "pid", &n) < 0 || n <= 0)
                why = "pid";
        else if (!has_type(json_get(v, "status"), JSON_STRING))
                why = "status";
        else if ((m = json_get(v, "started_usec")) && json_as_int(m, &n) < 0)
                why = "started_usec";
        else if ((m = json_get(v, "uptime_s")) && m->type != JSON_NUMBER)
                why = "uptime_s";
        else if ((m = json_get(v, "config")) && m->type != JSON_OBJECT)
                why = "config";
        else if (check_array(v, "hot_cpus", hot_fields, "in", &why) == 0 &&
                 check_array(v, "managed", managed_fields, "sSS", &why) == 0 &&
                 check_array(v, "last_actions", action_fields, "nsS", &why) == 0)
                return 0;
        *ret_why = why;
        return -EBADMSG;
}

/* A JSON array of CPUs as a list ("0-3,8"); false when v is not one. */
static bool fmt_cpu_array(const struct json_value *v, char *buf, size_t len) {
        cpuset_t s;

        if (json_to_cpuset(v, &s) < 0)
                return false;
        if (cpuset_count(&s) == 0) {
                snprintf(buf, len, "none");
                return true;
        }
        return cpuset_format_list(&s, buf, len) >= 0;
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

/* A process or thread name from proc/PID[/task/TID]/comm under rootfd. */
static bool read_comm(int rootfd, const char *path, char *buf, size_t len) {
        _cleanup_(freep) char *text = NULL;
        size_t n;

        if (rootfd < 0 || rootfs_read(rootfd, path, &text, &n) < 0 || n == 0)
                return false;
        text[strcspn(text, "\n")] = 0;
        util_cescape(text, strlen(text), false, buf, len);
        return *buf != 0;
}

/* "thread PID TID STARTTIME" as "thread TID (process/thread)" while it lives. */
static void fmt_object(int rootfd, const char *object, char *buf, size_t len) {
        unsigned long pid, tid;
        unsigned long long start;
        char path[96], pcomm[64], tcomm[64];
        int n = 0;

        if (sscanf(object, "thread %lu %lu %llu%n", &pid, &tid, &start, &n) != 3 || object[n] != 0) {
                size_t l = strlen(object);

                /* "irq 30 -": an IRQ without handler names says nothing more */
                if (strncmp(object, "irq ", 4) == 0 && l > 2 && strcmp(object + l - 2, " -") == 0)
                        l -= 2;
                snprintf(buf, len, "%.*s", (int) l, object);
                return;
        }
        snprintf(path, sizeof(path), "proc/%lu/comm", pid);
        if (!read_comm(rootfd, path, pcomm, sizeof(pcomm))) {
                snprintf(buf, len, "thread %lu (pid %lu)", tid, pid);
                return;
        }
        snprintf(path, sizeof(path), "proc/%lu/task/%lu/comm", pid, tid);
        if (tid == pid || !read_comm(rootfd, path, tcomm, sizeof(tcomm)) || strcmp(tcomm, pcomm) == 0)
                snprintf(buf, len, "thread %lu (%s)", tid, pcomm);
        else
                snprintf(buf, len, "thread %lu (%s/%s)", tid, pcomm, tcomm);
}

/* An item (" text") of a list: after head when it is the first, else after
 * a comma, on a new line indented when it would pass width. */
static void list_item(FILE *f, size_t *col, const char *head, const char *item, size_t width, int indent) {
        if (head)
                *col += (size_t) fprintf(f, "%s", head);
        else if (*col + 1 + strlen(item) > width)
                *col = (size_t) fprintf(f, ",\n%*s", indent, "") - 2;
        else
                *col += (size_t) fprintf(f, ",");
        *col += (size_t) fprintf(f, "%s", item);
}

static void print_counters(FILE *f, const struct json_value *v) {
        static const struct {
                const char *key, *label;
        } counters[] = {
                { "queue_irqs", "queue IRQs" },
                { "rps_queues", "RPS queues" },
                { "moves_10min", "moves in 10 min" },
                { "kernel_managed_irqs_skipped", "kernel-managed IRQs skipped" },
                { "external", "changed by others (left alone)" },
                { "kept", "RPS masks set before irqsteerd started (kept)" },
                { "interrupts_readings", "/proc/interrupts readings" },
        };
        const struct json_value *c = json_get(v, "counters");
        size_t col = 0;
        int64_t n;

        for (size_t i = 0; i < ELEMENTSOF(counters); i++) {
                char item[96];

                if (json_get_int(c, counters[i].key, &n) < 0 &&
                    /* status files of earlier versions */
                    (strcmp(counters[i].key, "kernel_managed_irqs_skipped") != 0 ||
                     json_get_int(c, "managed_irqs", &n) < 0))
                        continue;
                snprintf(item, sizeof(item), " %lld %s", (long long) n, counters[i].label);
                list_item(f, &col, col == 0 ? "Counts:" : NULL, item, 80, 7);
        }
        if (col)
                fputc('\n', f);
}

/* One line a class; the kernel-managed IRQs by number, as many as fit. */
static void print_irq_classes(FILE *f, const struct json_value *v) {
        const struct json_value *a = json_get(v, "irq_classes"), *km = json_get(v, "kernel_managed_irqs");

        if (json_count(a) == 0)
                return;
        fprintf(f, "IRQ classes:\n");
        for (size_t i = 0; i < json_count(a); i++) {
                const struct json_value *e = json_index(a, i);
                const char *cls = "?", *done = "";
                int64_t n = 0;
                int col;

                json_get_string(e, "class", &cls);
                json_get_int(e, "irqs", &n);
                json_get_string(e, "done", &done);
                col = fprintf(f, "  %-15.15s %5" PRId64 "  %.80s", cls, n, done);
                if (strcmp(cls, "kernel-managed") == 0 && json_count(km) > 0) {
                        col += fprintf(f, ":");
                        for (size_t k = 0; k < json_count(km); k++) {
                                const struct json_value *x = json_index(km, k);
                                char item[32];
                                int l;

                                if (!x || x->type != JSON_NUMBER)
                                        continue;
                                l = snprintf(item, sizeof(item), " %.0f%s", x->number, k + 1 < json_count(km) ? "," : "");
                                if (col + l > 112) {
                                        fprintf(f, " ... (%zu)", json_count(km));
                                        break;
                                }
                                col += fprintf(f, "%s", item);
                        }
                }
                fputc('\n', f);
        }
}

static void print_hot(FILE *f, const struct json_value *v) {
        const struct json_value *a = json_get(v, "hot_cpus");
        size_t col = 0;

        if (json_count(a) == 0)
                fprintf(f, "Hot CPUs: none");
        for (size_t i = 0; i < json_count(a); i++) {
                const struct json_value *e = json_index(a, i);
                int64_t cpu = -1;
                double load = 0;
                char item[48];

                json_get_int(e, "cpu", &cpu);
                json_get_number(e, "load", &load);
                snprintf(item, sizeof(item), " CPU%" PRId64 " (%.1f%%)", cpu, load * 100);
                list_item(f, &col, i == 0 ? "Hot CPUs:" : NULL, item, 100, 9);
        }
        fputc('\n', f);
        /* why the daemon leaves a hot CPU as it is, this tick */
        for (size_t i = 0; i < json_count(a); i++) {
                const struct json_value *e = json_index(a, i);
                const char *why;
                int64_t cpu = -1;

                json_get_int(e, "cpu", &cpu);
                if (json_get_string(e, "why", &why) == 0 && *why)
                        fprintf(f, "  CPU%" PRId64 " stays: %s\n", cpu, why);
        }
}

/* Each IRQ firing elsewhere than set (irqsteerd(8), EFFECTIVE AFFINITY). */
static void print_effective(FILE *f, const struct json_value *v) {
        const struct json_value *c = json_get(v, "effective_mismatch");

        for (size_t i = 0; i < json_count(c); i++) {
                const struct json_value *e = json_index(c, i);
                const char *name = "";
                char set[256], on[256];
                int64_t irq = -1;

                json_get_int(e, "irq", &irq);
                json_get_string(e, "name", &name);
                if (!fmt_cpu_array(json_get(e, "affinity"), set, sizeof(set)))
                        snprintf(set, sizeof(set), "?");
                if (!fmt_cpu_array(json_get(e, "effective"), on, sizeof(on)))
                        snprintf(on, sizeof(on), "unknown CPUs");
                fprintf(f, "Fires elsewhere than set: IRQ %" PRId64 "%s%s%s set to CPUs %s, fires on CPUs %s\n",
                        irq, *name ? " (" : "", name, *name ? ")" : "", set, on);
        }
}

/* A managed value: its CPU list when given, else the file text. */
static void fmt_value(const struct json_value *e, const char *cpus_key, const char *text_key, char *buf,
                      size_t len) {
        const char *s;

        if (fmt_cpu_array(json_get(e, cpus_key), buf, len))
                return;
        if (json_get_string(e, text_key, &s) == 0)
                snprintf(buf, len, "%s", s);
        else
                snprintf(buf, len, "-");
}

/* An undo journal value as fmt_value() shows one of status.json. */
static void fmt_journal_value(enum knob_kind kind, const char *value, char *buf, size_t len) {
        cpuset_t cpus;

        if (knob_value_cpus(kind, value, &cpus) == 0)
                cpuset_to_text(&cpus, "-", buf, len);
        else
                snprintf(buf, len, "%s", value);
}

/* Every managed object: from the journal when read, else status.json's. */
static void print_managed(FILE *f, const struct json_value *v, int64_t count, int rootfd,
                          const struct undo *journal) {
        const struct json_value *a = json_get(v, "managed");
        size_t n = journal ? journal->n_entries : json_count(a);

        fprintf(f, "\nManaged objects: %" PRId64 "\n", count);
        if (n > 0)
                fprintf(f, "  %-34s %-20s %s\n", "OBJECT", "NOW", "BEFORE IRQSTEERD");
        for (size_t i = 0; i < n; i++) {
                const char *object = "?";
                char key[KNOB_KEY_MAX], name[160], current[512], original[512];

                if (journal) {
                        const struct undo_entry *e = &journal->entries[i];

                        knob_key_format(&e->key, key, sizeof(key));
                        object = key;
                        fmt_journal_value(e->key.kind, e->pending ? e->pending : e->last ? e->last : e->original,
                                          current, sizeof(current));
                        fmt_journal_value(e->key.kind, e->original, original, sizeof(original));
                } else {
                        const struct json_value *e = json_index(a, i);

                        json_get_string(e, "object", &object);
                        fmt_value(e, "current_cpus", "current", current, sizeof(current));
                        fmt_value(e, "original_cpus", "original", original, sizeof(original));
                }
                fmt_object(rootfd, object, name, sizeof(name));
                fprintf(f, "  %-34s %-20s %s\n", name, current, original);
        }
        if (!journal && (int64_t) n < count)
                fprintf(f, "  (the newest %zu; the undo journal, unreadable here, has them all)\n", n);
}

/* text indented, wrapped at spaces to 120 columns (continuations 2 deeper). */
static void print_wrapped(FILE *f, const char *text, int indent) {
        const int width = 120;
        int col = indent;

        fprintf(f, "%*s", indent, "");
        while (*text) {
                size_t word = strcspn(text, " ");

                if (col > indent && col + 1 + (int) word > width) {
                        fprintf(f, "\n%*s", indent + 2, "");
                        col = indent + 2;
                } else if (col > indent) {
                        fputc(' ', f);
                        col++;
                }
                fprintf(f, "%.*s", (int) word, text);
                col += (int) word;
                text += word;
                while (*text == ' ')
                        text++;
        }
        fputc('\n', f);
}

static void print_actions(FILE *f, const struct json_value *v, double now_s, size_t max) {
        const struct json_value *a = json_get(v, "last_actions");
        size_t n = json_count(a), first = n > max ? n - max : 0;
        char buf[64], buf2[64];

        if (n == 0)
                fprintf(f, "\nLast actions: none\n");
        else if (first > 0)
                fprintf(f, "\nLast actions (newest %zu of %zu, --full for all):\n", n - first, n);
        else
                fprintf(f, "\nLast actions:\n");
        for (size_t i = first; i < n; i++) {
                const struct json_value *e = json_index(a, i);
                const char *action = "?", *reason = NULL, *result;
                double t = 0;

                json_get_number(e, "time", &t);
                json_get_string(e, "action", &action);
                json_get_string(e, "reason", &reason);
                fmt_time(t / 1e6, buf, sizeof(buf));
                fmt_duration(now_s - t / 1e6, buf2, sizeof(buf2));
                /* the time on a line of its own: action lines are long */
                fprintf(f, "  %s (%s ago)", buf, buf2);
                if (json_get_string(e, "result", &result) == 0 && strcmp(result, "done") != 0) {
                        const char *error = NULL;

                        json_get_string(e, "error", &error);
                        fprintf(f, " [%s%s%s]", result, error ? ": " : "", error ? error : "");
                }
                fputc('\n', f);
                print_wrapped(f, action, 4);
                /* action lines end in the reason: only when it adds something */
                if (reason && *reason && !strstr(action, reason))
                        fprintf(f, "    reason: %s\n", reason);
        }
}

/* config_text indented (it pastes back as it is), the drop-ins as comments. */
static void print_config(FILE *f, const struct json_value *v) {
        const struct json_value *dropins = json_get(json_get(v, "config"), "dropins");
        const char *text, *path = NULL;
        size_t n = dropins && dropins->type == JSON_ARRAY ? json_count(dropins) : 0;

        if (json_get_string(v, "config_text", &text) < 0)
                return;
        json_get_string(json_get(v, "config"), "path", &path);
        fprintf(f, "\nConfiguration in force (%s%s%s):\n", path ? "from " : "built-in defaults, no file",
                path ? path : "", n ? path ? " and its drop-ins" : ", and drop-ins" : "");
        for (size_t i = 0; i < n; i++) {
                const struct json_value *d = json_index(dropins, i);

                if (d && d->type == JSON_STRING)
                        fprintf(f, "  # drop-in %s\n", d->string);
        }
        while (*text) {
                size_t l = strcspn(text, "\n");

                if (l > 0)
                        fprintf(f, "  %.*s\n", (int) l, text);
                else
                        fputc('\n', f);
                text += l + (text[l] == '\n');
        }
}

void ctl_status_print(FILE *f, const struct json_value *v, double now_s, int rootfd, bool full,
                      const struct undo *journal) {
        const char *status = "", *s;
        int64_t pid = 0, started = 0, managed = (int64_t) json_count(json_get(v, "managed"));
        double uptime;
        bool b;
        char buf[64];

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
        if (json_get_bool(v, "dry_run", &b) == 0 && b)
                fprintf(f, "Mode: dry run (nothing is written)\n");
        if (json_get_string(v, "reload_error", &s) == 0 && *s)
                fprintf(f, "Last reload failed: %s\n", s);
        if (json_get_string(v, "unmatched_interfaces", &s) == 0 && *s)
                fprintf(f, "Matching no interface: %s\n", s);
        print_counters(f, v);
        print_irq_classes(f, v);
        print_effective(f, v);
        print_hot(f, v);
        json_get_int(v, "managed_count", &managed);
        if (full)
                print_managed(f, v, managed, rootfd, journal);
        else
                fprintf(f, "Managed objects: %" PRId64 " (--full lists them)\n", managed);
        print_actions(f, v, now_s, full ? SIZE_MAX : 5);
        if (full)
                print_config(f, v);
}

static const char status_help[] =
        "Usage: irqsteerctl status [--state-dir DIR] [--full | --json]\n"
        "Show what the running irqsteerd is doing, from DIR/" STATE_STATUS_NAME ": a brief\n"
        "summary (state, counts, hot CPUs, the last actions) by default.\n\n"
        "  -s, --state-dir DIR  the daemon's state directory (default " CONFIG_DEFAULT_STATE_DIR ")\n"
        "  -f, --full           also every managed object, every recent action and\n"
        "                       the configuration in force, in the file's syntax\n"
        "  -j, --json           print the status document (checked) as JSON; on an\n"
        "                       error, a JSON error object (schema in irqsteerctl(8))\n"
        "  -h, --help           show this help\n";

/* An error on stderr and, with --json, as an object on stdout. */
_printf_(4, 5)
static int status_fail(bool json, int exit_status, const char *code, const char *fmt, ...) {
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        ctl_error("%s", msg);
        if (json) {
                struct json_writer w;

                json_writer_init(&w, stdout, JSON_PRETTY);
                json_begin_object(&w);
                json_key_int(&w, "version", CTL_STATUS_VERSION);
                json_key_string(&w, "error", code);
                json_key_string(&w, "message", msg);
                json_key_int(&w, "exit_status", exit_status);
                json_end_object(&w);
                fputc('\n', stdout);
                json_writer_finish(&w);
                fflush(stdout);
        }
        return exit_status;
}

int ctl_status(int argc, char **argv) {
        _cleanup_(json_freep) struct json_value *v = NULL;
        const char *state_dir = CONFIG_DEFAULT_STATE_DIR, *why = NULL, *root = "/";
        bool json = false, full = false;
        const struct ctl_option options[] = {
                CTL_OPT("state-dir", 's', CTL_OPT_STRING, &state_dir),
                CTL_OPT("full", 'f', CTL_OPT_FLAG, &full),
                CTL_OPT("json", 'j', CTL_OPT_FLAG, &json),
        };
        int64_t pid;
        int fd, r;

        r = ctl_options("status", argc, argv, status_help, options, ELEMENTSOF(options), false);
        if (r <= 0)
                return -r;
        if (json && full)
                return ctl_usage_error("status", "--full and --json exclude each other (--json prints status.json as it is)");

        r = state_read_status(state_dir, &v);
        if (r == -ENOENT)
                return status_fail(json, CTL_EXIT_NOT_RUNNING, "not-running",
                                   "no status in %s/%s: irqsteerd is not running (or uses another --state-dir)",
                                   state_dir, STATE_STATUS_NAME);
        if (r == -EBADMSG)
                return status_fail(json, CTL_EXIT_BAD_STATUS, "bad-status", "%s/%s is not valid JSON (%s)", state_dir,
                                   STATE_STATUS_NAME, strerror(-r));
        if (r < 0)
                return status_fail(json, CTL_EXIT_ERROR, "unreadable", "cannot read %s/%s: %s", state_dir,
                                   STATE_STATUS_NAME, strerror(-r));
        if (ctl_status_validate(v, &why) < 0)
                return status_fail(json, CTL_EXIT_BAD_STATUS, "bad-status",
                                   "%s/%s does not match the status schema: %s", state_dir, STATE_STATUS_NAME, why);
        if (!state_status_live(v, &pid))
                return status_fail(json, CTL_EXIT_NOT_RUNNING, "not-running",
                                   "irqsteerd (pid %" PRId64 ") is not running; %s/%s is left over from it", pid,
                                   state_dir, STATE_STATUS_NAME);

        if (json) {
                struct json_writer w;

                json_writer_init(&w, stdout, JSON_PRETTY);
                json_write_value(&w, v);
                fputc('\n', stdout);
                r = json_writer_finish(&w);
        } else {
                struct undo *journal = NULL;

                json_get_string(v, "root", &root);
                /* outside names: escaped for the terminal */
                FILE *f = util_escaping_stream(stdout);

                fd = full ? rootfs_open(root) : -1;
                /* every managed object is in the journal (read only) */
                if (full && undo_new(state_dir, NULL, true, &journal) < 0)
                        journal = NULL;
                ctl_status_print(f ? f : stdout, v, (double) util_now_usec(CLOCK_REALTIME) / 1e6, fd, full, journal);
                undo_free(journal);
                if (f && fclose(f) != 0)
                        r = -EIO;
                if (fd >= 0)
                        close(fd);
        }
        return fflush(stdout) == 0 && r >= 0 ? CTL_EXIT_OK : CTL_EXIT_ERROR;
}
