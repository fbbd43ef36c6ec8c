/* libnl's error codes in irqsteer's terms: libnl returns its own negative
 * NLE_* codes, the rest of irqsteer speaks -errno.  The one map used by
 * every libnl caller (inventory refresh, link monitor). */
#pragma once

/* -errno for an NLE_* code (either sign): the errno libnl derived it from
 * where there is one (NLE_NOACCESS is EACCES, NLE_PERM EPERM, NLE_NOMEM
 * ENOMEM, though a socket overrun, ENOBUFS, also arrives as NLE_NOMEM);
 * 0 for 0; -EIO for codes without an errno equivalent. */
int nlerr_to_errno(int nle);
