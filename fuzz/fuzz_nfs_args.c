/*
 * fuzz_nfs_args.c - libFuzzer target: every NFSv3 (RFC 1813 §3.3) and
 * MOUNT v3 (RFC 1813 appendix I) argument decoder, reached through the
 * operation tables (nfs/v3/nfs3_procs.c): the table entry's decode step
 * runs over zeroed per-call scratch exactly as rpc_call.c's
 * rpc_proc_steps() runs it; no backend, no execute step. Built as a
 * libFuzzer target with -Dfuzz=true (clang), and in every build as a replay
 * test over fuzz/corpus/nfs_args (fuzz_replay.c).
 *
 * Input: byte 0 the program (bit 0 clear: NFS, set: MOUNT) and bit 1 "make
 * the first handle's MAC valid", byte 1 the procedure
 * (modulo the table's size), byte 2 a Read chunk's XDR position in words
 * (0: none), byte 3 its length / 4, the rest the argument body (the XDR
 * stream after the call header).
 *
 * Invariants checked with abort(): the scratch is exactly args_size bytes
 * (heap, so ASan sees a decoder writing past its struct); the decoder never
 * moves past the body; an accepted body is accepted again, with the same
 * result, when cut right after what the decoder consumed, and refused when
 * cut one byte earlier; handles, names, paths and data point inside the
 * body (or the Read chunk) and respect their XDR limits; enumerations are
 * in range. Each NFS argument struct begins with a handle: its envelope
 * (nfs/common/fh.c, what the execute step checks first) is unwrapped too,
 * with its MAC made valid first when byte 0 says so, so that the rest of the
 * unwrapping is reached; what unwraps wraps back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfs/common/nfs_common.h"
#include "nfs/common/siphash.h"
#include "nfs/v3/nfs3.h"
#include "nfs/v3/nfs3_xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static struct rpc_call call;
static const uint8_t key[SIPHASH_KEY_BYTES] = "fuzz-nfs-args-k";
static uint8_t chunk[4 * 255 + 3]; /* the Read chunk's bytes */

struct input {
	const struct rpc_proc *p;
	const uint8_t *body;
	size_t len;
};

/* p[0 .. n) lies inside the body, or inside the Read chunk. */
static bool inside(const struct input *in, const uint8_t *p, size_t n)
{
	if (p >= chunk && p <= chunk + sizeof(chunk))
		return n <= (size_t)(chunk + sizeof(chunk) - p);
	return p >= in->body && p <= in->body + in->len && n <= (size_t)(in->body + in->len - p);
}

/* Decode body[0 .. len) with a fresh call: the decoder's verdict. */
static bool decode(const struct input *in, size_t len, void *args, size_t *consumed)
{
	xdr_dec_init(&call.args, in->body, len);
	call.ddp_in_reduced = 0;
	memset(args, 0, in->p->args_size);
	bool ok = in->p->decode(&call, args);
	/* The decoder never leaves the stream it was given. */
	CHECK(call.args.base == in->body && call.args.end == in->body + len);
	CHECK(call.args.p >= in->body && call.args.p <= call.args.end);
	*consumed = xdr_dec_pos(&call.args);
	CHECK(*consumed % 4 == 0);
	return ok;
}

static void check_name(const struct input *in, const struct nfs3_diropargs *a)
{
	CHECK(a->dir.len <= NFS3_FHSIZE);
	CHECK(a->name.len <= NFS3_NAME_DECODE_MAX && inside(in, a->name.p, a->name.len));
}

static void check_sattr(const struct be_sattr *sa)
{
	/* RFC 1813 §2.5 nfstime3: nseconds below one billion. */
	CHECK(!(sa->mask & BE_SET_ATIME) || sa->atime.nsec < 1000000000u);
	CHECK(!(sa->mask & BE_SET_MTIME) || sa->mtime.nsec < 1000000000u);
	CHECK(!((sa->mask & BE_SET_ATIME) && (sa->mask & BE_SET_ATIME_NOW)));
	CHECK(!((sa->mask & BE_SET_MTIME) && (sa->mask & BE_SET_MTIME_NOW)));
}

/* The handle envelope of an accepted handle; remac: give it a valid MAC first. */
static void check_fh(const struct nfs_fh *decoded, bool remac)
{
	struct nfs_fh fh = *decoded, again;
	struct be_handle bh;
	uint32_t id;

	if (remac && fh.len >= NFS_FH_MAC) {
		uint64_t mac = siphash24(key, fh.data, fh.len - NFS_FH_MAC);
		for (unsigned i = 0; i < NFS_FH_MAC; i++)
			fh.data[fh.len - NFS_FH_MAC + i] = (uint8_t)(mac >> (56 - 8 * i));
	}
	if (!nfs_fh_unwrap(&fh, &id, &bh))
		return;
	CHECK(bh.len >= 1 && bh.len <= BE_HANDLE_MAX && bh.len + NFS_FH_ENVELOPE == fh.len);
	if (fh.data[0] == NFS_FH_VERSION) {
		CHECK(nfs_fh_wrap(&again, id, &bh, NFS3_FHSIZE));
		CHECK(again.len == fh.len && memcmp(again.data, fh.data, fh.len) == 0);
	}
}

/* What an accepted decode step produced, by decoder. */
static void check_args(const struct input *in, const void *args)
{
	bool (*dec)(struct rpc_call *, void *) = in->p->decode;

	if (dec == mount3_dec_dirpath) {
		const struct mount3_dirpath_args *a = args;
		CHECK(a->len <= MNT3_PATHLEN && inside(in, a->p, a->len) && !memchr(a->p, 0, a->len));
	} else if (dec == nfs3_dec_write) {
		const struct nfs3_write_args *a = args;
		CHECK(a->fh.len <= NFS3_FHSIZE && a->stable <= NFS3_FILE_SYNC);
		CHECK(a->len <= NFS3_MAX_IO && inside(in, a->data, a->len));
	} else if (dec == nfs3_dec_symlink) {
		const struct nfs3_symlink_args *a = args;
		check_name(in, &a->where);
		check_sattr(&a->sa);
		CHECK(a->path_len <= NFS3_PATH_DECODE_MAX && inside(in, a->path, a->path_len));
	} else if (dec == nfs3_dec_create) {
		const struct nfs3_create_args *a = args;
		check_name(in, &a->where);
		check_sattr(&a->sa);
		CHECK(a->mode <= NFS3_CREATE_EXCLUSIVE);
	} else if (dec == nfs3_dec_mknod) {
		const struct nfs3_mknod_args *a = args;
		check_name(in, &a->where);
		check_sattr(&a->sa);
		CHECK(a->type >= NF3REG && a->type <= NF3FIFO);
	} else if (dec == nfs3_dec_mkdir || dec == nfs3_dec_dirop) {
		check_name(in, args);
		if (dec == nfs3_dec_mkdir)
			check_sattr(&((const struct nfs3_mkdir_args *)args)->sa);
	} else if (dec == nfs3_dec_rename) {
		check_name(in, &((const struct nfs3_rename_args *)args)->from);
		check_name(in, &((const struct nfs3_rename_args *)args)->to);
	} else if (dec == nfs3_dec_link) {
		CHECK(((const struct nfs3_link_args *)args)->file.len <= NFS3_FHSIZE);
		check_name(in, &((const struct nfs3_link_args *)args)->link);
	} else if (dec == nfs3_dec_setattr) {
		const struct nfs3_setattr_args *a = args;
		CHECK(a->fh.len <= NFS3_FHSIZE);
		check_sattr(&a->sa);
		CHECK(!a->guard || a->guard_ctime.nsec < 1000000000u);
	} else {
		/* The others (fh_args, access, read, readdir, readdirplus, commit)
		 * begin with the handle. */
		CHECK(((const struct nfs_fh *)args)->len <= NFS3_FHSIZE);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	nfs_fh_key_set(key);
	const struct rpc_version *v = (data[0] & 1 ? &mount3_program : &nfs3_program)->versions;
	struct input in = { &v->procs[data[1] % v->nprocs], data + 4, size - 4 };

	if (!in.p->decode)
		return 0; /* no arguments (NULL, DUMP, UMNTALL, EXPORT) */
	CHECK(in.p->args_size <= RPC_PROC_SCRATCH);
	/* RFC 8166 §3.4.5: a Read chunk stands for the item at its position. */
	call.n_ddp_in = data[2] != 0;
	call.ddp_in[0] = (struct rpc_ddp_in){ .position = 4u * (data[2] - 1u), .len = 4u * data[3] + (data[3] & 3u),
					      .data = chunk };

	void *args = malloc(in.p->args_size), *again = malloc(in.p->args_size);
	size_t used, used2;
	CHECK(args && again);
	if (decode(&in, in.len, args, &used)) {
		check_args(&in, args);
		if (in.p->decode != mount3_dec_dirpath)
			check_fh(args, data[0] & 2);
		/* Cut right after what was consumed: same verdict, same result. */
		CHECK(decode(&in, used, again, &used2));
		CHECK(used2 == used && memcmp(args, again, in.p->args_size) == 0);
		/* One byte less: refused (decoders read sequentially, nothing is optional at the end). */
		if (used > 0)
			CHECK(!decode(&in, used - 1, again, &used2));
	}
	free(args);
	free(again);
	return 0;
}
