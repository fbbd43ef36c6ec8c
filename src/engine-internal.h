/* Between engine.c (the tick) and engine-diff.c (what was found and what
 * changed); not an API. */
#pragma once

#include "engine.h"

/* Logs the CPU topology, at info. */
void engine_log_topology(const struct engine *e);
/* Logs each NIC (managed or not, its IRQ map), warning once per NIC name
 * when its queue IRQs are guessed from msi_irqs order. */
void engine_log_inventory(struct engine *e);
/* Link events and placements forgotten for what changed from old to new;
 * a NIC renamed takes its saved originals along. */
void engine_diff_inventory(struct engine *e, const struct inventory *old, const struct inventory *new);
