/*
 * test_export_live.c - rnfsctl export list / add / remove change the served
 * exports at run time (issue 27), through the control socket:
 *  - list shows the path, id, fs and each client with its options (table
 *    and --json);
 *  - add of an unexported directory: it can be mounted and written at once,
 *    and is listed; add of a second client to it keeps the first;
 *  - remove PATH CLIENT drops that client only; remove PATH drops the
 *    export: MNT refused, the handles clients hold are STALE, nothing is
 *    created through them; the other export and the connection are untouched;
 *    an NLM lock and an NFSv4.1 open + lock held on files of it are given
 *    back (a local process's F_OFD_GETLK no longer meets them; the NFSv4
 *    handle is STALE), while the same on the other export stay and its
 *    open stateid still reads;
 *  - bad requests (unexported path, unknown option, a fsid= that contradicts
 *    the export) exit 1 with the daemon's reason and change nothing;
 *  - rnfsctl client list shows the NFSv4.1 client (address, 4.1+, tcp, its
 *    2 opens and 2 locks) and the NLM host with its 2 locked files;
 *  - rnfsctl client revoke CLIENTID ends a 4.1 client's record (its lock
 *    released, SEQUENCE BADSESSION), and a 4.0 client's, whose READ with its
 *    open stateid is then ADMIN_REVOKED (RFC 7530 §13.1.5.1), and a 4.0
 *    client's delegation stateid too (READ, DELEGRETURN); client revoke
 *    HOST an NLM host's locks; an unknown name exits 1;
 *  - NFS4ERR_ADMIN_REVOKED (RFC 8881 §15.1.5.1, §18.46.3): after the
 *    remove, the NFSv4.1 client's SEQUENCE carries
 *    SEQ4_STATUS_ADMIN_STATE_REVOKED, TEST_STATEID reports its exportB open
 *    and lock stateids ADMIN_REVOKED (the other export's stays valid);
 *    FREE_STATEID of both answers OK and clears the flag, and they are then
 *    unknown (BAD_STATEID);
 *  - delegations ([nfsv4] delegations = yes) revoked by the remove or by
 *    unlock --export answer ADMIN_REVOKED (TEST_STATEID; READ and
 *    DELEGRETURN while the export is served) and raise
 *    SEQ4_STATUS_ADMIN_STATE_REVOKED, not RECALLABLE_STATE_REVOKED (RFC 8881
 *    §15.1.5.1, §18.46.3); FREE_STATEID frees them; the other export's stays;
 *  - rnfsctl unlock --export PATH releases the NLM and NFSv4 locks held on
 *    the first export (a local process no longer meets them) and it stays
 *    served; a 4.1 client's READ with its released open stateid there is
 *    ADMIN_REVOKED (not BAD_STATEID); unlock of an unexported path exits 1;
 *  - removal under load (issue 27 part 2's VM scenario, on the host): an
 *    NFSv3 client streams 128 KiB FILE_SYNC WRITEs and READs to exportD
 *    from a thread, holds an NLM lock there, and an NFSv4.1 client has a
 *    file open and locked, when exportD is removed: the stream ends on STALE
 *    (not a dropped call), every READ returned the last acknowledged WRITE
 *    and the file on disk holds exactly what was acknowledged (nothing torn
 *    or unacknowledged); then the handle is STALE, both locks are released,
 *    client list shows the NFSv4.1 client with 0 opens and 0 locks and the
 *    NLM host with none, and the daemon has no more descriptors open than
 *    before the stream;
 *  - a SIGHUP re-reads the file: runtime changes are dropped;
 *  - --save: add writes a line into the exports file, comments and the
 *    other lines untouched, and the export survives a SIGHUP; remove --save
 *    gives back the file byte for byte; a remove --save of an export the file
 *    does not have is refused and changes nothing at run time either.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"
#include "tests/integration/nfs4raw.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;
static char out[16384];

/* rnfsctl ARGS as root; its exit status (output in out). */
#define CTL(...) hx_rnfsctl(&env, -1, out, sizeof(out), (const char *const[]){__VA_ARGS__, NULL})

static int mnt(const char *path, struct hx_fh *fh)
{
	struct rpc_context *m = hx_rpc_connect(&env, MOUNT_PROGRAM, MOUNT_V3, -1, -1);
	int st = m ? hx_mnt(m, path, fh) : -1;

	hx_rpc_close(m);
	return st;
}

static void list_checks(const char *b_path)
{
	int rc;

	hx_section("export list");
	rc = CTL("export", "list");
	CHECK(rc == 0, "export list exits 0 (rc %d): %s", rc, out);
	CHECK(strstr(out, env.export_dir) && strstr(out, "127.0.0.1(rw,no_root_squash,insecure"),
	      "the export and its client with options are listed");
	CHECK(!strstr(out, b_path), "exportB is not listed yet");
	rc = CTL("--json", "export", "list");
	CHECK(rc == 0 && strstr(out, "\"exports\"") && strstr(out, "\"clients\"") && strstr(out, "\"id\""),
	      "--json gives exports with id and clients (rc %d)", rc);
}

#define NLM_PROG 100021u
#define NLM_LOCK 2u

/* A non-blocking exclusive NLM4 LOCK of [0, 100) on the file of handle fh: its nlm4_stats, or -1. */
static int nlm_lock(struct hx_fh *fh, int32_t svid)
{
	struct raw_conn c;
	int st;

	if (raw_connect(&c, env.port) != 0)
		return -1;
	st = raw_nlm4_lock(&c, 77, 2, (const uint8_t *)fh->data, fh->len, "live-test", svid, 0, 100);
	raw_close(&c);
	return st;
}

/* An NFSv4 open of dir/name with a write lock on [0, 100), by client k. */
struct v4_held {
	struct n4_sid open, lock;
	uint8_t fh[128];
	uint32_t fh_len;
};

static bool v4_hold(struct n4_client *k, const char *dir, const char *name, struct v4_held *h)
{
	return n4_open(k, dir, name, true, N4_ACCESS_BOTH, 0, name, NULL, &h->open, h->fh, &h->fh_len) == 0 &&
	       n4_lock_new(k, h->fh, h->fh_len, N4_WRITE_LT, 0, 100, &h->open, NULL, name, &h->lock) == 0;
}

/* After exportB's removal, k (4.1) held ha on the first export and hb on exportB: RFC 8881
 * §18.46.3 ADMIN_STATE_REVOKED until it frees hb's stateids, which TEST_STATEID reports revoked. */
static void admin_revoked_checks(struct n4_client *k, const struct v4_held *ha, const struct v4_held *hb)
{
	CHECK_EQ(n4_sequence(k), 0, "SEQUENCE");
	CHECK(k->seq_flags & N4_SEQ4_STATUS_ADMIN_STATE_REVOKED, "sr_status_flags has ADMIN_STATE_REVOKED (%#x)",
	      k->seq_flags);
	CHECK_EQ(n4_test_stateid(k, &hb->open), N4ERR_ADMIN_REVOKED, "TEST_STATEID: exportB's open stateid revoked");
	CHECK_EQ(n4_test_stateid(k, &hb->lock), N4ERR_ADMIN_REVOKED, "and its lock stateid");
	CHECK_EQ(n4_test_stateid(k, &ha->open), 0, "the other export's open stateid is valid");
	CHECK_EQ(n4_free_stateid(k, &hb->lock), 0, "FREE_STATEID of the revoked lock stateid");
	CHECK(k->seq_flags & N4_SEQ4_STATUS_ADMIN_STATE_REVOKED, "the flag stays while one is left");
	CHECK_EQ(n4_free_stateid(k, &hb->open), 0, "FREE_STATEID of the revoked open stateid");
	CHECK_EQ(n4_sequence(k), 0, "SEQUENCE");
	CHECK(!(k->seq_flags & N4_SEQ4_STATUS_ADMIN_STATE_REVOKED), "the flag is gone (%#x)", k->seq_flags);
	CHECK_EQ(n4_test_stateid(k, &hb->open), N4ERR_BAD_STATEID, "a freed revoked stateid is unknown");
}

/* A read delegation of dir/name (made) for k, a client with a back channel. */
struct v4_deleg {
	struct n4_openres res;
	uint8_t fh[128];
	uint32_t fh_len;
};

static bool v4_deleg(struct n4_client *k, const char *dir, const char *name, struct v4_deleg *d)
{
	return n4_open_deleg(k, dir, name, true, N4_ACCESS_READ, name, &d->res, d->fh, &d->fh_len) == 0 &&
	       d->res.deleg == 1;
}

/* DELEGRETURN of sid with the current filehandle fh: its status. */
static int delegreturn(struct n4_client *k, const uint8_t *fh, uint32_t fh_len, const struct n4_sid *sid)
{
	struct raw_reply r;
	struct xb a;
	int st;

	n4_begin_fh(k, &a, 2, fh, fh_len);
	xb_u32(&a, N4_DELEGRETURN);
	n4_xb_sid(&a, sid);
	st = n4_call(k, &a, &r);
	raw_reply_free(&r);
	return st;
}

/* A delegation an administrator revoked (RFC 8881 §15.1.5.1, §18.46.3): SEQUENCE says
 * ADMIN_STATE_REVOKED, not RECALLABLE_STATE_REVOKED (that is for unanswered recalls);
 * TEST_STATEID says ADMIN_REVOKED; with the export still served (unlock), READ and DELEGRETURN
 * with it too; FREE_STATEID of it and of its open stateid clears the flag. */
static void deleg_revoked_checks(struct n4_client *k, const struct v4_deleg *d, bool served)
{
	CHECK_EQ(n4_sequence(k), 0, "delegation holder: SEQUENCE");
	CHECK(k->seq_flags & N4_SEQ4_STATUS_ADMIN_STATE_REVOKED, "its sr_status_flags has ADMIN_STATE_REVOKED (%#x)",
	      k->seq_flags);
	CHECK(!(k->seq_flags & N4_SEQ4_STATUS_RECALLABLE_STATE_REVOKED), "and not RECALLABLE_STATE_REVOKED");
	CHECK_EQ(n4_test_stateid(k, &d->res.dsid), N4ERR_ADMIN_REVOKED, "TEST_STATEID: the delegation ADMIN_REVOKED");
	if (served) {
		CHECK_EQ(n4_read(k, d->fh, d->fh_len, &d->res.dsid, 0, 10, NULL, NULL), N4ERR_ADMIN_REVOKED,
			 "READ with the delegation stateid: ADMIN_REVOKED");
		CHECK_EQ(delegreturn(k, d->fh, d->fh_len, &d->res.dsid), N4ERR_ADMIN_REVOKED,
			 "DELEGRETURN of it: ADMIN_REVOKED");
	}
	CHECK_EQ(n4_free_stateid(k, &d->res.dsid), 0, "FREE_STATEID of the revoked delegation");
	CHECK_EQ(n4_test_stateid(k, &d->res.dsid), N4ERR_BAD_STATEID, "then it is unknown");
	CHECK_EQ(n4_free_stateid(k, &d->res.sid), 0, "FREE_STATEID of its revoked open stateid");
	CHECK_EQ(n4_sequence(k), 0, "SEQUENCE");
	CHECK(!(k->seq_flags & (N4_SEQ4_STATUS_ADMIN_STATE_REVOKED | N4_SEQ4_STATUS_RECALLABLE_STATE_REVOKED)),
	      "no revocation flag left (%#x)", k->seq_flags);
}

/* rnfsctl client revoke of a 4.0 client: its open stateid answers ADMIN_REVOKED (RFC 7530 §13.1.5.1). */
static void revoke_v40_check(void)
{
	struct n4_client k;
	struct n4_sid sid;
	uint8_t fh[128];
	uint32_t fh_len = 0, seq = 0;
	char cid[24];
	int st;

	if (!CHECK(n4_start(&k, env.port, 0, "live-v40") == 0, "an NFSv4.0 client"))
		return;
	CHECK_EQ(n4_open(&k, env.export_dir, "rev40", true, N4_ACCESS_BOTH, 0, "rev40", &seq, &sid, fh, &fh_len), 0,
		 "it opens rev40");
	snprintf(cid, sizeof(cid), "%#llx", (unsigned long long)k.cid);
	CHECK(CTL("client", "revoke", cid) == 0, "client revoke %s: %s", cid, out);
	st = n4_read(&k, fh, fh_len, &sid, 0, 10, NULL, NULL);
	CHECK_EQ(st, N4ERR_ADMIN_REVOKED, "its READ with the open stateid: ADMIN_REVOKED");
	n4_client_close(&k);
}

/* A 4.0 client whose callback address (a loopback listener) answers the server's CB_NULL, holding
 * a read delegation, is revoked: its delegation stateid then answers ADMIN_REVOKED in READ and
 * DELEGRETURN (RFC 7530 §13.1.5.1), as its open stateids do, not BAD_STATEID. */
static void revoke_v40_deleg_check(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct raw_conn cb = { .fd = -1 };
	struct n4_client k;
	struct v4_deleg d = { 0 };
	char cid[24], name[16];
	uint8_t *msg = NULL;
	size_t len = 0;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	if (!CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 4) == 0 &&
			   getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0 && n4_connect(&k, env.port, 0) == 0,
		   "a 4.0 client with a callback listener"))
		return;
	snprintf(k.cb_addr, sizeof(k.cb_addr), "127.0.0.1.%u.%u", ntohs(sa.sin_port) >> 8, ntohs(sa.sin_port) & 255);
	CHECK_EQ(n4_setup(&k, "live-v40-deleg"), 0, "SETCLIENTID + CONFIRM");
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	if (CHECK(poll(&p, 1, 5000) == 1 && (cb.fd = accept(lfd, NULL, NULL)) >= 0 &&
			  raw_recv_record(&cb, &msg, &len, 5000) == RAW_RECV_OK,
		  "the server's CB_NULL arrives"))
		n4_cb_reply_ok(&cb, msg, len);
	free(msg);
	for (int i = 0; i < 30 && d.res.deleg != 1; i++) { /* until the callback path is up */
		snprintf(name, sizeof(name), "d40-%d", i);
		usleep(100000);
		CHECK_EQ(n4_open_deleg(&k, env.export_dir, name, true, N4_ACCESS_READ, name, &d.res, d.fh, &d.fh_len), 0,
			 "OPEN %s", name);
	}
	CHECK_EQ(d.res.deleg, 1, "a read delegation granted to the 4.0 client");
	snprintf(cid, sizeof(cid), "%#llx", (unsigned long long)k.cid);
	CHECK(CTL("client", "revoke", cid) == 0, "client revoke %s: %s", cid, out);
	CHECK_EQ(n4_read(&k, d.fh, d.fh_len, &d.res.dsid, 0, 10, NULL, NULL), N4ERR_ADMIN_REVOKED,
		 "READ with its delegation stateid: ADMIN_REVOKED");
	CHECK_EQ(delegreturn(&k, d.fh, d.fh_len, &d.res.dsid), N4ERR_ADMIN_REVOKED, "DELEGRETURN: ADMIN_REVOKED");
	if (cb.fd >= 0)
		raw_close(&cb);
	close(lfd);
	n4_client_close(&k);
}

/* The lock type a local process meets at [0, 100) of path (F_OFD_GETLK), or -1. */
static short local_getlk(const char *path)
{
	int fd = open(path, O_RDWR);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100 };

	if (fd < 0 || fcntl(fd, F_OFD_GETLK, &fl) != 0)
		fl.l_type = -1;
	if (fd >= 0)
		close(fd);
	return fl.l_type;
}

/* ---- removal under load: an NFSv3 WRITE/READ stream in flight ---- */

#define STREAM_CHUNK (128u << 10)
#define STREAM_SLOTS 16u
#define STREAM_MAX 400u /* iterations at most (each READ's reply is kept by the harness until the end) */

/* The stream's thread writes slot i % STREAM_SLOTS with byte pattern(i), FILE_SYNC, and reads back
 * the slot written before it, until a call fails. */
struct stream {
	struct rpc_context *rpc; /* its own NFSv3 connection (libnfs contexts are not shared) */
	struct hx_fh fh;
	_Atomic unsigned iters;  /* iterations done */
	uint8_t acked[STREAM_SLOTS]; /* the pattern of the last acknowledged WRITE of each slot (0: none) */
	unsigned bad_reads;      /* READs whose data was not the last acknowledged WRITE's */
	int stop_status;         /* the nfsstat3 (or -1) that ended it, 0 if STREAM_MAX ended it */
	bool stop_in_write;
};

static uint8_t stream_pattern(unsigned i)
{
	return (uint8_t)(i % 251u + 1u);
}

static bool stream_read_ok(struct stream *s, unsigned slot, int *st)
{
	READ3res rr;
	const uint8_t *d;

	*st = hx3_read(s->rpc, &s->fh, (uint64_t)slot * STREAM_CHUNK, STREAM_CHUNK, &rr);
	if (*st != NFS3_OK)
		return false;
	d = (const uint8_t *)rr.READ3res_u.resok.data.data_val;
	if (rr.READ3res_u.resok.data.data_len != STREAM_CHUNK)
		s->bad_reads++;
	for (uint32_t k = 0; k < rr.READ3res_u.resok.data.data_len; k++)
		if (d[k] != s->acked[slot]) {
			s->bad_reads++;
			break;
		}
	return true;
}

static void *stream_main(void *arg)
{
	static uint8_t buf[STREAM_CHUNK];
	struct stream *s = arg;
	int st = 0;

	for (unsigned i = 0; i < STREAM_MAX; i++) {
		unsigned slot = i % STREAM_SLOTS;

		memset(buf, stream_pattern(i), sizeof(buf));
		st = hx3_write(s->rpc, &s->fh, (uint64_t)slot * STREAM_CHUNK, buf, STREAM_CHUNK, 2 /* FILE_SYNC */,
			       NULL);
		if (st != NFS3_OK) {
			s->stop_in_write = true;
			break;
		}
		s->acked[slot] = stream_pattern(i);
		if (i && !stream_read_ok(s, (i - 1) % STREAM_SLOTS, &st))
			break;
		st = 0;
		atomic_store(&s->iters, i + 1);
	}
	s->stop_status = st;
	return NULL;
}

/* The file on disk holds, per slot, the last acknowledged WRITE's pattern: none torn, none lost. */
static unsigned stream_disk_mismatches(const struct stream *s, const char *path)
{
	static uint8_t buf[STREAM_CHUNK];
	unsigned bad = 0;
	int fd = open(path, O_RDONLY);

	for (unsigned slot = 0; fd >= 0 && slot < STREAM_SLOTS; slot++) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)slot * STREAM_CHUNK);

		if (!s->acked[slot])
			continue;
		if (n != (ssize_t)sizeof(buf)) {
			bad++;
			continue;
		}
		for (size_t k = 0; k < sizeof(buf); k++)
			if (buf[k] != s->acked[slot]) {
				bad++;
				break;
			}
	}
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? bad : STREAM_SLOTS;
}

/* rnfsctl client list's row starting with key (nfs4 CLIENTID or nlm HOST), or NULL. */
static const char *client_line(const char *key)
{
	const char *l = out;

	if (CTL("client", "list") != 0)
		return NULL;
	for (; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, strlen(key)))
			return l;
	return NULL;
}

/* That row's open and lock counts (NLM: opens -1). false when there is no such row. */
static bool client_row(const char *key, long *opens, long *locks)
{
	const char *l = client_line(key);

	*opens = *locks = -1;
	if (!l)
		return false;
	return !strncmp(l, "nlm", 3) ? sscanf(l, "%*s %*s %*s %*s %*s %*s %ld", locks) == 1
				     : sscanf(l, "%*s %*s %*s %*s %*s %ld %ld", opens, locks) == 2;
}

/* rnfsctl client list of k: its delegations and layouts, and bytes its address's connections moved. */
static void client_list_deleg_check(const struct n4_client *k)
{
	char key[64];
	long opens = -1, locks = -1, delegs = -1, layouts = -1;
	double rx = -1, tx = -1;
	const char *l;

	snprintf(key, sizeof(key), "nfs4  %#018llx", (unsigned long long)k->cid);
	l = client_line(key);
	CHECK(l && sscanf(l, "%*s %*s %*s %*s %*s %ld %ld %*s %ld %ld %lf %lf", &opens, &locks, &delegs, &layouts, &rx,
			  &tx) == 6,
	      "client list has the delegation holder's row");
	CHECK(opens == 2 && locks == 0 && delegs == 2 && layouts == 0,
	      "with 2 opens, 0 locks, 2 delegations, 0 layouts (%ld %ld %ld %ld)", opens, locks, delegs, layouts);
	CHECK(rx > 0 && tx > 0, "and the bytes of its address's connections (%.0f received, %.0f sent)", rx, tx);
	CHECK(CTL("--json", "client", "list") == 0 && strstr(out, "\"delegations\": 2") && strstr(out, "\"layouts\": 0"),
	      "--json has delegations and layouts");
}

static char *read_exports(void)
{
	static char buf[8192];
	FILE *f = fopen(env.exports_path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* After exportD's removal: the handles STALE, the NLM and NFSv4 locks released, the clients'
 * state gone in rnfsctl client list, and no descriptor left open. */
static void removal_after(struct stream *s, struct n4_client *k, const char *nlm_key, long fds0)
{
	char key[64];
	long opens, locks, fds1 = -1;

	CHECK_NFS(hx3_getattr(s->rpc, &s->fh, NULL), NFS3ERR_STALE, "the NFSv3 handle is STALE afterwards");
	CHECK_EQ(n4_getattr_root(k), 0, "the NFSv4.1 client's session still works");
	for (double end = hx_now() + 5; hx_now() < end && (local_getlk(hx_path(&env, "exportD/lk3")) != F_UNLCK ||
							    local_getlk(hx_path(&env, "exportD/v4d")) != F_UNLCK);)
		usleep(50000);
	CHECK(local_getlk(hx_path(&env, "exportD/lk3")) == F_UNLCK, "the NLM lock is released");
	CHECK(local_getlk(hx_path(&env, "exportD/v4d")) == F_UNLCK, "the NFSv4 lock is released");
	snprintf(key, sizeof(key), "nfs4  %#018llx", (unsigned long long)k->cid);
	CHECK(client_row(key, &opens, &locks) && opens == 0 && locks == 0,
	      "client list: the NFSv4.1 client holds 0 opens, 0 locks (%ld, %ld)", opens, locks);
	CHECK(!client_row(nlm_key, &opens, &locks) || locks == 0, "client list: the NLM host holds no lock (%ld)",
	      locks);
	for (double end = hx_now() + 5; hx_now() < end && (fds1 = n4_proc_fds(env.pid)) > fds0;)
		usleep(50000);
	CHECK(fds0 > 0 && fds1 <= fds0, "no descriptor left open by the daemon (%ld before, %ld after)", fds0, fds1);
}

/* exportD removed while an NFSv3 client streams WRITEs and READs to it, holds an NLM lock, and an
 * NFSv4.1 client has a file open and locked there: calls in flight finish (what was acknowledged is
 * on disk, whole), the stream then gets STALE, and the state goes. */
static void removal_under_load(void)
{
	char d_path[PATH_MAX], key[64];
	struct rpc_context *nfs;
	struct hx_fh root, lk;
	struct stream s = { 0 };
	struct n4_client k;
	struct v4_held h;
	pthread_t th;
	long fds0, opens, locks;

	hx_section("export remove under load (NFSv3 stream in flight, NLM and NFSv4.1 state held)");
	snprintf(d_path, sizeof(d_path), "%s", hx_path(&env, "exportD"));
	mkdir(d_path, 0755);
	if (!CHECK(CTL("export", "add", d_path, "127.0.0.1(rw,no_root_squash,insecure)") == 0, "exportD added") ||
	    hx_open_export(&env, d_path, 0, 0, &nfs, &root) != 0 || hx_open_export(&env, d_path, 0, 0, &s.rpc, &root) != 0)
		return;
	CHECK(n4_start(&k, env.port, 1, "live-load") == 0 && v4_hold(&k, d_path, "v4d", &h),
	      "an NFSv4.1 client opens and locks exportD/v4d");
	CHECK_NFS(hx3_create(nfs, &root, "lk3", 0644, &lk), NFS3_OK, "NFSv3 CREATE lk3");
	CHECK_NFS(hx3_create(nfs, &root, "big", 0644, &s.fh), NFS3_OK, "NFSv3 CREATE big");
	{
		struct raw_conn c;

		CHECK(raw_connect(&c, env.port) == 0 &&
			      raw_nlm4_lock(&c, 78, 2, (const uint8_t *)lk.data, lk.len, "live-v3", 3, 0, 100) == 0,
		      "an NLM lock on lk3 by host live-v3");
		raw_close(&c);
	}
	CHECK(local_getlk(hx_path(&env, "exportD/lk3")) == F_WRLCK, "a local process meets it");
	snprintf(key, sizeof(key), "nfs4  %#018llx", (unsigned long long)k.cid);
	CHECK(client_row(key, &opens, &locks) && opens == 1 && locks == 1,
	      "client list: the NFSv4.1 client holds 1 open, 1 lock (%ld, %ld)", opens, locks);
	CHECK(client_row("nlm   live-v3", &opens, &locks) && locks == 1, "and the NLM host 1 locked file (%ld)", locks);
	fds0 = n4_proc_fds(env.pid);
	if (!CHECK(pthread_create(&th, NULL, stream_main, &s) == 0, "the stream starts"))
		return;
	for (double end = hx_now() + 10; hx_now() < end && atomic_load(&s.iters) < 8;)
		usleep(1000);
	CHECK(atomic_load(&s.iters) >= 8, "8 WRITE+READ rounds of 128 KiB before the removal");
	CHECK(CTL("export", "remove", d_path) == 0, "export remove exportD while the stream runs: %s", out);
	pthread_join(th, NULL);
	CHECK_EQ(s.stop_status, NFS3ERR_STALE, "the stream ended on STALE (%s, after %u rounds), not a dropped call",
		 s.stop_in_write ? "WRITE" : "READ", atomic_load(&s.iters));
	CHECK_EQ(s.bad_reads, 0, "every READ returned the last acknowledged WRITE, whole");
	CHECK_EQ(stream_disk_mismatches(&s, hx_path(&env, "exportD/big")), 0,
		 "on disk each slot is the last acknowledged WRITE: nothing torn, nothing unacknowledged");
	removal_after(&s, &k, "nlm   live-v3", fds0);
	n4_client_close(&k);
	hx_rpc_close(s.rpc);
	hx_rpc_close(nfs);
}

static void save_checks(const char *b_path, const char *original)
{
	char c_path[PATH_MAX], *text;
	int rc, st;

	hx_section("--save");
	snprintf(c_path, sizeof(c_path), "%s", hx_path(&env, "exportC"));
	mkdir(c_path, 0755);
	rc = CTL("export", "add", "--save", b_path, "127.0.0.1(rw,insecure)");
	CHECK(rc == 0 && strstr(out, "saved to"), "export add --save exits 0: %s", out);
	text = read_exports();
	CHECK(!strncmp(text, original, strlen(original)), "the file's comments and lines are kept");
	CHECK(strstr(text + strlen(original), b_path) && strstr(text, "127.0.0.1(rw,insecure)\n"),
	      "the export is a new last line:\n%s", text);
	CHECK(hx_daemon_signal(&env, SIGHUP) == 0, "SIGHUP sent");
	usleep(300000);
	st = mnt(b_path, NULL);
	CHECK(st == MNT3_OK, "the saved export survives the reload (%s)", hx_mntstat_name(st));
	rc = CTL("export", "remove", "--save", b_path);
	CHECK(rc == 0, "export remove --save exits 0 (rc %d)", rc);
	CHECK(!strcmp(read_exports(), original), "the file is back byte for byte");
	CHECK(CTL("export", "add", c_path, "127.0.0.1(ro,insecure)") == 0, "exportC added, not saved");
	rc = CTL("export", "remove", "--save", c_path);
	CHECK(rc == 1 && strstr(out, "no line"), "remove --save of an export not in the file is refused: %s", out);
	st = mnt(c_path, NULL);
	CHECK(st == MNT3_OK, "and exportC is still served (%s)", hx_mntstat_name(st));
	CHECK(!strcmp(read_exports(), original), "the file is unchanged");
}

static void bad_requests(const char *b_path)
{
	int rc;

	hx_section("bad requests change nothing");
	rc = CTL("export", "remove", "/no/such/export");
	CHECK(rc == 1 && strstr(out, "not exported"), "remove of an unexported path: exit 1, says why: %s", out);
	rc = CTL("export", "add", b_path, "127.0.0.1(rw,no_such_option)");
	CHECK(rc == 1 && strstr(out, "no_such_option"), "add with an unknown option: exit 1, says why: %s", out);
	rc = CTL("export", "add", env.export_dir, "10.0.0.1(rw,fsid=12345)");
	CHECK(rc == 1 && strstr(out, "fsid"), "add with a contradicting fsid=: exit 1: %s", out);
	rc = CTL("export", "remove", env.export_dir, "10.9.9.9");
	CHECK(rc == 1, "remove of a client the export does not have: exit 1: %s", out);
	rc = CTL("export", "add");
	CHECK(rc == 2, "add without arguments: usage, exit 2 (rc %d)", rc);
	rc = CTL("export", "add", b_path, "-rw");
	CHECK(rc == 1 && strstr(out, "client"), "add of options without a client: exit 1: %s", out);
	rc = CTL("export", "add", hx_path(&env, "no-such-dir"), "127.0.0.1(rw)");
	CHECK(rc == 1 && strstr(out, "cannot be served"), "add of a missing directory: exit 1: %s", out);
	CTL("export", "list");
	CHECK(!strstr(out, b_path) && !strstr(out, "10.0.0.1"), "the table is as it was");
}

/* "export add": exportB added and served at once (its root into *b_root, in-b into *b_file), a second
 * client for it. */
static void section_add(struct rpc_context *nfs, struct hx_fh *root, const char *b_path, struct hx_fh *b_root,
			struct hx_fh *b_file)
{
	int rc, st;

	hx_section("export add");
	st = mnt(b_path, NULL);
	CHECK(st != MNT3_OK && st != -1, "exportB not mountable before (%s)", hx_mntstat_name(st));
	rc = CTL("export", "add", b_path, "127.0.0.1(rw,no_root_squash,insecure)");
	CHECK(rc == 0 && strstr(out, "exported"), "export add exits 0: %s", out);
	st = mnt(b_path, b_root);
	CHECK(st == MNT3_OK, "MNT exportB at once (%s)", hx_mntstat_name(st));
	CHECK_NFS(hx3_create(nfs, b_root, "in-b", 0644, b_file), NFS3_OK, "CREATE in exportB");
	CHECK_NFS(hx3_getattr(nfs, root, NULL), NFS3_OK, "the first export still works, same connection");
	rc = CTL("export", "add", b_path, "192.0.2.0/24(ro)");
	CHECK(rc == 0, "a second client for exportB (rc %d)", rc);
	CTL("export", "list");
	CHECK(strstr(out, b_path) && strstr(out, "192.0.2.0/24(ro,") && strstr(out, "127.0.0.1(rw,"),
	      "exportB listed with both clients:\n%s", out);
}

static void section_remove_client(struct rpc_context *nfs, const char *b_path, struct hx_fh *b_file)
{
	int rc;

	hx_section("export remove PATH CLIENT");
	rc = CTL("export", "remove", b_path, "192.0.2.0/24");
	CHECK(rc == 0, "remove one client (rc %d): %s", rc, out);
	CTL("export", "list");
	CHECK(strstr(out, b_path) && !strstr(out, "192.0.2.0/24"), "exportB stays with its other client");
	CHECK_NFS(hx3_getattr(nfs, b_file, NULL), NFS3_OK, "its handles still work for 127.0.0.1");
}

/* What "export remove PATH" must release or keep: NLM locks, NFSv4 opens, locks and delegations in
 * both exports. */
struct live_holds {
	struct hx_fh a_file;
	struct n4_client k, kd;
	struct v4_held ha, hb;
	struct v4_deleg da, db;
};

static void remove_path_hold(struct rpc_context *nfs, struct hx_fh *root, struct hx_fh *b_file, const char *b_path,
			     struct live_holds *l)
{
	int rc, st;

	hx_section("export remove PATH");
	CHECK_NFS(hx3_create(nfs, root, "in-a", 0644, &l->a_file), NFS3_OK, "CREATE in the first export");
	st = nlm_lock(b_file, 1);
	CHECK(st == 0, "NLM LOCK on exportB's file granted (%d)", st);
	st = nlm_lock(&l->a_file, 2);
	CHECK(st == 0, "NLM LOCK on the first export's file granted (%d)", st);
	CHECK(local_getlk(hx_path(&env, "exportB/in-b")) == F_WRLCK, "a local process meets the NLM lock");
	CHECK(n4_start(&l->k, env.port, 1, "live-v41") == 0, "an NFSv4.1 client");
	CHECK(v4_hold(&l->k, b_path, "v4b", &l->hb), "it opens and locks exportB/v4b");
	CHECK(v4_hold(&l->k, env.export_dir, "v4a", &l->ha), "and the first export's v4a");
	CHECK(local_getlk(hx_path(&env, "exportB/v4b")) == F_WRLCK, "a local process meets the NFSv4 lock");
	CHECK(n4_start_cb(&l->kd, env.port, "live-deleg") == 0, "an NFSv4.1 client with a back channel");
	CHECK(v4_deleg(&l->kd, b_path, "dlb", &l->db), "it holds a read delegation of exportB/dlb");
	CHECK(v4_deleg(&l->kd, env.export_dir, "dla", &l->da), "and of the first export's dla");
	rc = CTL("client", "list");
	CHECK(rc == 0, "client list exits 0 (rc %d)", rc);
	CHECK(strstr(out, "127.0.0.1                    4.1+    tcp            2      2") != NULL,
	      "the NFSv4.1 client with its address, transport, 2 opens and 2 locks:\n%s", out);
	CHECK(strstr(out, "nlm   live-test") && strstr(out, "nlm4    -              -      2"),
	      "the NLM host with 2 locked files");
	rc = CTL("--json", "client", "list");
	CHECK(rc == 0 && strstr(out, "\"nfs4_clients\"") && strstr(out, "\"nlm_hosts\""), "--json too");
	client_list_deleg_check(&l->kd);
}

static void section_remove_path(struct rpc_context *nfs, struct hx_fh *root, const char *b_path,
				struct hx_fh *b_root, struct hx_fh *b_file)
{
	static struct live_holds hold;
	struct live_holds *l = &hold;
	int rc, st;

	remove_path_hold(nfs, root, b_file, b_path, l);
	rc = CTL("export", "remove", b_path);
	CHECK(rc == 0 && strstr(out, "unexported"), "export remove exits 0: %s", out);
	st = mnt(b_path, NULL);
	CHECK(st != MNT3_OK && st != -1, "exportB no longer mountable (%s)", hx_mntstat_name(st));
	CHECK_NFS(hx3_getattr(nfs, b_file, NULL), NFS3ERR_STALE, "a file handle of exportB is STALE");
	CHECK_NFS(hx3_create(nfs, b_root, "after-remove", 0644, NULL), NFS3ERR_STALE,
		  "CREATE through its root handle is STALE");
	CHECK(access(hx_path(&env, "exportB/after-remove"), F_OK) != 0, "nothing created in exportB");
	CHECK_NFS(hx3_getattr(nfs, root, NULL), NFS3_OK, "the other export is untouched, same connection");
	CHECK(hx_log_count(&env, "control socket: unexported") >= 1, "the change is logged");
	for (double end = hx_now() + 5; hx_now() < end && local_getlk(hx_path(&env, "exportB/in-b")) != F_UNLCK;)
		usleep(50000);
	CHECK(local_getlk(hx_path(&env, "exportB/in-b")) == F_UNLCK, "the NLM lock on exportB's file is given back");
	/* logged just after the release (nlm_export_gone, nfs4 likewise): a slow build sees the lock go first */
	for (double end = hx_now() + 5; hx_now() < end && hx_log_count(&env, "nlm: export") == 0;)
		usleep(50000);
	CHECK(hx_log_count(&env, "nlm: export") >= 1, "the release is logged");
	CHECK(local_getlk(hx_xpath(&env, "in-a")) == F_WRLCK, "the NLM lock on the other export stays");
	for (double end = hx_now() + 5; hx_now() < end && local_getlk(hx_path(&env, "exportB/v4b")) != F_UNLCK;)
		usleep(50000);
	CHECK(local_getlk(hx_path(&env, "exportB/v4b")) == F_UNLCK, "the NFSv4 lock on exportB's file is given back");
	for (double end = hx_now() + 5; hx_now() < end && hx_log_count(&env, "nfs4: export") == 0;)
		usleep(50000);
	CHECK(hx_log_count(&env, "nfs4: export") >= 1, "the NFSv4 release is logged");
	CHECK(local_getlk(hx_xpath(&env, "v4a")) == F_WRLCK, "the NFSv4 lock on the other export stays");
	CHECK_EQ(n4_read(&l->k, l->ha.fh, l->ha.fh_len, &l->ha.open, 0, 10, NULL, NULL), 0, "its open stateid still reads");
	st = n4_read(&l->k, l->hb.fh, l->hb.fh_len, &l->hb.open, 0, 10, NULL, NULL);
	CHECK_EQ(st, 70 /* NFS4ERR_STALE */, "exportB's NFSv4 handle is STALE");
	admin_revoked_checks(&l->k, &l->ha, &l->hb);
	n4_client_close(&l->k);
	CHECK_EQ(n4_test_stateid(&l->kd, &l->da.res.dsid), 0, "the other export's delegation stays");
	deleg_revoked_checks(&l->kd, &l->db, false);
	CHECK_EQ(delegreturn(&l->kd, l->da.fh, l->da.fh_len, &l->da.res.dsid), 0, "DELEGRETURN of the other one");
	n4_client_close(&l->kd);
}

static void section_unlock(struct rpc_context *nfs, struct hx_fh *root, const char *b_path)
{
	int rc, st;

	hx_section("unlock --export");
	struct n4_client k3, kd;
	struct v4_deleg da;
	struct v4_held hu;
	CHECK(n4_start(&k3, env.port, 1, "live-unlock") == 0 && v4_hold(&k3, env.export_dir, "v4u", &hu),
	      "a third NFSv4.1 client opens and locks v4u");
	CHECK(n4_start_cb(&kd, env.port, "live-deleg-u") == 0 && v4_deleg(&kd, env.export_dir, "dlu", &da),
	      "a client with a back channel holds a read delegation of dlu");
	rc = CTL("unlock", "--export", b_path);
	CHECK(rc == 1 && strstr(out, "not exported"), "unlock of an unexported path: exit 1: %s", out);
	rc = CTL("unlock", "--export", env.export_dir);
	CHECK(rc == 0, "unlock --export of the first export exits 0: %s", out);
	for (double end = hx_now() + 5; hx_now() < end && (local_getlk(hx_xpath(&env, "in-a")) != F_UNLCK ||
							    local_getlk(hx_xpath(&env, "v4a")) != F_UNLCK);)
		usleep(50000);
	CHECK(local_getlk(hx_xpath(&env, "in-a")) == F_UNLCK, "its NLM lock is released");
	CHECK(local_getlk(hx_xpath(&env, "v4a")) == F_UNLCK, "its NFSv4 lock is released");
	CHECK_NFS(hx3_getattr(nfs, root, NULL), NFS3_OK, "the export is still served");
	for (double end = hx_now() + 5; hx_now() < end && local_getlk(hx_xpath(&env, "v4u")) != F_UNLCK;)
		usleep(50000);
	st = n4_read(&k3, hu.fh, hu.fh_len, &hu.open, 0, 10, NULL, NULL);
	CHECK_EQ(st, N4ERR_ADMIN_REVOKED, "READ with the released open stateid: ADMIN_REVOKED (RFC 8881 §15.1.5.1)");
	CHECK(k3.seq_flags & N4_SEQ4_STATUS_ADMIN_STATE_REVOKED, "its SEQUENCE says ADMIN_STATE_REVOKED (%#x)",
	      k3.seq_flags);
	n4_client_close(&k3);
	deleg_revoked_checks(&kd, &da, true);
	n4_client_close(&kd);
}

static void section_revoke(struct rpc_context *nfs, struct hx_fh *root)
{
	int rc, st;

	hx_section("client revoke");
	{
		struct hx_fh a_file;
		struct n4_client k2;
		struct v4_held hr;
		char cid[24];

		CHECK(n4_start(&k2, env.port, 1, "live-revoked") == 0, "another NFSv4.1 client");
		CHECK(v4_hold(&k2, env.export_dir, "rev4", &hr), "it opens and locks rev4");
		CHECK_NFS(hx3_create(nfs, root, "revn", 0644, &a_file), NFS3_OK, "CREATE revn");
		CHECK_EQ(nlm_lock(&a_file, 9), 0, "an NLM lock on revn by host live-test");
		snprintf(cid, sizeof(cid), "%#llx", (unsigned long long)k2.cid);
		rc = CTL("client", "revoke", cid);
		CHECK(rc == 0 && strstr(out, "1 NFSv4 client records revoked"), "client revoke %s: %s", cid, out);
		CHECK(local_getlk(hx_xpath(&env, "rev4")) == F_UNLCK, "its lock is released");
		st = n4_sequence(&k2);
		CHECK_EQ(st, 10052 /* NFS4ERR_BADSESSION */, "its session is gone");
		n4_client_close(&k2);
		revoke_v40_check();
		revoke_v40_deleg_check();
		rc = CTL("client", "revoke", "live-test");
		CHECK(rc == 0 && strstr(out, "NLM locks on 1 files"), "client revoke live-test (NLM): %s", out);
		CHECK(local_getlk(hx_xpath(&env, "revn")) == F_UNLCK, "the NLM lock is released");
		rc = CTL("client", "revoke", "10.9.9.9");
		CHECK(rc == 1, "client revoke of nobody: exit 1: %s", out);
	}
}

static void section_sighup(const char *b_path, const char *original)
{
	int st = MNT3_OK;

	hx_section("SIGHUP re-reads the file");
	CHECK(CTL("export", "add", b_path, "127.0.0.1(rw,insecure)") == 0, "exportB added again");
	CHECK(hx_daemon_signal(&env, SIGHUP) == 0, "SIGHUP sent");
	for (double end = hx_now() + 5; hx_now() < end && (st = mnt(b_path, NULL)) == MNT3_OK;)
		usleep(100000);
	CHECK(st != MNT3_OK, "the runtime export is gone after the reload (%s)", hx_mntstat_name(st));
	CHECK(hx_daemon_alive(&env), "daemon running");
	save_checks(b_path, original);
}

int main(int argc, char **argv)
{
	struct rpc_context *nfs;
	struct hx_fh root, b_root, b_file;
	char b_path[PATH_MAX], original[PATH_MAX + 200];

	hx_begin("export_live", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	if (!getenv("RNFSCTL"))
		hx_skip("RNFSCTL not set (meson sets it)");
	snprintf(b_path, sizeof(b_path), "%s", hx_path(&env, "exportB"));
	mkdir(b_path, 0755);
	snprintf(original, sizeof(original), "# exports of the live test\n\n%s 127.0.0.1(rw,no_root_squash,insecure)"
		 "   # the first\n# the end\n", env.export_dir);
	hx_write_exports(&env, "%s", original);
	hx_append_config(&env, "[nfsv4]\ndelegations = yes\n");
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (hx_open_export(&env, env.export_dir, 0, 0, &nfs, &root) != 0)
		return hx_end();
	list_checks(b_path);
	bad_requests(b_path);

	section_add(nfs, &root, b_path, &b_root, &b_file);
	section_remove_client(nfs, b_path, &b_file);
	section_remove_path(nfs, &root, b_path, &b_root, &b_file);
	section_unlock(nfs, &root, b_path);
	section_revoke(nfs, &root);
	removal_under_load();
	section_sighup(b_path, original);

	hx_rpc_close(nfs);
	hx_daemon_stop(&env);
	return hx_end();
}
