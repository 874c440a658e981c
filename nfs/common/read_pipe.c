/*
 * read_pipe.c - a READ's data by reference, for NFSv3 and NFSv4 alike: into
 * the call's payload pipe (rpc_payload_pipe, TCP) by the backend's read_pipe,
 * so the transport splices the page cache's pages to the socket uncopied.
 */
#include <errno.h>

#include "nfs/common/nfs_common.h"

int nfs_read_piped(struct rpc_call *c, struct be_fs *fs, const struct be_cred *cr, struct be_file *f, unsigned flags,
		   uint64_t offset, uint32_t count, size_t *done, bool *eof, struct be_attr *post)
{
	size_t room = 0;
	int pfd = rpc_payload_pipe(c, count, &room);
	int err;

	if (pfd < 0)
		return EOPNOTSUPP;
	err = be_read_pipe(fs, cr, f, flags, offset, count < room ? count : room, pfd, done, eof, post);
	if (err != EOPNOTSUPP)
		rpc_payload_piped(c, *done);
	return err;
}
