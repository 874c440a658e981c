/*
 * test_nfs_errno.c - nfs/common/errmap.c: errno -> the status numbers NFSv3
 * and NFSv4 share (enum nfs_stat), which are nfsstat3's and, but for three,
 * nfsstat4's; the v3 ends (nfsstat3, mountstat3) and the v4 end (nfsstat4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>

#include <cmocka.h>

#include "nfs/common/nfs_common.h"
#include "nfs/v3/nfs3.h"
#include "nfs/v4/nfs4.h"

static void test_nfsstat3(void **state)
{
	static const struct {
		int err;
		uint32_t st;
	} cases[] = {
		{ 0, NFS3_OK }, { EPERM, NFS3ERR_PERM }, { ENOENT, NFS3ERR_NOENT }, { EIO, NFS3ERR_IO },
		{ ENXIO, NFS3ERR_NXIO }, { EACCES, NFS3ERR_ACCES }, { EEXIST, NFS3ERR_EXIST },
		{ EXDEV, NFS3ERR_XDEV }, { ENODEV, NFS3ERR_NODEV }, { ENOTDIR, NFS3ERR_NOTDIR },
		{ EISDIR, NFS3ERR_ISDIR }, { EINVAL, NFS3ERR_INVAL }, { EFBIG, NFS3ERR_FBIG },
		{ ENOSPC, NFS3ERR_NOSPC }, { EROFS, NFS3ERR_ROFS }, { EMLINK, NFS3ERR_MLINK },
		{ ENAMETOOLONG, NFS3ERR_NAMETOOLONG }, { ENOTEMPTY, NFS3ERR_NOTEMPTY },
		{ EDQUOT, NFS3ERR_DQUOT }, { ESTALE, NFS3ERR_STALE }, { EOPNOTSUPP, NFS3ERR_NOTSUPP },
		{ EAGAIN, NFS3ERR_JUKEBOX }, { ENOMEM, NFS3ERR_JUKEBOX }, { EMFILE, NFS3ERR_JUKEBOX },
		{ ENOLCK, NFS3ERR_JUKEBOX },
		{ ETXTBSY, NFS3ERR_ACCES },
		{ ECHILD, NFS3ERR_SERVERFAULT }, /* anything unexpected */
		{ 99999, NFS3ERR_SERVERFAULT },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(nfs_errno_to_nfsstat3(cases[i].err), cases[i].st);
}

/* RFC 1813 §2.6, RFC 8881 §15.1: the shared numbers are nfsstat3's, and nfsstat4's where it names the error. */
static void test_shared_numbers(void **state)
{
	static const struct {
		uint32_t st, v3, v4;
	} same[] = {
		{ NFS_ST_OK, NFS3_OK, NFS4_OK },
		{ NFS_ST_PERM, NFS3ERR_PERM, NFS4ERR_PERM },
		{ NFS_ST_NOENT, NFS3ERR_NOENT, NFS4ERR_NOENT },
		{ NFS_ST_IO, NFS3ERR_IO, NFS4ERR_IO },
		{ NFS_ST_NXIO, NFS3ERR_NXIO, NFS4ERR_NXIO },
		{ NFS_ST_ACCES, NFS3ERR_ACCES, NFS4ERR_ACCESS },
		{ NFS_ST_EXIST, NFS3ERR_EXIST, NFS4ERR_EXIST },
		{ NFS_ST_XDEV, NFS3ERR_XDEV, NFS4ERR_XDEV },
		{ NFS_ST_NOTDIR, NFS3ERR_NOTDIR, NFS4ERR_NOTDIR },
		{ NFS_ST_ISDIR, NFS3ERR_ISDIR, NFS4ERR_ISDIR },
		{ NFS_ST_INVAL, NFS3ERR_INVAL, NFS4ERR_INVAL },
		{ NFS_ST_FBIG, NFS3ERR_FBIG, NFS4ERR_FBIG },
		{ NFS_ST_NOSPC, NFS3ERR_NOSPC, NFS4ERR_NOSPC },
		{ NFS_ST_ROFS, NFS3ERR_ROFS, NFS4ERR_ROFS },
		{ NFS_ST_MLINK, NFS3ERR_MLINK, NFS4ERR_MLINK },
		{ NFS_ST_NAMETOOLONG, NFS3ERR_NAMETOOLONG, NFS4ERR_NAMETOOLONG },
		{ NFS_ST_NOTEMPTY, NFS3ERR_NOTEMPTY, NFS4ERR_NOTEMPTY },
		{ NFS_ST_DQUOT, NFS3ERR_DQUOT, NFS4ERR_DQUOT },
		{ NFS_ST_STALE, NFS3ERR_STALE, NFS4ERR_STALE },
		{ NFS_ST_BADHANDLE, NFS3ERR_BADHANDLE, NFS4ERR_BADHANDLE },
		{ NFS_ST_BAD_COOKIE, NFS3ERR_BAD_COOKIE, NFS4ERR_BAD_COOKIE },
		{ NFS_ST_NOTSUPP, NFS3ERR_NOTSUPP, NFS4ERR_NOTSUPP },
		{ NFS_ST_TOOSMALL, NFS3ERR_TOOSMALL, NFS4ERR_TOOSMALL },
		{ NFS_ST_SERVERFAULT, NFS3ERR_SERVERFAULT, NFS4ERR_SERVERFAULT },
		{ NFS_ST_JUKEBOX, NFS3ERR_JUKEBOX, NFS4ERR_DELAY },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		assert_int_equal(same[i].st, same[i].v3);
		assert_int_equal(same[i].st, same[i].v4);
	}
	assert_int_equal(NFS_ST_NODEV, NFS3ERR_NODEV);
	assert_int_equal(NFS_ST_REMOTE, NFS3ERR_REMOTE);
	assert_int_equal(NFS_ST_NOT_SYNC, NFS3ERR_NOT_SYNC);
	/* the three NFSv4 lacks */
	assert_int_equal(nfs_errno_to_nfsstat4(ENODEV), NFS4ERR_NXIO);
	assert_int_equal(nfs_errno_to_nfsstat4(EREMOTE), NFS4ERR_SERVERFAULT);
	assert_int_equal(nfs_errno_to_nfsstat4(BE_ENOTSYNC), NFS4ERR_INVAL);
	assert_int_equal(nfs_errno_to_nfsstat4(EAGAIN), NFS4ERR_DELAY);
}

static void test_mountstat3(void **state)
{
	(void)state;
	assert_int_equal(nfs_errno_to_mountstat3(0), MNT3_OK);
	assert_int_equal(nfs_errno_to_mountstat3(ENOENT), MNT3ERR_NOENT);
	assert_int_equal(nfs_errno_to_mountstat3(EACCES), MNT3ERR_ACCES);
	assert_int_equal(nfs_errno_to_mountstat3(ENOTDIR), MNT3ERR_NOTDIR);
	assert_int_equal(nfs_errno_to_mountstat3(ENAMETOOLONG), MNT3ERR_NAMETOOLONG);
	assert_int_equal(nfs_errno_to_mountstat3(EBADMSG), MNT3ERR_SERVERFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nfsstat3),
		cmocka_unit_test(test_mountstat3),
		cmocka_unit_test(test_shared_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
