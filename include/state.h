/* The state directory (default /run/irqsteer): the undo journal, locks,
 * bans/ and status.json, replaced atomically for irqsteerctl to read. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#define STATE_STATUS_NAME "status.json"
/* flock'd by the irqsteerd of the directory and by irqsteerctl restore;
 * holds the holder's PID. */
#define STATE_LOCK_NAME "irqsteerd.lock"

/* The state directory of a run on root: asked (--state-dir), else dflt
 * (state_dir).  A --root tree never shares the host's default, whose
 * journal it would fill: it gets ROOT/run/irqsteer (ROOT/run made when
 * create), and asking for the host's by option is -EXDEV.  0 or -errno. */
int state_dir_choose(const char *asked, const char *dflt, const char *root, bool root_is_host, bool create,
                     char **ret);

/* Creates dir (0755) if missing, in an existing parent.  0 or -errno. */
int state_dir_ensure(const char *dir);

struct stat;
/* Why st is not to be trusted (sshd's StrictModes): the wrong kind, owned
 * by neither root nor our euid, or group/other writable; in buf, returned,
 * or NULL when it can be trusted. */
const char *state_untrusted(const struct stat *st, bool want_dir, char *buf, size_t size);

/* state_untrusted() over dir and all in it, no link followed: 0, or
 * -EPERM / -errno with "PATH: reason" in buf. */
int state_dir_check(const char *dir, char *buf, size_t size);

/* openat() following no link and not blocking on a FIFO; a regular file
 * (and, with trusted, a trusted one).  fd, or -ELOOP, -EISDIR, -EBADFD
 * (another kind), -EPERM (untrusted) or the open's -errno. */
int state_openat(int dfd, const char *name, int flags, mode_t mode, bool trusted);

/* Text for state_openat()'s errors. */
const char *state_strerror(int r);

/* Replaces dir/name with data through a renamed temporary ".NAME.PID.tmp";
 * on failure the old file stays.  durable: the file and the directory
 * fsync'd (the undo journal; status.json is rewritten every tick and
 * nothing depends on it after a power loss).  0 or -errno. */
int state_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                       bool durable);

/* fsync of the directory dir, after a rename or unlink in it.  0 or -errno. */
int state_fsync_dir(const char *dir);

/* Removes dir/name, if there.  0 or -errno. */
int state_remove(const char *dir, const char *name);

/* 1 when dir/name is missing or a regular file beginning with head (ours
 * to replace), 0 for anything else, -errno when it cannot be told. */
int state_file_ours(const char *dir, const char *name, const char *head);

/* flock on dir/STATE_LOCK_NAME (mode 0600, never removed: a third process
 * would lock another inode), then our PID in it; held while the fd is
 * open.  fd, -EBUSY (*ret_holder the PID it says, or 0), or -errno. */
int state_lock(const char *dir, pid_t *ret_holder);

/* flock'd by whoever changes a root, in the root's default state
 * directory whatever --state-dir says, so two runs on one tree meet. */
#define STATE_ROOT_LOCK_NAME "irqsteerd.root.lock"

/* state_lock() of STATE_ROOT_LOCK_NAME, the directory made and checked;
 * it is in *ret_dir (malloc'd, when known), a failed check's reason in buf. */
int state_lock_root(const char *root, bool root_is_host, char **ret_dir, pid_t *ret_holder, char *buf, size_t size);

/* Whether pid is a live irqsteerd (by comm), not a reused pid. */
bool state_pid_is_irqsteerd(int64_t pid);

struct json_value;
/* dir/STATE_STATUS_NAME parsed into *ret.  0, -errno, or -EBADMSG. */
int state_read_status(const char *dir, struct json_value **ret);

/* Whether status v names a live irqsteerd other than us (its pid in
 * *ret_pid either way). */
bool state_status_live(const struct json_value *v, int64_t *ret_pid);

/* mkdir 0755 whatever the umask (irqsteerctl reads as any user); 0 when
 * it exists. */
int state_mkdir_public(const char *dir);
