/* Knobs: the kernel objects irqsteerd changes, in one place (knob.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "knob.h"
#include "procfs.h"
#include "rootfs.h"
#include "util.h"

/* ---- keys ---- */

/* What names an object of each kind, and what its value is. */
enum shape { SHAPE_IRQ, SHAPE_QUEUE, SHAPE_GLOBAL, SHAPE_NIC, SHAPE_THREAD };
enum value { VALUE_LIST, VALUE_MASK, VALUE_NUMBER };

static const struct {
        const char *name;
        const char *action; /* an action on it, in logs, metrics and JSON */
        enum shape shape;
        enum value value;
        const char *file; /* a queue's or NIC's file, a global's path */
} kinds[KNOB_KIND_MAX] = {
        [KNOB_IRQ] = { "irq", "irq-affinity", SHAPE_IRQ, VALUE_LIST, NULL },
        [KNOB_RPS] = { "rps", "rps", SHAPE_QUEUE, VALUE_MASK, KNOB_RPS_FILE },
        [KNOB_XPS] = { "xps", "xps", SHAPE_QUEUE, VALUE_MASK, KNOB_XPS_FILE },
        [KNOB_FLOWCNT] = { "flowcnt", "rps-flow-cnt", SHAPE_QUEUE, VALUE_NUMBER, KNOB_FLOWCNT_FILE },
        [KNOB_SOCKFLOW] = { "sockflow", "rps-sock-flow-entries", SHAPE_GLOBAL, VALUE_NUMBER,
                            KNOB_SOCKFLOW_PATH },
        [KNOB_THREAD] = { "thread", "thread-affinity", SHAPE_THREAD, VALUE_LIST, NULL },
        [KNOB_DEFAFF] = { "defaffinity", "default-affinity", SHAPE_GLOBAL, VALUE_MASK, KNOB_DEFAFF_PATH },
        [KNOB_THREADED] = { "threaded", "threaded-napi", SHAPE_NIC, VALUE_NUMBER, KNOB_THREADED_FILE },
};

static bool kind_valid(enum knob_kind k) {
        return k >= 0 && k < KNOB_KIND_MAX;
}

const char *knob_kind_to_string(enum knob_kind k) {
        return kind_valid(k) ? kinds[k].name : NULL;
}

const char *action_type_to_string(enum knob_kind k) {
        return kind_valid(k) ? kinds[k].action : NULL;
}

enum knob_kind knob_kind_from_string(const char *s) {
        for (int k = 0; k < KNOB_KIND_MAX; k++)
                if (strcmp(s, kinds[k].name) == 0)
                        return k;
        return KNOB_KIND_INVALID;
}

bool knob_nic_valid(const char *s) {
        size_t n = strnlen(s, IF_NAMESIZE);

        /* The name becomes a path component under sys/class/net. */
        if (n == 0 || n >= IF_NAMESIZE || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] == '/' || s[i] <= ' ' || s[i] == 0x7f)
                        return false;
        return true;
}

int knob_key_format(const struct knob_key *k, char *buf, size_t len) {
        const char *name = kind_valid(k->kind) ? kinds[k->kind].name : NULL;
        int n;

        if (!name)
                return -EINVAL;
        switch (kinds[k->kind].shape) {
        case SHAPE_IRQ:
                /* no ACTIONS: read from a version 1 line */
                n = k->actions[0] ? snprintf(buf, len, "irq %u %s", k->irq, k->actions) :
                                    snprintf(buf, len, "irq %u", k->irq);
                break;
        case SHAPE_QUEUE:
                n = snprintf(buf, len, "%s %s %d", name, k->nic, k->queue);
                break;
        case SHAPE_GLOBAL:
                n = snprintf(buf, len, "%s", name);
                break;
        case SHAPE_NIC:
                n = snprintf(buf, len, "%s %s", name, k->nic);
                break;
        default:
                n = snprintf(buf, len, "thread %d %d %llu", (int) k->pid, (int) k->tid, k->starttime);
                break;
        }
        if (n < 0 || (size_t) n >= len)
                return -ENOBUFS;
        return 0;
}

bool knob_key_equal(const struct knob_key *a, const struct knob_key *b) {
        if (a->kind != b->kind || !kind_valid(a->kind))
                return false;
        switch (kinds[a->kind].shape) {
        case SHAPE_IRQ:
                /* the same number serving another device is another object */
                return a->irq == b->irq && strcmp(a->actions, b->actions) == 0;
        case SHAPE_QUEUE:
                return a->queue == b->queue && strncmp(a->nic, b->nic, IF_NAMESIZE) == 0;
        case SHAPE_GLOBAL:
                return true;
        case SHAPE_NIC:
                return strncmp(a->nic, b->nic, IF_NAMESIZE) == 0;
        default:
                /* A reused TID is another object. */
                return a->pid == b->pid && a->tid == b->tid && a->starttime == b->starttime;
        }
}

bool knob_word_valid(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '!' || *s > '~')
                        return false;
        return true;
}

/* ---- paths ---- */

const char *knob_irq_path(char *buf, size_t size, unsigned irq, const char *leaf) {
        snprintf(buf, size, "proc/irq/%u/%s", irq, leaf);
        return buf;
}

const char *knob_queue_path(char *buf, size_t size, const char *nic, bool tx, size_t index, const char *leaf) {
        snprintf(buf, size, "sys/class/net/%s/queues/%s-%zu/%s", nic, tx ? "tx" : "rx", index, leaf);
        return buf;
}

/* ---- values ---- */

static bool value_is(enum knob_kind k, enum value v) {
        return kind_valid(k) && kinds[k].value == v;
}

static int parse_u32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r = util_parse_u64(s, (size_t) -1, &v);

        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = v;
        return 0;
}

/* An IRQ, a thread and new IRQs always have some CPU (the kernel refuses a
 * default mask without an online CPU). */
static bool needs_cpu(enum knob_kind k) {
        return value_is(k, VALUE_LIST) || k == KNOB_DEFAFF;
}

int knob_value_cpus(enum knob_kind kind, const char *value, cpuset_t *ret) {
        if (!value)
                return -EINVAL;
        if (value_is(kind, VALUE_LIST))
                return cpuset_parse_list(value, ret);
        if (value_is(kind, VALUE_MASK))
                return cpuset_parse_mask(value, ret);
        return -EINVAL;
}

bool knob_value_valid(enum knob_kind kind, const char *value) {
        cpuset_t s;
        uint32_t v;

        if (!value || !*value || strchr(value, ' ') || strchr(value, '\n'))
                return false;
        if (value_is(kind, VALUE_NUMBER))
                /* threaded: 0 off, 1 on, 2 on with busy polling (6.17) */
                return parse_u32(value, &v) == 0 && (kind != KNOB_THREADED || v <= 2);
        return knob_value_cpus(kind, value, &s) == 0 && !(needs_cpu(kind) && cpuset_empty(&s));
}

bool knob_value_equal(enum knob_kind kind, const char *a, const char *b) {
        cpuset_t sa, sb;
        uint32_t va, vb;

        if (!a || !b)
                return false;
        if (value_is(kind, VALUE_NUMBER))
                return parse_u32(a, &va) == 0 && parse_u32(b, &vb) == 0 && va == vb;
        return knob_value_cpus(kind, a, &sa) == 0 && knob_value_cpus(kind, b, &sb) == 0 && cpuset_equal(&sa, &sb);
}

static int list_dup(const cpuset_t *s, char **ret) {
        _cleanup_(freep) char *buf = malloc(CPUSET_LIST_MAX);
        int r;

        if (!buf)
                return -ENOMEM;
        r = cpuset_format_list(s, buf, CPUSET_LIST_MAX);
        if (r < 0)
                return r;
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

/* s as a hex mask as wide as like (the file's value): the kernel prints
 * nr_cpu_ids bits, and the same width reads back the same way. */
static int format_mask_like(const cpuset_t *s, const char *like, char *buf, size_t len) {
        size_t chunks = 1, drop = 0, first_digits;
        const char *comma;
        int r;

        while (*like == ' ')
                like++;
        for (const char *p = like; *p; p++)
                chunks += *p == ',';
        comma = strchr(like, ',');
        first_digits = comma ? (size_t) (comma - like) : strcspn(like, "\n ");
        if (first_digits == 0 || first_digits > 8)
                first_digits = 8;

        r = cpuset_format_mask(s, (int) (chunks * 32), buf, len);
        if (r < 0)
                return r;
        if (cpuset_last(s) >= (int) (chunks * 32))
                return 0; /* the set is wider than the file: standard form */
        /* every chunk came as 8 digits; the first as wide as the file's */
        while (8 - drop > first_digits && buf[drop] == '0')
                drop++;
        memmove(buf, buf + drop, strlen(buf + drop) + 1);
        return 0;
}

/* ---- object access ---- */

/* The one spelling of each object's file (file: which of an IRQ's). */
static int key_path(const struct knob_key *k, const char *file, char *buf, size_t len) {
        switch (kinds[k->kind].shape) {
        case SHAPE_IRQ:
                knob_irq_path(buf, len, k->irq, file);
                break;
        case SHAPE_QUEUE:
                knob_queue_path(buf, len, k->nic, k->kind == KNOB_XPS, (size_t) k->queue,
                                kinds[k->kind].file);
                break;
        case SHAPE_GLOBAL:
                snprintf(buf, len, "%s", kinds[k->kind].file);
                break;
        case SHAPE_NIC:
                snprintf(buf, len, "sys/class/net/%s/%s", k->nic, kinds[k->kind].file);
                break;
        default:
                snprintf(buf, len, "proc/%d/task/%d/stat", (int) k->pid, (int) k->tid);
                break;
        }
        /* a cut path would name another file */
        if (strlen(buf) + 1 >= len)
                return -ENAMETOOLONG;
        return 0;
}

bool knob_key_valid(const struct knob_key *k) {
        if (!kind_valid(k->kind))
                return false;
        switch (kinds[k->kind].shape) {
        case SHAPE_QUEUE:
                return knob_nic_valid(k->nic) && k->queue >= 0;
        case SHAPE_NIC:
                return knob_nic_valid(k->nic);
        case SHAPE_THREAD:
                return k->pid > 0 && k->tid > 0;
        default:
                return true;
        }
}

/* Reads a sysfs/procfs attribute, trailing white space removed. */
static int read_value(int rootfd, const char *path, char **ret) {
        char *buf;
        size_t len;
        int r;

        r = rootfs_read(rootfd, path, &buf, &len);
        if (r < 0)
                return r;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
                buf[--len] = 0;
        *ret = buf;
        return 0;
}

/* The value of the key's file (file: which of an IRQ's), as read_value. */
static int read_key(int rootfd, const struct knob_key *k, const char *file, char **ret) {
        char path[128];
        int r = key_path(k, file, path, sizeof(path));

        return r < 0 ? r : read_value(rootfd, path, ret);
}

/* 0 when the key's thread still lives; -ESRCH when gone or its TID reused. */
static int thread_check(int rootfd, const struct knob_key *k) {
        _cleanup_(freep) char *buf = NULL;
        struct procfs_pid_stat st;
        char path[128];
        size_t len;
        int r;

        r = key_path(k, NULL, path, sizeof(path));
        if (r < 0)
                return r;
        r = rootfs_read(rootfd, path, &buf, &len);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        r = procfs_parse_pid_stat(buf, len, &st);
        if (r < 0)
                return r;
        return st.starttime == k->starttime ? 0 : -ESRCH;
}

/* sched_{get,set}affinity through a CPU_ALLOC set: a plain cpu_set_t
 * stops at 1024 CPUs.  *s is read to set, written after a get. */
static int thread_affinity(pid_t tid, bool set, cpuset_t *s) {
        size_t sz = CPU_ALLOC_SIZE(CPUSET_MAX);
        cpu_set_t *cs = CPU_ALLOC(CPUSET_MAX);
        int r = 0;

        if (!cs)
                return -ENOMEM;
        CPU_ZERO_S(sz, cs);
        if (set) {
                CPUSET_FOREACH(c, s)
                        CPU_SET_S(c, sz, cs);
        }
        if ((set ? sched_setaffinity(tid, sz, cs) : sched_getaffinity(tid, sz, cs)) < 0)
                r = -errno;
        else if (!set) {
                cpuset_zero(s);
                for (int c = 0; c < CPUSET_MAX; c++)
                        if (CPU_ISSET_S(c, sz, cs))
                                cpuset_set(s, c);
        }
        CPU_FREE(cs);
        return r;
}

int knob_read(int rootfd, bool root_is_host, const struct knob_key *k, char **ret) {
        _cleanup_(freep) char *v = NULL;
        cpuset_t s;
        uint32_t n = 0;
        int r;

        if (!knob_key_valid(k))
                return -EINVAL;
        if (k->kind == KNOB_THREAD) {
                if (!root_is_host)
                        return -EOPNOTSUPP;
                r = thread_check(rootfd, k);
                if (r == 0)
                        r = thread_affinity(k->tid, false, &s);
                return r < 0 ? r : list_dup(&s, ret);
        }
        r = read_key(rootfd, k, k->kind == KNOB_IRQ ? KNOB_IRQ_LIST : NULL, &v);
        if (r == -ENOENT && k->kind == KNOB_IRQ) {
                /* old kernels and some fixtures: the hex mask only */
                r = read_key(rootfd, k, KNOB_IRQ_MASK, &v);
                if (r < 0)
                        return r;
                if (cpuset_parse_mask(v, &s) < 0 || cpuset_empty(&s))
                        return -EBADMSG;
                return list_dup(&s, ret);
        }
        if (r < 0)
                return r;
        if (!knob_value_valid(k->kind, v))
                return -EBADMSG;
        if (value_is(k->kind, VALUE_NUMBER)) {
                /* canonical decimal: "0010" and "10" are one value */
                (void) parse_u32(v, &n);
                return knob_target(k->kind, NULL, n, NULL, ret);
        }
        *ret = v;
        v = NULL;
        return 0;
}

/* Writes value + "\n", as `echo` does; the kernel takes either. */
static int write_value(int rootfd, const char *path, const char *value) {
        _cleanup_(freep) char *data = NULL;

        if (asprintf(&data, "%s\n", value) < 0) {
                data = NULL;
                return -ENOMEM;
        }
        return rootfs_write(rootfd, path, data);
}

int knob_write(int rootfd, bool root_is_host, const struct knob_key *k, const char *value) {
        char path[128];
        cpuset_t s;
        int r;

        if (!knob_key_valid(k) || !knob_value_valid(k->kind, value))
                return -EINVAL;
        if (k->kind == KNOB_THREAD) {
                if (!root_is_host)
                        return -EOPNOTSUPP;
                if (cpuset_parse_list(value, &s) < 0)
                        return -EINVAL;
                /* right before the call: a reused TID is another task
                 * (sched_setaffinity takes no pidfd to close the window) */
                r = thread_check(rootfd, k);
                return r < 0 ? r : thread_affinity(k->tid, true, &s);
        }
        r = key_path(k, k->kind == KNOB_IRQ ? KNOB_IRQ_LIST : NULL, path, sizeof(path));
        if (r < 0)
                return r;
        if (k->kind == KNOB_IRQ && (r = rootfs_exists(rootfd, path)) <= 0) {
                _cleanup_(freep) char *cur = NULL;
                char mask[CPUSET_MAX / 4 + CPUSET_MAX / 32 + 16];

                if (r < 0)
                        return r;
                r = key_path(k, KNOB_IRQ_MASK, path, sizeof(path));
                if (r < 0)
                        return r;
                r = read_value(rootfd, path, &cur);
                if (r < 0)
                        return r;
                if (cpuset_parse_list(value, &s) < 0)
                        return -EINVAL;
                r = format_mask_like(&s, cur, mask, sizeof(mask));
                if (r < 0)
                        return r;
                return write_value(rootfd, path, mask);
        }
        return write_value(rootfd, path, value);
}

int knob_target(enum knob_kind kind, const cpuset_t *cpus, uint32_t value, const char *current, char **ret) {
        char mask[CPUSET_MAX / 4 + CPUSET_MAX / 32 + 16];
        int r;

        if (!kind_valid(kind))
                return -EINVAL;
        if (needs_cpu(kind) && cpuset_empty(cpus))
                return -EINVAL;
        switch (kinds[kind].value) {
        case VALUE_LIST:
                return list_dup(cpus, ret);
        case VALUE_MASK:
                r = format_mask_like(cpus, current, mask, sizeof(mask));
                if (r < 0)
                        return r;
                *ret = strdup(mask);
                return *ret ? 0 : -ENOMEM;
        default:
                if (kind == KNOB_THREADED && value > 2)
                        return -EINVAL;
                if (asprintf(ret, "%" PRIu32, value) < 0)
                        return -ENOMEM;
                return 0;
        }
}

/* ---- identity ---- */

/* Escapes one handler name into out (journal syntax). */
static void escape_name(const char *name, char *out, size_t len) {
        size_t o = 0;

        if (strcmp(name, "-") == 0) {
                /* "-" alone means no handler */
                snprintf(out, len, "\\x2d");
                return;
        }

        for (const unsigned char *p = (const unsigned char *) name; *p && o + 5 < len; p++) {
                if (*p < '!' || *p > '~' || *p == ',' || *p == '\\')
                        o += snprintf(out + o, len - o, "\\x%02x", *p);
                else
                        out[o++] = *p;
        }
        out[o] = 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int knob_irq_actions(int rootfd, unsigned irq, char *buf, size_t len) {
        char path[64], *names[32];
        struct dirent *de;
        size_t n = 0, o = 0;
        DIR *d;
        int r;

        knob_irq_path(path, sizeof(path), irq, "");
        r = rootfs_fdopendir(rootfd, path, &d);
        if (r < 0)
                return r;
        /* the handlers' directories: every other entry is a file */
        while ((de = readdir(d)) && n < ELEMENTSOF(names)) {
                struct stat st;

                if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
                        continue;
                if (de->d_type != DT_DIR &&
                    (de->d_type != DT_UNKNOWN || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                     !S_ISDIR(st.st_mode)))
                        continue;
                names[n] = strdup(de->d_name);
                if (!names[n])
                        break;
                n++;
        }
        closedir(d);
        qsort(names, n, sizeof(*names), cmp_str);
        buf[0] = 0;
        for (size_t i = 0; i < n; i++) {
                char esc[KNOB_ACTIONS_MAX];

                escape_name(names[i], esc, sizeof(esc));
                if (o + (i > 0) + strlen(esc) < len)
                        o += snprintf(buf + o, len - o, "%s%s", i > 0 ? "," : "", esc);
                free(names[i]);
        }
        if (o == 0)
                snprintf(buf, len, "-");
        return 0;
}

int knob_irq_effective(int rootfd, unsigned irq, cpuset_t *ret) {
        _cleanup_(freep) char *v = NULL;
        char path[64];
        int r;

        knob_irq_path(path, sizeof(path), irq, KNOB_IRQ_EFFECTIVE_LIST);
        r = read_value(rootfd, path, &v);
        if (r < 0)
                return r;
        if (cpuset_parse_list(v, ret) < 0)
                return -EBADMSG;
        return 0;
}
