/* IRQ classes (classify.h). */
#include "classify.h"

/* Each class's name and what is done with its IRQs. */
static const struct {
        const char *name, *done;
} classes[CLASSIFY_IRQ_CLASS_MAX] = {
        [CLASSIFY_IRQ_KERNEL_MANAGED] = { "kernel-managed", "left to the kernel (EIO/EPERM on write)" },
        [CLASSIFY_IRQ_BANNED] = { "banned", "left alone (ban_irqs)" },
        [CLASSIFY_IRQ_LEFT_ALONE] = { "left-alone", "left alone (other_irqs = no, or its interface's manage = no)" },
        [CLASSIFY_IRQ_NIC_QUEUE] = { "nic-queue", "spread by load, one CPU a queue, rx and tx together" },
        [CLASSIFY_IRQ_OTHER] = { "other", "NUMA-local; busy ones spread by load" },
};

const char *classify_irq_class_to_string(enum classify_irq_class c) {
        return c >= 0 && c < CLASSIFY_IRQ_CLASS_MAX ? classes[c].name : NULL;
}

const char *classify_irq_class_done(enum classify_irq_class c) {
        return c >= 0 && c < CLASSIFY_IRQ_CLASS_MAX ? classes[c].done : NULL;
}

static const struct inventory_nic *nic_of(const struct inventory *inv, const struct inventory_irq *ii) {
        return ii->nic >= 0 && (size_t) ii->nic < inv->n_nics ? &inv->nics[ii->nic] : NULL;
}

enum classify_irq_class classify_irq_rules(const struct config *c, const struct inventory *inv,
                                           const struct inventory_irq *ii, bool kernel_managed, bool nic_managed) {
        bool queue = nic_of(inv, ii) &&
                     (ii->role == INVENTORY_IRQ_RXTX || ii->role == INVENTORY_IRQ_RX || ii->role == INVENTORY_IRQ_TX);

        if (kernel_managed)
                return CLASSIFY_IRQ_KERNEL_MANAGED;
        if (config_irq_banned(c, ii->irq))
                return CLASSIFY_IRQ_BANNED;
        if (!nic_managed || (!queue && !c->other_irqs))
                return CLASSIFY_IRQ_LEFT_ALONE;
        return queue ? CLASSIFY_IRQ_NIC_QUEUE : CLASSIFY_IRQ_OTHER;
}

enum classify_irq_class classify_irq(const struct config *c, const struct inventory *inv, const struct inventory_irq *ii,
                                     bool kernel_managed) {
        const struct inventory_nic *n = nic_of(inv, ii);
        const struct config_interface *ci = n ? config_interface_for(c, n->name) : NULL;

        return classify_irq_rules(c, inv, ii, kernel_managed, !ci || ci->manage);
}

const char *classify_irq_device(const struct inventory *inv, const struct inventory_irq *ii) {
        const struct inventory_nic *n = nic_of(inv, ii);

        return n ? n->name : ii->name;
}
