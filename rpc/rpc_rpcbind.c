/*
 * rpc_rpcbind.c - tell the local rpcbind (RFC 1833) where our programs are
 *. libtirpc's rpcb_set()/rpcb_unset() talk to rpcbind over its
 * UNIX socket, but they block (for up to a minute, falling back to UDP) when
 * rpcbind is absent or hung. So: probe the socket first (one connect()), and
 * run the libtirpc calls on a helper thread the caller waits for at most
 * RPCBIND_TIMEOUT_MS.
 *
 * Only what this instance owns is touched: before each SET the current
 * mapping is looked up (one RPCBPROC_DUMP per job over rpcbind's UNIX socket:
 * libtirpc's rpcb_getaddr leaks and caches) and one that another live server holds
 * is left alone; at exit a mapping is removed only if it still names our port
 * and no other process serves that port (the rules: rpcbind_live.c).
 *
 * This file has the repository root on its quote-include path only
 * (-iquote), so that <rpc/rpc.h> is libtirpc's; of ours it includes only
 * rpc/rpcbind.h and core/log.h.
 */
#include <rpc/rpc.h>
#include <rpc/rpcb_clnt.h>
#include <rpc/rpcb_prot.h>
#include <netconfig.h>

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rpc/rpcbind.h"
#include "core/log.h"

#define RPCBIND_MAX 32
#define RPCBIND_MAPS_MAX 256 /* mappings of rpcbind's DUMP looked at */
#define RPCBIND_DUMP_TIMEOUT_S 2
static const char *const rpcbind_netids[] = {"tcp", "tcp6", "udp", "udp6"};
#define RPCBIND_NNETIDS (sizeof(rpcbind_netids) / sizeof(rpcbind_netids[0]))

struct rpcbind_job {
	bool set;                 /* rpcb_set (else rpcb_unset) */
	bool replace;             /* set: take over another live server's mappings too */
	uint16_t port;
	unsigned netids;          /* set: RPCBIND_TCP4 | RPCBIND_TCP6 | RPCBIND_UDP4 | RPCBIND_UDP6 */
	struct rpc_prog_vers pv[RPCBIND_MAX];
	unsigned mask[RPCBIND_MAX]; /* set: out, the netids we registered; unset: in, those to remove */
	uint16_t kept[RPCBIND_MAX][RPCBIND_NNETIDS]; /* set: another server's port, left alone */
	unsigned n;
	int failures;
	/* rpcbind's mappings of our programs at the job's start; n_maps -1: it could not be asked */
	struct { uint32_t prog, vers; unsigned netid; uint16_t port; } maps[RPCBIND_MAPS_MAX];
	int n_maps;
	/* completion, guarded by lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool finished;
	bool abandoned;           /* the caller stopped waiting: the thread frees nothing */
};

/* What rpc_rpcbind_register() registered, for rpc_rpcbind_unregister(). */
static struct rpc_prog_vers registered[RPCBIND_MAX];
static unsigned registered_mask[RPCBIND_MAX]; /* per entry: the netids we set */
static unsigned n_registered;
static uint16_t registered_port;
static const char *probe_path;
static bool replace_live;   /* [rnfsd] rpcbind-replace */
/* What rpc_rpcbind_register_udp() registered. */
static struct rpc_prog_vers registered_udp;
static uint16_t registered_udp_port;
static unsigned registered_udp_mask;

void rpc_rpcbind_set_replace(bool replace)
{
	replace_live = replace;
}

void rpc_rpcbind_set_probe_path(const char *path)
{
	probe_path = path;
}

static bool rpcbind_probe_one(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd, rc;

	if (strlen(path) >= sizeof(sun.sun_path))
		return false;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	/* EAGAIN: listening, its backlog is full - it runs. */
	bool up = rc == 0 || errno == EAGAIN || errno == EINPROGRESS;
	close(fd);
	return up;
}

static bool rpcbind_running(void)
{
	if (probe_path)
		return rpcbind_probe_one(probe_path);
	return rpcbind_probe_one("/run/rpcbind.sock") || rpcbind_probe_one("/var/run/rpcbind.sock");
}

/* A connected stream socket to rpcbind's UNIX socket, or -1. */
static int rpcbind_local_connect(void)
{
	const char *paths[] = {probe_path ? probe_path : "/run/rpcbind.sock", "/var/run/rpcbind.sock"};

	for (unsigned i = 0; i < (probe_path ? 1u : 2u); i++) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		int fd;

		if (strlen(paths[i]) >= sizeof(sun.sun_path))
			continue;
		strcpy(sun.sun_path, paths[i]);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* Keep what rpcbind maps for our programs (job->pv) on the netids we know. */
static void rpcbind_maps_keep(struct rpcbind_job *job, const rpcblist *l)
{
	for (; l && job->n_maps < RPCBIND_MAPS_MAX; l = l->rpcb_next) {
		const rpcb *m = &l->rpcb_map;
		int port = m->r_addr ? rpcbind_uaddr_port(m->r_addr) : -1;

		if (port <= 0 || !m->r_netid)
			continue;
		for (unsigned i = 0; i < RPCBIND_NNETIDS; i++) {
			if (strcmp(m->r_netid, rpcbind_netids[i]) != 0)
				continue;
			job->maps[job->n_maps].prog = (uint32_t)m->r_prog;
			job->maps[job->n_maps].vers = (uint32_t)m->r_vers;
			job->maps[job->n_maps].netid = i;
			job->maps[job->n_maps].port = (uint16_t)port;
			job->n_maps++;
		}
	}
}

/* RPCBPROC_DUMP (RFC 1833 §2.2.1) over rpcbind's UNIX socket: job->maps, or n_maps -1. */
static void rpcbind_dump(struct rpcbind_job *job)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct netbuf nb = {.maxlen = sizeof(sun), .len = sizeof(sun), .buf = &sun};
	struct timeval tv = {RPCBIND_DUMP_TIMEOUT_S, 0};
	rpcblist_ptr head = NULL;
	int fd = rpcbind_local_connect();
	CLIENT *c;

	job->n_maps = -1;
	if (fd < 0)
		return;
	c = clnt_vc_create(fd, &nb, RPCBPROG, RPCBVERS4, 0, 0);
	if (!c) {
		close(fd);
		return;
	}
	clnt_control(c, CLSET_FD_CLOSE, NULL);
	/* libtirpc's xdrproc_t is variadic: through void (*)(void), as its own callers cast */
	xdrproc_t xvoid = (xdrproc_t)(void (*)(void))xdr_void;
	xdrproc_t xlist = (xdrproc_t)(void (*)(void))xdr_rpcblist_ptr;
	if (clnt_call(c, RPCBPROC_DUMP, xvoid, NULL, xlist, (char *)&head, tv) == RPC_SUCCESS) {
		job->n_maps = 0;
		rpcbind_maps_keep(job, head);
		xdr_free(xlist, (char *)&head);
	}
	clnt_destroy(c);
}

static void rpcbind_addr(const char *netid, uint16_t port, struct sockaddr_storage *ss, struct netbuf *nb)
{
	memset(ss, 0, sizeof(*ss));
	if (strcmp(netid, "tcp6") == 0 || strcmp(netid, "udp6") == 0) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_any;
		sin6->sin6_port = htons(port);
		nb->len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		sin->sin_port = htons(port);
		nb->len = sizeof(*sin);
	}
	nb->maxlen = sizeof(*ss);
	nb->buf = ss;
}

/* The port rpcbind had for pv on netid i at the job's start: 0 if none, -1 if it could not tell. */
static int rpcbind_lookup(const struct rpcbind_job *job, const struct rpc_prog_vers *pv, unsigned i)
{
	if (job->n_maps < 0)
		return -1;
	for (int k = 0; k < job->n_maps; k++)
		if (job->maps[k].prog == pv->prog && job->maps[k].vers == pv->vers && job->maps[k].netid == i)
			return job->maps[k].port;
	return 0;
}

/* Set one mapping, leaving another live server's alone (unless job->replace). */
static void rpcbind_job_set_one(struct rpcbind_job *job, unsigned k, unsigned i, const struct netconfig *nconf)
{
	const struct rpc_prog_vers *pv = &job->pv[k];
	bool tcp = i < 2;
	int cur = rpcbind_lookup(job, pv, i);
	bool other = cur > 0 && rpcbind_port_served_by_other((uint16_t)cur, tcp);
	struct sockaddr_storage ss;
	struct netbuf nb;

	switch (rpcbind_start_action(cur, other, job->replace)) {
	case RPCBIND_KEEP:
		job->kept[k][i] = (uint16_t)cur;
		/* Our port already (a server on another address, same port): right for us too, and the
		 * last of us to stop removes it (rpcbind_exit_unset). */
		if (cur == job->port)
			job->mask[k] |= 1u << i;
		return;
	case RPCBIND_REPLACE:
		rpcb_unset(pv->prog, pv->vers, nconf); /* a stale one (a server that died), or ours */
		break;
	case RPCBIND_ADD:
		break;
	}
	rpcbind_addr(rpcbind_netids[i], job->port, &ss, &nb);
	if (rpcb_set(pv->prog, pv->vers, nconf, &nb))
		job->mask[k] |= 1u << i;
	else
		job->failures++;
}

/* Remove one mapping we set, if it is still ours alone. */
static void rpcbind_job_unset_one(struct rpcbind_job *job, unsigned k, unsigned i, const struct netconfig *nconf)
{
	const struct rpc_prog_vers *pv = &job->pv[k];
	int cur = rpcbind_lookup(job, pv, i);
	bool other = cur > 0 && rpcbind_port_served_by_other((uint16_t)cur, i < 2);

	if (rpcbind_exit_unset(cur, job->port, other))
		rpcb_unset(pv->prog, pv->vers, nconf);
}

/* Helper thread: the blocking libtirpc calls. */
static void *rpcbind_job_run(void *arg)
{
	struct rpcbind_job *job = arg;

	rpcbind_dump(job);
	for (unsigned i = 0; i < RPCBIND_NNETIDS; i++) {
		struct netconfig *nconf = NULL;

		for (unsigned k = 0; k < job->n; k++) {
			if (!((job->set ? job->netids : job->mask[k]) & (1u << i)))
				continue;
			if (!nconf && !(nconf = getnetconfigent(rpcbind_netids[i]))) {
				job->failures++;
				break;
			}
			if (job->set)
				rpcbind_job_set_one(job, k, i, nconf);
			else
				rpcbind_job_unset_one(job, k, i, nconf);
		}
		if (nconf)
			freenetconfigent(nconf);
	}

	pthread_mutex_lock(&job->lock);
	job->finished = true;
	bool abandoned = job->abandoned;
	pthread_cond_signal(&job->cond);
	pthread_mutex_unlock(&job->lock);
	if (abandoned) {
		pthread_mutex_destroy(&job->lock);
		pthread_cond_destroy(&job->cond);
		free(job);
	}
	return NULL;
}

/* Run job on a helper thread for at most RPCBIND_TIMEOUT_MS. Returns failures, or -1 on timeout.
 * out (or NULL) gets the job's mask and kept when it finished. */
static int rpcbind_job_wait(struct rpcbind_job *job, struct rpcbind_job *out)
{
	pthread_t t;
	struct timespec deadline;
	int failures;

	pthread_mutex_init(&job->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&job->cond, &ca);
	pthread_condattr_destroy(&ca);

	if (pthread_create(&t, NULL, rpcbind_job_run, job) != 0) {
		pthread_mutex_destroy(&job->lock);
		pthread_cond_destroy(&job->cond);
		free(job);
		return -1;
	}
	pthread_detach(t);

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += RPCBIND_TIMEOUT_MS / 1000;
	deadline.tv_nsec += (RPCBIND_TIMEOUT_MS % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&job->lock);
	while (!job->finished)
		if (pthread_cond_timedwait(&job->cond, &job->lock, &deadline) == ETIMEDOUT)
			break;
	if (!job->finished) {
		job->abandoned = true; /* the thread frees the job when (if) it returns */
		pthread_mutex_unlock(&job->lock);
		return -1;
	}
	failures = job->failures;
	if (out) {
		memcpy(out->mask, job->mask, sizeof(job->mask));
		memcpy(out->kept, job->kept, sizeof(job->kept));
	}
	pthread_mutex_unlock(&job->lock);
	pthread_mutex_destroy(&job->lock);
	pthread_cond_destroy(&job->cond);
	free(job);
	return failures;
}

static struct rpcbind_job *rpcbind_job_new(bool set, uint16_t port, unsigned netids,
					   const struct rpc_prog_vers *pv, const unsigned *mask, unsigned n)
{
	struct rpcbind_job *job = calloc(1, sizeof(*job));
	if (!job)
		return NULL;
	job->set = set;
	job->replace = replace_live;
	job->port = port;
	job->netids = netids;
	job->n = n < RPCBIND_MAX ? n : RPCBIND_MAX;
	memcpy(job->pv, pv, job->n * sizeof(*pv));
	if (mask)
		memcpy(job->mask, mask, job->n * sizeof(*mask));
	return job;
}

static const char *netids_name(unsigned netids)
{
	switch (netids & (RPCBIND_TCP4 | RPCBIND_TCP6)) {
	case RPCBIND_TCP4: return "tcp";
	case RPCBIND_TCP6: return "tcp6";
	default: return "tcp, tcp6";
	}
}

/* Log what a set job did: registered, or left to another live server. */
static void rpcbind_log_result(const struct rpcbind_job *res, const struct rpc_prog_vers *pv, unsigned n,
			       uint16_t port)
{
	for (unsigned k = 0; k < n; k++) {
		unsigned mask = res->mask[k];
		for (unsigned i = 0; i < RPCBIND_NNETIDS; i++) {
			if (res->kept[k][i] == port) {
				log_info("rpcbind: %s version %u on %s is already registered at port %u by another "
					 "server on this port: shared with it", pv[k].name, pv[k].vers, rpcbind_netids[i], port);
				mask &= ~(1u << i);
			} else if (res->kept[k][i])
				log_warn("rpcbind: %s version %u on %s is registered at port %u, which another running "
					 "server uses: left alone (rpcbind-replace = yes takes it over); clients must be "
					 "given port %u", pv[k].name, pv[k].vers, rpcbind_netids[i], res->kept[k][i], port);
		}
		if (mask)
			log_info("rpcbind: registered %s version %u on %s port %u", pv[k].name, pv[k].vers,
				 mask & (RPCBIND_UDP4 | RPCBIND_UDP6) ?
				 (mask == RPCBIND_UDP4 ? "udp" : mask == RPCBIND_UDP6 ? "udp6" : "udp, udp6") :
				 netids_name(mask), port);
	}
}

int rpc_rpcbind_register(uint16_t port, unsigned netids)
{
	struct rpc_prog_vers pv[RPCBIND_MAX];
	unsigned n = rpc_prog_versions(pv, RPCBIND_MAX);
	struct rpcbind_job res = {0}; /* only mask and kept are used */

	if (n > RPCBIND_MAX)
		n = RPCBIND_MAX;
	if (!rpcbind_running()) {
		log_warn("rpcbind is not running: programs not registered (clients must be given port %u)", port);
		return -1;
	}
	struct rpcbind_job *job = rpcbind_job_new(true, port, netids, pv, NULL, n);
	if (!job)
		return -1;
	int failures = rpcbind_job_wait(job, &res);
	if (failures < 0) {
		log_warn("rpcbind did not answer within %d ms: registration abandoned", RPCBIND_TIMEOUT_MS);
		return -1;
	}
	memcpy(registered, pv, n * sizeof(*pv));
	memcpy(registered_mask, res.mask, n * sizeof(*res.mask));
	n_registered = n;
	registered_port = port;
	rpcbind_log_result(&res, pv, n, port);
	if (failures) {
		log_warn("rpcbind: %d registrations failed (%u programs on %s)", failures, n,
			 netids_name(netids));
		return -1;
	}
	return 0;
}

int rpc_rpcbind_register_udp(uint32_t prog, uint32_t vers, const char *name, uint16_t port, unsigned netids)
{
	struct rpc_prog_vers pv = { prog, vers, name };
	struct rpcbind_job res = {0};
	struct rpcbind_job *job;
	int failures;

	if (!rpcbind_running())
		return -1; /* rpc_rpcbind_register() said so */
	job = rpcbind_job_new(true, port, netids & (RPCBIND_UDP4 | RPCBIND_UDP6), &pv, NULL, 1);
	if (!job)
		return -1;
	failures = rpcbind_job_wait(job, &res);
	registered_udp = pv;
	registered_udp_port = port;
	registered_udp_mask = failures < 0 ? 0 : res.mask[0];
	if (failures != 0) {
		log_warn("rpcbind: %s version %u on udp port %u not registered", name, vers, port);
		return -1;
	}
	rpcbind_log_result(&res, &pv, 1, port);
	return 0;
}

void rpc_rpcbind_unregister(void)
{
	if (registered_udp_mask && rpcbind_running()) {
		struct rpcbind_job *job = rpcbind_job_new(false, registered_udp_port, 0, &registered_udp,
							  &registered_udp_mask, 1);

		if (job && rpcbind_job_wait(job, NULL) < 0)
			log_warn("rpcbind did not answer within %d ms: unregistration abandoned", RPCBIND_TIMEOUT_MS);
	}
	registered_udp_mask = 0;
	if (!n_registered)
		return;
	if (!rpcbind_running()) {
		n_registered = 0;
		return;
	}
	struct rpcbind_job *job = rpcbind_job_new(false, registered_port, 0, registered, registered_mask,
						  n_registered);
	n_registered = 0;
	if (job && rpcbind_job_wait(job, NULL) < 0)
		log_warn("rpcbind did not answer within %d ms: unregistration abandoned", RPCBIND_TIMEOUT_MS);
}
