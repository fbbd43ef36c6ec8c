/* Conditions an operator should act on, said in the journal (at their begin
 * and end), the status text and the metrics (irqsteerd(8), PROBLEMS). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MESSAGE_ID= of a problem's beginning and end. */
#define PROBLEM_MID "97ab1f747d0742c3b13f89e1909ddd4a"

enum problem {
        PROBLEM_METRICS_FILE,   /* metrics_file cannot be written */
        PROBLEM_STATE_FILES,    /* status.json or metrics.prom in the state directory cannot be written */
        PROBLEM_UNDO_JOURNAL,   /* the undo journal cannot be saved: nothing is changed meanwhile */
        PROBLEM_BAN_FILE,       /* a runtime ban file is invalid and ignored */
        PROBLEM_RELOAD,         /* the last reload did not apply (the whole file or part of it) */
        PROBLEM_WRITE,          /* the kernel refuses a write for a reason irqsteerd does not expect */
        PROBLEM_MAX,
        PROBLEM_INVALID = -1,
};

struct problems {
        bool active[PROBLEM_MAX];
        uint64_t begun[PROBLEM_MAX];  /* how many times each began, for the metrics */
        char what[PROBLEM_MAX][256];  /* the journal's message while active */
};

/* The code: "metrics-file-write" and so on; NULL when out of range. */
const char *problem_to_string(enum problem p);
/* p holds (err fills %m): logged when it begins or its message changes. */
void problem_set(struct problems *ps, enum problem p, int err, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* p no longer holds: "fine again" is logged once, with message. */
void problem_clear(struct problems *ps, enum problem p, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* "; CODE: message" for each active problem but PROBLEM_RELOAD and those
 * already in shown (or NULL), appended to buf, cut to fit. */
void problem_append_status(const struct problems *ps, const char *shown, char *buf, size_t len);
