/* The metrics in the Prometheus text format, written to the state directory
 * (and metrics_file) each full tick for node_exporter's textfile collector. */
#pragma once

#include <stddef.h>

#include "report.h"

#define METRICS_NAME "metrics.prom"
/* How irqsteerd's metrics text begins: tells its metrics_file from another's. */
#define METRICS_HEAD "# HELP irqsteer_build_info "

/* CPUs with per-CPU series at most: the hot ones, then the busiest by
 * irq+softirq; the irqsteer_cpu_load_ratio histogram covers every CPU. */
#define METRICS_CPUS_MAX 64

/* The metrics text (format 0.0.4) as a malloc'd *ret; never a series per IRQ
 * or interface, so their number is bounded.  0 or -ENOMEM. */
int metrics_text(const struct report *rp, const struct report_snapshot *s, char **ret, size_t *ret_len);

/* Whether path may be written and removed: missing or ours (METRICS_HEAD) 1,
 * another program's 0, -errno when that cannot be told. */
int metrics_file_ours(const char *path);
/* To the state directory and metrics_file; each failure logged once.
 * 0 or the first -errno. */
int metrics_write(struct report *rp, const struct report_snapshot *s);
/* Removes the metrics files at stop: stale values must not be scraped. */
void metrics_remove(const struct report_snapshot *s);
