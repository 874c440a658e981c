/*
 * fh.c - rnfsd file handles (RFC 1813 §2.3.3 "opaque to the client").
 *
 * A handle names an object by its kernel file handle (name_to_handle_at),
 * qualified by the export it was issued under and authenticated by a 64-bit
 * SipHash-2-4 MAC keyed with a 128-bit secret (layout in nfs_priv.h). So:
 *   - handles survive daemon restarts (kernel handles are persistent, the key
 *     is kept in state_dir/fh.key),
 *   - a client cannot forge a handle for an object it was never given, nor
 *     relabel a handle into another export: a bad MAC or shape is BADHANDLE,
 *   - a genuine handle whose object is gone, or whose export is no longer
 *     served, is STALE (RFC 1813 §2.6).
 * open_by_handle_at() needs CAP_DAC_READ_SEARCH, so handles are opened while
 * the worker still has root's fs identity (before identity.c switches it).
 * Owns the key (static, written once at init).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "nfs/nfs_priv.h"
#include "nfs/siphash.h"
#include "core/log.h"

static uint8_t nfs_fh_key[SIPHASH_KEY_BYTES];
static struct log_limit nfs_fh_limit;

struct nfs_kernel_handle {
	struct file_handle h;
	unsigned char bytes[MAX_HANDLE_SZ];
};

void nfs_fh_key_set(const uint8_t key[16])
{
	memcpy(nfs_fh_key, key, SIPHASH_KEY_BYTES);
}

static int nfs_fh_key_random(void)
{
	size_t got = 0;

	while (got < SIPHASH_KEY_BYTES) {
		ssize_t n = getrandom(nfs_fh_key + got, SIPHASH_KEY_BYTES - got, 0);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0)
			got += (size_t)n;
	}
	return 0;
}

/* Reads exactly 16 bytes from path. 0, or -1 with errno (EINVAL: wrong size). */
static int nfs_fh_key_read(const char *path)
{
	uint8_t buf[SIPHASH_KEY_BYTES + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n != SIPHASH_KEY_BYTES) {
		errno = n < 0 ? errno : EINVAL;
		return -1;
	}
	memcpy(nfs_fh_key, buf, SIPHASH_KEY_BYTES);
	return 0;
}

/* Writes the current key to path without ever exposing a partial file: tmp + link. */
static int nfs_fh_key_write(const char *path)
{
	char tmp[PATH_MAX + 32];
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, nfs_fh_key, SIPHASH_KEY_BYTES) != SIPHASH_KEY_BYTES || fsync(fd) < 0)
		err = errno ? errno : EIO;
	close(fd);
	if (!err && link(tmp, path) < 0)
		err = errno;
	unlink(tmp);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int nfs_fh_key_init(const char *state_dir)
{
	char path[PATH_MAX + 16];

	if (nfs_fh_key_random() < 0) {
		log_err("nfs: getrandom: %s", strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/fh.key", state_dir);
	if (nfs_fh_key_read(path) == 0)
		return 0;
	if (errno != ENOENT) {
		log_err("nfs: %s unusable (%s); using a random key: file handles will not survive a restart",
			path, errno == EINVAL ? "not 16 bytes" : strerror(errno));
		return 0;
	}
	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
		goto volatile_key;
	if (nfs_fh_key_write(path) == 0)
		return 0;
	if (errno == EEXIST && nfs_fh_key_read(path) == 0)
		return 0; /* another instance created it first */
volatile_key:
	log_warn("nfs: cannot create %s (%s); using a random key: file handles will not survive a restart",
		 path, strerror(errno));
	return 0;
}

static uint64_t nfs_fh_mac(const uint8_t *data, size_t len)
{
	return siphash24(nfs_fh_key, data, len);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, (uint32_t)v);
}

uint32_t nfs_fh_build(struct nfs_fh *fh, uint32_t export_id, int dirfd, const char *name, int at_flags)
{
	struct nfs_kernel_handle kh;
	int mount_id;
	uint32_t n;

	kh.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dirfd, name, &kh.h, &mount_id, at_flags) < 0) {
		if (errno == EOVERFLOW || errno == EOPNOTSUPP) {
			char esc[LOG_ESCAPED_MAX];
			int err = errno;

			log_limited(&nfs_fh_limit, LOG_ERR, "nfs: file system cannot export handles for '%s': %s",
				    log_escape_str(esc, sizeof(esc), name), strerror(err));
			errno = err;
			return NFS3ERR_NOTSUPP;
		}
		return nfs_errno_to_nfsstat3(errno);
	}
	n = kh.h.handle_bytes;
	if (n == 0 || n > NFS_FH_KMAX) {
		log_limited(&nfs_fh_limit, LOG_ERR, "nfs: kernel handle of %u bytes does not fit (max %u)",
			    n, NFS_FH_KMAX);
		return NFS3ERR_SERVERFAULT;
	}
	fh->data[0] = NFS_FH_VERSION;
	fh->data[1] = (uint8_t)n;
	fh->data[2] = fh->data[3] = 0;
	put_be32(fh->data + 4, export_id);
	put_be32(fh->data + 8, (uint32_t)kh.h.handle_type);
	memcpy(fh->data + NFS_FH_HDR, kh.h.f_handle, n);
	put_be64(fh->data + NFS_FH_HDR + n, nfs_fh_mac(fh->data, NFS_FH_HDR + n));
	fh->len = NFS_FH_HDR + n + NFS_FH_MAC;
	return NFS3_OK;
}

uint32_t nfs_fh_verify(const struct nfs_fh *fh, struct nfs_fh_parts *p)
{
	const uint8_t *d = fh->data;
	uint8_t mac[NFS_FH_MAC];
	uint8_t diff = 0;
	uint32_t n;

	if (fh->len < NFS_FH_HDR + 1 + NFS_FH_MAC || d[0] != NFS_FH_VERSION || d[2] || d[3])
		return NFS3ERR_BADHANDLE;
	n = d[1];
	if (n == 0 || n > NFS_FH_KMAX || fh->len != NFS_FH_HDR + n + NFS_FH_MAC)
		return NFS3ERR_BADHANDLE;
	put_be64(mac, nfs_fh_mac(d, NFS_FH_HDR + n));
	for (unsigned i = 0; i < NFS_FH_MAC; i++) /* constant time */
		diff |= mac[i] ^ d[NFS_FH_HDR + n + i];
	if (diff)
		return NFS3ERR_BADHANDLE;
	p->export_id = get_be32(d + 4);
	p->ktype = (int32_t)get_be32(d + 8);
	p->klen = n;
	p->kbytes = d + NFS_FH_HDR;
	return NFS3_OK;
}

uint32_t nfs_fh_open(int mount_fd, const struct nfs_fh_parts *p, int flags, int *fd, struct stat *st)
{
	struct nfs_kernel_handle kh;
	int f;

	kh.h.handle_bytes = p->klen;
	kh.h.handle_type = p->ktype;
	memcpy(kh.h.f_handle, p->kbytes, p->klen);
	f = open_by_handle_at(mount_fd, &kh.h, flags | O_CLOEXEC);
	if (f < 0) {
		switch (errno) {
		case ESTALE:
		case ENOENT:
		case EINVAL: /* MAC-valid, so ours: the file system no longer knows it */
			return NFS3ERR_STALE;
		case EPERM:
			log_limited(&nfs_fh_limit, LOG_ERR,
				    "nfs: open_by_handle_at: EPERM (rnfsd needs CAP_DAC_READ_SEARCH)");
			return NFS3ERR_SERVERFAULT;
		default:
			return nfs_errno_to_nfsstat3(errno);
		}
	}
	if (fstat(f, st) < 0) {
		int err = errno;
		close(f);
		return nfs_errno_to_nfsstat3(err);
	}
	/* An unlinked object still open somewhere may be found by handle: it is gone for NFS. */
	if (st->st_nlink == 0) {
		close(f);
		return NFS3ERR_STALE;
	}
	*fd = f;
	return NFS3_OK;
}

uint64_t nfs_fh_cookieverf(uint32_t export_id, const struct stat *dir)
{
	/* Byte 0 is never NFS_FH_VERSION, so a verifier is never a valid handle MAC. */
	uint8_t buf[16] = { 0xff, 'c', 'v', 0 };

	put_be32(buf + 4, export_id);
	put_be64(buf + 8, (uint64_t)dir->st_ino);
	return siphash24(nfs_fh_key, buf, sizeof(buf));
}
