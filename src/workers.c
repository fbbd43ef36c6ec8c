/* Worker discovery: processes matching the [worker] sections, and their
 * threads with the CPUs each may run on. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "knob.h"
#include "log.h"
#include "procfs.h"
#include "rootfs.h"
#include "util.h"
#include "workers.h"

#define PF_KTHREAD 0x00200000U

int workers_parse_status_cpus(const char *buf, size_t len, cpuset_t *ret) {
        static const char key[] = "Cpus_allowed_list:";
        const char *p = buf, *end = buf + len;

        while (p < end) {
                const char *nl = memchr(p, '\n', end - p);
                size_t l = nl ? (size_t) (nl - p) : (size_t) (end - p);

                if (l >= sizeof(key) - 1 && memcmp(p, key, sizeof(key) - 1) == 0) {
                        _cleanup_(freep) char *val = strndup(p + sizeof(key) - 1, l - (sizeof(key) - 1));

                        if (!val)
                                return -ENOMEM;
                        return cpuset_parse_list(val, ret) < 0 ? -EINVAL : 0;
                }
                p += l + 1;
        }
        return -ENOENT;
}

bool workers_cgroup_has_unit(const char *buf, size_t len, const char *unit) {
        size_t ul = strlen(unit);
        bool add_service = ul > 0 && !strchr(unit, '.');
        const char *p = buf, *end = buf + len;

        if (ul == 0)
                return false;
        while (p < end) {
                const char *nl = memchr(p, '\n', end - p);
                const char *le = nl ? nl : end;
                const char *path;

                /* "ID:CONTROLLERS:PATH" */
                path = memchr(p, ':', le - p);
                if (path)
                        path = memchr(path + 1, ':', le - path - 1);
                if (path) {
                        const char *c = path + 1;

                        while (c < le) {
                                const char *s;
                                size_t n;

                                while (c < le && *c == '/')
                                        c++;
                                s = c;
                                while (c < le && *c != '/')
                                        c++;
                                n = c - s;
                                if (n >= ul && memcmp(s, unit, ul) == 0 &&
                                    (n == ul || (add_service && n == ul + 8 && memcmp(s + ul, ".service", 8) == 0)))
                                        return true;
                        }
                }
                p = le + 1;
        }
        return false;
}

/* Per-worker state for one scan: the compiled regex and the pidfile's pid. */
struct matcher {
        const struct config_worker *w;
        bool have_regex;
        regex_t regex;
        pid_t pidfile_pid;            /* 0: none, or the pidfile was unreadable */
};

static bool parse_pid(const char *name, size_t len, pid_t *ret) {
        uint64_t v;

        if (util_parse_u64(name, len, &v) < 0 || v == 0 || v > INT32_MAX)
                return false;
        *ret = (pid_t) v;
        return true;
}

/* The pid the file starts with (after white space), 0 for none. */
static pid_t read_pidfile(int rootfd, const char *path) {
        _cleanup_(freep) char *buf = NULL;
        pid_t pid = 0;
        char *p;

        /* a host path read under the root like the rest: fixtures can hold it */
        if (rootfs_read(rootfd, path, &buf, NULL) < 0)
                return 0;
        p = buf + strspn(buf, " \t\n\v\f\r");
        (void) parse_pid(p, strspn(p, "0123456789"), &pid);
        return pid;
}

/* The facts about one process that matching needs. */
struct procinfo {
        pid_t pid;
        char comm[16];
        char *cmdline;                /* NULs joined by spaces */
        char *cgroup;
        size_t cgroup_len;
        struct procfs_pid_stat st;
};

static int read_procinfo(int rootfd, pid_t pid, struct procinfo *pi) {
        _cleanup_(freep) char *stat = NULL;
        char path[64];
        size_t len;
        int r;

        pi->pid = pid;
        r = rootfs_readf(rootfd, &stat, &len, "proc/%d/stat", (int) pid);
        if (r < 0)
                return r;
        r = procfs_parse_pid_stat(stat, len, &pi->st);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "proc/%d/comm", (int) pid);
        r = rootfs_read_line(rootfd, path, pi->comm, sizeof(pi->comm));
        if (r < 0)
                return r;
        pi->cmdline = malloc(WORKERS_CMDLINE_MAX + 1);
        if (!pi->cmdline)
                return -ENOMEM;
        snprintf(path, sizeof(path), "proc/%d/cmdline", (int) pid);
        r = rootfs_read_prefix(rootfd, path, pi->cmdline, WORKERS_CMDLINE_MAX + 1, &len);
        if (r < 0)
                return r;
        while (len > 0 && pi->cmdline[len - 1] == 0)
                len--;
        for (size_t i = 0; i < len; i++)
                if (pi->cmdline[i] == 0)
                        pi->cmdline[i] = ' ';
        pi->cmdline[len] = 0;
        return 0;
}

static void procinfo_done(struct procinfo *pi) {
        free(pi->cmdline);
        free(pi->cgroup);
        pi->cmdline = pi->cgroup = NULL;
}

static bool is_kernel_thread(const struct procinfo *pi) {
        /* kthreadd (PID 2) parents every kernel thread; an empty command
         * line is a kernel thread or a zombie: neither can be pinned */
        return pi->pid == 2 || pi->st.ppid == 2 || (pi->st.flags & PF_KTHREAD) || pi->st.state == 'Z' ||
               pi->cmdline[0] == 0;
}

/* 1 match, 0 no match, -errno when the process vanished. */
static int matches(int rootfd, struct matcher *m, struct procinfo *pi) {
        const struct config_worker *w = m->w;

        if ((w->match_name && strcmp(pi->comm, w->match_name) != 0) ||
            (w->pidfile && (m->pidfile_pid == 0 || m->pidfile_pid != pi->pid)) ||
            (m->have_regex && regexec(&m->regex, pi->cmdline, 0, NULL, 0) != 0))
                return 0;
        if (w->match_unit) {
                if (!pi->cgroup) {
                        int r = rootfs_readf(rootfd, &pi->cgroup, &pi->cgroup_len, "proc/%d/cgroup", (int) pi->pid);
                        if (r < 0)
                                return r;
                }
                if (!workers_cgroup_has_unit(pi->cgroup, pi->cgroup_len, w->match_unit))
                        return 0;
        }
        return w->match_name || w->pidfile || m->have_regex || w->match_unit;
}

static int cmp_thread(const void *a, const void *b) {
        const struct worker_thread *x = a, *y = b;
        return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_proc(const void *a, const void *b) {
        const struct worker_proc *x = a, *y = b;
        if (x->worker != y->worker)
                return (x->worker > y->worker) - (x->worker < y->worker);
        return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Lists proc/PID/task/ with each thread's allowed CPUs; -ENOENT when none is left. */
static int read_threads(int rootfd, struct worker_proc *wp) {
        char path[64];
        size_t allocated = 0;
        struct dirent *de;
        DIR *d;
        int r;

        snprintf(path, sizeof(path), "proc/%d/task", (int) wp->pid);
        r = rootfs_fdopendir(rootfd, path, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_(freep) char *status = NULL, *stat = NULL;
                struct worker_thread t = { 0 };
                struct procfs_pid_stat st;
                size_t len;

                if (!parse_pid(de->d_name, (size_t) -1, &t.tid))
                        continue;
                /* the starttime first: a TID without it by the write is another task */
                r = rootfs_readf(rootfd, &stat, &len, "proc/%d/task/%d/stat", (int) wp->pid, (int) t.tid);
                if (r == -ENOENT || r == -ESRCH)
                        continue;
                if (r < 0 || procfs_parse_pid_stat(stat, len, &st) < 0) {
                        log_debug("workers: skipping thread %d of %d: unreadable stat", (int) t.tid, (int) wp->pid);
                        continue;
                }
                t.starttime = st.starttime;
                r = rootfs_readf(rootfd, &status, &len, "proc/%d/task/%d/status", (int) wp->pid, (int) t.tid);
                if (r == -ENOENT || r == -ESRCH)
                        continue; /* the thread exited meanwhile */
                if (r < 0 || workers_parse_status_cpus(status, len, &t.allowed) < 0) {
                        log_debug("workers: skipping thread %d of %d: unreadable status", (int) t.tid,
                                  (int) wp->pid);
                        continue;
                }
                if (util_grow((void **) &wp->threads, &allocated, wp->n_threads + 1, sizeof(*wp->threads)) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                wp->threads[wp->n_threads++] = t;
        }
        closedir(d);
        if (wp->n_threads == 0)
                return -ENOENT;
        qsort(wp->threads, wp->n_threads, sizeof(*wp->threads), cmp_thread);
        return 0;
}

int workers_discover(int rootfd, const struct config *c, struct worker_set *ret) {
        struct worker_set ws = { 0 };
        struct matcher *m = NULL;
        size_t allocated = 0;
        struct dirent *de;
        DIR *d = NULL;
        int r = 0;

        if (c->n_workers == 0) {
                *ret = ws;
                return 0;
        }
        m = calloc(c->n_workers, sizeof(*m));
        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_workers; i++) {
                m[i].w = &c->workers[i];
                if (m[i].w->match_cmdline) {
                        if (regcomp(&m[i].regex, m[i].w->match_cmdline, REG_EXTENDED | REG_NOSUB) != 0) {
                                r = -EINVAL;
                                goto out;
                        }
                        m[i].have_regex = true;
                }
                if (m[i].w->pidfile)
                        m[i].pidfile_pid = read_pidfile(rootfd, m[i].w->pidfile);
        }

        r = rootfs_fdopendir(rootfd, "proc", &d);
        if (r < 0)
                goto out;
        while ((de = readdir(d))) {
                struct procinfo pi = { 0 };
                struct worker_proc wp = { .worker = -1 };
                pid_t pid;

                if (!parse_pid(de->d_name, (size_t) -1, &pid))
                        continue;
                if (read_procinfo(rootfd, pid, &pi) < 0 || is_kernel_thread(&pi)) {
                        procinfo_done(&pi);
                        continue; /* gone meanwhile, or not ours to pin */
                }
                for (size_t i = 0; i < c->n_workers && wp.worker < 0; i++) {
                        int k = matches(rootfd, &m[i], &pi);

                        if (k < 0)
                                break;
                        if (k > 0)
                                wp.worker = (int) i; /* the first section that matches wins */
                }
                if (wp.worker < 0) {
                        procinfo_done(&pi);
                        continue;
                }
                wp.pid = pid;
                wp.starttime = pi.st.starttime;
                util_cescape(pi.comm, strlen(pi.comm), false, wp.comm, sizeof(wp.comm));
                procinfo_done(&pi);
                r = read_threads(rootfd, &wp);
                if (r < 0) {
                        free(wp.threads);
                        if (r == -ENOMEM)
                                goto out;
                        r = 0;
                        continue;
                }
                if (util_grow((void **) &ws.procs, &allocated, ws.n_procs + 1, sizeof(*ws.procs)) < 0) {
                        free(wp.threads);
                        r = -ENOMEM;
                        goto out;
                }
                ws.procs[ws.n_procs++] = wp;
        }
        if (ws.n_procs > 0)
                qsort(ws.procs, ws.n_procs, sizeof(*ws.procs), cmp_proc);
out:
        if (d)
                closedir(d);
        for (size_t i = 0; i < c->n_workers; i++)
                if (m[i].have_regex)
                        regfree(&m[i].regex);
        free(m);
        if (r < 0) {
                workers_free(&ws);
                return r;
        }
        *ret = ws;
        return 0;
}

void workers_free(struct worker_set *ws) {
        for (size_t i = 0; i < ws->n_procs; i++)
                free(ws->procs[i].threads);
        free(ws->procs);
        *ws = (struct worker_set){ 0 };
}

void workers_set_knob(struct worker_set *ws, const struct knob_key *k, const cpuset_t *cpus) {
        if (k->kind != KNOB_THREAD)
                return;
        for (size_t i = 0; i < ws->n_procs; i++) {
                struct worker_proc *p = &ws->procs[i];

                if (p->pid != k->pid)
                        continue;
                for (size_t t = 0; t < p->n_threads; t++)
                        if (p->threads[t].tid == k->tid && p->threads[t].starttime == k->starttime)
                                p->threads[t].allowed = *cpus;
        }
}

/* Whether pid's /proc/PID/root shows another file than ours at path (its
 * mount namespace mounts something else there); false when unknown. */
static bool sees_other(int rootfd, pid_t pid, const char *path, const struct stat *ours) {
        char p[PATH_MAX];
        struct stat st;

        if (!path || !ours)
                return false;
        snprintf(p, sizeof(p), "proc/%d/root/%s", (int) pid, path);
        if (fstatat(rootfd, p, &st, 0) < 0)
                return false;
        return st.st_dev != ours->st_dev || st.st_ino != ours->st_ino;
}

int workers_find_comm(int rootfd, const char *comm, const char *same_path, pid_t *ret_pid) {
        DIR *d = NULL;
        struct dirent *de;
        struct stat ours;
        bool have_ours;
        pid_t best = 0;
        int r;

        have_ours = same_path && fstatat(rootfd, same_path, &ours, 0) == 0;
        r = rootfs_fdopendir(rootfd, "proc", &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                char path[32], buf[32];
                pid_t pid;

                if (!parse_pid(de->d_name, (size_t) -1, &pid))
                        continue;
                snprintf(path, sizeof(path), "proc/%d/comm", (int) pid);
                if (rootfs_read_line(rootfd, path, buf, sizeof(buf)) < 0)
                        continue; /* gone meanwhile */
                if (strcmp(buf, comm) == 0 && (best == 0 || pid < best) &&
                    !sees_other(rootfd, pid, same_path, have_ours ? &ours : NULL))
                        best = pid;
        }
        closedir(d);
        if (best == 0)
                return 0;
        *ret_pid = best;
        return 1;
}
