/* libnl glue: the one NLE_* -> errno map, and the link monitor under a
 * receive that keeps failing with NLE_NOMEM (libnl's code for both ENOBUFS
 * and a failed allocation).  nl_recvmsgs_default is wrapped
 * (-Wl,--wrap): it passes through unless a test makes it fail. */
#include <errno.h>
#include <time.h>

#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <systemd/sd-event.h>

#include "linkmon.h"
#include "nlerr.h"
#include "testlib.h"
#include "util.h"

int __real_nl_recvmsgs_default(struct nl_sock *sk);

static unsigned fail_left;    /* calls that still fail with fail_code */
static int fail_code = NLE_NOMEM;
static unsigned calls;

int __wrap_nl_recvmsgs_default(struct nl_sock *sk) {
        calls++;
        /* a guard for a receive loop without a bound: stop it, the
         * assertions on calls then fail */
        if (calls > 10000)
                return -NLE_AGAIN;
        if (fail_left > 0) {
                fail_left--;
                return -fail_code;
        }
        return __real_nl_recvmsgs_default(sk);
}

static void test_nlerr_map(void **state) {
        static const struct {
                int nle, want;
        } cases[] = {
                { 0, 0 },
                { NLE_NOMEM, -ENOMEM },
                { NLE_PERM, -EPERM },
                { NLE_NOACCESS, -EACCES },
                { NLE_AGAIN, -EAGAIN },
                { NLE_OBJ_NOTFOUND, -ENOENT },
                { NLE_NODEV, -ENODEV },
                { NLE_BUSY, -EBUSY },
                { NLE_INVAL, -EINVAL },
                { NLE_RANGE, -EINVAL },
                { NLE_OPNOTSUPP, -EOPNOTSUPP },
                { NLE_AF_NOSUPPORT, -EAFNOSUPPORT },
                { NLE_PROTO_MISMATCH, -EPROTONOSUPPORT },
                { NLE_BAD_SOCK, -EBADF },
                { NLE_DUMP_INTR, -EINTR },
                { NLE_MSG_TRUNC, -EBADMSG },
                { NLE_FAILURE, -EIO },
                { NLE_SEQ_MISMATCH, -EIO },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int a = nlerr_to_errno(cases[i].nle), b = nlerr_to_errno(-cases[i].nle);

                if (a != cases[i].want || b != cases[i].want)
                        fail_msg("NLE %d (%s): %d / %d, want %d", cases[i].nle, nl_geterror(cases[i].nle), a, b,
                                 cases[i].want);
        }
}

static unsigned resyncs;

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static void on_link(const struct linkmon_event *ev, void *userdata) {
        (void) userdata;
        if (ev->change == LINKMON_RESYNC)
                resyncs++;
}

static void test_linkmon_lost_notifications(void **state) {
        sd_event *e = NULL;
        struct linkmon *m = NULL;
        uint64_t t0;
        int r;
        (void) state;

        assert_int_equal(sd_event_new(&e), 0);
        r = linkmon_new(e, on_link, NULL, &m);
        if (r < 0) {
                sd_event_unref(e);
                print_message("rtnetlink unavailable (%s)\n", strerror(-r));
                skip();
        }
        assert_true(linkmon_count(m) > 0);   /* lo at least */

        /* one overrun: the table is re-read once, the handler told */
        resyncs = 0;
        calls = 0;
        fail_left = 1;
        assert_int_equal(linkmon_receive(m), 0);
        assert_int_equal(resyncs, 1);
        assert_true(linkmon_count(m) > 0);

        /* memory short for good: no spinning, a bounded number of reads,
         * then the socket is left alone */
        resyncs = 0;
        calls = 0;
        fail_left = (unsigned) -1;
        assert_int_equal(linkmon_receive(m), -ENOMEM);
        if (calls > 4)
                fail_msg("%u reads in one call under NLE_NOMEM", calls);
        assert_int_equal(resyncs, 0);

        /* the back-off (100 ms first): nothing reads the socket meanwhile
         * (checked only when this process really ran within it: the
         * machine may be busy) */
        calls = 0;
        t0 = now_usec();
        assert_true(sd_event_run(e, 20 * 1000) >= 0);
        if (now_usec() - t0 < 90 * 1000)
                assert_int_equal(calls, 0);

        /* it fails again: the back-off doubles, still no spinning */
        for (int i = 0; i < 20 && calls == 0; i++)
                assert_true(sd_event_run(e, 100 * 1000) >= 0);
        assert_true(calls >= 1 && calls <= 4);
        calls = 0;
        t0 = now_usec();
        assert_true(sd_event_run(e, 40 * 1000) >= 0);
        if (now_usec() - t0 < 180 * 1000)
                assert_int_equal(calls, 0);

        /* memory back: the next retry re-reads the table and says so */
        fail_left = 0;
        for (int i = 0; i < 20 && resyncs == 0; i++)
                assert_true(sd_event_run(e, 100 * 1000) >= 0);
        assert_int_equal(resyncs, 1);
        assert_true(linkmon_count(m) > 0);

        linkmon_free(m);
        sd_event_unref(e);
}

/* Any other receive error backs off as well and re-reads the table
 * afterwards, rather than leaving a readable socket to the loop. */
static void test_linkmon_other_error(void **state) {
        sd_event *e = NULL;
        struct linkmon *m = NULL;
        int r;
        (void) state;

        assert_int_equal(sd_event_new(&e), 0);
        r = linkmon_new(e, on_link, NULL, &m);
        if (r < 0) {
                sd_event_unref(e);
                print_message("rtnetlink unavailable (%s)\n", strerror(-r));
                skip();
        }
        resyncs = 0;
        calls = 0;
        fail_code = NLE_FAILURE;
        fail_left = 1;
        assert_int_equal(linkmon_receive(m), -EIO);
        assert_int_equal(calls, 1);
        /* the retry after the back-off re-reads the links */
        for (int i = 0; i < 30 && resyncs == 0; i++)
                assert_true(sd_event_run(e, 100 * 1000) >= 0);
        assert_int_equal(resyncs, 1);
        fail_code = NLE_NOMEM;
        linkmon_free(m);
        sd_event_unref(e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nlerr_map),
                cmocka_unit_test(test_linkmon_lost_notifications),
                cmocka_unit_test(test_linkmon_other_error),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
