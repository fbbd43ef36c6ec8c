/* Shared helpers for the cmocka tests. */
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Path of a fixture under tests/fixtures (IRQSTEER_FIXTURES, set by make check). */
static inline const char *fixture_path(const char *rel, char *buf, size_t len) {
        const char *base = getenv("IRQSTEER_FIXTURES");
        snprintf(buf, len, "%s/%s", base ? base : "tests/fixtures", rel);
        return buf;
}

/* Skips the calling test with a reason unless running as root. */
#define SKIP_UNLESS_ROOT()                                                         \
        do {                                                                       \
                if (geteuid() != 0) {                                              \
                        print_message("[  SKIP    ] %s: needs root\n", __func__); \
                        skip();                                                    \
                }                                                                  \
        } while (0)
