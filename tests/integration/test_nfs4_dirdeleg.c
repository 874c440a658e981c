/*
 * test_nfs4_dirdeleg.c - NFSv4.1 directory delegations (RFC 8881 §10.9,
 * GET_DIR_DELEGATION §18.39), recall-only, against the real daemon with
 * "[nfsv4] delegations = yes, directory-delegations = yes, lease-time = 10".
 * The Linux 6.1 client does not ask for directory delegations, so raw
 * COMPOUNDs (nfs4raw) are the client; each 4.1 client's connection is its
 * back channel, the test playing its callback service:
 *  - grant: GDD4_OK with a delegation stateid, no notification asked or granted;
 *    the holder asking again: GDD4_UNAVAIL; a regular file: NOTDIR; the
 *    stats gauge counts it;
 *  - another client's CREATE and REMOVE in the directory: NFS4ERR_DELAY and
 *    CB_RECALL naming the holder's stateid and the directory's handle; the
 *    change proceeds after DELEGRETURN;
 *  - the holder's own CREATE and REMOVE: no CB_RECALL, the delegation stays
 *    (TEST_STATEID NFS4_OK) (RFC 8881 §10.9.1); with two holders, one's
 *    change recalls only the other's;
 *  - an NFSv3 CREATE and REMOVE in the directory: NFS3ERR_JUKEBOX and
 *    CB_RECALL, then NFS3_OK after the return;
 *  - a local process (the test itself) creating a file in the directory,
 *    and changing the directory's mode: CB_RECALL after the fact (inotify);
 *    changing a file's mode in it recalls nothing;
 *  - another client's RENAME into the directory, and its REMOVE of the
 *    delegated directory itself (from the parent): DELAY and CB_RECALL;
 *  - NFSv4.0: the operation is OP_ILLEGAL (RFC 8881 §18.39 is 4.1's);
 *  - notifications (RFC 8881 §10.9.2): asked REMOVE, ADD and RENAME, all
 *    granted; another client's CREATE
 *    then proceeds at once and the holder gets CB_NOTIFY naming the entry
 *    (its own CREATE too), so do another client's OPEN creating a file and
 *    LINK (an OPEN of an existing file tells nothing) and an NFSv3 CREATE, no
 *    CB_RECALL; another client's REMOVE (a directory, a file), the holder's
 *    own, an NFSv3 REMOVE and RMDIR: NOTIFY4_REMOVE_ENTRY (name, cookie 0);
 *    a RENAME within (NFSv4, NFSv3; over an existing entry too):
 *    NOTIFY4_RENAME_ENTRY; across two directories: REMOVE_ENTRY to the
 *    source's holder, ADD_ENTRY to the target's; a holder without
 *    RENAME_ENTRY is recalled by a rename within;
 *  - a local process's create, rename within, mkdir, rmdir, move out and in,
 *    unlink: CB_NOTIFY (ADD, RENAME, REMOVE) from inotify, no recall; its
 *    chmod of the directory still recalls;
 *  - NOTIFY4_CHANGE_DIR_ATTRS (asked with change and mode): granted, and
 *    gddr_dir_attributes names both (asked for fsid alone: not granted);
 *    another client's SETATTR of the directory's mode, the holder's own and an
 *    NFSv3 SETATTR proceed at once and the holder gets CB_NOTIFY with a
 *    notify_attr4 (ne_file empty, ne_attrs {change, mode} with the new mode);
 *    another client's CREATE: ADD_ENTRY, then CHANGE_DIR_ATTRS; a local
 *    chmod and rmdir at once: recalled (the attributes may be gone);
 *    a holder granted only ADD_ENTRY is recalled by a SETATTR (DELAY until
 *    returned); a local chmod of the directory is told the same way (inotify);
 *  - a CB_NOTIFY answered with an error recalls the delegation;
 *  - a holder reading none of its callbacks: once its callback queue is
 *    full, the next notification is a recall (DELAY for the other client);
 *  - a holder that never returns: revoked a lease after the recall (the
 *    other client's CREATE proceeds, RECALLABLE_STATE_REVOKED,
 *    TEST_STATEID DELEG_REVOKED, FREE_STATEID);
 *  - soak: thousands of grant/return cycles by many clients on several
 *    directories: the table back to 0, descriptors and RSS back;
 *  - notification soak (test_notify_soak): 8 holders of notifying delegations
 *    (entries and CHANGE_DIR_ATTRS; 2 slow readers) on three directories, 2
 *    NFSv4 clients, an NFSv3 one and a local thread making 3,120 changes
 *    (240 of the directories' mode), thousands of CB_NOTIFYs answered (of
 *    attributes, of local changes too) and of grant/return cycles, full
 *    queues recalled, a
 *    mute holder (its CB_NOTIFY times out) and a dead one (connection gone)
 *    left to lease expiry; then every client gone: clients, delegations,
 *    pending CB_NOTIFYs and callback paths back, descriptors and RSS back
 *    (DD_ONLY_NOTIFY_SOAK=1 runs it alone);
 *  - restarted with directory-delegations = no: GDD4_UNAVAIL;
 *  - the stats' "nfs4_delegations" (issue 26 item 7): the kind directory;
 *    dir_recalls_<cause> and recalls_<cause> moved by each case's recalls
 *    under its cause only (nfs4, nfs3, local_open), revoked_unanswered by
 *    the revocation, cb_notify_sent by the notifications.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/integration/nfs4raw.h"

#define LEASE 10
#define OP_GDD 46u       /* OP_GET_DIR_DELEGATION */
#define CB_RECALL 4u     /* OP_CB_RECALL */
#define N4ERR_NOTDIR 20
#define NFS3ERR_JUKEBOX 10008
#define SOAK_CLIENTS 16
#define SOAK_CYCLES 250  /* per client: 4000 grant/return cycles in all */

static struct hx_env env;
static char stats_path[600];
static uint32_t xid = 0x44440000;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- a client playing its callback service: CB_RECALLs kept until asked for ---- */

#define RECALLS_KEPT 16
#define CB_NOTIFY 6u /* OP_CB_NOTIFY */
struct dd_client {
	struct n4_client k;
	unsigned nrec, nnot;
	uint32_t notify_status; /* what CB_NOTIFYs are answered (0: NFS4_OK) */
	unsigned long notes_seen, recalls_seen; /* CB_NOTIFYs and CB_RECALLs answered since dd_start */
	struct n4_cb_call rec[RECALLS_KEPT]; /* CB_RECALLs not yet taken by dd_recalled() */
	struct n4_cb_call note[RECALLS_KEPT]; /* CB_NOTIFYs not yet taken by dd_notified() */
};

static void keep_cb(struct dd_client *d, const uint8_t *msg, size_t len)
{
	struct n4_cb_call cc;

	if (!n4_cb_parse(msg, len, &cc))
		return;
	d->recalls_seen += cc.proc == 1 && cc.op2 == CB_RECALL;
	d->notes_seen += cc.proc == 1 && cc.op2 == CB_NOTIFY;
	if (cc.proc == 1 && cc.op2 == CB_RECALL && d->nrec < RECALLS_KEPT)
		d->rec[d->nrec++] = cc;
	if (cc.proc == 1 && cc.op2 == CB_NOTIFY && d->nnot < RECALLS_KEPT)
		d->note[d->nnot++] = cc;
	(void)n4_cb_reply(&d->k.c, &cc, cc.op2 == CB_NOTIFY ? d->notify_status : 0); /* probes, recalls: NFS4_OK */
	d->k.cb_answered++;
}

/* nfs4raw's hook: k is the first member of its struct dd_client. */
static void on_cb(struct n4_client *k, const uint8_t *msg, size_t len)
{
	keep_cb((struct dd_client *)k, msg, len);
}

static bool dd_start(struct dd_client *d, const char *id)
{
	memset(d, 0, sizeof(*d));
	if (n4_connect(&d->k, env.port, 1) != 0)
		return false;
	d->k.cs_flags = N4_CS_BACK_CHAN;
	d->k.on_cb = on_cb;
	d->k.cb_sys = true;
	d->k.cb_answered = 0;
	if (n4_setup(&d->k, id) != 0)
		return false;
	/* the back channel's probe (CB_NULL, CB_COMPOUND{CB_SEQUENCE}) is answered while SEQUENCE waits */
	for (int i = 0; i < 100 && d->k.cb_answered < 2; i++) {
		if (n4_sequence(&d->k) != 0)
			return false;
		usleep(20000);
	}
	return d->k.cb_answered >= 2;
}

/* One callback call received and kept (keep_cb) before end (now_s()): false if none came. */
static bool dd_pump(struct dd_client *d, double end)
{
	int left = (int)((end - now_s()) * 1000);
	uint8_t *buf = NULL;
	size_t len;

	if (left <= 0 || raw_recv_record(&d->k.c, &buf, &len, left) != RAW_RECV_OK)
		return false;
	keep_cb(d, buf, len);
	free(buf);
	return true;
}

/* A CB_RECALL of sid arrived within timeout_ms (taken from those kept, or read from the connection). */
static bool dd_recalled(struct dd_client *d, const struct n4_sid *sid, const uint8_t *fh, uint32_t fh_len,
			int timeout_ms)
{
	double end = now_s() + timeout_ms / 1000.0;

	for (;;) {
		for (unsigned i = 0; i < d->nrec; i++) {
			const struct n4_cb_call *cc = &d->rec[i];
			bool match = memcmp(&cc->dsid, sid, sizeof(*sid)) == 0 &&
				     (!fh || (cc->fh_len == fh_len && memcmp(cc->fh, fh, fh_len) == 0));

			memmove(&d->rec[i], &d->rec[i + 1], (d->nrec - i - 1) * sizeof(d->rec[0]));
			d->nrec--;
			if (match)
				return true;
			i--;
		}
		if (!dd_pump(d, end))
			return false;
	}
}

/* A dir made by the test (a local process) under the export, and its handle. */
struct dd_dir {
	char name[64];
	char path[PATH_MAX + 80]; /* local, and from the pseudo root (the export sits at its own path) */
	uint8_t fh[128];
	uint32_t fh_len;
};

#define NT_REMOVE 2u /* notify_type4 NOTIFY4_REMOVE_ENTRY */
#define NT_ADD 3u    /* NOTIFY4_ADD_ENTRY */
#define NT_RENAME 4u /* NOTIFY4_RENAME_ENTRY */

/* notify_entry4 (RFC 8881 §20.4.1): ne_file is name, ne_attrs an empty fattr4. */
static bool nt_entry(struct xd *x, const char *name, const char *what)
{
	uint32_t l = 0;
	const uint8_t *n = xd_opaque(x, &l, 255);
	bool ok = CHECK(n && l == strlen(name) && memcmp(n, name, l) == 0, "%s: ne_file is %s", what, name);

	return CHECK(xd_u32(x) == 0 && xd_u32(x) == 0, "%s: no attributes", what) && ok;
}

/* notify_remove4: the entry, nrm_old_entry_cookie 0 (not kept by the server). */
static bool nt_remove(struct xd *x, const char *name, const char *what)
{
	bool ok = nt_entry(x, name, what);

	return CHECK(xd_u64(x) == 0, "%s: nrm_old_entry_cookie 0", what) && ok;
}

/* notify_add4: nad_old_entry (replaced: one, the same name), the entry, no cookie, no previous, not last. */
static bool nt_add(struct xd *x, const char *name, bool replaced, const char *what)
{
	bool ok = CHECK_EQ(xd_u32(x), replaced ? 1u : 0u, "%s: nad_old_entry %s", what, replaced ? "one" : "none");

	if (ok && replaced)
		ok = nt_remove(x, name, "the replaced entry");
	ok = nt_entry(x, name, what) && ok;
	return CHECK(xd_u32(x) == 0 && xd_u32(x) == 0 && xd_u32(x) == 0, "%s: no cookie, no previous, not last",
		     what) && ok;
}

/* The next CB_NOTIFY (taken from those kept, waiting up to timeout_ms) into *cc: false if none came.
 * *ok: it names sid and directory dir and holds one notify4 of type (NT_*); *x is left at its
 * notify_vals' contents. what names it in the checks. */
static bool dd_next_note(struct dd_client *d, const struct n4_sid *sid, const struct dd_dir *dir, uint32_t type,
			 int timeout_ms, const char *what, struct n4_cb_call *cc, struct xd *x, bool *ok)
{
	double end = now_s() + timeout_ms / 1000.0;
	struct n4_sid got;
	uint32_t l = 0;

	while (d->nnot == 0)
		if (!dd_pump(d, end))
			return CHECK(false, "CB_NOTIFY of %s within %d ms", what, timeout_ms);
	*cc = d->note[0];
	memmove(&d->note[0], &d->note[1], (d->nnot - 1) * sizeof(d->note[0]));
	d->nnot--;
	xd_init(x, cc->args, cc->args_len);
	n4_xd_sid(x, &got);
	const uint8_t *f = xd_opaque(x, &l, 128);
	bool good = memcmp(&got, sid, sizeof(got)) == 0 && f && l == dir->fh_len && memcmp(f, dir->fh, l) == 0;

	good = CHECK(good, "%s: CB_NOTIFY names the delegation and the directory", what) && good;
	*ok = CHECK(xd_u32(x) == 1 && xd_u32(x) == 1 && xd_u32(x) == 1u << type, "%s: one notify4, of type %u", what,
		    type) && good;
	xd_u32(x); /* notify_vals' length */
	return true;
}

/* A CB_NOTIFY of sid about directory fh arrived within timeout_ms (taken from those kept), with one
 * notify4 of type (NT_*) about name (RENAME: to newname; replaced: over an existing entry) (RFC 8881
 * §20.4.1). */
static bool dd_told(struct dd_client *d, const struct n4_sid *sid, const struct dd_dir *dir, uint32_t type,
		    const char *name, const char *newname, bool replaced, int timeout_ms)
{
	struct n4_cb_call cc;
	struct xd x;
	bool ok;

	if (!dd_next_note(d, sid, dir, type, timeout_ms, name, &cc, &x, &ok))
		return false;
	if (type == NT_ADD)
		ok = nt_add(&x, name, replaced, "notify_add4") && ok;
	else if (type == NT_REMOVE)
		ok = nt_remove(&x, name, "notify_remove4") && ok;
	else
		ok = nt_remove(&x, name, "nrn_old_entry") && nt_add(&x, newname, replaced, "nrn_new_entry") && ok;
	return ok && !x.bad;
}

/* A CB_NOTIFY of NOTIFY4_ADD_ENTRY of name (no entry replaced). */
static bool dd_notified(struct dd_client *d, const struct n4_sid *sid, const uint8_t *fh, uint32_t fh_len,
			const char *name, int timeout_ms)
{
	struct dd_dir dir = { .fh_len = fh_len };

	memcpy(dir.fh, fh, fh_len);
	if (timeout_ms < 1000) { /* a check that nothing comes: quiet */
		double end = now_s() + timeout_ms / 1000.0;

		while (d->nnot == 0)
			if (!dd_pump(d, end))
				return false;
	}
	return dd_told(d, sid, &dir, NT_ADD, name, NULL, false, timeout_ms);
}

#define NT_DIR_ATTRS 1u /* notify_type4 NOTIFY4_CHANGE_DIR_ATTRS */
/* gdda_dir_attributes asked by the cases: change (3) and mode (33) */
#define DA_WORD0 (1u << 3)
#define DA_WORD1 (1u << (33 - 32))

/* A CB_NOTIFY of sid about directory dir arrived within 20 s, one NOTIFY4_CHANGE_DIR_ATTRS (RFC 8881
 * §20.4.1 notify_attr4: ne_file empty, ne_attrs {change, mode}) whose mode is mode. */
static bool dd_told_attrs(struct dd_client *d, const struct n4_sid *sid, const struct dd_dir *dir, uint32_t mode,
			  const char *what)
{
	struct n4_cb_call cc;
	struct xd x;
	bool ok;

	if (!dd_next_note(d, sid, dir, NT_DIR_ATTRS, 20000, what, &cc, &x, &ok))
		return false;
	ok = CHECK_EQ(xd_u32(&x), 0, "%s: ne_file empty (the directory itself)", what) && ok;
	uint32_t words = xd_u32(&x), w0 = words > 0 ? xd_u32(&x) : 0, w1 = words > 1 ? xd_u32(&x) : 0;

	for (uint32_t i = 2; i < words && !x.bad; i++)
		ok = CHECK_EQ(xd_u32(&x), 0, "%s: no attribute past word 1", what) && ok;
	ok = CHECK(w0 == DA_WORD0 && w1 == DA_WORD1, "%s: ne_attrs names change and mode (0x%x 0x%x)", what, w0, w1) &&
	     ok;
	ok = CHECK_EQ(xd_u32(&x), 12, "%s: attr_vals: change (8) and mode (4)", what) && ok;
	xd_u64(&x); /* change */
	uint32_t got_mode = xd_u32(&x);

	ok = CHECK(got_mode == mode, "%s: mode %o told (%o)", what, mode, got_mode) && ok;
	return ok && !x.bad;
}

static void dd_close(struct dd_client *d)
{
	(void)n4_destroy_client(&d->k);
	n4_client_close(&d->k);
}

/* ---- COMPOUNDs ---- */



/* The handle of path (from the export's root) into fh: the status. */
static int dd_fh(struct n4_client *k, const char *path, uint8_t *fh, uint32_t *fh_len)
{
	struct raw_reply r;
	struct xb a;
	uint32_t n = n4_walk(NULL, path);
	int st;

	n4_begin(k, &a, n + 1);
	n4_walk(&a, path);
	xb_u32(&a, N4_GETFH);
	st = n4_call(k, &a, &r);
	if (st == 0) {
		for (uint32_t i = 0; i < n; i++)
			n4_res(&r, i ? N4_LOOKUP : N4_PUTROOTFH);
		const uint8_t *p = n4_res(&r, N4_GETFH) == 0 ? xd_opaque(&r.body, fh_len, 128) : NULL;
		if (p)
			memcpy(fh, p, *fh_len);
		else
			st = -1;
	}
	raw_reply_free(&r);
	return st;
}

/* GET_DIR_DELEGATION of fh asking for the notification types want (bits of notify_type4) and the
 * directory attributes attrs[] (gdda_dir_attributes words 0, 1; NULL none): the COMPOUND's status if
 * not NFS4_OK, else gddrnf_status (0 GDD4_OK: *sid, *notify the words of the granted notification
 * bitmap or'ed, attrs[] the gddr_dir_attributes granted; 1 GDD4_UNAVAIL). */
static int dd_get_attrs(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t want, uint32_t *attrs,
			struct n4_sid *sid, uint32_t *notify)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, OP_GDD);
	xb_u32(&a, 0);                          /* gdda_signal_deleg_avail */
	xb_u32(&a, 1);                          /* gdda_notification_types */
	xb_u32(&a, want);
	for (int i = 0; i < 2; i++) {           /* gdda_child_attr_delay, gdda_dir_attr_delay */
		xb_u64(&a, 0);
		xb_u32(&a, 0);
	}
	xb_u32(&a, 0); /* gdda_child_attributes */
	xb_u32(&a, attrs ? 2 : 0); /* gdda_dir_attributes */
	for (int i = 0; attrs && i < 2; i++)
		xb_u32(&a, attrs[i]);
	st = n4_call(k, &a, &r);
	if (st == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, OP_GDD) == 0) {
		st = (int)xd_u32(&r.body);
		if (st == 0) {
			xd_skip(&r.body, 8); /* gddr_cookieverf */
			n4_xd_sid(&r.body, sid);
			*notify = 0;
			for (uint32_t n = xd_u32(&r.body); n && !r.body.bad; n--)
				*notify |= xd_u32(&r.body);
			for (uint32_t n = xd_u32(&r.body); n && !r.body.bad; n--) /* gddr_child_attributes */
				xd_u32(&r.body);
			if (attrs)
				attrs[0] = attrs[1] = 0;
			for (uint32_t n = xd_u32(&r.body), i = 0; n && !r.body.bad; n--, i++) {
				uint32_t w = xd_u32(&r.body);

				if (attrs && i < 2)
					attrs[i] = w;
			}
		}
		if (r.body.bad)
			st = -1;
	}
	raw_reply_free(&r);
	return st;
}

/* dd_get_attrs asking for no directory attributes. */
static int dd_get_want(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t want, struct n4_sid *sid,
		       uint32_t *notify)
{
	return dd_get_attrs(k, fh, fh_len, want, NULL, sid, notify);
}

/* dd_get_want asking for no notification: a recall-only delegation. */
static int dd_get(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, struct n4_sid *sid, uint32_t *notify)
{
	return dd_get_want(k, fh, fh_len, 0, sid, notify);
}

/* CREATE of a directory (kind NF4DIR, no attributes) named name in fh: the status. */
static int dd_mkdir(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const char *name)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_CREATE);
	xb_u32(&a, 2); /* NF4DIR */
	xb_string(&a, name);
	xb_u32(&a, 0); /* fattr4: no attributes */
	xb_u32(&a, 0);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

/* REMOVE name in fh: the status. */
static int dd_remove(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const char *name)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_REMOVE);
	xb_string(&a, name);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

/* RENAME from/oldname to to/newname (SAVEFH the source directory): the status. */
static int dd_rename2(struct n4_client *k, const struct dd_dir *from, const char *oldname, const struct dd_dir *to,
		      const char *newname)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 4, from->fh, from->fh_len);
	xb_u32(&a, N4_SAVEFH);
	n4_xb_putfh(&a, to->fh, to->fh_len);
	xb_u32(&a, N4_RENAME);
	xb_string(&a, oldname);
	xb_string(&a, newname);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

/* RENAME from/name to to/name. */
static int dd_rename(struct n4_client *k, const struct dd_dir *from, const struct dd_dir *to, const char *name)
{
	return dd_rename2(k, from, name, to, name);
}

/* LINK of the object fh as name in directory to: the status. */
static int dd_link(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct dd_dir *to, const char *name)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 4, fh, fh_len);
	xb_u32(&a, N4_SAVEFH);
	n4_xb_putfh(&a, to->fh, to->fh_len);
	xb_u32(&a, N4_LINK);
	xb_string(&a, name);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

/* DELEGRETURN (fh the directory) or FREE_STATEID of sid: the status. */
static int dd_sid_op(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, uint32_t op, const struct n4_sid *sid)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, op);
	n4_xb_sid(&a, sid);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

/* SETATTR of the directory's mode (the anonymous stateid): the status. */
static int dd_chmod(struct n4_client *k, const struct dd_dir *d, uint32_t mode)
{
	static const struct n4_sid anon;
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, d->fh, d->fh_len);
	xb_u32(&a, N4_SETATTR);
	n4_xb_sid(&a, &anon);
	xb_u32(&a, 2); /* fattr4: attrmask {0, mode} */
	xb_u32(&a, 0);
	xb_u32(&a, DA_WORD1);
	xb_u32(&a, 4); /* attr_vals: mode4 */
	xb_u32(&a, mode);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

static bool dd_dir(struct n4_client *k, const char *name, struct dd_dir *d)
{
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->path, sizeof(d->path), "%s/%s", env.export_dir, name);
	if (mkdir(d->path, 0777) != 0 && errno != EEXIST)
		return false;
	(void)chmod(d->path, 0777);
	return CHECK_EQ(dd_fh(k, d->path, d->fh, &d->fh_len), 0, "the handle of %s", name);
}

/* The stats document's "nfs4" number key (-1: none). */
static long long nfs4_num(const char *key)
{
	char *doc = n4_stats_json(stats_path);
	long long v = doc ? n4_stats_num(doc, "nfs4", key) : -1;

	free(doc);
	return v;
}

/* The stats document now (dir_recalls_moved's before). */
static char *stats_now(void)
{
	return n4_stats_json(stats_path);
}

/*
 * After changes of cause's ("nfs4", "nfs3", "local_open"): "nfs4_delegations"'s dir_recalls_<cause> and
 * recalls_<cause> grew by n and no other cause's, revoked_unanswered by revoked (issue 26 item 7).
 * before: the document before the changes (freed here).
 */
static void dir_recalls_moved(char *before, const char *cause, long long n, long long revoked, const char *what)
{
	char *after = stats_now();
	char key[48], dkey[56], why[512] = "";
	const char *obj = "nfs4_delegations";

	snprintf(key, sizeof(key), "recalls_%s", cause);
	snprintf(dkey, sizeof(dkey), "dir_%s", key);
	bool ok = n4_stats_moved(before, after, obj, "dir_recalls_", n ? dkey : NULL, n, why, sizeof(why)) &&
		  n4_stats_moved(before, after, obj, "recalls_", n ? key : NULL, n, why, sizeof(why)) &&
		  n4_stats_moved(before, after, obj, "revoked_", revoked ? "revoked_unanswered" : NULL, revoked, why,
				 sizeof(why));

	CHECK(ok, "stats: %s: dir_recalls_%s +%lld and no other cause's, %lld revoked (%s)", what, cause, n, revoked,
	      why);
	free(before);
	free(after);
}

/* The stats document's "nfs4_delegations" number key (-1: none). */
static long long deleg_num(const char *key)
{
	char *doc = n4_stats_json(stats_path);
	long long v = doc ? n4_stats_num(doc, "nfs4_delegations", key) : -1;

	free(doc);
	return v;
}

/* d holds a directory delegation of dir (*sid). */
static bool dd_hold(struct dd_client *d, const struct dd_dir *dir, struct n4_sid *sid, const char *who)
{
	uint32_t notify = 1;

	return CHECK_EQ(dd_get(&d->k, dir->fh, dir->fh_len, sid, &notify), 0, "%s: GDD4_OK on %s", who, dir->name) &&
	       CHECK_EQ(notify, 0, "%s: no notification granted (recall-only)", who);
}

/* d's delegation sid of dir recalled (CB_RECALL within 5 s), then returned. */
static void dd_recall_return(struct dd_client *d, const struct dd_dir *dir, const struct n4_sid *sid, const char *why)
{
	CHECK(dd_recalled(d, sid, dir->fh, dir->fh_len, 20000), "%s: CB_RECALL of the delegation, with the directory's handle",
	      why);
	CHECK_EQ(dd_sid_op(&d->k, dir->fh, dir->fh_len, N4_DELEGRETURN, sid), 0, "%s: DELEGRETURN", why);
}

/* ---- the cases ---- */

static void test_grant(struct dd_client *a, const struct dd_dir *d)
{
	struct n4_sid sid, again;
	uint32_t notify = 0;
	uint8_t fh[128];
	uint32_t fh_len = 0;
	char path[PATH_MAX + 160];

	hx_section("GET_DIR_DELEGATION: granted recall-only, once per client; NOTDIR for a file");
	if (!dd_hold(a, d, &sid, "A"))
		return;
	CHECK_EQ(nfs4_num("dir_delegations"), 1, "stats: 1 directory delegation");
	CHECK_EQ(nfs4_num("delegations"), 1, "stats: counted among the delegations");
	char *doc = stats_now();

	CHECK(n4_stats_num(doc, "nfs4_delegations", "directory") == 1 && n4_stats_num(doc, "nfs4_delegations", "read") == 0,
	      "stats: of the kind directory (not read)");
	free(doc);
	CHECK_EQ(dd_get(&a->k, d->fh, d->fh_len, &again, &notify), 1, "A again: GDD4_UNAVAIL (one per client)");
	snprintf(path, sizeof(path), "%s/plain", d->path);
	close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	snprintf(path, sizeof(path), "%s/plain", d->path);
	if (CHECK_EQ(dd_fh(&a->k, path, fh, &fh_len), 0, "a file's handle"))
		CHECK_EQ(dd_get(&a->k, fh, fh_len, &again, &notify), N4ERR_NOTDIR, "a regular file: NFS4ERR_NOTDIR");
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_DELEGRETURN, &sid), 0, "A: DELEGRETURN");
	CHECK_EQ(nfs4_num("dir_delegations"), 0, "stats: none held after the return");
}

static void test_other_client(struct dd_client *a, struct dd_client *b, const struct dd_dir *d)
{
	struct n4_sid sid;

	hx_section("another client's CREATE and REMOVE in the directory recall the delegation");
	char *s0 = stats_now();

	if (!dd_hold(a, d, &sid, "A")) {
		free(s0);
		return;
	}
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "bsub"), N4ERR_DELAY, "B: CREATE waits (NFS4ERR_DELAY)");
	CHECK(dd_recalled(a, &sid, d->fh, d->fh_len, 20000), "A: CB_RECALL of its stateid and the directory's handle");
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "bsub"), N4ERR_DELAY, "B: still DELAY while the recall is out");
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_DELEGRETURN, &sid), 0, "A: DELEGRETURN");
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "bsub"), 0, "B: CREATE proceeds after the return");
	if (!dd_hold(a, d, &sid, "A"))
		return;
	CHECK_EQ(dd_remove(&b->k, d->fh, d->fh_len, "bsub"), N4ERR_DELAY, "B: REMOVE waits (NFS4ERR_DELAY)");
	dd_recall_return(a, d, &sid, "A (B's REMOVE)");
	CHECK_EQ(dd_remove(&b->k, d->fh, d->fh_len, "bsub"), 0, "B: REMOVE proceeds after the return");
	CHECK(nfs4_num("dir_delegation_recalls") >= 2, "stats: directory recalls counted");
	dir_recalls_moved(s0, "nfs4", 2, 0, "B's CREATE and REMOVE");
}

static void test_own_change(struct dd_client *a, struct dd_client *b, const struct dd_dir *d)
{
	struct n4_sid sa, sb;

	hx_section("the holder's own changes recall nothing of its own (RFC 8881 §10.9.1); a second holder's are");
	if (!dd_hold(a, d, &sa, "A"))
		return;
	CHECK_EQ(dd_mkdir(&a->k, d->fh, d->fh_len, "asub"), 0, "A: its own CREATE proceeds at once");
	CHECK_EQ(dd_remove(&a->k, d->fh, d->fh_len, "asub"), 0, "A: its own REMOVE proceeds at once");
	CHECK(!dd_recalled(a, &sa, NULL, 0, 1500), "A: no CB_RECALL (1.5 s)");
	CHECK_EQ(n4_test_stateid(&a->k, &sa), 0, "A: TEST_STATEID: its delegation stands");
	if (!dd_hold(b, d, &sb, "B (shared)"))
		return;
	CHECK_EQ(dd_mkdir(&a->k, d->fh, d->fh_len, "asub2"), N4ERR_DELAY, "A's CREATE waits for B's delegation");
	dd_recall_return(b, d, &sb, "B (A's CREATE)");
	CHECK_EQ(dd_mkdir(&a->k, d->fh, d->fh_len, "asub2"), 0, "A: CREATE proceeds after B's return");
	CHECK(!dd_recalled(a, &sa, NULL, 0, 1000), "A: still no CB_RECALL of its own");
	CHECK_EQ(n4_test_stateid(&a->k, &sa), 0, "A: its delegation stands");
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_DELEGRETURN, &sa), 0, "A: DELEGRETURN");
}

/* NFSv3 CREATE3args (UNCHECKED, no attributes) or REMOVE3args of name in dir: the nfsstat3, or -1. */
static int v3_name_op(struct raw_conn *c, uint32_t proc, const struct dd_dir *d, const char *name)
{
	struct raw_reply r;
	struct xb a;
	int st = -1;

	xb_init(&a);
	xb_opaque(&a, d->fh, d->fh_len);
	xb_string(&a, name);
	if (proc == 8) { /* CREATE: createhow3 UNCHECKED, sattr3 with nothing set */
		xb_u32(&a, 0);
		for (int i = 0; i < 6; i++)
			xb_u32(&a, 0);
	}
	if (raw_call(c, ++xid, RAW_NFS_PROG, 3, proc, a.p, a.len, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	    r.accept_stat == 0)
		st = (int)xd_u32(&r.body);
	raw_reply_free(&r);
	xb_free(&a);
	return st;
}

/* NFSv3 RENAME3args from/fname to to/tname: the nfsstat3, or -1. */
static int v3_rename(struct raw_conn *c, const struct dd_dir *from, const char *fname, const struct dd_dir *to,
		     const char *tname)
{
	struct raw_reply r;
	struct xb a;
	int st = -1;

	xb_init(&a);
	xb_opaque(&a, from->fh, from->fh_len);
	xb_string(&a, fname);
	xb_opaque(&a, to->fh, to->fh_len);
	xb_string(&a, tname);
	if (raw_call(c, ++xid, RAW_NFS_PROG, 3, 14, a.p, a.len, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	    r.accept_stat == 0)
		st = (int)xd_u32(&r.body);
	raw_reply_free(&r);
	xb_free(&a);
	return st;
}

/* NFSv3 SETATTR3args of the directory's mode (sattr3: mode only; no guard): the nfsstat3, or -1. */
static int v3_chmod(struct raw_conn *c, const struct dd_dir *d, uint32_t mode)
{
	struct raw_reply r;
	struct xb a;
	int st = -1;

	xb_init(&a);
	xb_opaque(&a, d->fh, d->fh_len);
	xb_u32(&a, 1); /* set_mode3 */
	xb_u32(&a, mode);
	for (int i = 0; i < 5; i++) /* uid, gid, size: not set; atime, mtime: DONT_CHANGE */
		xb_u32(&a, 0);
	xb_u32(&a, 0); /* sattrguard3: no check */
	if (raw_call(c, ++xid, RAW_NFS_PROG, 3, 2, a.p, a.len, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	    r.accept_stat == 0)
		st = (int)xd_u32(&r.body);
	raw_reply_free(&r);
	xb_free(&a);
	return st;
}

static void test_nfs3(struct dd_client *a, const struct dd_dir *d)
{
	struct raw_conn v3;
	struct n4_sid sid;

	hx_section("an NFSv3 CREATE and REMOVE in the directory recall the delegation (NFS3ERR_JUKEBOX meanwhile)");
	if (!CHECK(raw_connect(&v3, env.port) == 0, "connect (NFSv3)") || !dd_hold(a, d, &sid, "A"))
		return;
	char *s0 = stats_now();

	CHECK_EQ(v3_name_op(&v3, 8, d, "v3file"), NFS3ERR_JUKEBOX, "NFSv3 CREATE: NFS3ERR_JUKEBOX");
	dd_recall_return(a, d, &sid, "A (NFSv3 CREATE)");
	CHECK_EQ(v3_name_op(&v3, 8, d, "v3file"), 0, "NFSv3 CREATE proceeds after the return");
	if (dd_hold(a, d, &sid, "A")) {
		CHECK_EQ(v3_name_op(&v3, 12, d, "v3file"), NFS3ERR_JUKEBOX, "NFSv3 REMOVE: NFS3ERR_JUKEBOX");
		dd_recall_return(a, d, &sid, "A (NFSv3 REMOVE)");
		CHECK_EQ(v3_name_op(&v3, 12, d, "v3file"), 0, "NFSv3 REMOVE proceeds after the return");
	}
	dir_recalls_moved(s0, "nfs3", 2, 0, "NFSv3 CREATE and REMOVE");
	raw_close(&v3);
}

static void test_local(struct dd_client *a, const struct dd_dir *d)
{
	struct n4_sid sid;
	char path[PATH_MAX + 160];
	double t0;

	hx_section("a local process's changes of the directory recall the delegation (inotify, after the fact)");
	snprintf(path, sizeof(path), "%s/child", d->path);
	close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	sleep(2); /* past rnfsd's own window on the directory (its GETFH, earlier changes) */
	char *s0 = stats_now();

	if (!dd_hold(a, d, &sid, "A")) {
		free(s0);
		return;
	}
	CHECK_EQ(chmod(path, 0600), 0, "local: chmod of a file in the directory");
	CHECK(!dd_recalled(a, &sid, NULL, 0, 1500), "A: no CB_RECALL for a file's own attributes");
	snprintf(path, sizeof(path), "%s/localnew", d->path);
	t0 = now_s();
	close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	CHECK(dd_recalled(a, &sid, d->fh, d->fh_len, 20000), "A: CB_RECALL after a local create (%.2f s)", now_s() - t0);
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_DELEGRETURN, &sid), 0, "A: DELEGRETURN");
	sleep(2);
	if (!dd_hold(a, d, &sid, "A"))
		return;
	CHECK_EQ(chmod(d->path, 0755), 0, "local: chmod of the directory");
	dd_recall_return(a, d, &sid, "A (local chmod of the directory)");
	sleep(2);
	if (!dd_hold(a, d, &sid, "A"))
		return;
	CHECK_EQ(unlink(path), 0, "local: unlink in the directory");
	dd_recall_return(a, d, &sid, "A (local unlink)");
	dir_recalls_moved(s0, "local_open", 3, 0, "a local create, chmod of the directory, unlink");
}

static void test_revoke(struct dd_client *a, struct dd_client *b, const struct dd_dir *d)
{
	struct n4_sid sid;
	double t0 = now_s();
	int st;

	hx_section("a holder that never returns is revoked after a lease; the other client proceeds");
	char *s0 = stats_now();

	if (!dd_hold(a, d, &sid, "A")) {
		free(s0);
		return;
	}
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "late"), N4ERR_DELAY, "B: CREATE waits");
	CHECK(dd_recalled(a, &sid, d->fh, d->fh_len, 20000), "A: CB_RECALL (answered, never returned)");
	do {
		usleep(500 * 1000);
		(void)n4_sequence(&a->k); /* A keeps its lease */
		st = dd_mkdir(&b->k, d->fh, d->fh_len, "late");
	} while (st == N4ERR_DELAY && now_s() - t0 < 4 * LEASE);
	CHECK_EQ(st, 0, "B: CREATE proceeds once A's delegation is revoked (%.1f s, lease %d s)", now_s() - t0, LEASE);
	CHECK_EQ(n4_sequence(&a->k), 0, "A: SEQUENCE");
	CHECK(a->k.seq_flags & N4_SEQ4_STATUS_RECALLABLE_STATE_REVOKED, "A: RECALLABLE_STATE_REVOKED (0x%x)",
	      a->k.seq_flags);
	CHECK_EQ(n4_test_stateid(&a->k, &sid), N4ERR_DELEG_REVOKED, "A: TEST_STATEID: DELEG_REVOKED");
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_FREE_STATEID, &sid), 0, "A: FREE_STATEID");
	CHECK_EQ(nfs4_num("dir_delegations"), 0, "stats: none left");
	dir_recalls_moved(s0, "nfs4", 1, 1, "B's CREATE, A never returning");
}

static void test_rename_victim(struct dd_client *a, struct dd_client *b, const struct dd_dir *d1,
			       const struct dd_dir *d2)
{
	struct dd_dir root, victim;
	struct n4_sid sid;
	char path[PATH_MAX + 160];

	hx_section("RENAME into the directory, and REMOVE of the delegated directory itself, recall it");
	snprintf(path, sizeof(path), "%s/moved", d1->path);
	close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	char *s0 = stats_now();

	if (!dd_hold(a, d2, &sid, "A")) {
		free(s0);
		return;
	}
	CHECK_EQ(dd_rename(&b->k, d1, d2, "moved"), N4ERR_DELAY, "B: RENAME d1 -> d2 waits (the target's delegation)");
	dd_recall_return(a, d2, &sid, "A (B's RENAME into d2)");
	CHECK_EQ(dd_rename(&b->k, d1, d2, "moved"), 0, "B: RENAME proceeds after the return");
	if (!dd_dir(&a->k, "victim", &victim) || !dd_hold(a, &victim, &sid, "A")) {
		free(s0);
		return;
	}
	snprintf(root.name, sizeof(root.name), "export");
	if (!CHECK_EQ(dd_fh(&b->k, env.export_dir, root.fh, &root.fh_len), 0, "the export's handle")) {
		free(s0);
		return;
	}
	CHECK_EQ(dd_remove(&b->k, root.fh, root.fh_len, "victim"), N4ERR_DELAY, "B: REMOVE of the delegated directory waits");
	dd_recall_return(a, &victim, &sid, "A (B removes its directory)");
	CHECK_EQ(dd_remove(&b->k, root.fh, root.fh_len, "victim"), 0, "B: REMOVE proceeds after the return");
	dir_recalls_moved(s0, "nfs4", 2, 0, "B's RENAME into d2, its REMOVE of the delegated directory");
}

static void test_v40(const struct dd_dir *d)
{
	struct n4_client k;
	struct raw_reply r;
	struct xb a;

	hx_section("NFSv4.0: GET_DIR_DELEGATION is not an operation of 4.0 (OP_ILLEGAL)");
	if (!CHECK_EQ(n4_start(&k, env.port, 0, "dd-v40"), 0, "4.0 client"))
		return;
	n4_begin_fh(&k, &a, 2, d->fh, d->fh_len);
	xb_u32(&a, OP_GDD);
	CHECK_EQ(n4_call(&k, &a, &r), 10044, "NFS4ERR_OP_ILLEGAL");
	raw_reply_free(&r);
	n4_client_close(&k);
}

/* NOTIFY4_RENAME_ENTRY within d (A holds sid on d with every entry notification); across d and d2,
 * REMOVE_ENTRY and ADD_ENTRY (RFC 8881 §18.26.4); a holder without RENAME_ENTRY recalled. */
static void test_notify_rename(struct dd_client *a, struct dd_client *b, const struct dd_dir *d,
			       const struct n4_sid *sid, const struct dd_dir *d2)
{
	struct n4_sid s2, sb, osid;
	uint32_t notify = 0;
	struct raw_conn v3;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	hx_section("NOTIFY4_RENAME_ENTRY within a directory; REMOVE_ENTRY and ADD_ENTRY across two");
	CHECK_EQ(dd_rename2(&b->k, d, "opened", d, "renamed"), 0, "B: RENAME within the directory proceeds at once");
	dd_told(a, sid, d, NT_RENAME, "opened", "renamed", false, 20000);
	CHECK_EQ(n4_open(&b->k, d->path, "over", true, N4_ACCESS_BOTH, 0, "o", NULL, &osid, fh, &fh_len), 0,
		 "B: OPEN creating \"over\"");
	dd_told(a, sid, d, NT_ADD, "over", NULL, false, 20000);
	CHECK_EQ(n4_close(&b->k, fh, fh_len, NULL, &osid), 0, "B: CLOSE");
	/* §18.26.4: the entry replaced is reported in nrn_new_entry.nad_old_entry */
	CHECK_EQ(dd_rename2(&b->k, d, "renamed", d, "over"), 0, "B: RENAME over an existing entry proceeds at once");
	dd_told(a, sid, d, NT_RENAME, "renamed", "over", true, 20000);
	if (!CHECK_EQ(dd_get_want(&a->k, d2->fh, d2->fh_len, 1u << 2 | 1u << 3 | 1u << 4, &s2, &notify), 0,
		      "A: GDD4_OK on a second directory"))
		return;
	CHECK_EQ(dd_rename2(&b->k, d, "over", d2, "moved2"), 0, "B: RENAME to the second directory proceeds at once");
	dd_told(a, sid, d, NT_REMOVE, "over", NULL, false, 20000);
	dd_told(a, &s2, d2, NT_ADD, "moved2", NULL, false, 20000);
	if (CHECK(raw_connect(&v3, env.port) == 0, "connect (NFSv3)")) {
		CHECK_EQ(v3_rename(&v3, d2, "moved2", d, "v3back"), 0, "NFSv3 RENAME across proceeds at once");
		dd_told(a, &s2, d2, NT_REMOVE, "moved2", NULL, false, 20000);
		dd_told(a, sid, d, NT_ADD, "v3back", NULL, false, 20000);
		CHECK_EQ(v3_rename(&v3, d, "v3back", d, "v3ren"), 0, "NFSv3 RENAME within proceeds at once");
		dd_told(a, sid, d, NT_RENAME, "v3back", "v3ren", false, 20000);
		raw_close(&v3);
	}
	CHECK_EQ(dd_sid_op(&a->k, d2->fh, d2->fh_len, N4_DELEGRETURN, &s2), 0, "A: DELEGRETURN of the second");
	/* A holder granted ADD_ENTRY and REMOVE_ENTRY but not RENAME_ENTRY: a rename within recalls it. */
	if (!CHECK_EQ(dd_get_want(&b->k, d->fh, d->fh_len, 1u << 2 | 1u << 3, &sb, &notify), 0, "B: GDD4_OK") ||
	    !CHECK_EQ(notify, 1u << 2 | 1u << 3, "B: ADD_ENTRY and REMOVE_ENTRY granted"))
		return;
	CHECK_EQ(dd_rename2(&a->k, d, "v3ren", d, "arenamed"), N4ERR_DELAY, "A: RENAME waits for B's delegation");
	dd_recall_return(b, d, &sb, "B (A's RENAME, no RENAME_ENTRY)");
	CHECK_EQ(dd_rename2(&a->k, d, "v3ren", d, "arenamed"), 0, "A: RENAME proceeds after B's return");
	dd_told(a, sid, d, NT_RENAME, "v3ren", "arenamed", false, 20000); /* §20.4.3: its own too */
	CHECK(!dd_recalled(a, sid, NULL, 0, 500), "A: no CB_RECALL of its own");
	/* §18.26.3, §18.26.4: both names the same file (hard links, or one name): nothing done, nothing told */
	char path[PATH_MAX + 160];

	snprintf(path, sizeof(path), "%s/arenamed", d->path);
	CHECK_EQ(dd_fh(&b->k, path, fh, &fh_len), 0, "the handle of arenamed");
	CHECK_EQ(dd_link(&b->k, fh, fh_len, d, "h2"), 0, "B: LINK of arenamed's file as h2");
	dd_told(a, sid, d, NT_ADD, "h2", NULL, false, 20000);
	CHECK_EQ(dd_rename2(&b->k, d, "arenamed", d, "h2"), 0, "B: RENAME of one hard link over the other");
	CHECK_EQ(dd_rename2(&b->k, d, "h2", d, "h2"), 0, "B: RENAME of a name to itself");
	CHECK(!dd_notified(a, sid, d->fh, d->fh_len, "h2", 700) && a->nnot == 0, "A: nothing told of either");
}

static void test_notify(struct dd_client *a, struct dd_client *b, const struct dd_dir *d, const struct dd_dir *d2)
{
	struct n4_sid sid;
	uint32_t notify = 0;
	struct raw_conn v3;

	hx_section("NOTIFY4_ADD_ENTRY, _REMOVE_ENTRY (RFC 8881 §10.9.2): CREATE and REMOVE told by CB_NOTIFY, not recalled");
	if (!CHECK_EQ(dd_get_want(&a->k, d->fh, d->fh_len, 1u << 2 | 1u << 3 | 1u << 4, &sid, &notify), 0,
		      "A: GDD4_OK asking REMOVE_ENTRY, ADD_ENTRY, RENAME_ENTRY"))
		return;
	CHECK_EQ(notify, 1u << 2 | 1u << 3 | 1u << 4, "A: NOTIFY4_ADD_ENTRY, REMOVE_ENTRY and RENAME_ENTRY granted");
	char *s0 = stats_now();
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "told"), 0, "B: CREATE proceeds at once");
	dd_notified(a, &sid, d->fh, d->fh_len, "told", 20000);
	CHECK(!dd_recalled(a, &sid, NULL, 0, 500), "A: no CB_RECALL");
	CHECK_EQ(dd_mkdir(&a->k, d->fh, d->fh_len, "mine"), 0, "A: its own CREATE");
	dd_notified(a, &sid, d->fh, d->fh_len, "mine", 20000);
	struct n4_sid osid;
	uint8_t fh[128];
	uint32_t fh_len = 0;

	CHECK_EQ(n4_open(&b->k, d->path, "opened", true, N4_ACCESS_BOTH, 0, "o", NULL, &osid, fh, &fh_len), 0,
		 "B: OPEN creating proceeds at once");
	dd_notified(a, &sid, d->fh, d->fh_len, "opened", 20000);
	CHECK_EQ(n4_close(&b->k, fh, fh_len, NULL, &osid), 0, "B: CLOSE");
	CHECK_EQ(n4_open(&b->k, d->path, "opened", true, N4_ACCESS_READ, 0, "o", NULL, &osid, fh, &fh_len), 0,
		 "B: OPEN of the existing file");
	CHECK(!dd_notified(a, &sid, d->fh, d->fh_len, "opened", 500) && a->nnot == 0, "A: nothing told (nothing added)");
	CHECK_EQ(n4_close(&b->k, fh, fh_len, NULL, &osid), 0, "B: CLOSE");
	CHECK_EQ(dd_link(&b->k, fh, fh_len, d, "linked"), 0, "B: LINK proceeds at once");
	dd_notified(a, &sid, d->fh, d->fh_len, "linked", 20000);
	CHECK_EQ(n4_test_stateid(&a->k, &sid), 0, "A: its delegation stands");
	/* An NFSv3 client's CREATE is told too. */
	if (CHECK(raw_connect(&v3, env.port) == 0, "connect (NFSv3)")) {
		CHECK_EQ(v3_name_op(&v3, 8, d, "v3told"), 0, "NFSv3 CREATE proceeds at once");
		dd_notified(a, &sid, d->fh, d->fh_len, "v3told", 20000);
		raw_close(&v3);
	}
	char *s1 = stats_now(), why[256] = "";

	CHECK(n4_stats_moved(s0, s1, "nfs4_delegations", "", "cb_notify_sent", 5, why, sizeof(why)),
	      "stats: 5 CB_NOTIFY sent (CREATE, its own, OPEN creating, LINK, NFSv3 CREATE), no recall (%s)", why);
	free(s0);
	free(s1);
	/* NOTIFY4_REMOVE_ENTRY (RFC 8881 §18.25.4, §20.4.3): every source's removal is told, not recalled. */
	CHECK_EQ(dd_remove(&b->k, d->fh, d->fh_len, "told"), 0, "B: REMOVE of a directory proceeds at once");
	dd_told(a, &sid, d, NT_REMOVE, "told", NULL, false, 20000);
	CHECK_EQ(dd_remove(&b->k, d->fh, d->fh_len, "linked"), 0, "B: REMOVE of a file proceeds at once");
	dd_told(a, &sid, d, NT_REMOVE, "linked", NULL, false, 20000);
	CHECK_EQ(dd_remove(&a->k, d->fh, d->fh_len, "mine"), 0, "A: its own REMOVE");
	dd_told(a, &sid, d, NT_REMOVE, "mine", NULL, false, 20000); /* §20.4.3: the holder's own too */
	if (CHECK(raw_connect(&v3, env.port) == 0, "connect (NFSv3)")) {
		CHECK_EQ(v3_name_op(&v3, 12, d, "v3told"), 0, "NFSv3 REMOVE proceeds at once");
		dd_told(a, &sid, d, NT_REMOVE, "v3told", NULL, false, 20000);
		CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "v3dir"), 0, "B: CREATE of a directory");
		dd_told(a, &sid, d, NT_ADD, "v3dir", NULL, false, 20000);
		CHECK_EQ(v3_name_op(&v3, 13, d, "v3dir"), 0, "NFSv3 RMDIR proceeds at once");
		dd_told(a, &sid, d, NT_REMOVE, "v3dir", NULL, false, 20000);
		raw_close(&v3);
	}
	CHECK(!dd_recalled(a, &sid, NULL, 0, 500), "A: no CB_RECALL");
	CHECK_EQ(n4_test_stateid(&a->k, &sid), 0, "A: its delegation stands");
	CHECK(deleg_num("cb_notify_sent") >= 11, "stats: CB_NOTIFY counted (%lld)", deleg_num("cb_notify_sent"));
	CHECK_EQ(nfs4_num("cb_notify_pending"), 0, "stats: none pending once answered");
	test_notify_rename(a, b, d, &sid, d2);
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_DELEGRETURN, &sid), 0, "A: DELEGRETURN");
}

/* A local process's changes of a delegated directory (inotify, after the fact) told as an NFS client's
 * would be, where the holder was granted the notification; its attributes (not granted) recall. */
static void test_local_notify(struct dd_client *a, const struct dd_dir *d, const struct dd_dir *out)
{
	char p1[PATH_MAX + 160], p2[PATH_MAX + 160];
	struct n4_sid sid;
	uint32_t notify = 0;

	hx_section("a local process's create, rename, unlink, mkdir, rmdir, move out: CB_NOTIFY (inotify)");
	sleep(2); /* past rnfsd's own window on the directory */
	if (!CHECK_EQ(dd_get_want(&a->k, d->fh, d->fh_len, 1u << 2 | 1u << 3 | 1u << 4, &sid, &notify), 0, "A: GDD4_OK") ||
	    !CHECK_EQ(notify, 1u << 2 | 1u << 3 | 1u << 4, "A: the entry notifications granted"))
		return;
	snprintf(p1, sizeof(p1), "%s/lnew", d->path);
	close(open(p1, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	dd_told(a, &sid, d, NT_ADD, "lnew", NULL, false, 20000);
	snprintf(p2, sizeof(p2), "%s/lren", d->path);
	CHECK_EQ(rename(p1, p2), 0, "local: rename within the directory");
	dd_told(a, &sid, d, NT_RENAME, "lnew", "lren", false, 20000); /* IN_MOVED_FROM + IN_MOVED_TO, one cookie */
	snprintf(p1, sizeof(p1), "%s/ldir", d->path);
	CHECK_EQ(mkdir(p1, 0755), 0, "local: mkdir");
	dd_told(a, &sid, d, NT_ADD, "ldir", NULL, false, 20000);
	CHECK_EQ(rmdir(p1), 0, "local: rmdir");
	dd_told(a, &sid, d, NT_REMOVE, "ldir", NULL, false, 20000);
	snprintf(p1, sizeof(p1), "%s/lout", out->path);
	CHECK_EQ(rename(p2, p1), 0, "local: rename out of the directory");
	dd_told(a, &sid, d, NT_REMOVE, "lren", NULL, false, 20000);
	CHECK_EQ(rename(p1, p2), 0, "local: rename back into the directory");
	dd_told(a, &sid, d, NT_ADD, "lren", NULL, false, 20000);
	CHECK_EQ(unlink(p2), 0, "local: unlink");
	dd_told(a, &sid, d, NT_REMOVE, "lren", NULL, false, 20000);
	CHECK(!dd_recalled(a, &sid, NULL, 0, 500), "A: no CB_RECALL");
	CHECK_EQ(n4_test_stateid(&a->k, &sid), 0, "A: its delegation stands");
	/* Not granted (the directory's attributes): recalled as before. */
	CHECK_EQ(chmod(d->path, 0755), 0, "local: chmod of the directory");
	dd_recall_return(a, d, &sid, "A (local chmod of the directory)");
	a->nnot = 0;
}

/* RFC 8881 §20.4.1, §10.9.1: NOTIFY4_CHANGE_DIR_ATTRS. A holder granted it is told the attributes it
 * asked (change, mode) when the directory's mode is set by another client, itself, an NFSv3 client or a
 * local process, instead of a recall, and after an entry added (with ADD_ENTRY); one without the bit is
 * recalled as before; asked with no attribute it can tell, the bit is not granted. */
static void test_notify_dir_attrs(struct dd_client *a, struct dd_client *b, const struct dd_dir *d)
{
	uint32_t attrs[2] = { DA_WORD0, DA_WORD1 }, fsid[2] = { 1u << 8, 0 }, notify = 0;
	struct n4_sid sid, sb;
	struct raw_conn v3;

	hx_section("NOTIFY4_CHANGE_DIR_ATTRS (RFC 8881 §20.4.1): a SETATTR of the directory told, not recalled");
	if (!CHECK_EQ(dd_get_attrs(&b->k, d->fh, d->fh_len, 1u << NT_DIR_ATTRS, fsid, &sb, &notify), 0,
		      "B: GDD4_OK asking CHANGE_DIR_ATTRS for fsid only") ||
	    !CHECK(notify == 0 && fsid[0] == 0 && fsid[1] == 0, "B: not granted (no attribute it can tell)") ||
	    !CHECK_EQ(dd_sid_op(&b->k, d->fh, d->fh_len, N4_DELEGRETURN, &sb), 0, "B: DELEGRETURN"))
		return;
	if (!CHECK_EQ(dd_get_attrs(&a->k, d->fh, d->fh_len, 1u << NT_DIR_ATTRS | 1u << NT_ADD, attrs, &sid, &notify),
		      0, "A: GDD4_OK asking CHANGE_DIR_ATTRS (change, mode) and ADD_ENTRY") ||
	    !CHECK_EQ(notify, 1u << NT_DIR_ATTRS | 1u << NT_ADD, "A: both granted") ||
	    !CHECK(attrs[0] == DA_WORD0 && attrs[1] == DA_WORD1, "A: gddr_dir_attributes change and mode"))
		return;
	char *s0 = stats_now();

	CHECK_EQ(dd_chmod(&b->k, d, 0750), 0, "B: SETATTR of the directory's mode proceeds at once");
	dd_told_attrs(a, &sid, d, 0750, "B's SETATTR");
	CHECK_EQ(dd_chmod(&a->k, d, 0755), 0, "A: its own SETATTR");
	dd_told_attrs(a, &sid, d, 0755, "A's own SETATTR"); /* §20.4.3: the holder is told of its own */
	if (CHECK(raw_connect(&v3, env.port) == 0, "connect (NFSv3)")) {
		CHECK_EQ(v3_chmod(&v3, d, 0711), 0, "NFSv3 SETATTR of the directory proceeds at once");
		dd_told_attrs(a, &sid, d, 0711, "NFSv3 SETATTR");
		raw_close(&v3);
	}
	/* An entry added changes the directory's attributes too (as knfsd): ADD_ENTRY, then CHANGE_DIR_ATTRS. */
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "dattr"), 0, "B: CREATE in the directory proceeds at once");
	dd_told(a, &sid, d, NT_ADD, "dattr", NULL, false, 20000);
	dd_told_attrs(a, &sid, d, 0711, "B's CREATE");
	CHECK(!dd_recalled(a, &sid, NULL, 0, 500), "A: no CB_RECALL");
	char *s1 = stats_now(), why[256] = "";

	CHECK(n4_stats_moved(s0, s1, "nfs4_delegations", "", "cb_notify_sent", 5, why, sizeof(why)),
	      "stats: 5 CB_NOTIFY sent, no recall (%s)", why);
	free(s0);
	free(s1);
	/* A holder without the bit (B: entries only) is recalled by a SETATTR, as before. */
	if (CHECK_EQ(dd_get_want(&b->k, d->fh, d->fh_len, 1u << NT_ADD, &sb, &notify), 0, "B: GDD4_OK (ADD_ENTRY)")) {
		CHECK_EQ(dd_chmod(&a->k, d, 0777), N4ERR_DELAY, "A: SETATTR waits for B's delegation");
		dd_recall_return(b, d, &sb, "B (A's SETATTR, no CHANGE_DIR_ATTRS)");
		CHECK_EQ(dd_chmod(&a->k, d, 0777), 0, "A: SETATTR proceeds after B's return");
		dd_told_attrs(a, &sid, d, 0777, "A's SETATTR after B's return");
	}
	CHECK_EQ(n4_test_stateid(&a->k, &sid), 0, "A: its delegation stands");

	/* A local process's chmod (inotify's IN_ATTRIB, after the fact): told too, the values read then. */
	char *s2 = stats_now();

	sleep(2); /* past rnfsd's own window on the directory */
	CHECK_EQ(chmod(d->path, 0705), 0, "local: chmod of the directory");
	dd_told_attrs(a, &sid, d, 0705, "local chmod");
	CHECK(!dd_recalled(a, &sid, NULL, 0, 500), "A: no CB_RECALL after the local chmod");
	dir_recalls_moved(s2, "local_open", 0, 0, "a local chmod told");
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_DELEGRETURN, &sid), 0, "A: DELEGRETURN");
	/* A local chmod and rmdir at once: the attributes may be gone when the event is seen: recalled. */
	struct dd_dir v;
	uint32_t va[2] = { DA_WORD0, DA_WORD1 };

	if (!dd_dir(&a->k, "vanish", &v) ||
	    !CHECK_EQ(dd_get_attrs(&a->k, v.fh, v.fh_len, 1u << NT_DIR_ATTRS, va, &sid, &notify), 0, "A: GDD4_OK on vanish"))
		return;
	sleep(2); /* past rnfsd's own window (its LOOKUP of vanish) */
	CHECK(chmod(v.path, 0700) == 0 && rmdir(v.path) == 0, "local: chmod and rmdir of vanish");
	CHECK(dd_recalled(a, &sid, v.fh, v.fh_len, 20000), "A: CB_RECALL of vanish's delegation");
	CHECK_EQ(dd_sid_op(&a->k, v.fh, v.fh_len, N4_DELEGRETURN, &sid), 0, "A: DELEGRETURN (the directory gone)");
	a->nnot = 0;
}

/* RFC 8881 §10.9.1: the server may recall rather than notify; the callback queue (8 a client) bounds
 * what waits for a holder that does not answer: past it, a recall. */
static void test_notify_bound(struct dd_client *a, struct dd_client *b, const struct dd_dir *d)
{
	struct n4_sid sid;
	uint32_t notify = 0;
	long long recalls0 = deleg_num("dir_recalls_notify_failed");
	unsigned made = 0;
	char name[32];
	int st = 0;

	hx_section("a holder not answering its CB_NOTIFYs: past its callback queue, recalled instead");
	if (!CHECK_EQ(dd_get_want(&a->k, d->fh, d->fh_len, 1u << 2 | 1u << 3, &sid, &notify), 0, "A: GDD4_OK") ||
	    !CHECK_EQ(notify, 1u << 2 | 1u << 3, "A: ADD_ENTRY and REMOVE_ENTRY granted"))
		return;
	for (unsigned i = 0; i < 40 && st == 0; i++) { /* A reads nothing meanwhile */
		snprintf(name, sizeof(name), "q%u", i);
		st = dd_mkdir(&b->k, d->fh, d->fh_len, name);
		made += st == 0;
	}
	CHECK_EQ(st, N4ERR_DELAY, "B: CREATE waits once A's notifications are past the bound (%u made at once)", made);
	CHECK(made >= 9 && made <= 12, "the bound: the callback queue of 8 and the call in flight (%u)", made);
	CHECK(deleg_num("dir_recalls_notify_failed") > recalls0, "stats: a notification recalled instead (notify_failed)");
	double end = now_s() + 20;
	bool recalled = false;

	while (!recalled && now_s() < end) { /* A answers what waits; B's retry hands the recall out again */
		while (dd_pump(a, now_s() + 0.3))
			;
		a->nnot = 0;
		(void)dd_mkdir(&b->k, d->fh, d->fh_len, "qlast");
		recalled = dd_recalled(a, &sid, d->fh, d->fh_len, 300);
	}
	CHECK(recalled, "A: CB_RECALL of its delegation");
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_DELEGRETURN, &sid), 0, "A: DELEGRETURN");
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "qlast2"), 0, "B: CREATE proceeds after the return");
	a->nnot = 0;
	CHECK_EQ(nfs4_num("cb_notify_pending"), 0, "stats: none pending");
	/* A CB_NOTIFY answered with an error: the holder may have missed the change: recalled. */
	if (!CHECK_EQ(dd_get_want(&a->k, d->fh, d->fh_len, 1u << 3, &sid, &notify), 0, "A: GDD4_OK (ADD_ENTRY)"))
		return;
	a->notify_status = 10006; /* NFS4ERR_SERVERFAULT */
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "qerr"), 0, "B: CREATE proceeds at once");
	CHECK(dd_recalled(a, &sid, d->fh, d->fh_len, 20000), "A: CB_NOTIFY answered SERVERFAULT, then CB_RECALL");
	a->notify_status = 0;
	a->nnot = 0;
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "qerr2"), N4ERR_DELAY, "B: the next CREATE waits for the return");
	CHECK_EQ(dd_sid_op(&a->k, d->fh, d->fh_len, N4_DELEGRETURN, &sid), 0, "A: DELEGRETURN");
	CHECK_EQ(dd_mkdir(&b->k, d->fh, d->fh_len, "qerr2"), 0, "B: CREATE proceeds after the return");
}

static void test_soak(void)
{
	static struct dd_client c[SOAK_CLIENTS];
	struct dd_dir dirs[4];
	unsigned ok = 0, bad = 0;
	long fds0, fds1, rss0, rss1;
	double t0;

	hx_section("soak: %u clients x %u grant/return cycles on 4 directories", SOAK_CLIENTS, SOAK_CYCLES);
	for (unsigned i = 0; i < SOAK_CLIENTS; i++) {
		char id[32];

		snprintf(id, sizeof(id), "dd-soak-%u", i);
		if (!CHECK(dd_start(&c[i], id), "client %s", id))
			return;
	}
	for (unsigned j = 0; j < 4; j++) {
		char name[16];

		snprintf(name, sizeof(name), "soak%u", j);
		if (!dd_dir(&c[0].k, name, &dirs[j]))
			return;
	}
	fds0 = n4_proc_fds(env.pid);
	rss0 = n4_proc_rss_kb(env.pid);
	t0 = now_s();
	for (unsigned n = 0; n < SOAK_CYCLES; n++)
		for (unsigned i = 0; i < SOAK_CLIENTS; i++) {
			const struct dd_dir *d = &dirs[(n + i) % 4];
			struct n4_sid sid;
			uint32_t notify;

			if (dd_get(&c[i].k, d->fh, d->fh_len, &sid, &notify) == 0 &&
			    dd_sid_op(&c[i].k, d->fh, d->fh_len, N4_DELEGRETURN, &sid) == 0)
				ok++;
			else
				bad++;
		}
	CHECK_EQ(bad, 0, "every cycle granted and returned (%u in %.1f s)", ok, now_s() - t0);
	CHECK_EQ(nfs4_num("dir_delegations"), 0, "stats: the table back to 0 directory delegations");
	CHECK_EQ(nfs4_num("delegations"), 0, "stats: and 0 delegations");
	fds1 = n4_proc_fds(env.pid);
	rss1 = n4_proc_rss_kb(env.pid);
	CHECK(fds1 == fds0, "descriptors back: %ld before, %ld after", fds0, fds1);
	/* plus what a sanitizer build keeps (ASan's quarantine, TSan's shadow and history) */
	CHECK(rss1 - rss0 < 2048 + n4_proc_quarantine_kb(env.pid), "RSS back: %ld KiB before, %ld KiB after", rss0,
	      rss1);
	for (unsigned i = 0; i < SOAK_CLIENTS; i++)
		dd_close(&c[i]);
}

/* ---- soak of the notifications (CB_NOTIFY): holders, changers, a slow, a mute and a dead client ---- */

#define NS_HOLDERS 8   /* holders of notifying delegations, half on each of two directories */
#define NS_SLOW 2      /* of them (one per directory): pause their callback reading now and then */
#define NS_CHANGERS 4  /* changing the entries: NFSv4 clients on dirs 0 and 1, NFSv3 on 1, a local thread on 3 */
#define NS_CHANGES 240 /* per changer: an entry created, renamed and removed (3 changes each); every 4th
			* with a SETATTR of the directory's mode */
#define NS_RETAKE 2    /* a holder returns its delegation after this many notifications and takes it again */
#define NT_ENTRIES (1u << NT_REMOVE | 1u << NT_ADD | 1u << NT_RENAME)
#define NS_CHMODS (NS_CHANGES / 4) /* per changer: SETATTRs of its directory's mode (CHANGE_DIR_ATTRS) */

/* A holder: its thread owns its connection (fore channel and callbacks). */
struct ns_holder {
	struct dd_client d; /* first: on_cb's cast */
	const struct dd_dir *dir;
	bool slow;
	atomic_bool stop;
	bool held;
	struct n4_sid sid;
	unsigned long taken_at; /* d.notes_seen at the grant */
	unsigned long grants, returns, unavail, errors;
	int last_error; /* the last unexpected status (GET_DIR_DELEGATION's, DELEGRETURN's) */
	unsigned long attr_notes; /* of d.notes_seen, NOTIFY4_CHANGE_DIR_ATTRS (of those kept: most) */
	pthread_t th;
};

/* The kept CB_NOTIFYs that are NOTIFY4_CHANGE_DIR_ATTRS, counted and dropped. */
static void ns_count_notes(struct ns_holder *h)
{
	for (unsigned i = 0; i < h->d.nnot; i++) {
		struct xd x;
		struct n4_sid sid;
		uint32_t l;

		xd_init(&x, h->d.note[i].args, h->d.note[i].args_len);
		n4_xd_sid(&x, &sid);
		(void)xd_opaque(&x, &l, 128);
		h->attr_notes += xd_u32(&x) == 1 && xd_u32(&x) == 1 && xd_u32(&x) == 1u << NT_DIR_ATTRS && !x.bad;
	}
	h->d.nnot = 0;
}

/* DELEGRETURN of h's delegation (revoked on a slow machine: FREE_STATEID). */
static void ns_return(struct ns_holder *h)
{
	int st = dd_sid_op(&h->d.k, h->dir->fh, h->dir->fh_len, N4_DELEGRETURN, &h->sid);

	if (st == N4ERR_DELEG_REVOKED)
		st = dd_sid_op(&h->d.k, h->dir->fh, h->dir->fh_len, N4_FREE_STATEID, &h->sid);
	h->errors += st != 0;
	h->last_error = st ? st : h->last_error;
	h->returns += st == 0;
	h->held = false;
}

static void *ns_holder_run(void *arg)
{
	struct ns_holder *h = arg;
	double renewed = now_s();
	unsigned turn = 0;
	uint32_t notify;

	while (!atomic_load(&h->stop)) {
		if (now_s() - renewed > 2) { /* a quiet directory: its lease kept, as a client's (RFC 8881 §8.3) */
			h->errors += n4_sequence(&h->d.k) != 0;
			renewed = now_s();
		}
		if (!h->held) {
			renewed = now_s();
			uint32_t attrs[2] = { DA_WORD0, DA_WORD1 };
			int st = dd_get_attrs(&h->d.k, h->dir->fh, h->dir->fh_len, NT_ENTRIES | 1u << NT_DIR_ATTRS, attrs,
					      &h->sid, &notify);

			h->held = st == 0;
			h->grants += st == 0;
			h->unavail += st == 1; /* GDD4_UNAVAIL: another holder's recall is out (contention) */
			h->errors += st != 0 && st != 1;
			h->last_error = st != 0 && st != 1 ? st : h->last_error;
			h->taken_at = h->d.notes_seen;
		}
		if (h->slow && ++turn % 40 == 0)
			usleep(300 * 1000); /* reads nothing: its callback queue fills, a notification becomes a recall */
		(void)dd_pump(&h->d, now_s() + 0.02);
		ns_count_notes(h); /* the notifications are answered (keep_cb) and counted, not kept */
		if (h->held && (dd_recalled(&h->d, &h->sid, NULL, 0, 0) || h->d.notes_seen - h->taken_at >= NS_RETAKE)) {
			ns_return(h);
			renewed = now_s();
		}
		h->d.nrec = 0;
	}
	if (h->held)
		ns_return(h);
	return NULL;
}

/* A changer: NS_CHANGES entries created, renamed and removed in its directory, by an NFSv4 client (d),
 * an NFSv3 one (v3) or the test's own thread (a local process, told after the fact through inotify). */
enum ns_by { NS_NFS4, NS_NFS3, NS_LOCAL };
struct ns_changer {
	struct dd_client d;
	struct raw_conn v3;
	enum ns_by by;
	const struct dd_dir *dir;
	unsigned index;
	unsigned long done, delays, errors;
	pthread_t th;
};

/* NFSv3 (CREATE of a file, RENAME, REMOVE, SETATTR of the mode): as ns_change, JUKEBOX as DELAY. */
static int ns_change_v3(struct ns_changer *c, unsigned kind, const char *a, const char *b, uint32_t mode)
{
	int st = kind == 0   ? v3_name_op(&c->v3, 8, c->dir, a)
		 : kind == 1 ? v3_rename(&c->v3, c->dir, a, c->dir, b)
		 : kind == 2 ? v3_name_op(&c->v3, 12, c->dir, b)
			     : v3_chmod(&c->v3, c->dir, mode);

	return st == NFS3ERR_JUKEBOX ? N4ERR_DELAY : st;
}

/* A local process's (open creating a file, rename, unlink, chmod of the directory): 0 or errno. */
static int ns_change_local(struct ns_changer *c, unsigned kind, const char *a, const char *b, uint32_t mode)
{
	char pa[PATH_MAX + 160], pb[PATH_MAX + 160];
	int fd;

	snprintf(pa, sizeof(pa), "%s/%s", c->dir->path, a);
	snprintf(pb, sizeof(pb), "%s/%s", c->dir->path, b);
	if (kind == 0 && (fd = open(pa, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644)) >= 0)
		close(fd);
	else if (kind == 0 || (kind == 1 ? rename(pa, pb) : kind == 2 ? unlink(pb) : chmod(c->dir->path, mode)) != 0)
		return errno;
	return 0;
}

/* Change kind (0 CREATE, 1 RENAME, 2 REMOVE) of entry i (3: SETATTR of the directory's mode), retried
 * while a recall is out (DELAY). */
static int ns_change(struct ns_changer *c, unsigned kind, unsigned i)
{
	const struct dd_dir *d = c->dir;
	double end = now_s() + 4 * LEASE;
	uint32_t mode = i % 8 ? 0777 : 0775;
	char a[32], b[32];
	int st;

	snprintf(a, sizeof(a), "c%u-n%u", c->index, i);
	snprintf(b, sizeof(b), "c%u-m%u", c->index, i);
	for (;;) {
		if (c->by == NS_LOCAL) { /* paced as the clients' are (a burst would find few holders) */
			usleep(5 * 1000);
			return ns_change_local(c, kind, a, b, mode);
		}
		st = c->by == NS_NFS3 ? ns_change_v3(c, kind, a, b, mode)
		     : kind == 0      ? dd_mkdir(&c->d.k, d->fh, d->fh_len, a)
		     : kind == 1      ? dd_rename2(&c->d.k, d, a, d, b)
		     : kind == 2      ? dd_remove(&c->d.k, d->fh, d->fh_len, b)
				      : dd_chmod(&c->d.k, d, mode);
		if (st != N4ERR_DELAY || now_s() > end)
			return st;
		c->delays++;
		usleep(10 * 1000);
	}
}

static void *ns_changer_run(void *arg)
{
	struct ns_changer *c = arg;

	for (unsigned i = 0; i < NS_CHANGES; i++)
		for (unsigned kind = 0; kind < (i % 4 ? 3u : 4u); kind++) {
			int st = ns_change(c, kind, i);

			c->done += st == 0;
			c->errors += st != 0;
		}
	return NULL;
}

/* The stats' "nfs4_bounds" number key (-1: none). */
static long long bounds_num(const char *key)
{
	char *doc = n4_stats_json(stats_path);
	long long v = doc ? n4_stats_num(doc, "nfs4_bounds", key) : -1;

	free(doc);
	return v;
}

/* A holder of a notifying delegation of dir that then reads nothing (mute: its CB_NOTIFY times out) or
 * is gone (dead: its connection closed, no DESTROY); both go by lease expiry. dir gets 12 entries. */
static void ns_lost_holders(struct dd_client *mute, struct dd_client *dead, struct n4_client *k, const struct dd_dir *dir)
{
	struct n4_sid sid;
	uint32_t notify;
	unsigned made = 0;
	char name[32];

	if (!CHECK(dd_start(mute, "dd-ns-mute") && dd_start(dead, "dd-ns-dead"), "the mute and the dead client") ||
	    !CHECK_EQ(dd_get_want(&mute->k, dir->fh, dir->fh_len, NT_ENTRIES, &sid, &notify), 0, "mute: GDD4_OK") ||
	    !CHECK_EQ(dd_get_want(&dead->k, dir->fh, dir->fh_len, NT_ENTRIES, &sid, &notify), 0, "dead: GDD4_OK"))
		return;
	n4_client_close(&dead->k);
	for (unsigned i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "lost%u", i);
		made += dd_mkdir(k, dir->fh, dir->fh_len, name) == 0;
	}
	/* the first proceeds (told after the change); the dead holder's CB_NOTIFY has no path: recalled */
	CHECK(made >= 1 && made < 12, "the mute and the dead holder: %u CREATE(s) at once, then DELAY (recalled)", made);
}

/* Every state of the soak's clients gone: the gauges back where they were (or below: an earlier case's
 * client may expire meanwhile), within deadline seconds. */
static bool ns_drained(long long clients0, long long paths0, double deadline)
{
	while (now_s() < deadline) {
		if (nfs4_num("clients") <= clients0 && nfs4_num("delegations") == 0 && nfs4_num("dir_delegations") == 0 &&
		    nfs4_num("cb_notify_pending") == 0 && bounds_num("callback_paths") <= paths0)
			return true;
		usleep(250 * 1000);
	}
	return false;
}

static void ns_start(struct ns_holder *h, struct ns_changer *c, const struct dd_dir *dirs, bool *ok)
{
	char id[32];

	for (unsigned i = 0; i < NS_HOLDERS && *ok; i++) {
		snprintf(id, sizeof(id), "dd-ns-h%u", i);
		h[i].dir = &dirs[i % 3 == 2 ? 3 : i % 3]; /* dirs 0, 1 and 3 (2: the lost holders') */
		h[i].slow = i < NS_SLOW;
		*ok = CHECK(dd_start(&h[i].d, id), "holder %s", id);
	}
	for (unsigned i = 0; i < NS_CHANGERS && *ok; i++) {
		static const enum ns_by by[NS_CHANGERS] = { NS_NFS4, NS_NFS4, NS_NFS3, NS_LOCAL };
		static const unsigned dir[NS_CHANGERS] = { 0, 1, 1, 3 };

		snprintf(id, sizeof(id), "dd-ns-c%u", i);
		c[i].by = by[i];
		c[i].dir = &dirs[dir[i]];
		c[i].index = i;
		if (by[i] == NS_NFS4)
			*ok = CHECK(dd_start(&c[i].d, id), "changer %s", id);
		else if (by[i] == NS_NFS3)
			*ok = CHECK(raw_connect(&c[i].v3, env.port) == 0, "changer %s (NFSv3)", id);
	}
}

/* The soak's sums (the holders', the changers') checked. */
static void ns_totals(const struct ns_holder *h, const struct ns_changer *c, double secs)
{
	unsigned long notes = 0, grants = 0, returns = 0, recalls = 0, unavail = 0, herr = 0, done = 0, cerr = 0;
	unsigned long delays = 0, attr_notes = 0, local_notes = 0;

	for (unsigned i = 0; i < NS_HOLDERS; i++) {
		notes += h[i].d.notes_seen;
		grants += h[i].grants;
		returns += h[i].returns;
		recalls += h[i].d.recalls_seen; /* most arrive after the holder returned on its own */
		attr_notes += h[i].attr_notes;
		local_notes += i % 3 == 2 ? h[i].d.notes_seen : 0; /* dir 3's holders (ns_start) */
		unavail += h[i].unavail;
		herr += h[i].errors;
		if (h[i].errors)
			hx_note("holder %u: %lu unexpected answers, the last %d", i, h[i].errors, h[i].last_error);
	}
	for (unsigned i = 0; i < NS_CHANGERS; i++) {
		done += c[i].done;
		cerr += c[i].errors;
		delays += c[i].delays;
	}
	hx_note("notify soak: %.1f s, %lu changes (%lu DELAY), %lu CB_NOTIFY answered, %lu grants, %lu returns, "
		"%lu CB_RECALL, %lu GDD4_UNAVAIL", secs, done, delays, notes, grants, returns, recalls, unavail);
	CHECK_EQ(cerr, 0, "every change made (%lu of %u)", done, NS_CHANGERS * (NS_CHANGES * 3 + NS_CHMODS));
	CHECK_EQ(herr, 0, "every GET_DIR_DELEGATION and DELEGRETURN answered as expected");
	CHECK(notes >= 2000, "thousands of CB_NOTIFY answered (%lu)", notes);
	CHECK(attr_notes >= 50, "of them, NOTIFY4_CHANGE_DIR_ATTRS (%lu)", attr_notes);
	CHECK(local_notes >= 50, "of them, of a local process's changes (inotify: %lu)", local_notes);
	CHECK(grants >= 1000 && grants == returns, "thousands of grant/return cycles (%lu granted, %lu returned)",
	      grants, returns);
}

/* The soak's holders and changers go: half the holders DESTROY_CLIENTID while holding one. */
static void ns_close_all(struct ns_holder *h, struct ns_changer *c)
{
	for (unsigned i = 0; i < NS_HOLDERS; i++) {
		if (i % 2 && dd_get_want(&h[i].d.k, h[i].dir->fh, h[i].dir->fh_len, NT_ENTRIES, &h[i].sid,
					 &(uint32_t){ 0 }) != 0)
			CHECK(false, "holder %u: GDD4_OK before it goes", i); /* DESTROY_CLIENTID purges it */
		dd_close(&h[i].d);
	}
	for (unsigned i = 0; i < NS_CHANGERS; i++)
		if (c[i].by == NS_NFS4)
			dd_close(&c[i].d);
		else if (c[i].by == NS_NFS3)
			raw_close(&c[i].v3);
}

/*
 * The CB_NOTIFY path soaked: NS_HOLDERS clients hold notifying delegations (entries and the directory's
 * change and mode) of three directories (each taken again after NS_RETAKE notifications, or after its
 * recall; its lease renewed while quiet), two of them slow readers whose full callback queues turn
 * notifications into recalls (RFC 8881 §10.9.1); NS_CHANGERS others (NFSv4 clients, an NFSv3 one, a
 * local thread: ns_start) create, rename and remove entries and set the directory's mode meanwhile
 * (retrying DELAY); a fourth directory's holders read nothing (the CB_NOTIFY times out) or are gone
 * (the connection closed). Then every client goes (half
 * the holders DESTROY_CLIENTID still holding, the mute and dead ones by lease expiry): the clients,
 * delegations, directory delegations, pending notifications and callback paths back where they were,
 * the daemon's descriptors too, its RSS within 2 MiB.
 */
static void test_notify_soak(void)
{
	static struct ns_holder h[NS_HOLDERS];
	static struct ns_changer c[NS_CHANGERS];
	static struct dd_client mute, dead, warm;
	struct dd_dir dirs[4];
	struct n4_sid sid;
	bool ok = CHECK(dd_start(&warm, "dd-ns-warm"), "the warm-up client");
	double t0;

	hx_section("notification soak: %u holders (%u slow), %u changers (NFSv4, NFSv3, local) x %u entries, a mute "
		   "and a dead holder",
		   NS_HOLDERS, NS_SLOW, NS_CHANGERS, NS_CHANGES);
	for (unsigned j = 0; j < 4 && ok; j++) {
		char name[16];

		snprintf(name, sizeof(name), "nsoak%u", j);
		ok = dd_dir(&warm.k, name, &dirs[j]);
	}
	/* warm-up: a grant makes the directory watch's inotify descriptor (kept while the daemon runs) */
	if (!ok || !dd_hold(&warm, &dirs[0], &sid, "warm-up") ||
	    !CHECK_EQ(dd_sid_op(&warm.k, dirs[0].fh, dirs[0].fh_len, N4_DELEGRETURN, &sid), 0, "warm-up: DELEGRETURN"))
		return;
	dd_close(&warm);
	usleep(200 * 1000);
	long long clients0 = nfs4_num("clients"), paths0 = bounds_num("callback_paths");
	long long nf0 = deleg_num("dir_recalls_notify_failed");
	long fds0 = n4_proc_fds(env.pid), rss0 = n4_proc_rss_kb(env.pid);

	ns_start(h, c, dirs, &ok);
	if (!ok)
		return;
	ns_lost_holders(&mute, &dead, &c[0].d.k, &dirs[2]); /* before the first changer's thread runs */
	t0 = now_s();
	double lost_at = t0;

	bool run_h[NS_HOLDERS], run_c[NS_CHANGERS];

	for (unsigned i = 0; i < NS_HOLDERS; i++)
		run_h[i] = CHECK_EQ(pthread_create(&h[i].th, NULL, ns_holder_run, &h[i]), 0, "holder thread %u", i);
	for (unsigned i = 0; i < NS_CHANGERS; i++)
		run_c[i] = CHECK_EQ(pthread_create(&c[i].th, NULL, ns_changer_run, &c[i]), 0, "changer thread %u", i);
	for (unsigned i = 0; i < NS_CHANGERS; i++)
		if (run_c[i])
			pthread_join(c[i].th, NULL);
	for (unsigned i = 0; i < NS_HOLDERS; i++) {
		atomic_store(&h[i].stop, true);
		if (run_h[i])
			pthread_join(h[i].th, NULL);
	}
	ns_totals(h, c, now_s() - t0);
	CHECK(deleg_num("dir_recalls_notify_failed") > nf0, "full callback queues became recalls (%lld)",
	      deleg_num("dir_recalls_notify_failed") - nf0);
	ns_close_all(h, c);
	while (now_s() < lost_at + 6) /* the mute holder's CB_NOTIFY timed out (5 s) before it goes */
		usleep(100 * 1000);
	n4_client_close(&mute.k);
	CHECK(ns_drained(clients0, paths0, lost_at + 4 * LEASE),
	      "clients, delegations, pending CB_NOTIFYs, callback paths back (%lld clients of %lld, %lld delegations, "
	      "%lld pending, %lld paths of %lld; %.1f s)",
	      nfs4_num("clients"), clients0, nfs4_num("delegations"), nfs4_num("cb_notify_pending"),
	      bounds_num("callback_paths"), paths0, now_s() - t0);
	long fds1 = n4_proc_fds(env.pid), rss1 = n4_proc_rss_kb(env.pid);

	for (int i = 0; i < 20 && fds1 != fds0; i++) { /* the last connections' close seen */
		usleep(100 * 1000);
		fds1 = n4_proc_fds(env.pid);
	}
	CHECK(fds1 == fds0, "descriptors back: %ld before, %ld after", fds0, fds1);
	CHECK(rss1 - rss0 < 2048 + n4_proc_quarantine_kb(env.pid), "RSS back: %ld KiB before, %ld KiB after", rss0,
	      rss1);
}

/* Restart with directory-delegations = no (no grace: no client recorded after the soak's DESTROY_CLIENTIDs). */
static void test_off(void)
{
	struct dd_client a;
	struct dd_dir d;
	struct n4_sid sid;
	uint32_t notify;

	hx_section("directory-delegations = no: GDD4_UNAVAIL");
	hx_daemon_stop(&env);
	if (!CHECK_EQ(hx_conf_swap(&env, "directory-delegations = yes", "directory-delegations = no "), 0,
		      "config names directory-delegations = yes") ||
	    !CHECK_EQ(hx_daemon_start(&env), 0, "restarted"))
		return;
	if (!CHECK(dd_start(&a, "dd-off"), "client") || !dd_dir(&a.k, "offdir", &d))
		return;
	CHECK_EQ(dd_get(&a.k, d.fh, d.fh_len, &sid, &notify), 1, "GDD4_UNAVAIL");
	dd_close(&a);
}

int main(int argc, char **argv)
{
	static char extra[700];
	struct dd_client a, b;
	struct dd_dir d1, d2, d3;
	FILE *f;

	hx_begin("nfs4_dirdeleg", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(stats_path, sizeof(stats_path), "%s/stats.sock", env.dir);
	snprintf(extra, sizeof(extra), "stats-socket = %s\n", stats_path);
	env.rnfsd_extra = extra;
	if (hx_write_config(&env) != 0)
		return hx_end();
	f = fopen(env.conf_path, "a");
	if (!CHECK(f != NULL, "config"))
		return hx_end();
	fprintf(f, "[nfsv4]\nenable = yes\ndelegations = yes\ndirectory-delegations = yes\nlease-time = %d\n", LEASE);
	fclose(f);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (getenv("DD_ONLY_DIR_ATTRS") && CHECK(dd_start(&a, "dd-a") && dd_start(&b, "dd-b"), "clients") &&
	    dd_dir(&a.k, "d3", &d3)) { /* a shortcut while working on it */
		test_notify_dir_attrs(&a, &b, &d3);
		hx_daemon_stop(&env);
		hx_env_release(&env);
		return hx_end();
	}
	if (getenv("DD_ONLY_NOTIFY_SOAK")) { /* a shortcut while working on it: that soak alone */
		test_notify_soak();
		hx_daemon_stop(&env);
		hx_env_release(&env);
		return hx_end();
	}
	if (CHECK(dd_start(&a, "dd-a"), "client A") && CHECK(dd_start(&b, "dd-b"), "client B") &&
	    dd_dir(&a.k, "d1", &d1) && dd_dir(&a.k, "d2", &d2) && dd_dir(&a.k, "d3", &d3)) {
		test_grant(&a, &d1);
		test_other_client(&a, &b, &d1);
		test_own_change(&a, &b, &d1);
		test_nfs3(&a, &d1);
		test_local(&a, &d2);
		test_revoke(&a, &b, &d3);
		test_rename_victim(&a, &b, &d1, &d2);
		test_v40(&d1);
		test_notify(&a, &b, &d1, &d2);
		test_notify_bound(&a, &b, &d3);
		test_notify_dir_attrs(&a, &b, &d3);
		test_local_notify(&a, &d2, &d3);
		dd_close(&a);
		dd_close(&b);
	}
	test_soak();
	test_notify_soak();
	test_off();
	hx_daemon_stop(&env);
	hx_env_release(&env);
	return hx_end();
}
