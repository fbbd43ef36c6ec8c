/* irqbalance's environment files: the CPUs they ban (irqbalance-env.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "irqbalance-env.h"
#include "util.h"

enum {
        KEY_CPUS,
        KEY_CPULIST,
        KEY_MAX,
};

static const char *const key_names[KEY_MAX] = {
        [KEY_CPUS] = "IRQBALANCE_BANNED_CPUS",
        [KEY_CPULIST] = "IRQBALANCE_BANNED_CPULIST",
};

static int env_problem(char *problem, size_t len, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(problem, len, fmt, ap);
        va_end(ap);
        return r;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

/* The value after "KEY=" up to le, unquoted into out; false for a bad quote. */
static bool unquote(const char *p, const char *le, char *out) {
        char *o = out;

        if (p < le && (*p == '"' || *p == '\'')) {
                char q = *p++;

                while (p < le && *p != q) {
                        /* in double quotes a backslash escapes " \ ` $ */
                        if (q == '"' && *p == '\\' && p + 1 < le && strchr("\"\\`$", p[1]))
                                p++;
                        *o++ = *p++;
                }
                if (p >= le)
                        return false;
                p++;
                while (p < le && is_blank(*p))
                        p++;
                if (p < le && *p != '#')
                        return false;
        } else {
                /* bare: up to a comment that follows a blank */
                while (p < le && !(*p == '#' && o > out && is_blank(o[-1])))
                        *o++ = *p++;
                while (o > out && is_blank(o[-1]))
                        o--;
        }
        *o = 0;
        return true;
}

int irqbalance_env_parse(const char *buf, size_t len, cpuset_t *ret, char *problem, size_t problem_len) {
        _cleanup_(freep) char *val = malloc(len + 1);
        cpuset_t set[KEY_MAX];
        const char *p = buf, *end = buf + len;
        unsigned lineno = 0;

        if (!val)
                return -ENOMEM;
        for (int k = 0; k < KEY_MAX; k++)
                cpuset_zero(&set[k]);
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *le = nl ? nl : end, *s = p;
                int key = -1;
                size_t kl = 0;
                int r;

                lineno++;
                p = nl ? nl + 1 : end;
                while (s < le && is_blank(*s))
                        s++;
                if (s == le || *s == '#' || *s == ';')
                        continue;
                if ((size_t) (le - s) > 7 && memcmp(s, "export", 6) == 0 && is_blank(s[6]))
                        for (s += 7; s < le && is_blank(*s); s++)
                                ;
                for (int k = 0; k < KEY_MAX; k++) {
                        size_t n = strlen(key_names[k]);
                        /* the whole name: IRQBALANCE_BANNED_CPUSET is not ours */
                        if ((size_t) (le - s) >= n && memcmp(s, key_names[k], n) == 0 &&
                            (s + n == le || !s[n] || !strchr(UTIL_ALNUM "_", s[n]))) {
                                key = k;
                                kl = n;
                        }
                }
                if (key < 0)
                        continue; /* irqbalance's other settings, or not an assignment */
                s += kl;
                if (s >= le || *s != '=')
                        return env_problem(problem, problem_len, -EINVAL, "line %u: %s: expected %s=VALUE", lineno,
                                           key_names[key], key_names[key]);
                if (memchr(s, 0, (size_t) (le - s)))
                        return env_problem(problem, problem_len, -EINVAL, "line %u: %s: holds a NUL byte", lineno,
                                           key_names[key]);
                if (!unquote(s + 1, le, val))
                        return env_problem(problem, problem_len, -EINVAL,
                                           "line %u: %s: unterminated quote or text after the closing quote", lineno,
                                           key_names[key]);
                if (!val[0]) {
                        cpuset_zero(&set[key]);
                        continue;
                }
                r = key == KEY_CPUS ? cpuset_parse_mask(val, &set[key]) : cpuset_parse_list(val, &set[key]);
                if (r == -ERANGE)
                        return env_problem(problem, problem_len, r, "line %u: %s: \"%s\" names a CPU beyond %d",
                                           lineno, key_names[key], val, CPUSET_MAX - 1);
                if (r < 0)
                        return env_problem(problem, problem_len, r, "line %u: %s: \"%s\" is not %s", lineno,
                                           key_names[key], val,
                                           key == KEY_CPUS ? "a hex CPU mask such as 00000000,0000000c"
                                                           : "a CPU list such as 2-3,8");
        }
        cpuset_or(ret, &set[KEY_CPUS], &set[KEY_CPULIST]);
        return 0;
}

int irqbalance_env_load(const char *path, cpuset_t *ret, char *problem, size_t problem_len) {
        _cleanup_(closep) int fd = -1;
        _cleanup_(freep) char *buf = NULL;
        struct stat st;
        ssize_t n;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT) {
                cpuset_zero(ret);
                return 0;
        }
        if (fd < 0 || fstat(fd, &st) < 0)
                return env_problem(problem, problem_len, -errno, "cannot be read: %s", strerror(errno));
        if (!S_ISREG(st.st_mode))
                return env_problem(problem, problem_len, -EINVAL, "not a regular file");
        buf = malloc(IRQBALANCE_ENV_FILE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        n = util_read_full(fd, buf, IRQBALANCE_ENV_FILE_MAX + 1);
        if (n < 0)
                return env_problem(problem, problem_len, (int) n, "cannot be read: %s",
                                   strerror((int) -n));
        if (n > IRQBALANCE_ENV_FILE_MAX)
                return env_problem(problem, problem_len, -EFBIG, "larger than %d bytes",
                                   IRQBALANCE_ENV_FILE_MAX);
        return irqbalance_env_parse(buf, (size_t) n, ret, problem, problem_len);
}
