/*
 * nlm_cb.c - calls to clients' lock managers (nlm_cb.h): a pool of call
 * slots filled from any thread, sent from the loop thread. Per client host
 * (a small table, kept): a channel to its rpcbind for the lockd port
 * (RFC 1833 §3.2 PMAPPROC_GETPORT, program 100021 version 4, IPPROTO_TCP)
 * and a channel to its lockd. A failed lockd call forgets the port, so the
 * next call asks rpcbind again (the client's lockd may have restarted).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nlm/nlm_cb.h"
#include "nlm/nlm4_xdr.h"
#include "core/log.h"
#include "core/loop.h"
#include "rpc/rpc_clnt.h"
#include "transport/tcp_clnt.h"

#define NLM_CB_PEERS 64u
#define PMAP_PROG 100000u /* RFC 1833 §3: portmapper version 2 */
#define PMAP_VERS 2u
#define PMAP_GETPORT 3u
#define CB_MSG_MAX (NLM_CB_BODY_MAX + 512u)

enum cb_state { CB_FREE = 0, CB_NEW, CB_WAIT_PORT, CB_SENT };

struct cb_peer {
	bool used;
	struct sockaddr_in addr; /* port 0 */
	uint32_t prog, vers;     /* the service on that host */
	struct tcp_clnt *rpcb, *lockd;
	uint16_t port;    /* the client's lockd port, 0: unknown */
	bool getport_busy;
	bool lockd_stale; /* a call failed: drop the channel and ask rpcbind again */
	struct rpc_clnt_call cc;
	uint8_t msg[256];
	uint64_t last_use;
};

struct cb_slot {
	enum cb_state st;
	struct sockaddr_in peer;
	uint32_t prog, vers, proc;
	size_t len;
	nlm_cb_done_fn done;
	uint64_t tag;
	struct cb_peer *p;
	struct rpc_clnt_call cc;
	uint8_t body[NLM_CB_BODY_MAX];
	uint8_t msg[CB_MSG_MAX];
};

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static struct loop *cb_loop;
static struct loop_ev *cb_async;
static struct cb_slot *cb_slots;
static unsigned cb_nslots;
static struct cb_peer cb_peers[NLM_CB_PEERS];
static uint16_t cb_rpcbind_port = 111;
static struct nlm_cb_stats cb_stats;
static uint64_t cb_clock;
static struct log_limit cb_limit;

/* Timeouts: knfsd gives a GRANTED callback a few tries, then retries later. */
static const struct tcp_clnt_params cb_params = {
	.rpc = { .timeout_ms = 2000, .max_timeout_ms = 8000, .retries = 2 },
	.max_record = 4096,
	.send_buf = 64 * 1024,
	.connect_timeout_ms = 3000,
	.reconnect_delay_ms = 500,
	.reconnect_max = 2,
};

static const struct rpc_cred cb_cred = { .flavor = RPC_AUTH_SYS }; /* root, as knfsd's lockd calls */

void nlm_cb_set_rpcbind_port(uint16_t port)
{
	cb_rpcbind_port = port;
}

void nlm_cb_stats(struct nlm_cb_stats *out)
{
	pthread_mutex_lock(&cb_mu);
	*out = cb_stats;
	pthread_mutex_unlock(&cb_mu);
}

/* The IPv4 address of peer (an IPv4-mapped IPv6 address too); false otherwise. */
static bool cb_v4(const struct sockaddr *peer, socklen_t len, struct sockaddr_in *out)
{
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	if (peer->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		out->sin_addr = ((const struct sockaddr_in *)peer)->sin_addr;
		return true;
	}
	if (peer->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)peer)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(&out->sin_addr, &a->s6_addr[12], 4);
			return true;
		}
	}
	return false;
}

int nlm_cb_send(const struct sockaddr *peer, socklen_t peer_len, uint32_t prog, uint32_t vers, uint32_t proc,
		const uint8_t *body, size_t len, nlm_cb_done_fn done, uint64_t tag)
{
	struct sockaddr_in a;
	int rc = -1;

	if (len > NLM_CB_BODY_MAX || !cb_v4(peer, peer_len, &a)) {
		log_limited(&cb_limit, LOG_NOTICE, "nlm: cannot call back this client (IPv6 or oversized call)");
		return -1;
	}
	pthread_mutex_lock(&cb_mu);
	for (unsigned i = 0; cb_async && i < cb_nslots; i++) {
		struct cb_slot *s = &cb_slots[i];

		if (s->st != CB_FREE)
			continue;
		s->st = CB_NEW;
		s->peer = a;
		s->prog = prog;
		s->vers = vers;
		s->proc = proc;
		s->len = len;
		memcpy(s->body, body, len);
		s->done = done;
		s->tag = tag;
		s->p = NULL;
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&cb_mu);
	if (rc == 0)
		loop_ev_trigger(cb_async);
	return rc;
}

/* Loop thread: finish slot s (res: the results, NULL when the call failed). */
static void cb_finish(struct cb_slot *s, struct xdr_dec *res)
{
	nlm_cb_done_fn done = s->done;
	uint64_t tag = s->tag;

	pthread_mutex_lock(&cb_mu);
	s->st = CB_FREE;
	if (!res)
		cb_stats.failed++;
	else
		cb_stats.ok++;
	pthread_mutex_unlock(&cb_mu);
	if (done)
		done(tag, res != NULL, res);
}

static void cb_call_done(struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	struct cb_slot *s = cc->arg;
	struct cb_peer *p = s->p; /* s may be reused once finished */

	if (st != RPC_CLNT_OK) {
		char a[INET_ADDRSTRLEN];

		log_limited(&cb_limit, LOG_NOTICE, "nlm: call %u/%u/%u to %s: %s", s->prog, s->vers, s->proc,
			    inet_ntop(AF_INET, &s->peer.sin_addr, a, sizeof(a)), rpc_clnt_status_name(st));
		p->lockd_stale = true;
	}
	cb_finish(s, st == RPC_CLNT_OK ? &cc->res : NULL);
	if (p->lockd_stale && cb_async)
		loop_ev_trigger(cb_async);
}

static void cb_send_call(struct cb_slot *s)
{
	struct cb_peer *p = s->p;

	rpc_clnt_call_init(&s->cc, s->msg, sizeof(s->msg), s->prog, s->vers, s->proc, &cb_cred);
	xdr_enc_fixed(&s->cc.args, s->body, s->len);
	s->cc.done = cb_call_done;
	s->cc.arg = s;
	s->st = CB_SENT;
	if (!p->lockd) {
		struct sockaddr_in a = p->addr;

		a.sin_port = htons(p->port);
		p->lockd = tcp_clnt_new(cb_loop, (const struct sockaddr *)&a, sizeof(a), &cb_params);
	}
	pthread_mutex_lock(&cb_mu);
	cb_stats.sent++;
	pthread_mutex_unlock(&cb_mu);
	if (!p->lockd || tcp_clnt_call(p->lockd, &s->cc) != 0)
		cb_finish(s, NULL);
}

/* Every slot waiting for p's port: send, or fail when there is none. */
static void cb_port_known(struct cb_peer *p)
{
	for (unsigned i = 0; i < cb_nslots; i++) {
		struct cb_slot *s = &cb_slots[i];

		if (s->st != CB_WAIT_PORT || s->p != p)
			continue;
		if (p->port)
			cb_send_call(s);
		else
			cb_finish(s, NULL);
	}
}

static void cb_getport_done(struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	struct cb_peer *p = cc->arg;
	uint32_t port = 0;

	p->getport_busy = false;
	/* RFC 1833 §3.2: GETPORT answers the port, 0 when the program is not registered */
	if (st != RPC_CLNT_OK || !xdr_dec_u32(&cc->res, &port) || port > 65535) {
		char a[INET_ADDRSTRLEN];

		log_limited(&cb_limit, LOG_NOTICE, "nlm: rpcbind of %s: no port for program %u version %u (%s)",
			    inet_ntop(AF_INET, &p->addr.sin_addr, a, sizeof(a)), p->prog, p->vers,
			    rpc_clnt_status_name(st));
		port = 0;
	}
	p->port = (uint16_t)port;
	cb_port_known(p);
}

static void cb_getport(struct cb_peer *p)
{
	if (p->getport_busy)
		return;
	if (!p->rpcb) {
		struct sockaddr_in a = p->addr;

		a.sin_port = htons(cb_rpcbind_port);
		p->rpcb = tcp_clnt_new(cb_loop, (const struct sockaddr *)&a, sizeof(a), &cb_params);
		if (!p->rpcb) {
			cb_port_known(p);
			return;
		}
	}
	rpc_clnt_call_init(&p->cc, p->msg, sizeof(p->msg), PMAP_PROG, PMAP_VERS, PMAP_GETPORT, NULL);
	/* RFC 1833 §3.1 struct mapping: prog, vers, prot, port */
	xdr_enc_u32(&p->cc.args, p->prog);
	xdr_enc_u32(&p->cc.args, p->vers);
	xdr_enc_u32(&p->cc.args, IPPROTO_TCP);
	xdr_enc_u32(&p->cc.args, 0);
	p->cc.done = cb_getport_done;
	p->cc.arg = p;
	p->getport_busy = true;
	if (tcp_clnt_call(p->rpcb, &p->cc) != 0) {
		p->getport_busy = false;
		cb_port_known(p);
	}
}

static void cb_peer_drop(struct cb_peer *p)
{
	if (p->lockd)
		tcp_clnt_free(p->lockd);
	if (p->rpcb)
		tcp_clnt_free(p->rpcb);
	memset(p, 0, sizeof(*p));
}

/* The peer entry of s's host and program (a new one, evicting the least recently used idle one). */
static struct cb_peer *cb_peer_get(const struct cb_slot *s)
{
	const struct sockaddr_in *a = &s->peer;
	struct cb_peer *victim = NULL;

	for (unsigned i = 0; i < NLM_CB_PEERS; i++) {
		struct cb_peer *p = &cb_peers[i];

		if (p->used && p->addr.sin_addr.s_addr == a->sin_addr.s_addr && p->prog == s->prog &&
		    p->vers == s->vers) {
			p->last_use = ++cb_clock;
			return p;
		}
		if (!p->used && !victim)
			victim = p;
	}
	for (unsigned i = 0; !victim && i < NLM_CB_PEERS; i++) {
		bool busy = cb_peers[i].getport_busy;

		for (unsigned j = 0; !busy && j < cb_nslots; j++)
			busy = cb_slots[j].st >= CB_WAIT_PORT && cb_slots[j].p == &cb_peers[i];
		if (!busy && (!victim || cb_peers[i].last_use < victim->last_use))
			victim = &cb_peers[i];
	}
	if (!victim)
		return NULL;
	cb_peer_drop(victim);
	victim->used = true;
	victim->addr = *a;
	victim->prog = s->prog;
	victim->vers = s->vers;
	victim->last_use = ++cb_clock;
	return victim;
}

/* Loop thread: drop failed lockd channels, then start what is new. */
static void cb_kick(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	for (unsigned i = 0; i < NLM_CB_PEERS; i++) {
		struct cb_peer *p = &cb_peers[i];
		bool busy = false;

		for (unsigned j = 0; p->lockd_stale && !busy && j < cb_nslots; j++)
			busy = cb_slots[j].st == CB_SENT && cb_slots[j].p == p;
		if (p->lockd_stale && !busy) {
			tcp_clnt_free(p->lockd);
			p->lockd = NULL;
			p->port = 0;
			p->lockd_stale = false;
		}
	}
	for (unsigned i = 0; i < cb_nslots; i++) {
		struct cb_slot *s = &cb_slots[i];
		enum cb_state st;

		pthread_mutex_lock(&cb_mu);
		st = s->st;
		pthread_mutex_unlock(&cb_mu);
		if (st != CB_NEW)
			continue;
		s->p = cb_peer_get(s);
		if (!s->p) {
			cb_finish(s, NULL);
			continue;
		}
		if (s->p->port && !s->p->lockd_stale) {
			cb_send_call(s);
			continue;
		}
		s->st = CB_WAIT_PORT;
		cb_getport(s->p);
	}
}

int nlm_cb_init(struct loop *loop, unsigned slots)
{
	/* Tests only (tests/integration/test_nlm.c): the client's rpcbind is the test's own. */
	const char *port = getenv("RNFSD_TEST_NLM_RPCBIND_PORT");

	if (port && atoi(port) > 0 && atoi(port) < 65536)
		cb_rpcbind_port = (uint16_t)atoi(port);
	cb_slots = calloc(slots, sizeof(*cb_slots));
	if (!cb_slots) {
		log_err("nlm: no memory for %u callback slots", slots);
		return -1;
	}
	cb_loop = loop;
	cb_nslots = slots;
	cb_async = loop_async(loop, cb_kick, NULL);
	if (!cb_async) {
		log_err("nlm: cannot create the callback event");
		free(cb_slots);
		cb_slots = NULL;
		return -1;
	}
	return 0;
}

void nlm_cb_shutdown(void)
{
	pthread_mutex_lock(&cb_mu);
	struct loop_ev *ev = cb_async;

	cb_async = NULL;
	for (unsigned i = 0; i < cb_nslots; i++)
		cb_slots[i].done = NULL; /* a completion from tcp_clnt_free() reaches nobody */
	pthread_mutex_unlock(&cb_mu);
	for (unsigned i = 0; i < NLM_CB_PEERS; i++)
		cb_peer_drop(&cb_peers[i]);
	if (ev)
		loop_ev_free(ev);
	free(cb_slots);
	cb_slots = NULL;
	cb_nslots = 0;
}
