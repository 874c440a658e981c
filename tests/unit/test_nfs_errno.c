/*
 * test_nfs_errno.c - nfs/common/errmap.c: the errno -> nfsstat3/mountstat3 map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>

#include <cmocka.h>

#include "nfs/common/nfs_common.h"
#include "nfs/v3/nfs3_const.h"

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
