/* irqsteerctl: the formatters with hand-made inputs, and the built binary
 * (IRQSTEERCTL) against fixture roots, the live host and state directories
 * made here. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "ctl.h"
#include "testlib.h"
#include "util.h"

/* ---- helpers ---- */

static char *read_fd_all(int fd) {
        char *buf = NULL;
        size_t len = 0, alloc = 0;

        lseek(fd, 0, SEEK_SET);
        for (;;) {
                ssize_t n;

                assert_int_equal(util_grow((void **) &buf, &alloc, len + 4096 + 1, 1), 0);
                n = read(fd, buf + len, alloc - len - 1);
                assert_true(n >= 0);
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        return buf;
}

/* Runs the built irqsteerctl with args (NULL-terminated, without argv[0]);
 * returns its exit status (-1 if it died of a signal) and its output. */
static int run_ctl(const char *const *args, char **ret_out, char **ret_err) {
        const char *bin = getenv("IRQSTEERCTL");
        char out_path[] = "/tmp/test-ctl-out.XXXXXX", err_path[] = "/tmp/test-ctl-err.XXXXXX";
        const char *argv[32];
        int out, err, status;
        size_t n = 0;
        pid_t pid;

        if (!bin)
                bin = "./irqsteerctl";
        argv[n++] = bin;
        for (size_t i = 0; args[i]; i++) {
                assert_true(n < ELEMENTSOF(argv) - 1);
                argv[n++] = args[i];
        }
        argv[n] = NULL;
        out = mkstemp(out_path);
        err = mkstemp(err_path);
        assert_true(out >= 0 && err >= 0);
        unlink(out_path);
        unlink(err_path);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_RDONLY);

                dup2(devnull, 0);
                dup2(out, 1);
                dup2(err, 2);
                execv(bin, (char **) argv);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        *ret_out = read_fd_all(out);
        *ret_err = read_fd_all(err);
        close(out);
        close(err);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *make_tmpdir(void) {
        char tmpl[] = "/tmp/test-ctl.XXXXXX";
        char *d = mkdtemp(tmpl);

        assert_non_null(d);
        return strdup(d);
}

static void rm_rf(const char *dir) {
        char cmd[600];

        /* only our own mkdtemp directories */
        assert_true(strncmp(dir, "/tmp/test-ctl.", 14) == 0);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* mkdir -p dir/rel */
static int mkdir_p_test(const char *dir, const char *rel) {
        char path[512];
        size_t n = (size_t) snprintf(path, sizeof(path), "%s/", dir);

        for (const char *p = rel;; p++) {
                if (*p == '/' || *p == 0) {
                        path[n] = 0;
                        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        if (*p == 0)
                                return 0;
                }
                path[n++] = *p;
        }
}

static const struct json_value *find_by(const struct json_value *arr, const char *key, const char *name) {
        for (size_t i = 0; i < json_count(arr); i++) {
                const char *s;
                if (json_get_string(json_index(arr, i), key, &s) == 0 && strcmp(s, name) == 0)
                        return json_index(arr, i);
        }
        return NULL;
}

static const struct json_value *find_by_int(const struct json_value *arr, const char *key, int64_t want) {
        for (size_t i = 0; i < json_count(arr); i++) {
                int64_t v;
                if (json_get_int(json_index(arr, i), key, &v) == 0 && v == want)
                        return json_index(arr, i);
        }
        return NULL;
}

static void assert_cpus(const struct json_value *v, const char *list, const char *what) {
        cpuset_t got, want;
        char buf[256];

        if (json_to_cpuset(v, &got) < 0)
                fail_msg("%s: not a CPU array", what);
        assert_int_equal(cpuset_parse_list(list, &want), 0);
        if (!cpuset_equal(&got, &want)) {
                cpuset_format_list(&got, buf, sizeof(buf));
                fail_msg("%s: CPUs '%s', want '%s'", what, buf, list);
        }
}

/* ---- formatters with hand-made inputs ---- */

/* Two NICs: eth0 with a combined vector per queue (IRQs 40, 41), eth1 with
 * split rx/tx vectors (IRQs 50 rx, 51 tx); IRQ 41 has no effective mask. */
static void make_inventory(struct inventory *inv, struct inventory_nic nics[2], struct inventory_queue q0[2],
                           struct inventory_queue q1[1], struct inventory_irq irqs[4]) {
        memset(inv, 0, sizeof(*inv));
        memset(nics, 0, 2 * sizeof(*nics));
        memset(q0, 0, 2 * sizeof(*q0));
        memset(q1, 0, sizeof(*q1));
        memset(irqs, 0, 4 * sizeof(*irqs));
        strcpy(nics[0].name, "eth0");
        nics[0].queues = q0;
        nics[0].n_queues = 2;
        q0[0] = (struct inventory_queue){ .index = 0, .has_rx = true, .has_tx = true, .rx_irq = 40, .tx_irq = 40 };
        q0[1] = (struct inventory_queue){ .index = 1, .has_rx = true, .has_tx = true, .rx_irq = 41, .tx_irq = 41 };
        strcpy(nics[1].name, "eth1");
        nics[1].queues = q1;
        nics[1].n_queues = 1;
        q1[0] = (struct inventory_queue){ .index = 0, .has_rx = true, .has_tx = true, .rx_irq = 50, .tx_irq = 51 };
        irqs[0] = (struct inventory_irq){ .irq = 40, .nic = 0, .queue = 0, .role = INVENTORY_IRQ_RXTX,
                                    .has_effective = true, .affinity_readable = true };
        KEEP(&irqs[0].affinity, cpuset_single(1));
        KEEP(&irqs[0].effective, cpuset_single(1));
        /* affinity 0-1, no effective: counts for both CPUs */
        irqs[1] = (struct inventory_irq){ .irq = 41, .nic = 0, .queue = 1, .role = INVENTORY_IRQ_RXTX,
                                    .affinity_readable = true };
        assert_int_equal(test_keep_list(&irqs[1].affinity, "0-1"), 0);
        /* affinity 0-1 but the kernel delivers on 0 only: effective wins */
        irqs[2] = (struct inventory_irq){ .irq = 50, .nic = 1, .queue = 0, .role = INVENTORY_IRQ_RX,
                                    .has_effective = true, .affinity_readable = true };
        KEEP(&irqs[2].effective, cpuset_single(0));
        assert_int_equal(test_keep_list(&irqs[2].affinity, "0-1"), 0);
        irqs[3] = (struct inventory_irq){ .irq = 51, .nic = 1, .queue = 0, .role = INVENTORY_IRQ_TX,
                                    .has_effective = true, .affinity_readable = true };
        KEEP(&irqs[3].affinity, cpuset_single(1));
        KEEP(&irqs[3].effective, cpuset_single(1));
        inv->nics = nics;
        inv->n_nics = 2;
        inv->irqs = irqs;
        inv->n_irqs = 4;
}

struct labels {
        char text[256];
};

static void collect(const char *label, void *userdata) {
        struct labels *l = userdata;
        size_t n = strlen(l->text);
        snprintf(l->text + n, sizeof(l->text) - n, "%s%s", n ? " " : "", label);
}

static void test_cpu_queues(_unused_ void **state) {
        struct inventory inv;
        struct inventory_nic nics[2];
        struct inventory_queue q0[2], q1[1];
        struct inventory_irq irqs[4];
        static const struct {
                const char *what;
                int cpu;
                const char *want;
        } cases[] = {
                { "effective of a combined vector, a mask without effective, a split tx", 1,
                  "eth0:0 eth0:1 eth1:0tx" },
                { "effective narrower than the mask", 0, "eth0:1 eth1:0rx" },
                { "a CPU serving nothing", 5, "" },
        };

        make_inventory(&inv, nics, q0, q1, irqs);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct labels l = { "" };
                ctl_cpu_queues(&inv, cases[i].cpu, collect, &l);
                if (strcmp(l.text, cases[i].want) != 0)
                        fail_msg("%s: CPU%d serves '%s', want '%s'", cases[i].what, cases[i].cpu, l.text,
                                 cases[i].want);
        }
        /* no inventory: nothing, no crash */
        struct labels l = { "" };
        ctl_cpu_queues(NULL, 0, collect, &l);
        assert_string_equal(l.text, "");
        inventory_free_sets(&inv);
}

static void test_top_json(_unused_ void **state) {
        struct inventory inv;
        struct inventory_nic nics[2];
        struct inventory_queue q0[2], q1[1];
        struct inventory_irq irqs[4];
        struct sample_cpu cpus[3] = {
                { .valid = true, .usr = 0.25, .sys = 0.125, .irq = 0.0, .softirq = 0.5, .idle = 0.125,
                  .net_rx_rate = 1234.56, .net_tx_rate = 7.0 },
                { .valid = false },           /* counters reset: numbers are null */
                { .valid = false, .offline = true }, /* offline: not listed */
        };
        struct sample_rates r = { .interval_s = 0.5, .max_cpu = 2, .cpus = cpus };
        struct json_value *v = NULL;
        const struct json_value *c0, *c1, *arr;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        struct json_writer w;
        double d;
        int64_t i;

        make_inventory(&inv, nics, q0, q1, irqs);
        json_writer_init(&w, f, 0);
        ctl_top_json(&w, 1700000000.25, &r, &inv);
        assert_int_equal(json_writer_finish(&w), 0);
        fclose(f);
        /* JSON Lines: the object is one line */
        assert_null(strchr(buf, '\n'));
        assert_int_equal(json_parse(buf, len, &v), 0);
        assert_int_equal(json_get_number(v, "time", &d), 0);
        assert_true(fabs(d - 1700000000.25) < 0.001);
        assert_int_equal(json_get_number(v, "interval", &d), 0);
        assert_true(d == 0.5);
        arr = json_get(v, "cpus");
        assert_int_equal(json_count(arr), 2);
        c0 = find_by_int(arr, "cpu", 0);
        c1 = find_by_int(arr, "cpu", 1);
        assert_non_null(c0);
        assert_non_null(c1);
        assert_null(find_by_int(arr, "cpu", 2));
        /* shares become percentages */
        assert_int_equal(json_get_number(c0, "usr", &d), 0);
        assert_true(fabs(d - 25.0) < 0.01);
        assert_int_equal(json_get_number(c0, "sys", &d), 0);
        assert_true(fabs(d - 12.5) < 0.01);
        assert_int_equal(json_get_number(c0, "irq", &d), 0);
        assert_true(d == 0);
        assert_int_equal(json_get_number(c0, "soft", &d), 0);
        assert_true(fabs(d - 50.0) < 0.01);
        assert_int_equal(json_get_number(c0, "idle", &d), 0);
        assert_true(fabs(d - 12.5) < 0.01);
        assert_int_equal(json_get_number(c0, "net_rx", &d), 0);
        assert_true(fabs(d - 1234.6) < 0.01);
        assert_int_equal(json_get_int(c0, "net_tx", &i), 0);
        assert_int_equal(i, 7);
        assert_int_equal(json_count(json_get(c0, "queues")), 2);
        assert_string_equal(json_index(json_get(c0, "queues"), 0)->string, "eth0:1");
        assert_string_equal(json_index(json_get(c0, "queues"), 1)->string, "eth1:0rx");
        /* an invalid CPU is listed with null numbers, queues still known */
        assert_int_equal(json_get(c1, "usr")->type, JSON_NULL);
        assert_int_equal(json_get(c1, "net_rx")->type, JSON_NULL);
        assert_int_equal(json_count(json_get(c1, "queues")), 3);
        json_free(v);
        free(buf);

        /* the table: one line per listed CPU, "-" for unknown numbers */
        buf = NULL;
        f = open_memstream(&buf, &len);
        ctl_top_print(f, &r, &inv, &(struct ctl_top_view){ .hot = CTL_TOP_HOT });
        fclose(f);
        assert_non_null(strstr(buf, "NET_RX/s"));
        assert_non_null(strstr(buf, "50.0"));
        assert_non_null(strstr(buf, "eth0:0 eth0:1 eth1:0tx"));
        assert_null(strstr(buf, "\n    2 "));
        free(buf);
        inventory_free_sets(&inv);
}

static size_t count_lines(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += *s == '\n';
        return n;
}

/* 64 CPUs on a 24-row terminal: the header stays, the hottest CPUs come
 * first and are marked, the rest is summed up in one line, and the IRQs
 * that fire most follow with their rates and names. */
static void test_top_table_fits(_unused_ void **state) {
        struct inventory inv;
        struct inventory_nic nics[2];
        struct inventory_queue q0[2], q1[1];
        struct inventory_irq irqs[4];
        struct sample_cpu cpus[64];
        double per40[64] = { 0 }, per50[64] = { 0 }, per51[64] = { 0 };
        struct sample_irq sirqs[3] = {
                { .irq = 40, .valid = true, .rate = 120, .per_cpu = per40 },
                { .irq = 50, .valid = true, .rate = 98000, .per_cpu = per50 },
                { .irq = 51, .valid = true, .rate = 4100, .per_cpu = per51 },
        };
        struct sample_rates r = { .interval_s = 1, .max_cpu = 63, .cpus = cpus, .irqs = sirqs, .n_irqs = 3 };
        char *buf = NULL, *p;
        size_t len = 0;
        FILE *f;

        make_inventory(&inv, nics, q0, q1, irqs);
        for (int i = 0; i < 64; i++)
                cpus[i] = (struct sample_cpu){ .valid = true, .usr = 0.05, .sys = 0.02, .softirq = 0.01 + i / 10000.0,
                                               .idle = 0.9, .busy = 0.1 };
        cpus[17].softirq = 0.95;
        cpus[17].idle = 0.0;
        cpus[5].softirq = 0.82;
        cpus[9].softirq = 0.50;
        per40[3] = 120;
        per50[17] = 98000;
        per51[5] = 4000;
        per51[6] = 100;

        f = open_memstream(&buf, &len);
        ctl_top_print(f, &r, &inv, &(struct ctl_top_view){ .rows = 22, .hot = CTL_TOP_HOT });
        assert_int_equal(fclose(f), 0);
        if (count_lines(buf) > 22)
                fail_msg("%zu lines for 22 rows:\n%s", count_lines(buf), buf);
        p = strstr(buf, "  CPU  %usr");
        if (!p || !strstr(buf, "64 CPUs, 1.00 s: %usr 5.0 %sys 2.0 ") || !strstr(buf, "; 2 hot (*)\n"))
                fail_msg("no summary or header:\n%s", buf);
        /* sorted: 17, 5, 9, then the rest by irq+softirq (63 first) */
        p = strchr(p, '\n') + 1;
        if (strncmp(p, "*  17 ", 6) != 0 || !strstr(p, "\n*   5 ") || !strstr(p, "\n    9 ") ||
            !strstr(p, "\n   63 "))
                fail_msg("not sorted by load or hot not marked:\n%s", buf);
        if (!strstr(buf, "more CPUs, less irq+softirq"))
                fail_msg("no line for the CPUs left out:\n%s", buf);
        if (!strstr(buf, "\n     50      98000  17           eth1 queue 0 rx\n") ||
            !strstr(buf, "\n     51       4100  5-6          eth1 queue 0 tx\n") ||
            !strstr(buf, "\n     40        120  3            eth0 queue 0\n"))
                fail_msg("top IRQs missing or out of order:\n%s", strstr(buf, "more CPU") ? strstr(buf, "more CPU") : buf);
        if (strstr(buf, "\033["))
                fail_msg("escape codes without color:\n%s", buf);
        for (const char *l = buf; *l; l += strcspn(l, "\n") + 1)
                if (strcspn(l, "\n") > 100)
                        fail_msg("line over 100 columns:\n%s", buf);
        free(buf);

        /* the whole table when not limited; by CPU number on request */
        buf = NULL;
        f = open_memstream(&buf, &len);
        ctl_top_print(f, &r, &inv, &(struct ctl_top_view){ .sort_cpu = true, .hot = CTL_TOP_HOT, .color = true });
        assert_int_equal(fclose(f), 0);
        assert_true(count_lines(buf) >= 2 + 64);
        p = strstr(buf, "QUEUES\n");
        assert_non_null(p);
        p = strchr(p, '\n') + 1;
        assert_int_equal(strncmp(p, "    0 ", 6), 0);
        assert_null(strstr(buf, "more CPU"));
        /* hot rows in reverse video on a terminal */
        assert_non_null(strstr(buf, "\033[7m*  17 "));
        free(buf);
        inventory_free_sets(&inv);
}

static void test_inventory_json_formatter(_unused_ void **state) {
        struct inventory inv;
        struct inventory_nic nics[2];
        struct inventory_queue q0[2], q1[1];
        struct inventory_irq irqs[4];
        struct topology_cpu tcpus[2] = {
                { .cpu = 0, .present = true, .online = true, .node = 0, .core = 0, .smt_index = 0 },
                { .cpu = 1, .present = true, .online = true, .node = 0, .core = 0, .smt_index = 1,
                  .isolated = true },
        };
        struct topology_node node = { .id = 0 };
        struct topology t = { .max_cpu = 1, .cpus = tcpus, .nodes = &node, .n_nodes = 1 };
        struct json_value *v = NULL;
        const struct json_value *nic, *q, *irq;
        char *buf = NULL;
        size_t len = 0;
        FILE *f;
        struct json_writer w;
        int64_t i;
        bool b;

        cpuset_set(&node.cpus, 0);
        cpuset_set(&node.cpus, 1);
        make_inventory(&inv, nics, q0, q1, irqs);
        nics[0].node = -1;
        nics[0].combined_channels = -1;
        q0[0].has_rps = true;
        KEEP(&q0[0].rps_cpus, cpuset_single(1));
        q0[0].rps_flow_cnt = 2048;
        inv.rps_sock_flow_entries = 32768;
        f = open_memstream(&buf, &len);
        json_writer_init(&w, f, JSON_PRETTY);
        ctl_inventory_json(&w, &t, &inv, NULL);
        assert_int_equal(json_writer_finish(&w), 0);
        fclose(f);
        assert_int_equal(json_parse(buf, len, &v), 0);
        assert_int_equal(json_get_int(v, "version", &i), 0);
        assert_int_equal(i, 1);
        assert_int_equal(json_count(json_get(v, "cpus")), 2);
        assert_int_equal(json_get_bool(find_by_int(json_get(v, "cpus"), "cpu", 1), "isolated", &b), 0);
        assert_true(b);
        assert_cpus(json_get(json_index(json_get(v, "nodes"), 0), "cpus"), "0-1", "node 0");
        nic = find_by(json_get(v, "nics"), "name", "eth0");
        assert_non_null(nic);
        assert_int_equal(json_get(nic, "node")->type, JSON_NULL);
        assert_int_equal(json_get(nic, "combined_channels")->type, JSON_NULL);
        assert_int_equal(json_get(nic, "driver")->type, JSON_NULL);
        q = find_by_int(json_get(nic, "queues"), "index", 0);
        assert_cpus(json_get(q, "rps_cpus"), "1", "eth0 rx-0 rps");
        assert_int_equal(json_get_int(q, "rps_flow_cnt", &i), 0);
        assert_int_equal(i, 2048);
        assert_int_equal(json_get(q, "xps_cpus")->type, JSON_NULL);
        assert_int_equal(json_count(json_get(q, "irqs")), 1);
        q = find_by_int(json_get(find_by(json_get(v, "nics"), "name", "eth1"), "queues"), "index", 0);
        assert_int_equal(json_get_int(q, "rx_irq", &i), 0);
        assert_int_equal(i, 50);
        assert_int_equal(json_get_int(q, "tx_irq", &i), 0);
        assert_int_equal(i, 51);
        assert_int_equal(json_count(json_get(q, "irqs")), 2);
        irq = find_by_int(json_get(v, "irqs"), "irq", 41);
        assert_string_equal(json_get(irq, "nic")->string, "eth0");
        assert_string_equal(json_get(irq, "role")->string, inventory_irq_role_to_string(INVENTORY_IRQ_RXTX));
        assert_int_equal(json_get(irq, "effective")->type, JSON_NULL);
        assert_cpus(json_get(irq, "affinity"), "0-1", "IRQ 41 affinity");
        assert_int_equal(json_get_int(v, "rps_sock_flow_entries", &i), 0);
        assert_int_equal(i, 32768);
        json_free(v);
        free(buf);
        inventory_free_sets(&inv);
}

static void test_parse_interval(_unused_ void **state) {
        static const struct {
                const char *what, *in;
                int r;
                uint64_t usec;
        } cases[] = {
                { "whole seconds", "2", 0, 2000000 },
                { "fraction of a second", "0.2", 0, 200000 },
                { "milliseconds", "500ms", 0, 500000 },
                { "seconds suffix", "3s", 0, 3000000 },
                { "zero", "0", -ERANGE, 0 },
                { "negative", "-1", -EINVAL, 0 },
                { "over an hour", "3601", -ERANGE, 0 },
                { "below a millisecond", "0.0001", -ERANGE, 0 },
                { "garbage", "fast", -EINVAL, 0 },
                { "empty", "", -EINVAL, 0 },
                { "nan", "nan", -EINVAL, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t usec = 0;
                int r = ctl_parse_interval(cases[i].in, &usec);
                if (r != cases[i].r)
                        fail_msg("%s: '%s' gave %d, want %d", cases[i].what, cases[i].in, r, cases[i].r);
                if (r == 0 && usec != cases[i].usec)
                        fail_msg("%s: %llu usec, want %llu", cases[i].what, (unsigned long long) usec,
                                 (unsigned long long) cases[i].usec);
        }
}

#define STATUS_OK                                                                                    \
        "{\"version\":1,\"pid\":%d,\"started_usec\":1700000000000000,\"uptime_s\":61.5,"           \
        "\"status\":\"watching 2 NICs\",\"config\":{\"path\":null,\"interval_s\":2,"                \
        "\"banned_cpus\":[2,3]},"                                                                   \
        "\"config_text\":\"[daemon]\\ninterval = 2s\\n\\n[balance]\\nhot_enter = 80%%\\n"             \
        "banned_cpus = 2-3\\n\\n[interface eno1]\\nmanage = yes\\n\","                                \
        "\"hot_cpus\":[{\"cpu\":3,\"load\":0.82,\"why\":\"max_moves (2) reached this tick\"}],"                                                  \
        "\"managed\":[{\"object\":\"irq 73 -\",\"current\":\"3\",\"original\":\"0-15\","              \
        "\"current_cpus\":[3],\"original_cpus\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},"          \
        "{\"object\":\"rps eno1 0\",\"current\":\"ffffffff\",\"original\":\"00000000,fffffffc\","   \
        "\"current_cpus\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,"   \
        "26,27,28,29,30,31],\"original_cpus\":[2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"   \
        "21,22,23,24,25,26,27,28,29,30,31]},"                                                       \
        "{\"object\":\"thread 142 143 813117\",\"current\":\"4\",\"original\":\"0-63\"}],"         \
        "\"last_actions\":[{\"time\":1700000060000000,\"action\":\"IRQ 73 CPU0 -> CPU3: hot\"," \
        "\"reason\":\"CPU0 hot\"},{\"time\":1700000070000000,\"action\":\"RPS eth0 rx-0 CPUs 16-31,48-63 -> "  \
        "CPUs 16-31,48-61: mlx5_async0@pci:0000:af:00.0: off CPUs that may not be used (banned, isolated or nohz_full)\","     \
        "\"reason\":\"spread\",\"result\":\"failed\",\"error\":\"Permission denied\"}],"        \
        "\"dry_run\":true,\"counters\":{\"queue_irqs\":8,\"moves_10min\":3,"                        \
        "\"kernel_managed_irqs_skipped\":5,\"kept\":1},"                                        \
        "\"irq_classes\":[{\"class\":\"kernel-managed\",\"irqs\":40,"                               \
        "\"done\":\"left to the kernel (EIO/EPERM on write)\"},{\"class\":\"banned\",\"irqs\":1,"        \
        "\"done\":\"left alone (ban_irqs)\"},{\"class\":\"nic-queue\",\"irqs\":8,"                      \
        "\"done\":\"spread by load, one CPU a queue, rx and tx together\"}],"                        \
        "\"kernel_managed_irqs\":[200,201,202,203,204,205,206,207,208,209,210,211,212,213,214,215,216,217,218,219,"                             \
        "220,221,222,223,224,225,226,227,228,229,230,231,232,233,234,235,236,237,238,239]}"

static void test_status_validate(_unused_ void **state) {
        static const struct {
                const char *what, *doc;
                int r;
        } cases[] = {
                { "full document", STATUS_OK, 0 },
                { "minimal document", "{\"version\":1,\"pid\":1,\"status\":\"\"}", 0 },
                { "unknown members are fine", "{\"version\":1,\"pid\":1,\"status\":\"\",\"new\":[1]}", 0 },
                { "null current value", "{\"version\":1,\"pid\":1,\"status\":\"\",\"managed\":"
                  "[{\"object\":\"irq 1\",\"current\":null,\"original\":\"0\"}]}", 0 },
                { "not an object", "[]", -EBADMSG },
                { "version 2", "{\"version\":2,\"pid\":1,\"status\":\"\"}", -EBADMSG },
                { "no version", "{\"pid\":1,\"status\":\"\"}", -EBADMSG },
                { "pid as string", "{\"version\":1,\"pid\":\"1\",\"status\":\"\"}", -EBADMSG },
                { "pid zero", "{\"version\":1,\"pid\":0,\"status\":\"\"}", -EBADMSG },
                { "no status", "{\"version\":1,\"pid\":1}", -EBADMSG },
                { "config not an object", "{\"version\":1,\"pid\":1,\"status\":\"\",\"config\":[]}", -EBADMSG },
                { "hot cpu without load", "{\"version\":1,\"pid\":1,\"status\":\"\",\"hot_cpus\":[{\"cpu\":1}]}",
                  -EBADMSG },
                { "fractional cpu", "{\"version\":1,\"pid\":1,\"status\":\"\",\"hot_cpus\":"
                  "[{\"cpu\":1.5,\"load\":1}]}", -EBADMSG },
                { "action not an object", "{\"version\":1,\"pid\":1,\"status\":\"\",\"last_actions\":[1]}",
                  -EBADMSG },
                { "managed not an array", "{\"version\":1,\"pid\":1,\"status\":\"\",\"managed\":{}}", -EBADMSG },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char doc[2048];
                struct json_value *v = NULL;
                const char *why = NULL;
                int r;

                snprintf(doc, sizeof(doc), cases[i].doc, 42);
                assert_int_equal(json_parse(doc, strlen(doc), &v), 0);
                r = ctl_status_validate(v, &why);
                if (r != cases[i].r)
                        fail_msg("%s: gave %d, want %d", cases[i].what, r, cases[i].r);
                if (r < 0 && !why)
                        fail_msg("%s: no reason given", cases[i].what);
                json_free(v);
        }
}

static char *status_text(const char *doc, int rootfd, bool full) {
        struct json_value *v = NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        assert_int_equal(json_parse(doc, strlen(doc), &v), 0);
        f = open_memstream(&buf, &len);
        assert_non_null(f);
        ctl_status_print(f, v, 1700000090.0, rootfd, full, NULL);
        assert_int_equal(fclose(f), 0);
        json_free(v);
        return buf;
}

/* Lines of at most 120 columns, no JSON syntax leaking into the text. */
static void assert_readable(const char *text, size_t max_lines) {
        size_t lines = 0;

        for (const char *l = text; *l;) {
                size_t n = strcspn(l, "\n");

                if (n > 120)
                        fail_msg("line of %zu columns: %.*s", n, (int) n, l);
                lines++;
                l += n + (l[n] == '\n');
        }
        if (lines > max_lines)
                fail_msg("%zu lines, want at most %zu:\n%s", lines, max_lines, text);
        if (strstr(text, "null") || strstr(text, "= [") || strstr(text, "{\""))
                fail_msg("JSON in the text:\n%s", text);
}

static void test_status_print(_unused_ void **state) {
        char doc[4096], *buf, *dir = make_tmpdir();
        int rootfd;

        snprintf(doc, sizeof(doc), STATUS_OK, 42);

        /* brief: a screenful */
        buf = status_text(doc, -1, false);
        static const char *const brief[] = {
                "pid 42", "up 1m 01s", "Status: watching 2 NICs", "Hot CPUs: CPU3 (82.0%)\n",
                "  CPU3 stays: max_moves (2) reached this tick\n", "(30s ago)",
                "IRQ 73 CPU0 -> CPU3: hot", "reason: CPU0 hot", "Mode: dry run",
                "Counts: 8 queue IRQs, 3 moves in 10 min, 5 kernel-managed IRQs skipped",
                "Managed objects: 3 (--full lists them)", "\n    RPS eth0 rx-0 CPUs 16-31,48-63 -> CPUs 16-31,48-61: ",
                "\n      (banned, isolated or nohz_full)\n", "1 RPS masks set before irqsteerd started (kept)", "RPS eth0 rx-0", "[failed: Permission denied]",
                "IRQ classes:\n  kernel-managed     40  left to the kernel (EIO/EPERM on write): 200, 201,",
                " ... (40)\n  banned              1  left alone (ban_irqs)\n",
                "\n  nic-queue           8  spread by load, one CPU a queue, rx and tx together\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(brief); i++)
                if (!strstr(buf, brief[i]))
                        fail_msg("brief status lacks '%s':\n%s", brief[i], buf);
        if (strstr(buf, "OBJECT") || strstr(buf, "Configuration"))
                fail_msg("brief status lists everything:\n%s", buf);
        assert_readable(buf, 24);
        free(buf);

        /* full: every object, values as CPU lists, threads by name, the
         * configuration in the file's syntax */
        assert_int_equal(mkdir_p_test(dir, "proc/142/task/143"), 0);
        test_write_file(dir, "proc/142/comm", "memcached\n");
        test_write_file(dir, "proc/142/task/143/comm", "worker-3\n");
        rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(rootfd >= 0);
        buf = status_text(doc, rootfd, true);
        close(rootfd);
        static const char *const full[] = {
                "  irq 73   ", " 3 ", " 0-15\n", "rps eno1 0 ", " 0-31 ", " 2-31\n",
                "thread 143 (memcached/worker-3) ", " 4 ", " 0-63\n",
                "Configuration in force (built-in defaults, no file):\n  [daemon]\n  interval = 2s\n",
                "\n  hot_enter = 80%\n  banned_cpus = 2-3\n", "\n  [interface eno1]\n  manage = yes\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(full); i++)
                if (!strstr(buf, full[i]))
                        fail_msg("full status lacks '%s':\n%s", full[i], buf);
        if (strstr(buf, "ffffffff") || strstr(buf, "813117"))
                fail_msg("full status shows masks or thread start times:\n%s", buf);
        assert_readable(buf, 200);
        free(buf);

        /* a file and its drop-ins: named above the merged text, as comments
         * that paste back harmlessly */
        {
                static const char from[] = "\"path\":null,";
                static const char to[] = "\"path\":\"/etc/irqsteer/irqsteer.conf\",\"dropins\":"
                                         "[\"/etc/irqsteer/irqsteer.conf.d/10-site.conf\","
                                         "\"/etc/irqsteer/irqsteer.conf.d/20-host.conf\"],";
                char doc2[sizeof(doc) + sizeof(to)];
                const char *at = strstr(doc, from);

                assert_non_null(at);
                snprintf(doc2, sizeof(doc2), "%.*s%s%s", (int) (at - doc), doc, to, at + strlen(from));
                buf = status_text(doc2, -1, true);
                if (!strstr(buf, "Configuration in force (from /etc/irqsteer/irqsteer.conf and its drop-ins):\n"
                                 "  # drop-in /etc/irqsteer/irqsteer.conf.d/10-site.conf\n"
                                 "  # drop-in /etc/irqsteer/irqsteer.conf.d/20-host.conf\n  [daemon]\n"))
                        fail_msg("full status does not name the drop-ins:\n%s", buf);
                free(buf);
        }
        rm_rf(dir);
        free(dir);
}

/* ---- the binary ---- */

static void test_cli_usage(_unused_ void **state) {
        static const struct {
                const char *what;
                const char *args[6];
                int status;
                const char *out, *err;    /* substrings expected, or NULL */
        } cases[] = {
                { "no command", { NULL }, 2, NULL, "missing command" },
                { "unknown command", { "frobnicate", NULL }, 2, NULL, "unknown command 'frobnicate'" },
                { "unknown global option", { "--bogus", NULL }, 2, NULL, "Try" },
                { "tool help", { "--help", NULL }, 0, "Usage: irqsteerctl", NULL },
                { "version", { "--version", NULL }, 0, "irqsteerctl ", NULL },
                { "inventory help", { "inventory", "--help", NULL }, 0, "Usage: irqsteerctl inventory", NULL },
                { "top help", { "top", "--help", NULL }, 0, "Usage: irqsteerctl top", NULL },
                { "status help", { "status", "--help", NULL }, 0, "Usage: irqsteerctl status", NULL },
                { "plan help", { "plan", "--help", NULL }, 0, "Usage: irqsteerctl plan", NULL },
                { "restore help", { "restore", "--help", NULL }, 0, "Usage: irqsteerctl restore", NULL },
                { "subcommand bad option", { "inventory", "--bogus", NULL }, 2, NULL, "inventory --help" },
                { "stray argument", { "status", "extra", NULL }, 2, NULL, "unexpected argument" },
                { "bad interval", { "top", "--interval", "0", NULL }, 2, NULL, "bad interval" },
                { "bad count", { "top", "--count", "x", NULL }, 2, NULL, "bad count" },
                { "bad root", { "inventory", "--root", "/nonexistent/irqsteer", NULL }, 1, NULL,
                  "cannot open root directory /nonexistent/irqsteer" },
                { "bad root for top", { "top", "--root", "/nonexistent/irqsteer", "--count", "1", NULL }, 1,
                  NULL, "cannot open root" },
                { "missing config for plan", { "plan", "--config", "/nonexistent/irqsteer.conf", NULL }, 1, NULL,
                  "/nonexistent/irqsteer.conf" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *out, *err;
                int st = run_ctl(cases[i].args, &out, &err);

                if (st != cases[i].status)
                        fail_msg("%s: exit %d, want %d (stderr: %s)", cases[i].what, st, cases[i].status, err);
                if (cases[i].out && !strstr(out, cases[i].out))
                        fail_msg("%s: stdout lacks '%s': %s", cases[i].what, cases[i].out, out);
                if (cases[i].err && !strstr(err, cases[i].err))
                        fail_msg("%s: stderr lacks '%s': %s", cases[i].what, cases[i].err, err);
                free(out);
                free(err);
        }
}

/* IRQ names come from drivers (and interface names), not from us: the
 * inventory table shows them escaped, never an escape sequence raw. */
static void test_inventory_escaped(_unused_ void **state) {
        char src[512], cmd[2048], *dir = make_tmpdir(), *out, *err;
        const char *args[] = { "inventory", "--root", NULL, NULL };

        fixture_path("vm2", src, sizeof(src));
        snprintf(cmd, sizeof(cmd),
                 "cp -a '%s' '%s/root' && sed -i 's/ttyS0$/tty\\x1b[2JS0/' '%s/root/proc/interrupts'", src, dir,
                 dir);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof(cmd), "%s/root", dir);
        args[2] = cmd;
        assert_int_equal(run_ctl(args, &out, &err), 0);
        if (strchr(out, 0x1b) || !strstr(out, "tty\\x1b[2JS0"))
                fail_msg("inventory shows an IRQ name raw:\n%s", out);
        free(out);
        free(err);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
        free(dir);
}

static void test_inventory_host64(_unused_ void **state) {
        char root[512], *out, *err;
        struct json_value *v = NULL;
        const struct json_value *nics, *nic, *q, *irq;
        int64_t i;
        const char *s;

        fixture_path("host64", root, sizeof(root));
        const char *args[] = { "inventory", "--json", "--root", root, NULL };
        assert_int_equal(run_ctl(args, &out, &err), 0);
        if (json_parse(out, strlen(out), &v) < 0)
                fail_msg("inventory --json is not JSON: %s", out);

        assert_int_equal(json_get_int(v, "version", &i), 0);
        assert_int_equal(i, 1);
        assert_int_equal(json_count(json_get(v, "cpus")), 64);
        assert_int_equal(json_count(json_get(v, "nodes")), 2);
        assert_cpus(json_get(find_by_int(json_get(v, "nodes"), "node", 1), "cpus"), "16-31,48-63", "node 1");
        /* isolated CPUs of the fixture */
        bool b;
        assert_int_equal(json_get_bool(find_by_int(json_get(v, "cpus"), "cpu", 62), "isolated", &b), 0);
        assert_true(b);
        assert_int_equal(json_get_bool(find_by_int(json_get(v, "cpus"), "cpu", 61), "isolated", &b), 0);
        assert_false(b);

        nics = json_get(v, "nics");
        static const char *const names[] = { "eno1", "enp4s0", "ens1f0", "ens2f0", "lo" };
        for (size_t k = 0; k < ELEMENTSOF(names); k++)
                if (!find_by(nics, "name", names[k]))
                        fail_msg("NIC %s missing", names[k]);

        /* i40e: one combined vector per queue, IRQ 101 + queue */
        nic = find_by(nics, "name", "ens1f0");
        assert_int_equal(json_get_string(nic, "driver", &s), 0);
        assert_string_equal(s, "i40e");
        assert_int_equal(json_get_int(nic, "node", &i), 0);
        assert_int_equal(i, 0);
        assert_int_equal(json_get_int(nic, "rx_queues", &i), 0);
        assert_int_equal(i, 16);
        assert_int_equal(json_count(json_get(nic, "queues")), 16);
        for (int64_t k = 0; k < 16; k++) {
                int64_t rx, tx;
                q = find_by_int(json_get(nic, "queues"), "index", k);
                assert_non_null(q);
                assert_int_equal(json_get_int(q, "rx_irq", &rx), 0);
                assert_int_equal(json_get_int(q, "tx_irq", &tx), 0);
                if (rx != 101 + k || tx != rx)
                        fail_msg("ens1f0 queue %lld: IRQs %lld/%lld, want %lld", (long long) k, (long long) rx,
                                 (long long) tx, (long long) (101 + k));
        }
        q = find_by_int(json_get(nic, "queues"), "index", 3);
        assert_cpus(json_get(q, "rps_cpus"), "4-15,32-47", "ens1f0 rx-3 rps_cpus");
        assert_cpus(json_get(q, "xps_cpus"), "3", "ens1f0 tx-3 xps_cpus");
        irq = find_by_int(json_get(v, "irqs"), "irq", 104);
        assert_non_null(irq);
        assert_int_equal(json_get_string(irq, "nic", &s), 0);
        assert_string_equal(s, "ens1f0");
        assert_int_equal(json_get_int(irq, "queue", &i), 0);
        assert_int_equal(i, 3);
        assert_cpus(json_get(irq, "affinity"), "3", "IRQ 104 affinity");
        assert_cpus(json_get(irq, "effective"), "3", "IRQ 104 effective");

        /* igb: separate rx and tx vectors */
        nic = find_by(nics, "name", "enp4s0");
        q = find_by_int(json_get(nic, "queues"), "index", 1);
        assert_int_equal(json_get_int(q, "rx_irq", &i), 0);
        assert_int_equal(i, 52);
        assert_int_equal(json_get_int(q, "tx_irq", &i), 0);
        assert_int_equal(i, 54);
        assert_int_equal(json_count(json_get(q, "irqs")), 2);

        /* single-vector e1000e with RPS spread */
        nic = find_by(nics, "name", "eno1");
        assert_int_equal(json_get_string(nic, "mapping", &s), 0);
        assert_string_equal(s, "single");
        q = json_index(json_get(nic, "queues"), 0);
        assert_int_equal(json_get_int(q, "rx_irq", &i), 0);
        assert_int_equal(i, 30);
        assert_cpus(json_get(q, "rps_cpus"), "2-31", "eno1 rx-0 rps_cpus");

        /* lo has no IRQs: nulls, not -1 */
        q = json_index(json_get(find_by(nics, "name", "lo"), "queues"), 0);
        assert_int_equal(json_get(q, "rx_irq")->type, JSON_NULL);
        assert_int_equal(json_get(find_by(nics, "name", "lo"), "driver")->type, JSON_NULL);

        /* a non-NIC IRQ has null nic and queue */
        for (size_t k = 0; k < json_count(json_get(v, "irqs")); k++) {
                irq = json_index(json_get(v, "irqs"), k);
                if (json_get(irq, "nic")->type == JSON_NULL && json_get(irq, "queue")->type != JSON_NULL)
                        fail_msg("IRQ without a NIC has a queue");
        }
        assert_int_equal(json_get_int(v, "rps_sock_flow_entries", &i), 0);
        assert_int_equal(i, 32768);
        json_free(v);
        free(out);
        free(err);

        /* the table form of the same */
        const char *args2[] = { "inventory", "--root", root, NULL };
        assert_int_equal(run_ctl(args2, &out, &err), 0);
        static const char *const want[] = { "ens1f0: up, driver i40e", "node 1: CPUs 16-31,48-63",
                                            "4-15,32-47", "QUEUE" };
        for (size_t k = 0; k < ELEMENTSOF(want); k++)
                if (!strstr(out, want[k]))
                        fail_msg("inventory table lacks '%s'", want[k]);
        free(out);
        free(err);
}

/* Every IRQ of host64 with its class, as the configuration and the
 * daemon's status.json (kernel-managed IRQs) make it, in JSON and text. */
static void test_inventory_classes(_unused_ void **state) {
        static const struct {
                const char *what, *conf;
                bool status;                 /* a status.json of this root naming IRQ 9 kernel-managed */
                unsigned irq;
                const char *want_class, *want_device;
        } cases[] = {
                { "defaults: a queue IRQ", "", false, 104, "nic-queue", "ens1f0" },
                { "defaults: the timer is another device's", "", false, 0, "other", "timer" },
                { "defaults: a NIC's admin vector is other, named by its NIC", "", false, 100, "other", "ens1f0" },
                { "ban_irqs", "[balance]\nban_irqs = 0,104\n", false, 104, "banned", "ens1f0" },
                { "manage = no", "[interface ens1f0]\nmanage = no\n", false, 104, "left-alone", "ens1f0" },
                { "other_irqs = no: another device's", "[balance]\nother_irqs = no\n", false, 0, "left-alone",
                  "timer" },
                { "other_irqs = no: queue IRQs still spread", "[balance]\nother_irqs = no\n", false, 104, "nic-queue",
                  "ens1f0" },
                { "kernel-managed from status.json", "", true, 9, "kernel-managed", "acpi" },
                { "kernel-managed before ban_irqs", "[balance]\nban_irqs = 9\n", true, 9, "kernel-managed", "acpi" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char root[512], conf[600], state[600], text[1200], *out, *err, *dir = make_tmpdir();
                const char *args[] = { "inventory", "--json", "--root", root, "--config", conf, NULL };
                const char *targs[] = { "inventory", "--root", root, "--config", conf, NULL };
                const struct json_value *irq;
                struct json_value *v = NULL;
                const char *s;
                char row[64];

                fixture_path("host64", root, sizeof(root));
                snprintf(state, sizeof(state), "%s/state", dir);
                assert_int_equal(mkdir(state, 0700), 0);
                snprintf(text, sizeof(text), "[daemon]\nstate_dir = %s\n%s", state, cases[i].conf);
                test_write_file(dir, "irqsteer.conf", text);
                snprintf(conf, sizeof(conf), "%s/irqsteer.conf", dir);
                if (cases[i].status) {
                        snprintf(text, sizeof(text), "{\"version\":1,\"pid\":1,\"status\":\"x\",\"root\":\"%s\","
                                 "\"kernel_managed_irqs\":[9]}", root);
                        test_write_file(state, "status.json", text);
                }
                if (run_ctl(args, &out, &err) != 0)
                        fail_msg("%s: exit status not 0 (stderr %s)", cases[i].what, err);
                if (json_parse(out, strlen(out), &v) < 0)
                        fail_msg("%s: not JSON", cases[i].what);
                irq = find_by_int(json_get(v, "irqs"), "irq", cases[i].irq);
                assert_non_null(irq);
                if (json_get_string(irq, "class", &s) < 0 || strcmp(s, cases[i].want_class) != 0)
                        fail_msg("%s: IRQ %u class '%s', want '%s'", cases[i].what, cases[i].irq,
                                 json_get_string(irq, "class", &s) < 0 ? "(none)" : s, cases[i].want_class);
                if (json_get_string(irq, "device", &s) < 0 || strcmp(s, cases[i].want_device) != 0)
                        fail_msg("%s: IRQ %u device wrong", cases[i].what, cases[i].irq);
                json_free(v);
                free(out);
                free(err);

                /* the table: the IRQ's row and the class counts */
                if (run_ctl(targs, &out, &err) != 0)
                        fail_msg("%s: table: exit status not 0", cases[i].what);
                snprintf(row, sizeof(row), "\n  %-6u %-15s ", cases[i].irq, cases[i].want_class);
                if (!strstr(out, row) || !strstr(out, "\nIRQ classes\n  kernel-managed "))
                        fail_msg("%s: table lacks '%s' or the class counts:\n%s", cases[i].what, row, out);
                free(out);
                free(err);
                rm_rf(dir);
                free(dir);
        }
}

/* Unknown IRQ names: vm2's ens4 ("acmenet") is mapped in msi_irqs order,
 * which the table must flag on stderr; the JSON says it in "mapping" and
 * keeps stderr for errors. */
static void test_inventory_msi_order_warning(_unused_ void **state) {
        static const struct {
                const char *what, *fixture;
                bool json;
                const char *want_err;    /* NULL: stderr empty */
        } cases[] = {
                { "vm2 table warns about ens4", "vm2", false,
                  "irqsteerctl: warning: ens4: queue of each IRQ not known from its name; queue IRQs guessed from msi_irqs order\n" },
                { "vm2 JSON: no warning, mapping says it", "vm2", true, NULL },
                { "host64 table: all names known, no warning", "host64", false, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char root[512], *out, *err;
                const char *args[] = { "inventory", "--root", root, cases[i].json ? "--json" : NULL, NULL };

                fixture_path(cases[i].fixture, root, sizeof(root));
                if (run_ctl(args, &out, &err) != 0)
                        fail_msg("%s: exit status not 0 (stderr %s)", cases[i].what, err);
                if (cases[i].want_err ? strcmp(err, cases[i].want_err) != 0 : err[0] != 0)
                        fail_msg("%s: stderr '%s', want '%s'", cases[i].what, err,
                                 cases[i].want_err ? cases[i].want_err : "");
                if (cases[i].json) {
                        struct json_value *v = NULL;
                        const struct json_value *nics;
                        bool seen = false;

                        if (json_parse(out, strlen(out), &v) < 0)
                                fail_msg("%s: not JSON", cases[i].what);
                        nics = json_get(v, "nics");
                        for (size_t k = 0; k < json_count(nics); k++) {
                                const char *name = "", *map = "";

                                json_get_string(json_index(nics, k), "name", &name);
                                json_get_string(json_index(nics, k), "mapping", &map);
                                if (strcmp(name, "ens4") == 0) {
                                        assert_string_equal(map, "msi-order");
                                        seen = true;
                                }
                        }
                        if (!seen)
                                fail_msg("%s: ens4 missing from the JSON", cases[i].what);
                        json_free(v);
                } else if (strcmp(cases[i].fixture, "vm2") == 0 && !strstr(out, "ens4: up, driver acmenet"))
                        fail_msg("%s: table lacks ens4: %s", cases[i].what, out);
                free(out);
                free(err);
        }
}

static void test_top_live(_unused_ void **state) {
        const char *args[] = { "top", "--json", "--count", "2", "--interval", "0.2", NULL };
        char *out, *err, *line, *save = NULL;
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        int lines = 0;

        assert_int_equal(run_ctl(args, &out, &err), 0);
        for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct json_value *v = NULL;
                const struct json_value *cpus;
                double d;

                if (json_parse(line, strlen(line), &v) < 0)
                        fail_msg("top line is not JSON: %s", line);
                assert_int_equal(json_get_number(v, "interval", &d), 0);
                assert_true(d > 0.15 && d < 2.0);
                cpus = json_get(v, "cpus");
                assert_int_equal((long) json_count(cpus), online);
                for (size_t k = 0; k < json_count(cpus); k++) {
                        const struct json_value *c = json_index(cpus, k);
                        double sum = 0;
                        static const char *const keys[] = { "usr", "sys", "irq", "soft", "idle" };

                        for (size_t j = 0; j < ELEMENTSOF(keys); j++) {
                                if (json_get_number(c, keys[j], &d) < 0)
                                        continue; /* null: counters reset in that interval */
                                if (d < 0 || d > 100)
                                        fail_msg("%s = %f out of 0..100", keys[j], d);
                                sum += d;
                        }
                        assert_true(sum <= 100.5);
                        assert_int_equal(json_get(c, "queues")->type, JSON_ARRAY);
                }
                json_free(v);
                lines++;
        }
        assert_int_equal(lines, 2);
        free(out);
        free(err);
}

/* Ctrl-C ends an endless top cleanly: exit 0, whole lines only. */
static void test_top_sigint(_unused_ void **state) {
        const char *bin = getenv("IRQSTEERCTL");
        char path[] = "/tmp/test-ctl-sig.XXXXXX";
        int fd = mkstemp(path), status;
        struct timespec ts = { 0, 700 * 1000 * 1000 };
        char *out, *line, *save = NULL;
        int lines = 0;
        pid_t pid;

        assert_true(fd >= 0);
        unlink(path);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                dup2(fd, 1);
                execl(bin ? bin : "./irqsteerctl", "irqsteerctl", "top", "--json", "--count", "0", "--interval",
                      "0.1", (char *) NULL);
                _exit(127);
        }
        nanosleep(&ts, NULL);
        assert_int_equal(kill(pid, SIGINT), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        out = read_fd_all(fd);
        close(fd);
        assert_true(strlen(out) > 0 && out[strlen(out) - 1] == '\n');
        for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct json_value *v = NULL;
                if (json_parse(line, strlen(line), &v) < 0)
                        fail_msg("partial line after SIGINT: %s", line);
                json_free(v);
                lines++;
        }
        assert_true(lines >= 1);
        free(out);
}

static void test_status_cli(_unused_ void **state) {
        char *dir = make_tmpdir(), doc[4096], *out, *err;
        struct json_value *v = NULL;
        const char *args[] = { "status", "--state-dir", dir, NULL };
        const char *args_json[] = { "status", "--state-dir", dir, "--json", NULL };
        pid_t child, daemon_pid;
        int64_t i;

        /* no file: no daemon, exit 3; with --json an error object on stdout */
        assert_int_equal(run_ctl(args, &out, &err), 3);
        assert_non_null(strstr(err, "not running"));
        free(out);
        free(err);
        assert_int_equal(run_ctl(args_json, &out, &err), 3);
        assert_int_equal(json_parse(out, strlen(out), &v), 0);
        assert_int_equal(json_get_int(v, "exit_status", &i), 0);
        assert_int_equal(i, 3);
        {
                const char *code, *msg;

                assert_int_equal(json_get_string(v, "error", &code), 0);
                assert_string_equal(code, "not-running");
                assert_int_equal(json_get_string(v, "message", &msg), 0);
                assert_non_null(strstr(msg, "not running"));
        }
        json_free(v);
        v = NULL;
        free(out);
        free(err);

        /* a live process named irqsteerd */
        daemon_pid = fork();
        assert_true(daemon_pid >= 0);
        if (daemon_pid == 0) {
                prctl(PR_SET_NAME, "irqsteerd");
                pause();
                _exit(0);
        }
        for (int tries = 0; tries < 200; tries++) { /* until the rename shows */
                char p[64], comm[32] = "";
                FILE *cf;
                snprintf(p, sizeof(p), "/proc/%d/comm", (int) daemon_pid);
                if ((cf = fopen(p, "re"))) {
                        if (!fgets(comm, sizeof(comm), cf))
                                comm[0] = 0;
                        fclose(cf);
                }
                if (strcmp(comm, "irqsteerd\n") == 0)
                        break;
                usleep(10000);
        }
        snprintf(doc, sizeof(doc), STATUS_OK, (int) daemon_pid);
        test_write_file(dir, "status.json", doc);
        assert_int_equal(run_ctl(args, &out, &err), 0);
        assert_non_null(strstr(out, "Status: watching 2 NICs"));
        free(out);
        free(err);
        assert_int_equal(run_ctl(args_json, &out, &err), 0);
        assert_int_equal(json_parse(out, strlen(out), &v), 0);
        assert_int_equal(json_get_int(v, "pid", &i), 0);
        assert_int_equal(i, daemon_pid);
        json_free(v);
        free(out);
        free(err);
        /* a reason quoting a name from outside (a comm with an escape
         * sequence and a newline): shown escaped, never raw */
        {
                const char *args_full[] = { "status", "--state-dir", dir, "--full", NULL };
                char *at, tail[4096];

                snprintf(doc, sizeof(doc), STATUS_OK, (int) daemon_pid);
                at = strstr(doc, "\"reason\":\"CPU0 hot\"");
                assert_non_null(at);
                snprintf(tail, sizeof(tail), "%s", at + strlen("\"reason\":\"CPU0 hot\""));
                snprintf(at, sizeof(doc) - (size_t) (at - doc), "\"reason\":\"\\u001b[2J\\u0007x hot\"%s", tail);
                test_write_file(dir, "status.json", doc);
                assert_int_equal(run_ctl(args_full, &out, &err), 0);
                if (strchr(out, 0x1b) || !strstr(out, "reason: \\x1b[2J\\x07x hot"))
                        fail_msg("status --full shows a name raw:\n%s", out);
                free(out);
                free(err);
        }
        kill(daemon_pid, SIGKILL);
        assert_int_equal(waitpid(daemon_pid, NULL, 0), daemon_pid);

        /* a live pid that is not irqsteerd (ours): the daemon's pid was reused */
        snprintf(doc, sizeof(doc), STATUS_OK, (int) getpid());
        test_write_file(dir, "status.json", doc);
        assert_int_equal(run_ctl(args, &out, &err), 3);
        assert_non_null(strstr(err, "is not running"));
        free(out);
        free(err);

        /* a pid that has exited: stale file */
        child = fork();
        assert_true(child >= 0);
        if (child == 0)
                _exit(0);
        assert_int_equal(waitpid(child, NULL, 0), child);
        snprintf(doc, sizeof(doc), STATUS_OK, (int) child);
        test_write_file(dir, "status.json", doc);
        assert_int_equal(run_ctl(args, &out, &err), 3);
        assert_non_null(strstr(err, "is not running"));
        free(out);
        free(err);

        /* garbage and schema violations */
        test_write_file(dir, "status.json", "{\"version\":1,\"pid\":");
        assert_int_equal(run_ctl(args_json, &out, &err), 4);
        assert_non_null(strstr(err, "not valid JSON"));
        assert_int_equal(json_parse(out, strlen(out), &v), 0);
        assert_int_equal(json_get_int(v, "exit_status", &i), 0);
        assert_int_equal(i, 4);
        json_free(v);
        v = NULL;
        free(out);
        free(err);
        test_write_file(dir, "status.json", "{\"version\":7,\"pid\":1,\"status\":\"\"}");
        assert_int_equal(run_ctl(args, &out, &err), 4);
        assert_non_null(strstr(err, "schema"));
        free(out);
        free(err);

        rm_rf(dir);
        free(dir);
}

/* restore against a tiny fixture root: one IRQ that a previous run moved. */
static void test_restore_cli(_unused_ void **state) {
        char *root = make_tmpdir(), *sdir = make_tmpdir(), path[512], *out, *err;
        const char *args[] = { "restore", "--root", root, "--state-dir", sdir, NULL };
        char buf[64] = "";
        FILE *f;

        /* nothing saved */
        assert_int_equal(run_ctl(args, &out, &err), 0);
        assert_non_null(strstr(out, "Nothing to restore"));
        free(out);
        free(err);

        snprintf(path, sizeof(path), "mkdir -p '%s/proc/irq/77'", root);
        assert_int_equal(system(path), 0);
        snprintf(path, sizeof(path), "%s/proc/irq/77", root);
        test_write_file(path, "smp_affinity_list", "5\n");
        test_write_file(path, "smp_affinity", "00000020\n");
        /* written by an older irqsteer: no root line, so not restored */
        test_write_file(sdir, "undo.journal", "# irqsteer undo journal v1\nirq 77 0-3 5 -\n");
        assert_int_equal(run_ctl(args, &out, &err), 1);
        assert_non_null(strstr(err, "does not say which root"));
        free(out);
        free(err);
        snprintf(path, sizeof(path), "%s/proc/irq/77/smp_affinity_list", root);
        f = fopen(path, "r");
        assert_non_null(f);
        assert_non_null(fgets(buf, sizeof(buf), f));
        fclose(f);
        assert_string_equal(util_strstrip(buf), "5");

        /* written for another root: refused, left in place */
        {
                char *text = NULL;
                struct stat st;

                assert_int_equal(stat(root, &st), 0);
                assert_true(asprintf(&text, "# irqsteer undo journal v2\nroot %llu %llu -\nirq 77 - 0-3 5 -\n",
                                     (unsigned long long) st.st_dev, (unsigned long long) st.st_ino + 1) > 0);
                test_write_file(sdir, "undo.journal", text);
                assert_int_equal(run_ctl(args, &out, &err), 1);
                assert_non_null(strstr(err, "written for another root"));
                free(out);
                free(err);
                snprintf(path, sizeof(path), "%s/undo.journal", sdir);
                assert_int_equal(access(path, F_OK), 0);
                free(text);
                assert_true(asprintf(&text, "# irqsteer undo journal v2\nroot %llu %llu -\nirq 77 - 0-3 5 -\n",
                                     (unsigned long long) st.st_dev, (unsigned long long) st.st_ino) > 0);
                test_write_file(sdir, "undo.journal", text);
                free(text);
        }
        assert_int_equal(run_ctl(args, &out, &err), 0);
        assert_non_null(strstr(out, "irq 77"));
        assert_non_null(strstr(out, "Restored 1"));
        free(out);
        free(err);
        snprintf(path, sizeof(path), "%s/proc/irq/77/smp_affinity_list", root);
        f = fopen(path, "r");
        assert_non_null(f);
        assert_non_null(fgets(buf, sizeof(buf), f));
        fclose(f);
        assert_string_equal(util_strstrip(buf), "0-3");
        /* the journal is gone once everything is back */
        snprintf(path, sizeof(path), "%s/undo.journal", sdir);
        assert_int_equal(access(path, F_OK), -1);

        rm_rf(root);
        rm_rf(sdir);
        free(root);
        free(sdir);
}

static void test_plan_live(_unused_ void **state) {
        char *dir = make_tmpdir(), cfg[512], *out, *err;
        struct json_value *v = NULL;
        const struct json_value *actions;

        /* dry-run config so the plan reflects what a dry run would log */
        snprintf(cfg, sizeof(cfg), "%s/irqsteer.conf", dir);
        test_write_file(dir, "irqsteer.conf", "[daemon]\ndry_run = yes\n");
        const char *args[] = { "plan", "--config", cfg, "--interval", "0.2", "--json", NULL };
        assert_int_equal(run_ctl(args, &out, &err), 0);
        if (json_parse(out, strlen(out), &v) < 0)
                fail_msg("plan --json is not JSON: %s (stderr %s)", out, err);
        actions = json_get(v, "actions");
        assert_int_equal(actions ? actions->type : -1, JSON_ARRAY);
        if (json_count(actions) == 0) {
                /* nothing to check: say so instead of passing (tests/daemon-notify.py
                 * checks a plan with actions on a fixture tree) */
                json_free(v);
                free(out);
                free(err);
                rm_rf(dir);
                free(dir);
                print_message("this host's plan is empty: no action to check\n");
                skip();
        }
        for (size_t k = 0; k < json_count(actions); k++) {
                const char *s;
                assert_int_equal(json_get_string(json_index(actions, k), "type", &s), 0);
                assert_int_equal(json_get_string(json_index(actions, k), "text", &s), 0);
                assert_true(strlen(s) > 0);
        }
        json_free(v);
        free(out);
        free(err);
        rm_rf(dir);
        free(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cpu_queues),
                cmocka_unit_test(test_top_json),
                cmocka_unit_test(test_top_table_fits),
                cmocka_unit_test(test_inventory_json_formatter),
                cmocka_unit_test(test_parse_interval),
                cmocka_unit_test(test_status_validate),
                cmocka_unit_test(test_status_print),
                cmocka_unit_test(test_cli_usage),
                cmocka_unit_test(test_inventory_host64),
                cmocka_unit_test(test_inventory_escaped),
                cmocka_unit_test(test_inventory_classes),
                cmocka_unit_test(test_inventory_msi_order_warning),
                cmocka_unit_test(test_top_live),
                cmocka_unit_test(test_top_sigint),
                cmocka_unit_test(test_status_cli),
                cmocka_unit_test(test_restore_cli),
                cmocka_unit_test(test_plan_live),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
