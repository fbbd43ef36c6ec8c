/* The undo journal: the original value of every object irqsteer changed,
 * saved in STATE_DIR/undo.journal before the first change, so that a stop
 * (SIGTERM) or the next start after a crash can put it back.
 *
 * Journal file format, version 2 (text, one object per line, fields
 * separated by single spaces, lines ending in '\n'):
 *
 *   # irqsteer undo journal v2
 *   root DEV INO BOOT_ID
 *   irq IRQ ACTIONS ORIGINAL LAST PENDING
 *   rps DEV QUEUE ORIGINAL LAST PENDING
 *   xps DEV QUEUE ORIGINAL LAST PENDING
 *   flowcnt DEV QUEUE ORIGINAL LAST PENDING
 *   sockflow ORIGINAL LAST PENDING
 *   thread PID TID STARTTIME ORIGINAL LAST PENDING
 *   defaffinity ORIGINAL LAST PENDING
 *   threaded DEV ORIGINAL LAST PENDING
 *
 * The root line says whose values the journal holds: DEV and INO are
 * st_dev and st_ino of the root directory (--root, "/" for the host),
 * BOOT_ID the host's /proc/sys/kernel/random/boot_id ("-" if unknown).  A
 * journal whose root differs from the one it is used with, or, for the
 * host's root, whose boot differs (the kernel reset every value at boot),
 * is refused as a whole: never restored, never appended to.  So is a
 * journal without a root line (version 1, written before it existed):
 * nothing tells whose values it holds.  ACTIONS names what the IRQ serves:
 * the names of the handler directories under /proc/irq/IRQ/, sorted and
 * joined with ',', bytes outside '!'..'~' and ',' '\\' written as \xHH,
 * "-" for none; an IRQ that serves something else at restore time is
 * another object and is left alone.
 *
 * ORIGINAL is the value before irqsteer's first change, LAST the value the
 * object held after irqsteer's latest completed change, PENDING a value
 * being written when the journal was saved, or "-" for none (the journal is
 * saved before each write, so after a crash the object may hold either LAST
 * or PENDING).  Values use the syntax of the file they come from: a cpulist
 * for irq (smp_affinity_list) and thread (sched_getaffinity), the kernel's
 * comma-grouped hex mask for rps, xps and defaffinity
 * (/proc/irq/default_smp_affinity, never empty), kept with its original
 * width, decimal for flowcnt, sockflow and threaded.  STARTTIME is field 22 of
 * /proc/PID/task/TID/stat and tells a reused TID.  Lines starting with '#'
 * are comments.  A line that does not parse, or the last line when it lacks
 * its '\n' (a torn write), is skipped and counted, never fatal.  An object
 * may be listed again further down: its latest line tells LAST and PENDING
 * (a later line with another ORIGINAL is unreadable).  Each change appends
 * the object's line (then fsync); the whole file is written again, compact,
 * when the appended lines outnumber the objects (plus 64), after a failed
 * append and when objects are dropped: atomically (temporary file in the
 * same directory, mode 0600, fsync, rename, fsync of the directory). */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "knob.h"

#define UNDO_JOURNAL_NAME "undo.journal"
/* Same as CONFIG_DEFAULT_STATE_DIR in config.h. */
#define UNDO_DEFAULT_STATE_DIR "/run/irqsteer"

struct undo_entry {
        struct knob_key key;
        char *original;
        char *last;
        char *pending;                /* NULL when none */
};

/* Whose values a journal holds (the root line). */
struct undo_identity {
        unsigned long long dev, ino;  /* st_dev, st_ino of the root directory */
        char boot_id[40];             /* the host's boot id, "" when unknown */
        bool host;                    /* the root is the host's "/" (not written) */
};

/* Why a journal is refused (undo->refused), UNDO_OK when it is usable. */
enum undo_refusal {
        UNDO_OK,
        UNDO_REFUSED_ROOT,            /* written for another root */
        UNDO_REFUSED_BOOT,            /* the host's, from another boot */
        UNDO_REFUSED_NO_ROOT,         /* no root line (version 1) */
        UNDO_REFUSAL_MAX,
        UNDO_REFUSAL_INVALID = -1,
};

struct undo {
        char *state_dir;
        char *path;                   /* state_dir/undo.journal */
        bool dry_run;                 /* never touches the file system */
        struct undo_entry *entries;   /* in order of first change */
        size_t n_entries, allocated;
        unsigned corrupt;             /* lines skipped when loading */
        unsigned long gen;            /* bumped on every change of the entries */
        size_t file_lines;            /* object lines in the file since the last full save */
        bool file_ok;                 /* the file is what the last save or append left */
        struct undo_identity id;      /* the root this handle serves */
        struct undo_identity file_id; /* the file's root line */
        bool file_has_id;             /* the file had a root line */
        enum undo_refusal refused;    /* set by undo_new(): the file is not ours */
};

/* What a restore did, object by object. */
struct undo_report {
        unsigned restored;            /* original written back */
        unsigned unchanged;           /* already held its original value */
        unsigned external;            /* changed by someone else since: left alone */
        unsigned gone;                /* object vanished, or the TID was reused */
        unsigned failed;              /* reading or writing failed: kept in the journal */
        unsigned corrupt;             /* journal lines skipped as unreadable */
        int first_error;              /* -errno of the first failure, 0 if none */
        char first_failed[KNOB_KEY_MAX]; /* its object's journal key, "" if none */
        char refused[256];            /* why the whole journal was refused, "" if it was not */
};

/* Removes the temporaries a kill during a full save leaves in state_dir
 * (".undo.journal.XXXXXX", regular files only; nothing else is touched).
 * Call before this process saves the journal.  Returns how many were
 * removed, or -errno (a missing directory is 0). */
int undo_remove_temporaries(const char *state_dir);

/* The identity of the root behind rootfd: its st_dev/st_ino, whether it
 * is the host's "/", and the host's boot id.  0 or -errno (fstat). */
int undo_identity_get(int rootfd, struct undo_identity *ret);
/* The -errno undo_recover() and apply_new() return for a refused journal:
 * -EXDEV for another root, -ESTALE for another boot, -EPROTO for no root
 * line; 0 for UNDO_OK. */
int undo_refusal_errno(enum undo_refusal r);
/* One sentence on why u's file is refused, naming both identities
 * ("it was written for root dev 0:45 inode 2, this is dev 8:1 inode 2"). */
void undo_refusal_describe(const struct undo *u, char *buf, size_t len);
/* Moves the journal in state_dir aside to undo.journal.refused (an older
 * one there is replaced) so a new one can start; its values are kept for
 * the operator, never restored.  0 (also when there is none) or -errno. */
int undo_set_aside(const char *state_dir);
/* Parses a journal buffer into u's entries (appending); pure.  Unreadable
 * lines are counted in u->corrupt.  0 or -ENOMEM. */
int undo_parse(struct undo *u, const char *buf, size_t len);
/* Formats all entries as a journal into a malloc'd buffer. 0 or -ENOMEM. */
int undo_format(const struct undo *u, char **ret_buf, size_t *ret_len);

/* Creates the journal handle for state_dir serving the root id (NULL: no
 * identity check, for listing a journal) and loads an existing journal (a
 * previous run's originals are kept, never overwritten).  A missing
 * journal is not an error.  A journal written for another identity is
 * loaded with u->refused set: undo_restore() then refuses it and
 * undo_begin() will not touch it.  dry_run: nothing is ever written. */
int undo_new(const char *state_dir, const struct undo_identity *id, bool dry_run, struct undo **ret);
void undo_free(struct undo *u);
struct undo_entry *undo_find(struct undo *u, const struct knob_key *k);
/* Records that k is about to be changed to pending: a new entry gets
 * original = last = current; an existing one keeps its original and last.
 * Then saves the journal: the caller writes to the object only after this
 * returned >= 0.  Returns 1 when the entry is new, 0 when it existed, or
 * -errno with the entries as before. */
int undo_begin(struct undo *u, const struct knob_key *k, const char *current, const char *pending,
               struct undo_entry **ret_entry);
/* The write of e's pending value ended: ok = it took effect and the object
 * now reads back as now_value (NULL = the pending value).  Saves the
 * journal again only when the file would otherwise miss the value the
 * object holds. */
int undo_end(struct undo *u, struct undo_entry *e, bool ok, const char *now_value);
/* Writes the journal (or removes it when there are no entries). */
int undo_save(struct undo *u);

/* A NIC renamed (same ifindex, another name): its objects' entries take
 * the new name, so their originals are restored under it; an entry
 * already under the new name is a gone device's and is dropped.  Saves
 * the whole journal.  Returns how many entries moved, or -errno (the
 * entries moved in memory all the same). */
int undo_rename_nic(struct undo *u, const char *from, const char *to);
/* Drops the entries of threads that are gone (no such TID, or one with
 * another start time: a reused TID), on the host: nothing is left to
 * restore there, and a process forking short-lived threads named like a
 * worker would grow the journal, and status.json, without bound.  Saves
 * the journal when any went.  How many went, or -errno. */
int undo_forget_gone_threads(struct undo *u, int rootfd);

/* Puts back every original, object by object (see struct undo_report),
 * then keeps in the journal only the objects whose restore failed; the
 * file is removed when none did.  Thread objects are only touched when
 * root_is_host.  Returns 0, or the first error when an object failed; a
 * refused journal is left as it is and undo_refusal_errno() returned,
 * with ret->refused saying why. */
int undo_restore(struct undo *u, int rootfd, bool root_is_host, struct undo_report *ret);

/* After a crash or for `irqsteerctl restore`: restores what the journal in
 * state_dir lists, against the objects under rootfd (thread objects only
 * when rootfd is the host's "/"), if the journal was written for that root
 * (see undo_restore for a refused one).  No journal = nothing to do, 0. */
int undo_recover(int rootfd, const char *state_dir, struct undo_report *ret);
