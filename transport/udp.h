/*
 * udp.h - ONC RPC over UDP (RFC 5531: one call per datagram, one reply
 * datagram; no record marking), for the programs that still need it: NLM v4
 * (Linux lockd uses UDP when the NFS mount does; other clients still do) and
 * rpc.statd's reboot notifications, which statd delivers over UDP to
 * 127.0.0.1 as NLM's SM_NOTIFY procedure.
 *
 * Only the programs named in udp_params.progs are served; a call to another
 * program is answered PROG_UNAVAIL (NFS and MOUNT are not offered over UDP).
 * One port for every address; a fixed pool of call contexts, each with its
 * rpc_call, a one-call rpc_conn carrying the datagram's source, and its
 * buffers, allocated at create, never per call.
 *
 * Use (main thread): x = udp_xprt_create(loop, &p); udp_xprt_base(x)->ops->
 * start / drain / stop / free, as every transport (rpc/xprt.h).
 */
#ifndef RNFSD_UDP_H
#define RNFSD_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/config.h"

struct loop;
struct udp_xprt;
struct xprt;

#define UDP_MSG_MAX 8192u  /* largest call accepted (NLM's largest is ~2.2 KB) */
#define UDP_REPLY_MAX 4096u /* largest reply sent (NLM's are < 1.2 KB) */
#define UDP_PROGS_MAX 4

struct udp_params {
	struct config_listen listen[CONFIG_MAX_LISTEN + 1]; /* addresses; their port fields are ignored */
	unsigned n_listen;
	uint16_t port;    /* every address on this port; 0: one ephemeral port */
	unsigned n_ctx;   /* calls in flight at most; reading pauses at the limit */
	uint32_t progs[UDP_PROGS_MAX];
	unsigned n_progs;
};

#define UDP_CTX_DEFAULT 32

/*
 * The TCP transport's addresses (plus 127.0.0.1, where rpc.statd calls,
 * unless 0.0.0.0 or 127.0.0.1 is among them), on [rnfsd] nlm-udp-port,
 * UDP_CTX_DEFAULT contexts, no program yet (the caller adds them).
 */
void udp_params_from_config(struct udp_params *p, const struct rnfsd_config *cfg);

/* Not yet bound (ops->start binds). NULL: no memory (logged). */
struct udp_xprt *udp_xprt_create(struct loop *loop, const struct udp_params *p);
struct xprt *udp_xprt_base(struct udp_xprt *x);
/* After start: the port bound, and whether an address of family af is. */
uint16_t udp_xprt_port(const struct udp_xprt *x);
bool udp_xprt_listens(const struct udp_xprt *x, int af);

#endif
