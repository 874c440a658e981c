/*
 * rpcbind.h - registration of the served RPC programs with the local rpcbind
 *. Self-contained on purpose: rpc_rpcbind.c includes libtirpc's
 * <rpc/rpc.h>, whose names (RPC_SUCCESS, ...) clash with our rpc.h.
 */
#ifndef RNFSD_RPCBIND_H
#define RNFSD_RPCBIND_H

#include <stdbool.h>
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

/* Main thread, before rpc_rpcbind_register(): take over registrations that another live server
 * holds ([rnfsd] rpcbind-replace; default no). */
void rpc_rpcbind_set_replace(bool replace);

#define RPCBIND_TIMEOUT_MS 5000

/* ---- whose is a registration (rpcbind_live.c) ---- */

/* What to do at start with a program/version/netid rpcbind has at cur_port (0: none, -1: could not
 * ask) when other_live (another process serves cur_port) and replace (rpcbind-replace) are as given. */
enum rpcbind_start {
	RPCBIND_ADD,     /* nothing there: set ours */
	RPCBIND_REPLACE, /* stale, already ours, or replace: unset, then set ours */
	RPCBIND_KEEP,    /* another live server's: leave it, and do not unregister it at exit */
};
enum rpcbind_start rpcbind_start_action(int cur_port, bool other_live, bool replace);

/* At exit, for a registration we made at our_port: remove it only if it still names our_port and no
 * other process serves that port (a server on another address with the same port). */
bool rpcbind_exit_unset(int cur_port, uint16_t our_port, bool other_live);

/* Does a process other than this one listen on TCP port (tcp) or hold UDP port (!tcp), per
 * /proc/net/{tcp,tcp6,udp,udp6} and our /proc/self/fd socket inodes? */
bool rpcbind_port_served_by_other(uint16_t port, bool tcp);

/* The port of an RFC 1833 universal address ("h1.h2.h3.h4.p1.p2", or IPv6 then ".p1.p2"), or -1. */
int rpcbind_uaddr_port(const char *uaddr);

/* One line of /proc/net/{tcp,tcp6,udp,udp6}: local port, state, inode. 0, or -1 (the header). */
int rpcbind_net_line(const char *line, uint16_t *port, unsigned *st, unsigned long *inode);

#endif
