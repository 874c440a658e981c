/*
 * nfs4_cb_state.c - the callback path's state machine and the back
 * channel's slot (nfs4_cb_state.h). Pure.
 */
#include <assert.h>
#include <string.h>

#include "nfs/v4/cb/nfs4_cb_state.h"

void nfs4_cb_chan_init(struct nfs4_cb_chan *c)
{
	memset(c, 0, sizeof(*c));
	c->state = NFS4_CB_NONE;
}

void nfs4_cb_chan_bound(struct nfs4_cb_chan *c)
{
	c->state = NFS4_CB_PROBING;
}

void nfs4_cb_chan_unbound(struct nfs4_cb_chan *c)
{
	c->state = NFS4_CB_NONE;
}

void nfs4_cb_chan_sent(struct nfs4_cb_chan *c)
{
	c->sent++;
}

void nfs4_cb_chan_done(struct nfs4_cb_chan *c, bool ok)
{
	if (ok)
		c->ok++;
	else
		c->failed++;
	/* A callback finishing after the path was unbound changes nothing. */
	if (c->state == NFS4_CB_NONE)
		return;
	if (!ok)
		c->state = NFS4_CB_DOWN; /* RFC 8881 §18.46.3: reported at the next SEQUENCE */
	else if (c->state == NFS4_CB_PROBING)
		c->state = NFS4_CB_UP;
}

void nfs4_cb_chan_answered(struct nfs4_cb_chan *c)
{
	c->ok++;
}

void nfs4_cb_chan_lost(struct nfs4_cb_chan *c)
{
	if (c->state != NFS4_CB_NONE)
		c->state = NFS4_CB_DOWN;
}

bool nfs4_cb_slot_take(struct nfs4_cb_chan *c, uint32_t *seqid)
{
	if (c->slot_busy)
		return false;
	c->slot_busy = true;
	*seqid = c->slot_seqid + 1; /* RFC 8881 §2.10.6.1: a new request takes the next seqid */
	return true;
}

bool nfs4_cb_slot_release(struct nfs4_cb_chan *c, uint32_t sent_seqid, bool answered, uint32_t status,
			  uint32_t seqid, uint32_t slotid)
{
	assert(c->slot_busy);
	c->slot_busy = false;
	if (!answered || status != 0)
		return false; /* not processed by the client: the same seqid next time */
	/* RFC 8881 §2.10.6.1: CB_SEQUENCE succeeded, so the client's slot moved on. */
	c->slot_seqid = sent_seqid;
	/* RFC 8881 §20.9.3: csr_sequenceid and csr_slotid echo the request. */
	return seqid == sent_seqid && slotid == 0;
}

uint32_t nfs4_cb_seq_flags(enum nfs4_cb_state st)
{
	switch (st) {
	case NFS4_CB_UP:
	case NFS4_CB_PROBING:
		return 0;
	case NFS4_CB_NONE:
	case NFS4_CB_DOWN:
		break;
	}
	/* RFC 8881 §18.46.3: no operational back channel for any session of the
	 * client (one path per client here), so none for this session either. */
	return SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION;
}

const char *nfs4_cb_state_name(enum nfs4_cb_state st)
{
	switch (st) {
	case NFS4_CB_NONE:
		return "none";
	case NFS4_CB_PROBING:
		return "probing";
	case NFS4_CB_UP:
		return "up";
	case NFS4_CB_DOWN:
		return "down";
	}
	return "?";
}

const char *nfs4_cb_flavor_name(bool usable, uint32_t flavor, uint32_t gss_svc)
{
	static const char *const krb5[] = { "krb5", "krb5i", "krb5p" }; /* RFC 2203 §5: services 1, 2, 3 */

	if (!usable)
		return "-";
	if (gss_svc)
		return gss_svc <= 3 ? krb5[gss_svc - 1] : "-";
	return flavor == 1 /* AUTH_SYS */ ? "sys" : "none";
}
