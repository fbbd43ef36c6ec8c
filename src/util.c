/* Checked parsing, formatting without printf, escaping, fd loops. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"

char *util_format_u64(char *end, uint64_t v) {
        do {
                *--end = (char) ('0' + v % 10);
                v /= 10;
        } while (v > 0);
        return end;
}

size_t util_format_fixed6(char *buf, double v) {
        char digits[24], *end = digits + sizeof(digits), *p;
        uint64_t x, frac;
        size_t n = 0;

        if (!(fabs(v) < 1e9)) /* past 1e9, 6 decimals are more digits than a double holds */
                return (size_t) snprintf(buf, 32, "%.15g", v);
        x = (uint64_t) llround(fabs(v) * 1e6);
        if (v < 0 && x > 0)
                buf[n++] = '-';
        p = util_format_u64(end, x / 1000000);
        memcpy(buf + n, p, (size_t) (end - p));
        n += (size_t) (end - p);
        frac = x % 1000000;
        if (frac > 0) {
                int last = 5;

                buf[n++] = '.';
                for (int i = 5; i >= 0; i--, frac /= 10)
                        digits[i] = (char) ('0' + frac % 10);
                while (digits[last] == '0')
                        last--;
                memcpy(buf + n, digits, (size_t) last + 1);
                n += (size_t) last + 1;
        }
        buf[n] = 0;
        return n;
}

int util_parse_u64(const char *s, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        if (len == (size_t) -1)
                len = strlen(s);
        if (len == 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                unsigned d;
                if (!isdigit((unsigned char) s[i]))
                        return -EINVAL;
                d = s[i] - '0';
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

bool util_parse_numbered(const char *s, const char *prefix, const char *rest, int *ret) {
        size_t n = strlen(prefix);
        unsigned long v;
        char *e;

        if (strncmp(s, prefix, n) != 0 || !isdigit((unsigned char) s[n]))
                return false;
        errno = 0;
        v = strtoul(s + n, &e, 10);
        if (errno || v > INT_MAX || strcmp(e, rest) != 0)
                return false;
        *ret = (int) v;
        return true;
}

int util_parse_int(const char *s, size_t len, int *ret) {
        bool neg = false;
        uint64_t v;
        int r;

        if (len == (size_t) -1)
                len = strlen(s);
        if (len > 0 && s[0] == '-') {
                neg = true;
                s++;
                len--;
        }
        r = util_parse_u64(s, len, &v);
        if (r < 0)
                return r;
        if (v > (uint64_t) INT32_MAX + (neg ? 1 : 0))
                return -ERANGE;
        *ret = neg ? (int) -(int64_t) v : (int) v;
        return 0;
}

int util_parse_duration_usec(const char *s, uint64_t *ret) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } units[] = {
                { "us", 1 },         { "ms", 1000 },          { "s", 1000000 },
                { "sec", 1000000 },  { "m", 60000000 },       { "min", 60000000 },
                { "h", 3600000000 }, { "", 1000000 },
        };
        size_t n = 0, nf = 0;
        const char *frac = NULL;
        uint64_t v;
        int r;

        while (isspace((unsigned char) *s))
                s++;
        while (isdigit((unsigned char) s[n]))
                n++;
        r = util_parse_u64(s, n, &v);
        if (r < 0)
                return r;
        /* a fraction, as the command line and the file both accept:
         * "0.5" (seconds), "1.5s", "2.5ms" */
        if (s[n] == '.') {
                frac = s + n + 1;
                while (isdigit((unsigned char) frac[nf]))
                        nf++;
                if (nf == 0)
                        return -EINVAL;
        }
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                const char *rest = frac ? frac + nf : s + n;
                size_t l = strlen(units[i].suffix);
                uint64_t f = 0, scale = 1;

                if (strncmp(rest, units[i].suffix, l) != 0)
                        continue;
                rest += l;
                while (isspace((unsigned char) *rest))
                        rest++;
                if (*rest)
                        continue;
                if (v > UINT64_MAX / units[i].usec)
                        return -ERANGE;
                /* below a microsecond the digits do not count */
                for (size_t k = 0; k < nf && k < 18; k++) {
                        f = f * 10 + (uint64_t) (frac[k] - '0');
                        scale *= 10;
                }
                f = (uint64_t) ((unsigned __int128) f * units[i].usec / scale);
                if (v * units[i].usec > UINT64_MAX - f)
                        return -ERANGE;
                *ret = v * units[i].usec + f;
                return 0;
        }
        return -EINVAL;
}

int util_parse_bool(const char *s, bool *ret) {
        static const char *const yes[] = { "1", "yes", "true", "on" };
        static const char *const no[] = { "0", "no", "false", "off" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
                        *ret = strcasecmp(s, yes[i]) == 0;
                        return 0;
                }
        return -EINVAL;
}

char *util_strstrip(char *s) {
        char *e;

        while (isspace((unsigned char) *s))
                s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char) e[-1]))
                *--e = 0;
        return s;
}

int util_grow(void **array, size_t *allocated, size_t need, size_t sz) {
        size_t na;
        void *p;

        if (need <= *allocated)
                return 0;
        na = MAX(need, *allocated * 2);
        na = MAX(na, (size_t) 8);
        if (na > SIZE_MAX / sz)
                return -ENOMEM;
        p = realloc(*array, na * sz);
        if (!p)
                return -ENOMEM;
        memset((char *) p + *allocated * sz, 0, (na - *allocated) * sz);
        *array = p;
        *allocated = na;
        return 0;
}

int util_write_all(int fd, const void *buf, size_t len) {
        const char *p = buf;

        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

ssize_t util_read_full(int fd, void *buf, size_t len) {
        size_t got = 0;

        while (got < len) {
                ssize_t n = read(fd, (char *) buf + got, len - got);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                got += (size_t) n;
        }
        return (ssize_t) got;
}

char *util_mark_cut(char *buf, size_t len, int n) {
        if (n >= 0 && (size_t) n >= len && len >= 4)
                memcpy(buf + len - 4, "...", 4);
        return buf;
}

uint64_t util_now_usec(clockid_t id) {
        struct timespec ts;

        clock_gettime(id, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static bool escaped(unsigned char ch, bool controls_only) {
        if (ch < 0x20 || ch == 0x7f)
                return true;
        return !controls_only && (ch == '\\' || ch > 0x7e);
}

bool util_needs_cescape(const char *s, size_t len, bool controls_only) {
        for (size_t i = 0; i < len; i++)
                if (escaped((unsigned char) s[i], controls_only))
                        return true;
        return false;
}

char *util_cescape(const char *s, size_t len, bool controls_only, char *buf, size_t size) {
        static const char hex[] = "0123456789abcdef";
        static const char named[] = "\\\t\n\r"; /* escaped by a letter */
        size_t o = 0;

        assert(size > 0);
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char) s[i];
                char e[4];
                size_t n = 0;

                if (!escaped(ch, controls_only))
                        e[n++] = (char) ch;
                else {
                        const char *q = memchr(named, ch, sizeof(named) - 1);

                        e[n++] = '\\';
                        if (q)
                                e[n++] = "\\tnr"[q - named];
                        else {
                                e[n++] = 'x';
                                e[n++] = hex[ch >> 4];
                                e[n++] = hex[ch & 15];
                        }
                }
                if (o + n > size - 1) {
                        buf[o] = 0;
                        return util_mark_cut(buf, size, (int) size);
                }
                memcpy(buf + o, e, n);
                o += n;
        }
        buf[o] = 0;
        return buf;
}

static ssize_t escaping_write(void *cookie, const char *buf, size_t size) {
        FILE *out = cookie;
        size_t i = 0;

        while (i < size) {
                size_t run = 0;
                char e[256];

                while (i + run < size && buf[i + run] != '\n' && buf[i + run] != '\t' && run < 63)
                        run++;
                if (run == 0) {
                        if (fputc(buf[i], out) == EOF)
                                return -1;
                        i++;
                        continue;
                }
                util_cescape(buf + i, run, true, e, sizeof(e));
                if (fputs(e, out) == EOF)
                        return -1;
                i += run;
        }
        return (ssize_t) size;
}

static int escaping_close(void *cookie) {
        return fflush((FILE *) cookie) == 0 ? 0 : -1;
}

FILE *util_escaping_stream(FILE *out) {
        return fopencookie(out, "w", (cookie_io_functions_t){ .write = escaping_write, .close = escaping_close });
}
