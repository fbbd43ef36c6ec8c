/* Helpers of the irqsteerctl subcommand files (ctl-util.c), which call
 * these and the library, never each other. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* "irqsteerctl: message" on stderr; returns CTL_EXIT_ERROR. */
int ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message and a pointer to --help on stderr; returns CTL_EXIT_USAGE. */
int ctl_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rootfs_open with an error message; fd or -errno. */
int ctl_open_root(const char *dir);
/* SIGINT/SIGTERM (handlers without SA_RESTART) end ctl_sleep(). */
void ctl_catch_signals(void);
/* Sleeps usec or until such a signal; false when interrupted. */
bool ctl_sleep(uint64_t usec);
