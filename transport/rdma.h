/*
 * rdma.h - the RPC-over-RDMA transport as the daemon sees it: an instance of
 * the generic transport interface (rpc/xprt.h).
 *
 * Built only when HAVE_RDMA (librdmacm + libibverbs found). Everything runs on
 * the daemon's loop thread: the RDMA-CM event channel and each connection's
 * completion channel are loop_io() events; nothing polls.
 *
 *   struct rdma_xprt *rx = rdma_xprt_create(loop, cfg);   NULL: enable = no
 *   struct xprt *x = rdma_xprt_base(rx);
 *   x->ops->start(x)  listen on cfg->rdma_listen (default 0.0.0.0:20049);
 *                     0 also when enable = auto and RDMA cannot be served
 *                     (said once in the log; TCP goes on serving); -1
 *                     (logged) when enable = yes and it cannot be
 *   x->ops->drain / stop / free, x->ops->conns   as rpc/xprt.h says
 *
 * Call start after daemonising (verbs resources do not survive fork()).
 */
#ifndef RNFSD_RDMA_H
#define RNFSD_RDMA_H

struct loop;
struct rnfsd_config;
struct rdma_xprt;
struct xprt;

/* A transport instance that does not listen yet; NULL if cfg->rdma is
 * CONFIG_NO (nothing to serve) or on allocation failure (logged). */
struct rdma_xprt *rdma_xprt_create(struct loop *loop, const struct rnfsd_config *cfg);

/* Its generic interface. */
struct xprt *rdma_xprt_base(struct rdma_xprt *x);

/* The first credit grant of connections accepted from now on ([rdma]
 * initial-credits; 0: the full grant at once). Any thread. */
void rdma_xprt_set_initial_credits(struct rdma_xprt *x, unsigned initial);

#endif
