/* LD_PRELOAD fault shim for the torture suite (tests/torture.py); never
 * linked into the installed programs.
 *
 * IRQSTEER_FAULTS="SUBSTR=ERR[*N];..." makes write() to a file whose
 * opened path contains SUBSTR fail with ERR (a number or EIO, EPERM,
 * ENOSPC, ENOENT, EINVAL, EBUSY, ENODEV), the first N times only with *N.
 * ERR "GONE" renames the file's directory to DIR.gone first and fails
 * with EIO, as a write to an IRQ freed under the writer does.  Every
 * injected fault is counted on stderr as "faultshim: PATH: ERR". */
#define _GNU_SOURCE
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

ssize_t write(int fd, const void *buf, size_t len) {
        static ssize_t (*real)(int, const void *, size_t);
        if (!real)
                real = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
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
