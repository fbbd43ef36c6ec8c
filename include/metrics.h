/* The metrics: the daemon's counters and the per-CPU load of a report
 * snapshot in the Prometheus text format, written to the state directory
 * (and metrics_file) at each full tick for node_exporter's textfile
 * collector. */
#pragma once

#include <stddef.h>

#include "report.h"

/* The Prometheus text file in the state directory, rewritten each tick;
 * `irqsteerctl metrics` prints it. */
#define METRICS_NAME "metrics.prom"
/* How every metrics text irqsteerd writes begins: tells its own
 * metrics_file from another program's. */
#define METRICS_HEAD "# HELP irqsteer_build_info "

/* CPUs with per-CPU series at most: the hot ones, then the busiest by
 * irq+softirq; the irqsteer_cpu_load_ratio histogram covers every CPU. */
#define METRICS_CPUS_MAX 64

/* Escapes a label value for the Prometheus text format (backslash, double
 * quote and newline become two characters each: a backslash and the
 * character, n for the newline) into buf.  -ENOBUFS when it
 * does not fit.  Pure. */
int metrics_escape_label(const char *in, char *buf, size_t len);

/* The metrics of s and rp's counters in the Prometheus text exposition
 * format 0.0.4, as a malloc'd *ret of *ret_len bytes.  Series per CPU for
 * at most METRICS_CPUS_MAX CPUs, never per IRQ or per interface, so their
 * number is bounded by a constant.  0 or -ENOMEM. */
int metrics_text(const struct report *rp, const struct report_snapshot *s, char **ret, size_t *ret_len);

/* Writes the metrics to s->state_dir/METRICS_NAME and, when set, to
 * the configuration's metrics_file; each failure logged once, and its end.
 * 0 or the first negative errno. */
/* Whether metrics_file path may be written (and removed at stop): missing,
 * or a file irqsteerd wrote (METRICS_HEAD); 0 when it is another
 * program's, -errno when that cannot be told. */
int metrics_file_ours(const char *path);

int metrics_write(struct report *rp, const struct report_snapshot *s);

/* Removes the metrics files (stopping: stale values must not be scraped
 * as current).  Missing files are fine. */
void metrics_remove(const struct report_snapshot *s);
