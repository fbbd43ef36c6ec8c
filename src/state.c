/* Atomic state files. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "json.h"
#include "rootfs.h"
#include "state.h"
#include "util.h"

/* Whether a and b name one directory: the same inode when both exist,
 * else the same spelling (trailing slashes aside). */
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
        if (create) {
                int r = state_mkdir_public(p);
                if (r < 0) {
                        free(p);
                        return r;
                }
        }
        free(p);
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

static int write_all(int fd, const char *p, size_t len);

int state_lock(const char *dir, pid_t *ret_holder) {
        char path[4096], buf[32];
        ssize_t n;
        int fd, r;

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, STATE_LOCK_NAME) >= sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
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
        /* The PID only helps the message of a refused second start: a full
         * state directory must not stop this one. */
        n = snprintf(buf, sizeof(buf), "%lld\n", (long long) getpid());
        if (ftruncate(fd, 0) == 0)
                (void) write_all(fd, buf, (size_t) n);
        return fd;
}

static int write_all(int fd, const char *p, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int state_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode) {
        _cleanup_(closep) int dfd = -1;
        char tmp[256];
        int fd, r;

        if (strchr(name, '/'))
                return -EINVAL;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        /* One writer (the daemon) at a time; the pid keeps two instances
         * pointed at the same directory from sharing a temporary file. */
        r = snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long) getpid());
        if (r < 0 || (size_t) r >= sizeof(tmp))
                return -ENAMETOOLONG;
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return -errno;
        /* O_CREAT's mode is filtered by the umask (the unit sets 0077). */
        if (fchmod(fd, mode) < 0)
                goto fail_errno;
        r = write_all(fd, data, len);
        if (r < 0)
                goto fail;
        /* No fsync: the file (status.json) is rewritten every tick and at
         * start, so after a power loss nothing depends on it; rename keeps
         * readers from seeing a partial file.  An fsync a tick was 7% of
         * the daemon's CPU time on a 256-CPU host with the state dir on
         * ext4, and a disk write a second. */
        if (close(fd) < 0) {
                fd = -1;
                goto fail_errno;
        }
        fd = -1;
        if (renameat(dfd, tmp, dfd, name) < 0)
                goto fail_errno;
        return 0;

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
        size_t len;
        int r;

        fd = rootfs_open(dir);
        if (fd < 0)
                return fd;
        r = rootfs_read(fd, STATE_STATUS_NAME, &buf, &len);
        if (r < 0)
                return r;
        return json_parse(buf, len, ret) < 0 ? -EBADMSG : 0;
}

bool state_status_live(const struct json_value *v, int64_t *ret_pid) {
        *ret_pid = 0;
        return json_get_int(v, "pid", ret_pid) == 0 && *ret_pid != getpid() && state_pid_is_irqsteerd(*ret_pid);
}
