/* Helpers shared by the irqsteerctl subcommand files (ctl*.c); not an API. */
#pragma once

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

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
/* Set by SIGINT/SIGTERM while top/plan wait (ctl-top.c). */
extern volatile sig_atomic_t ctl_quit;
/* Installs the handlers that set ctl_quit (without SA_RESTART, so a wait
 * is interrupted). */
void ctl_catch_signals(void);
/* Sleeps usec or until a signal sets ctl_quit; false when interrupted. */
bool ctl_sleep(uint64_t usec);
/* CLOCK_MONOTONIC / CLOCK_REALTIME in microseconds. */
uint64_t ctl_now_monotonic(void);
uint64_t ctl_now_realtime(void);
/* irqsteerctl ban / unban / bans (ctl-bans.c). */
int ctl_ban(int argc, char **argv);
int ctl_unban(int argc, char **argv);
int ctl_bans(int argc, char **argv);
