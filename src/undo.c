/* The undo journal (format in undo.h). */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "knob.h"
#include "log.h"
#include "rootfs.h"
#include "state.h"
#include "undo.h"
#include "util.h"

#define JOURNAL_HEADER "# irqsteer undo journal v2\n"

static void entry_done(struct undo_entry *e) {
        free(e->original);
        free(e->last);
        free(e->pending);
        e->original = e->last = e->pending = NULL;
}

struct undo_entry *undo_find(struct undo *u, const struct knob_key *k) {
        for (size_t i = 0; i < u->n_entries; i++)
                if (knob_key_equal(&u->entries[i].key, k))
                        return &u->entries[i];
        return NULL;
}

static int add_entry(struct undo *u, const struct knob_key *k, const char *original, const char *last,
                     const char *pending, struct undo_entry **ret) {
        struct undo_entry e = { .key = *k };

        if (util_grow((void **) &u->entries, &u->allocated, u->n_entries + 1, sizeof(*u->entries)) < 0)
                return -ENOMEM;
        e.original = strdup(original);
        e.last = strdup(last);
        e.pending = pending ? strdup(pending) : NULL;
        if (!e.original || !e.last || (pending && !e.pending)) {
                entry_done(&e);
                return -ENOMEM;
        }
        u->entries[u->n_entries] = e;
        u->gen++;
        *ret = &u->entries[u->n_entries];
        u->n_entries++;
        return 0;
}

/* Splits s in place at single spaces; max + 1 when there are more. */
static size_t split_fields(char *s, char **f, size_t max) {
        size_t n = 0;

        while (*s) {
                if (n == max)
                        return max + 1;
                f[n++] = s;
                s = strchr(s, ' ');
                if (!s)
                        break;
                *s++ = 0;
        }
        return n;
}

static bool parse_uint(const char *s, unsigned long long max, unsigned long long *ret) {
        uint64_t v;

        if (util_parse_u64(s, (size_t) -1, &v) < 0 || v > max)
                return false;
        *ret = v;
        return true;
}

static int set_str(char **p, const char *v) {
        char *n = NULL;

        if (v) {
                n = strdup(v);
                if (!n)
                        return -ENOMEM;
        }
        free(*p);
        *p = n;
        return 0;
}

/* "root DEV INO BOOT_ID": the first one counts; a second that differs
 * makes the file unreadable as a whole (two roots' values mixed). */
static int parse_root(struct undo *u, char **f, size_t n) {
        struct undo_identity id = { 0 };
        unsigned long long v;

        if (n != 4 || !parse_uint(f[1], UINT64_MAX, &id.dev) || !parse_uint(f[2], UINT64_MAX, &v))
                return -EBADMSG;
        id.ino = v;
        if (strcmp(f[3], "-") != 0) {
                if (strlen(f[3]) >= sizeof(id.boot_id) || !knob_word_valid(f[3]))
                        return -EBADMSG;
                strcpy(id.boot_id, f[3]);
        }
        if (u->file_has_id) {
                if (u->file_id.dev != id.dev || u->file_id.ino != id.ino || strcmp(u->file_id.boot_id, id.boot_id) != 0)
                        u->file_id.dev = u->file_id.ino = (unsigned long long) -1;
                return 0;
        }
        u->file_id = id;
        u->file_has_id = true;
        return 0;
}

/* One journal line, modified in place.  0, -EBADMSG or -ENOMEM. */
static int parse_line(struct undo *u, char *line) {
        struct undo_entry *e;
        char *f[8];
        int r;
        struct knob_key k = { 0 };
        unsigned long long v, tid;
        size_t n, key_fields;
        const char *orig, *last, *pending;

        n = split_fields(line, f, ELEMENTSOF(f));
        if (n < 1 || n > ELEMENTSOF(f))
                return -EBADMSG;
        if (strcmp(f[0], "root") == 0)
                return parse_root(u, f, n);
        k.kind = knob_kind_from_string(f[0]);
        /* the key's fields, then ORIGINAL LAST PENDING */
        key_fields = n - 3;
        switch (k.kind) {
        case KNOB_IRQ:
                /* v1 lines have no ACTIONS: listed, never restored */
                if ((n != 5 && n != 6) || !parse_uint(f[1], UINT32_MAX, &v))
                        return -EBADMSG;
                k.irq = v;
                if (n == 6) {
                        if (strlen(f[2]) >= sizeof(k.actions) || !knob_word_valid(f[2]))
                                return -EBADMSG;
                        strcpy(k.actions, f[2]);
                }
                break;
        case KNOB_RPS:
        case KNOB_XPS:
        case KNOB_FLOWCNT:
                if (n != 6 || !knob_nic_valid(f[1]) || !parse_uint(f[2], INT32_MAX, &v))
                        return -EBADMSG;
                strcpy(k.nic, f[1]);
                k.queue = v;
                break;
        case KNOB_SOCKFLOW:
        case KNOB_DEFAFF:
                if (n != 4)
                        return -EBADMSG;
                break;
        case KNOB_THREADED:
                if (n != 5 || !knob_nic_valid(f[1]))
                        return -EBADMSG;
                strcpy(k.nic, f[1]);
                break;
        case KNOB_THREAD:
                if (n != 7 || !parse_uint(f[1], INT32_MAX, &v) || v == 0 || !parse_uint(f[2], INT32_MAX, &tid) ||
                    tid == 0 || !parse_uint(f[3], UINT64_MAX, &k.starttime))
                        return -EBADMSG;
                k.pid = v;
                k.tid = tid;
                break;
        default:
                return -EBADMSG;
        }
        orig = f[key_fields];
        last = f[key_fields + 1];
        pending = strcmp(f[key_fields + 2], "-") == 0 ? NULL : f[key_fields + 2];
        if (!knob_value_valid(k.kind, orig) || !knob_value_valid(k.kind, last) ||
            (pending && !knob_value_valid(k.kind, pending)))
                return -EBADMSG;
        /* appended again: the latest line tells LAST and PENDING */
        e = undo_find(u, &k);
        if (e) {
                if (strcmp(e->original, orig) != 0)
                        return -EBADMSG;
                r = set_str(&e->last, last);
                if (r == 0)
                        r = set_str(&e->pending, pending);
                u->gen++;
                return r;
        }
        return add_entry(u, &k, orig, last, pending, &e);
}

int undo_parse(struct undo *u, const char *buf, size_t len) {
        size_t off = 0;

        while (off < len) {
                const char *nl = memchr(buf + off, '\n', len - off);
                size_t l;
                char *line;
                int r;

                if (!nl) {
                        /* a torn last write */
                        u->corrupt++;
                        break;
                }
                l = nl - (buf + off);
                if (l == 0 || buf[off] == '#' || memchr(buf + off, 0, l)) {
                        if (l > 0 && buf[off] != '#')
                                u->corrupt++;
                        off += l + 1;
                        continue;
                }
                line = strndup(buf + off, l);
                if (!line)
                        return -ENOMEM;
                r = parse_line(u, line);
                free(line);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        log_debug("undo journal: skipping unreadable line %.*s", (int) MIN(l, (size_t) 200),
                                  buf + off);
                        u->corrupt++;
                }
                off += l + 1;
        }
        return 0;
}

static void format_entry(FILE *f, const struct undo_entry *e) {
        char key[KNOB_KEY_MAX];

        if (knob_key_format(&e->key, key, sizeof(key)) < 0)
                return;
        fprintf(f, "%s %s %s %s\n", key, e->original, e->last, e->pending ? e->pending : "-");
}

int undo_format(const struct undo *u, char **ret_buf, size_t *ret_len) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        fputs(JOURNAL_HEADER, f);
        fprintf(f, "root %llu %llu %s\n", u->id.dev, u->id.ino, u->id.boot_id[0] ? u->id.boot_id : "-");
        for (size_t i = 0; i < u->n_entries; i++)
                format_entry(f, &u->entries[i]);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret_buf = buf;
        *ret_len = len;
        return 0;
}

/* mkdir -p, 0755 whatever the umask. */
static int mkdir_parents(const char *dir) {
        _cleanup_(freep) char *p = strdup(dir);
        int r;

        if (!p)
                return -ENOMEM;
        for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = 0;
                r = state_mkdir_public(p);
                *s = '/';
                if (r < 0)
                        return r;
        }
        return state_mkdir_public(p);
}

/* Writes the journal whole (or removes it when there are no entries). */
static int undo_save(struct undo *u) {
        _cleanup_(freep) char *buf = NULL;
        size_t len;
        int r;

        if (u->dry_run)
                return 0;
        u->file_ok = false;
        if (u->n_entries == 0) {
                if (unlink(u->path) < 0) {
                        if (errno == ENOENT)
                                return 0;
                        return -errno;
                }
                return state_fsync_dir(u->state_dir);
        }
        r = undo_format(u, &buf, &len);
        if (r < 0)
                return r;
        r = mkdir_parents(u->state_dir);
        /* irqsteerctl plan reads it as any user; /proc shows it all anyway */
        if (r == 0)
                r = state_write_atomic(u->state_dir, UNDO_JOURNAL_NAME, buf, len, 0644, true);
        if (r == 0) {
                u->file_ok = true;
                u->file_lines = u->n_entries;
        }
        return r;
}

/* e's line appended (a full save is O(objects) a change), or the whole
 * journal when the file is not known good or would outgrow the objects. */
static int save_entry(struct undo *u, const struct undo_entry *e) {
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(closep) int fd = -1;
        size_t len = 0;
        FILE *f;
        int r;

        if (u->dry_run)
                return 0;
        if (!u->file_ok || u->file_lines >= 2 * u->n_entries + 64)
                return undo_save(u);
        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        format_entry(f, e);
        if (fclose(f) != 0)
                return -ENOMEM;
        u->file_ok = false;
        fd = state_openat(AT_FDCWD, u->path, O_WRONLY | O_APPEND, 0, true);
        if (fd < 0)
                return fd;
        r = util_write_all(fd, buf, len);
        if (r == 0 && fdatasync(fd) < 0)
                r = -errno;
        if (r < 0)
                return r;
        u->file_ok = true;
        u->file_lines++;
        return 0;
}

/* state_write_atomic()'s ".undo.journal.PID.tmp". */
static bool is_temporary(const char *name) {
        static const char prefix[] = "." UNDO_JOURNAL_NAME ".";
        const char *x = name + sizeof(prefix) - 1;

        return strncmp(name, prefix, sizeof(prefix) - 1) == 0 && strspn(x, "0123456789") > 0 &&
               strcmp(x + strspn(x, "0123456789"), ".tmp") == 0;
}

int undo_remove_temporaries(const char *state_dir) {
        struct dirent *de;
        DIR *d;
        int n = 0, dfd, r;

        dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        d = fdopendir(dfd);
        if (!d) {
                r = -errno;
                close(dfd);
                return r;
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (!is_temporary(de->d_name))
                        continue;
                /* never a link out of the directory */
                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (unlinkat(dfd, de->d_name, 0) == 0)
                        n++;
        }
        closedir(d);
        return n;
}

int undo_identity_get(int rootfd, struct undo_identity *ret) {
        struct undo_identity id = { 0 };
        struct stat st, host;
        char buf[64];
        int hostfd;

        if (fstat(rootfd, &st) < 0)
                return -errno;
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        /* the host's boot, whatever the root */
        hostfd = rootfs_open("/");
        id.host = hostfd >= 0 && fstat(hostfd, &host) == 0 && host.st_dev == st.st_dev &&
                  host.st_ino == st.st_ino;
        if (hostfd >= 0 && rootfs_read_line(hostfd, "proc/sys/kernel/random/boot_id", buf, sizeof(buf)) == 0 &&
            knob_word_valid(buf) && strlen(buf) < sizeof(id.boot_id))
                strcpy(id.boot_id, buf);
        if (hostfd >= 0)
                close(hostfd);
        *ret = id;
        return 0;
}

int undo_refusal_errno(enum undo_refusal r) {
        return r == UNDO_OK ? 0 : r == UNDO_REFUSED_ROOT ? -EXDEV :
               r == UNDO_REFUSED_BOOT ? -ESTALE : -EPROTO;
}

/* Why u is refused (never called for UNDO_OK). */
static void refusal_describe(const struct undo *u, char *buf, size_t len) {
        dev_t a = (dev_t) u->file_id.dev, b = (dev_t) u->id.dev;

        switch (u->refused) {
        case UNDO_REFUSED_ROOT:
                if (u->file_id.dev == (unsigned long long) -1)
                        snprintf(buf, len, "it names more than one root");
                else
                        snprintf(buf, len, "it was written for another root (device %u:%u inode %llu; "
                                 "this root is device %u:%u inode %llu)", major(a), minor(a), u->file_id.ino,
                                 major(b), minor(b), u->id.ino);
                break;
        case UNDO_REFUSED_BOOT:
                snprintf(buf, len, "it was written during another boot (boot id %s; this boot is %s): the kernel reset those values since",
                         u->file_id.boot_id, u->id.boot_id);
                break;
        default:
                snprintf(buf, len, "it does not say which root its values belong to (written by an older irqsteer)");
                break;
        }
}

static enum undo_refusal check_identity(const struct undo *u) {
        if (u->n_entries == 0 && u->corrupt == 0)
                return UNDO_OK;
        if (!u->file_has_id)
                return UNDO_REFUSED_NO_ROOT;
        if (u->file_id.dev != u->id.dev || u->file_id.ino != u->id.ino)
                return UNDO_REFUSED_ROOT;
        /* the host's objects start afresh at each boot; a tree's do not */
        if (u->id.host && u->id.boot_id[0] && strcmp(u->file_id.boot_id, u->id.boot_id) != 0)
                return UNDO_REFUSED_BOOT;
        return UNDO_OK;
}

int undo_set_aside(const char *state_dir) {
        char path[PATH_MAX], aside[PATH_MAX + 16];

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", state_dir, UNDO_JOURNAL_NAME) >= sizeof(path))
                return -ENAMETOOLONG;
        snprintf(aside, sizeof(aside), "%s.refused", path);
        if (rename(path, aside) < 0)
                return errno == ENOENT ? 0 : -errno;
        return state_fsync_dir(state_dir);
}

int undo_new(const char *state_dir, const struct undo_identity *id, bool dry_run, struct undo **ret) {
        _cleanup_(closep) int fd = -1;
        struct undo *u;
        char *buf = NULL;
        size_t len = 0;
        int r;

        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        u->dry_run = dry_run;
        u->state_dir = strdup(state_dir);
        if (!u->state_dir || asprintf(&u->path, "%s/%s", state_dir, UNDO_JOURNAL_NAME) < 0) {
                u->path = NULL;
                undo_free(u);
                return -ENOMEM;
        }

        /* its lines are applied as root: read only when trusted */
        fd = state_openat(AT_FDCWD, u->path, O_RDONLY, 0, true);
        r = fd < 0 ? fd : rootfs_read_fd(fd, &buf, &len);
        if (r == 0)
                r = undo_parse(u, buf, len);
        free(buf);
        if (r < 0 && r != -ENOENT) {
                undo_free(u);
                return r;
        }
        if (id) {
                u->id = *id;
                u->refused = check_identity(u);
        }
        *ret = u;
        return 0;
}

void undo_free(struct undo *u) {
        if (!u)
                return;
        for (size_t i = 0; i < u->n_entries; i++)
                entry_done(&u->entries[i]);
        free(u->entries);
        free(u->state_dir);
        free(u->path);
        free(u);
}

int undo_rename_nic(struct undo *u, const char *from, const char *to) {
        int moved = 0, r;

        if (u->refused != UNDO_OK)
                return undo_refusal_errno(u->refused);
        if (!knob_nic_valid(from) || !knob_nic_valid(to) || strcmp(from, to) == 0)
                return -EINVAL;
        /* first the stale entries the renamed ones would meet */
        for (size_t i = 0; i < u->n_entries;) {
                struct knob_key k = u->entries[i].key;

                if (strcmp(k.nic, to) == 0) {
                        strcpy(k.nic, from);
                        if (undo_find(u, &k)) {
                                entry_done(&u->entries[i]);
                                memmove(&u->entries[i], &u->entries[i + 1],
                                        (u->n_entries - i - 1) * sizeof(*u->entries));
                                u->n_entries--;
                                continue;
                        }
                }
                i++;
        }
        for (size_t i = 0; i < u->n_entries; i++)
                if (u->entries[i].key.nic[0] && strcmp(u->entries[i].key.nic, from) == 0) {
                        strcpy(u->entries[i].key.nic, to);
                        moved++;
                }
        if (moved == 0)
                return 0;
        u->gen++;
        r = undo_save(u);
        return r < 0 ? r : moved;
}

int undo_forget_gone_threads(struct undo *u, int rootfd) {
        size_t kept = 0, gone;
        int r;

        if (u->refused != UNDO_OK)
                return undo_refusal_errno(u->refused);
        for (size_t i = 0; i < u->n_entries; i++) {
                _cleanup_(freep) char *cur = NULL;

                /* one with a write under way is the apply's to finish */
                if (u->entries[i].key.kind == KNOB_THREAD && !u->entries[i].pending) {
                        r = knob_read(rootfd, true, &u->entries[i].key, &cur);
                        if (r == -ENOENT || r == -ESRCH) {
                                entry_done(&u->entries[i]);
                                continue;
                        }
                }
                u->entries[kept++] = u->entries[i];
        }
        gone = u->n_entries - kept;
        if (gone == 0)
                return 0;
        u->n_entries = kept;
        u->gen++;
        r = undo_save(u);
        return r < 0 ? r : (int) gone;
}

int undo_begin(struct undo *u, const struct knob_key *k, const char *current, const char *pending,
               struct undo_entry **ret_entry) {
        struct undo_entry *e = undo_find(u, k);
        char *old_pending;
        int r;

        /* another root's originals are not ours to add to */
        if (u->refused != UNDO_OK)
                return undo_refusal_errno(u->refused);

        if (!e) {
                r = add_entry(u, k, current, current, pending, &e);
                if (r < 0)
                        return r;
                r = save_entry(u, e);
                if (r < 0) {
                        u->gen++;
                        u->n_entries--;
                        entry_done(&u->entries[u->n_entries]);
                        return r;
                }
                *ret_entry = e;
                return 1;
        }

        u->gen++;
        old_pending = e->pending;
        e->pending = strdup(pending);
        if (!e->pending) {
                e->pending = old_pending;
                return -ENOMEM;
        }
        r = save_entry(u, e);
        if (r < 0) {
                free(e->pending);
                e->pending = old_pending;
                return r;
        }
        free(old_pending);
        *ret_entry = e;
        return 0;
}

int undo_end(struct undo *u, struct undo_entry *e, bool ok, const char *now_value) {
        bool resave = false;
        int r;

        if (ok) {
                const char *v = now_value ? now_value : e->pending;

                /* a read-back value neither LAST nor PENDING would look like
                 * another's change after a crash */
                if (!e->pending || !knob_value_equal(e->key.kind, v, e->pending))
                        resave = true;
                r = set_str(&e->last, v);
                if (r < 0)
                        return r;
        }
        /* on failure a stale PENDING on disk is harmless */
        free(e->pending);
        e->pending = NULL;
        u->gen++;
        return resave ? save_entry(u, e) : 0;
}

/* A failed object, kept in the journal (true). */
static bool note_failure(struct undo_report *rep, int r, const char *key) {
        rep->failed++;
        if (!rep->first_error) {
                rep->first_error = r;
                snprintf(rep->first_failed, sizeof(rep->first_failed), "%s", key);
        }
        return true;
}

int undo_restore(struct undo *u, int rootfd, bool root_is_host, struct undo_report *ret) {
        struct undo_report rep = { .corrupt = u->corrupt };
        size_t kept = 0;
        int r;

        if (u->refused != UNDO_OK) {
                /* the file stays for its root, or the operator */
                refusal_describe(u, rep.refused, sizeof(rep.refused));
                rep.first_error = undo_refusal_errno(u->refused);
                *ret = rep;
                return rep.first_error;
        }

        for (size_t i = 0; i < u->n_entries; i++) {
                struct undo_entry *e = &u->entries[i];
                _cleanup_(freep) char *cur = NULL;
                char key[KNOB_KEY_MAX];
                bool keep = false;

                if (knob_key_format(&e->key, key, sizeof(key)) < 0)
                        snprintf(key, sizeof(key), "?");
                if (e->key.kind == KNOB_THREAD && !root_is_host) {
                        /* no real task behind a fixture root */
                        rep.gone++;
                        goto next;
                }
                if (e->key.kind == KNOB_IRQ) {
                        char now[KNOB_ACTIONS_MAX];

                        r = knob_irq_actions(rootfd, e->key.irq, now, sizeof(now));
                        if (r == 0 && strcmp(now, e->key.actions) != 0) {
                                /* the number was given to another device since */
                                log_debug("undo: %s now serves %s: not the IRQ journalled, leaving it alone", key,
                                          now);
                                rep.gone++;
                                goto next;
                        }
                }
                r = knob_read(rootfd, root_is_host, &e->key, &cur);
                if (r == -ENOENT || r == -ESRCH || r == -ENODEV || r == -ENXIO) {
                        log_debug("undo: %s is gone, skipping", key);
                        rep.gone++;
                        goto next;
                }
                if (r < 0) {
                        log_debug_errno(r, "undo: cannot read %s: %m", key);
                        keep = note_failure(&rep, r, key);
                        goto next;
                }
                if (knob_value_equal(e->key.kind, cur, e->original)) {
                        rep.unchanged++;
                        goto next;
                }
                if (!knob_value_equal(e->key.kind, cur, e->last) &&
                    !(e->pending && knob_value_equal(e->key.kind, cur, e->pending))) {
                        log_debug("undo: %s is %s, not %s as irqsteer left it: leaving it alone", key, cur, e->last);
                        rep.external++;
                        goto next;
                }
                if (u->dry_run) {
                        rep.restored++;
                        goto next;
                }
                r = knob_write(rootfd, root_is_host, &e->key, e->original);
                if (r == -ENOENT || r == -ESRCH) {
                        rep.gone++;
                } else if (r < 0) {
                        log_debug_errno(r, "undo: restoring %s to %s failed: %m", key, e->original);
                        keep = note_failure(&rep, r, key);
                } else {
                        log_debug("undo: restored %s to %s", key, e->original);
                        rep.restored++;
                }
        next:
                if (keep)
                        u->entries[kept++] = *e;
                else
                        entry_done(e);
        }
        u->n_entries = kept;
        u->gen++;
        r = undo_save(u);
        if (r < 0 && !rep.first_error)
                rep.first_error = r;
        *ret = rep;
        return rep.first_error;
}

int undo_recover(int rootfd, const char *state_dir, struct undo_report *ret) {
        struct undo_identity id;
        struct undo *u = NULL;
        int r;

        r = undo_identity_get(rootfd, &id);
        if (r < 0)
                return r;
        r = undo_new(state_dir, &id, false, &u);
        if (r < 0)
                return r;
        if (u->n_entries == 0 && u->corrupt == 0) {
                *ret = (struct undo_report){ 0 };
                undo_free(u);
                return 0;
        }
        r = undo_restore(u, rootfd, id.host, ret);
        undo_free(u);
        return r;
}


