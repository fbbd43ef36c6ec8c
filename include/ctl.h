/* irqsteerctl: the operator's window.  Subcommands (inventory, top, status,
 * plan, restore, metrics, bans) and the pure formatters behind them, which
 * take data in and write to a FILE* or a json_writer, so tests drive them
 * with hand-made inputs.  Output schemas, and that of STATE_DIR/status.json
 * (the contract with the daemon: members may be added, never renamed or
 * retyped), are in irqsteerctl(8), JSON OUTPUT and STATUS JSON. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "inventory.h"
#include "json.h"
#include "sample.h"
#include "topology.h"

#define CTL_STATUS_VERSION 1
#define CTL_INVENTORY_VERSION 1

/* Exit codes of irqsteerctl (irqsteerctl(8), EXIT STATUS). */
enum {
        CTL_EXIT_OK = 0,
        CTL_EXIT_ERROR = 1,
        CTL_EXIT_USAGE = 2,
        CTL_EXIT_NOT_RUNNING = 3,   /* status: no status file, or it names a dead process */
        CTL_EXIT_BAD_STATUS = 4,    /* status: the file is not JSON or not the schema */
};

/* Runs irqsteerctl with its command line; returns the exit code. */
int ctl_main(int argc, char **argv);

/* The subcommands; argv[0] is the subcommand name.  Return an exit code. */
int ctl_inventory(int argc, char **argv);
int ctl_top(int argc, char **argv);
int ctl_status(int argc, char **argv);
int ctl_plan(int argc, char **argv);
int ctl_restore(int argc, char **argv);
int ctl_metrics(int argc, char **argv);
int ctl_ban(int argc, char **argv);
int ctl_unban(int argc, char **argv);
int ctl_bans(int argc, char **argv);

/* Inventory as JSON (schema "version": 1 in irqsteerctl(8)); classes: the
 * class of each of inv's IRQs (classify_irq, in inv's order), or NULL
 * when unknown (null in the JSON). */
void ctl_inventory_json(struct json_writer *w, const struct topology *t, const struct inventory *inv,
                        const int *classes);

/* The NIC queue IRQs served by cpu, as labels "NIC:Q" (combined rx/tx
 * vector), "NIC:Qrx", "NIC:Qtx"; calls fn once per label, in inventory order. */
void ctl_cpu_queues(const struct inventory *inv, int cpu, void (*fn)(const char *label, void *userdata),
                    void *userdata);

/* One top sample as a JSON Lines object without the newline (irqsteerctl(8),
 * TOP JSON); time_s is CLOCK_REALTIME seconds; inv may be NULL (no queues). */
void ctl_top_json(struct json_writer *w, double time_s, const struct sample_rates *r,
                  const struct inventory *inv);
/* irq+softirq share from which top marks a CPU hot: the daemon's default
 * hot_enter. */
#define CTL_TOP_HOT 0.80
struct ctl_top_view {
        size_t rows;             /* lines the table may take; 0 = no limit */
        size_t max_cpus;         /* CPU rows at most; 0 = no limit */
        size_t cols;             /* terminal width; 0: lines of up to 100 columns */
        bool sort_cpu;           /* by CPU number, not by irq+softirq */
        bool color;              /* hot rows in reverse video (a terminal) */
        double hot;              /* irq+softirq share marked hot ('*') */
};
/* One top sample as a table: a summary line, the CPUs (the most
 * irq+softirq first unless sort_cpu, hot ones marked '*'; cut to fit rows,
 * saying how many more), then the IRQs that fire most with their rate. */
void ctl_top_print(FILE *f, const struct sample_rates *r, const struct inventory *inv,
                   const struct ctl_top_view *view);

/* Checks a parsed status file against its schema: 0 or -EBADMSG, with
 * a short description of the first problem in *ret_why when non-NULL. */
int ctl_status_validate(const struct json_value *v, const char **ret_why);
/* Renders a validated status document for people; now_s is CLOCK_REALTIME
 * seconds (for "N s ago").  Brief unless full (every managed object and
 * action, the configuration in the file's syntax); rootfd (or -1) is where
 * the names of pinned threads are read (proc/PID/comm); journal (or
 * NULL) is the undo journal, whose objects full lists (status.json has
 * only the newest REPORT_LIST_MAX). */
struct undo;
void ctl_status_print(FILE *f, const struct json_value *v, double now_s, int rootfd, bool full,
                      const struct undo *journal);

/* Parses an interval given as seconds ("0.5", "2") or a duration ("500ms",
 * "2s"); > 0 and at most one hour.  0 or -EINVAL / -ERANGE. */
int ctl_parse_interval(const char *s, uint64_t *ret_usec);
