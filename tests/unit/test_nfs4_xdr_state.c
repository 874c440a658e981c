/*
 * test_nfs4_xdr_state.c - XDR of the NFSv4 state and I/O operations
 * (nfs/v4/xdr/nfs4_xdr_state.c): OPEN with each createhow4 and open_claim4 arm,
 * its createattrs' status kept, bad arms refused; every prefix of a valid
 * OPEN, LOCK and WRITE refused (bounds); WRITE's length against what
 * arrived and NFS4_MAX_IO; SETCLIENTID's callback strings (too long: no
 * callback path); TEST_STATEID's array bound; LOCK's two locker4 arms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/nfs4.h"
#include "nfs/v4/xdr/nfs4_xdr_state.h"
#include "tests/unit/test_nfs4_xdr_util.h"

static void owner(const char *s)
{
	xdr_enc_u64(&e, 0x100000001ull);
	put_opaque(s, (uint32_t)strlen(s));
}

/* OPEN4args head: seqid, access, deny, owner. */
static void open_head(uint32_t access)
{
	start();
	xdr_enc_u32(&e, 7);
	xdr_enc_u32(&e, access);
	xdr_enc_u32(&e, 0);
	owner("own");
}

static bool dec_open(struct nfs4_open_args *a, size_t len)
{
	struct xdr_dec d;

	memset(a, 0, sizeof(*a));
	xdr_dec_init(&d, buf, len);
	return nfs4_dec_open(&d, a) && xdr_dec_remaining(&d) == 0;
}

static void test_open_arms(void **state)
{
	struct nfs4_open_args a;

	(void)state;
	/* UNCHECKED4 with mode 0644, CLAIM_NULL "f". */
	open_head(3);
	xdr_enc_u32(&e, OPEN4_CREATE);
	xdr_enc_u32(&e, UNCHECKED4);
	xdr_enc_u32(&e, 2), xdr_enc_u32(&e, 0), xdr_enc_u32(&e, 1u << 1);
	xdr_enc_u32(&e, 4), xdr_enc_u32(&e, 0644);
	xdr_enc_u32(&e, CLAIM_NULL);
	put_opaque("f", 1);
	assert_true(dec_open(&a, xdr_enc_len(&e)));
	assert_int_equal(a.seqid, 7);
	assert_int_equal(a.createmode, UNCHECKED4);
	assert_int_equal(a.sattr_status, NFS4_OK);
	assert_true(a.attrs.sa.mask & BE_SET_MODE);
	assert_int_equal(a.attrs.sa.mode, 0644);
	assert_int_equal(a.name.len, 1);
	/* Every prefix is refused. */
	for (size_t n = 0; n < xdr_enc_len(&e); n++)
		assert_false(dec_open(&a, n));
	/* EXCLUSIVE4: a verifier; CLAIM_FH. */
	open_head(1);
	xdr_enc_u32(&e, OPEN4_CREATE);
	xdr_enc_u32(&e, EXCLUSIVE4);
	xdr_enc_fixed(&e, "verifier", 8);
	xdr_enc_u32(&e, CLAIM_FH);
	assert_true(dec_open(&a, xdr_enc_len(&e)));
	assert_memory_equal(a.verf, "verifier", 8);
	assert_int_equal(a.claim, CLAIM_FH);
	/* A settable-attribute error is kept for the operation (not BADXDR): size of a read-only attr. */
	open_head(1);
	xdr_enc_u32(&e, OPEN4_CREATE);
	xdr_enc_u32(&e, GUARDED4);
	xdr_enc_u32(&e, 1), xdr_enc_u32(&e, 1u << 3); /* change: read-only */
	xdr_enc_u32(&e, 8), xdr_enc_u64(&e, 1);
	xdr_enc_u32(&e, CLAIM_PREVIOUS);
	xdr_enc_u32(&e, 0);
	assert_true(dec_open(&a, xdr_enc_len(&e)));
	assert_int_equal(a.sattr_status, NFS4ERR_INVAL);
	assert_int_equal(a.claim, CLAIM_PREVIOUS);
	/* CLAIM_DELEGATE_CUR: stateid + name; CLAIM_DELEG_CUR_FH: stateid. */
	open_head(1);
	xdr_enc_u32(&e, OPEN4_NOCREATE);
	xdr_enc_u32(&e, CLAIM_DELEGATE_CUR);
	sid(1, 0x11);
	put_opaque("g", 1);
	assert_true(dec_open(&a, xdr_enc_len(&e)));
	open_head(1);
	xdr_enc_u32(&e, OPEN4_NOCREATE);
	xdr_enc_u32(&e, CLAIM_DELEG_CUR_FH);
	sid(1, 0x11);
	assert_true(dec_open(&a, xdr_enc_len(&e)));
	/* Unknown opentype, createmode, claim. */
	open_head(1);
	xdr_enc_u32(&e, 2);
	assert_false(dec_open(&a, xdr_enc_len(&e)));
	open_head(1);
	xdr_enc_u32(&e, OPEN4_CREATE);
	xdr_enc_u32(&e, 4);
	assert_false(dec_open(&a, xdr_enc_len(&e)));
	open_head(1);
	xdr_enc_u32(&e, OPEN4_NOCREATE);
	xdr_enc_u32(&e, 7);
	assert_false(dec_open(&a, xdr_enc_len(&e)));
}

static void test_write(void **state)
{
	struct nfs4_write_args a;
	struct xdr_dec d;

	(void)state;
	start();
	sid(1, 0x22);
	xdr_enc_u64(&e, 4096);
	xdr_enc_u32(&e, FILE_SYNC4);
	put_opaque("hello", 5);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_true(nfs4_dec_write(&d, NULL, &a));
	assert_int_equal(a.len, 5);
	assert_memory_equal(a.data, "hello", 5);
	assert_int_equal(a.stable, FILE_SYNC4);
	for (size_t n = 0; n < xdr_enc_len(&e); n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_dec_write(&d, NULL, &a));
	}
	/* A length beyond what arrived, beyond NFS4_MAX_IO; a bad stable_how4. */
	start();
	sid(1, 0x22);
	xdr_enc_u64(&e, 0);
	xdr_enc_u32(&e, UNSTABLE4);
	xdr_enc_u32(&e, 100);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(nfs4_dec_write(&d, NULL, &a));
	start();
	sid(1, 0x22);
	xdr_enc_u64(&e, 0);
	xdr_enc_u32(&e, UNSTABLE4);
	xdr_enc_u32(&e, NFS4_MAX_IO + 1);
	xdr_dec_init(&d, buf, sizeof(buf));
	assert_false(nfs4_dec_write(&d, NULL, &a));
	start();
	sid(1, 0x22);
	xdr_enc_u64(&e, 0);
	xdr_enc_u32(&e, 3);
	xdr_enc_u32(&e, 0);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(nfs4_dec_write(&d, NULL, &a));
}

static void test_setclientid(void **state)
{
	struct nfs4_setclientid_args a;
	char longaddr[NFS4_CB_ADDR_MAX + 10];
	struct xdr_dec d;

	(void)state;
	start();
	xdr_enc_fixed(&e, "verifier", 8);
	put_opaque("client", 6);
	xdr_enc_u32(&e, 0x40000000);
	put_opaque("tcp", 3);
	put_opaque("10.0.0.1.3.232", 14);
	xdr_enc_u32(&e, 9);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	memset(&a, 0, sizeof(a));
	assert_true(nfs4_dec_setclientid(&d, &a));
	assert_int_equal(a.cb.program, 0x40000000);
	assert_int_equal(a.cb.addr_len, 14);
	assert_memory_equal(a.cb.addr, "10.0.0.1.3.232", 14);
	assert_int_equal(a.cb.ident, 9);
	/* An address longer than kept: no callback path, still decoded. */
	memset(longaddr, '1', sizeof(longaddr));
	start();
	xdr_enc_fixed(&e, "verifier", 8);
	put_opaque("client", 6);
	xdr_enc_u32(&e, 1);
	put_opaque("tcp", 3);
	put_opaque(longaddr, sizeof(longaddr));
	xdr_enc_u32(&e, 9);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	memset(&a, 0, sizeof(a));
	assert_true(nfs4_dec_setclientid(&d, &a));
	assert_int_equal(a.cb.addr_len, 0);
	assert_int_equal(a.cb.netid_len, 0);
}

static void test_lock_and_test_stateid(void **state)
{
	struct nfs4_test_stateid_args ts;
	struct nfs4_lock_args la;
	struct xdr_dec d;

	(void)state;
	/* open_to_lock_owner4 */
	start();
	xdr_enc_u32(&e, WRITE_LT);
	xdr_enc_bool(&e, false);
	xdr_enc_u64(&e, 10);
	xdr_enc_u64(&e, UINT64_MAX);
	xdr_enc_bool(&e, true);
	xdr_enc_u32(&e, 3);
	sid(2, 0x33);
	xdr_enc_u32(&e, 0);
	owner("lockowner");
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	memset(&la, 0, sizeof(la));
	assert_true(nfs4_dec_lock(&d, &la));
	assert_true(la.new_lock_owner);
	assert_int_equal(la.open_seqid, 3);
	assert_int_equal(la.owner.owner_len, 9);
	for (size_t n = 0; n < xdr_enc_len(&e); n++) {
		xdr_dec_init(&d, buf, n);
		assert_false(nfs4_dec_lock(&d, &la));
	}
	/* exist_lock_owner4; a bad lock type. */
	start();
	xdr_enc_u32(&e, READ_LT);
	xdr_enc_bool(&e, false);
	xdr_enc_u64(&e, 0);
	xdr_enc_u64(&e, 1);
	xdr_enc_bool(&e, false);
	sid(2, 0x44);
	xdr_enc_u32(&e, 5);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_true(nfs4_dec_lock(&d, &la));
	assert_false(la.new_lock_owner);
	assert_int_equal(la.lock_seqid, 5);
	buf[3] = 9;
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(nfs4_dec_lock(&d, &la));
	/* TEST_STATEID: at most NFS4_TEST_STATEID_MAX. */
	start();
	xdr_enc_u32(&e, NFS4_TEST_STATEID_MAX + 1);
	for (unsigned i = 0; i <= NFS4_TEST_STATEID_MAX; i++)
		sid(i, 0x55);
	xdr_dec_init(&d, buf, xdr_enc_len(&e));
	assert_false(nfs4_dec_test_stateid(&d, &ts));
	buf[3] = 2;
	xdr_dec_init(&d, buf, 4 + 2 * 16);
	assert_true(nfs4_dec_test_stateid(&d, &ts));
	assert_int_equal(ts.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_arms),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_setclientid),
		cmocka_unit_test(test_lock_and_test_stateid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
