/* IRQ classes (irqsteer.conf(5), IRQ CLASSES) from the inventory and the
 * configuration alone: pure, below the policy. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "inventory.h"

/* In the order the rules apply: the first that matches is the IRQ's class. */
enum classify_irq_class {
        CLASSIFY_IRQ_KERNEL_MANAGED,      /* a write failed with EIO/EPERM: the kernel's */
        CLASSIFY_IRQ_BANNED,              /* in ban_irqs: left alone */
        CLASSIFY_IRQ_LEFT_ALONE,          /* its NIC has manage = no, or other_irqs = no */
        CLASSIFY_IRQ_NIC_QUEUE,           /* a NIC queue's: spread by load */
        CLASSIFY_IRQ_OTHER,               /* another device's, or a NIC's admin vector */
        CLASSIFY_IRQ_CLASS_MAX,
        CLASSIFY_IRQ_CLASS_INVALID = -1,
};

/* "kernel-managed", "banned", "left-alone", "nic-queue", "other". */
const char *classify_irq_class_to_string(enum classify_irq_class c);
/* What is done with an IRQ of the class, one short phrase. */
const char *classify_irq_class_done(enum classify_irq_class c);
/* The class of IRQ ii under c; kernel_managed: a write failed with EIO/EPERM;
 * nic_managed: false for an interface with manage = no. */
enum classify_irq_class classify_irq_rules(const struct config *c, const struct inventory *inv,
                                           const struct inventory_irq *ii, bool kernel_managed, bool nic_managed);
/* The same, its interface's manage looked up in c. */
enum classify_irq_class classify_irq(const struct config *c, const struct inventory *inv, const struct inventory_irq *ii,
                                     bool kernel_managed);
/* The device an IRQ serves: its NIC, else its action name ("nvme0q3"), or "". */
const char *classify_irq_device(const struct inventory *inv, const struct inventory_irq *ii);
