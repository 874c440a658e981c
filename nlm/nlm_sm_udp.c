/*
 * nlm_sm_udp.c - the loopback UDP socket for rpc.statd's reboot
 * notifications (nlm_sm_udp.h). The datagram is answered on the loop thread
 * (decoding only); the release of the host's locks, which makes backend
 * calls, is queued to NLM's retry thread (nlm_svc.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nlm/nlm_sm_udp.h"
#include "nlm/nlm_internal.h"
#include "core/log.h"
#include "core/loop.h"

#define SM_UDP_MAX 2048u /* statd's MAXMSGSIZE */

static int sm_fd = -1;
static struct loop_ev *sm_ev;
static struct log_limit sm_limit;

/* RFC 5531 §9: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, accept_stat. */
static void sm_reply(struct xdr_enc *e, uint32_t xid, uint32_t accept_stat)
{
	xdr_enc_u32(e, xid);
	xdr_enc_u32(e, RPC_MSG_REPLY);
	xdr_enc_u32(e, RPC_MSG_ACCEPTED);
	xdr_enc_u32(e, RPC_AUTH_NONE);
	xdr_enc_u32(e, 0);
	xdr_enc_u32(e, accept_stat);
}

bool nlm_sm_udp_answer(const uint8_t *msg, size_t len, uint8_t *out, size_t cap, size_t *out_len,
		       struct nsm_status_args *notify, bool *is_notify)
{
	uint32_t xid, type, rpcvers, prog, vers, proc, flavor, n;
	const uint8_t *p;
	struct xdr_dec d;
	struct xdr_enc e;
	uint32_t st = RPC_SUCCESS;

	*is_notify = false;
	xdr_dec_init(&d, msg, len);
	/* RFC 5531 §9 call_body; §8.2: credential and verifier bodies <= 400 bytes */
	if (!xdr_dec_u32(&d, &xid) || !xdr_dec_u32(&d, &type) || type != RPC_MSG_CALL ||
	    !xdr_dec_u32(&d, &rpcvers) || rpcvers != 2 || !xdr_dec_u32(&d, &prog) || !xdr_dec_u32(&d, &vers) ||
	    !xdr_dec_u32(&d, &proc) || !xdr_dec_u32(&d, &flavor) ||
	    !xdr_dec_opaque(&d, RPC_AUTH_MAX_BYTES, &p, &n) || !xdr_dec_u32(&d, &flavor) ||
	    !xdr_dec_opaque(&d, RPC_AUTH_MAX_BYTES, &p, &n))
		return false;
	xdr_enc_init(&e, out, cap);
	if (prog != NLM_PROGRAM)
		st = RPC_PROG_UNAVAIL;
	else if (vers != NLM4_VERSION)
		st = RPC_PROG_MISMATCH;
	else if (proc != NLM4_NULL && proc != NLM4_NSM_NOTIFY)
		st = RPC_PROC_UNAVAIL;
	else if (proc == NLM4_NSM_NOTIFY && !nsm_dec_status(&d, notify))
		st = RPC_GARBAGE_ARGS;
	else
		*is_notify = proc == NLM4_NSM_NOTIFY;
	sm_reply(&e, xid, st);
	if (st == RPC_PROG_MISMATCH) {
		xdr_enc_u32(&e, NLM4_VERSION); /* low, high */
		xdr_enc_u32(&e, NLM4_VERSION);
	}
	*out_len = xdr_enc_len(&e);
	return !e.overflow;
}

static void sm_readable(int fd, short what, void *arg)
{
	uint8_t in[SM_UDP_MAX], out[64];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	struct nsm_status_args a;
	size_t olen;
	bool is_notify;
	ssize_t n;

	(void)what;
	(void)arg;
	n = recvfrom(fd, in, sizeof(in), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	if (n <= 0 || fl < sizeof(from) || from.sin_family != AF_INET)
		return;
	if (!nlm_sm_udp_answer(in, (size_t)n, out, sizeof(out), &olen, &a, &is_notify))
		return;
	/* XNFS §11: only the local statd, which binds a reserved port, may say a host rebooted */
	if (is_notify && ntohs(from.sin_port) < 1024 && (ntohl(from.sin_addr.s_addr) >> 24) == 127)
		nlm_notify_queue(&a);
	else if (is_notify)
		log_limited(&sm_limit, LOG_NOTICE, "nlm: udp reboot notification from port %u ignored",
			    ntohs(from.sin_port));
	(void)sendto(fd, out, olen, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
}

int nlm_sm_udp_start(struct loop *loop, uint16_t want_port, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(want_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	sm_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sm_fd < 0 || bind(sm_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(sm_fd, (struct sockaddr *)&a, &al) != 0) {
		log_err("nlm: cannot bind the udp socket for rpc.statd's notifications: %s", strerror(errno));
		nlm_sm_udp_stop();
		return -1;
	}
	sm_ev = loop_io(loop, sm_fd, LOOP_READ | LOOP_PERSIST, sm_readable, NULL);
	if (!sm_ev || loop_ev_add(sm_ev, NULL) != 0) {
		log_err("nlm: cannot watch the udp socket");
		nlm_sm_udp_stop();
		return -1;
	}
	*port = ntohs(a.sin_port);
	log_info("nlm: rpc.statd's notifications on udp 127.0.0.1 port %u", *port);
	return 0;
}

void nlm_sm_udp_stop(void)
{
	if (sm_ev)
		loop_ev_free(sm_ev);
	sm_ev = NULL;
	if (sm_fd >= 0)
		close(sm_fd);
	sm_fd = -1;
}
