/*
 * nfsload_ops.c - what each unit of nfsload sends and how its replies are
 * checked (NFSv3, RFC 1813). Every reply is decoded far enough to know the
 * unit did what it claims (status NFS3_OK, READ/WRITE counts, CREATE's
 * handle, READDIRPLUS's 1,000 names); a unit that did not is an error, so a
 * server that answers fast but wrongly never scores.
 */
#include "nfsload.h"

#include <stdio.h>
#include <string.h>

static const char *const nl_op_names[NL_OP_COUNT] = {
	[NL_OP_NULL] = "null",
	[NL_OP_GETATTR] = "getattr",
	[NL_OP_LOOKUP] = "lookup",
	[NL_OP_READ4K] = "read4k",
	[NL_OP_WRITE4K] = "write4k",
	[NL_OP_CREATE_REMOVE] = "create-remove",
	[NL_OP_READDIRPLUS] = "readdirplus-1000",
};

const char *nl_op_name(enum nl_op op)
{
	return op < NL_OP_COUNT ? nl_op_names[op] : "?";
}

int nl_op_parse(const char *name)
{
	for (int i = 0; i < NL_OP_COUNT; i++)
		if (!strcmp(name, nl_op_names[i]))
			return i;
	return -1;
}

/* ---- XDR pieces (RFC 1813 §2.6) ---------------------------------------- */

void nl_put_fh(struct xb *b, const struct nl_fh *fh)
{
	xb_opaque(b, fh->data, fh->len);
}

void nl_put_diropargs(struct xb *b, const struct nl_fh *dir, const char *name)
{
	nl_put_fh(b, dir);
	xb_string(b, name);
}

void nl_put_sattr_mode(struct xb *b, uint32_t mode)
{
	xb_u32(b, 1); /* set_mode3 */
	xb_u32(b, mode);
	xb_u32(b, 0); /* uid */
	xb_u32(b, 0); /* gid */
	xb_u32(b, 0); /* size */
	xb_u32(b, 0); /* atime: DONT_CHANGE */
	xb_u32(b, 0); /* mtime: DONT_CHANGE */
}

bool nl_get_fh(struct xd *d, struct nl_fh *fh)
{
	uint32_t n;
	const uint8_t *p = xd_opaque(d, &n, NL_FH_MAX);

	if (!p)
		return false;
	memcpy(fh->data, p, n);
	fh->len = n;
	return true;
}

void nl_skip_post_op_attr(struct xd *d)
{
	if (xd_u32(d))
		xd_skip(d, 84); /* fattr3 */
}

void nl_skip_wcc_data(struct xd *d)
{
	if (xd_u32(d))
		xd_skip(d, 24); /* wcc_attr */
	nl_skip_post_op_attr(d);
}

bool nl_get_post_op_fh(struct xd *d, struct nl_fh *fh)
{
	if (!xd_u32(d))
		return false;
	return nl_get_fh(d, fh);
}

/* ---- encoding ------------------------------------------------------------ */

static void nl_unit_name(char *buf, size_t len, uint32_t tag, uint64_t unit)
{
	snprintf(buf, len, "c%08x-%llu", tag, (unsigned long long)unit);
}

static uint64_t nl_io_offset(uint64_t unit)
{
	return (unit * NL_IO_SIZE) % NL_DATA_SIZE;
}

static void nl_encode_readdirplus(const struct nl_tree *t, const struct nl_slot *s, struct xb *b)
{
	nl_put_fh(b, &t->dir);
	xb_u64(b, s->cookie);
	xb_raw(b, s->verf, 8);
	xb_u32(b, NL_RDP_DIRCOUNT);
	xb_u32(b, NL_RDP_MAXCOUNT);
}

enum nl_proc nl_encode_step(enum nl_op op, const struct nl_tree *t, const struct nl_slot *s,
			    struct xb *b)
{
	static uint8_t payload[NL_IO_SIZE];
	char name[40];

	switch (op) {
	case NL_OP_GETATTR:
		nl_put_fh(b, &t->data);
		return NL_GETATTR;
	case NL_OP_LOOKUP:
		nl_put_diropargs(b, &t->top, "data");
		return NL_LOOKUP;
	case NL_OP_READ4K:
		nl_put_fh(b, &t->data);
		xb_u64(b, nl_io_offset(s->unit));
		xb_u32(b, NL_IO_SIZE);
		return NL_READ;
	case NL_OP_WRITE4K:
		memset(payload, 'w', sizeof(payload));
		nl_put_fh(b, &t->data);
		xb_u64(b, nl_io_offset(s->unit));
		xb_u32(b, NL_IO_SIZE);
		xb_u32(b, 0); /* RFC 1813 §3.3.7: UNSTABLE, as clients send most writes */
		xb_opaque(b, payload, NL_IO_SIZE);
		return NL_WRITE;
	case NL_OP_CREATE_REMOVE:
		nl_unit_name(name, sizeof(name), t->tag, s->unit);
		nl_put_diropargs(b, &t->top, name);
		if (s->step == 1)
			return NL_REMOVE;
		xb_u32(b, 1); /* RFC 1813 §3.3.8: GUARDED */
		nl_put_sattr_mode(b, 0644);
		return NL_CREATE;
	case NL_OP_READDIRPLUS:
		nl_encode_readdirplus(t, s, b);
		return NL_READDIRPLUS;
	case NL_OP_NULL:
	default:
		return NL_NULL;
	}
}

/* ---- decoding ------------------------------------------------------------ */

#define NL_FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return NL_UNIT_FAILED; } while (0)

/* RFC 1813 §3.3.17: one READDIRPLUS reply; counts the e* names. */
static enum nl_step_result nl_decode_readdirplus(struct nl_slot *s, struct xd *d, char *err,
						 size_t errlen)
{
	uint32_t n;
	const uint8_t *name;
	struct nl_fh fh;
	unsigned guard = 0;

	nl_skip_post_op_attr(d);
	if (!d->bad && d->len - d->pos >= 8)
		memcpy(s->verf, d->p + d->pos, 8);
	xd_skip(d, 8); /* cookieverf3 */
	while (!d->bad && xd_u32(d)) {
		xd_u64(d); /* fileid */
		name = xd_opaque(d, &n, 255);
		s->cookie = xd_u64(d);
		nl_skip_post_op_attr(d);
		nl_get_post_op_fh(d, &fh);
		if (name && n == 5 && name[0] == 'e')
			s->entries++;
		if (++guard > 100000)
			NL_FAIL("READDIRPLUS: runaway entry list");
	}
	if (!xd_u32(d) && !d->bad) {
		if (guard == 0)
			NL_FAIL("READDIRPLUS: no entries and no eof");
		s->step++;
		return NL_UNIT_MORE;
	}
	if (d->bad)
		NL_FAIL("READDIRPLUS: reply does not decode");
	if (s->entries != NL_DIR_ENTRIES)
		NL_FAIL("READDIRPLUS: %u entries named e*, expected %u", s->entries, NL_DIR_ENTRIES);
	return NL_UNIT_DONE;
}

static enum nl_step_result nl_decode_io(enum nl_op op, struct xd *d, char *err, size_t errlen)
{
	uint32_t n = 0;

	if (op == NL_OP_READ4K) {
		nl_skip_post_op_attr(d);
		xd_u32(d); /* count */
		xd_u32(d); /* eof */
		if (!xd_opaque(d, &n, NL_IO_SIZE) || n != NL_IO_SIZE)
			NL_FAIL("READ: %u bytes instead of %u", n, NL_IO_SIZE);
		return NL_UNIT_DONE;
	}
	nl_skip_wcc_data(d);
	n = xd_u32(d);
	if (d->bad || n != NL_IO_SIZE)
		NL_FAIL("WRITE: count %u instead of %u", n, NL_IO_SIZE);
	return NL_UNIT_DONE;
}

enum nl_step_result nl_decode_step(enum nl_op op, struct nl_slot *s, struct xd *d, char *err,
				   size_t errlen)
{
	uint32_t status;
	struct nl_fh fh;

	if (op == NL_OP_NULL)
		return NL_UNIT_DONE;
	status = xd_u32(d);
	if (d->bad || status != 0)
		NL_FAIL("%s step %u: nfsstat3 %u", nl_op_name(op), s->step, status);
	switch (op) {
	case NL_OP_GETATTR:
		xd_skip(d, 84);
		break;
	case NL_OP_LOOKUP:
		if (!nl_get_fh(d, &fh))
			NL_FAIL("LOOKUP: no handle");
		break;
	case NL_OP_READ4K:
	case NL_OP_WRITE4K:
		return nl_decode_io(op, d, err, errlen);
	case NL_OP_CREATE_REMOVE:
		if (s->step == 0) {
			if (!nl_get_post_op_fh(d, &fh))
				NL_FAIL("CREATE: no handle returned");
			s->step = 1;
			return NL_UNIT_MORE;
		}
		nl_skip_wcc_data(d);
		break;
	case NL_OP_READDIRPLUS:
		return nl_decode_readdirplus(s, d, err, errlen);
	default:
		break;
	}
	if (d->bad)
		NL_FAIL("%s: reply does not decode", nl_op_name(op));
	return NL_UNIT_DONE;
}
