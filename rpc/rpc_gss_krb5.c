/*
 * rpc_gss_krb5.c - the GSS-API shell of RPCSEC_GSS (RFC 2203) over MIT
 * libgssapi_krb5: context creation (gss_accept_sec_context), the call's
 * header MIC and the reply's verifier (gss_verify_mic, gss_get_mic), krb5i
 * and krb5p arguments and results (rpc_gss_integ_data, rpc_gss_priv_data),
 * and the principal's mapping to a uid and groups, cached per context. The
 * protocol decisions without cryptography (credential, control table,
 * window, context table) are rpc_gss.c's; no cryptography is written here.
 *
 * Threads: rpc_gss_accept and rpc_gss_enc_verf run on the loop thread that
 * received the call, rpc_gss_wrap_reply on a worker (on the loop thread for
 * a reply from the duplicate request cache, rpc_drc.c). Context creation
 * (rpc_gss_establish: gss_accept_sec_context reads the keytab and the
 * replay cache, the principal's mapping asks the name service) runs on a
 * worker, so a slow disk or directory stalls no other client. The context
 * table is shared by the loop and the workers through its lock (rpc_gss.c:
 * every slot state change, lookup and window check take it); a slot's
 * principal and credential are written by the worker that establishes it
 * before rpc_gss_ctx_established() (under the lock) and read only after a
 * lookup (under the lock) found it ESTABLISHED. A context's GSS calls
 * are serialised by its mech lock (MIT's per-message calls update the
 * context's sequence state). Ownership: a struct gss_mech belongs to its
 * table slot and is freed by gss_mech_release when the slot is.
 *
 * Buffers: the data path allocates nothing and releases nothing per call.
 * MIT's IOV calls work on the call's own memory: MICs (the reply verifier,
 * krb5i's checksum) are written by gss_get_mic_iov straight into the reply
 * buffer, krb5p results are sealed in place there by gss_wrap_iov (header,
 * data, padding, trailer laid out contiguously: the token gss_wrap would
 * give), and krb5p arguments are unsealed in place in the call's message
 * (the transport's receive buffer) by gss_unwrap_iov, as knfsd unwraps in
 * the request's own pages. What the library allocates inside a call is its
 * own (counted by it_gss_krb5 with tests/integration/malloc_count.c).
 */
#include "rpc/rpc_gss.h"
#include "rpc/rpc_gss_krb5.h"
#include "rpc/rpc_gss_mech.h"
#include "rpc/rpc_internal.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <grp.h>
#include <krb5.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

#define GSS_TOKEN_MAX 65536u /* a context token; krb5 AP-REQs with PACs stay far below */

static struct {
	bool enabled;
	bool host_root;       /* [rnfsd] gss-host-root */
	char realm[256];      /* the default realm: user@realm maps by its local part */
	char keytab[4096];    /* [rnfsd] keytab (rpc_gss_keytab) */
	gss_cred_id_t cred;   /* acceptor credential from the keytab */
	struct rpc_gss_table tab;
	unsigned test_delay_ms; /* RNFSD_TEST_GSS_ACCEPT_DELAY_MS: tests only, a slow context creation */
} g;

static struct log_limit lim_gss;

static void gss_mech_release(void *p)
{
	struct gss_mech *m = p;
	OM_uint32 min;

	if (m->gctx != GSS_C_NO_CONTEXT)
		gss_delete_sec_context(&min, &m->gctx, GSS_C_NO_BUFFER);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static bool gss_realm_load(void)
{
	krb5_context kc;
	char *realm = NULL;

	if (krb5_init_context(&kc) != 0)
		return false;
	bool ok = krb5_get_default_realm(kc, &realm) == 0 && strlen(realm) < sizeof(g.realm);
	if (ok)
		strcpy(g.realm, realm);
	krb5_free_default_realm(kc, realm);
	krb5_free_context(kc);
	return ok;
}

int rpc_gss_init(const char *keytab, bool host_root, uint32_t contexts, uint32_t per_client)
{
	OM_uint32 maj, min;

	if (access(keytab, R_OK) != 0) {
		log_msg(LOG_INFO, "rpc: RPCSEC_GSS off: keytab %s not readable", keytab);
		return 0;
	}
	/* The acceptor takes any key of this keytab (nfs/host for each name of the host). */
	krb5_gss_register_acceptor_identity(keytab);
	maj = gss_acquire_cred(&min, GSS_C_NO_NAME, GSS_C_INDEFINITE, GSS_C_NO_OID_SET, GSS_C_ACCEPT,
			       &g.cred, NULL, NULL);
	if (GSS_ERROR(maj)) {
		log_msg(LOG_WARNING, "rpc: RPCSEC_GSS off: no acceptor key in %s (major 0x%x minor %u)",
			keytab, maj, min);
		return 0;
	}
	if (!gss_realm_load())
		log_msg(LOG_WARNING, "rpc: no default Kerberos realm: every user principal maps to nobody");
	if (rpc_gss_table_init(&g.tab, contexts, per_client, gss_mech_release) != 0) {
		gss_release_cred(&min, &g.cred);
		return -1;
	}
	g.host_root = host_root;
	snprintf(g.keytab, sizeof(g.keytab), "%s", keytab);
	const char *delay = getenv("RNFSD_TEST_GSS_ACCEPT_DELAY_MS");
	g.test_delay_ms = delay ? (unsigned)strtoul(delay, NULL, 10) : 0;
	if (g.test_delay_ms)
		log_msg(LOG_WARNING, "rpc: test hook: each RPCSEC_GSS context creation step waits %u ms",
			g.test_delay_ms);
	g.enabled = true;
	log_msg(LOG_INFO, "rpc: RPCSEC_GSS (krb5, krb5i, krb5p) with keytab %s, realm %s", keytab,
		g.realm[0] ? g.realm : "(none)");
	return 0;
}

void rpc_gss_release(void)
{
	OM_uint32 min;

	if (!g.enabled)
		return;
	g.enabled = false;
	rpc_gss_table_release(&g.tab);
	gss_release_cred(&min, &g.cred);
}

void rpc_gss_counts(uint64_t *live, uint64_t *cap, uint64_t *evictions)
{
	*live = *cap = *evictions = 0;
	if (!g.enabled)
		return;
	pthread_mutex_lock(&g.tab.lock);
	*live = g.tab.live;
	*cap = g.tab.cap;
	*evictions = g.tab.evictions;
	pthread_mutex_unlock(&g.tab.lock);
}

size_t rpc_gss_principals(struct rpc_gss_princ_count **out)
{
	*out = NULL;
	return g.enabled ? rpc_gss_table_principals(&g.tab, out) : 0;
}

bool rpc_gss_enabled(void)
{
	return g.enabled;
}

/* The per-client key: the peer's address without its port (FNV-1a). */
static uint64_t gss_client_key(const struct rpc_conn *conn)
{
	const uint8_t *p = (const uint8_t *)&((const struct sockaddr_in *)&conn->peer)->sin_addr;
	size_t n = 4;
	uint64_t h = 1469598103934665603ull;

	if (conn->peer.ss_family == AF_INET6) {
		p = (const uint8_t *)&((const struct sockaddr_in6 *)&conn->peer)->sin6_addr;
		n = 16;
	}
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* A user's uid, gid and up to RPC_AUTH_SYS_MAX_GIDS groups through the name service. */
static bool gss_map_user(const char *local, struct rpc_cred *cr)
{
	struct passwd pw, *r = NULL;
	char buf[4096];
	gid_t gids[RPC_AUTH_SYS_MAX_GIDS];
	int n = RPC_AUTH_SYS_MAX_GIDS;

	if (getpwnam_r(local, &pw, buf, sizeof(buf), &r) != 0 || !r)
		return false;
	cr->uid = pw.pw_uid;
	cr->gid = pw.pw_gid;
	if (getgrouplist(local, pw.pw_gid, gids, &n) < 0)
		n = RPC_AUTH_SYS_MAX_GIDS; /* more than fit: the first ones */
	cr->ngroups = (uint32_t)n;
	for (int i = 0; i < n; i++)
		cr->groups[i] = gids[i];
	return true;
}

/* The established context's principal to a credential, once (issue 25 item 2). */
static void gss_map(struct rpc_gss_ctx *x, gss_name_t src)
{
	OM_uint32 min;
	gss_buffer_desc nb = GSS_C_EMPTY_BUFFER;
	char local[256];

	x->cred = (struct rpc_cred){ .flavor = RPC_AUTH_GSS, .uid = 65534, .gid = 65534 };
	if (GSS_ERROR(gss_display_name(&min, src, &nb, NULL)))
		return;
	if (nb.length < sizeof(x->princ) && !memchr(nb.value, '\0', nb.length)) {
		memcpy(x->princ, nb.value, nb.length);
		x->princ[nb.length] = '\0';
	}
	switch (rpc_gss_principal(nb.value, nb.length, g.realm[0] ? g.realm : NULL, local, sizeof(local))) {
	case RPC_GSS_PRINC_USER:
		gss_map_user(local, &x->cred);
		break;
	case RPC_GSS_PRINC_HOST:
		if (g.host_root)
			x->cred.uid = x->cred.gid = 0;
		break;
	case RPC_GSS_PRINC_FOREIGN:
		break;
	}
	x->cred_ok = true;
	gss_release_buffer(&min, &nb);
}

const char *rpc_gss_call_principal(const struct rpc_call *c)
{
	const struct rpc_gss_ctx *x = c->cred.flavor == RPC_AUTH_GSS ? c->gss.ctx : NULL;

	return x && x->cred_ok && x->princ[0] ? x->princ : NULL;
}

bool rpc_gss_call_acceptor(const struct rpc_call *c, char *buf, size_t cap)
{
	const struct rpc_gss_ctx *x = c->cred.flavor == RPC_AUTH_GSS ? c->gss.ctx : NULL;
	struct gss_mech *m = x ? x->mech : NULL;
	gss_name_t targ = GSS_C_NO_NAME;
	gss_buffer_desc nb = GSS_C_EMPTY_BUFFER;
	OM_uint32 maj, min;
	bool ok = false;

	if (!m)
		return false;
	pthread_mutex_lock(&m->lock);
	maj = gss_inquire_context(&min, m->gctx, NULL, &targ, NULL, NULL, NULL, NULL, NULL);
	pthread_mutex_unlock(&m->lock);
	if (!GSS_ERROR(maj) && !GSS_ERROR(gss_display_name(&min, targ, &nb, NULL)) && nb.length < cap &&
	    !memchr(nb.value, '\0', nb.length)) {
		memcpy(buf, nb.value, nb.length);
		buf[nb.length] = '\0';
		ok = true;
	}
	gss_release_buffer(&min, &nb);
	gss_release_name(&min, &targ);
	return ok;
}

const char *rpc_gss_keytab(void)
{
	return g.enabled ? g.keytab : NULL;
}

/* RFC 2203 §5.2.3.1: rpc_gss_init_res after the accepted header. */
static void gss_enc_init_res(struct rpc_call *c, const uint8_t *handle, uint32_t handle_len,
			     OM_uint32 maj, OM_uint32 min, const gss_buffer_desc *out)
{
	struct rpc_gss_init_res r = { .handle_len = handle_len, .major = maj, .minor = min,
				      .window = RPC_GSS_WINDOW, .token = out->value,
				      .token_len = (uint32_t)out->length };

	if (handle_len)
		memcpy(r.handle, handle, handle_len);
	rpc_enc_accepted(c, RPC_SUCCESS);
	rpc_gss_init_res_encode(&c->res, &r);
}

/* One step of context creation (RFC 2203 §5.2): INIT makes the slot, CONTINUE_INIT finds it. */
static enum rpc_gss_verdict gss_ctx_step(struct rpc_call *c, bool first)
{
	const uint8_t *tok;
	uint32_t tok_len;
	uint8_t handle[RPC_GSS_HANDLE_LEN];
	gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
	gss_name_t src = GSS_C_NO_NAME;
	OM_uint32 maj, min = 0;

	/* RFC 2203 §5.2.2: the NULL procedure's argument is opaque gss_token<>. */
	if (!xdr_dec_opaque(&c->args, GSS_TOKEN_MAX, &tok, &tok_len))
		return RPC_GSS_V_GARBAGE;
	if (first) {
		c->gss.ctx = rpc_gss_ctx_new(&g.tab, gss_client_key(c->conn), c->conn->peer_name, handle);
		struct gss_mech *m = c->gss.ctx ? calloc(1, sizeof(*m)) : NULL;
		if (!m) {
			if (c->gss.ctx)
				rpc_gss_ctx_kill(&g.tab, c->gss.ctx);
			gss_enc_init_res(c, NULL, 0, GSS_S_FAILURE, 0, &out);
			return RPC_GSS_V_REPLY; /* rpc_gss_call_end frees the slot (mech NULL) */
		}
		pthread_mutex_init(&m->lock, NULL);
		m->gctx = GSS_C_NO_CONTEXT;
		c->gss.ctx->mech = m;
	} else {
		memcpy(handle, c->gss.handle, RPC_GSS_HANDLE_LEN);
	}
	struct gss_mech *m = c->gss.ctx->mech;
	gss_buffer_desc in = { tok_len, (void *)tok };
	if (g.test_delay_ms)
		usleep(g.test_delay_ms * 1000u); /* as a keytab or replay cache on a slow disk would */
	pthread_mutex_lock(&m->lock);
	maj = gss_accept_sec_context(&min, &m->gctx, g.cred, &in, GSS_C_NO_CHANNEL_BINDINGS, &src, NULL,
				     &out, NULL, NULL, NULL);
	pthread_mutex_unlock(&m->lock);
	if (maj == GSS_S_COMPLETE) {
		gss_map(c->gss.ctx, src);
		rpc_gss_ctx_established(&g.tab, c->gss.ctx);
		/* RFC 2203 §5.2.3.1: the verifier is a MIC of the window. */
		c->gss.reply_verf = true;
		c->gss.reply_word = RPC_GSS_WINDOW;
	} else if (maj != GSS_S_CONTINUE_NEEDED) {
		log_limited(&lim_gss, LOG_NOTICE, "rpc: %s: RPCSEC_GSS context refused (major 0x%x minor %u)",
			    c->conn->peer_name, maj, min);
		rpc_gss_ctx_kill(&g.tab, c->gss.ctx);
	}
	gss_enc_init_res(c, handle, GSS_ERROR(maj) ? 0 : RPC_GSS_HANDLE_LEN, maj, min, &out);
	gss_release_buffer(&min, &out);
	gss_release_name(&min, &src);
	return RPC_GSS_V_REPLY;
}

/* RFC 2203 §5.3.2.2, §5.3.2.3: the arguments of a krb5i or krb5p call, opened in the message. */
static enum rpc_gss_verdict gss_unwrap_args(struct rpc_call *c, struct gss_mech *m)
{
	bool ok = c->gss.svc == RPC_GSS_SVC_INTEGRITY ? rpc_gss_integ_open(m, &c->args, c->gss.seq)
						      : rpc_gss_priv_open(m, &c->args, c->gss.seq);

	return ok ? RPC_GSS_V_DISPATCH : RPC_GSS_V_GARBAGE;
}

/* DATA and DESTROY (RFC 2203 §5.3.3): header MIC, window, then the service. */
static enum rpc_gss_verdict gss_data(struct rpc_call *c, bool destroy, int *auth_stat)
{
	struct rpc_gss_ctx *x = c->gss.ctx;
	struct gss_mech *m = x->mech;
	OM_uint32 maj;

	if (c->gss.verf_flavor != RPC_AUTH_GSS) {
		*auth_stat = RPC_AUTH_BADVERF;
		return RPC_GSS_V_DENIED;
	}
	maj = rpc_gss_mic_check(m, c->msg, c->gss.hdr_len, c->gss.verf, c->gss.verf_len);
	if (GSS_ERROR(maj)) {
		/* RFC 2203 §5.3.3.3: a bad checksum is CREDPROBLEM, an expired context CTXPROBLEM. */
		*auth_stat = maj == GSS_S_CONTEXT_EXPIRED ? RPCSEC_GSS_CTXPROBLEM : RPCSEC_GSS_CREDPROBLEM;
		if (maj == GSS_S_CONTEXT_EXPIRED)
			rpc_gss_ctx_kill(&g.tab, x);
		return RPC_GSS_V_DENIED;
	}
	/* RFC 2203 §5.3.3.1: after the checksum, the window; replays and old numbers are dropped. */
	if (rpc_gss_ctx_seq(&g.tab, x, c->gss.seq) != RPC_GSS_SEQ_OK)
		return RPC_GSS_V_DROP;
	c->gss.reply_verf = true; /* RFC 2203 §5.3.3.2: a MIC of seq_num */
	c->gss.reply_word = c->gss.seq;
	c->cred = x->cred;
	if (destroy) {
		/* RFC 2203 §5.4: answer, then forget the context. */
		rpc_enc_accepted(c, RPC_SUCCESS);
		rpc_gss_ctx_kill(&g.tab, x);
		return RPC_GSS_V_REPLY;
	}
	switch (c->gss.svc) {
	case RPC_GSS_SVC_INTEGRITY:
	case RPC_GSS_SVC_PRIVACY:
		c->gss.wrap = true;
		return gss_unwrap_args(c, m);
	default:
		return RPC_GSS_V_DISPATCH;
	}
}

enum rpc_gss_verdict rpc_gss_accept(struct rpc_call *c, int *auth_stat)
{
	struct rpc_gss_cred gc = { .vers = RPC_GSS_VERS_1, .proc = c->gss.proc, .seq = c->gss.seq,
				   .svc = c->gss.svc, .handle_len = c->gss.handle_len };
	enum rpc_gss_ctx_state st = RPC_GSS_CTX_FREE;

	if (c->gss.handle_len)
		c->gss.ctx = rpc_gss_ctx_get(&g.tab, c->gss.handle, c->gss.handle_len, &st);
	switch (rpc_gss_next(&gc, st, c->proc == 0, auth_stat)) {
	case RPC_GSS_ACT_INIT:
	case RPC_GSS_ACT_CONTINUE:
		return RPC_GSS_V_ESTABLISH; /* rpc_gss_establish, on a worker */
	case RPC_GSS_ACT_DATA:
		return gss_data(c, false, auth_stat);
	case RPC_GSS_ACT_DESTROY:
		return gss_data(c, true, auth_stat);
	case RPC_GSS_ACT_REJECT:
	default:
		return RPC_GSS_V_DENIED;
	}
}

enum rpc_gss_verdict rpc_gss_establish(struct rpc_call *c)
{
	/* RFC 2203 §5.2.2: INIT carries no handle, CONTINUE_INIT the one INIT gave. */
	return gss_ctx_step(c, c->gss.proc == RPC_GSS_INIT);
}

void rpc_gss_enc_verf(struct rpc_call *c)
{
	struct gss_mech *m = c->gss.ctx->mech;
	uint8_t w[4] = { (uint8_t)(c->gss.reply_word >> 24), (uint8_t)(c->gss.reply_word >> 16),
			 (uint8_t)(c->gss.reply_word >> 8), (uint8_t)c->gss.reply_word };
	uint8_t *start = c->res.p;
	OM_uint32 maj = GSS_S_COMPLETE, min = 0;

	xdr_enc_u32(&c->res, RPC_AUTH_GSS);
	if (rpc_gss_enc_mic(m, w, sizeof(w), &c->res, &maj, &min) || c->res.overflow)
		return; /* overflow: the reply is dropped (rpc_reply_send) */
	log_limited(&lim_gss, LOG_WARNING, "rpc: %s: gss_get_mic_iov failed (major 0x%x minor %u)",
		    c->conn->peer_name, maj, min);
	c->res.p = start;
	xdr_enc_u32(&c->res, RPC_AUTH_NONE); /* the client refuses the reply */
	xdr_enc_u32(&c->res, 0);
}

/*
 * RFC 2203 §5.3.2.2, §5.3.2.3: the results become seq_num + results, then
 * integ: opaque databody_integ<> + opaque checksum<> (a MIC of it);
 * priv: opaque databody_priv<> (a gss_wrap of it). All in the reply buffer.
 */
bool rpc_gss_wrap_reply(struct rpc_call *c)
{
	struct gss_mech *m = c->gss.ctx->mech;
	uint8_t *body = c->res.base + c->reply_stat_off + XDR_UNIT;
	size_t n = (size_t)(c->res.p - body);

	c->res.end = c->res.base + c->reply_cap; /* what rpc_res_cap() kept back, for the token */
	/* rpc_ddp.c keeps data inline under krb5i and krb5p */
	if (!c->n_ddp_out && (c->gss.svc == RPC_GSS_SVC_INTEGRITY ? rpc_gss_integ_seal(m, c->gss.seq, &c->res, body, n)
								  : rpc_gss_priv_seal(m, c->gss.seq, &c->res, body, n)))
		return true;
	log_limited(&lim_gss, LOG_WARNING, "rpc: %s: RPCSEC_GSS reply of %zu bytes could not be wrapped",
		    c->conn->peer_name, n);
	return false;
}

void rpc_gss_call_end(struct rpc_call *c)
{
	rpc_gss_ctx_put(&g.tab, c->gss.ctx);
	c->gss.ctx = NULL;
}
