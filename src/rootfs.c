/* All /proc and /sys access goes through a root directory fd. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "rootfs.h"
#include "util.h"

int rootfs_open(const char *dir) {
        int fd = open(dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* Relative path for openat(); a leading "/" would escape the root. */
static const char *rel(const char *path) {
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

int rootfs_read_fd(int fd, char **ret_buf, size_t *ret_len) {
        _cleanup_(freep) char *buf = NULL;
        size_t len = 0, allocated = 0;
        ssize_t n;

        /* /proc files report size 0: read until EOF, a buffer not filled */
        do {
                if (len + 4096 + 1 > allocated) {
                        size_t na = allocated ? allocated * 2 : 16384;
                        char *nb = realloc(buf, na);

                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        allocated = na;
                }
                n = util_read_full(fd, buf + len, allocated - len - 1);
                if (n < 0)
                        return (int) n;
                len += (size_t) n;
        } while (len == allocated - 1);
        buf[len] = 0;
        *ret_buf = buf;
        buf = NULL;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int rootfs_read(int rootfd, const char *path, char **ret_buf, size_t *ret_len) {
        _cleanup_(closep) int fd = rootfs_open_file(rootfd, path);

        if (fd < 0)
                return fd;
        return rootfs_read_fd(fd, ret_buf, ret_len);
}

int rootfs_open_file(int rootfd, const char *path) {
        int fd = openat(rootfd, rel(path), O_RDONLY | O_CLOEXEC | O_NOCTTY);

        return fd < 0 ? -errno : fd;
}

int rootfs_readf(int rootfd, char **ret_buf, size_t *ret_len, const char *fmt, ...) {
        char path[4096];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof(path))
                return -ENAMETOOLONG;
        return rootfs_read(rootfd, path, ret_buf, ret_len);
}

/* The whole file from offset 0 into buf. */
static int read_at_start(int fd, char *buf, size_t size, size_t *ret_len) {
        size_t len = 0;
        char c;

        for (;;) {
                ssize_t n = pread(fd, buf + len, size - 1 - len, (off_t) len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len == size - 1) {
                        n = pread(fd, &c, 1, (off_t) len);
                        if (n < 0)
                                return -errno;
                        if (n > 0)
                                return -ENOBUFS;
                        break;
                }
                /* a short read ending in a newline is the whole file
                 * (seq_file fills the buffer): no second read for the EOF */
                if (buf[len - 1] == '\n')
                        break;
        }
        buf[len] = 0;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int rootfs_read_small(int rootfd, const char *path, char *buf, size_t size, size_t *ret_len) {
        _cleanup_(closep) int fd = -1;

        if (size < 2)
                return -ENOBUFS;
        fd = rootfs_open_file(rootfd, path);
        if (fd < 0)
                return fd;
        return read_at_start(fd, buf, size, ret_len);
}

int rootfs_read_prefix(int rootfd, const char *path, char *buf, size_t size, size_t *ret_len) {
        _cleanup_(closep) int fd = -1;
        ssize_t n;

        assert(size > 0);
        fd = rootfs_open_file(rootfd, path);
        if (fd < 0)
                return fd;
        n = util_read_full(fd, buf, size - 1);
        if (n < 0)
                return (int) n;
        buf[n] = 0;
        *ret_len = (size_t) n;
        return 0;
}

int rootfs_read_line(int rootfd, const char *path, char *buf, size_t len) {
        _cleanup_(freep) char *data = NULL;
        char small[256];
        const char *p = small;
        size_t n;
        int r;

        r = rootfs_read_small(rootfd, path, small, sizeof(small), &n);
        if (r == -ENOBUFS) {
                r = rootfs_read(rootfd, path, &data, &n);
                p = data;
        }
        if (r < 0)
                return r;
        while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == ' '))
                n--;
        if (n >= len)
                return -ENOBUFS;
        memcpy(buf, p, n);
        buf[n] = 0;
        return 0;
}

/* The size of a regular file longer than len, else 0: a fixture tree
 * reads back exactly what was written, as a kernel attribute does. */
static int regular_longer(int fd, size_t len, size_t *ret) {
        struct statfs sf;
        struct stat st;

        *ret = 0;
        if (fstatfs(fd, &sf) < 0)
                return -errno;
        /* procfs and sysfs generate a file at each read, and take no truncation */
        if (sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC)
                return 0;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t) st.st_size > len)
                *ret = (size_t) st.st_size;
        return 0;
}

int rootfs_write(int rootfd, const char *path, const char *data) {
        _cleanup_(freep) char *padded = NULL;
        size_t len = strlen(data), old = 0;
        ssize_t n;
        int fd, r;

        /* No O_TRUNC: a kill would leave a regular file empty, which no
         * attribute reads back.  A longer old value is padded over with
         * newlines, then truncated: a kill leaves no tail of it. */
        fd = openat(rootfd, rel(path), O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        r = regular_longer(fd, len, &old);
        if (r == 0 && old > 0) {
                padded = malloc(old);
                if (!padded)
                        r = -ENOMEM;
                else {
                        memcpy(padded, data, len);
                        memset(padded + len, '\n', old - len);
                }
        }
        if (r == 0) {
                /* attributes take the value in one call */
                n = write(fd, padded ? padded : data, padded ? old : len);
                if (n < 0)
                        r = -errno;
                else if ((size_t) n != (padded ? old : len))
                        r = -EIO;
        }
        if (r == 0 && padded && ftruncate(fd, (off_t) len) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

int rootfs_opendir(int rootfd, const char *path) {
        int fd = openat(rootfd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int rootfs_fdopendir(int rootfd, const char *path, DIR **ret) {
        int fd, r;

        *ret = NULL;
        fd = rootfs_opendir(rootfd, path);
        if (fd < 0)
                return fd;
        *ret = fdopendir(fd);
        if (!*ret) {
                r = -errno;
                close(fd);
                return r;
        }
        return 0;
}

int rootfs_exists(int rootfd, const char *path) {
        struct stat st;
        if (fstatat(rootfd, rel(path), &st, 0) < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        return 1;
}

int rootfs_readlink(int rootfd, const char *path, char *buf, size_t len) {
        ssize_t n = readlinkat(rootfd, rel(path), buf, len);
        if (n < 0)
                return -errno;
        if ((size_t) n >= len)
                return -ENOBUFS;
        buf[n] = 0;
        return 0;
}

static size_t held_count, held_max;
static bool held_max_known;

size_t rootfs_held_count(void) {
        return held_count;
}

size_t rootfs_held_max(void) {
        struct rlimit rl;

        if (!held_max_known) {
                held_max_known = true;
                if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                        held_max = 0;
                else if (rl.rlim_cur == RLIM_INFINITY)
                        held_max = 1 << 20;
                else
                        held_max = rl.rlim_cur > 512 ? (size_t) rl.rlim_cur - 256 : (size_t) rl.rlim_cur / 2;
        }
        return held_max;
}

/* Keeps fd (moved above stdio, so 0 can mean none) or closes it. */
static void keep(int fd, int *ret) {
        if (held_count < rootfs_held_max()) {
                if (fd < 3) {
                        int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);

                        close(fd);
                        fd = nfd;
                }
                if (fd >= 3) {
                        *ret = fd;
                        held_count++;
                        return;
                }
        }
        if (fd >= 0)
                close(fd);
}

void rootfs_release(int *fd) {
        if (*fd > 0) {
                close(*fd);
                held_count--;
        }
        *fd = 0;
}

int rootfs_read_held(int rootfd, const char *path, int *fd, char *buf, size_t size, size_t *ret_len) {
        struct stat st;
        int nfd, r;

        if (size < 2)
                return -ENOBUFS;
        if (*fd > 0) {
                /* the name first: a file replaced by rename is not read */
                if (fstat(*fd, &st) == 0 && st.st_nlink > 0) {
                        r = read_at_start(*fd, buf, size, ret_len);
                        if (r == 0 || r == -ENOBUFS)
                                return r;
                }
                rootfs_release(fd);
        }
        nfd = rootfs_open_file(rootfd, path);
        if (nfd < 0)
                return nfd;
        r = read_at_start(nfd, buf, size, ret_len);
        if (r == 0 || r == -ENOBUFS)
                keep(nfd, fd);
        else
                close(nfd);
        return r;
}

int rootfs_hold_dir(int rootfd, const char *path, int *fd) {
        int nfd;

        if (*fd > 0)
                return 0;
        nfd = openat(rootfd, rel(path), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (nfd < 0)
                return -errno;
        keep(nfd, fd);
        return 0;
}

bool rootfs_is_host(int rootfd) {
        struct stat a, b;

        if (fstat(rootfd, &a) < 0 || stat("/", &b) < 0)
                return false;
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}
