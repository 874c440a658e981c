/*
 * nfs4_proc_v42.c - the NFSv4.2 data operations on one file: SEEK (RFC 7862
 * §15.11), ALLOCATE (§15.1), DEALLOCATE (§15.4) and READ_PLUS (§15.10).
 *
 * The file comes as READ's and WRITE's does (nfs4_io_file(): an open's file,
 * or with the anonymous/bypass stateids the handle's file opened for this
 * call, share reservations respected, ROFS for a read-only export); the
 * backend's allocate and seek take no BE_IO_CHECK_ACCESS, so for stateless
 * stateids the caller's permission is asked here (nfs4_v42_file()). The
 * caller's identity is the squashed one of nfs4_obj_open(), as for every
 * operation. No memory is allocated: READ_PLUS reads into the call's payload
 * area (nfs4_read_buf(), as READ), its result lives in the COMPOUND arena.
 */
#include <errno.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_v42.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"

uint32_t nfs4_v42_file(struct nfs4_ctx *x, const struct nfs_fh *fh, const struct nfs4_stateid *sid, uint32_t access,
		       struct nfs4_obj *ob, struct be_file **f)
{
	uint32_t want = access == NFS4_SHARE_ACCESS_READ ? BE_ACCESS_READ : BE_ACCESS_MODIFY, granted = 0;
	unsigned flags = 0;
	uint32_t status = nfs4_io_file(x, fh, sid, ob, access, f, &flags);

	if (status != NFS4_OK || !(flags & BE_IO_CHECK_ACCESS))
		return status;
	status = nfs_errno_to_nfsstat4(be_access(ob->exp->fs, &ob->cred, &ob->o, want, &granted));
	if (status == NFS4_OK && !(granted & want))
		status = NFS4ERR_ACCESS;
	return status;
}

/* Put what nfs4_v42_file() gave. */
void nfs4_v42_file_put(struct nfs4_obj *ob, struct be_file *f)
{
	if (f)
		be_file_put(ob->exp->fs, f);
	nfs4_obj_put(ob);
}

uint32_t nfs4_v42_size(const struct nfs4_obj *ob, struct be_file *f, uint64_t *size)
{
	struct be_attr a;
	uint32_t status = nfs_errno_to_nfsstat4(be_file_getattr(ob->exp->fs, f, &a));

	if (status == NFS4_OK && !(a.valid & BE_AT_SIZE))
		status = NFS4ERR_SERVERFAULT;
	*size = a.size;
	return status;
}

/* RFC 7862 §15.11.3: the next data or hole at or after sa_offset. An offset at or
 * beyond the end is NFS4ERR_NXIO; no data after it (a trailing hole) is NFS4_OK
 * with sr_eof (the Linux client turns that into ENXIO for SEEK_DATA); sr_eof is
 * also set when the answer is at the end (the hole every file ends with). */
uint32_t nfs4_seek_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_range_args *a = args;
	struct nfs4_seek_res *r = res;
	struct nfs4_obj ob;
	struct be_file *f = NULL;
	uint64_t size = 0;
	uint32_t status;
	int err;

	if (a->what != NFS4_CONTENT_DATA && a->what != NFS4_CONTENT_HOLE)
		return NFS4ERR_UNION_NOTSUPP; /* §15.11.3: data_content4 values other than data and hole */
	status = nfs4_v42_file(x, &x->cur.fh, &a->sid, NFS4_SHARE_ACCESS_READ, &ob, &f);
	if (status == NFS4_OK)
		status = nfs4_v42_size(&ob, f, &size);
	if (status == NFS4_OK && a->offset >= size)
		status = NFS4ERR_NXIO;
	if (status == NFS4_OK) {
		err = be_seek(ob.exp->fs, f, a->offset, a->what == NFS4_CONTENT_DATA ? BE_SEEK_DATA : BE_SEEK_HOLE,
			      &r->offset);
		if (err == ENXIO) { /* raced with a truncation, or data sought in a trailing hole */
			err = 0;
			r->offset = size;
		}
		status = nfs_errno_to_nfsstat4(err);
		r->eof = r->offset >= size;
	}
	nfs4_v42_file_put(&ob, f);
	return status;
}

/* ALLOCATE (RFC 7862 §15.1.3: the range's space reserved; fallocate(2) mode 0,
 * so a range past the end grows the file, as knfsd's) and DEALLOCATE
 * (§15.4.3: the range becomes a hole, the size is kept: FALLOC_FL_PUNCH_HOLE |
 * FALLOC_FL_KEEP_SIZE in the local backend). Both need write access through the
 * stateid, as WRITE; on a "sync" export the change is on stable storage before
 * the reply (as knfsd's commit_metadata after fallocate). */
static uint32_t alloc_exec(struct nfs4_ctx *x, const struct nfs4_range_args *a, bool deallocate)
{
	struct nfs4_obj ob;
	struct be_file *f = NULL;
	uint32_t status = nfs4_v42_file(x, &x->cur.fh, &a->sid, NFS4_SHARE_ACCESS_WRITE, &ob, &f);

	if (status == NFS4_OK)
		status = nfs_errno_to_nfsstat4(be_allocate(ob.exp->fs, &ob.cred, f, a->offset, a->length, deallocate));
	if (status == NFS4_OK && (!ob.opts || ob.opts->sync))
		status = nfs_errno_to_nfsstat4(be_commit(ob.exp->fs, f, a->offset, a->length, NULL, NULL));
	nfs4_v42_file_put(&ob, f);
	return status;
}

uint32_t nfs4_allocate_exec(struct nfs4_ctx *x, void *args, void *res)
{
	(void)res;
	return alloc_exec(x, args, false);
}

uint32_t nfs4_deallocate_exec(struct nfs4_ctx *x, void *args, void *res)
{
	(void)res;
	return alloc_exec(x, args, true);
}

/* The extent at pos (< end): *type and where it stops (*next, <= end). A backend
 * that cannot tell holes (EOPNOTSUPP, EINVAL) shows everything as data. */
static int rp_extent(struct be_fs *fs, struct be_file *f, uint64_t pos, uint64_t end, uint64_t size, uint32_t *type,
		     uint64_t *next)
{
	uint64_t d = pos, h = end;
	int err = be_seek(fs, f, pos, BE_SEEK_DATA, &d);

	if (err == ENXIO)
		d = size, err = 0; /* a trailing hole */
	else if (err == EOPNOTSUPP || err == EINVAL)
		d = pos, err = 0;
	if (err)
		return err;
	if (d > pos) {
		*type = NFS4_CONTENT_HOLE;
		*next = d < end ? d : end;
		return 0;
	}
	err = be_seek(fs, f, pos, BE_SEEK_HOLE, &h);
	if (err == ENXIO || err == EOPNOTSUPP || err == EINVAL)
		h = end, err = 0;
	*type = NFS4_CONTENT_DATA;
	*next = h > pos && h < end ? h : end;
	return err;
}

/* One data segment [pos, next) read into the call's payload area; *pos advances
 * by what was read (short at the end of the file, or when the buffer is smaller). */
static uint32_t rp_data(struct nfs4_ctx *x, struct nfs4_obj *ob, struct be_file *f, uint64_t *pos, uint64_t next,
			struct nfs4_read_plus_seg *s)
{
	uint32_t cap = 0;
	uint8_t *buf = nfs4_read_buf(x, (uint32_t)(next - *pos), &cap);
	struct iovec iov = { buf, cap };
	size_t done = 0;
	bool eof = false;

	if (!buf)
		return NFS4ERR_SERVERFAULT;
	uint32_t status = nfs_errno_to_nfsstat4(be_read(ob->exp->fs, &ob->cred, f, 0, *pos, &iov, 1, &done, &eof, NULL));
	*s = (struct nfs4_read_plus_seg){ .type = NFS4_CONTENT_DATA, .offset = *pos, .length = done, .data = buf };
	*pos += done;
	return status;
}

/*
 * RFC 7862 §15.10.3: the range as data and hole segments, holes sent as holes
 * (data_info4, no bytes). At most one data segment per result, so the result
 * has one DDP-eligible item (RFC 8267 §4.1, §4.3: it pairs with one Write chunk
 * as READ's data does): [hole] [data] [hole], stopping after a short read. A
 * reply covering less than asked is allowed (§15.10.3, as READ's short reads);
 * rpr_eof says whether it reaches the end of the file. Holes and data are read
 * apart (seek, then read): a concurrent writer may make the answer a mix, as
 * READ racing with WRITE may.
 */
uint32_t nfs4_read_plus_exec(struct nfs4_ctx *x, void *args, void *res)
{
	const struct nfs4_read_args *a = args;
	struct nfs4_read_plus_res *r = res;
	uint32_t want = a->count < NFS4_MAX_IO ? a->count : NFS4_MAX_IO, type = 0;
	uint64_t size = 0, end, pos = a->offset, next = 0;
	bool had_data = false;
	struct nfs4_obj ob;
	struct be_file *f = NULL;
	uint32_t status = nfs4_v42_file(x, &x->cur.fh, &a->sid, NFS4_SHARE_ACCESS_READ, &ob, &f);

	if (status == NFS4_OK)
		status = nfs4_v42_size(&ob, f, &size);
	end = pos >= size ? pos : (size - pos < want ? size : pos + want);
	while (status == NFS4_OK && pos < end && r->nsegs < NFS4_READ_PLUS_SEGS) {
		struct nfs4_read_plus_seg *s = &r->segs[r->nsegs];

		status = nfs_errno_to_nfsstat4(rp_extent(ob.exp->fs, f, pos, end, size, &type, &next));
		if (status != NFS4_OK || (type == NFS4_CONTENT_DATA && had_data))
			break;
		if (type == NFS4_CONTENT_HOLE) {
			*s = (struct nfs4_read_plus_seg){ .type = type, .offset = pos, .length = next - pos };
			pos = next;
			r->nsegs++;
			continue;
		}
		had_data = true;
		status = rp_data(x, &ob, f, &pos, next, s);
		if (status == NFS4_OK && s->length)
			r->nsegs++;
		if (pos < next)
			break;
	}
	r->eof = pos >= size;
	/* the export's bytes read: the range answered, holes included (as READ's zeros) */
	if (status == NFS4_OK && pos > a->offset)
		nfs_export_count_io(ob.exp, pos - a->offset, 0);
	nfs4_v42_file_put(&ob, f);
	return status;
}
