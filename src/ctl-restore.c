/* irqsteerctl restore: put back what a previous run saved in the undo
 * journal. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ctl-internal.h"
#include "ctl.h"
#include "json.h"
#include "knob.h"
#include "rootfs.h"
#include "state.h"
#include "undo.h"
#include "util.h"

static const char restore_help[] =
        "Usage: irqsteerctl restore [--root DIR] [--state-dir DIR] [--force]\n"
        "Put back the original IRQ affinities, RPS/XPS masks, flow counts and thread\n"
        "affinities saved in DIR/" UNDO_JOURNAL_NAME " by a previous irqsteerd run.\n\n"
        "  -r, --root DIR       write /proc and /sys under DIR (default /)\n"
        "  -s, --state-dir DIR  the daemon's state directory (default " CONFIG_DEFAULT_STATE_DIR ",\n"
        "                       DIR/run/irqsteer with --root DIR)\n"
        "  -f, --force          restore even though status.json names a running irqsteerd\n"
        "                       (never while one holds the state directory's lock)\n"
        "  -h, --help           show this help\n";

int ctl_restore(int argc, char **argv) {
        _cleanup_(json_freep) struct json_value *status = NULL;
        struct undo_report rep = { 0 };
        struct undo *u = NULL;
        const char *root = "/", *asked_state_dir = NULL;
        _cleanup_(freep) char *state_dir = NULL, *root_lock_dir = NULL;
        _cleanup_(closep) int rootfd = -1, lockfd = -1, root_lockfd = -1;
        char why[400];
        bool force = false, host;
        int64_t pid = 0;
        pid_t holder = 0;
        const struct ctl_option options[] = {
                CTL_OPT("root", 'r', CTL_OPT_STRING, &root),
                CTL_OPT("state-dir", 's', CTL_OPT_STRING, &asked_state_dir),
                CTL_OPT("force", 'f', CTL_OPT_FLAG, &force),
        };
        int r;

        r = ctl_options("restore", argc, argv, restore_help, options, ELEMENTSOF(options), false);
        if (r <= 0)
                return -r;
        rootfd = ctl_open_root(root);
        if (rootfd < 0)
                return CTL_EXIT_ERROR;
        host = rootfs_is_host(rootfd);
        /* a --root run keeps its journal under its root (irqsteerd(8)) */
        r = state_dir_choose(asked_state_dir, NULL, root, host, false, &state_dir);
        if (r == -EXDEV)
                return ctl_error("--state-dir %s is the host's state directory, not that of root %s "
                                 "(omit --state-dir for %s/run/irqsteer)", asked_state_dir, root, root);
        if (r < 0)
                return ctl_error("cannot choose the state directory: %s", strerror(-r));
        /* the daemon's lock while the journal is read and rewritten, not
         * overridden; and no one else may have written the directory */
        r = state_dir_check(state_dir, why, sizeof(why));
        if (r == -EPERM)
                return ctl_error("refusing the state directory %s: %s; it must be owned by root and writable by "
                                 "no one else, as everything in it", state_dir, why);
        lockfd = r == -ENOENT ? r : state_lock(state_dir, &holder);
        if (lockfd == -ENOENT) {
                printf("Nothing to restore: no saved originals in %s/%s.\n", state_dir, UNDO_JOURNAL_NAME);
                return CTL_EXIT_OK;
        }
        if (lockfd == -EBUSY && holder > 0 && state_pid_is_irqsteerd(holder))
                return ctl_error("irqsteerd (pid %d) holds %s/%s and restores on stop; stop it first "
                                 "(--force does not override the lock)", (int) holder, state_dir, STATE_LOCK_NAME);
        if (lockfd == -EBUSY) /* another restore, or a daemon whose PID did not fit */
                return ctl_error("%s/%s is locked: an irqsteerd or another restore is using %s; "
                                 "try again when it is done (--force does not override the lock)", state_dir,
                                 STATE_LOCK_NAME, state_dir);
        if (lockfd < 0)
                return ctl_error("cannot lock %s/%s: %s", state_dir, STATE_LOCK_NAME, state_strerror(lockfd));
        /* and the root's: a daemon there writes the same files */
        root_lockfd = state_lock_root(root, host, &root_lock_dir, &holder, why, sizeof(why));
        if (root_lockfd == -EBUSY)
                return ctl_error("irqsteerd (pid %d) is running on root %s (it holds %s/%s); stop it first "
                                 "(--force does not override the lock)", (int) holder, root, root_lock_dir,
                                 STATE_ROOT_LOCK_NAME);
        if (root_lockfd < 0)
                return ctl_error("cannot lock root %s: %s", root, why[0] ? why : state_strerror(root_lockfd));
        /* a live daemon in status.json (the lock is the word on this
         * directory; --force overrides this one) */
        if (!force && state_read_status(state_dir, &status) == 0 && state_status_live(status, &pid))
                return ctl_error("irqsteerd (pid %" PRId64 ") is running and restores on stop; stop it, or use --force",
                                 pid);

        /* list the journal first: the restore report only counts */
        r = undo_new(state_dir, NULL, true, &u);
        if (r < 0)
                return ctl_error("cannot read the undo journal in %s: %s", state_dir, state_strerror(r));
        if (u->n_entries == 0 && u->corrupt == 0) {
                printf("Nothing to restore: no saved originals in %s/%s.\n", state_dir, UNDO_JOURNAL_NAME);
                undo_free(u);
                return CTL_EXIT_OK;
        }
        printf("Saved originals in %s/%s:\n", state_dir, UNDO_JOURNAL_NAME);
        for (size_t i = 0; i < u->n_entries; i++) {
                char key[KNOB_KEY_MAX];

                if (knob_key_format(&u->entries[i].key, key, sizeof(key)) < 0)
                        snprintf(key, sizeof(key), "?");
                printf("  %-28s original %s\n", key, u->entries[i].original ? u->entries[i].original : "?");
        }
        undo_free(u);

        r = undo_recover(rootfd, state_dir, &rep);
        if (rep.refused[0])
                return ctl_error("%s/%s is not restored: %s; it is left as it is", state_dir, UNDO_JOURNAL_NAME,
                                 rep.refused);
        printf("Restored %u, already original %u, changed by someone else since (left alone) %u, "
               "gone %u, failed %u, unreadable journal lines %u.\n",
               rep.restored, rep.unchanged, rep.external, rep.gone, rep.failed, rep.corrupt);
        if (r < 0 || rep.failed > 0)
                return ctl_error("restore incomplete: %s%s%s; the failed objects stay in the journal", rep.first_failed,
                                 rep.first_failed[0] ? ": " : "", strerror(-(r < 0 ? r : rep.first_error)));
        return CTL_EXIT_OK;
}
