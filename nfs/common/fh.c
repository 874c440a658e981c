/*
 * fh.c - rnfsd file handles (RFC 1813 §2.3.3, RFC 8881 §4.2.1: "opaque to
 * the client"): the envelope around the backend's own handle bytes.
 *
 * The backend names an object with its handle (local: a kernel file handle
 * from name_to_handle_at); the envelope qualifies it with the export it was
 * issued under and authenticates both with a 64-bit SipHash-2-4 MAC keyed
 * with a 128-bit secret (layout in nfs_common.h). So:
 *   - handles survive daemon restarts (backend handles are persistent, the
 *     key is kept in state_dir/fh.key, core/statefile.c),
 *   - a client cannot forge a handle for an object it was never given, nor
 *     relabel a handle into another export: a bad MAC or shape is BADHANDLE,
 *     and a backend never sees bytes this server did not make,
 *   - a genuine handle whose object is gone, or whose export is no longer
 *     served, is STALE (RFC 1813 §2.6).
 * The envelope is 16 bytes, so an NFSv3 handle (64 bytes) leaves the backend
 * 48 and an NFSv4 one (128) 112.
 * Owns the key (static, written once at init).
 */
#include <string.h>

#include "nfs/common/nfs_common.h"
#include "nfs/common/siphash.h"
#include "core/statefile.h"

static uint8_t nfs_fh_key[SIPHASH_KEY_BYTES];

void nfs_fh_key_set(const uint8_t key[16])
{
	memcpy(nfs_fh_key, key, SIPHASH_KEY_BYTES);
}

int nfs_fh_key_init(const char *state_dir)
{
	return statefile_secret(state_dir, "fh.key", nfs_fh_key, SIPHASH_KEY_BYTES, "nfs: file-handle key");
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

bool nfs_fh_wrap(struct nfs_fh *fh, uint32_t export_id, const struct be_handle *bh, uint32_t max)
{
	uint32_t n = bh->len;

	if (max > NFS_FH_MAXSIZE)
		max = NFS_FH_MAXSIZE;
	if (n == 0 || n > 255 || n + NFS_FH_ENVELOPE > max)
		return false;
	fh->data[0] = NFS_FH_VERSION;
	fh->data[1] = (uint8_t)n;
	fh->data[2] = fh->data[3] = 0;
	put_be32(fh->data + 4, export_id);
	memcpy(fh->data + NFS_FH_HDR, bh->data, n);
	put_be64(fh->data + NFS_FH_HDR + n, siphash24(nfs_fh_key, fh->data, NFS_FH_HDR + n));
	fh->len = NFS_FH_HDR + n + NFS_FH_MAC;
	return true;
}

bool nfs_fh_unwrap(const struct nfs_fh *fh, uint32_t *export_id, struct be_handle *bh)
{
	const uint8_t *d = fh->data;
	uint8_t mac[NFS_FH_MAC];
	uint8_t diff = 0;
	uint32_t n;

	if (fh->len < NFS_FH_ENVELOPE + 1 || fh->len > NFS_FH_MAXSIZE || d[2] || d[3])
		return false;
	if (d[0] == NFS_FH_VERSION)
		n = d[1];
	else if (d[0] == 1)
		n = d[1] + 4u; /* version 1: the local backend's kernel handle type counted apart */
	else
		return false;
	if (n == 0 || fh->len != NFS_FH_HDR + n + NFS_FH_MAC || n > BE_HANDLE_MAX)
		return false;
	put_be64(mac, siphash24(nfs_fh_key, d, NFS_FH_HDR + n));
	for (unsigned i = 0; i < NFS_FH_MAC; i++) /* constant time */
		diff |= mac[i] ^ d[NFS_FH_HDR + n + i];
	if (diff)
		return false;
	*export_id = get_be32(d + 4);
	bh->len = n;
	memcpy(bh->data, d + NFS_FH_HDR, n);
	return true;
}
