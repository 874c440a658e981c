/*
 * errmap.c - the one place where an errno value (or a backend's BE_E* code)
 * becomes an NFSv3 status (RFC 1813 §2.6 nfsstat3) or a MOUNT v3 status
 * (appendix I mountstat3) or an NFSv4 status (RFC 8881 §15.1 nfsstat4). Mapping
 * follows knfsd's nfserrno() where RFC 1813 has an equivalent.
 */
#include <errno.h>
#include <string.h>

#include "nfs/common/nfs_common.h"
#include "nfs/v3/nfs3_const.h"
#include "nfs/v4/xdr/nfs4_const.h"
#include "core/log.h"

static const struct {
	int err;
	uint32_t status;
} nfs_errno_map[] = {
	{ 0, NFS3_OK },
	{ EPERM, NFS3ERR_PERM },
	{ ENOENT, NFS3ERR_NOENT },
	{ EIO, NFS3ERR_IO },
	{ ENXIO, NFS3ERR_NXIO },
	{ EACCES, NFS3ERR_ACCES },
	{ EEXIST, NFS3ERR_EXIST },
	{ EXDEV, NFS3ERR_XDEV },
	{ ENODEV, NFS3ERR_NODEV },
	{ ENOTDIR, NFS3ERR_NOTDIR },
	{ EISDIR, NFS3ERR_ISDIR },
	{ EINVAL, NFS3ERR_INVAL },
	{ EFBIG, NFS3ERR_FBIG },
	{ ENOSPC, NFS3ERR_NOSPC },
	{ EROFS, NFS3ERR_ROFS },
	{ EMLINK, NFS3ERR_MLINK },
	{ ENAMETOOLONG, NFS3ERR_NAMETOOLONG },
	{ ENOTEMPTY, NFS3ERR_NOTEMPTY },
	{ EDQUOT, NFS3ERR_DQUOT },
	{ ESTALE, NFS3ERR_STALE },
	{ EREMOTE, NFS3ERR_REMOTE },
	{ EOPNOTSUPP, NFS3ERR_NOTSUPP },
	{ ENOSYS, NFS3ERR_NOTSUPP },
	{ ENOTTY, NFS3ERR_NOTSUPP },
	{ ETXTBSY, NFS3ERR_ACCES },
	{ EBUSY, NFS3ERR_ACCES },
	{ ELOOP, NFS3ERR_INVAL },
	{ EOVERFLOW, NFS3ERR_INVAL },
	{ ESPIPE, NFS3ERR_INVAL },
	{ E2BIG, NFS3ERR_TOOSMALL },
	/* Transient: RFC 1813 §2.6 NFS3ERR_JUKEBOX "retrieval pending, try again later". */
	{ EAGAIN, NFS3ERR_JUKEBOX },
	{ ENOMEM, NFS3ERR_JUKEBOX },
	{ ETIMEDOUT, NFS3ERR_JUKEBOX },
	{ EINTR, NFS3ERR_JUKEBOX },
	{ EMFILE, NFS3ERR_JUKEBOX },
	{ ENFILE, NFS3ERR_JUKEBOX },
	{ EDEADLK, NFS3ERR_JUKEBOX },
	{ ENOLCK, NFS3ERR_JUKEBOX }, /* out of lock descriptions (issue 24): not a server fault */
	/* The backend's codes for what errno has no name for (backend/backend.h). */
	{ BE_EBADHANDLE, NFS3ERR_BADHANDLE },
	{ BE_ENOTSYNC, NFS3ERR_NOT_SYNC },
	{ BE_EBADCOOKIE, NFS3ERR_BAD_COOKIE },
	{ BE_ESERVERFAULT, NFS3ERR_SERVERFAULT }, /* logged where it happened */
};

static struct log_limit nfs_errno_limit;

uint32_t nfs_errno_to_nfsstat3(int err)
{
	for (size_t i = 0; i < sizeof(nfs_errno_map) / sizeof(nfs_errno_map[0]); i++)
		if (nfs_errno_map[i].err == err)
			return nfs_errno_map[i].status;
	log_limited(&nfs_errno_limit, LOG_WARNING, "nfs: unexpected errno %d (%s) -> SERVERFAULT",
		    err, strerror(err));
	return NFS3ERR_SERVERFAULT;
}

/* RFC 8881 §15.1: nfsstat4 keeps nfsstat3's numbers for every error both
 * name (JUKEBOX is NFS4ERR_DELAY); NFSv4 has no NODEV, REMOTE or NOT_SYNC. */
uint32_t nfs_errno_to_nfsstat4(int err)
{
	uint32_t s = nfs_errno_to_nfsstat3(err);

	switch (s) {
	case NFS3ERR_NODEV:
		return NFS4ERR_NXIO;
	case NFS3ERR_REMOTE:
		return NFS4ERR_SERVERFAULT;
	case NFS3ERR_NOT_SYNC:
		return NFS4ERR_INVAL;
	default:
		return s;
	}
}

/* Appendix I mountstat3 is a subset of nfsstat3's numbering. */
uint32_t nfs_errno_to_mountstat3(int err)
{
	switch (err) {
	case 0:
		return MNT3_OK;
	case EPERM:
		return MNT3ERR_PERM;
	case ENOENT:
	case ESTALE:
	case BE_EBADHANDLE:
		return MNT3ERR_NOENT;
	case EIO:
		return MNT3ERR_IO;
	case EACCES:
		return MNT3ERR_ACCES;
	case ENOTDIR:
		return MNT3ERR_NOTDIR;
	case EINVAL:
	case ELOOP:
		return MNT3ERR_INVAL;
	case ENAMETOOLONG:
		return MNT3ERR_NAMETOOLONG;
	case EOPNOTSUPP:
		return MNT3ERR_NOTSUPP;
	default:
		return MNT3ERR_SERVERFAULT;
	}
}
