/* Helpers of the irqsteerctl subcommand files (ctl-util.c), which call
 * these and the library, never each other. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an option of a subcommand sets in its target (struct ctl_option). */
enum ctl_option_type {
        CTL_OPT_STRING,   /* const char *: the argument */
        CTL_OPT_FLAG,     /* bool: true */
        CTL_OPT_INTERVAL, /* uint64_t: ctl_parse_interval() */
        CTL_OPT_COUNT,    /* uint64_t: a number from min to max */
        CTL_OPT_CHOICE,   /* int: the index of the argument in choices */
        CTL_OPT_REFUSED,  /* nothing: the option is refused with what */
};

struct ctl_option {
        const char *name;
        char key;                 /* the short option */
        enum ctl_option_type type;
        void *target;
        const char *what, *hint;  /* a bad argument: "bad WHAT 'ARG'HINT" */
        uint64_t min, max;
        const char *const *choices; /* NULL-terminated */
        bool *given;              /* set true when given, if not NULL */
};
#define CTL_OPT(n, k, t, p, ...) { .name = (n), .key = (k), .type = (t), .target = (p), __VA_ARGS__ }

/* "irqsteerctl: message" on stderr; returns CTL_EXIT_ERROR. */
int ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message and a pointer to --help on stderr; returns CTL_EXIT_USAGE. */
int ctl_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A subcommand's options into their targets, --help added (it prints help);
 * an operand is refused unless operands.  The index of the first operand,
 * or -(exit code) when done. */
int ctl_options(const char *cmd, int argc, char **argv, const char *help, const struct ctl_option *opts, size_t n,
                bool operands);
/* rootfs_open with an error message; fd or -errno. */
int ctl_open_root(const char *dir);
/* SIGINT/SIGTERM (handlers without SA_RESTART) end ctl_sleep(). */
void ctl_catch_signals(void);
/* Sleeps usec or until such a signal; false when interrupted. */
bool ctl_sleep(uint64_t usec);
