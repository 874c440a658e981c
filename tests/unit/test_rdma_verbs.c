/*
 * test_rdma_verbs.c - the RPC-over-RDMA verbs shell end to end, on a real
 * RDMA device (soft-RoCE in the VM test bed).
 *
 * One process: the server side is the real thing (loop thread, worker pool,
 * RPC layer, rdma_transport_start()); the procedures are a small stand-in
 * for NFSv3 registered as program 100003 version 3, so that the RFC 8267
 * rules the transport applies (WRITE data in a Read chunk, READ data in a
 * Write chunk, READDIR in the Reply chunk) are the ones a real client meets.
 * The client side is a librdmacm requester written here, which checks every
 * reply byte by byte. Exits 77 (skipped) when no RDMA device exists.
 *
 * The transport runs with a small bulk pool ([rdma] buffer-pool 8M: 7 slots,
 * 3 per connection), so every scenario meets calls waiting for buffers;
 * t_pool_contention sends 32 concurrent 1 MiB calls on 8 connections, and
 * t_idle_conns opens 100 (RDMA_IDLE_CONNS) idle connections and prints the
 * registered memory and RSS ("# idle:").
 *
 * Run in the VM (tests/unit/rdma-vm-guest.sh) or on any host with a device:
 *   build/transport/test_rdma_verbs [server-address]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "conf/config.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/workers.h"
#include "rpc/rpc.h"
#include "rpc/rpc_clnt.h"
#include "rpc/xprt.h"
#include "transport/rdma.h"
#include "transport/rdma_credits.h"
#include "transport/rdma_hdr.h"
#include "transport/rdma_privdata.h"
#include "transport/rdma_stats.h"

static int failures, checks;

#define CHECK(cond, ...) do { \
	checks++; \
	if (!(cond)) { \
		failures++; \
		printf("not ok - %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		printf(__VA_ARGS__); \
		printf("\n"); \
	} \
} while (0)

/* ---------- server side: stand-in NFSv3 procedures ---------- */

static uint32_t fnv(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 31 + 7);
}

static enum rpc_proc_status p_null(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	(void)c;
	return RPC_PROC_OK;
}

/* "READ": args count; result: count, then opaque data (DDP-eligible). */
static enum rpc_proc_status p_read(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	uint32_t count;
	if (!xdr_dec_u32(&c->args, &count))
		return RPC_PROC_GARBAGE;
	uint8_t *buf = rpc_payload_buf(c, count);
	if (!buf)
		return RPC_PROC_SYSERR;
	for (uint32_t i = 0; i < count; i++)
		buf[i] = pattern(i);
	xdr_enc_u32(&c->res, count);
	rpc_enc_ddp(c, buf, count);
	xdr_enc_u32(&c->res, 0xeeeeeeee); /* something after the data */
	return RPC_PROC_OK;
}

/* "WRITE": args opaque data (DDP-eligible); result: length, hash. */
static enum rpc_proc_status p_write(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	uint32_t len;
	const uint8_t *data;
	if (!xdr_dec_u32(&c->args, &len) || !rpc_dec_ddp(c, len, &data))
		return RPC_PROC_GARBAGE;
	xdr_enc_u32(&c->res, len);
	xdr_enc_u32(&c->res, fnv(data, len));
	return RPC_PROC_OK;
}

/* "GETATTR" stands in for a slow call: args ms; sleeps that long (at most
 * 5 s), says it started, returns ms. */
static atomic_int slow_started;

static enum rpc_proc_status p_slow(struct rpc_call *c, void *args, void *res)
{
	uint32_t ms;
	(void)args;
	(void)res;
	if (!xdr_dec_u32(&c->args, &ms) || ms > 5000)
		return RPC_PROC_GARBAGE;
	atomic_store(&slow_started, 1);
	usleep(ms * 1000);
	xdr_enc_u32(&c->res, ms);
	return RPC_PROC_OK;
}

/* "READDIR": args n; result: n bytes inline (not DDP-eligible). */
static enum rpc_proc_status p_readdir(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	uint32_t n;
	if (!xdr_dec_u32(&c->args, &n))
		return RPC_PROC_GARBAGE;
	uint8_t *q = xdr_enc_reserve(&c->res, n);
	if (!q)
		return RPC_PROC_SYSERR;
	for (uint32_t i = 0; i < n; i++)
		q[i] = pattern(i + 1);
	return RPC_PROC_OK;
}

/* "SETATTR" stands in for binding a backchannel: the connection it came on
 * is kept (a reference) for the reverse-direction calls of t_reverse(). */
static _Atomic(struct rpc_conn *) bc_conn;

static enum rpc_proc_status p_bind(struct rpc_call *c, void *args, void *res)
{
	(void)args;
	(void)res;
	rpc_conn_get(c->conn);
	atomic_store(&bc_conn, c->conn);
	return RPC_PROC_OK;
}

/* NFSv3's RFC 8267 §3 rules, as the real table (nfs/v3/nfs3_procs.c) has them. */
static const struct rpc_proc procs[17] = {
	[0] = { .name = "NULL", .execute = p_null },
	[1] = { .name = "GETATTR", .execute = p_slow },
	[2] = { .name = "SETATTR", .execute = p_bind },
	[6] = { .name = "READ", .execute = p_read, .ddp = ULB_RULE_RES(ULB_READ_DATA) },
	[7] = { .name = "WRITE", .execute = p_write, .ddp = ULB_RULE_ARG(ULB_WRITE_DATA) },
	[16] = { .name = "READDIR", .execute = p_readdir },
};
static const struct rpc_version vers3 = { 3, 17, procs };
static const struct rpc_program prog = { 100003, "nfs-standin", 1, &vers3 };

static struct loop *loop;
static struct xprt *rdma_x;        /* the transport under test */
static struct loop_ev *drain_ev;   /* runs the drain on the loop thread */
static atomic_int drained, drain_started;

static void drained_cb(void *arg)
{
	(void)arg;
	atomic_store(&drained, 1);
}

static void drain_ev_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	rdma_x->ops->drain(rdma_x, drained_cb, NULL);
	atomic_store(&drain_started, 1);
}

/* ---------- server side: reverse-direction calls (RFC 8167) ---------- */

#define BC_PROG 0x40000000u /* a callback program stand-in */
#define BC_TIMEOUT_MS 400

enum bc_step { BC_CALL, BC_CLEANUP };
static struct loop_ev *bc_ev;    /* runs bc_ev_cb on the loop thread */
static atomic_int bc_step, bc_attached;
static struct rpc_clnt bc_clnt;
static struct bc_call {
	struct rpc_clnt_call cc;
	uint8_t buf[256];
	atomic_int done;  /* 1 + enum rpc_clnt_status */
	atomic_uint tries, result;
} bc_call;
static uint32_t bc_arg;

static void bc_done(struct rpc_clnt_call *cc, enum rpc_clnt_status st)
{
	uint32_t v = 0;
	if (st == RPC_CLNT_OK && !xdr_dec_u32(&cc->res, &v))
		st = RPC_CLNT_BAD_REPLY;
	atomic_store(&bc_call.result, v);
	atomic_store(&bc_call.tries, cc->tries);
	atomic_store(&bc_call.done, 1 + (int)st);
}

/* Loop thread: attach a client to the bound connection and make one call,
 * or take it all down again. */
static void bc_ev_cb(int fd, short what, void *arg)
{
	static const struct rpc_clnt_params p = {.timeout_ms = BC_TIMEOUT_MS, .max_timeout_ms = BC_TIMEOUT_MS,
						 .retries = 2};
	struct rpc_conn *conn = atomic_load(&bc_conn);
	(void)fd;
	(void)what;
	(void)arg;
	if (atomic_load(&bc_step) == BC_CLEANUP) {
		rpc_clnt_detach(&bc_clnt);
		rpc_clnt_destroy(&bc_clnt);
		rpc_conn_put(conn);
		atomic_store(&bc_attached, 0);
		return;
	}
	if (!atomic_load(&bc_attached)) {
		if (rpc_clnt_init(&bc_clnt, loop, &p, NULL, "bc") || rpc_clnt_attach(&bc_clnt, conn)) {
			atomic_store(&bc_call.done, 1 + RPC_CLNT_CLOSED);
			return;
		}
		atomic_store(&bc_attached, 1);
	}
	rpc_clnt_call_init(&bc_call.cc, bc_call.buf, sizeof(bc_call.buf), BC_PROG, 1, 1, NULL);
	xdr_enc_u32(&bc_call.cc.args, bc_arg);
	bc_call.cc.done = bc_done;
	if (rpc_clnt_start(&bc_clnt, &bc_call.cc))
		atomic_store(&bc_call.done, 1 + RPC_CLNT_BAD_REPLY);
}

static void *loop_thread(void *arg)
{
	(void)arg;
	loop_run(loop);
	return NULL;
}

/* ---------- client side ---------- */

#define CL_MEM (8u << 20)
#define CL_SEND_OFF 0
#define CL_RECV_OFF (64u << 10)
#define CL_NRECV 136 /* the server's default grant (128) plus some */
#define CL_RECV_SIZE 4096u
#define CL_DATA_OFF (1u << 20)
/* A light client (t_idle_conns): this much memory and this many Receives. */
#define CL_LIGHT_MEM (128u << 10)
#define CL_LIGHT_NRECV 8
static size_t cl_mem_size = CL_MEM;
static unsigned cl_nrecv = CL_NRECV;

struct client {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;
	struct rdma_privdata server_pd;
	uint32_t last_wc_flags;
};

static int cm_wait(struct client *cl, enum rdma_cm_event_type want, struct rdma_privdata *pd)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(cl->ec, &ev))
		return -1;
	int ok = ev->event == want;
	if (!ok)
		printf("# CM event %s, wanted %s (status %d)\n", rdma_event_str(ev->event),
		       rdma_event_str(want), ev->status);
	if (ok && pd)
		rdma_privdata_parse(ev->param.conn.private_data, ev->param.conn.private_data_len, pd);
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

static void post_recv(struct client *cl, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)(cl->mem + CL_RECV_OFF + i * CL_RECV_SIZE), CL_RECV_SIZE, cl->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
	if (ibv_post_recv(cl->id->qp, &wr, &bad))
		printf("# ibv_post_recv failed\n");
}

/* pd_recv: the receive size our private data advertises; 0: send none. */
static int client_connect_pd(struct client *cl, const char *addr, bool remote_inv, uint32_t pd_recv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(20049) };
	inet_pton(AF_INET, addr, &sin.sin_addr);
	memset(cl, 0, sizeof(*cl));
	cl->ec = rdma_create_event_channel();
	if (!cl->ec || rdma_create_id(cl->ec, &cl->id, NULL, RDMA_PS_TCP))
		return -1;
	if (rdma_resolve_addr(cl->id, NULL, (struct sockaddr *)&sin, 2000) ||
	    cm_wait(cl, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) || rdma_resolve_route(cl->id, 2000) ||
	    cm_wait(cl, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		return -1;
	cl->pd = ibv_alloc_pd(cl->id->verbs);
	cl->cq = ibv_create_cq(cl->id->verbs, 512, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {
		.send_cq = cl->cq, .recv_cq = cl->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = CL_NRECV, .max_send_sge = 2, .max_recv_sge = 1 },
	};
	if (!cl->pd || !cl->cq || rdma_create_qp(cl->id, cl->pd, &qa))
		return -1;
	if (posix_memalign((void **)&cl->mem, 4096, cl_mem_size))
		return -1;
	memset(cl->mem, 0, cl_mem_size);
	cl->mr = ibv_reg_mr(cl->pd, cl->mem, cl_mem_size,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!cl->mr)
		return -1;
	for (unsigned i = 0; i < cl_nrecv; i++)
		post_recv(cl, i);
	uint8_t pd[RDMA_PD_LEN];
	rdma_privdata_build(pd, remote_inv, 4096, pd_recv);
	struct rdma_conn_param cp = {
		.private_data = pd_recv ? pd : NULL, .private_data_len = pd_recv ? sizeof(pd) : 0,
		.initiator_depth = 0, .responder_resources = 16, .retry_count = 6, .rnr_retry_count = 0,
	};
	if (rdma_connect(cl->id, &cp) || cm_wait(cl, RDMA_CM_EVENT_ESTABLISHED, &cl->server_pd))
		return -1;
	return 0;
}

static int client_connect(struct client *cl, const char *addr, bool remote_inv)
{
	return client_connect_pd(cl, addr, remote_inv, CL_RECV_SIZE);
}

static void client_close(struct client *cl)
{
	rdma_disconnect(cl->id);
	cm_wait(cl, RDMA_CM_EVENT_DISCONNECTED, NULL);
	rdma_destroy_qp(cl->id);
	ibv_dereg_mr(cl->mr);
	ibv_destroy_cq(cl->cq);
	ibv_dealloc_pd(cl->pd);
	rdma_destroy_id(cl->id);
	rdma_destroy_event_channel(cl->ec);
	free(cl->mem);
}

static int client_send(struct client *cl, const void *msg, size_t len)
{
	memcpy(cl->mem + CL_SEND_OFF, msg, len);
	struct ibv_sge sge = { (uintptr_t)(cl->mem + CL_SEND_OFF), (uint32_t)len, cl->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0xffff, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	if (ibv_post_send(cl->id->qp, &wr, &bad))
		return -1;
	return 0;
}

/* Wait for the next completion of a Receive; NULL on timeout or error.
 * Send completions are swallowed. The Receive is re-posted at once (the
 * bytes stay valid until CL_NRECV more replies arrived). */
static const uint8_t *client_recv(struct client *cl, uint32_t *len, int timeout_ms)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(cl->cq, 1, &wc);
		if (n > 0) {
			if (wc.status != IBV_WC_SUCCESS) {
				printf("# client completion %s (wr_id %lu)\n", ibv_wc_status_str(wc.status),
				       (unsigned long)wc.wr_id);
				return NULL;
			}
			if (wc.opcode != IBV_WC_RECV)
				continue;
			*len = wc.byte_len;
			cl->last_wc_flags = wc.wc_flags;
			post_recv(cl, (unsigned)wc.wr_id);
			return cl->mem + CL_RECV_OFF + wc.wr_id * CL_RECV_SIZE;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms)
			return NULL;
		usleep(100);
	}
}

/* ---------- message building ---------- */

struct msg {
	uint8_t b[4096];
	struct xdr_enc e;
};

static void m_init(struct msg *m)
{
	xdr_enc_init(&m->e, m->b, sizeof(m->b));
}

static void m_u32(struct msg *m, uint32_t v)
{
	xdr_enc_u32(&m->e, v);
}

static void m_seg(struct msg *m, uint32_t rkey, uint32_t len, uint64_t addr)
{
	m_u32(m, rkey);
	m_u32(m, len);
	xdr_enc_u64(&m->e, addr);
}

static void m_rpc(struct msg *m, uint32_t xid, uint32_t proc)
{
	uint32_t w[] = { xid, 0, 2, 100003, 3, proc, 0, 0, 0, 0 };
	for (unsigned i = 0; i < 10; i++)
		m_u32(m, w[i]);
}

/* RDMA_MSG without chunks (v1), then the RPC call header of proc. */
static void m_plain_call(struct msg *m, uint32_t vers, uint32_t call_xid, uint32_t proc)
{
	m_init(m);
	m_u32(m, call_xid);
	m_u32(m, vers);
	m_u32(m, 128);
	m_u32(m, RDMA_MSG);
	if (vers == 2)
		m_u32(m, RDMA_DIR_CALL);
	m_u32(m, 0);
	m_u32(m, 0);
	m_u32(m, 0);
	m_rpc(m, call_xid, proc);
}

static uint32_t be(const uint8_t *p, unsigned word)
{
	uint32_t v;
	memcpy(&v, p + 4 * word, 4);
	return ntohl(v);
}

/* ---------- scenarios ---------- */

static uint32_t xid = 0x1000;

/* Send a NULL call (RDMA_MSG, no chunks) of transport version vers, not waited for. */
static void send_null(struct client *cl, uint32_t vers)
{
	struct msg m;
	m_plain_call(&m, vers, ++xid, 0);
	client_send(cl, m.b, xdr_enc_len(&m.e));
}

static void t_null(struct client *cl, uint32_t vers)
{
	uint32_t len;
	send_null(cl, vers);
	const uint8_t *r = client_recv(cl, &len, 3000);
	CHECK(r != NULL, "v%u NULL: no reply", vers);
	if (!r)
		return;
	unsigned h = vers == 2 ? 8 : 7;
	CHECK(be(r, 0) == xid && be(r, 1) == vers && be(r, 3) == RDMA_MSG, "v%u NULL header", vers);
	CHECK(be(r, 2) >= 1 && be(r, 2) <= 128, "credits %u", be(r, 2));
	if (vers == 2)
		CHECK(be(r, 4) == RDMA_DIR_REPLY, "v2 direction %u", be(r, 4));
	CHECK(len == 4 * h + 24, "NULL reply length %u", len);
	CHECK(be(r, h) == xid && be(r, h + 1) == 1 && be(r, h + 2) == 0 && be(r, h + 5) == 0,
	      "RPC reply accepted SUCCESS");
}

static void t_errors(struct client *cl)
{
	struct msg m;
	uint32_t len;
	const uint8_t *r;

	/* RFC 8166 §4.5.1: ERR_VERS with our range. */
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 7);
	m_u32(&m, 1);
	m_u32(&m, RDMA_MSG);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_u32(&m, 0);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	r = client_recv(cl, &len, 3000);
	CHECK(r && len == 28 && be(r, 0) == xid && be(r, 3) == RDMA_ERROR && be(r, 4) == RDMA_ERR_VERS &&
	      be(r, 5) == 1 && be(r, 6) == 2, "ERR_VERS reply");

	/* RFC 8166 §4.6.1: RDMA_MSGP -> ERR_CHUNK. */
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 1);
	m_u32(&m, 1);
	m_u32(&m, RDMA_MSGP);
	for (int i = 0; i < 5; i++)
		m_u32(&m, 0);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	r = client_recv(cl, &len, 3000);
	CHECK(r && len == 20 && be(r, 0) == xid && be(r, 3) == RDMA_ERROR && be(r, 4) == RDMA_ERR_CHUNK,
	      "MSGP -> ERR_CHUNK");

	/* A discriminator of 2. */
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 1);
	m_u32(&m, 1);
	m_u32(&m, RDMA_MSG);
	m_u32(&m, 2);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_rpc(&m, xid, 0);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	r = client_recv(cl, &len, 3000);
	CHECK(r && be(r, 0) == xid && be(r, 3) == RDMA_ERROR && be(r, 4) == RDMA_ERR_CHUNK,
	      "bad discriminator -> ERR_CHUNK");

	/* RDMA_DONE: dropped; the next call's reply is the next message. */
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 1);
	m_u32(&m, 1);
	m_u32(&m, RDMA_DONE);
	for (int i = 0; i < 3; i++)
		m_u32(&m, 0);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	t_null(cl, 1);

	/* v2 RDMA2_OPTIONAL: INVALID_OPTION (draft §3.1). */
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 2);
	m_u32(&m, 1);
	m_u32(&m, RDMA2_OPTIONAL);
	m_u32(&m, RDMA_DIR_CALL);
	m_u32(&m, 77);
	m_u32(&m, 0);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	r = client_recv(cl, &len, 3000);
	CHECK(r && len == 20 && be(r, 1) == 2 && be(r, 3) == RDMA_ERROR && be(r, 4) == RDMA2_ERR_INVALID_OPTION,
	      "v2 optional -> INVALID_OPTION");
}

/* WRITE with its data in a Read chunk of nsegs segments. */
static void t_write(struct client *cl, uint32_t n, unsigned nsegs)
{
	struct msg m;
	uint32_t len;
	uint8_t *data = cl->mem + CL_DATA_OFF;
	for (uint32_t i = 0; i < n; i++)
		data[i] = pattern(i * 3);
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 1);
	m_u32(&m, 128);
	m_u32(&m, RDMA_MSG);
	uint32_t pos = 44; /* RPC header 40 bytes + length word */
	uint32_t off = 0;
	for (unsigned s = 0; s < nsegs; s++) {
		uint32_t part = s == nsegs - 1 ? n - off : n / nsegs;
		m_u32(&m, 1);
		m_u32(&m, pos);
		m_seg(&m, cl->mr->rkey, part, (uintptr_t)(data + off));
		off += part;
	}
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_rpc(&m, xid, 7);
	m_u32(&m, n);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	const uint8_t *r = client_recv(cl, &len, 5000);
	CHECK(r != NULL, "WRITE %u: no reply", n);
	if (!r)
		return;
	CHECK(be(r, 3) == RDMA_MSG && len == 28 + 24 + 8, "WRITE reply: proc %u len %u", be(r, 3), len);
	CHECK(be(r, 12) == 0, "WRITE accept_stat %u", be(r, 12));
	CHECK(be(r, 13) == n && be(r, 14) == fnv(data, n), "WRITE %u bytes arrived intact", n);
}

enum expect { EXPECT_OK, EXPECT_ERR_CHUNK, EXPECT_SYSTEM_ERR };

/* READ of n bytes; wseg > 0: a Write chunk of that many segments. */
static void t_read(struct client *cl, uint32_t n, unsigned wsegs, enum expect expect)
{
	struct msg m;
	uint32_t len;
	uint8_t *dst = cl->mem + CL_DATA_OFF + (4u << 20);
	memset(dst, 0, n + 16);
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 1);
	m_u32(&m, 128);
	m_u32(&m, RDMA_MSG);
	m_u32(&m, 0);
	if (wsegs) {
		m_u32(&m, 1);
		m_u32(&m, wsegs);
		uint32_t off = 0;
		for (unsigned s = 0; s < wsegs; s++) {
			uint32_t part = s == wsegs - 1 ? n - off : n / wsegs;
			m_seg(&m, cl->mr->rkey, part, (uintptr_t)(dst + off));
			off += part;
		}
	}
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_rpc(&m, xid, 6);
	m_u32(&m, n);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	const uint8_t *r = client_recv(cl, &len, 5000);
	CHECK(r != NULL, "READ %u: no reply", n);
	if (!r)
		return;
	if (expect == EXPECT_ERR_CHUNK) {
		/* RFC 8166 §4.5.3, RFC 8267 §3: the reply does not fit inline. */
		CHECK(be(r, 3) == RDMA_ERROR && be(r, 4) == RDMA_ERR_CHUNK, "READ %u w/o chunk: ERR_CHUNK", n);
		return;
	}
	if (expect == EXPECT_SYSTEM_ERR) {
		/* Beyond the room a call without chunks gets (RDMA_NOCHUNK_ROOM
		 * x inline) the handler gets no buffer (rpc_payload_buf). */
		CHECK(be(r, 3) == RDMA_MSG && len == 28 + 24 && be(r, 12) == RPC_SYSTEM_ERR,
		      "READ %u w/o chunk: SYSTEM_ERR (proc %u len %u)", n, be(r, 3), len);
		return;
	}
	CHECK(be(r, 3) == RDMA_MSG, "READ reply proc %u", be(r, 3));
	unsigned w = 4;
	CHECK(be(r, w) == 0, "no read list");
	w++;
	uint32_t written = 0;
	if (wsegs) {
		CHECK(be(r, w) == 1 && be(r, w + 1) == wsegs, "write list echoed");
		for (unsigned s = 0; s < wsegs; s++)
			written += be(r, w + 2 + 4 * s + 1);
		w += 2 + 4 * wsegs;
	}
	CHECK(be(r, w) == 0 && be(r, w + 1) == 0, "end of lists");
	w += 2;
	const uint8_t *rpc = r + 4 * w;
	CHECK(be(rpc, 5) == 0 && be(rpc, 6) == n && be(rpc, 7) == n, "READ result count/len");
	bool ok = true;
	if (wsegs) {
		CHECK(written == n, "Write chunk lengths sum %u", written);
		for (uint32_t i = 0; i < n && ok; i++)
			ok = dst[i] == pattern(i);
		CHECK(ok, "READ %u bytes landed in the Write chunk", n);
		CHECK(dst[n] == 0, "nothing written past the data");
		CHECK(be(rpc, 8) == 0xeeeeeeee && len == 4 * w + 36, "reduced reply (len %u)", len);
	} else {
		for (uint32_t i = 0; i < n && ok; i++)
			ok = rpc[32 + i] == pattern(i);
		CHECK(ok, "READ %u bytes inline", n);
		CHECK(be(rpc + 32 + ((n + 3) & ~3u), 0) == 0xeeeeeeee, "after inline data");
	}
}

/* READDIR of n bytes with a Reply chunk of rlen bytes (2 segments). */
static void t_readdir(struct client *cl, uint32_t n, uint32_t rlen)
{
	struct msg m;
	uint32_t len;
	uint8_t *dst = cl->mem + CL_DATA_OFF + (6u << 20);
	memset(dst, 0, rlen + 16);
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 1);
	m_u32(&m, 128);
	m_u32(&m, RDMA_MSG);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_u32(&m, 1);
	m_u32(&m, 2);
	m_seg(&m, cl->mr->rkey, rlen / 2, (uintptr_t)dst);
	m_seg(&m, cl->mr->rkey, rlen - rlen / 2, (uintptr_t)(dst + rlen / 2));
	m_rpc(&m, xid, 16);
	m_u32(&m, n);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	const uint8_t *r = client_recv(cl, &len, 5000);
	CHECK(r != NULL, "READDIR: no reply");
	if (!r)
		return;
	if (24 + n + 28 <= 4096) {
		CHECK(be(r, 3) == RDMA_MSG, "small READDIR inline");
		return;
	}
	if (rlen < 24 + n) {
		CHECK(be(r, 3) == RDMA_ERROR && be(r, 4) == RDMA_ERR_CHUNK, "READDIR too big for chunk");
		return;
	}
	CHECK(be(r, 3) == RDMA_NOMSG && len == 4 * 16, "READDIR: RDMA_NOMSG, header only (len %u)", len);
	CHECK(be(r, 6) == 1 && be(r, 7) == 2 && be(r, 9) + be(r, 13) == 24 + n, "Reply chunk lengths");
	CHECK(be(dst, 0) == xid && be(dst, 5) == 0, "reply in the Reply chunk");
	bool ok = true;
	for (uint32_t i = 0; i < n && ok; i++)
		ok = dst[24 + i] == pattern(i + 1);
	CHECK(ok, "READDIR %u bytes in the Reply chunk", n);
}

/* READDIR of n bytes (more than fits inline) without a Reply chunk:
 * RFC 8166 §4.5.3, the reply cannot be conveyed -> ERR_CHUNK. */
static void t_readdir_nochunk(struct client *cl, uint32_t n)
{
	struct msg m;
	uint32_t len;
	m_init(&m);
	m_u32(&m, ++xid);
	m_u32(&m, 1);
	m_u32(&m, 128);
	m_u32(&m, RDMA_MSG);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_rpc(&m, xid, 16);
	m_u32(&m, n);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	const uint8_t *r = client_recv(cl, &len, 5000);
	CHECK(r && be(r, 3) == RDMA_ERROR && be(r, 4) == RDMA_ERR_CHUNK,
	      "READDIR %u w/o Reply chunk: ERR_CHUNK (proc %u, len %u, accept_stat %u)", n,
	      r ? be(r, 3) : 0, len, r && len >= 52 ? be(r, 12) : 0);
}

/* A Long Call: RDMA_NOMSG, the whole WRITE call in a position-zero chunk. */
static void t_long_call(struct client *cl, uint32_t n)
{
	struct msg m;
	uint32_t len;
	uint8_t *call = cl->mem + CL_DATA_OFF + (2u << 20);
	struct xdr_enc e;
	xdr_enc_init(&e, call, 1u << 20);
	uint32_t w[] = { ++xid, 0, 2, 100003, 3, 7, 0, 0, 0, 0, n };
	for (unsigned i = 0; i < 11; i++)
		xdr_enc_u32(&e, w[i]);
	uint8_t *d = xdr_enc_reserve(&e, n);
	for (uint32_t i = 0; i < n; i++)
		d[i] = pattern(i + 5);
	uint32_t clen = (uint32_t)xdr_enc_len(&e);
	m_init(&m);
	m_u32(&m, xid);
	m_u32(&m, 1);
	m_u32(&m, 128);
	m_u32(&m, RDMA_NOMSG);
	m_u32(&m, 1);
	m_u32(&m, 0);
	m_seg(&m, cl->mr->rkey, clen, (uintptr_t)call);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_u32(&m, 0);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	const uint8_t *r = client_recv(cl, &len, 5000);
	CHECK(r && be(r, 3) == RDMA_MSG && be(r, 13) == n && be(r, 14) == fnv(d, n),
	      "Long Call of %u bytes", clen);
}

/* One call from its own send buffer (k-th of the client's calls in flight). */
static void send_at(struct client *cl, unsigned k, struct msg *m)
{
	size_t len = xdr_enc_len(&m->e);
	memcpy(cl->mem + CL_SEND_OFF + k * 4096u, m->b, len);
	struct ibv_sge sge = { (uintptr_t)(cl->mem + CL_SEND_OFF + k * 4096u), (uint32_t)len, cl->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0xffff, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	CHECK(ibv_post_send(cl->id->qp, &wr, &bad) == 0, "post a call");
}

/* A new call's transport header up to its chunk lists: v1 RDMA_MSG, 128 credits. */
static void m_head_msg(struct msg *m)
{
	m_init(m);
	m_u32(m, ++xid);
	m_u32(m, 1);
	m_u32(m, 128);
	m_u32(m, RDMA_MSG);
}

/* Many calls in flight at once: all answered, grants within bounds. */
static void t_pipeline(struct client *cl, unsigned k)
{
	struct msg m;
	uint32_t len, first = xid + 1;
	unsigned got = 0, bad = 0;
	for (unsigned i = 0; i < k; i++) {
		m_init(&m);
		m_u32(&m, ++xid);
		m_u32(&m, 1);
		m_u32(&m, 64);
		m_u32(&m, RDMA_MSG);
		m_u32(&m, 0);
		m_u32(&m, 0);
		m_u32(&m, 0);
		m_rpc(&m, xid, 0);
		client_send(cl, m.b, xdr_enc_len(&m.e));
		/* Wait for the Send completion so the send buffer can be reused;
		 * replies to earlier calls may come first. */
		struct ibv_wc wc;
		for (;;) {
			while (ibv_poll_cq(cl->cq, 1, &wc) == 0)
				;
			if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
				break;
			const uint8_t *r = cl->mem + CL_RECV_OFF + wc.wr_id * CL_RECV_SIZE;
			got++;
			if (be(r, 0) < first || be(r, 0) > xid || be(r, 2) < 1 || be(r, 2) > 64)
				bad++;
			post_recv(cl, (unsigned)wc.wr_id);
		}
	}
	for (unsigned i = got; i < k; i++) {
		const uint8_t *r = client_recv(cl, &len, 5000);
		if (!r)
			break;
		got++;
		if (be(r, 0) < first || be(r, 0) > xid || be(r, 2) < 1 || be(r, 2) > 64)
			bad++;
	}
	CHECK(got == k && bad == 0, "pipeline of %u: %u replies, %u bad", k, got, bad);
}

/*
 * A burst of k NULL calls sent back to back (each from its own send buffer),
 * answered while the server's reply Sends are still completing: RFC 8166
 * §3.3.1, the grant must not sag below what the client asked for (k <= the
 * server's 128): the server replaces each Receive as soon as it completes.
 * Returns the smallest grant seen.
 */
static uint32_t t_burst(struct client *cl, unsigned k)
{
	struct msg m;
	uint32_t len, first = xid + 1, min_grant = ~0u;
	unsigned got = 0, sends = 0;

	for (unsigned i = 0; i < k; i++) {
		m_init(&m);
		m_u32(&m, ++xid);
		m_u32(&m, 1);
		m_u32(&m, k);
		m_u32(&m, RDMA_MSG);
		m_u32(&m, 0);
		m_u32(&m, 0);
		m_u32(&m, 0);
		m_rpc(&m, xid, 0);
		uint8_t *buf = cl->mem + CL_SEND_OFF + i * 256;
		memcpy(buf, m.b, xdr_enc_len(&m.e));
		struct ibv_sge sge = { (uintptr_t)buf, (uint32_t)xdr_enc_len(&m.e), cl->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 0xffff, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
		if (ibv_post_send(cl->id->qp, &wr, &bad) == 0)
			sends++;
		/* Keep the send queue from filling: reap what completed. */
		struct ibv_wc wc;
		while (ibv_poll_cq(cl->cq, 1, &wc) > 0) {
			if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
				continue;
			const uint8_t *r = cl->mem + CL_RECV_OFF + wc.wr_id * CL_RECV_SIZE;
			if (be(r, 0) >= first && be(r, 2) < min_grant)
				min_grant = be(r, 2);
			got++;
			post_recv(cl, (unsigned)wc.wr_id);
		}
	}
	for (; got < k; got++) {
		const uint8_t *r = client_recv(cl, &len, 5000);
		if (!r)
			break;
		if (be(r, 2) < min_grant)
			min_grant = be(r, 2);
	}
	CHECK(sends == k && got == k, "burst of %u: %u sent, %u replies", k, sends, got);
	CHECK(min_grant == k, "burst of %u: the grant stays at %u (smallest seen %u)", k, k, min_grant);
	printf("# burst of %u calls: smallest grant %u\n", k, min_grant);
	return min_grant;
}

/* Disconnect with calls in flight; the server must clean up. */
/* Client side of a reverse-direction call: the next Receive must be it, byte
 * for byte (RDMA_MSG v1, no chunks; RPC call of BC_PROG with bc_arg). */
static bool bc_expect_call(struct client *cl, uint32_t *call_xid, const char *what)
{
	uint32_t len;
	const uint8_t *r = client_recv(cl, &len, 5 * BC_TIMEOUT_MS);
	CHECK(r != NULL, "%s: no reverse-direction call", what);
	if (!r)
		return false;
	const uint32_t want[] = {0, 1, 4 /* the credits the server asks for */, RDMA_MSG, 0, 0, 0,
				 0, 0, 2, BC_PROG, 1, 1, 0, 0, 0, 0, bc_arg};
	CHECK(len == sizeof(want), "%s: %u bytes", what, len);
	if (len != sizeof(want))
		return false;
	*call_xid = be(r, 0);
	CHECK(be(r, 7) == *call_xid, "%s: RPC xid 0x%x, rdma_xid 0x%x", what, be(r, 7), *call_xid);
	for (unsigned i = 1; i < 18; i++)
		if (i != 7)
			CHECK(be(r, i) == want[i], "%s: word %u is 0x%x, want 0x%x", what, i, be(r, i), want[i]);
	return true;
}

static int bc_wait_done(void)
{
	for (int i = 0; i < 200 && !atomic_load(&bc_call.done); i++)
		usleep(50000);
	return atomic_load(&bc_call.done) - 1;
}

static void bc_start(uint32_t arg)
{
	bc_arg = arg;
	atomic_store(&bc_call.done, 0);
	atomic_store(&bc_step, BC_CALL);
	loop_ev_trigger(bc_ev);
}

/* RFC 8167: the in-process server calls the client over the client's own
 * queue pair; the client drops the first copy (retransmission), answers the
 * second; then lets a call time out after all its retransmissions. */
static void t_reverse(struct client *cl)
{
	struct msg m;
	uint32_t len, x1, x2;

	/* Bind: a forward call whose connection the server keeps. */
	m_plain_call(&m, 1, ++xid, 2);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	const uint8_t *r = client_recv(cl, &len, 3000);
	CHECK(r && be(r, 0) == xid && atomic_load(&bc_conn), "bind call");
	if (!r || !atomic_load(&bc_conn))
		return;

	bc_start(0xc0ffee);
	if (!bc_expect_call(cl, &x1, "first copy"))
		return;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!bc_expect_call(cl, &x2, "retransmission"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK(x2 == x1, "retransmission xid 0x%x, first 0x%x", x2, x1);
	CHECK(ms >= BC_TIMEOUT_MS - 50, "retransmitted after %ld ms", ms);
	CHECK(atomic_load(&bc_call.done) == 0, "call completed without a reply");
	/* The reply, in the reverse direction: RDMA_MSG granting 2 credits. */
	m_init(&m);
	const uint32_t reply[] = {x1, 1, 2, RDMA_MSG, 0, 0, 0, x1, 1, 0, 0, 0, 0, 0xc0ffee + 1};
	for (unsigned i = 0; i < 14; i++)
		m_u32(&m, reply[i]);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	int st = bc_wait_done();
	CHECK(st == RPC_CLNT_OK, "reverse call status %d", st);
	/* 2, unless the machine was slow enough for a third copy to go out
	 * before the reply arrived: that copy is read and ignored here. */
	unsigned tries = atomic_load(&bc_call.tries);
	CHECK(tries == 2 || tries == 3, "tries %u", tries);
	for (unsigned i = 2; i < tries; i++)
		bc_expect_call(cl, &x2, "a late copy");
	CHECK(atomic_load(&bc_call.result) == 0xc0ffee + 1, "result 0x%x", atomic_load(&bc_call.result));
	printf("# reverse-direction call: retransmitted %ld ms after the first copy, then answered: status %d\n", ms, st);

	/* Never answered: 1 + 2 retransmissions, then TIMEOUT. */
	bc_start(7);
	unsigned copies = 0;
	uint32_t x;
	while (copies < 3 && bc_expect_call(cl, &x, "unanswered call"))
		copies++;
	st = bc_wait_done();
	CHECK(copies == 3 && st == RPC_CLNT_TIMEOUT, "%u copies, status %d", copies, st);
	r = client_recv(cl, &len, BC_TIMEOUT_MS);
	CHECK(r == NULL, "a fourth copy arrived");
	/* Forward calls still work, and the late reply to the timed-out call
	 * is ignored (matched to nothing). */
	m_init(&m);
	const uint32_t late[] = {x, 1, 2, RDMA_MSG, 0, 0, 0, x, 1, 0, 0, 0, 0, 1};
	for (unsigned i = 0; i < 14; i++)
		m_u32(&m, late[i]);
	client_send(cl, m.b, xdr_enc_len(&m.e));
	t_null(cl, 1);
	CHECK(bc_clnt.replies_unmatched == 1, "unmatched replies %llu",
	      (unsigned long long)bc_clnt.replies_unmatched);

	atomic_store(&bc_step, BC_CLEANUP);
	loop_ev_trigger(bc_ev);
	for (int i = 0; i < 100 && atomic_load(&bc_attached); i++)
		usleep(10000);
	atomic_store(&bc_conn, NULL);
}

static void t_disconnect_midflight(const char *addr)
{
	struct client cl;
	struct msg m;
	if (client_connect(&cl, addr, false)) {
		CHECK(0, "reconnect");
		return;
	}
	for (unsigned i = 0; i < 8; i++) {
		m_init(&m);
		m_u32(&m, ++xid);
		m_u32(&m, 1);
		m_u32(&m, 64);
		m_u32(&m, RDMA_MSG);
		m_u32(&m, 0);
		m_u32(&m, 1);
		m_u32(&m, 1);
		m_seg(&m, cl.mr->rkey, 65536, (uintptr_t)(cl.mem + CL_DATA_OFF + i * 65536));
		m_u32(&m, 0);
		m_u32(&m, 0);
		m_rpc(&m, xid, 6);
		m_u32(&m, 65536);
		client_send(&cl, m.b, xdr_enc_len(&m.e));
		/* And a 512 KiB WRITE whose Read chunk the server pulls. */
		m_init(&m);
		m_u32(&m, ++xid);
		m_u32(&m, 1);
		m_u32(&m, 64);
		m_u32(&m, RDMA_MSG);
		m_u32(&m, 1);
		m_u32(&m, 44);
		m_seg(&m, cl.mr->rkey, 524288, (uintptr_t)(cl.mem + CL_DATA_OFF + 1048576));
		m_u32(&m, 0);
		m_u32(&m, 0);
		m_u32(&m, 0);
		m_rpc(&m, xid, 7);
		m_u32(&m, 524288);
		client_send(&cl, m.b, xdr_enc_len(&m.e));
	}
	client_close(&cl);
}

/*
 * Graceful drain (rdma_transport.c): a call in flight when the drain starts
 * is answered; a call sent after it is not; then the server disconnects, the
 * drain reports done, and new connections are refused.
 */
static void t_drain(const char *addr)
{
	struct client cl;
	struct msg m;
	uint32_t len, slow_xid;

	if (client_connect(&cl, addr, false)) {
		CHECK(0, "connect before the drain");
		return;
	}
	m_plain_call(&m, 1, slow_xid = ++xid, 1);
	m_u32(&m, 500); /* long enough for a NULL sent during the drain to arrive first */
	client_send(&cl, m.b, xdr_enc_len(&m.e));
	for (int i = 0; i < 500 && !atomic_load(&slow_started); i++)
		usleep(10000);
	CHECK(atomic_load(&slow_started), "the slow call reached a worker");
	loop_ev_trigger(drain_ev);
	for (int i = 0; i < 500 && !atomic_load(&drain_started); i++)
		usleep(10000);
	CHECK(atomic_load(&drain_started), "the drain started");
	/* The loop thread ran the drain: this call's Receive completes after it. */
	send_null(&cl, 1);
	const uint8_t *r = client_recv(&cl, &len, 5000);
	CHECK(r && be(r, 0) == slow_xid && be(r, 7) == slow_xid && be(r, 12) == 0 && be(r, 13) == 500,
	      "the call in flight is answered during the drain");
	CHECK(cm_wait(&cl, RDMA_CM_EVENT_DISCONNECTED, NULL) == 0, "the server disconnects once drained");
	/* Whatever reached the client's receives is in its CQ before the flushes. */
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	ibv_modify_qp(cl.id->qp, &qa, IBV_QP_STATE);
	r = client_recv(&cl, &len, 3000);
	CHECK(r == NULL, "no reply to the call sent after the drain began (xid 0x%x)", r ? be(r, 0) : 0);
	for (int i = 0; i < 500 && !atomic_load(&drained); i++)
		usleep(10000);
	CHECK(atomic_load(&drained), "drain done called");
	CHECK(rdma_x->ops->conns(rdma_x) == 0, "no connection left after the drain");
	rdma_destroy_qp(cl.id);
	ibv_dereg_mr(cl.mr);
	ibv_destroy_cq(cl.cq);
	ibv_dealloc_pd(cl.pd);
	rdma_destroy_id(cl.id);
	rdma_destroy_event_channel(cl.ec);
	free(cl.mem);
	CHECK(client_connect(&cl, addr, false) != 0, "connections refused once drained");
}

/* RFC 8797 §4.2 / §5.1: replies never exceed what the client receives:
 * 1024 bytes when it says so, and when it sends no private data. */
static void t_small_receives(const char *addr, uint32_t pd_recv)
{
	struct client cl;
	if (client_connect_pd(&cl, addr, false, pd_recv)) {
		CHECK(0, "connect with private data recv %u", pd_recv);
		return;
	}
	if (!pd_recv)
		CHECK(cl.server_pd.present, "server private data without ours");
	t_null(&cl, 1);
	t_read(&cl, 900, 0, EXPECT_OK);        /* 28 + 36 + 900 = 964 bytes */
	t_read(&cl, 1000, 0, EXPECT_ERR_CHUNK); /* 1064 > 1024 */
	t_read(&cl, 3000, 1, EXPECT_OK);
	client_close(&cl);
}

/* ---------- the shared bulk pool ---------- */

/* A /proc/self/status field in KiB ("VmRSS", "RssAnon", "RssFile"), or -1. */
static long status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':' && sscanf(line + n + 1, "%ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static uint64_t mem_ld(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* t_idle_conns' bounds per idle connection: registered by the server, and
 * RSS of the whole process (server and light client): 86 KiB and 741 KiB
 * measured at 100 connections (3,536 KiB and 7.1 MiB before). */
#define IDLE_REG_KIB 256u
#define IDLE_RSS_KIB 1024u

/* What t_idle_conns reads before and after opening connections. */
struct idle_mem {
	long rss, anon, file;
	uint64_t conn_reg;
};

static void idle_mem_read(struct idle_mem *m)
{
	m->rss = status_kib("VmRSS");
	m->anon = status_kib("RssAnon");
	m->file = status_kib("RssFile");
	m->conn_reg = mem_ld(&rdma_stats_mem.conn_registered);
}

/* One "# idle:" line: the growth from m0 with n connections open. */
static void idle_mem_print(const struct idle_mem *m0, const struct idle_mem *m1, unsigned n)
{
	/* RssFile: the queues the rxe driver maps (both sides); RssAnon: heap,
	 * registered buffers (both sides; the clients' are CL_LIGHT_MEM each). */
	printf("# idle: %u connections: per-connection registered %.1f KiB each (%.1f MiB in all), "
	       "bulk pool registered %.1f MiB of %.1f MiB, RSS %ld -> %ld KiB (+%.1f MiB, clients included: "
	       "anon +%.1f MiB, mapped queues +%.1f MiB)\n",
	       n, n ? (double)(m1->conn_reg - m0->conn_reg) / n / 1024 : 0.0,
	       (double)(m1->conn_reg - m0->conn_reg) / (1 << 20),
	       (double)mem_ld(&rdma_stats_mem.pool_registered) / (1 << 20),
	       (double)mem_ld(&rdma_stats_mem.pool_max) / (1 << 20), m0->rss, m1->rss,
	       (double)(m1->rss - m0->rss) / 1024, (double)(m1->anon - m0->anon) / 1024,
	       (double)(m1->file - m0->file) / 1024);
}

/*
 * n idle connections (light clients: one NULL each, then nothing): what the
 * server registered for them (per-connection buffers, the shared bulk pool)
 * and the process's RSS growth, which includes the clients' own memory (an
 * upper bound for the server's); printed at 1, 10 and n connections.
 */
static void t_idle_conns(const char *addr, unsigned n)
{
	static struct client cls[100];
	struct idle_mem m0, m1;
	unsigned ok = 0;

	if (n > 100)
		n = 100;
	idle_mem_read(&m0);
	cl_mem_size = CL_LIGHT_MEM;
	cl_nrecv = CL_LIGHT_NRECV;
	for (unsigned i = 0; i < n; i++) {
		if (client_connect(&cls[i], addr, false))
			break;
		ok++;
		send_null(&cls[i], 1);
		uint32_t len;
		CHECK(client_recv(&cls[i], &len, 5000) != NULL, "idle connection %u: NULL answered", i);
		if ((ok == 1 || ok == 10) && ok < n) {
			usleep(200000);
			idle_mem_read(&m1);
			idle_mem_print(&m0, &m1, ok);
		}
	}
	CHECK(ok == n, "%u of %u idle connections", ok, n);
	usleep(200000);
	idle_mem_read(&m1);
	idle_mem_print(&m0, &m1, ok);
	/* The bulk pool is the device's: idle connections register none of it. */
	CHECK(mem_ld(&rdma_stats_mem.pool_registered) <= mem_ld(&rdma_stats_mem.pool_max),
	      "bulk pool within its bound");
	/* Memory bounds (issue 11), not timings: an idle connection registers
	 * the ramp's first receive buffers and one call buffer set (86 KiB),
	 * and the process grows by at most IDLE_RSS_KIB per connection, its
	 * light client included (before the ramp and the call buffer split:
	 * 3,536 KiB registered and 7.1 MiB RSS each). */
	CHECK(m1.conn_reg - m0.conn_reg <= (uint64_t)ok * IDLE_REG_KIB * 1024,
	      "idle connections register at most %u KiB each (%.1f KiB)", IDLE_REG_KIB,
	      ok ? (double)(m1.conn_reg - m0.conn_reg) / ok / 1024 : 0.0);
	CHECK(m1.rss > 0 && m1.rss - m0.rss <= (long)ok * IDLE_RSS_KIB,
	      "%u idle connections grow RSS by at most %u KiB each, clients included (%ld KiB in all)", ok,
	      IDLE_RSS_KIB, m1.rss - m0.rss);
	for (unsigned i = 0; i < ok; i++)
		client_close(&cls[i]);
	cl_mem_size = CL_MEM;
	cl_nrecv = CL_NRECV;
}

#define POOL_CONNS 8
#define POOL_MIB (1u << 20)

/* WRITE of 1 MiB from CL_DATA_OFF in a Read chunk (k: send buffer). */
static uint32_t send_write_1m(struct client *cl, unsigned k)
{
	struct msg m;
	m_head_msg(&m);
	m_u32(&m, 1);
	m_u32(&m, 44);
	m_seg(&m, cl->mr->rkey, POOL_MIB, (uintptr_t)(cl->mem + CL_DATA_OFF));
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_rpc(&m, xid, 7);
	m_u32(&m, POOL_MIB);
	send_at(cl, k, &m);
	return xid;
}

/* READ of 1 MiB into a Write chunk at dst. */
static uint32_t send_read_1m(struct client *cl, unsigned k, uint8_t *dst)
{
	struct msg m;
	m_head_msg(&m);
	m_u32(&m, 0);
	m_u32(&m, 1);
	m_u32(&m, 1);
	m_seg(&m, cl->mr->rkey, POOL_MIB, (uintptr_t)dst);
	m_u32(&m, 0);
	m_u32(&m, 0);
	m_rpc(&m, xid, 6);
	m_u32(&m, POOL_MIB);
	send_at(cl, k, &m);
	return xid;
}

/*
 * More concurrent bulk calls than the pool has slots (main() configures a
 * 7-slot pool, 3 per connection): POOL_CONNS connections each send two 1 MiB
 * WRITEs and two 1 MiB READs at once. None may fail; every byte is checked.
 */
static void t_pool_contention(const char *addr)
{
	static struct client cls[POOL_CONNS];
	uint32_t xids[POOL_CONNS][4];
	unsigned nconn = 0, answered = 0, good = 0;
	uint64_t waits0 = mem_ld(&rdma_stats_mem.waits);

	for (unsigned i = 0; i < POOL_CONNS; i++, nconn++)
		if (client_connect(&cls[i], addr, false))
			break;
	CHECK(nconn == POOL_CONNS, "pool: %u connections", nconn);
	for (unsigned i = 0; i < nconn; i++) {
		uint8_t *src = cls[i].mem + CL_DATA_OFF;
		for (uint32_t b = 0; b < POOL_MIB; b++)
			src[b] = pattern(b * 3 + i);
		memset(cls[i].mem + (3u << 20), 0, 2 * POOL_MIB + 16);
		memset(cls[i].mem + (5u << 20), 0, POOL_MIB + 16);
	}
	for (unsigned i = 0; i < nconn; i++) {
		xids[i][0] = send_write_1m(&cls[i], 0);
		xids[i][1] = send_read_1m(&cls[i], 1, cls[i].mem + (3u << 20));
		xids[i][2] = send_write_1m(&cls[i], 2);
		xids[i][3] = send_read_1m(&cls[i], 3, cls[i].mem + (5u << 20));
	}
	for (unsigned i = 0; i < nconn; i++) {
		uint32_t want_hash = fnv(cls[i].mem + CL_DATA_OFF, POOL_MIB);
		for (unsigned k = 0; k < 4; k++) {
			uint32_t len;
			const uint8_t *r = client_recv(&cls[i], &len, 60000);
			if (!r)
				break;
			answered++;
			uint32_t rx = be(r, 0);
			bool is_write = rx == xids[i][0] || rx == xids[i][2];
			bool is_read = rx == xids[i][1] || rx == xids[i][3];
			if (be(r, 3) != RDMA_MSG)
				continue;
			if (is_write && be(r, 12) == 0 && be(r, 13) == POOL_MIB && be(r, 14) == want_hash)
				good++;
			/* READ reply: lists (read 0; write 1 x 1 segment; 0; reply 0), RPC at word 13. */
			if (is_read && be(r, 5) == 1 && be(r, 6) == 1 && be(r, 8) == POOL_MIB &&
			    be(r + 52, 5) == 0 && be(r + 52, 6) == POOL_MIB)
				good++;
		}
		bool ok = true;
		for (uint32_t b = 0; b < POOL_MIB && ok; b++)
			ok = cls[i].mem[(3u << 20) + b] == pattern(b) && cls[i].mem[(5u << 20) + b] == pattern(b);
		CHECK(ok, "pool: connection %u: both READs landed intact", i);
	}
	uint64_t waits = mem_ld(&rdma_stats_mem.waits) - waits0;
	CHECK(answered == 4 * nconn && good == 4 * nconn, "pool: %u of %u bulk calls answered, %u good",
	      answered, 4 * nconn, good);
	printf("# pool: %u x 1 MiB calls on %u connections through %llu slots: %u good, %llu waited, "
	       "in use after %llu\n", 4 * nconn, nconn, (unsigned long long)mem_ld(&rdma_stats_mem.slots), good,
	       (unsigned long long)waits, (unsigned long long)mem_ld(&rdma_stats_mem.in_use));
	CHECK(waits > 0, "pool: some calls waited for a slot");
	for (unsigned i = 0; i < nconn; i++)
		client_close(&cls[i]);
}

/*
 * --idle-client ADDR N SECONDS: no server of its own; N light connections to
 * the rnfsd at ADDR (NULL answered on each), held SECONDS, so that the guest
 * script can read the daemon's RSS and registered memory (rdma-verbs.sh).
 */
static int idle_client(const char *addr, unsigned n, unsigned hold_s)
{
	static struct client cls[100];
	unsigned ok = 0;

	if (n > 100)
		n = 100;
	cl_mem_size = CL_LIGHT_MEM;
	cl_nrecv = CL_LIGHT_NRECV;
	for (; ok < n; ok++) {
		uint32_t len;
		if (client_connect(&cls[ok], addr, false))
			break;
		send_null(&cls[ok], 1);
		if (!client_recv(&cls[ok], &len, 5000)) {
			client_close(&cls[ok]);
			break;
		}
	}
	printf("# idle-client: %u of %u connections open, NULL answered on each\n", ok, n);
	fflush(stdout);
	sleep(hold_s);
	for (unsigned i = 0; i < ok; i++)
		client_close(&cls[i]);
	return ok == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--idle-client"))
		return idle_client(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	const char *addr = argc > 1 ? argv[1] : "192.0.2.1";
	int ndev = 0;
	struct ibv_device **devs = ibv_get_device_list(&ndev);
	if (devs)
		ibv_free_device_list(devs);
	if (!devs || ndev == 0) {
		printf("1..0 # SKIP no RDMA device\n");
		return 77;
	}

	log_init(true, getenv("RNFSD_VERBOSE") ? 1 : 0);
	loop = loop_new();
	if (!loop || workers_start(loop, 2) || rpc_init(0))
		return 1;
	rpc_register_program(&prog);
	struct rnfsd_config cfg;
	config_defaults(&cfg);
	cfg.rdma = CONFIG_YES;
	cfg.rdma_send_invalidate = true;
	/* A small bulk pool (7 slots of about 1 MiB, at most 3 per connection):
	 * every scenario runs with calls waiting for buffers. */
	cfg.rdma_buffer_pool = 8u << 20;
	/* The full grant from the first call: this client pipelines and bursts
	 * without waiting for a grant (t_pipeline, t_burst); t_idle_conns'
	 * connections get the ramp, as a daemon's do by default. */
	cfg.rdma_initial_credits = 0;
	struct rdma_xprt *rx = rdma_xprt_create(loop, &cfg);
	rdma_x = rx ? rdma_xprt_base(rx) : NULL;
	drain_ev = loop_async(loop, drain_ev_cb, NULL);
	bc_ev = loop_async(loop, bc_ev_cb, NULL);
	if (!rdma_x || !drain_ev || !bc_ev || rdma_x->ops->start(rdma_x))
		return 1;
	pthread_t th;
	pthread_create(&th, NULL, loop_thread, NULL);

	struct client cl;
	if (client_connect(&cl, addr, false)) {
		printf("not ok - cannot connect to %s:20049\n", addr);
		return 1;
	}
	/* RFC 8797: the server's private data. */
	CHECK(cl.server_pd.present && cl.server_pd.send_size == 4096 && cl.server_pd.recv_size == 4096 &&
	      cl.server_pd.remote_inv, "server private data");

	t_null(&cl, 1);
	t_null(&cl, 2);
	t_errors(&cl);
	t_write(&cl, 100, 1);
	t_write(&cl, 100001, 3);
	t_write(&cl, 1u << 20, 16);
	t_read(&cl, 500, 0, EXPECT_OK);
	t_read(&cl, 4000, 0, EXPECT_OK);
	t_read(&cl, 4090, 0, EXPECT_ERR_CHUNK);
	/* RFC 8166 §4.5.3, RFC 8267 §3: a reply too big for inline and no
	 * chunk to carry it: ERR_CHUNK (the handler had room to produce it). */
	t_read(&cl, 8000, 0, EXPECT_ERR_CHUNK);
	t_read(&cl, 20000, 0, EXPECT_SYSTEM_ERR);
	t_readdir_nochunk(&cl, 6000);
	t_read(&cl, 5001, 1, EXPECT_OK);
	t_read(&cl, 1u << 20, 4, EXPECT_OK);
	t_readdir(&cl, 20000, 32768);
	t_readdir(&cl, 20000, 8192);
	t_long_call(&cl, 3000);
	t_long_call(&cl, 200000);
	t_pipeline(&cl, 60);
	t_burst(&cl, 128);
	t_burst(&cl, 128);
	t_reverse(&cl);
	if (getenv("RDMA_PERF")) {
		/* Timing of sequential 1 MiB WRITEs and READs (for orientation). */
		int n = atoi(getenv("RDMA_PERF"));
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < n; i++)
			t_write(&cl, 1u << 20, 1);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double s1 = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		for (int i = 0; i < n; i++)
			t_read(&cl, 1u << 20, 1, EXPECT_OK);
		clock_gettime(CLOCK_MONOTONIC, &a);
		double s2 = (double)(a.tv_sec - b.tv_sec) + (a.tv_nsec - b.tv_nsec) / 1e9;
		printf("# perf: %d x 1 MiB WRITE %.1f ms each (%.1f MB/s), READ %.1f ms each (%.1f MB/s)\n",
		       n, s1 * 1e3 / n, n * 1.048576 / s1, s2 * 1e3 / n, n * 1.048576 / s2);
	}
	t_null(&cl, 1);
	client_close(&cl);

	t_small_receives(addr, 1024);
	t_small_receives(addr, 0);
	t_pool_contention(addr);
	rdma_xprt_set_initial_credits(rx, RDMA_CREDITS_INITIAL); /* the daemon's default */
	t_idle_conns(addr, getenv("RDMA_IDLE_CONNS") ? (unsigned)atoi(getenv("RDMA_IDLE_CONNS")) : 100);
	rdma_xprt_set_initial_credits(rx, 0);
	t_disconnect_midflight(addr);
	/* And the server still serves. */
	if (client_connect(&cl, addr, false) == 0) {
		t_null(&cl, 1);
		t_read(&cl, 70000, 2, EXPECT_OK);
		client_close(&cl);
	} else {
		CHECK(0, "connect after a mid-flight disconnect");
	}

	/* Every connection was torn down and freed, mid-flight ones included
	 * (the count is read from this thread once the loop has settled). */
	unsigned left = 1;
	for (int i = 0; i < 50 && left; i++) {
		usleep(100000);
		left = rdma_x->ops->conns(rdma_x);
	}
	CHECK(left == 0, "%u connections not freed", left);
	t_drain(addr);
	loop_break(loop);
	pthread_join(th, NULL);
	rdma_x->ops->stop(rdma_x);
	workers_stop();
	rdma_x->ops->free(rdma_x);
	loop_ev_free(drain_ev);
	loop_ev_free(bc_ev);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
