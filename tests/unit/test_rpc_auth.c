/*
 * test_rpc_auth.c - credential and verifier decoding (rpc_auth_decode) with
 * valid, malformed, truncated and oversized input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rpc/rpc_internal.h"
#include "tests/unit/rpc_test_msg.h"

/* cred (flavor, body) + verf (flavor, body) as they follow the call header. */
static void build_auth(struct tmsg *m, uint32_t cflavor, const uint8_t *cbody, uint32_t clen,
		       uint32_t vflavor, uint32_t vlen)
{
	static const uint8_t zeros[512];
	m->n = 0;
	tmsg_u32(m, cflavor);
	tmsg_opaque(m, cbody, clen);
	tmsg_u32(m, vflavor);
	tmsg_opaque(m, zeros, vlen);
}

static int decode(const struct tmsg *m, size_t len, struct rpc_cred *cred, size_t *consumed)
{
	struct xdr_dec d;
	xdr_dec_init(&d, m->b, len);
	int r = rpc_auth_decode(&d, cred);
	if (consumed)
		*consumed = xdr_dec_pos(&d);
	return r;
}

static void test_auth_none(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	size_t used;

	build_auth(&m, RPC_AUTH_NONE, NULL, 0, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, &used), RPC_AUTH_OK);
	assert_int_equal(used, 16);
	assert_int_equal(cred.flavor, RPC_AUTH_NONE);
	assert_int_equal(cred.uid, 65534); /* never root */
	assert_int_equal(cred.gid, 65534);
	assert_int_equal(cred.ngroups, 0);
}

static void test_auth_none_body_limits(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[401] = {0};

	/* RFC 5531 §8.2: body<400>; AUTH_NONE's body content is undefined. */
	build_auth(&m, RPC_AUTH_NONE, body, 400, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_OK);
	build_auth(&m, RPC_AUTH_NONE, body, 401, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);
}

static void test_auth_sys_valid(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[512];
	char name[256];
	size_t used;

	memset(name, 'h', 255);
	name[255] = 0;
	size_t blen = tmsg_authsys(body, name, 1000, 2000, 16);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, &used), RPC_AUTH_OK);
	assert_int_equal(used, m.n);
	assert_int_equal(cred.flavor, RPC_AUTH_SYS);
	assert_int_equal(cred.uid, 1000);
	assert_int_equal(cred.gid, 2000);
	assert_int_equal(cred.ngroups, 16);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(cred.groups[i], 100 + i);

	/* Smallest: empty machine name, no groups; root stays root (squashing is NFS's job). */
	blen = tmsg_authsys(body, "", 0, 0, 0);
	assert_int_equal(blen, 20);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_OK);
	assert_int_equal(cred.uid, 0);
	assert_int_equal(cred.ngroups, 0);

	/* Machine name needing XDR padding. */
	blen = tmsg_authsys(body, "abcde", 7, 8, 1);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_OK);
	assert_int_equal(cred.uid, 7);
	assert_int_equal(cred.groups[0], 100);
}

static void test_auth_sys_machinename_too_long(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[512];
	char name[257];

	memset(name, 'h', 256);
	name[256] = 0;
	size_t blen = tmsg_authsys(body, name, 1, 1, 0);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);
	assert_int_equal(cred.uid, 65534);
}

static void test_auth_sys_too_many_gids(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[512];

	size_t blen = tmsg_authsys(body, "h", 1, 1, 17);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);

	/* A count of 2^32-1 with nothing behind it. */
	blen = tmsg_authsys(body, "h", 1, 1, 0);
	memset(body + blen - 4, 0xff, 4);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);
}

static void test_auth_sys_body_mismatch(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[512];

	/* Trailing bytes after the gids. */
	size_t blen = tmsg_authsys(body, "host", 1, 1, 2);
	memset(body + blen, 0, 4);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen + 4, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);

	/* Body shorter than its contents claim, at every length. */
	for (size_t l = 0; l < blen; l++) {
		build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)l, RPC_AUTH_NONE, 0);
		assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);
	}

	/* Machine name length larger than the body. */
	blen = tmsg_authsys(body, "host", 1, 1, 0);
	body[7] = 200;
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);
}

static void test_auth_oversized_lengths(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;

	/* Credential length 2^32-1: rejected before any arithmetic. */
	m.n = 0;
	tmsg_u32(&m, RPC_AUTH_SYS);
	tmsg_u32(&m, 0xffffffff);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);
	m.n = 0;
	tmsg_u32(&m, RPC_AUTH_NONE);
	tmsg_u32(&m, 0xfffffffd);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);

	/* Verifier over 400 bytes. */
	build_auth(&m, RPC_AUTH_NONE, NULL, 0, RPC_AUTH_NONE, 404);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADVERF);
	m.n = 8;
	tmsg_u32(&m, RPC_AUTH_NONE);
	tmsg_u32(&m, 0xffffffff);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADVERF);
}

static void test_auth_unsupported_flavor(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[40] = {0};

	/* RPCSEC_GSS (6), AUTH_DH (3), an unknown flavor: AUTH_REJECTEDCRED. */
	const uint32_t flavors[] = {2, 3, 6, 390003, 0xffffffff};
	for (size_t i = 0; i < sizeof(flavors) / sizeof(flavors[0]); i++) {
		build_auth(&m, flavors[i], body, sizeof(body), 6, 16);
		assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_REJECTEDCRED);
		assert_int_equal(cred.flavor, RPC_AUTH_NONE);
		assert_int_equal(cred.uid, 65534);
	}
}

/* RFC 9289 §4.1: the AUTH_TLS probe, empty credential body, AUTH_NONE verifier. */
static void test_auth_tls_probe_decode(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[8] = {0};

	build_auth(&m, RPC_AUTH_TLS, NULL, 0, RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_OK);
	assert_int_equal(cred.flavor, RPC_AUTH_TLS);
	assert_int_equal(cred.uid, 65534); /* nobody */
	/* A body, or a verifier other than AUTH_NONE: not a probe. */
	build_auth(&m, RPC_AUTH_TLS, body, sizeof(body), RPC_AUTH_NONE, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADCRED);
	assert_int_equal(cred.flavor, RPC_AUTH_NONE);
	build_auth(&m, RPC_AUTH_TLS, NULL, 0, RPC_AUTH_SYS, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADVERF);
}

/* The probe's answer: STARTTLS only on NULL and only when the connection may switch. */
static void test_tls_probe_decide(void **state)
{
	(void)state;
	static const struct { uint32_t proc; bool offer; enum rpc_tls_probe want; } t[] = {
		{ 0, true, RPC_TLS_PROBE_STARTTLS },
		{ 0, false, RPC_TLS_PROBE_PLAIN },    /* no TLS configured, or already TLS */
		{ 1, true, RPC_TLS_PROBE_BADCRED },   /* AUTH_TLS is for NULL only */
		{ 1, false, RPC_TLS_PROBE_BADCRED },
		{ 0xffffffffu, true, RPC_TLS_PROBE_BADCRED },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(rpc_tls_probe_decide(t[i].proc, t[i].offer), t[i].want);
}

static void test_auth_bad_verifier_flavor(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[64];

	size_t blen = tmsg_authsys(body, "h", 1, 1, 0);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_SYS, 0);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADVERF);
	build_auth(&m, RPC_AUTH_NONE, NULL, 0, 6, 8);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_BADVERF);
}

/* Every truncation point of a valid cred+verifier: BADCRED inside the
 * credential, BADVERF inside the verifier, never a read past the end. */
static void test_auth_truncated_everywhere(void **state)
{
	(void)state;
	struct tmsg m;
	struct rpc_cred cred;
	uint8_t body[512];

	size_t blen = tmsg_authsys(body, "client.example", 500, 600, 5);
	build_auth(&m, RPC_AUTH_SYS, body, (uint32_t)blen, RPC_AUTH_NONE, 8);
	size_t cred_end = 8 + blen;
	assert_int_equal(m.n, cred_end + 16);
	assert_int_equal(decode(&m, m.n, &cred, NULL), RPC_AUTH_OK);
	for (size_t l = 0; l < m.n; l++) {
		/* Heap copy of exactly l bytes so ASan catches any over-read. */
		uint8_t *copy = malloc(l ? l : 1);
		memcpy(copy, m.b, l);
		struct xdr_dec d;
		xdr_dec_init(&d, copy, l);
		int r = rpc_auth_decode(&d, &cred);
		free(copy);
		if (l < cred_end)
			assert_int_equal(r, RPC_AUTH_BADCRED);
		else
			assert_int_equal(r, RPC_AUTH_BADVERF);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_none),
		cmocka_unit_test(test_auth_none_body_limits),
		cmocka_unit_test(test_auth_sys_valid),
		cmocka_unit_test(test_auth_sys_machinename_too_long),
		cmocka_unit_test(test_auth_sys_too_many_gids),
		cmocka_unit_test(test_auth_sys_body_mismatch),
		cmocka_unit_test(test_auth_oversized_lengths),
		cmocka_unit_test(test_auth_unsupported_flavor),
		cmocka_unit_test(test_auth_tls_probe_decode),
		cmocka_unit_test(test_tls_probe_decide),
		cmocka_unit_test(test_auth_bad_verifier_flavor),
		cmocka_unit_test(test_auth_truncated_everywhere),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
