/* The one place that turns "proc/..." and "sys/..." into file access: every
 * path is opened relative to a root directory fd (--root DIR, default "/"),
 * so tests run against fixture trees.  Paths passed here are relative
 * ("proc/stat"), never absolute. */
#pragma once

#include <dirent.h>
#include <stddef.h>

/* Opens DIR as the root of all /proc and /sys reads.  Returns an fd or -errno. */
int rootfs_open(const char *dir);

/* Reads a whole file (relative to rootfd) into a NUL-terminated malloc'd
 * buffer.  Returns 0 or -errno (-ENOENT when it does not exist). */
int rootfs_read(int rootfd, const char *path, char **ret_buf, size_t *ret_len);

/* The loop behind rootfs_read, for a file the caller opened itself (the
 * undo journal, opened O_NOFOLLOW): reads fd until EOF into a
 * NUL-terminated malloc'd buffer.  Returns 0 or -errno. */
int rootfs_read_fd(int fd, char **ret_buf, size_t *ret_len);

/* rootfs_read with the size the file is expected to have (its last
 * length, 0 if unknown), so a big /proc file is read without growing and
 * copying the buffer. */
int rootfs_read_sized(int rootfd, const char *path, size_t hint, char **ret_buf, size_t *ret_len);

/* printf-style variant of rootfs_read. */
int rootfs_readf(int rootfd, char **ret_buf, size_t *ret_len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Reads a whole small file into buf (size bytes, NUL-terminated, *ret_len
 * without the NUL when non-NULL).  -ENOBUFS if it does not fit (the caller
 * may fall back to rootfs_read), else 0 or -errno. */
int rootfs_read_small(int rootfd, const char *path, char *buf, size_t size, size_t *ret_len);

/* Reads a small file and strips the trailing newline into buf. -ENOBUFS if
 * it does not fit. */
int rootfs_read_line(int rootfd, const char *path, char *buf, size_t len);

/* Writes data to an existing file with a single write(2), checking both
 * write and close; no O_CREAT, but O_TRUNC (like `echo >`, so fixture
 * files hold exactly the value).  Returns 0 or the -errno the kernel gave
 * (EIO/EPERM on managed IRQs, ENOSPC, EINVAL, ...). */
int rootfs_write(int rootfd, const char *path, const char *data);

/* Opens a directory relative to rootfd (O_DIRECTORY); fd or -errno. */
int rootfs_opendir(int rootfd, const char *path);

/* rootfs_opendir as a DIR stream for readdir(3) (closedir it): 0 or the
 * -errno of either step, with *ret NULL and nothing left open. */
int rootfs_fdopendir(int rootfd, const char *path, DIR **ret);

/* Whether path exists (no symlink follow on the last component is NOT
 * implied: it follows, like stat). */
int rootfs_exists(int rootfd, const char *path);

/* readlink(2) relative to rootfd into buf (NUL-terminated). 0 or -errno. */
int rootfs_readlink(int rootfd, const char *path, char *buf, size_t len);
