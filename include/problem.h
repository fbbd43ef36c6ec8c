/* Conditions an operator should act on (irqsteerd(8), PROBLEMS): each is
 * said in the three places an operator looks: the journal (once when it
 * begins, at warning (error for the undo journal), with REASON=CODE and MESSAGE_ID=PROBLEM_MID, and once when it
 * ends), the unit's status text (while it lasts) and the metrics
 * (irqsteer_problem{reason="CODE"} 0/1, irqsteer_problems_total). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MESSAGE_ID= of a problem's beginning and end (journalctl MESSAGE_ID=...). */
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
/* p holds, said by the message (err fills %m and ERRNO=): logged when it
 * begins or its message changes, not while it lasts. */
void problem_set(struct problems *ps, enum problem p, int err, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* p no longer holds: "fine again" is logged once, with message. */
void problem_clear(struct problems *ps, enum problem p, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* "; CODE: message" for each active problem, appended to buf (len bytes
 * in all, cut to fit); not PROBLEM_RELOAD (the status line starts with
 * the reload's failure) nor one whose message is in shown (NULL: none). */
void problem_append_status(const struct problems *ps, const char *shown, char *buf, size_t len);
