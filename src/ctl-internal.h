/* Helpers of the irqsteerctl subcommand files (ctl-util.c), which call
 * these and the library, never each other. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/* "irqsteerctl: message" on stderr; returns CTL_EXIT_ERROR. */
int ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message and a pointer to --help on stderr; returns CTL_EXIT_USAGE. */
int ctl_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rootfs_open with an error message; fd or -errno. */
int ctl_open_root(const char *dir);
/* Set by SIGINT/SIGTERM (handlers without SA_RESTART) while top/plan wait. */
extern volatile sig_atomic_t ctl_quit;
void ctl_catch_signals(void);
/* Sleeps usec or until a signal sets ctl_quit; false when interrupted. */
bool ctl_sleep(uint64_t usec);
/* Loads path (NULL: the default, may be absent), printing each problem. */
int ctl_load_config(const char *path, struct config *ret);
