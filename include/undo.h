/* The undo journal: the original value of every object irqsteer changed,
 * saved in STATE_DIR/undo.journal before the first change, put back at
 * stop (SIGTERM) or at the next start after a crash.
 *
 * Format v2: text, one object a line, fields split by single spaces:
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
 * root: st_dev and st_ino of the root directory, the host's boot_id ("-"
 * if unknown).  A journal for another root, for the host's root from
 * another boot, or without a root line (v1) is refused whole: never
 * restored nor appended to.  ACTIONS: the sorted handler names under
 * /proc/irq/IRQ/, joined with ',', bytes outside '!'..'~' and ',' '\\' as
 * \xHH, "-" for none; an IRQ serving something else at restore is left.
 * ORIGINAL is the value before the first change, LAST after the latest
 * completed one, PENDING one being written ("-": none), in the syntax of
 * the file it comes from (cpulist, the kernel's hex mask kept at its
 * width, decimal).  STARTTIME (field 22 of task stat) tells a reused TID.
 * '#' lines are comments; a bad line, or a last one without '\n' (a torn
 * write), is skipped and counted.  An object listed again: its latest line
 * tells LAST and PENDING (another ORIGINAL makes it unreadable).  Each
 * change appends a line (fsync); the file is rewritten whole, atomically
 * (temporary, fsync, rename, fsync of the directory), when the appended
 * lines outnumber the objects (plus 64), after a failed append and when
 * objects are dropped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "knob.h"

#define UNDO_JOURNAL_NAME "undo.journal"

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

/* Removes the temporaries (".undo.journal.PID.tmp", regular files) a kill
 * during a full save left; call before saving.  How many, or -errno. */
int undo_remove_temporaries(const char *state_dir);

/* The identity of the root behind rootfd.  0 or -errno. */
int undo_identity_get(int rootfd, struct undo_identity *ret);
/* -EXDEV (another root), -ESTALE (another boot), -EPROTO (no root line),
 * 0 for UNDO_OK. */
int undo_refusal_errno(enum undo_refusal r);
/* Renames the journal to undo.journal.refused (kept for the operator, never
 * restored) so a new one can start.  0 (also when there is none) or -errno. */
int undo_set_aside(const char *state_dir);
/* Parses a journal into u's entries (appending; bad lines counted in
 * u->corrupt).  0 or -ENOMEM. */
int undo_parse(struct undo *u, const char *buf, size_t len);
/* The journal text of u, malloc'd.  0 or -ENOMEM. */
int undo_format(const struct undo *u, char **ret_buf, size_t *ret_len);

/* The journal of state_dir for root id (NULL: no check, for listing),
 * loaded if present; one of another identity gets u->refused, which
 * undo_begin() and undo_restore() refuse.  dry_run: never writes. */
int undo_new(const char *state_dir, const struct undo_identity *id, bool dry_run, struct undo **ret);
void undo_free(struct undo *u);
struct undo_entry *undo_find(struct undo *u, const struct knob_key *k);
/* k is about to become pending (a new entry: original = last = current);
 * saved before it returns, so write the object only on >= 0.  1 for a new
 * entry, 0 for an existing one, or -errno with the entries as before. */
int undo_begin(struct undo *u, const struct knob_key *k, const char *current, const char *pending,
               struct undo_entry **ret_entry);
/* The write of e's pending value ended (ok: it reads back as now_value,
 * NULL = pending); saved only when the file would miss the value held. */
int undo_end(struct undo *u, struct undo_entry *e, bool ok, const char *now_value);
/* A NIC renamed: its entries take the new name (stale ones under it are
 * dropped), then a full save.  How many moved, or -errno (moved anyway). */
int undo_rename_nic(struct undo *u, const char *from, const char *to);
/* Drops the entries of gone (or reused) threads, which short-lived worker
 * threads would otherwise grow without bound.  How many, or -errno. */
int undo_forget_gone_threads(struct undo *u, int rootfd);

/* Puts back every original (threads only when root_is_host), keeping in
 * the journal only the failed ones.  0 or the first error; a refused
 * journal is left as is, undo_refusal_errno() returned, ret->refused why. */
int undo_restore(struct undo *u, int rootfd, bool root_is_host, struct undo_report *ret);

/* undo_restore() of state_dir's journal on rootfd, after a crash or for
 * `irqsteerctl restore`; no journal is 0. */
int undo_recover(int rootfd, const char *state_dir, struct undo_report *ret);
