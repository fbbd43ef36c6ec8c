/* Actuators: IRQ affinity, RPS/RFS/XPS masks, thread affinity, each change
 * journalled in the undo journal before it is made. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apply.h"
#include "log.h"
#include "rootfs.h"
#include "undo.h"
#include "util.h"
#include "workers.h"

struct apply {
        int rootfd;
        bool root_is_host;
        bool dry_run;
        struct undo *undo;
        int journal_error;       /* -errno of the last journal save, 0 when it worked */
        bool failed_in_journal;  /* the last apply_action wrote nothing: its save failed */
};

bool apply_root_is_host(int rootfd) {
        struct stat a, b;

        if (fstat(rootfd, &a) < 0 || stat("/", &b) < 0)
                return false;
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ---- values ---- */

static bool value_is_list(enum undo_kind k) {
        return k == UNDO_IRQ || k == UNDO_THREAD;
}

static bool value_is_mask(enum undo_kind k) {
        return k == UNDO_RPS || k == UNDO_XPS;
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

bool apply_value_valid(enum undo_kind kind, const char *value) {
        cpuset_t s;
        uint32_t v;

        if (!value || !*value || strchr(value, ' ') || strchr(value, '\n'))
                return false;
        if (value_is_list(kind))
                /* An IRQ or a thread always has some CPU. */
                return cpuset_parse_list(value, &s) == 0 && !cpuset_empty(&s);
        if (value_is_mask(kind))
                return cpuset_parse_mask(value, &s) == 0;
        if (kind == UNDO_FLOWCNT || kind == UNDO_SOCKFLOW)
                return parse_u32(value, &v) == 0;
        return false;
}

bool apply_value_equal(enum undo_kind kind, const char *a, const char *b) {
        if (!a || !b)
                return false;
        if (value_is_list(kind) || value_is_mask(kind)) {
                cpuset_t sa, sb;
                int (*parse)(const char *, cpuset_t *) = value_is_list(kind) ? cpuset_parse_list : cpuset_parse_mask;

                return parse(a, &sa) == 0 && parse(b, &sb) == 0 && cpuset_equal(&sa, &sb);
        }
        if (kind == UNDO_FLOWCNT || kind == UNDO_SOCKFLOW) {
                uint32_t va, vb;
                return parse_u32(a, &va) == 0 && parse_u32(b, &vb) == 0 && va == vb;
        }
        return false;
}

/* Room for a cpulist of CPUSET_MAX CPUs in the worst case ("0,2,4,..."). */
#define LIST_MAX (CPUSET_MAX / 2 * 5 + 16)

static int list_dup(const cpuset_t *s, char **ret) {
        _cleanup_(freep) char *buf = malloc(LIST_MAX);
        int r;

        if (!buf)
                return -ENOMEM;
        r = cpuset_format_list(s, buf, LIST_MAX);
        if (r < 0)
                return r;
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

/* Formats s as a hex mask as wide as like (the file's current value): the
 * kernel prints nr_cpu_ids bits, so "3" on 2 CPUs and "ff,ffffffff" on 40;
 * keeping the width makes a written file read back the same way. */
static int format_mask_like(const cpuset_t *s, const char *like, char *buf, size_t len) {
        size_t chunks = 1, first_digits, digits;
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
        comma = strchr(buf, ',');
        digits = comma ? (size_t) (comma - buf) : strlen(buf);
        {
                size_t got_chunks = 1, drop = 0;

                for (const char *p = buf; *p; p++)
                        got_chunks += *p == ',';
                if (got_chunks != chunks)
                        return 0; /* the set is wider than the file: standard form */
                while (digits - drop > first_digits && buf[drop] == '0')
                        drop++;
                memmove(buf, buf + drop, strlen(buf + drop) + 1);
        }
        return 0;
}

/* ---- object access ---- */

static int key_path(const struct undo_key *k, const char *file, char *buf, size_t len) {
        int n;

        switch (k->kind) {
        case UNDO_IRQ:
                n = snprintf(buf, len, "proc/irq/%u/%s", k->irq, file);
                break;
        case UNDO_RPS:
                n = snprintf(buf, len, "sys/class/net/%s/queues/rx-%d/rps_cpus", k->nic, k->queue);
                break;
        case UNDO_FLOWCNT:
                n = snprintf(buf, len, "sys/class/net/%s/queues/rx-%d/rps_flow_cnt", k->nic, k->queue);
                break;
        case UNDO_XPS:
                n = snprintf(buf, len, "sys/class/net/%s/queues/tx-%d/xps_cpus", k->nic, k->queue);
                break;
        case UNDO_SOCKFLOW:
                n = snprintf(buf, len, "proc/sys/net/core/rps_sock_flow_entries");
                break;
        case UNDO_THREAD:
                n = snprintf(buf, len, "proc/%d/task/%d/stat", (int) k->pid, (int) k->tid);
                break;
        default:
                return -EINVAL;
        }
        if (n < 0 || (size_t) n >= len)
                return -ENAMETOOLONG;
        return 0;
}

static bool key_valid(const struct undo_key *k) {
        switch (k->kind) {
        case UNDO_IRQ:
        case UNDO_SOCKFLOW:
                return true;
        case UNDO_RPS:
        case UNDO_XPS:
        case UNDO_FLOWCNT:
                return undo_nic_valid(k->nic) && k->queue >= 0;
        case UNDO_THREAD:
                return k->pid > 0 && k->tid > 0;
        default:
                return false;
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

static int thread_starttime(int rootfd, const struct undo_key *k, unsigned long long *ret) {
        _cleanup_(freep) char *buf = NULL;
        struct workers_stat st;
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
        r = workers_parse_stat(buf, len, &st);
        if (r < 0)
                return r;
        *ret = st.starttime;
        return 0;
}

static int thread_get(pid_t tid, char **ret) {
        size_t sz = CPU_ALLOC_SIZE(CPUSET_MAX);
        cpu_set_t *set = CPU_ALLOC(CPUSET_MAX);
        cpuset_t s;
        int r = 0;

        if (!set)
                return -ENOMEM;
        CPU_ZERO_S(sz, set);
        if (sched_getaffinity(tid, sz, set) < 0) {
                r = -errno;
                CPU_FREE(set);
                return r;
        }
        cpuset_zero(&s);
        for (int c = 0; c < CPUSET_MAX; c++)
                if (CPU_ISSET_S(c, sz, set))
                        cpuset_set(&s, c);
        CPU_FREE(set);
        return list_dup(&s, ret);
}

static int thread_set(pid_t tid, const cpuset_t *s) {
        /* CPU_ALLOC: a plain cpu_set_t stops at 1024 CPUs. */
        size_t sz = CPU_ALLOC_SIZE(CPUSET_MAX);
        cpu_set_t *set = CPU_ALLOC(CPUSET_MAX);
        int r = 0;

        if (!set)
                return -ENOMEM;
        CPU_ZERO_S(sz, set);
        CPUSET_FOREACH(c, s)
                CPU_SET_S(c, sz, set);
        if (sched_setaffinity(tid, sz, set) < 0)
                r = -errno;
        CPU_FREE(set);
        return r;
}

int apply_object_read(int rootfd, bool root_is_host, const struct undo_key *k, char **ret) {
        _cleanup_(freep) char *v = NULL;
        char path[128];
        cpuset_t s;
        uint32_t n = 0;
        int r;

        if (!key_valid(k))
                return -EINVAL;
        switch (k->kind) {
        case UNDO_IRQ:
                r = key_path(k, "smp_affinity_list", path, sizeof(path));
                if (r < 0)
                        return r;
                r = read_value(rootfd, path, &v);
                if (r == -ENOENT) {
                        /* Old kernels and some fixtures: the hex mask only. */
                        r = key_path(k, "smp_affinity", path, sizeof(path));
                        if (r < 0)
                                return r;
                        r = read_value(rootfd, path, &v);
                        if (r < 0)
                                return r;
                        if (cpuset_parse_mask(v, &s) < 0 || cpuset_empty(&s))
                                return -EBADMSG;
                        return list_dup(&s, ret);
                }
                if (r < 0)
                        return r;
                if (!apply_value_valid(k->kind, v))
                        return -EBADMSG;
                break;
        case UNDO_RPS:
        case UNDO_XPS:
        case UNDO_FLOWCNT:
        case UNDO_SOCKFLOW:
                r = key_path(k, NULL, path, sizeof(path));
                if (r < 0)
                        return r;
                r = read_value(rootfd, path, &v);
                if (r < 0)
                        return r;
                if (!apply_value_valid(k->kind, v))
                        return -EBADMSG;
                if (k->kind == UNDO_FLOWCNT || k->kind == UNDO_SOCKFLOW) {
                        /* Canonical decimal: "0010" and "10" are one value. */
                        (void) parse_u32(v, &n);
                        free(v);
                        if (asprintf(&v, "%" PRIu32, n) < 0) {
                                v = NULL;
                                return -ENOMEM;
                        }
                }
                break;
        case UNDO_THREAD: {
                unsigned long long st;

                if (!root_is_host)
                        return -EOPNOTSUPP;
                r = thread_starttime(rootfd, k, &st);
                if (r < 0)
                        return r;
                if (st != k->starttime)
                        return -ESRCH; /* the TID was reused */
                return thread_get(k->tid, ret);
        }
        default:
                return -EINVAL;
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

int apply_object_write(int rootfd, bool root_is_host, const struct undo_key *k, const char *value) {
        char path[128];
        cpuset_t s;
        int r;

        if (!key_valid(k) || !apply_value_valid(k->kind, value))
                return -EINVAL;
        switch (k->kind) {
        case UNDO_IRQ:
                r = key_path(k, "smp_affinity_list", path, sizeof(path));
                if (r < 0)
                        return r;
                r = rootfs_exists(rootfd, path);
                if (r < 0)
                        return r;
                if (r == 0) {
                        _cleanup_(freep) char *cur = NULL;
                        char mask[CPUSET_MAX / 4 + CPUSET_MAX / 32 + 16];

                        r = key_path(k, "smp_affinity", path, sizeof(path));
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
        case UNDO_RPS:
        case UNDO_XPS:
        case UNDO_FLOWCNT:
        case UNDO_SOCKFLOW:
                r = key_path(k, NULL, path, sizeof(path));
                if (r < 0)
                        return r;
                return write_value(rootfd, path, value);
        case UNDO_THREAD: {
                unsigned long long st;

                if (!root_is_host)
                        return -EOPNOTSUPP;
                if (cpuset_parse_list(value, &s) < 0)
                        return -EINVAL;
                /* Checked right before the call: a TID reused since the key
                 * was made belongs to another task.  (The window between
                 * this read and sched_setaffinity is a few microseconds; the
                 * call takes no pidfd to close it.) */
                r = thread_starttime(rootfd, k, &st);
                if (r < 0)
                        return r;
                if (st != k->starttime)
                        return -ESRCH;
                return thread_set(k->tid, &s);
        }
        default:
                return -EINVAL;
        }
}

/* ---- actions ---- */

static int action_key(struct apply *ap, const struct action *a, struct undo_key *k) {
        *k = (struct undo_key){ 0 };
        switch (a->type) {
        case ACTION_IRQ_AFFINITY: {
                int r;

                k->kind = UNDO_IRQ;
                k->irq = a->irq;
                /* what it serves now: the journal's identity of the IRQ */
                r = undo_irq_actions(ap->rootfd, a->irq, k->actions, sizeof(k->actions));
                if (r < 0)
                        return r;
                break;
        }
        case ACTION_RPS:
        case ACTION_XPS:
        case ACTION_RPS_FLOW_CNT:
                k->kind = a->type == ACTION_RPS ? UNDO_RPS : a->type == ACTION_XPS ? UNDO_XPS : UNDO_FLOWCNT;
                if (strnlen(a->nic, sizeof(a->nic)) >= sizeof(a->nic))
                        return -EINVAL;
                strcpy(k->nic, a->nic);
                k->queue = a->queue;
                break;
        case ACTION_SOCK_FLOW_ENTRIES:
                k->kind = UNDO_SOCKFLOW;
                break;
        case ACTION_THREAD_AFFINITY:
                k->kind = UNDO_THREAD;
                k->pid = a->pid;
                k->tid = a->tid;
                /* the task the policy decided for, not whatever holds the
                 * TID now */
                k->starttime = a->starttime;
                break;
        default:
                return -EINVAL;
        }
        if (!key_valid(k))
                return -EINVAL;
        if (k->kind == UNDO_THREAD && !ap->root_is_host)
                return -EOPNOTSUPP;
        return 0;
}

static int action_target(const struct action *a, const char *current, char **ret) {
        switch (a->type) {
        case ACTION_IRQ_AFFINITY:
        case ACTION_THREAD_AFFINITY:
                if (cpuset_empty(&a->cpus))
                        return -EINVAL;
                return list_dup(&a->cpus, ret);
        case ACTION_RPS:
        case ACTION_XPS: {
                char mask[CPUSET_MAX / 4 + CPUSET_MAX / 32 + 16];
                int r = format_mask_like(&a->cpus, current, mask, sizeof(mask));

                if (r < 0)
                        return r;
                *ret = strdup(mask);
                return *ret ? 0 : -ENOMEM;
        }
        case ACTION_RPS_FLOW_CNT:
        case ACTION_SOCK_FLOW_ENTRIES:
                if (asprintf(ret, "%" PRIu32, a->value) < 0)
                        return -ENOMEM;
                return 0;
        default:
                return -EINVAL;
        }
}

int apply_new(int rootfd, bool root_is_host, const char *state_dir, bool dry_run, struct apply **ret) {
        struct undo_identity id;
        struct apply *ap;
        int r;

        if (rootfd < 0)
                return -EBADF;
        ap = calloc(1, sizeof(*ap));
        if (!ap)
                return -ENOMEM;
        ap->rootfd = rootfd;
        ap->root_is_host = root_is_host;
        ap->dry_run = dry_run;
        r = undo_identity_get(rootfd, &id);
        if (r >= 0)
                r = undo_new(state_dir, &id, dry_run, &ap->undo);
        if (r < 0) {
                free(ap);
                return r;
        }
        /* a journal of another root or boot is never appended to: the
         * caller deals with it first (undo_recover, undo_set_aside) */
        if (!dry_run && ap->undo->refused != UNDO_OK) {
                r = undo_refusal_errno(ap->undo->refused);
                apply_free(ap);
                return r;
        }
        if (!dry_run) {
                /* a kill during a full save leaves its temporary behind */
                r = undo_remove_temporaries(state_dir);
                if (r < 0)
                        log_debug_errno(r, "apply: cannot look for stale journal temporaries: %m");
                else if (r > 0)
                        log_debug("apply: removed %d stale journal temporaries", r);
        }
        if (ap->undo->n_entries > 0)
                log_debug("apply: adopting %zu objects from an existing undo journal", ap->undo->n_entries);
        *ret = ap;
        return 0;
}

void apply_free(struct apply *ap) {
        if (!ap)
                return;
        undo_free(ap->undo);
        free(ap);
}

const struct undo *apply_undo(const struct apply *ap) {
        return ap->undo;
}

int apply_action(struct apply *ap, const struct action *a) {
        _cleanup_(freep) char *cur = NULL, *target = NULL, *now = NULL;
        struct undo_entry *e;
        struct undo_key k;
        char key[128];
        int r;

        ap->failed_in_journal = false;
        r = action_key(ap, a, &k);
        if (r < 0)
                return r;
        r = apply_object_read(ap->rootfd, ap->root_is_host, &k, &cur);
        if (r < 0)
                return r;
        r = action_target(a, cur, &target);
        if (r < 0)
                return r;
        if (apply_value_equal(k.kind, cur, target))
                return APPLY_UNCHANGED;
        if (ap->dry_run)
                return APPLY_DRY_RUN;

        /* The original must be on disk before the object changes. */
        r = undo_begin(ap->undo, &k, cur, target, &e);
        ap->journal_error = MIN(r, 0);
        if (r < 0) {
                ap->failed_in_journal = true;
                return r;
        }
        if (undo_key_format(&k, key, sizeof(key)) < 0)
                snprintf(key, sizeof(key), "?");
        r = apply_object_write(ap->rootfd, ap->root_is_host, &k, target);
        if (r < 0) {
                log_debug_errno(r, "apply: %s %s -> %s failed: %m", key, cur, target);
                (void) undo_end(ap->undo, e, false, NULL);
                return r;
        }
        if (apply_object_read(ap->rootfd, ap->root_is_host, &k, &now) < 0)
                now = NULL;
        /* The object changed whatever the journal says: the journal's
         * PENDING names the value written, so a restore still knows it as
         * ours.  A failed save is the state directory's problem, not the
         * object's (apply_journal_error). */
        r = undo_end(ap->undo, e, true, now);
        if (r < 0)
                ap->journal_error = r;
        log_debug("apply: %s %s -> %s%s%s", key, cur, target, now ? ", reads back " : "", now ? now : "");
        if (now && !apply_value_equal(k.kind, now, target))
                return APPLY_READBACK_DIFFERS;
        return APPLY_DONE;
}

int apply_journal_error(const struct apply *ap) {
        return ap->journal_error;
}

bool apply_failed_in_journal(const struct apply *ap) {
        return ap->failed_in_journal;
}

const char *apply_journal_path(const struct apply *ap) {
        return ap->undo->path;
}

int apply_changed_externally(struct apply *ap, const struct action *a) {
        _cleanup_(freep) char *cur = NULL;
        struct undo_entry *e;
        struct undo_key k;
        int r;

        r = action_key(ap, a, &k);
        if (r < 0)
                return r;
        e = undo_find(ap->undo, &k);
        if (!e)
                return 0;
        r = apply_object_read(ap->rootfd, ap->root_is_host, &k, &cur);
        if (r < 0)
                return r;
        return !apply_value_equal(k.kind, cur, e->last) &&
               !(e->pending && apply_value_equal(k.kind, cur, e->pending));
}

int apply_restore_all(struct apply *ap, struct undo_report *ret) {
        return undo_restore(ap->undo, ap->rootfd, ap->root_is_host, ret);
}

int apply_irq_effective_ok(int rootfd, unsigned irq, const cpuset_t *want, cpuset_t *ret_eff) {
        _cleanup_(freep) char *v = NULL;
        char path[64];
        cpuset_t eff;
        int r;

        snprintf(path, sizeof(path), "proc/irq/%u/effective_affinity_list", irq);
        r = read_value(rootfd, path, &v);
        if (r < 0)
                return r;
        if (cpuset_parse_list(v, &eff) < 0)
                return -EBADMSG;
        if (ret_eff)
                *ret_eff = eff;
        return !cpuset_empty(&eff) && cpuset_subset(&eff, want);
}

enum apply_eff_event apply_effective_step(struct apply_eff_watch *w, int ok, bool fired, unsigned grace) {
        if (ok < 0)
                return APPLY_EFF_UNKNOWN;
        if (ok > 0) {
                if (w->mismatch) {
                        w->mismatch = false;
                        return APPLY_EFF_RECOVERED;
                }
                return APPLY_EFF_SETTLED;
        }
        if (w->mismatch)
                return APPLY_EFF_WAIT;
        if (fired)
                w->off_ticks++;
        if (w->off_ticks < MAX(grace, 1u))
                return APPLY_EFF_WAIT;
        w->mismatch = true;
        return APPLY_EFF_MISMATCH;
}
