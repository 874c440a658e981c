/*
 * local_xattr.c - extended attributes of the local backend, user namespace
 * only (RFC 8276 §4: NFSv4.2 xattrs are the file system's "user." ones; the
 * prefix is added here and removed from listings). As the caller, through
 * the object's /proc/self/fd magic link (O_PATH fds take no f*xattr calls).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

#include "backend/local/local.h"

#define LOCAL_XATTR_PREFIX "user."
#define LOCAL_XATTR_NAME_MAX 255u /* XATTR_NAME_MAX, prefix included */

/* "user." + name into buf. */
static int local_xattr_name(const char *name, char buf[LOCAL_XATTR_NAME_MAX + 1])
{
	size_t n = strlen(name);

	if (n == 0 || n + sizeof(LOCAL_XATTR_PREFIX) - 1 > LOCAL_XATTR_NAME_MAX)
		return n ? ENAMETOOLONG : EINVAL;
	snprintf(buf, LOCAL_XATTR_NAME_MAX + 1, LOCAL_XATTR_PREFIX "%s", name);
	return 0;
}

/* The caller's identity and the object's path; 0 or an errno value. */
static int local_xattr_begin(const struct be_cred *cr, const struct be_obj *o, char path[32])
{
	local_fd_path(local_fd(o), path);
	return local_id_caller(cr);
}

int local_getxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name, void *buf,
		   size_t cap, size_t *len)
{
	char path[32], xname[LOCAL_XATTR_NAME_MAX + 1];
	ssize_t n;
	int err = local_xattr_name(name, xname);

	(void)fs;
	if (!err)
		err = local_xattr_begin(cr, o, path);
	if (err)
		return err;
	n = getxattr(path, xname, cap ? buf : NULL, cap);
	if (n < 0)
		return errno;
	*len = (size_t)n;
	return 0;
}

int local_setxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name,
		   const void *value, size_t len, enum be_xattr_how how)
{
	char path[32], xname[LOCAL_XATTR_NAME_MAX + 1];
	int flags = how == BE_XATTR_CREATE ? XATTR_CREATE : how == BE_XATTR_REPLACE ? XATTR_REPLACE : 0;
	int err = local_xattr_name(name, xname);

	(void)fs;
	if (!err)
		err = local_xattr_begin(cr, o, path);
	if (err)
		return err;
	local_watch_self_fd(local_fd(o));
	return setxattr(path, xname, value, len, flags) < 0 ? errno : 0;
}

/* Keep only "user." names, without the prefix, packed in place. Returns the new length. */
static size_t local_xattr_user_only(char *buf, size_t n)
{
	const size_t plen = sizeof(LOCAL_XATTR_PREFIX) - 1;
	size_t in = 0, out = 0;

	while (in < n) {
		size_t l = strnlen(buf + in, n - in) + 1;

		if (l > plen && !strncmp(buf + in, LOCAL_XATTR_PREFIX, plen)) {
			memmove(buf + out, buf + in + plen, l - plen);
			out += l - plen;
		}
		in += l;
	}
	return out;
}

int local_listxattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, char *buf, size_t cap,
		    size_t *len)
{
	char path[32], all[XATTR_LIST_MAX];
	ssize_t n;
	size_t want;
	int err = local_xattr_begin(cr, o, path);

	(void)fs;
	if (err)
		return err;
	n = listxattr(path, all, sizeof(all));
	if (n < 0)
		return errno;
	want = local_xattr_user_only(all, (size_t)n);
	*len = want;
	if (cap == 0)
		return 0;
	if (cap < want)
		return ERANGE;
	memcpy(buf, all, want);
	return 0;
}

int local_removexattr(struct be_fs *fs, const struct be_cred *cr, const struct be_obj *o, const char *name)
{
	char path[32], xname[LOCAL_XATTR_NAME_MAX + 1];
	int err = local_xattr_name(name, xname);

	(void)fs;
	if (!err)
		err = local_xattr_begin(cr, o, path);
	if (err)
		return err;
	local_watch_self_fd(local_fd(o));
	return removexattr(path, xname) < 0 ? errno : 0;
}
