/* The failure registry: a persistent failure is said once until its class
 * changes or it succeeds; repeats go to debug through rl. */
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

/* Logs a failed action once per object and class; vec (or NULL) counts the
 * IRQs of the CPU an ENOSPC refused. */
void failures_log(struct failures *fs, const struct action *a, const char *line, int r, uint64_t now,
                  const struct vectors *vec);
/* The action's object succeeded: a later failure is news again. */
void failures_forget(struct failures *fs, const struct action *a);
void failures_free(struct failures *fs);
/* The first object whose failure the operator should act on, or NULL. */
const struct failures_object *failures_to_act(const struct failures *fs);

/* Whether failure r means a vanished IRQ or queue: rediscover next tick. */
bool failures_rediscovers(enum knob_kind type, int r);
