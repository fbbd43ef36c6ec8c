/* JSON: a streaming writer that never emits invalid JSON (non-finite
 * doubles as null, bad UTF-8 as U+FFFD), and a reader into a tree bounded
 * by JSON_MAX_DEPTH, JSON_MAX_NODES (-EBADMSG) and JSON_MAX_INPUT (-E2BIG). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cpuset.h"

#define JSON_MAX_DEPTH 64
#define JSON_MAX_NODES (1u << 20)
#define JSON_MAX_INPUT (64u << 20)

enum json_flags {
        JSON_PRETTY = 1 << 0,    /* newlines and two-space indentation */
};

struct json_writer {
        FILE *f;
        unsigned flags;
        int error;               /* first error (sticky), 0 if none */
        unsigned depth;
        bool want_value;         /* a key was written, its value is next */
        /* per nesting level: 'o' object / 'a' array, and whether it has items */
        char kind[JSON_MAX_DEPTH];
        bool nonempty[JSON_MAX_DEPTH];
};

void json_writer_init(struct json_writer *w, FILE *f, unsigned flags);
/* Writes more members of an object at depth (1: the top) of another
 * writer's output, to go in just before its end. */
void json_writer_init_members(struct json_writer *w, FILE *f, unsigned flags, unsigned depth);
/* 0 when all written is complete and f has no error, else the first error
 * (-EINVAL misuse, -E2BIG too deep, -EIO).  Does not flush f. */
int json_writer_finish(struct json_writer *w);

void json_begin_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w);
void json_end_array(struct json_writer *w);
void json_key(struct json_writer *w, const char *key);

/* NULL s writes null. */
void json_string(struct json_writer *w, const char *s);
void json_int(struct json_writer *w, int64_t v);
void json_uint(struct json_writer *w, uint64_t v);
/* Shortest form that reads back as the same double; NaN/inf write null. */
void json_double(struct json_writer *w, double v);
/* Fixed decimals (0..17); NaN/inf write null. */
void json_double_prec(struct json_writer *w, double v, int decimals);
/* util_format_fixed6(); NaN/inf write null. */
void json_double6(struct json_writer *w, double v);
void json_null(struct json_writer *w);
void json_cpuset(struct json_writer *w, const cpuset_t *s);

void json_key_string(struct json_writer *w, const char *key, const char *s);
void json_key_int(struct json_writer *w, const char *key, int64_t v);
void json_key_uint(struct json_writer *w, const char *key, uint64_t v);
void json_key_double(struct json_writer *w, const char *key, double v);
void json_key_double6(struct json_writer *w, const char *key, double v);
void json_key_bool(struct json_writer *w, const char *key, bool v);
void json_key_null(struct json_writer *w, const char *key);
void json_key_cpuset(struct json_writer *w, const char *key, const cpuset_t *s);
/* The value when has (it is known), else null. */
void json_key_int_if(struct json_writer *w, const char *key, bool has, int64_t v);
void json_key_uint_if(struct json_writer *w, const char *key, bool has, uint64_t v);
void json_key_cpuset_if(struct json_writer *w, const char *key, bool has, const cpuset_t *s);
void json_key_begin_object(struct json_writer *w, const char *key);
void json_key_begin_array(struct json_writer *w, const char *key);

enum json_type {
        JSON_NULL,
        JSON_BOOL,
        JSON_NUMBER,
        JSON_STRING,
        JSON_ARRAY,
        JSON_OBJECT,
        JSON_TYPE_MAX,
        JSON_TYPE_INVALID = -1,
};

struct json_value {
        enum json_type type;
        bool boolean;            /* JSON_BOOL */
        double number;           /* JSON_NUMBER */
        bool is_int;             /* an integer fitting int64, exactly in integer */
        int64_t integer;
        char *string;            /* JSON_STRING, NUL-terminated (\u0000: string_len) */
        size_t string_len;
        struct json_value *items;/* JSON_ARRAY elements / JSON_OBJECT member values */
        char *key;               /* a JSON_OBJECT member's name */
        size_t n;                /* element / member count */
        size_t allocated;
};

/* One value from [buf, buf+len) into a new tree.  0, -EBADMSG, -E2BIG or
 * -ENOMEM. */
int json_parse(const char *buf, size_t len, struct json_value **ret);
void json_free(struct json_value *v);
static inline void json_freep(struct json_value **v) {
        json_free(*v);
}

/* Member key of object v (first match), or NULL. */
const struct json_value *json_get(const struct json_value *v, const char *key);
const struct json_value *json_index(const struct json_value *v, size_t i);
size_t json_count(const struct json_value *v);

/* Member key of v: 0, -ENOENT, -EMEDIUMTYPE (another type), -ERANGE. */
int json_get_string(const struct json_value *v, const char *key, const char **ret);
int json_get_number(const struct json_value *v, const char *key, double *ret);
int json_get_int(const struct json_value *v, const char *key, int64_t *ret);
/* v as an integer (5, 5.0, 5e0; not 5.5): 0, -EMEDIUMTYPE or -ERANGE. */
int json_as_int(const struct json_value *v, int64_t *ret);
int json_get_bool(const struct json_value *v, const char *key, bool *ret);
/* An array of CPU numbers: 0, -EMEDIUMTYPE or -ERANGE. */
int json_to_cpuset(const struct json_value *v, cpuset_t *ret);

/* Writes a parsed tree back out. */
void json_write_value(struct json_writer *w, const struct json_value *v);
