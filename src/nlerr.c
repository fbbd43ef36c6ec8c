/* libnl error codes to -errno. */
#include <errno.h>

#include <netlink/errno.h>

#include "nlerr.h"

int nlerr_to_errno(int nle) {
        switch (nle < 0 ? -nle : nle) {
        case NLE_SUCCESS: return 0;
        case NLE_NOMEM: return -ENOMEM;
        case NLE_PERM: return -EPERM;
        case NLE_NOACCESS: return -EACCES;
        case NLE_OPNOTSUPP:
        case NLE_MSGTYPE_NOSUPPORT: return -EOPNOTSUPP;
        case NLE_AF_NOSUPPORT: return -EAFNOSUPPORT;
        case NLE_PROTO_MISMATCH: return -EPROTONOSUPPORT;
        case NLE_OBJ_NOTFOUND: return -ENOENT;
        case NLE_NODEV: return -ENODEV;
        case NLE_EXIST: return -EEXIST;
        case NLE_AGAIN: return -EAGAIN;
        case NLE_BUSY: return -EBUSY;
        case NLE_INTR:
        case NLE_DUMP_INTR: return -EINTR;
        case NLE_INVAL:
        case NLE_RANGE: return -EINVAL;
        case NLE_BAD_SOCK: return -EBADF;
        case NLE_MSGSIZE: return -EMSGSIZE;
        case NLE_MSG_TRUNC:
        case NLE_MSG_TOOSHORT: return -EBADMSG;
        default: return -EIO;
        }
}
