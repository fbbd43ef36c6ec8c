/* Shared bits of the libFuzzer harnesses (tests/README.md).  A harness
 * aborts on a property it checks, so libFuzzer keeps the input as a
 * finding, as it does for a sanitizer report. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                                   \
        do {                                                                               \
                if (!(cond)) {                                                             \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
                        abort();                                                           \
                }                                                                          \
        } while (0)

/* The parsers' debug lines would drown libFuzzer's output and slow it. */
#define FUZZ_QUIET_LOG()                                                                   \
        int LLVMFuzzerInitialize(int *argc, char ***argv) {                                \
                (void) argc;                                                               \
                (void) argv;                                                               \
                log_set_max_level(LOG_CRIT);                                               \
                return 0;                                                                  \
        }

/* A NUL-terminated copy of the input, for parsers of C strings (they see
 * it up to its first NUL, as they would a file's text); free() it. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                abort();
        memcpy(s, data, size);
        s[size] = 0;
        return s;
}
