/*
 * rt_mount.c - get the export's root file handle for the RDMA test requester:
 * portmapper GETPORT (RFC 1833 §3.2) and MOUNT v3 MNT (RFC 1813 §5.2.1) over
 * TCP with record marking (RFC 5531 §11). MOUNT never travels over RDMA
 * (INTEROP.md: the Linux client uses TCP for it too).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tests/rdma/rt_mount.h"
#include "tests/rdma/rt_rpc.h"

#define RT_TCP_MAX_REPLY 65536

static int tcp_connect(const struct sockaddr_in *srv, uint16_t port, char *why, size_t n)
{
	struct sockaddr_in a = *srv;
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0) {
		snprintf(why, n, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	a.sin_port = htons(port);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		snprintf(why, n, "TCP connect to port %u: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int read_full(int fd, uint8_t *buf, size_t len)
{
	ssize_t r;

	while (len) {
		r = read(fd, buf, len);
		if (r <= 0)
			return -1;
		buf += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Send one record, read one (possibly fragmented) record into reply. Returns its length or -1. */
static ssize_t tcp_rpc(int fd, const uint8_t *call, size_t len, uint8_t *reply, size_t cap)
{
	uint8_t mark[4];
	size_t got = 0;
	uint32_t frag;

	rt_put32(mark, 0x80000000u | (uint32_t)len);
	if (write(fd, mark, 4) != 4 || write(fd, call, len) != (ssize_t)len)
		return -1;
	do {
		if (read_full(fd, mark, 4))
			return -1;
		frag = rt_get32(mark) & 0x7fffffffu;
		if (frag > cap - got)
			return -1;
		if (read_full(fd, reply + got, frag))
			return -1;
		got += frag;
	} while (!(mark[0] & 0x80));
	return (ssize_t)got;
}

/* Make one call; on success r->res is positioned at the results. */
static int call(const struct sockaddr_in *srv, uint16_t port, const uint8_t *msg, size_t len,
		uint8_t *reply, struct rt_rpc_reply *r, char *why, size_t n)
{
	const char *bad = NULL;
	ssize_t got;
	int fd = tcp_connect(srv, port, why, n);

	if (fd < 0)
		return -1;
	got = tcp_rpc(fd, msg, len, reply, RT_TCP_MAX_REPLY);
	close(fd);
	if (got < 0) {
		snprintf(why, n, "no RPC reply from TCP port %u", port);
		return -1;
	}
	if (rt_rpc_reply_decode(reply, (size_t)got, r, &bad) || !r->accepted ||
	    r->stat != RT_RPC_SUCCESS) {
		snprintf(why, n, "RPC to TCP port %u failed: %s", port,
			 bad ? bad : rt_accept_stat_name(r->stat));
		return -1;
	}
	return 0;
}

int rt_mount_root(const struct sockaddr_in *srv, uint16_t mount_port, const char *path,
		  struct rt_fh *fh, char *why, size_t n)
{
	static uint8_t reply[RT_TCP_MAX_REPLY];
	uint8_t buf[1024];
	struct rt_rpc_reply r;
	struct rt_enc e;
	uint32_t st;

	if (!mount_port) {
		rt_enc_init(&e, buf, sizeof(buf));
		rt_rpc_call_hdr(&e, 0x4d4e5401, RT_PMAP_PROG, 2, 3, RT_AUTH_NONE);
		rt_pmap_getport_args(&e, RT_MOUNT_PROG, 3, IPPROTO_TCP);
		if (call(srv, 111, buf, e.len, reply, &r, why, n))
			return -1;
		st = rt_dec_u32(&r.res);
		if (r.res.bad || st == 0 || st > 65535) {
			snprintf(why, n, "rpcbind knows no MOUNT v3 over TCP");
			return -1;
		}
		mount_port = (uint16_t)st;
	}
	rt_enc_init(&e, buf, sizeof(buf));
	rt_rpc_call_hdr(&e, 0x4d4e5402, RT_MOUNT_PROG, 3, 1, RT_AUTH_SYS);
	rt_mnt3_mnt_args(&e, path);
	if (call(srv, mount_port, buf, e.len, reply, &r, why, n))
		return -1;
	st = rt_mnt3_mnt_res(&r.res, fh);
	if (r.res.bad || st != 0) {
		snprintf(why, n, "MNT %s: status %u%s", path, st, r.res.bad ? " (bad XDR)" : "");
		return -1;
	}
	return 0;
}
