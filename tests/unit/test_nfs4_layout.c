/*
 * test_nfs4_layout.c - the pNFS layout state table (nfs/v4/state/nfs4_layout.c):
 * one stateid per client per file, its seqid rules (RFC 8881 §12.5.3),
 * errata 3208's non-layout stateid, LAYOUTRETURN of FILE by iomode, FSID
 * and ALL, return-on-close, whose stateid, the purge with the client, the
 * bounds; and a soak of thousands of get/return cycles over many clients
 * and files that must leave the table empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs/v4/state/nfs4_layout.h"
#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/xdr/nfs4_layout_xdr.h"

#define BOOT 0x5eed0001u
#define CLIENT(n) (((uint64_t)BOOT << 32) | (n))

static struct nfs4_ltab T;

static int setup(void **state)
{
	(void)state;
	nfs4_ltab_init(&T, BOOT, 0, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nfs4_ltab_release(&T);
	assert_int_equal(T.count, 0);
	assert_int_equal(T.nclients, 0);
	return 0;
}

static struct nfs4_lfile file(unsigned n, uint32_t fsid)
{
	static uint8_t keys[64][16];
	struct nfs4_lfile f;

	snprintf((char *)keys[n % 64], sizeof(keys[0]), "file-%u", n);
	f.key = keys[n % 64];
	f.len = (uint32_t)strlen((char *)f.key);
	f.fsid = fsid;
	return f;
}

static void test_get_and_seqid(void **state)
{
	struct nfs4_lfile f = file(1, 7);
	struct nfs4_stateid a, b, old, newer;
	uint32_t io;

	(void)state;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_READ, true, &a), NFS4_OK);
	assert_int_equal(a.seqid, 1);
	assert_true(nfs4_ltab_is_layout(&a));
	assert_int_equal(T.count, 1);
	/* Its own stateid: the same other, seqid + 1, RW added. */
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, &a, LAYOUTIOMODE4_RW, true, &b), NFS4_OK);
	assert_int_equal(b.seqid, 2);
	assert_memory_equal(a.other, b.other, sizeof(a.other));
	assert_int_equal(nfs4_ltab_check(&T, CLIENT(1), &f, &b, &io), NFS4_OK);
	assert_int_equal(io, NFS4_LAYOUT_IO_READ | NFS4_LAYOUT_IO_RW);
	/* An older seqid is accepted (parallel layout operations), a newer one is not. */
	old = a;
	assert_int_equal(nfs4_ltab_check(&T, CLIENT(1), &f, &old, &io), NFS4_OK);
	newer = b;
	newer.seqid = 3;
	assert_int_equal(nfs4_ltab_check(&T, CLIENT(1), &f, &newer, &io), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, &newer, LAYOUTIOMODE4_RW, true, &b), NFS4ERR_BAD_STATEID);
	/* Another boot's is stale; an open stateid is not a layout stateid. */
	newer = b;
	newer.other[0] ^= 1;
	assert_int_equal(nfs4_ltab_check(&T, CLIENT(1), &f, &newer, &io), NFS4ERR_STALE_STATEID);
	newer = b;
	newer.other[8] = 0;
	assert_false(nfs4_ltab_is_layout(&newer));
	assert_int_equal(nfs4_ltab_check(&T, CLIENT(1), &f, &newer, &io), NFS4ERR_BAD_STATEID);
	/* Errata 3208: a non-layout stateid again: the layouts are forgotten, the stateid kept. */
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_READ, true, &b), NFS4_OK);
	assert_int_equal(b.seqid, 3);
	assert_memory_equal(a.other, b.other, sizeof(a.other));
	assert_int_equal(nfs4_ltab_check(&T, CLIENT(1), &f, &b, &io), NFS4_OK);
	assert_int_equal(io, NFS4_LAYOUT_IO_READ);
	assert_int_equal(T.count, 1);
}

static void test_whose(void **state)
{
	struct nfs4_lfile f = file(1, 7), g = file(2, 7);
	struct nfs4_stateid a, b;
	uint32_t io;
	bool has;

	(void)state;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, false, &a), NFS4_OK);
	/* RFC 8881 §8.2.2: another client's stateid is unknown to this one; §12.5.2: per file. */
	assert_int_equal(nfs4_ltab_check(&T, CLIENT(2), &f, &a, &io), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_ltab_return_file(&T, CLIENT(2), &f, &a, LAYOUTIOMODE4_ANY, &has, &b),
			 NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_ltab_check(&T, CLIENT(1), &g, &a, &io), NFS4ERR_BAD_STATEID);
	/* Another client's layout of the same file is its own record and stateid. */
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(2), &f, NULL, LAYOUTIOMODE4_RW, false, &b), NFS4_OK);
	assert_memory_not_equal(a.other, b.other, sizeof(a.other));
	assert_int_equal(T.count, 2);
	assert_int_equal(T.nclients, 2);
	assert_int_equal(nfs4_ltab_purge_client(&T, CLIENT(2)), 1);
	assert_int_equal(nfs4_ltab_client_count(&T, CLIENT(2)), 0);
	assert_int_equal(nfs4_ltab_client_count(&T, CLIENT(1)), 1);
}

static void test_return_file(void **state)
{
	struct nfs4_lfile f = file(1, 7);
	struct nfs4_stateid a, b, c;
	bool has;

	(void)state;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_READ, true, &a), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, &a, LAYOUTIOMODE4_RW, true, &a), NFS4_OK);
	/* Returning RW leaves READ: the stateid stays, seqid + 1. */
	assert_int_equal(nfs4_ltab_return_file(&T, CLIENT(1), &f, &a, LAYOUTIOMODE4_RW, &has, &b), NFS4_OK);
	assert_true(has);
	assert_int_equal(b.seqid, a.seqid + 1);
	/* Returning READ leaves none: no stateid, and the old one is gone. */
	assert_int_equal(nfs4_ltab_return_file(&T, CLIENT(1), &f, &b, LAYOUTIOMODE4_READ, &has, &c), NFS4_OK);
	assert_false(has);
	assert_int_equal(T.count, 0);
	assert_int_equal(T.nclients, 0);
	assert_int_equal(nfs4_ltab_return_file(&T, CLIENT(1), &f, &b, LAYOUTIOMODE4_ANY, &has, &c),
			 NFS4ERR_BAD_STATEID);
	/* ANY returns both. */
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &a), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, &a, LAYOUTIOMODE4_READ, true, &a), NFS4_OK);
	assert_int_equal(nfs4_ltab_return_file(&T, CLIENT(1), &f, &a, LAYOUTIOMODE4_ANY, &has, &c), NFS4_OK);
	assert_false(has);
	assert_int_equal(T.count, 0);
	assert_int_equal(T.returned, 3);
}

static void test_return_fsid_all_close(void **state)
{
	struct nfs4_lfile f1 = file(1, 7), f2 = file(2, 7), f3 = file(3, 8), f4 = file(4, 8);
	struct nfs4_stateid s;

	(void)state;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f1, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f2, NULL, LAYOUTIOMODE4_RW, false, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f3, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f4, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(2), &f1, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	/* Return-on-close: only the roc layout of that client's file. */
	assert_int_equal(nfs4_ltab_close(&T, CLIENT(1), f2.key, f2.len), 0);
	assert_int_equal(nfs4_ltab_close(&T, CLIENT(1), f1.key, f1.len), 1);
	assert_int_equal(nfs4_ltab_client_count(&T, CLIENT(2)), 1);
	/* FSID: the client's layouts of that export only. */
	assert_int_equal(nfs4_ltab_return_fsid(&T, CLIENT(1), 8), 2);
	assert_int_equal(nfs4_ltab_client_count(&T, CLIENT(1)), 1);
	assert_int_equal(nfs4_ltab_return_fsid(&T, CLIENT(1), 8), 0);
	/* ALL: every layout of the client, none of the others'. */
	assert_int_equal(nfs4_ltab_return_all(&T, CLIENT(1)), 1);
	assert_int_equal(nfs4_ltab_return_all(&T, CLIENT(1)), 0);
	assert_int_equal(T.count, 1);
	assert_int_equal(nfs4_ltab_purge_client(&T, CLIENT(2)), 1);
	assert_int_equal(T.count, 0);
	assert_int_equal(T.nclients, 0);
}

static void test_bounds(void **state)
{
	struct nfs4_stateid s;
	struct nfs4_lfile f;
	uint8_t key[8];

	(void)state;
	nfs4_ltab_release(&T);
	nfs4_ltab_init(&T, BOOT, 10, 4);
	f.key = key;
	f.len = sizeof(key);
	f.fsid = 1;
	for (unsigned i = 0; i < 6; i++) {
		memset(key, (int)i, sizeof(key));
		assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &s),
				 i < 4 ? NFS4_OK : NFS4ERR_LAYOUTTRYLATER);
	}
	/* A file already held takes no record: granted again past the bound. */
	memset(key, 0, sizeof(key));
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_READ, true, &s), NFS4_OK);
	for (unsigned i = 0; i < 8; i++) {
		memset(key, (int)i, sizeof(key));
		assert_int_equal(nfs4_ltab_get(&T, CLIENT(2 + i / 4), &f, NULL, LAYOUTIOMODE4_RW, true, &s),
				 i < 6 ? NFS4_OK : NFS4ERR_LAYOUTTRYLATER);
	}
	assert_int_equal(T.count, 10);
	/* A key longer than a handle is refused as a bound. */
	static uint8_t longkey[NFS4_LAYOUT_FKEY_MAX + 1];
	f.key = longkey;
	f.len = sizeof(longkey);
	assert_int_equal(nfs4_ltab_purge_client(&T, CLIENT(1)), 4);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4ERR_LAYOUTTRYLATER);
	f.len = NFS4_LAYOUT_FKEY_MAX;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
}

/* Thousands of get/return cycles, 50 clients x 64 files, every way a layout ends: empty after. */
static void test_soak(void **state)
{
	enum { CLIENTS = 50, FILES = 64, ROUNDS = 40 };
	static struct nfs4_stateid sid[CLIENTS][FILES];
	static bool held[CLIENTS][FILES];
	unsigned cycles = 0;
	uint32_t rnd = 12345;

	(void)state;
	for (unsigned round = 0; round < ROUNDS; round++) {
		for (unsigned c = 0; c < CLIENTS; c++) {
			for (unsigned i = 0; i < FILES; i++) {
				struct nfs4_lfile f = file(i, i % 3);
				bool has;

				rnd = rnd * 1103515245u + 12345u;
				assert_int_equal(nfs4_ltab_get(&T, CLIENT(c), &f, held[c][i] ? &sid[c][i] : NULL,
							       (rnd >> 16) & 1 ? LAYOUTIOMODE4_RW : LAYOUTIOMODE4_READ,
							       true, &sid[c][i]), NFS4_OK);
				held[c][i] = true;
				cycles++;
				switch ((rnd >> 20) % 4) {
				case 0:
					assert_int_equal(nfs4_ltab_return_file(&T, CLIENT(c), &f, &sid[c][i],
									       LAYOUTIOMODE4_ANY, &has, &sid[c][i]),
							 NFS4_OK);
					assert_false(has);
					held[c][i] = false;
					break;
				case 1:
					assert_int_equal(nfs4_ltab_close(&T, CLIENT(c), f.key, f.len), 1);
					held[c][i] = false;
					break;
				default: /* kept for the next round */
					break;
				}
			}
			if (round % 7 == 6) { /* now and then a client returns an export's, or all */
				unsigned fsid = c % 3;

				nfs4_ltab_return_fsid(&T, CLIENT(c), fsid);
				for (unsigned i = 0; i < FILES; i++)
					if (i % 3 == fsid)
						held[c][i] = false;
			}
		}
		assert_true(T.count <= CLIENTS * FILES);
	}
	for (unsigned c = 0; c < CLIENTS; c++) {
		if (c % 2)
			nfs4_ltab_return_all(&T, CLIENT(c));
		else
			nfs4_ltab_purge_client(&T, CLIENT(c));
	}
	assert_true(cycles >= 100000);
	assert_int_equal(T.count, 0);
	assert_int_equal(T.nclients, 0);
	for (unsigned i = 0; i < NFS4_LAYOUT_BUCKETS; i++) {
		assert_true(list_empty(&T.by_sid[i]));
		assert_true(list_empty(&T.by_file[i]));
		assert_true(list_empty(&T.clients[i]));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_and_seqid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_whose, setup, teardown),
		cmocka_unit_test_setup_teardown(test_return_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_return_fsid_all_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_soak, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
