/* JSON writer and reader (RFC 8259). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* ---- writer ---- */

void json_writer_init(struct json_writer *w, FILE *f, unsigned flags) {
        memset(w, 0, sizeof(*w));
        w->f = f;
        w->flags = flags;
}

void json_writer_init_members(struct json_writer *w, FILE *f, unsigned flags, unsigned depth) {
        json_writer_init(w, f, flags);
        if (depth == 0 || depth > JSON_MAX_DEPTH) {
                w->error = -EINVAL;
                return;
        }
        w->depth = depth;
        w->kind[depth - 1] = 'o';
        w->nonempty[depth - 1] = true;
}

static void set_error(struct json_writer *w, int error) {
        if (w->error == 0)
                w->error = error;
}

static void newline_indent(struct json_writer *w) {
        if (!(w->flags & JSON_PRETTY))
                return;
        fputc('\n', w->f);
        for (unsigned i = 0; i < w->depth; i++)
                fputs("  ", w->f);
}

/* The comma and indentation before an array element or a member. */
static void separate(struct json_writer *w) {
        if (w->nonempty[w->depth - 1])
                fputc(',', w->f);
        w->nonempty[w->depth - 1] = true;
        newline_indent(w);
}

/* Called before every value: the separator of array elements, and the
 * check that object members have a key. */
static bool before_value(struct json_writer *w) {
        if (w->error)
                return false;
        if (w->want_value) {
                w->want_value = false;
                return true;
        }
        if (w->depth == 0)
                return true;
        if (w->kind[w->depth - 1] != 'a') {
                set_error(w, -EINVAL);
                return false;
        }
        separate(w);
        return true;
}

void json_key(struct json_writer *w, const char *key) {
        if (w->error)
                return;
        if (w->depth == 0 || w->kind[w->depth - 1] != 'o' || w->want_value || !key) {
                set_error(w, -EINVAL);
                return;
        }
        separate(w);
        /* A key is a string; write it through the same escaping. */
        w->want_value = true;
        json_string(w, key);
        fputs(w->flags & JSON_PRETTY ? ": " : ":", w->f);
        w->want_value = true;
}

static void begin(struct json_writer *w, char kind) {
        if (!before_value(w))
                return;
        if (w->depth >= JSON_MAX_DEPTH) {
                set_error(w, -E2BIG);
                return;
        }
        fputc(kind == 'o' ? '{' : '[', w->f);
        w->kind[w->depth] = kind;
        w->nonempty[w->depth] = false;
        w->depth++;
}

static void end(struct json_writer *w, char kind) {
        if (w->error)
                return;
        if (w->depth == 0 || w->kind[w->depth - 1] != kind || w->want_value) {
                set_error(w, -EINVAL);
                return;
        }
        w->depth--;
        if (w->nonempty[w->depth])
                newline_indent(w);
        fputc(kind == 'o' ? '}' : ']', w->f);
}

void json_begin_object(struct json_writer *w) { begin(w, 'o'); }
void json_end_object(struct json_writer *w) { end(w, 'o'); }
void json_begin_array(struct json_writer *w) { begin(w, 'a'); }
void json_end_array(struct json_writer *w) { end(w, 'a'); }

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 if the
 * bytes there are not one (overlong forms, surrogates and code points above
 * U+10FFFF are invalid, RFC 3629 section 4). */
static size_t utf8_valid_len(const unsigned char *s, size_t n) {
        size_t need;
        uint32_t cp;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf) {
                need = 2;
                cp = s[0] & 0x1f;
        } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                need = 3;
                cp = s[0] & 0x0f;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                need = 4;
                cp = s[0] & 0x07;
        } else
                return 0;
        if (n < need)
                return 0;
        for (size_t i = 1; i < need; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return need;
}

/* The characters with a short escape, and their letters ('/' is only read). */
#define ESCAPED "\"\\/\b\f\n\r\t"
#define ESCAPES "\"\\/bfnrt"

static void json_stringn(struct json_writer *w, const char *s, size_t len) {
        const unsigned char *p = (const unsigned char *) s;

        if (!before_value(w))
                return;
        fputc('"', w->f);
        for (size_t i = 0; i < len;) {
                unsigned char c = p[i];
                const char *esc;
                size_t n;

                /* a run of plain ASCII in one fwrite: status.json is written every tick */
                for (n = i; n < len && p[n] >= 0x20 && p[n] < 0x7f && p[n] != '"' && p[n] != '\\'; n++)
                        ;
                if (n > i) {
                        fwrite(p + i, 1, n - i, w->f);
                        i = n;
                        continue;
                }
                esc = memchr(ESCAPED, c, sizeof(ESCAPED) - 1);
                n = esc || c < 0x20 || c == 0x7f ? 1 : utf8_valid_len(p + i, len - i);
                if (esc)
                        fprintf(w->f, "\\%c", ESCAPES[esc - ESCAPED]);
                else if (c < 0x20 || c == 0x7f)
                        fprintf(w->f, "\\u%04x", c);
                else if (n == 0)
                        fputs("\\ufffd", w->f);
                else
                        fwrite(p + i, 1, n, w->f);
                i += MAX(n, (size_t) 1);
        }
        fputc('"', w->f);
}

void json_string(struct json_writer *w, const char *s) {
        if (!s)
                json_null(w);
        else
                json_stringn(w, s, strlen(s));
}

/* Without printf: status.json holds thousands of numbers at 256 CPUs. */
static size_t format_int(char buf[static 24], int64_t v) {
        char *end = buf + 24, *p = util_format_u64(end, v < 0 ? -(uint64_t) v : (uint64_t) v);

        if (v < 0)
                *--p = '-';
        memmove(buf, p, (size_t) (end - p));
        return (size_t) (end - p);
}

void json_int(struct json_writer *w, int64_t v) {
        char buf[24];

        if (before_value(w))
                fwrite(buf, 1, format_int(buf, v), w->f);
}

void json_uint(struct json_writer *w, uint64_t v) {
        char buf[24], *p = util_format_u64(buf + sizeof(buf), v);

        if (before_value(w))
                fwrite(p, 1, (size_t) (buf + sizeof(buf) - p), w->f);
}

/* Before a number: false, after writing null for a non-finite one. */
static bool before_number(struct json_writer *w, double v) {
        if (isfinite(v))
                return before_value(w);
        json_null(w);
        return false;
}

void json_double(struct json_writer *w, double v) {
        char buf[64];

        if (!before_number(w, v))
                return;
        /* 15 significant digits print most values readably; 17 always
         * round-trip. */
        snprintf(buf, sizeof(buf), "%.15g", v);
        if (strtod(buf, NULL) != v)
                snprintf(buf, sizeof(buf), "%.17g", v);
        fputs(buf, w->f);
}

void json_double_prec(struct json_writer *w, double v, int decimals) {
        if (before_number(w, v))
                fprintf(w->f, "%.*f", decimals, v);
}

void json_double6(struct json_writer *w, double v) {
        char buf[32];

        if (before_number(w, v))
                fwrite(buf, 1, util_format_fixed6(buf, v), w->f);
}

static void json_bool(struct json_writer *w, bool v) {
        if (before_value(w))
                fputs(v ? "true" : "false", w->f);
}

void json_null(struct json_writer *w) {
        if (before_value(w))
                fputs("null", w->f);
}

void json_cpuset(struct json_writer *w, const cpuset_t *s) {
        unsigned flags = w->flags;

        /* CPU lists stay on one line even when pretty */
        json_begin_array(w);
        w->flags &= ~JSON_PRETTY;
        if (s && !w->error) {
                /* one buffer, not a call per CPU: status.json lists them all */
                char buf[4096];
                size_t n = 0;

                CPUSET_FOREACH(cpu, s) {
                        if (n > sizeof(buf) - 32) {
                                fwrite(buf, 1, n, w->f);
                                n = 0;
                        }
                        if (w->nonempty[w->depth - 1])
                                buf[n++] = ',';
                        w->nonempty[w->depth - 1] = true;
                        n += format_int(buf + n, cpu);
                }
                fwrite(buf, 1, n, w->f);
        }
        json_end_array(w);
        w->flags = flags;
}

/* json_key_TYPE(w, key, v): json_key() then json_TYPE(w, v). */
#define KEY_VALUE(type, ctype)                                                  \
        void json_key_##type(struct json_writer *w, const char *key, ctype v) { \
                json_key(w, key);                                               \
                json_##type(w, v);                                              \
        }
KEY_VALUE(string, const char *)
KEY_VALUE(int, int64_t)
KEY_VALUE(uint, uint64_t)
KEY_VALUE(double, double)
KEY_VALUE(double6, double)
KEY_VALUE(bool, bool)
KEY_VALUE(cpuset, const cpuset_t *)

/* json_key_TYPE_if(w, key, has, v): json_key_TYPE(), or null when !has. */
#define KEY_VALUE_IF(type, ctype)                                                                   \
        void json_key_##type##_if(struct json_writer *w, const char *key, bool has, ctype v) { \
                json_key(w, key);                                                                   \
                if (has)                                                                            \
                        json_##type(w, v);                                                          \
                else                                                                                \
                        json_null(w);                                                               \
        }
KEY_VALUE_IF(int, int64_t)
KEY_VALUE_IF(uint, uint64_t)
KEY_VALUE_IF(cpuset, const cpuset_t *)

/* json_key_NAME(w, key): json_key() then json_NAME(w). */
#define KEY_THEN(name)                                                \
        void json_key_##name(struct json_writer *w, const char *key) { \
                json_key(w, key);                                     \
                json_##name(w);                                       \
        }
KEY_THEN(null)
KEY_THEN(begin_object)
KEY_THEN(begin_array)

int json_writer_finish(struct json_writer *w) {
        if (w->error)
                return w->error;
        if (w->depth != 0 || w->want_value)
                return -EINVAL;
        if (ferror(w->f))
                return -EIO;
        return 0;
}

void json_write_value(struct json_writer *w, const struct json_value *v) {
        switch (v ? v->type : JSON_NULL) {
        case JSON_NULL:
                json_null(w);
                break;
        case JSON_BOOL:
                json_bool(w, v->boolean);
                break;
        case JSON_NUMBER:
                if (v->is_int)
                        json_int(w, v->integer);
                else
                        json_double(w, v->number);
                break;
        case JSON_STRING:
                json_stringn(w, v->string, v->string_len);
                break;
        case JSON_ARRAY:
                json_begin_array(w);
                for (size_t i = 0; i < v->n; i++)
                        json_write_value(w, &v->items[i]);
                json_end_array(w);
                break;
        case JSON_OBJECT:
                json_begin_object(w);
                for (size_t i = 0; i < v->n; i++) {
                        json_key(w, v->items[i].key);
                        json_write_value(w, &v->items[i]);
                }
                json_end_object(w);
                break;
        default:
                set_error(w, -EINVAL);
        }
}

/* ---- reader ---- */

struct parser {
        const char *p, *end;
        size_t nodes;
};

static void value_clear(struct json_value *v) {
        free(v->string);
        free(v->key);
        for (size_t i = 0; i < v->n; i++)
                value_clear(&v->items[i]);
        free(v->items);
        memset(v, 0, sizeof(*v));
}

void json_free(struct json_value *v) {
        if (!v)
                return;
        value_clear(v);
        free(v);
}

static void skip_ws(struct parser *ps) {
        while (ps->p < ps->end &&
               (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
                ps->p++;
}

static bool literal(struct parser *ps, const char *word) {
        size_t n = strlen(word);

        if ((size_t) (ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
                return false;
        ps->p += n;
        return true;
}

static int hex4(const char *p, uint32_t *ret) {
        static const char digits[] = "0123456789abcdef";
        uint32_t v = 0;

        for (int i = 0; i < 4; i++) {
                const char *d = memchr(digits, tolower((unsigned char) p[i]), 16);

                if (!d)
                        return -EBADMSG;
                v = v << 4 | (uint32_t) (d - digits);
        }
        *ret = v;
        return 0;
}

static size_t utf8_encode(uint32_t cp, char *out) {
        static const unsigned char lead[] = { 0, 0, 0xc0, 0xe0, 0xf0 };
        size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;

        for (size_t i = n - 1; i > 0; i--, cp >>= 6)
                out[i] = (char) (0x80 | (cp & 0x3f));
        out[0] = (char) (lead[n] | cp);
        return n;
}

/* Parses a string at ps->p (which is at the opening quote) into a new
 * buffer.  Escapes decode to UTF-8; a lone surrogate becomes U+FFFD, the
 * way tolerant decoders treat it.  Raw bytes >= 0x80 are copied as they are. */
static int parse_string(struct parser *ps, char **ret, size_t *ret_len) {
        const char *start;
        char *out, *o;
        size_t max;

        ps->p++;
        start = ps->p;
        /* First pass: find the closing quote; the decoded text is never longer
         * than the source. */
        while (ps->p < ps->end && *ps->p != '"') {
                if ((unsigned char) *ps->p < 0x20)
                        return -EBADMSG;
                if (*ps->p == '\\') {
                        ps->p++;
                        if (ps->p >= ps->end)
                                return -EBADMSG;
                }
                ps->p++;
        }
        if (ps->p >= ps->end)
                return -EBADMSG;
        max = (size_t) (ps->p - start);
        ps->p++;

        out = malloc(max + 1);
        if (!out)
                return -ENOMEM;
        o = out;
        for (const char *s = start, *e = start + max; s < e;) {
                uint32_t cp, lo;

                if (*s != '\\') {
                        *o++ = *s++;
                        continue;
                }
                s++;
                if (*s != 'u') {
                        const char *esc = memchr(ESCAPES, *s++, sizeof(ESCAPES) - 1);

                        if (!esc)
                                goto bad;
                        *o++ = ESCAPED[esc - ESCAPES];
                        continue;
                }
                s++;
                if (e - s < 4 || hex4(s, &cp) < 0)
                        goto bad;
                s += 4;
                if (cp >= 0xd800 && cp <= 0xdbff) {
                        if (e - s >= 6 && s[0] == '\\' && s[1] == 'u' && hex4(s + 2, &lo) == 0 && lo >= 0xdc00 &&
                            lo <= 0xdfff) {
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                                s += 6;
                        } else
                                cp = 0xfffd;
                } else if (cp >= 0xdc00 && cp <= 0xdfff)
                        cp = 0xfffd;
                /* \uXXXX decodes to at most 3 bytes, a pair (12) to 4: it fits */
                o += utf8_encode(cp, o);
        }
        *o = '\0';
        *ret = out;
        *ret_len = (size_t) (o - out);
        return 0;
bad:
        free(out);
        return -EBADMSG;
}

/* RFC 8259 section 6 number grammar, checked by hand because strtod accepts
 * more (hex, inf, nan, leading '+'). */
static const char *skip_digits(const char *s, const char *end) {
        while (s < end && *s >= '0' && *s <= '9')
                s++;
        return s;
}

static int parse_number(struct parser *ps, struct json_value *v) {
        const char *s = ps->p, *t;
        bool integral = true;
        char buf[128];
        size_t n;

        if (s < ps->end && *s == '-')
                s++;
        if (s < ps->end && *s == '0')
                s++;
        else if ((t = skip_digits(s, ps->end)) > s)
                s = t;
        else
                return -EBADMSG;
        if (s < ps->end && *s == '.') {
                integral = false;
                t = skip_digits(++s, ps->end);
                if (t == s)
                        return -EBADMSG;
                s = t;
        }
        if (s < ps->end && (*s == 'e' || *s == 'E')) {
                integral = false;
                s++;
                if (s < ps->end && (*s == '+' || *s == '-'))
                        s++;
                t = skip_digits(s, ps->end);
                if (t == s)
                        return -EBADMSG;
                s = t;
        }
        n = (size_t) (s - ps->p);
        if (n >= sizeof(buf))
                return -EBADMSG;
        memcpy(buf, ps->p, n);
        buf[n] = '\0';
        ps->p = s;

        v->type = JSON_NUMBER;
        errno = 0;
        v->number = strtod(buf, NULL);
        if (errno == ERANGE && isinf(v->number))
                return -EBADMSG;
        if (integral) {
                long long ll;

                errno = 0;
                ll = strtoll(buf, NULL, 10);
                if (errno == 0) {
                        v->is_int = true;
                        v->integer = ll;
                }
        }
        return 0;
}

static int parse_value(struct parser *ps, struct json_value *v, unsigned depth);

static int parse_container(struct parser *ps, struct json_value *v, unsigned depth, bool object) {
        char close = object ? '}' : ']';
        int r;

        if (depth >= JSON_MAX_DEPTH)
                return -EBADMSG;
        v->type = object ? JSON_OBJECT : JSON_ARRAY;
        ps->p++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                return 0;
        }
        for (;;) {
                char *key = NULL;
                size_t keylen;

                skip_ws(ps);
                if (object) {
                        if (ps->p >= ps->end || *ps->p != '"')
                                return -EBADMSG;
                        r = parse_string(ps, &key, &keylen);
                        if (r < 0)
                                return r;
                        skip_ws(ps);
                        if (ps->p >= ps->end || *ps->p != ':') {
                                free(key);
                                return -EBADMSG;
                        }
                        ps->p++;
                }
                r = util_grow((void **) &v->items, &v->allocated, v->n + 1, sizeof(*v->items));
                if (r < 0) {
                        free(key);
                        return r;
                }
                memset(&v->items[v->n], 0, sizeof(*v->items));
                v->items[v->n].key = key;
                /* Counted before parsing so that value_clear frees a partly
                 * parsed child on error. */
                v->n++;
                r = parse_value(ps, &v->items[v->n - 1], depth + 1);
                if (r < 0)
                        return r;
                skip_ws(ps);
                if (ps->p >= ps->end)
                        return -EBADMSG;
                if (*ps->p == ',') {
                        ps->p++;
                        continue;
                }
                if (*ps->p == close) {
                        ps->p++;
                        return 0;
                }
                return -EBADMSG;
        }
}

static int parse_value(struct parser *ps, struct json_value *v, unsigned depth) {
        if (++ps->nodes > JSON_MAX_NODES)
                return -EBADMSG;
        skip_ws(ps);
        if (ps->p >= ps->end)
                return -EBADMSG;
        switch (*ps->p) {
        case '{':
                return parse_container(ps, v, depth, true);
        case '[':
                return parse_container(ps, v, depth, false);
        case '"':
                v->type = JSON_STRING;
                return parse_string(ps, &v->string, &v->string_len);
        case 't':
                v->type = JSON_BOOL;
                v->boolean = true;
                return literal(ps, "true") ? 0 : -EBADMSG;
        case 'f':
                v->type = JSON_BOOL;
                return literal(ps, "false") ? 0 : -EBADMSG;
        case 'n':
                v->type = JSON_NULL;
                return literal(ps, "null") ? 0 : -EBADMSG;
        default:
                return parse_number(ps, v);
        }
}

int json_parse(const char *buf, size_t len, struct json_value **ret) {
        struct parser ps = { .p = buf, .end = buf + len };
        struct json_value *v;
        int r;

        if (!buf && len > 0)
                return -EINVAL;
        if (len > JSON_MAX_INPUT)
                return -E2BIG;
        v = calloc(1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        r = parse_value(&ps, v, 0);
        if (r == 0) {
                skip_ws(&ps);
                if (ps.p != ps.end)
                        r = -EBADMSG;
        }
        if (r < 0) {
                json_free(v);
                return r;
        }
        *ret = v;
        return 0;
}

const struct json_value *json_get(const struct json_value *v, const char *key) {
        if (!v || v->type != JSON_OBJECT || !key)
                return NULL;
        for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->items[i].key, key) == 0)
                        return &v->items[i];
        return NULL;
}

const struct json_value *json_index(const struct json_value *v, size_t i) {
        if (!v || v->type != JSON_ARRAY || i >= v->n)
                return NULL;
        return &v->items[i];
}

size_t json_count(const struct json_value *v) {
        if (!v || (v->type != JSON_ARRAY && v->type != JSON_OBJECT))
                return 0;
        return v->n;
}

static int get_typed(const struct json_value *v, const char *key, enum json_type type,
                     const struct json_value **ret) {
        const struct json_value *m = json_get(v, key);

        if (!m)
                return -ENOENT;
        if (m->type != type)
                return -EMEDIUMTYPE;
        *ret = m;
        return 0;
}

/* json_get_NAME(v, key, ret): member key's value of type, as ctype. */
#define GET_TYPED(name, type, ctype, member)                                       \
        int json_get_##name(const struct json_value *v, const char *key, ctype *ret) { \
                const struct json_value *m;                                        \
                int r = get_typed(v, key, type, &m);                               \
                                                                                   \
                if (r == 0)                                                        \
                        *ret = m->member;                                          \
                return r;                                                          \
        }
GET_TYPED(string, JSON_STRING, const char *, string)
GET_TYPED(number, JSON_NUMBER, double, number)
GET_TYPED(bool, JSON_BOOL, bool, boolean)

int json_as_int(const struct json_value *v, int64_t *ret) {
        if (!v || v->type != JSON_NUMBER)
                return -EMEDIUMTYPE;
        if (v->is_int) {
                *ret = v->integer;
                return 0;
        }
        /* 1e3 or 5.0 is an integer value too; 1.5 or 1e300 is not. */
        if (v->number != floor(v->number))
                return -EMEDIUMTYPE;
        if (v->number < -9.2e18 || v->number > 9.2e18)
                return -ERANGE;
        *ret = (int64_t) v->number;
        return 0;
}

int json_get_int(const struct json_value *v, const char *key, int64_t *ret) {
        const struct json_value *m = json_get(v, key);

        return m ? json_as_int(m, ret) : -ENOENT;
}

int json_to_cpuset(const struct json_value *v, cpuset_t *ret) {
        cpuset_t s;

        if (!v || v->type != JSON_ARRAY)
                return -EMEDIUMTYPE;
        cpuset_zero(&s);
        for (size_t i = 0; i < v->n; i++) {
                int64_t cpu;
                int r = json_as_int(&v->items[i], &cpu);

                if (r < 0)
                        return r;
                if (cpu < 0 || cpu >= CPUSET_MAX)
                        return -ERANGE;
                cpuset_set(&s, (int) cpu);
        }
        *ret = s;
        return 0;
}
