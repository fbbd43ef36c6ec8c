/* Runtime CPU bans: the drop-in directory's files (bans.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bans.h"
#include "state.h"
#include "util.h"

bool bans_name_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;

        return n > 0 && n <= BANS_NAME_MAX && name[0] != '.' && strspn(name, UTIL_ALNUM "_.@:-") == n;
}

/* bans_parse, and the CPU lists as the file gives them joined by ','
 * into asked (cut with "...") when not NULL. */
static int parse_lists(const char *buf, size_t len, cpuset_t *ret, char *asked, size_t size) {
        cpuset_t all;
        const char *p = buf, *end = buf + len;
        size_t o = 0;

        cpuset_zero(&all);
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *le = nl ? nl : end;
                _cleanup_(freep) char *line = strndup(p, (size_t) (le - p));
                char *s, *hash;
                cpuset_t one;
                int r;

                if (!line)
                        return -ENOMEM;
                p = nl ? nl + 1 : end;
                hash = strchr(line, '#');
                if (hash)
                        *hash = 0;
                s = util_strstrip(line);
                if (*s == 0)
                        continue;
                r = cpuset_parse_list(s, &one);
                if (r < 0)
                        return r;
                cpuset_or(&all, &all, &one);
                if (asked && o < size) {
                        int n = snprintf(asked + o, size - o, "%s%s", o ? "," : "", s);

                        o = n < 0 || (size_t) n >= size - o ? size : o + (size_t) n;
                        util_mark_cut(asked, size, (int) o);
                }
        }
        *ret = all;
        return 0;
}

int bans_parse(const char *buf, size_t len, cpuset_t *ret) {
        return parse_lists(buf, len, ret, NULL, 0);
}

void bans_free(struct bans *b) {
        free(b->files);
        *b = (struct bans){ 0 };
}

static int cmp_file(const void *a, const void *b) {
        return strcmp(((const struct ban_file *) a)->name, ((const struct ban_file *) b)->name);
}

/* Sets why f bans nothing; returns error. */
_printf_(3, 4) static int file_error(struct ban_file *f, int error, const char *fmt, ...) {
        va_list ap;

        f->error = error;
        va_start(ap, fmt);
        vsnprintf(f->problem, sizeof(f->problem), fmt, ap);
        va_end(ap);
        return error;
}

/* One file: its contents parsed into f, or f->error and f->problem. */
static int load_one(int dfd, const char *name, struct ban_file *f) {
        _cleanup_(closep) int fd = -1;
        char buf[BANS_FILE_MAX + 1], why[96];
        struct stat st;
        ssize_t n;
        int r;

        snprintf(f->name, sizeof(f->name), "%s", name);
        if (!bans_name_valid(name))
                return file_error(f, -EINVAL, "not a valid ban name (letters, digits and _.@:- only)");
        fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0)
                return file_error(f, -errno, "cannot be read: %s", strerror(errno));
        if (!S_ISREG(st.st_mode))
                return file_error(f, -EINVAL, "not a regular file");
        /* what another user could write bans nothing (state.h) */
        if (state_untrusted(&st, false, why, sizeof(why)))
                return file_error(f, -EPERM, "%s", why);
        n = util_read_full(fd, buf, sizeof(buf));
        if (n < 0)
                return file_error(f, (int) n, "cannot be read: %s", strerror((int) -n));
        if (n > BANS_FILE_MAX)
                return file_error(f, -EFBIG, "larger than %d bytes", BANS_FILE_MAX);
        if (memchr(buf, 0, (size_t) n))
                return file_error(f, -EINVAL, "holds a NUL byte: not a CPU list");
        r = parse_lists(buf, (size_t) n, &f->cpus, f->asked, sizeof(f->asked));
        if (r < 0) {
                f->asked[0] = 0;
                return file_error(f, r, r == -ERANGE ? "a CPU number beyond %d" : "not a CPU list such as 2-3,8",
                                  CPUSET_MAX - 1);
        }
        return 0;
}

/* b->cpus: the union of the files without an error. */
static void union_cpus(struct bans *b) {
        cpuset_zero(&b->cpus);
        for (size_t i = 0; i < b->n_files; i++)
                if (b->files[i].error == 0)
                        cpuset_or(&b->cpus, &b->cpus, &b->files[i].cpus);
}

/* What bans_load() skips: ".", "..", a writer's temporary, an editor's leftover. */
static bool skipped(const char *name) {
        return name[0] == '.' || name[0] == 0 || name[strlen(name) - 1] == '~';
}

int bans_load(const char *dir, struct bans *ret) {
        _cleanup_(closep) int dfd = -1;
        DIR *dp;
        struct dirent *de;
        int r = 0;

        bans_free(ret);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        dp = fdopendir(dup(dfd));
        if (!dp)
                return -errno;
        while ((de = readdir(dp))) {
                struct ban_file *f;

                if (skipped(de->d_name))
                        continue;
                if (util_grow((void **) &ret->files, &ret->a_files, ret->n_files + 1, sizeof(*ret->files)) < 0) {
                        r = -ENOMEM;
                        break;
                }
                f = &ret->files[ret->n_files++];
                *f = (struct ban_file){ 0 };
                (void) load_one(dfd, de->d_name, f);
        }
        closedir(dp);
        if (r < 0) {
                bans_free(ret);
                return r;
        }
        if (ret->n_files > 1)
                qsort(ret->files, ret->n_files, sizeof(*ret->files), cmp_file);
        union_cpus(ret);
        return 0;
}

int bans_load_one(const char *dir, const char *name, struct ban_file *ret) {
        _cleanup_(closep) int dfd = -1;
        struct stat st;

        if (skipped(name))
                return -ENOENT;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        *ret = (struct ban_file){ 0 };
        (void) load_one(dfd, name, ret);
        return 0;
}

static int cmp_name(const void *key, const void *f) {
        return strcmp(key, ((const struct ban_file *) f)->name);
}

const struct ban_file *bans_find(const struct bans *b, const char *name) {
        char key[BANS_NAME_MAX + 1];

        /* as load_one() keeps it: a longer (invalid) name cut */
        snprintf(key, sizeof(key), "%s", name);
        return b->n_files ? bsearch(key, b->files, b->n_files, sizeof(*b->files), cmp_name) : NULL;
}

int bans_update(struct bans *b, const char *name, const struct ban_file *f) {
        struct ban_file *old = (struct ban_file *) bans_find(b, name);
        size_t at;

        if (old && f)
                *old = *f;
        else if (old) {
                at = (size_t) (old - b->files);
                memmove(old, old + 1, (b->n_files - at - 1) * sizeof(*old));
                b->n_files--;
        } else if (f) {
                if (util_grow((void **) &b->files, &b->a_files, b->n_files + 1, sizeof(*b->files)) < 0)
                        return -ENOMEM;
                for (at = b->n_files; at > 0 && strcmp(b->files[at - 1].name, f->name) > 0; at--)
                        ;
                memmove(b->files + at + 1, b->files + at, (b->n_files - at) * sizeof(*b->files));
                b->files[at] = *f;
                b->n_files++;
        }
        union_cpus(b);
        return 0;
}

int bans_write(const char *dir, const char *name, const cpuset_t *cpus) {
        char buf[CPUSET_MAX * 6];
        int r;

        if (!bans_name_valid(name))
                return -EINVAL;
        r = cpuset_format_list(cpus, buf, sizeof(buf) - 1);
        if (r < 0)
                return r;
        strcat(buf, "\n");
        r = state_dir_ensure(dir);
        if (r < 0)
                return r;
        return state_write_atomic(dir, name, buf, strlen(buf), 0644, false);
}

int bans_remove(const char *dir, const char *name) {
        _cleanup_(closep) int dfd = -1;

        if (!bans_name_valid(name))
                return -EINVAL;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        if (unlinkat(dfd, name, 0) < 0)
                return -errno;
        return 0;
}
