/*
 * fd_budget.h - how the descriptors the process may hold (RLIMIT_NOFILE,
 * read once at start-up) are shared out, so that no table of state can
 * take the descriptors connections and the backend need (issue 24 defect
 * 3: opens and lock descriptions each hold one).
 *
 *   reserve       connections ([rnfsd] max-connections, and NFSv4.0 callback
 *                 connections: [nfsv4] max-clients), READ pipes and the
 *                 daemon's own (listeners, event loop, log, statd, inotify):
 *                 never given to state; at most half of the limit
 *   file_cache    the local backend's cached open files (NFSv3 I/O, NLM)
 *   open_files    files held open by NFSv4 open state, all clients
 *   lock_descs    the local backend's lock descriptions (NFSv4 and NLM lock
 *                 owners, one per owner and file while it holds a lock)
 * and each client's share: NFSv4 opens per client, NFSv4 lock owners +
 * lock states per client, NLM lock owners and held files per client host.
 *
 * Pure: a function of the limit and the settings (0: derived). A setting
 * larger than the descriptors allow is lowered, and the result says so.
 */
#ifndef RNFSD_FD_BUDGET_H
#define RNFSD_FD_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define FD_BUDGET_MISC 160u       /* listeners, loop, log, statd, inotify, RDMA channels, ... */
#define FD_BUDGET_PIPES 96u       /* READ-by-pipe: 48 pipes of two (transport/tcp.h TCP_PIPES_MAX) */
#define FD_BUDGET_FCACHE_MAX 512u /* backend/local LOCAL_FCACHE_ENTRIES */
#define FD_BUDGET_MIN 16u         /* no share is set below this */

struct fd_budget_in {
	uint64_t nofile;           /* RLIMIT_NOFILE (soft) */
	unsigned max_connections;  /* connections all transports may hold ([rnfsd] max-connections each),
				    * and the NFSv4.0 callback connections ([nfsv4] max-clients) */
	/* settings, 0: derived */
	unsigned open_files, open_files_per_client;  /* [nfsv4] max-open-files, max-open-files-per-client */
	unsigned lock_owners_per_client;             /* [nfsv4] max-lock-owners-per-client */
	unsigned lock_descs, nlm_locks_per_host;     /* [rnfsd] lock-descriptions, nlm-locks-per-host */
};

struct fd_budget {
	unsigned reserve, file_cache, open_files, open_files_per_client, lock_owners_per_client;
	unsigned lock_descs, nlm_locks_per_host;
	bool lowered; /* a setting was larger than the descriptors allow */
};

void fd_budget_derive(const struct fd_budget_in *in, struct fd_budget *out);

#endif
