/* Policy steps, above the model: each adds one kind of action to the tick
 * and calls only the model and the records; policy.c calls them in order. */
#pragma once

#include "policy-model.h"

/* policy-irq.c: queue IRQ layout and moves, XPS */
/* NIC nic's layout, or its second look once load shows; true when laid
 * out now (then pol_rps_single()). */
bool pol_layout_nic(struct pol_tick *t, size_t nic);
void pol_replace_offline(struct pol_tick *t);
/* Moves off hot CPUs; lone hot queues left in t->lone for pol_rps_lone(). */
void pol_rebalance(struct pol_tick *t);
/* Once loads are steady and nothing is hot: the queue IRQs laid out again
 * together when that lowers the peak by min_gain (a plan). */
void pol_replan(struct pol_tick *t);
void pol_xps(struct pol_tick *t);

/* policy-other.c: IRQs of other devices (other_irqs) */
/* t->others, and in t->leaving the work of the quiet IRQs of a mass that
 * pol_other_irqs spreads: before the layout, which judges CPUs without it. */
void pol_other_build(struct pol_tick *t);
void pol_other_irqs(struct pol_tick *t);
void pol_rebalance_other(struct pol_tick *t);
void pol_default_affinity(struct pol_tick *t);

/* policy-rps.c */
/* RPS for a single-queue NIC just laid out (pol_layout_nic). */
void pol_rps_single(struct pol_tick *t, size_t nic);
/* RPS for this tick's lone hot queues (t->lone); frees t->lone. */
void pol_rps_lone(struct pol_tick *t);
/* RPS for a light host's steady peak CPU, under the hot level's floor. */
void pol_rps_steady(struct pol_tick *t);
void pol_rps_adjust(struct pol_tick *t);
/* RPS for the CPUs whole-queue granularity leaves at a steady light host's peak. */
void pol_rps_gran(struct pol_tick *t);
/* Whether the policy may set u's RPS (its NIC's and queue's settings). */
bool pol_rps_allowed(struct pol_tick *t, const struct pol_unit *u);
/* u's protocol work on cpu now (its RPS share, or all of it on its IRQ CPU). */
double pol_rps_share(const struct pol_unit *u, int cpu);
/* The most one CPU of u's set shows of u's work beyond the coolest other
 * (one big flow, which RPS hashes whole; flow_excess()). */
double pol_rps_flow(const struct pol_tick *t, const struct pol_unit *u);
/* The biggest flow an RPS set of another queue than cpu's IRQs' shows on
 * cpu (flow_excess()). */
double pol_rps_flow_on(const struct pol_tick *t, int cpu);
/* u's IRQ moves to cpu of its RPS set, for its room (pol_rebalance): cpu
 * leaves the set, the others share its part. */
void pol_rps_irq_joins(struct pol_tick *t, struct pol_unit *u, int cpu);
/* Sets t->pool_short for this tick's lone hot queues. */
void pol_rps_pool(struct pol_tick *t);
/* NICs without queue IRQs (veth): their units, then RPS off hot CPUs. */
int pol_soft_build(struct pol_tick *t);
void pol_soft(struct pol_tick *t);
/* Our RPS, flow counts and XPS back where the config no longer allows them. */
void pol_unwanted(struct pol_tick *t);
/* Our RPS sets lose CPUs no longer eligible, without hysteresis. */
void pol_vacate_rps(struct pol_tick *t);

/* policy-share.c: the receive share kept on IRQ CPUs, into the records */
void pol_share_measure(struct pol_tick *t);

/* policy-workers.c */
void pol_workers(struct pol_tick *t);

/* policy-napi.c */
void pol_napi(struct pol_tick *t);
