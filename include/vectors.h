/* Interrupt vectors in use per CPU, counted from where every IRQ of the
 * inventory fires: on x86 each IRQ takes one vector on the CPU it is
 * delivered to, and a CPU has about 200 for devices, so a balancer that
 * piles IRQs on one CPU of a big host gets ENOSPC (irqbalance's issues
 * #303 and #340).  Pure: the counts come from the inventory passed in;
 * docs/DESIGN.md "Vector space" tells how the engine and the policy use them. */
#pragma once

#include <stdbool.h>

#include "cpuset.h"
#include "inventory.h"

/* Device vectors a CPU has on x86: arch/x86/include/asm/irq_vectors.h
 * gives devices the vectors from FIRST_EXTERNAL_VECTOR (0x20) to below
 * FIRST_SYSTEM_VECTOR (0xec; 0xeb with CONFIG_X86_POSTED_MSI) of
 * NR_VECTORS 256, about 203; arch/x86/kernel/apic/vector.c hands them out
 * per CPU from a matrix and fails with -ENOSPC when the target CPU has none
 * left.  CPU0 also holds the 16 legacy ISA vectors and the kernel
 * reserves some for managed IRQs, so 200 leaves a small margin. */
#define VECTORS_PER_CPU 200

struct vectors {
        int max_cpu;             /* used[] and limit[] hold max_cpu+1 entries */
        unsigned *used;          /* IRQs delivered to each CPU */
        unsigned *limit;         /* what each CPU takes: VECTORS_PER_CPU, or lower
                                  * where the kernel refused one (vectors_full) */
};

/* Counts, for each CPU 0..max_cpu, the IRQs of inv delivered there
 * (vectors_irq_cpu: x86 delivers to one CPU of the mask); IRQs without a
 * readable affinity take none.  Limits learned by vectors_full() stay; a
 * new or grown struct starts at VECTORS_PER_CPU.  0 or -ENOMEM (v
 * unchanged). */
int vectors_count(struct vectors *v, const struct inventory *inv, int max_cpu);
/* The CPU irq is counted on: the one CPU of its affinity, else the first
 * of its effective affinity when known, else the first of its affinity;
 * -1 for none. */
int vectors_irq_cpu(const struct inventory_irq *irq);
/* IRQs counted on cpu (0 outside the counts). */
unsigned vectors_used(const struct vectors *v, int cpu);
/* How many IRQs more cpu takes (0 outside the counts). */
unsigned vectors_left(const struct vectors *v, int cpu);
/* Whether cpu can take one IRQ more (false outside the counts). */
bool vectors_room(const struct vectors *v, int cpu);
/* The CPU an IRQ counted on CPU here (-1: none) ends on when mask is
 * written, as x86 chooses (arch/x86/kernel/apic/vector.c): here when mask
 * holds it, else the CPU of mask with the most vectors left; -1 when that
 * one has none (the write would get ENOSPC). */
int vectors_pick(const struct vectors *v, const cpuset_t *mask, int here);
/* An IRQ planned to move from CPU from (-1: none) to CPU to: the counts
 * follow, so the next placement in the same tick sees it. */
void vectors_move(struct vectors *v, int from, int to);
/* The kernel refused an IRQ on cpu with ENOSPC: cpu holds no more than it
 * has now (its limit drops to its count). */
void vectors_full(struct vectors *v, int cpu);
/* A copy of src in *ret (overwritten, not freed first): the policy's own
 * for a tick, moved as it plans, its input left as it was.  0 or -ENOMEM. */
int vectors_copy(struct vectors *ret, const struct vectors *src);
void vectors_free(struct vectors *v);
