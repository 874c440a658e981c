/*
 * rdma.h - the RPC-over-RDMA transport as the daemon sees it.
 *
 * Built only when HAVE_RDMA (librdmacm + libibverbs found). Everything runs on
 * the daemon's loop thread: the RDMA-CM event channel and each connection's
 * completion channel are loop_io() events; nothing polls.
 */
#ifndef RNFSD_RDMA_H
#define RNFSD_RDMA_H

struct loop;
struct rnfsd_config;

/*
 * Listen on cfg->rdma_listen (default 0.0.0.0:20049) unless cfg->rdma is
 * CONFIG_NO. Call after daemonising (verbs resources do not survive fork()).
 * Returns 0 when listening, or when cfg->rdma is CONFIG_AUTO and no RDMA
 * device exists (said once in the log; TCP goes on serving); -1 (logged) when
 * RDMA was required (CONFIG_YES) and cannot be served.
 */
int rdma_transport_start(struct loop *loop, const struct rnfsd_config *cfg);

/*
 * Stop listening and close every connection. Connections whose calls are
 * still with workers are finished later, when their replies come back; call
 * this before workers_stop(), and rdma_transport_release() after it.
 */
void rdma_transport_stop(void);

/* Connections not yet freed (loop thread; for status lines and tests). */
unsigned rdma_transport_conns(void);

/* After workers_stop(): free what is left (devices, protection domains). */
void rdma_transport_release(void);

#endif
