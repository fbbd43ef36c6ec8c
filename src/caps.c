/* Capability dropping with libcap. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include <sys/capability.h>

#include "caps.h"
#include "log.h"
#include "util.h"

uint64_t caps_for_config(const struct config *c, bool dry_run) {
        bool net;
        uint64_t m = 0;

        if (dry_run || !c || c->dry_run)
                return 0;
        /* a queue knob written anywhere: RPS, RFS, XPS, threaded NAPI */
        net = c->rps || c->rfs || c->xps || c->single_queue_rps || c->threaded_napi;
        for (size_t i = 0; i < c->n_interfaces; i++) {
                const struct config_interface *ci = &c->interfaces[i];

                if (ci->manage && (ci->rps == TRI_YES || ci->xps == TRI_YES || ci->rfs == TRI_YES))
                        net = true;
        }
        if (net)
                m |= CAPS_MASK(CAP_NET_ADMIN);
        /* napi kthreads have a full permitted set: CAP_SYS_NICE */
        if (c->n_workers > 0 || c->napi_threads || c->threaded_napi)
                m |= CAPS_MASK(CAP_SYS_NICE);
        return m;
}

uint64_t caps_any_config(void) {
        return CAPS_MASK(CAP_NET_ADMIN) | CAPS_MASK(CAP_SYS_NICE);
}

static uint64_t caps_get(cap_flag_t flag) {
        cap_t caps = cap_get_proc();
        uint64_t m = 0;

        if (!caps)
                return 0;
        for (int cap = 0; cap <= CAP_LAST_CAP && cap < 64; cap++) {
                cap_flag_value_t v = CAP_CLEAR;

                if (cap_get_flag(caps, cap, flag, &v) == 0 && v == CAP_SET)
                        m |= CAPS_MASK(cap);
        }
        cap_free(caps);
        return m;
}

uint64_t caps_effective(void) {
        return caps_get(CAP_EFFECTIVE);
}

uint64_t caps_permitted(void) {
        return caps_get(CAP_PERMITTED);
}

int caps_drop(uint64_t keep) {
        /* best effort: the bounding set matters only across execve(), and
         * the unit's CapabilityBoundingSet= took CAP_SETPCAP already */
        bool bound = CAP_IS_SUPPORTED(CAP_SETPCAP) && (caps_effective() & CAPS_MASK(CAP_SETPCAP));
        cap_value_t list[64];
        int n = 0, r = 0;
        cap_t caps;

        for (int cap = 0; cap <= CAP_LAST_CAP && cap < 64; cap++) {
                if (keep & CAPS_MASK(cap))
                        list[n++] = cap;
                else if (bound && CAP_IS_SUPPORTED(cap) && cap_drop_bound(cap) < 0 && errno != EINVAL)
                        log_debug_errno(errno, "cap_drop_bound(%d) failed: %m", cap);
        }
        if (cap_reset_ambient() < 0 && errno != EINVAL)
                log_debug_errno(errno, "cap_reset_ambient() failed: %m");

        caps = cap_init();     /* all clear */
        if (!caps)
                return -errno;
        if (n > 0 && (cap_set_flag(caps, CAP_PERMITTED, n, list, CAP_SET) < 0 ||
                      cap_set_flag(caps, CAP_EFFECTIVE, n, list, CAP_SET) < 0))
                r = -errno;
        else if (cap_set_proc(caps) < 0)
                r = log_debug_errno(errno, "cap_set_proc() failed: %m");
        cap_free(caps);
        if (r < 0)
                return r;

        /* uid 0 would regain every capability on execve() */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return log_debug_errno(errno, "prctl(PR_SET_NO_NEW_PRIVS) failed: %m");
        return 0;
}

int caps_format(uint64_t mask, char *buf, size_t len) {
        size_t off = 0;

        if (mask == 0) {
                snprintf(buf, len, "none");
                return 0;
        }
        for (int cap = 0; cap < 64; cap++) {
                char *name;
                int n;

                if (!(mask & CAPS_MASK(cap)))
                        continue;
                name = cap_to_name(cap);
                n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", name ? name : "?");
                cap_free(name);
                if (n < 0 || (size_t) n >= len - off)
                        return -ENOBUFS;
                off += n;
        }
        return 0;
}

int caps_parse(const char *text, uint64_t *ret) {
        _cleanup_(freep) char *copy = NULL;
        uint64_t m = 0;
        char *save = NULL;

        if (strcmp(text, "none") == 0) {
                *ret = 0;
                return 0;
        }
        copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                cap_value_t v;

                if (cap_from_name(t, &v) < 0 || v < 0 || v >= 64)
                        return -EINVAL;
                m |= CAPS_MASK(v);
        }
        *ret = m;
        return 0;
}
