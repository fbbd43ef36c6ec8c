/* policy: placeholder while the table-driven cases are written. */
#include "policy.h"
#include "testlib.h"

static void test_new_free(void **state) {
        (void) state;
        struct policy_state *st = policy_state_new();
        assert_non_null(st);
        policy_state_free(st);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_new_free),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
