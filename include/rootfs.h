/* The one place that turns "proc/..." and "sys/..." into file access: every
 * path is opened relative to a root directory fd (--root DIR, default "/"),
 * so tests run against fixture trees.  Paths passed here are relative
 * ("proc/stat"), never absolute. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>

/* Opens DIR as the root of all /proc and /sys reads.  Returns an fd or -errno. */
int rootfs_open(const char *dir);

/* Whether rootfd is this host's "/" (same device and inode): netlink,
 * thread and capability matters only apply then. */
bool rootfs_is_host(int rootfd);

/* Reads a whole file (relative to rootfd) into a NUL-terminated malloc'd
 * buffer.  Returns 0 or -errno (-ENOENT when it does not exist). */
int rootfs_read(int rootfd, const char *path, char **ret_buf, size_t *ret_len);

/* The loop behind rootfs_read, for a file the caller opened itself (the
 * undo journal, opened O_NOFOLLOW): reads fd until EOF into a
 * NUL-terminated malloc'd buffer.  Returns 0 or -errno. */
int rootfs_read_fd(int fd, char **ret_buf, size_t *ret_len);

/* Opens a file relative to rootfd for reading (O_RDONLY|O_CLOEXEC), for
 * a reader that streams it: an fd or -errno. */
int rootfs_open_file(int rootfd, const char *path);

/* printf-style variant of rootfs_read. */
int rootfs_readf(int rootfd, char **ret_buf, size_t *ret_len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Reads a whole small file into buf (size bytes, NUL-terminated, *ret_len
 * without the NUL when non-NULL).  -ENOBUFS if it does not fit (the caller
 * may fall back to rootfs_read), else 0 or -errno. */
int rootfs_read_small(int rootfd, const char *path, char *buf, size_t size, size_t *ret_len);

/* The first size - 1 bytes of a file at most (the rest is not read), into
 * buf, NUL-terminated, *ret_len its length: for a file whose start is all
 * that counts and whose length anyone may choose (/proc/PID/cmdline).
 * 0 or -errno. */
int rootfs_read_prefix(int rootfd, const char *path, char *buf, size_t size, size_t *ret_len);

/* Reads a small file and strips the trailing newline into buf. -ENOBUFS if
 * it does not fit. */
int rootfs_read_line(int rootfd, const char *path, char *buf, size_t len);

/* Writes data to an existing file with a single write(2) at offset 0,
 * checking both write and close; no O_CREAT and no O_TRUNC (a kill then
 * never leaves an empty file).  A regular file outside procfs/sysfs (a
 * fixture tree) is cut to the value after the write succeeded, so it holds
 * exactly the value, as the kernel's attributes read back.  Returns 0 or
 * the -errno the kernel gave (EIO/EPERM on managed IRQs, ENOSPC, EINVAL,
 * ...). */
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

/* Files kept open between reads.  sysfs and procfs generate an attribute
 * afresh at every read from offset 0, so a value re-read every few ticks
 * needs no open/close; the open is most of the cost (a path walk and, on
 * sysfs, an allocation).
 * *fd is the kept fd, 0 for none, so a zeroed struct holds nothing.
 *
 * rootfs_read_held reads path into buf like rootfs_read_small, through *fd
 * when one is kept, else opening path and keeping the fd (within
 * rootfs_held_max()).  A kept fd that fails to read (ENODEV: the sysfs
 * attribute was removed; EIO: the /proc/irq entry was) or whose file has
 * no name left (a tree of regular files where it was replaced by rename)
 * is closed and path opened again, so a missing file still gives -ENOENT.
 * Returns 0, -ENOBUFS if it does not fit (the fd is kept; the caller may
 * fall back to rootfs_read) or -errno. */
int rootfs_read_held(int rootfd, const char *path, int *fd, char *buf, size_t size, size_t *ret_len);

/* A file read whole at every tick (/proc/stat, /proc/softirqs) through a
 * kept fd, into a buffer kept with it that grows until the file fits: no
 * path walk, open, close or allocation a tick.  Only a procfs or sysfs
 * file is kept open; a regular file (a --root tree) is opened at each
 * read.  A zeroed struct holds nothing. */
struct rootfs_held_file {
        int fd;       /* as rootfs_read_held's *fd */
        bool afresh;  /* a regular file: never kept */
        char *buf;    /* NUL-terminated contents after a read */
        size_t size;  /* of buf */
};

/* rootfs_read_held into f->buf, grown as needed; the contents stay in
 * f->buf until the next read.  0 or -errno. */
int rootfs_held_file_read(int rootfd, const char *path, struct rootfs_held_file *f, size_t *ret_len);
/* Closes the kept fd and frees the buffer; f holds nothing after. */
void rootfs_held_file_free(struct rootfs_held_file *f);

/* Keeps an O_PATH fd of a directory in *fd (for lookups relative to it),
 * unless one is kept already or the budget is spent.  0 or -errno. */
int rootfs_hold_dir(int rootfd, const char *path, int *fd);

/* Closes a kept fd and sets *fd to 0 (nothing when it is 0). */
void rootfs_release(int *fd);

/* How many fds are kept, and how many may be: the soft RLIMIT_NOFILE less
 * 256 for everything else (sockets, the files read or written by path),
 * as it was at the first call. */
size_t rootfs_held_count(void);
size_t rootfs_held_max(void);
