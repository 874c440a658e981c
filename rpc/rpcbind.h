/*
 * rpcbind.h - registration of the served RPC programs with the local rpcbind
 *. Self-contained on purpose: rpc_rpcbind.c includes libtirpc's
 * <rpc/rpc.h>, whose names (RPC_SUCCESS, ...) clash with our rpc.h.
 */
#ifndef RNFSD_RPCBIND_H
#define RNFSD_RPCBIND_H

#include <stdint.h>

struct rpc_prog_vers {
	uint32_t prog;
	uint32_t vers;
	const char *name;
};

/* Every registered program and version (rpc_prog.c); returns the total, fills at most max. */
unsigned rpc_prog_versions(struct rpc_prog_vers *out, unsigned max);

#define RPCBIND_TCP4 1u /* netid "tcp" */
#define RPCBIND_TCP6 2u /* netid "tcp6" */
#define RPCBIND_UDP4 4u /* netid "udp" (rpc_rpcbind_register_udp only) */
#define RPCBIND_UDP6 8u /* netid "udp6" (rpc_rpcbind_register_udp only) */

/*
 * Main thread. Register every program/version registered with
 * rpc_register_program() at port on the netids in `netids` (RPCBIND_TCP4 |
 * RPCBIND_TCP6: those we listen on), replacing older registrations of those
 * netids. When rpcbind is not running (its UNIX socket does not answer),
 * logs one line and returns -1 at once; a hung rpcbind is given
 * RPCBIND_TIMEOUT_MS. Returns 0 if every registration succeeded.
 */
int rpc_rpcbind_register(uint16_t port, unsigned netids);

/*
 * Main thread. Register one program version on the UDP netids in `netids`
 * (RPCBIND_UDP4 | RPCBIND_UDP6) at port (NLM v4 over UDP, transport/udp.h,
 * which is also where rpc.statd's notifications arrive).
 * 0, or -1 (logged; nothing when rpcbind is not running).
 */
int rpc_rpcbind_register_udp(uint32_t prog, uint32_t vers, const char *name, uint16_t port, unsigned netids);

/* Undo rpc_rpcbind_register() and rpc_rpcbind_register_udp() (only what they registered). Same time bound. */
void rpc_rpcbind_unregister(void);

/* For tests: the UNIX socket probed to decide whether rpcbind runs (default
 * /run/rpcbind.sock, then /var/run/rpcbind.sock). NULL restores the default. */
void rpc_rpcbind_set_probe_path(const char *path);

#define RPCBIND_TIMEOUT_MS 5000

#endif
