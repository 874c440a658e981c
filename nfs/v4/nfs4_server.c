/*
 * nfs4_server.c - the NFSv4 server's live state over time (nfs4_server.h):
 * leases expire at most once a second, from the timer (nfs4_setup.c) and on
 * the way by the operations that act for a client, and with them what the
 * set-up hung on expire_more.
 */
#include "nfs/v4/nfs4_server.h"

void nfs4_server_tick(struct nfs4_server *srv)
{
	uint64_t now = nfs4_now(), last = atomic_load(&srv->last_tick);

	if (now != last && atomic_compare_exchange_strong(&srv->last_tick, &last, now)) {
		nfs4_ctab_expire(&srv->ctab, now);
		if (srv->expire_more)
			srv->expire_more(srv, now);
	}
}
