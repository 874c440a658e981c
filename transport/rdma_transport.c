/*
 * rdma_transport.c - one RPC-over-RDMA transport instance (struct rdma_xprt,
 * rpc/xprt.h's interface): its RDMA-CM event channel and listeners, the
 * devices and protection domains its connections share, the list of its
 * connections and the reap timer that frees closed ones, and its lifetime:
 * create, start, drain, stop, free. Connections themselves (accept, contexts,
 * close) are rdma_conn.c's. See rdma_xprt.h for the map of the verbs shell.
 *
 * Nothing is process-wide: every piece of state hangs off the struct
 * rdma_xprt, so several instances may run (tests start and stop their own).
 *
 * Graceful drain (rdma_xprt_drain): the listeners go away and connection
 * requests are refused; on each connection, calls that arrive from now on
 * are dropped unanswered (the client retransmits them after reconnecting, as
 * over TCP), calls already received run to the end and their replies are
 * sent; a connection whose last busy context came back (its last reply's
 * Send completed, so the client's adapter has it) is disconnected; when the
 * last connection is freed, done() is called.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/config.h"
#include "core/log.h"
#include "core/loop.h"
#include "transport/rdma.h"
#include "transport/rdma_xprt.h"

/* Connect and close lines: a client reconnecting in a loop must not flood the log. */
static struct log_limit lim_conn_event;
static struct log_limit lim_accept;

#define RDMA_LISTEN_BACKLOG 64
/* How long stop() polls for flushed work requests once the loop no longer runs. */
#define RDMA_STOP_FLUSH_S 2

static int rdma_xprt_op_start(struct xprt *base);
static void rdma_xprt_op_drain(struct xprt *base, void (*done)(void *arg), void *arg);
static void rdma_xprt_op_stop(struct xprt *base);
static void rdma_xprt_op_free(struct xprt *base);
static unsigned rdma_xprt_op_conns(const struct xprt *base);

static const struct xprt_ops rdma_xprt_ops = {
	.name = "rdma",
	.no_port_privilege = true, /* RDMA-CM ports: see xprt.h */
	.start = rdma_xprt_op_start,
	.drain = rdma_xprt_op_drain,
	.stop = rdma_xprt_op_stop,
	.free = rdma_xprt_op_free,
	.conns = rdma_xprt_op_conns,
	.send_reply = rdma_send_reply,
	.send_call = rdma_send_call,
	.conn_release = rdma_conn_release,
};

static struct rdma_xprt *rdma_of(struct xprt *base)
{
	return container_of(base, struct rdma_xprt, base);
}

int rdma_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- devices and their bulk pools ---- */

/* Bulk slots per registration: the pool grows by this many at a time. */
#define RDMA_POOL_CHUNK_SLOTS 16

/* rdma_pool's hook: one registration of a chunk of bulk slots. */
static int pool_reg(void *arg, struct rdma_pool_chunk *c)
{
	struct rdma_dev *d = arg;
	struct ibv_mr *mr;

	if (posix_memalign((void **)&c->mem, 4096, c->bytes)) {
		c->mem = NULL;
		log_err("rdma: bulk pool: cannot allocate %zu bytes", c->bytes);
		return -1;
	}
	mr = ibv_reg_mr(d->pd, c->mem, c->bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		log_err("rdma: bulk pool: cannot register %zu bytes (%s): the pool stays at %u slots",
			c->bytes, strerror(errno), d->pool.nslots);
		free(c->mem);
		c->mem = NULL;
		return -1;
	}
	c->handle = mr;
	c->lkey = mr->lkey;
	log_info("rdma: bulk pool: %u slots of %u bytes registered (bound %u)",
		 d->pool.nslots + (unsigned)(c->bytes / d->pool.slot_size), d->pool.slot_size, d->pool.max_slots);
	return 0;
}

static void pool_dereg(void *arg, struct rdma_pool_chunk *c)
{
	(void)arg;
	if (c->handle)
		ibv_dereg_mr(c->handle);
	free(c->mem);
	c->handle = NULL;
	c->mem = NULL;
}

void rdma_dev_pool_publish(struct rdma_dev *d)
{
	struct rdma_stats_mem *m = &rdma_stats_mem;
	const struct rdma_pool *p = &d->pool;

	stats_mem_move(&m->pool_max, &d->pub_max, d->pool_ok ? (uint64_t)p->max_slots * p->slot_size : 0);
	stats_mem_move(&m->pool_registered, &d->pub_reg, d->pool_ok ? rdma_pool_registered(p) : 0);
	stats_mem_move(&m->slot_size, &d->pub_slot, d->pool_ok ? p->slot_size : 0);
	stats_mem_move(&m->slots, &d->pub_slots, d->pool_ok ? p->nslots : 0);
	stats_mem_move(&m->in_use, &d->pub_in_use, d->pool_ok ? rdma_pool_in_use(p) : 0);
	stats_mem_move(&m->waiting, &d->pub_waiting, d->pool_ok ? p->nwaiters : 0);
	stats_mem_move(&m->waits, &d->pub_waits, d->pool_ok ? p->waits : 0);
}

struct rdma_dev *rdma_dev_get(struct rdma_xprt *x, struct ibv_context *verbs)
{
	struct rdma_dev *d;

	for (d = x->devs; d; d = d->next) {
		if (d->verbs == verbs) {
			d->refs++;
			return d;
		}
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->verbs = verbs;
	if (ibv_query_device(verbs, &d->attr)) {
		log_err("rdma: ibv_query_device: %s", strerror(errno));
		goto fail;
	}
	d->pd = ibv_alloc_pd(verbs);
	if (!d->pd) {
		log_err("rdma: ibv_alloc_pd: %s", strerror(errno));
		goto fail;
	}
	/* Nothing is registered until a call needs a bulk slot. */
	if (rdma_pool_init(&d->pool, x->buffer_pool, x->slot_size, RDMA_POOL_CHUNK_SLOTS, pool_reg, pool_dereg,
			   d)) {
		log_err("rdma: out of memory");
		ibv_dealloc_pd(d->pd);
		goto fail;
	}
	d->pool_ok = true;
	rdma_dev_pool_publish(d);
	d->refs = 1;
	d->next = x->devs;
	x->devs = d;
	struct rdma_pool_user u;
	rdma_pool_user_init(&d->pool, &u);
	log_info("rdma: device %s: max_qp_wr %d max_sge %d max_qp_init_rd_atom %d; bulk pool up to %u slots "
		 "of %u bytes, at most %u per connection",
		 ibv_get_device_name(verbs->device), d->attr.max_qp_wr, d->attr.max_sge,
		 d->attr.max_qp_init_rd_atom, d->pool.max_slots, d->pool.slot_size,
		 u.cap);
	return d;
fail:
	free(d);
	return NULL;
}

/* The PD stays until the transport is freed: devices come and go rarely,
 * and the next connection on the same device reuses it. */
void rdma_dev_put(struct rdma_dev *d)
{
	if (d && d->refs)
		d->refs--;
}

/* ---- the connection list and the reaper ---- */

void rdma_xprt_conn_add(struct rdma_xprt *x, struct rdma_conn *conn)
{
	conn->next = x->conns;
	x->conns = conn;
	__atomic_add_fetch(&x->nconns, 1, __ATOMIC_RELAXED);
}

static void conn_unlink(struct rdma_xprt *x, struct rdma_conn *conn)
{
	for (struct rdma_conn **pp = &x->conns; *pp; pp = &(*pp)->next) {
		if (*pp == conn) {
			*pp = conn->next;
			__atomic_sub_fetch(&x->nconns, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static void drain_check_done(struct rdma_xprt *x)
{
	if (x->draining && x->nconns == 0 && x->drain_done) {
		void (*done)(void *) = x->drain_done;
		x->drain_done = NULL;
		done(x->drain_arg);
	}
}

static void reap_cb(int fd, short what, void *arg)
{
	struct rdma_xprt *x = arg;
	struct rdma_conn *conn;

	(void)fd;
	(void)what;
	while ((conn = queue_pop_entry(&x->reap, struct rdma_conn, reap_link))) {
		log_limited(&lim_conn_event, LOG_INFO, "rdma: %s: connection closed", conn->rpc.peer_name);
		conn_unlink(x, conn);
		rdma_conn_free(conn);
	}
	drain_check_done(x);
}

/* A CLOSING connection is idle: free it from a zero-delay timer, outside
 * any of its own callbacks. */
void rdma_xprt_reap(struct rdma_xprt *x, struct rdma_conn *conn)
{
	static const struct timeval now = { 0, 0 };

	queue_push(&x->reap, &conn->reap_link);
	if (x->reap_ev)
		loop_ev_add(x->reap_ev, &now);
}

/* ---- CM events ---- */

static void cm_connect_request(struct rdma_xprt *x, const struct rdma_cm_event *ev, const uint8_t *pd,
			       size_t pdlen)
{
	const char *why = x->draining ? "the server is stopping" : x->nconns >= x->max_conns ? "too many connections" : NULL;

	if (why) {
		log_limited(&lim_accept, LOG_WARNING, "rdma: connection refused: %s (%u connections)", why,
			    x->nconns);
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	rdma_conn_accept(x, ev->id, &ev->param.conn, pd, pdlen);
}

static void cm_event(struct rdma_xprt *x, const struct rdma_cm_event *ev, const uint8_t *pd, size_t pdlen)
{
	struct rdma_conn *conn = ev->id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		cm_connect_request(x, ev, pd, pdlen);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (conn && conn->state == RDMA_CONN_ACCEPTING) {
			conn->state = RDMA_CONN_CONNECTED;
			log_limited(&lim_conn_event, LOG_INFO, "rdma: %s: connected", conn->rpc.peer_name);
			rdma_conn_check_idle(conn); /* draining since the accept */
		}
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (conn)
			rdma_conn_close(conn, rdma_event_str(ev->event));
		return;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (conn)
			rdma_conn_close(conn, "device removed");
		else
			log_err("rdma: a listener's device was removed; it no longer accepts");
		return;
	default:
		log_debug("rdma: CM event %s", rdma_event_str(ev->event));
		return;
	}
}

static void cm_event_cb(int fd, short what, void *arg)
{
	struct rdma_xprt *x = arg;
	struct rdma_cm_event *ev;

	(void)fd;
	(void)what;
	while (x->ec && rdma_get_cm_event(x->ec, &ev) == 0) {
		/* Copy what we need, ack at once (rdma_destroy_id waits for acks). */
		struct rdma_cm_event copy = *ev;
		uint8_t pd[256];
		size_t pdlen = 0;

		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->param.conn.private_data) {
			pdlen = ev->param.conn.private_data_len;
			memcpy(pd, ev->param.conn.private_data, pdlen);
		}
		copy.param.conn.private_data = NULL;
		rdma_ack_cm_event(ev);
		cm_event(x, &copy, pd, pdlen);
	}
}

/* ---- create / start ---- */

struct rdma_xprt *rdma_xprt_create(struct loop *loop, const struct rnfsd_config *cfg)
{
	struct rdma_xprt *x;

	if (cfg->rdma == CONFIG_NO)
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x) {
		log_err("rdma: out of memory");
		return NULL;
	}
	x->base.ops = &rdma_xprt_ops;
	x->loop = loop;
	x->required = cfg->rdma == CONFIG_YES;
	x->n_listen_cfg = cfg->n_rdma_listen < CONFIG_MAX_LISTEN ? cfg->n_rdma_listen : CONFIG_MAX_LISTEN;
	memcpy(x->listen_cfg, cfg->rdma_listen, x->n_listen_cfg * sizeof(x->listen_cfg[0]));
	x->max_conns = cfg->max_connections ? cfg->max_connections : 1024;
	x->credits = cfg->rdma_credits;
	atomic_init(&x->initial_credits, cfg->rdma_initial_credits);
	x->inline_size = (uint32_t)cfg->rdma_inline;
	x->max_payload = (uint32_t)cfg->rdma_max_payload;
	x->send_inv = cfg->rdma_send_invalidate;
	x->buffer_pool = cfg->rdma_buffer_pool;
	/* Every connection of the instance has the same limits, so one slot
	 * size serves them all: the largest Read chunk buffer, page-aligned. */
	struct rdma_limits lim;
	rdma_limits_default(&lim, x->max_payload, x->inline_size >= RDMA_INLINE_V2_DEFAULT);
	x->slot_size = (rdma_pcl_read_buf_size(&lim) + 4095u) & ~4095u;
	queue_init(&x->reap);
	return x;
}

struct xprt *rdma_xprt_base(struct rdma_xprt *x)
{
	return &x->base;
}

void rdma_xprt_set_initial_credits(struct rdma_xprt *x, unsigned initial)
{
	atomic_store_explicit(&x->initial_credits, initial, memory_order_relaxed);
}

static int listen_one(struct rdma_xprt *x, const struct config_listen *l)
{
	struct sockaddr_storage ss = { 0 };
	struct rdma_cm_id *id;

	if (strchr(l->addr, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(l->port);
		if (inet_pton(AF_INET6, l->addr, &in6->sin6_addr) != 1)
			return -1;
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(l->port);
		if (inet_pton(AF_INET, l->addr, &in->sin_addr) != 1)
			return -1;
	}
	if (rdma_create_id(x->ec, &id, NULL, RDMA_PS_TCP))
		return -1;
	if (rdma_bind_addr(id, (struct sockaddr *)&ss) || rdma_listen(id, RDMA_LISTEN_BACKLOG)) {
		int e = errno;
		rdma_destroy_id(id);
		errno = e;
		return -1;
	}
	x->listen[x->nlisten++] = id;
	log_info("rdma: listening on %s%s%s:%u", strchr(l->addr, ':') ? "[" : "", l->addr,
		 strchr(l->addr, ':') ? "]" : "", l->port);
	return 0;
}

static int count_devices(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list)
		ibv_free_device_list(list);
	return list ? n : 0;
}

/* enable = yes: every listener not marked optional must be up, or start-up
 * fails; auto: RDMA as a whole is optional, a failure is logged. 0 or -1. */
static int listen_all(struct rdma_xprt *x)
{
	for (unsigned i = 0; i < x->n_listen_cfg; i++) {
		const struct config_listen *l = &x->listen_cfg[i];

		if (listen_one(x, l) == 0)
			continue;
		if (l->optional && (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT || errno == ENODEV)) {
			log_warn("rdma: %s:%u skipped (optional address): %s", l->addr, l->port, strerror(errno));
			continue;
		}
		log_msg(x->required ? LOG_ERR : LOG_WARNING, "rdma: cannot listen on %s:%u: %s", l->addr,
			l->port, strerror(errno));
		if (x->required)
			return -1;
	}
	return x->nlisten ? 0 : -1;
}

static void listeners_close(struct rdma_xprt *x)
{
	for (unsigned i = 0; i < x->nlisten; i++)
		rdma_destroy_id(x->listen[i]);
	x->nlisten = 0;
}

/*
 * xprt_ops.start. Call after daemonising (verbs resources do not survive
 * fork()). 0 when listening, or when RDMA is optional (enable = auto) and
 * cannot be served (said once in the log; TCP goes on); -1 (logged) when it
 * was required (enable = yes) and cannot be served.
 */
static int rdma_xprt_op_start(struct xprt *base)
{
	struct rdma_xprt *x = rdma_of(base);

	if (count_devices() == 0) {
		log_msg(x->required ? LOG_ERR : LOG_INFO, "rdma: no RDMA device found: RPC-over-RDMA is not served%s",
			x->required ? "" : " (TCP only)");
		return x->required ? -1 : 0;
	}
	x->ec = rdma_create_event_channel();
	if (!x->ec) {
		log_msg(x->required ? LOG_ERR : LOG_INFO, "rdma: RDMA-CM unavailable (%s): RPC-over-RDMA is not served",
			strerror(errno));
		return x->required ? -1 : 0;
	}
	if (rdma_set_nonblock(x->ec->fd))
		goto fail;
	x->cm_ev = loop_io(x->loop, x->ec->fd, LOOP_READ | LOOP_PERSIST, cm_event_cb, x);
	x->reap_ev = loop_timer(x->loop, false, reap_cb, x);
	if (!x->cm_ev || !x->reap_ev || loop_ev_add(x->cm_ev, NULL))
		goto fail;
	if (listen_all(x))
		goto fail;
	return 0;
fail:
	log_msg(x->required ? LOG_ERR : LOG_WARNING, "rdma: RPC-over-RDMA is not served");
	listeners_close(x);
	loop_ev_free(x->cm_ev);
	loop_ev_free(x->reap_ev);
	x->cm_ev = x->reap_ev = NULL;
	rdma_destroy_event_channel(x->ec);
	x->ec = NULL;
	return x->required ? -1 : 0;
}

/* ---- drain / stop / free ---- */

static void rdma_xprt_op_drain(struct xprt *base, void (*done)(void *arg), void *arg)
{
	struct rdma_xprt *x = rdma_of(base);

	x->draining = true;
	x->drain_done = done;
	x->drain_arg = arg;
	listeners_close(x);
	if (x->nconns)
		log_info("rdma: draining %u connections", x->nconns);
	for (struct rdma_conn *conn = x->conns, *next; conn; conn = next) {
		next = conn->next;
		rdma_conn_check_idle(conn); /* closes those with nothing in flight */
	}
	drain_check_done(x);
}

/* Loop thread, or main once the loop no longer runs: close every connection
 * and give the flushes RDMA_STOP_FLUSH_S to come back. */
static void rdma_xprt_op_stop(struct xprt *base)
{
	struct rdma_xprt *x = rdma_of(base);
	struct timespec t0, now;

	x->drain_done = NULL;
	listeners_close(x);
	loop_ev_free(x->cm_ev);
	x->cm_ev = NULL;
	for (struct rdma_conn *conn = x->conns; conn; conn = conn->next)
		rdma_conn_close(conn, "server stopping");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool pending = false;
		for (struct rdma_conn *conn = x->conns; conn; conn = conn->next) {
			if (!conn->reaping) {
				rdma_cq_drain(conn);
				rdma_conn_check_idle(conn);
			}
			pending |= conn->wrs_outstanding != 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!pending || now.tv_sec - t0.tv_sec >= RDMA_STOP_FLUSH_S)
			break;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	reap_cb(-1, 0, x);
}

/* After workers_stop(): free what is left (calls that never came back
 * included), the devices and protection domains, the channel. */
static void rdma_xprt_op_free(struct xprt *base)
{
	struct rdma_xprt *x = rdma_of(base);

	listeners_close(x);
	loop_ev_free(x->cm_ev);
	while (x->conns) {
		struct rdma_conn *conn = x->conns;
		x->conns = conn->next;
		rdma_conn_free(conn);
	}
	x->nconns = 0;
	loop_ev_free(x->reap_ev);
	while (x->devs) {
		struct rdma_dev *d = x->devs;
		x->devs = d->next;
		if (d->pool_ok) {
			rdma_pool_fini(&d->pool); /* no connection is left, so no waiter */
			d->pool_ok = false;
			rdma_dev_pool_publish(d);
		}
		if (d->pd)
			ibv_dealloc_pd(d->pd);
		free(d);
	}
	if (x->ec)
		rdma_destroy_event_channel(x->ec);
	free(x);
}

static unsigned rdma_xprt_op_conns(const struct xprt *base)
{
	const struct rdma_xprt *x = container_of(base, const struct rdma_xprt, base);
	return __atomic_load_n(&x->nconns, __ATOMIC_RELAXED);
}
