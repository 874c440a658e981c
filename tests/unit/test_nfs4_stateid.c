/*
 * test_nfs4_stateid.c - NFSv4 stateids and open state (nfs/v4/state/nfs4_stateid.c):
 * special stateids, open stateid creation and upgrade, share reservations
 * between owners and clients, stateid checks for I/O (STALE, OLD, BAD,
 * EXPIRED, OPENMODE, another file, 4.1's seqid 0), OPEN_CONFIRM,
 * OPEN_DOWNGRADE's subset rules, CLOSE, NFSv4.0 open-owner seqids (replay of
 * the last reply, BAD_SEQID, an unconfirmed owner starting over, the errors
 * that do not advance it), TEST_STATEID / FREE_STATEID, purging a client
 * (its open files released) and the per-client bound; lock owners and lock
 * stateids (made from an open, found, seqid bumps, I/O through them, their
 * owners' backend ids, freed with CLOSE / RELEASE_LOCKOWNER / FREE_STATEID /
 * the purge with the backend told to release the owner's locks, 4.0
 * lock-owner seqids); every lookup refusing another client's stateid; a
 * soak of thousands of take/release cycles through every path that frees a
 * record, after which the table is empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/state/nfs4_stateid.h"

static struct nfs4_stab t;
/* The stateid's own client as the caller (what NFSv4.0 operations without an owner pass). */
#define OWN(s) nfs4_stateid_clientid(&(s))
#define SQ(m, s) ((struct nfs4_sid_seq){ .minor = (m), .clientid = OWN(s) })
static int refs; /* references held on the fake files */

static void fake_get(void *fs, void *file)
{
	(void)fs, (void)file;
	refs++;
}

static void fake_put(void *fs, void *file)
{
	(void)fs, (void)file;
	refs--;
}

static int unlocks; /* owners whose locks were released */
static uint64_t last_unlock;

static void fake_unlock(void *fs, void *file, uint64_t owner)
{
	(void)fs, (void)file;
	unlocks++;
	last_unlock = owner;
}

static uint64_t held_owner; /* the owner the fake backend says holds a lock */

static bool fake_locked(void *fs, void *file, uint64_t owner)
{
	(void)fs, (void)file;
	return owner == held_owner;
}

static const struct nfs4_stab_file_ops fops = { .get = fake_get, .put = fake_put, .unlock = fake_unlock,
						.locked = fake_locked };
static int file_a, file_b;

static int setup(void **state)
{
	(void)state;
	refs = 0;
	unlocks = 0;
	held_owner = 0;
	nfs4_stab_init(&t, 0xb007, &fops);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nfs4_stab_release(&t);
	assert_int_equal(refs, 0); /* every open file given back */
	return 0;
}

#define CL1 ((uint64_t)0xb007 << 32 | 1)
#define CL2 ((uint64_t)0xb007 << 32 | 2)

/* OPEN of file key by (client, owner) with minor version minor. */
static uint32_t do_open(uint64_t cl, uint32_t minor, const char *owner, const char *key, uint32_t access,
			uint32_t deny, struct nfs4_open_res *res)
{
	struct nfs4_open_req rq = { .clientid = cl, .minor = minor, .owner = (const uint8_t *)owner,
				    .owner_len = (uint32_t)strlen(owner), .fkey = (const uint8_t *)key,
				    .fkey_len = (uint32_t)strlen(key), .access = access, .deny = deny,
				    .fs = NULL, .file = key[0] == 'a' ? (void *)&file_a : (void *)&file_b,
				    .file_modes = NFS4_SHARE_ACCESS_BOTH };
	uint32_t st;

	refs++; /* the caller's reference */
	st = nfs4_stab_open(&t, &rq, res);
	if (st != NFS4_OK || !res->file_taken)
		refs--;
	return st;
}

static void test_kinds(void **state)
{
	struct nfs4_stateid s = { 0 };

	(void)state;
	assert_int_equal(nfs4_stateid_kind(&s, 0), NFS4_SID_ANON);
	s.seqid = 1;
	assert_int_equal(nfs4_stateid_kind(&s, 0), NFS4_SID_INVALID);
	assert_int_equal(nfs4_stateid_kind(&s, 1), NFS4_SID_CURRENT);
	s.seqid = UINT32_MAX;
	assert_int_equal(nfs4_stateid_kind(&s, 1), NFS4_SID_INVALID);
	memset(s.other, 0xff, sizeof(s.other));
	assert_int_equal(nfs4_stateid_kind(&s, 0), NFS4_SID_BYPASS);
	s.seqid = 0;
	assert_int_equal(nfs4_stateid_kind(&s, 0), NFS4_SID_INVALID);
	s.other[3] = 1;
	assert_int_equal(nfs4_stateid_kind(&s, 0), NFS4_SID_ORDINARY);
}

static void test_open_upgrade(void **state)
{
	struct nfs4_open_res r1, r2, r3;
	struct nfs4_sid_io io;

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o1", "a", NFS4_SHARE_ACCESS_READ, 0, &r1), NFS4_OK);
	assert_int_equal(r1.sid.seqid, 1);
	assert_false(r1.confirm);
	assert_true(r1.file_taken);
	assert_true(r1.new_open); /* RFC 9754 §4: OPEN_XOR_DELEGATION applies to new opens only */
	/* The same owner and file: the same stateid, seqid 2, the access ORed in. */
	assert_int_equal(do_open(CL1, 1, "o1", "a", NFS4_SHARE_ACCESS_WRITE, 0, &r2), NFS4_OK);
	assert_memory_equal(r1.sid.other, r2.sid.other, NFS4_OTHER_SIZE);
	assert_int_equal(r2.sid.seqid, 2);
	assert_false(r2.new_open);
	assert_false(r2.file_taken); /* the file already has one open for both */
	assert_int_equal(nfs4_stab_check_io(&t, OWN(r2.sid), &r2.sid, 1, (const uint8_t *)"a", 1,
			 NFS4_SHARE_ACCESS_WRITE, &io),
			 NFS4_OK);
	assert_ptr_equal(io.file, &file_a);
	assert_int_equal(io.access, NFS4_SHARE_ACCESS_BOTH);
	fake_put(NULL, io.file);
	/* Another owner: another stateid. */
	assert_int_equal(do_open(CL1, 1, "o2", "a", NFS4_SHARE_ACCESS_READ, 0, &r3), NFS4_OK);
	assert_memory_not_equal(r1.sid.other, r3.sid.other, NFS4_OTHER_SIZE);
	assert_int_equal(nfs4_stab_client_count(&t, CL1), 4); /* 2 owners, 2 opens */
	/* Bad share values. */
	assert_int_equal(do_open(CL1, 1, "o1", "a", 0, 0, &r3), NFS4ERR_INVAL);
	assert_int_equal(do_open(CL1, 1, "o1", "a", 4, 0, &r3), NFS4ERR_INVAL);
	assert_int_equal(do_open(CL1, 1, "o1", "a", 1, 4, &r3), NFS4ERR_INVAL);
}

static void test_share_deny(void **state)
{
	struct nfs4_open_res r1, r2;

	(void)state;
	/* Client 1 reads and denies writers. */
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_READ, NFS4_SHARE_DENY_WRITE, &r1), NFS4_OK);
	/* Client 2 may read, not write; nor deny reading. */
	assert_int_equal(do_open(CL2, 1, "o", "a", NFS4_SHARE_ACCESS_WRITE, 0, &r2), NFS4ERR_SHARE_DENIED);
	assert_int_equal(do_open(CL2, 1, "o", "a", NFS4_SHARE_ACCESS_READ, NFS4_SHARE_DENY_READ, &r2),
			 NFS4ERR_SHARE_DENIED);
	assert_int_equal(do_open(CL2, 1, "o", "a", NFS4_SHARE_ACCESS_READ, 0, &r2), NFS4_OK);
	/* Another owner of the same client is refused as well. */
	assert_int_equal(do_open(CL1, 1, "p", "a", NFS4_SHARE_ACCESS_BOTH, 0, &r2), NFS4ERR_SHARE_DENIED);
	/* RFC 7530 §9.9: the deny refuses the denying owner's own upgrade too (pynfs OPEN21, OPEN25);
	 * an upgrade within it is fine, and so is a deny that only the owner's own access meets. */
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_WRITE, 0, &r2), NFS4ERR_SHARE_DENIED);
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_READ, 0, &r1), NFS4_OK);
	/* Another file is unaffected. */
	assert_int_equal(do_open(CL2, 1, "o", "b", NFS4_SHARE_ACCESS_WRITE, NFS4_SHARE_DENY_BOTH, &r2), NFS4_OK);
	/* Anonymous I/O against a deny: LOCKED (RFC 7530 §9.9; pynfs OPEN23, OPEN27, WRT9). */
	assert_int_equal(nfs4_stab_check_anon(&t, (const uint8_t *)"a", 1, NFS4_SHARE_ACCESS_WRITE),
			 NFS4ERR_LOCKED);
	assert_int_equal(nfs4_stab_check_anon(&t, (const uint8_t *)"a", 1, NFS4_SHARE_ACCESS_READ), NFS4_OK);
	assert_int_equal(nfs4_stab_check_anon(&t, (const uint8_t *)"b", 1, NFS4_SHARE_ACCESS_READ),
			 NFS4ERR_LOCKED);
	assert_int_equal(nfs4_stab_check_anon(&t, (const uint8_t *)"c", 1, NFS4_SHARE_ACCESS_WRITE), NFS4_OK);
	/* Closing the deny lets the writer in. */
	assert_int_equal(nfs4_stab_close(&t, &r1.sid, SQ(1, r1.sid), &r1.sid), NFS4_OK);
	assert_int_equal(do_open(CL2, 1, "o", "a", NFS4_SHARE_ACCESS_WRITE, 0, &r2), NFS4_OK);
}

static void test_check_io(void **state)
{
	struct nfs4_open_res r;
	struct nfs4_stateid s;
	struct nfs4_sid_io io;
	const uint8_t *a = (const uint8_t *)"a";

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK); /* seqid 2 */
	s = r.sid;
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 1, a, 1, NFS4_SHARE_ACCESS_WRITE, &io), NFS4ERR_OPENMODE);
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 1, (const uint8_t *)"b", 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_BAD_STATEID);
	s.seqid = 1;
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io), NFS4ERR_OLD_STATEID);
	s.seqid = 3;
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io), NFS4ERR_BAD_STATEID);
	s.seqid = 0; /* 4.1: the current one; 4.0: old */
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io), NFS4_OK);
	fake_put(NULL, io.file);
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 0, a, 1, NFS4_SHARE_ACCESS_READ, &io), NFS4ERR_OLD_STATEID);
	s = r.sid;
	s.other[0] ^= 1; /* another boot: STALE in 4.0, unknown in 4.1 (RFC 8881 §15.1.5.5) */
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 0, a, 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_STALE_STATEID);
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io), NFS4ERR_BAD_STATEID);
	s = r.sid;
	s.other[11] ^= 0x40; /* never issued */
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io), NFS4ERR_BAD_STATEID);
	memset(&s, 0, sizeof(s));
	assert_int_equal(nfs4_stab_check_io(&t, OWN(s), &s, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io), NFS4ERR_BAD_STATEID);
	/* A purged client: an expired one's stateids say so, a destroyed one's are bad. */
	nfs4_stab_purge_client(&t, CL1, NFS4_PURGE_EXPIRED);
	assert_int_equal(nfs4_stab_check_io(&t, OWN(r.sid), &r.sid, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_EXPIRED);
	assert_int_equal(nfs4_stab_client_count(&t, CL1), 0);
	assert_int_equal(do_open(CL2, 1, "o", "a", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	nfs4_stab_purge_client(&t, CL2, NFS4_PURGE_GONE);
	assert_int_equal(nfs4_stab_check_io(&t, OWN(r.sid), &r.sid, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_BAD_STATEID);
	assert_int_equal(refs, 0);
}

static void test_v40_confirm(void **state)
{
	struct nfs4_open_res r;
	struct nfs4_stateid c;
	struct nfs4_sid_io io;
	const uint8_t *a = (const uint8_t *)"a";

	(void)state;
	assert_int_equal(do_open(CL1, 0, "o", "a", NFS4_SHARE_ACCESS_BOTH, 0, &r), NFS4_OK);
	assert_true(r.confirm);
	/* Not usable before OPEN_CONFIRM. */
	assert_int_equal(nfs4_stab_check_io(&t, OWN(r.sid), &r.sid, 0, a, 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_downgrade(&t, &r.sid, SQ(0, r.sid), 1, 0, &c), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_confirm(&t, &r.sid, SQ(0, r.sid), &c), NFS4_OK);
	assert_int_equal(c.seqid, 2);
	assert_int_equal(nfs4_stab_confirm(&t, &c, SQ(0, c), &c), NFS4ERR_BAD_STATEID); /* confirmed already */
	assert_int_equal(nfs4_stab_confirm(&t, &r.sid, SQ(0, r.sid), &c), NFS4ERR_OLD_STATEID);
	assert_int_equal(nfs4_stab_check_io(&t, OWN(c), &c, 0, a, 1, NFS4_SHARE_ACCESS_WRITE, &io), NFS4_OK);
	fake_put(NULL, io.file);
	/* The owner's next open needs no confirmation. */
	assert_int_equal(do_open(CL1, 0, "o", "b", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	assert_false(r.confirm);
}

static void test_downgrade_close(void **state)
{
	struct nfs4_open_res r;
	struct nfs4_stateid s, old;

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_BOTH, NFS4_SHARE_DENY_WRITE, &r), NFS4_OK);
	/* WRITE alone was never an open mode: INVAL; nor is more than held. */
	assert_int_equal(nfs4_stab_downgrade(&t, &r.sid, SQ(1, r.sid), NFS4_SHARE_ACCESS_WRITE, 0, &s), NFS4ERR_INVAL);
	assert_int_equal(nfs4_stab_downgrade(&t, &r.sid, SQ(1, r.sid), NFS4_SHARE_ACCESS_READ, NFS4_SHARE_DENY_BOTH,
			 &s),
			 NFS4ERR_INVAL);
	assert_int_equal(nfs4_stab_downgrade(&t, &r.sid, SQ(1, r.sid), NFS4_SHARE_ACCESS_READ, 0, &s), NFS4_OK);
	assert_int_equal(s.seqid, 3);
	/* After the downgrade another owner may write. */
	{
		struct nfs4_open_res r2;
		assert_int_equal(do_open(CL2, 1, "o", "a", NFS4_SHARE_ACCESS_WRITE, 0, &r2), NFS4_OK);
	}
	old = r.sid;
	assert_int_equal(nfs4_stab_close(&t, &old, SQ(1, old), &s), NFS4ERR_OLD_STATEID);
	old.seqid = 3;
	assert_int_equal(nfs4_stab_close(&t, &old, SQ(1, old), &s), NFS4_OK);
	assert_int_equal(s.seqid, 4);
	assert_int_equal(nfs4_stab_close(&t, &old, SQ(1, old), &s), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_client_count(&t, CL1), 1); /* the owner stays */
}

static void test_seqid(void **state)
{
	struct nfs4_seqid_replay rp;
	struct nfs4_open_res r;
	struct nfs4_stateid old;
	uint32_t st = 0;
	const uint8_t *o = (const uint8_t *)"own";

	(void)state;
	/* A new owner: any seqid. */
	assert_int_equal(nfs4_stab_seqid_check(&t, CL1, o, 3, 7, &rp, &st), NFS4_SEQID_NEW);
	assert_int_equal(do_open(CL1, 0, "own", "a", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	nfs4_stab_seqid_done(&t, CL1, o, 3, 7, NFS4_OK, (const uint8_t *)"reply7", 6);
	/* The same seqid: the last reply. */
	assert_int_equal(nfs4_stab_seqid_check(&t, CL1, o, 3, 7, &rp, &st), NFS4_SEQID_REPLAY);
	assert_int_equal(rp.status, NFS4_OK);
	assert_int_equal(rp.len, 6);
	assert_memory_equal(rp.body, "reply7", 6);
	/* Confirm through the stateid with seqid 8: its reply (the new stateid) is the one replayed. */
	assert_int_equal(nfs4_stab_seqid_check_sid(&t, &r.sid, 8, &rp, &st), NFS4_SEQID_NEW);
	old = r.sid;
	assert_int_equal(nfs4_stab_confirm(&t, &r.sid, (struct nfs4_sid_seq){ 0, 8, OWN(r.sid) }, &r.sid), NFS4_OK);
	assert_int_equal(nfs4_stab_seqid_check_sid(&t, &old, 8, &rp, &st), NFS4_SEQID_REPLAY);
	assert_int_equal(rp.len, 16);
	assert_int_equal(rp.body[3], 2); /* seqid 2, big-endian */
	assert_memory_equal(rp.body + 4, r.sid.other, NFS4_OTHER_SIZE);
	/* Errors of §9.1.7 do not advance it. */
	nfs4_stab_seqid_done(&t, CL1, o, 3, 9, NFS4ERR_BAD_STATEID, NULL, 0);
	assert_int_equal(nfs4_stab_seqid_check(&t, CL1, o, 3, 8, &rp, &st), NFS4_SEQID_REPLAY);
	/* Others do. */
	nfs4_stab_seqid_done(&t, CL1, o, 3, 9, NFS4ERR_SHARE_DENIED, NULL, 0);
	assert_int_equal(nfs4_stab_seqid_check(&t, CL1, o, 3, 9, &rp, &st), NFS4_SEQID_REPLAY);
	assert_int_equal(rp.status, NFS4ERR_SHARE_DENIED);
	/* Out of order: BAD_SEQID (the owner is confirmed). */
	assert_int_equal(nfs4_stab_seqid_check(&t, CL1, o, 3, 12, &rp, &st), NFS4_SEQID_ERROR);
	assert_int_equal(st, NFS4ERR_BAD_SEQID);
	assert_int_equal(nfs4_stab_seqid_check_sid(&t, &r.sid, 3, &rp, &st), NFS4_SEQID_ERROR);
	assert_int_equal(nfs4_stab_seqid_check(&t, CL1, o, 3, 10, &rp, &st), NFS4_SEQID_NEW);
	/* The seqid wraps to 0 (RFC 7530 §9.1.3). */
	nfs4_stab_seqid_done(&t, CL1, o, 3, UINT32_MAX, NFS4_OK, NULL, 0);
	assert_int_equal(nfs4_stab_seqid_check(&t, CL1, o, 3, 0, &rp, &st), NFS4_SEQID_NEW);
}

/* RFC 7530 §9.1.8: a retransmitted CLOSE gets the owner's last reply although
 * the open is gone (pynfs CLOSE10, CLOSE12, RPLY9). */
static void test_seqid_close_replay(void **state)
{
	struct nfs4_seqid_replay rp;
	struct nfs4_open_res r, r2;
	struct nfs4_stateid c, out;
	uint32_t st = 0;

	(void)state;
	assert_int_equal(do_open(CL1, 0, "own", "a", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	assert_int_equal(do_open(CL1, 0, "own", "b", NFS4_SHARE_ACCESS_READ, 0, &r2), NFS4_OK);
	nfs4_stab_seqid_done(&t, CL1, (const uint8_t *)"own", 3, 1, NFS4_OK, NULL, 0);
	assert_int_equal(nfs4_stab_confirm(&t, &r.sid, (struct nfs4_sid_seq){ 0, 2, OWN(r.sid) }, &c), NFS4_OK);
	assert_int_equal(nfs4_stab_seqid_check_sid(&t, &c, 3, &rp, &st), NFS4_SEQID_NEW);
	assert_int_equal(nfs4_stab_close(&t, &c, (struct nfs4_sid_seq){ 0, 3, OWN(c) }, &out), NFS4_OK);
	/* The same CLOSE again: the cached reply (the closed stateid, seqid + 1). */
	assert_int_equal(nfs4_stab_seqid_check_sid(&t, &c, 3, &rp, &st), NFS4_SEQID_REPLAY);
	assert_int_equal(rp.status, NFS4_OK);
	assert_int_equal(rp.len, 16);
	assert_int_equal(rp.body[3], out.seqid);
	assert_memory_equal(rp.body + 4, c.other, NFS4_OTHER_SIZE);
	/* Out of order through the closed stateid: BAD_SEQID; the other open goes on. */
	assert_int_equal(nfs4_stab_seqid_check_sid(&t, &c, 9, &rp, &st), NFS4_SEQID_ERROR);
	assert_int_equal(nfs4_stab_seqid_check_sid(&t, &r2.sid, 4, &rp, &st), NFS4_SEQID_NEW);
}

static void test_seqid_unconfirmed_restart(void **state)
{
	struct nfs4_seqid_replay rp;
	struct nfs4_open_res r;
	uint32_t st = 0;
	const uint8_t *o = (const uint8_t *)"own";

	(void)state;
	assert_int_equal(do_open(CL1, 0, "own", "a", NFS4_SHARE_ACCESS_READ, NFS4_SHARE_DENY_WRITE, &r), NFS4_OK);
	nfs4_stab_seqid_done(&t, CL1, o, 3, 5, NFS4_OK, NULL, 0);
	/* Never confirmed: an OPEN with another seqid starts the owner over (its opens go). */
	assert_int_equal(nfs4_stab_seqid_check(&t, CL1, o, 3, 40, &rp, &st), NFS4_SEQID_NEW);
	assert_int_equal(nfs4_stab_client_count(&t, CL1), 0);
	assert_int_equal(do_open(CL2, 0, "x", "a", NFS4_SHARE_ACCESS_WRITE, 0, &r), NFS4_OK);
}

static void test_test_free(void **state)
{
	struct nfs4_open_res r;
	struct nfs4_stateid s = { 0 };

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	assert_int_equal(nfs4_stab_test(&t, CL1, &r.sid), NFS4_OK);
	assert_int_equal(nfs4_stab_test(&t, CL2, &r.sid), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_test(&t, CL1, &s), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_free(&t, CL1, &r.sid), NFS4ERR_LOCKS_HELD);
	assert_int_equal(nfs4_stab_close(&t, &r.sid, SQ(1, r.sid), &s), NFS4_OK);
	assert_int_equal(nfs4_stab_free(&t, CL1, &r.sid), NFS4ERR_BAD_STATEID);
}

static void test_bounds(void **state)
{
	struct nfs4_open_res r;
	char key[32];
	unsigned n = 0;
	uint32_t st;

	(void)state;
	/* One owner, then opens until the per-client bound. */
	for (;;) {
		snprintf(key, sizeof(key), "a%u", n);
		st = do_open(CL1, 0, "o", key, NFS4_SHARE_ACCESS_READ, 0, &r);
		if (st != NFS4_OK)
			break;
		n++;
	}
	assert_int_equal(st, NFS4ERR_RESOURCE);
	assert_int_equal(n + 1, NFS4_STAB_MAX_PER_CLIENT);
	assert_int_equal(do_open(CL1, 1, "o", "zz", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4ERR_DELAY);
	/* Another client is not affected. */
	assert_int_equal(do_open(CL2, 0, "o", "a0", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	/* Key length limits. */
	{
		char big[NFS4_STAB_FKEY_MAX + 2];
		memset(big, 'b', sizeof(big) - 1);
		big[sizeof(big) - 1] = 0;
		assert_int_equal(do_open(CL2, 0, "o", big, NFS4_SHARE_ACCESS_READ, 0, &r), NFS4ERR_INVAL);
	}
}

static uint32_t lock_new_minor(uint64_t cl, uint32_t minor, const struct nfs4_stateid *open_sid, const char *owner,
			       const char *key, struct nfs4_lock_ref *ref)
{
	struct nfs4_lock_req rq = { .clientid = cl, .minor = minor, .sid = *open_sid, .owner = (const uint8_t *)owner,
				    .owner_len = (uint32_t)strlen(owner), .fkey = (const uint8_t *)key,
				    .fkey_len = (uint32_t)strlen(key) };
	uint32_t st = nfs4_stab_lock_new(&t, &rq, ref);

	if (st == NFS4_OK && ref->file)
		fake_put(NULL, ref->file);
	return st;
}

static uint32_t lock_new(uint64_t cl, const struct nfs4_stateid *open_sid, const char *owner, const char *key,
			 struct nfs4_lock_ref *ref)
{
	return lock_new_minor(cl, 1, open_sid, owner, key, ref);
}

/* Issue 24 defects 2 and 3: the descriptor bounds (files, a client's opens, its lock owners + states). */
static void test_descriptor_bounds(void **state)
{
	struct nfs4_open_res r, b0, a0;
	struct nfs4_lock_ref ref;
	struct nfs4_stab_counts c;
	char key[32];

	(void)state;
	nfs4_stab_limits(&t, 6, 4, 3);
	for (unsigned i = 0; i < 4; i++) {
		snprintf(key, sizeof(key), "a%u", i);
		assert_int_equal(do_open(CL1, 0, "o", key, NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	}
	/* CL1 at its share: RESOURCE (4.0), DELAY (4.1), before OPEN would create */
	assert_int_equal(do_open(CL1, 0, "o", "a9", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4ERR_RESOURCE);
	assert_int_equal(nfs4_stab_open_room(&t, CL1, 0), NFS4ERR_RESOURCE);
	assert_int_equal(nfs4_stab_open_room(&t, CL1, 1), NFS4ERR_DELAY);
	/* CL2 is not affected until the server's files are all held */
	assert_int_equal(nfs4_stab_open_room(&t, CL2, 1), NFS4_OK);
	assert_int_equal(do_open(CL2, 1, "o", "b0", NFS4_SHARE_ACCESS_READ, 0, &b0), NFS4_OK);
	assert_int_equal(do_open(CL2, 1, "o", "b1", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	assert_int_equal(do_open(CL2, 1, "o", "b2", NFS4_SHARE_ACCESS_READ, 0, &r), NFS4ERR_DELAY);
	assert_int_equal(nfs4_stab_open_room(&t, CL2, 1), NFS4ERR_DELAY);
	assert_int_equal(do_open(CL2, 1, "o", "a0", NFS4_SHARE_ACCESS_READ, 0, &a0), NFS4_OK); /* no new file */
	/* lock owners + lock states of CL2: 3 */
	assert_int_equal(lock_new(CL2, &a0.sid, "L1", "a0", &ref), NFS4_OK);  /* owner + state: 2 */
	assert_int_equal(lock_new(CL2, &b0.sid, "L1", "b0", &ref), NFS4_OK);  /* a state more: 3 */
	assert_int_equal(lock_new(CL2, &a0.sid, "L2", "a0", &ref), NFS4ERR_DELAY);
	assert_int_equal(lock_new(CL2, &a0.sid, "L1", "a0", &ref), NFS4_OK);  /* the existing one */
	nfs4_stab_counts(&t, &c);
	assert_int_equal(c.files, 6);
	assert_int_equal(c.opens, 7);
	assert_int_equal(c.open_owners, 2);
	assert_int_equal(c.lock_owners, 1);
	assert_int_equal(c.lock_states, 2);
	/* RFC 8881 §8.2.4: a 4.1 lock owner goes with its last lock stateid (CLOSE of its opens) */
	{
		struct nfs4_stateid out;

		assert_int_equal(nfs4_stab_close(&t, &a0.sid, SQ(1, a0.sid), &out), NFS4_OK);
		nfs4_stab_counts(&t, &c);
		assert_int_equal(c.lock_owners, 1); /* still has b0's */
		assert_int_equal(nfs4_stab_close(&t, &b0.sid, SQ(1, b0.sid), &out), NFS4_OK);
		nfs4_stab_counts(&t, &c);
		assert_int_equal(c.lock_owners + c.lock_states, 0);
	}
	/* a client's purge gives everything back */
	nfs4_stab_purge_client(&t, CL2, NFS4_PURGE_GONE);
	nfs4_stab_counts(&t, &c);
	assert_int_equal(c.files, 4);
	assert_int_equal(c.lock_owners + c.lock_states, 0);
	assert_int_equal(nfs4_stab_open_room(&t, CL2, 1), NFS4_OK);
}

static void test_locks(void **state)
{
	struct nfs4_open_res r;
	struct nfs4_lock_ref ref, ref2;
	struct nfs4_stateid ls, s;
	struct nfs4_sid_io io;
	uint64_t cid = 0;
	uint8_t buf[16];
	uint32_t len = 0;

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_BOTH, 0, &r), NFS4_OK);
	assert_int_equal(lock_new(CL1, &r.sid, "lk", "a", &ref), NFS4_OK);
	assert_true(ref.owner_id & NFS4_STAB_LOCK_ID_BIT);
	assert_false(ref.owner_id >> 63); /* NLM's have the top bit */
	assert_int_equal(ref.sid.seqid, 0);
	assert_int_equal(nfs4_stab_lock_bump(&t, &ref.sid, &ls), NFS4_OK);
	assert_int_equal(ls.seqid, 1);
	/* The same owner and file again: the same lock stateid. */
	assert_int_equal(lock_new(CL1, &r.sid, "lk", "a", &ref2), NFS4_OK);
	assert_memory_equal(ref2.sid.other, ls.other, NFS4_OTHER_SIZE);
	assert_int_equal(ref2.owner_id, ref.owner_id);
	/* Another lock owner of the same open: its own lock stateid and backend owner (pynfs RPLY6). */
	assert_int_equal(lock_new(CL1, &r.sid, "lk-other", "a", &ref2), NFS4_OK);
	assert_memory_not_equal(ref2.sid.other, ls.other, NFS4_OTHER_SIZE);
	assert_int_equal(ref2.sid.seqid, 0);
	assert_true(ref2.owner_id != ref.owner_id);
	assert_int_equal(nfs4_stab_release_lockowner(&t, CL1, (const uint8_t *)"lk-other", 8), NFS4_OK);
	assert_int_equal(unlocks, 1);
	unlocks = 0;
	/* Not for another client, another file, or a lock stateid as the open. */
	assert_int_equal(lock_new(CL2, &r.sid, "lk", "a", &ref2), NFS4ERR_BAD_STATEID);
	assert_int_equal(lock_new(CL1, &r.sid, "lk", "b", &ref2), NFS4ERR_BAD_STATEID);
	assert_int_equal(lock_new(CL1, &ls, "lk2", "a", &ref2), NFS4ERR_BAD_STATEID);
	/* Found by stateid (the file must match), the seqid checked. */
	assert_int_equal(nfs4_stab_lock_find(&t, OWN(ls), &ls, 1, (const uint8_t *)"a", 1, &ref2), NFS4_OK);
	fake_put(NULL, ref2.file);
	assert_int_equal(nfs4_stab_lock_find(&t, OWN(ls), &ls, 1, (const uint8_t *)"b", 1, &ref2), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_lock_find(&t, OWN(r.sid), &r.sid, 1, (const uint8_t *)"a", 1, &ref2),
			 NFS4ERR_BAD_STATEID);
	s = ls;
	s.seqid = 5;
	assert_int_equal(nfs4_stab_lock_find(&t, OWN(s), &s, 1, (const uint8_t *)"a", 1, &ref2), NFS4ERR_BAD_STATEID);
	/* A lock stateid serves I/O as its open. */
	assert_int_equal(nfs4_stab_check_io(&t, OWN(ls), &ls, 1, (const uint8_t *)"a", 1, NFS4_SHARE_ACCESS_WRITE, &io),
			 NFS4_OK);
	fake_put(NULL, io.file);
	/* DENIED's holder. */
	assert_true(nfs4_stab_lock_owner(&t, ref.owner_id, &cid, buf, sizeof(buf), &len));
	assert_true(cid == CL1 && len == 2 && memcmp(buf, "lk", 2) == 0);
	assert_false(nfs4_stab_lock_owner(&t, 1ull << 63, &cid, buf, sizeof(buf), &len));
	assert_int_equal(nfs4_stab_lock_owner_id(&t, CL1, (const uint8_t *)"lk", 2), ref.owner_id);
	assert_int_equal(nfs4_stab_lock_owner_id(&t, CL2, (const uint8_t *)"lk", 2), 0);
	/* TEST_STATEID knows it; FREE_STATEID frees it (the backend releases its locks). */
	assert_int_equal(nfs4_stab_test(&t, CL1, &ls), NFS4_OK);
	assert_int_equal(nfs4_stab_free(&t, CL1, &ls), NFS4_OK);
	assert_int_equal(unlocks, 1);
	assert_int_equal(last_unlock, ref.owner_id);
	assert_int_equal(nfs4_stab_test(&t, CL1, &ls), NFS4ERR_BAD_STATEID);
	/* CLOSE takes the open's lock stateids with it. */
	assert_int_equal(lock_new(CL1, &r.sid, "lk", "a", &ref2), NFS4_OK);
	assert_int_equal(nfs4_stab_close(&t, &r.sid, SQ(1, r.sid), &s), NFS4_OK);
	assert_int_equal(unlocks, 2);
	assert_int_equal(nfs4_stab_lock_find(&t, OWN(ref2.sid), &ref2.sid, 1, (const uint8_t *)"a", 1, &ref),
			 NFS4ERR_BAD_STATEID);
	/* RELEASE_LOCKOWNER: the owner and its stateids go. */
	assert_int_equal(do_open(CL1, 1, "o", "b", NFS4_SHARE_ACCESS_BOTH, 0, &r), NFS4_OK);
	assert_int_equal(lock_new(CL1, &r.sid, "lk", "b", &ref2), NFS4_OK);
	/* ... but not while it holds a lock (RFC 7530 §16.37.4; pynfs RLOWN3). */
	held_owner = ref2.owner_id;
	assert_int_equal(nfs4_stab_release_lockowner(&t, CL1, (const uint8_t *)"lk", 2), NFS4ERR_LOCKS_HELD);
	assert_int_equal(unlocks, 2);
	assert_int_equal(nfs4_stab_lock_owner_id(&t, CL1, (const uint8_t *)"lk", 2), ref2.owner_id);
	held_owner = 0;
	assert_int_equal(nfs4_stab_release_lockowner(&t, CL1, (const uint8_t *)"lk", 2), NFS4_OK);
	assert_int_equal(unlocks, 3);
	assert_int_equal(nfs4_stab_lock_owner_id(&t, CL1, (const uint8_t *)"lk", 2), 0);
	/* The purge releases what is left. */
	assert_int_equal(lock_new(CL1, &r.sid, "lk3", "b", &ref2), NFS4_OK);
	nfs4_stab_purge_client(&t, CL1, NFS4_PURGE_EXPIRED);
	assert_int_equal(unlocks, 4);
	assert_int_equal(nfs4_stab_client_count(&t, CL1), 0);
}

/* RFC 8881 §8.2.2: a stateid is meaningful only to its client. Client 2
 * naming client 1's open or lock stateid is told BAD_STATEID by every lookup,
 * and nothing of client 1's changes (issue 24 defect 1). */
static void test_other_client(void **state)
{
	const uint8_t *a = (const uint8_t *)"a";
	struct nfs4_open_res r;
	struct nfs4_lock_ref ref, ref2;
	struct nfs4_stateid ls, s;
	struct nfs4_sid_io io;

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_BOTH, 0, &r), NFS4_OK);
	assert_int_equal(lock_new(CL1, &r.sid, "lk", "a", &ref), NFS4_OK);
	assert_int_equal(nfs4_stab_lock_bump(&t, &ref.sid, &ls), NFS4_OK);
	for (uint32_t minor = 0; minor <= 1; minor++) {
		struct nfs4_sid_seq sq2 = { .minor = minor, .clientid = CL2 };

		assert_int_equal(nfs4_stab_check_io(&t, CL2, &r.sid, minor, a, 1, NFS4_SHARE_ACCESS_READ, &io),
				 NFS4ERR_BAD_STATEID);
		assert_int_equal(nfs4_stab_check_io(&t, CL2, &ls, minor, a, 1, NFS4_SHARE_ACCESS_WRITE, &io),
				 NFS4ERR_BAD_STATEID);
		assert_int_equal(nfs4_stab_lock_find(&t, CL2, &ls, minor, a, 1, &ref2), NFS4ERR_BAD_STATEID);
		assert_int_equal(nfs4_stab_downgrade(&t, &r.sid, sq2, NFS4_SHARE_ACCESS_READ, 0, &s),
				 NFS4ERR_BAD_STATEID);
		assert_int_equal(nfs4_stab_close(&t, &r.sid, sq2, &s), NFS4ERR_BAD_STATEID);
	}
	assert_int_equal(nfs4_stab_lock_find_any(&t, CL2, &ls, &ref2), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_test(&t, CL2, &r.sid), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_test(&t, CL2, &ls), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_free(&t, CL2, &ls), NFS4ERR_BAD_STATEID);
	assert_int_equal(lock_new(CL2, &r.sid, "lk2", "a", &ref2), NFS4ERR_BAD_STATEID);
	assert_int_equal(unlocks, 0);
	/* Client 1's state is intact: its stateids still work for it. */
	assert_int_equal(nfs4_stab_check_io(&t, CL1, &ls, 1, a, 1, NFS4_SHARE_ACCESS_WRITE, &io), NFS4_OK);
	fake_put(NULL, io.file);
	assert_int_equal(nfs4_stab_test(&t, CL1, &ls), NFS4_OK);
	assert_int_equal(nfs4_stab_client_count(&t, CL2), 0);
	/* An expired client's stateid is EXPIRED to it, merely unknown to another. */
	nfs4_stab_purge_client(&t, CL1, NFS4_PURGE_EXPIRED);
	assert_int_equal(nfs4_stab_check_io(&t, CL1, &r.sid, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io), NFS4ERR_EXPIRED);
	assert_int_equal(nfs4_stab_check_io(&t, CL2, &r.sid, 1, a, 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_BAD_STATEID);
}

static void test_lock_seqid(void **state)
{
	struct nfs4_seqid_replay rp;
	struct nfs4_open_res r;
	struct nfs4_lock_ref ref;
	struct nfs4_stateid ls;
	uint32_t st = 0;
	const uint8_t *lo = (const uint8_t *)"lk";

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o", "a", NFS4_SHARE_ACCESS_BOTH, 0, &r), NFS4_OK);
	assert_int_equal(lock_new(CL1, &r.sid, "lk", "a", &ref), NFS4_OK);
	assert_int_equal(nfs4_stab_lock_bump(&t, &ref.sid, &ls), NFS4_OK);
	/* A new lock owner's sequence starts at its lock_seqid. */
	nfs4_stab_lock_seqid_done(&t, CL1, lo, 2, 0, NFS4_OK, (const uint8_t *)"LOCKOK", 6);
	assert_int_equal(nfs4_stab_lock_seqid_check(&t, &ls, 0, &rp, &st), NFS4_SEQID_REPLAY);
	assert_memory_equal(rp.body, "LOCKOK", 6);
	assert_int_equal(nfs4_stab_lock_seqid_check(&t, &ls, 1, &rp, &st), NFS4_SEQID_NEW);
	assert_int_equal(nfs4_stab_lock_seqid_check(&t, &ls, 7, &rp, &st), NFS4_SEQID_ERROR);
	assert_int_equal(st, NFS4ERR_BAD_SEQID);
	/* A reply too long to keep: its retransmission runs again. */
	{
		static uint8_t big[NFS4_STAB_REPLAY_MAX + 1];
		nfs4_stab_lock_seqid_done(&t, CL1, lo, 2, 0, NFS4ERR_DENIED, big, sizeof(big));
		assert_int_equal(nfs4_stab_lock_seqid_check(&t, &ls, 0, &rp, &st), NFS4_SEQID_NEW);
		nfs4_stab_lock_seqid_done(&t, CL1, lo, 2, 0, NFS4_OK, (const uint8_t *)"LOCKOK", 6);
	}
	/* Recorded through the lock stateid (LOCKU). */
	nfs4_stab_seqid_done_sid(&t, &ls, 1, NFS4ERR_DENIED, NULL, 0);
	assert_int_equal(nfs4_stab_lock_seqid_check(&t, &ls, 1, &rp, &st), NFS4_SEQID_REPLAY);
	assert_int_equal(rp.status, NFS4ERR_DENIED);
}

/* ---- soak: thousands of take/release cycles, the table back to empty ---- */

#ifndef SOAK_CYCLES
#define SOAK_CYCLES 4000u /* -DSOAK_CYCLES=... for a longer run */
#endif
#define CL3 ((uint64_t)0xb007 << 32 | 3)
#define SOAK_LOCKS 6 /* lock stateids soak_client() makes (each freed once) */

/* Nothing left: no owner, open, lock or file record, no file reference. */
static void assert_tab_empty(void)
{
	struct nfs4_stab_counts c;

	nfs4_stab_counts(&t, &c);
	assert_int_equal(c.files + c.opens + c.open_owners + c.lock_owners + c.lock_states, 0);
	assert_int_equal(t.nstates, 0);
	assert_int_equal(t.nfiles, 0);
	assert_int_equal(refs, 0);
	assert_true(list_empty(&t.clients));
	for (unsigned i = 0; i < NFS4_STAB_BUCKETS; i++) {
		assert_true(list_empty(&t.opens[i]));
		assert_true(list_empty(&t.files[i]));
	}
}

/* A 4.0 open confirmed, upgraded and downgraded, with a 4.0 lock owner released. */
static void soak_v40(uint64_t cl, const char *owner, const char *key, struct nfs4_stateid *sid)
{
	struct nfs4_open_res r;
	struct nfs4_lock_ref ref;
	struct nfs4_stateid out;

	assert_int_equal(do_open(cl, 0, owner, key, NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	assert_int_equal(nfs4_stab_confirm(&t, &r.sid, SQ(0, r.sid), &out), NFS4_OK);
	assert_int_equal(do_open(cl, 0, owner, key, NFS4_SHARE_ACCESS_BOTH, 0, &r), NFS4_OK);
	assert_int_equal(nfs4_stab_downgrade(&t, &r.sid, SQ(0, r.sid), NFS4_SHARE_ACCESS_READ, 0, &out), NFS4_OK);
	assert_int_equal(lock_new_minor(cl, 0, &out, "l40", key, &ref), NFS4_OK);
	assert_int_equal(nfs4_stab_release_lockowner(&t, cl, (const uint8_t *)"l40", 3), NFS4_OK);
	*sid = out;
}

/* What the walks of fb's opens see: cl's open (BOTH) with the lock owners ids
 * (newest first) and the background client's (READ). */
static void soak_file_views(uint64_t cl, const char *fb, const uint64_t ids[3])
{
	uint64_t got[4];
	bool open, write;

	assert_int_equal(nfs4_stab_file_lock_owners(&t, (const uint8_t *)fb, (uint32_t)strlen(fb), got, 4), 3);
	assert_memory_equal(got, ids, 3 * sizeof(*ids));
	nfs4_stab_file_others(&t, (const uint8_t *)fb, (uint32_t)strlen(fb), cl, &open, &write);
	assert_true(open && !write);
	nfs4_stab_file_others(&t, (const uint8_t *)fb, (uint32_t)strlen(fb), CL3, &open, &write);
	assert_true(open && write);
}

/* One cycle of client cl (i varies its owners and files, shared with the other clients). */
static void soak_client(uint64_t cl, unsigned i)
{
	char o40[16], o41[16], fa[16], fb[16];
	struct nfs4_open_res r, ru;
	struct nfs4_lock_ref ref;
	struct nfs4_stateid s40, out;
	struct nfs4_seqid_replay rp;
	uint64_t ids[3];
	uint32_t st = 0;

	snprintf(o40, sizeof(o40), "o40-%u", i % 7);
	snprintf(o41, sizeof(o41), "o41-%u", i % 5);
	snprintf(fa, sizeof(fa), "a%u", i % 13);
	snprintf(fb, sizeof(fb), "b%u", i % 11);
	soak_v40(cl, o40, fa, &s40);
	/* 4.1: FREE_STATEID takes a lock stateid and its owner; CLOSE the other two. */
	assert_int_equal(do_open(cl, 1, o41, fb, NFS4_SHARE_ACCESS_BOTH, 0, &r), NFS4_OK);
	for (unsigned k = 0; k < 3; k++) {
		assert_int_equal(lock_new(cl, &r.sid, (const char *[]){ "lx", "ly", "lz" }[k], fb, &ref), NFS4_OK);
		ids[2 - k] = ref.owner_id; /* newest first */
	}
	soak_file_views(cl, fb, ids);
	assert_int_equal(nfs4_stab_free(&t, cl, &ref.sid), NFS4_OK);
	assert_int_equal(nfs4_stab_close(&t, &r.sid, SQ(1, r.sid), &out), NFS4_OK);
	/* RFC 7530 §16.18.5: an unconfirmed 4.0 owner's out-of-sequence OPEN drops its state. */
	assert_int_equal(do_open(cl, 0, "u", fb, NFS4_SHARE_ACCESS_READ, 0, &ru), NFS4_OK);
	nfs4_stab_seqid_done(&t, cl, (const uint8_t *)"u", 1, 5, NFS4_OK, NULL, 0);
	assert_int_equal(nfs4_stab_seqid_check(&t, cl, (const uint8_t *)"u", 1, 9, &rp, &st), NFS4_SEQID_NEW);
	assert_int_not_equal(nfs4_stab_test(&t, cl, &ru.sid), NFS4_OK); /* BAD_STATEID, or EXPIRED after an expiry purge */
	/* Left for the purge: the 4.0 open with a 4.0 lock owner (which outlives its
	 * lock stateid, RFC 7530 §16.37), a 4.1 open with a lock stateid. */
	assert_int_equal(lock_new_minor(cl, 0, &s40, "lq", fa, &ref), NFS4_OK);
	assert_int_equal(do_open(cl, 1, o41, fa, NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	assert_int_equal(lock_new(cl, &r.sid, "lp", fa, &ref), NFS4_OK);
	assert_int_equal(nfs4_stab_test(&t, cl, &s40), NFS4_OK);
}

/* Every path that frees a record, many times over, beside a client whose
 * opens of the same files stay (so records leave the middle of lists). */
static void test_soak(void **state)
{
	struct nfs4_open_res r;
	char key[16];
	unsigned bg;

	(void)state;
	for (unsigned k = 0; k < 24; k++) {
		snprintf(key, sizeof(key), "%c%u", k % 2 ? 'b' : 'a', k / 2);
		assert_int_equal(do_open(CL3, 1, k % 3 ? "bg1" : "bg2", key, NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
	}
	bg = nfs4_stab_client_count(&t, CL3);
	for (unsigned i = 0; i < SOAK_CYCLES; i++) {
		soak_client(CL1, i);
		soak_client(CL2, i + 3);
		nfs4_stab_purge_client(&t, CL1, i % 2 == 0 ? NFS4_PURGE_EXPIRED : NFS4_PURGE_GONE);
		nfs4_stab_purge_client(&t, CL2, NFS4_PURGE_GONE);
		assert_int_equal(nfs4_stab_client_count(&t, CL1) + nfs4_stab_client_count(&t, CL2), 0);
		assert_int_equal(nfs4_stab_client_count(&t, CL3), bg);
		assert_int_equal(t.nstates, bg);
		assert_int_equal(unlocks, (int)((i + 1) * 2 * SOAK_LOCKS));
	}
	nfs4_stab_purge_client(&t, CL3, NFS4_PURGE_GONE);
	assert_tab_empty();
}

/* An export no longer served: every client's opens and locks on its files go (keys starting "x"),
 * the open files are given back, the locks released; other files' state stays. */
static bool key_is_x(const uint8_t *key, uint32_t len, void *arg)
{
	(void)arg;
	return len > 0 && key[0] == 'x';
}

static void test_purge_files(void **state)
{
	struct nfs4_open_res x1, x2, y, x3;
	struct nfs4_lock_ref ref;
	struct nfs4_stab_counts c;
	struct nfs4_sid_io io;

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o", "x1", NFS4_SHARE_ACCESS_BOTH, 0, &x1), NFS4_OK);
	assert_int_equal(do_open(CL2, 1, "o", "x1", NFS4_SHARE_ACCESS_READ, 0, &x2), NFS4_OK);
	assert_int_equal(do_open(CL1, 1, "o", "x2", NFS4_SHARE_ACCESS_READ, 0, &x3), NFS4_OK);
	assert_int_equal(do_open(CL1, 1, "o", "y", NFS4_SHARE_ACCESS_READ, 0, &y), NFS4_OK);
	assert_int_equal(lock_new(CL1, &x1.sid, "L", "x1", &ref), NFS4_OK);
	unlocks = 0;
	assert_int_equal(nfs4_stab_purge_files(&t, key_is_x, NULL), 3);
	assert_int_equal(unlocks, 1); /* the lock's owner released on x1 */
	nfs4_stab_counts(&t, &c);
	assert_int_equal(c.files, 1);
	assert_int_equal(c.opens, 1);
	assert_int_equal(c.lock_states, 0);
	/* RFC 8881 §15.1.5.1: revoked by the administrator, not unknown */
	assert_int_equal(nfs4_stab_check_io(&t, CL1, &x1.sid, 1, (const uint8_t *)"x1", 2, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_ADMIN_REVOKED);
	assert_int_equal(nfs4_stab_check_io(&t, CL1, &y.sid, 1, (const uint8_t *)"y", 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4_OK);
	fake_put(NULL, io.file);
	assert_int_equal(nfs4_stab_purge_files(&t, key_is_x, NULL), 0);
	assert_int_equal(c.revoked, 4); /* three opens and the lock stateid */
	/* Another client's revoked stateid is still not the caller's (§8.2.2). */
	assert_int_equal(nfs4_stab_test(&t, CL1, &x2.sid), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_test(&t, CL2, &x2.sid), NFS4ERR_ADMIN_REVOKED);
	assert_int_equal(nfs4_stab_test(&t, CL1, &ref.sid), NFS4ERR_ADMIN_REVOKED);
	/* §18.46.3: SEQ4_STATUS_ADMIN_STATE_REVOKED until the client frees them (§18.38.3). */
	assert_true(nfs4_stab_admin_revoked(&t, CL1));
	assert_true(nfs4_stab_admin_revoked(&t, CL2));
	assert_false(nfs4_stab_admin_revoked(&t, CL3));
	assert_int_equal(nfs4_stab_free(&t, CL1, &x1.sid), NFS4_OK);
	assert_int_equal(nfs4_stab_free(&t, CL1, &x3.sid), NFS4_OK);
	assert_true(nfs4_stab_admin_revoked(&t, CL1));
	assert_int_equal(nfs4_stab_free(&t, CL1, &ref.sid), NFS4_OK);
	assert_false(nfs4_stab_admin_revoked(&t, CL1));
	assert_int_equal(nfs4_stab_test(&t, CL1, &x1.sid), NFS4ERR_BAD_STATEID); /* forgotten */
	assert_int_equal(nfs4_stab_free(&t, CL1, &x1.sid), NFS4ERR_BAD_STATEID);
	/* A client's purge takes its entries with it. */
	nfs4_stab_purge_client(&t, CL2, NFS4_PURGE_GONE);
	nfs4_stab_counts(&t, &c);
	assert_int_equal(c.revoked, 0);
	assert_false(nfs4_stab_admin_revoked(&t, CL2));
}

/* The record of revoked stateids is bounded: the oldest gives way, and its client's count with it. */
static void test_revoked_bound(void **state)
{
	struct nfs4_open_res first, r;
	struct nfs4_stab_counts c;
	char key[16];

	(void)state;
	assert_int_equal(do_open(CL1, 1, "o", "x0", NFS4_SHARE_ACCESS_READ, 0, &first), NFS4_OK);
	assert_int_equal(nfs4_stab_purge_files(&t, key_is_x, NULL), 1);
	for (unsigned i = 1; i <= NFS4_STAB_REVOKED_MAX; i++) {
		snprintf(key, sizeof(key), "x%u", i);
		assert_int_equal(do_open(CL2, 1, "o", key, NFS4_SHARE_ACCESS_READ, 0, &r), NFS4_OK);
		assert_int_equal(nfs4_stab_purge_files(&t, key_is_x, NULL), 1);
	}
	nfs4_stab_counts(&t, &c);
	assert_int_equal(c.revoked, NFS4_STAB_REVOKED_MAX);
	assert_false(nfs4_stab_admin_revoked(&t, CL1)); /* pushed out */
	assert_int_equal(nfs4_stab_test(&t, CL1, &first.sid), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_stab_test(&t, CL2, &r.sid), NFS4ERR_ADMIN_REVOKED);
}

/* rnfsctl client revoke: the client's stateids answer ADMIN_REVOKED (RFC 7530 §13.1.5.1), an
 * expired client's EXPIRED. */
static void test_revoked_client(void **state)
{
	struct nfs4_open_res a, b;
	struct nfs4_sid_io io;

	(void)state;
	assert_int_equal(do_open(CL1, 0, "o", "a", NFS4_SHARE_ACCESS_READ, 0, &a), NFS4_OK);
	assert_int_equal(do_open(CL2, 0, "o", "b", NFS4_SHARE_ACCESS_READ, 0, &b), NFS4_OK);
	nfs4_stab_purge_client(&t, CL1, NFS4_PURGE_REVOKED);
	nfs4_stab_purge_client(&t, CL2, NFS4_PURGE_EXPIRED);
	assert_int_equal(nfs4_stab_check_io(&t, CL1, &a.sid, 0, (const uint8_t *)"a", 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_ADMIN_REVOKED);
	assert_int_equal(nfs4_stab_check_io(&t, CL2, &b.sid, 0, (const uint8_t *)"b", 1, NFS4_SHARE_ACCESS_READ, &io),
			 NFS4ERR_EXPIRED);
	/* nfs4_stab_gone: the same verdict for any of the client's stateids (its delegations'), none
	 * for another client's, nor for a client whose state is still there. */
	struct nfs4_stateid d = a.sid;

	d.other[8] |= 0x80; /* a delegation's counter (NFS4_STAB_DELEG_BIT) */
	assert_int_equal(nfs4_stab_gone(&t, CL1, &d), NFS4ERR_ADMIN_REVOKED);
	assert_int_equal(nfs4_stab_gone(&t, CL2, &b.sid), NFS4ERR_EXPIRED);
	assert_int_equal(nfs4_stab_gone(&t, CL2, &d), 0);
	assert_int_equal(do_open(CL3, 0, "o", "c", NFS4_SHARE_ACCESS_READ, 0, &a), NFS4_OK);
	assert_int_equal(nfs4_stab_gone(&t, CL3, &a.sid), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test_setup_teardown(test_open_upgrade, setup, teardown),
		cmocka_unit_test_setup_teardown(test_share_deny, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_io, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v40_confirm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_downgrade_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seqid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seqid_close_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seqid_unconfirmed_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_test_free, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_descriptor_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_seqid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_soak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_purge_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoked_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoked_client, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
