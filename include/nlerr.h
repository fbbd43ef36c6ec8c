/* libnl's NLE_* codes in irqsteer's -errno, for every libnl caller. */
#pragma once

/* -errno for an NLE_* code of either sign (0 for 0, -EIO when none fits;
 * a socket overrun, ENOBUFS, also arrives as NLE_NOMEM). */
int nlerr_to_errno(int nle);
