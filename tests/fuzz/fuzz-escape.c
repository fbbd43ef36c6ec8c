/* Names from outside and ban files: util_cescape() on any bytes leaves no
 * control byte (and with controls_only nothing else changed), and reads
 * back to the input when it was not cut; bans_parse() on any text gives
 * 0, -EINVAL or -ERANGE, and a set that formats and parses back the same;
 * bans_name_valid() accepts only what its contract says. */
#include <errno.h>

#include "bans.h"
#include "fuzz.h"
#include "util.h"

FUZZ_QUIET_LOG()

/* The input read back from an escaped text (full escaping). */
static size_t unescape(const char *s, char *out) {
        size_t o = 0;

        while (*s) {
                if (*s != '\\') {
                        out[o++] = *s++;
                        continue;
                }
                s++;
                switch (*s) {
                case '\\': out[o++] = '\\'; s++; break;
                case 't': out[o++] = '\t'; s++; break;
                case 'n': out[o++] = '\n'; s++; break;
                case 'r': out[o++] = '\r'; s++; break;
                case 'x':
                        FUZZ_CHECK(s[1] && s[2]);
                        out[o++] = (char) strtol((char[]){ s[1], s[2], 0 }, NULL, 16);
                        s += 3;
                        break;
                default: FUZZ_CHECK(!"unknown escape");
                }
        }
        return o;
}

static void check_escape(const uint8_t *data, size_t size) {
        size_t full = UTIL_CESCAPE_SIZE(size);
        char *e = malloc(full), *back = malloc(size + 1), small[16];

        FUZZ_CHECK(e && back);
        for (int only = 0; only < 2; only++) {
                util_cescape((const char *) data, size, only, e, full);
                for (const char *p = e; *p; p++)
                        FUZZ_CHECK((unsigned char) *p >= 0x20 && *p != 0x7f && (only || (unsigned char) *p < 0x7f));
                FUZZ_CHECK(util_needs_cescape((const char *) data, size, only) == (strlen(e) != size ||
                                                                                     memcmp(e, data, size) != 0));
                if (!only && !memchr(data, 0, size)) {
                        FUZZ_CHECK(unescape(e, back) == size);
                        FUZZ_CHECK(memcmp(back, data, size) == 0);
                }
                /* cut: within the buffer, NUL-terminated */
                util_cescape((const char *) data, size, only, small, sizeof(small));
                FUZZ_CHECK(strlen(small) < sizeof(small));
        }
        free(e);
        free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_cstring(data, size), text[CPUSET_LIST_MAX];
        cpuset_t set, back;
        int r;

        check_escape(data, size);
        r = bans_parse((const char *) data, size, &set);
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r == 0) {
                FUZZ_CHECK(cpuset_format_list(&set, text, sizeof(text)) == 0);
                FUZZ_CHECK(bans_parse(text, strlen(text), &back) == 0 && cpuset_equal(&set, &back));
        }
        if (bans_name_valid(s)) {
                FUZZ_CHECK(s[0] != '.' && strlen(s) <= BANS_NAME_MAX);
                for (const char *p = s; *p; p++)
                        FUZZ_CHECK(!util_needs_cescape(p, 1, false) && *p != '/');
        }
        free(s);
        return 0;
}
