/* Least privilege: the daemon stays uid 0 but keeps only the capabilities
 * its configuration needs (chrony's SYS_Linux_DropRoot habit).  Measured on
 * Linux 6.18 as uid 0 with an empty effective set:
 *   - /proc/irq/N/smp_affinity(_list): writable, no capability (the kernel
 *     checks none; the file is root's, mode 0644);
 *   - /proc/sys/net/core/rps_sock_flow_entries: writable (net sysctls grant
 *     root's uid the owner bits);
 *   - rx-N/rps_cpus, rx-N/rps_flow_cnt, tx-N/xps_cpus: EPERM without
 *     CAP_NET_ADMIN (net-sysfs checks capable(CAP_NET_ADMIN));
 *   - sched_setaffinity on another uid's thread, or on a thread whose
 *     permitted set is not a subset of ours (any full-capability root
 *     process): EPERM without CAP_SYS_NICE (cap_safe_nice);
 *   - rtnetlink link notifications and ethtool channel queries: none. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Bit masks of capability numbers (1 << CAP_X), as in /proc/PID/status. */
#define CAPS_MASK(cap) ((uint64_t) 1 << (cap))

/* The capabilities a daemon running config c needs: CAP_NET_ADMIN when it
 * may write RPS, RFS or XPS files or threaded (threaded_napi),
 * CAP_SYS_NICE when workers are configured or napi_threads or
 * threaded_napi is on; none in dry-run.  Pure. */
uint64_t caps_for_config(const struct config *c, bool dry_run);

/* Every capability some configuration needs (caps_for_config's range). */
uint64_t caps_any_config(void);

/* Reduces the process to exactly keep (which must be a subset of the
 * permitted set, else -EPERM): effective = permitted = keep,
 * inheritable and ambient cleared, the bounding set reduced to keep when
 * CAP_SETPCAP allows it, and PR_SET_NO_NEW_PRIVS set.  0 or -errno. */
int caps_drop(uint64_t keep);

/* The current effective / permitted set of this process as a mask; 0 on
 * failure. */
uint64_t caps_effective(void);
uint64_t caps_permitted(void);

/* "cap_net_admin,cap_sys_nice" or "none". */
int caps_format(uint64_t mask, char *buf, size_t len);

/* Parses caps_format()'s text ("none" or "cap_a,cap_b") into a mask;
 * -EINVAL on a name libcap does not know. */
int caps_parse(const char *text, uint64_t *ret);
