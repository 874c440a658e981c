/*
 * test_nfs4_layout.c - the pNFS layout state table (nfs/v4/state/nfs4_layout.c):
 * one stateid per client per file, its seqid rules (RFC 8881 §12.5.3),
 * errata 3208's non-layout stateid, LAYOUTRETURN of FILE by iomode, FSID
 * and ALL, return-on-close, whose stateid, the purge with the client, the
 * bounds; recalls (RFC 8881 §12.5.5): which records a conflict recalls,
 * RECALLCONFLICT meanwhile, the return, NOMATCHING_LAYOUT, revocation
 * after the lease with the client's flag, the export's revocation; GETDEVICELIST's
 * paging (nfs4_devlist_page); and a soak of thousands of get/return cycles over many clients
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
	f.host = NULL;
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
	f.host = NULL;
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

/* §12.5.5: a conflict recalls other clients' layouts of the file (not the caller's, not those got
 * from the caller's address), with the next seqid; LAYOUTGET meanwhile is RECALLCONFLICT; the
 * return ends the recall. */
static void test_recall_return(void **state)
{
	static const uint8_t host1[NFS4_LAYOUT_HOST_SIZE] = { [15] = 1 }, host2[NFS4_LAYOUT_HOST_SIZE] = { [15] = 2 };
	struct nfs4_lfile f = file(1, 7), g = file(2, 7);
	struct nfs4_stateid a, b, c, out;
	struct nfs4_lrecall rc[4];
	bool has;

	(void)state;
	f.host = host1;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &a), NFS4_OK);
	f.host = host2;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(2), &f, NULL, LAYOUTIOMODE4_READ, true, &b), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &g, NULL, LAYOUTIOMODE4_RW, true, &c), NFS4_OK);
	/* client 2's change: client 1's layout of f only */
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, CLIENT(2), NULL, 100, rc, 4), 1);
	assert_int_equal(rc[0].clientid, CLIENT(1));
	assert_memory_equal(rc[0].sid.other, a.other, NFS4_OTHER_SIZE);
	assert_int_equal(rc[0].sid.seqid, a.seqid + 1);
	assert_int_equal(rc[0].klen, f.len);
	assert_int_equal(T.recalling, 1);
	/* recalled once only */
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, CLIENT(2), NULL, 101, rc, 4), 0);
	/* an NFSv3 write from client 2's address (its data-server I/O) recalls nothing more */
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, 0, host2, 101, rc, 4), 0);
	assert_true(nfs4_ltab_recalling_file(&T, f.key, f.len));
	assert_false(nfs4_ltab_recalling_file(&T, g.key, g.len));
	/* §18.43.3: no layout of f meanwhile, for anyone; g is not concerned */
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, &a, LAYOUTIOMODE4_RW, true, &out), NFS4ERR_RECALLCONFLICT);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(3), &f, NULL, LAYOUTIOMODE4_READ, true, &out),
			 NFS4ERR_RECALLCONFLICT);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &g, &c, LAYOUTIOMODE4_RW, true, &out), NFS4_OK);
	/* the return with the recall's stateid ends it */
	assert_int_equal(nfs4_ltab_return_file(&T, CLIENT(1), &f, &rc[0].sid, LAYOUTIOMODE4_ANY, &has, &out), NFS4_OK);
	assert_false(has);
	assert_int_equal(T.recalling, 0);
	assert_int_equal(T.recalls, 1);
	assert_int_equal(T.recall_returned, 1);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &a), NFS4_OK);
	/* an NFSv3 change (no client, another address) recalls both; NOMATCHING_LAYOUT ends one */
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, 0, NULL, 200, rc, 1), 1);
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, 0, NULL, 200, rc + 1, 1), 1);
	assert_int_equal(T.recalling, 2);
	nfs4_ltab_recall_nomatch(&T, rc[0].clientid, &rc[0].sid);
	assert_int_equal(T.recalling, 1);
	assert_int_equal(T.recall_returned, 2);
	/* the client purged: its recall ends, not counted as returned nor revoked */
	nfs4_ltab_purge_client(&T, rc[1].clientid);
	assert_int_equal(T.recalling, 0);
	assert_int_equal(T.revoked, 0);
}

/* §12.5.5.1: a recall unanswered for a lease is revoked; the client's flag stays up a lease. */
static void test_recall_revoke(void **state)
{
	struct nfs4_lfile f = file(1, 7);
	struct nfs4_stateid a, out;
	struct nfs4_lrecall rc[2];
	bool has;

	(void)state;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &a), NFS4_OK);
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, 0, NULL, 100, rc, 2), 1);
	assert_int_equal(nfs4_ltab_expire(&T, 189, 90), 0);
	assert_false(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_int_equal(nfs4_ltab_expire(&T, 190, 90), 1);
	assert_int_equal(T.count, 0);
	assert_int_equal(T.recalling, 0);
	assert_int_equal(T.revoked, 1);
	assert_true(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_false(nfs4_ltab_client_revoked(&T, CLIENT(2)));
	assert_int_equal(nfs4_ltab_client_count(&T, CLIENT(1)), 0);
	/* the stateid is gone */
	assert_int_equal(nfs4_ltab_return_file(&T, CLIENT(1), &f, &rc[0].sid, LAYOUTIOMODE4_ANY, &has, &out),
			 NFS4ERR_BAD_STATEID);
	assert_true(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	/* the flag drops a lease later */
	assert_int_equal(nfs4_ltab_expire(&T, 280, 90), 0);
	assert_false(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_int_equal(T.revoked_clients, 0);
	assert_int_equal(T.nclients, 0);
	/* revoked again: a new LAYOUTGET with the open stateid (the client started over) drops the flag */
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &a), NFS4_OK);
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, 0, NULL, 290, rc, 2), 1);
	assert_int_equal(nfs4_ltab_expire(&T, 380, 90), 1);
	assert_true(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &a), NFS4_OK);
	assert_false(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_int_equal(T.nclients, 1);
	/* and LAYOUTRETURN ALL does too */
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, 0, NULL, 385, rc, 2), 1);
	assert_int_equal(nfs4_ltab_expire(&T, 475, 90), 1);
	assert_true(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_int_equal(nfs4_ltab_return_all(&T, CLIENT(1)), 0);
	assert_false(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_int_equal(T.nclients, 0);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &a), NFS4_OK);
	/* revoked again, then released with the flag up: teardown checks nothing is left */
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, 0, NULL, 300, rc, 2), 1);
	assert_int_equal(nfs4_ltab_expire(&T, 400, 90), 1);
	assert_true(nfs4_ltab_client_revoked(&T, CLIENT(1)));
}

/* The export went: every layout of it is revoked at once, each holder named once. */
static void test_revoke_fsid(void **state)
{
	struct nfs4_lfile f = file(1, 7), g = file(2, 7), h = file(3, 8);
	struct nfs4_stateid s;
	uint64_t clients[4];
	unsigned n;

	(void)state;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &g, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(2), &g, NULL, LAYOUTIOMODE4_READ, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(2), &h, NULL, LAYOUTIOMODE4_READ, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_revoke_fsid(&T, 7, 50, clients, 4, &n), 3);
	assert_int_equal(n, 2);
	assert_true(clients[0] != clients[1]);
	assert_int_equal(T.count, 1);
	assert_true(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_true(nfs4_ltab_client_revoked(&T, CLIENT(2)));
	/* the purge takes the flag with the client */
	nfs4_ltab_purge_client(&T, CLIENT(1));
	assert_false(nfs4_ltab_client_revoked(&T, CLIENT(1)));
	assert_int_equal(nfs4_ltab_expire(&T, 140, 90), 0);
	assert_false(nfs4_ltab_client_revoked(&T, CLIENT(2)));
	assert_int_equal(T.nclients, 1);
}

/* rnfsctl layouts' listing: every record, its client, file, iomodes and recall, up to max. */
static void test_list(void **state)
{
	static struct nfs4_lo_info l[4];
	struct nfs4_lfile f = file(1, 7), g = file(2, 8);
	struct nfs4_stateid s;
	struct nfs4_lrecall rc[1];
	unsigned n;

	(void)state;
	assert_int_equal(nfs4_ltab_list(&T, l, 4), 0);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, &s, LAYOUTIOMODE4_READ, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(2), &g, NULL, LAYOUTIOMODE4_READ, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_recall_file(&T, g.key, g.len, 0, NULL, 5, rc, 1), 1);
	n = nfs4_ltab_list(&T, l, 4);
	assert_int_equal(n, 2);
	for (unsigned i = 0; i < n; i++) {
		bool one = l[i].clientid == CLIENT(1);

		assert_int_equal(l[i].fsid, one ? 7 : 8);
		assert_int_equal(l[i].iomodes, one ? NFS4_LAYOUT_IO_READ | NFS4_LAYOUT_IO_RW : NFS4_LAYOUT_IO_READ);
		assert_int_equal(l[i].seqid, 2);
		assert_int_equal(l[i].recall_at, one ? 0 : 5);
		assert_memory_equal(l[i].key, one ? f.key : g.key, l[i].klen);
	}
	assert_int_equal(nfs4_ltab_list(&T, l, 1), 1);
}

/* GETDEVICELIST's pages (RFC 8881 §18.41.3): cookies are how many were given; the end says eof. */
static void test_devlist_page(void **state)
{
	unsigned first, count;
	bool eof;

	(void)state;
	assert_int_equal(nfs4_devlist_page(3, 0, false, 8, &first, &count, &eof), NFS4_OK);
	assert_true(first == 0 && count == 3 && eof); /* cookie 0: the verifier is not looked at */
	assert_int_equal(nfs4_devlist_page(3, 0, true, 2, &first, &count, &eof), NFS4_OK);
	assert_true(first == 0 && count == 2 && !eof);
	assert_int_equal(nfs4_devlist_page(3, 2, true, 2, &first, &count, &eof), NFS4_OK);
	assert_true(first == 2 && count == 1 && eof);
	assert_int_equal(nfs4_devlist_page(3, 3, true, 2, &first, &count, &eof), NFS4_OK);
	assert_true(count == 0 && eof);
	assert_int_equal(nfs4_devlist_page(0, 0, false, 1, &first, &count, &eof), NFS4_OK);
	assert_true(count == 0 && eof); /* a file system without devices */
	assert_int_equal(nfs4_devlist_page(3, 4, true, 2, &first, &count, &eof), NFS4ERR_BAD_COOKIE);
	assert_int_equal(nfs4_devlist_page(3, 1, false, 2, &first, &count, &eof), NFS4ERR_NOT_SAME);
	assert_int_equal(nfs4_devlist_page(3, 0, true, 0, &first, &count, &eof), NFS4ERR_INVAL);
}

/* §20.3.4: a recall answered DELAY is given again once, with the same stateid; a return or a
 * revocation takes it off. */
static void test_recall_delay(void **state)
{
	struct nfs4_lfile f = file(1, 7), g = file(2, 7);
	struct nfs4_stateid s;
	struct nfs4_lrecall rc[2], again[2];

	(void)state;
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &f, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_get(&T, CLIENT(1), &g, NULL, LAYOUTIOMODE4_RW, true, &s), NFS4_OK);
	assert_int_equal(nfs4_ltab_resend(&T, again, 2), 0);
	assert_int_equal(nfs4_ltab_recall_file(&T, f.key, f.len, 0, NULL, 10, rc, 1), 1);
	assert_int_equal(nfs4_ltab_recall_file(&T, g.key, g.len, 0, NULL, 10, rc + 1, 1), 1);
	nfs4_ltab_recall_delay(&T, CLIENT(1), &rc[0].sid);
	nfs4_ltab_recall_delay(&T, CLIENT(1), &rc[0].sid); /* twice: marked once */
	nfs4_ltab_recall_delay(&T, CLIENT(2), &rc[1].sid); /* not that client's: nothing */
	assert_int_equal(T.resends, 1);
	assert_int_equal(nfs4_ltab_resend(&T, again, 2), 1);
	assert_memory_equal(&again[0].sid, &rc[0].sid, sizeof(rc[0].sid));
	assert_int_equal(again[0].klen, f.len);
	assert_int_equal(nfs4_ltab_resend(&T, again, 2), 0);
	assert_int_equal(T.recalls, 2); /* a resend is the same recall */
	/* marked, then revoked: nothing left to send */
	nfs4_ltab_recall_delay(&T, CLIENT(1), &rc[1].sid);
	assert_int_equal(nfs4_ltab_expire(&T, 100, 90), 2);
	assert_int_equal(T.resends, 0);
	assert_int_equal(nfs4_ltab_resend(&T, again, 2), 0);
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
		cmocka_unit_test_setup_teardown(test_recall_return, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recall_revoke, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoke_fsid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recall_delay, setup, teardown),
		cmocka_unit_test(test_devlist_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
