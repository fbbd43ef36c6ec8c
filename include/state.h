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

/* Replaces dir/name with data: a temporary file in dir created with mode,
 * written, renamed over name (not fsync'd: for files rewritten as often as
 * status.json).  On failure the old file stays and
 * the temporary file is removed.  0 or -errno. */
int state_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode);

/* Removes dir/name; a missing file is not an error.  0 or -errno. */
int state_remove(const char *dir, const char *name);

/* Takes the state directory for this process: an exclusive flock on
 * dir/STATE_LOCK_NAME (created if missing), which then holds our PID
 * (when there is room to write it).
 * The lock lasts as long as the returned fd stays open; the file is never
 * removed (removing it would let a third process lock another inode).
 * Returns the fd, -EBUSY when another process holds it (*ret_holder its
 * PID as the file says, or 0 when that cannot be told), or -errno. */
int state_lock(const char *dir, pid_t *ret_holder);

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
