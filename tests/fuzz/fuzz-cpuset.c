/* cpulists and hex masks (cpuset_parse_list, cpuset_parse_mask): no crash
 * on any text, and whatever parses formats to text that parses back to the
 * same set, in both forms. */
#include <errno.h>

#include "cpuset.h"
#include "fuzz.h"

FUZZ_QUIET_LOG()

/* The longest cpulist and the longest mask (256 chunks of 8 digits and a
 * comma) fit. */
static char text[CPUSET_LIST_MAX];

static void check_roundtrip(const cpuset_t *set) {
        cpuset_t back;

        FUZZ_CHECK(cpuset_format_list(set, text, sizeof(text)) == 0);
        FUZZ_CHECK(cpuset_parse_list(text, &back) == 0);
        FUZZ_CHECK(cpuset_equal(set, &back));
        FUZZ_CHECK(cpuset_format_mask(set, 0, text, sizeof(text)) == 0);
        FUZZ_CHECK(cpuset_parse_mask(text, &back) == 0);
        FUZZ_CHECK(cpuset_equal(set, &back));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_cstring(data, size);
        cpuset_t set;
        int r;

        r = cpuset_parse_list(s, &set);
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r == 0)
                check_roundtrip(&set);
        r = cpuset_parse_mask(s, &set);
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r == 0)
                check_roundtrip(&set);
        free(s);
        return 0;
}
