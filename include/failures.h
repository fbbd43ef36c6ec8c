/* The failure registry: a persistent condition is said once (STYLE.md 8)
 * until the object's error class changes or it succeeds; repeats go to
 * debug through rl. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "action.h"
#include "knob.h"
#include "log.h"
#include "vectors.h"

struct failures_object {
        char key[KNOB_KEY_MAX];
        enum action_failure cls;
        bool act;                 /* said at warning: the operator should act (problem.h) */
        char line[256];           /* what was said then */
};
struct failures {
        struct failures_object *v;
        size_t n, allocated;
        struct log_ratelimit rl;
};

/* Logs a failed action (r < 0) once per object and error class; now in
 * microseconds feeds the repeat limit; vec (or NULL) gives the count of
 * IRQs on the CPU an ENOSPC refused. */
void failures_log(struct failures *fs, const struct action *a, const char *line, int r, uint64_t now,
                  const struct vectors *vec);
/* The action's object succeeded: a later failure is news again. */
void failures_forget(struct failures *fs, const struct action *a);
void failures_free(struct failures *fs);
/* The first object whose failure the operator should act on (a write
 * refused for good, not a kernel-managed IRQ, or failing for a reason
 * irqsteerd does not expect), NULL when none. */
const struct failures_object *failures_to_act(const struct failures *fs);

/* Whether a failed action with result r means the inventory is stale and
 * must be rediscovered at the next tick: a vanished IRQ or queue (ENOENT
 * and the other "gone" errors), not an exited thread (ESRCH is normal) nor
 * rps_sock_flow_entries (absent in a network namespace). */
bool failures_rediscovers(enum knob_kind type, int r);
