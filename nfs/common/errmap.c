/*
 * errmap.c - the one place where an errno value (or a backend's BE_E* code)
 * becomes an NFS status: the numbers NFSv3 and NFSv4 share (enum nfs_stat;
 * RFC 1813 §2.6 nfsstat3, kept by RFC 8881 §15.1 nfsstat4). Each version
 * turns them into its own status (nfs_errno_to_nfsstat3() in nfs/v3/,
 * nfs_errno_to_nfsstat4() in nfs/v4/). Mapping follows knfsd's nfserrno()
 * where RFC 1813 has an equivalent.
 */
#include <errno.h>
#include <string.h>

#include "nfs/common/nfs_common.h"
#include "core/log.h"

static const struct {
	int err;
	uint32_t status;
} nfs_errno_map[] = {
	{ 0, NFS_ST_OK },
	{ EPERM, NFS_ST_PERM },
	{ ENOENT, NFS_ST_NOENT },
	{ EIO, NFS_ST_IO },
	{ ENXIO, NFS_ST_NXIO },
	{ EACCES, NFS_ST_ACCES },
	{ EEXIST, NFS_ST_EXIST },
	{ EXDEV, NFS_ST_XDEV },
	{ ENODEV, NFS_ST_NODEV },
	{ ENOTDIR, NFS_ST_NOTDIR },
	{ EISDIR, NFS_ST_ISDIR },
	{ EINVAL, NFS_ST_INVAL },
	{ EFBIG, NFS_ST_FBIG },
	{ ENOSPC, NFS_ST_NOSPC },
	{ EROFS, NFS_ST_ROFS },
	{ EMLINK, NFS_ST_MLINK },
	{ ENAMETOOLONG, NFS_ST_NAMETOOLONG },
	{ ENOTEMPTY, NFS_ST_NOTEMPTY },
	{ EDQUOT, NFS_ST_DQUOT },
	{ ESTALE, NFS_ST_STALE },
	{ EREMOTE, NFS_ST_REMOTE },
	{ EOPNOTSUPP, NFS_ST_NOTSUPP },
	{ ENOSYS, NFS_ST_NOTSUPP },
	{ ENOTTY, NFS_ST_NOTSUPP },
	{ ETXTBSY, NFS_ST_ACCES },
	{ EBUSY, NFS_ST_ACCES },
	{ ELOOP, NFS_ST_INVAL },
	{ EOVERFLOW, NFS_ST_INVAL },
	{ ESPIPE, NFS_ST_INVAL },
	{ E2BIG, NFS_ST_TOOSMALL },
	/* Transient: RFC 1813 §2.6 NFS3ERR_JUKEBOX (NFSv4's DELAY) "retrieval pending, try again later". */
	{ EAGAIN, NFS_ST_JUKEBOX },
	{ ENOMEM, NFS_ST_JUKEBOX },
	{ ETIMEDOUT, NFS_ST_JUKEBOX },
	{ EINTR, NFS_ST_JUKEBOX },
	{ EMFILE, NFS_ST_JUKEBOX },
	{ ENFILE, NFS_ST_JUKEBOX },
	{ EDEADLK, NFS_ST_JUKEBOX },
	{ ENOLCK, NFS_ST_JUKEBOX }, /* out of lock descriptions (issue 24): not a server fault */
	/* The backend's codes for what errno has no name for (backend/backend.h). */
	{ BE_EBADHANDLE, NFS_ST_BADHANDLE },
	{ BE_ENOTSYNC, NFS_ST_NOT_SYNC },
	{ BE_EBADCOOKIE, NFS_ST_BAD_COOKIE },
	{ BE_ESERVERFAULT, NFS_ST_SERVERFAULT }, /* logged where it happened */
};

static struct log_limit nfs_errno_limit;

uint32_t nfs_errno_to_stat(int err)
{
	for (size_t i = 0; i < sizeof(nfs_errno_map) / sizeof(nfs_errno_map[0]); i++)
		if (nfs_errno_map[i].err == err)
			return nfs_errno_map[i].status;
	log_limited(&nfs_errno_limit, LOG_WARNING, "nfs: unexpected errno %d (%s) -> SERVERFAULT",
		    err, strerror(err));
	return NFS_ST_SERVERFAULT;
}
