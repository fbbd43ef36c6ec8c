/* The failure registry (failures.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failures.h"
#include "log.h"
#include "util.h"

static struct failures_object *failed_find(struct failures *fs, const char *key) {
        for (size_t i = 0; i < fs->n; i++)
                if (strcmp(fs->v[i].key, key) == 0)
                        return &fs->v[i];
        return NULL;
}

void failures_forget(struct failures *fs, const struct action *a) {
        struct failures_object *f;
        char key[KNOB_KEY_MAX];

        action_key_text(a, key, sizeof(key));
        f = failed_find(fs, key);
        if (f)
                *f = fs->v[--fs->n];
}

void failures_free(struct failures *fs) {
        free(fs->v);
        fs->v = NULL;
        fs->n = fs->allocated = 0;
}

static void mark_act(struct failures_object *f, int r, const char *line) {
        if (!f)
                return;
        f->act = true;
        snprintf(f->line, sizeof(f->line), "%s: %s", line, strerror(r < 0 ? -r : r));
}

const struct failures_object *failures_to_act(const struct failures *fs) {
        for (size_t i = 0; i < fs->n; i++)
                if (fs->v[i].act)
                        return &fs->v[i];
        return NULL;
}

void failures_log(struct failures *fs, const struct action *a, const char *line, int r, uint64_t now,
                  const struct vectors *vec) {
        enum action_failure cls = action_failure_class(a->type, r);
        struct failures_object *f;
        char key[KNOB_KEY_MAX];

        action_key_text(a, key, sizeof(key));
        f = failed_find(fs, key);
        if (f && f->cls == cls) {
                /* Said already; repeats only when the limit allows, at debug. */
                if (log_ratelimit_ok(&fs->rl, now))
                        log_debug_errno(r, "still failing (%s): %s: %m", action_failure_to_string(cls), line);
                return;
        }
        if (!f && util_grow((void **) &fs->v, &fs->allocated, fs->n + 1, sizeof(*fs->v)) == 0) {
                f = &fs->v[fs->n++];
                snprintf(f->key, sizeof(f->key), "%s", key);
        }
        if (f) {
                f->cls = cls;
                f->act = false;
        }

        /* the one place an action's failure is said */
        switch (cls) {
        case ACTION_FAIL_PERMANENT:
                if (a->type == KNOB_IRQ && (r == -EIO || r == -EPERM))
                        /* expected: skipped quietly from now on */
                        log_info_errno(r, "%s: managed by the kernel (%m); not touching it again", line);
                else if (a->type == KNOB_THREAD)
                        log_full_errno(LOG_NOTICE, r, "%s: the thread refuses affinity changes (%m); leaving it alone",
                                       line);
                else if (a->type == KNOB_SOCKFLOW)
                        log_full_errno(LOG_NOTICE, r, "%s: rps_sock_flow_entries cannot be set (%m); RFS stays off",
                                       line);
                else {
                        log_warning_errno(r, "%s: cannot be changed (%m); not touching it again", line);
                        mark_act(f, r, line);
                }
                break;
        case ACTION_FAIL_CAPACITY: {
                int cpu = cpuset_kept_first(&a->cpus);

                log_full_errno(LOG_NOTICE, r,
                               "%s: no free vector on CPU%d, where %u IRQs are delivered (%m); choosing another CPU",
                               line, cpu, vectors_used(vec, cpu));
                break;
        }
        case ACTION_FAIL_GONE:
                if (a->type == KNOB_SOCKFLOW)
                        /* the sysctl is the initial namespace's only */
                        log_info_errno(r, "%s: rps_sock_flow_entries is not visible here (a network namespace?); "
                                       "RFS uses the host's value", line);
                else if (failures_rediscovers(a->type, r))
                        log_info_errno(r, "%s: object vanished (%m); rediscovering at the next tick", line);
                else
                        log_info_errno(r, "%s: not there (%m)", line);
                break;
        case ACTION_FAIL_TRANSIENT:
                log_debug_errno(r, "%s: busy (%m), retrying next tick", line);
                break;
        default:
                log_warning_errno(r, "%s: failed (%s): %m", line, action_failure_to_string(cls));
                mark_act(f, r, line);
                break;
        }
}

bool failures_rediscovers(enum knob_kind type, int r) {
        /* threads are rediscovered each tick anyway */
        return action_failure_class(type, r) == ACTION_FAIL_GONE && type != KNOB_THREAD &&
               type != KNOB_SOCKFLOW; /* absent in a network namespace, by design */
}
