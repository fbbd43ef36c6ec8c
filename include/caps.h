/* Least privilege: the daemon stays uid 0 but keeps only the capabilities
 * its configuration needs (chrony's SYS_Linux_DropRoot); which write needs
 * which is in irqsteerd(8), CAPABILITIES. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Masks of capability numbers, as in /proc/PID/status. */
#define CAPS_MASK(cap) ((uint64_t) 1 << (cap))

/* What config c needs: CAP_NET_ADMIN for RPS, RFS, XPS or threaded_napi,
 * CAP_SYS_NICE for workers, napi_threads or threaded_napi; none in dry-run. */
uint64_t caps_for_config(const struct config *c, bool dry_run);

/* Every capability some configuration needs. */
uint64_t caps_any_config(void);

/* Effective = permitted = keep (a subset of permitted, else -EPERM),
 * inheritable and ambient cleared, the bounding set reduced when
 * CAP_SETPCAP allows, PR_SET_NO_NEW_PRIVS.  0 or -errno. */
int caps_drop(uint64_t keep);

/* This process's effective / permitted set; 0 on failure. */
uint64_t caps_effective(void);
uint64_t caps_permitted(void);

/* "cap_net_admin,cap_sys_nice" or "none". */
int caps_format(uint64_t mask, char *buf, size_t len);

/* caps_format()'s text back into a mask; -EINVAL for an unknown name. */
int caps_parse(const char *text, uint64_t *ret);
