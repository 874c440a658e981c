/*
 * rawrpc.c - the hand-written RPC client of rawrpc.h: XDR encode/decode
 * helpers, record marking over a blocking TCP socket with poll() timeouts,
 * and reply-header decoding (RFC 5531).
 */
#include "tests/integration/rawrpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- XDR encode -------------------------------------------------------- */

void xb_init(struct xb *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
}

void xb_free(struct xb *b)
{
	free(b->p);
	xb_init(b);
}

static void xb_reserve(struct xb *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;

	if (b->len + n <= b->cap)
		return;
	while (cap < b->len + n)
		cap *= 2;
	b->p = realloc(b->p, cap);
	if (!b->p)
		abort();
	b->cap = cap;
}

void xb_raw(struct xb *b, const void *data, size_t len)
{
	xb_reserve(b, len);
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
}

void xb_u32(struct xb *b, uint32_t v)
{
	uint32_t n = htonl(v);

	xb_raw(b, &n, 4);
}

void xb_u64(struct xb *b, uint64_t v)
{
	xb_u32(b, (uint32_t)(v >> 32));
	xb_u32(b, (uint32_t)v);
}

void xb_opaque(struct xb *b, const void *data, uint32_t len)
{
	static const uint8_t zero[4];

	xb_u32(b, len);
	xb_raw(b, data, len);
	xb_raw(b, zero, (4 - (len & 3)) & 3);
}

void xb_string(struct xb *b, const char *s)
{
	xb_opaque(b, s, (uint32_t)strlen(s));
}

/* RFC 5531 §9 call_body up to (not including) the credential. */
static void xb_call_start(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	xb_u32(b, xid);
	xb_u32(b, 0); /* CALL */
	xb_u32(b, 2); /* rpcvers */
	xb_u32(b, prog);
	xb_u32(b, vers);
	xb_u32(b, proc);
}

void xb_call_header(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		    uint32_t uid, uint32_t gid)
{
	struct xb cred;

	xb_call_start(b, xid, prog, vers, proc);
	/* RFC 5531 appendix A: authsys_parms */
	xb_init(&cred);
	xb_u32(&cred, (uint32_t)time(NULL));
	xb_string(&cred, "rnfsd-it");
	xb_u32(&cred, uid);
	xb_u32(&cred, gid);
	xb_u32(&cred, 0); /* no supplementary gids */
	xb_u32(b, 1);     /* AUTH_SYS */
	xb_opaque(b, cred.p, (uint32_t)cred.len);
	xb_free(&cred);
	xb_u32(b, 0); /* verifier AUTH_NONE */
	xb_u32(b, 0);
}

void xb_call_header_none(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	xb_call_start(b, xid, prog, vers, proc);
	xb_u32(b, 0); /* credential AUTH_NONE, empty */
	xb_u32(b, 0);
	xb_u32(b, 0); /* verifier AUTH_NONE, empty */
	xb_u32(b, 0);
}

/* ---- XDR decode -------------------------------------------------------- */

void xd_init(struct xd *d, const void *p, size_t len)
{
	d->p = p;
	d->len = len;
	d->pos = 0;
	d->bad = false;
}

uint32_t xd_u32(struct xd *d)
{
	uint32_t v;

	if (d->bad || d->len - d->pos < 4) {
		d->bad = true;
		return 0;
	}
	memcpy(&v, d->p + d->pos, 4);
	d->pos += 4;
	return ntohl(v);
}

uint64_t xd_u64(struct xd *d)
{
	uint64_t hi = xd_u32(d);

	return hi << 32 | xd_u32(d);
}

void xd_skip(struct xd *d, size_t n)
{
	if (d->bad || d->len - d->pos < n) {
		d->bad = true;
		return;
	}
	d->pos += n;
}

const uint8_t *xd_opaque(struct xd *d, uint32_t *len, uint32_t max)
{
	uint32_t n = xd_u32(d);
	size_t padded;
	const uint8_t *p;

	if (d->bad || n > max) {
		d->bad = true;
		return NULL;
	}
	padded = ((size_t)n + 3) & ~(size_t)3;
	if (d->len - d->pos < padded) {
		d->bad = true;
		return NULL;
	}
	p = d->p + d->pos;
	d->pos += padded;
	*len = n;
	return p;
}

/* ---- connection -------------------------------------------------------- */

static int raw_connect_from(struct raw_conn *c, uint16_t port, bool reserved, bool udp)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	int one = 1;
	unsigned p;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->udp = udp;
	c->io = NULL;
	c->fd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (c->fd < 0)
		return -1;
	if (!udp)
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (reserved) {
		src.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		for (p = 1023; p >= 512; p--) {
			src.sin_port = htons((uint16_t)p);
			if (bind(c->fd, (struct sockaddr *)&src, sizeof(src)) == 0)
				break;
		}
		if (p < 512) {
			close(c->fd);
			c->fd = -1;
			return -1;
		}
	}
	if (connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

int raw_connect(struct raw_conn *c, uint16_t port)
{
	return raw_connect_from(c, port, false, false);
}

int raw_connect_src(struct raw_conn *c, uint16_t port, const char *src)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in from = { .sin_family = AF_INET };
	int one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->udp = false;
	c->io = NULL;
	if (inet_pton(AF_INET, src, &from.sin_addr) != 1 || (c->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind(c->fd, (struct sockaddr *)&from, sizeof(from)) != 0 ||
	    connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

int raw_connect_reserved(struct raw_conn *c, uint16_t port)
{
	return raw_connect_from(c, port, true, false);
}

int raw_connect6(struct raw_conn *c, uint16_t port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int one = 1;

	c->udp = false;
	c->io = NULL;
	c->fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (c->fd < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&sin6, sizeof(sin6)) != 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

int raw_udp_connect(struct raw_conn *c, uint16_t port, bool reserved)
{
	return raw_connect_from(c, port, reserved, true);
}

void raw_close(struct raw_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int raw_send_bytes(struct raw_conn *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	ssize_t n;

	while (len) {
		n = c->io ? c->io->send(c->io_arg, p, len) : send(c->fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int raw_send_fragment(struct raw_conn *c, const void *data, size_t len, bool last)
{
	uint32_t mark = htonl((uint32_t)len | (last ? 0x80000000u : 0));

	if (raw_send_bytes(c, &mark, 4) != 0)
		return -1;
	return raw_send_bytes(c, data, len);
}

int raw_send_record(struct raw_conn *c, const void *data, size_t len)
{
	if (c->udp) /* RFC 5531: one message per datagram, no record mark */
		return send(c->fd, data, len, 0) == (ssize_t)len ? 0 : -1;
	return raw_send_fragment(c, data, len, true);
}

static long long raw_ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Exactly len bytes before the deadline. */
static enum raw_recv_result raw_read_full(struct raw_conn *c, void *buf, size_t len, long long deadline)
{
	uint8_t *p = buf;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	long long left;
	ssize_t n;

	while (len) {
		left = deadline - raw_ms_now();
		if (left <= 0)
			return RAW_RECV_TIMEOUT;
		n = c->io && c->io->pending(c->io_arg) ? 1 : poll(&pfd, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			return RAW_RECV_TIMEOUT;
		n = c->io ? c->io->recv(c->io_arg, p, len) : recv(c->fd, p, len, 0);
		if (n == 0)
			return RAW_RECV_CLOSED;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return RAW_RECV_CLOSED;
		}
		p += n;
		len -= (size_t)n;
	}
	return RAW_RECV_OK;
}

/* One datagram before the deadline (UDP: a record is a datagram). */
static enum raw_recv_result raw_recv_datagram(struct raw_conn *c, uint8_t **buf, size_t *len, long long deadline)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	uint8_t *out = malloc(65536);
	ssize_t n;

	if (!out)
		abort();
	for (;;) {
		long long left = deadline - raw_ms_now();
		int pr = left > 0 ? poll(&pfd, 1, (int)left) : 0;

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			free(out);
			return RAW_RECV_TIMEOUT;
		}
		n = recv(c->fd, out, 65536, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(out);
			return errno == ECONNREFUSED ? RAW_RECV_CLOSED : RAW_RECV_ERROR;
		}
		*buf = out;
		*len = (size_t)n;
		return RAW_RECV_OK;
	}
}

enum raw_recv_result raw_recv_record(struct raw_conn *c, uint8_t **buf, size_t *len, int timeout_ms)
{
	long long deadline = raw_ms_now() + timeout_ms;
	enum raw_recv_result r;
	uint8_t *out = NULL;
	size_t total = 0;
	uint32_t mark, flen;
	bool last = false;

	if (c->udp)
		return raw_recv_datagram(c, buf, len, deadline);
	/* The record's first byte within timeout_ms; then, its bytes being consumed, the rest too (a
	 * short poll, such as a callback service's 100 ms, otherwise lost a record's body on a loaded
	 * machine and read it as the next record mark: it_nfs4_ga_soak under TSan). */
	r = raw_read_full(c, &mark, 1, deadline);
	if (r != RAW_RECV_OK)
		goto fail;
	if (deadline < raw_ms_now() + RAW_RECORD_FINISH_MS)
		deadline = raw_ms_now() + RAW_RECORD_FINISH_MS;
	for (size_t have = 1; !last; have = 0) {
		r = raw_read_full(c, (uint8_t *)&mark + have, 4 - have, deadline);
		if (r != RAW_RECV_OK)
			goto fail;
		mark = ntohl(mark);
		last = mark & 0x80000000u;
		flen = mark & 0x7fffffffu;
		if (total + flen > 64u * 1024 * 1024) {
			r = RAW_RECV_ERROR;
			goto fail;
		}
		out = realloc(out, total + flen + 1);
		if (!out)
			abort();
		r = raw_read_full(c, out + total, flen, deadline);
		if (r != RAW_RECV_OK)
			goto fail;
		total += flen;
	}
	*buf = out;
	*len = total;
	return RAW_RECV_OK;
fail:
	free(out);
	*buf = NULL;
	*len = 0;
	return r;
}

enum raw_recv_result raw_decode_reply(struct raw_reply *r, uint8_t *buf, size_t len)
{
	struct xd d;
	uint32_t vlen;

	memset(r, 0, sizeof(*r));
	r->buf = buf;
	xd_init(&d, r->buf, len);
	r->xid = xd_u32(&d);
	r->msg_type = xd_u32(&d);
	r->reply_stat = xd_u32(&d);
	if (r->reply_stat == 0) {
		r->verf_flavor = xd_u32(&d);
		r->verf = xd_opaque(&d, &vlen, 400);
		r->verf_len = vlen;
		r->accept_stat = xd_u32(&d);
		if (r->accept_stat == 2) { /* PROG_MISMATCH */
			r->low = xd_u32(&d);
			r->high = xd_u32(&d);
		}
	} else {
		r->reject_stat = xd_u32(&d);
		if (r->reject_stat == 0) {
			r->low = xd_u32(&d);
			r->high = xd_u32(&d);
		} else {
			r->auth_stat = xd_u32(&d);
		}
	}
	if (d.bad || r->msg_type != 1)
		return RAW_RECV_ERROR;
	xd_init(&r->body, d.p + d.pos, d.len - d.pos);
	return RAW_RECV_OK;
}

enum raw_recv_result raw_recv_reply(struct raw_conn *c, struct raw_reply *r, int timeout_ms)
{
	enum raw_recv_result rr;
	uint8_t *buf = NULL;
	size_t len;

	memset(r, 0, sizeof(*r));
	rr = raw_recv_record(c, &buf, &len, timeout_ms);
	if (rr != RAW_RECV_OK)
		return rr;
	return raw_decode_reply(r, buf, len);
}

void raw_reply_free(struct raw_reply *r)
{
	free(r->buf);
	r->buf = NULL;
}

enum raw_recv_result raw_call(struct raw_conn *c, uint32_t xid, uint32_t prog, uint32_t vers,
			      uint32_t proc, const void *args, size_t args_len, struct raw_reply *r)
{
	return raw_call_as(c, xid, prog, vers, proc, 0, 0, args, args_len, r);
}

/* Send header b (consumed) + args as one record, receive the reply. */
static enum raw_recv_result raw_call_with(struct raw_conn *c, struct xb *b, const void *args,
					  size_t args_len, struct raw_reply *r)
{
	int rc;

	xb_raw(b, args, args_len);
	rc = raw_send_record(c, b->p, b->len);
	xb_free(b);
	memset(r, 0, sizeof(*r));
	if (rc != 0)
		return RAW_RECV_CLOSED;
	return raw_recv_reply(c, r, 10000);
}

enum raw_recv_result raw_call_as(struct raw_conn *c, uint32_t xid, uint32_t prog, uint32_t vers,
				 uint32_t proc, uint32_t uid, uint32_t gid, const void *args,
				 size_t args_len, struct raw_reply *r)
{
	struct xb b;

	xb_init(&b);
	xb_call_header(&b, xid, prog, vers, proc, uid, gid);
	return raw_call_with(c, &b, args, args_len, r);
}

enum raw_recv_result raw_call_none(struct raw_conn *c, uint32_t xid, uint32_t prog, uint32_t vers,
				   uint32_t proc, const void *args, size_t args_len, struct raw_reply *r)
{
	struct xb b;

	xb_init(&b);
	xb_call_header_none(&b, xid, prog, vers, proc);
	return raw_call_with(c, &b, args, args_len, r);
}

int raw_nlm4_lock(struct raw_conn *c, uint32_t xid, uint32_t proc, const uint8_t *fh, uint32_t fh_len,
		  const char *host, int32_t svid, uint64_t off, uint64_t len)
{
	char oh[128];
	struct raw_reply r;
	struct xb b;
	uint32_t n;
	int st = -1;

	snprintf(oh, sizeof(oh), "oh@%s", host);
	xb_init(&b);
	xb_opaque(&b, "c", 1); /* cookie */
	if (proc == 2)
		xb_u32(&b, 0); /* block */
	xb_u32(&b, 1);         /* exclusive */
	xb_string(&b, host);
	xb_opaque(&b, fh, fh_len);
	xb_string(&b, oh);
	xb_u32(&b, (uint32_t)svid);
	xb_u64(&b, off);
	xb_u64(&b, len);
	if (proc == 2) {
		xb_u32(&b, 0); /* reclaim */
		xb_u32(&b, 1); /* state */
	}
	if (raw_call(c, xid, 100021u /* NLM */, 4, proc, b.p, b.len, &r) == RAW_RECV_OK) {
		if (r.reply_stat == 0 && r.accept_stat == 0) {
			xd_opaque(&r.body, &n, 1024); /* cookie */
			st = (int)xd_u32(&r.body);
		}
		raw_reply_free(&r);
	}
	xb_free(&b);
	return st;
}

int raw_mnt(struct raw_conn *c, uint32_t xid, const char *path, uint8_t *fh, uint32_t *fh_len)
{
	struct raw_reply r;
	struct xb a;
	const uint8_t *p;
	uint32_t st, n;

	xb_init(&a);
	xb_string(&a, path);
	if (raw_call(c, xid, RAW_MOUNT_PROG, 3, 1, a.p, a.len, &r) != RAW_RECV_OK) {
		xb_free(&a);
		raw_reply_free(&r);
		return -1;
	}
	xb_free(&a);
	if (r.reply_stat != 0 || r.accept_stat != 0) {
		raw_reply_free(&r);
		return -1;
	}
	st = xd_u32(&r.body);
	if (st == 0) {
		p = xd_opaque(&r.body, &n, 64);
		if (!p) {
			raw_reply_free(&r);
			return -1;
		}
		memcpy(fh, p, n);
		*fh_len = n;
	}
	raw_reply_free(&r);
	return (int)st;
}

int raw_lookup3(struct raw_conn *c, uint32_t xid, const uint8_t *dir, uint32_t dir_len, const char *name,
		uint8_t *fh, uint32_t *fh_len)
{
	struct raw_reply r;
	struct xb a;
	const uint8_t *p;
	int st = -1;
	uint32_t n;

	xb_init(&a);
	xb_opaque(&a, dir, dir_len);
	xb_string(&a, name);
	if (raw_call(c, xid, RAW_NFS_PROG, 3, 3 /* LOOKUP */, a.p, a.len, &r) == RAW_RECV_OK) {
		if (r.reply_stat == 0 && r.accept_stat == 0) {
			st = (int)xd_u32(&r.body);
			if (st == 0 && (p = xd_opaque(&r.body, &n, 64)) != NULL) {
				memcpy(fh, p, n);
				*fh_len = n;
			} else if (st == 0) {
				st = -1;
			}
		}
		raw_reply_free(&r);
	}
	xb_free(&a);
	return st;
}
