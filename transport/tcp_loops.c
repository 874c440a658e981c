/*
 * tcp_loops.c - the TCP transport over several event loops ([rnfsd] loops).
 *
 * The listening xprt runs on loop 0 and owns the listeners; each other loop
 * has a shard: a tcp_xprt of its own with no listener, whose connections,
 * call contexts, waiters and timers only its loop's thread touches (the
 * locking rule of tcp_internal.h holds per xprt). What crosses loops:
 *
 *   accept (loop 0) --tcp_loops_accept: round-robin--> itself, or
 *        a tcp_hand_off message --shard's loop--> tcp_xprt_admit(shard)
 *   drain (loop 0) --drain_msg--> tcp_xprt_drain(shard) --drained_msg--> loop 0
 *   back channel calls: tcp_bc.c; replies and close hooks for loop 0's
 *        rpc_clnt: rpc/rpc_clnt.c
 *   TLS reload (loop 0): the new SSL_CTX, referenced once per shard
 *
 * The limits (max_connections, max_calls) are divided among the loops, so
 * that the whole stays within what was configured; a connection's calls
 * complete on its loop (rpc_conn.home, core/workers.h). Stopping and freeing
 * happen on the main thread after every loop stopped.
 */
#include "transport/tcp_internal.h"

#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/prom.h"

/* An accepted socket on its way to a shard (one per connection, not per call). */
struct tcp_hand_off {
	struct loop_msg m;
	struct tcp_xprt *x;
	int fd;
	socklen_t len;
	struct sockaddr_storage ss;
};

/* The pure part: which loop the next connection goes to (0: the listening xprt), and the next
 * cursor. Round-robin over n loops. */
unsigned tcp_loops_next(unsigned *rr, unsigned n)
{
	unsigned t = n ? *rr % n : 0;

	*rr = n ? (t + 1) % n : 0;
	return t;
}

/* A limit shared by n loops: each gets its ceiling share, at least min. */
unsigned tcp_loops_share(unsigned total, unsigned n, unsigned min)
{
	unsigned share = n ? (total + n - 1) / n : total;

	return share < min ? min : share;
}

static void tcp_hand_off_run(struct loop_msg *m)
{
	struct tcp_hand_off *h = container_of(m, struct tcp_hand_off, m);

	if (h->x->draining)
		close(h->fd); /* shutting down: as if the listener had closed first */
	else
		tcp_xprt_admit(h->x, h->fd, &h->ss, h->len);
	free(h);
}

void tcp_loops_accept(struct tcp_xprt *x, int fd, const struct sockaddr_storage *ss, socklen_t len)
{
	static struct log_limit lim;
	unsigned t = tcp_loops_next(&x->rr, x->n_shards + 1);

	if (t == 0) {
		tcp_xprt_admit(x, fd, ss, len);
		return;
	}
	struct tcp_hand_off *h = malloc(sizeof(*h));
	if (!h) {
		log_limited(&lim, LOG_ERR, "tcp: out of memory for a connection");
		close(fd);
		return;
	}
	h->m.fn = tcp_hand_off_run;
	h->x = x->shards[t - 1];
	h->fd = fd;
	h->len = len;
	memcpy(&h->ss, ss, len);
	loop_send(h->x->loop, &h->m);
}

int tcp_xprt_add_loop(struct tcp_xprt *x, struct loop *l, unsigned home)
{
	struct tcp_params p = x->p;
	struct tcp_xprt **v = realloc(x->shards, (x->n_shards + 1) * sizeof(*v));

	if (!v) {
		log_err("tcp: out of memory");
		return -1;
	}
	x->shards = v;
	if (x->n_shards == 0) {
		x->max_connections_all = x->p.max_connections;
		x->max_calls_all = x->p.max_calls;
	}
	p.tls_cert[0] = '\0'; /* the listening xprt's context is shared, not loaded again */
	struct tcp_xprt *s = tcp_xprt_create(l, &p);
	if (!s)
		return -1; /* logged */
	s->parent = x;
	s->index = x->n_shards + 1;
	s->home = home;
	memcpy(s->p.tls_cert, x->p.tls_cert, sizeof(s->p.tls_cert));
	if (x->tls_ctx && SSL_CTX_up_ref(x->tls_ctx))
		s->tls_ctx = x->tls_ctx;
	x->shards[x->n_shards++] = s;
	/* Divide the limits again among 1 + n_shards loops. */
	unsigned n = x->n_shards + 1;
	for (unsigned i = 0; i <= x->n_shards; i++) {
		struct tcp_xprt *t = i ? x->shards[i - 1] : x;
		t->p.max_connections = tcp_loops_share(x->max_connections_all, n, 1);
		t->p.max_calls = tcp_loops_share(x->max_calls_all, n, t->p.conn_max_calls);
		t->reserve = t->p.max_calls / 4;
	}
	tcp_xprt_sweep_start(s);
	return 0;
}

/* Loop 0: one of the loops finished draining; the last one tells the caller. */
static void tcp_loops_part_done(void *arg)
{
	struct tcp_xprt *x = arg;

	if (x->drains_left && --x->drains_left == 0 && x->loops_done) {
		void (*done)(void *) = x->loops_done;
		x->loops_done = NULL;
		done(x->loops_done_arg);
	}
}

static void tcp_loops_drained_run(struct loop_msg *m)
{
	tcp_loops_part_done(container_of(m, struct tcp_xprt, drained_msg)->parent);
}

/* The shard's loop: drained; tell loop 0. */
static void tcp_loops_shard_drained(void *arg)
{
	struct tcp_xprt *s = arg;

	s->drained_msg.fn = tcp_loops_drained_run;
	loop_send(s->parent->loop, &s->drained_msg);
}

static void tcp_loops_drain_run(struct loop_msg *m)
{
	struct tcp_xprt *s = container_of(m, struct tcp_xprt, drain_msg);

	tcp_xprt_drain(s, tcp_loops_shard_drained, s);
}

void tcp_loops_drain(struct tcp_xprt *x, void (*done)(void *arg), void *arg)
{
	x->loops_done = done;
	x->loops_done_arg = arg;
	x->drains_left = x->n_shards + 1; /* first: a part may be done at once */
	for (unsigned i = 0; i < x->n_shards; i++) {
		x->shards[i]->drain_msg.fn = tcp_loops_drain_run;
		loop_send(x->shards[i]->loop, &x->shards[i]->drain_msg);
	}
	tcp_xprt_drain(x, tcp_loops_part_done, x);
}

void tcp_loops_stop(struct tcp_xprt *x)
{
	for (unsigned i = 0; i < x->n_shards; i++)
		tcp_xprt_stop(x->shards[i]);
}

void tcp_loops_free(struct tcp_xprt *x)
{
	for (unsigned i = 0; i < x->n_shards; i++)
		tcp_xprt_free(x->shards[i]);
	free(x->shards);
	x->shards = NULL;
	x->n_shards = 0;
}

unsigned tcp_xprt_loops(const struct tcp_xprt *x)
{
	return x->n_shards + 1;
}

unsigned tcp_xprt_loop_conns(const struct tcp_xprt *x, unsigned i)
{
	const struct tcp_xprt *t = i == 0 ? x : i <= x->n_shards ? x->shards[i - 1] : NULL;

	return t ? __atomic_load_n(&t->n_conns, __ATOMIC_RELAXED) : 0;
}

/* "loops": [{"tcp_connections": n, "busy_s": cpu seconds}, ...], loop 0 first. */
static void tcp_loops_stats_write(struct json_out *j, const char *name, void *arg)
{
	const struct tcp_xprt *x = arg;

	json_arr_open(j, name);
	for (unsigned i = 0; i <= x->n_shards; i++) {
		json_obj_open(j, NULL);
		json_u64(j, "tcp_connections", tcp_xprt_loop_conns(x, i));
		json_fixed(j, "busy_s", loop_busy_seconds(i ? x->shards[i - 1]->loop : x->loop), 3);
		json_obj_close(j);
	}
	json_arr_close(j);
}

/* The same gauge on the Prometheus page: rnfsd_loop_tcp_connections{loop="0"..}. */
static void tcp_loops_stats_prom(struct prom_out *p, void *arg)
{
	const struct tcp_xprt *x = arg;
	char idx[12];

	if (!prom_family(p, "rnfsd_loop_tcp_connections", PROM_GAUGE, "TCP connections each event loop owns"))
		return;
	for (unsigned i = 0; i <= x->n_shards; i++) {
		snprintf(idx, sizeof(idx), "%u", i);
		prom_sample_u64(p, NULL, &(struct prom_label){ "loop", idx }, 1, tcp_xprt_loop_conns(x, i));
	}
}

int tcp_loops_stats_section_add(struct tcp_xprt *x)
{
	if (stats_section_add(STATS_PLACE_TRANSPORT, "loops", tcp_loops_stats_write, x) != 0)
		return -1;
	return stats_section_set_prom("loops", tcp_loops_stats_prom);
}

/* The shard's loop: take the reloaded context (a reference already counted for it). */
struct tcp_tls_swap {
	struct loop_msg m;
	struct tcp_xprt *x;
	struct ssl_ctx_st *ctx;
};

static void tcp_loops_tls_swap_run(struct loop_msg *m)
{
	struct tcp_tls_swap *w = container_of(m, struct tcp_tls_swap, m);

	SSL_CTX_free(w->x->tls_ctx);
	w->x->tls_ctx = w->ctx;
	free(w);
}

void tcp_loops_tls_reload(struct tcp_xprt *x)
{
	for (unsigned i = 0; i < x->n_shards; i++) {
		struct tcp_tls_swap *w = malloc(sizeof(*w));
		if (!w || (x->tls_ctx && !SSL_CTX_up_ref(x->tls_ctx))) {
			free(w);
			log_err("tls: reload: loop %u keeps the running certificate (no memory)", i + 1);
			continue;
		}
		w->m.fn = tcp_loops_tls_swap_run;
		w->x = x->shards[i];
		w->ctx = x->tls_ctx;
		loop_send(w->x->loop, &w->m);
	}
}
