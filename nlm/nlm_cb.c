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
#include "transport/sock_addr.h"
#include "transport/tcp_clnt.h"

#define NLM_CB_PEERS 64u
#define PMAP_PROG 100000u /* RFC 1833 §3: portmapper version 2 */
#define PMAP_VERS 2u
#define PMAP_GETPORT 3u
#define CB_MSG_MAX (NLM_CB_BODY_MAX + 512u)

enum cb_state { CB_FREE = 0, CB_NEW, CB_WAIT_PORT, CB_SENT };

struct cb_peer {
	bool used;
	struct sockaddr_storage addr; /* IPv4 or IPv6, port 0 */
	socklen_t addr_len;
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
	struct sockaddr_storage peer;
	socklen_t peer_len;
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

/* peer as the address to call back, port 0: IPv4 (an IPv4-mapped IPv6
 * address made plain IPv4, so it finds the portmapper) or IPv6; false otherwise. */
static bool cb_addr(const struct sockaddr *peer, socklen_t len, struct sockaddr_storage *out, socklen_t *out_len)
{
	memset(out, 0, sizeof(*out));
	if (peer->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in *o = (struct sockaddr_in *)out;

		o->sin_family = AF_INET;
		o->sin_addr = ((const struct sockaddr_in *)peer)->sin_addr;
		*out_len = sizeof(*o);
		return true;
	}
	if (peer->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *p6 = (const struct sockaddr_in6 *)peer;

		if (IN6_IS_ADDR_V4MAPPED(&p6->sin6_addr)) {
			struct sockaddr_in *o = (struct sockaddr_in *)out;

			o->sin_family = AF_INET;
			memcpy(&o->sin_addr, &p6->sin6_addr.s6_addr[12], 4);
			*out_len = sizeof(*o);
		} else {
			struct sockaddr_in6 *o = (struct sockaddr_in6 *)out;

			o->sin6_family = AF_INET6;
			o->sin6_addr = p6->sin6_addr;
			o->sin6_scope_id = p6->sin6_scope_id; /* link-local clients */
			*out_len = sizeof(*o);
		}
		return true;
	}
	return false;
}

static bool cb_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
		       sizeof(struct in6_addr)) &&
	       ((const struct sockaddr_in6 *)a)->sin6_scope_id == ((const struct sockaddr_in6 *)b)->sin6_scope_id;
}

/* addr with port: a copy for connecting. */
static struct sockaddr_storage cb_with_port(const struct sockaddr_storage *addr, uint16_t port)
{
	struct sockaddr_storage a = *addr;

	if (a.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&a)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&a)->sin_port = htons(port);
	return a;
}

int nlm_cb_send(const struct sockaddr *peer, socklen_t peer_len, uint32_t prog, uint32_t vers, uint32_t proc,
		const uint8_t *body, size_t len, nlm_cb_done_fn done, uint64_t tag)
{
	struct sockaddr_storage a;
	socklen_t alen;
	int rc = -1;

	if (len > NLM_CB_BODY_MAX || !cb_addr(peer, peer_len, &a, &alen)) {
		log_limited(&cb_limit, LOG_NOTICE, "nlm: cannot call back this client (not IP, or oversized call)");
		return -1;
	}
	pthread_mutex_lock(&cb_mu);
	for (unsigned i = 0; cb_async && i < cb_nslots; i++) {
		struct cb_slot *s = &cb_slots[i];

		if (s->st != CB_FREE)
			continue;
		s->st = CB_NEW;
		s->peer = a;
		s->peer_len = alen;
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
		char a[64];

		sock_addr_name(&s->peer, a, sizeof(a));
		log_limited(&cb_limit, LOG_NOTICE, "nlm: call %u/%u/%u to %s: %s", s->prog, s->vers, s->proc, a,
			    rpc_clnt_status_name(st));
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
		struct sockaddr_storage a = cb_with_port(&p->addr, p->port);

		p->lockd = tcp_clnt_new(cb_loop, (const struct sockaddr *)&a, p->addr_len, &cb_params);
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
	uint16_t port16 = 0;
	bool ok;

	p->getport_busy = false;
	if (p->addr.ss_family == AF_INET6) /* RFC 1833 §2.2.1: a universal address, "" when not registered */
		ok = st == RPC_CLNT_OK && rpcb_dec_uaddr_port(&cc->res, &port16);
	else if ((ok = st == RPC_CLNT_OK && xdr_dec_u32(&cc->res, &port) && port <= 65535))
		port16 = (uint16_t)port; /* §3.2: GETPORT answers the port, 0 when the program is not registered */
	if (!ok || port16 == 0) {
		char a[64];

		sock_addr_name(&p->addr, a, sizeof(a));
		log_limited(&cb_limit, LOG_NOTICE, "nlm: rpcbind of %s: no port for program %u version %u (%s)", a,
			    p->prog, p->vers, rpc_clnt_status_name(st));
		port16 = 0;
	}
	p->port = port16;
	cb_port_known(p);
}

static void cb_getport(struct cb_peer *p)
{
	if (p->getport_busy)
		return;
	if (!p->rpcb) {
		struct sockaddr_storage a = cb_with_port(&p->addr, cb_rpcbind_port);

		p->rpcb = tcp_clnt_new(cb_loop, (const struct sockaddr *)&a, p->addr_len, &cb_params);
		if (!p->rpcb) {
			cb_port_known(p);
			return;
		}
	}
	if (p->addr.ss_family == AF_INET6) {
		rpc_clnt_call_init(&p->cc, p->msg, sizeof(p->msg), RPCB_PROG, RPCB_VERS4, RPCBPROC_GETADDR, NULL);
		rpcb_enc_getaddr(&p->cc.args, p->prog, p->vers, "tcp6");
	} else {
		rpc_clnt_call_init(&p->cc, p->msg, sizeof(p->msg), PMAP_PROG, PMAP_VERS, PMAP_GETPORT, NULL);
		/* RFC 1833 §3.1 struct mapping: prog, vers, prot, port */
		xdr_enc_u32(&p->cc.args, p->prog);
		xdr_enc_u32(&p->cc.args, p->vers);
		xdr_enc_u32(&p->cc.args, IPPROTO_TCP);
		xdr_enc_u32(&p->cc.args, 0);
	}
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
	struct cb_peer *victim = NULL;

	for (unsigned i = 0; i < NLM_CB_PEERS; i++) {
		struct cb_peer *p = &cb_peers[i];

		if (p->used && cb_same_host(&p->addr, &s->peer) && p->prog == s->prog && p->vers == s->vers) {
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
	victim->addr = s->peer;
	victim->addr_len = s->peer_len;
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
