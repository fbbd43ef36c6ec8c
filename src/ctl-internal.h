/* Helpers shared by the irqsteerctl subcommand files (ctl-util.c); not an
 * API.  A subcommand file calls these and the library, never another
 * subcommand file. */
#pragma once

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "inventory.h"
#include "procfs.h"
#include "topology.h"

/* "irqsteerctl: message" on stderr. */
void ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message and a pointer to --help on stderr; returns CTL_EXIT_USAGE. */
int ctl_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rootfs_open with an error message; fd or -errno. */
int ctl_open_root(const char *dir);
/* Topology, proc/interrupts and inventory under rootfd (with the netlink
 * refresh when host), saying what failed.  On error nothing is left allocated. */
int ctl_read_model(int rootfd, bool host, struct topology *t, struct procfs_interrupts *pi,
                   struct inventory *inv);
/* Set by SIGINT/SIGTERM while top/plan wait. */
extern volatile sig_atomic_t ctl_quit;
/* Installs the handlers that set ctl_quit (without SA_RESTART, so a wait
 * is interrupted). */
void ctl_catch_signals(void);
/* Sleeps usec or until a signal sets ctl_quit; false when interrupted. */
bool ctl_sleep(uint64_t usec);
/* Loads path (NULL: the default file, which may be absent) into ret,
 * printing each problem; 0 or -errno, with nothing left allocated. */
int ctl_load_config(const char *path, struct config *ret);
