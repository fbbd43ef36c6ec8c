/* Between engine.c (the tick) and engine-diff.c (what was found and what
 * changed); not an API. */
#pragma once

#include "engine.h"

/* Logs the CPU topology, at info. */
void engine_log_topology(const struct engine *e);
/* Logs each NIC, warning once a name when its IRQs are guessed. */
void engine_log_inventory(struct engine *e);
/* Link events and placements forgotten for what changed from old to new;
 * a NIC renamed takes its saved originals along. */
void engine_diff_inventory(struct engine *e, const struct inventory *old, const struct inventory *new);
