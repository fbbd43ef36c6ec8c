/* The policy as a pure function: synthetic hosts built in memory
 * (tests/policy-fixtures.h), exact actions asserted. */
#include <math.h>
#include <syslog.h>

#include "engine.h"
#include "policy-fixtures.h"
#include "testlib.h"
#include "../src/policy-model.h"

/* Compares the tick's actions with want (fx_fmt form), printing reasons. */
static void expect_actions(const char *what, const struct action_list *l, const char *want) {
        char got[4096];

        fx_fmt(l, got, sizeof(got));
        if (strcmp(got, want) != 0) {
                for (size_t i = 0; i < l->n; i++) {
                        char line[1024];
                        action_format(&l->v[i], line, sizeof(line));
                        print_message("    %s\n", line);
                }
                fail_msg("%s: actions '%s', want '%s'", what, got, want);
        }
}

static unsigned count_notes(const struct policy_report *r, const char *needle) {
        unsigned n = 0;
        for (size_t i = 0; i < r->n_notes; i++)
                if (strstr(r->notes[i].text, needle))
                        n++;
        return n;
}

/* The note whose text holds needle, or NULL. */
static const struct policy_note *find_note(const struct policy_report *r, const char *needle) {
        for (size_t i = 0; i < r->n_notes; i++)
                if (strstr(r->notes[i].text, needle))
                        return &r->notes[i];
        return NULL;
}

static unsigned count_type(const struct action_list *l, enum knob_kind t) {
        unsigned n = 0;
        for (size_t i = 0; i < l->n; i++)
                n += l->v[i].type == t;
        return n;
}

struct nic_spec {
        const char *name;
        int node, nq;
        bool combined;
        unsigned first_irq;
        bool rps, xps;
};

/* ---- initial layout ---- */

static void test_initial_layout(void **state) {
        static const struct {
                const char *what;
                int n_cpus, nodes;
                enum fx_smt smt;
                struct nic_spec nics[2];
                int pre_irq, pre_cpu;    /* an IRQ already placed, 0 = none */
                bool single_queue_rps, xps;
                const char *want;
        } cases[] = {
                { "rx/tx together, cores before SMT siblings", 8, 1, FX_SMT_SPLIT,
                  { { "eth0", 0, 6, false, 100, false, false } }, 0, 0, true, false,
                  "irq 100>0;irq 106>0;irq 101>1;irq 107>1;irq 102>2;irq 108>2;irq 103>3;irq 109>3;"
                  "irq 104>4;irq 110>4;irq 105>5;irq 111>5;" },
                { "interleaved sibling numbering: even CPUs first", 8, 1, FX_SMT_INTERLEAVED,
                  { { "eth0", 0, 6, true, 40, false, false } }, 0, 0, true, false,
                  "irq 40>0;irq 41>2;irq 42>4;irq 43>6;irq 44>1;irq 45>3;" },
                { "two NICs offset, not stacked", 4, 1, FX_SMT_NONE,
                  { { "eth0", 0, 2, true, 30, false, false }, { "eth1", 0, 2, true, 40, false, false } }, 0, 0,
                  true, false, "irq 30>0;irq 31>1;irq 40>2;irq 41>3;" },
                { "more queues than CPUs wrap around", 2, 1, FX_SMT_NONE,
                  { { "eth0", 0, 3, true, 50, false, false } }, 0, 0, true, false, "irq 50>0;irq 51>1;irq 52>0;" },
                { "IRQ already on its CPU: no no-op action", 4, 1, FX_SMT_NONE,
                  { { "eth0", 0, 2, true, 30, false, false } }, 30, 0, true, false, "irq 31>1;" },
                { "NUMA-local CPUs only", 8, 2, FX_SMT_NONE,
                  { { "eth0", 1, 2, true, 30, false, false } }, 0, 0, true, false, "irq 30>4;irq 31>5;" },
                { "single-queue NIC: RPS from the start, no RFS by default", 4, 1, FX_SMT_NONE,
                  { { "eth0", 0, 1, true, 60, true, false } }, 0, 0, true, false, "irq 60>0;rps eth0/0>0-3;" },
                { "single-queue NIC, single_queue_rps=no", 4, 1, FX_SMT_NONE,
                  { { "eth0", 0, 1, true, 60, true, false } }, 0, 0, false, false, "irq 60>0;" },
                { "XPS follows each queue's IRQ", 4, 1, FX_SMT_NONE,
                  { { "eth0", 0, 2, false, 30, false, true } }, 0, 0, true, true,
                  "irq 30>0;irq 32>0;irq 31>1;irq 33>1;xps eth0/0>0;xps eth0/1>1;" },
                { "XPS off in the config", 4, 1, FX_SMT_NONE,
                  { { "eth0", 0, 2, false, 30, false, true } }, 0, 0, true, false,
                  "irq 30>0;irq 32>0;irq 31>1;irq 33>1;" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, cases[i].n_cpus, cases[i].nodes, cases[i].smt);
                f.cfg.single_queue_rps = cases[i].single_queue_rps;
                f.cfg.xps = cases[i].xps;
                for (int k = 0; k < 2 && cases[i].nics[k].name; k++) {
                        const struct nic_spec *ns = &cases[i].nics[k];
                        fx_add_nic(&f, ns->name, ns->node, ns->nq, ns->combined, ns->first_irq, ns->rps, ns->xps);
                }
                if (cases[i].pre_irq)
                        fx_place(&f, cases[i].pre_irq, cases[i].pre_cpu);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                for (size_t k = 0; k < f.l.n; k++)
                        if (f.l.v[k].type == KNOB_IRQ && cpuset_count(KEPT(&f.l.v[k].cpus)) != 1)
                                fail_msg("%s: IRQ %u got %d CPUs", cases[i].what, f.l.v[k].irq,
                                         cpuset_count(KEPT(&f.l.v[k].cpus)));
                /* applied and confirmed: the next tick has nothing to do */
                assert_int_equal(fx_step(&f, 2 * SEC), 0);
                expect_actions(cases[i].what, &f.l, "");
                assert_int_equal(f.rep.n_notes, 0);

                fx_free(&f);
        }
}

/* The first placement by the current load: a CPU already busy without
 * the NIC's own queues (other IRQs' softirq, or user work leaving it
 * under saturated_idle idle) gets a queue only when no other CPU is
 * left; the queues' own load where they fire now does not count. */
static void test_layout_by_load(void **state) {
        static const struct {
                const char *what;
                double base[8];          /* irq+softirq not from the NIC */
                double user[8];
                double queue_work;       /* each queue's, all on CPU0 before the layout */
                int nq;
                bool sample;             /* a load sample before the first tick */
                const char *want;
        } cases[] = {
                { "no sample yet: in order", { 0.9, 0.9 }, { 0 }, 0.2, 4, false,
                  "irq 30>0;irq 31>1;irq 32>2;irq 33>3;" },
                { "softirq-hot CPUs 1-2 skipped", { 0, 0.9, 0.9 }, { 0 }, 0.2, 4, true,
                  "irq 30>0;irq 31>3;irq 32>4;irq 33>5;" },
                { "CPU3 saturated by user work skipped", { 0 }, { 0, 0, 0, 0.97 }, 0.2, 4, true,
                  "irq 30>0;irq 31>1;irq 32>2;irq 33>4;" },
                { "the queues' own load on CPU0 does not make it busy", { 0 }, { 0 }, 0.3, 4, true,
                  "irq 30>0;irq 31>1;irq 32>2;irq 33>3;" },
                { "more queues than free CPUs: wrap over the free ones", { 0, 0.9, 0.9, 0.9, 0.9, 0.9 }, { 0 }, 0.05,
                  4, true, "irq 30>0;irq 31>6;irq 32>7;irq 33>0;" },
                { "every CPU busy: in order after all", { 0 }, { 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97 }, 0.01, 4,
                  true, "irq 30>0;irq 31>1;irq 32>2;irq 33>3;" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", 0, cases[i].nq, true, 30, false, false);
                for (int q = 0; q < cases[i].nq; q++)
                        f.q[0][q] = (struct fx_queue_model){ cases[i].queue_work, 1000 };
                for (int c = 0; c < 8; c++) {
                        f.base[c] = cases[i].base[c];
                        f.user[c] = cases[i].user[c];
                }
                if (cases[i].sample)
                        fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                fx_free(&f);
        }
}

/* The busiest CPU's irq+softirq share in the last model run. */
static double fx_peak(const struct fx *f) {
        double p = 0;
        for (int c = 0; c < f->n_cpus; c++)
                p = MAX(p, f->load.cpus[c].softirq + f->load.cpus[c].irq);
        return p;
}

/* ticks ticks of the policy, one a second, each CPU's load scaled by a
 * noise drawn from [lo, lo + span) */
static void fx_run_noisy(struct fx *f, int ticks, uint64_t *seed, double lo, double span) {
        double noise[FX_MAX_CPUS];

        for (int k = 1; k <= ticks; k++) {
                for (int c = 0; c < f->n_cpus; c++)
                        noise[c] = lo + span * fx_rand(seed);
                fx_model(f, noise);
                assert_int_equal(fx_step(f, (uint64_t) k * SEC), 0);
        }
}

/* The busiest CPU's share over 20 model runs without noise, the policy
 * not ticking: where the placement settled. */
static double fx_settled_peak(struct fx *f) {
        double peak = 0;

        for (int k = 0; k < 20; k++) {
                fx_model(f, NULL);
                peak += fx_peak(f) / 20;
        }
        return peak;
}

/* eth0's nq queues of work each (interrupts/s rate), keep of each on its
 * IRQ CPU and cost more for the rest steered; their total work. */
static double fx_even_queues(struct fx *f, int nq, double work, double rate, double keep, double cost) {
        double total = 0;

        f->napi_share = keep;
        f->rps_cost = cost;
        for (int k = 0; k < nq; k++) {
                f->q[0][k] = (struct fx_queue_model){ work, rate };
                total += work * (1 + cost * (1 - keep));
        }
        return total;
}

/* Fails when the settled peak is more than times the lower bound. */
static void assert_near_bound(uint64_t seed0, double peak, double lb, double times) {
        print_message("    seed %llu: peak %.4f, lower bound %.4f (%.2f)\n", (unsigned long long) seed0, peak, lb,
                      peak / lb);
        if (peak > times * lb)
                fail_msg("seed %llu: peak %.4f is %.2f times the lower bound %.4f", (unsigned long long) seed0, peak,
                         peak / lb, lb);
}

/* With a load sample the queues are laid out by load, heaviest first
 * (their weights from the interrupt rates), each where it leaves the
 * least load; a layout made before any sample is looked at again with the
 * first one, once. */
static void test_layout_lpt(void **state) {
        static const double works[6] = { 0.6, 0.6, 0.2, 0.2, 0.1, 0.1 };
        static const struct {
                const char *what;
                bool blind;              /* the first tick before any sample */
        } cases[] = {
                { "sample at the first tick: by load at once", false },
                { "blind first tick: by load with the first sample", true },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                double peak = 0;

                fx_init(&f, 3, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", 0, 6, true, 30, false, false);
                for (int q = 0; q < 6; q++)
                        f.q[0][q] = (struct fx_queue_model){ works[q], 10000 * works[q], 0 };
                if (!cases[i].blind)
                        fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                if (cases[i].blind) {
                        /* in order: queues 0 and 3 on CPU0 (80%), 1 and 4 on
                         * CPU1, 2 and 5 on CPU2 */
                        expect_actions("blind", &f.l, "irq 30>0;irq 31>1;irq 32>2;irq 33>0;irq 34>1;irq 35>2;");
                        fx_model(&f, NULL);
                        assert_int_equal(fx_step(&f, 2 * SEC), 0);
                        assert_true(count_type(&f.l, KNOB_IRQ) > 0);
                        for (size_t k = 0; k < f.l.n; k++)
                                assert_true(f.l.v[k].type != KNOB_IRQ || f.l.v[k].layout);
                }
                fx_model(&f, NULL);
                peak = fx_peak(&f);
                print_message("    %s: peak %.2f\n", cases[i].what, peak);
                /* 0.6 | 0.6 | 0.2+0.2+0.1+0.1: what the order's 0.8 misses */
                if (peak > 0.61)
                        fail_msg("%s: busiest CPU at %.2f, want 0.6", cases[i].what, peak);
                /* once: the next ticks leave the layout alone */
                for (unsigned k = 3; k <= 6; k++) {
                        fx_model(&f, NULL);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        assert_int_equal(count_type(&f.l, KNOB_IRQ), 0);
                }
                fx_free(&f);
        }

        /* equal queues on physical cores: the first sample's noise does
         * not send them to the idle SMT siblings */
        for (uint64_t seed = 1; seed <= 20; seed++) {
                struct fx f;
                double noise[8];

                fx_init(&f, 8, 1, FX_SMT_SPLIT);
                fx_shipped_defaults(&f.cfg);
                fx_add_nic(&f, "eth0", 0, 4, true, 30, false, false);
                for (int q = 0; q < 4; q++)
                        f.q[0][q] = (struct fx_queue_model){ 0.3, 3000 * (0.9 + 0.2 * fx_rand(&seed)), 0 };
                /* timers and the like: a little softirq everywhere */
                for (int c = 0; c < 8; c++)
                        f.base[c] = 0.01 * fx_rand(&seed);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                expect_actions("SMT: in order", &f.l, "irq 30>0;irq 31>1;irq 32>2;irq 33>3;");
                for (int c = 0; c < 8; c++)
                        noise[c] = 0.9 + 0.2 * fx_rand(&seed);
                fx_model(&f, noise);
                assert_int_equal(fx_step(&f, 2 * SEC), 0);
                expect_actions("SMT: noise is no reason", &f.l, "");
                fx_free(&f);
        }
}

/* ---- the receive model over a range of hosts ---- */

/* The share of a lone hot queue's receive work that stays on its IRQ CPU
 * under RPS is measured, whatever it is (20-80%, with or without a cost of
 * RPS on the IRQ CPU): the queue's estimate ends near the true share (RPS's
 * cost on the IRQ CPU counted in), the queues RPS never touched keep the
 * prior, and the NIC's estimate is noted once. */
static void test_share_measured(void **state) {
        static const struct {
                double share, cost;
        } cases[] = {
                { 0.2, 0 }, { 0.3, 0.1 }, { 0.5, 0 }, { 0.65, 0.1 }, { 0.8, 0 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 7 + i;
                double noise[8], s = cases[i].share, c = cases[i].cost;
                /* what stays of the work the IRQ CPU and RPS CPUs carry */
                double want = (s + c * (1 - s)) / (1 + c * (1 - s));
                const struct pol_queue *q;
                const struct pol_nic *n = NULL;
                unsigned notes = 0;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                f.napi_share = s;
                f.rps_cost = c;
                fx_add_nic(&f, "eth0", 0, 4, true, 30, true, false);
                for (int k = 0; k < 4; k++)
                        fx_place(&f, 30 + (unsigned) k, k);
                f.q[0][0] = (struct fx_queue_model){ 0.95, 20000, 0 };
                for (int k = 1; k < 4; k++)
                        f.q[0][k] = (struct fx_queue_model){ 0.10, 1000, 0 };
                for (int k = 1; k <= 200; k++) {
                        for (int cpu = 0; cpu < 8; cpu++)
                                noise[cpu] = 0.98 + 0.04 * fx_rand(&seed);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                        for (size_t m = 0; m < f.rep.n_notes; m++)
                                notes += strstr(f.rep.notes[m].text, "stays on the IRQ CPU under RPS") != NULL;
                }
                q = pol_queue_get(f.st, "eth0", 0, false);
                for (size_t m = 0; m < f.st->n_nics; m++)
                        if (strcmp(f.st->nics[m].name, "eth0") == 0)
                                n = &f.st->nics[m];
                assert_non_null(q);
                assert_non_null(n);
                print_message("    share %.2f cost %.2f: queue %.3f (%u), NIC %.3f (%u), want %.3f\n", s, c, q->keep,
                              q->keep_n, n->keep, n->keep_n, want);
                if (q->keep_n < 10 || fabs(q->keep - want) > 0.05)
                        fail_msg("share %.2f cost %.2f: queue estimate %.3f from %u samples, want %.3f", s, c, q->keep,
                                 q->keep_n, want);
                if (n->keep_n < 10 || fabs(n->keep - want) > 0.05)
                        fail_msg("share %.2f cost %.2f: NIC estimate %.3f, want %.3f", s, c, n->keep, want);
                for (int k = 1; k < 4; k++) {
                        const struct pol_queue *o = pol_queue_get(f.st, "eth0", k, false);
                        assert_true(!o || o->keep_n == 0);
                }
                assert_true(notes >= 1 && notes <= 2);
                fx_free(&f);
        }
}

/* Properties over interrupt/NAPI shares 0.2-0.8 with +-0.1 between
 * queues, heavy user load beside, noise: the busiest CPU ends no busier
 * than a static one-queue-a-CPU spread and near the lower bound (what no
 * placement can beat: the heaviest queue's part that stays on its IRQ
 * CPU, or the mean); the last half of the run has no action (no
 * flapping), and no IRQ goes back to a CPU it left. */
static void test_share_properties(void **state) {
        static const double shares[] = { 0.2, 0.35, 0.5, 0.65, 0.8 };
        static const double works[8] = { 1.0, 0.7, 0.3, 0.3, 0.25, 0.25, 0.2, 0.2 };
        const int n_cpus = 12, nq = 8, ticks = 400;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(shares); i++) {
                struct fx f;
                uint64_t seed = 99 + i;
                double noise[12], qs[8], lb = 0, total = 0, static_peak = 0, peak = 0;
                unsigned late = 0, bounces = 0;
                int prev[8], left[8];

                fx_init(&f, n_cpus, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                fx_add_nic(&f, "eth0", 0, nq, true, 30, true, false);
                for (int k = 0; k < nq; k++) {
                        qs[k] = MIN(MAX(shares[i] + 0.2 * (fx_rand(&seed) - 0.5), 0.05), 0.95);
                        f.q[0][k] = (struct fx_queue_model){ works[k], 2000 + 10000 * works[k], qs[k] };
                        static_peak = MAX(static_peak, works[k]);
                        lb = MAX(lb, qs[k] * works[k]);
                        total += works[k];
                        prev[k] = -1;
                        left[k] = -1;
                }
                lb = MAX(lb, total / n_cpus);
                for (int c = 0; c < n_cpus; c++)
                        f.user[c] = 0.35 + 0.1 * fx_rand(&seed);
                for (int k = 1; k <= ticks; k++) {
                        for (int c = 0; c < n_cpus; c++)
                                noise[c] = 0.95 + 0.1 * fx_rand(&seed);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                        if (k > ticks / 2)
                                late += (unsigned) f.l.n;
                        for (int q = 0; q < nq; q++) {
                                int cpu = fx_irq_cpu(&f, 30 + q);
                                if (prev[q] >= 0 && cpu != prev[q]) {
                                        bounces += cpu == left[q];
                                        left[q] = prev[q];
                                }
                                prev[q] = cpu;
                        }
                }
                peak = fx_settled_peak(&f);
                print_message("    share %.2f: peak %.3f, static %.3f, lower bound %.3f, late actions %u, bounces %u\n",
                              shares[i], peak, static_peak, lb, late, bounces);
                if (peak > static_peak + 0.02)
                        fail_msg("share %.2f: peak %.3f worse than a static spread's %.3f", shares[i], peak,
                                 static_peak);
                if (peak > 1.15 * lb + 0.05)
                        fail_msg("share %.2f: peak %.3f, lower bound %.3f", shares[i], peak, lb);
                assert_int_equal(late, 0);
                assert_int_equal(bounces, 0);
                fx_free(&f);
        }
}

/* ---- random hosts ---- */

/* A host drawn from seed, like bench/randhost.py's family within the
 * fixture's limits: 2-64 CPUs, 1-2 nodes, SMT or not, 1-3 NICs of 1 queue
 * to twice the CPUs (at most FX_MAX_QUEUES), combined or split vectors,
 * uniform or Zipf queue loads (a queue may be heavier than a CPU), an
 * interrupt/NAPI share of 0.2-0.8 per queue, user load 0-60% per CPU,
 * runtime bans and an isolated CPU now and then. */
static void random_host(struct fx *f, uint64_t seed0, cpuset_t *ret_eligible) {
        static const int cpus[] = { 2, 3, 4, 4, 6, 8, 8, 12, 16, 16, 24, 32, 48, 64 };
        uint64_t seed = seed0 * 0x9e3779b97f4a7c15ULL + 1;
        int n = cpus[(size_t) (fx_rand(&seed) * ELEMENTSOF(cpus))];
        int nodes = n >= 8 && fx_rand(&seed) < 0.4 ? 2 : 1;
        enum fx_smt smt = n >= 4 && fx_rand(&seed) < 0.6 ? (fx_rand(&seed) < 0.5 ? FX_SMT_SPLIT : FX_SMT_INTERLEAVED)
                                                          : FX_SMT_NONE;
        int n_nics = 1 + (fx_rand(&seed) < 0.4) + (fx_rand(&seed) < 0.2);
        double user = 0.6 * fx_rand(&seed) * fx_rand(&seed);

        fx_init(f, n, nodes, smt);
        fx_shipped_defaults(&f->cfg);
        f->rps_cost = 0.1 * fx_rand(&seed);
        for (int c = 0; c < n; c++) {
                f->user[c] = MIN(MAX(user + 0.2 * (fx_rand(&seed) - 0.5), 0), 0.7);
                f->base[c] = 0.01 * fx_rand(&seed);
        }
        if (n >= 4 && fx_rand(&seed) < 0.2)
                fx_isolate(f, n - 1);
        if (n >= 4 && fx_rand(&seed) < 0.25)
                cpuset_set(&f->bans, (int) (fx_rand(&seed) * (n - 1)));
        for (int k = 0; k < n_nics; k++) {
                static const double qf[] = { 0, 0.25, 0.5, 1, 1, 2 };
                double r = fx_rand(&seed), load, sum = 0, zipf = fx_rand(&seed) < 0.5 ? 0.4 + 1.2 * fx_rand(&seed) : 0;
                double share = 0.2 + 0.6 * fx_rand(&seed), w[FX_MAX_QUEUES];
                int nq = (int) (qf[(size_t) (r * ELEMENTSOF(qf))] * n);
                bool combined = fx_rand(&seed) < 0.6;
                char name[16];

                nq = MIN(MAX(nq, 1 + (int) (3 * fx_rand(&seed))), FX_MAX_QUEUES);
                snprintf(name, sizeof(name), "eth%d", k);
                fx_add_nic(f, name, (int) (fx_rand(&seed) * nodes), nq, combined || nq == 1, 100 + 100 * (unsigned) k,
                           true, fx_rand(&seed) < 0.5);
                /* network work: a share of what user load leaves, over the NICs */
                load = (1 - user) * n * (0.05 + 0.4 * fx_rand(&seed) * fx_rand(&seed)) / n_nics;
                for (int q = 0; q < nq; q++) {
                        w[q] = zipf > 0 ? pow(q + 1, -zipf) : 1;
                        sum += w[q];
                }
                for (int q = 0; q < nq; q++) {
                        double work = MIN(load * w[q] / sum, 1.6);
                        f->q[k][q] = (struct fx_queue_model){ work, 1000 + 20000 * work,
                                                             MIN(MAX(share + 0.2 * (fx_rand(&seed) - 0.5), 0.1), 0.9),
                                                             combined || nq == 1 ? 0 : 0.15 * work,
                                                             combined || nq == 1 ? 0 : 500 + 3000 * work };
                }
        }
        cpuset_andnot(ret_eligible, &f->topo.online, &f->topo.isolated);
        cpuset_andnot(ret_eligible, ret_eligible, &f->bans);
}

/* What no placement beats in the fixture's model: the eligible CPUs'
 * mean of all the work, or the largest part that cannot be divided (a
 * queue's share on its IRQ CPU with what RPS costs there, a tx vector). */
static double random_host_bound(const struct fx *f, const cpuset_t *elig) {
        double total = 0, item = 0;

        for (size_t k = 0; k < f->inv.n_nics; k++)
                for (size_t q = 0; q < f->inv.nics[k].n_queues; q++) {
                        const struct fx_queue_model *m = &f->q[k][q];
                        total += m->work + m->tx_work;
                        item = MAX(item, MAX(m->tx_work, m->work * (m->share + f->rps_cost * (1 - m->share))));
                }
        return MAX(item, total / MAX(cpuset_count(elig), 1));
}

/* The busiest CPU of the noise-free model with the placement as it is. */
static double fx_peak_now(struct fx *f) {
        fx_model(f, NULL);
        return fx_peak(f);
}

/* The noise of run n: n = 0 is the first draw, each host h from seed h;
 * n > 0 draws other stationary noise on the same hosts. */
static uint64_t random_hosts_noise_seed(uint64_t h, unsigned n) {
        return h + (uint64_t) n * 0x100000001b3ULL;
}

/* One host under noise n; the first property it breaks into why ("" if
 * none), the late actions printed. */
static void random_host_run(uint64_t h, unsigned n, bool calm, char *why, size_t len) {
        const unsigned ticks = 240;
        struct fx f;
        cpuset_t elig;
        uint64_t seed = random_hosts_noise_seed(h, n);
        double noise[FX_MAX_CPUS], laid = -1, end;
        unsigned late = 0, bounces = 0, n_irqs, first_late = 0;
        unsigned irq[2 * 3 * FX_MAX_QUEUES];
        int prev[2 * 3 * FX_MAX_QUEUES], left[2 * 3 * FX_MAX_QUEUES], back[2 * 3 * FX_MAX_QUEUES];
        char what[96], first[1024] = "";

        why[0] = 0;
        random_host(&f, h, &elig);
        n_irqs = 0;
        for (size_t i = 0; i < f.inv.n_irqs && n_irqs < ELEMENTSOF(irq); i++) {
                irq[n_irqs] = f.inv.irqs[i].irq;
                prev[n_irqs] = left[n_irqs] = -1;
                back[n_irqs] = 0;
                n_irqs++;
        }
        snprintf(what, sizeof(what), "host %llu noise %u (%d CPUs, %zu NICs)", (unsigned long long) h, n, f.n_cpus,
                 f.inv.n_nics);
        for (unsigned k = 1; k <= ticks; k++) {
                double before = fx_peak_now(&f);
                bool moves = false, rps = false;

                for (int c = 0; c < f.n_cpus; c++)
                        noise[c] = 0.97 + 0.06 * fx_rand(&seed);
                fx_model(&f, noise);
                if (calm && k > 2 && k % ENGINE_FULL_TICK_EVERY != 0 &&
                    policy_pace(&f.cfg, f.st, &f.rep, NULL) == POLICY_PACE_CALM &&
                    !(f.rep.measuring && k % ENGINE_MEASURE_FULL_EVERY == 0)) {
                        policy_observe(f.st, &f.cfg, &f.load, (uint64_t) k * SEC);
                        action_list_clear(&f.l);
                } else
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        const struct action *x = &f.l.v[a];
                        char line[512];

                        if (x->type != KNOB_IRQ && x->type != KNOB_RPS && x->type != KNOB_XPS)
                                continue;
                        if (!cpuset_subset(KEPT(&x->cpus), &elig) && !why[0]) {
                                action_format(x, line, sizeof(line));
                                snprintf(why, len, "%s: tick %u: onto a CPU not eligible: %s", what, k, line);
                        }
                        moves |= x->type == KNOB_IRQ && !x->layout;
                        rps |= x->type == KNOB_RPS;
                }
                if (k > ticks / 2 && f.l.n > 0) {
                        for (size_t a = 0; a < f.l.n; a++) {
                                char line[1024];
                                action_format(&f.l.v[a], line, sizeof(line));
                                print_message("    %s: tick %u: %s\n", what, k, line);
                                if (!first[0]) {
                                        snprintf(first, sizeof(first), "%s", line);
                                        first_late = k;
                                }
                        }
                        late += (unsigned) f.l.n;
                }
                if (moves && !rps && fx_peak_now(&f) > before + 0.01 && !why[0])
                        snprintf(why, len, "%s: tick %u: a move raised the peak %.3f -> %.3f", what, k, before,
                                 fx_peak(&f));
                if (laid < 0 && k >= 2)
                        laid = fx_peak_now(&f);
                for (unsigned i = 0; i < n_irqs; i++) {
                        int cpu = fx_irq_cpu(&f, (int) irq[i]);
                        if (cpuset_count(KEPT(&fx_irq(&f, irq[i])->affinity)) != 1)
                                continue;
                        if (prev[i] >= 0 && cpu != prev[i]) {
                                /* once can be a new reason (RPS since, a
                                 * tx IRQ apart); twice is flapping */
                                back[i] += cpu == left[i];
                                left[i] = prev[i];
                        }
                        prev[i] = cpu;
                }
        }
        for (unsigned i = 0; i < n_irqs; i++)
                bounces += back[i] >= 2;
        end = fx_peak_now(&f);
        if (n == 0)
                print_message("    %s: peak after the layout %.3f, at the end %.3f, bound %.3f (%.2f)\n", what, laid,
                              end, random_host_bound(&f, &elig), end / random_host_bound(&f, &elig));
        for (unsigned i = 0; i < n_irqs && !why[0]; i++)
                if (!cpuset_subset(KEPT(&fx_irq(&f, irq[i])->affinity), &elig))
                        snprintf(why, len, "%s: IRQ %u left on a CPU not eligible", what, irq[i]);
        if (end > laid + 0.02 && !why[0])
                snprintf(why, len, "%s: peak %.3f at the end, %.3f after the layout", what, end, laid);
        if (late > 0 && !why[0])
                snprintf(why, len, "%s: %u actions in the second half of a stationary run, the first at tick %u: %s",
                         what, late, first_late, first);
        if (bounces > 0 && !why[0])
                snprintf(why, len, "%s: %u IRQs went back twice to a CPU they left", what, bounces);
        fx_free(&f);
}

/* Properties of the policy on random hosts under stationary load with 3%
 * noise, over RANDOM_HOSTS_NOISES draws of the noise: no action ever puts
 * an IRQ, an RPS or XPS mask on a CPU that is not eligible (isolated,
 * banned), and at the end every queue IRQ sits on an eligible CPU; a
 * rebalancing move never raises the busiest CPU's load; the busiest CPU
 * ends no busier than right after the initial layout; in the second half
 * of the run nothing changes (no flapping), and no IRQ goes back twice to
 * a CPU it left.  Every host and draw runs; the failures are listed. */
/* calm: the policy decides as the engine runs it on a calm host (while
 * its pace is not calm, every ENGINE_MEASURE_FULL_EVERY tick while it
 * measures, else every ENGINE_FULL_TICK_EVERY), the other ticks' loads
 * going to policy_observe; else every tick. */
#define RANDOM_HOSTS_NOISES 8
static void random_hosts_run(bool calm) {
        const unsigned n_hosts = 60;
        unsigned failed = 0;

        for (unsigned n = 0; n < RANDOM_HOSTS_NOISES; n++)
                for (uint64_t h = 1; h <= n_hosts; h++) {
                        char why[1024];

                        random_host_run(h, n, calm, why, sizeof(why));
                        if (why[0]) {
                                print_message("    FAILED %s\n", why);
                                failed++;
                        }
                }
        if (failed > 0)
                fail_msg("%u of %u runs failed", failed, n_hosts * RANDOM_HOSTS_NOISES);
}

static void test_random_hosts(void **state) {
        (void) state;
        random_hosts_run(false);
}

/* The same hosts on a calm daemon's schedule: the noise estimate fed by
 * the calm ticks still makes no move under stationary noise. */
static void test_random_hosts_calm(void **state) {
        (void) state;
        random_hosts_run(true);
}

/* The simulator's trial8 host: 8 CPUs, 4 queues with separate rx and tx
 * vectors, 55% receive and 10% transmit work each, 25% of the receive
 * work staying on the IRQ CPU, RPS costing 10% of what it moves, 35-45%
 * user work beside it.  Returns the lower bound of its peak. */
static double trial8_host(struct fx *f, uint64_t *seed) {
        const int n_cpus = 8, nq = 4;
        const double work = 0.55, tx = 0.10, keep = 0.25, cost = 0.10;
        double total = 0;

        fx_init(f, n_cpus, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f->cfg);
        fx_add_nic(f, "eth0", 0, nq, false, 30, true, false);
        f->napi_share = keep;
        f->rps_cost = cost;
        for (int k = 0; k < nq; k++) {
                f->q[0][k] = (struct fx_queue_model){ work, 11000, 0, tx, 2000 };
                total += tx + work * (1 + cost * (1 - keep));
        }
        for (int c = 0; c < n_cpus; c++)
                f->user[c] = 0.35 + 0.1 * fx_rand(seed);
        return MAX(total / n_cpus, tx + work * (keep + cost * (1 - keep)));
}

/* Several hot queues at once (trial8_host): their RPS sets must not pile the
 * protocol work onto the other queues' IRQ CPUs, which carry interrupt and
 * NAPI work that RPS cannot move, while CPUs without a queue IRQ have room;
 * the peak ends near the lower bound, and no CPU stays busy with little
 * idle while a CPU without network work idles. */
static void test_rps_hot_queues_together(void **state) {
        const int n_cpus = 8, nq = 4, ticks = 150;

        (void) state;
        for (uint64_t seed0 = 1; seed0 <= 3; seed0++) {
                struct fx f;
                uint64_t seed = seed0;
                double noise[8], peak = 0, lb = trial8_host(&f, &seed);
                unsigned hole = 0, hole_max = 0;

                for (int k = 1; k <= ticks; k++) {
                        bool busy = false, idle = false;

                        for (int c = 0; c < n_cpus; c++)
                                noise[c] = 0.95 + 0.1 * fx_rand(&seed);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                        for (int c = 0; c < n_cpus; c++) {
                                const struct sample_cpu *sc = &f.load.cpus[c];
                                double net = sc->irq + sc->softirq;
                                busy |= sc->idle < 0.05 && net >= 0.25;
                                idle |= sc->idle > 0.40 && net < 0.02;
                        }
                        hole = busy && idle && k > 10 ? hole + 1 : 0;
                        hole_max = MAX(hole_max, hole);
                }
                /* no queue's RPS set holds another queue's IRQ CPU */
                for (int q = 0; q < nq; q++)
                        for (int o = 0; o < nq; o++) {
                                int cpu = fx_irq_cpu(&f, 30 + o);
                                if (o != q && cpuset_isset(KEPT(&fx_queue(&f, "eth0", q)->rps_cpus), cpu))
                                        fail_msg("seed %llu: rx-%d's RPS set holds CPU%d, rx-%d's IRQ CPU",
                                                 (unsigned long long) seed0, q, cpu, o);
                        }
                peak = fx_settled_peak(&f);
                print_message("    seed %llu: peak %.3f, lower bound %.3f (%.2f), longest hole %u ticks\n",
                              (unsigned long long) seed0, peak, lb, peak / lb, hole_max);
                if (peak > 1.15 * lb)
                        fail_msg("seed %llu: peak %.3f is %.2f times the lower bound %.3f",
                                 (unsigned long long) seed0, peak, peak / lb, lb);
                assert_true(hole_max <= 3);
                fx_free(&f);
        }
}

/* Hot queues outnumbering the CPUs without a queue IRQ (the simulator's
 * random host 16006: 24 virtio queues on 48 CPUs, 19% of each staying on
 * its IRQ CPU).  Sized again with the measured share, each set keeps its
 * IRQ CPU, and no set takes another's: taken by its projected peak alone,
 * the first queue's set took every pool CPU (its IRQ CPU then lowest),
 * and so did each after it, so the IRQ CPUs idled at 9-15% while the
 * pool carried all the protocol work at 20-22% (1.36 times the bound).
 * The IRQ CPU's room below the even level no other set may use, so a set
 * takes no more CPUs than bring it there: the peak ends near the bound. */
static void test_rps_together_even(void **state) {
        const int n_cpus = 16, nq = 8, ticks = 120;
        const double work = 0.30, keep = 0.20, cost = 0.05;

        (void) state;
        for (uint64_t seed0 = 1; seed0 <= 3; seed0++) {
                struct fx f;
                uint64_t seed = seed0;
                double peak, total, lb;

                fx_init(&f, n_cpus, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                fx_add_nic(&f, "eth0", 0, nq, true, 30, true, false);
                total = fx_even_queues(&f, nq, work, 11000, keep, cost);
                for (int c = 0; c < n_cpus; c++)
                        f.user[c] = 0.40 + 0.1 * fx_rand(&seed);
                lb = MAX(total / n_cpus, work * (keep + cost * (1 - keep)));
                fx_run_noisy(&f, ticks, &seed, 0.95, 0.1);
                peak = fx_settled_peak(&f);
                assert_near_bound(seed0, peak, lb, 1.15);
                fx_free(&f);
        }
}

/* One node's queues spilling past it (the simulator's random host 20026
 * at a third of the size: 2 nodes of 16 CPUs, 16 queues of 55% on node 1,
 * 18% of each on its IRQ CPU).  Node 1 alone would carry 57% a CPU; the
 * lower bound keeps L on each local CPU and spreads the rest over node 0
 * at POL_REMOTE_COST: 16 L + 16 L / 1.3 = the work.  Sized together to the
 * mean of both nodes' loads, a level no placement with the remote cost
 * reaches, the first sets took more remote CPUs than the rest could spare
 * and the last ones all of node 0 (on 20026 node 1 ended at 15-30%, node
 * 0 at 53-57%); here the peak ended 1.46 times the bound.  Sized to the
 * level the bound reaches, each IRQ CPU keeps its share up to it: 1.19. */
static void test_rps_together_spill(void **state) {
        const int n_cpus = 32, nq = 16, ticks = 120;
        const double work = 0.55, keep = 0.18, cost = 0.10;

        (void) state;
        for (uint64_t seed0 = 1; seed0 <= 3; seed0++) {
                struct fx f;
                uint64_t seed = seed0;
                double peak, total, lb;

                fx_init(&f, n_cpus, 2, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.remote_cost = POL_REMOTE_COST;
                fx_add_nic(&f, "eth0", 1, nq, true, 30, true, false);
                total = fx_even_queues(&f, nq, work, 11000, keep, cost);
                for (int c = 0; c < n_cpus; c++)
                        f.user[c] = 0.20 + 0.1 * fx_rand(&seed);
                lb = total / (16 + 16 / POL_REMOTE_COST);
                fx_run_noisy(&f, ticks, &seed, 0.98, 0.04);
                peak = fx_settled_peak(&f);
                assert_near_bound(seed0, peak, lb, 1.25);
                fx_free(&f);
        }
}

/* A light host's lone hot queues started in one tick with the prior share
 * (the simulator's random host 19015: 24 CPUs, 4 queues of a fifth of a
 * CPU, 20% of each staying on its IRQ CPU): each set was sized to the
 * level with the prior's 60% of protocol work and carries 80%; the cool
 * CPUs have room, so start_together() does not size them again, and the
 * CPUs of the 3-CPU sets sit about 1.5% of a CPU over the mean, under the
 * hot level (balance_floor over it), so adjust() does not widen them:
 * 1.17 times the lower bound here with 6 CPUs idle.  Sized again with the
 * measured share, each keeps its CPUs and takes one more. */
static void test_rps_prior_widened(void **state) {
        const int n_cpus = 24, nq = 4, ticks = 120;
        const double work = 0.21, keep = 0.20, cost = 0.034;

        (void) state;
        for (uint64_t seed0 = 1; seed0 <= 3; seed0++) {
                struct fx f;
                uint64_t seed = seed0;
                double peak, total, lb;

                fx_init(&f, n_cpus, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                fx_add_nic(&f, "eth0", 0, nq, true, 30, true, false);
                total = fx_even_queues(&f, nq, work, 5000, keep, cost);
                for (int c = 0; c < n_cpus; c++)
                        f.user[c] = 0.10 + 0.15 * fx_rand(&seed);
                lb = MAX(total / n_cpus, work * (keep + cost * (1 - keep)));
                fx_run_noisy(&f, ticks, &seed, 0.97, 0.06);
                peak = fx_settled_peak(&f);
                assert_near_bound(seed0, peak, lb, 1.15);
                fx_free(&f);
        }
}

/* The same host with the policy run only on the ticks the daemon runs it
 * (engine.c, full_tick_due(): a full tick when policy_pace() is not calm,
 * every ENGINE_MEASURE_FULL_EVERY-th while the report is measuring and when
 * its due time came, else every ENGINE_FULL_TICK_EVERY-th): the sets sized with the prior share are
 * sized again once the share is measured, after the dwell.  A calm tick
 * runs no policy: with no full tick between (the simulator's trial8 host,
 * seed 2: two measurements, then calm) the RPS CPUs stayed at 1.23 times
 * the lower bound to the end of the run; so the wait is measuring, and no
 * run of calm ticks in it may be longer than the measuring cadence.  The
 * dwell's end is a due time too: without, the sets were sized again up to
 * a cadence after it (4 ticks here). */
static void test_rps_prior_share_paced(void **state) {
        const int n_cpus = 8, ticks = 60;

        (void) state;
        for (uint64_t seed0 = 1; seed0 <= 3; seed0++) {
                struct fx f;
                uint64_t seed = seed0;
                double noise[8], lb = trial8_host(&f, &seed);
                int first_rps = 0, again = 0, calm_run = 0, calm_between = 0, longest = 0, measured_full = 0;

                for (int k = 1; k <= ticks; k++) {
                        bool full;

                        for (int c = 0; c < n_cpus; c++)
                                noise[c] = 0.95 + 0.1 * fx_rand(&seed);
                        fx_model(&f, noise);
                        full = k <= 2 || policy_pace(&f.cfg, f.st, &f.rep, &f.load) != POLICY_PACE_CALM ||
                               (f.rep.measuring && (calm_run + 1 >= ENGINE_MEASURE_FULL_EVERY ||
                                                    (f.rep.due_usec > 0 && (uint64_t) k * SEC >= f.rep.due_usec))) ||
                               calm_run + 1 >= ENGINE_FULL_TICK_EVERY;
                        if (!full) {
                                calm_run++;
                                if (first_rps > 0 && again == 0) {
                                        calm_between++;
                                        longest = MAX(longest, calm_run);
                                }
                                continue;
                        }
                        measured_full += first_rps > 0 && again == 0 && calm_run > 0;
                        calm_run = 0;
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                        for (size_t i = 0; i < f.l.n; i++) {
                                if (f.l.v[i].type != KNOB_RPS)
                                        continue;
                                if (first_rps == 0)
                                        first_rps = k;
                                else if (again == 0 && f.l.v[i].why == ACTION_REASON_RPS_RESIZED)
                                        again = k;
                        }
                }
                print_message("    seed %llu: RPS at tick %d, sized again at tick %d, %d calm ticks between "
                              "(longest run %d, %d full ticks after one), peak %.3f, lower bound %.3f (%.2f)\n",
                              (unsigned long long) seed0, first_rps, again, calm_between, longest, measured_full,
                              fx_peak(&f), lb, fx_peak(&f) / lb);
                assert_true(first_rps > 0);
                if (again == 0)
                        fail_msg("seed %llu: the sets were not sized again in %d ticks", (unsigned long long) seed0,
                                 ticks);
                /* the wait costs fewer full ticks than it lasts, and calm
                 * runs in it end by the measuring cadence */
                if (calm_between == 0)
                        fail_msg("seed %llu: every tick of the wait was full", (unsigned long long) seed0);
                if (longest > ENGINE_MEASURE_FULL_EVERY - 1)
                        fail_msg("seed %llu: %d calm ticks in a row while measuring", (unsigned long long) seed0,
                                 longest);
                /* the share is measured within the dwell, whose end is a
                 * due time: sized again at the first tick after it, not
                 * at the measuring cadence's next full one */
                if ((uint64_t) (again - first_rps) * SEC > f.cfg.min_dwell_usec + f.cfg.interval_usec)
                        fail_msg("seed %llu: sized again %d ticks after the sets (min_dwell %.0f s)",
                                 (unsigned long long) seed0, again - first_rps, (double) f.cfg.min_dwell_usec / SEC);
                if (fx_peak(&f) > 1.15 * lb)
                        fail_msg("seed %llu: peak %.3f is %.2f times the lower bound %.3f",
                                 (unsigned long long) seed0, fx_peak(&f), fx_peak(&f) / lb, lb);
                fx_free(&f);
        }
}

/* Sets sized with the prior share are sized again once the share is
 * measured only when that lowers the host's projected peak: the busiest
 * CPUs here carry eth1's queues (no RPS), and eth0's sets (share 0.2
 * against the prior 0.4, the cool CPUs short of room) stay below them
 * either way.  Sized again, 8 RPS masks changed and the host's peak did
 * not move (bench/README "Moves that do not pay"). */
static void test_rps_resize_needs_gain(void **state) {
        const int n_cpus = 32, n1 = 16, n0 = 8, ticks = 90;

        (void) state;
        for (uint64_t seed0 = 1; seed0 <= 3; seed0++) {
                struct fx f;
                uint64_t seed = seed0;
                double noise[32], before = 0, after = 0;
                int sets = 0, resized = 0, late = 0, first = 0;

                fx_init(&f, n_cpus, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                fx_add_nic(&f, "eth1", 0, n1, true, 30, false, false);
                fx_add_nic(&f, "eth0", 0, n0, true, 60, true, false);
                f.rps_cost = 0.05;
                for (int k = 0; k < n1; k++)
                        f.q[0][k] = (struct fx_queue_model){ 0.26, 11000 };
                for (int k = 0; k < n0; k++)
                        f.q[1][k] = (struct fx_queue_model){ 0.36, 11000, 0.2 };
                for (int c = 0; c < n_cpus; c++)
                        f.user[c] = 0.20 + 0.1 * fx_rand(&seed);
                for (int k = 1; k <= ticks; k++) {
                        for (int c = 0; c < n_cpus; c++)
                                noise[c] = 0.97 + 0.06 * fx_rand(&seed);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                        for (size_t i = 0; i < f.l.n; i++) {
                                if (f.l.v[i].type != KNOB_RPS)
                                        continue;
                                sets++;
                                first = first ? first : k;
                                resized += f.l.v[i].why == ACTION_REASON_RPS_RESIZED;
                                late += k > first + 5;
                        }
                        if (k > ticks - 40 && k <= ticks - 20)
                                before += fx_peak(&f) / 20;
                        else if (k > ticks - 20)
                                after += fx_peak(&f) / 20;
                }
                print_message("    seed %llu: %d RPS changes (first at tick %d, %d after tick %d, %d sized again), "
                              "peak %.3f then %.3f\n", (unsigned long long) seed0, sets, first, late, first + 5,
                              resized, before, after);
                assert_true(first > 0);
                if (resized > 0)
                        fail_msg("seed %llu: %d sets sized again where the host's peak is eth1's",
                                 (unsigned long long) seed0, resized);
                fx_free(&f);
        }
}

/* Sets sized with the prior share, sized again once the share is
 * measured, where one queue's steered work is mostly one flow (the
 * simulator's random host 23016: ens2f0 rx-5's elephant).  RPS hashes the
 * flow whole to one CPU of a set; the replan projected it as even shares
 * over the new set and so took CPUs 4-15 for eth0 queue 0, moving its
 * flow from the coolest CPU of the old set onto one of the busiest: peak
 * 0.57 -> 0.66 here, and on 23016 a CPU beside 44% user load out of idle
 * (bench/README "User load and holes").  A set that shows a big flow
 * keeps its size (adjust() judges it with its big-flow guard), and the
 * others' resize, which leaves the flow's CPU the busiest, gains nothing. */
static void test_rps_resize_flow(void **state) {
        const int n_cpus = 16, nq = 4, ticks = 120;

        (void) state;
        for (uint64_t seed0 = 1; seed0 <= 3; seed0++) {
                struct fx f;
                uint64_t seed = seed0;
                double noise[16], before = 0, after;
                int resized = 0;

                fx_init(&f, n_cpus, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.cfg.initial_layout = false;
                f.cfg.rfs = false;
                fx_add_nic(&f, "eth0", 0, nq, true, 30, true, false);
                for (int q = 0; q < nq; q++) {
                        fx_place(&f, 30 + q, q);
                        f.q[0][q] = (struct fx_queue_model){ 0.4, 4500, 0.15 };
                }
                f.q[0][0] = (struct fx_queue_model){ 0.8, 9000, 0.15, .elephant = 0.6 };
                for (int c = 4; c < n_cpus; c++)
                        f.base[c] = 0.04 + 0.01 * (c - 4);
                for (int k = 1; k <= ticks; k++) {
                        for (int c = 0; c < n_cpus; c++)
                                noise[c] = 0.98 + 0.04 * fx_rand(&seed);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                        for (size_t i = 0; i < f.l.n; i++)
                                resized += f.l.v[i].why == ACTION_REASON_RPS_RESIZED;
                        if (k > 20 && k <= 30)
                                before += fx_peak(&f) / 10;
                }
                after = fx_settled_peak(&f);
                print_message("    seed %llu: %d sets sized again, peak %.3f then %.3f\n", (unsigned long long) seed0,
                              resized, before, after);
                if (after > before + 0.02)
                        fail_msg("seed %llu: peak %.3f after the sets were sized again, %.3f before",
                                 (unsigned long long) seed0, after, before);
                fx_free(&f);
        }
}

/* An RPS mask set before irqsteerd started is an operator's: kept (and
 * said once) unless takeover = yes, globally or for the interface. */
static void test_takeover(void **state) {
        static const struct {
                const char *what;
                bool takeover;
                enum tristate iface;     /* [interface eth0] takeover */
                const char *pre;         /* rps_cpus at start */
                const char *want;
                unsigned kept;
        } cases[] = {
                { "set before the start: kept", false, TRI_INHERIT, "2-3", "irq 60>0;", 1 },
                { "takeover = yes", true, TRI_INHERIT, "2-3", "irq 60>0;rps eth0/0>0-3;", 0 },
                { "takeover = yes for the interface only", false, TRI_YES, "2-3", "irq 60>0;rps eth0/0>0-3;", 0 },
                { "takeover = no for the interface overrides yes", true, TRI_NO, "2-3", "irq 60>0;", 1 },
                { "RPS off at the start (the kernel's default): ours", false, TRI_INHERIT, "",
                  "irq 60>0;rps eth0/0>0-3;", 0 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct config_interface ci = { .match = (char *) "eth0", .manage = true, .rps = TRI_INHERIT,
                                               .xps = TRI_INHERIT, .rfs = TRI_INHERIT, .takeover = cases[i].iface };
                struct fx f;

                print_message("case: %s\n", cases[i].what);
                fx_init(&f, 4, 1, FX_SMT_NONE);
                f.cfg.takeover = cases[i].takeover;
                f.cfg.interfaces = &ci;
                f.cfg.n_interfaces = 1;
                fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
                assert_int_equal(test_keep_list(&f.inv.nics[0].queues[0].rps_cpus, cases[i].pre), 0);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                assert_int_equal(f.rep.n_kept, cases[i].kept);
                assert_int_equal(count_notes(&f.rep, "kept: eth0 rx-0 RPS CPUs 2-3 set before irqsteerd started"),
                                 cases[i].kept);
                /* said once; still kept under load */
                for (int c = 0; c < 4; c++)
                        f.base[c] = 0.05;
                f.q[0][0] = (struct fx_queue_model){ 0.95, 50000 };
                assert_int_equal(fx_ticks(&f, 2, 6), 0);
                if (cases[i].kept) {
                        assert_int_equal(count_type(&f.l, KNOB_RPS), 0);
                        assert_int_equal(count_notes(&f.rep, "kept:"), 0);
                        assert_int_equal(f.rep.n_kept, 1);
                }
                f.cfg.interfaces = NULL;
                f.cfg.n_interfaces = 0;
                fx_free(&f);
        }
}

/* ---- stability ---- */

static void test_balanced_and_noise(void **state) {
        static const struct {
                const char *what;
                int n_cpus, nq;
                double work, base;
                double noise;            /* +/- relative */
                unsigned ticks;
                bool rps_ok;             /* RPS may start once (lone hot queue); never a move */
        } cases[] = {
                { "balanced 30%, no noise", 8, 4, 0.30, 0.05, 0, 50, false },
                { "balanced 50% +/-10% noise", 8, 8, 0.50, 0.02, 0.10, 1000, false },
                { "every CPU hot alike (no room, no gain)", 8, 8, 0.85, 0.05, 0.10, 1000, false },
                { "two queues per CPU at ~80% +/-10%", 4, 8, 0.40, 0.02, 0.10, 1000, false },
                { "lone queues near hot_enter +/-10% with idle CPUs", 8, 4, 0.76, 0.0, 0.10, 1000, true },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x9e3779b97f4a7c15ULL + i;
                unsigned moves = 0, rps = 0, other = 0;
                double noise[FX_MAX_CPUS];

                fx_init(&f, cases[i].n_cpus, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", 0, cases[i].nq, true, 30, true, false);
                for (int q = 0; q < cases[i].nq; q++)
                        f.q[0][q] = (struct fx_queue_model){ cases[i].work, 5000 };
                for (int c = 0; c < f.n_cpus; c++)
                        f.base[c] = cases[i].base;
                /* first tick: the initial layout, before any load */
                assert_int_equal(fx_step(&f, 0), 0);
                assert_int_equal(count_type(&f.l, KNOB_IRQ), (unsigned) cases[i].nq);

                for (unsigned k = 1; k <= cases[i].ticks; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + cases[i].noise * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        for (size_t a = 0; a < f.l.n; a++) {
                                if (f.l.v[a].type == KNOB_IRQ)
                                        moves++;
                                else if (f.l.v[a].type == KNOB_RPS)
                                        rps++;
                                else if (f.l.v[a].type != KNOB_FLOWCNT &&
                                         f.l.v[a].type != KNOB_SOCKFLOW)
                                        other++;
                        }
                }
                if (moves != 0 || other != 0)
                        fail_msg("%s: %u IRQ moves, %u other actions over %u ticks", cases[i].what, moves, other,
                                 cases[i].ticks);
                /* an RPS change may happen when a lone queue turns hot, but
                 * it must not flap: at most one per queue */
                if (cases[i].rps_ok ? rps > (unsigned) cases[i].nq : rps != 0)
                        fail_msg("%s: %u RPS changes over %u ticks", cases[i].what, rps, cases[i].ticks);

                fx_free(&f);
        }
}

/* ---- hot CPU with two busy queues ---- */

/* 8 CPUs; eth0's queues 0 and 1 (60% and 30%) both on CPU3, queue 2 on
 * CPU0, queue 3 on CPU1; CPU5 idle, the others at 5%. */
static void two_busy_queues(struct fx *f) {
        fx_init(f, 8, 1, FX_SMT_NONE);
        f->cfg.initial_layout = false;
        fx_add_nic(f, "eth0", 0, 4, false, 30, false, true); /* rx 30-33, tx 34-37 */
        for (int q = 0; q < 4; q++) {
                int cpu = q < 2 ? 3 : q - 2;

                fx_place(f, 30 + q, cpu);
                fx_place(f, 34 + q, cpu);
        }
        f->q[0][0] = (struct fx_queue_model){ 0.60, 12000 };
        f->q[0][1] = (struct fx_queue_model){ 0.30, 6000 };
        f->q[0][2] = (struct fx_queue_model){ 0.20, 4000 };
        f->q[0][3] = (struct fx_queue_model){ 0.20, 4000 };
        for (int c = 0; c < 8; c++)
                f->base[c] = c == 5 ? 0 : 0.05;
}

static void test_move_two_busy_queues(void **state) {
        struct fx f;

        (void) state;
        two_busy_queues(&f);

        for (int k = 1; k <= 3; k++) {
                fx_model(&f, NULL);
                /* 10% of CPU3's softirq is not network work: the residual
                 * makes moving the bigger queue the better move */
                f.load.cpus[3].net_frac = 0.9;
                assert_int_equal(fx_step(&f, k * SEC), 0);
                if (k < 3)
                        expect_actions("not hot before hot_samples", &f.l, "");
        }
        /* CPU3 at 95%: moving queue 0 (57%) to CPU5 leaves a peak of 57%,
         * moving queue 1 (28%) one of 66%: queue 0 goes, tx with rx, and
         * its XPS follows */
        expect_actions("hot CPU, two busy queues", &f.l, "irq 30>5;irq 34>5;xps eth0/0>5;");
        assert_int_equal(f.l.v[0].pair_irq, 34);
        assert_int_equal(f.l.v[1].pair_irq, 30);
        {
                /* the reason names the hot CPU and a projected peak that
                 * the move lowers */
                const char *p = strstr(f.l.v[0].reason, "projected peak ");
                int before, after;

                assert_int_equal(f.l.v[0].why, ACTION_REASON_CPU_HOT);
                assert_non_null(strstr(f.l.v[0].reason, "CPU3 softirq+irq"));
                assert_non_null(p);
                assert_int_equal(sscanf(p, "projected peak %d%% -> %d%%", &before, &after), 2);
                assert_true(after < before);
        }
        assert_true(cpuset_isset(&f.rep.hot, 3));
        assert_int_equal(f.rep.n_hot_cpus, 1);

        /* the load follows; nothing more to do */
        for (int k = 4; k <= 40; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                expect_actions("after the move", &f.l, "");
        }
        assert_int_equal(f.rep.n_moves_10min, 1);

        fx_free(&f);
}

/* ---- lone hot queue ---- */

static void setup_lone(struct fx *f, double rate) {
        fx_init(f, 8, 1, FX_SMT_NONE);
        f->cfg.initial_layout = false;
        fx_add_nic(f, "eth0", 0, 4, true, 30, true, false);
        fx_place(f, 30, 3);
        fx_place(f, 31, 0);
        fx_place(f, 32, 1);
        fx_place(f, 33, 2);
        f->q[0][0] = (struct fx_queue_model){ 0.92, rate };
        for (int q = 1; q < 4; q++)
                f->q[0][q] = (struct fx_queue_model){ 0.10, 1000 };
        f->base[3] = 0.07;
        for (int c = 4; c < 8; c++)
                f->base[c] = 0.05;
}

static void test_lone_hot_queue(void **state) {
        static const struct {
                const char *what;
                double rate, exclude_rate;
                bool rfs;
                const char *want;
                const char *reason;
        } cases[] = {
                { "high interrupt rate: IRQ CPU left out", 50000, 20000, true,
                  "rps eth0/0>4-5;sockflow>32768;flowcnt eth0/0>8192;",
                  "lone hot queue: CPU3 at 99%, IRQ 30 is 100% of its load; RPS over CPUs 4-5 (the IRQ CPU left out" },
                { "low interrupt rate, its NAPI work keeps the IRQ CPU busiest: left out", 5000, 20000, true,
                  "rps eth0/0>4-5;sockflow>32768;flowcnt eth0/0>8192;",
                  "lone hot queue: CPU3 at 99%, IRQ 30 is 100% of its load; RPS over CPUs 4-5 (the IRQ CPU left out: its own" },
                /* (CPUs 0-2, as busy as 4-7, carry the other queues'
                 * IRQs: the set keeps off them) */
                { "low interrupt rate, busy candidates: the IRQ CPU takes a share", 5000, 20000, false,
                  "rps eth0/0>3-6;", "lone hot queue: CPU3 at 92%, IRQ 30 is 100% of its load; RPS over CPUs 3-6" },
                { "exactly rps_exclude_irq_rate: left out", 20000, 20000, false, "rps eth0/0>4-5;",
                  "RPS over CPUs 4-5 (the IRQ CPU left out: high interrupt rate)" },
                { "rps_exclude_irq_rate = 0, busy candidates: the rate never forces it out", 50000, 0, false,
                  "rps eth0/0>3-6;", "lone hot queue: CPU3 at 92%, IRQ 30 is 100% of its load; RPS over CPUs 3-6" },
                { "high rate, busy candidates: left out all the same", 50000, 20000, false,
                  "rps eth0/0>4-7;", "RPS over CPUs 4-7 (the IRQ CPU left out: high interrupt rate)" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                setup_lone(&f, cases[i].rate);
                /* busy candidates: every other CPU at 45%, none but the
                 * queue on CPU3 */
                if (strstr(cases[i].what, "busy candidates")) {
                        f.base[3] = 0;
                        for (int c = 0; c < 8; c++)
                                if (c != 3)
                                        f.base[c] = c < 3 ? 0.35 : 0.45;
                }
                f.cfg.rfs = cases[i].rfs;
                f.cfg.rps_exclude_irq_rate = cases[i].exclude_rate;
                assert_int_equal(fx_ticks(&f, 1, 3), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                assert_int_equal(f.l.v[0].why, ACTION_REASON_LONE_HOT_QUEUE);
                /* the prose says why the IRQ CPU is left out */
                if (!strstr(f.l.v[0].reason, cases[i].reason))
                        fail_msg("%s: reason '%s'", cases[i].what, f.l.v[0].reason);
                assert_int_equal(count_type(&f.l, KNOB_IRQ), 0);
                /* applied: the next ticks are quiet */
                for (int k = 4; k <= 20; k++) {
                        fx_model(&f, NULL);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        expect_actions(cases[i].what, &f.l, "");
                }
                assert_int_equal(f.rep.n_rps_queues, 1);

                fx_free(&f);
        }
}

/* A CPU an IRQ of another device just moved to is left out of RPS sets
 * while it settles only when the move changed its load measurably
 * (POL_GAIN_LEAST, by the IRQ's measured work).  Quiet IRQs fire together
 * on CPU1 (their mask, 1-3) as a busy one; at tick 1 the heaviest leave,
 * one for CPU3, the only CPU with room for a share of the lone hot queue
 * on CPU0 (CPUs 1 and 2 at 70%), which turns hot at tick 3.  Settling for
 * a 0.4% move, CPU3 was left out of the queue's RPS set until tick 5; a 3%
 * move makes it wait. */
static void test_rps_settling_quiet_move(void **state) {
        static const struct {
                const char *what;
                double work;             /* each quiet IRQ's */
                unsigned want_tick;      /* of the RPS set onto CPU3 */
        } cases[] = {
                { "0.4% moved: not settling", 0.004, 3 },
                { "3% moved: settling", 0.03, 5 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                cpuset_t mask;
                unsigned hot_at = 0, rps_at = 0;

                fx_init(&f, 4, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                fx_add_nic(&f, "eth0", 0, 2, true, 30, true, false);
                fx_place(&f, 30, 0);
                fx_place(&f, 31, 1);
                f.q[0][0] = (struct fx_queue_model){ 0.90, 5000 };
                f.q[0][1] = (struct fx_queue_model){ 0.10, 1000 };
                f.base[1] = 0.60;
                f.base[2] = 0.70;
                cpuset_zero(&mask);
                for (int c = 1; c <= 3; c++)
                        cpuset_set(&mask, c);
                for (int k = 0; k < 3; k++) {
                        char name[32];

                        snprintf(name, sizeof(name), "nvme0q%d", k + 1);
                        fx_add_irq(&f, 60 + k, name, -1, -1, INVENTORY_IRQ_NONE);
                        KEEP(&fx_irq(&f, 60 + k)->affinity, mask);
                        f.other[f.n_other++] = (struct fx_other_model){ 60 + k, 100, cases[i].work };
                }
                for (unsigned k = 1; k <= 8 && rps_at == 0; k++) {
                        fx_model(&f, NULL);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        if (k == 1 && fx_irq_cpu(&f, 60) != 3)
                                fail_msg("%s: IRQ 60 on CPU%d, want CPU3", cases[i].what, fx_irq_cpu(&f, 60));
                        if (hot_at == 0 && cpuset_isset(&f.rep.hot, 0))
                                hot_at = k;
                        for (size_t a = 0; a < f.l.n; a++)
                                if (f.l.v[a].type == KNOB_RPS && cpuset_kept_isset(&f.l.v[a].cpus, 3))
                                        rps_at = k;
                }
                print_message("    %s: CPU0 hot at tick %u, RPS onto CPU3 at tick %u\n", cases[i].what, hot_at,
                              rps_at);
                assert_int_equal(hot_at, 3);
                if (rps_at != cases[i].want_tick)
                        fail_msg("%s: RPS onto CPU3 at tick %u, want %u", cases[i].what, rps_at, cases[i].want_tick);
                fx_free(&f);
        }
}

/* Widening while the RPS CPUs are hot, narrowing after the load drops,
 * with the dwell and the sample count between changes. */
static void test_rps_widen_narrow(void **state) {
        /* 4-5 cannot get below hot_exit with their own 60%: the set widens
         * over cool CPUs; after the drop it narrows, one CPU at most per
         * dwell, back to nothing.  How many widenings it takes depends on
         * the measured share of the work staying on CPU3, so the steps are
         * checked by their properties, not by their masks. */
        struct fx f;
        uint64_t when[16];
        cpuset_t got[16];
        size_t n = 0, first_narrow = 0;

        (void) state;
        setup_lone(&f, 5000);
        for (int k = 1; k <= 400; k++) {
                /* other work lands on the RPS CPUs 4-5: hot again */
                if (k == 60)
                        f.base[4] = f.base[5] = 0.60;
                if (k == 150) {
                        f.base[4] = f.base[5] = 0.05;
                        f.q[0][0].work = 0.20;
                }
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                assert_int_equal(count_type(&f.l, KNOB_IRQ), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        if (f.l.v[a].type == KNOB_RPS) {
                                char list[64];
                                assert_true(n < ELEMENTSOF(got));
                                got[n] = cpuset_kept_get(&f.l.v[a].cpus);
                                cpuset_format_list(&got[n], list, sizeof(list));
                                print_message("    RPS at %2ds -> '%s'\n", k, list);
                                when[n++] = (uint64_t) k;
                        }
        }
        assert_true(n >= 4);
        /* the first set: cool CPUs, the IRQ CPU left out, at the start */
        assert_true(when[0] <= 5);
        assert_false(cpuset_isset(&got[0], 3));
        for (size_t i = 1; i < n; i++) {
                /* each change waits min_dwell after the previous one */
                if (when[i] - when[i - 1] < 30)
                        fail_msg("RPS change %zu only %llus after the previous one", i,
                                 (unsigned long long) (when[i] - when[i - 1]));
                if (when[i] < 150) {
                        /* widened while 4-5 are hot: a superset */
                        assert_true(when[i] > 60);
                        assert_true(cpuset_subset(&got[i - 1], &got[i]) && !cpuset_equal(&got[i - 1], &got[i]));
                } else {
                        /* no flapping: only ever narrower, one CPU at a time */
                        if (first_narrow == 0)
                                first_narrow = i;
                        assert_true(cpuset_subset(&got[i], &got[i - 1]));
                        assert_int_equal(cpuset_count(&got[i - 1]) - cpuset_count(&got[i]),
                                         cpuset_count(&got[i]) == 0 ? cpuset_count(&got[i - 1]) : 1);
                }
        }
        assert_true(first_narrow > 1);
        assert_true(cpuset_empty(&got[n - 1]));
        assert_int_equal(f.rep.n_rps_queues, 0);

        fx_free(&f);
}

/* A wider RPS set must lower the projected peak by min_gain (as any move):
 * a set CPU hot with its own interrupt work is cooled only by its share of
 * the protocol work shrinking, p/n to p/(n+1), not worth a change.  The
 * lone queue (70% of it interrupt/NAPI work) gets a set over its IRQ CPU
 * and three busy CPUs (the others carry other queues' IRQs); its IRQ CPU
 * stays hot (over hot_exit on its 64% of interrupt work alone, at 33 s a
 * wider set gains 3.5%); from 60 s other work grows on CPU3 (hot_enter)
 * and on the set's other CPUs, so that leaving the set would not cool CPU3
 * either.  CPU7 and the IRQ CPUs 0-2 have room throughout.  Without the
 * rule the set widened to 0-7 at 33 s. */
static void test_rps_widen_min_gain(void **state) {
        struct fx f;
        cpuset_t set;
        unsigned changes = 0, hot = 0;
        uint64_t seed = 0x3de11ULL;
        double noise[FX_MAX_CPUS];

        (void) state;
        setup_lone(&f, 5000);
        f.q[0][0].share = 0.7;
        f.base[3] = 0;
        for (int c = 0; c < 8; c++)
                if (c != 3)
                        f.base[c] = c < 3 ? 0.35 : 0.45;
        f.cfg.rfs = false;
        for (int k = 1; k <= 600; k++) {
                if (k == 60) {
                        f.base[3] = 0.12;
                        for (int c = 4; c < 7; c++)
                                f.base[c] = 0.70;
                }
                /* 1% noise once the set is made: the steady-load rule */
                for (int c = 0; c < f.n_cpus; c++)
                        noise[c] = 1 + (k < 60 ? 0 : 0.01 * (2 * fx_rand(&seed) - 1));
                fx_model(&f, noise);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                if (k > 60)
                        hot += cpuset_isset(&f.rep.hot, 3);
                for (size_t a = 0; a < f.l.n; a++) {
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                        changes++;
                }
        }
        print_message("    CPU3 hot %u of 540 ticks; loads", hot);
        for (int c = 0; c < 8; c++)
                print_message(" %.3f", f.load.cpus[c].softirq);
        print_message("\n");
        cpuset_zero(&set);
        cpuset_set(&set, 3);
        cpuset_set(&set, 4);
        cpuset_set(&set, 5);
        cpuset_set(&set, 6);
        assert_true(hot > 500);
        /* the first set, and nothing after it */
        assert_int_equal(changes, 1);
        assert_true(cpuset_equal(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus), &set));
        fx_free(&f);
}

/* The big-flow guard (flow_bound): RPS hashes whole flows, so when one
 * CPU of a queue's set carries far more than its even share (an elephant
 * flow hashed there), a wider set or a set without that CPU only moves the
 * flow with the next hash.  An elephant of 0.7 CPU on one RPS CPU, whose
 * even share is 0.28: the set is left alone.  Equal extra work on both
 * RPS CPUs (no big flow, test_rps_widen_narrow) still widens. */
static void test_rps_big_flow_guard(void **state) {
        struct fx f;
        cpuset_t first;
        unsigned changes = 0;

        (void) state;
        setup_lone(&f, 5000);
        assert_int_equal(fx_ticks(&f, 1, 59), 0);
        first = cpuset_kept_get(&fx_queue(&f, "eth0", 0)->rps_cpus);
        assert_int_equal(cpuset_count(&first), 2);
        /* the flow lands on the first CPU of the set */
        f.base[cpuset_first(&first)] += 0.70;
        for (int k = 60; k <= 200; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                if (k == 70)
                        assert_true(cpuset_isset(&f.rep.hot, cpuset_first(&first)));
                for (size_t a = 0; a < f.l.n; a++)
                        if (f.l.v[a].type == KNOB_RPS) {
                                char list[64];
                                cpuset_format_list(KEPT(&f.l.v[a].cpus), list, sizeof(list));
                                print_message("    RPS at %3ds -> '%s'\n", k, list);
                                changes++;
                        }
        }
        assert_int_equal(changes, 0);
        assert_true(cpuset_equal(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus), &first));
        fx_free(&f);
}

/* A set CPU hot with its queue's own big flow is left alone (the random
 * host 10813): RPS hashes the flow whole, so a set without that CPU or a
 * wider one only hands it on to another CPU of the set (on 10813 the IRQ
 * CPU, which then ended busiest).  The lone queue (0.92, 80% of it
 * steered) gets a set over its IRQ CPU and two busy CPUs, 3-5; then 60%
 * of its steered work becomes one flow on CPU5 (below two even shares
 * above CPU4, so not the big-flow guard) beside other work of 0.32: CPU5
 * is hot and at the level without the even share, but not without the
 * share its load shows.  Without the rule CPU5 left the set at 62 s;
 * with the flow's excess taken as other work but no shed, the set widened
 * over every CPU. */
static void test_rps_elephant_not_shed(void **state) {
        struct fx f;
        cpuset_t first;
        int flow;

        (void) state;
        setup_lone(&f, 5000);
        f.cfg.rfs = false;
        f.q[0][0].share = 0.2;
        f.base[3] = 0;
        for (int c = 0; c < 8; c++)
                if (c != 3)
                        f.base[c] = c < 3 ? 0.35 : 0.30;
        assert_int_equal(fx_ticks(&f, 1, 59), 0);
        first = cpuset_kept_get(&fx_queue(&f, "eth0", 0)->rps_cpus);
        assert_int_equal(cpuset_count(&first), 3);
        assert_true(cpuset_isset(&first, 3));
        flow = cpuset_last(&first);
        f.q[0][0].elephant = 0.6;
        f.base[flow] = 0.32;
        for (int k = 60; k <= 200; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                if (k == 70)
                        assert_true(cpuset_isset(&f.rep.hot, flow));
                for (size_t a = 0; a < f.l.n; a++)
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                assert_int_equal(count_type(&f.l, KNOB_RPS), 0);
        }
        assert_true(cpuset_equal(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus), &first));
        fx_free(&f);
}

/* A set CPU carrying its queue's big flow beside another NIC's queue IRQ
 * (the random host 20013: ens1f0 rx-41's flow on CPU23 with ens4f0's IRQ
 * 136).  eth0's lone hot queue (0.92) gets a set over CPUs 4-7; eth1's
 * queue 1 (0.12, its interrupts in the proportion to work of eth1's
 * queue 0 on CPU1) fires on CPU7; then 90% of eth0 queue 0's steered work
 * becomes one flow, hashed onto CPU7.  Split by interrupts, CPU7's excess
 * read as eth1 queue 1's work: it got a set of its own for it, and CPU7
 * left eth0's set (the flow hopped on).  eth1 queue 1's work is at most
 * what eth1's queues do per interrupt where no set steers: the rest is
 * eth0's flow, whose set stays, and eth1 queue 1's IRQ, other work on
 * the flow's CPU, moves off. */
static void test_rps_flow_beside_irq(void **state) {
        struct fx f;
        cpuset_t first;
        int last;

        (void) state;
        setup_lone(&f, 9200);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.rfs = false;
        fx_add_nic(&f, "eth1", 0, 5, true, 40, true, false);
        for (int q = 0; q < 5; q++) {
                fx_place(&f, 40 + q, q < 4 ? 4 + q : 0);
                f.q[1][q] = (struct fx_queue_model){ 0.12, 1200 };
        }
        f.base[1] = f.base[2] = 0.30;
        assert_int_equal(fx_ticks(&f, 1, 59), 0);
        first = cpuset_kept_get(&fx_queue(&f, "eth0", 0)->rps_cpus);
        last = cpuset_last(&first);
        assert_true(last >= 4);
        assert_int_equal(fx_irq_cpu(&f, 36 + last), last);
        f.q[0][0].elephant = 0.9;
        for (int k = 60; k <= 200; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
        }
        assert_true(cpuset_equal(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus), &first));
        assert_true(cpuset_kept_empty(&fx_queue(&f, "eth1", last - 4)->rps_cpus));
        assert_int_not_equal(fx_irq_cpu(&f, 36 + last), last);
        fx_free(&f);
}

/* A set over every CPU but its IRQ CPU, each carrying a queue IRQ of the
 * same NIC (the random host 22009: 24 virtio queues on 24 CPUs, rx-22's
 * elephant).  eth0 queue 0 (0.92) spreads over CPUs 1-7; then 90% of its
 * steered work becomes one flow.  No CPU is then free of sets and RPS
 * queues to measure the NIC's work per interrupt on, so the flow read as
 * the IRQ's work beside it: that queue got a set of its own, which moves
 * no flow.  The work per interrupt measured before holds. */
static void test_rps_flow_every_cpu(void **state) {
        struct fx f;
        cpuset_t first;
        int last;

        (void) state;
        fx_init(&f, 8, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.rfs = false;
        fx_add_nic(&f, "eth0", 0, 8, true, 30, true, false);
        for (int q = 0; q < 8; q++) {
                fx_place(&f, 30 + q, q);
                f.q[0][q] = (struct fx_queue_model){ q == 0 ? 0.92 : 0.30, q == 0 ? 9200 : 3000 };
        }
        assert_int_equal(fx_ticks(&f, 1, 59), 0);
        first = cpuset_kept_get(&fx_queue(&f, "eth0", 0)->rps_cpus);
        assert_false(cpuset_empty(&first));
        last = cpuset_last(&first);
        assert_true(last >= 1);
        f.q[0][0].elephant = 0.9;
        for (int k = 60; k <= 200; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
        }
        for (int q = 1; q < 8; q++)
                assert_true(cpuset_kept_empty(&fx_queue(&f, "eth0", q)->rps_cpus));
        fx_free(&f);
}

/* A big flow hashed onto another node's CPU comes home (flow_home(); the
 * random host 19031): 2 nodes of 8 CPUs, eth0 on node 0 with one queue of
 * 1.0 CPU on CPU0 (20% of it stays there) whose steered work is one flow
 * (90% of it), node 0's other CPUs at 10% of other work, node 1's at 5%,
 * work off node 0 at POL_REMOTE_COST.  Node 0 lacks room below the level
 * for the steered work, so the lone hot queue's set spills onto node 1's
 * cooler CPUs too, and the flow lands on one of them (the fixture hashes
 * it to the set's last CPU) at 1.3 times: that CPU saturates.  The
 * big-flow guard (flow_bound()) kept the set so for good; now it comes
 * home to node 0 once, where the flow costs its own work, and stays. */
static void test_rps_flow_home(void **state) {
        struct fx f;
        cpuset_t node0, set;
        unsigned n_rps = 0, home = 0;
        double peak = 0;

        (void) state;
        fx_init(&f, 16, 2, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.rfs = false;
        f.remote_cost = POL_REMOTE_COST;
        fx_add_nic(&f, "eth0", 0, 2, true, 30, true, false);
        fx_place(&f, 30, 0);
        fx_place(&f, 31, 1);
        f.q[0][0] = (struct fx_queue_model){ .work = 1.0, .rate = 5000, .share = 0.2, .elephant = 0.9 };
        f.q[0][1] = (struct fx_queue_model){ 0.02, 500 };
        for (int c = 1; c < 16; c++)
                f.base[c] = c < 8 ? 0.10 : 0.05;
        node0 = f.topo.nodes[0].cpus;
        for (int k = 1; k <= 300; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                        if (f.l.v[a].type == KNOB_RPS && ++n_rps == 2 && f.l.v[a].why == ACTION_REASON_RPS_OFF_HOT)
                                home = (unsigned) k;
                }
                if (k > 250)
                        peak = MAX(peak, fx_peak_now(&f));
        }
        set = cpuset_kept_get(&fx_queue(&f, "eth0", 0)->rps_cpus);
        print_message("    home at %us, %u RPS changes, peak %.3f\n", home, n_rps, peak);
        /* the start, home, and nothing after it */
        assert_true(home > 0);
        assert_int_equal(n_rps, 2);
        assert_false(cpuset_empty(&set));
        cpuset_andnot(&set, &set, &node0);
        assert_true(cpuset_empty(&set));
        /* the flow (0.72) on a node-0 CPU beside its 10%, not 0.94 at 1.3 times */
        assert_true(peak < 0.9);
        fx_free(&f);
}

/* A big flow on another node's CPU where every local CPU carries a queue
 * IRQ (the random host 20039): 2 nodes of 8 CPUs, eth0 on node 0 with a
 * queue a CPU (CPUs 0-7, 12% each), queue 3 of 1.0 CPU whose steered work
 * (90% of it) is one flow of 0.72, work off node 0 at POL_REMOTE_COST.
 * The lone hot queue's set takes node 1's idle CPUs and the flow lands on
 * one of them (the fixture hashes it to the set's last CPU) at 0.94.
 * flow_home()'s local sets put the flow beside a queue IRQ and the rest
 * of the steered work (0.96 projected) and were not taken: the flow stayed
 * remote.  A set of the same size with a local CPU in the flow CPU's place
 * lands the flow there (RPS picks by hash and size), that CPU's queue
 * moves off beside the bigger flow, and the flow ends local and alone. */
static void test_rps_flow_landing(void **state) {
        struct fx f;
        cpuset_t node1;
        unsigned n_rps = 0;
        double peak = 0;
        int flow_cpu;

        (void) state;
        fx_init(&f, 16, 2, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.rfs = false;
        f.remote_cost = POL_REMOTE_COST;
        fx_add_nic(&f, "eth0", 1, 8, true, 30, true, false);
        for (int q = 0; q < 8; q++) {
                fx_place(&f, 30 + (unsigned) q, 8 + q);
                f.q[0][q] = (struct fx_queue_model){ 0.15, 1500 };
        }
        f.q[0][3] = (struct fx_queue_model){ .work = 0.58, .rate = 5800, .share = 0.13, .elephant = 0.75 };
        for (int c = 0; c < 8; c++)
                f.base[c] = 0.02;
        node1 = f.topo.nodes[1].cpus;
        for (int k = 1; k <= 300; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                        if (f.l.v[a].type == KNOB_RPS)
                                n_rps++;
                }
                if (k > 250)
                        peak = MAX(peak, fx_peak_now(&f));
        }
        flow_cpu = cpuset_last(KEPT(&fx_queue(&f, "eth0", 3)->rps_cpus));
        print_message("    flow on CPU%d, %u RPS changes, peak %.3f\n", flow_cpu, n_rps, peak);
        assert_true(flow_cpu >= 0 && cpuset_isset(&node1, flow_cpu));
        assert_true(n_rps <= 3);
        /* the flow (0.72) alone on a node-1 CPU, not 0.94 at 1.3 times */
        assert_true(peak < 0.85);
        fx_free(&f);
}

/* A big flow on another node's CPU where no set of its set's size can put
 * a local CPU in its place (the random host 23037): 2 nodes of 8 CPUs,
 * eth0 on node 0 with a queue a CPU (0.25 each, work off node 0 at
 * POL_REMOTE_COST), queue 0 of 1.5 CPU on CPU0.  Its lone hot queue's set
 * is CPUs 1-15; then half its steered work turns into one flow hashed at
 * phi 0.6 (index floor(phi * len) of any set, as the kernel's
 * reciprocal_scale()): it lands at index 9 of 15, CPU10 on node 1, at 1.3
 * times.  A set of 15 with a local CPU at index 9 needs 15 CPUs besides
 * CPU0 and CPU10, and there are 14: the flow stayed remote.  phi is in
 * [9/15, 10/15), so a set of 10 puts it at index 6 whatever it is: a set
 * of 10 with a cleared local CPU there brings it home. */
static void test_rps_flow_any_size(void **state) {
        struct fx f;
        cpuset_t node0;
        unsigned n_rps = 0;
        double peak = 0;
        int flow_cpu = -1;

        (void) state;
        fx_init(&f, 16, 2, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.rfs = false;
        f.remote_cost = POL_REMOTE_COST;
        fx_add_nic(&f, "eth0", 0, 16, true, 30, true, false);
        for (int q = 0; q < 16; q++) {
                fx_place(&f, 30 + (unsigned) q, q);
                f.q[0][q] = (struct fx_queue_model){ 0.25, 4000 };
        }
        f.q[0][0] = (struct fx_queue_model){ .work = 1.5, .rate = 8000, .share = 0.27, .flow_at = 0.6 };
        node0 = f.topo.nodes[0].cpus;
        for (int k = 1; k <= 300; k++) {
                if (k == 40)
                        f.q[0][0].elephant = 0.5;
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                        if (f.l.v[a].type == KNOB_RPS)
                                n_rps++;
                }
                if (k > 250)
                        peak = MAX(peak, fx_peak_now(&f));
        }
        {
                const cpuset_t *set = KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus);
                int at = (int) (0.6 * cpuset_count(set)), k = 0;

                CPUSET_FOREACH(c, set)
                        if (k++ == at)
                                flow_cpu = c;
        }
        print_message("    flow on CPU%d, %u RPS changes, peak %.3f\n", flow_cpu, n_rps, peak);
        assert_true(flow_cpu >= 0 && cpuset_isset(&node0, flow_cpu));
        assert_true(n_rps <= 3);
        /* the flow (0.55) local beside the rest's share, not 0.76 */
        assert_true(peak < 0.68);
        fx_free(&f);
}

/* A single-queue NIC's set judged as loads change: 2 CPUs, eth0's one
 * queue (IRQ on CPU0, 10% of it interrupt/NAPI work) at 80% of a CPU,
 * CPU1 with 25% of other work.  RPS over both CPUs is right then (CPU0
 * about 50%, CPU1 61% against 80% on CPU0 alone); after the NIC's load
 * falls to 20% CPU1 is the peak only with its share (34% against 25% with
 * the work back on CPU0), so the set is given back, once, and it comes
 * back when the load rises again.  The old rule kept the first set for
 * good. */
static void test_rps_single_rejudged(void **state) {
        struct fx f;
        cpuset_t both;
        double peak = 0;
        unsigned changes = 0;

        (void) state;
        cpuset_parse_list("0-1", &both);
        fx_init(&f, 2, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.rfs = false;
        f.rps_cost = 0.07;
        fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
        f.q[0][0] = (struct fx_queue_model){ .work = 0.8, .rate = 8000, .share = 0.1 };
        f.base[1] = 0.25;
        assert_int_equal(fx_ticks(&f, 1, 60), 0);
        assert_true(cpuset_equal(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus), &both));
        f.q[0][0].work = 0.2;
        for (int k = 61; k <= 200; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                changes += count_type(&f.l, KNOB_RPS);
                if (k > 150)
                        peak = MAX(peak, MAX(f.load.cpus[0].softirq, f.load.cpus[1].softirq));
        }
        assert_true(cpuset_kept_empty(&fx_queue(&f, "eth0", 0)->rps_cpus));
        assert_int_equal(changes, 1);
        assert_true(peak < 0.26);
        f.q[0][0].work = 0.8;
        assert_int_equal(fx_ticks(&f, 201, 300), 0);
        assert_true(cpuset_equal(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus), &both));
        fx_free(&f);
}

/* A single-queue set's change that waits for the dwell is judged when the
 * dwell ends.  The host of test_rps_single_rejudged paced as the engine
 * runs the policy (full_tick_due(): full while policy_pace() is not calm,
 * when the report's due time comes while it is measuring, else every
 * ENGINE_FULL_TICK_EVERY calm ticks; the other ticks' loads to
 * policy_observe()), with 1% noise; the load falls at tick 15, within the
 * dwell of the set's first judgement.  No CPU turns hot and the full ticks
 * after the fall come before the dwell's end, so the set's rejudge waited
 * for the periodic audit (23023: 4 CPUs, a x0.38 step; the set changed 9
 * ticks late, 1.29 times the bound for 33 ticks). */
static void test_rps_single_dwell_due(void **state) {
        struct fx f;
        uint64_t seed = 0x5e7f0a11ULL;
        double noise[FX_MAX_CPUS];
        unsigned changes = 0, first = 0, calm_run = 0, full_late = 0;
        uint64_t set_usec = 0;

        (void) state;
        fx_init(&f, 2, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.rfs = false;
        f.rps_cost = 0.07;
        fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
        f.q[0][0] = (struct fx_queue_model){ .work = 0.8, .rate = 8000, .share = 0.1 };
        f.base[1] = 0.25;
        for (unsigned k = 1; k <= 200; k++) {
                bool full;

                if (k == 15)
                        f.q[0][0].work = 0.2;
                for (int c = 0; c < f.n_cpus; c++)
                        noise[c] = 1 + 0.01 * (2 * fx_rand(&seed) - 1);
                fx_model(&f, noise);
                full = k <= 2 || policy_pace(&f.cfg, f.st, &f.rep, &f.load) != POLICY_PACE_CALM ||
                       (f.rep.measuring && (calm_run + 1 >= ENGINE_MEASURE_FULL_EVERY ||
                                            (f.rep.due_usec > 0 && (uint64_t) k * SEC >= f.rep.due_usec))) ||
                       calm_run + 1 >= ENGINE_FULL_TICK_EVERY;
                if (!full) {
                        calm_run++;
                        policy_observe(f.st, &f.cfg, &f.load, (uint64_t) k * SEC);
                        continue;
                }
                calm_run = 0;
                full_late += k > 100;
                assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        print_message("    at %3u: %s\n", k, f.l.v[a].reason);
                if (count_type(&f.l, KNOB_RPS) > 0 && k < 15)
                        set_usec = (uint64_t) k * SEC;
                if (k >= 15) {
                        if (count_type(&f.l, KNOB_RPS) > 0 && first == 0)
                                first = k;
                        changes += count_type(&f.l, KNOB_RPS);
                }
        }
        print_message("    set last changed at %u s, given back at tick %u, %u changes, %u full ticks of the last "
                      "100\n",
                      (unsigned) (set_usec / SEC), first, changes, full_late);
        assert_true(cpuset_kept_empty(&fx_queue(&f, "eth0", 0)->rps_cpus));
        assert_int_equal(changes, 1);
        /* at the dwell's end, within a tick */
        assert_true((uint64_t) first * SEC <= set_usec + f.cfg.min_dwell_usec + SEC);
        /* stationary after: the audits alone are full */
        assert_true(full_late <= 100 / ENGINE_FULL_TICK_EVERY + 1);
        fx_free(&f);
}

/* A single-queue NIC's IRQ CPU beside two storage IRQs (the random host
 * 19010 in small): 2 CPUs, eth0's one queue (half of it interrupt/NAPI
 * work) at 13% of a CPU with its IRQ on CPU0, two NVMe IRQs of 8% each
 * (30% of it interrupt time, twice eth0's interrupts/s) on CPU0 too,
 * CPU1 with 17% of other work.  RPS starts over both CPUs before any
 * load is read (CPU0 26%, CPU1 20%); judged once measured, the set
 * leaves CPU0 out (CPU0 22.5%, CPU1 24%).  The storage IRQs' interrupt
 * time was read as eth0's work (its protocol work 12.5% against 6.5%),
 * so CPU1 alone projected 27% and the set stayed: 26%. */
static void test_rps_single_other_irq_time(void **state) {
        struct fx f;
        double peak = 0;

        (void) state;
        fx_init(&f, 2, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.rfs = false;
        f.cfg.other_irqs = false;
        f.rps_cost = 0.05;
        fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
        f.q[0][0] = (struct fx_queue_model){ .work = 0.13, .rate = 4000, .share = 0.5 };
        fx_add_irq(&f, 61, "nvme0q1", -1, -1, INVENTORY_IRQ_NONE);
        fx_add_irq(&f, 62, "nvme0q2", -1, -1, INVENTORY_IRQ_NONE);
        KEEP(&fx_irq(&f, 61)->affinity, cpuset_single(0));
        KEEP(&fx_irq(&f, 62)->affinity, cpuset_single(0));
        f.other[f.n_other++] = (struct fx_other_model){ 61, 4000, 0.08 };
        f.other[f.n_other++] = (struct fx_other_model){ 62, 4000, 0.08 };
        f.other_hard = 0.3;
        f.base[1] = 0.17;
        /* the start, before any load is read */
        assert_int_equal(fx_step(&f, 0), 0);
        assert_int_equal(fx_ticks(&f, 1, 60), 0);
        for (int k = 0; k < 10; k++)
                peak += fx_peak_now(&f) / 10;
        print_message("    eth0 RPS over CPUs %s, IRQ CPU%d, peak %.3f\n",
                      cpuset_kept_empty(&fx_queue(&f, "eth0", 0)->rps_cpus) ? "none" : "set",
                      fx_irq_cpu(&f, 60), peak);
        assert_int_equal(fx_irq_cpu(&f, 60), 0);
        assert_int_equal(cpuset_only(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus)), 1);
        assert_true(peak < 0.245);
        fx_free(&f);
}

/* A single-queue NIC's queue of one big flow under a steady load: 8
 * CPUs, eth0's one queue (IRQ on CPU0, 10% of it interrupt/NAPI work) at
 * 1.4 CPUs, half of its steered work one flow (the fixture hashes it to
 * the set's last CPU), 20% of other work on every CPU.  Whichever set,
 * the flow lands whole on one CPU of it: the set CPU it makes busiest is
 * not busy with other work, and leaving it out only hands the flow on.
 * The old rule dropped that CPU at every rejudge (CPUs 0-6 and 0-5,7 in
 * turn every min_dwell, "projected peak 92% -> 61%"); the set stays. */
static void test_rps_single_flow(void **state) {
        struct fx f;
        unsigned changes = 0;

        (void) state;
        fx_init(&f, 8, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.rfs = false;
        fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
        f.q[0][0] = (struct fx_queue_model){ .work = 1.4, .rate = 8000, .share = 0.1, .elephant = 0.5 };
        for (int c = 0; c < 8; c++)
                f.base[c] = 0.2;
        for (int k = 1; k <= 300; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                if (k > 90)
                        changes += count_type(&f.l, KNOB_RPS);
        }
        assert_int_equal(changes, 0);
        fx_free(&f);
}

/* Spilling past a saturated node: 2 nodes of 8 CPUs, a NIC on node 0
 * with 4 queues of 1.2 CPUs each (15% of it interrupt/NAPI work), half of
 * every CPU busy with user work.  Node 0 cannot take the 4.8 CPUs below
 * the level, so the RPS sets reach node 1's CPUs; the busiest CPU ends
 * within 15% of the bound that counts remote work at POL_REMOTE_COST
 * (what the fixture's model, without that cost, shows is below it).
 * Without the spill node 0's CPUs stay saturated. */
static void test_rps_spill_remote(void **state) {
        struct fx f;
        cpuset_t node1, used;
        double peak = 0, item = 0.15 * 1.2, total = 4 * 1.2;
        /* node 0 at L, node 1 at L with the rest at its remote cost */
        double lb = MAX(item, (total + (POL_REMOTE_COST - 1) * total / 2) / 16);

        (void) state;
        fx_init(&f, 16, 2, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        fx_add_nic(&f, "eth0", 0, 4, true, 30, true, false);
        for (int q = 0; q < 4; q++)
                f.q[0][q] = (struct fx_queue_model){ 1.2, 20000, 0.15 };
        for (int c = 0; c < 16; c++)
                f.user[c] = 0.5;
        assert_int_equal(fx_ticks(&f, 1, 150), 0);
        cpuset_zero(&used);
        for (int q = 0; q < 4; q++)
                cpuset_or(&used, &used, KEPT(&fx_queue(&f, "eth0", q)->rps_cpus));
        node1 = f.topo.nodes[1].cpus;
        for (int k = 0; k < 10; k++)
                peak += fx_peak_now(&f) / 10;
        print_message("    peak %.3f, bound %.3f (%.2f), RPS CPUs on node 1: %d\n", peak, lb, peak / lb,
                      cpuset_count(&used) - cpuset_count(&f.topo.nodes[0].cpus));
        assert_true(cpuset_intersects(&used, &node1));
        if (peak > 1.15 * lb)
                fail_msg("peak %.3f, %.2f times the bound %.3f", peak, peak / lb, lb);
        fx_free(&f);
}

/* A step past a saturated node (the random host 7034 in small): 2 nodes
 * of 8 CPUs, 16 queues of a NIC on node 0, user work on every CPU, work
 * off node 0 at POL_REMOTE_COST.  Node 0 saturates at the start, half the
 * IRQs go to node 1; then every queue's work grows 1.71 times.  The IRQ
 * CPUs of queues that already had RPS looked cool, and every saturated
 * CPU's RPS set took the same few of them (a saturated CPU skipped the
 * min_gain check): those ended saturated with several times the work they
 * could do.  A saturated CPU's set may not
 * end as busy as the CPU looks: the peak stays near the bound. */
static void test_rps_step_saturated(void **state) {
        const int n_cpus = 16, nq = 16;
        const double work = 0.38, step = 1.71, user = 0.39;
        struct fx f;
        double peak = 0, total = nq * work * step, lb;

        (void) state;
        /* node 0 at L, node 1 at L with the rest at its remote cost */
        lb = (total + (POL_REMOTE_COST - 1) * total / 2) / n_cpus;
        fx_init(&f, n_cpus, 2, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        fx_add_nic(&f, "eth0", 0, nq, true, 30, true, false);
        f.remote_cost = POL_REMOTE_COST;
        for (int q = 0; q < nq; q++)
                f.q[0][q] = (struct fx_queue_model){ work, 15000, 0.23 };
        for (int c = 0; c < n_cpus; c++)
                f.user[c] = user;
        assert_int_equal(fx_ticks(&f, 1, 30), 0);
        for (int q = 0; q < nq; q++)
                f.q[0][q].work = work * step;
        assert_int_equal(fx_ticks(&f, 31, 120), 0);
        for (int k = 0; k < 10; k++)
                peak += fx_peak_now(&f) / 10;
        print_message("    peak %.3f, bound %.3f (%.2f)\n", peak, lb, peak / lb);
        if (peak > 1.2 * lb)
                fail_msg("peak %.3f, %.2f times the bound %.3f", peak, peak / lb, lb);
        fx_free(&f);
}

/* A wider set of CPUs that drop packets is judged by demand (seed 20009:
 * 12 CPUs, three queues stepping x1.75 to 5.7 CPUs each, each IRQ CPU
 * left out of its set and saturated).  A set CPU serves 100% at any width
 * and so does the IRQ CPU: judged by load, no widening gained, and the
 * set narrowed while its queue was small stayed on two CPUs at 1.99
 * beside an idle CPU, the other sets' CPUs at 1.33.  Judged by the host's
 * peak demand the busiest set takes the idle CPU, and no other set widens
 * for it (the set CPUs' demand even within 10%, the IRQ CPUs' own work
 * the rest). */
static void test_rps_widen_demand(void **state) {
        const int n_cpus = 12, nq = 3;
        struct fx f;
        double lo = HUGE_VAL, hi = 0, d[FX_MAX_CPUS];
        unsigned after = 0;

        (void) state;
        fx_init(&f, n_cpus, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.drops = true;
        f.rps_cost = 0.05;
        fx_add_nic(&f, "eth0", 0, nq, true, 30, true, false);
        for (int q = 0; q < nq; q++) {
                fx_place(&f, 30 + (unsigned) q, q);
                f.q[0][q] = (struct fx_queue_model){ q == 0 ? 0.95 : 3.3, 20000, 0.3 };
        }
        for (int k = 1; k <= 240; k++) {
                if (k == 61)
                        for (int q = 0; q < nq; q++)
                                f.q[0][q].work = 5.7;
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        if (f.l.v[a].type == KNOB_RPS) {
                                print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                                after += k > 60;
                        }
        }
        fx_model(&f, NULL);
        print_message("    demand");
        for (int c = 0; c < n_cpus; c++) {
                d[c] = (f.load.cpus[c].softirq + f.load.cpus[c].irq) / (1 - f.load.cpus[c].drop);
                print_message(" %.2f", d[c]);
                if (c >= nq) {
                        lo = MIN(lo, d[c]);
                        hi = MAX(hi, d[c]);
                }
        }
        print_message("\n");
        assert_int_equal(after, 1);
        assert_int_equal(cpuset_count(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus)), 3);
        if (hi > 1.1 * lo)
                fail_msg("set CPUs' demand %.2f-%.2f", lo, hi);
        fx_free(&f);
}

/* A lone queue whose IRQ CPU drops packets gets a set sized by what the
 * CPU asks (pol_demand()), not by the 100% it served: the random host
 * 20009 (three queues of 3.3-5.7 CPUs on 12) sized rx-0's set from 0.69
 * CPU of protocol work on two CPUs while CPU0 asked for 3.6, and the
 * idle CPU beside it waited min_dwell for the widening (a 14-tick hole).
 * One queue of 5.7 CPUs on 16 here: sized by the 100% CPU0 served, its
 * set took 10 CPUs at 0.49 each; by demand, its set CPUs end within 10%
 * of the level its work makes, at once and for good. */
static void test_rps_start_demand(void **state) {
        const int n_cpus = 16, nq = 2;
        struct fx f;
        unsigned n = 0;
        double hi = 0;

        (void) state;
        fx_init(&f, n_cpus, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.drops = true;
        f.rps_cost = 0.05;
        fx_add_nic(&f, "eth0", 0, nq, true, 30, true, false);
        for (int q = 0; q < nq; q++) {
                fx_place(&f, 30 + (unsigned) q, q);
                f.q[0][q] = (struct fx_queue_model){ q == 0 ? 5.7 : 0.02, 20000, 0.15 };
        }
        for (int k = 1; k <= 120; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        if (f.l.v[a].type == KNOB_RPS) {
                                print_message("    at %3ds: %s\n", k, f.l.v[a].reason);
                                n++;
                        }
        }
        fx_model(&f, NULL);
        CPUSET_FOREACH(c, KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus))
                hi = MAX(hi, f.load.cpus[c].softirq + f.load.cpus[c].irq);
        print_message("    rx-0 over %d CPUs, busiest at %.2f\n", cpuset_count(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus)),
                      hi);
        assert_int_equal(n, 1);
        if (hi > 1.1 * 5.72 / n_cpus)
                fail_msg("set CPU at %.2f", hi);
        fx_free(&f);
}

/* The IRQ CPU leaves its own RPS set when its interrupt and NAPI work
 * leave it busiest with a share of the protocol work: 2 CPUs on 2 nodes
 * (the random host 1027), one queue of 1.2 CPUs on node 1 of which 65%
 * stays on its IRQ CPU; with the prior's 40% and CPU0's share at its
 * remote cost the first set takes the IRQ CPU in, which then saturates
 * (and so cannot measure the share).  At the end CPU1 carries only what
 * RPS cannot move. */
static void test_rps_irq_cpu_leaves(void **state) {
        struct fx f;

        (void) state;
        fx_init(&f, 2, 2, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.single_queue_rps = false;
        f.cfg.rps_exclude_irq_rate = 0;
        f.cfg.initial_layout = false;
        fx_add_nic(&f, "eth0", 1, 1, true, 30, true, false);
        fx_place(&f, 30, 1);
        f.q[0][0] = (struct fx_queue_model){ 1.2, 5000, 0.65 };
        assert_int_equal(fx_ticks(&f, 1, 120), 0);
        print_message("    RPS over %d CPU(s), CPU0 %.2f, CPU1 %.2f\n", cpuset_count(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus)),
                      f.load.cpus[0].softirq, f.load.cpus[1].softirq);
        assert_int_equal(cpuset_only(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus)), 0);
        assert_true(f.load.cpus[1].softirq < 0.8);
        fx_free(&f);
}

/* rfs = yes: the flow count is set with the first RPS and put back when
 * RPS goes back to the original, not before; a flow table left behind
 * would keep steering flows to their readers' CPUs with rps_cpus empty. */
static void test_rfs_back(void **state) {
        struct fx f;
        unsigned n = 0, when[4] = { 0 };
        uint32_t value[4] = { 0 };

        (void) state;
        setup_lone(&f, 5000);
        f.cfg.rfs = true;
        for (int k = 1; k <= 400; k++) {
                if (k == 150)
                        f.q[0][0].work = 0.20;
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        const struct action *x = &f.l.v[a];
                        if (x->type != KNOB_FLOWCNT)
                                continue;
                        assert_string_equal(x->nic, "eth0");
                        assert_int_equal(x->queue, 0);
                        assert_true(n < ELEMENTSOF(when));
                        when[n] = (unsigned) k;
                        value[n++] = x->value;
                        /* back only in the tick RPS goes back, after it */
                        if (x->value == 0) {
                                assert_true(a > 0);
                                assert_int_equal(f.l.v[a - 1].type, KNOB_RPS);
                                assert_true(cpuset_empty(KEPT(&f.l.v[a - 1].cpus)));
                                assert_int_equal(x->why, ACTION_REASON_BACK_TO_ORIGINAL);
                        }
                }
        }
        assert_int_equal(n, 2);
        assert_int_equal(when[0], 3);
        assert_int_equal(value[0], 8192);
        assert_true(when[1] > 150);
        assert_int_equal(value[1], 0);
        assert_int_equal(fx_queue(&f, "eth0", 0)->rps_flow_cnt, 0);
        assert_true(cpuset_empty(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus)));
        assert_int_equal(f.rep.n_rps_queues, 0);
        fx_free(&f);
}

/* A reload that turns rps, rfs, xps or manage off gives back what we set
 * there, once, with the reason; the rest stays. */
static void test_reload_gives_back(void **state) {
        static const struct {
                const char *what;
                bool rps, rfs, manage;
                const char *want;
                const char *reason;
        } cases[] = {
                { "rps = no: RPS and its flow count", false, true, true, "rps eth0/0>;flowcnt eth0/0>0;",
                  "rps = no for eth0: RPS back to the original" },
                { "rfs = no: the flow count only", true, false, true, "flowcnt eth0/0>0;",
                  "rfs = no for eth0: rps_flow_cnt back to the original" },
                { "manage = no: both", true, true, false, "rps eth0/0>;flowcnt eth0/0>0;",
                  "manage = no for eth0: RPS back to the original" },
                { "nothing turned off: nothing", true, true, true, "", NULL },
        };
        struct fx f;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct config_interface ci = { .match = "eth0", .manage = cases[i].manage,
                                               .rps = cases[i].rps ? TRI_INHERIT : TRI_NO,
                                               .xps = TRI_INHERIT, .rfs = cases[i].rfs ? TRI_INHERIT : TRI_NO };

                setup_lone(&f, 5000);
                f.cfg.rfs = true;
                assert_int_equal(fx_ticks(&f, 1, 3), 0);
                expect_actions(cases[i].what, &f.l, "rps eth0/0>4-5;sockflow>32768;flowcnt eth0/0>8192;");
                assert_int_equal(fx_ticks(&f, 4, 10), 0);
                /* the reload, as the daemon does it */
                f.cfg.interfaces = &ci;
                f.cfg.n_interfaces = 1;
                policy_reset(f.st);
                assert_int_equal(fx_ticks(&f, 11, 11), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                for (size_t k = 0; k < f.l.n; k++)
                        assert_int_equal(f.l.v[k].why, ACTION_REASON_BACK_TO_ORIGINAL);
                /* the prose names the key that gave it back */
                if (cases[i].reason && strcmp(f.l.v[0].reason, cases[i].reason) != 0)
                        fail_msg("%s: reason '%s'", cases[i].what, f.l.v[0].reason);
                assert_int_equal(fx_ticks(&f, 12, 40), 0);
                expect_actions(cases[i].what, &f.l, "");
                assert_int_equal(fx_queue(&f, "eth0", 0)->rps_flow_cnt, cases[i].want[0] ? 0 : 8192);
                assert_int_equal(cpuset_empty(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus)),
                                 !cases[i].rps || !cases[i].manage);
                f.cfg.interfaces = NULL;
                f.cfg.n_interfaces = 0;
                fx_free(&f);
        }

        /* xps = no after the layout set XPS */
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 2, true, 30, false, true);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        expect_actions("layout with XPS", &f.l, "irq 30>0;irq 31>1;xps eth0/0>0;xps eth0/1>1;");
        f.cfg.xps = false;
        policy_reset(f.st);
        assert_int_equal(fx_step(&f, 2 * SEC), 0);
        expect_actions("xps = no", &f.l, "xps eth0/0>;xps eth0/1>;");
        assert_int_equal(f.l.v[0].why, ACTION_REASON_BACK_TO_ORIGINAL);
        assert_int_equal(fx_step(&f, 3 * SEC), 0);
        expect_actions("xps = no, then", &f.l, "");
        fx_free(&f);
}

/* ---- relative balancing, with the shipped defaults ---- */

/* balance_ratio: CPUs far busier than the mean get the same treatment as
 * hot ones, below hot_enter, from balance_floor above the mean on.  Each case runs the
 * closed loop with +/-10% noise (or the case's) per CPU and tick, into the
 * averages the policy reads (the daemon's smoothing would halve it): the
 * spread has to reach within 20% of the mean (or balance_floor) and then
 * stay put.  (The
 * simulator's benchmark, with the daemon's smoothing, is where the 15%
 * target is measured.) */
static void test_balance_relative(void **state) {
        static const struct {
                const char *what;
                int n_cpus, nq;
                double work, base;
                bool ratio_off;
                unsigned max_rps;        /* RPS changes allowed over the whole run */
                bool spread;             /* must end within 20% of the mean */
                double noise;            /* +- per CPU and tick; 0: 10% */
        } cases[] = {
                { "8 queues at 75% on 16 CPUs (8 idle): spread", 16, 8, 0.75, 0.0, false, 8, true },
                { "16 queues at 50% on 32 CPUs (16 idle): spread", 32, 16, 0.50, 0.0, false, 16, true },
                { "4 queues at 30% on 8 CPUs (4 idle): spread", 8, 4, 0.30, 0.0, false, 4, true },
                /* a light host: the peak against what the best placement
                 * gets, not against a fixed floor */
                { "4 queues at 8% on 16 CPUs (12 idle): spread", 16, 4, 0.08, 0.0, false, 4, true },
                /* ... but a spread light load is left to its noise */
                { "16 queues at 3% on 16 CPUs: balanced, left alone", 16, 16, 0.03, 0.0, false, 0, false },
                { "8 queues at 50% on 8 CPUs: balanced, left alone", 8, 8, 0.50, 0.0, false, 0, false },
                { "8 queues at 70% on 16 CPUs: spread", 16, 8, 0.70, 0.0, false, 8, true },
                /* noise beyond min_gain: the sets' CPUs cross the level a
                 * steady load would be hot at, and are not hot (the peak
                 * is the noise's) */
                { "8 queues at 70% on 16 CPUs, +-18% noise: spread once, then left alone", 16, 8, 0.70, 0.0, false,
                  8, false, 0.18 },
                { "balance_ratio = 0: 8 queues at 70% on 16 CPUs left alone", 16, 8, 0.70, 0.0, true, 0, false },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x2545f4914f6cdd1dULL + i;
                unsigned moves = 0, rps = 0, late = 0;
                double noise[FX_MAX_CPUS], peak = 0, sum = 0;

                fx_init(&f, cases[i].n_cpus, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                if (cases[i].ratio_off)
                        f.cfg.balance_ratio = 0;
                fx_add_nic(&f, "eth0", 0, cases[i].nq, true, 30, true, false);
                for (int q = 0; q < cases[i].nq; q++)
                        f.q[0][q] = (struct fx_queue_model){ cases[i].work, 5000 };
                assert_int_equal(fx_step(&f, 0), 0);
                for (unsigned k = 1; k <= 1000; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + (cases[i].noise > 0 ? cases[i].noise : 0.10) * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        moves += count_type(&f.l, KNOB_IRQ);
                        rps += count_type(&f.l, KNOB_RPS);
                        if (k > 60)
                                late += f.l.n;
                }
                fx_model(&f, NULL);
                for (int c = 0; c < f.n_cpus; c++) {
                        double l = f.load.cpus[c].softirq;
                        peak = MAX(peak, l);
                        sum += l;
                }
                print_message("    %s: %u RPS changes, peak %.0f%%, mean %.0f%%\n", cases[i].what, rps, 100 * peak,
                              100 * sum / f.n_cpus);
                if (moves != 0 || late != 0)
                        fail_msg("%s: %u IRQ moves, %u actions after the first minute", cases[i].what, moves, late);
                if (rps > cases[i].max_rps || (cases[i].spread && rps == 0))
                        fail_msg("%s: %u RPS changes", cases[i].what, rps);
                /* a light load only to within balance_floor of the mean */
                if (cases[i].spread && peak > MAX(1.2 * sum / f.n_cpus, sum / f.n_cpus + f.cfg.balance_floor))
                        fail_msg("%s: peak %.3f over 1.2 x mean %.3f", cases[i].what, peak, sum / f.n_cpus);
                fx_free(&f);
        }
}

/* A stationary excess below balance_ratio: six queues on five CPUs of
 * six, two of them stacked on CPU0 at 1.44 times the mean, with 1%
 * noise.  1.5 x mean does not make CPU0 hot, but its load is steady, so
 * the excess over the accepted level is no noise: the small queue moves
 * to an idle CPU, once, and nothing changes after. */
static void test_balance_stationary_excess(void **state) {
        static const double works[6] = { 0.30, 0.08, 0.30, 0.30, 0.30, 0.30 };
        static const int cpus[6] = { 0, 0, 1, 2, 3, 4 };
        struct fx f;
        uint64_t seed = 0x51f15eedULL;
        double noise[FX_MAX_CPUS], peak = 0, sum = 0;
        unsigned moves = 0, late = 0;

        (void) state;
        fx_init(&f, 6, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        fx_add_nic(&f, "eth0", 0, 6, true, 30, true, false);
        for (int q = 0; q < 6; q++) {
                f.q[0][q] = (struct fx_queue_model){ works[q], 1000 + 20000 * works[q] };
                fx_place(&f, 30 + (unsigned) q, cpus[q]);
        }
        for (unsigned k = 1; k <= 300; k++) {
                for (int c = 0; c < f.n_cpus; c++)
                        noise[c] = 1 + 0.01 * (2 * fx_rand(&seed) - 1);
                fx_model(&f, noise);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                moves += count_type(&f.l, KNOB_IRQ);
                if (k > 150)
                        late += f.l.n;
        }
        fx_model(&f, NULL);
        for (int c = 0; c < f.n_cpus; c++) {
                peak = MAX(peak, f.load.cpus[c].softirq);
                sum += f.load.cpus[c].softirq;
        }
        print_message("    %u IRQ moves, CPU0 %.0f%%, peak %.0f%%, mean %.0f%%\n", moves,
                      100 * f.load.cpus[0].softirq, 100 * peak, 100 * sum / f.n_cpus);
        if (moves != 1)
                fail_msg("%u IRQ moves, want the small queue's one", moves);
        assert_int_equal(fx_irq_cpu(&f, 30), 0);
        assert_int_equal(fx_irq_cpu(&f, 31), 5);
        if (peak > 1.2 * sum / f.n_cpus)
                fail_msg("peak %.3f over 1.2 x mean %.3f", peak, sum / f.n_cpus);
        if (late > 0)
                fail_msg("%u actions in the second half of a stationary run", late);
        fx_free(&f);
}

/* A level held for days (level_n large, new samples weighing little in
 * the noise estimate) still follows the load: noise that triples at the
 * same mean, and a slow ramp, each start the level over within a few
 * hundred samples, so the thresholds sized by the noise are not frozen at
 * what an old level measured. */
static void test_noise_long_level_follows(void **state) {
        struct config cfg = { .smoothing = 0.5, .hot_samples = 2 };
        struct pol_cpu pc = { 0 };
        uint64_t seed = 0x1e7e1ULL;
        double L = 0.40, before, after;
        unsigned k, restarted_at = 0;

        (void) state;
        /* a day and more of 4 s samples at one level, noise 1% of a CPU */
        for (k = 0; k < 30000; k++) {
                L = 0.5 * (0.40 + 0.01 * (2 * fx_rand(&seed) - 1) * sqrt(3)) + 0.5 * L;
                pol_noise_sample(&pc, &cfg, L, false);
        }
        assert_true(pc.level_n > 20000);
        before = sqrt(pc.noise_var);
        /* the same mean, three times the noise */
        for (k = 0; k < 1000; k++) {
                L = 0.5 * (0.40 + 0.03 * (2 * fx_rand(&seed) - 1) * sqrt(3)) + 0.5 * L;
                pol_noise_sample(&pc, &cfg, L, false);
                if (!restarted_at && pc.level_n < 1000)
                        restarted_at = k + 1;
        }
        after = sqrt(pc.noise_var);
        assert_true(restarted_at > 0 && restarted_at < 500);
        assert_true(after > 2 * before);
        /* a ramp of 0.01% of a CPU a sample: the level keeps within the
         * noise of the load, not at the mean since the ramp began */
        for (k = 0; k < 2000; k++) {
                double mean = 0.40 + 0.0001 * k;

                L = 0.5 * (mean + 0.03 * (2 * fx_rand(&seed) - 1) * sqrt(3)) + 0.5 * L;
                pol_noise_sample(&pc, &cfg, L, false);
        }
        assert_true(fabs(pol_cpu_judged(&pc, L) - 0.60) < 0.04);
}

/* The same host paced as the engine runs the policy (engine.c,
 * full_tick_due(): full at the first two ticks, while policy_pace() is not
 * calm and at every ENGINE_FULL_TICK_EVERY-th, the other ticks' loads to
 * policy_observe()).  The pace must be busy whenever a full tick would
 * count a CPU towards hot, by the policy's own level: CPU0's steady excess
 * is under the scaled hot_enter, and with the pace judged by that alone
 * the move waited for the periodic audit (tick 30).  It comes once the
 * noise is known (10 samples), and a host with no excess stays calm. */
static void test_pace_steady_level(void **state) {
        static const struct {
                const char *what;
                double works[6];
                int cpus[6];
                unsigned moves;
        } cases[] = {
                { "a steady excess under hot_enter: moved before the audit",
                  { 0.30, 0.08, 0.30, 0.30, 0.30, 0.30 }, { 0, 0, 1, 2, 3, 4 }, 1 },
                { "no excess: calm but the audits", { 0.26, 0.26, 0.26, 0.26, 0.26, 0.26 }, { 0, 1, 2, 3, 4, 5 }, 0 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x9ace5eedULL;
                double noise[FX_MAX_CPUS];
                unsigned moves = 0, first_move = 0, full_late = 0, calm_run = 0;

                fx_init(&f, 6, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.cfg.initial_layout = false;
                fx_add_nic(&f, "eth0", 0, 6, true, 30, true, false);
                for (int q = 0; q < 6; q++) {
                        f.q[0][q] = (struct fx_queue_model){ cases[i].works[q], 1000 + 20000 * cases[i].works[q] };
                        fx_place(&f, 30 + (unsigned) q, cases[i].cpus[q]);
                }
                for (unsigned k = 1; k <= 300; k++) {
                        bool full;

                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + 0.01 * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        full = k <= 2 || policy_pace(&f.cfg, f.st, &f.rep, &f.load) != POLICY_PACE_CALM ||
                               (f.rep.measuring && calm_run + 1 >= ENGINE_MEASURE_FULL_EVERY) ||
                               calm_run + 1 >= ENGINE_FULL_TICK_EVERY;
                        if (!full) {
                                calm_run++;
                                policy_observe(f.st, &f.cfg, &f.load, (uint64_t) k * SEC);
                                continue;
                        }
                        calm_run = 0;
                        full_late += k > 150;
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                        if (count_type(&f.l, KNOB_IRQ) > 0 && first_move == 0)
                                first_move = k;
                        moves += count_type(&f.l, KNOB_IRQ);
                }
                print_message("    %s: %u IRQ moves, the first at tick %u, %u full ticks of the last 150\n",
                              cases[i].what, moves, first_move, full_late);
                if (moves != cases[i].moves)
                        fail_msg("%s: %u IRQ moves, want %u", cases[i].what, moves, cases[i].moves);
                if (moves > 0 && first_move >= ENGINE_FULL_TICK_EVERY)
                        fail_msg("%s: the move came at tick %u, with the periodic audit", cases[i].what, first_move);
                /* stationary after: the audits alone are full */
                if (full_late > 150 / ENGINE_FULL_TICK_EVERY)
                        fail_msg("%s: %u full ticks in the last 150", cases[i].what, full_late);
                fx_free(&f);
        }
}

/* A step of the load is no noise (docs/DESIGN.md "Policy"): the samples
 * that end in the level starting over stay out of the noise estimate, as
 * our own moves' change does; samples beyond the noise that the level
 * outlasts are noise.  14002 (2 CPUs, x0.32 at tick 38): the step held
 * the least gain at balance_floor (5%) past the only audit after it, so
 * the single-queue set's rejudge (4.2% gain) waited (1.35; 1.18 now). */
static void test_noise_step_not_noise(void **state) {
        static const struct {
                const char *what;
                double step;     /* the load's factor at sample 60 */
                int spike;       /* a kick of 4 deviations every spike samples from 60, else 0 */
                double lo, hi;   /* the estimate's deviation after, over the true one */
        } cases[] = {
                { "a step x0.32: the noise stays the noise", 0.32, 0, 0.5, 2.0 },
                { "a step x2: the noise stays the noise", 2.0, 0, 0.5, 2.0 },
                { "kicks beyond the noise the level outlasts are noise", 1.0, 10, 1.1, 3.0 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct config c = { 0 };
                struct pol_cpu pc = { 0 };
                uint64_t seed = 0x57e9ULL;
                double a, x = 0.30, sd = 0.004, var_before = 0, sm = 0;
                double truth;

                fx_shipped_defaults(&c);
                a = c.smoothing;
                /* the smoothed sample's deviation for this raw noise */
                truth = sd * sqrt(a / (2 - a));
                for (int k = 0; k < 120; k++) {
                        double raw;

                        if (k == 60)
                                x *= cases[i].step;
                        raw = x + sd * sqrt(3.0) * (2 * fx_rand(&seed) - 1);
                        sm = k == 0 ? raw : sm + a * (raw - sm);
                        if (k >= 60 && cases[i].spike && k % cases[i].spike == 0)
                                sm += 4 * truth;
                        if (k == 59)
                                var_before = pc.noise_var;
                        pol_noise_sample(&pc, &c, sm, false);
                }
                print_message("    %s: deviation %.4f before, %.4f after (true %.4f)\n", cases[i].what, sqrt(var_before),
                              sqrt(pc.noise_var), truth);
                if (sqrt(pc.noise_var) < cases[i].lo * sqrt(var_before) ||
                    sqrt(pc.noise_var) > cases[i].hi * sqrt(var_before))
                        fail_msg("%s: deviation %.4f after, %.4f before: want %.2f-%.2f times", cases[i].what,
                                 sqrt(pc.noise_var), sqrt(var_before), cases[i].lo, cases[i].hi);
                config_free(&c);
        }
}

/* The light host of the gain tests: eight CPUs, eth0's eight queues of
 * works[] (interrupt rates in proportion, so the gain estimated is the
 * gain) on CPUs 0,0,1..6, CPU7 idle, no initial layout and no RPS (the
 * tests are about the least gain of a move). */
static void light_host_init(struct fx *f, const double works[8]) {
        static const int cpus[8] = { 0, 0, 1, 2, 3, 4, 5, 6 };

        fx_init(f, 8, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f->cfg);
        f->cfg.initial_layout = false;
        fx_add_nic(f, "eth0", 0, 8, true, 30, false, false);
        for (int q = 0; q < 8; q++) {
                f->q[0][q] = (struct fx_queue_model){ works[q], 40000 * works[q] };
                fx_place(f, 30 + (unsigned) q, cpus[q]);
        }
}

/* One light-host case: eight queues of works[] on CPUs 0,0,1..6 (CPU7
 * idle), no RPS, 300 ticks of +-noise per CPU.  acts: exactly one IRQ
 * move, the peak then at most peak_max; else nothing; never an action in
 * the second half. */
static void light_gain_case(const char *what, const double works[8], double noise_amp, bool acts, double peak_max,
                            uint64_t seed) {
        struct fx f;
        double noise[FX_MAX_CPUS], peak = 0;
        unsigned moves = 0, rps = 0, late = 0;

        light_host_init(&f, works);
        for (unsigned k = 1; k <= 300; k++) {
                for (int c = 0; c < f.n_cpus; c++)
                        noise[c] = 1 + noise_amp * (2 * fx_rand(&seed) - 1);
                fx_model(&f, noise);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                moves += count_type(&f.l, KNOB_IRQ);
                rps += count_type(&f.l, KNOB_RPS);
                if (k > 150)
                        late += f.l.n;
        }
        fx_model(&f, NULL);
        for (int c = 0; c < f.n_cpus; c++)
                peak = MAX(peak, f.load.cpus[c].softirq);
        print_message("    %s: %u IRQ moves, %u RPS changes, peak %.1f%%\n", what, moves, rps, 100 * peak);
        if (moves != (acts ? 1 : 0) || rps > 0)
                fail_msg("%s: %u IRQ moves and %u RPS changes", what, moves, rps);
        if (acts && peak > peak_max)
                fail_msg("%s: peak %.3f, want CPU0's small queue gone", what, peak);
        if (late > 0)
                fail_msg("%s: %u actions in the second half of a stationary run", what, late);
        fx_free(&f);
}

/* The least gain of a move on a light host comes from its measured
 * noise.  Eight CPUs, 3.4% mean: CPU0 carries queues of 7% and 2.5%
 * (9.5%, hot), six CPUs 3% each, CPU7 nothing.  The best move gains
 * 2.5%, less than balance_floor: with +-1% noise it is made, once; with
 * +-30% noise (three deviations of CPU0's load exceed the gain) nothing
 * moves. */
static void test_balance_light_gain(void **state) {
        static const double works[8] = { 0.07, 0.025, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03 };

        (void) state;
        light_gain_case("steady light host: the 2.5% gain is made", works, 0.01, true, 0.071, 0x11647a1eULL);
        light_gain_case("noisy light host: the 2.5% gain is noise", works, 0.30, false, 0, 0x11647a1eULL + 1);
}

/* A hot light CPU judged by its level: CPU0 carries a 7.5% queue and a
 * 1.5% one (mean 3.4%, hot from 8.4%); moving the small one to the idle
 * CPU7 gains 1.5%, under one sample's resolution (POL_GAIN_LEAST, 2%)
 * but over min_gain at the host's scale (1.05%) and three deviations of
 * the two CPUs' noise.  With +-1% noise the level shows it: one move,
 * nothing after; under +-30% noise the gain is noise and nothing moves. */
static void test_balance_light_level_gain(void **state) {
        static const double works[8] = { 0.075, 0.015, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03 };

        (void) state;
        light_gain_case("steady light host: the 1.5% gain is made", works, 0.01, true, 0.076, 0x1e7e1ULL);
        light_gain_case("noisy light host: the 1.5% gain is noise", works, 0.30, false, 0, 0x1e7e1ULL + 1);
}

/* A lone hot queue on a CPU judged by its level gets RPS at the level's
 * least gain, not min_gain at the host's scale.  Eight CPUs, a queue
 * each: CPU0's 40% (hot from 39.2%: the mean 33% and min_gain at its
 * scale, 6.2%), the others 32%.  RPS over the cool CPUs takes 60% of
 * it off for 3.4% more on each of seven: 40% -> 35.4%, a gain of 4.6%,
 * under 6.2% but over one sample's resolution and three deviations of
 * the CPU's noise.  With +-1% noise the set is made, once, and nothing
 * after; under +-30% noise the gain is noise and no set is made. */
static void test_rps_lone_level_gain(void **state) {
        static const struct {
                const char *what;
                double noise;            /* +- per CPU and tick */
                bool acts;
        } cases[] = {
                { "steady host: the 4.6% gain is made", 0.01, true },
                { "noisy host: the gain is noise", 0.30, false },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x10e1e7e1ULL + i;
                double noise[FX_MAX_CPUS], peak;
                unsigned moves = 0, rps = 0, late = 0;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.cfg.initial_layout = false;
                fx_add_nic(&f, "eth0", 0, 8, true, 30, true, false);
                for (int q = 0; q < 8; q++) {
                        fx_place(&f, 30 + (unsigned) q, q);
                        f.q[0][q] = (struct fx_queue_model){ q == 0 ? 0.40 : 0.32, 5000 };
                }
                for (unsigned k = 1; k <= 300; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + cases[i].noise * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        moves += count_type(&f.l, KNOB_IRQ);
                        rps += count_type(&f.l, KNOB_RPS);
                        if (k > 150)
                                late += f.l.n;
                }
                peak = fx_settled_peak(&f);
                print_message("    %s: %u IRQ moves, %u RPS changes, peak %.1f%%\n", cases[i].what, moves, rps,
                              100 * peak);
                if (moves > 0 || rps != (cases[i].acts ? 1 : 0))
                        fail_msg("%s: %u IRQ moves and %u RPS changes", cases[i].what, moves, rps);
                if (cases[i].acts && peak > 0.37)
                        fail_msg("%s: peak %.3f, want CPU0's queue spread", cases[i].what, peak);
                if (late > 0)
                        fail_msg("%s: %u actions in the second half of a stationary run", cases[i].what, late);
                fx_free(&f);
        }
}

/* The steady re-layout: two NICs of six queues on six CPUs, laid out
 * blind, both from CPU0, so their heavy queues stack (CPU0 10%, CPU1 6%,
 * the rest 4%, mean 5.3%).  The excess (4.7%) is under balance_floor, no
 * CPU is hot, and each NIC alone is already one queue a CPU.  With +-1%
 * noise the queues laid out again together end at most 7% on a CPU, once,
 * and nothing changes after; under +-30% noise (three deviations of CPU0's
 * load exceed the gain) nothing moves after the layout. */
static void test_replan_light(void **state) {
        static const struct {
                const char *what;
                double noise;            /* +- per CPU and tick */
                bool acts;
        } cases[] = {
                { "steady light host: the stacked queues are laid out again", 0.01, true },
                { "noisy light host: the gain is noise", 0.30, false },
        };
        static const double works[6] = { 0.05, 0.03, 0.02, 0.02, 0.02, 0.02 };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x7e1a7011ULL + i;
                double noise[FX_MAX_CPUS], peak = 0;
                unsigned moves = 0, rps = 0, late = 0;

                fx_init(&f, 6, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                fx_add_nic(&f, "eth0", 0, 6, true, 30, false, false);
                fx_add_nic(&f, "eth1", 0, 6, true, 40, false, false);
                for (int k = 0; k < 2; k++)
                        for (int q = 0; q < 6; q++)
                                f.q[k][q] = (struct fx_queue_model){ works[q], 40000 * works[q] };
                /* the blind layout: both NICs from CPU0 */
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                for (unsigned k = 2; k <= 300; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + cases[i].noise * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        for (size_t a = 0; a < f.l.n; a++)
                                moves += f.l.v[a].type == KNOB_IRQ && !f.l.v[a].layout;
                        rps += count_type(&f.l, KNOB_RPS);
                        if (k > 150)
                                late += f.l.n;
                }
                fx_model(&f, NULL);
                for (int c = 0; c < f.n_cpus; c++)
                        peak = MAX(peak, f.load.cpus[c].softirq);
                print_message("    %s: %u IRQ moves, %u RPS changes, peak %.1f%%\n", cases[i].what, moves, rps,
                              100 * peak);
                if (cases[i].acts ? moves == 0 || peak > 0.07 + 1e-9 : moves > 0)
                        fail_msg("%s: %u IRQ moves, peak %.3f", cases[i].what, moves, peak);
                if (rps > 0 || late > 0)
                        fail_msg("%s: %u RPS changes, %u actions in the second half", cases[i].what, rps, late);
                fx_free(&f);
        }
}

/* The steady re-layout with the network work undercounted: eight CPUs,
 * one NIC's four 4.7% queues one a CPU on CPUs 0-3, CPUs 4-7 idle, and
 * each CPU's softirq time counted as network work by the NET share of its
 * runs, 0.72 (timer and RCU runs beside NET_RX's, as the simulator and a
 * real kernel have them).  Each queue reads 3.4%, and moving all four to
 * the idle CPUs projects 4.7% -> 3.4%, the 1.3% read as other work left
 * behind; but the work goes with its queue, and the plan is its own image
 * (seed 23021: moved there and back every min_dwell).  With +-1% noise
 * nothing moves after the layout. */
static void test_replan_undercount(void **state) {
        struct fx f;
        uint64_t seed = 0x23021ULL;
        double noise[FX_MAX_CPUS];
        unsigned moves = 0;

        (void) state;
        fx_init(&f, 8, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        fx_add_nic(&f, "eth0", 0, 4, true, 30, false, false);
        for (int q = 0; q < 4; q++)
                f.q[0][q] = (struct fx_queue_model){ 0.047, 950 };
        for (unsigned k = 1; k <= 300; k++) {
                for (int c = 0; c < f.n_cpus; c++)
                        noise[c] = 1 + 0.01 * (2 * fx_rand(&seed) - 1);
                fx_model(&f, noise);
                for (int c = 0; c < f.n_cpus; c++)
                        f.load.cpus[c].net_frac = 0.72;
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++)
                        moves += f.l.v[a].type == KNOB_IRQ && !f.l.v[a].layout;
        }
        print_message("    undercounted light queues: %u IRQ moves\n", moves);
        if (moves > 0)
                fail_msg("%u IRQ moves: a plan swapped the layout for its image", moves);
        fx_free(&f);
}

/* The steady re-layout off the NICs' node: two NICs on node 1 of two
 * four-CPU nodes, eth0's four 3% queues and eth1's 24 0.3% ones laid out
 * blind, a 3% and six 0.3% queues a node-1 CPU (4.8%), node 0 idle.
 * Local moves gain nothing; eth1's queues on node 0 at the remote cost
 * (1.3) leave node 1 at 3% and node 0 at 2.3%.  Each remote piece leaves
 * its target no busier than its source, and the targets are spread: the
 * first CPU taking each move becomes the busiest, with nothing of its
 * own to give, at 3.5%, and the plan stops there.  With +-1% noise: the plan, once, nothing
 * after; under +-30% noise nothing moves after the layout. */
static void test_replan_remote(void **state) {
        static const struct {
                const char *what;
                double noise;            /* +- per CPU and tick */
                bool acts;
        } cases[] = {
                { "steady light host: the small queues go to the idle node", 0.01, true },
                { "noisy light host: the gain is noise", 0.30, false },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x7e307eULL + i;
                double noise[FX_MAX_CPUS], peak = 0;
                unsigned moves = 0, remote = 0, rps = 0, late = 0;

                fx_init(&f, 8, 2, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.remote_cost = 1.3;
                fx_add_nic(&f, "eth0", 1, 4, true, 30, false, false);
                fx_add_nic(&f, "eth1", 1, 24, true, 40, false, false);
                for (int q = 0; q < 4; q++)
                        f.q[0][q] = (struct fx_queue_model){ 0.03, 1200 };
                for (int q = 0; q < 24; q++)
                        f.q[1][q] = (struct fx_queue_model){ 0.003, 120 };
                /* the blind layout: each NIC from node 1's first CPU */
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                for (unsigned k = 2; k <= 300; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + cases[i].noise * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        for (size_t a = 0; a < f.l.n; a++)
                                if (f.l.v[a].type == KNOB_IRQ && !f.l.v[a].layout) {
                                        int to = cpuset_kept_only(&f.l.v[a].cpus);

                                        moves++;
                                        remote += to >= 0 && to < 4;
                                }
                        rps += count_type(&f.l, KNOB_RPS);
                        if (k > 150)
                                late += f.l.n;
                }
                fx_model(&f, NULL);
                for (int c = 0; c < f.n_cpus; c++)
                        peak = MAX(peak, f.load.cpus[c].softirq);
                print_message("    %s: %u IRQ moves (%u off the node), %u RPS changes, peak %.1f%%\n", cases[i].what,
                              moves, remote, rps, 100 * peak);
                if (cases[i].acts ? remote == 0 || peak > 0.033 : moves > 0)
                        fail_msg("%s: %u IRQ moves, peak %.3f", cases[i].what, moves, peak);
                if (rps > 0 || late > 0)
                        fail_msg("%s: %u RPS changes, %u actions in the second half", cases[i].what, rps, late);
                fx_free(&f);
        }
}

/* On a calm host the policy decides only now and then (the engine's
 * audits), while every tick's smoothed load still feeds the noise
 * estimate (policy_observe): a steady light host's 2.5% gain is made at
 * the first decision after POL_NOISE_SAMPLES ticks, as on a busy host,
 * and under noise it is not made at all.  The raw loads are smoothed as
 * the engine does, so the estimate sees what it sees. */
static void test_balance_light_calm(void **state) {
        static const struct {
                const char *what;
                double noise;            /* +- per CPU and tick, before smoothing */
                unsigned move_by;        /* the tick by which the one move is made, 0: none */
        } cases[] = {
                { "steady light host: the 2.5% gain is made at the second decision", 0.01, 1 + 15 },
                { "noisy light host: the 2.5% gain is noise", 0.50, 0 },
        };
        static const double works[8] = { 0.07, 0.025, 0.03, 0.03, 0.03, 0.03, 0.03, 0.03 };
        const unsigned every = 15; /* ticks between the policy's decisions */

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x5ca1711ULL + i;
                double noise[FX_MAX_CPUS], prev[FX_MAX_CPUS];
                unsigned moves = 0, rps = 0, moved_at = 0;

                light_host_init(&f, works);
                for (unsigned k = 1; k <= 300; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + cases[i].noise * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        for (int c = 0; c < f.n_cpus; c++) {
                                if (k > 1)
                                        f.load.cpus[c].softirq = f.cfg.smoothing * f.load.cpus[c].softirq +
                                                                 (1 - f.cfg.smoothing) * prev[c];
                                prev[c] = f.load.cpus[c].softirq;
                        }
                        if ((k - 1) % every != 0) {
                                policy_observe(f.st, &f.cfg, &f.load, k * SEC);
                                continue;
                        }
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        moves += count_type(&f.l, KNOB_IRQ);
                        rps += count_type(&f.l, KNOB_RPS);
                        if (moves > 0 && moved_at == 0)
                                moved_at = k;
                }
                print_message("    %s: %u IRQ moves (first at tick %u), %u RPS changes\n", cases[i].what, moves,
                              moved_at, rps);
                if (moves != (cases[i].move_by ? 1 : 0) || rps > 0)
                        fail_msg("%s: %u IRQ moves and %u RPS changes", cases[i].what, moves, rps);
                if (cases[i].move_by && moved_at > cases[i].move_by)
                        fail_msg("%s: the move at tick %u, want by %u", cases[i].what, moved_at, cases[i].move_by);
                fx_free(&f);
        }
}

/* Whole-queue granularity: eleven queues of 2.7% on eight CPUs leave
 * three CPUs with two (5.4% against a mean of 3.7%), under the hot level,
 * and no queue IRQ move lowers the host's peak.  RPS for one queue of each
 * doubled CPU (a third of its work stays there, RPS costs 10% of what it
 * moves) takes the peak near the mean: made once the noise is known, all
 * three together, and nothing in the second half.  Under +-30% noise the gain is within
 * the noise, and with two queues on every CPU nothing gains: no RPS. */
static void test_rps_granularity(void **state) {
        static const struct {
                const char *what;
                int nq;                  /* queues of 2.7%, queue q on CPU q % 8 */
                double noise;            /* +- per CPU and tick */
                unsigned sets;           /* RPS sets wanted, all for granularity */
        } cases[] = {
                { "11 queues on 8 CPUs, steady: the three doubled CPUs get RPS", 11, 0.01, 3 },
                { "11 queues on 8 CPUs, +-30% noise: the gain is noise", 11, 0.30, 0 },
                { "16 queues on 8 CPUs: two each, nothing gains", 16, 0.01, 0 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x6a4a17eeULL + i;
                double noise[FX_MAX_CPUS], peak = 0, sum = 0;
                unsigned rps = 0, gran = 0, irq = 0, late = 0, first = 0;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.cfg.initial_layout = false;
                f.napi_share = 0.32;
                f.rps_cost = 0.10;
                fx_add_nic(&f, "eth0", 0, cases[i].nq, true, 30, true, false);
                for (int q = 0; q < cases[i].nq; q++) {
                        /* interrupt rates in proportion: the split estimated is the split */
                        f.q[0][q] = (struct fx_queue_model){ 0.027, 40000 * 0.027 };
                        fx_place(&f, 30 + (unsigned) q, q % 8);
                }
                for (unsigned k = 1; k <= 300; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + cases[i].noise * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        irq += count_type(&f.l, KNOB_IRQ);
                        rps += count_type(&f.l, KNOB_RPS);
                        for (size_t a = 0; a < f.l.n; a++)
                                if (f.l.v[a].type == KNOB_RPS && f.l.v[a].why == ACTION_REASON_QUEUE_GRANULARITY) {
                                        gran++;
                                        if (first == 0)
                                                first = k;
                                }
                        if (k > 150)
                                late += f.l.n;
                }
                fx_model(&f, NULL);
                for (int c = 0; c < f.n_cpus; c++) {
                        peak = MAX(peak, f.load.cpus[c].softirq);
                        sum += f.load.cpus[c].softirq;
                }
                print_message("    %s: %u RPS changes (%u for granularity, the first at tick %u), %u IRQ moves, "
                              "peak %.2f%%, mean %.2f%%\n",
                              cases[i].what, rps, gran, first, irq, 100 * peak, 100 * sum / f.n_cpus);
                /* a wide set may narrow after min_dwell (adjust()), no more */
                if (gran != cases[i].sets || (cases[i].sets == 0 && rps > 0) || irq > 0)
                        fail_msg("%s: %u RPS changes (%u for granularity) and %u IRQ moves, want %u sets", cases[i].what,
                                 rps, gran, irq, cases[i].sets);
                if (cases[i].sets > 0 && peak > 1.15 * sum / f.n_cpus)
                        fail_msg("%s: peak %.4f over 1.15 x mean %.4f", cases[i].what, peak, sum / f.n_cpus);
                if (late > 0)
                        fail_msg("%s: %u actions in the second half of a stationary run", cases[i].what, late);
                fx_free(&f);
        }
}

/* A light host's steady peak is one queue (seed 14004's shape: 8 CPUs
 * beside 67% user work, four Zipf queues of 6-10% of a CPU, 37% of each
 * staying on its IRQ CPU, RPS costing 11% of what it moves; a queue a
 * CPU, four CPUs without one).  CPU0's excess over the mean (5.4%) is
 * under balance_floor, so no CPU is hot and no move is tried, but its
 * protocol work divides: RPS to the idle CPUs lowers the peak by more
 * than the least gain.  CPU0 (10.4%) is hot by the ratio and gets RPS
 * as a lone hot queue; then CPU1 (7.7%) and CPU2 (6.5%) are the peak,
 * 3.9% and 2.6% over the mean.  Steady, their queues get RPS
 * (pol_rps_steady) and then nothing changes; under +-30% noise no steady
 * peak is seen (the hot rule's actions are its own).  Paced as the engine
 * runs the policy (test_pace_steady_level), a CPU at the steady peak's
 * level whose level is not yet held keeps the full ticks coming every
 * ENGINE_MEASURE_FULL_EVERY: the first set comes before the periodic
 * audit (tick 30), and then the audits alone are full. */
static void test_rps_steady_peak(void **state) {
        static const struct {
                const char *what;
                double noise;            /* +- per CPU and tick */
                bool acts;
                bool paced;
        } cases[] = {
                { "steady light host: the peak queue spreads", 0.01, true, false },
                { "noisy light host: no steady peak", 0.30, false, false },
                { "steady light host paced as the engine: before the audit", 0.01, true, true },
        };
        static const double works[4] = { 0.1035, 0.0773, 0.0652, 0.0579 };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x140040ULL + i;
                double noise[FX_MAX_CPUS], peak = 0, total = 0, bound = 0;
                unsigned moves = 0, rps = 0, steady = 0, late = 0, first = 0, full_late = 0, calm_run = 0;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.cfg.initial_layout = false;
                f.rps_cost = 0.11;
                fx_add_nic(&f, "eth0", 0, 4, true, 30, true, false);
                for (int q = 0; q < 4; q++) {
                        f.q[0][q] = (struct fx_queue_model){ works[q], 20000 * works[q], 0.37 };
                        fx_place(&f, 30 + (unsigned) q, q);
                        total += works[q];
                        bound = MAX(bound, works[q] * (0.37 + f.rps_cost * 0.63));
                }
                bound = MAX(bound, total / 8);
                for (int c = 0; c < 8; c++)
                        f.user[c] = 0.67;
                for (unsigned k = 1; k <= 300; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + cases[i].noise * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        if (cases[i].paced && k > 2 && policy_pace(&f.cfg, f.st, &f.rep, &f.load) == POLICY_PACE_CALM &&
                            !(f.rep.measuring && calm_run + 1 >= ENGINE_MEASURE_FULL_EVERY) &&
                            calm_run + 1 < ENGINE_FULL_TICK_EVERY) {
                                calm_run++;
                                policy_observe(f.st, &f.cfg, &f.load, (uint64_t) k * SEC);
                                continue;
                        }
                        calm_run = 0;
                        full_late += k > 150;
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        moves += count_type(&f.l, KNOB_IRQ);
                        rps += count_type(&f.l, KNOB_RPS);
                        for (size_t a = 0; a < f.l.n; a++)
                                if (f.l.v[a].why == ACTION_REASON_STEADY_PEAK) {
                                        steady++;
                                        first = first ? first : k;
                                }
                        if (k > 150)
                                late += f.l.n;
                }
                peak = fx_peak_now(&f);
                print_message("    %s: %u IRQ moves, %u RPS changes (%u for a steady peak, the first at tick %u), peak "
                              "%.1f%% (bound %.1f%%, %.2f), %u full ticks of the last 150\n",
                              cases[i].what, moves, rps, steady, first, 100 * peak, 100 * bound, peak / bound, full_late);
                if (cases[i].paced && (first == 0 || first >= ENGINE_FULL_TICK_EVERY))
                        fail_msg("%s: the first set for a steady peak at tick %u", cases[i].what, first);
                if (cases[i].paced && full_late > 150 / ENGINE_FULL_TICK_EVERY)
                        fail_msg("%s: %u full ticks in the last 150", cases[i].what, full_late);
                if (moves > 0 || (cases[i].acts ? steady == 0 : steady > 0))
                        fail_msg("%s: %u IRQ moves and %u RPS changes for a steady peak", cases[i].what, moves, steady);
                if (cases[i].acts && peak > 1.3 * bound)
                        fail_msg("%s: peak %.3f, bound %.3f", cases[i].what, peak, bound);
                if (late > 0)
                        fail_msg("%s: %u actions in the second half of a stationary run", cases[i].what, late);
                fx_free(&f);
        }
}

/* A light host's steady peaks under the narrowing limit's level (seed
 * 23021's shape: 8 CPUs, four 4.7% queues one a CPU on CPUs 0-3, 19% of
 * each staying on its IRQ CPU, RPS costing 8.9% of what it moves, the
 * softirq time counted as network work by the NET share of runs, 0.72).
 * The mean is 2.35%, the narrowing limit 3.7%: judged against the level
 * sets are accepted at (10% over the limit) and three deviations of the
 * noise, the peaks at 4.7% were never steady peaks, though RPS takes
 * 0.8% of a CPU and more off each.  With +-10% noise (a deviation of
 * about 0.27% of a CPU, as 23021's) each queue now gets RPS once and
 * keeps it; under +-30% noise no steady peak is seen. */
static void test_rps_steady_undercount(void **state) {
        static const struct {
                const char *what;
                double noise;            /* +- per CPU and tick */
                bool acts;
        } cases[] = {
                { "light host, +-10% noise: the queues spread and stay spread", 0.10, true },
                { "noisy light host: no steady peak", 0.30, false },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x230210ULL + i;
                double noise[FX_MAX_CPUS], peak;
                unsigned moves = 0, rps = 0, steady = 0, late = 0;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.cfg.initial_layout = false;
                f.rps_cost = 0.089;
                fx_add_nic(&f, "eth0", 0, 4, true, 30, true, false);
                for (int q = 0; q < 4; q++) {
                        f.q[0][q] = (struct fx_queue_model){ 0.047, 950, 0.19 };
                        fx_place(&f, 30 + (unsigned) q, q);
                }
                for (int c = 0; c < 8; c++)
                        f.user[c] = 0.175;
                for (unsigned k = 1; k <= 300; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + cases[i].noise * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        for (int c = 0; c < f.n_cpus; c++)
                                f.load.cpus[c].net_frac = 0.72;
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        moves += count_type(&f.l, KNOB_IRQ);
                        rps += count_type(&f.l, KNOB_RPS);
                        for (size_t a = 0; a < f.l.n; a++)
                                steady += f.l.v[a].why == ACTION_REASON_STEADY_PEAK;
                        if (k > 150)
                                late += f.l.n;
                }
                peak = fx_peak_now(&f);
                print_message("    %s: %u IRQ moves, %u RPS changes (%u for a steady peak), peak %.1f%%\n",
                              cases[i].what, moves, rps, steady, 100 * peak);
                if (moves > 0 || (cases[i].acts ? steady != 4 || rps != 4 : rps > 0))
                        fail_msg("%s: %u IRQ moves, %u RPS changes, %u for a steady peak", cases[i].what, moves, rps,
                                 steady);
                if (cases[i].acts && peak > 0.042)
                        fail_msg("%s: peak %.3f, want the queues spread", cases[i].what, peak);
                if (late > 0)
                        fail_msg("%s: %u actions in the second half of a stationary run", cases[i].what, late);
                fx_free(&f);
        }
}

/* Many CPUs at one steady peak (seed 18038's shape, smaller: 16 CPUs
 * beside 67% user work, eight queues of 7% of a CPU on CPUs 0-7, 37% of
 * each staying on its IRQ CPU, CPUs 8-15 without network work): the
 * eight are the steady peak, 3.5% over the mean and under the hot
 * level, and the host's peak falls only once all eight are relieved.
 * Their sets are made in one tick, each projected after the sets before
 * it (the peak then 5.1%, each queue's interrupt work and its set CPU);
 * one a settling made the eighth set 30 ticks after the first.  Then
 * nothing changes. */
static void test_rps_steady_peaks_together(void **state) {
        struct fx f;
        uint64_t seed = 0x18038ULL;
        double noise[FX_MAX_CPUS], peak, total = 0, bound = 0;
        unsigned moves = 0, steady = 0, late = 0, first = 0, last = 0;

        (void) state;
        fx_init(&f, 16, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.rps_cost = 0.11;
        fx_add_nic(&f, "eth0", 0, 8, true, 30, true, false);
        for (int q = 0; q < 8; q++) {
                f.q[0][q] = (struct fx_queue_model){ 0.07, 20000 * 0.07, 0.37 };
                fx_place(&f, 30 + (unsigned) q, q);
                total += 0.07;
                bound = MAX(bound, 0.07 * (0.37 + f.rps_cost * 0.63));
        }
        bound = MAX(bound, total / 16);
        for (int c = 0; c < 16; c++)
                f.user[c] = 0.67;
        for (unsigned k = 1; k <= 300; k++) {
                for (int c = 0; c < f.n_cpus; c++)
                        noise[c] = 1 + 0.01 * (2 * fx_rand(&seed) - 1);
                fx_model(&f, noise);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                moves += count_type(&f.l, KNOB_IRQ);
                for (size_t a = 0; a < f.l.n; a++)
                        if (f.l.v[a].why == ACTION_REASON_STEADY_PEAK) {
                                steady++;
                                first = first ? first : k;
                                last = k;
                        }
                if (k > 150)
                        late += f.l.n;
        }
        peak = fx_peak_now(&f);
        print_message("    eight CPUs at one steady peak: %u IRQ moves, %u sets for a steady peak (ticks %u-%u), peak "
                      "%.1f%% (bound %.1f%%, %.2f)\n",
                      moves, steady, first, last, 100 * peak, 100 * bound, peak / bound);
        if (moves > 0 || steady != 8 || last != first)
                fail_msg("%u IRQ moves, %u sets for a steady peak in ticks %u-%u, want 8 in one tick", moves, steady,
                         first, last);
        /* each of the eight relieved: its level down by the least gain */
        if (peak > 0.07 - POL_GAIN_LEAST / 2)
                fail_msg("peak %.3f, bound %.3f", peak, bound);
        if (late > 0)
                fail_msg("%u actions in the second half of a stationary run", late);
        fx_free(&f);
}

/* Steady peaks that cannot lower the host's peak (seed 19030's shape,
 * smaller): 16 CPUs beside 67% user work, eight queues on CPUs 0-7, 37%
 * of each staying on its IRQ CPU, CPUs 8-15 without network work; the
 * queues of CPUs 0-1 at 4.5% of a CPU, over the steady peak's level, the
 * six others at 4%, under it.  Sets for CPUs 0-1 relieve them and leave
 * the host's peak at the six's level, 0.5% lower, under the plan's least
 * gain (pol_plan_gain(); 19030: 12.6% -> 6.8% on the CPU, the host's
 * peak unmoved): no set is made.  The old rule made both (and narrowed
 * both 30 s later).  With all eight at the level they are relieved
 * (test_rps_steady_peaks_together). */
static void test_rps_steady_peak_host(void **state) {
        struct fx f;
        uint64_t seed = 0x19030ULL;
        double noise[FX_MAX_CPUS];
        unsigned moves = 0, steady = 0;

        (void) state;
        fx_init(&f, 16, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.rps_cost = 0.11;
        fx_add_nic(&f, "eth0", 0, 8, true, 30, true, false);
        for (int q = 0; q < 8; q++) {
                double w = q < 2 ? 0.045 : 0.04;

                f.q[0][q] = (struct fx_queue_model){ w, 20000 * w, 0.37 };
                fx_place(&f, 30 + (unsigned) q, q);
        }
        for (int c = 0; c < 16; c++)
                f.user[c] = 0.67;
        for (unsigned k = 1; k <= 300; k++) {
                for (int c = 0; c < f.n_cpus; c++)
                        noise[c] = 1 + 0.01 * (2 * fx_rand(&seed) - 1);
                fx_model(&f, noise);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                moves += count_type(&f.l, KNOB_IRQ);
                for (size_t a = 0; a < f.l.n; a++) {
                        print_message("    at %3us: %s\n", k, f.l.v[a].reason);
                        steady += f.l.v[a].why == ACTION_REASON_STEADY_PEAK;
                }
        }
        print_message("    two CPUs over the level beside six under it: %u IRQ moves, %u sets for a steady peak, "
                      "peak %.1f%%\n", moves, steady, 100 * fx_peak_now(&f));
        if (moves > 0 || steady > 0)
                fail_msg("%u IRQ moves, %u sets for a steady peak", moves, steady);
        fx_free(&f);
}

/* ---- thresholds ---- */

static void test_thresholds(void **state) {
        /* per tick: CPU0 irq+softirq and idle; CPU1 idle */
        struct tick {
                double soft0, idle0, idle1;
        };
        static const struct {
                const char *what;
                struct tick t[8];
                size_t n;
                bool hot, saturated;
        } cases[] = {
                { "hot_enter for hot_samples-1 samples: not hot", { { .80, .2, .9 }, { .80, .2, .9 } }, 2, false, false },
                { "hot_enter for hot_samples samples: hot", { { .80, .2, .9 }, { .80, .2, .9 }, { .80, .2, .9 } }, 3, true, false },
                { "a dip restarts the count",
                  { { .9, .1, .9 }, { .9, .1, .9 }, { .79, .2, .9 }, { .9, .1, .9 }, { .9, .1, .9 } }, 5, false, false },
                { "between exit and enter stays hot",
                  { { .9, .1, .9 }, { .9, .1, .9 }, { .9, .1, .9 }, { .7, .3, .9 }, { .6, .4, .9 } }, 5, true, false },
                { "just below hot_exit: cool",
                  { { .9, .1, .9 }, { .9, .1, .9 }, { .9, .1, .9 }, { .599, .4, .9 } }, 4, false, false },
                { "just below hot_enter: never hot",
                  { { .799, .2, .9 }, { .799, .2, .9 }, { .799, .2, .9 }, { .799, .2, .9 } }, 4, false, false },
                { "saturated (nginx case: 52.8% soft, 6% idle, others 85% idle)",
                  { { .528, .06, .85 }, { .528, .06, .85 }, { .528, .06, .85 } }, 3, true, true },
                { "saturated but no room elsewhere: not hot",
                  { { .528, .06, .15 }, { .528, .06, .15 }, { .528, .06, .15 } }, 3, false, false },
                { "saturated, little softirq: not hot",
                  { { .25, .05, .85 }, { .25, .05, .85 }, { .25, .05, .85 } }, 3, false, false },
                { "saturated stays while idle < 2 x saturated_idle",
                  { { .528, .06, .85 }, { .528, .06, .85 }, { .528, .06, .85 }, { .40, .15, .85 } }, 4, true, true },
                { "saturated exits: nginx after RPS (29% soft, 25% idle)",
                  { { .528, .06, .85 }, { .528, .06, .85 }, { .528, .06, .85 }, { .29, .25, .85 } }, 4, false, false },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, 2, 1, FX_SMT_NONE);
                for (size_t k = 0; k < cases[i].n; k++) {
                        const struct tick *tk = &cases[i].t[k];
                        fx_cpu(&f, 0, tk->soft0, 1 - tk->soft0 - tk->idle0);
                        fx_cpu(&f, 1, 0.02, 1 - 0.02 - tk->idle1);
                        assert_int_equal(fx_step(&f, (k + 1) * SEC), 0);
                }
                if (cpuset_isset(&f.rep.hot, 0) != cases[i].hot)
                        fail_msg("%s: hot %d, want %d", cases[i].what, cpuset_isset(&f.rep.hot, 0), cases[i].hot);
                assert_false(cpuset_isset(&f.rep.hot, 1));
                assert_int_equal(f.rep.n_hot_cpus, cases[i].hot ? 1 : 0);
                if (cases[i].hot) {
                        assert_int_equal(f.rep.hot_cpus[0].cpu, 0);
                        assert_int_equal(f.rep.hot_cpus[0].saturated, cases[i].saturated);
                }
                fx_free(&f);
        }
}

/* The nginx field case end to end: saturated CPU0 with a single-queue NIC
 * gets RPS (without single_queue_rps at start). */
static void test_saturated_gets_rps(void **state) {
        struct fx f;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        f.cfg.initial_layout = false;
        f.cfg.single_queue_rps = false;
        fx_add_nic(&f, "eth0", 0, 1, true, 50, true, false);
        fx_place(&f, 50, 0);
        for (int k = 1; k <= 3; k++) {
                fx_cpu(&f, 0, 0.528, 0.412);
                for (int c = 1; c < 4; c++)
                        fx_cpu(&f, c, 0.02, 0.13);
                fx_rate(&f, 50, 0, 10000);
                assert_int_equal(fx_step(&f, k * SEC), 0);
        }
        /* CPU0 keeps its NAPI part (about 21%), CPU1 takes the protocol
         * work (about 32% + 2%): a lower peak than CPU0 sharing it (37%) */
        expect_actions("nginx case", &f.l, "rps eth0/0>1;");
        assert_true(f.rep.n_hot_cpus == 1 && f.rep.hot_cpus[0].saturated);

        fx_free(&f);
}

/* A lone queue gets RPS, like a move, only when that lowers the peak by
 * min_gain.  The simulator's queues32 host in small: two queues on hot
 * CPU1, one moves to CPU0; the smoothed load lags the move, so when CPU1
 * has settled it still shows 45% (it carries 33%) and stays hot between
 * the thresholds, with the other CPUs at 33-37%: RPS for its queue would
 * only put shares of it on CPUs as busy.  Before, it got RPS over CPUs
 * 0-5; then the same CPU at 60%, where RPS lowers the peak, gets it. */
static void test_rps_start_min_gain(void **state) {
        /* CPU1's smoothed load from tick 4 on: the move's effect shows late */
        static const double cpu1[] = { 0.60, 0.60, 0.60, 0.60, 0.50, 0.45, 0.42, 0.42, 0.38, 0.35, 0.33, 0.33 };
        struct fx f;
        int moved = -1, stays = -1;

        (void) state;
        fx_init(&f, 6, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.single_queue_rps = false;
        fx_add_nic(&f, "eth0", 0, 6, true, 50, true, false);
        fx_place(&f, 50, 1);
        fx_place(&f, 51, 1);
        for (int q = 2; q < 6; q++)
                fx_place(&f, 50 + q, q);
        for (int k = 1; k <= (int) ELEMENTSOF(cpu1); k++) {
                double l1 = cpu1[k - 1];
                char buf[256];

                if (moved < 0) {
                        fx_cpu(&f, 0, 0.10, 0.40);
                        fx_rate(&f, 50, 1, 4000);
                        fx_rate(&f, 51, 1, 5000);
                } else {
                        fx_cpu(&f, 0, 0.37, 0.40);
                        fx_rate(&f, 50 + moved, 0, moved == 0 ? 4000 : 5000);
                        fx_rate(&f, 50 + stays, 1, stays == 0 ? 4000 : 5000);
                }
                fx_cpu(&f, 1, l1, 0.40);
                for (int c = 2; c < 6; c++) {
                        fx_cpu(&f, c, 0.33, 0.40);
                        fx_rate(&f, 50 + c, c, 5000);
                }
                assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                fx_fmt(&f.l, buf, sizeof(buf));
                print_message("    tick %d: CPU1 at %.2f: %s\n", k, l1, buf);
                for (size_t i = 0; i < f.l.n; i++) {
                        const struct action *a = &f.l.v[i];
                        if (a->type == KNOB_IRQ && moved < 0 && cpuset_only(KEPT(&a->cpus)) == 0) {
                                moved = (int) a->irq - 50;
                                stays = moved == 0 ? 1 : 0;
                        }
                        if (a->type == KNOB_RPS)
                                fail_msg("tick %d: RPS for rx-%d with CPU1 at %.0f%%", k, a->queue, 100 * l1);
                }
        }
        assert_true(moved == 0 || moved == 1);
        /* the control: at 60% RPS lowers the peak */
        for (int k = 1; k <= 3; k++) {
                fx_cpu(&f, 0, 0.37, 0.40);
                fx_rate(&f, 50 + moved, 0, moved == 0 ? 4000 : 5000);
                fx_cpu(&f, 1, 0.60, 0.30);
                fx_rate(&f, 50 + stays, 1, stays == 0 ? 4000 : 5000);
                for (int c = 2; c < 6; c++) {
                        fx_cpu(&f, c, 0.33, 0.40);
                        fx_rate(&f, 50 + c, c, 5000);
                }
                assert_int_equal(fx_step(&f, (uint64_t) (ELEMENTSOF(cpu1) + 60 + k) * SEC), 0);
        }
        assert_non_null(fx_queue(&f, "eth0", stays));
        if (cpuset_empty(KEPT(&fx_queue(&f, "eth0", stays)->rps_cpus)))
                fail_msg("CPU1 at 60%%: no RPS for rx-%d", stays);
        fx_free(&f);
}

/* Ticks 1..ticks of the model: the IRQ moves made, each printed and
 * passed to check (may be NULL). */
static unsigned fx_irq_moves(struct fx *f, int ticks, void (*check)(const struct action *)) {
        unsigned moves = 0;

        for (int k = 1; k <= ticks; k++) {
                fx_model(f, NULL);
                assert_int_equal(fx_step(f, (uint64_t) k * SEC), 0);
                for (size_t a = 0; a < f->l.n; a++) {
                        const struct action *x = &f->l.v[a];
                        if (x->type != KNOB_IRQ)
                                continue;
                        print_message("    tick %d: %s\n", k, x->reason);
                        if (check)
                                check(x);
                        moves++;
                }
        }
        return moves;
}

/* test_move_all_hot's only move: a small queue (IRQ 52-54) onto CPU0. */
static void small_queue_to_cpu0(const struct action *x) {
        assert_true(x->irq >= 52 && cpuset_only(KEPT(&x->cpus)) == 0);
}

/* A host where every CPU is hot still takes work off the busiest: 2 CPUs,
 * CPU0 at 82% with one queue, CPU1 saturated with a big queue and three
 * small ones.  Moving a small one to CPU0 lowers the peak by min_gain
 * (5% here); targets were only CPUs that were not hot, so nothing moved
 * on an overloaded host.  Once moved, nothing moves back. */
static void test_move_all_hot(void **state) {
        struct fx f;
        unsigned moves;

        (void) state;
        fx_init(&f, 2, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.single_queue_rps = false;
        f.cfg.min_gain = 0.05;
        fx_add_nic(&f, "eth0", 0, 5, true, 50, false, false);
        fx_place(&f, 50, 0);
        f.q[0][0] = (struct fx_queue_model){ 0.82, 8000 };
        fx_place(&f, 51, 1);
        f.q[0][1] = (struct fx_queue_model){ 0.64, 6400 };
        for (int q = 2; q < 5; q++) {
                fx_place(&f, 50 + q, 1);
                f.q[0][q] = (struct fx_queue_model){ 0.12, 1200 };
        }
        moves = fx_irq_moves(&f, 60, small_queue_to_cpu0);
        for (size_t i = 0; i < f.rep.n_hot_cpus; i++)
                print_message("    hot CPU%d %.2f: %s\n", f.rep.hot_cpus[i].cpu, f.load.cpus[f.rep.hot_cpus[i].cpu].softirq, f.rep.hot_cpus[i].why);
        assert_int_equal(moves, 1);
        assert_true(fx_peak(&f) < 0.95);
        fx_free(&f);
}

/* A saturated CPU's demand is not its 100%: 2 CPUs, CPU0 with queues of
 * 0.7 and 0.6 CPU (1.3, it serves 100% and drops the rest, which
 * softnet_stat shows), CPU1 with one of 0.62 beside 38% user.  Judged on
 * the 100%, moving the 0.6 queue (46% of it) to CPU1 makes it 108%: no
 * gain, and the peak demand stayed at 1.3.  Judged on the demand, the
 * move takes the peak to 1.22; once made, nothing moves back. */
static void test_move_saturated_demand(void **state) {
        struct fx f;
        unsigned moves;
        double demand[2];

        (void) state;
        fx_init(&f, 2, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.single_queue_rps = false;
        f.cfg.min_gain = 0.05;
        f.drops = true;
        fx_add_nic(&f, "eth0", 0, 3, true, 50, false, false);
        fx_place(&f, 50, 0);
        f.q[0][0] = (struct fx_queue_model){ 0.7, 7000 };
        fx_place(&f, 51, 0);
        f.q[0][1] = (struct fx_queue_model){ 0.6, 6000 };
        fx_place(&f, 52, 1);
        f.q[0][2] = (struct fx_queue_model){ 0.62, 6200 };
        f.user[0] = 0;
        f.user[1] = 0.38;
        moves = fx_irq_moves(&f, 60, NULL);
        demand[0] = demand[1] = 0;
        for (int q = 0; q < 3; q++)
                demand[fx_irq_cpu(&f, 50 + q)] += f.q[0][q].work;
        print_message("    demand CPU0 %.2f CPU1 %.2f\n", demand[0], demand[1]);
        assert_int_equal(moves, 1);
        assert_true(MAX(demand[0], demand[1]) < 1.25);
        fx_free(&f);
}

/* A saturated CPU's only busy queue goes where user load leaves room
 * (seed 18000 in small): the queue's work saturates CPU0 beside its 45%
 * user load while CPU3 runs 10%.  Network demand alone sees no gain in
 * a move, and the only busy queue stayed: CPU0 without idle for the
 * whole run beside a CPU 60% idle.  Now it moves once, to CPU3, which
 * keeps idle; with RPS, CPU3 leaves the queue's set.  Nothing moves
 * after.  A CPU short of idle with under saturated_share of network
 * work keeps its queue.  A queue that keeps most of its work on its IRQ
 * CPU, with one big flow (seed 19029: virtio, 81% interrupt work) gets
 * RPS on its saturated CPU, where its share is never measured: the prior
 * share (40%) read a fifth of a CPU on each set CPU that was not there,
 * and the move for room saturated CPU3 (8% idle) and set off a hot move
 * back.  It stays. */
static void test_move_for_room(void **state) {
        static const struct {
                const char *what;
                int nq;                  /* queues, queue q on CPUq; RPS where rps */
                bool rps;
                double work, share, elephant, user0, user3;
                int cpu;                 /* where the queue's IRQ ends */
        } cases[] = {
                { "single-queue NIC with RPS", 1, true, 1.4, 0.35, 0, 0.45, 0.10, 3 },
                { "lone queue without RPS", 2, false, 0.6, 0, 0, 0.45, 0.10, 3 },
                /* CPU3 ends with 12% idle: less than saturated_idle and
                 * the least gain, far more than CPU0's none (seed 20000) */
                { "lone queue, little room but more", 2, false, 0.6, 0, 0, 0.45, 0.28, 3 },
                /* under saturated_share: the user load starves CPU0, not the queue */
                { "small queue beside user load", 2, false, 0.08, 0, 0, 0.95, 0.10, 0 },
                /* under saturated_share too, but short of idle by the
                 * queue alone (seed 21021: 27% beside 65% user, 4% idle,
                 * a hole for the whole run) */
                { "queue under saturated_share beside user load", 2, false, 0.27, 0, 0, 0.67, 0.10, 3 },
                /* a queue IRQ on every CPU: its share is never measured */
                { "queue of one big flow, share unmeasured", 8, true, 0.72, 0.82, 0.9, 0.45, 0.30, 0 },
        };
        static const double user[8] = { 0.45, 0.40, 0.42, 0.10, 0.38, 0.45, 0.35, 0.40 };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                unsigned moves = 0, late = 0;
                int cpu;
                double served;

                print_message("  %s\n", cases[i].what);
                fx_init(&f, 8, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.cfg.initial_layout = false;
                fx_add_nic(&f, "eth0", 0, cases[i].nq, true, 50, cases[i].rps, false);
                fx_place(&f, 50, 0);
                f.q[0][0] = (struct fx_queue_model){ cases[i].work, 20000, cases[i].share, .elephant = cases[i].elephant };
                for (int q = 1; q < cases[i].nq; q++) {
                        fx_place(&f, 50 + (unsigned) q, q);
                        f.q[0][q] = (struct fx_queue_model){ 0.02, 500 };
                }
                memcpy(f.user, user, sizeof(user));
                f.user[0] = cases[i].user0;
                f.user[3] = cases[i].user3;
                for (int k = 1; k <= 70; k++) {
                        fx_model(&f, NULL);
                        assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                        for (size_t a = 0; a < f.l.n; a++) {
                                if (f.l.v[a].type == KNOB_IRQ) {
                                        moves++;
                                        late += k > 40;
                                }
                                print_message("    tick %d: %s\n", k, f.l.v[a].reason);
                        }
                }
                cpu = fx_irq_cpu(&f, 50);
                served = f.load.cpus[cpu].irq + f.load.cpus[cpu].softirq;
                print_message("    IRQ on CPU%d: %.0f%% network, %.0f%% user, %.0f%% idle, %u moves\n", cpu,
                              100 * served, 100 * f.load.cpus[cpu].usr, 100 * f.load.cpus[cpu].idle, moves);
                assert_int_equal(cpu, cases[i].cpu);
                if (cases[i].cpu != 0)
                        assert_true(f.load.cpus[cpu].idle >= f.cfg.saturated_idle / 2);
                if (cases[i].nq == 1)
                        assert_false(cpuset_isset(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus), 3));
                assert_int_equal(late, 0);
                fx_free(&f);
        }
}

/* The rest of an indivisible queue: 4 CPUs, CPU0 with a queue of 2 CPUs
 * (85% of it interrupt work, which RPS cannot take off) and two of 0.2
 * (seed 16030's CPU75).  RPS spreads the big queue's protocol work, and
 * CPU0 still asks 2.1 CPUs; the small queues, 8% each of the 100% it
 * serves (their share of its interrupts), were under the tenth of its
 * load a busy queue needs, so they stayed and the peak demand with them.
 * Once the busiest spreads, the queues beside it count: the big one
 * ends alone, at its own part (1.7) and its RPS cost. */
/* A tx IRQ apart waits for its NIC's share to be measured only while it
 * can be: a single-queue NIC's set over every CPU leaves no RPS CPU where
 * one NIC alone steers (policy-share.c), and no CPU that no queue IRQ or
 * set uses (seed 20032: the tx vector's 6.6% of a CPU stayed beside 55%
 * user, 1.20 and a hole for the whole run). */
static void test_tx_apart_unmeasured(void **state) {
        struct fx f;
        unsigned late = 0;

        (void) state;
        fx_init(&f, 16, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        fx_add_nic(&f, "eth0", 0, 4, false, 30, true, false);
        fx_add_nic(&f, "eth1", 0, 1, true, 50, true, false);
        f.q[0][0] = (struct fx_queue_model){ 0.40, 20000, 0.85, 0.07, 3000 };
        for (int q = 1; q < 4; q++)
                f.q[0][q] = (struct fx_queue_model){ 0.03, 1500, 0.85, 0.005, 200 };
        f.q[1][0] = (struct fx_queue_model){ 0.30, 10000, 0.40 };
        for (int c = 0; c < 16; c++)
                f.user[c] = 0.50;
        for (int k = 1; k <= 90; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, (uint64_t) k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        late += k > 60;
                        print_message("    tick %d: %s\n", k, f.l.v[a].reason);
                }
        }
        assert_false(cpuset_isset(KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus), fx_irq_cpu(&f, 34)));
        assert_int_not_equal(fx_irq_cpu(&f, 34), fx_irq_cpu(&f, 30));
        assert_int_equal(late, 0);
        fx_free(&f);
}

static void test_move_beside_spread(void **state) {
        struct fx f;
        unsigned moves;
        double demand[4] = { 0 }, peak = 0;
        const cpuset_t *rps;
        int big;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.cfg.single_queue_rps = false;
        f.drops = true;
        fx_add_nic(&f, "eth0", 0, 3, true, 50, true, false);
        fx_place(&f, 50, 0);
        f.q[0][0] = (struct fx_queue_model){ 2.0, 20000, 0.85 };
        for (int q = 1; q < 3; q++) {
                fx_place(&f, 50 + q, 0);
                f.q[0][q] = (struct fx_queue_model){ 0.2, 2000 };
        }
        for (int c = 0; c < 4; c++)
                f.user[c] = 0.1;
        moves = fx_irq_moves(&f, 60, NULL);
        rps = KEPT(&fx_queue(&f, "eth0", 0)->rps_cpus);
        big = fx_irq_cpu(&f, 50);
        demand[big] += 0.85 * 2.0 + f.rps_cost * 0.15 * 2.0;
        CPUSET_FOREACH(c, rps)
                demand[c] += 0.15 * 2.0 / cpuset_count(rps);
        for (int q = 1; q < 3; q++)
                demand[fx_irq_cpu(&f, 50 + q)] += f.q[0][q].work;
        for (int c = 0; c < 4; c++)
                peak = MAX(peak, demand[c]);
        for (size_t i = 0; i < f.rep.n_hot_cpus; i++)
                print_message("    hot CPU%d: %s\n", f.rep.hot_cpus[i].cpu, f.rep.hot_cpus[i].why);
        print_message("    peak demand %.2f, %u moves\n", peak, moves);
        assert_int_not_equal(cpuset_count(rps), 0);
        assert_true(moves >= 1);
        assert_true(peak < 1.8);
        fx_free(&f);
}

/* Room for a saturated CPU's work: another CPU idle for more than
 * saturated_share (30%), not just twice saturated_idle (20%).  The veth
 * case on a 2-CPU VM: CPU0 33% soft, 4% idle, CPU1 23% soft and 25% idle;
 * RPS to CPU1 cost a quarter of the throughput. */
static void test_saturated_room(void **state) {
        static const struct {
                double other_soft, other_user;
                bool hot;
        } cases[] = {
                { 0.23, 0.52, false }, /* 25% idle: no room */
                { 0.23, 0.48, false }, /* 29% idle: no room */
                { 0.23, 0.42, true },  /* 35% idle: room */
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, 2, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                f.cfg.single_queue_rps = false;
                f.cfg.balance_ratio = 0;
                fx_add_nic(&f, "eth0", 0, 1, true, 50, true, false);
                fx_place(&f, 50, 0);
                for (int k = 1; k <= 3; k++) {
                        fx_cpu(&f, 0, 0.33, 0.63);
                        fx_cpu(&f, 1, cases[i].other_soft, cases[i].other_user);
                        fx_rate(&f, 50, 0, 10000);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                }
                if (cases[i].hot) {
                        assert_true(f.rep.n_hot_cpus == 1 && f.rep.hot_cpus[0].cpu == 0 && f.rep.hot_cpus[0].saturated);
                        /* CPU1 has 23% already: both CPUs share the protocol work */
                        expect_actions("room", &f.l, "rps eth0/0>0-1;");
                } else {
                        assert_int_equal(f.rep.n_hot_cpus, 0);
                        expect_actions("no room", &f.l, "");
                }
                fx_free(&f);
        }
}

/* Per-queue packet counters (netdev qstats) split a CPU's network work
 * among its queues instead of their interrupt rates: three queues on hot
 * CPU0, queue 2 raising 6 times the interrupts of the others but moving a
 * sixth of queue 0's packets (NAPI polls more packets an interrupt on a
 * busy queue).  With the counters queue 0 moves; without them, the
 * interrupt count makes queue 2 look the heaviest and it moves. */
static void test_queue_packets_split(void **state) {
        (void) state;
        for (int with = 0; with < 2; with++) {
                struct fx f;

                fx_init(&f, 2, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                f.cfg.single_queue_rps = false;
                fx_add_nic(&f, "eth0", 0, 3, true, 50, false, false);
                for (unsigned irq = 50; irq <= 52; irq++)
                        fx_place(&f, irq, 0);
                if (with) {
                        static const struct sample_queue q[] = {
                                { .ifindex = 2, .type = NETDEV_QUEUE_RX, .queue = 0, .pps = 60000 },
                                { .ifindex = 2, .type = NETDEV_QUEUE_RX, .queue = 1, .pps = 10000 },
                                { .ifindex = 2, .type = NETDEV_QUEUE_RX, .queue = 2, .pps = 10000 },
                                { .ifindex = 2, .type = NETDEV_QUEUE_TX, .queue = 0, .pps = 0 },
                                { .ifindex = 2, .type = NETDEV_QUEUE_TX, .queue = 1, .pps = 0 },
                                { .ifindex = 2, .type = NETDEV_QUEUE_TX, .queue = 2, .pps = 0 },
                        };
                        f.load.queues = malloc(sizeof(q));
                        assert_non_null(f.load.queues);
                        memcpy(f.load.queues, q, sizeof(q));
                        f.load.n_queues = ELEMENTSOF(q);
                        f.load.queues_read = true;
                }
                for (int k = 1; k <= 3; k++) {
                        fx_cpu(&f, 0, 0.80, 0.10);
                        fx_cpu(&f, 1, 0.0, 0.05);
                        fx_rate(&f, 50, 0, 1000);
                        fx_rate(&f, 51, 0, 1000);
                        fx_rate(&f, 52, 0, 6000);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                }
                expect_actions(with ? "packet counters" : "interrupt rates", &f.l,
                               with ? "irq 50>1;" : "irq 52>1;");
                free(f.load.queues);
                f.load.queues = NULL;
                f.load.n_queues = 0;
                fx_free(&f);
        }
}

/* ---- eligibility and NUMA ---- */

static void check_eligible(const char *what, const struct action_list *l, const cpuset_t *ok) {
        for (size_t i = 0; i < l->n; i++) {
                const struct action *a = &l->v[i];
                char line[1024];
                if (a->type == KNOB_FLOWCNT || a->type == KNOB_SOCKFLOW)
                        continue;
                action_format(a, line, sizeof(line));
                if (cpuset_empty(KEPT(&a->cpus)) && a->type != KNOB_RPS)
                        fail_msg("%s: empty mask: %s", what, line);
                if (!cpuset_subset(KEPT(&a->cpus), ok))
                        fail_msg("%s: ineligible CPU in %s", what, line);
        }
}

static void test_never_ineligible(void **state) {
        static const struct {
                const char *what;
                enum worker_policy wp;
                bool single_queue;
        } cases[] = {
                { "8 queues, spread workers", WORKER_SPREAD, false },
                { "8 queues, avoid-net workers", WORKER_AVOID_NET, false },
                { "8 queues, colocated workers", WORKER_COLOCATE, false },
                { "single-queue NIC, RPS", WORKER_SPREAD, true },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                struct config_worker *w;
                uint64_t seed = 42 + i;
                double noise[FX_MAX_CPUS];
                cpuset_t ok;
                int nq = cases[i].single_queue ? 1 : 8;
                /* actions per type (IRQ and RPS ones after the initial
                 * layout): a policy that never acts would pass the
                 * eligibility check vacuously */
                unsigned acted[KNOB_KIND_MAX] = { 0 };

                fx_init(&f, 8, 1, FX_SMT_NONE);
                fx_isolate(&f, 1);
                fx_nohz(&f, 2);
                cpuset_set(&f.cfg.banned_cpus, 3);
                fx_cpu_offline(&f, 7);
                cpuset_parse_list("0,4-6", &ok);
                fx_add_nic(&f, "eth0", 0, nq, true, 30, true, true);
                f.cfg.workers = w = calloc(1, sizeof(*w));
                f.cfg.n_workers = 1;
                w->name = "app";
                w->policy = cases[i].wp;
                fx_add_proc(&f, 0, 1000, 6);
                /* hot, uneven queues so that moves and RPS happen */
                for (int q = 0; q < nq; q++)
                        f.q[0][q] = (struct fx_queue_model){ q < 2 ? 0.7 : 0.3, q < 2 ? 30000 : 5000 };
                for (unsigned k = 0; k < 300; k++) {
                        for (int c = 0; c < 8; c++)
                                noise[c] = 0.9 + 0.2 * fx_rand(&seed);
                        if (k > 0)
                                fx_model(&f, noise);
                        if (k == 150)
                                for (int q = 0; q < nq; q++)
                                        f.q[0][q].work = 0.1;
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        check_eligible(cases[i].what, &f.l, &ok);
                        for (size_t a = 0; a < f.l.n; a++)
                                if (!cpuset_empty(KEPT(&f.l.v[a].cpus)) &&
                                    (k > 0 || f.l.v[a].type == KNOB_THREAD))
                                        acted[f.l.v[a].type]++;
                }
                if (cases[i].single_queue ? acted[KNOB_RPS] == 0 : acted[KNOB_IRQ] == 0)
                        fail_msg("%s: no %s after the initial layout", cases[i].what,
                                 cases[i].single_queue ? "RPS change" : "IRQ move");
                if (acted[KNOB_THREAD] == 0)
                        fail_msg("%s: no worker pinned", cases[i].what);
                free(w);
                f.cfg.workers = NULL;
                fx_free(&f);
        }
}

/* Nothing we manage on a CPU outside ok: IRQ masks of managed NICs, RPS
 * and XPS masks, worker threads. */
static void check_vacated(const char *what, struct fx *f, const cpuset_t *ok) {
        char list[64];

        for (size_t i = 0; i < f->inv.n_irqs; i++)
                if (!cpuset_subset(KEPT(&f->inv.irqs[i].affinity), ok))
                        fail_msg("%s: IRQ %u still on %s", what, f->inv.irqs[i].irq,
                                 (cpuset_format_list(KEPT(&f->inv.irqs[i].affinity), list, sizeof(list)), list));
        for (size_t n = 0; n < f->inv.n_nics; n++)
                for (size_t q = 0; q < f->inv.nics[n].n_queues; q++) {
                        const struct inventory_queue *iq = &f->inv.nics[n].queues[q];
                        if (!cpuset_subset(KEPT(&iq->rps_cpus), ok) || !cpuset_subset(KEPT(&iq->xps_cpus), ok))
                                fail_msg("%s: queue %zu's RPS or XPS still on a banned CPU", what, q);
                }
        for (size_t p = 0; p < f->ws.n_procs; p++)
                for (size_t t = 0; t < f->ws.procs[p].n_threads; t++)
                        if (!cpuset_subset(&f->ws.procs[p].threads[t].allowed, ok))
                                fail_msg("%s: thread %d still on a banned CPU", what,
                                         (int) f->ws.procs[p].threads[t].tid);
}

/* A runtime ban (or a reload's banned_cpus) empties the banned CPUs of
 * everything we manage in the first tick that sees it, dwell and the move
 * cap notwithstanding; once the ban is lifted the policy uses them again
 * when a hot CPU gives it a reason to. */
static void test_ban_vacates(void **state) {
        static const struct {
                const char *what;
                enum worker_policy wp;
                bool single_queue;
                bool by_config;           /* banned_cpus changed (a reload), not a runtime ban */
                bool reused;              /* the load after the lift makes CPUs 2-3 worth using */
        } cases[] = {
                { "8 queues, spread workers", WORKER_SPREAD, false, false, true },
                { "8 queues, avoid-net workers", WORKER_AVOID_NET, false, false, true },
                { "8 queues, colocated workers", WORKER_COLOCATE, false, false, true },
                /* its RPS mask widens only when its RPS CPUs are hot: at
                 * 1.5 times the load they are at 12% */
                { "single-queue NIC, RPS", WORKER_SPREAD, true, false, false },
                { "single-queue NIC, RPS, banned_cpus reloaded", WORKER_SPREAD, true, true, false },
                { "8 queues, banned_cpus reloaded", WORKER_SPREAD, false, true, true },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                struct config_worker *w;
                uint64_t seed = 7 + i;
                double noise[FX_MAX_CPUS];
                cpuset_t ok, all, ban;
                int nq = cases[i].single_queue ? 1 : 8;
                bool used = false;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                cpuset_parse_list("0-7", &all);
                cpuset_parse_list("0-1,4-7", &ok);
                cpuset_parse_list("2-3", &ban);
                fx_add_nic(&f, "eth0", 0, nq, true, 30, true, true);
                f.cfg.workers = w = calloc(1, sizeof(*w));
                f.cfg.n_workers = 1;
                w->name = "app";
                w->policy = cases[i].wp;
                fx_add_proc(&f, 0, 1000, 6);
                for (int q = 0; q < nq; q++)
                        f.q[0][q] = (struct fx_queue_model){ q < 2 ? 0.7 : 0.3, q < 2 ? 30000 : 5000 };
                for (unsigned k = 0; k < 400; k++) {
                        for (int c = 0; c < 8; c++)
                                noise[c] = 0.9 + 0.2 * fx_rand(&seed);
                        if (k > 0)
                                fx_model(&f, noise);
                        if (k == 100) {
                                /* something of ours uses CPU2 or 3 before the ban */
                                for (size_t r = 0; r < f.inv.n_irqs; r++)
                                        used |= cpuset_intersects(KEPT(&f.inv.irqs[r].affinity), &ban);
                                used |= cpuset_intersects(KEPT(&f.inv.nics[0].queues[0].rps_cpus), &ban);
                                if (!used)
                                        fail_msg("%s: nothing on CPUs 2-3 before the ban", cases[i].what);
                                if (cases[i].by_config) {
                                        f.cfg.banned_cpus = ban;
                                        policy_reset(f.st);
                                } else {
                                        f.bans = ban;
                                }
                        }
                        if (k == 200) {
                                if (cases[i].by_config) {
                                        cpuset_zero(&f.cfg.banned_cpus);
                                        policy_reset(f.st);
                                } else {
                                        cpuset_zero(&f.bans);
                                }
                                /* at this load no CPU is hot and the lift
                                 * alone moves nothing back (hysteresis); at
                                 * 1.5 times it the CPUs that took two
                                 * queues or a 0.7 one get hot, and CPUs 2-3
                                 * are the coolest targets of a move or RPS */
                                for (int q = 0; q < nq; q++)
                                        f.q[0][q].work *= 1.5;
                                used = false;
                        }
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        check_eligible(cases[i].what, &f.l, k >= 100 && k < 200 ? &ok : &all);
                        if (k >= 100 && k < 200)
                                check_vacated(cases[i].what, &f, &ok);
                        if (k >= 200) {
                                for (size_t r = 0; r < f.inv.n_irqs; r++)
                                        used |= cpuset_intersects(KEPT(&f.inv.irqs[r].affinity), &ban);
                                used |= cpuset_intersects(KEPT(&f.inv.nics[0].queues[0].rps_cpus), &ban);
                        }
                }
                if (cases[i].reused && !used)
                        fail_msg("%s: CPUs 2-3 never used again in 200 ticks after the unban", cases[i].what);
                assert_int_equal(count_notes(&f.rep, "someone else"), 0);
                free(w);
                f.cfg.workers = NULL;
                fx_free(&f);
        }
}

/* IRQs that are no queue's (another device's, a NIC's admin vector) leave
 * banned CPUs too, in the tick the ban shows; a kernel-managed one is
 * tried once and left alone; an IRQ of an interface with manage = no, or
 * in ban_irqs, is never touched. */
static void test_ban_other_irqs(void **state) {
        struct fx f;
        struct policy_input in;
        cpuset_t s;
        char buf[512];
        struct config_interface ci = { .match = "eth1", .manage = false, .rps = TRI_INHERIT, .rfs = TRI_INHERIT,
                                       .xps = TRI_INHERIT };

        (void) state;
        fx_init(&f, 8, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 4, true, 30, false, false);
        fx_add_nic(&f, "eth1", 0, 1, true, 40, false, false);
        f.cfg.interfaces = &ci;
        f.cfg.n_interfaces = 1;
        fx_add_irq(&f, 60, "nvme0q1", -1, -1, INVENTORY_IRQ_NONE);
        fx_add_irq(&f, 61, "ttyS0", -1, -1, INVENTORY_IRQ_NONE);
        KEEP(&fx_irq(&f, 61)->affinity, cpuset_single(2));
        fx_add_irq(&f, 62, "eth0-adm", 0, -1, INVENTORY_IRQ_OTHER);
        KEEP(&fx_irq(&f, 62)->affinity, cpuset_single(3));
        fx_add_irq(&f, 63, "nvme0q2", -1, -1, INVENTORY_IRQ_NONE);
        KEEP(&fx_irq(&f, 63)->affinity, cpuset_single(3));
        fx_add_irq(&f, 64, "eth1-adm", 1, -1, INVENTORY_IRQ_OTHER);
        KEEP(&fx_irq(&f, 64)->affinity, cpuset_single(2));
        for (int q = 0; q < 4; q++)
                f.q[0][q] = (struct fx_queue_model){ 0.1, 1000 };
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        fx_fmt(&f.l, buf, sizeof(buf));
        if (strstr(buf, "irq 6"))
                fail_msg("other IRQs moved without a ban: %s", buf);

        /* ban_irqs: queue IRQ 32 (laid out on CPU2) and 61 stay put */
        assert_int_equal(fx_irq_cpu(&f, 32), 2);
        f.cfg.ban_irqs.v[0] = 32;
        f.cfg.ban_irqs.v[1] = 61;
        f.cfg.ban_irqs.n = 2;
        cpuset_parse_list("2-3", &f.bans);
        fx_model(&f, NULL);
        in = fx_input(&f, 2 * SEC);
        assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
        fx_fmt(&f.l, buf, sizeof(buf));
        /* 63 is kernel-managed: the write fails with EIO */
        fx_apply(&f, 2 * SEC, 63, -EIO);
        if (!strstr(buf, "irq 60>0-1,4-7;") || strstr(buf, "irq 61>") || !strstr(buf, "irq 62>0-1,4-7;") ||
            !strstr(buf, "irq 63>0-1,4-7;") || strstr(buf, "irq 64>") || strstr(buf, "irq 32>") ||
            !strstr(buf, "irq 33>"))
                fail_msg("ban: %s", buf);
        assert_int_equal(fx_step(&f, 3 * SEC), 0);
        fx_fmt(&f.l, buf, sizeof(buf));
        if (strstr(buf, "irq 6"))
                fail_msg("other IRQs again: %s", buf);
        assert_int_equal(f.rep.n_managed_irqs, 1);
        /* every IRQ by class: 63 kernel-managed, 32 and 61 in ban_irqs,
         * eth1's queue and admin vector (manage = no) left alone */
        {
                static const struct {
                        enum classify_irq_class c;
                        unsigned n;
                } want[] = {
                        { CLASSIFY_IRQ_KERNEL_MANAGED, 1 }, { CLASSIFY_IRQ_BANNED, 2 }, { CLASSIFY_IRQ_LEFT_ALONE, 2 },
                        { CLASSIFY_IRQ_NIC_QUEUE, 3 },      { CLASSIFY_IRQ_OTHER, 2 },
                };
                for (size_t k = 0; k < ELEMENTSOF(want); k++)
                        if (f.rep.n_irq_class[want[k].c] != want[k].n)
                                fail_msg("class %s: %u IRQs, want %u", classify_irq_class_to_string(want[k].c),
                                         f.rep.n_irq_class[want[k].c], want[k].n);
                assert_int_equal(f.rep.n_kernel_managed_irqs, 1);
                assert_int_equal(f.rep.kernel_managed_irqs[0], 63);
        }
        cpuset_parse_list("0-1,4-7", &s);
        assert_true(cpuset_equal(KEPT(&fx_irq(&f, 60)->affinity), &s));
        assert_int_equal(cpuset_only(KEPT(&fx_irq(&f, 64)->affinity)), 2);   /* manage = no */

        /* someone puts 60 back on banned CPU2: noted once and, bans
         * winning over the hold, taken back at once */
        KEEP(&fx_irq(&f, 60)->affinity, cpuset_single(2));
        assert_int_equal(fx_step(&f, 4 * SEC), 0);
        fx_fmt(&f.l, buf, sizeof(buf));
        if (strcmp(buf, "irq 60>0-1,4-7;") != 0 || f.l.v[0].why != ACTION_REASON_CPU_BANNED)
                fail_msg("external change onto a banned CPU not taken back: %s", buf);
        assert_int_equal(count_notes(&f.rep, "IRQ 60 was changed by someone else (CPU0-1,4-7 -> CPU2); taking it back"), 1);
        /* the journal's IRQ= field, and the daemon names irqbalance by the kind */
        {
                const struct policy_note *no = find_note(&f.rep, "IRQ 60 was changed by someone else");
                assert_int_equal(no->kind, POLICY_NOTE_EXTERNAL);
                assert_int_equal(no->irq, 60);
                assert_string_equal(no->device, "");
                assert_int_equal(no->queue, -1);
        }

        /* other_irqs = no: a fresh state with the ban in force moves only
         * the queue IRQs */
        policy_state_free(f.st);
        f.st = policy_state_new();
        f.cfg.other_irqs = false;
        KEEP(&fx_irq(&f, 62)->affinity, cpuset_single(3));
        assert_int_equal(fx_step(&f, 5 * SEC), 0);
        fx_fmt(&f.l, buf, sizeof(buf));
        if (strstr(buf, "irq 6"))
                fail_msg("other_irqs = no: %s", buf);
        f.cfg.interfaces = NULL;
        f.cfg.n_interfaces = 0;
        fx_free(&f);
}

/* ---- IRQs of other devices ---- */

/* Where IRQ 60 (another device's) ends after eight ticks on a 2-node host
 * whose eth0 (node 0) queues fill CPUs 0-2, and that it stays there. */
static void test_other_irqs_placement(void **state) {
        static const struct {
                const char *what;
                int node;
                const char *mask;
                double rate, work;
                const char *bans;
                int isolated, nohz;
                bool other_irqs, ban_irq;
                const char *want;
        } cases[] = {
                { "quiet, node 1, all CPUs: onto node 1", 1, "0-7", 0, 0, "", -1, -1, true, false, "4-7" },
                { "quiet, node unknown, all CPUs: all nodes are local, left", -1, "0-7", 0, 0, "", -1, -1, true, false,
                  "0-7" },
                { "quiet, node 1, on a node 1 CPU: left", 1, "5", 0, 0, "", -1, -1, true, false, "5" },
                { "quiet, node 1, on a node 0 CPU: onto node 1", 1, "1", 0, 0, "", -1, -1, true, false, "4-7" },
                { "quiet, node 1, CPU5 banned", 1, "0-7", 0, 0, "5", -1, -1, true, false, "4,6-7" },
                { "quiet, node 0, on isolated CPU2: off it", 0, "2", 0, 0, "", 2, -1, true, false, "0-1,3" },
                { "busy, node 1, all CPUs: the first idle node 1 CPU", 1, "0-7", 20000, 0.2, "", -1, -1, true, false,
                  "4" },
                { "busy, node 0: the queues laid out by load around it, alone on CPU0", 0, "0-7", 20000, 0.2, "", -1,
                  -1, true, false, "0" },
                { "busy, node 1, on banned CPU5: off at once", 1, "5", 20000, 0.2, "5", -1, -1, true, false, "4" },
                { "busy, node 1, CPU4 nohz_full", 1, "0-7", 20000, 0.2, "", -1, 4, true, false, "5" },
                { "busy on a node 0 CPU: onto node 1", 1, "2", 20000, 0.2, "", -1, -1, true, false, "4" },
                { "ban_irqs: left where it is", 1, "0-7", 20000, 0.2, "", -1, -1, true, true, "0-7" },
                { "ban_irqs: left even on a banned CPU", 1, "5", 0, 0, "5", -1, -1, true, true, "5" },
                { "other_irqs = no: left", 1, "0-7", 20000, 0.2, "", -1, -1, false, false, "0-7" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char got[256], buf[512];
                struct fx f;

                fx_init(&f, 8, 2, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", 0, 3, true, 30, false, false);
                for (int q = 0; q < 3; q++)
                        f.q[0][q] = (struct fx_queue_model){ 0.3, 3000 };
                fx_add_irq(&f, 60, "nvme0q1", -1, -1, INVENTORY_IRQ_NONE);
                fx_irq(&f, 60)->node = cases[i].node;
                assert_int_equal(test_keep_list(&fx_irq(&f, 60)->affinity, cases[i].mask), 0);
                f.other[f.n_other++] = (struct fx_other_model){ 60, cases[i].rate, cases[i].work };
                if (cases[i].bans[0])
                        assert_int_equal(cpuset_parse_list(cases[i].bans, &f.bans), 0);
                if (cases[i].isolated >= 0)
                        fx_isolate(&f, cases[i].isolated);
                if (cases[i].nohz >= 0)
                        fx_nohz(&f, cases[i].nohz);
                f.cfg.other_irqs = cases[i].other_irqs;
                if (cases[i].ban_irq) {
                        f.cfg.ban_irqs.v[0] = 60;
                        f.cfg.ban_irqs.n = 1;
                }
                assert_int_equal(fx_ticks(&f, 1, 8), 0);
                fx_fmt(&f.l, buf, sizeof(buf));
                if (strstr(buf, "irq 60>"))
                        fail_msg("%s: still moving at the eighth tick: %s", cases[i].what, buf);
                assert_int_equal(cpuset_format_list(KEPT(&fx_irq(&f, 60)->affinity), got, sizeof(got)), 0);
                if (strcmp(got, cases[i].want) != 0)
                        fail_msg("%s: IRQ 60 on %s, want %s", cases[i].what, got, cases[i].want);
                fx_free(&f);
        }
}

/* Two busy storage IRQs that both fire on CPU0 go to two CPUs once the
 * layout's CPUs have settled; they stay
 * under noise; one that shares a hot CPU with a queue leaves it, once
 * (dwell), and the move counts as one. */
static void test_other_irqs_spread(void **state) {
        uint64_t seed = 42;
        double noise[8];
        char buf[1024];
        unsigned moved = 0;
        int c61, c62, q1;
        struct fx f;

        (void) state;
        fx_init(&f, 8, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 4, true, 30, false, false);
        for (int q = 0; q < 4; q++)
                f.q[0][q] = (struct fx_queue_model){ 0.2, 3000 };
        fx_add_irq(&f, 61, "nvme0q1", -1, -1, INVENTORY_IRQ_NONE);
        fx_add_irq(&f, 62, "nvme0q2", -1, -1, INVENTORY_IRQ_NONE);
        fx_add_irq(&f, 63, "ttyS0", -1, -1, INVENTORY_IRQ_NONE);
        f.other[f.n_other++] = (struct fx_other_model){ 61, 30000, 0.25 };
        f.other[f.n_other++] = (struct fx_other_model){ 62, 30000, 0.25 };
        f.other[f.n_other++] = (struct fx_other_model){ 63, 5, 0.0001 };
        assert_int_equal(fx_ticks(&f, 1, 8), 0);
        c61 = fx_irq_cpu(&f, 61);
        c62 = fx_irq_cpu(&f, 62);
        if (cpuset_count(KEPT(&fx_irq(&f, 61)->affinity)) != 1 || cpuset_count(KEPT(&fx_irq(&f, 62)->affinity)) != 1 ||
            c61 == c62 || c61 < 4 || c62 < 4)
                fail_msg("two busy storage IRQs: on CPU%d and CPU%d (%d, %d CPUs), want two of the idle 4-7", c61,
                         c62, cpuset_count(KEPT(&fx_irq(&f, 61)->affinity)), cpuset_count(KEPT(&fx_irq(&f, 62)->affinity)));
        /* the quiet one: all CPUs are local and eligible, left */
        assert_int_equal(cpuset_count(KEPT(&fx_irq(&f, 63)->affinity)), 8);

        /* +-15% noise for two minutes: nothing moves */
        for (unsigned k = 9; k <= 120; k++) {
                for (int c = 0; c < 8; c++)
                        noise[c] = 0.85 + 0.3 * fx_rand(&seed);
                fx_model(&f, noise);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                fx_fmt(&f.l, buf, sizeof(buf));
                if (strstr(buf, "irq 6"))
                        fail_msg("noise at tick %u: %s", k, buf);
        }

        /* 62 is put on queue 1's CPU by hand (noted, left alone), then a
         * reload makes that the baseline; queue 1 triples: its CPU turns
         * hot, the queue is its only busy one, so the storage IRQ goes */
        q1 = fx_irq_cpu(&f, 31);
        assert_true(q1 != c61 && q1 != c62);
        f.q[0][1].work = 0.6;
        fx_place(&f, 62, q1);
        for (unsigned k = 121; k <= 200; k++) {
                if (k == 122) {
                        assert_int_equal(count_notes(&f.rep, "IRQ 62 was changed by someone else"), 1);
                        policy_reset(f.st);
                }
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                fx_fmt(&f.l, buf, sizeof(buf));
                if (strstr(buf, "irq 62>")) {
                        moved++;
                        if (moved == 1 && k != 123)
                                fail_msg("hot CPU%d: IRQ 62 moved at tick %u, want 123 (hot_samples)", q1, k);
                }
                if (strstr(buf, "irq 61>") || strstr(buf, "irq 63>"))
                        fail_msg("tick %u: %s", k, buf);
        }
        if (moved != 1)
                fail_msg("hot CPU%d: IRQ 62 moved %u times, want once", q1, moved);
        if (fx_irq_cpu(&f, 62) == q1 || fx_irq_cpu(&f, 62) == c61 || cpuset_count(KEPT(&fx_irq(&f, 62)->affinity)) != 1)
                fail_msg("IRQ 62 on CPU%d after the move", fx_irq_cpu(&f, 62));
        assert_true(f.rep.n_moves_10min >= 1);
        fx_free(&f);

        /* a CPU one storage IRQ saturates alone: moving it only moves the
         * hot spot, and the hot CPU says so */
        fx_init(&f, 8, 1, FX_SMT_NONE);
        fx_add_irq(&f, 61, "nvme0q1", -1, -1, INVENTORY_IRQ_NONE);
        fx_place(&f, 61, 6);
        f.other[f.n_other++] = (struct fx_other_model){ 61, 90000, 0.9 };
        assert_int_equal(fx_ticks(&f, 1, 5), 0);
        fx_fmt(&f.l, buf, sizeof(buf));
        if (strstr(buf, "irq 61>") || f.rep.n_hot_cpus != 1 || f.rep.hot_cpus[0].cpu != 6 ||
            !strstr(f.rep.hot_cpus[0].why, "no move of another device's IRQ gains min_gain"))
                fail_msg("lone storage IRQ: actions '%s', %zu hot CPUs, why '%s'", buf, f.rep.n_hot_cpus,
                         f.rep.n_hot_cpus ? f.rep.hot_cpus[0].why : "");
        fx_free(&f);
}

/* A lone hot queue whose RPS finds no cool CPU says so, not that RPS is
 * off (it is on, and ours). */
static void test_lone_why_no_cool(void **state) {
        struct fx f;

        (void) state;
        fx_init(&f, 2, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 2, true, 30, true, false);
        f.q[0][0] = (struct fx_queue_model){ 0.9, 9000, 0 };
        f.q[0][1] = (struct fx_queue_model){ 0.85, 8500, 0 };
        assert_int_equal(fx_ticks(&f, 1, 6), 0);
        assert_true(f.rep.n_hot_cpus > 0);
        for (size_t i = 0; i < f.rep.n_hot_cpus; i++) {
                const char *why = f.rep.hot_cpus[i].why;
                print_message("    hot CPU%d: %s\n", f.rep.hot_cpus[i].cpu, why);
                if (strstr(why, "RPS for its busiest queue") && !strstr(why, "finds no cool CPU to take its work"))
                        fail_msg("CPU%d: why '%s'", f.rep.hot_cpus[i].cpu, why);
        }
        assert_true(strstr(f.rep.hot_cpus[0].why, "finds no cool CPU to take its work") != NULL);
        fx_free(&f);
}

/* Ticks from..to (+-15% noise per CPU from *seed, or none when NULL):
 * no action on IRQs 60-69, the other devices' IRQs of these tests. */
static void other_irqs_stay_put(struct fx *f, unsigned from, unsigned to, uint64_t *seed, const char *what) {
        double noise[FX_MAX_CPUS];
        char buf[1024];

        for (unsigned k = from; k <= to; k++) {
                for (int c = 0; seed && c < f->n_cpus; c++)
                        noise[c] = 0.85 + 0.3 * fx_rand(seed);
                fx_model(f, seed ? noise : NULL);
                assert_int_equal(fx_step(f, k * SEC), 0);
                fx_fmt(&f->l, buf, sizeof(buf));
                if (strstr(buf, "irq 6"))
                        fail_msg("%s, tick %u: %s", what, k, buf);
        }
}

/* Quiet IRQs on a mask of all CPUs that all fire on CPU0 (as a platform
 * delivers such a mask) load it together as a busy one would: the
 * heaviest leave, each for a CPU of its own, until those left come to
 * less than a busy IRQ's rate; then nothing moves under noise.  Judged
 * each on its own, none would move. */
static void test_other_irqs_massed(void **state) {
        uint64_t seed = 7;
        cpuset_t used;
        double left = 0;
        unsigned pinned = 0;
        struct fx f;

        (void) state;
        fx_init(&f, 8, 1, FX_SMT_NONE);
        for (int k = 0; k < 6; k++) {
                char name[32];

                snprintf(name, sizeof(name), "nvme0q%d", k + 1);
                fx_add_irq(&f, 60 + k, name, -1, -1, INVENTORY_IRQ_NONE);
                /* 60/s each, 360/s on CPU0 together */
                f.other[f.n_other++] = (struct fx_other_model){ 60 + k, 60, 0.02 };
        }
        assert_int_equal(fx_ticks(&f, 1, 5), 0);
        cpuset_zero(&used);
        for (int k = 0; k < 6; k++) {
                cpuset_t aff = cpuset_kept_get(&fx_irq(&f, 60 + k)->affinity);

                if (cpuset_count(&aff) == 8) {
                        left += 60;
                        continue;
                }
                if (cpuset_count(&aff) != 1 || fx_irq_cpu(&f, 60 + k) == 0 ||
                    cpuset_isset(&used, fx_irq_cpu(&f, 60 + k)))
                        fail_msg("IRQ %d on %d CPUs (CPU%d), want one of its own, not CPU0", 60 + k,
                                 cpuset_count(&aff), fx_irq_cpu(&f, 60 + k));
                cpuset_set(&used, fx_irq_cpu(&f, 60 + k));
                pinned++;
        }
        /* 360 -> 300 -> 240 -> 180: three leave, 180/s stay on CPU0 */
        if (pinned != 3 || left >= 200)
                fail_msg("%u quiet IRQs given a CPU of their own, %.0f/s left on CPU0; want 3 and under 200", pinned,
                         left);
        other_irqs_stay_put(&f, 6, 120, &seed, "noise");
        fx_free(&f);
}

/* Five queues on four CPUs; four busy storage IRQs fire on CPU0 (0.24
 * together), so the layout by load leaves CPU0 no queue and CPU3 one.
 * Placed by projected load once the CPUs have settled, the storage IRQs
 * fill the room left, the CPU they fire on judged without each, hot or
 * not: the peak stays at two queues' work.  Placed while the layout's CPUs
 * settled (a CPU each, the settling and hot ones left out) all four stayed
 * on CPU0 at 0.24; seed 23007 (13 queues, 8 NVMe IRQs on 8 CPUs) had one
 * beside each of six pairs of queues and CPU0 nearly idle. */
static void test_other_irqs_by_load(void **state) {
        double peak;
        struct fx f;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 5, true, 30, false, false);
        for (int q = 0; q < 5; q++)
                f.q[0][q] = (struct fx_queue_model){ 0.1, 3000 };
        for (int k = 0; k < 4; k++) {
                char name[32];

                snprintf(name, sizeof(name), "nvme0q%d", k + 1);
                fx_add_irq(&f, 60 + k, name, -1, -1, INVENTORY_IRQ_NONE);
                f.other[f.n_other++] = (struct fx_other_model){ 60 + k, 3000, 0.06 };
        }
        assert_int_equal(fx_ticks(&f, 1, 15), 0);
        peak = fx_settled_peak(&f);
        if (peak > 0.21)
                fail_msg("peak %.3f after 15 ticks, want two queues' 0.20 (storage IRQs on CPUs %d %d %d %d)", peak,
                         fx_irq_cpu(&f, 60), fx_irq_cpu(&f, 61), fx_irq_cpu(&f, 62), fx_irq_cpu(&f, 63));
        fx_free(&f);
}

/* Quiet storage IRQs on a mask of all CPUs fire on CPU0 and load it as a
 * busy one (72%); an 8-queue NIC on 8 CPUs.  The layout judges CPU0
 * without the work the same tick's spread of those IRQs takes off it: by
 * load at the first sample, one queue a CPU; laid out blind, the second
 * look at the first sample leaves queue 0 on CPU0.  Judged with that
 * work, CPU0 got no queue and another CPU two. */
static void test_layout_mass_leaves(void **state) {
        char buf[1024];

        (void) state;
        for (int blind = 0; blind < 2; blind++) {
                cpuset_t used;
                struct fx f;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", 0, 8, true, 30, true, false);
                for (int q = 0; q < 8; q++)
                        f.q[0][q] = (struct fx_queue_model){ 0.15, 3000, 0 };
                for (int k = 0; k < 8; k++) {
                        char name[32];

                        snprintf(name, sizeof(name), "nvme0q%d", k + 1);
                        fx_add_irq(&f, 60 + k, name, -1, -1, INVENTORY_IRQ_NONE);
                        /* 1000/s and 72% of CPU0 together */
                        f.other[f.n_other++] = (struct fx_other_model){ 60 + k, 125, 0.09 };
                }
                for (unsigned k = 1; k <= 6; k++) {
                        if (!blind || k > 1)
                                fx_model(&f, NULL);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        fx_fmt(&f.l, buf, sizeof(buf));
                        if (blind && k > 1 && strstr(buf, "irq 30>"))
                                fail_msg("tick %u moves queue 0 off CPU0: %s", k, buf);
                }
                cpuset_zero(&used);
                for (int q = 0; q < 8; q++) {
                        if (cpuset_isset(&used, fx_irq_cpu(&f, 30 + q)))
                                fail_msg("%s: queue %d on CPU%d with another", blind ? "blind" : "sampled", q,
                                         fx_irq_cpu(&f, 30 + q));
                        cpuset_set(&used, fx_irq_cpu(&f, 30 + q));
                }
                fx_free(&f);
        }
}

/* Two busy storage IRQs fire on CPU0; CPU1 carries less other work than
 * one.  The first goes to CPU1, and the second, alone on CPU0 after that,
 * is pinned there at the same tick: the CPU an IRQ fires on is judged
 * without its own work, and the first one's leaving does not make it wait
 * (pinning where it fires moves no work).  Then nothing moves. */
static void test_other_irqs_stay(void **state) {
        char buf[1024];
        struct fx f;

        (void) state;
        fx_init(&f, 2, 1, FX_SMT_NONE);
        f.base[1] = 0.05;
        fx_add_irq(&f, 61, "nvme0q1", -1, -1, INVENTORY_IRQ_NONE);
        fx_add_irq(&f, 62, "nvme0q2", -1, -1, INVENTORY_IRQ_NONE);
        f.other[f.n_other++] = (struct fx_other_model){ 61, 3000, 0.1 };
        f.other[f.n_other++] = (struct fx_other_model){ 62, 3000, 0.1 };
        assert_int_equal(fx_ticks(&f, 1, 1), 0);
        fx_fmt(&f.l, buf, sizeof(buf));
        if (strcmp(buf, "irq 61>1;irq 62>0;") != 0)
                fail_msg("first tick with load: '%s', want 'irq 61>1;irq 62>0;'", buf);
        other_irqs_stay_put(&f, 2, 40, NULL, "placed");
        fx_free(&f);
}

/* default_smp_affinity, tick by tick: off the CPUs that may not be used
 * while there are such, its value before back after, held once changed
 * behind our back (test_external_hold: how long), the value found the
 * baseline after a reload. */
static void test_default_affinity(void **state) {
        static const struct {
                const char *what;
                const char *bans;
                const char *set_by_other;    /* NULL: nobody else writes it */
                bool reset, other_irqs;
                const char *want;
        } steps[] = {
                { "every CPU eligible: left", "", NULL, false, true, "" },
                { "CPUs 2-3 banned: the eligible CPUs", "2-3", NULL, false, true, "defaff>0-1,4-7;" },
                { "still banned: nothing more", "2-3", NULL, false, true, "" },
                { "ban lifted: the value before back", "", NULL, false, true, "defaff>0-7;" },
                { "nothing of ours: left", "", NULL, false, true, "" },
                { "CPUs 6-7 banned", "6-7", NULL, false, true, "defaff>0-5;" },
                { "changed by someone else: held", "6-7", "0-3", false, true, "" },
                { "still held", "6-7", NULL, false, true, "" },
                { "reload: the administrator's narrower value loses the banned CPU", "3,6-7", NULL, true, true,
                  "defaff>0-2;" },
                { "other_irqs = no: the value before back", "3,6-7", NULL, false, false, "defaff>0-3;" },
                { "other_irqs = no: left", "3,6-7", NULL, false, false, "" },
        };
        struct fx f;

        (void) state;
        fx_init(&f, 8, 1, FX_SMT_NONE);
        f.inv.has_default_affinity = true;
        f.inv.default_affinity = f.topo.online;
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                cpuset_zero(&f.bans);
                if (steps[i].bans[0])
                        assert_int_equal(cpuset_parse_list(steps[i].bans, &f.bans), 0);
                if (steps[i].set_by_other)
                        assert_int_equal(cpuset_parse_list(steps[i].set_by_other, &f.inv.default_affinity), 0);
                if (steps[i].reset)
                        policy_reset(f.st);
                f.cfg.other_irqs = steps[i].other_irqs;
                assert_int_equal(fx_step(&f, (i + 1) * SEC), 0);
                expect_actions(steps[i].what, &f.l, steps[i].want);
                if (steps[i].set_by_other) {
                        const struct policy_note *no = find_note(&f.rep, "default_smp_affinity was changed by someone");
                        if (!no || no->kind != POLICY_NOTE_EXTERNAL)
                                fail_msg("%s: no external-change note", steps[i].what);
                }
        }
        fx_free(&f);

        /* isolated and nohz_full CPUs count as not eligible */
        fx_init(&f, 8, 1, FX_SMT_NONE);
        f.inv.has_default_affinity = true;
        f.inv.default_affinity = f.topo.online;
        fx_isolate(&f, 1);
        fx_nohz(&f, 2);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        expect_actions("isolated CPU1, nohz_full CPU2", &f.l, "defaff>0,3-7;");
        /* a kernel without the file: nothing */
        fx_free(&f);
        fx_init(&f, 8, 1, FX_SMT_NONE);
        fx_isolate(&f, 1);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        expect_actions("no default_smp_affinity", &f.l, "");
        fx_free(&f);
}

/* Locality judged by its cost: 2 nodes of 4 CPUs, a NIC on node 1 with 32
 * queues of 4% each, a light host.  On node 1 alone the layout stacks
 * eight queues a CPU (32%), and no single move gains min_gain (5%): a
 * queue is less.  Over both nodes, node 0's work at POL_REMOTE_COST, the
 * layout by load ends near 20% (five queues on each CPU of node 1, three
 * on each of node 0 at 15.6%), which gains min_gain over the local one: it
 * spills.  With 4 queues of 12%, one a local CPU, it stays local, where it
 * costs least. */
static void test_layout_spill(void **state) {
        static const struct {
                int nq;
                double work;
                double peak;             /* the most a CPU may carry after */
                bool spill;              /* queues end on node 0 */
        } cases[] = {
                { 32, 0.04, 0.21, true },
                { 4, 0.12, 0.125, false },
                /* the simulator's random host 16015 at half the size:
                 * queues of 2.65%, four a local CPU (10.6%) against two
                 * (5.3%) and the rest two a remote CPU (6.9%), 3.7% lower
                 * but under balance_floor; and no later move of one
                 * queue gains min_gain (hot moves left three a local
                 * CPU, 8%) */
                { 15, 0.0265, 0.072, true },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                double peak = 0;
                int remote = 0;

                fx_init(&f, 8, 2, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.remote_cost = POL_REMOTE_COST;
                fx_add_nic(&f, "eth0", 1, cases[i].nq, true, 30, false, false);
                for (int q = 0; q < cases[i].nq; q++)
                        f.q[0][q] = (struct fx_queue_model){ cases[i].work, 3000 };
                for (int c = 0; c < 8; c++)
                        f.user[c] = 0.3;
                assert_int_equal(fx_ticks(&f, 1, 60), 0);
                for (int q = 0; q < cases[i].nq; q++)
                        remote += fx_irq_cpu(&f, 30 + (unsigned) q) < 4;
                fx_model(&f, NULL);
                for (int c = 0; c < 8; c++)
                        peak = MAX(peak, f.load.cpus[c].softirq);
                print_message("    %d queues of %.0f%%: %d on node 0, peak %.3f\n", cases[i].nq, 100 * cases[i].work,
                              remote, peak);
                assert_int_equal(remote > 0, cases[i].spill);
                if (peak > cases[i].peak)
                        fail_msg("%d queues: peak %.3f over %.3f", cases[i].nq, peak, cases[i].peak);
                fx_free(&f);
        }
}

/* A move weighs the other node when a local one gains too little: CPU4
 * (node 1) at 82% with eight queues of 10%, the other CPUs of node 1 at
 * 68%, node 0's at 34.5% (hot from 79.5%, 1.5 times the mean).  The best
 * local move ends at 78%, below the hot level but only 4% lower (min_gain
 * 5%); on node 0 the queue costs 13% and the peak falls to 72%.  Before,
 * the other node was weighed only when a local move left a CPU hot, and
 * nothing moved. */
static void test_move_remote_gain(void **state) {
        struct fx f;
        int moved = 0, remote = 0;

        (void) state;
        fx_init(&f, 8, 2, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        f.remote_cost = POL_REMOTE_COST;
        fx_add_nic(&f, "eth0", 1, 8, true, 30, false, false);
        for (int q = 0; q < 8; q++) {
                fx_place(&f, 30 + (unsigned) q, 4);
                f.q[0][q] = (struct fx_queue_model){ 0.1025, 3000 };
        }
        for (int c = 0; c < 8; c++)
                f.base[c] = c < 4 ? 0.345 : 0.68;
        f.base[4] = 0;
        for (int k = 1; k <= 60; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        print_message("    at %2ds: %s\n", k, f.l.v[a].reason);
                        moved += f.l.v[a].type == KNOB_IRQ;
                }
        }
        for (size_t k = 0; k < f.rep.n_hot_cpus; k++)
                print_message("    hot CPU%d: %s\n", f.rep.hot_cpus[k].cpu, f.rep.hot_cpus[k].why);
        for (int q = 0; q < 8; q++)
                remote += fx_irq_cpu(&f, 30 + (unsigned) q) < 4;
        assert_true(moved >= 1);
        assert_int_equal(remote, moved);
        fx_free(&f);
}

static void test_numa_local_first(void **state) {
        static const struct {
                const char *what;
                double base[8];
                double w2, w3;
                const char *want;
        } cases[] = {
                { "a local CPU helps: stay on the node (remote CPUs are cooler)",
                  { 0.05, 0.05, 0.05, 0.20, 0, 0, 0, 0 }, 0.3, 0.3, "irq 31>3;" },
                { "every local CPU hot: remote", { 0.05, 0.05, 0.05, 0.85, 0.05, 0.05, 0.05, 0.05 }, 0.8, 0.8,
                  "irq 31>4;" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, 8, 2, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                fx_add_nic(&f, "eth0", 0, 4, true, 30, false, false);
                fx_place(&f, 30, 0);
                fx_place(&f, 31, 0);
                fx_place(&f, 32, 1);
                fx_place(&f, 33, 2);
                f.q[0][0] = (struct fx_queue_model){ 0.45, 9000 };
                f.q[0][1] = (struct fx_queue_model){ 0.40, 8000 };
                f.q[0][2] = (struct fx_queue_model){ cases[i].w2, 5000 };
                f.q[0][3] = (struct fx_queue_model){ cases[i].w3, 5000 };
                memcpy(f.base, cases[i].base, sizeof(cases[i].base));
                assert_int_equal(fx_ticks(&f, 1, 3), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                fx_free(&f);
        }
}

/* ---- dwell, back-off, cap ---- */

static void test_dwell_and_backoff(void **state) {
        struct fx f;
        struct action fake = { .type = KNOB_IRQ, .queue = -1 };
        unsigned when[8], to[8];
        size_t n = 0;

        (void) state;
        fx_init(&f, 3, 1, FX_SMT_NONE);
        f.cfg.initial_layout = false;
        fx_add_nic(&f, "eth0", 0, 3, true, 30, false, false);
        fx_place(&f, 30, 0);
        fx_place(&f, 31, 0);
        fx_place(&f, 32, 2);
        /* queues 0 and 2 are kernel-managed: only IRQ 31 can move */
        fake.irq = 30;
        policy_feedback(f.st, &fake, -EIO, 0);
        fake.irq = 32;
        policy_feedback(f.st, &fake, -EPERM, 0);
        f.base[1] = 0.30;
        for (unsigned k = 1; k <= 200; k++) {
                if (k == 1 || k == 34) {     /* CPU0 hot */
                        f.q[0][0] = (struct fx_queue_model){ 0.50, 9000 };
                        f.q[0][2] = (struct fx_queue_model){ 0.05, 1000 };
                } else if (k == 4) {         /* CPU2 hot */
                        f.q[0][0] = (struct fx_queue_model){ 0.05, 1000 };
                        f.q[0][2] = (struct fx_queue_model){ 0.50, 9000 };
                }
                f.q[0][1] = (struct fx_queue_model){ 0.45, 8000 };
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        assert_int_equal(f.l.v[a].type, KNOB_IRQ);
                        assert_int_equal(f.l.v[a].irq, 31);
                        assert_true(n < ELEMENTSOF(when));
                        when[n] = k;
                        to[n++] = cpuset_first(KEPT(&f.l.v[a].cpus));
                }
                if (k == 34) {
                        /* after the bounce to CPU0 the scenario stays: CPU0 hot
                         * again right away; IRQ 31 must now wait 60 s */
                        f.q[0][2] = (struct fx_queue_model){ 0.05, 1000 };
                }
        }
        for (size_t i = 0; i < n; i++)
                print_message("    move at %us -> CPU%u\n", when[i], to[i]);
        /* 3: first move; 33: 30 s dwell; it went back to CPU0, where it
         * came from: a bounce, dwell doubles to 60 s, so the next move is
         * at 93 (back to CPU2: another bounce, 120 s) */
        assert_int_equal(n, 3);
        assert_int_equal(when[0], 3);
        assert_int_equal(to[0], 2);
        assert_int_equal(when[1], 33);
        assert_int_equal(to[1], 0);
        assert_int_equal(when[2], 93);
        assert_int_equal(to[2], 2);
        assert_int_equal(f.rep.n_moves_10min, 3);
        assert_int_equal(f.rep.n_managed_irqs, 2);

        fx_free(&f);
}

static void test_max_moves(void **state) {
        static const struct {
                const char *what;
                unsigned max_moves;
                const char *want;
        } cases[] = {
                { "cap 1", 1, "irq 31>3;" },
                { "cap 2 (default)", 2, "irq 31>3;irq 33>4;" },
                { "cap 3", 3, "irq 31>3;irq 33>4;irq 35>5;" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                f.cfg.max_moves = cases[i].max_moves;
                fx_add_nic(&f, "eth0", 0, 6, true, 30, false, false);
                for (int q = 0; q < 6; q++) {
                        fx_place(&f, 30 + q, q / 2);
                        f.q[0][q] = (struct fx_queue_model){ q % 2 ? 0.40 : 0.50, q % 2 ? 8000 : 10000 };
                }
                for (int c = 0; c < 8; c++)
                        f.base[c] = 0.05;
                assert_int_equal(fx_ticks(&f, 1, 3), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                fx_free(&f);
        }
}

/* The move cap grows with the host: max_moves for each 32 eligible CPUs.
 * Six CPUs with two queues each on a 64-CPU host: the default 2 makes 4
 * moves in the tick (2 on the old fixed cap), 16 CPUs make the fixed 2. */
static void test_max_moves_scaled(void **state) {
        static const struct {
                int cpus;
                unsigned want;
        } cases[] = { { 64, 4 }, { 16, 2 } };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, cases[i].cpus, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                fx_add_nic(&f, "eth0", 0, 12, true, 30, false, false);
                for (int q = 0; q < 12; q++) {
                        fx_place(&f, 30 + q, q / 2);
                        f.q[0][q] = (struct fx_queue_model){ q % 2 ? 0.40 : 0.50, q % 2 ? 8000 : 10000 };
                }
                for (int c = 0; c < cases[i].cpus; c++)
                        f.base[c] = 0.05;
                assert_int_equal(fx_ticks(&f, 1, 3), 0);
                print_message("%d CPUs: %zu moves\n", cases[i].cpus, f.l.n);
                assert_int_equal(f.l.n, cases[i].want);
                fx_free(&f);
        }
}

/* A hot CPU the tick leaves alone carries the reason in the report
 * (irqsteerctl plan and status show it): the move cap, min_gain, the
 * dwell, a lone queue without RPS, load that is not a NIC queue's. */
static void test_hot_why(void **state) {
        static const struct {
                const char *what;
                int setup;               /* 0: two queues on each of CPUs 0-2; 1: one queue on CPU3; 2: no queue */
                unsigned max_moves;
                double min_gain;
                bool rps;
                int cpu;                 /* the hot CPU asked about */
                const char *why;         /* substring; "" when it acted */
        } cases[] = {
                { "moved: no reason", 0, 3, 0.10, true, 0, "" },
                { "move cap reached", 0, 1, 0.10, true, 2, "max_moves (1) reached this tick" },
                { "no move gains min_gain", 0, 3, 1.0, true, 0, "no move gains min_gain (100%): the best, IRQ of eth0 queue" },
                { "lone queue, RPS off", 1, 2, 0.10, false, 3,
                  "its only busy queue is not moved (that only moves the hot spot); RPS for its busiest queue (eth0 rx-0) is off" },
                { "other work", 2, 2, 0.10, true, 5, "no busy queue IRQ of a managed NIC fires on it" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const struct policy_hot_cpu *h = NULL;
                struct fx f;

                print_message("case: %s\n", cases[i].what);
                fx_init(&f, 8, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                f.cfg.max_moves = cases[i].max_moves;
                f.cfg.min_gain = cases[i].min_gain;
                f.cfg.rps = cases[i].rps;
                if (cases[i].setup == 0) {
                        fx_add_nic(&f, "eth0", 0, 6, true, 30, false, false);
                        for (int q = 0; q < 6; q++) {
                                fx_place(&f, 30 + q, q / 2);
                                f.q[0][q] = (struct fx_queue_model){ q % 2 ? 0.40 : 0.50, q % 2 ? 8000 : 10000 };
                        }
                } else if (cases[i].setup == 1) {
                        fx_add_nic(&f, "eth0", 0, 1, true, 30, false, false);
                        fx_place(&f, 30, 3);
                        f.q[0][0] = (struct fx_queue_model){ 0.95, 50000 };
                } else {
                        fx_add_nic(&f, "eth0", 0, 1, true, 30, false, false);
                        fx_place(&f, 30, 0);
                        f.q[0][0] = (struct fx_queue_model){ 0.05, 500 };
                }
                for (int c = 0; c < 8; c++)
                        f.base[c] = 0.05;
                if (cases[i].setup == 2)
                        f.base[5] = 0.95;
                assert_int_equal(fx_ticks(&f, 1, 3), 0);
                for (size_t k = 0; k < f.rep.n_hot_cpus; k++)
                        if (f.rep.hot_cpus[k].cpu == cases[i].cpu)
                                h = &f.rep.hot_cpus[k];
                if (!h)
                        fail_msg("%s: CPU%d not hot", cases[i].what, cases[i].cpu);
                if (cases[i].why[0] == 0 ? h->why[0] != 0 : !strstr(h->why, cases[i].why))
                        fail_msg("%s: CPU%d why '%s', want '%s'", cases[i].what, cases[i].cpu, h->why, cases[i].why);
                fx_free(&f);
        }
}

/* ---- feedback ---- */

static void test_feedback_errors(void **state) {
        static const struct {
                const char *what;
                int r;
                const char *want2;       /* second tick */
                const char *note;
        } cases[] = {
                /* the daemon says each failure once (test-log): the
                 * policy adds no note of its own */
                { "EIO: managed, never again", -EIO, "", NULL },
                { "EPERM: managed, never again", -EPERM, "", NULL },
                { "EACCES: permanent, never again", -EACCES, "", NULL },
                { "ENOSPC: another CPU", -ENOSPC, "irq 30>1;", NULL },
                { "EBUSY: retried", -EBUSY, "irq 30>0;", NULL },
                { "EAGAIN: retried", -EAGAIN, "irq 30>0;", NULL },
                /* gone: its state is dropped (asserted below) and it is not
                 * retried; the daemon rediscovers the inventory */
                { "ENOENT: gone, state dropped, no retry", -ENOENT, "", NULL },
                { "ESRCH: gone, state dropped, no retry", -ESRCH, "", NULL },
                { "ENODEV: gone, state dropped, no retry", -ENODEV, "", NULL },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                struct policy_input in;

                fx_init(&f, 4, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", 0, 2, true, 30, false, false);
                in = fx_input(&f, 1 * SEC);
                assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
                expect_actions(cases[i].what, &f.l, "irq 30>0;irq 31>1;");
                fx_apply(&f, 1 * SEC, 30, cases[i].r);
                if (cases[i].r == -ENOENT || cases[i].r == -ESRCH || cases[i].r == -ENODEV) {
                        if (pol_irq_get(f.st, 30, false))
                                fail_msg("%s: IRQ 30's state kept", cases[i].what);
                        assert_non_null(pol_irq_get(f.st, 31, false));
                } else
                        assert_non_null(pol_irq_get(f.st, 30, false));

                assert_int_equal(fx_step(&f, 2 * SEC), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want2);
                if (cases[i].note) {
                        if (count_notes(&f.rep, cases[i].note) != 1)
                                fail_msg("%s: note '%s' missing", cases[i].what, cases[i].note);
                } else
                        assert_int_equal(f.rep.n_notes, 0);
                /* said once */
                assert_int_equal(fx_step(&f, 3 * SEC), 0);
                expect_actions(cases[i].what, &f.l, "");
                assert_int_equal(f.rep.n_notes, 0);
                if (cases[i].r == -EIO || cases[i].r == -EPERM || cases[i].r == -EACCES) {
                        /* a driver reset does not make it ours */
                        policy_forget_nic(f.st, "eth0");
                        assert_int_equal(fx_step(&f, 4 * SEC), 0);
                        expect_actions(cases[i].what, &f.l, "");
                        assert_int_equal(f.rep.n_managed_irqs, 1);
                        assert_int_equal(f.rep.n_queue_irqs, 1);
                }
                fx_free(&f);
        }

        /* threads: an exited one (ESRCH, or ENOENT from its /proc entry) is
         * forgotten; one that refuses (EINVAL) is remembered as broken */
        static const struct {
                const char *what;
                int r;
                bool kept;
        } tcases[] = {
                { "thread ESRCH: exited, state dropped", -ESRCH, false },
                { "thread ENOENT: exited, state dropped", -ENOENT, false },
                { "thread EINVAL: refuses, kept as broken", -EINVAL, true },
        };
        for (size_t i = 0; i < ELEMENTSOF(tcases); i++) {
                struct config_worker w = { .name = "app", .policy = WORKER_SPREAD };
                struct policy_input in;
                struct fx f;
                unsigned n_thread = 0;

                fx_init(&f, 4, 1, FX_SMT_NONE);
                f.cfg.workers = &w;
                f.cfg.n_workers = 1;
                fx_add_proc(&f, 0, 1000, 2);
                in = fx_input(&f, 1 * SEC);
                assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
                for (size_t k = 0; k < f.l.n; k++) {
                        const struct action *a = &f.l.v[k];

                        if (a->type != KNOB_THREAD)
                                continue;
                        /* the task discovered, not just its TID */
                        assert_int_equal(a->starttime, 50000 + (unsigned long long) a->tid);
                        n_thread++;
                        policy_feedback(f.st, a, a->tid == 1001 ? tcases[i].r : 0, 1 * SEC);
                }
                if (n_thread != 2)
                        fail_msg("%s: %u thread actions, want 2", tcases[i].what, n_thread);
                if ((pol_thread_get(f.st, 1000, 1001, false) != NULL) != tcases[i].kept)
                        fail_msg("%s: thread 1001's state %s", tcases[i].what, tcases[i].kept ? "dropped" : "kept");
                assert_non_null(pol_thread_get(f.st, 1000, 1002, false));
                f.cfg.workers = NULL;
                fx_free(&f);
        }
}

/* ---- interrupt vectors (vectors.h) ---- */

/* IRQs counted per CPU the way the policy counts them (affinity: the
 * fixtures have no effective affinity). */
static void count_cpus(struct fx *f, unsigned *used) {
        memset(used, 0, f->n_cpus * sizeof(*used));
        for (size_t i = 0; i < f->inv.n_irqs; i++) {
                int cpu = vectors_irq_cpu(&f->inv.irqs[i]);
                if (cpu >= 0 && cpu < f->n_cpus)
                        used[cpu]++;
        }
}

static unsigned count_kind(const struct policy_report *r, enum policy_note_kind kind) {
        unsigned n = 0;

        for (size_t i = 0; i < r->n_notes; i++)
                n += r->notes[i].kind == kind;
        return n;
}

/* Two NICs of 220 queues on node 0's two CPUs: a layout that wraps would
 * put 220 IRQs on each, past what x86 gives a CPU.  Each gets
 * VECTORS_PER_CPU, the 40 left stay on node 1 where the kernel put them,
 * and so does a node 0 disk's IRQ, each said once (POLICY_NOTE_NO_VECTOR);
 * later ticks add none. */
static void test_vectors_limit(void **state) {
        enum { NQ = 220 };
        unsigned used[4];
        struct fx f;

        (void) state;
        fx_init(&f, 4, 2, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, NQ, true, 1000, false, false);
        fx_add_nic(&f, "eth1", 0, NQ, true, 2000, false, false);
        fx_add_irq(&f, 3000, "nvme0q1", -1, -1, INVENTORY_IRQ_NONE);
        fx_irq(&f, 3000)->node = 0;
        /* the kernel spread them at boot */
        for (size_t i = 0; i < f.inv.n_irqs; i++)
                KEEP(&f.inv.irqs[i].affinity, cpuset_single((int) (i % 4)));
        fx_place(&f, 3000, 3);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        count_cpus(&f, used);
        assert_int_equal(used[0], VECTORS_PER_CPU);
        assert_int_equal(used[1], VECTORS_PER_CPU);
        assert_int_equal(used[2] + used[3], 2 * NQ - 2 * VECTORS_PER_CPU + 1);
        assert_int_equal(fx_irq_cpu(&f, 3000), 3);
        assert_int_equal(count_kind(&f.rep, POLICY_NOTE_NO_VECTOR), 2 * NQ - 2 * VECTORS_PER_CPU + 1);
        for (size_t i = 0; i < f.rep.n_notes; i++)
                if (f.rep.notes[i].kind == POLICY_NOTE_NO_VECTOR &&
                    f.rep.notes[i].irq != 3000 &&
                    (f.rep.notes[i].irq == 0 || !f.rep.notes[i].device[0] || f.rep.notes[i].queue < 0))
                        fail_msg("a no-vector note names no IRQ, NIC and queue: %s", f.rep.notes[i].text);
        for (int t = 2; t <= 4; t++) {
                assert_int_equal(fx_step(&f, t * SEC), 0);
                assert_int_equal(count_kind(&f.rep, POLICY_NOTE_NO_VECTOR), 0);
                count_cpus(&f, used);
                for (int c = 0; c < 4; c++)
                        assert_true(used[c] <= VECTORS_PER_CPU);
        }
        fx_free(&f);
}

/* The kernel refuses an IRQ on CPU1 (ENOSPC) with fewer vectors there than
 * assumed; the daemon lowers CPU1's limit to its count (vectors_full) and
 * hands the counts in: the refused IRQ goes elsewhere, and so does a
 * queue of a NIC that appears later and would take CPU1 in its turn. */
static void test_vectors_learned(void **state) {
        struct vectors v = { .max_cpu = -1 };
        struct policy_input in;
        unsigned used[4];
        struct fx f;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 4, true, 100, false, false);
        for (size_t i = 0; i < f.inv.n_irqs; i++)
                KEEP(&f.inv.irqs[i].affinity, cpuset_single(0));
        assert_int_equal(vectors_count(&v, &f.inv, 3), 0);
        in = fx_input(&f, 1 * SEC);
        in.vectors = &v;
        assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
        expect_actions("layout", &f.l, "irq 101>1;irq 102>2;irq 103>3;");
        fx_apply(&f, 1 * SEC, 101, -ENOSPC);
        vectors_full(&v, 1);

        /* a tick later, counted afresh: the limit stays */
        fx_add_nic(&f, "eth1", 0, 4, true, 200, false, false);
        for (unsigned q = 0; q < 4; q++)
                KEEP(&fx_irq(&f, 200 + q)->affinity, cpuset_single(0));
        assert_int_equal(vectors_count(&v, &f.inv, 3), 0);
        in = fx_input(&f, 2 * SEC);
        in.vectors = &v;
        assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
        fx_apply(&f, 2 * SEC, 0, 0);
        count_cpus(&f, used);
        assert_int_equal(used[1], 0);
        /* placed, elsewhere */
        assert_true(pol_irq_get(f.st, 101, false)->set);
        assert_true(pol_irq_get(f.st, 201, false)->set);
        assert_int_not_equal(fx_irq_cpu(&f, 101), 1);
        vectors_free(&v);
        fx_free(&f);
}

/* A move off a hot CPU goes only where the queue's rx and tx IRQs both
 * find a free vector: CPU5, the coolest, refused one (its limit learned),
 * CPU2 has one left, not two; the pair goes to CPU4, the next. */
static void test_vectors_move(void **state) {
        struct vectors v = { .max_cpu = -1 };
        struct fx f;

        (void) state;
        two_busy_queues(&f);
        assert_int_equal(vectors_count(&v, &f.inv, 7), 0);
        vectors_full(&v, 5);
        for (int i = 0; i < VECTORS_PER_CPU - 1; i++)
                vectors_move(&v, -1, 2);
        for (int k = 1; k <= 3; k++) {
                struct policy_input in;

                fx_model(&f, NULL);
                f.load.cpus[3].net_frac = 0.9;
                in = fx_input(&f, k * SEC);
                in.vectors = &v;
                assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
        }
        expect_actions("hot CPU, CPU5 and CPU2 without room", &f.l, "irq 30>4;irq 34>4;xps eth0/0>4;");
        vectors_free(&v);
        fx_free(&f);
}

/* Only unexplained failures count toward giving up: a vanished queue or
 * IRQ (ENODEV) is forgotten however often it happens, a permanent refusal
 * stops at once, and three EINVALs in a row give up with a note. */
static void test_feedback_counting(void **state) {
        static const struct {
                const char *what;
                enum knob_kind type;
                int r;
                bool give_up_note;
        } cases[] = {
                { "queue ENODEV x3: forgotten, never given up", KNOB_RPS, -ENODEV, false },
                { "queue ENOSPC x3: counted (no vector space there)", KNOB_RPS, -ENOSPC, true },
                { "queue EINVAL x3: given up", KNOB_XPS, -EINVAL, true },
                { "queue EACCES: permanent, no count", KNOB_RPS, -EACCES, false },
                { "IRQ EINVAL x3: given up", KNOB_IRQ, -EINVAL, true },
                { "IRQ ENXIO x3: forgotten", KNOB_IRQ, -ENXIO, false },
                { "IRQ EROFS: permanent, no count", KNOB_IRQ, -EROFS, false },
        };
        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct policy_state *st = policy_state_new();
                _cleanup_(action_done) struct action a = { .type = cases[i].type, .irq = 30, .queue = 0 };
                size_t notes = 0;

                assert_non_null(st);
                snprintf(a.nic, sizeof(a.nic), "eth0");
                assert_int_equal(action_set_cpus(&a, SET(cpuset_single(1)), NULL), 0);
                for (int k = 0; k < 3; k++)
                        policy_feedback(st, &a, cases[i].r, (uint64_t) (k + 1) * SEC);
                /* feedback notes wait in the state for the next tick's report */
                for (size_t n = 0; n < st->n_notes; n++)
                        notes += strstr(st->notes[n].text, "giving up") != NULL;
                if ((notes == 1) != cases[i].give_up_note || notes > 1)
                        fail_msg("%s: %zu give-up notes", cases[i].what, notes);
                if (cases[i].type == KNOB_IRQ) {
                        const struct pol_irq *r = pol_irq_get(st, 30, false);
                        bool gone = cases[i].r == -ENXIO, perm = cases[i].r == -EROFS;

                        if ((r == NULL) != gone)
                                fail_msg("%s: state %s", cases[i].what, r ? "kept" : "dropped");
                        if (r && r->managed != perm)
                                fail_msg("%s: managed %d", cases[i].what, r->managed);
                } else {
                        const struct pol_queue *q = pol_queue_get(st, "eth0", 0, false);

                        if ((q == NULL) != (cases[i].r == -ENODEV))
                                fail_msg("%s: state %s", cases[i].what, q ? "kept" : "dropped");
                        if (q && cases[i].r == -EACCES && !q->rps_broken)
                                fail_msg("%s: not given up at once", cases[i].what);
                }
                policy_state_free(st);
        }
}

/* rps_sock_flow_entries: said once, retried only after a transient error;
 * missing (a network namespace) is no reason to say RFS is off. */
static void test_sock_flow_feedback(void **state) {
        static const struct {
                const char *what;
                int r;
                const char *note;
                bool retried;
        } cases[] = {
                /* why is the daemon's to say, once (test-log) */
                { "ENOENT: not in this namespace", -ENOENT, NULL, false },
                { "EACCES: RFS stays off", -EACCES, NULL, false },
                { "EBUSY: retried", -EBUSY, NULL, true },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                struct policy_input in;

                fx_init(&f, 4, 1, FX_SMT_NONE);
                f.cfg.rfs = true;
                fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
                in = fx_input(&f, 1 * SEC);
                assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
                expect_actions(cases[i].what, &f.l, "irq 60>0;rps eth0/0>0-3;sockflow>32768;flowcnt eth0/0>32768;");
                for (size_t k = 0; k < f.l.n; k++)
                        policy_feedback(f.st, &f.l.v[k], f.l.v[k].type == KNOB_SOCKFLOW ? cases[i].r : 0,
                                        1 * SEC);
                /* the rest was applied */
                KEEP(&fx_irq(&f, 60)->affinity, cpuset_single(0));
                test_keep_list(&fx_queue(&f, "eth0", 0)->rps_cpus, "0-3");
                fx_queue(&f, "eth0", 0)->rps_flow_cnt = 32768;
                /* a later RPS start is what asks for RFS again */
                policy_forget_nic(f.st, "eth0");
                cpuset_kept_free(&fx_queue(&f, "eth0", 0)->rps_cpus);
                assert_int_equal(fx_step(&f, 2 * SEC), 0);
                expect_actions(cases[i].what, &f.l,
                               cases[i].retried ? "rps eth0/0>0-3;sockflow>32768;" : "rps eth0/0>0-3;");
                if (cases[i].note) {
                        if (count_notes(&f.rep, cases[i].note) != 1)
                                fail_msg("%s: note '%s' missing", cases[i].what, cases[i].note);
                } else
                        assert_int_equal(f.rep.n_notes, 0);
                fx_free(&f);
        }
}

/* ---- external changes, hot-unplug, driver reset ---- */

static void test_external_change(void **state) {
        struct fx f;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 2, true, 30, false, false);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        expect_actions("layout", &f.l, "irq 30>0;irq 31>1;");

        /* an administrator moves IRQ 31 and queue 0's RPS */
        fx_place(&f, 31, 3);
        assert_int_equal(fx_step(&f, 2 * SEC), 0);
        expect_actions("external change", &f.l, "");
        assert_int_equal(count_notes(&f.rep, "IRQ 31 was changed by someone else (CPU1 -> CPU3)"), 1);
        assert_int_equal(f.rep.n_external, 1);
        /* the object it is about, for the journal's IRQ=, DEVICE=, QUEUE= */
        {
                const struct policy_note *no = find_note(&f.rep, "IRQ 31 was changed");

                assert_non_null(no);
                assert_int_equal(no->kind, POLICY_NOTE_EXTERNAL);
                assert_int_equal(no->irq, 31);
                assert_string_equal(no->device, "eth0");
                assert_int_equal(no->queue, 1);
        }

        /* CPU3 hot with two busy queues (31 and the admin's choice): 31 is
         * left alone, 30 (on CPU0) too */
        fx_place(&f, 30, 3);
        f.q[0][0] = (struct fx_queue_model){ 0.5, 9000 };
        f.q[0][1] = (struct fx_queue_model){ 0.45, 8000 };
        for (int k = 3; k <= 20; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                assert_int_equal(count_notes(&f.rep, "someone else"), k == 3);
                if (k == 3)
                        assert_int_equal(count_notes(&f.rep, "IRQ 30 was changed by someone else (CPU0 -> CPU3)"), 1);
                expect_actions("left alone", &f.l, "");
        }

        /* reload: the administrator's values are the new baseline; the
         * hot CPU is rebalanced again */
        policy_reset(f.st);
        for (int k = 21; k <= 40; k++) {
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                assert_int_equal(f.rep.n_notes, 0);
                /* still hot; both IRQs were placed by the layout at 1 s,
                 * which starts no dwell, and CPU3 has been hot for more
                 * than hot_samples: at the first tick after the reload,
                 * equal peaks: the smaller queue goes to the coolest CPU */
                expect_actions("after reload", &f.l, k == 21 ? "irq 31>0;" : "");
        }

        fx_free(&f);
}

/* An object changed by someone else is held for external_hold, then taken
 * back to what irqsteerd had set; at once when it uses a CPU that may not
 * be used.  Table-driven over one queue IRQ, tick by tick. */
static void test_external_hold(void **state) {
        static const struct {
                const char *what;
                uint64_t at;             /* seconds */
                int place31;             /* someone puts IRQ 31 there, -1 nobody */
                const char *bans;
                uint64_t hold;           /* external_hold, seconds */
                const char *want;
                enum action_reason why;  /* of the first action */
                const char *note;        /* a note that must be there, NULL none */
        } steps[] = {
                { "layout", 1, -1, "", 600, "irq 30>0;irq 31>1;", ACTION_REASON_INITIAL_LAYOUT, NULL },
                { "moved by someone else: held", 2, 3, "", 600, "", 0,
                  "IRQ 31 was changed by someone else (CPU1 -> CPU3); leaving it alone for 600s (external_hold)" },
                { "still held just before the hold ends", 601, -1, "", 600, "", 0, NULL },
                { "hold over: taken back", 602, -1, "", 600, "irq 31>1;", ACTION_REASON_EXTERNAL_CHANGE_EXPIRED, NULL },
                { "ours again: nothing", 603, -1, "", 600, "", 0, NULL },
                { "moved again: noted again, held", 604, 2, "", 600, "", 0,
                  "IRQ 31 was changed by someone else (CPU1 -> CPU2); leaving it alone for 600s" },
                { "its CPU banned within the hold: taken back at once", 605, -1, "2", 600, "irq 31>1;",
                  ACTION_REASON_CPU_BANNED, NULL },
                { "moved again, a longer hold", 606, 3, "", 3600, "", 0,
                  "(CPU1 -> CPU3); leaving it alone for 3600s" },
                { "the hold is read at each tick: shortened, over", 607, -1, "", 1, "irq 31>1;",
                  ACTION_REASON_EXTERNAL_CHANGE_EXPIRED, NULL },
                { "external_hold = 0: taken back in the tick that sees it", 608, 0, "", 0, "irq 31>1;",
                  ACTION_REASON_EXTERNAL_CHANGE_EXPIRED, "IRQ 31 was changed by someone else (CPU1 -> CPU0); taking it back" },
                { "moved onto a banned CPU: taken back in the same tick", 609, 3, "3", 600, "irq 31>1;",
                  ACTION_REASON_CPU_BANNED, "(CPU1 -> CPU3); taking it back" },
                { "moved onto a banned CPU, ours banned too: placed afresh", 610, 3, "1,3", 600, "irq 31>0;",
                  ACTION_REASON_CPU_BANNED, "CPU1 may not be used either" },
        };
        struct fx f;
        char buf[256];

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 2, true, 30, false, false);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                print_message("step: %s\n", steps[i].what);
                cpuset_zero(&f.bans);
                if (steps[i].bans[0])
                        assert_int_equal(cpuset_parse_list(steps[i].bans, &f.bans), 0);
                f.cfg.external_hold_usec = steps[i].hold * SEC;
                if (steps[i].place31 >= 0)
                        fx_place(&f, 31, steps[i].place31);
                assert_int_equal(fx_step(&f, steps[i].at * SEC), 0);
                fx_fmt(&f.l, buf, sizeof(buf));
                if (strcmp(buf, steps[i].want) != 0 || (f.l.n > 0 && f.l.v[0].why != steps[i].why))
                        fail_msg("%s: actions '%s' (%s), want '%s' (%s)", steps[i].what, buf,
                                 f.l.n ? action_reason_to_string(f.l.v[0].why) : "-", steps[i].want,
                                 action_reason_to_string(steps[i].why));
                if (steps[i].note && count_notes(&f.rep, steps[i].note) != 1)
                        fail_msg("%s: no note '%s' (%zu notes, first '%s')", steps[i].what, steps[i].note,
                                 f.rep.n_notes, f.rep.n_notes ? f.rep.notes[0].text : "");
                if (!steps[i].note && count_notes(&f.rep, "someone else") != 0)
                        fail_msg("%s: a change note", steps[i].what);
        }
        fx_free(&f);
}

/* The same for a queue's RPS mask and for default_smp_affinity. */
static void test_external_hold_masks(void **state) {
        struct fx f;
        char buf[256];

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        expect_actions("single queue", &f.l, "irq 60>0;rps eth0/0>0-3;");
        test_keep_list(&fx_queue(&f, "eth0", 0)->rps_cpus, "2");
        assert_int_equal(fx_step(&f, 2 * SEC), 0);
        expect_actions("rps held", &f.l, "");
        assert_int_equal(count_notes(&f.rep, "RPS of eth0 rx-0 was changed by someone else (0-3 -> 2); leaving it alone"), 1);
        assert_int_equal(fx_step(&f, 601 * SEC), 0);
        expect_actions("rps still held", &f.l, "");
        assert_int_equal(f.rep.n_external, 1);
        assert_int_equal(fx_step(&f, 602 * SEC), 0);
        expect_actions("rps taken back", &f.l, "rps eth0/0>0-3;");
        assert_int_equal(f.l.v[0].why, ACTION_REASON_EXTERNAL_CHANGE_EXPIRED);
        assert_int_equal(fx_step(&f, 603 * SEC), 0);
        expect_actions("rps ours again", &f.l, "");
        assert_int_equal(f.rep.n_external, 0);
        /* onto a banned CPU: at once, without it */
        test_keep_list(&fx_queue(&f, "eth0", 0)->rps_cpus, "3");
        cpuset_parse_list("3", &f.bans);
        assert_int_equal(fx_step(&f, 604 * SEC), 0);
        fx_fmt(&f.l, buf, sizeof(buf));
        if (!strstr(buf, "rps eth0/0>0-2;"))
                fail_msg("rps onto a banned CPU: '%s'", buf);
        fx_free(&f);

        fx_init(&f, 8, 1, FX_SMT_NONE);
        f.inv.has_default_affinity = true;
        f.inv.default_affinity = f.topo.online;
        cpuset_parse_list("6-7", &f.bans);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        expect_actions("defaff off the banned CPUs", &f.l, "defaff>0-5;");
        cpuset_parse_list("0-3", &f.inv.default_affinity);
        assert_int_equal(fx_step(&f, 2 * SEC), 0);
        expect_actions("defaff held", &f.l, "");
        assert_int_equal(fx_step(&f, 601 * SEC), 0);
        expect_actions("defaff still held", &f.l, "");
        assert_int_equal(fx_step(&f, 602 * SEC), 0);
        expect_actions("defaff taken back", &f.l, "defaff>0-5;");
        assert_int_equal(f.l.v[0].why, ACTION_REASON_EXTERNAL_CHANGE_EXPIRED);
        assert_int_equal(fx_step(&f, 603 * SEC), 0);
        expect_actions("defaff ours again", &f.l, "");
        /* onto a banned CPU: at once */
        cpuset_parse_list("4-7", &f.inv.default_affinity);
        assert_int_equal(fx_step(&f, 604 * SEC), 0);
        expect_actions("defaff onto a banned CPU", &f.l, "defaff>0-5;");
        assert_int_equal(f.l.v[0].why, ACTION_REASON_CPU_BANNED);
        fx_free(&f);
}

static void test_external_rps(void **state) {
        struct fx f;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        expect_actions("single queue", &f.l, "irq 60>0;rps eth0/0>0-3;");
        test_keep_list(&fx_queue(&f, "eth0", 0)->rps_cpus, "2");
        for (int k = 2; k <= 5; k++) {
                assert_int_equal(fx_step(&f, k * SEC), 0);
                expect_actions("rps changed behind us", &f.l, "");
                assert_int_equal(count_notes(&f.rep, "RPS of eth0 rx-0 was changed by someone else (0-3 -> 2)"), k == 2);
                if (k == 2) {
                        const struct policy_note *no = find_note(&f.rep, "RPS of eth0 rx-0 was changed");

                        assert_non_null(no);
                        assert_int_equal(no->kind, POLICY_NOTE_EXTERNAL);
                        assert_int_equal(no->irq, 0);
                        assert_string_equal(no->device, "eth0");
                        assert_int_equal(no->queue, 0);
                }
        }
        fx_free(&f);
}

/* 4 CPUs, eth0's 4 queues (IRQs 30-33) at 20% each, laid out one a CPU. */
static void hot_unplug_host(struct fx *f) {
        fx_init(f, 4, 1, FX_SMT_NONE);
        fx_add_nic(f, "eth0", 0, 4, true, 30, false, false);
        for (int q = 0; q < 4; q++)
                f->q[0][q] = (struct fx_queue_model){ 0.2, 4000 };
        assert_int_equal(fx_step(f, 1 * SEC), 0);
        expect_actions("layout", &f->l, "irq 30>0;irq 31>1;irq 32>2;irq 33>3;");
}

static void test_hot_unplug(void **state) {
        struct fx f;

        (void) state;
        hot_unplug_host(&f);

        /* CPU2 goes offline: the kernel moves IRQ 32 to the other CPUs */
        fx_cpu_offline(&f, 2);
        test_keep_list(&fx_irq(&f, 32)->affinity, "0-1,3");
        fx_model(&f, NULL);
        assert_int_equal(fx_step(&f, 2 * SEC), 0);
        /* it fires on CPU0 now (40%); CPU1 and CPU3 are at 20%: CPU1 */
        expect_actions("re-placed", &f.l, "irq 32>1;");
        assert_int_equal(f.l.v[0].why, ACTION_REASON_CPU_OFFLINE);
        assert_int_equal(count_notes(&f.rep, "someone else"), 0);
        assert_int_equal(fx_step(&f, 3 * SEC), 0);
        expect_actions("settled", &f.l, "");
        assert_int_equal(f.rep.n_notes, 0);

        fx_free(&f);
}

/* A tree without a kernel behind it (--root) keeps the mask naming the
 * offline CPU: the IRQ is still ours and is placed again all the same. */
static void test_hot_unplug_mask_kept(void **state) {
        struct fx f;

        (void) state;
        hot_unplug_host(&f);

        fx_cpu_offline(&f, 2);
        fx_model(&f, NULL);
        assert_int_equal(fx_step(&f, 2 * SEC), 0);
        expect_actions("re-placed off the offline CPU", &f.l, "irq 32>0;");
        assert_int_equal(f.l.v[0].why, ACTION_REASON_CPU_OFFLINE);
        assert_true(f.l.v[0].layout);
        assert_int_equal(count_notes(&f.rep, "someone else"), 0);
        assert_int_equal(fx_step(&f, 3 * SEC), 0);
        expect_actions("settled", &f.l, "");

        fx_free(&f);
}

/* The same for another device's IRQ, quiet or busy: once every CPU of
 * its mask is offline it is placed again on online CPUs, and left there. */
static void test_other_irq_stranded(void **state) {
        static const struct {
                const char *what;
                double rate, work;
                const char *want;
        } cases[] = {
                { "quiet: onto the eligible CPUs", 0, 0, "0-1,3" },
                { "busy: onto one online CPU", 20000, 0.2, NULL },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char got[64], buf[512];
                struct fx f;

                fx_init(&f, 4, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", 0, 2, true, 30, false, false);
                for (int q = 0; q < 2; q++)
                        f.q[0][q] = (struct fx_queue_model){ 0.2, 3000 };
                fx_add_irq(&f, 60, "nvme0q1", -1, -1, INVENTORY_IRQ_NONE);
                fx_irq(&f, 60)->node = -1;
                KEEP(&fx_irq(&f, 60)->affinity, cpuset_single(2));
                f.other[f.n_other++] = (struct fx_other_model){ 60, cases[i].rate, cases[i].work };
                assert_int_equal(fx_ticks(&f, 1, 4), 0);
                assert_int_equal(cpuset_format_list(KEPT(&fx_irq(&f, 60)->affinity), got, sizeof(got)), 0);
                if (strcmp(got, "2") != 0)
                        fail_msg("%s: before the unplug IRQ 60 is on %s, want 2", cases[i].what, got);

                fx_cpu_offline(&f, 2);
                assert_int_equal(fx_ticks(&f, 5, 8), 0);
                assert_int_equal(cpuset_format_list(KEPT(&fx_irq(&f, 60)->affinity), got, sizeof(got)), 0);
                if (cases[i].want ? strcmp(got, cases[i].want) != 0
                                  : (cpuset_count(KEPT(&fx_irq(&f, 60)->affinity)) != 1 ||
                                     !cpuset_isset(&f.topo.online, cpuset_only(KEPT(&fx_irq(&f, 60)->affinity)))))
                        fail_msg("%s: IRQ 60 on %s after CPU2 went offline", cases[i].what, got);
                fx_fmt(&f.l, buf, sizeof(buf));
                if (strstr(buf, "irq 60>"))
                        fail_msg("%s: still moving at the eighth tick: %s", cases[i].what, buf);
                fx_free(&f);
        }
}

/* The tick a CPU goes offline may touch the unit already (its RPS leaves
 * the offline CPU): the IRQ is placed again all the same, at the next
 * tick at the latest, and is never taken for someone else's change. */
static void test_hot_unplug_rps_touched(void **state) {
        struct fx f;
        int placed = 0;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 1, true, 60, true, false);
        assert_int_equal(fx_step(&f, 1 * SEC), 0);
        expect_actions("layout", &f.l, "irq 60>0;rps eth0/0>0-3;");

        fx_cpu_offline(&f, 0);
        fx_model(&f, NULL);
        for (int s = 2; s <= 4; s++) {
                assert_int_equal(fx_step(&f, (uint64_t) s * SEC), 0);
                for (size_t i = 0; i < f.l.n; i++)
                        if (f.l.v[i].type == KNOB_IRQ && f.l.v[i].irq == 60) {
                                assert_false(cpuset_isset(KEPT(&f.l.v[i].cpus), 0));
                                assert_int_equal(f.l.v[i].why, ACTION_REASON_CPU_OFFLINE);
                                placed++;
                        }
        }
        assert_int_equal(placed, 1);
        assert_false(cpuset_isset(KEPT(&fx_irq(&f, 60)->affinity), 0));
        assert_int_equal(count_notes(&f.rep, "someone else"), 0);
        fx_free(&f);
}

static void test_driver_reset(void **state) {
        static const struct {
                const char *what;
                bool forget, reset31;
                const char *want;
                unsigned notes;
        } cases[] = {
                { "NIC went down/up, daemon says so: same layout again", true, true, "irq 30>0;irq 31>1;", 0 },
                { "only IRQ 30 reset: IRQ 31 stays, no action for it", true, false, "irq 30>0;", 0 },
                { "nobody said: an external change", false, true, "", 2 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, 4, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", 0, 2, true, 30, false, false);
                fx_add_nic(&f, "eth1", 0, 2, true, 40, false, false);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                expect_actions(cases[i].what, &f.l, "irq 30>0;irq 31>1;irq 40>2;irq 41>3;");
                KEEP(&fx_irq(&f, 30)->affinity, f.topo.online);
                if (cases[i].reset31)
                        KEEP(&fx_irq(&f, 31)->affinity, f.topo.online);
                if (cases[i].forget)
                        policy_forget_nic(f.st, "eth0");
                assert_int_equal(fx_step(&f, 2 * SEC), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                assert_int_equal(count_notes(&f.rep, "someone else"), cases[i].notes);
                fx_free(&f);
        }
}

/* ---- XPS and RFS ---- */

static void test_xps_follows_move(void **state) {
        struct fx f;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_nic(&f, "eth0", 0, 3, true, 30, false, true);
        assert_int_equal(fx_step(&f, 0), 0);
        expect_actions("layout with XPS", &f.l, "irq 30>0;irq 31>1;irq 32>2;xps eth0/0>0;xps eth0/1>1;xps eth0/2>2;");
        /* queues 0 and 1 end up together on CPU0 (the driver reset them,
         * the daemon said so, layout off); CPU0 gets hot */
        f.cfg.initial_layout = false;
        policy_forget_nic(f.st, "eth0");
        fx_place(&f, 31, 0);
        f.base[1] = 0.2;
        f.q[0][0] = (struct fx_queue_model){ 0.5, 9000 };
        f.q[0][1] = (struct fx_queue_model){ 0.4, 8000 };
        f.q[0][2] = (struct fx_queue_model){ 0.1, 1000 };
        /* hot after 3 samples; the layout's CPUs settle for 4 (the
         * average of the smoothing 0.5 keeps under 10% of the old level) */
        assert_int_equal(fx_ticks(&f, 1, 4), 0);
        /* equal projected peaks: the smaller queue moves, to the coolest
         * CPU (lowest number on a tie) */
        expect_actions("move, XPS follows", &f.l, "irq 31>3;xps eth0/1>3;");
        fx_free(&f);
}

static void test_rfs(void **state) {
        static const struct {
                const char *what;
                unsigned entries, inventory_entries, nq;
                bool rfs;
                const char *want;
        } cases[] = {
                { "entries / 4 rx queues", 32768, 0, 4, true, "rps eth0/0>4-5;sockflow>32768;flowcnt eth0/0>8192;" },
                { "host value already right: no sysctl write", 32768, 32768, 4, true,
                  "rps eth0/0>4-5;flowcnt eth0/0>8192;" },
                { "rounded down to a power of two", 32768, 0, 3, true,
                  "rps eth0/0>4-5;sockflow>32768;flowcnt eth0/0>8192;" },
                { "entries itself rounded down", 40000, 0, 4, true,
                  "rps eth0/0>4-5;sockflow>32768;flowcnt eth0/0>8192;" },
                { "rfs = no, the default: RPS alone", 32768, 0, 4, false, "rps eth0/0>4-5;" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;

                fx_init(&f, 8, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                f.cfg.rfs = cases[i].rfs;
                f.cfg.rps_sock_flow_entries = cases[i].entries;
                f.inv.rps_sock_flow_entries = cases[i].inventory_entries;
                fx_add_nic(&f, "eth0", 0, cases[i].nq, true, 30, true, false);
                fx_place(&f, 30, 3);
                for (unsigned q = 1; q < cases[i].nq; q++) {
                        fx_place(&f, 30 + q, q - 1);
                        f.q[0][q] = (struct fx_queue_model){ 0.10, 1000 };
                }
                f.q[0][0] = (struct fx_queue_model){ 0.92, 50000 };
                f.base[3] = 0.07;
                for (int c = 0; c < 8; c++)
                        f.base[c] = c < 3 ? 0.10 : c == 3 ? 0.07 : 0.05;
                assert_int_equal(fx_ticks(&f, 1, 3), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                fx_free(&f);
        }
}

/* ---- workers ---- */

static void test_workers(void **state) {
        static const struct {
                const char *what;
                enum worker_policy policy;
                const char *cpus;        /* worker cpus= restriction, "" none */
                const char *interface;
                int nq;                  /* eth0 queues (on CPUs 0..nq-1) */
                const char *want;
                bool stale_effective;    /* effective_affinity still on CPU 7 */
        } cases[] = {
                { "spread: one CPU per thread, off the queue CPUs", WORKER_SPREAD, "", NULL, 4,
                  "thread 1001>4;thread 1002>5;thread 1003>6;thread 2001>7;thread 2002>4;" },
                { "spread within cpus=", WORKER_SPREAD, "6-7", NULL, 4,
                  "thread 1001>6;thread 1002>7;thread 1003>6;thread 2001>7;thread 2002>6;" },
                { "spread when every CPU serves a queue", WORKER_SPREAD, "", NULL, 8,
                  "thread 1001>0;thread 1002>1;thread 1003>2;thread 2001>3;thread 2002>4;" },
                { "colocate: thread i on queue i's CPU", WORKER_COLOCATE, "", "eth0", 4,
                  "thread 1001>0;thread 1002>1;thread 1003>2;thread 2001>3;thread 2002>0;" },
                /* x86 updates effective_affinity only at the IRQ's next
                 * interrupt: a quiet IRQ's mask is where it fires next */
                { "colocate: a stale effective CPU outside the mask is ignored", WORKER_COLOCATE, "", "eth0", 4,
                  "thread 1001>0;thread 1002>1;thread 1003>2;thread 2001>3;thread 2002>0;", true },
                { "colocate, busiest NIC", WORKER_COLOCATE, "", NULL, 2,
                  "thread 1001>4;thread 1002>5;thread 1003>6;thread 2001>4;thread 2002>5;" },
                { "avoid-net", WORKER_AVOID_NET, "", NULL, 4,
                  "thread 1001>4-7;thread 1002>4-7;thread 1003>4-7;thread 2001>4-7;thread 2002>4-7;" },
                { "avoid-net, every CPU serves a queue: all eligible (no change)", WORKER_AVOID_NET, "", NULL, 8, "" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                struct config_worker w = { .name = "app" };

                fx_init(&f, 8, 1, FX_SMT_NONE);
                f.cfg.initial_layout = false;
                fx_add_nic(&f, "eth0", 0, cases[i].nq, true, 30, false, false);
                for (int q = 0; q < cases[i].nq; q++) {
                        fx_place(&f, 30 + q, q);
                        f.q[0][q] = (struct fx_queue_model){ 0.1, 1000 };
                        if (cases[i].stale_effective) {
                                fx_irq(&f, 30 + q)->has_effective = true;
                                KEEP(&fx_irq(&f, 30 + q)->effective, cpuset_single(7));
                        }
                }
                if (cases[i].policy == WORKER_COLOCATE && !cases[i].interface) {
                        /* eth1 on CPUs 4-6 carries more */
                        fx_add_nic(&f, "eth1", 0, 3, true, 40, false, false);
                        for (int q = 0; q < 3; q++) {
                                fx_place(&f, 40 + q, 4 + q);
                                f.q[1][q] = (struct fx_queue_model){ 0.3, 5000 };
                        }
                }
                w.policy = cases[i].policy;
                w.interface = (char *) cases[i].interface;
                assert_int_equal(cpuset_parse_list(cases[i].cpus, &w.cpus), 0);
                f.cfg.workers = &w;
                f.cfg.n_workers = 1;
                fx_add_proc(&f, 0, 1000, 3);
                fx_add_proc(&f, 0, 2000, 2);
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                /* stable */
                assert_int_equal(fx_step(&f, 2 * SEC), 0);
                expect_actions(cases[i].what, &f.l, "");
                /* a new thread is handled the tick it shows up; an old one
                 * re-pinned by someone else is noted once and left alone */
                if (cases[i].policy == WORKER_SPREAD && cases[i].cpus[0] == 0 && cases[i].nq == 4) {
                        struct worker_proc *p = &f.ws.procs[1];
                        p->threads = realloc(p->threads, 3 * sizeof(*p->threads));
                        p->threads[2] = (struct worker_thread){ .tid = 2003, .allowed = f.topo.online };
                        p->n_threads = 3;
                        p->threads[0].allowed = cpuset_single(0);
                        assert_int_equal(fx_step(&f, 3 * SEC), 0);
                        expect_actions("new thread", &f.l, "thread 2003>7;");
                        assert_int_equal(count_notes(&f.rep, "thread 2001 of w0 (pid 2000) was re-pinned by someone else"), 1);
                        assert_int_equal(fx_step(&f, 4 * SEC), 0);
                        expect_actions("new thread", &f.l, "");
                        assert_int_equal(f.rep.n_notes, 0);
                }
                f.cfg.workers = NULL;
                fx_free(&f);
        }
}

/* ---- interface sections ---- */

static void test_interface_config(void **state) {
        static const struct {
                const char *what;
                bool manage;
                const char *cpus;
                const char *want;
        } cases[] = {
                { "manage=no: left alone", false, "", "irq 40>0;irq 41>1;" },
                { "cpus= restricts the layout", true, "2-3", "irq 30>2;irq 31>3;irq 40>0;irq 41>1;" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                struct config_interface ci = { .match = "eth0", .manage = cases[i].manage,
                                               .rps = TRI_INHERIT, .xps = TRI_INHERIT, .rfs = TRI_INHERIT };

                fx_init(&f, 4, 1, FX_SMT_NONE);
                assert_int_equal(cpuset_parse_list(cases[i].cpus, &ci.cpus), 0);
                f.cfg.interfaces = &ci;
                f.cfg.n_interfaces = 1;
                fx_add_nic(&f, "eth0", 0, 2, true, 30, false, false);
                fx_add_nic(&f, "eth1", 0, 2, true, 40, false, false);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                f.cfg.interfaces = NULL;
                fx_free(&f);
        }
}

/* ---- NICs without queue IRQs (veth) ---- */

/* A veth of nq queues receiving pps packets/s whose receive work (work in
 * all, spread over its queues) runs on the sending CPU 0. */
static void setup_veth(struct fx *f, int n_cpus, const char *name, int nq, double work, double pps) {
        fx_init(f, n_cpus, 1, FX_SMT_NONE);
        f->cfg.rfs = false;
        fx_add_veth(f, name, nq);
        f->sender[0] = 0;
        f->pps[0] = pps;
        for (int q = 0; q < nq; q++)
                f->q[0][q] = (struct fx_queue_model){ work / nq, 0 };
        for (int c = 0; c < n_cpus; c++)
                f->base[c] = 0.02;
}

static void test_irqless_nic(void **state) {
        static const struct {
                const char *what;
                int n_cpus;
                const char *name;
                double work, pps;
                bool manage, rps, rfs;
                bool queue_irq;          /* a busy eth0 queue IRQ on CPU0 explains its load */
                const char *want;
                enum action_reason why;  /* of the first action */
        } cases[] = {
                { "2 CPUs: every rx queue to the other CPU", 2, "veth1", 0.92, 180000, true, true, false, false,
                  "rps veth1/0>1;rps veth1/1>1;rps veth1/2>1;rps veth1/3>1;", ACTION_REASON_SOFTIRQ_HOT },
                { "8 CPUs: sized like a lone hot queue, CPU0 left out", 8, "veth1", 0.92, 180000, true, true, false,
                  false, "rps veth1/0>1-2;rps veth1/1>1-2;rps veth1/2>1-2;rps veth1/3>1-2;", ACTION_REASON_SOFTIRQ_HOT },
                { "RFS beside it", 2, "veth1", 0.92, 180000, true, true, true, false,
                  "rps veth1/0>1;sockflow>32768;flowcnt veth1/0>8192;rps veth1/1>1;flowcnt veth1/1>8192;"
                  "rps veth1/2>1;flowcnt veth1/2>8192;rps veth1/3>1;flowcnt veth1/3>8192;", ACTION_REASON_SOFTIRQ_HOT },
                { "below 1000 packets/s: not its load", 2, "veth1", 0.92, 900, true, true, false, false, "",
                  ACTION_REASON_INVALID },
                { "lo never", 2, "lo", 0.92, 180000, true, true, false, false, "", ACTION_REASON_INVALID },
                { "manage=no never", 2, "veth1", 0.92, 180000, false, true, false, false, "", ACTION_REASON_INVALID },
                { "rps=no for the interface", 2, "veth1", 0.92, 180000, true, false, false, false, "",
                  ACTION_REASON_INVALID },
                { "hot CPU explained by a queue IRQ: the veth is left alone", 4, "veth1", 0.30, 180000, true, true,
                  false, true, "rps eth0/0>1;", ACTION_REASON_LONE_HOT_QUEUE },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                struct config_interface ci = { .match = "veth*", .manage = cases[i].manage, .rps = TRI_INHERIT,
                                               .xps = TRI_INHERIT, .rfs = TRI_INHERIT };

                setup_veth(&f, cases[i].n_cpus, cases[i].name, 4, cases[i].work, cases[i].pps);
                f.cfg.rfs = cases[i].rfs;
                ci.rps = cases[i].rps ? TRI_INHERIT : TRI_NO;
                f.cfg.interfaces = &ci;
                f.cfg.n_interfaces = 1;
                if (cases[i].queue_irq) {
                        /* eth0 queue 0 on CPU0 busy (60%), queue 1 on CPU3 */
                        f.cfg.initial_layout = false;
                        fx_add_nic(&f, "eth0", 0, 2, true, 30, true, false);
                        fx_place(&f, 30, 0);
                        fx_place(&f, 31, 3);
                        f.q[1][0] = (struct fx_queue_model){ 0.60, 50000 };
                        f.q[1][1] = (struct fx_queue_model){ 0.05, 1000 };
                }
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                expect_actions(cases[i].what, &f.l, "");
                /* the rate is known from the second tick, CPU0 hot at the
                 * third */
                assert_int_equal(fx_ticks(&f, 2, 3), 0);
                expect_actions(cases[i].what, &f.l, cases[i].want);
                if (cases[i].why != ACTION_REASON_INVALID && f.l.v[0].why != cases[i].why)
                        fail_msg("%s: reason %s '%s'", cases[i].what, action_reason_to_string(f.l.v[0].why),
                                 f.l.v[0].reason);
                for (size_t k = 0; k < f.l.n; k++)
                        if (f.l.v[k].type == KNOB_XPS)
                                fail_msg("%s: XPS on a NIC without queue IRQs", cases[i].what);
                /* applied: CPU0 cools; on 2 CPUs CPU1 is hot now, but the
                 * sender's CPU is no place to widen to: nothing more */
                assert_int_equal(fx_ticks(&f, 4, 100), 0);
                expect_actions(cases[i].what, &f.l, "");
                if (!cases[i].queue_irq)
                        assert_int_equal(f.rep.n_rps_queues, cases[i].want[0] ? 4 : 0);
                f.cfg.interfaces = NULL;
                fx_free(&f);
        }
}

/* RPS for a veth is a trial: when the NIC receives more than 5% fewer
 * bytes in the 3 samples after the first with RPS than in the sample
 * before (the 2-vCPU VM's TCP stream: 0-44% fewer), the masks go back and
 * RPS stays off for 10 min, then 20 min after a second failure; a passed
 * trial resets that.  Over 20% fewer fails at the first counted sample.
 * Bytes, not packets, tell throughput. */
static void test_irqless_nic_trial(void **state) {
        static const char *start = "rps veth1/0>1;rps veth1/1>1;rps veth1/2>1;rps veth1/3>1;";
        static const char *back = "rps veth1/0>;rps veth1/1>;rps veth1/2>;rps veth1/3>;";
        static const struct {
                const char *what;
                double pps, bytes;       /* with RPS, from the sample after the start */
                unsigned fails_at;       /* tick, 0 = kept */
                const char *reason;
        } cases[] = {
                { "30% fewer packets and bytes: at the first sample", 126000, 1000, 5,
                  "RPS cost throughput: veth1 received 1.01 Gbit/s in 1 sample with RPS, 1.44 Gbit/s before "
                  "(-30%): back to the original, no RPS for it for 10 min" },
                { "15% fewer: after 3 samples", 153000, 1000, 7,
                  "veth1 received 1.22 Gbit/s in 3 samples with RPS, 1.44 Gbit/s before (-15%)" },
                { "4% fewer: noise, kept", 172800, 1000, 0,
                  "RPS kept: veth1 received 1.38 Gbit/s in 3 samples with RPS, 1.44 Gbit/s before (-4%)" },
                { "as many packets, 10% smaller", 180000, 900, 7, "(-10%)" },
                { "10% fewer but bigger packets: as many bytes", 162000, 1111, 0,
                  "RPS kept: veth1 received 1.44 Gbit/s in 3 samples with RPS" },
        };
        struct fx f;
        unsigned k;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                setup_veth(&f, 2, "veth1", 4, 0.92, 180000);
                assert_int_equal(fx_ticks(&f, 1, 3), 0);
                expect_actions(cases[i].what, &f.l, start);
                /* the first sample with RPS (the flows moving) does not count */
                f.pps[0] = 50000;
                assert_int_equal(fx_ticks(&f, 4, 4), 0);
                expect_actions(cases[i].what, &f.l, "");
                f.pps[0] = cases[i].pps;
                f.pkt_bytes[0] = cases[i].bytes;
                for (k = 5; k <= 7; k++) {
                        assert_int_equal(fx_ticks(&f, k, k), 0);
                        expect_actions(cases[i].what, &f.l, k == cases[i].fails_at ? back : "");
                        if (k == cases[i].fails_at && f.l.v[0].why != ACTION_REASON_RPS_TRIAL_FAILED)
                                fail_msg("%s: reason %s", cases[i].what, action_reason_to_string(f.l.v[0].why));
                        /* the prose carries the throughput figures */
                        if (k == cases[i].fails_at && !strstr(f.l.v[0].reason, cases[i].reason))
                                fail_msg("%s: reason '%s'", cases[i].what, f.l.v[0].reason);
                        /* the verdict is counted once, in the tick that reaches it */
                        if (f.rep.rps_trials[POLICY_TRIAL_REVERTED] != (k == cases[i].fails_at) ||
                            f.rep.rps_trials[POLICY_TRIAL_KEPT] != (!cases[i].fails_at && k == 7) ||
                            f.rep.rps_trials[POLICY_TRIAL_NO_VERDICT] != 0)
                                fail_msg("%s: tick %u: trials kept %u reverted %u no verdict %u", cases[i].what, k,
                                         f.rep.rps_trials[POLICY_TRIAL_KEPT], f.rep.rps_trials[POLICY_TRIAL_REVERTED],
                                         f.rep.rps_trials[POLICY_TRIAL_NO_VERDICT]);
                        /* a pass is logged once, when it is decided */
                        if (!cases[i].fails_at && count_notes(&f.rep, "RPS kept") != (k == 7))
                                fail_msg("%s: tick %u: 'RPS kept' noted %u times", cases[i].what, k,
                                         count_notes(&f.rep, "RPS kept"));
                }
                if (!cases[i].fails_at && count_notes(&f.rep, cases[i].reason) != 1)
                        fail_msg("%s: note '%s' missing", cases[i].what, cases[i].reason);
                if (!cases[i].fails_at) {
                        assert_int_equal(fx_ticks(&f, 8, 100), 0);
                        expect_actions(cases[i].what, &f.l, "");
                        assert_int_equal(f.rep.n_rps_queues, 4);
                }
                fx_free(&f);
        }

        /* the first case again, on: the blocks, a pass */
        setup_veth(&f, 2, "veth1", 4, 0.92, 180000);
        assert_int_equal(fx_ticks(&f, 1, 4), 0);
        f.pps[0] = 126000;
        assert_int_equal(fx_ticks(&f, 5, 5), 0);
        expect_actions("trial failed", &f.l, back);
        /* CPU0 hot again without RPS, but blocked for 10 min */
        f.pps[0] = 180000;
        for (k = 6; k < 5 + 600; k++) {
                assert_int_equal(fx_ticks(&f, k, k), 0);
                if (f.l.n)
                        fail_msg("tick %u: %zu actions while blocked", k, f.l.n);
        }
        assert_int_equal(fx_ticks(&f, k, k), 0);
        expect_actions("tried again after 10 min", &f.l, start);
        /* fails again: 20 min */
        f.pps[0] = 100000;
        assert_int_equal(fx_ticks(&f, k + 1, k + 2), 0);
        expect_actions("second failure", &f.l, back);
        assert_int_equal(f.l.v[0].why, ACTION_REASON_RPS_TRIAL_FAILED);
        assert_non_null(strstr(f.l.v[0].reason, "no RPS for it for 20 min"));
        k += 2;
        f.pps[0] = 180000;
        assert_int_equal(fx_ticks(&f, k + 1, k + 1199), 0);
        assert_int_equal(f.rep.n_rps_queues, 0);
        assert_int_equal(fx_ticks(&f, k + 1200, k + 1200), 0);
        expect_actions("tried again after 20 min", &f.l, start);
        /* the rate holds: RPS stays, nothing more */
        assert_int_equal(fx_ticks(&f, k + 1201, k + 1300), 0);
        expect_actions("passed", &f.l, "");
        assert_int_equal(f.rep.n_rps_queues, 4);
        fx_free(&f);

        /* rfs = yes: a failed trial gives RFS back with RPS */
        setup_veth(&f, 2, "veth1", 4, 0.92, 180000);
        f.cfg.rfs = true;
        assert_int_equal(fx_ticks(&f, 1, 4), 0);
        f.pps[0] = 126000;
        assert_int_equal(fx_ticks(&f, 5, 5), 0);
        expect_actions("trial failed with RFS", &f.l,
                       "rps veth1/0>;flowcnt veth1/0>0;rps veth1/1>;flowcnt veth1/1>0;"
                       "rps veth1/2>;flowcnt veth1/2>0;rps veth1/3>;flowcnt veth1/3>0;");
        for (int q = 0; q < 4; q++)
                assert_int_equal(fx_queue(&f, "veth1", q)->rps_flow_cnt, 0);
        fx_free(&f);

        /* rps_trial = no: RPS stays whatever the throughput */
        setup_veth(&f, 2, "veth1", 4, 0.92, 180000);
        f.cfg.rps_trial = false;
        assert_int_equal(fx_ticks(&f, 1, 3), 0);
        expect_actions("rps_trial = no", &f.l, start);
        f.pps[0] = 90000;
        assert_int_equal(fx_ticks(&f, 4, 100), 0);
        expect_actions("rps_trial = no", &f.l, "");
        assert_int_equal(f.rep.n_rps_queues, 4);
        fx_free(&f);
}

/* Narrowed when the packets drop, kept while the rate stays inside the
 * hysteresis band (500..1000 packets/s), given back below it. */
static void test_irqless_nic_lifecycle(void **state) {
        static const struct {
                unsigned when;
                const char *mask;
                enum action_reason why;
        } want[] = {
                { 3, "1-2", ACTION_REASON_SOFTIRQ_HOT },
                /* 3 samples that fit, but the dwell after the start */
                { 33, "1", ACTION_REASON_RPS_NARROWED },
                /* the average 400, 250, 175 packets/s at 300-302 */
                { 302, "", ACTION_REASON_RPS_NOT_NEEDED },
        };
        struct fx f;
        unsigned when[16], n = 0, changes = 0;
        char got[16][32];
        enum action_reason why[16];

        (void) state;
        setup_veth(&f, 4, "veth1", 4, 0.92, 180000);
        for (unsigned k = 1; k <= 400; k++) {
                if (k == 20) {
                        /* the load drops to a tenth */
                        f.pps[0] = 18000;
                        for (int q = 0; q < 4; q++)
                                f.q[0][q].work = 0.092 / 4;
                } else if (k == 200) {
                        f.pps[0] = 700;  /* inside the band: RPS stays */
                } else if (k == 300) {
                        f.pps[0] = 100;
                }
                fx_model(&f, NULL);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                for (size_t a = 0; a < f.l.n; a++) {
                        if (f.l.v[a].type != KNOB_RPS)
                                continue;
                        changes++;
                        assert_int_equal(count_type(&f.l, KNOB_RPS), 4);
                        if (a > 0)
                                continue;
                        assert_true(n < ELEMENTSOF(when));
                        when[n] = k;
                        cpuset_format_list(KEPT(&f.l.v[a].cpus), got[n], sizeof(got[n]));
                        why[n] = f.l.v[a].why;
                        print_message("    RPS at %3us -> '%s' (%s)\n", k, got[n], f.l.v[a].reason);
                        n++;
                }
        }
        assert_int_equal(n, ELEMENTSOF(want));
        assert_int_equal(changes, 4 * ELEMENTSOF(want));
        for (unsigned i = 0; i < n; i++) {
                if (when[i] != want[i].when || strcmp(got[i], want[i].mask) != 0 || why[i] != want[i].why)
                        fail_msg("RPS change %u: at %us '%s' (%s), want at %us '%s' (%s)", i, when[i], got[i],
                                 action_reason_to_string(why[i]), want[i].when, want[i].mask,
                                 action_reason_to_string(want[i].why));
        }
        assert_int_equal(f.rep.n_rps_queues, 0);
        fx_free(&f);
}

/* +/-10% noise on every CPU's load and on the packet rate over 1000 ticks:
 * RPS starts at most once and never flaps. */
static void test_irqless_nic_noise(void **state) {
        static const struct {
                const char *what;
                int n_cpus;
                double work, pps;
                unsigned max_changes;    /* RPS actions, 4 queues each change */
        } cases[] = {
                { "busy veth, 2 CPUs", 2, 0.92, 180000, 4 },
                { "busy veth, 8 CPUs", 8, 0.92, 180000, 4 },
                { "CPU0 near hot_enter", 2, 0.76, 50000, 4 },
                { "idle CPUs, rate in the band", 4, 0.30, 800, 0 },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                uint64_t seed = 0x5eed + i;
                double noise[FX_MAX_CPUS];
                unsigned changes = 0;

                setup_veth(&f, cases[i].n_cpus, "veth1", 4, cases[i].work, cases[i].pps);
                for (unsigned k = 1; k <= 1000; k++) {
                        for (int c = 0; c < f.n_cpus; c++)
                                noise[c] = 1 + 0.10 * (2 * fx_rand(&seed) - 1);
                        fx_model(&f, noise);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        changes += count_type(&f.l, KNOB_RPS);
                        for (size_t a = 0; a < f.l.n; a++)
                                if (f.l.v[a].type == KNOB_RPS && f.l.v[a].queue == 0)
                                        print_message("    %s at %us: %s\n", cases[i].what, k, f.l.v[a].reason);
                        assert_int_equal(count_type(&f.l, KNOB_IRQ), 0);
                }
                if (changes > cases[i].max_changes)
                        fail_msg("%s: %u RPS actions over 1000 ticks", cases[i].what, changes);
                if (cases[i].max_changes > 0 && changes == 0 && cases[i].work > 0.9)
                        fail_msg("%s: never got RPS", cases[i].what);
                fx_free(&f);
        }
}

static void test_bad_input(void **state) {
        struct fx f;
        struct policy_input in;

        (void) state;
        fx_init(&f, 2, 1, FX_SMT_NONE);
        in = fx_input(&f, 0);
        in.config = NULL;
        assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), -EINVAL);
        in = fx_input(&f, 0);
        in.topo = NULL;
        assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), -EINVAL);
        assert_int_equal(policy_tick(NULL, &in, &f.l, &f.rep), -EINVAL);
        /* an empty host is fine */
        in = fx_input(&f, 0);
        assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
        assert_int_equal(f.l.n, 0);
        fx_free(&f);
}

/* ---- record index ---- */

/* pol_irq_get/pol_queue_get through creates, swap-removals (feedback
 * ENOENT) and growth past the first table size: every live record is
 * found at its own entry, removed ones are not. */
static void test_record_index(void **state) {
        static const struct {
                const char *what;
                unsigned n;              /* records created: IRQ base + i, queue nic{i%3} i */
                unsigned base;
                unsigned remove_every;   /* 0: none; else every k-th is removed */
        } cases[] = {
                { "empty", 0, 0, 0 },
                { "one", 1, 100, 0 },
                { "dense run past the first table", 300, 24, 0 },
                { "sparse numbers with collisions", 200, 1u << 20, 0 },
                { "every third removed", 150, 40, 3 },
                { "all removed", 40, 7, 1 },
        };

        (void) state;
        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                struct policy_state *st = policy_state_new();
                unsigned step = cases[c].base >= (1u << 20) ? 4096 : 1;

                assert_non_null(st);
                for (unsigned i = 0; i < cases[c].n; i++) {
                        char nic[IF_NAMESIZE];
                        struct pol_irq *r = pol_irq_get(st, cases[c].base + i * step, true);
                        struct pol_queue *q;

                        snprintf(nic, sizeof(nic), "nic%u", i % 3);
                        q = pol_queue_get(st, nic, (int) i, true);
                        assert_non_null(r);
                        assert_non_null(q);
                        r->failures = i;
                        q->failures = i;
                }
                for (unsigned i = 0; cases[c].remove_every && i < cases[c].n; i += cases[c].remove_every) {
                        struct action a = { .type = KNOB_IRQ, .irq = cases[c].base + i * step };
                        policy_feedback(st, &a, -ENOENT, 0);
                        a = (struct action){ .type = KNOB_RPS, .queue = (int) i };
                        snprintf(a.nic, sizeof(a.nic), "nic%u", i % 3);
                        policy_feedback(st, &a, -ENOENT, 0);
                }
                for (unsigned i = 0; i < cases[c].n; i++) {
                        bool gone = cases[c].remove_every && i % cases[c].remove_every == 0;
                        char nic[IF_NAMESIZE];
                        struct pol_irq *r = pol_irq_get(st, cases[c].base + i * step, false);
                        struct pol_queue *q;

                        snprintf(nic, sizeof(nic), "nic%u", i % 3);
                        q = pol_queue_get(st, nic, (int) i, false);
                        if (gone != (r == NULL) || gone != (q == NULL))
                                fail_msg("%s: record %u %s", cases[c].what, i, gone ? "still found" : "lost");
                        if (!gone && (r->irq != cases[c].base + i * step || r->failures != i ||
                                      q->index != (int) i || strcmp(q->nic, nic) != 0 || q->failures != i))
                                fail_msg("%s: record %u found at another's entry", cases[c].what, i);
                }
                assert_null(pol_queue_get(st, "nic9", 0, false));
                policy_state_free(st);
        }
}

/* ---- fast attack and pace ---- */

/* A raw interval like fx_cpu's, in its own rates (the policy's raw input). */
struct fx_raw {
        struct sample_rates r;
};

static void fx_raw_init(struct fx_raw *x, int n) {
        x->r = (struct sample_rates) { .max_cpu = n - 1, .interval_s = 1 };
        x->r.cpus = calloc(n, sizeof(*x->r.cpus));
        assert_non_null(x->r.cpus);
        for (int c = 0; c < n; c++)
                x->r.cpus[c] = (struct sample_cpu) { .valid = true, .idle = 1, .net_frac = 1 };
}

static void fx_raw_cpu(struct fx_raw *x, int cpu, double soft, double user) {
        struct sample_cpu *sc = &x->r.cpus[cpu];
        sc->softirq = soft;
        sc->usr = user;
        sc->idle = MAX(1 - soft - user, 0);
        sc->busy = 1 - sc->idle;
}

/* The smoothed load after one more raw interval (sample_smooth's EWMA). */
static void fx_blend(struct fx *f, const struct fx_raw *x, double alpha) {
        for (int c = 0; c < f->n_cpus; c++) {
                struct sample_cpu *a = &f->load.cpus[c];
                const struct sample_cpu *n = &x->r.cpus[c];
                a->softirq = alpha * n->softirq + (1 - alpha) * a->softirq;
                a->usr = alpha * n->usr + (1 - alpha) * a->usr;
                a->idle = alpha * n->idle + (1 - alpha) * a->idle;
                a->busy = 1 - a->idle;
        }
        f->have_load = true;
}

static int fx_step_raw(struct fx *f, const struct fx_raw *x, uint64_t now) {
        struct policy_input in = fx_input(f, now);
        int r;

        in.raw = x ? &x->r : NULL;
        r = policy_tick(f->st, &in, &f->l, &f->rep);
        if (r == 0)
                fx_apply(f, now, 0, 0);
        return r;
}

/* A flood saturates CPU0 (a single-queue NIC's IRQ there, 60% softirq and
 * 2% idle) on a calm 4-CPU host: the first sample that shows it is acted
 * on, at the shipped defaults, though the smoothed load (0.5 of the way)
 * is below every threshold.  Without the raw sample the same tick does
 * nothing: the smoothed load alone takes hot_samples more samples. */
static void test_fast_attack(void **state) {
        for (int with_raw = 1; with_raw >= 0; with_raw--) {
                struct fx f;
                struct fx_raw x;

                (void) state;
                fx_init(&f, 4, 1, FX_SMT_NONE);
                fx_shipped_defaults(&f.cfg);
                f.cfg.initial_layout = false;
                f.cfg.single_queue_rps = false;
                fx_add_nic(&f, "eth0", 0, 1, true, 50, true, false);
                fx_place(&f, 50, 0);
                fx_raw_init(&x, 4);
                for (int k = 1; k <= 4; k++) {
                        bool flood = k == 4;

                        /* calm: within balance_floor of the mean */
                        fx_raw_cpu(&x, 0, flood ? 0.60 : 0.04, flood ? 0.38 : 0.10);
                        for (int c = 1; c < 4; c++)
                                fx_raw_cpu(&x, c, 0.02, 0.10);
                        if (k == 1)
                                fx_blend(&f, &x, 1);
                        else
                                fx_blend(&f, &x, f.cfg.smoothing);
                        fx_rate(&f, 50, 0, flood ? 20000 : 2000);
                        assert_int_equal(fx_step_raw(&f, with_raw ? &x : NULL, k * SEC), 0);
                        if (!flood)
                                expect_actions("fast attack: calm before", &f.l, "");
                }
                /* smoothed: 32% softirq, 46% idle: neither hot nor saturated */
                assert_true(f.load.cpus[0].softirq < f.cfg.hot_exit && f.load.cpus[0].idle > f.cfg.saturated_idle);
                if (with_raw) {
                        if (count_type(&f.l, KNOB_RPS) != 1)
                                fail_msg("fast attack: %zu actions, want one RPS change at the first saturated "
                                         "sample", f.l.n);
                        assert_true(f.rep.n_hot_cpus == 1 && f.rep.hot_cpus[0].cpu == 0);
                        /* sized to the raw load: RPS over more than one CPU */
                        assert_true(cpuset_count(KEPT(&f.l.v[0].cpus)) >= 2);
                } else {
                        expect_actions("no raw sample: not yet", &f.l, "");
                        assert_int_equal(f.rep.n_hot_cpus, 0);
                }
                sample_rates_free(&x.r);
                fx_free(&f);
        }
}

/* Stationary noise below saturation never moves anything: 4 CPUs, a
 * 4-queue NIC laid out one queue a CPU, each CPU's raw sample +-30%
 * around 45% softirq beside 30% user, with single samples whose idle
 * dips under saturated_idle (6%) but not under half of it.  200 samples
 * at the shipped defaults, after the layout: no action. */
static void test_fast_attack_noise(void **state) {
        struct fx f;
        struct fx_raw x;
        uint64_t seed = 14;
        unsigned n_actions = 0, n_hot = 0;

        (void) state;
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.single_queue_rps = false;
        fx_add_nic(&f, "eth0", 0, 4, true, 60, true, false);
        fx_raw_init(&x, 4);
        for (int q = 0; q < 4; q++) {
                f.q[0][q].work = 0.45;
                f.q[0][q].rate = 10000;
        }
        for (int c = 0; c < 4; c++)
                f.user[c] = 0.30;
        assert_int_equal(fx_ticks(&f, 1, 2), 0);
        for (unsigned k = 3; k < 203; k++) {
                fx_model(&f, NULL);
                for (int c = 0; c < 4; c++) {
                        double soft = f.load.cpus[c].softirq * (0.7 + 0.6 * fx_rand(&seed));
                        /* now and then a sample with 6% idle */
                        if (fx_rand(&seed) < 0.05)
                                soft = 0.64;
                        fx_raw_cpu(&x, c, soft, 0.30);
                }
                fx_blend(&f, &x, f.cfg.smoothing);
                assert_int_equal(fx_step_raw(&f, &x, k * SEC), 0);
                n_actions += f.l.n;
                n_hot += f.rep.n_hot_cpus;
        }
        if (n_actions > 0 || n_hot > 0)
                fail_msg("noise: %u actions, %u hot CPU samples over 200 samples", n_actions, n_hot);
        sample_rates_free(&x.r);
        fx_free(&f);
}

/* A report waits (measuring, due when min_dwell has passed) while a CPU
 * is hot for less than min_dwell with nothing done, without asking for a
 * decision at every tick, then no longer: two CPUs both at 90% (no cooler
 * CPU) at the shipped defaults (min_dwell 30 s). */
static void test_pace_stuck_hot(void **state) {
        struct fx f;
        uint64_t hot_at = 0, due = 0;
        bool waiting_at_start = false, waiting_late = true;

        (void) state;
        fx_init(&f, 2, 1, FX_SMT_NONE);
        fx_shipped_defaults(&f.cfg);
        f.cfg.initial_layout = false;
        for (int k = 1; k <= 60; k++) {
                fx_cpu(&f, 0, 0.90, 0.05);
                fx_cpu(&f, 1, 0.90, 0.05);
                assert_int_equal(fx_step(&f, k * SEC), 0);
                assert_int_equal(f.l.n, 0);
                if (hot_at == 0 && f.rep.n_hot_cpus == 2)
                        hot_at = (uint64_t) k * SEC;
                if (k == 5) {
                        waiting_at_start = !f.rep.busy && f.rep.measuring && f.rep.n_hot_cpus == 2;
                        due = f.rep.due_usec;
                        assert_int_equal(policy_pace(&f.cfg, f.st, &f.rep, NULL), POLICY_PACE_CALM);
                }
                if (k == 60)
                        waiting_late = f.rep.busy || f.rep.measuring || f.rep.due_usec != 0 || f.rep.n_hot_cpus != 2;
        }
        assert_true(hot_at > 0);
        assert_true(waiting_at_start);
        if (due != hot_at + f.cfg.min_dwell_usec)
                fail_msg("due at %.1f s, hot at %.1f s: want min_dwell (%.0f s) later", (double) due / SEC,
                         (double) hot_at / SEC, (double) f.cfg.min_dwell_usec / SEC);
        assert_false(waiting_late);
        assert_int_equal(policy_pace(&f.cfg, f.st, &f.rep, NULL), POLICY_PACE_CALM);
        fx_free(&f);
}

/* policy_pace(): calm, steady (busy, or what the saturated rule counts)
 * and fast (rising, at the enter threshold while not hot, a load that
 * rose by POL_PACE_RISE since the last decision, or an idle share that
 * fell by as much while the load rose by POL_PACE_NET_RISE). */
static void test_pace(void **state) {
        static const struct {
                const char *what;
                double soft1, idle1;       /* CPU1's raw interval */
                unsigned n_rising;
                bool busy, hot1, no_report;
                double ref1, ref_idle1;    /* CPU1's load and idle at the last decision, 0 when not given */
                enum policy_pace want;
        } cases[] = {
                { "all quiet", 0.10, 0.80, 0, false, false, false, 0, 0, POLICY_PACE_CALM },
                { "no report yet", 0.10, 0.80, 0, false, false, true, 0, 0, POLICY_PACE_STEADY },
                { "busy report", 0.10, 0.80, 0, true, false, false, 0, 0, POLICY_PACE_STEADY },
                { "a CPU counting towards hot", 0.10, 0.80, 1, false, false, false, 0, 0, POLICY_PACE_FAST },
                { "just under enter", 0.79, 0.15, 0, false, false, false, 0, 0, POLICY_PACE_CALM },
                { "at enter, not hot", 0.81, 0.15, 0, false, false, false, 0, 0, POLICY_PACE_FAST },
                { "at enter, hot already (and not busy)", 0.81, 0.15, 0, false, true, false, 0, 0, POLICY_PACE_CALM },
                { "what the saturated rule counts", 0.35, 0.05, 0, false, false, false, 0, 0, POLICY_PACE_STEADY },
                { "idle above saturated_idle: not", 0.35, 0.11, 0, false, false, false, 0, 0, POLICY_PACE_CALM },
                { "rose 12 points since the last decision", 0.22, 0.70, 0, false, false, false, 0.10,
                  0.70, POLICY_PACE_FAST },
                { "rose 8 points: not yet", 0.18, 0.70, 0, false, false, false, 0.10, 0.70, POLICY_PACE_CALM },
                { "fell", 0.10, 0.80, 0, false, false, false, 0.40, 0.70, POLICY_PACE_CALM },
                { "rose, but hot already", 0.40, 0.50, 0, false, true, false, 0.10, 0.70, POLICY_PACE_CALM },
                { "idle fell 20 points, load rose 3", 0.05, 0.70, 0, false, false, false, 0.02, 0.90, POLICY_PACE_FAST },
                { "idle fell 20 points, load rose 1", 0.05, 0.70, 0, false, false, false, 0.04, 0.90, POLICY_PACE_CALM },
                { "idle fell 8 points, load rose 3", 0.05, 0.82, 0, false, false, false, 0.02, 0.90, POLICY_PACE_CALM },
                { "idle fell 20 points, but hot already", 0.05, 0.70, 0, false, true, false, 0.02, 0.90,
                  POLICY_PACE_CALM },
        };
        struct config c;

        (void) state;
        fx_config_defaults(&c);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct policy_report rep = { .enter = 0.80 };
                struct fx_raw x;
                enum policy_pace got;

                fx_raw_init(&x, 2);
                fx_raw_cpu(&x, 0, 0.05, 0.10);
                fx_raw_cpu(&x, 1, cases[i].soft1, 1 - cases[i].soft1 - cases[i].idle1);
                rep.n_rising = cases[i].n_rising;
                rep.busy = cases[i].busy;
                if (cases[i].hot1)
                        cpuset_set(&rep.hot, 1);
                if (cases[i].ref1 > 0) {
                        static struct policy_pace_ref ref[2];

                        ref[0] = (struct policy_pace_ref) { 0.05, 0.85 };
                        ref[1] = (struct policy_pace_ref) { cases[i].ref1, cases[i].ref_idle1 };
                        rep.ref = ref;
                        rep.ref_max_cpu = 1;
                }
                if (cases[i].no_report)
                        rep = (struct policy_report) {};
                got = policy_pace(&c, NULL, &rep, &x.r);
                if (got != cases[i].want)
                        fail_msg("%s: pace %s, want %s", cases[i].what, policy_pace_to_string(got),
                                 policy_pace_to_string(cases[i].want));
                sample_rates_free(&x.r);
        }
        config_free(&c);
}

/* ---- threaded NAPI kthreads (policy-napi.c) ---- */

/* The CPU this tick's thread action puts tid on; -1 none, -2 several. */
static int napi_action_cpu(const struct fx *f, pid_t tid) {
        int cpu = -1;

        for (size_t i = 0; i < f->l.n; i++) {
                const struct action *a = &f->l.v[i];
                if (a->type != KNOB_THREAD || a->tid != tid)
                        continue;
                if (cpu != -1 || cpuset_count(KEPT(&a->cpus)) != 1)
                        return -2;
                cpu = cpuset_first(KEPT(&a->cpus));
        }
        return cpu;
}

static unsigned n_thread_actions(const struct fx *f) {
        unsigned n = 0;
        for (size_t i = 0; i < f->l.n; i++)
                n += f->l.v[i].type == KNOB_THREAD;
        return n;
}

/* A NIC with queue IRQs whose NAPIs have kthreads: each thread goes where
 * its queue's IRQ is laid out, once; off by default. */
static void test_napi_follows_irq(_unused_ void **state) {
        static struct inventory_napi napis[2] = {
                { .id = 100, .irq = 40, .pid = 500, .threaded = 1, .cpu = 0, .starttime = 70 },
                { .id = 101, .irq = 41, .pid = 501, .threaded = 1, .cpu = 0, .starttime = 71 },
        };
        for (int on = 0; on <= 1; on++) {
                struct fx f;
                struct inventory_nic *n;

                fx_init(&f, 4, 1, FX_SMT_NONE);
                fx_add_nic(&f, "eth0", -1, 2, true, 40, false, false);
                n = &f.inv.nics[0];
                n->napis = napis;
                n->n_napis = 2;
                for (int q = 0; q < 2; q++) {
                        n->queues[q].napi_id = napis[q].id;
                        n->queues[q].napi_pid = napis[q].pid;
                }
                f.cfg.napi_threads = on;
                assert_int_equal(fx_step(&f, 1 * SEC), 0);
                if (!on) {
                        assert_int_equal(n_thread_actions(&f), 0);
                        fx_free(&f);
                        continue;
                }
                for (int q = 0; q < 2; q++) {
                        int irq_cpu = fx_irq_cpu(&f, 40 + q);
                        if (napi_action_cpu(&f, napis[q].pid) != irq_cpu)
                                fail_msg("napi %u: thread to %d, its IRQ on %d", napis[q].id,
                                         napi_action_cpu(&f, napis[q].pid), irq_cpu);
                }
                for (size_t i = 0; i < f.l.n; i++)
                        if (f.l.v[i].type == KNOB_THREAD) {
                                assert_int_equal(f.l.v[i].pid, f.l.v[i].tid);
                                assert_true(f.l.v[i].starttime == 70 || f.l.v[i].starttime == 71);
                        }
                /* placed and confirmed: nothing more */
                assert_int_equal(fx_step(&f, 2 * SEC), 0);
                assert_int_equal(n_thread_actions(&f), 0);
                /* the IRQ moves (here: its CPU banned by a reload): its
                 * thread follows, off the banned CPU */
                {
                        int was = fx_irq_cpu(&f, 41);

                        cpuset_set(&f.cfg.banned_cpus, was);
                        assert_int_equal(fx_step(&f, 3 * SEC), 0);
                        assert_true(fx_irq_cpu(&f, 41) != was);
                        assert_int_equal(napi_action_cpu(&f, 501), fx_irq_cpu(&f, 41));
                        assert_int_equal(napi_action_cpu(&f, 500), -1);
                }
                fx_free(&f);
        }
}

/* A veth (no IRQs) with two NAPI kthreads, its sender CPU0 hot: the
 * threads on the coolest eligible CPUs, one each, never a banned one;
 * after the dwell, one on a CPU gone hot moves to a cool one; a thread
 * that refuses (EINVAL) is left alone; a reused PID is a new thread. */
static void test_napi_veth_spread(_unused_ void **state) {
        static struct inventory_napi napis[2] = {
                { .id = 600, .irq = -1, .pid = 900, .threaded = 1, .cpu = 0, .starttime = 5 },
                { .id = 601, .irq = -1, .pid = 901, .threaded = 1, .cpu = 0, .starttime = 6 },
        };
        struct fx f;
        int c900, c901;
        /* later than min_dwell after boot: the dwell must count from the
         * placement, not from 0 */
        uint64_t now = 1000;

        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_veth(&f, "veth0", 2);
        f.inv.nics[0].napis = napis;
        f.inv.nics[0].n_napis = 2;
        f.cfg.napi_threads = true;
        f.cfg.rps = false;
        cpuset_set(&f.cfg.banned_cpus, 3);
        fx_cpu(&f, 0, 0.9, 0.05);
        fx_cpu(&f, 1, 0.2, 0);
        fx_cpu(&f, 2, 0.1, 0);
        fx_cpu(&f, 3, 0, 0);
        assert_int_equal(fx_step(&f, now * SEC), 0);
        c900 = napi_action_cpu(&f, 900);
        c901 = napi_action_cpu(&f, 901);
        /* CPU3 is the coolest but banned; CPU0 is hot */
        if (!((c900 == 2 && c901 == 1) || (c900 == 1 && c901 == 2)))
                fail_msg("threads to CPU%d and CPU%d, want CPUs 1 and 2", c900, c901);
        assert_int_equal(fx_step(&f, ++now * SEC), 0);
        assert_int_equal(n_thread_actions(&f), 0);

        /* CPU of thread 900 goes hot; before the dwell it stays */
        fx_cpu(&f, c900, 0.95, 0);
        fx_cpu(&f, 0, 0.1, 0);
        for (unsigned k = 0; k < f.cfg.hot_samples + 1; k++) {
                assert_int_equal(fx_step(&f, ++now * SEC), 0);
                assert_int_equal(napi_action_cpu(&f, 900), -1);
        }
        now += f.cfg.min_dwell_usec / SEC;
        assert_int_equal(fx_step(&f, now * SEC), 0);
        /* to the coolest eligible CPU not holding its sibling: CPU0 */
        assert_int_equal(napi_action_cpu(&f, 900), 0);
        assert_int_equal(napi_action_cpu(&f, 901), -1);

        /* thread 901 refuses: never asked again, even off a banned CPU */
        fx_free(&f);
        fx_init(&f, 4, 1, FX_SMT_NONE);
        fx_add_veth(&f, "veth0", 2);
        f.inv.nics[0].napis = napis;
        f.inv.nics[0].n_napis = 2;
        f.cfg.napi_threads = true;
        f.cfg.rps = false;
        {
                struct policy_input in = fx_input(&f, 1 * SEC);
                assert_int_equal(policy_tick(f.st, &in, &f.l, &f.rep), 0);
                assert_int_equal(n_thread_actions(&f), 2);
                for (size_t i = 0; i < f.l.n; i++)
                        policy_feedback(f.st, &f.l.v[i], f.l.v[i].tid == 901 ? -EINVAL : 0, 1 * SEC);
        }
        assert_int_equal(fx_step(&f, 2 * SEC), 0);
        assert_int_equal(n_thread_actions(&f), 0);
        /* PID 900 reused by a new napi thread (threaded off and on) */
        napis[0].starttime = 50;
        assert_int_equal(fx_step(&f, 3 * SEC), 0);
        assert_true(napi_action_cpu(&f, 900) >= 0);
        assert_int_equal(napi_action_cpu(&f, 901), -1);
        napis[0].starttime = 5;
        fx_free(&f);
}

/* The threaded NAPI action of this tick: its value, -1 none, -2 several. */
static int threaded_action(const struct fx *f) {
        int v = -1;

        for (size_t i = 0; i < f->l.n; i++)
                if (f->l.v[i].type == KNOB_THREADED) {
                        if (v != -1)
                                return -2;
                        v = (int) f->l.v[i].value;
                }
        return v;
}

/* A veth whose receive work (50k packets/s) makes its sender CPU0 hot,
 * with threaded_napi = yes: with RPS allowed, RPS is the relief and
 * threaded stays off; with rps = no, threaded goes on, on trial; a trial
 * whose throughput held (or lost under 5%) keeps it, one that lost 8% or
 * 60% turns it off again and blocks it; the packets stopping give it back after the dwell. */
static void test_threaded_relief(_unused_ void **state) {
        static struct inventory_napi napis[1] = { { .id = 700, .irq = -1, .pid = 0, .threaded = 0, .cpu = -1 } };
        static const struct {
                const char *what;
                bool rps;
                double pps_after;     /* received packets/s once threaded is on */
                int want_end;         /* threaded at the end of the trial */
                int verdict;          /* the trial's, counted in the report; -1 none */
        } cases[] = {
                { "RPS allowed: RPS first", true, 50000, 0, -1 },
                { "rps = no, throughput held: kept", false, 52000, 1, POLICY_TRIAL_KEPT },
                { "rps = no, 60% lost: off again", false, 20000, 0, POLICY_TRIAL_REVERTED },
                /* the keep threshold itself: 5% (POL_TRIAL_LOSS) */
                { "rps = no, 8% lost: off again", false, 46000, 0, POLICY_TRIAL_REVERTED },
                { "rps = no, 3% lost: noise, kept", false, 48500, 1, POLICY_TRIAL_KEPT },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct fx f;
                struct inventory_nic *n;
                unsigned k, on_at = 0, verdicts[POLICY_TRIAL_VERDICT_MAX] = { 0 };
                bool rps_seen = false;

                fx_init(&f, 2, 1, FX_SMT_NONE);
                fx_add_veth(&f, "veth0", 1);
                n = &f.inv.nics[0];
                n->napis = napis;
                n->n_napis = 1;
                n->threaded = 0;
                f.cfg.threaded_napi = true;
                f.cfg.rps = cases[i].rps;
                f.cfg.rps_trial = false;
                f.pps[0] = 50000;
                f.sender[0] = 0;
                f.q[0][0].work = 0.9;
                for (k = 1; k <= 30; k++) {
                        int v;

                        fx_model(&f, NULL);
                        assert_int_equal(fx_step(&f, k * SEC), 0);
                        for (size_t j = 0; j < f.l.n; j++)
                                rps_seen |= f.l.v[j].type == KNOB_RPS;
                        for (int x = 0; x < POLICY_TRIAL_VERDICT_MAX; x++)
                                verdicts[x] += f.rep.napi_trials[x];
                        v = threaded_action(&f);
                        for (size_t j = 0; v == 0 && on_at && j < f.l.n; j++)
                                if (f.l.v[j].type == KNOB_THREADED)
                                        assert_int_equal(f.l.v[j].why, ACTION_REASON_NAPI_TRIAL_FAILED);
                        assert_true(v >= -1);
                        if (v >= 0) {
                                /* the daemon patches the inventory so */
                                n->threaded = v;
                                if (v == 1) {
                                        assert_int_equal(on_at, 0);
                                        on_at = k;
                                        f.pps[0] = cases[i].pps_after;
                                } else
                                        break;
                        }
                        if (on_at && k >= on_at + POL_TRIAL_TICKS + 3)
                                break;
                }
                if (cases[i].rps) {
                        assert_true(rps_seen);
                        assert_int_equal(on_at, 0);
                } else if (on_at == 0)
                        fail_msg("%s: threaded never turned on", cases[i].what);
                if (n->threaded != cases[i].want_end)
                        fail_msg("%s: threaded %d at the end, want %d", cases[i].what, n->threaded, cases[i].want_end);
                for (int x = 0; x < POLICY_TRIAL_VERDICT_MAX; x++)
                        if (verdicts[x] != (x == cases[i].verdict))
                                fail_msg("%s: %u trials %s", cases[i].what, verdicts[x], policy_trial_verdict_to_string(x));
                if (!cases[i].rps && cases[i].want_end == 0) {
                        /* blocked: not tried again at once */
                        f.pps[0] = 50000;
                        for (unsigned j = 1; j <= 5; j++) {
                                fx_model(&f, NULL);
                                assert_int_equal(fx_step(&f, (k + j) * SEC), 0);
                                assert_int_equal(threaded_action(&f), -1);
                        }
                }
                if (!cases[i].rps && cases[i].want_end == 1) {
                        /* the packets stop: back to 0 after the dwell */
                        uint64_t now = k;
                        int back = -1;

                        f.pps[0] = 0;
                        f.q[0][0].work = 0;
                        for (unsigned j = 1; j <= f.cfg.min_dwell_usec / SEC + 10 && back < 0; j++) {
                                fx_model(&f, NULL);
                                assert_int_equal(fx_step(&f, (now + j) * SEC), 0);
                                back = threaded_action(&f);
                        }
                        assert_int_equal(back, 0);
                }
                fx_free(&f);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_record_index),
                cmocka_unit_test(test_initial_layout),
                cmocka_unit_test(test_balanced_and_noise),
                cmocka_unit_test(test_move_two_busy_queues),
                cmocka_unit_test(test_lone_hot_queue),
                cmocka_unit_test(test_rps_settling_quiet_move),
                cmocka_unit_test(test_move_all_hot),
                cmocka_unit_test(test_move_saturated_demand),
                cmocka_unit_test(test_move_for_room),
                cmocka_unit_test(test_tx_apart_unmeasured),
                cmocka_unit_test(test_move_beside_spread),
                cmocka_unit_test(test_rps_step_saturated),
                cmocka_unit_test(test_rps_widen_demand),
                cmocka_unit_test(test_rps_start_demand),
                cmocka_unit_test(test_layout_by_load),
                cmocka_unit_test(test_lone_why_no_cool),
                cmocka_unit_test(test_layout_lpt),
                cmocka_unit_test(test_share_measured),
                cmocka_unit_test(test_share_properties),
                cmocka_unit_test(test_random_hosts),
                cmocka_unit_test(test_random_hosts_calm),
                cmocka_unit_test(test_rps_hot_queues_together),
                cmocka_unit_test(test_rps_together_even),
                cmocka_unit_test(test_rps_prior_share_paced),
                cmocka_unit_test(test_rps_together_spill),
                cmocka_unit_test(test_rps_prior_widened),
                cmocka_unit_test(test_rps_resize_needs_gain),
                cmocka_unit_test(test_rps_resize_flow),
                cmocka_unit_test(test_rps_widen_narrow),
                cmocka_unit_test(test_rps_widen_min_gain),
                cmocka_unit_test(test_rps_big_flow_guard),
                cmocka_unit_test(test_rps_elephant_not_shed),
                cmocka_unit_test(test_rps_flow_beside_irq),
                cmocka_unit_test(test_rps_flow_every_cpu),
                cmocka_unit_test(test_rps_flow_home),
                cmocka_unit_test(test_rps_flow_landing),
                cmocka_unit_test(test_rps_flow_any_size),
                cmocka_unit_test(test_rps_single_rejudged),
                cmocka_unit_test(test_rps_single_dwell_due),
                cmocka_unit_test(test_rps_single_other_irq_time),
                cmocka_unit_test(test_rps_single_flow),
                cmocka_unit_test(test_rps_spill_remote),
                cmocka_unit_test(test_rps_irq_cpu_leaves),
                cmocka_unit_test(test_rfs_back),
                cmocka_unit_test(test_reload_gives_back),
                cmocka_unit_test(test_balance_relative),
                cmocka_unit_test(test_balance_stationary_excess),
                cmocka_unit_test(test_noise_long_level_follows),
                cmocka_unit_test(test_pace_steady_level),
                cmocka_unit_test(test_noise_step_not_noise),
                cmocka_unit_test(test_balance_light_gain),
                cmocka_unit_test(test_balance_light_level_gain),
                cmocka_unit_test(test_rps_lone_level_gain),
                cmocka_unit_test(test_replan_light),
                cmocka_unit_test(test_replan_remote),
                cmocka_unit_test(test_replan_undercount),
                cmocka_unit_test(test_balance_light_calm),
                cmocka_unit_test(test_rps_granularity),
                cmocka_unit_test(test_rps_steady_peak),
                cmocka_unit_test(test_rps_steady_undercount),
                cmocka_unit_test(test_rps_steady_peaks_together),
                cmocka_unit_test(test_rps_steady_peak_host),
                cmocka_unit_test(test_thresholds),
                cmocka_unit_test(test_saturated_gets_rps),
                cmocka_unit_test(test_rps_start_min_gain),
                cmocka_unit_test(test_saturated_room),
                cmocka_unit_test(test_queue_packets_split),
                cmocka_unit_test(test_never_ineligible),
                cmocka_unit_test(test_ban_vacates),
                cmocka_unit_test(test_ban_other_irqs),
                cmocka_unit_test(test_other_irqs_placement),
                cmocka_unit_test(test_other_irqs_spread),
                cmocka_unit_test(test_other_irqs_massed),
                cmocka_unit_test(test_other_irqs_by_load),
                cmocka_unit_test(test_layout_mass_leaves),
                cmocka_unit_test(test_other_irqs_stay),
                cmocka_unit_test(test_default_affinity),
                cmocka_unit_test(test_numa_local_first),
                cmocka_unit_test(test_move_remote_gain),
                cmocka_unit_test(test_layout_spill),
                cmocka_unit_test(test_dwell_and_backoff),
                cmocka_unit_test(test_max_moves),
                cmocka_unit_test(test_max_moves_scaled),
                cmocka_unit_test(test_takeover),
                cmocka_unit_test(test_hot_why),
                cmocka_unit_test(test_feedback_errors),
                cmocka_unit_test(test_feedback_counting),
                cmocka_unit_test(test_vectors_limit),
                cmocka_unit_test(test_vectors_learned),
                cmocka_unit_test(test_vectors_move),
                cmocka_unit_test(test_sock_flow_feedback),
                cmocka_unit_test(test_external_change),
                cmocka_unit_test(test_external_rps),
                cmocka_unit_test(test_external_hold),
                cmocka_unit_test(test_external_hold_masks),
                cmocka_unit_test(test_hot_unplug),
                cmocka_unit_test(test_hot_unplug_mask_kept),
                cmocka_unit_test(test_other_irq_stranded),
                cmocka_unit_test(test_hot_unplug_rps_touched),
                cmocka_unit_test(test_driver_reset),
                cmocka_unit_test(test_xps_follows_move),
                cmocka_unit_test(test_rfs),
                cmocka_unit_test(test_workers),
                cmocka_unit_test(test_interface_config),
                cmocka_unit_test(test_irqless_nic),
                cmocka_unit_test(test_irqless_nic_lifecycle),
                cmocka_unit_test(test_irqless_nic_trial),
                cmocka_unit_test(test_irqless_nic_noise),
                cmocka_unit_test(test_bad_input),
                cmocka_unit_test(test_fast_attack),
                cmocka_unit_test(test_fast_attack_noise),
                cmocka_unit_test(test_pace),
                cmocka_unit_test(test_pace_stuck_hot),
                cmocka_unit_test(test_napi_follows_irq),
                cmocka_unit_test(test_napi_veth_spread),
                cmocka_unit_test(test_threaded_relief),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
