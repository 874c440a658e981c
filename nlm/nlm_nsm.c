/*
 * nlm_nsm.c - the client hosts rnfsd asks the local rpc.statd to monitor
 * (nlm_nsm.h): a fixed table of hosts by caller_name, SM_MON on a host's
 * first lock, SM_UNMON when its locks are released, and the priv bytes that
 * bring statd's notification back to the host (XNFS §11: statd returns priv
 * unchanged in the call to my_id).
 *
 * mon_name is the client's address, not its caller_name, as knfsd does by
 * default (nsm_use_hostnames=0): statd must be able to reach it, and a
 * client's nodename often does not resolve on the server.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <string.h>

#include "nlm/nlm_nsm.h"
#include "nlm/nlm_cb.h"
#include "nlm/nlm_table.h"
#include "core/log.h"

#define NSM_HOSTS 1024u
#define NSM_MAGIC "rnfs"

struct nsm_host {
	bool used;
	uint32_t gen;
	uint32_t name_len;
	char name[NLM_HOST_MAX + 1];
	char addr[INET6_ADDRSTRLEN];
};

static pthread_mutex_t nsm_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nsm_host nsm_hosts[NSM_HOSTS];
static struct log_limit nsm_limit;
/* priv bytes 12..15: this run's, so that statd records a new SM_MON for a
 * host it still monitors from rnfsd's previous run (nfs-utils' statd takes
 * an SM_MON with the same priv as a duplicate and keeps no record of it),
 * and a notification meant for that run is not taken for this one */
static uint8_t nsm_run[4];

void nlm_nsm_priv(uint8_t priv[NSM_PRIV_SIZE], uint32_t idx, uint32_t gen)
{
	uint32_t be_idx = htonl(idx), be_gen = htonl(gen);

	memset(priv, 0, NSM_PRIV_SIZE);
	memcpy(priv, NSM_MAGIC, 4);
	memcpy(priv + 4, &be_idx, 4);
	memcpy(priv + 8, &be_gen, 4);
}

bool nlm_nsm_priv_parse(const uint8_t priv[NSM_PRIV_SIZE], uint32_t *idx, uint32_t *gen)
{
	uint32_t i, g;

	if (memcmp(priv, NSM_MAGIC, 4) != 0)
		return false;
	memcpy(&i, priv + 4, 4);
	memcpy(&g, priv + 8, 4);
	*idx = ntohl(i);
	*gen = ntohl(g);
	return *idx < NSM_HOSTS;
}

static void nsm_done(uint64_t tag, bool ok, struct xdr_dec *res)
{
	struct nsm_stat_res r = { .res_stat = NSM_STAT_FAIL };

	/* XNFS §11 SM_MON: stat_succ if statd monitors the host now */
	if (tag == NSM_SM_MON && (!ok || !nsm_dec_stat_res(res, &r) || r.res_stat != NSM_STAT_SUCC))
		log_limited(&nsm_limit, LOG_WARNING,
			    "nlm: rpc.statd did not accept SM_MON (%s): a rebooted client's locks are not released",
			    ok ? "stat_fail" : "unreachable");
}

/* SM_MON or SM_UNMON for slot h (nsm_mu held). */
static void nsm_call(const struct nsm_host *h, uint32_t idx, uint32_t proc)
{
	struct nsm_mon_args a = {
		.mon_name = { (const uint8_t *)h->addr, (uint32_t)strlen(h->addr) },
		.my_name = { (const uint8_t *)"127.0.0.1", 9 },
		.my_prog = NLM_PROGRAM, .my_vers = NLM4_VERSION, .my_proc = NLM4_NSM_NOTIFY,
	};
	struct sockaddr_in statd = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint8_t body[256 + NSM_MAXSTRLEN];
	struct xdr_enc e;

	nlm_nsm_priv(a.priv, idx, h->gen);
	memcpy(a.priv + 12, nsm_run, sizeof(nsm_run));
	xdr_enc_init(&e, body, sizeof(body));
	if (proc == NSM_SM_MON)
		nsm_enc_mon(&e, &a);
	else
		nsm_enc_mon_id(&e, &a);
	if (e.overflow || nlm_cb_send((const struct sockaddr *)&statd, sizeof(statd), NSM_PROGRAM, NSM_VERSION,
				      proc, body, xdr_enc_len(&e), nsm_done, proc) != 0)
		log_limited(&nsm_limit, LOG_WARNING, "nlm: cannot call rpc.statd (no free call slot)");
}

static int nsm_find(const char *host, uint32_t host_len)
{
	for (unsigned i = 0; i < NSM_HOSTS; i++)
		if (nsm_hosts[i].used && nsm_hosts[i].name_len == host_len && !memcmp(nsm_hosts[i].name, host, host_len))
			return (int)i;
	return -1;
}

void nlm_nsm_monitor(const char *host, uint32_t host_len, const struct sockaddr *peer, socklen_t peer_len)
{
	struct nsm_host *h = NULL;
	unsigned idx = 0;

	if (host_len > NLM_HOST_MAX)
		return;
	pthread_mutex_lock(&nsm_mu);
	if (nsm_find(host, host_len) >= 0)
		goto out;
	for (idx = 0; idx < NSM_HOSTS && !h; idx++)
		if (!nsm_hosts[idx].used)
			h = &nsm_hosts[idx];
	if (!h) {
		log_limited(&nsm_limit, LOG_WARNING, "nlm: more than %u client hosts: not all monitored", NSM_HOSTS);
		goto out;
	}
	idx--;
	h->used = true;
	h->gen++;
	h->name_len = host_len;
	memcpy(h->name, host, host_len);
	h->name[host_len] = '\0';
	if (getnameinfo(peer, peer_len, h->addr, sizeof(h->addr), NULL, 0, NI_NUMERICHOST) != 0) {
		h->used = false; /* not an address statd could notify */
		goto out;
	}
	if (!strncmp(h->addr, "::ffff:", 7))
		memmove(h->addr, h->addr + 7, strlen(h->addr + 7) + 1); /* an IPv4 client on a dual-stack socket */
	nsm_call(h, idx, NSM_SM_MON);
out:
	pthread_mutex_unlock(&nsm_mu);
}

void nlm_nsm_unmonitor(const char *host, uint32_t host_len)
{
	int i;

	pthread_mutex_lock(&nsm_mu);
	i = nsm_find(host, host_len);
	if (i >= 0) {
		nsm_call(&nsm_hosts[i], (uint32_t)i, NSM_SM_UNMON);
		nsm_hosts[i].used = false;
	}
	pthread_mutex_unlock(&nsm_mu);
}

bool nlm_nsm_host_of(const uint8_t priv[NSM_PRIV_SIZE], char *name, uint32_t *name_len)
{
	uint32_t idx, gen;
	bool ok = false;

	if (!nlm_nsm_priv_parse(priv, &idx, &gen))
		return false;
	pthread_mutex_lock(&nsm_mu);
	if (nsm_hosts[idx].used && nsm_hosts[idx].gen == gen && !memcmp(priv + 12, nsm_run, sizeof(nsm_run))) {
		*name_len = nsm_hosts[idx].name_len;
		memcpy(name, nsm_hosts[idx].name, *name_len + 1);
		ok = true;
	}
	pthread_mutex_unlock(&nsm_mu);
	return ok;
}

void nlm_nsm_init(uint32_t run)
{
	uint32_t be = htonl(run);

	pthread_mutex_lock(&nsm_mu);
	memcpy(nsm_run, &be, sizeof(nsm_run));
	pthread_mutex_unlock(&nsm_mu);
}

void nlm_nsm_reset(void)
{
	pthread_mutex_lock(&nsm_mu);
	for (unsigned i = 0; i < NSM_HOSTS; i++)
		nsm_hosts[i].used = false;
	pthread_mutex_unlock(&nsm_mu);
}
