/* Every /proc and /sys path opened relative to the root fd (--root,
 * docs/DESIGN.md Invariants 3). */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>

/* fd of dir as the root, or -errno. */
int rootfs_open(const char *dir);

/* Whether rootfd is this host's "/". */
bool rootfs_is_host(int rootfd);

/* A whole file, malloc'd and NUL-terminated.  0 or -errno. */
int rootfs_read(int rootfd, const char *path, char **ret_buf, size_t *ret_len);

/* rootfs_read of a file the caller opened itself. */
int rootfs_read_fd(int fd, char **ret_buf, size_t *ret_len);

/* Opens a file for reading: fd or -errno. */
int rootfs_open_file(int rootfd, const char *path);

/* printf-style variant of rootfs_read. */
int rootfs_readf(int rootfd, char **ret_buf, size_t *ret_len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* A whole small file into buf, NUL-terminated; -ENOBUFS when it does not
 * fit (rootfs_read then), else 0 or -errno. */
int rootfs_read_small(int rootfd, const char *path, char *buf, size_t size, size_t *ret_len);

/* At most size - 1 bytes from the start (/proc/PID/cmdline, of any
 * length), NUL-terminated.  0 or -errno. */
int rootfs_read_prefix(int rootfd, const char *path, char *buf, size_t size, size_t *ret_len);

/* A small file without its trailing newline; -ENOBUFS if it does not fit. */
int rootfs_read_line(int rootfd, const char *path, char *buf, size_t len);

/* One write(2) at offset 0 of an existing file, no O_TRUNC; a regular
 * file (a fixture) is cut to the value after.  0 or the kernel's -errno. */
int rootfs_write(int rootfd, const char *path, const char *data);

/* fd of a directory, or -errno. */
int rootfs_opendir(int rootfd, const char *path);

/* rootfs_opendir as a DIR stream: 0 or -errno with *ret NULL. */
int rootfs_fdopendir(int rootfd, const char *path, DIR **ret);

/* 1 when path exists (links followed), 0 when not, or -errno. */
int rootfs_exists(int rootfd, const char *path);

/* readlink(2) into buf, NUL-terminated.  0 or -errno. */
int rootfs_readlink(int rootfd, const char *path, char *buf, size_t len);

/* Files kept open between reads: procfs and sysfs regenerate at offset 0,
 * and the open is most of a read's cost.  *fd is the kept fd, 0 for none.
 * rootfs_read_small through *fd, kept within rootfs_held_max(); a kept fd
 * that fails or lost its name is reopened, so a gone file gives -ENOENT.
 * 0, -ENOBUFS (fd kept) or -errno. */
int rootfs_read_held(int rootfd, const char *path, int *fd, char *buf, size_t size, size_t *ret_len);

/* Keeps an O_PATH fd of a directory in *fd, within the budget. */
int rootfs_hold_dir(int rootfd, const char *path, int *fd);

/* Closes a kept fd and sets *fd to 0 (nothing when it is 0). */
void rootfs_release(int *fd);

/* How many fds are kept, and may be (RLIMIT_NOFILE less 256 for the rest). */
size_t rootfs_held_count(void);
size_t rootfs_held_max(void);
