/*
 * rt_rpc.c - ONC RPC call/reply (RFC 5531), NFSv3 and MOUNT v3 (RFC 1813) and
 * portmapper (RFC 1833) messages for the RDMA test requester.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/rdma/rt_rpc.h"

#define RT_AUTH_MAX 400 /* RFC 5531 §8.2 */

/* RFC 5531 §14.1 authsys_parms: root, group 0, no supplementary groups. */
static void enc_auth_sys(struct rt_enc *e)
{
	uint8_t body[64];
	struct rt_enc b;
	static const char machine[] = "rdmatest";

	rt_enc_init(&b, body, sizeof(body));
	rt_enc_u32(&b, (uint32_t)time(NULL));
	rt_enc_opaque(&b, machine, strlen(machine));
	rt_enc_u32(&b, 0); /* uid */
	rt_enc_u32(&b, 0); /* gid */
	rt_enc_u32(&b, 0); /* gids<16> */
	rt_enc_u32(e, RT_AUTH_SYS);
	rt_enc_opaque(e, body, b.len);
}

void rt_rpc_call_hdr(struct rt_enc *e, uint32_t xid, uint32_t prog, uint32_t vers,
		     uint32_t proc, enum rt_auth auth)
{
	rt_enc_u32(e, xid);
	rt_enc_u32(e, 0); /* CALL */
	rt_enc_u32(e, 2); /* rpcvers */
	rt_enc_u32(e, prog);
	rt_enc_u32(e, vers);
	rt_enc_u32(e, proc);
	if (auth == RT_AUTH_SYS) {
		enc_auth_sys(e);
	} else {
		rt_enc_u32(e, RT_AUTH_NONE);
		rt_enc_u32(e, 0);
	}
	rt_enc_u32(e, RT_AUTH_NONE); /* verifier */
	rt_enc_u32(e, 0);
}

int rt_rpc_reply_decode(const void *buf, size_t len, struct rt_rpc_reply *r, const char **why)
{
	struct rt_dec *d = &r->res;
	uint32_t vlen;

	memset(r, 0, sizeof(*r));
	rt_dec_init(d, buf, len);
	r->xid = rt_dec_u32(d);
	if (rt_dec_u32(d) != 1 || d->bad) {
		*why = "not an RPC REPLY";
		return -1;
	}
	switch (rt_dec_u32(d)) {
	case 0: /* MSG_ACCEPTED: verifier, accept_stat */
		r->accepted = true;
		rt_dec_u32(d);
		rt_dec_opaque(d, RT_AUTH_MAX, &vlen);
		r->stat = rt_dec_u32(d);
		if (r->stat == RT_RPC_PROG_MISMATCH) {
			rt_dec_u32(d);
			rt_dec_u32(d);
		}
		break;
	case 1: /* MSG_DENIED: reject_stat */
		r->stat = rt_dec_u32(d);
		break;
	default:
		*why = "bad reply_stat";
		return -1;
	}
	if (d->bad) {
		*why = "RPC reply header truncated";
		return -1;
	}
	return 0;
}

const char *rt_accept_stat_name(uint32_t stat)
{
	static const char *const names[] = {
		"SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR",
	};

	return stat < sizeof(names) / sizeof(names[0]) ? names[stat] : "accept_stat?";
}

void rt_nfs3_fh(struct rt_enc *e, const struct rt_fh *fh)
{
	rt_enc_opaque(e, fh->data, fh->len);
}

void rt_nfs3_lookup_args(struct rt_enc *e, const struct rt_fh *dir, const char *name)
{
	rt_nfs3_fh(e, dir);
	rt_enc_opaque(e, name, strlen(name));
}

void rt_nfs3_read_args(struct rt_enc *e, const struct rt_fh *fh, uint64_t off, uint32_t count)
{
	rt_nfs3_fh(e, fh);
	rt_enc_u64(e, off);
	rt_enc_u32(e, count);
}

size_t rt_nfs3_write_args_hdr(struct rt_enc *e, const struct rt_fh *fh, uint64_t off,
			      uint32_t count, uint32_t stable)
{
	rt_nfs3_fh(e, fh);
	rt_enc_u64(e, off);
	rt_enc_u32(e, count);
	rt_enc_u32(e, stable);
	rt_enc_u32(e, count); /* data<> length */
	return e->len;
}

void rt_nfs3_readdirplus_args(struct rt_enc *e, const struct rt_fh *dir, uint32_t dircount,
			      uint32_t maxcount)
{
	rt_nfs3_fh(e, dir);
	rt_enc_u64(e, 0); /* cookie */
	rt_enc_u64(e, 0); /* cookieverf */
	rt_enc_u32(e, dircount);
	rt_enc_u32(e, maxcount);
}

/* RFC 1813 §2.6 fattr3: 21 words. */
static void dec_fattr(struct rt_dec *d, struct rt_fattr *a)
{
	a->type = rt_dec_u32(d);
	a->mode = rt_dec_u32(d);
	rt_dec_u32(d); /* nlink */
	rt_dec_u32(d); /* uid */
	rt_dec_u32(d); /* gid */
	a->size = rt_dec_u64(d);
	rt_dec_u64(d); /* used */
	rt_dec_u64(d); /* rdev */
	rt_dec_u64(d); /* fsid */
	a->fileid = rt_dec_u64(d);
	rt_dec_bytes(d, 24); /* atime, mtime, ctime */
}

static void skip_post_op_attr(struct rt_dec *d)
{
	struct rt_fattr a;

	if (rt_dec_bool(d))
		dec_fattr(d, &a);
}

/* RFC 1813 §2.6 wcc_data: pre_op_attr then post_op_attr. */
static void skip_wcc_data(struct rt_dec *d)
{
	if (rt_dec_bool(d))
		rt_dec_bytes(d, 24); /* size, mtime, ctime */
	skip_post_op_attr(d);
}

uint32_t rt_nfs3_getattr_res(struct rt_dec *d, struct rt_fattr *a)
{
	uint32_t status = rt_dec_u32(d);

	if (status == RT_NFS3_OK)
		dec_fattr(d, a);
	return status;
}

static void dec_fh(struct rt_dec *d, struct rt_fh *fh)
{
	const uint8_t *p = rt_dec_opaque(d, RT_NFS3_FHSIZE, &fh->len);

	if (p)
		memcpy(fh->data, p, fh->len);
}

uint32_t rt_nfs3_lookup_res(struct rt_dec *d, struct rt_fh *fh)
{
	uint32_t status = rt_dec_u32(d);

	if (status == RT_NFS3_OK) {
		dec_fh(d, fh);
		skip_post_op_attr(d);
	}
	skip_post_op_attr(d);
	return status;
}

uint32_t rt_nfs3_read_res_hdr(struct rt_dec *d, uint32_t *count, bool *eof, uint32_t *data_len)
{
	uint32_t status = rt_dec_u32(d);

	skip_post_op_attr(d);
	if (status == RT_NFS3_OK) {
		*count = rt_dec_u32(d);
		*eof = rt_dec_bool(d);
		*data_len = rt_dec_u32(d);
	}
	return status;
}

uint32_t rt_nfs3_write_res(struct rt_dec *d, uint32_t *count, uint32_t *committed)
{
	uint32_t status = rt_dec_u32(d);

	skip_wcc_data(d);
	if (status == RT_NFS3_OK) {
		*count = rt_dec_u32(d);
		*committed = rt_dec_u32(d);
		rt_dec_bytes(d, 8); /* writeverf3 */
	}
	return status;
}

void rt_mnt3_mnt_args(struct rt_enc *e, const char *path)
{
	rt_enc_opaque(e, path, strlen(path));
}

uint32_t rt_mnt3_mnt_res(struct rt_dec *d, struct rt_fh *fh)
{
	uint32_t status = rt_dec_u32(d);

	if (status == 0)
		dec_fh(d, fh);
	return status;
}

void rt_pmap_getport_args(struct rt_enc *e, uint32_t prog, uint32_t vers, uint32_t prot)
{
	rt_enc_u32(e, prog);
	rt_enc_u32(e, vers);
	rt_enc_u32(e, prot);
	rt_enc_u32(e, 0);
}
