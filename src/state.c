/* Atomic state files. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <assert.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "json.h"
#include "rootfs.h"
#include "state.h"
#include "util.h"

/* One directory: the same inode, or when missing the same spelling. */
static bool same_dir(const char *a, const char *b) {
        struct stat sa, sb;
        size_t la = strlen(a), lb = strlen(b);

        if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
                return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
        while (la > 1 && a[la - 1] == '/')
                la--;
        while (lb > 1 && b[lb - 1] == '/')
                lb--;
        return la == lb && strncmp(a, b, la) == 0;
}

int state_mkdir_public(const char *dir) {
        if (mkdir(dir, 0755) == 0)
                return chmod(dir, 0755) < 0 ? -errno : 0;
        return errno == EEXIST ? 0 : -errno;
}

int state_dir_choose(const char *asked, const char *dflt, const char *root, bool root_is_host, bool create,
                     char **ret) {
        const char *dir = asked ? asked : dflt ? dflt : CONFIG_DEFAULT_STATE_DIR;
        char *p;
        int r;

        if (root_is_host || !same_dir(dir, CONFIG_DEFAULT_STATE_DIR)) {
                p = strdup(dir);
                if (!p)
                        return -ENOMEM;
                *ret = p;
                return 0;
        }
        if (asked)
                return -EXDEV;
        if (asprintf(&p, "%s/run", root) < 0)
                return -ENOMEM;
        r = create ? state_mkdir_public(p) : 0;
        free(p);
        if (r < 0)
                return r;
        if (asprintf(&p, "%s/run/irqsteer", root) < 0)
                return -ENOMEM;
        *ret = p;
        return 0;
}

int state_dir_ensure(const char *dir) {
        struct stat st;
        int r = state_mkdir_public(dir);

        if (r < 0)
                return r;
        if (stat(dir, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static const char *kind(mode_t m) {
        return S_ISLNK(m) ? "a symbolic link (not followed)" : S_ISDIR(m) ? "a directory" :
               S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) || S_ISBLK(m) ? "a device" :
               "a regular file";
}

const char *state_untrusted(const struct stat *st, bool want_dir, char *buf, size_t size) {
        uid_t me = geteuid();

        if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
                snprintf(buf, size, "%s, not a %s", kind(st->st_mode), want_dir ? "directory" : "regular file");
        else if (st->st_uid != 0 && st->st_uid != me)
                snprintf(buf, size, "owned by uid %u, not by root%s", (unsigned) st->st_uid,
                         me != 0 ? " or by this user" : "");
        else if (st->st_mode & (S_IWGRP | S_IWOTH))
                snprintf(buf, size, "writable by %s (mode %04o)",
                         (st->st_mode & S_IWOTH) ? "others" : "its group", (unsigned) (st->st_mode & 07777));
        else
                return NULL;
        return buf;
}

/* dfd (path, for the message) and, below depth levels, its entries. */
static int check_tree(int dfd, const char *path, int depth, char *buf, size_t size) {
        char why[96];
        struct dirent *de;
        struct stat st;
        DIR *d;
        int fd, r = 0;

        if (fstat(dfd, &st) < 0) {
                r = -errno;
                snprintf(buf, size, "%s: %s", path, strerror(-r));
                return r;
        }
        if (state_untrusted(&st, true, why, sizeof(why))) {
                snprintf(buf, size, "%s: %s", path, why);
                return -EPERM;
        }
        fd = dup(dfd);
        if (fd < 0 || !(d = fdopendir(fd))) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                snprintf(buf, size, "%s: %s", path, strerror(-r));
                return r;
        }
        rewinddir(d);
        while (r == 0 && (de = readdir(d))) {
                _cleanup_(freep) char *sub = NULL;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)  /* a temporary renamed meanwhile */
                                continue;
                        r = -errno;
                        snprintf(buf, size, "%s/%s: %s", path, de->d_name, strerror(-r));
                        break;
                }
                if (state_untrusted(&st, S_ISDIR(st.st_mode), why, sizeof(why))) {
                        snprintf(buf, size, "%s/%s: %s", path, de->d_name, why);
                        r = -EPERM;
                        break;
                }
                if (!S_ISDIR(st.st_mode))
                        continue;
                /* bans/ is the only subdirectory irqsteer makes */
                if (depth <= 0) {
                        snprintf(buf, size, "%s/%s: a directory nested too deep", path, de->d_name);
                        r = -EPERM;
                        break;
                }
                fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || asprintf(&sub, "%s/%s", path, de->d_name) < 0) {
                        r = fd < 0 ? -errno : -ENOMEM;
                        sub = NULL;
                        snprintf(buf, size, "%s/%s: %s", path, de->d_name, strerror(-r));
                } else
                        r = check_tree(fd, sub, depth - 1, buf, size);
                if (fd >= 0)
                        close(fd);
        }
        closedir(d);
        return r;
}

int state_dir_check(const char *dir, char *buf, size_t size) {
        _cleanup_(closep) int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0) {
                snprintf(buf, size, "%s: %s", dir, strerror(errno));
                return -errno;
        }
        return check_tree(dfd, dir, 2, buf, size);
}

int state_openat(int dfd, const char *name, int flags, mode_t mode, bool trusted) {
        char why[96];
        struct stat st;
        int fd, r;

        fd = openat(dfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, mode);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (S_ISDIR(st.st_mode))
                r = -EISDIR;
        else if (!S_ISREG(st.st_mode))
                r = -EBADFD;
        else if (trusted && state_untrusted(&st, false, why, sizeof(why)))
                r = -EPERM;
        else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
                r = -errno;
        else
                return fd;
        close(fd);
        return r;
}

const char *state_strerror(int r) {
        switch (r) {
        case -ELOOP:
                return "a symbolic link (not followed)";
        case -EBADFD:
                return "not a regular file";
        case -EPERM:
                return "not owned by root, or writable by group or others";
        default:
                return strerror(-r);
        }
}

static int lock_file(const char *dir, const char *name, pid_t *ret_holder) {
        char path[4096], buf[32];
        ssize_t n;
        int fd, r;

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
                return -ENAMETOOLONG;
        fd = state_openat(AT_FDCWD, path, O_RDWR | O_CREAT, 0600, true);
        if (fd < 0)
                return fd;
        /* whoever can open the file can flock it: no one but us */
        if (fchmod(fd, 0600) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                r = errno == EWOULDBLOCK ? -EBUSY : -errno;
                if (r == -EBUSY && ret_holder) {
                        long long pid = 0;

                        *ret_holder = 0;
                        n = pread(fd, buf, sizeof(buf) - 1, 0);
                        if (n > 0) {
                                buf[n] = 0;
                                if (sscanf(buf, "%lld", &pid) == 1 && pid > 0 && pid <= INT32_MAX)
                                        *ret_holder = (pid_t) pid;
                        }
                }
                close(fd);
                return r;
        }
        /* the PID only helps a message: a full disk must not stop us */
        n = snprintf(buf, sizeof(buf), "%lld\n", (long long) getpid());
        if (ftruncate(fd, 0) == 0)
                (void) util_write_all(fd, buf, (size_t) n);
        return fd;
}

int state_lock(const char *dir, pid_t *ret_holder) {
        return lock_file(dir, STATE_LOCK_NAME, ret_holder);
}

int state_lock_root(const char *root, bool root_is_host, char **ret_dir, pid_t *ret_holder, char *buf, size_t size) {
        int r;

        *ret_dir = NULL;
        buf[0] = 0;
        r = state_dir_choose(NULL, NULL, root, root_is_host, true, ret_dir);
        if (r < 0)
                return r;
        r = state_dir_ensure(*ret_dir);
        if (r < 0)
                return r;
        r = state_dir_check(*ret_dir, buf, size);
        if (r < 0)
                return r;
        return lock_file(*ret_dir, STATE_ROOT_LOCK_NAME, ret_holder);
}

int state_fsync_dir(const char *dir) {
        _cleanup_(closep) int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 || fsync(fd) < 0)
                return -errno;
        return 0;
}

int state_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                       bool durable) {
        _cleanup_(closep) int dfd = -1;
        char tmp[256];
        int fd, r;

        if (strchr(name, '/'))
                return -EINVAL;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        /* the pid keeps two instances from sharing a temporary */
        r = snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long) getpid());
        if (r < 0 || (size_t) r >= sizeof(tmp))
                return -ENAMETOOLONG;
        /* a new file: nothing planted there (a link, a FIFO) is written
         * through; a leftover goes */
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
        if (fd < 0 && errno == EEXIST && unlinkat(dfd, tmp, 0) == 0)
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
        if (fd < 0)
                return -errno;
        /* the umask filters O_CREAT's mode (the unit sets 0077) */
        if (fchmod(fd, mode) < 0)
                goto fail_errno;
        r = util_write_all(fd, data, len);
        if (r < 0)
                goto fail;
        if (durable && fsync(fd) < 0)
                goto fail_errno;
        if (close(fd) < 0) {
                fd = -1;
                goto fail_errno;
        }
        fd = -1;
        if (renameat(dfd, tmp, dfd, name) < 0)
                goto fail_errno;
        return durable && fsync(dfd) < 0 ? -errno : 0;

fail_errno:
        r = -errno;
fail:
        if (fd >= 0)
                close(fd);
        unlinkat(dfd, tmp, 0);
        return r;
}

int state_remove(const char *dir, const char *name) {
        _cleanup_(closep) int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int state_file_ours(const char *dir, const char *name, const char *head) {
        _cleanup_(closep) int dfd = -1, fd = -1;
        char buf[128];
        size_t want = strlen(head);
        ssize_t n;

        assert(want < sizeof(buf));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 1 : -errno;
        fd = state_openat(dfd, name, O_RDONLY, 0, false);
        if (fd == -ENOENT)
                return 1;
        if (fd == -ELOOP || fd == -EISDIR || fd == -EBADFD)
                return 0;
        if (fd < 0)
                return fd;
        n = util_read_full(fd, buf, want);
        if (n < 0)
                return (int) n;
        return (size_t) n == want && memcmp(buf, head, want) == 0;
}

bool state_pid_is_irqsteerd(int64_t pid) {
        _cleanup_(closep) int fd = -1;
        char path[64], comm[64];

        if (pid <= 0 || pid > INT32_MAX)
                return false;
        if (kill((pid_t) pid, 0) < 0 && errno != EPERM)
                return false;
        fd = rootfs_open("/");
        if (fd < 0)
                return false;
        snprintf(path, sizeof(path), "proc/%" PRId64 "/comm", pid);
        if (rootfs_read_line(fd, path, comm, sizeof(comm)) < 0)
                return false;
        return strcmp(comm, "irqsteerd") == 0;
}

int state_read_status(const char *dir, struct json_value **ret) {
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(closep) int fd = -1;
        char path[PATH_MAX];
        size_t len;
        int r;

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, STATE_STATUS_NAME) >= sizeof(path))
                return -ENAMETOOLONG;
        fd = state_openat(AT_FDCWD, path, O_RDONLY, 0, false);
        if (fd < 0)
                return fd;
        r = rootfs_read_fd(fd, &buf, &len);
        if (r < 0)
                return r;
        return json_parse(buf, len, ret) < 0 ? -EBADMSG : 0;
}

bool state_status_live(const struct json_value *v, int64_t *ret_pid) {
        *ret_pid = 0;
        return json_get_int(v, "pid", ret_pid) == 0 && *ret_pid != getpid() && state_pid_is_irqsteerd(*ret_pid);
}
