/*
 * rt_conn.c - RDMA-CM connection, registered memory, Send/Receive posting and
 * completion handling for the test requester. See rt_conn.h for the layout
 * and life cycle. Setup runs in one sequence and is unwound in reverse.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/rdma/rt_conn.h"

int rt_debug;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rt_conn_opts_default(struct rt_conn_opts *o, uint8_t priv_buf[8])
{
	/* RFC 8797 §4: 4 KiB send and receive sizes, no remote invalidation
	 * (the requester registers plain MRs, which Send With Invalidate cannot
	 * invalidate). */
	struct rt_priv p = {
		.ident = RT_PRIV_IDENT, .version = RT_PRIV_VERSION, .flags = 0,
		.send_size = 3, .recv_size = 3,
	};

	memset(o, 0, sizeof(*o));
	rt_priv_encode(&p, priv_buf);
	o->priv = priv_buf;
	o->priv_len = 8;
	o->recv_size = 8192; /* larger than advertised, so oversize replies are seen, not fatal */
	o->adv_recv = 4096;
	o->nrecv = 32;
	o->ring = 512;
	o->data_size = 4u << 20;
	o->rnr_retry = 0;
	o->connect_timeout_ms = 5000;
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void queue_msg(struct rt_conn *c, const uint8_t *buf, uint32_t len)
{
	struct rt_msg *m = malloc(sizeof(*m) + len + 1);

	if (!m) {
		fprintf(stderr, "rdma_requester: out of memory\n");
		exit(2);
	}
	m->next = NULL;
	m->len = len;
	memcpy(m->data, buf, len);
	if (rt_debug) {
		uint32_t i;

		printf("@@ DEBUG recv %u bytes:", len);
		for (i = 0; i + 4 <= len && i < 64; i += 4)
			printf(" %08x", rt_get32(buf + i));
		printf("\n");
	}
	*c->q_tail = m;
	c->q_tail = &m->next;
	c->received++;
	if (len > c->max_len)
		c->max_len = len;
	if (len > c->o.adv_recv)
		c->oversize++;
}

static void note_error(struct rt_conn *c, enum ibv_wc_status st, enum ibv_wc_status *slot)
{
	c->qp_dead = true;
	if (st != IBV_WC_WR_FLUSH_ERR && *slot == IBV_WC_SUCCESS)
		*slot = st;
}

static void handle_wc(struct rt_conn *c, const struct ibv_wc *wc)
{
	uint32_t slot;

	if (wc->wr_id & RT_WR_SEND) {
		c->sends_outstanding--;
		if (wc->status != IBV_WC_SUCCESS)
			note_error(c, wc->status, &c->send_err);
		return;
	}
	slot = (uint32_t)wc->wr_id;
	c->recv_busy[slot] = false;
	c->recv_posted--;
	if (wc->status != IBV_WC_SUCCESS) {
		note_error(c, wc->status, &c->recv_err);
		return;
	}
	if (wc->wc_flags & IBV_WC_WITH_INV)
		c->with_inv++;
	queue_msg(c, c->recv_area + (size_t)slot * c->o.recv_size, wc->byte_len);
	if (!c->o.manual_repost)
		rt_recv_post(c, 1);
}

static int drain_cq(struct rt_conn *c)
{
	struct ibv_wc wc[16];
	int n, i, total = 0;

	while ((n = ibv_poll_cq(c->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++)
			handle_wc(c, &wc[i]);
		total += n;
	}
	return total;
}

static int drain_cm(struct rt_conn *c)
{
	struct rdma_cm_event *ev;
	int n = 0;

	while (rdma_get_cm_event(c->ec, &ev) == 0) {
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			c->disconnected = true;
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
		n++;
	}
	return n;
}

int rt_progress(struct rt_conn *c, int timeout_ms)
{
	struct pollfd pfd[2];
	struct ibv_cq *cq;
	void *ctx;
	int n;

	n = drain_cq(c) + drain_cm(c);
	if (n)
		return n;
	if (ibv_req_notify_cq(c->cq, 0))
		return 0;
	n = drain_cq(c); /* a completion may have raced the re-arm */
	if (n)
		return n;
	pfd[0] = (struct pollfd){ .fd = c->cc->fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = c->ec->fd, .events = POLLIN };
	if (poll(pfd, 2, timeout_ms) <= 0)
		return 0;
	if ((pfd[0].revents & POLLIN) && ibv_get_cq_event(c->cc, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	return drain_cq(c) + drain_cm(c);
}

bool rt_conn_dead(const struct rt_conn *c)
{
	return c->disconnected || c->qp_dead;
}

static struct rt_msg *take(struct rt_conn *c, bool any, uint32_t xid)
{
	struct rt_msg **pp, *m;

	for (pp = &c->q_head; (m = *pp); pp = &m->next) {
		if (any || (m->len >= 4 && rt_get32(m->data) == xid)) {
			*pp = m->next;
			if (!*pp)
				c->q_tail = pp;
			m->next = NULL;
			return m;
		}
	}
	return NULL;
}

static struct rt_msg *wait_for(struct rt_conn *c, bool any, uint32_t xid, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct rt_msg *m;
	long long left;

	for (;;) {
		m = take(c, any, xid);
		if (m)
			return m;
		left = deadline - now_ms();
		if (left <= 0)
			return NULL;
		if (rt_conn_dead(c)) {
			/* Let flushes and late events drain, then give up. */
			rt_progress(c, 0);
			return take(c, any, xid);
		}
		rt_progress(c, (int)(left < 100 ? left : 100));
	}
}

struct rt_msg *rt_wait_xid(struct rt_conn *c, uint32_t xid, int timeout_ms)
{
	return wait_for(c, false, xid, timeout_ms);
}

struct rt_msg *rt_wait_any(struct rt_conn *c, int timeout_ms)
{
	return wait_for(c, true, 0, timeout_ms);
}

uint32_t rt_queue_len(const struct rt_conn *c)
{
	const struct rt_msg *m;
	uint32_t n = 0;

	for (m = c->q_head; m; m = m->next)
		n++;
	return n;
}

void rt_msg_free(struct rt_msg *m)
{
	free(m);
}

int rt_recv_post(struct rt_conn *c, uint32_t n)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	uint32_t slot;

	while (n--) {
		for (slot = 0; slot < c->o.ring && c->recv_busy[slot]; slot++)
			;
		if (slot == c->o.ring)
			return -1;
		sge.addr = (uintptr_t)(c->recv_area + (size_t)slot * c->o.recv_size);
		sge.length = c->o.recv_size;
		sge.lkey = c->mr->lkey;
		wr = (struct ibv_recv_wr){ .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
		if (ibv_post_recv(c->id->qp, &wr, &bad))
			return -1;
		c->recv_busy[slot] = true;
		c->recv_posted++;
	}
	return 0;
}

int rt_send(struct rt_conn *c, const void *buf, size_t len)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint8_t *slot;
	long long deadline = now_ms() + 5000;

	if (len > RT_SEND_SIZE || rt_conn_dead(c))
		return -1;
	while (c->sends_outstanding >= RT_SEND_SLOTS) {
		if (now_ms() > deadline || rt_conn_dead(c))
			return -1;
		rt_progress(c, 100);
	}
	slot = c->send_area + (size_t)c->send_next * RT_SEND_SIZE;
	if (len)
		memcpy(slot, buf, len);
	sge.addr = (uintptr_t)slot;
	sge.length = (uint32_t)len;
	sge.lkey = c->mr->lkey;
	wr = (struct ibv_send_wr){
		.wr_id = RT_WR_SEND | c->send_next,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0, /* a zero-length Send carries no SGE */
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	if (ibv_post_send(c->id->qp, &wr, &bad))
		return -1;
	c->send_next = (c->send_next + 1) % RT_SEND_SLOTS;
	c->sends_outstanding++;
	return 0;
}

void *rt_data_alloc(struct rt_conn *c, size_t len)
{
	size_t at = (c->data_used + 63) & ~(size_t)63;

	if (at > c->o.data_size || len > c->o.data_size - at)
		return NULL;
	c->data_used = at + len;
	return c->data_area + at;
}

void rt_data_reset(struct rt_conn *c)
{
	c->data_used = 0;
}

struct rt_seg rt_seg_of(const struct rt_conn *c, const void *p, uint32_t len)
{
	return (struct rt_seg){ .handle = c->mr->rkey, .length = len, .offset = (uintptr_t)p };
}

bool rt_conn_peer_priv(const struct rt_conn *c, struct rt_priv *p)
{
	return rt_priv_decode(c->peer_priv, c->peer_priv_len, p);
}

/* Wait for the next CM event on the id; returns it (caller acks) or NULL on timeout. */
static struct rdma_cm_event *wait_cm(struct rt_conn *c, int timeout_ms)
{
	struct rdma_cm_event *ev;
	struct pollfd pfd = { .fd = c->ec->fd, .events = POLLIN };
	long long deadline = now_ms() + timeout_ms;

	for (;;) {
		if (rdma_get_cm_event(c->ec, &ev) == 0)
			return ev;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return NULL;
		if (now_ms() >= deadline)
			return NULL;
		poll(&pfd, 1, (int)(deadline - now_ms()));
	}
}

/* Expect event `want`; anything else fails with its name in why. */
static int expect_cm(struct rt_conn *c, enum rdma_cm_event_type want, char *why, size_t n)
{
	struct rdma_cm_event *ev = wait_cm(c, c->o.connect_timeout_ms);

	if (!ev) {
		snprintf(why, n, "no %s within %d ms", rdma_event_str(want), c->o.connect_timeout_ms);
		return -1;
	}
	if (ev->event != want) {
		snprintf(why, n, "expected %s, got %s (status %d)", rdma_event_str(want),
			 rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		return -1;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

static int setup_verbs(struct rt_conn *c, char *why, size_t n)
{
	struct ibv_qp_init_attr qa;
	size_t recv_bytes = (size_t)c->o.ring * c->o.recv_size;
	size_t send_bytes = (size_t)RT_SEND_SLOTS * RT_SEND_SIZE;

	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cc = c->pd ? ibv_create_comp_channel(c->id->verbs) : NULL;
	c->cq = c->cc ? ibv_create_cq(c->id->verbs, (int)(RT_SEND_SLOTS + c->o.ring), NULL, c->cc, 0) : NULL;
	if (!c->cq) {
		snprintf(why, n, "PD/CQ setup failed: %s", strerror(errno));
		return -1;
	}
	set_nonblock(c->cc->fd);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = RT_SEND_SLOTS;
	qa.cap.max_recv_wr = c->o.ring;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa)) {
		snprintf(why, n, "rdma_create_qp: %s", strerror(errno));
		return -1;
	}
	c->mem_len = recv_bytes + send_bytes + c->o.data_size;
	c->mem = aligned_alloc(4096, (c->mem_len + 4095) & ~(size_t)4095);
	c->recv_busy = calloc(c->o.ring, sizeof(bool));
	if (!c->mem || !c->recv_busy) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	memset(c->mem, 0, c->mem_len);
	c->recv_area = c->mem;
	c->send_area = c->mem + recv_bytes;
	c->data_area = c->send_area + send_bytes;
	c->mr = ibv_reg_mr(c->pd, c->mem, c->mem_len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!c->mr) {
		snprintf(why, n, "ibv_reg_mr: %s", strerror(errno));
		return -1;
	}
	if (rt_recv_post(c, c->o.nrecv)) {
		snprintf(why, n, "posting %u receives failed", c->o.nrecv);
		return -1;
	}
	return 0;
}

static enum rt_open_result do_connect(struct rt_conn *c, char *why, size_t n)
{
	struct rdma_conn_param cp;
	struct ibv_device_attr da;
	struct rdma_cm_event *ev;
	enum rt_open_result res = RT_OPEN_ERROR;

	memset(&cp, 0, sizeof(cp));
	cp.private_data = c->o.priv;
	cp.private_data_len = c->o.priv ? c->o.priv_len : 0;
	/* As the Linux client (INTEROP.md): we never initiate RDMA Reads;
	 * the server reads our Read chunks. */
	cp.initiator_depth = 0;
	cp.responder_resources = 16;
	if (ibv_query_device(c->id->verbs, &da) == 0 && da.max_qp_rd_atom < 16)
		cp.responder_resources = (uint8_t)da.max_qp_rd_atom;
	cp.retry_count = 6;
	cp.rnr_retry_count = c->o.rnr_retry;
	if (rdma_connect(c->id, &cp)) {
		snprintf(why, n, "rdma_connect: %s", strerror(errno));
		return RT_OPEN_ERROR;
	}
	ev = wait_cm(c, c->o.connect_timeout_ms);
	if (!ev) {
		snprintf(why, n, "no answer to the connection request within %d ms",
			 c->o.connect_timeout_ms);
		return RT_OPEN_ERROR;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		c->peer_priv_len = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;
		if (c->peer_priv_len)
			memcpy(c->peer_priv, ev->param.conn.private_data, c->peer_priv_len);
		c->established = true;
		res = RT_OPEN_OK;
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* IB CM REJ reason 28 is a consumer's rdma_reject(); 8 (invalid
		 * service ID) means nobody listens on the port. */
		c->reject_status = ev->status;
		if (ev->status == RT_REJ_CONSUMER) {
			snprintf(why, n, "connection rejected by the server");
			res = RT_OPEN_REJECTED;
		} else {
			snprintf(why, n, "connection rejected by the CM, reason %d%s", ev->status,
				 ev->status == 8 ? " (no listener on the port)" : "");
		}
		break;
	default:
		snprintf(why, n, "connect: %s (status %d)", rdma_event_str(ev->event), ev->status);
		break;
	}
	rdma_ack_cm_event(ev);
	return res;
}

enum rt_open_result rt_conn_open(struct rt_conn *c, const struct sockaddr *dst,
				 const struct rt_conn_opts *o, char *why, size_t whylen)
{
	enum rt_open_result res;

	memset(c, 0, sizeof(*c));
	c->o = *o;
	c->q_tail = &c->q_head;
	c->ec = rdma_create_event_channel();
	if (!c->ec || rdma_create_id(c->ec, &c->id, c, RDMA_PS_TCP)) {
		snprintf(why, whylen, "rdma_create_id: %s", strerror(errno));
		goto fail;
	}
	set_nonblock(c->ec->fd);
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)dst, 2000)) {
		snprintf(why, whylen, "rdma_resolve_addr: %s", strerror(errno));
		goto fail;
	}
	if (expect_cm(c, RDMA_CM_EVENT_ADDR_RESOLVED, why, whylen))
		goto fail;
	if (rdma_resolve_route(c->id, 2000)) {
		snprintf(why, whylen, "rdma_resolve_route: %s", strerror(errno));
		goto fail;
	}
	if (expect_cm(c, RDMA_CM_EVENT_ROUTE_RESOLVED, why, whylen))
		goto fail;
	if (setup_verbs(c, why, whylen))
		goto fail;
	res = do_connect(c, why, whylen);
	if (res != RT_OPEN_OK) {
		rt_conn_abort(c);
		return res;
	}
	return RT_OPEN_OK;
fail:
	rt_conn_abort(c);
	return RT_OPEN_ERROR;
}

static void release(struct rt_conn *c)
{
	struct rt_msg *m;

	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->cc)
		ibv_destroy_comp_channel(c->cc);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ec)
		rdma_destroy_event_channel(c->ec);
	while ((m = take(c, true, 0)))
		free(m);
	free(c->mem);
	free(c->recv_busy);
	c->id = NULL;
	c->mr = NULL;
	c->cq = NULL;
	c->cc = NULL;
	c->pd = NULL;
	c->ec = NULL;
	c->mem = NULL;
	c->recv_busy = NULL;
}

void rt_conn_close(struct rt_conn *c)
{
	long long deadline = now_ms() + 2000;

	if (c->established && !c->disconnected) {
		rdma_disconnect(c->id);
		while (!c->disconnected && now_ms() < deadline)
			rt_progress(c, 100);
	}
	/* Let the flushes of our posted receives and sends drain. */
	while (c->cq && (c->recv_posted || c->sends_outstanding) && now_ms() < deadline)
		if (!rt_progress(c, 50))
			break;
	release(c);
}

void rt_conn_abort(struct rt_conn *c)
{
	release(c);
}

long long rt_conn_hw_counter(const struct rt_conn *c, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	if (!c->id || !c->id->verbs)
		return -1;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/hw_counters/%s",
		 ibv_get_device_name(c->id->verbs->device), c->id->port_num ? c->id->port_num : 1, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int rt_conn_violation(const struct rt_conn *c, char *why, size_t n)
{
	if (c->oversize) {
		snprintf(why, n, "no message over %u bytes (our receive size) got %u such, the "
			 "largest %u bytes", c->o.adv_recv, c->oversize, c->max_len);
		return -1;
	}
	if (c->with_inv) {
		snprintf(why, n, "plain Sends (we did not set the R bit) got %u Send With Invalidate",
			 c->with_inv);
		return -1;
	}
	return 0;
}

const char *rt_conn_state(const struct rt_conn *c, char *buf, size_t n)
{
	if (c->recv_err != IBV_WC_SUCCESS)
		snprintf(buf, n, "receive completion error: %s", ibv_wc_status_str(c->recv_err));
	else if (c->send_err != IBV_WC_SUCCESS)
		snprintf(buf, n, "send completion error: %s", ibv_wc_status_str(c->send_err));
	else if (c->disconnected)
		snprintf(buf, n, "disconnected by the server");
	else if (c->qp_dead)
		snprintf(buf, n, "queue pair flushed");
	else
		snprintf(buf, n, "connected");
	return buf;
}
