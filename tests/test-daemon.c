/* The daemon's pure pieces: rtnetlink link message parsing and change
 * detection, the capability set per configuration, the STATUS line, config
 * error formatting, notify sanitising, and atomic state files. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/capability.h>
#include <sys/stat.h>

#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "caps.h"
#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "linkmon.h"
#include "notify.h"
#include "policy.h"
#include "report.h"
#include "sample.h"
#include "state.h"
#include "testlib.h"
#include "util.h"

/* linux/if.h has it, but clashes with net/if.h. */
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000
#endif

/* ---- linkmon_parse ---- */

struct nl_msg_spec {
        int type;                /* RTM_NEWLINK / RTM_DELLINK / other */
        int ifindex;
        unsigned flags;
        const char *name;        /* NULL: no IFLA_IFNAME */
        uint32_t rx, tx;         /* 0: attribute absent */
        bool short_name_attr;    /* IFLA_IFNAME without its NUL and empty */
};

static struct nl_msg *build(const struct nl_msg_spec *s) {
        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = s->ifindex, .ifi_flags = s->flags };
        struct nl_msg *m = nlmsg_alloc_simple(s->type, 0);

        assert_non_null(m);
        assert_int_equal(nlmsg_append(m, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
        if (s->short_name_attr)
                assert_int_equal(nla_put(m, IFLA_IFNAME, 0, ""), 0);
        else if (s->name)
                assert_int_equal(nla_put_string(m, IFLA_IFNAME, s->name), 0);
        if (s->rx)
                assert_int_equal(nla_put_u32(m, IFLA_NUM_RX_QUEUES, s->rx), 0);
        if (s->tx)
                assert_int_equal(nla_put_u32(m, IFLA_NUM_TX_QUEUES, s->tx), 0);
        return m;
}

static void test_linkmon_parse(void **state) {
        static const struct {
                const char *what;
                struct nl_msg_spec msg;
                int ret;
                bool deleted;
                const char *name;
                uint32_t rx, tx;
        } cases[] = {
                { .what = "new link with name and queues",
                  .msg = { RTM_NEWLINK, 7, IFF_UP, "eth0", 8, 4, false }, .ret = 0, .name = "eth0", .rx = 8, .tx = 4 },
                { .what = "deleted link",
                  .msg = { RTM_DELLINK, 9, 0, "veth1", 0, 0, false }, .ret = 0, .deleted = true, .name = "veth1" },
                { .what = "no name attribute",
                  .msg = { RTM_NEWLINK, 3, 0, NULL, 1, 1, false }, .ret = 0, .name = "", .rx = 1, .tx = 1 },
                { .what = "empty name attribute is malformed",
                  .msg = { RTM_NEWLINK, 3, 0, NULL, 0, 0, true }, .ret = -EBADMSG },
                { .what = "name too long for IFNAMSIZ",
                  .msg = { RTM_NEWLINK, 3, 0, "abcdefghijklmnopq", 0, 0, false }, .ret = -EBADMSG },
                { .what = "ifindex 0 is malformed",
                  .msg = { RTM_NEWLINK, 0, 0, "x", 0, 0, false }, .ret = -EBADMSG },
                { .what = "other message type",
                  .msg = { RTM_NEWADDR, 3, 0, "eth0", 0, 0, false }, .ret = -EINVAL },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct nl_msg *m = build(&cases[i].msg);
                struct linkmon_link l;
                bool deleted = false;
                int r;

                print_message("case: %s\n", cases[i].what);
                r = linkmon_parse(nlmsg_hdr(m), &l, &deleted);
                assert_int_equal(r, cases[i].ret);
                if (r == 0) {
                        assert_int_equal(l.ifindex, cases[i].msg.ifindex);
                        assert_int_equal(l.flags, cases[i].msg.flags);
                        assert_int_equal(deleted, cases[i].deleted);
                        assert_string_equal(l.name, cases[i].name);
                        assert_int_equal(l.num_rx, cases[i].rx);
                        assert_int_equal(l.num_tx, cases[i].tx);
                }
                nlmsg_free(m);
        }
}

static void test_linkmon_parse_truncated(void **state) {
        struct nl_msg_spec s = { RTM_NEWLINK, 5, IFF_UP, "eth0", 4, 4, false };
        struct nl_msg *m = build(&s);
        struct nlmsghdr *h = nlmsg_hdr(m);
        size_t full = h->nlmsg_len, attrs = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg));
        struct nlattr *a;
        size_t ends[8][2];      /* [end of data, end of padding] of each attribute */
        unsigned types[8];
        size_t n_ends = 0;
        int rem;
        (void) state;

        nla_for_each_attr(a, nlmsg_attrdata(h, sizeof(struct ifinfomsg)), nlmsg_attrlen(h, sizeof(struct ifinfomsg)),
                          rem) {
                size_t off = (size_t) ((char *) a - (char *) h);

                assert_true(n_ends < ELEMENTSOF(ends));
                ends[n_ends][0] = off + a->nla_len;
                ends[n_ends][1] = off + NLA_ALIGN(a->nla_len);
                types[n_ends++] = nla_type(a);
        }
        assert_int_equal(n_ends, 3);

        /* Every shorter length: a message cut inside its header or inside
         * an attribute is malformed (-EBADMSG); one cut between attributes
         * (padding aside) is a well-formed message with the attributes
         * before the cut. */
        for (size_t len = NLMSG_HDRLEN; len < full; len++) {
                struct linkmon_link l;
                bool deleted, whole = len == attrs;
                size_t kept = 0;
                int r;

                for (size_t i = 0; i < n_ends; i++) {
                        if (len >= ends[i][0])
                                kept = i + 1;
                        if (len >= ends[i][0] && len <= ends[i][1])
                                whole = true;
                }
                h->nlmsg_len = (uint32_t) len;
                r = linkmon_parse(h, &l, &deleted);
                if (!whole) {
                        if (r != -EBADMSG)
                                fail_msg("length %zu of %zu: %d, want -EBADMSG", len, full, r);
                        continue;
                }
                if (r != 0)
                        fail_msg("length %zu of %zu (%zu attributes whole): %d, want 0", len, full, kept, r);
                assert_int_equal(l.ifindex, 5);
                for (size_t i = 0; i < n_ends; i++) {
                        bool in = i < kept;

                        if (types[i] == IFLA_IFNAME)
                                assert_string_equal(l.name, in ? "eth0" : "");
                        else if (types[i] == IFLA_NUM_RX_QUEUES)
                                assert_int_equal(l.num_rx, in ? 4 : 0);
                        else if (types[i] == IFLA_NUM_TX_QUEUES)
                                assert_int_equal(l.num_tx, in ? 4 : 0);
                }
        }
        h->nlmsg_len = (uint32_t) full;
        nlmsg_free(m);
}

/* ---- linkmon_diff ---- */

#define L(idx, nm, fl, r, t) ((struct linkmon_link){ .ifindex = (idx), .name = nm, .flags = (fl), .num_rx = (r), .num_tx = (t) })

static void test_linkmon_diff(void **state) {
        static const struct {
                const char *what;
                bool has_old;
                struct linkmon_link old, new;
                bool deleted;
                size_t n;
                enum linkmon_change changes[4];
        } cases[] = {
                { .what = "unknown link appears down", .has_old = false, .new = L(4, "eth1", 0, 2, 2),
                  .n = 1, .changes = { LINKMON_ADDED } },
                { .what = "unknown link appears up", .has_old = false, .new = L(4, "eth1", IFF_UP, 2, 2),
                  .n = 2, .changes = { LINKMON_ADDED, LINKMON_UP } },
                { .what = "known link vanishes", .has_old = true, .old = L(4, "eth1", IFF_UP, 2, 2),
                  .new = L(4, "", 0, 0, 0), .deleted = true, .n = 1, .changes = { LINKMON_REMOVED } },
                { .what = "unknown link vanishes: nothing", .has_old = false, .new = L(4, "eth1", 0, 0, 0),
                  .deleted = true, .n = 0 },
                { .what = "goes up", .has_old = true, .old = L(4, "eth1", 0, 2, 2),
                  .new = L(4, "eth1", IFF_UP, 2, 2), .n = 1, .changes = { LINKMON_UP } },
                { .what = "goes down", .has_old = true, .old = L(4, "eth1", IFF_UP | IFF_RUNNING, 2, 2),
                  .new = L(4, "eth1", 0, 2, 2), .n = 1, .changes = { LINKMON_DOWN } },
                { .what = "carrier only: nothing", .has_old = true, .old = L(4, "eth1", IFF_UP, 2, 2),
                  .new = L(4, "eth1", IFF_UP | IFF_RUNNING | IFF_LOWER_UP, 2, 2), .n = 0 },
                { .what = "renamed", .has_old = true, .old = L(4, "eth1", 0, 2, 2), .new = L(4, "wan0", 0, 2, 2),
                  .n = 1, .changes = { LINKMON_RENAMED } },
                { .what = "queue count", .has_old = true, .old = L(4, "eth1", IFF_UP, 2, 2),
                  .new = L(4, "eth1", IFF_UP, 8, 8), .n = 1, .changes = { LINKMON_QUEUES } },
                { .what = "message without queue attributes: no queue change", .has_old = true,
                  .old = L(4, "eth1", IFF_UP, 2, 2), .new = L(4, "eth1", IFF_UP, 0, 0), .n = 0 },
                { .what = "message without name: no rename", .has_old = true, .old = L(4, "eth1", IFF_UP, 2, 2),
                  .new = L(4, "", IFF_UP, 2, 2), .n = 0 },
                { .what = "rename, queues and up at once", .has_old = true, .old = L(4, "eth1", 0, 2, 2),
                  .new = L(4, "eth9", IFF_UP, 4, 2), .n = 3,
                  .changes = { LINKMON_RENAMED, LINKMON_QUEUES, LINKMON_UP } },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct linkmon_event ev[4];
                size_t n;

                print_message("case: %s\n", cases[i].what);
                n = linkmon_diff(cases[i].has_old ? &cases[i].old : NULL, &cases[i].new, cases[i].deleted, ev, 4);
                assert_int_equal(n, cases[i].n);
                for (size_t k = 0; k < n; k++) {
                        assert_int_equal(ev[k].change, cases[i].changes[k]);
                        if (ev[k].change == LINKMON_RENAMED)
                                assert_string_equal(ev[k].old_name, cases[i].old.name);
                        if (ev[k].change == LINKMON_QUEUES) {
                                assert_int_equal(ev[k].old_rx, cases[i].old.num_rx);
                                assert_int_equal(ev[k].link.num_rx, cases[i].new.num_rx);
                        }
                }
        }
}

static void test_linkmon_diff_small_buffer(void **state) {
        struct linkmon_link old = L(4, "eth1", 0, 2, 2), new = L(4, "eth9", IFF_UP, 4, 2);
        struct linkmon_event ev[2];
        (void) state;

        /* Room for 2 of 3 changes: the first two, no overflow. */
        assert_int_equal(linkmon_diff(&old, &new, false, ev, 2), 2);
        assert_int_equal(ev[0].change, LINKMON_RENAMED);
        assert_string_equal(ev[0].old_name, "eth1");
        assert_int_equal(ev[1].change, LINKMON_QUEUES);
}

/* ---- caps_for_config ---- */

static void test_caps_for_config(void **state) {
        struct config_interface iface_on = { .match = (char *) "eth*", .manage = true, .rps = TRI_YES,
                                             .xps = TRI_INHERIT, .rfs = TRI_INHERIT };
        struct config_interface iface_unmanaged = { .match = (char *) "eth*", .manage = false, .rps = TRI_YES,
                                                    .xps = TRI_YES, .rfs = TRI_YES };
        struct config_worker worker = { .name = (char *) "web", .match_name = (char *) "nginx" };
        static const uint64_t NET = CAPS_MASK(CAP_NET_ADMIN), NICE = CAPS_MASK(CAP_SYS_NICE);
        const struct {
                const char *what;
                bool rps, rfs, xps, sq_rps, cfg_dry, dry;
                struct config_interface *iface;
                bool worker, napi, threaded;
                uint64_t want;
        } cases[] = {
                { .what = "all of RPS/RFS/XPS", .rps = true, .rfs = true, .xps = true, .sq_rps = true, .want = NET },
                { .what = "only XPS", .xps = true, .want = NET },
                { .what = "only single-queue RPS", .sq_rps = true, .want = NET },
                { .what = "only RFS", .rfs = true, .want = NET },
                { .what = "none: IRQ affinity needs no capability", .want = 0 },
                { .what = "an interface turns RPS on", .iface = &iface_on, .want = NET },
                { .what = "an unmanaged interface does not count", .iface = &iface_unmanaged, .want = 0 },
                { .what = "workers", .worker = true, .want = NICE },
                { .what = "workers and RPS", .rps = true, .worker = true, .want = NET | NICE },
                { .what = "napi_threads: kernel threads are placed", .napi = true, .want = NICE },
                { .what = "threaded_napi: writes threaded, places its threads", .threaded = true, .want = NET | NICE },
                { .what = "--dry-run keeps none", .rps = true, .worker = true, .dry = true, .want = 0 },
                { .what = "dry_run = yes keeps none", .rps = true, .worker = true, .cfg_dry = true, .want = 0 },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct config c;

                print_message("case: %s\n", cases[i].what);
                assert_int_equal(config_defaults(&c), 0);
                c.rps = cases[i].rps;
                c.rfs = cases[i].rfs;
                c.xps = cases[i].xps;
                c.single_queue_rps = cases[i].sq_rps;
                c.napi_threads = cases[i].napi;
                c.threaded_napi = cases[i].threaded;
                c.dry_run = cases[i].cfg_dry;
                /* borrowed arrays: detach before config_free */
                c.interfaces = cases[i].iface;
                c.n_interfaces = cases[i].iface ? 1 : 0;
                c.workers = cases[i].worker ? &worker : NULL;
                c.n_workers = cases[i].worker ? 1 : 0;
                assert_int_equal(caps_for_config(&c, cases[i].dry), cases[i].want);
                c.interfaces = NULL;
                c.n_interfaces = 0;
                c.workers = NULL;
                c.n_workers = 0;
                config_free(&c);
        }
}

static void test_caps_defaults_need_net_admin(void **state) {
        struct config c;
        (void) state;

        /* The man page and tests/live-caps.py promise this mask. */
        assert_int_equal(config_defaults(&c), 0);
        assert_int_equal(caps_for_config(&c, false), CAPS_MASK(CAP_NET_ADMIN));
        config_free(&c);
}

static void test_caps_format(void **state) {
        char buf[128];
        (void) state;

        assert_int_equal(caps_format(0, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "none");
        assert_int_equal(caps_format(CAPS_MASK(CAP_NET_ADMIN) | CAPS_MASK(CAP_SYS_NICE), buf, sizeof(buf)), 0);
        assert_string_equal(buf, "cap_net_admin,cap_sys_nice");
        assert_int_equal(caps_format(CAPS_MASK(CAP_NET_ADMIN) | CAPS_MASK(CAP_SYS_NICE), buf, 10), -ENOBUFS);
}

/* ---- status line ---- */

static void test_format_status(void **state) {
        struct policy_hot_cpu hot2[] = { { .cpu = 3, .load = 0.97 }, { .cpu = 5, .load = 0.884 } };
        struct policy_hot_cpu hot6[] = { { .cpu = 0, .load = 0.9 }, { .cpu = 1, .load = 0.9 }, { .cpu = 2, .load = 0.9 },
                                         { .cpu = 3, .load = 0.9 }, { .cpu = 4, .load = 0.9 }, { .cpu = 5, .load = 0.9 } };
        struct policy_report none = { .n_queue_irqs = 48, .n_rps_queues = 4, .n_moves_10min = 3 };
        struct policy_report two = { .hot_cpus = hot2, .n_hot_cpus = 2, .n_queue_irqs = 8, .n_rps_queues = 0,
                                     .n_moves_10min = 1 };
        struct policy_report six = { .hot_cpus = hot6, .n_hot_cpus = 6 };
        struct policy_report extra = { .n_queue_irqs = 2, .n_managed_irqs = 5, .n_external = 1 };
        const struct {
                const char *what;
                const struct policy_report *rep;
                bool dry;
                const char *reload_error;
                const char *want;
        } cases[] = {
                { .what = "nothing hot", .rep = &none,
                  .want = "hot: none; 48 queue IRQs, 4 RPS queues managed; 3 moves/10min" },
                { .what = "two hot CPUs", .rep = &two,
                  .want = "hot: cpu3 (97%), cpu5 (88%); 8 queue IRQs, 0 RPS queues managed; 1 moves/10min" },
                { .what = "many hot CPUs are counted, not listed", .rep = &six,
                  .want = "hot: cpu0 (90%), cpu1 (90%), cpu2 (90%), cpu3 (90%) +2 more; 0 queue IRQs, 0 RPS queues managed; 0 moves/10min" },
                { .what = "managed and external objects", .rep = &extra,
                  .want = "hot: none; 2 queue IRQs, 0 RPS queues managed; 0 moves/10min; 5 kernel-managed IRQs skipped; 1 changed by others, left alone" },
                { .what = "dry run", .rep = &none, .dry = true,
                  .want = "dry-run: hot: none; 48 queue IRQs, 4 RPS queues managed; 3 moves/10min" },
                { .what = "failed reload first", .rep = &none, .dry = true, .reload_error = "/etc/x.conf:3: hot_enter: bad",
                  .want = "config reload failed: /etc/x.conf:3: hot_enter: bad; dry-run: hot: none; 48 queue IRQs, 4 RPS queues managed; 3 moves/10min" },
                { .what = "no report yet", .rep = NULL,
                  .want = "hot: none; 0 queue IRQs, 0 RPS queues managed; 0 moves/10min" },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[512];

                print_message("case: %s\n", cases[i].what);
                assert_int_equal(report_format_status(cases[i].rep, cases[i].dry, cases[i].reload_error, buf, sizeof(buf)), 0);
                assert_string_equal(buf, cases[i].want);
        }
        {
                char small[16];
                assert_int_equal(report_format_status(&none, false, NULL, small, sizeof(small)), -ENOBUFS);
        }
}

static void test_format_config_error(void **state) {
        const struct {
                const char *what;
                struct config_error e;
                const char *want;
        } cases[] = {
                { .what = "file, line, key", .e = { (char *) "/etc/a.conf", 7, (char *) "hot_enter", (char *) "not a percentage" },
                  .want = "/etc/a.conf:7: hot_enter: not a percentage" },
                { .what = "no key", .e = { (char *) "/etc/a.conf", 2, NULL, (char *) "section header without closing ']'" },
                  .want = "/etc/a.conf:2: section header without closing ']'" },
                { .what = "no line", .e = { (char *) "/etc/a.conf", 0, (char *) "hot_exit", (char *) "must be below hot_enter" },
                  .want = "/etc/a.conf: hot_exit: must be below hot_enter" },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[256];

                print_message("case: %s\n", cases[i].what);
                assert_int_equal(daemon_format_config_error(&cases[i].e, buf, sizeof(buf)), 0);
                assert_string_equal(buf, cases[i].want);
        }
}

static void test_notify_sanitize(void **state) {
        char buf[8];
        (void) state;

        assert_string_equal(notify_sanitize("a\nb\tc", buf, sizeof(buf)), "a b c");
        assert_string_equal(notify_sanitize("0123456789", buf, sizeof(buf)), "0123456");
        assert_string_equal(notify_sanitize(NULL, buf, sizeof(buf)), "");
}

/* ---- state files ---- */

static void test_state_write_atomic(void **state) {
        char dir[] = "/tmp/irqsteer-test-state.XXXXXX", path[256], buf[64];
        struct stat st;
        mode_t old_umask;
        int fd;
        ssize_t n;
        (void) state;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/status.json", dir);

        /* The unit's UMask=0077 must not make status.json private. */
        old_umask = umask(0077);
        assert_int_equal(state_write_atomic(dir, "status.json", "{\"a\":1}\n", 8, 0644, false), 0);
        umask(old_umask);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0644);

        assert_int_equal(state_write_atomic(dir, "status.json", "{}\n", 3, 0644, false), 0);
        fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        n = read(fd, buf, sizeof(buf));
        close(fd);
        assert_int_equal(n, 3);
        assert_memory_equal(buf, "{}\n", 3);

        assert_int_equal(state_write_atomic(dir, "a/b", "x", 1, 0644, false), -EINVAL);
        assert_int_equal(state_write_atomic("/nonexistent-irqsteer", "x", "x", 1, 0644, false), -ENOENT);

        /* Only status.json is left: no temporary files. */
        assert_int_equal(state_remove(dir, "status.json"), 0);
        assert_int_equal(state_remove(dir, "status.json"), 0);
        assert_int_equal(rmdir(dir), 0);
}

static void test_state_dir_ensure(void **state) {
        char dir[] = "/tmp/irqsteer-test-dir.XXXXXX", sub[256], file[256];
        int fd;
        (void) state;

        assert_non_null(mkdtemp(dir));
        snprintf(sub, sizeof(sub), "%s/state", dir);
        assert_int_equal(state_dir_ensure(sub), 0);
        assert_int_equal(state_dir_ensure(sub), 0);
        snprintf(file, sizeof(file), "%s/file", dir);
        fd = open(file, O_CREAT | O_WRONLY, 0600);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(state_dir_ensure(file), -ENOTDIR);
        snprintf(sub, sizeof(sub), "%s/missing/state", dir);
        assert_int_equal(state_dir_ensure(sub), -ENOENT);
        snprintf(sub, sizeof(sub), "%s/state", dir);
        assert_int_equal(rmdir(sub), 0);
        assert_int_equal(unlink(file), 0);
        assert_int_equal(rmdir(dir), 0);
}

/* ---- the per-tick load line ---- */

/* One CPU's part of the load lines: rounding (printf's, ties to even),
 * rates in k and M, odd figures, CPUs left out. */
static void test_format_load(void **state) {
        static const struct {
                const char *what;
                double softirq, irq, idle, rx;
                bool valid, offline;
                const char *want;
        } cases[] = {
                { "typical", 0.12, 0.01, 0.80, 1234.5, true, false,
                  "load: cpu0 soft 12% irq 1% idle 80% net_rx 1.2k/s\n" },
                { "ties round to even: 12.5% and 0.5%", 0.125, 0.005, 0.995, 2.5, true, false,
                  "load: cpu0 soft 12% irq 0% idle 100% net_rx 2/s\n" },
                { "rate of a million", 0.5, 0.5, 0.0, 1e6, true, false,
                  "load: cpu0 soft 50% irq 50% idle 0% net_rx 1.0M/s\n" },
                { "rate just under a thousand", 0.0, 0.0, 1.0, 999.5, true, false,
                  "load: cpu0 soft 0% irq 0% idle 100% net_rx 1000/s\n" },
                { "not a number", NAN, 0.0, 1.0, NAN, true, false,
                  "load: cpu0 soft nan% irq 0% idle 100% net_rx nan/s\n" },
                { "invalid CPU left out", 0.9, 0.9, 0.1, 5.0, false, false, "" },
                { "offline CPU left out", 0.0, 0.0, 0.0, 0.0, false, true, "" },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct sample_cpu c = { .valid = cases[i].valid, .offline = cases[i].offline,
                                        .softirq = cases[i].softirq, .irq = cases[i].irq,
                                        .idle = cases[i].idle, .net_rx_rate = cases[i].rx };
                struct sample_rates one = { .max_cpu = 0, .cpus = &c };
                char *got;

                assert_int_equal(report_format_load_lines(&one, &got), 0);
                if (strcmp(got, cases[i].want) != 0)
                        fail_msg("%s: '%s', want '%s'", cases[i].what, got, cases[i].want);
                free(got);
        }
}

/* The foreground load lines stay readable on a big host: a summary and
 * the busiest CPUs, two a line, not one line for every CPU. */
static void test_format_load_lines(void **state) {
        static struct sample_cpu cpus[256];
        struct sample_rates avg = { .max_cpu = 255, .cpus = cpus };
        char *got, *line, *save = NULL;
        size_t lines = 0;

        for (int i = 0; i < 256; i++)
                cpus[i] = (struct sample_cpu){ .valid = true, .softirq = 0.02, .idle = 0.9, .net_rx_rate = 100 };
        cpus[17].softirq = 0.95;
        cpus[200].softirq = 0.80;
        cpus[3].softirq = 0.60;
        cpus[250].irq = 0.30;
        cpus[251] = (struct sample_cpu){ .offline = true };
        assert_int_equal(report_format_load_lines(&avg, &got), 0);
        for (line = strtok_r(got, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (strlen(line) > 120)
                        fail_msg("load line of %zu columns: %s", strlen(line), line);
                switch (lines++) {
                case 0:
                        assert_string_equal(line, "load: 255 CPUs, mean soft 3% irq 0% idle 90%, net_rx 25.5k/s in all; busiest:");
                        break;
                case 1:
                        assert_string_equal(line, "load: cpu17 soft 95% irq 0% idle 90% net_rx 100/s | "
                                                  "cpu200 soft 80% irq 0% idle 90% net_rx 100/s");
                        break;
                case 2:
                        assert_string_equal(line, "load: cpu3 soft 60% irq 0% idle 90% net_rx 100/s | "
                                                  "cpu250 soft 2% irq 30% idle 90% net_rx 100/s");
                        break;
                }
        }
        assert_int_equal(lines, 3);
        free(got);

        /* a small host: every CPU, in order */
        avg.max_cpu = 2;
        assert_int_equal(report_format_load_lines(&avg, &got), 0);
        assert_string_equal(got, "load: cpu0 soft 2% irq 0% idle 90% net_rx 100/s | cpu1 soft 2% irq 0% idle 90% net_rx 100/s\n"
                                 "load: cpu2 soft 2% irq 0% idle 90% net_rx 100/s\n");
        free(got);
        avg.max_cpu = -1;
        assert_int_equal(report_format_load_lines(&avg, &got), 0);
        assert_string_equal(got, "");
        free(got);
}

/* Which failed writes make the next tick rediscover the inventory. */
static void test_failure_rediscovers(void **state) {
        static const struct {
                const char *what;
                enum knob_kind type;
                int r;
                bool want;
        } cases[] = {
                { "IRQ vanished (ENOENT)", KNOB_IRQ, -ENOENT, true },
                { "IRQ's device gone (ENODEV)", KNOB_IRQ, -ENODEV, true },
                { "queue vanished (ENOENT)", KNOB_RPS, -ENOENT, true },
                { "xps queue vanished", KNOB_XPS, -ENOENT, true },
                { "flow count queue vanished", KNOB_FLOWCNT, -ENOENT, true },
                { "thread exited (ESRCH) is normal", KNOB_THREAD, -ESRCH, false },
                { "thread gone (ENOENT) is normal", KNOB_THREAD, -ENOENT, false },
                { "rps_sock_flow_entries absent (namespace)", KNOB_SOCKFLOW, -ENOENT, false },
                { "managed IRQ (EIO) is no layout change", KNOB_IRQ, -EIO, false },
                { "ENOSPC is no layout change", KNOB_IRQ, -ENOSPC, false },
                { "EBUSY is retried, not rediscovered", KNOB_IRQ, -EBUSY, false },
                { "success", KNOB_IRQ, 0, false },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (failures_rediscovers(cases[i].type, cases[i].r) != cases[i].want)
                        fail_msg("%s: want %s", cases[i].what, cases[i].want ? "rediscovery" : "none");
}

/* A calm host's audits spread out while they find nothing, up to 5 min of
 * calm ticks, and come back to every 30th tick as soon as one finds
 * something. */
static void test_audit_every(void **state) {
        static const struct {
                const char *what;
                unsigned every;
                bool quiet;
                uint64_t calm_usec;
                unsigned want;
        } cases[] = {
                { "start: none yet", 0, true, 2 * USEC_PER_SEC, ENGINE_FULL_TICK_EVERY },
                { "quiet doubles", ENGINE_FULL_TICK_EVERY, true, 2 * USEC_PER_SEC, 2 * ENGINE_FULL_TICK_EVERY },
                { "and again", 60, true, 2 * USEC_PER_SEC, 120 },
                { "capped at 5 min of 2 s ticks", 120, true, 2 * USEC_PER_SEC, 150 },
                { "stays at the cap", 150, true, 2 * USEC_PER_SEC, 150 },
                { "something found: back to 30", 150, false, 2 * USEC_PER_SEC, ENGINE_FULL_TICK_EVERY },
                { "something found at 30", 30, false, 2 * USEC_PER_SEC, ENGINE_FULL_TICK_EVERY },
                { "10 s calm ticks: 30 is 5 min already", 30, true, 10 * USEC_PER_SEC, ENGINE_FULL_TICK_EVERY },
                { "60 s calm ticks: never longer than today", 30, true, 60 * USEC_PER_SEC, ENGINE_FULL_TICK_EVERY },
                { "5 s calm ticks: up to 60", 30, true, 5 * USEC_PER_SEC, 60 },
                { "5 s calm ticks at the cap", 60, true, 5 * USEC_PER_SEC, 60 },
                { "0.1 s ticks: doubles on", 960, true, USEC_PER_SEC / 10, 1920 },
                { "0.1 s ticks: 3000 at most", 1920, true, USEC_PER_SEC / 10, 3000 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned got = engine_audit_every(cases[i].every, cases[i].quiet, cases[i].calm_usec);

                if (got != cases[i].want)
                        fail_msg("%s: %u, want %u", cases[i].what, got, cases[i].want);
        }
        /* audits further apart re-read more objects each: the same share
         * of them per calm tick as at every 30th */
        assert_int_equal(engine_audit_slice(0), engine_audit_slice(ENGINE_FULL_TICK_EVERY));
        assert_int_equal(engine_audit_slice(2 * ENGINE_FULL_TICK_EVERY), 2 * engine_audit_slice(ENGINE_FULL_TICK_EVERY));
        assert_int_equal(engine_audit_slice(150) * ENGINE_FULL_TICK_EVERY, engine_audit_slice(ENGINE_FULL_TICK_EVERY) * 150);
}

/* An audit that leaves the same CPUs hot as the last one found nothing: a
 * hot CPU no move relieves does not keep the audits at every 30th tick;
 * a CPU newly hot, or one no longer hot, does. */
static void test_audit_quiet_hot(void **state) {
        static const struct {
                const char *what;
                int hot[3], last[3];      /* CPU lists, -1 ends */
                bool want;
        } cases[] = {
                { "nothing hot", { -1 }, { -1 }, true },
                { "the same CPU hot as at the last audit", { 3, -1 }, { 3, -1 }, true },
                { "the same two", { 3, 5, -1 }, { 5, 3, -1 }, true },
                { "newly hot", { 3, -1 }, { -1 }, false },
                { "one more hot", { 3, 5, -1 }, { 3, -1 }, false },
                { "no longer hot", { -1 }, { 3, -1 }, false },
                { "another CPU hot", { 4, -1 }, { 3, -1 }, false },
        };
        (void) state;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct engine *e = calloc(1, sizeof(*e));

                assert_non_null(e);
                e->pace = POLICY_PACE_CALM;
                for (int k = 0; cases[i].hot[k] >= 0; k++)
                        cpuset_set(&e->report.hot, cases[i].hot[k]);
                for (int k = 0; cases[i].last[k] >= 0; k++)
                        cpuset_set(&e->audit_hot, cases[i].last[k]);
                if (engine_audit_quiet(e, 0, 0) != cases[i].want)
                        fail_msg("%s: quiet %d, want %d", cases[i].what, !cases[i].want, cases[i].want);
                /* anything else found still counts */
                e->report.n_notes = 1;
                assert_false(engine_audit_quiet(e, 0, 0));
                free(e);
        }
}

/* A run on another root than the host's never uses the host's default
 * state directory. */
static void test_state_dir_choose(void **state) {
        char base[] = "/tmp/irqsteer-sdc-XXXXXX", want[256], run[256];
        static const struct {
                const char *what, *asked, *dflt;
                bool host;
                const char *want; /* "ROOT" = base/run/irqsteer, NULL = -EXDEV */
        } cases[] = {
                { "host, default", NULL, NULL, true, "/run/irqsteer" },
                { "host, configured", NULL, "/var/lib/x", true, "/var/lib/x" },
                { "host, option", "/srv/s", "/var/lib/x", true, "/srv/s" },
                { "root, default", NULL, NULL, false, "ROOT" },
                { "root, the configuration's default", NULL, "/run/irqsteer", false, "ROOT" },
                { "root, trailing slash", NULL, "/run/irqsteer/", false, "ROOT" },
                { "root, configured elsewhere", NULL, "/var/lib/x", false, "/var/lib/x" },
                { "root, option elsewhere", "/srv/s", NULL, false, "/srv/s" },
                { "root, option names the host's", "/run/irqsteer", NULL, false, NULL },
        };
        (void) state;

        assert_non_null(mkdtemp(base));
        snprintf(want, sizeof(want), "%s/run/irqsteer", base);
        snprintf(run, sizeof(run), "%s/run", base);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *got = NULL;
                int r = state_dir_choose(cases[i].asked, cases[i].dflt, base, cases[i].host, true, &got);
                const char *w = cases[i].want && strcmp(cases[i].want, "ROOT") == 0 ? want : cases[i].want;

                if (!w) {
                        if (r != -EXDEV)
                                fail_msg("%s: %d, want -EXDEV", cases[i].what, r);
                        continue;
                }
                if (r != 0 || strcmp(got, w) != 0)
                        fail_msg("%s: %d '%s', want '%s'", cases[i].what, r, got ? got : "", w);
                free(got);
        }
        /* ROOT/run was created for the derived one */
        assert_int_equal(access(run, F_OK), 0);
        assert_int_equal(rmdir(run), 0);
        assert_int_equal(rmdir(base), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_linkmon_parse),
                cmocka_unit_test(test_failure_rediscovers),
                cmocka_unit_test(test_linkmon_parse_truncated),
                cmocka_unit_test(test_linkmon_diff),
                cmocka_unit_test(test_linkmon_diff_small_buffer),
                cmocka_unit_test(test_caps_for_config),
                cmocka_unit_test(test_caps_defaults_need_net_admin),
                cmocka_unit_test(test_caps_format),
                cmocka_unit_test(test_format_status),
                cmocka_unit_test(test_format_load),
                cmocka_unit_test(test_format_load_lines),
                cmocka_unit_test(test_format_config_error),
                cmocka_unit_test(test_notify_sanitize),
                cmocka_unit_test(test_state_write_atomic),
                cmocka_unit_test(test_state_dir_ensure),
                cmocka_unit_test(test_state_dir_choose),
                cmocka_unit_test(test_audit_every),
                cmocka_unit_test(test_audit_quiet_hot),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
