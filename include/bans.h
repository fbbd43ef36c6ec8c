/* Runtime CPU bans: a drop-in directory (STATE_DIR/bans) where each owner
 * (a CPU manager, an operator) keeps one file holding a CPU list; the union
 * of the good files is banned on top of banned_cpus, without a reload.  A
 * file that does not parse bans nothing (never half of it).  Files are
 * replaced atomically (temporary + rename), so a reader never sees half a
 * list. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"

#define BANS_DIR_NAME "bans"
#define BANS_NAME_MAX 64
#define BANS_FILE_MAX 65536

struct ban_file {
        char name[BANS_NAME_MAX + 1];
        cpuset_t cpus;            /* within the host's CPUs (cpuset_set_limit) */
        char asked[64];           /* the CPUs as the file names them (cut with "..."), for the log */
        int error;                /* 0, or why the file bans nothing (negative errno) */
        char problem[128];        /* for error != 0: what is wrong, for the log */
};

struct bans {
        struct ban_file *files;   /* sorted by name */
        size_t n_files, a_files;
        cpuset_t cpus;            /* union of the files without an error */
};

/* Whether name may name a ban file: 1 to BANS_NAME_MAX characters from
 * [A-Za-z0-9_.@:-], not starting with '.' (temporaries do).  */
bool bans_name_valid(const char *name);

/* Parses a ban file's contents: CPU lists ("0-3,8") on one or more lines,
 * '#' comments and blank lines ignored; nothing at all bans nothing.
 * 0, or -EINVAL / -ERANGE / -ENOMEM with *ret untouched. */
int bans_parse(const char *buf, size_t len, cpuset_t *ret);

/* Reads every ban file of dir into *ret (freed first; zero-initialise it
 * before the first call).  Files with a bad name or contents are kept with
 * their error and left out of the union.  A missing dir is no bans.  0, or
 * -errno when dir cannot be read (then *ret is empty). */
int bans_load(const char *dir, struct bans *ret);

void bans_free(struct bans *b);

/* One file of dir into *ret, as bans_load() reads each: 0 (with ret->error
 * set when the file bans nothing), or -ENOENT when there is no such file
 * (a ban lifted) or its name is a writer's temporary. */
int bans_load_one(const char *dir, const char *name, struct ban_file *ret);

/* The file named name in b, or NULL (b->files is sorted: a binary search). */
const struct ban_file *bans_find(const struct bans *b, const char *name);

/* Puts f into b in its place (replacing a file of that name), or with f
 * NULL drops the file named name; then b->cpus again.  0 or -ENOMEM (b
 * unchanged).  A change reads one file, not the directory: 2,000 files
 * read again at each event kept the daemon busy for a minute. */
int bans_update(struct bans *b, const char *name, const struct ban_file *f);

/* Writes dir/name atomically with the CPU list of cpus; dir is created if
 * missing (its parent must exist).  -EINVAL for a bad name, else 0 or
 * -errno. */
int bans_write(const char *dir, const char *name, const cpuset_t *cpus);

/* Removes dir/name; -ENOENT when there is no such ban, -EINVAL for a bad
 * name. */
int bans_remove(const char *dir, const char *name);
