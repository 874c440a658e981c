/*
 * test_nfs4_deleg.c - the delegation state machine (nfs/v4/state/nfs4_deleg.c), pure:
 *  - the grant decision (RFC 8881 §10.4, §18.16.3): read for a reader with
 *    no other writer, write for a writer alone, none with the 4.1 wants
 *    NO_DELEG / CANCEL (and their why), none without a callback path, in
 *    grace, when disabled, when another client writes or holds a write
 *    delegation, none twice for one client (NOT_SUPP_UPGRADE), shared read
 *    delegations; with [nfsv4] delegations = read none for an open for
 *    writing (WND4_WRITE_DELEG_NOT_SUPP_FTYPE), reads as before;
 *  - conflicts: a reader is in a write delegation's way only, a writer or
 *    a namespace operation in any; the holder itself never; HELD ->
 *    RECALLED with one CB_RECALL handed out (again only after
 *    recall_unsent), DELAY until it is returned or a lease passes;
 *  - locks: none granted while the file has byte-range locks (CONTENTION);
 *    a lock by another party (NFSv4 LOCK/LOCKT, NLM, ACC_LOCK) recalls a
 *    read delegation as well as a write one, the holder's own never;
 *  - revocation after a lease: REVOKED (DELEG_REVOKED for TEST_STATEID,
 *    DELEGRETURN, I/O), the client's revoked flag, FREE_STATEID frees it;
 *  - DELEGRETURN of unknown, another client's, another file's, old-seqid
 *    stateids; I/O checks (OPENMODE for WRITE on a read delegation);
 *    CLAIM_DELEGATE_CUR's check; purge; bounds (per client, in total);
 *  - RFC 9754 §5: delegated timestamps: the vetting of the holder's times,
 *    SETATTR of them only by an *_ATTRS_DELEG holder, CB_GETATTR's times;
 *  - RFC 8881 §10.9, §18.39: directory delegations: granted to 4.1 clients
 *    only with the switch, a callback path and no grace, shared by
 *    clients, one per client; a change of the directory by one holder
 *    recalls the others' only (§10.9.1), by no client (NFSv3, a local
 *    process) every holder's, a read (READDIR) none; none granted while
 *    one is being recalled; returned, revoked after a lease and freed as
 *    file ones; the NFS4_DELEG_DIR_MAX bound leaves file delegations room;
 *    NOTIFY4_ADD_ENTRY granted alone, an added entry recalling only the
 *    holders without it, those with it listed to be told, at most
 *    NFS4_DL_NOTIFY_MAX of them, recalled when they cannot be told;
 *  - the stats' counts (issue 26 item 7): delegations by kind, disjoint
 *    (read, write, attribute: RFC 9754 §5's *_ATTRS_DELEG, directory),
 *    summing to the table's count through grants, returns, revocations
 *    and frees; a recall counted once, under the cause of the access that
 *    made it (not again for later conflicts while it is out), directory
 *    ones under dir_recalls_by too; CB_NOTIFY's failure as notify_failed;
 *    revocations split into unanswered recalls and an administrator's;
 *    the causes' and kinds' names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/state/nfs4_deleg.h"

#define A 0x100000001ull
#define B 0x100000002ull
#define LEASE 10u

static struct nfs4_dtab *t;
static const uint8_t fa[] = "file-a", fb[] = "file-b";

static int setup(void **state)
{
	(void)state;
	t = malloc(sizeof(*t));
	nfs4_dtab_init(t, 7);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(t);
	return 0;
}

static struct nfs4_dl_ask ask(uint64_t cl, uint32_t access)
{
	return (struct nfs4_dl_ask){ .clientid = cl, .minor = 1, .access = access, .enabled = true, .cb_up = true,
				     .claim_ok = true };
}

static enum nfs4_dl_grant decide(const uint8_t *f, struct nfs4_dl_ask a, uint32_t *why)
{
	return nfs4_dtab_decide(t, f, sizeof(fa), &a, why);
}

static void grant(uint64_t cl, const uint8_t *f, bool write, struct nfs4_stateid *sid)
{
	assert_true(nfs4_dtab_grant(t, cl, f, sizeof(fa), write, sid));
	assert_true(nfs4_dtab_is_deleg(sid));
}

static bool conflict(uint64_t cl, enum nfs4_dl_access acc, uint64_t now, unsigned *n, struct nfs4_dl_recall *r)
{
	return nfs4_dtab_conflict(t, fa, sizeof(fa), cl, acc, NFS4_DL_BY_NFS4, now, LEASE, r, 4, n);
}

static void test_decide(void **state)
{
	struct nfs4_dl_ask a = ask(A, NFS4_SHARE_ACCESS_READ);
	struct nfs4_stateid sid;
	uint32_t why;

	(void)state;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_READ);
	a.access = NFS4_SHARE_ACCESS_BOTH;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_WRITE);
	/* 4.1 wants (RFC 8881 §18.16.3). */
	a.want = NFS4_DL_WANT_NONE;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_NOT_WANTED);
	a.want = NFS4_DL_WANT_CANCEL;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_CANCELLED);
	a.want = NFS4_DL_WANT_READ; /* opened for writing, wants only a read one */
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	a.minor = 0; /* 4.0 has no wants */
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_WRITE);
	/* No callback path, grace, disabled, a claim that gets none. */
	a = ask(A, NFS4_SHARE_ACCESS_READ);
	a.cb_up = false;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_RESOURCE);
	a = ask(A, NFS4_SHARE_ACCESS_READ);
	a.grace = true;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	a = ask(A, NFS4_SHARE_ACCESS_READ);
	a.enabled = false;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	a = ask(A, NFS4_SHARE_ACCESS_READ);
	a.claim_ok = false;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	/* [nfsv4] delegations = read: reads as before, no write one (why: not supported). */
	a = ask(A, NFS4_SHARE_ACCESS_READ);
	a.read_only = true;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_READ);
	a.access = NFS4_SHARE_ACCESS_BOTH;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_WRITE_NOT_SUPP);
	a.access = NFS4_SHARE_ACCESS_WRITE, a.want = NFS4_DL_WANT_WRITE;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_WRITE_NOT_SUPP);
	/* Other clients' opens. */
	a = ask(A, NFS4_SHARE_ACCESS_READ);
	a.others_open = true;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_READ);
	a.others_write = true;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	a = ask(A, NFS4_SHARE_ACCESS_WRITE);
	a.others_open = true;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	/* Held delegations: shared reads, nothing beside a write one, one per client. */
	grant(A, fa, false, &sid);
	assert_int_equal(decide(fa, ask(B, NFS4_SHARE_ACCESS_READ), &why), NFS4_DL_GRANT_READ);
	assert_int_equal(decide(fa, ask(B, NFS4_SHARE_ACCESS_WRITE), &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(decide(fa, ask(A, NFS4_SHARE_ACCESS_READ), &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_CONTENTION);
	assert_int_equal(decide(fa, ask(A, NFS4_SHARE_ACCESS_WRITE), &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_NOT_SUPP_UPGRADE);
	assert_int_equal(decide(fb, ask(A, NFS4_SHARE_ACCESS_READ), &why), NFS4_DL_GRANT_READ);
	grant(B, fb, true, &sid);
	assert_int_equal(decide(fb, ask(A, NFS4_SHARE_ACCESS_READ), &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(t->count, 2);
	assert_int_equal(nfs4_dtab_client_count(t, A), 1);
}

static void test_recall_return(void **state)
{
	struct nfs4_stateid sid, s2;
	struct nfs4_dl_recall r[4];
	unsigned n;

	(void)state;
	grant(A, fa, false, &sid);
	/* A reader (B), the holder itself: no conflict with a read delegation. */
	assert_false(conflict(B, NFS4_DL_ACC_READ, 100, &n, r));
	assert_false(conflict(A, NFS4_DL_ACC_WRITE, 100, &n, r));
	assert_int_equal(t->recalls, 0);
	/* A writer: recalled, one CB_RECALL handed out, DELAY. */
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 100, &n, r));
	assert_int_equal(n, 1);
	assert_int_equal(r[0].clientid, A);
	assert_memory_equal(&r[0].sid, &sid, sizeof(sid));
	assert_memory_equal(r[0].fkey, fa, sizeof(fa));
	assert_int_equal(t->recalls, 1);
	/* Retried: still DELAY, no second CB_RECALL unless the first was not sent. */
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 101, &n, r));
	assert_int_equal(n, 0);
	nfs4_dtab_recall_unsent(t, &sid);
	assert_true(conflict(0, NFS4_DL_ACC_NS, 102, &n, r));
	assert_int_equal(n, 1);
	assert_int_equal(t->recalls, 1);
	/* I/O with it still works while it is recalled (the client flushes). */
	assert_int_equal(nfs4_dtab_check_io(t, A, &sid, 1, fa, sizeof(fa), NFS4_SHARE_ACCESS_READ), NFS4_OK);
	assert_int_equal(nfs4_dtab_check_io(t, A, &sid, 1, fa, sizeof(fa), NFS4_SHARE_ACCESS_WRITE), NFS4ERR_OPENMODE);
	assert_int_equal(nfs4_dtab_check_io(t, A, &sid, 1, fb, sizeof(fb), NFS4_SHARE_ACCESS_READ),
			 NFS4ERR_BAD_STATEID);
	/* RFC 8881 §8.2.2: not another client's to use. */
	assert_int_equal(nfs4_dtab_check_io(t, B, &sid, 1, fa, sizeof(fa), NFS4_SHARE_ACCESS_READ),
			 NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_dtab_check_claim(t, A, &sid, fa, sizeof(fa)), NFS4_OK);
	assert_int_equal(nfs4_dtab_check_claim(t, B, &sid, fa, sizeof(fa)), NFS4ERR_BAD_STATEID);
	/* DELEGRETURN: not another client's, not another file's, not an old seqid (4.0). */
	assert_int_equal(nfs4_dtab_return(t, B, 1, &sid, NULL, 0), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sid, fb, sizeof(fb)), NFS4ERR_BAD_STATEID);
	s2 = sid;
	s2.seqid = 0;
	assert_int_equal(nfs4_dtab_return(t, A, 0, &s2, NULL, 0), NFS4ERR_OLD_STATEID);
	s2.seqid = 2;
	assert_int_equal(nfs4_dtab_return(t, A, 1, &s2, NULL, 0), NFS4ERR_BAD_STATEID);
	s2 = sid;
	s2.other[0] ^= 1; /* another boot */
	assert_int_equal(nfs4_dtab_return(t, A, 0, &s2, NULL, 0), NFS4ERR_STALE_STATEID);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sid, fa, sizeof(fa)), NFS4_OK);
	assert_int_equal(t->returned, 1);
	assert_int_equal(t->count, 0);
	/* Gone: the writer proceeds; the stateid is unknown now. */
	assert_false(conflict(B, NFS4_DL_ACC_WRITE, 103, &n, r));
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sid, NULL, 0), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_dtab_test(t, A, &sid), NFS4ERR_BAD_STATEID);
	/* The slot's next grant has another stateid. */
	grant(A, fa, false, &s2);
	assert_memory_not_equal(s2.other, sid.other, sizeof(sid.other));
}

static void test_write_deleg_conflicts(void **state)
{
	struct nfs4_stateid sid;
	struct nfs4_dl_recall r[4];
	unsigned n;

	(void)state;
	grant(A, fa, true, &sid);
	assert_int_equal(nfs4_dtab_check_io(t, A, &sid, 1, fa, sizeof(fa), NFS4_SHARE_ACCESS_WRITE), NFS4_OK);
	assert_true(conflict(B, NFS4_DL_ACC_READ, 5, &n, r)); /* a reader is in a write delegation's way */
	assert_int_equal(n, 1);
}

/* RFC 8881 §10.4: the holder's client keeps its byte-range locks locally, so
 * none is granted over existing locks and any lock by another recalls it. */
static void test_locks(void **state)
{
	struct nfs4_dl_ask a = ask(A, NFS4_SHARE_ACCESS_READ);
	struct nfs4_stateid sid;
	struct nfs4_dl_recall r[4];
	uint32_t why = 99;
	unsigned n;

	(void)state;
	a.file_locked = true;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_CONTENTION);
	a.file_locked = false;
	assert_int_equal(decide(fa, a, &why), NFS4_DL_GRANT_READ);
	grant(A, fa, false, &sid);
	assert_false(conflict(A, NFS4_DL_ACC_LOCK, 5, &n, r)); /* its own locks: local */
	assert_int_equal(n, 0);
	assert_false(conflict(B, NFS4_DL_ACC_READ, 5, &n, r)); /* a reader: no */
	assert_true(conflict(0, NFS4_DL_ACC_LOCK, 5, &n, r));  /* an NLM lock: recalled */
	assert_int_equal(n, 1);
	assert_memory_equal(r[0].sid.other, sid.other, sizeof(sid.other));
	assert_true(nfs4_dtab_file_held(t, fa, sizeof(fa))); /* RECALLED: still watched */
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sid, fa, sizeof(fa)), NFS4_OK);
	assert_false(nfs4_dtab_file_held(t, fa, sizeof(fa)));
	assert_false(conflict(B, NFS4_DL_ACC_LOCK, 6, &n, r));
}

/* A grant whose file cannot be watched is undone: gone without a count. */
static void test_ungrant(void **state)
{
	struct nfs4_stateid sid;

	(void)state;
	grant(A, fa, false, &sid);
	assert_true(nfs4_dtab_file_held(t, fa, sizeof(fa)));
	assert_false(nfs4_dtab_file_held(t, fb, sizeof(fb)));
	nfs4_dtab_ungrant(t, &sid);
	assert_false(nfs4_dtab_file_held(t, fa, sizeof(fa)));
	assert_int_equal(t->count, 0);
	assert_int_equal(t->granted, 0);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sid, fa, sizeof(fa)), NFS4ERR_BAD_STATEID);
}

static void test_revoke(void **state)
{
	struct nfs4_stateid sid;
	struct nfs4_dl_recall r[4];
	unsigned n;

	(void)state;
	grant(A, fa, false, &sid);
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 100, &n, r));
	assert_int_equal(nfs4_dtab_expire(t, 100 + LEASE - 1, LEASE), 0);
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 100 + LEASE - 1, &n, r));
	assert_false(nfs4_dtab_client_revoked(t, A));
	/* A lease after the recall: revoked, the writer proceeds. */
	assert_false(conflict(B, NFS4_DL_ACC_WRITE, 100 + LEASE, &n, r));
	assert_int_equal(t->revoked, 1);
	assert_true(nfs4_dtab_client_revoked(t, A));
	assert_false(nfs4_dtab_client_revoked(t, B));
	assert_int_equal(nfs4_dtab_test(t, A, &sid), NFS4ERR_DELEG_REVOKED);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sid, NULL, 0), NFS4ERR_DELEG_REVOKED);
	assert_int_equal(nfs4_dtab_check_io(t, A, &sid, 1, fa, sizeof(fa), NFS4_SHARE_ACCESS_READ),
			 NFS4ERR_DELEG_REVOKED);
	assert_int_equal(nfs4_dtab_check_claim(t, A, &sid, fa, sizeof(fa)), NFS4ERR_BAD_STATEID);
	/* FREE_STATEID frees it, the flag goes. */
	assert_int_equal(nfs4_dtab_free(t, B, &sid), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_dtab_free(t, A, &sid), NFS4_OK);
	assert_false(nfs4_dtab_client_revoked(t, A));
	assert_int_equal(t->count, 0);
	/* nfs4_dtab_expire revokes without a conflicting call. */
	grant(A, fa, false, &sid);
	assert_int_equal(nfs4_dtab_free(t, A, &sid), NFS4ERR_LOCKS_HELD);
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 200, &n, r));
	assert_int_equal(nfs4_dtab_expire(t, 200 + LEASE, LEASE), 1);
	assert_true(nfs4_dtab_client_revoked(t, A));
}

/* An export no longer served: its files' delegations, held or recalled, are revoked at once. */
static bool key_is_a(const uint8_t *key, uint32_t len, void *arg)
{
	(void)arg;
	return len == sizeof(fa) && memcmp(key, fa, len) == 0;
}

static void test_revoke_files(void **state)
{
	struct nfs4_stateid sa, sb;
	struct nfs4_dl_recall r[4];
	unsigned n;

	(void)state;
	grant(A, fa, false, &sa);
	grant(B, fb, false, &sb);
	assert_int_equal(nfs4_dtab_revoke_files(t, key_is_a, NULL), 1);
	/* RFC 8881 §15.1.5.1, §18.46.3: revoked by an administrator, not by a recall. */
	assert_int_equal(nfs4_dtab_client_revoked(t, A), SEQ4_STATUS_ADMIN_STATE_REVOKED);
	assert_int_equal(nfs4_dtab_client_revoked(t, B), 0);
	assert_int_equal(nfs4_dtab_test(t, A, &sa), NFS4ERR_ADMIN_REVOKED);
	assert_int_equal(nfs4_dtab_check_io(t, A, &sa, 1, fa, sizeof(fa), NFS4_SHARE_ACCESS_READ),
			 NFS4ERR_ADMIN_REVOKED);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sa, NULL, 0), NFS4ERR_ADMIN_REVOKED);
	assert_int_equal(nfs4_dtab_test(t, B, &sb), NFS4_OK);
	assert_int_equal(t->nrecalled, 0);
	assert_int_equal(t->nrevoked, 1);
	assert_int_equal(nfs4_dtab_free(t, A, &sa), NFS4_OK);
	assert_int_equal(nfs4_dtab_client_revoked(t, A), 0);
	assert_int_equal(nfs4_dtab_revoke_files(t, key_is_a, NULL), 0);
	/* The slot granted again is an ordinary delegation: a recall revocation is DELEG_REVOKED. */
	grant(A, fa, false, &sa);
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 100, &n, r));
	assert_int_equal(nfs4_dtab_expire(t, 100 + LEASE, LEASE), 1);
	assert_int_equal(nfs4_dtab_test(t, A, &sa), NFS4ERR_DELEG_REVOKED);
	assert_int_equal(nfs4_dtab_client_revoked(t, A), SEQ4_STATUS_RECALLABLE_STATE_REVOKED);
}

static void test_purge_bounds(void **state)
{
	struct nfs4_stateid sid;
	uint64_t ids[4];
	uint8_t key[16];
	uint32_t why;

	(void)state;
	grant(A, fa, false, &sid);
	grant(B, fa, false, &sid);
	assert_int_equal(nfs4_dtab_holders(t, ids, 4), 2);
	nfs4_dtab_purge_client(t, A);
	assert_int_equal(t->count, 1);
	assert_int_equal(nfs4_dtab_client_count(t, A), 0);
	assert_int_equal(nfs4_dtab_test(t, B, &sid), NFS4_OK);
	/* Per client, then in total. */
	for (unsigned i = 0; i < NFS4_DELEG_PER_CLIENT; i++) {
		memset(key, 0, sizeof(key));
		memcpy(key, &i, sizeof(i));
		assert_true(nfs4_dtab_grant(t, A, key, sizeof(key), false, &sid));
	}
	struct nfs4_dl_ask a = ask(A, NFS4_SHARE_ACCESS_READ);
	assert_int_equal(nfs4_dtab_decide(t, fb, sizeof(fb), &a, &why), NFS4_DL_GRANT_NONE);
	assert_int_equal(why, NFS4_DL_WHY_RESOURCE);
	for (uint64_t c = 3; t->count < NFS4_DELEG_MAX; c++) {
		memset(key, 1, sizeof(key));
		memcpy(key, &c, sizeof(c));
		assert_true(nfs4_dtab_grant(t, c, key, sizeof(key), false, &sid));
	}
	assert_false(nfs4_dtab_grant(t, B, fb, sizeof(fb), false, &sid));
	a = ask(B, NFS4_SHARE_ACCESS_READ);
	assert_int_equal(nfs4_dtab_decide(t, fb, sizeof(fb), &a, &why), NFS4_DL_GRANT_NONE);
	nfs4_dtab_purge_client(t, A);
	assert_int_equal(t->count, NFS4_DELEG_MAX - NFS4_DELEG_PER_CLIENT);
}

static void test_not_deleg(void **state)
{
	struct nfs4_stateid sid;

	(void)state;
	memset(&sid, 0, sizeof(sid));
	assert_false(nfs4_dtab_is_deleg(&sid)); /* anonymous */
	memset(&sid, 0xff, sizeof(sid));
	assert_false(nfs4_dtab_is_deleg(&sid)); /* bypass */
	grant(A, fa, false, &sid);
	sid.other[8] &= 0x7f;
	assert_false(nfs4_dtab_is_deleg(&sid)); /* an open's counter */
	assert_int_equal(nfs4_dtab_test(t, A, &sid), NFS4ERR_BAD_STATEID);
}

/* RFC 8881 §10.4.3: who is asked, and what the holder's CB_GETATTR answer means. */
static void test_cb_getattr(void **state)
{
	struct nfs4_stateid sid, got, rsid;
	struct nfs4_dl_attr a;
	uint64_t holder = 0;
	unsigned n;
	struct nfs4_dl_recall r[4];

	(void)state;
	assert_int_equal(nfs4_dtab_getattr(t, fa, sizeof(fa), B, &holder, &got), NFS4_DL_GA_NONE);
	grant(A, fa, false, &rsid); /* a read delegation: nothing to ask */
	assert_int_equal(nfs4_dtab_getattr(t, fa, sizeof(fa), B, &holder, &got), NFS4_DL_GA_NONE);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &rsid, fa, sizeof(fa)), NFS4_OK);
	grant(A, fa, true, &sid);
	nfs4_dtab_set_base(t, &sid, 100, 10);
	/* the holder itself is not asked; another client, NFSv3 (0) are */
	assert_int_equal(nfs4_dtab_getattr(t, fa, sizeof(fa), A, &holder, &got), NFS4_DL_GA_NONE);
	assert_int_equal(nfs4_dtab_getattr(t, fa, sizeof(fa), 0, &holder, &got), NFS4_DL_GA_ASK);
	assert_true(holder == A && memcmp(&got, &sid, sizeof(sid)) == 0);
	/* unmodified (the grant's change and size): the server's attributes stand */
	a = (struct nfs4_dl_attr){ .change = 100, .size = 10, .mtime_sec = 50 };
	struct nfs4_dl_cbattr cb = { .has_change = true, .has_size = true, .change = 100, .size = 10 };
	assert_true(nfs4_dtab_cb_merge(t, &sid, &cb, 60, 0, &a));
	assert_true(a.change == 100 && a.size == 10 && a.mtime_sec == 50);
	/* modified (change moved, size 5): change past the server's, the holder's size, mtime now */
	cb.change = 101, cb.size = 5;
	assert_true(nfs4_dtab_cb_merge(t, &sid, &cb, 60, 7, &a));
	assert_true(a.change == 101 && a.size == 5 && a.mtime_sec == 60 && a.mtime_nsec == 7);
	/* asked again, same answer: the same values (no change without a change) */
	a = (struct nfs4_dl_attr){ .change = 100, .size = 10, .mtime_sec = 50 };
	assert_true(nfs4_dtab_cb_merge(t, &sid, &cb, 70, 0, &a));
	assert_true(a.change == 101 && a.size == 5 && a.mtime_sec == 60);
	/* modified again (size only): change goes up once more */
	cb.size = 9;
	a = (struct nfs4_dl_attr){ .change = 100, .size = 10, .mtime_sec = 50 };
	assert_true(nfs4_dtab_cb_merge(t, &sid, &cb, 80, 0, &a));
	assert_true(a.change == 102 && a.size == 9 && a.mtime_sec == 80);
	/* the server's own change moved past (the holder's WRITEs): never reported lower */
	a = (struct nfs4_dl_attr){ .change = 500, .size = 10, .mtime_sec = 90 };
	assert_true(nfs4_dtab_cb_merge(t, &sid, &cb, 85, 0, &a));
	assert_true(a.change == 500 && a.size == 9 && a.mtime_sec == 90);
	/* being recalled: DELAY, no CB_GETATTR; returned: nothing to merge */
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 100, &n, r));
	assert_int_equal(nfs4_dtab_getattr(t, fa, sizeof(fa), B, &holder, &got), NFS4_DL_GA_WAIT);
	assert_false(nfs4_dtab_cb_merge(t, &sid, &cb, 90, 0, &a));
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sid, fa, sizeof(fa)), NFS4_OK);
	assert_int_equal(nfs4_dtab_getattr(t, fa, sizeof(fa), B, &holder, &got), NFS4_DL_GA_NONE);
}

/* RFC 9754 §5: a time the holder reports counts from the grant's on, never past now. */
static void test_time_vet(void **state)
{
	const struct nfs4_dl_time orig = { 100, 500 }, now = { 200, 0 };
	struct nfs4_dl_time v;

	(void)state;
	v = (struct nfs4_dl_time){ 100, 499 }; /* before the original: ignored */
	assert_false(nfs4_dl_time_vet(&orig, &now, &v));
	v = (struct nfs4_dl_time){ 99, 999999999 };
	assert_false(nfs4_dl_time_vet(&orig, &now, &v));
	v = orig; /* the original itself: kept */
	assert_true(nfs4_dl_time_vet(&orig, &now, &v) && v.sec == 100 && v.nsec == 500);
	v = (struct nfs4_dl_time){ 150, 7 };
	assert_true(nfs4_dl_time_vet(&orig, &now, &v) && v.sec == 150 && v.nsec == 7);
	v = (struct nfs4_dl_time){ 200, 1 }; /* past now: now */
	assert_true(nfs4_dl_time_vet(&orig, &now, &v) && v.sec == 200 && v.nsec == 0);
	v = (struct nfs4_dl_time){ 150, 1000000000u }; /* no nfstime4 */
	assert_false(nfs4_dl_time_vet(&orig, &now, &v));
}

/* RFC 9754 §5.2: only the holder of an *_ATTRS_DELEG delegation of the file sets the delegated times. */
static void test_set_times(void **state)
{
	const struct nfs4_dl_time at = { 100, 0 }, mt = { 110, 0 }, now = { 300, 0 };
	struct nfs4_stateid plain, ts, other = { .seqid = 1 };
	struct nfs4_dl_times tm = { .has_atime = true, .has_mtime = true, .atime = { 90, 0 }, .mtime = { 250, 3 } };
	unsigned n;
	struct nfs4_dl_recall r[4];

	(void)state;
	grant(A, fb, false, &plain); /* an ordinary read delegation */
	assert_false(nfs4_dtab_is_ts(t, &plain));
	assert_int_equal(nfs4_dtab_set_times(t, A, &plain, 2, fb, sizeof(fa), &now, &tm), NFS4ERR_BAD_STATEID);
	grant(A, fa, true, &ts);
	nfs4_dtab_set_ts(t, &ts, &at, &mt);
	assert_true(nfs4_dtab_is_ts(t, &ts));
	/* another client, another file, an open (non-delegation) stateid: BAD_STATEID */
	assert_int_equal(nfs4_dtab_set_times(t, B, &ts, 2, fa, sizeof(fa), &now, &tm), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_dtab_set_times(t, A, &ts, 2, fb, sizeof(fa), &now, &tm), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_dtab_set_times(t, A, &other, 2, fa, sizeof(fa), &now, &tm), NFS4ERR_BAD_STATEID);
	/* the holder: atime before the grant's dropped, mtime kept */
	assert_int_equal(nfs4_dtab_set_times(t, A, &ts, 2, fa, sizeof(fa), &now, &tm), NFS4_OK);
	assert_false(tm.has_atime);
	assert_true(tm.has_mtime && tm.mtime.sec == 250 && tm.mtime.nsec == 3);
	/* CB_GETATTR's delegated times stand for the file's (vetted), unmodified or not */
	nfs4_dtab_set_base(t, &ts, 100, 10);
	struct nfs4_dl_cbattr cb = { .has_change = true, .has_size = true, .change = 100, .size = 10,
				     .has_atime = true, .has_mtime = true, .atime = { 120, 1 }, .mtime = { 400, 0 } };
	struct nfs4_dl_attr a = { .change = 100, .size = 10, .mtime_sec = 110, .atime = { 100, 0 } };
	assert_true(nfs4_dtab_cb_merge(t, &ts, &cb, 300, 0, &a));
	assert_true(a.atime.sec == 120 && a.atime.nsec == 1 && a.mtime_sec == 300 && a.change == 100);
	cb.change = 101, cb.mtime = (struct nfs4_dl_time){ 260, 9 };
	assert_true(nfs4_dtab_cb_merge(t, &ts, &cb, 300, 0, &a));
	assert_true(a.mtime_sec == 260 && a.mtime_nsec == 9 && a.change == 101); /* the holder's, not now */
	/* recalled: still the holder's to set (DELEGRETURN may carry them); revoked: DELEG_REVOKED */
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 10, &n, r));
	assert_int_equal(nfs4_dtab_set_times(t, A, &ts, 2, fa, sizeof(fa), &now, &tm), NFS4_OK);
	assert_int_equal(nfs4_dtab_expire(t, 10 + LEASE, LEASE), 1);
	assert_int_equal(nfs4_dtab_set_times(t, A, &ts, 2, fa, sizeof(fa), &now, &tm), NFS4ERR_DELEG_REVOKED);
	/* a slot granted again is an ordinary delegation until marked */
	assert_int_equal(nfs4_dtab_free(t, A, &ts), NFS4_OK);
	grant(A, fa, true, &ts);
	assert_false(nfs4_dtab_is_ts(t, &ts));
}

/* Recalls for a local process's open are revoked before the kernel's lease-break-time lets it in. */
static void test_break_deadline(void **state)
{
	struct nfs4_stateid sid;
	struct nfs4_dl_recall r[4];
	unsigned n;

	(void)state;
	assert_int_equal(nfs4_dtab_break_wait(90, 45), 42);
	assert_int_equal(nfs4_dtab_break_wait(90, 0), 0);   /* unknown */
	assert_int_equal(nfs4_dtab_break_wait(10, 45), 0);  /* the lease is the shorter */
	assert_int_equal(nfs4_dtab_break_wait(90, 92), 89); /* within the margin of the lease */
	assert_int_equal(nfs4_dtab_break_wait(90, 2), 1);
	grant(A, fa, false, &sid);
	assert_true(conflict(0, NFS4_DL_ACC_WRITE, 100, &n, r)); /* a local open: recalled at 100 */
	nfs4_dtab_deadline(t, fa, sizeof(fa), 100 + 5);
	nfs4_dtab_deadline(t, fa, sizeof(fa), 100 + 8); /* a later deadline changes nothing */
	assert_int_equal(nfs4_dtab_expire(t, 104, 1000), 0);
	assert_int_equal(nfs4_dtab_expire(t, 105, 1000), 1); /* at its deadline, well before a lease */
	assert_int_equal(nfs4_dtab_test(t, A, &sid), NFS4ERR_DELEG_REVOKED);
	/* a new recall starts without a deadline; a deadline on a held one is none */
	grant(A, fb, false, &sid);
	nfs4_dtab_deadline(t, fb, sizeof(fb), 1);
	assert_true(nfs4_dtab_conflict(t, fb, sizeof(fb), 0, NFS4_DL_ACC_WRITE, NFS4_DL_BY_LOCAL_OPEN, 200, LEASE, r, 4,
					 &n));
	assert_int_equal(nfs4_dtab_expire(t, 200 + LEASE - 1, LEASE), 0);
	assert_int_equal(nfs4_dtab_expire(t, 200 + LEASE, LEASE), 1);
}

static uint32_t granted; /* nfs4_dtab_grant_dir's notifications */

static struct nfs4_dl_ask dir_ask(uint64_t cl)
{
	return (struct nfs4_dl_ask){ .clientid = cl, .minor = 1, .enabled = true, .cb_up = true };
}

static bool decide_dir(uint64_t cl)
{
	struct nfs4_dl_ask a = dir_ask(cl);

	return nfs4_dtab_decide_dir(t, fa, sizeof(fa), &a);
}

static void test_dir_decide(void **state)
{
	struct nfs4_dl_ask a = dir_ask(A);
	struct nfs4_stateid sa, sb, sc;
	struct nfs4_dl_recall r[4];
	unsigned n;

	(void)state;
	assert_true(decide_dir(A));
	a.minor = 0; /* GET_DIR_DELEGATION is 4.1's */
	assert_false(nfs4_dtab_decide_dir(t, fa, sizeof(fa), &a));
	a = dir_ask(A), a.enabled = false;
	assert_false(nfs4_dtab_decide_dir(t, fa, sizeof(fa), &a));
	a = dir_ask(A), a.cb_up = false;
	assert_false(nfs4_dtab_decide_dir(t, fa, sizeof(fa), &a));
	a = dir_ask(A), a.grace = true;
	assert_false(nfs4_dtab_decide_dir(t, fa, sizeof(fa), &a));
	assert_true(nfs4_dtab_grant_dir(t, A, fa, sizeof(fa), 0, &granted, &sa));
	assert_int_equal(t->nkind[NFS4_DL_KIND_DIR], 1);
	assert_int_equal(t->dir_granted, 1);
	assert_false(decide_dir(A)); /* one per client and directory */
	assert_true(decide_dir(B));  /* §10.9.1: shared */
	assert_true(nfs4_dtab_grant_dir(t, B, fa, sizeof(fa), 0, &granted, &sb));
	/* A read of the directory (READDIR, LOOKUP) recalls nothing. */
	assert_false(conflict(0, NFS4_DL_ACC_READ, 100, &n, r));
	assert_int_equal(n, 0);
	/* §10.9.1: A's own change recalls B's, not A's. */
	assert_true(conflict(A, NFS4_DL_ACC_NS, 100, &n, r));
	assert_int_equal(n, 1);
	assert_true(r[0].clientid == B);
	assert_memory_equal(&r[0].sid, &sb, sizeof(sb));
	assert_int_equal(t->dir_recalls, 1);
	assert_false(decide_dir(0x100000003ull)); /* contention: B's being recalled */
	/* A change from no client (NFSv3, a local process) recalls A's too. */
	assert_true(conflict(0, NFS4_DL_ACC_NS, 101, &n, r));
	assert_int_equal(n, 1);
	assert_true(r[0].clientid == A);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sa, fa, sizeof(fa)), NFS4_OK);
	assert_int_equal(nfs4_dtab_return(t, B, 1, &sb, fa, sizeof(fa)), NFS4_OK);
	assert_int_equal(t->nkind[NFS4_DL_KIND_DIR], 0);
	assert_false(conflict(0, NFS4_DL_ACC_NS, 102, &n, r));
	/* Revoked a lease after an unanswered recall, freed by FREE_STATEID. */
	assert_true(nfs4_dtab_grant_dir(t, A, fa, sizeof(fa), 0, &granted, &sc));
	assert_true(conflict(B, NFS4_DL_ACC_WRITE, 200, &n, r)); /* SETATTR of the directory */
	assert_int_equal(nfs4_dtab_expire(t, 200 + LEASE, LEASE), 1);
	assert_int_equal(nfs4_dtab_client_revoked(t, A), SEQ4_STATUS_RECALLABLE_STATE_REVOKED);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sc, fa, sizeof(fa)), NFS4ERR_DELEG_REVOKED);
	assert_int_equal(nfs4_dtab_free(t, A, &sc), NFS4_OK);
	assert_int_equal(t->nkind[NFS4_DL_KIND_DIR], 0);
	assert_int_equal(t->count, 0);
}

static void test_dir_bounds(void **state)
{
	struct nfs4_stateid sid;
	uint32_t why;
	uint8_t key[16];

	(void)state;
	assert_true(nfs4_dtab_grant_dir(t, A, fa, sizeof(fa), 0, &granted, &sid));
	nfs4_dtab_ungrant(t, &sid); /* the watch could not be set */
	assert_int_equal(t->nkind[NFS4_DL_KIND_DIR], 0);
	assert_int_equal(t->dir_granted, 0);
	for (uint64_t c = 1; t->nkind[NFS4_DL_KIND_DIR] < NFS4_DELEG_DIR_MAX; c++) {
		memset(key, 2, sizeof(key));
		memcpy(key, &c, sizeof(c));
		assert_true(nfs4_dtab_grant_dir(t, c, key, sizeof(key), 0, &granted, &sid));
	}
	assert_false(decide_dir(B));
	assert_false(nfs4_dtab_grant_dir(t, B, fa, sizeof(fa), 0, &granted, &sid));
	/* File delegations keep the rest of the table. */
	assert_int_equal(decide(fb, ask(B, NFS4_SHARE_ACCESS_READ), &why), NFS4_DL_GRANT_READ);
	nfs4_dtab_purge_client(t, 1);
	assert_int_equal(t->nkind[NFS4_DL_KIND_DIR], NFS4_DELEG_DIR_MAX - 1);
	assert_true(decide_dir(B));
}

/* RFC 8881 §10.9.2, §18.39.3: NOTIFY4_CHANGE_DIR_ATTRS, _ADD_ENTRY, _REMOVE_ENTRY and _RENAME_ENTRY
 * granted (not the child attributes': 1u << 0; the directory attributes' is gated by nfs4_dl_dir_want), an
 * added entry recalls only the holders not granted it, who is told (the adder too), a bound on them, a
 * recall instead. */
static void test_dir_notify(void **state)
{
	struct nfs4_stateid sa, sb, sid;
	struct nfs4_dl_recall r[NFS4_DL_NOTIFY_MAX];
	unsigned n;

	(void)state;
	assert_true(nfs4_dtab_grant_dir(t, A, fa, sizeof(fa), 1u << 0 | 1u << 1 | 1u << 2 | 1u << 3 | 1u << 4, &granted,
					&sa));
	assert_int_equal(granted,
			 NFS4_DL_NOTIFY_DIR_ATTRS | NFS4_DL_NOTIFY_ADD | NFS4_DL_NOTIFY_REMOVE | NFS4_DL_NOTIFY_RENAME);
	assert_true(nfs4_dtab_grant_dir(t, B, fa, sizeof(fa), 0, &granted, &sb));
	assert_int_equal(granted, 0);
	/* An entry added by C: B's recalled, A's kept (told afterwards). */
	assert_true(nfs4_dtab_conflict(t, fa, sizeof(fa), 0x100000003ull, NFS4_DL_ACC_DIR_ADD, NFS4_DL_BY_NFS4, 10,
					 LEASE, r, 4, &n));
	assert_int_equal(n, 1);
	assert_true(r[0].clientid == B);
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, r), 1);
	assert_true(r[0].clientid == A);
	assert_memory_equal(&r[0].sid, &sa, sizeof(sa));
	assert_int_equal(nfs4_dtab_return(t, B, 1, &sb, fa, sizeof(fa)), NFS4_OK);
	assert_false(nfs4_dtab_conflict(t, fa, sizeof(fa), 0x100000003ull, NFS4_DL_ACC_DIR_ADD, NFS4_DL_BY_NFS4, 11,
					 LEASE, r, 4, &n));
	/* Any other change recalls A's too. */
	assert_true(nfs4_dtab_conflict(t, fa, sizeof(fa), 0x100000003ull, NFS4_DL_ACC_NS, NFS4_DL_BY_NFS4, 12, LEASE, r,
					 4, &n));
	assert_int_equal(n, 1);
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, r), 0); /* recalled: told nothing */
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sa, fa, sizeof(fa)), NFS4_OK);
	/* At most NFS4_DL_NOTIFY_MAX holders told: the next gets its delegation without. */
	for (uint64_t c = 1; c <= NFS4_DL_NOTIFY_MAX; c++) {
		assert_true(nfs4_dtab_grant_dir(t, c, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, &granted, &sid));
		assert_int_equal(granted, NFS4_DL_NOTIFY_ADD);
	}
	assert_true(nfs4_dtab_grant_dir(t, 0x200000000ull, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, &granted, &sid));
	assert_int_equal(granted, 0);
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, r), NFS4_DL_NOTIFY_MAX);
	/* A notification that cannot be sent: recalled instead, once. */
	assert_true(nfs4_dtab_recall_now(t, &r[0].sid, 20, &r[1]));
	assert_memory_equal(&r[1].sid, &r[0].sid, sizeof(sid));
	assert_false(nfs4_dtab_recall_now(t, &r[0].sid, 21, &r[1]));
	assert_int_equal(t->nrecalled, 1);
}

/* RFC 8881 §18.25.4, §20.4.3: a removed entry recalls only the holders not granted
 * NOTIFY4_REMOVE_ENTRY; those granted it (the remover too) are told; one granted only ADD_ENTRY is
 * recalled by a removal, one granted only REMOVE_ENTRY by an addition. */
static void test_dir_notify_remove(void **state)
{
	struct nfs4_stateid sa, sb, sc;
	struct nfs4_dl_recall r[NFS4_DL_NOTIFY_MAX];
	const uint64_t C = 0x100000003ull;
	unsigned n;

	(void)state;
	assert_int_equal(nfs4_dl_notify_of(NFS4_DL_ACC_DIR_REMOVE), NFS4_DL_NOTIFY_REMOVE);
	assert_int_equal(nfs4_dl_notify_of(NFS4_DL_ACC_DIR_ADD), NFS4_DL_NOTIFY_ADD);
	assert_int_equal(nfs4_dl_notify_of(NFS4_DL_ACC_DIR_RENAME), NFS4_DL_NOTIFY_RENAME);
	assert_int_equal(nfs4_dl_notify_of(NFS4_DL_ACC_NS), 0);
	assert_true(nfs4_dtab_grant_dir(t, A, fa, sizeof(fa), NFS4_DL_NOTIFY_REMOVE, &granted, &sa));
	assert_int_equal(granted, NFS4_DL_NOTIFY_REMOVE);
	assert_true(nfs4_dtab_grant_dir(t, B, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, &granted, &sb));
	assert_true(nfs4_dtab_grant_dir(t, C, fa, sizeof(fa), NFS4_DL_NOTIFY_GRANTABLE, &granted, &sc));
	/* C removes an entry: B's recalled (ADD only), A's kept; A and C (its own) told. */
	assert_true(nfs4_dtab_conflict(t, fa, sizeof(fa), C, NFS4_DL_ACC_DIR_REMOVE, NFS4_DL_BY_NFS4, 10, LEASE, r, 4, &n));
	assert_int_equal(n, 1);
	assert_true(r[0].clientid == B);
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_REMOVE, r), 2);
	assert_true((r[0].clientid == A && r[1].clientid == C) || (r[0].clientid == C && r[1].clientid == A));
	assert_int_equal(nfs4_dtab_return(t, B, 1, &sb, fa, sizeof(fa)), NFS4_OK);
	/* An entry added by no client (NFSv3): A's recalled (REMOVE only), C's kept. */
	assert_true(nfs4_dtab_conflict(t, fa, sizeof(fa), 0, NFS4_DL_ACC_DIR_ADD, NFS4_DL_BY_NFS3, 11, LEASE, r, 4, &n));
	assert_int_equal(n, 1);
	assert_true(r[0].clientid == A);
	assert_memory_equal(&r[0].sid, &sa, sizeof(sa));
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, r), 1);
	assert_true(r[0].clientid == C);
	/* A recalled one is told nothing more. */
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_REMOVE, r), 1);
	assert_int_equal(t->dir_recalls, 2);
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sa, fa, sizeof(fa)), NFS4_OK);
	/* RFC 8881 §18.26.4: a rename within the directory passes C (granted RENAME_ENTRY) by. */
	assert_false(nfs4_dtab_conflict(t, fa, sizeof(fa), 0, NFS4_DL_ACC_DIR_RENAME, NFS4_DL_BY_NFS3, 12, LEASE, r, 4, &n));
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_RENAME, r), 1);
	assert_int_equal(nfs4_dtab_return(t, C, 1, &sc, fa, sizeof(fa)), NFS4_OK);
	/* ... and recalls one granted only ADD_ENTRY and REMOVE_ENTRY (§18.26.4: one RENAME_ENTRY, not the two). */
	assert_true(nfs4_dtab_grant_dir(t, C, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD | NFS4_DL_NOTIFY_REMOVE, &granted, &sc));
	assert_true(nfs4_dtab_conflict(t, fa, sizeof(fa), 0, NFS4_DL_ACC_DIR_RENAME, NFS4_DL_BY_NFS3, 13, LEASE, r, 4, &n));
	assert_int_equal(n, 1);
	assert_true(r[0].clientid == C);
}

/* RFC 8881 §18.39.3, §20.4.1: NOTIFY4_CHANGE_DIR_ATTRS granted only for attributes it can tell (those of
 * the directory's own struct be_attr); a SETATTR of the directory passes its holder by (told after, with
 * the attributes it asked), recalls the others'; a file's delegation is recalled by it as by a write. */
static void test_dir_attrs(void **state)
{
	const uint32_t mode_change[2] = { 1u << 3, 1u << (33 - 32) }, fsid_only[2] = { 1u << 8, 0 };
	const uint64_t C = 0x100000003ull;
	uint32_t attrs[2] = { 7, 7 };
	struct nfs4_stateid sa, sb, sf;
	struct nfs4_dl_recall r[NFS4_DL_NOTIFY_MAX];
	unsigned n;

	(void)state;
	assert_int_equal(nfs4_dl_notify_of(NFS4_DL_ACC_DIR_ATTRS), NFS4_DL_NOTIFY_DIR_ATTRS);
	assert_int_equal(nfs4_dl_dir_want(NFS4_DL_NOTIFY_DIR_ATTRS | NFS4_DL_NOTIFY_ADD, mode_change, attrs),
			 NFS4_DL_NOTIFY_DIR_ATTRS | NFS4_DL_NOTIFY_ADD);
	assert_true(attrs[0] == mode_change[0] && attrs[1] == mode_change[1]);
	/* fsid (a file system's, not told): the bit goes, no attributes */
	assert_int_equal(nfs4_dl_dir_want(NFS4_DL_NOTIFY_DIR_ATTRS | NFS4_DL_NOTIFY_ADD, fsid_only, attrs),
			 NFS4_DL_NOTIFY_ADD);
	assert_true(attrs[0] == 0 && attrs[1] == 0);
	/* attributes without the bit: none kept */
	assert_int_equal(nfs4_dl_dir_want(NFS4_DL_NOTIFY_ADD, mode_change, attrs), NFS4_DL_NOTIFY_ADD);
	assert_true(attrs[0] == 0 && attrs[1] == 0);
	assert_true(nfs4_dtab_grant_dir(t, A, fa, sizeof(fa), NFS4_DL_NOTIFY_DIR_ATTRS, &granted, &sa));
	assert_int_equal(granted, NFS4_DL_NOTIFY_DIR_ATTRS);
	nfs4_dtab_set_dir_attrs(t, &sa, mode_change);
	assert_true(nfs4_dtab_grant_dir(t, B, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, &granted, &sb));
	nfs4_dtab_set_dir_attrs(t, &sb, mode_change); /* not granted the bit: ignored */
	/* C sets the directory's mode: B's recalled, A's kept and told mode and change. */
	assert_true(nfs4_dtab_conflict(t, fa, sizeof(fa), C, NFS4_DL_ACC_DIR_ATTRS, NFS4_DL_BY_NFS4, 10, LEASE, r, 4, &n));
	assert_int_equal(n, 1);
	assert_true(r[0].clientid == B);
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_DIR_ATTRS, r), 1);
	assert_true(r[0].clientid == A && r[0].dir_attrs[0] == mode_change[0] && r[0].dir_attrs[1] == mode_change[1]);
	assert_memory_equal(&r[0].sid, &sa, sizeof(sa));
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, r), 0); /* B recalled */
	/* A's own SETATTR: nothing recalled, A told (§20.4.3) */
	assert_int_equal(nfs4_dtab_return(t, B, 1, &sb, fa, sizeof(fa)), NFS4_OK);
	assert_false(nfs4_dtab_conflict(t, fa, sizeof(fa), A, NFS4_DL_ACC_DIR_ATTRS, NFS4_DL_BY_NFS4, 11, LEASE, r, 4, &n));
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_DIR_ATTRS, r), 1);
	/* A read delegation of a file is recalled by it (as by a write) */
	assert_true(nfs4_dtab_grant(t, B, fb, sizeof(fb), false, &sf));
	assert_true(nfs4_dtab_conflict(t, fb, sizeof(fb), C, NFS4_DL_ACC_DIR_ATTRS, NFS4_DL_BY_NFS4, 12, LEASE, r, 4, &n));
	assert_int_equal(n, 1);
	/* A slot granted again starts with no attributes */
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sa, fa, sizeof(fa)), NFS4_OK);
	assert_true(nfs4_dtab_grant_dir(t, A, fa, sizeof(fa), NFS4_DL_NOTIFY_DIR_ATTRS, &granted, &sa));
	assert_int_equal(nfs4_dtab_dir_notified(t, fa, sizeof(fa), NFS4_DL_NOTIFY_DIR_ATTRS, r), 1);
	assert_true(r[0].dir_attrs[0] == 0 && r[0].dir_attrs[1] == 0);
}

/* A callback's outcome names its delegation by the stateid's counter word: found while that grant
 * lives, not after its return nor once the slot is granted again. */
static void test_sid_of_counter(void **state)
{
	struct nfs4_stateid sa, got, sb;
	uint32_t counter;

	(void)state;
	assert_true(nfs4_dtab_grant_dir(t, A, fa, sizeof(fa), NFS4_DL_NOTIFY_ADD, &granted, &sa));
	counter = (uint32_t)sa.other[8] << 24 | (uint32_t)sa.other[9] << 16 | (uint32_t)sa.other[10] << 8 | sa.other[11];
	assert_true(nfs4_dtab_sid_of_counter(t, counter, &got));
	assert_memory_equal(&got, &sa, sizeof(sa));
	assert_false(nfs4_dtab_sid_of_counter(t, counter & ~NFS4_STAB_DELEG_BIT, &got));
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sa, fa, sizeof(fa)), NFS4_OK);
	assert_false(nfs4_dtab_sid_of_counter(t, counter, &got));
	assert_true(nfs4_dtab_grant_dir(t, B, fa, sizeof(fa), 0, &granted, &sb)); /* the same slot, a new generation */
	assert_int_equal(sb.other[11], sa.other[11]);
	assert_false(nfs4_dtab_sid_of_counter(t, counter, &got));
}

/* The table's kinds sum to its count; the causes' recalls to its recalls. */
static void counts_agree(const struct nfs4_dl_counts *c)
{
	uint64_t kinds = 0, rec = 0, dir = 0;

	for (unsigned k = 0; k < NFS4_DL_KINDS; k++)
		kinds += c->kind[k];
	for (unsigned i = 0; i < NFS4_DL_CAUSES; i++)
		rec += c->recalls_by[i], dir += c->dir_recalls_by[i];
	assert_int_equal(kinds, t->count);
	assert_int_equal(rec, t->recalls);
	assert_int_equal(dir, t->dir_recalls);
	assert_int_equal(c->revoked_unanswered + c->revoked_admin, t->revoked);
}

static bool match_fb(const uint8_t *key, uint32_t len, void *arg)
{
	(void)arg;
	return len == sizeof(fb) && !memcmp(key, fb, len);
}

/* The stats' counts: kinds, recalls by cause, revocations by reason. */
static void test_counts(void **state)
{
	static const uint8_t fc[] = "file-c", fd[] = "dir--d";
	const struct nfs4_dl_time t0 = { 1, 0 };
	struct nfs4_stateid sa, sb, sc, sd;
	struct nfs4_dl_recall r[4];
	struct nfs4_dl_counts c;
	unsigned n;

	(void)state;
	grant(A, fa, false, &sa);
	grant(A, fb, true, &sb);
	grant(B, fc, false, &sc);
	nfs4_dtab_set_ts(t, &sc, &t0, &t0); /* READ_ATTRS_DELEG: attribute, not read */
	assert_true(nfs4_dtab_grant_dir(t, B, fd, sizeof(fd), 0, &granted, &sd));
	nfs4_dtab_counts(t, &c);
	assert_int_equal(c.kind[NFS4_DL_KIND_READ], 1);
	assert_int_equal(c.kind[NFS4_DL_KIND_WRITE], 1);
	assert_int_equal(c.kind[NFS4_DL_KIND_ATTR], 1);
	assert_int_equal(c.kind[NFS4_DL_KIND_DIR], 1);
	counts_agree(&c);
	/* NFSv3's WRITE recalls fa's: nfs3 1; NLM's TEST while it is out counts nothing more. */
	assert_true(nfs4_dtab_conflict(t, fa, sizeof(fa), 0, NFS4_DL_ACC_WRITE, NFS4_DL_BY_NFS3, 10, LEASE, r, 4, &n));
	assert_true(nfs4_dtab_conflict(t, fa, sizeof(fa), 0, NFS4_DL_ACC_LOCK, NFS4_DL_BY_NLM, 11, LEASE, r, 4, &n));
	/* A local open recalls fb's; another client's REMOVE in fd recalls the directory's. */
	assert_true(nfs4_dtab_conflict(t, fb, sizeof(fb), 0, NFS4_DL_ACC_WRITE, NFS4_DL_BY_LOCAL_OPEN, 12, LEASE, r, 4,
				       &n));
	assert_true(nfs4_dtab_conflict(t, fd, sizeof(fd), A, NFS4_DL_ACC_NS, NFS4_DL_BY_NFS4, 13, LEASE, r, 4, &n));
	/* The holder's own access recalls nothing, counts nothing. */
	assert_false(nfs4_dtab_conflict(t, fc, sizeof(fc), B, NFS4_DL_ACC_WRITE, NFS4_DL_BY_NFS4, 13, LEASE, r, 4, &n));
	nfs4_dtab_counts(t, &c);
	assert_int_equal(c.recalls_by[NFS4_DL_BY_NFS3], 1);
	assert_int_equal(c.recalls_by[NFS4_DL_BY_NLM], 0);
	assert_int_equal(c.recalls_by[NFS4_DL_BY_LOCAL_OPEN], 1);
	assert_int_equal(c.recalls_by[NFS4_DL_BY_NFS4], 1);
	assert_int_equal(c.dir_recalls_by[NFS4_DL_BY_NFS4], 1);
	assert_int_equal(c.dir_recalls_by[NFS4_DL_BY_NFS3] + c.dir_recalls_by[NFS4_DL_BY_LOCAL_OPEN], 0);
	assert_int_equal(c.recalls_by[NFS4_DL_BY_LOCAL_LOCK] + c.recalls_by[NFS4_DL_BY_CEPH], 0);
	counts_agree(&c);
	/* fa's returned; fb's unanswered for a lease: revoked (still counted a write one until freed). */
	assert_int_equal(nfs4_dtab_return(t, A, 1, &sa, fa, sizeof(fa)), NFS4_OK);
	assert_int_equal(nfs4_dtab_expire(t, 12 + LEASE, LEASE), 1);
	nfs4_dtab_counts(t, &c);
	assert_int_equal(c.kind[NFS4_DL_KIND_READ], 0);
	assert_int_equal(c.kind[NFS4_DL_KIND_WRITE], 1);
	assert_int_equal(c.revoked_unanswered, 1);
	assert_int_equal(nfs4_dtab_free(t, A, &sb), NFS4_OK);
	/* An administrator's revocation counts apart (fb granted again, to B). */
	grant(B, fb, false, &sb);
	assert_int_equal(nfs4_dtab_revoke_files(t, match_fb, NULL), 1);
	nfs4_dtab_counts(t, &c);
	assert_int_equal(c.revoked_unanswered, 1);
	assert_int_equal(c.revoked_admin, 1);
	assert_int_equal(c.kind[NFS4_DL_KIND_WRITE], 0);
	assert_int_equal(c.kind[NFS4_DL_KIND_READ], 1);
	counts_agree(&c);
	/* The directory's returned; a new one that cannot be told of an entry: notify_failed. */
	assert_int_equal(nfs4_dtab_return(t, B, 1, &sd, fd, sizeof(fd)), NFS4_OK);
	assert_true(nfs4_dtab_grant_dir(t, A, fd, sizeof(fd), NFS4_DL_NOTIFY_ADD, &granted, &sd));
	assert_true(nfs4_dtab_recall_now(t, &sd, 30, &r[0]));
	nfs4_dtab_counts(t, &c);
	assert_int_equal(c.recalls_by[NFS4_DL_BY_NOTIFY], 1);
	assert_int_equal(c.dir_recalls_by[NFS4_DL_BY_NOTIFY], 1);
	assert_int_equal(c.kind[NFS4_DL_KIND_DIR], 1);
	counts_agree(&c);
	/* Purged: no kind left. */
	nfs4_dtab_purge_client(t, A);
	nfs4_dtab_purge_client(t, B);
	nfs4_dtab_counts(t, &c);
	for (unsigned k = 0; k < NFS4_DL_KINDS; k++)
		assert_int_equal(c.kind[k], 0);
	counts_agree(&c);
}

/* The stats' names: one per cause and kind, distinct, none past the end. */
static void test_count_names(void **state)
{
	(void)state;
	for (unsigned i = 0; i < NFS4_DL_CAUSES; i++) {
		assert_non_null(nfs4_dl_cause_name(i));
		for (unsigned j = 0; j < i; j++)
			assert_string_not_equal(nfs4_dl_cause_name(i), nfs4_dl_cause_name(j));
	}
	assert_null(nfs4_dl_cause_name(NFS4_DL_CAUSES));
	assert_string_equal(nfs4_dl_cause_name(NFS4_DL_BY_LOCAL_OPEN), "local_open");
	for (unsigned i = 0; i < NFS4_DL_KINDS; i++)
		assert_non_null(nfs4_dl_kind_name(i));
	assert_null(nfs4_dl_kind_name(NFS4_DL_KINDS));
	assert_string_equal(nfs4_dl_kind_name(NFS4_DL_KIND_ATTR), "attribute");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_decide, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recall_return, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_deleg_conflicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ungrant, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoke, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoke_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_deleg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cb_getattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_break_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_vet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_times, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_decide, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_notify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_notify_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_attrs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sid_of_counter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts, setup, teardown),
		cmocka_unit_test(test_count_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
