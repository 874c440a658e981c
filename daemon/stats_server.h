/*
 * stats_server.h - the daemon's side of the live statistics (core/stats.h):
 * a root-only UNIX socket that answers one request with the JSON document
 * (read by rnfsctl), the periodic STATUS= line for the service manager, and
 * the document's "resources" section (descriptors and the tables holding them).
 *
 * main: stats_set_sources() and the sections (stats_server_resources_add(),
 * NFSv4's, RDMA's), stats_server_start() after the listeners,
 * stats_status_start() for the periodic STATUS= line, stats_server_stop()
 * and stats_status_stop() at shutdown.
 */
#ifndef RNFSD_STATS_SERVER_H
#define RNFSD_STATS_SERVER_H

#include <stdio.h>

#include "core/stats.h"

struct loop;

/* ---- the socket ---- */

/*
 * Loop thread. Listen on path (a UNIX stream socket, mode 0600; a stale
 * socket file left by a dead daemon is replaced, a live one is an error).
 * Each client may send one request line ("stats", or nothing) and gets the
 * JSON document (or a control request, stats_server_set_control(), its answer); clients whose SO_PEERCRED uid is neither 0 nor ours are
 * refused. Returns 0, or -1 (logged).
 */
int stats_server_start(struct loop *l, const char *path);
/* Create the socket's directory if missing (one level, mode 0755: outside systemd nobody made
 * /run/rnfsd). main.c locks "<path>.lock" there before anything else; errors surface later. */
void stats_server_make_dir(const char *path);
/* Requests other than "stats" (the control socket's, daemon/ctl_exports.h): handler answers req
 * (NUL-terminated, no newline) on out, 0; or -1: not its request. Loop thread. */
void stats_server_set_control(int (*handler)(char *req, FILE *out));
/* Close the socket and remove its file. */
void stats_server_stop(void);

/* Loop thread. Send STATUS=<stats_status_line> now and every interval_s seconds. */
int stats_status_start(struct loop *l, unsigned interval_s);
/* Send STATUS= now (e.g. right after a reload). */
void stats_status_refresh(void);
void stats_status_stop(void);

/* ---- the daemon's section ---- */

/* Descriptors against RLIMIT_NOFILE and the tables that hold them (conf/fd_budget.h). */
struct stats_resources {
	uint64_t fds, fd_limit, fd_reserve;     /* descriptors open now, RLIMIT_NOFILE, kept from state */
	uint64_t lock_descriptions, lock_descriptions_max; /* the local backend's, all lock owners */
	uint64_t lock_shared_descriptions, lock_shared_pieces; /* of those, write delegations' shared ones, their locks */
	uint64_t uring_personalities, uring_personalities_max; /* io_uring identities (0 max: off) */
	uint64_t handle_cache, handle_cache_max;           /* the local backend's handles by inode (listings) */
	uint64_t handle_cache_hits, handle_cache_misses;
	uint64_t nlm_owners, nlm_held, nlm_per_host_max;   /* NLM lock owners, (owner, file) records */
	uint64_t nlm_waiters;                              /* NLM blocked locks waiting */
	uint64_t gss_contexts, gss_contexts_max, gss_evictions; /* RPCSEC_GSS context table (rpc/rpc_gss_krb5.h) */
	uint64_t rss_bytes;                                /* resident memory (filled here, /proc/self/statm) */
	/* (nlm_waiters and rss_bytes are on the Prometheus page only: the JSON document is unchanged) */
};
/* Main thread, before serving: add "resources" (STATS_PLACE_STATE), filled by fill on the stats
 * thread or the Prometheus server's (any thread: fill takes only short locks). 0, or -1 (the
 * registry is full). */
int stats_server_resources_add(void (*fill)(struct stats_resources *out));

#endif
