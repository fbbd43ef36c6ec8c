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

#include "cpuset.h"

/* A cpuset_t value, or a kept set, as a pointer for one call (a temporary
 * of the block). */
#define SET(v) ((const cpuset_t *) &(struct { cpuset_t s; }) { (v) }.s)
#define KEPT(k) SET(cpuset_kept_get(k))
/* Stores the value v in kept set k (an inventory's set in a fixture). */
#define KEEP(k, v) assert_int_equal(cpuset_keep((k), SET(v)), 0)

/* cpuset_parse_list() into a kept set. */
static inline int test_keep_list(cpuset_kept_t *k, const char *list) {
        cpuset_t s;
        int r = cpuset_parse_list(list, &s);

        if (r == 0)
                assert_int_equal(cpuset_keep(k, &s), 0);
        return r;
}

/* Path of a fixture under tests/fixtures (IRQSTEER_FIXTURES, set by make check). */
static inline const char *fixture_path(const char *rel, char *buf, size_t len) {
        const char *base = getenv("IRQSTEER_FIXTURES");
        snprintf(buf, len, "%s/%s", base ? base : "tests/fixtures", rel);
        return buf;
}

/* Writes data as the whole of dir/rel (created or truncated), asserting
 * that the path fits and the write and the close succeed. */
static inline void test_write_file(const char *dir, const char *rel, const char *data) {
        char path[512];
        FILE *f;
        int n;

        n = snprintf(path, sizeof(path), "%s/%s", dir, rel);
        assert_true(n > 0 && (size_t) n < sizeof(path));
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(data, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

/* Skips the calling test with a reason unless running as root. */
#define SKIP_UNLESS_ROOT()                                                         \
        do {                                                                       \
                if (geteuid() != 0) {                                              \
                        print_message("[  SKIP    ] %s: needs root\n", __func__); \
                        skip();                                                    \
                }                                                                  \
        } while (0)

/* Skips the calling test unless the live tests were asked for (root, and
 * IRQSTEER_LIVE=1, which make check-live sets through tests/live-unit-host.sh):
 * for cases that change this host, its network namespaces say. */
#define SKIP_UNLESS_LIVE()                                                                         \
        do {                                                                                       \
                SKIP_UNLESS_ROOT();                                                                \
                if (!getenv("IRQSTEER_LIVE") || strcmp(getenv("IRQSTEER_LIVE"), "1") != 0) {       \
                        print_message("[  SKIP    ] %s: live test: run make check-live\n", __func__); \
                        skip();                                                                    \
                }                                                                                  \
        } while (0)

/* Skips the calling test unless it may change this host's IRQs: root, and
 * run by tests/live-unit-host.sh, which holds the host lock the live
 * scripts take (IRQSTEER_HOST_LOCKED=1), so a parallel `make check` never
 * races their baseline snapshots. */
#define SKIP_UNLESS_HOST_LOCKED()                                                                      \
        do {                                                                                           \
                SKIP_UNLESS_ROOT();                                                                    \
                if (!getenv("IRQSTEER_HOST_LOCKED") || strcmp(getenv("IRQSTEER_HOST_LOCKED"), "1") != 0) { \
                        print_message("[  SKIP    ] %s: live test: run make check-live (changes host IRQs; " \
                                      "tests/live-unit-host.sh runs it)\n", __func__);              \
                        skip();                                                                        \
                }                                                                                      \
        } while (0)
