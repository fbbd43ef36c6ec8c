/* The configuration file, parsed into a fresh struct config collecting
 * every problem as file:line: key: message.  Keep irqsteer.conf(5) in step. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "config.h"
#include "cpuset.h"
#include "irqbalance-env.h"
#include "json.h"
#include "log.h"
#include "util.h"

/* Beyond this many problems it is no config file at all. */
#define CONFIG_MAX_ERRORS 100
#define CONFIG_MAX_SIZE (1024 * 1024)

#define USEC_PER_MIN (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MIN)

/* The kernel rounds rps_sock_flow_entries up to a power of two: demanding
 * one makes the value written read back (scaling.rst suggests 32768). */
#define FLOW_ENTRIES_MIN 1024
#define FLOW_ENTRIES_MAX 1048576
#define COMM_MAX 15   /* TASK_COMM_LEN less the NUL */
#define IFNAME_MAX 15 /* IFNAMSIZ less the NUL */

enum value_type {
        VT_BOOL,
        VT_TRISTATE,
        VT_UINT,
        VT_FLOW_ENTRIES,
        VT_PERCENT,
        VT_DECIMAL,
        VT_DURATION,
        VT_LOG_LEVEL,
        VT_CPULIST,
        VT_IRQLIST,
        VT_POLICY,
        /* the strings (char *, NULL when unset) from here on */
        VT_PATH,
        VT_PATH_OPT,     /* VT_PATH, or empty for none (NULL) */
        VT_PATHS,        /* absolute paths separated by blanks, or empty */
        VT_COMM,
        VT_REGEX,
        VT_UNIT,
        VT_IFNAME,
};

struct key_def {
        const char *name;
        enum value_type type;
        size_t offset;
        double min, max; /* VT_UINT, VT_PERCENT (in percent), VT_DECIMAL, VT_DURATION (usec) */
        const char *def; /* the built-in default, as the file would say it */
};

#define CKEY(name, type, field, min, max, def) { name, type, offsetof(struct config, field), min, max, def }
#define KEY(name, type, st, field, min, max) { name, type, offsetof(st, field), min, max, NULL }

static const struct key_def daemon_keys[] = {
        CKEY("interval", VT_DURATION, interval_usec, 100 * USEC_PER_MSEC, 60 * USEC_PER_SEC, "2s"),
        CKEY("calm_interval", VT_DURATION, calm_interval_usec, 100 * USEC_PER_MSEC, 60 * USEC_PER_SEC, "4s"),
        CKEY("fast_interval", VT_DURATION, fast_interval_usec, 0, 60 * USEC_PER_SEC, "500ms"),
        CKEY("irq_rate_interval", VT_DURATION, irq_rate_interval_usec, 0, 10 * USEC_PER_MIN, "10s"),
        CKEY("state_dir", VT_PATH, state_dir, 0, 0, CONFIG_DEFAULT_STATE_DIR),
        CKEY("metrics_file", VT_PATH_OPT, metrics_file, 0, 0, ""),
        CKEY("irqbalance_env_files", VT_PATHS, irqbalance_env_files, 0, 0, IRQBALANCE_ENV_DEFAULT_FILES),
        CKEY("log_level", VT_LOG_LEVEL, log_level, 0, 0, "info"),
        CKEY("restore_on_exit", VT_BOOL, restore_on_exit, 0, 0, "yes"),
        CKEY("dry_run", VT_BOOL, dry_run, 0, 0, "no"),
};

enum {
        BK_HOT_ENTER,
        BK_HOT_EXIT,
        BK_MIN_DWELL = 7,
        BK_MAX_DWELL = 8,
        BK_BALANCE_RATIO = 18,
};

static const struct key_def balance_keys[] = {
        [BK_HOT_ENTER] = CKEY("hot_enter", VT_PERCENT, hot_enter, 1, 100, "80%"),
        [BK_HOT_EXIT] = CKEY("hot_exit", VT_PERCENT, hot_exit, 1, 100, "60%"),
        CKEY("hot_samples", VT_UINT, hot_samples, 1, 100, "2"),
        CKEY("saturated_idle", VT_PERCENT, saturated_idle, 0, 100, "10%"),
        CKEY("saturated_share", VT_PERCENT, saturated_share, 1, 100, "30%"),
        CKEY("smoothing", VT_DECIMAL, smoothing, 0.05, 1, "0.5"),
        CKEY("min_gain", VT_PERCENT, min_gain, 1, 100, "10%"),
        [BK_MIN_DWELL] = CKEY("min_dwell", VT_DURATION, min_dwell_usec, 0, USEC_PER_HOUR, "30s"),
        [BK_MAX_DWELL] = CKEY("max_dwell", VT_DURATION, max_dwell_usec, 0, 24 * USEC_PER_HOUR, "10min"),
        CKEY("max_moves", VT_UINT, max_moves, 1, 1000, "2"),
        CKEY("initial_layout", VT_BOOL, initial_layout, 0, 0, "yes"),
        CKEY("rps", VT_BOOL, rps, 0, 0, "yes"),
        CKEY("rfs", VT_BOOL, rfs, 0, 0, "no"),
        CKEY("rps_sock_flow_entries", VT_FLOW_ENTRIES, rps_sock_flow_entries, 0, 0, "32768"),
        CKEY("xps", VT_BOOL, xps, 0, 0, "yes"),
        CKEY("single_queue_rps", VT_BOOL, single_queue_rps, 0, 0, "yes"),
        CKEY("rps_exclude_irq_rate", VT_DECIMAL, rps_exclude_irq_rate, 0, 10000000, "20000"),
        CKEY("banned_cpus", VT_CPULIST, banned_cpus, 0, 0, ""),
        [BK_BALANCE_RATIO] = CKEY("balance_ratio", VT_DECIMAL, balance_ratio, 0, 10, "1.5"),
        CKEY("balance_floor", VT_PERCENT, balance_floor, 1, 100, "5%"),
        CKEY("rps_trial", VT_BOOL, rps_trial, 0, 0, "yes"),
        CKEY("takeover", VT_BOOL, takeover, 0, 0, "no"),
        CKEY("ban_irqs", VT_IRQLIST, ban_irqs, 0, 0, ""),
        CKEY("other_irqs", VT_BOOL, other_irqs, 0, 0, "yes"),
        CKEY("napi_threads", VT_BOOL, napi_threads, 0, 0, "no"),
        CKEY("threaded_napi", VT_BOOL, threaded_napi, 0, 0, "no"),
        CKEY("external_hold", VT_DURATION, external_hold_usec, 0, 24 * USEC_PER_HOUR, "10min"),
};

static const struct key_def interface_keys[] = {
        KEY("manage", VT_BOOL, struct config_interface, manage, 0, 0),
        KEY("cpus", VT_CPULIST, struct config_interface, cpus, 0, 0),
        KEY("rps", VT_TRISTATE, struct config_interface, rps, 0, 0),
        KEY("xps", VT_TRISTATE, struct config_interface, xps, 0, 0),
        KEY("rfs", VT_TRISTATE, struct config_interface, rfs, 0, 0),
        KEY("takeover", VT_TRISTATE, struct config_interface, takeover, 0, 0),
};

enum {
        WK_MATCH_NAME,
        WK_MATCH_CMDLINE,
        WK_MATCH_UNIT,
        WK_PIDFILE,
        WK_POLICY,
        WK_CPUS,
        WK_INTERFACE,
};

static const struct key_def worker_keys[] = {
        [WK_MATCH_NAME] = KEY("match_name", VT_COMM, struct config_worker, match_name, 0, 0),
        [WK_MATCH_CMDLINE] = KEY("match_cmdline", VT_REGEX, struct config_worker, match_cmdline, 0, 0),
        [WK_MATCH_UNIT] = KEY("match_unit", VT_UNIT, struct config_worker, match_unit, 0, 0),
        [WK_PIDFILE] = KEY("pidfile", VT_PATH, struct config_worker, pidfile, 0, 0),
        [WK_POLICY] = KEY("policy", VT_POLICY, struct config_worker, policy, 0, 0),
        [WK_CPUS] = KEY("cpus", VT_CPULIST, struct config_worker, cpus, 0, 0),
        [WK_INTERFACE] = KEY("interface", VT_IFNAME, struct config_worker, interface, 0, 0),
};

#define MAX_KEYS ELEMENTSOF(balance_keys)

enum section_kind {
        SEC_NONE,      /* before the first header */
        SEC_SKIP,      /* after a bad header, already reported */
        SEC_DAEMON,
        SEC_BALANCE,
        SEC_INTERFACE,
        SEC_WORKER,
};

static const struct {
        const char *name;
        const struct key_def *defs;
        size_t n;
} sections[] = {
        [SEC_DAEMON] = { "daemon", daemon_keys, ELEMENTSOF(daemon_keys) },
        [SEC_BALANCE] = { "balance", balance_keys, ELEMENTSOF(balance_keys) },
        [SEC_INTERFACE] = { "interface", interface_keys, ELEMENTSOF(interface_keys) },
        [SEC_WORKER] = { "worker", worker_keys, ELEMENTSOF(worker_keys) },
};

/* Where a key was last set (one file is one pointer), and whether its
 * value was bad: cross-key checks skip it. */
struct seen {
        const char *file;
        unsigned line;
        bool bad;
};

/* An [interface] or [worker] section: where it first appears, where the
 * current file opened it (twice in one file is a duplicate), its keys. */
struct section_seen {
        const char *file;
        unsigned line;
        const char *open_file;
        unsigned open_line;
        struct seen keys[MAX_KEYS];
};

struct parser {
        const char *path;        /* the file being read; struct config's copy */
        struct config *c;
        struct config_errors *errs;
        size_t first_error;      /* errs->n when this parse began */
        size_t allocated_errors;
        bool oom;
        /* the files in the order read, to sort errors by */
        const char **order;
        size_t n_order, allocated_order;
        size_t allocated_dropins;

        enum section_kind kind;
        size_t index;            /* into interfaces / workers */
        struct seen *seen;       /* the current section's key table state */
        unsigned daemon_line, balance_line; /* in the current file */
        struct seen daemon_seen[MAX_KEYS], balance_seen[MAX_KEYS];
        /* parallel to c->interfaces / c->workers */
        struct named_sections {
                struct section_seen *seen;
                size_t allocated, allocated_seen, added;
        } interfaces, workers;
};

static const char *const policy_names[WORKER_POLICY_MAX] = {
        [WORKER_SPREAD] = "spread",
        [WORKER_COLOCATE] = "colocate",
        [WORKER_AVOID_NET] = "avoid-net",
};

const char *worker_policy_to_string(enum worker_policy p) {
        if (p < 0 || p >= WORKER_POLICY_MAX)
                return NULL;
        return policy_names[p];
}

enum worker_policy worker_policy_from_string(const char *s) {
        if (!s)
                return WORKER_POLICY_INVALID;
        for (int i = 0; i < WORKER_POLICY_MAX; i++)
                if (strcmp(s, policy_names[i]) == 0)
                        return (enum worker_policy) i;
        return WORKER_POLICY_INVALID;
}

/* A level is written as its first name. */
static const struct {
        const char *name;
        int level;
} log_levels[] = {
        { "debug", LOG_DEBUG },     { "info", LOG_INFO }, { "notice", LOG_NOTICE },
        { "warning", LOG_WARNING }, { "err", LOG_ERR },   { "error", LOG_ERR },
};

static int compare_uint(const void *a, const void *b) {
        unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;

        return (x > y) - (x < y);
}

bool config_irq_banned(const struct config *c, unsigned irq) {
        return bsearch(&irq, c->ban_irqs.v, c->ban_irqs.n, sizeof(irq), compare_uint) != NULL;
}

/* The string values of a section's table. */
static void free_strings(const struct key_def *defs, size_t n, void *base) {
        for (size_t i = 0; i < n; i++)
                if (defs[i].type >= VT_PATH)
                        free(*(char **) ((char *) base + defs[i].offset));
}

void config_free(struct config *c) {
        free(c->path);
        for (size_t i = 0; i < c->n_dropins; i++)
                free(c->dropins[i]);
        free(c->dropins);
        free_strings(daemon_keys, ELEMENTSOF(daemon_keys), c);
        for (size_t i = 0; i < c->n_interfaces; i++)
                free(c->interfaces[i].match);
        free(c->interfaces);
        for (size_t i = 0; i < c->n_workers; i++) {
                free(c->workers[i].name);
                free_strings(worker_keys, ELEMENTSOF(worker_keys), &c->workers[i]);
        }
        free(c->workers);
        memset(c, 0, sizeof(*c));
}

void config_errors_free(struct config_errors *errs) {
        for (size_t i = 0; i < errs->n; i++) {
                free(errs->v[i].file);
                free(errs->v[i].key);
                free(errs->v[i].message);
        }
        free(errs->v);
        *errs = (struct config_errors) {};
}

void config_errors_print(const struct config_errors *errs, FILE *f) {
        for (size_t i = 0; i < errs->n; i++) {
                const struct config_error *e = &errs->v[i];

                fputs(e->file ? e->file : "(config)", f);
                if (e->line > 0)
                        fprintf(f, ":%u", e->line);
                fputs(": ", f);
                if (e->key)
                        fprintf(f, "%s: ", e->key);
                fprintf(f, "%s\n", e->message);
        }
}

/* Appends a problem, its strings copied; *allocated catches up with errors
 * the caller had before.  0 or -ENOMEM. */
static int errors_add(struct config_errors *errs, size_t *allocated, const char *file, unsigned line,
                      const char *key, const char *message) {
        struct config_error e = { .line = line };

        if (*allocated < errs->n)
                *allocated = errs->n;
        if (util_grow((void **) &errs->v, allocated, errs->n + 1, sizeof(*errs->v)) < 0 ||
            !(e.message = strdup(message)) || (file && !(e.file = strdup(file))) ||
            (key && !(e.key = strdup(key)))) {
                free(e.message);
                free(e.file);
                return -ENOMEM;
        }
        errs->v[errs->n++] = e;
        return 0;
}

/* A problem at a line of file; false, to return. */
_printf_(5, 6)
static bool perr_at(struct parser *p, const char *file, unsigned line, const char *key, const char *fmt, ...) {
        size_t mine = p->errs->n - p->first_error;
        _cleanup_(freep) char *msg = NULL;
        va_list ap;
        int r;

        if (mine > CONFIG_MAX_ERRORS)
                return false;
        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0) {
                msg = NULL;
                p->oom = true;
                return false;
        }
        if (mine == CONFIG_MAX_ERRORS)
                r = errors_add(p->errs, &p->allocated_errors, file, line, NULL,
                               "too many errors, not listing further ones");
        else
                r = errors_add(p->errs, &p->allocated_errors, file, line, key, msg);
        if (r < 0)
                p->oom = true;
        return false;
}

/* A problem in the file being read. */
#define perr(p, line, key, ...) perr_at(p, (p)->path, line, key, __VA_ARGS__)

static const char *format_duration(uint64_t usec, char *buf, size_t len) {
        if (usec == 0)
                snprintf(buf, len, "0");
        else if (usec >= USEC_PER_HOUR && usec % USEC_PER_HOUR == 0)
                snprintf(buf, len, "%" PRIu64 "h", usec / USEC_PER_HOUR);
        else if (usec >= 2 * USEC_PER_MIN && usec % USEC_PER_MIN == 0)
                snprintf(buf, len, "%" PRIu64 "min", usec / USEC_PER_MIN);
        else if (usec >= USEC_PER_SEC && usec % USEC_PER_SEC == 0)
                snprintf(buf, len, "%" PRIu64 "s", usec / USEC_PER_SEC);
        else if (usec % USEC_PER_MSEC == 0)
                snprintf(buf, len, "%" PRIu64 "ms", usec / USEC_PER_MSEC);
        else
                snprintf(buf, len, "%" PRIu64 "us", usec);
        return buf;
}

/* Digits with an optional fraction ("0.5", ".5"), no sign, exponent or
 * locale: mantissa over a power of ten, so "0.05" is the literal 0.05. */
static int parse_number(const char *s, size_t len, double *ret) {
        uint64_t mant = 0;
        unsigned significant = 0, frac = 0;
        bool dot = false, digit = false;
        double scale = 1;

        for (const char *end = s + len; s < end; s++) {
                if (*s == '.' && !dot) {
                        dot = true;
                        continue;
                }
                if (!isdigit((unsigned char) *s))
                        return -EINVAL;
                digit = true;
                if (dot)
                        frac++;
                if (mant == 0 && *s == '0')
                        continue; /* leading zeros carry no precision */
                if (++significant > 15)
                        return -ERANGE;
                mant = mant * 10 + (uint64_t) (*s - '0');
        }
        if (!digit)
                return -EINVAL;
        for (unsigned i = 0; i < frac; i++)
                scale *= 10;
        *ret = (double) mant / scale;
        return 0;
}

/* A repetition of a repetition ("a++", "a*{2}"): undefined in POSIX, and
 * glibc's regcomp() takes gigabytes for a few dozen (found by fuzzing). */
static bool adjacent_repeats(const char *s) {
        bool after_repeat = false;

        for (; *s; s++) {
                if (*s == '\\') {
                        after_repeat = false;
                        if (!*++s)
                                break;
                } else if (*s == '[') {
                        /* a bracket expression: "]" right after "[" or "[^" is a member */
                        s++;
                        if (*s == '^')
                                s++;
                        if (*s == ']')
                                s++;
                        while (*s && *s != ']')
                                s++;
                        if (!*s)
                                break;
                        after_repeat = false;
                } else if (*s == '*' || *s == '+' || *s == '?' || *s == '{') {
                        if (after_repeat)
                                return true;
                        if (*s == '{')
                                while (s[1] && *s != '}')
                                        s++;
                        after_repeat = true;
                } else
                        after_repeat = false;
        }
        return false;
}

static bool valid_unit_name(const char *s) {
        static const char *const suffixes[] = { ".service", ".socket", ".scope", ".slice", ".mount", ".swap" };
        size_t n = strlen(s);
        const char *dot;

        if (n == 0 || n > 255 || strspn(s, UTIL_ALNUM ":-_.\\@") != n)
                return false;
        /* NAME.service without a suffix; only these types own a cgroup */
        dot = strrchr(s, '.');
        if (!dot)
                return true;
        if (dot == s)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (strcmp(dot, suffixes[i]) == 0)
                        return true;
        return false;
}

static bool valid_ifname(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > IFNAME_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
                return false;
        for (const char *q = s; *q; q++)
                if (*q == '/' || *q == ':' || isspace((unsigned char) *q) || !isprint((unsigned char) *q))
                        return false;
        return true;
}

/* value for def into base + def->offset; false (reported) when bad. */
#define bad(...) perr(p, line, def->name, __VA_ARGS__)
static bool parse_value(struct parser *p, unsigned line, const struct key_def *def, const char *value,
                        void *base) {
        void *target = (char *) base + def->offset;
        char lo[32], hi[32], *str;
        uint64_t u;
        double d;
        bool b;
        int r;

        if (!*value && def->type != VT_CPULIST && def->type != VT_IRQLIST && def->type != VT_PATH_OPT &&
            def->type != VT_PATHS)
                return bad("empty value");

        switch (def->type) {
        case VT_BOOL:
        case VT_TRISTATE:
                if (util_parse_bool(value, &b) < 0)
                        return bad("invalid boolean \"%s\" (expected yes or no)", value);
                if (def->type == VT_BOOL)
                        *(bool *) target = b;
                else
                        *(enum tristate *) target = b ? TRI_YES : TRI_NO;
                return true;

        case VT_UINT:
        case VT_FLOW_ENTRIES:
                r = util_parse_u64(value, (size_t) -1, &u);
                if (r == -EINVAL)
                        return bad("invalid number \"%s\"", value);
                if (def->type == VT_UINT) {
                        if (r < 0 || u < (uint64_t) def->min || u > (uint64_t) def->max)
                                return bad("\"%s\" is out of range (%.0f..%.0f)", value, def->min, def->max);
                        *(unsigned *) target = (unsigned) u;
                        return true;
                }
                if (r < 0 || (u != 0 && (u < FLOW_ENTRIES_MIN || u > FLOW_ENTRIES_MAX || (u & (u - 1)) != 0)))
                        return bad("\"%s\" must be 0 or a power of two from %d to %d", value,
                                   FLOW_ENTRIES_MIN, FLOW_ENTRIES_MAX);
                *(uint32_t *) target = (uint32_t) u;
                return true;

        case VT_PERCENT:
        case VT_DECIMAL: {
                bool pct = def->type == VT_PERCENT;
                size_t n = strlen(value);
                const char *unit = pct ? "%" : "";

                if (pct && n > 0 && value[n - 1] == '%')
                        n--;
                /* 64 characters or more are no percentage */
                r = pct && strlen(value) >= 64 ? -EINVAL : parse_number(value, n, &d);
                if (r == -EINVAL)
                        return bad("invalid %s \"%s\"", pct ? "percentage" : "number", value);
                if (r < 0 || d < def->min || d > def->max)
                        return bad("\"%s\" is out of range (%.15g%s..%.15g%s)", value, def->min,
                                   unit, def->max, unit);
                *(double *) target = pct ? d / 100 : d;
                return true;
        }

        case VT_DURATION:
                r = util_parse_duration_usec(value, &u);
                if (r == -EINVAL)
                        return bad("invalid duration \"%s\" (expected e.g. 500ms, 2s, 5min)",
                                   value);
                if (r < 0 || u < (uint64_t) def->min || u > (uint64_t) def->max)
                        return bad("\"%s\" is out of range (%s..%s)", value,
                                   format_duration((uint64_t) def->min, lo, sizeof(lo)),
                                   format_duration((uint64_t) def->max, hi, sizeof(hi)));
                *(uint64_t *) target = u;
                return true;

        case VT_PATHS: {
                _cleanup_(freep) char *copy = strdup(value), *joined = NULL;
                size_t jl = 0;
                char *save = NULL;

                if (!copy || !(joined = malloc(strlen(value) + 1))) {
                        p->oom = true;
                        return false;
                }
                for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                        if (w[0] != '/' || w[strlen(w) - 1] == '/')
                                return bad("\"%s\" is not an absolute path of a file", w);
                        if (strlen(w) >= PATH_MAX)
                                return bad("path is too long");
                        jl += (size_t) sprintf(joined + jl, "%s%s", jl ? " " : "", w);
                }
                free(*(char **) target);
                *(char **) target = jl ? joined : NULL;
                if (jl)
                        joined = NULL;
                return true;
        }

        case VT_PATH_OPT:
                if (!value[0]) {
                        free(*(char **) target);
                        *(char **) target = NULL;
                        return true;
                }
                if (value[strlen(value) - 1] == '/')
                        return bad("\"%s\" names a directory, not a file", value);
                /* fall through */
        case VT_PATH:
                if (value[0] != '/')
                        return bad("\"%s\" is not an absolute path", value);
                if (strlen(value) >= PATH_MAX)
                        return bad("path is too long");
                break;

        case VT_LOG_LEVEL:
                for (size_t i = 0; i < ELEMENTSOF(log_levels); i++)
                        if (strcmp(value, log_levels[i].name) == 0) {
                                *(int *) target = log_levels[i].level;
                                return true;
                        }
                return bad("invalid log level \"%s\" (expected debug, info, notice, warning or err)", value);

        case VT_CPULIST: {
                cpuset_t s;

                r = cpuset_parse_list(value, &s);
                if (r == -ERANGE)
                        return bad("CPU number too large in \"%s\" (at most %d)", value,
                                   CPUSET_MAX - 1);
                if (r < 0)
                        return bad("invalid CPU list \"%s\" (expected e.g. 0-3,8)", value);
                *(cpuset_t *) target = s;
                return true;
        }

        case VT_IRQLIST: {
                struct config_irqlist l = { .n = 0 };
                const char *s = value;

                while (*s) {
                        uint64_t a, b;
                        const char *e = s + strcspn(s, ","), *dash = memchr(s, '-', (size_t) (e - s));

                        if (util_parse_u64(s, (size_t) ((dash ? dash : e) - s), &a) < 0 ||
                            (dash && util_parse_u64(dash + 1, (size_t) (e - dash - 1), &b) < 0) || a > UINT_MAX)
                                return bad("invalid IRQ list \"%s\" (expected IRQ numbers, e.g. 11,57,120-123)",
                                           value);
                        if (!dash)
                                b = a;
                        if (b < a || b > UINT_MAX)
                                return bad("invalid IRQ range in \"%s\"", value);
                        for (uint64_t i = a; i <= b; i++) {
                                size_t k = l.n;

                                if (l.n >= CONFIG_BAN_IRQS_MAX)
                                        return bad("more than %d IRQs", CONFIG_BAN_IRQS_MAX);
                                while (k > 0 && l.v[k - 1] > i)
                                        k--;
                                if (k > 0 && l.v[k - 1] == i)
                                        continue;
                                memmove(&l.v[k + 1], &l.v[k], (l.n - k) * sizeof(l.v[0]));
                                l.v[k] = (unsigned) i;
                                l.n++;
                        }
                        s = *e ? e + 1 : e;
                        if (*e && !*s)
                                return bad("invalid IRQ list \"%s\" (trailing comma)", value);
                }
                *(struct config_irqlist *) target = l;
                return true;
        }

        case VT_COMM:
                if (strlen(value) > COMM_MAX)
                        return bad("\"%s\" is longer than %d characters, the most a process name (comm) holds",
                                   value, COMM_MAX);
                break;

        case VT_REGEX: {
                regex_t re;

                if (adjacent_repeats(value))
                        return bad("invalid regular expression \"%s\": a repetition (*, +, ?, {n}) follows another",
                                   value);
                r = regcomp(&re, value, REG_EXTENDED | REG_NOSUB);
                if (r != 0) {
                        char msg[256];

                        regerror(r, &re, msg, sizeof(msg));
                        return bad("invalid regular expression \"%s\": %s", value, msg);
                }
                regfree(&re);
                break;
        }

        case VT_UNIT:
                if (!valid_unit_name(value))
                        return bad("\"%s\" is not a unit name (expected e.g. nginx.service)",
                                   value);
                break;

        case VT_POLICY: {
                enum worker_policy wp = worker_policy_from_string(value);

                if (wp == WORKER_POLICY_INVALID)
                        return bad("invalid policy \"%s\" (expected spread, colocate or avoid-net)",
                                   value);
                *(enum worker_policy *) target = wp;
                return true;
        }

        case VT_IFNAME:
                if (!valid_ifname(value))
                        return bad("\"%s\" is not an interface name", value);
                break;
        }

        str = strdup(value);
        if (!str) {
                p->oom = true;
                return false;
        }
        free(*(char **) target);
        *(char **) target = str;
        return true;
}
#undef bad

/* Every [daemon] and [balance] key at its default, parsed from the tables. */
int config_defaults(struct config *c) {
        struct config_errors errs = {};
        struct parser p = { .c = c, .errs = &errs };

        memset(c, 0, sizeof(*c));
        for (int k = SEC_DAEMON; k <= SEC_BALANCE; k++)
                for (size_t i = 0; i < sections[k].n; i++)
                        parse_value(&p, 0, &sections[k].defs[i], sections[k].defs[i].def, c);
        /* a default the parser refuses is a bug in the tables */
        if (p.oom || errs.n > 0) {
                config_errors_free(&errs);
                return p.oom ? -ENOMEM : -EINVAL;
        }
        return 0;
}

/* An [interface] or [worker] header (false after a problem, reported, as
 * in parse_*()).  A name open from an earlier file is the same section; a
 * duplicate in one file is reported and read as a section of its own, so
 * that its keys are still checked.  A file's new sections go before the
 * earlier files' (first match wins): a drop-in's [interface eth1] before
 * the main file's [interface eth*]. */
_Static_assert(offsetof(struct config_interface, match) == 0 && offsetof(struct config_worker, name) == 0,
               "a section's name is read at its start");
static bool open_named(struct parser *p, enum section_kind kind, const char *arg, unsigned line) {
        bool iface = kind == SEC_INTERFACE;
        struct named_sections *ns = iface ? &p->interfaces : &p->workers;
        void **array = iface ? (void **) &p->c->interfaces : (void **) &p->c->workers;
        size_t *n = iface ? &p->c->n_interfaces : &p->c->n_workers, at;
        size_t size = iface ? sizeof(*p->c->interfaces) : sizeof(*p->c->workers);
        char *a, *name;

        if (!*arg)
                return perr(p, line, NULL, "%s",
                            iface ? "section [interface] needs a name pattern, e.g. [interface eth*]" :
                                    "section [worker] needs a name, e.g. [worker nginx]");
        if (arg[strcspn(arg, " \t\n\v\f\r")])
                return perr(p, line, NULL, "%s \"%s\" contains white space",
                            iface ? "interface pattern" : "worker name", arg);
        for (at = 0; at < *n; at++)
                if (strcmp(*(char **) ((char *) *array + at * size), arg) == 0)
                        break;
        if (at < *n && ns->seen[at].open_file != p->path) {
                ns->seen[at].open_file = p->path;
                ns->seen[at].open_line = line;
        } else {
                if (at < *n)
                        perr(p, line, NULL, "duplicate section [%s %s] (first on line %u)", sections[kind].name, arg,
                             ns->seen[at].open_line);
                at = ns->added;
                if (util_grow(array, &ns->allocated, *n + 1, size) < 0 ||
                    util_grow((void **) &ns->seen, &ns->allocated_seen, *n + 1, sizeof(*ns->seen)) < 0 ||
                    !(name = strdup(arg))) {
                        p->oom = true;
                        return false;
                }
                a = *array;
                memmove(a + (at + 1) * size, a + at * size, (*n - at) * size);
                memmove(&ns->seen[at + 1], &ns->seen[at], (*n - at) * sizeof(*ns->seen));
                ns->seen[at] = (struct section_seen) {
                        .file = p->path,
                        .line = line,
                        .open_file = p->path,
                        .open_line = line,
                };
                if (iface)
                        p->c->interfaces[at] = (struct config_interface) {
                                .match = name,
                                .manage = true,
                                .rps = TRI_INHERIT,
                                .xps = TRI_INHERIT,
                                .rfs = TRI_INHERIT,
                                .takeover = TRI_INHERIT,
                                .file = p->path,
                                .line = line,
                        };
                else
                        p->c->workers[at] = (struct config_worker) {
                                .name = name,
                                .policy = WORKER_POLICY_INVALID,
                                .file = p->path,
                                .line = line,
                        };
                (*n)++;
                ns->added++;
        }
        p->index = at;
        p->kind = kind;
        p->seen = ns->seen[at].keys;
        return true;
}

static bool parse_section(struct parser *p, unsigned line, char *s) {
        char *close, *name, *arg;

        p->kind = SEC_SKIP;

        /* The last ']' closes the header so globs such as eth[0-3] work. */
        close = strrchr(s, ']');
        if (!close)
                return perr(p, line, NULL, "section header without closing ']'");
        if (*util_strstrip(close + 1))
                return perr(p, line, NULL, "unexpected text after ']' in section header");
        *close = 0;
        name = util_strstrip(s + 1);
        arg = name + strcspn(name, " \t");
        if (*arg) {
                *arg++ = 0;
                arg = util_strstrip(arg);
        }

        if (strcmp(name, "daemon") == 0 || strcmp(name, "balance") == 0) {
                bool daemon = name[0] == 'd';
                unsigned *first = daemon ? &p->daemon_line : &p->balance_line;

                if (*arg)
                        return perr(p, line, NULL, "section [%s] takes no name", name);
                if (*first)
                        perr(p, line, NULL, "duplicate section [%s] (first on line %u)", name, *first);
                else
                        *first = line;
                /* a repeated section's keys are checked, duplicates too */
                p->kind = daemon ? SEC_DAEMON : SEC_BALANCE;
                p->seen = daemon ? p->daemon_seen : p->balance_seen;
                return true;
        }

        if (strcmp(name, "interface") == 0 || strcmp(name, "worker") == 0)
                return open_named(p, strcmp(name, "interface") == 0 ? SEC_INTERFACE : SEC_WORKER, arg, line);
        return perr(p, line, NULL, "unknown section [%s]", name);
}

static bool parse_key(struct parser *p, unsigned line, const char *key, const char *value) {
        const struct key_def *defs = sections[p->kind].defs;
        bool iface = p->kind == SEC_INTERFACE, worker = p->kind == SEC_WORKER;
        void *base = iface ? (void *) &p->c->interfaces[p->index] : worker ? (void *) &p->c->workers[p->index] : p->c;
        char label[300] = "";

        if (p->kind == SEC_SKIP)
                return true;
        if (p->kind == SEC_NONE)
                return perr(p, line, key, "key outside of any section");
        for (size_t i = 0; i < sections[p->kind].n; i++) {
                if (strcmp(defs[i].name, key) != 0)
                        continue;
                /* set again in a later file: the later value wins */
                if (p->seen[i].line && p->seen[i].file == p->path)
                        return perr(p, line, key, "duplicate key (first set on line %u)", p->seen[i].line);
                p->seen[i] = (struct seen) { .file = p->path, .line = line };
                p->seen[i].bad = !parse_value(p, line, &defs[i], value, base);
                return !p->seen[i].bad;
        }
        if (iface || worker)
                snprintf(label, sizeof(label), " %s",
                         iface ? p->c->interfaces[p->index].match : p->c->workers[p->index].name);
        return perr(p, line, key, "unknown key in [%s%s]", sections[p->kind].name, label);
}

static bool parse_line(struct parser *p, unsigned line, char *s) {
        char *eq, *key, *value;

        s = util_strstrip(s);
        if (!*s || *s == '#' || *s == ';')
                return true;
        if (*s == '[')
                return parse_section(p, line, s);
        eq = strchr(s, '=');
        if (!eq)
                return perr(p, line, NULL, "expected \"key = value\" or a [section] header, got \"%.40s\"", s);
        *eq = 0;
        key = util_strstrip(s);
        value = util_strstrip(eq + 1);
        if (!*key)
                return perr(p, line, NULL, "missing key before '='");
        if (value[0] == '"') {
                size_t n = strlen(value);

                if (n < 2 || value[n - 1] != '"')
                        return perr(p, line, key, "unterminated quoted value");
                value[n - 1] = 0;
                value++;
        }
        return parse_key(p, line, key, value);
}

/* An error's file in the order read; none last. */
static size_t file_rank(const struct parser *p, const char *file) {
        for (size_t i = 0; file && i < p->n_order; i++)
                if (strcmp(p->order[i], file) == 0)
                        return i;
        return p->n_order;
}

/* Where two keys conflict: at a, or at b when a was never set or b by a
 * later file. */
static const struct seen *blame(const struct parser *p, const struct seen *a, const struct seen *b) {
        if (!a->line || (b->line && file_rank(p, b->file) > file_rank(p, a->file)))
                return b;
        return a;
}

/* Checks between keys, on the merged values of every file. */
static void check_cross(struct parser *p) {
        const struct config *c = p->c;
        const struct seen *b = p->balance_seen, *at;
        char x[32], y[32];

        if (!b[BK_HOT_ENTER].bad && !b[BK_HOT_EXIT].bad && c->hot_exit >= c->hot_enter) {
                at = blame(p, &b[BK_HOT_EXIT], &b[BK_HOT_ENTER]);
                perr_at(p, at->file, at->line, "hot_exit", "%.15g%% must be below hot_enter (%.15g%%)",
                        c->hot_exit * 100, c->hot_enter * 100);
        }
        if (!b[BK_BALANCE_RATIO].bad && c->balance_ratio > 0 && c->balance_ratio < 1.2)
                perr_at(p, b[BK_BALANCE_RATIO].file, b[BK_BALANCE_RATIO].line, "balance_ratio",
                        "%.15g must be 0 (off) or at least 1.2", c->balance_ratio);
        if (!b[BK_MIN_DWELL].bad && !b[BK_MAX_DWELL].bad && c->max_dwell_usec < c->min_dwell_usec) {
                at = blame(p, &b[BK_MAX_DWELL], &b[BK_MIN_DWELL]);
                perr_at(p, at->file, at->line, "max_dwell", "%s must not be below min_dwell (%s)",
                        format_duration(c->max_dwell_usec, x, sizeof(x)),
                        format_duration(c->min_dwell_usec, y, sizeof(y)));
        }
        for (size_t i = 0; i < c->n_interfaces; i++) {
                const struct config_interface *ci = &c->interfaces[i];

                if (!cpuset_empty(&ci->cpus) && cpuset_subset(&ci->cpus, &c->banned_cpus))
                        perr_at(p, ci->file, ci->line, "cpus", "every CPU of [interface %s] is in banned_cpus",
                                ci->match);
        }
        /* each [worker], drop-ins and all */
        for (size_t i = 0; i < c->n_workers; i++) {
                const struct config_worker *w = &c->workers[i];
                const struct section_seen *ss = &p->workers.seen[i];
                const struct seen *s = ss->keys;

                if (!s[WK_MATCH_NAME].line && !s[WK_MATCH_CMDLINE].line && !s[WK_MATCH_UNIT].line &&
                    !s[WK_PIDFILE].line)
                        perr_at(p, ss->file, ss->line, NULL,
                                "[worker %s] needs at least one of match_name, match_cmdline, match_unit, pidfile",
                                w->name);
                if (!s[WK_POLICY].line)
                        perr_at(p, ss->file, ss->line, "policy",
                                "missing in [worker %s] (spread, colocate or avoid-net)", w->name);
                if (s[WK_INTERFACE].line && !s[WK_POLICY].bad && w->policy != WORKER_COLOCATE &&
                    w->policy != WORKER_POLICY_INVALID)
                        perr_at(p, s[WK_INTERFACE].file, s[WK_INTERFACE].line, "interface",
                                "only used with policy = colocate, not %s", worker_policy_to_string(w->policy));
        }
}

/* Stable by file, then line, so late problems land by their lines. */
static void sort_errors(const struct parser *p) {
        struct config_errors *errs = p->errs;

        for (size_t i = p->first_error + 1; i < errs->n; i++) {
                struct config_error e = errs->v[i];
                size_t rank = file_rank(p, e.file), j = i;

                while (j > p->first_error) {
                        const struct config_error *prev = &errs->v[j - 1];
                        size_t prank = file_rank(p, prev->file);

                        if (prank < rank || (prank == rank && prev->line <= e.line))
                                break;
                        errs->v[j] = errs->v[j - 1];
                        j--;
                }
                errs->v[j] = e;
        }
}

static int parser_init(struct parser *p, struct config *c, struct config_errors *errs) {
        int r = config_defaults(c);

        if (r < 0)
                return r;
        *p = (struct parser) {
                .c = c,
                .errs = errs,
                .first_error = errs->n,
                .kind = SEC_NONE,
        };
        return 0;
}

/* Notes a name (outliving the parse) in the order errors sort by. */
static void parser_note(struct parser *p, const char *name) {
        if (util_grow((void **) &p->order, &p->allocated_order, p->n_order + 1, sizeof(*p->order)) < 0) {
                p->oom = true;
                return;
        }
        p->order[p->n_order++] = name;
}

/* One file on top of the ones before: the main one is c->path, the others
 * c->dropins. */
static void parser_feed(struct parser *p, const char *path, bool dropin, const char *buf, size_t len) {
        struct config *c = p->c;
        size_t pos = 0;
        unsigned line = 0;
        char *copy;

        if (p->oom)
                return;
        if (!(copy = strdup(path))) {
                p->oom = true;
                return;
        }
        if (!dropin) {
                free(c->path);
                c->path = copy;
        } else if (util_grow((void **) &c->dropins, &p->allocated_dropins, c->n_dropins + 1,
                             sizeof(*c->dropins)) < 0) {
                free(copy);
                p->oom = true;
                return;
        } else
                c->dropins[c->n_dropins++] = copy;
        parser_note(p, copy);
        p->path = copy;
        p->kind = SEC_NONE;
        p->daemon_line = p->balance_line = 0;
        p->interfaces.added = p->workers.added = 0;

        /* a UTF-8 byte order mark from some editors */
        if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
                pos = 3;

        while (pos < len && !p->oom) {
                const char *nl = memchr(buf + pos, '\n', len - pos);
                size_t n = nl ? (size_t) (nl - (buf + pos)) : len - pos;
                char *s;

                line++;
                if (memchr(buf + pos, 0, n))
                        perr(p, line, NULL, "line contains a NUL byte");
                else if (!(s = strndup(buf + pos, n)))
                        p->oom = true;
                else {
                        parse_line(p, line, s);
                        free(s);
                }
                pos += n + (nl ? 1 : 0);
        }
}

/* The checks of every file, then *ret: 0, -EINVAL (p->errs) or -ENOMEM. */
static int parser_end(struct parser *p, struct config *ret) {
        int r = 0;

        if (!p->oom)
                check_cross(p);
        if (p->oom)
                r = -ENOMEM;
        else if (p->errs->n > p->first_error) {
                sort_errors(p);
                r = -EINVAL;
        }
        free(p->order);
        free(p->interfaces.seen);
        free(p->workers.seen);
        if (r < 0) {
                config_free(p->c);
                return r;
        }
        *ret = *p->c;
        return 0;
}

int config_parse(const char *path, const char *buf, size_t len, struct config *ret,
                 struct config_errors *errs) {
        struct config_errors local = {};
        struct config c;
        struct parser p;
        int r;

        r = parser_init(&p, &c, errs ? errs : &local);
        if (r < 0)
                return r;
        parser_feed(&p, path, false, buf, len);
        r = parser_end(&p, ret);
        config_errors_free(&local);
        return r;
}

/* A whole file below CONFIG_MAX_SIZE bytes into *ret (caller frees). */
static int read_file(const char *path, char **ret, size_t *ret_len) {
        _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC);
        char *buf;
        ssize_t n;

        if (fd < 0)
                return -errno;
        buf = malloc(CONFIG_MAX_SIZE);
        if (!buf)
                return -ENOMEM;
        n = util_read_full(fd, buf, CONFIG_MAX_SIZE);
        if (n < 0 || n == CONFIG_MAX_SIZE) {
                free(buf);
                return n < 0 ? (int) n : -EFBIG;
        }
        *ret = buf;
        *ret_len = (size_t) n;
        return 0;
}

/* What a read_file() failure says. */
static const char *read_problem(int r, char *buf, size_t len) {
        if (r == -EFBIG)
                snprintf(buf, len, "file is larger than %d bytes", CONFIG_MAX_SIZE);
        else
                snprintf(buf, len, "cannot read: %s", strerror(-r));
        return buf;
}

/* *.conf; hidden files are editors' and package managers' leftovers */
static int is_dropin(const struct dirent *de) {
        size_t n = strlen(de->d_name);

        return de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0;
}

/* strcmp order, as systemd sorts */
static int compare_names(const struct dirent **a, const struct dirent **b) {
        return strcmp((*a)->d_name, (*b)->d_name);
}

int config_load(const char *path, bool allow_missing, struct config *ret, struct config_errors *errs) {
        size_t allocated = 0, len = 0;
        char dir[PATH_MAX], problem[300];
        struct dirent **names = NULL;
        char *buf = NULL;
        struct parser p;
        struct config c;
        int r, q, n, n_names = 0;

        r = read_file(path, &buf, &len);
        if (r < 0 && !(r == -ENOENT && allow_missing)) {
                if (r != -ENOMEM)
                        errors_add(errs, &allocated, path, 0, NULL, read_problem(r, problem, sizeof(problem)));
                return r;
        }
        q = parser_init(&p, &c, errs);
        if (q < 0) {
                free(buf);
                return q;
        }
        if (r == 0)
                parser_feed(&p, path, false, buf, len);
        free(buf);

        n = snprintf(dir, sizeof(dir), "%s.d", path);
        r = n < 0 || (size_t) n >= sizeof(dir) ? -ENAMETOOLONG : 0;
        if (r == 0 && (n_names = scandir(dir, &names, is_dropin, compare_names)) < 0)
                r = errno == ENOENT ? 0 : -errno;
        if (r < 0 && r != -ENOMEM) {
                parser_note(&p, dir);
                perr_at(&p, dir, 0, NULL, "cannot read the drop-in directory: %s", strerror(-r));
        } else if (r == -ENOMEM)
                p.oom = true;
        for (int i = 0; i < n_names && !p.oom; i++) {
                char file[PATH_MAX];
                struct stat st;

                n = snprintf(file, sizeof(file), "%s/%s", dir, names[i]->d_name);
                if (n < 0 || (size_t) n >= sizeof(file)) {
                        parser_note(&p, dir);
                        perr_at(&p, dir, 0, NULL, "%s: path is too long", names[i]->d_name);
                        continue;
                }
                /* a link to /dev/null masks one; a dangling one fails the read */
                if (stat(file, &st) == 0 && !S_ISREG(st.st_mode))
                        continue;
                q = read_file(file, &buf, &len);
                if (q < 0) {
                        if (q == -ENOMEM) {
                                p.oom = true;
                                break;
                        }
                        /* noted after the files before it, and kept for the sort */
                        parser_feed(&p, file, true, "", 0);
                        perr(&p, 0, NULL, "%s", read_problem(q, problem, sizeof(problem)));
                        continue;
                }
                parser_feed(&p, file, true, buf, len);
                free(buf);
        }
        for (int i = 0; i < n_names; i++)
                free(names[i]);
        free(names);

        return parser_end(&p, ret);
}

int config_load_print(const char *path, const char *prefix, struct config *ret, FILE *err) {
        struct config_errors errs = {};
        int r = config_load(path ? path : CONFIG_DEFAULT_PATH, !path, ret, &errs);

        if (r < 0 && errs.n > 0)
                config_errors_print(&errs, err);
        else if (r < 0)
                fprintf(err, "%s%s: %s\n", prefix, path ? path : CONFIG_DEFAULT_PATH, strerror(-r));
        config_errors_free(&errs);
        return r;
}

const struct config_interface *config_interface_for(const struct config *c, const char *ifname) {
        if (!c || !ifname)
                return NULL;
        for (size_t i = 0; i < c->n_interfaces; i++)
                if (fnmatch(c->interfaces[i].match, ifname, 0) == 0)
                        return &c->interfaces[i];
        return NULL;
}

/* A value in the file's syntax; false when unset. */
static bool format_value(const struct key_def *def, const void *base, char *buf, size_t len) {
        const void *v = (const char *) base + def->offset;
        const char *s = NULL;

        switch (def->type) {
        case VT_BOOL:
                s = *(const bool *) v ? "yes" : "no";
                break;
        case VT_TRISTATE:
                if (*(const enum tristate *) v != TRI_INHERIT)
                        s = *(const enum tristate *) v == TRI_YES ? "yes" : "no";
                break;
        case VT_UINT:
        case VT_FLOW_ENTRIES: /* uint32_t is unsigned */
                snprintf(buf, len, "%u", *(const unsigned *) v);
                return true;
        case VT_PERCENT:
                /* %.10g: 0.8 * 100 is 80.00000000000001 in binary */
                snprintf(buf, len, "%.10g%%", *(const double *) v * 100);
                return true;
        case VT_DECIMAL:
                snprintf(buf, len, "%.10g", *(const double *) v);
                return true;
        case VT_DURATION:
                format_duration(*(const uint64_t *) v, buf, len);
                return true;
        case VT_LOG_LEVEL:
                for (size_t i = 0; !s && i < ELEMENTSOF(log_levels); i++)
                        if (log_levels[i].level == *(const int *) v)
                                s = log_levels[i].name;
                break;
        case VT_CPULIST:
                if (cpuset_format_list(v, buf, len) < 0)
                        snprintf(buf, len, "?");
                return true;
        case VT_IRQLIST: {
                const struct config_irqlist *l = v;
                size_t off = 0;

                buf[0] = 0;
                for (size_t i = 0; i < l->n && off < len; i++)
                        off += (size_t) snprintf(buf + off, len - off, "%s%u", i ? "," : "", l->v[i]);
                if (off >= len)
                        snprintf(buf, len, "?");
                return true;
        }
        case VT_POLICY:
                s = worker_policy_to_string(*(const enum worker_policy *) v);
                break;
        default:
                s = *(char *const *) v;
        }
        if (s)
                snprintf(buf, len, "%s", s);
        return s != NULL;
}

static void format_keys(FILE *f, const struct key_def *defs, size_t n, const void *base) {
        char buf[CPUSET_LIST_MAX];

        for (size_t i = 0; i < n; i++)
                if (format_value(&defs[i], base, buf, sizeof(buf)))
                        fprintf(f, "%s =%s%s\n", defs[i].name, *buf ? " " : "", buf);
}

void config_format(FILE *f, const struct config *c) {
        fprintf(f, "[daemon]\n");
        format_keys(f, daemon_keys, ELEMENTSOF(daemon_keys), c);
        fprintf(f, "\n[balance]\n");
        format_keys(f, balance_keys, ELEMENTSOF(balance_keys), c);
        for (size_t i = 0; i < c->n_interfaces; i++) {
                fprintf(f, "\n[interface %s]\n", c->interfaces[i].match);
                format_keys(f, interface_keys, ELEMENTSOF(interface_keys), &c->interfaces[i]);
        }
        for (size_t i = 0; i < c->n_workers; i++) {
                fprintf(f, "\n[worker %s]\n", c->workers[i].name);
                format_keys(f, worker_keys, ELEMENTSOF(worker_keys), &c->workers[i]);
        }
}

/* One key as status.json has it: durations as NAME_s seconds, percentages
 * as shares, tristates "inherit", "yes" or "no". */
static void json_value(struct json_writer *w, const struct key_def *def, const void *base) {
        const void *v = (const char *) base + def->offset;
        const struct config_irqlist *l = v;
        char name[64], buf[32];

        switch (def->type) {
        case VT_BOOL:
                json_key_bool(w, def->name, *(const bool *) v);
                break;
        case VT_UINT:
        case VT_FLOW_ENTRIES:
                json_key_uint(w, def->name, *(const unsigned *) v);
                break;
        case VT_PERCENT:
        case VT_DECIMAL:
                json_key_double(w, def->name, *(const double *) v);
                break;
        case VT_DURATION:
                snprintf(name, sizeof(name), "%s_s", def->name);
                json_key_double(w, name, (double) *(const uint64_t *) v / USEC_PER_SEC);
                break;
        case VT_LOG_LEVEL:
                json_key_string(w, def->name, log_level_to_string(*(const int *) v));
                break;
        case VT_CPULIST:
                json_key_cpuset(w, def->name, v);
                break;
        case VT_IRQLIST:
                json_key_begin_array(w, def->name);
                for (size_t i = 0; i < l->n; i++)
                        json_uint(w, l->v[i]);
                json_end_array(w);
                break;
        case VT_TRISTATE:
        case VT_POLICY:
                /* as in the file; an unset tristate inherits */
                json_key_string(w, def->name, format_value(def, base, buf, sizeof(buf)) ? buf : "inherit");
                break;
        default: /* the strings; null when unset */
                json_key_string(w, def->name, *(char *const *) v);
        }
}

/* n sections of a type as members keyed by their names */
static void json_named(struct json_writer *w, const char *key, enum section_kind k, const void *array,
                       size_t size, size_t n) {
        json_key_begin_object(w, key);
        for (size_t i = 0; i < n; i++) {
                const char *base = (const char *) array + i * size;

                json_key_begin_object(w, *(char *const *) base);
                for (size_t j = 0; j < sections[k].n; j++)
                        json_value(w, &sections[k].defs[j], base);
                json_end_object(w);
        }
        json_end_object(w);
}

void config_json(struct json_writer *w, const struct config *c) {
        json_key_string(w, "path", c->path);
        json_key_begin_array(w, "dropins");
        for (size_t i = 0; i < c->n_dropins; i++)
                json_string(w, c->dropins[i]);
        json_end_array(w);
        for (int k = SEC_DAEMON; k <= SEC_BALANCE; k++)
                for (size_t i = 0; i < sections[k].n; i++)
                        json_value(w, &sections[k].defs[i], c);
        json_named(w, "interfaces", SEC_INTERFACE, c->interfaces, sizeof(*c->interfaces), c->n_interfaces);
        json_named(w, "workers", SEC_WORKER, c->workers, sizeof(*c->workers), c->n_workers);
}
