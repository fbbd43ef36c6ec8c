/* The state directory (STATE_DIR, default /run/irqsteer): the undo journal
 * (undo.h) and status.json, which irqsteerctl reads.  Files are replaced
 * atomically so a reader never sees half a file. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#define STATE_STATUS_NAME "status.json"
/* Held (flock) by the irqsteerd that owns the directory, and by irqsteerctl
 * restore while it rewrites the journal; holds the holder's PID. */
#define STATE_LOCK_NAME "irqsteerd.lock"

/* The state directory a run on root uses (malloc'd into *ret): asked (the
 * --state-dir option, NULL when not given), else dflt (the configuration's
 * state_dir, CONFIG_DEFAULT_STATE_DIR by default).  A root other than the
 * host's never shares the host's default directory, whose journal would
 * then hold the tree's values: a defaulted one becomes ROOT/run/irqsteer
 * (ROOT/run is created when create is set), and asking for the host's
 * default by option is refused with -EXDEV.  0 or -errno. */
int state_dir_choose(const char *asked, const char *dflt, const char *root, bool root_is_host, bool create,
                     char **ret);

/* Creates dir (mode 0755) if missing; the parent must exist.  0 or -errno. */
int state_dir_ensure(const char *dir);

struct stat;
/* Why st (from an lstat or fstat in a state directory) is not to be
 * trusted, as sshd's StrictModes: not a directory (want_dir) or not a
 * regular file, owned by neither root nor this process's effective user
 * (a fixture run by a user), or writable by group or others.  The reason
 * goes into buf, which is returned; NULL when st can be trusted. */
const char *state_untrusted(const struct stat *st, bool want_dir, char *buf, size_t size);

/* Checks dir and everything in it (subdirectories such as bans/ too), no
 * link followed, with state_untrusted(): 0, or -EPERM with "PATH: reason"
 * in buf; -errno (with buf) when dir cannot be read.  Nothing the daemon
 * or irqsteerctl restore reads from a directory another user could write
 * is acted on as root. */
int state_dir_check(const char *dir, char *buf, size_t size);

/* Opens name (relative to dfd, or a path with AT_FDCWD) with flags plus
 * O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY: a link is not followed
 * and a FIFO does not block the open; O_NONBLOCK is cleared after.  The
 * result must be a regular file, and with trusted also pass
 * state_untrusted().  fd, or -ELOOP (a link), -EISDIR, -EBADFD (another
 * kind of file), -EPERM (untrusted) or the open's -errno. */
int state_openat(int dfd, const char *name, int flags, mode_t mode, bool trusted);

/* Text for state_openat()'s errors (strerror for the rest). */
const char *state_strerror(int r);

/* Replaces dir/name with data: a temporary file in dir created with mode,
 * written, renamed over name (not fsync'd: for files rewritten as often as
 * status.json).  On failure the old file stays and
 * the temporary file is removed.  0 or -errno. */
int state_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode);

/* Removes dir/name; a missing file is not an error.  0 or -errno. */
int state_remove(const char *dir, const char *name);

/* Whether dir/name is a file irqsteerd may replace or remove as its own:
 * missing (1), or a regular file beginning with head (1); 0 for anything
 * else (another program's file: never overwritten nor removed), -errno
 * when it cannot be told. */
int state_file_ours(const char *dir, const char *name, const char *head);

/* state_remove() of a file state_file_ours() says is ours; 0 when it is
 * not (it stays), else as state_remove(). */
int state_remove_ours(const char *dir, const char *name, const char *head);

/* Takes the state directory for this process: an exclusive flock on
 * dir/STATE_LOCK_NAME (created if missing, mode 0600 whatever the umask:
 * a user who can open it could hold the lock), which then holds our PID
 * (when there is room to write it).
 * The lock lasts as long as the returned fd stays open; the file is never
 * removed (removing it would let a third process lock another inode).
 * Returns the fd, -EBUSY when another process holds it (*ret_holder its
 * PID as the file says, or 0 when that cannot be told), or -errno. */
int state_lock(const char *dir, pid_t *ret_holder);

/* Held (flock) by the irqsteerd that changes a root, whatever its state
 * directory, and by irqsteerctl restore: in the root's default state
 * directory (ROOT/run/irqsteer, the host's CONFIG_DEFAULT_STATE_DIR), a
 * place fixed by the tree itself, so that two spellings of one tree, or a
 * hand run with another --state-dir, meet there. */
#define STATE_ROOT_LOCK_NAME "irqsteerd.root.lock"

/* state_lock() for the root itself: STATE_ROOT_LOCK_NAME in the root's
 * default state directory, created (and checked with state_dir_check())
 * as needed; that directory is returned in *ret_dir (malloc'd, also on
 * failure when known, else NULL), the reason of a failed check in buf.
 * fd, -EBUSY (*ret_holder as state_lock), -EPERM or -errno. */
int state_lock_root(const char *root, bool root_is_host, char **ret_dir, pid_t *ret_holder, char *buf, size_t size);

/* Whether pid is a live irqsteerd (by /proc/PID/comm), so that a pid left
 * in a stale status file and since reused by another process does not count. */
bool state_pid_is_irqsteerd(int64_t pid);

struct json_value;
/* Reads and parses dir/STATE_STATUS_NAME into *ret (json_free() it).
 * 0, -errno of the open or read, or -EBADMSG when it is not JSON. */
int state_read_status(const char *dir, struct json_value **ret);

/* Whether status v (state_read_status) names a live irqsteerd other than
 * this process, with its pid in *ret_pid (also when it is not live). */
bool state_status_live(const struct json_value *v, int64_t *ret_pid);

/* mkdir with mode 0755 whatever the umask (the unit sets 0077): the state
 * directory is read by irqsteerctl's read-only commands, for any user.  0
 * also when it exists already, else -errno. */
int state_mkdir_public(const char *dir);
