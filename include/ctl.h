/* irqsteerctl: the subcommands and the pure formatters behind them (tests
 * drive them with made-up input).  Schemas: irqsteerctl(8), JSON OUTPUT and
 * STATUS JSON (members may be added, never renamed or retyped). */
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

/* Inventory as JSON; classes: each IRQ's class in inv's order, or NULL. */
void ctl_inventory_json(struct json_writer *w, const struct topology *t, const struct inventory *inv,
                        const int *classes);

/* fn for each NIC queue IRQ cpu serves: "NIC:Q", "NIC:Qrx", "NIC:Qtx". */
void ctl_cpu_queues(const struct inventory *inv, int cpu, void (*fn)(const char *label, void *userdata),
                    void *userdata);

/* One top sample as a JSON Lines object without the newline; inv may be NULL. */
void ctl_top_json(struct json_writer *w, double time_s, const struct sample_rates *r,
                  const struct inventory *inv);
/* top's hot mark: the daemon's default hot_enter. */
#define CTL_TOP_HOT 0.80
struct ctl_top_view {
        size_t rows;             /* lines the table may take; 0 = no limit */
        size_t max_cpus;         /* CPU rows at most; 0 = no limit */
        size_t cols;             /* terminal width; 0: lines of up to 100 columns */
        bool sort_cpu;           /* by CPU number, not by irq+softirq */
        bool color;              /* hot rows in reverse video (a terminal) */
        double hot;              /* irq+softirq share marked hot ('*') */
};
/* One top sample as a table: a summary, the CPUs, the IRQs firing most. */
void ctl_top_print(FILE *f, const struct sample_rates *r, const struct inventory *inv,
                   const struct ctl_top_view *view);

/* Checks a status file against its schema: 0 or -EBADMSG and *ret_why. */
int ctl_status_validate(const struct json_value *v, const char **ret_why);
/* A validated status document for people (now_s: CLOCK_REALTIME); full adds
 * every object (from journal, or NULL), action and the configuration;
 * rootfd (or -1): where thread names are read. */
struct undo;
void ctl_status_print(FILE *f, const struct json_value *v, double now_s, int rootfd, bool full,
                      const struct undo *journal);

/* Seconds ("0.5") or a duration ("500ms"), > 0 and at most an hour. */
int ctl_parse_interval(const char *s, uint64_t *ret_usec);
