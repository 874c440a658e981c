/*
 * nlm.h - the NLM v4 service's face to the daemon (nlm/ is a sibling of
 * nfs/: the Network Lock Manager, program 100021 version 4, for NFSv3
 * clients' fcntl locks; RFC 1813 appendix II, X/Open XNFS). Locks are the
 * backend's byte-range locks (backend/backend.h), taken for lock owners NLM
 * keeps in its table (nlm_table.h); a blocked lock is granted with a
 * GRANTED callback to the client's lock manager (nlm_cb.h).
 */
#ifndef RNFSD_NLM_H
#define RNFSD_NLM_H

#include <stdbool.h>
#include <stdint.h>

struct loop;

/* Main thread, after nfs_service_init() and before rpcbind registration:
 * register the program (served on every transport NFS is). 0 or -1 (logged). */
int nlm_register(void);
/* Main thread, once the loop exists and before serving: the lock table, the
 * callback channels and the retry thread. grace_s: seconds after start in
 * which only reclaims are granted (0: none). 0 or -1 (logged). */
int nlm_start(struct loop *loop, unsigned grace_s);
/* Before nlm_start: lock owners, and held files, one client host may have ([rnfsd] nlm-locks-per-host; 0: no bound
 * but the tables'). */
void nlm_configure(unsigned locks_per_host);
/* Main thread, after rpc_rpcbind_register(): register NLM v4 on the UDP
 * transport's port (transport/udp.h; also where rpc.statd's notifications
 * arrive), on netids RPCBIND_UDP4 | RPCBIND_UDP6 (rpc/rpcbind.h). */
void nlm_rpcbind_register_udp(uint16_t port, unsigned netids);
/* Main thread, after serving stopped: every NLM lock released. */
void nlm_stop(void);

/* Counters (stats, tests). */
struct nlm_counters {
	uint64_t granted_callbacks; /* GRANTED calls the client accepted */
	uint64_t failed_callbacks;  /* GRANTED calls that failed or were refused */
	uint64_t reclaims;          /* reclaiming LOCKs granted (after a restart, in grace) */
	unsigned waiters;           /* blocked locks now */
	unsigned owners, held;      /* lock owners, (owner, file) records now */
	unsigned per_host;          /* the bound of each per host */
};
void nlm_counters(struct nlm_counters *out);

/* rnfsctl client list: each host (caller_name) with lock owners, and what it holds. */
struct nlm_host_info {
	char host[256];        /* caller_name as sent (log-escape before printing) */
	unsigned owners, held; /* lock owners, (owner, file) records with locks */
};
/* At most max hosts into out: how many (0 when NLM is not served). */
unsigned nlm_hosts(struct nlm_host_info *out, unsigned max);

/* rnfsctl client revoke: the host caller_name's locks, waiters and shares go, as for its FREE_ALL.
 * How many locked files were released. */
unsigned nlm_host_revoke(const char *caller_name);

/* Retry blocked locks now (tests; the retry thread also polls every second). */
void nlm_kick(void);

#endif
