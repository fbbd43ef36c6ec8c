/* Runtime CPU bans: STATE_DIR/bans holds one CPU-list file an owner; the
 * union of the good files is banned on top of banned_cpus.  A file that
 * does not parse bans nothing; files are replaced atomically. */
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

/* 1 to BANS_NAME_MAX of [A-Za-z0-9_.@:-], not starting with '.' (temporaries). */
bool bans_name_valid(const char *name);

/* CPU lists on one or more lines, '#' comments.  0, or -errno with *ret untouched. */
int bans_parse(const char *buf, size_t len, cpuset_t *ret);

/* Reads every ban file of dir into *ret (freed first); bad files are kept
 * with their error, out of the union.  A missing dir is no bans. */
int bans_load(const char *dir, struct bans *ret);

void bans_free(struct bans *b);

/* One file as bans_load() reads it: 0 (ret->error may be set), or -ENOENT
 * when gone or a temporary. */
int bans_load_one(const char *dir, const char *name, struct ban_file *ret);

/* The file named name in b, or NULL. */
const struct ban_file *bans_find(const struct bans *b, const char *name);

/* Puts f into b (NULL: drops name) and recomputes b->cpus, so that a
 * change reads one file, not the directory.  0 or -ENOMEM (b unchanged). */
int bans_update(struct bans *b, const char *name, const struct ban_file *f);

/* Writes dir/name atomically (dir created if missing).  0 or -errno. */
int bans_write(const char *dir, const char *name, const cpuset_t *cpus);

/* Removes dir/name; -ENOENT when there is no such ban. */
int bans_remove(const char *dir, const char *name);
