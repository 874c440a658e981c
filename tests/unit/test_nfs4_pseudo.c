/*
 * test_nfs4_pseudo.c - the pseudo file system's namespace
 * (nfs/v4/ops/nfs4_pseudo.c): what each path is for a client (pseudo
 * directory, admitted export, nothing), exports the client is not admitted
 * to staying invisible (also as pseudo directories above them), LOOKUP and
 * LOOKUPP steps, ids back to paths, directory entries (once each, in
 * export order, an export and a deeper export under one component), an
 * export at "/", and no export at all; a pseudo directory's security
 * flavors (those of the admitted exports beneath it, in order, once each).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/ops/nfs4_pseudo.h"

static const struct nfs4_pseudo_exp exps[] = {
	{ "/srv/data", true },
	{ "/srv/other", false },
	{ "/export/a/b", true },
	{ "/home", true },
	{ "/hidden/deep/x", false },
};
#define NEXP (sizeof(exps) / sizeof(exps[0]))

static void test_classify(void **state)
{
	unsigned idx = 99;

	(void)state;
	assert_int_equal(nfs4_pseudo_classify(exps, NEXP, "/", &idx), NFS4_PSEUDO_DIR);
	assert_int_equal(nfs4_pseudo_classify(exps, NEXP, "/srv", &idx), NFS4_PSEUDO_DIR);
	assert_int_equal(nfs4_pseudo_classify(exps, NEXP, "/srv/data", &idx), NFS4_PSEUDO_EXPORT);
	assert_int_equal(idx, 0);
	assert_int_equal(nfs4_pseudo_classify(exps, NEXP, "/srv/other", &idx), NFS4_PSEUDO_NONE);
	assert_int_equal(nfs4_pseudo_classify(exps, NEXP, "/export/a", &idx), NFS4_PSEUDO_DIR);
	assert_int_equal(nfs4_pseudo_classify(exps, NEXP, "/hidden", &idx), NFS4_PSEUDO_NONE);
	assert_int_equal(nfs4_pseudo_classify(exps, NEXP, "/sr", &idx), NFS4_PSEUDO_NONE);
	assert_int_equal(nfs4_pseudo_classify(exps, NEXP, "/srv/data/sub", &idx), NFS4_PSEUDO_NONE);
	/* An export at "/" is the root itself. */
	const struct nfs4_pseudo_exp root[] = { { "/", true }, { "/srv", true } };
	assert_int_equal(nfs4_pseudo_classify(root, 2, "/", &idx), NFS4_PSEUDO_EXPORT);
	assert_int_equal(idx, 0);
	/* No export admitted: an empty root. */
	assert_int_equal(nfs4_pseudo_classify(exps + 1, 1, "/", &idx), NFS4_PSEUDO_DIR);
	assert_int_equal(nfs4_pseudo_classify(exps + 1, 1, "/srv", &idx), NFS4_PSEUDO_NONE);
}

static void test_lookup_parent(void **state)
{
	char out[NFS4_PSEUDO_PATH_MAX];
	enum nfs4_pseudo_kind kind;
	unsigned idx = 99;

	(void)state;
	assert_int_equal(nfs4_pseudo_lookup(exps, NEXP, "/", "srv", 3, out, sizeof(out), &kind, &idx), NFS4_OK);
	assert_string_equal(out, "/srv");
	assert_int_equal(kind, NFS4_PSEUDO_DIR);
	assert_int_equal(nfs4_pseudo_lookup(exps, NEXP, "/srv", "data", 4, out, sizeof(out), &kind, &idx), NFS4_OK);
	assert_string_equal(out, "/srv/data");
	assert_int_equal(kind, NFS4_PSEUDO_EXPORT);
	assert_int_equal(idx, 0);
	assert_int_equal(nfs4_pseudo_lookup(exps, NEXP, "/srv", "other", 5, out, sizeof(out), &kind, &idx),
			 NFS4ERR_NOENT);
	assert_int_equal(nfs4_pseudo_lookup(exps, NEXP, "/", "hidden", 6, out, sizeof(out), &kind, &idx),
			 NFS4ERR_NOENT);
	/* The name's length, not a NUL, ends it. */
	assert_int_equal(nfs4_pseudo_lookup(exps, NEXP, "/", "homework", 4, out, sizeof(out), &kind, &idx), NFS4_OK);
	assert_string_equal(out, "/home");
	assert_int_equal(nfs4_pseudo_lookup(exps, NEXP, "/srv", "data", 4, out, 9, &kind, &idx), NFS4ERR_NAMETOOLONG);
	nfs4_pseudo_parent("/srv/data", out, sizeof(out));
	assert_string_equal(out, "/srv");
	nfs4_pseudo_parent(out, out, sizeof(out));
	assert_string_equal(out, "/");
	nfs4_pseudo_parent(out, out, sizeof(out));
	assert_string_equal(out, "/");
}

static void test_find(void **state)
{
	char out[NFS4_PSEUDO_PATH_MAX];

	(void)state;
	assert_true(nfs4_pseudo_find(exps, NEXP, nfs4_pseudo_id("/"), out, sizeof(out)));
	assert_string_equal(out, "/");
	assert_true(nfs4_pseudo_find(exps, NEXP, nfs4_pseudo_id("/export/a"), out, sizeof(out)));
	assert_string_equal(out, "/export/a");
	/* Not pseudo directories for this client: a hidden one, an export, nothing. */
	assert_false(nfs4_pseudo_find(exps, NEXP, nfs4_pseudo_id("/hidden/deep"), out, sizeof(out)));
	assert_false(nfs4_pseudo_find(exps, NEXP, nfs4_pseudo_id("/srv/data"), out, sizeof(out)));
	assert_false(nfs4_pseudo_find(exps, NEXP, 12345, out, sizeof(out)));
	assert_true(nfs4_pseudo_id("/a") != nfs4_pseudo_id("/b"));
}

struct seen {
	char names[8][64];
	enum nfs4_pseudo_kind kinds[8];
	unsigned idx[8], n, stop_after;
};

static bool collect(void *arg, const char *name, uint32_t len, enum nfs4_pseudo_kind kind, unsigned idx)
{
	struct seen *s = arg;

	snprintf(s->names[s->n], sizeof(s->names[0]), "%.*s", (int)len, name);
	s->kinds[s->n] = kind;
	s->idx[s->n] = idx;
	s->n++;
	return s->n != s->stop_after;
}

static void test_children(void **state)
{
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(nfs4_pseudo_children(exps, NEXP, "/", collect, &s), 3);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.names[0], "srv");
	assert_int_equal(s.kinds[0], NFS4_PSEUDO_DIR);
	assert_string_equal(s.names[1], "export");
	assert_string_equal(s.names[2], "home");
	assert_int_equal(s.kinds[2], NFS4_PSEUDO_EXPORT);
	assert_int_equal(s.idx[2], 3);
	memset(&s, 0, sizeof(s));
	assert_int_equal(nfs4_pseudo_children(exps, NEXP, "/srv", collect, &s), 1);
	assert_string_equal(s.names[0], "data");
	/* A deeper export listed first, then the export above it: one entry, the export. */
	const struct nfs4_pseudo_exp nested[] = { { "/x/a/b", true }, { "/x/a", true }, { "/x/c", true } };
	memset(&s, 0, sizeof(s));
	assert_int_equal(nfs4_pseudo_children(nested, 3, "/x", collect, &s), 2);
	assert_string_equal(s.names[0], "a");
	assert_int_equal(s.kinds[0], NFS4_PSEUDO_EXPORT);
	assert_int_equal(s.idx[0], 1);
	/* fn may stop the walk. */
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;
	assert_int_equal(nfs4_pseudo_children(exps, NEXP, "/", collect, &s), 1);
	/* Nothing admitted: no entries. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(nfs4_pseudo_children(exps + 1, 1, "/", collect, &s), 0);
}

/* RFC 8881 §2.6.3.1.1.3: a pseudo directory takes the flavors of the admitted exports beneath it. */
static void test_sec(void **state)
{
	/* bit numbers: 0 none, 1 sys, 2 krb5, 3 krb5i, 4 krb5p */
	static const struct nfs4_pseudo_exp v[] = {
		{ "/srv/k/inner", true, { 2, { 2, 3 } } },   /* sec=krb5:krb5i */
		{ "/srv/data", true, { 2, { 1, 4 } } },      /* sec=sys:krb5p */
		{ "/srv/hidden", false, { 1, { 0 } } },      /* not this client's */
		{ "/home", true, { 3, { 4, 1, 2 } } },       /* sec=krb5p:sys:krb5 */
	};
	struct nfs4_sec_list l;

	(void)state;
	nfs4_pseudo_sec(v, 4, "/srv/k", &l);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.bit[0], 2);
	assert_int_equal(l.bit[1], 3);
	assert_false(nfs4_sec_has(&l, 1)); /* AUTH_SYS cannot walk towards a krb5-only export */
	/* the union in export order, each once; a hidden export adds nothing */
	nfs4_pseudo_sec(v, 4, "/srv", &l);
	assert_int_equal(l.n, 4);
	assert_memory_equal(l.bit, ((uint8_t[]){ 2, 3, 1, 4 }), 4);
	assert_false(nfs4_sec_has(&l, 0));
	nfs4_pseudo_sec(v, 4, "/", &l);
	assert_int_equal(l.n, 4);
	assert_memory_equal(l.bit, ((uint8_t[]){ 2, 3, 1, 4 }), 4);
	/* the export itself is not beneath itself; nothing beneath: empty */
	nfs4_pseudo_sec(v, 4, "/home", &l);
	assert_int_equal(l.n, 0);
	nfs4_pseudo_sec(v + 2, 1, "/", &l);
	assert_int_equal(l.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_lookup_parent),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_children),
		cmocka_unit_test(test_sec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
