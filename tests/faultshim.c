/* LD_PRELOAD fault shim for the torture suite (tests/torture.py); never
 * linked into the installed programs.
 *
 * IRQSTEER_FAULTS="SUBSTR=ERR[*N];..." makes write() to a file whose
 * opened path contains SUBSTR fail with ERR (a number or EIO, EPERM,
 * ENOSPC, ENOENT, EINVAL, EBUSY, ENODEV), the first N times only with *N.
 * ERR "GONE" renames the file's directory to DIR.gone first and fails
 * with EIO, as a write to an IRQ freed under the writer does.  Every
 * injected fault is counted on stderr as "faultshim: PATH: ERR".
 *
 * IRQSTEER_VECTORS="LIMIT[;CPU=LIMIT]..." makes a write to a tree's
 * proc/irq/N/smp_affinity_list act as x86 (arch/x86/kernel/apic/vector.c):
 * the IRQ stays on its CPU (its effective_affinity_list) when the list
 * holds it, else goes to the listed CPU with the most vectors left, the
 * CPUs' counts taken from every IRQ's effective_affinity_list in the tree;
 * with none left the write fails with ENOSPC, said on stderr as
 * "vectorshim: IRQ N refused on CPUc (USED of LIMIT)".  A write taken
 * updates effective_affinity_list. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RULES 16
#define MAX_FDS 4096

struct rule {
        char substr[256];
        int err; /* -1: GONE */
        long left; /* < 0: unlimited */
};

static struct rule rules[MAX_RULES];
static int n_rules = -1;
static signed char fd_rule[MAX_FDS]; /* rule index + 1, 0 = none */
static char fd_path[MAX_FDS][128];

static int parse_err(const char *s) {
        static const struct { const char *n; int e; } names[] = {
                { "EIO", EIO }, { "EPERM", EPERM }, { "ENOSPC", ENOSPC }, { "ENOENT", ENOENT },
                { "EINVAL", EINVAL }, { "EBUSY", EBUSY }, { "ENODEV", ENODEV }, { "GONE", -1 },
        };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                if (!strcmp(s, names[i].n))
                        return names[i].e;
        return atoi(s);
}

static void load_rules(void) {
        const char *env = getenv("IRQSTEER_FAULTS");
        char buf[4096], *save = NULL;

        n_rules = 0;
        if (!env)
                return;
        snprintf(buf, sizeof buf, "%s", env);
        for (char *tok = strtok_r(buf, ";", &save); tok && n_rules < MAX_RULES; tok = strtok_r(NULL, ";", &save)) {
                char *eq = strrchr(tok, '='), *star;
                if (!eq)
                        continue;
                *eq = 0;
                star = strchr(eq + 1, '*');
                if (star)
                        *star = 0;
                snprintf(rules[n_rules].substr, sizeof rules[n_rules].substr, "%s", tok);
                rules[n_rules].err = parse_err(eq + 1);
                rules[n_rules].left = star ? atol(star + 1) : -1;
                n_rules++;
        }
}

static void track(int fd, const char *path) {
        if (n_rules < 0)
                load_rules();
        if (fd < 0 || fd >= MAX_FDS)
                return;
        fd_rule[fd] = 0;
        for (int i = 0; i < n_rules; i++)
                if (path && strstr(path, rules[i].substr)) {
                        fd_rule[fd] = (signed char) (i + 1);
                        snprintf(fd_path[fd], sizeof fd_path[fd], "%s", path);
                        break;
                }
}

int openat(int dirfd, const char *path, int flags, ...) {
        static int (*real)(int, const char *, int, ...);
        mode_t mode = 0;
        int fd;

        if (flags & (O_CREAT | O_TMPFILE)) {
                va_list ap;
                va_start(ap, flags);
                mode = va_arg(ap, mode_t);
                va_end(ap);
        }
        if (!real)
                real = (int (*)(int, const char *, int, ...)) dlsym(RTLD_NEXT, "openat");
        fd = real(dirfd, path, flags, mode);
        track(fd, path);
        return fd;
}

int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

int close(int fd) {
        static int (*real)(int);
        if (!real)
                real = (int (*)(int)) dlsym(RTLD_NEXT, "close");
        if (fd >= 0 && fd < MAX_FDS)
                fd_rule[fd] = 0;
        return real(fd);
}

/* ---- the vector space of IRQSTEER_VECTORS ---- */

#define VEC_CPUS 4096

static int vec_limit[VEC_CPUS];
static int vec_on = -1;

static void vec_load(void) {
        const char *env = getenv("IRQSTEER_VECTORS");
        char buf[1024], *save = NULL;
        int def;

        vec_on = env && *env;
        if (!vec_on)
                return;
        snprintf(buf, sizeof buf, "%s", env);
        def = atoi(buf);
        for (int c = 0; c < VEC_CPUS; c++)
                vec_limit[c] = def;
        for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
                char *eq = strchr(tok, '=');
                int cpu = eq ? atoi(tok) : -1;
                if (eq && cpu >= 0 && cpu < VEC_CPUS)
                        vec_limit[cpu] = atoi(eq + 1);
        }
}

/* "0-3,8" into set[]; -1 on anything else. */
static int vec_parse(const char *s, size_t len, unsigned char *set) {
        char buf[4096], *save = NULL;

        memset(set, 0, VEC_CPUS);
        if (len >= sizeof buf)
                return -1;
        memcpy(buf, s, len);
        buf[len] = 0;
        for (char *tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
                int a, b;
                if (sscanf(tok, "%d-%d", &a, &b) != 2)
                        b = a = atoi(tok);
                if (a < 0 || b >= VEC_CPUS || a > b)
                        return -1;
                for (int c = a; c <= b; c++)
                        set[c] = 1;
        }
        return 0;
}

/* The first CPU of DIR/N/effective_affinity_list, -1 if unreadable. */
static int vec_effective(const char *dir, const char *irq) {
        char p[PATH_MAX];
        int cpu = -1;
        FILE *f;

        snprintf(p, sizeof p, "%s/%s/effective_affinity_list", dir, irq);
        f = fopen(p, "re");
        if (!f)
                return -1;
        if (fscanf(f, "%d", &cpu) != 1)
                cpu = -1;
        fclose(f);
        return cpu;
}

/* 0: not an IRQ's list, or not ours to judge: go on with the write; 1:
 * written (or refused, *ret -1 and errno set), its result in *ret. */
static int vec_write(int fd, const void *buf, size_t len, ssize_t (*real)(int, const void *, size_t), ssize_t *ret) {
        static unsigned char set[VEC_CPUS];
        static int used[VEC_CPUS];
        char link[64], path[PATH_MAX], dir[PATH_MAX], irq[32], msg[160];
        ssize_t l;
        char *at, *slash;
        int here, to = -1, n;
        DIR *d;
        struct dirent *e;

        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        l = readlink(link, path, sizeof path - 1);
        if (l <= 0)
                return 0;
        path[l] = 0;
        at = strstr(path, "/proc/irq/");
        if (!at || strcmp(path + l - strlen("/smp_affinity_list"), "/smp_affinity_list") != 0)
                return 0;
        slash = strchr(at + strlen("/proc/irq/"), '/');
        snprintf(irq, sizeof irq, "%.*s", (int) (slash - at - strlen("/proc/irq/")), at + strlen("/proc/irq/"));
        snprintf(dir, sizeof dir, "%.*s/proc/irq", (int) (at - path), path);
        if (vec_parse(buf, len, set) < 0)
                return 0;
        here = vec_effective(dir, irq);
        if (here < 0 || here >= VEC_CPUS || !set[here]) {
                memset(used, 0, sizeof used);
                d = opendir(dir);
                if (!d)
                        return 0;
                while ((e = readdir(d))) {
                        int c;
                        if (e->d_name[0] < '0' || e->d_name[0] > '9')
                                continue;
                        c = vec_effective(dir, e->d_name);
                        if (c >= 0 && c < VEC_CPUS)
                                used[c]++;
                }
                closedir(d);
                for (int c = 0; c < VEC_CPUS; c++)
                        if (set[c] && (to < 0 || vec_limit[c] - used[c] > vec_limit[to] - used[to]))
                                to = c;
                if (to < 0)
                        return 0;
                if (used[to] >= vec_limit[to]) {
                        n = snprintf(msg, sizeof msg, "vectorshim: IRQ %s refused on CPU%d (%d of %d)\n", irq, to,
                                     used[to], vec_limit[to]);
                        if (n > 0)
                                (void) real(2, msg, (size_t) n);
                        errno = ENOSPC;
                        *ret = -1;
                        return 1;
                }
        } else
                to = here;
        *ret = real(fd, buf, len);
        if (*ret != (ssize_t) len)
                return 1;
        {
                char p[PATH_MAX + 64];
                FILE *f;

                snprintf(p, sizeof p, "%s/%s/effective_affinity_list", dir, irq);
                f = fopen(p, "we");
                if (f) {
                        fprintf(f, "%d\n", to);
                        fclose(f);
                }
        }
        return 1;
}

ssize_t write(int fd, const void *buf, size_t len) {
        static ssize_t (*real)(int, const void *, size_t);
        if (!real)
                real = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
        if (vec_on < 0)
                vec_load();
        if (vec_on && fd > 2) {
                ssize_t ret;
                if (vec_write(fd, buf, len, real, &ret))
                        return ret;
        }
        if (fd >= 0 && fd < MAX_FDS && fd_rule[fd]) {
                struct rule *r = &rules[fd_rule[fd] - 1];
                if (r->left != 0) {
                        int e = r->err;
                        char msg[256];
                        int n;

                        if (r->left > 0)
                                r->left--;
                        if (e < 0) {
                                /* The path is relative to the root; the test runs
                                 * with the root as the daemon's --root, so resolve
                                 * through the fd instead. */
                                char link[64], dir[PATH_MAX], gone[PATH_MAX + 8];
                                ssize_t l;
                                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                                l = readlink(link, dir, sizeof dir - 1);
                                if (l > 0) {
                                        dir[l] = 0;
                                        char *slash = strrchr(dir, '/');
                                        if (slash)
                                                *slash = 0;
                                        snprintf(gone, sizeof gone, "%s.gone", dir);
                                        (void) rename(dir, gone);
                                }
                                e = EIO;
                        }
                        n = snprintf(msg, sizeof msg, "faultshim: %s: %s\n", fd_path[fd], strerror(e));
                        if (n > 0)
                                (void) real(2, msg, (size_t) n);
                        errno = e;
                        return -1;
                }
        }
        return real(fd, buf, len);
}
