/* Policy steps, above the model: each decides one kind of action from the
 * tick's model (policy-model.h) and adds it to the tick's list.  A step
 * calls the model and the records only, never another step or the tick
 * (policy.c), which calls them in order. */
#pragma once

#include "policy-model.h"

/* policy-irq.c: queue IRQ layout and moves, XPS */
/* The start-up layout of NIC nic (an index into the tick's nics), or its
 * second look once the load shows; true when it was laid out now (then
 * pol_rps_single() for it). */
bool pol_layout_nic(struct pol_tick *t, size_t nic);
void pol_replace_offline(struct pol_tick *t);
/* Moves off the hot CPUs; the lone hot queues no move helps are left in
 * t->lone for pol_rps_lone(). */
void pol_rebalance(struct pol_tick *t);
void pol_xps(struct pol_tick *t);

/* policy-other.c */
/* IRQs that are no NIC queue's (other devices', a NIC's admin vector), with
 * other_irqs = yes and not in ban_irqs: a quiet one onto its node's
 * eligible CPUs unless within them already; a busy one (by its interrupt
 * rate) onto the least loaded of them alone.  Off CPUs that are not
 * eligible at once; external changes and managed IRQs left alone. */
void pol_other_irqs(struct pol_tick *t);
/* Busy IRQs of other devices leave hot CPUs with the queue IRQs'
 * hysteresis (min_gain, dwell and back-off, max_moves). */
void pol_rebalance_other(struct pol_tick *t);
/* default_smp_affinity (the mask new IRQs get) without the CPUs that are
 * not eligible while there are such CPUs, its value before back once
 * there are none (or other_irqs = no); left alone when changed behind us. */
void pol_default_affinity(struct pol_tick *t);

/* policy-rps.c */
/* RPS for a single-queue NIC just laid out (pol_layout_nic). */
void pol_rps_single(struct pol_tick *t, size_t nic);
/* RPS for this tick's lone hot queues (t->lone, on their IRQ CPUs
 * t->lone_cpu): together once their receive share is measured, else one
 * by one and together again once it is (pol_rps_adjust); a CPU whose queue
 * gets none says why.  Frees t->lone. */
void pol_rps_lone(struct pol_tick *t);
void pol_rps_adjust(struct pol_tick *t);
/* Sets t->pool_short for this tick's lone hot queues. */
void pol_rps_pool(struct pol_tick *t);
/* NICs without queue IRQs (veth): units for those we may steer, then RPS
 * away from hot CPUs their receive load explains. */
int pol_soft_build(struct pol_tick *t);
void pol_soft(struct pol_tick *t);
/* Our RPS, flow counts and XPS back to the originals where the
 * configuration no longer allows them (a reload with rps, rfs or xps = no,
 * or manage = no). */
void pol_unwanted(struct pol_tick *t);
/* Our RPS sets lose the CPUs that are no longer eligible for their NIC (a
 * ban, at run time or by a reload), this tick, without hysteresis. */
void pol_vacate_rps(struct pol_tick *t);

/* policy-share.c */
/* Measures that share where this tick's loads show it (the units' work
 * from estimate()): RPS CPUs that carry one NIC's steered work and nothing
 * else against what stays on IRQ CPUs that serve one queue alone.  Updates
 * the queue and NIC records for the next tick; notes a NIC's estimate
 * once it stands and again when it moves. */
void pol_share_measure(struct pol_tick *t);

/* policy-workers.c */
void pol_workers(struct pol_tick *t);

/* policy-napi.c */
/* NAPI kthreads of managed NICs (napi_threads = yes) onto their queue
 * IRQ's CPU, or spread over the coolest eligible CPUs and off hot ones. */
void pol_napi(struct pol_tick *t);
/* policy_feedback() for a thread action on a NAPI kthread we place: false
 * when the action is not about one. */
bool pol_napi_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec);
/* policy_feedback() for KNOB_THREADED. */
void pol_threaded_feedback(struct policy_state *st, const struct action *a, int result, uint64_t now_usec);
