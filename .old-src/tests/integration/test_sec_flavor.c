/*
 * test_sec_flavor.c - the export's sec= flavor list is enforced (issue 8,
 * defect 6), as knfsd's check_nfsd_access() does:
 *  - sec=sys (the default): MNT with AUTH_NONE is refused with AUTH_ERROR /
 *    AUTH_TOOWEAK (RFC 5531 §9); every NFS call with AUTH_NONE on a handle of
 *    the export gets NFS3ERR_ACCES and changes nothing; AUTH_SYS works;
 *  - sec=none: AUTH_NONE works (as the anonymous user); AUTH_SYS NFS calls get
 *    NFS3ERR_ACCES; MNT with AUTH_SYS is still answered (the Linux client
 *    always sends MNT with AUTH_SYS) and lists only AUTH_NONE;
 *  - sec=sys:none: both work; MNT lists both;
 *  - NULL needs no flavor of any export.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AUTH_ERROR_TOOWEAK 5

static struct hx_env env;

struct mnt_result {
	int status;           /* mountstat3, or -1: no accepted reply */
	uint32_t reply_stat;  /* 1: MSG_DENIED */
	uint32_t auth_stat;   /* if denied with AUTH_ERROR */
	uint8_t fh[64];
	uint32_t fh_len;
	uint32_t flavors[4];
	uint32_t nflavors;
};

/* MNT path with AUTH_NONE (none) or AUTH_SYS root. */
static void mnt(struct raw_conn *c, bool none, const char *path, struct mnt_result *m)
{
	static uint32_t xid = 0x5ec00000;
	struct raw_reply r;
	struct xb a;
	const uint8_t *p;
	enum raw_recv_result rc;

	memset(m, 0, sizeof(*m));
	m->status = -1;
	xb_init(&a);
	xb_string(&a, path);
	rc = none ? raw_call_none(c, ++xid, RAW_MOUNT_PROG, 3, 1, a.p, a.len, &r)
		  : raw_call(c, ++xid, RAW_MOUNT_PROG, 3, 1, a.p, a.len, &r);
	xb_free(&a);
	if (rc != RAW_RECV_OK)
		return;
	m->reply_stat = r.reply_stat;
	m->auth_stat = r.reject_stat == 1 ? r.auth_stat : 0;
	if (r.reply_stat == 0 && r.accept_stat == 0) {
		m->status = (int)xd_u32(&r.body);
		if (m->status == 0 && (p = xd_opaque(&r.body, &m->fh_len, 64)) != NULL) {
			memcpy(m->fh, p, m->fh_len);
			m->nflavors = xd_u32(&r.body);
			for (uint32_t i = 0; i < m->nflavors && i < 4; i++)
				m->flavors[i] = xd_u32(&r.body);
		}
	}
	raw_reply_free(&r);
}

/* An NFSv3 call on fh (+ more args) with AUTH_NONE or AUTH_SYS root: nfsstat3, or -1. */
static int nfs_call(struct raw_conn *c, bool none, uint32_t proc, const struct mnt_result *m,
		    const struct xb *more)
{
	static uint32_t xid = 0x5ec10000;
	struct raw_reply r;
	struct xb a;
	enum raw_recv_result rc;
	int st = -1;

	xb_init(&a);
	xb_opaque(&a, m->fh, m->fh_len);
	if (more)
		xb_raw(&a, more->p, more->len);
	rc = none ? raw_call_none(c, ++xid, RAW_NFS_PROG, 3, proc, a.p, a.len, &r)
		  : raw_call(c, ++xid, RAW_NFS_PROG, 3, proc, a.p, a.len, &r);
	xb_free(&a);
	if (rc == RAW_RECV_OK && r.reply_stat == 0 && r.accept_stat == 0)
		st = (int)xd_u32(&r.body);
	if (rc == RAW_RECV_OK)
		raw_reply_free(&r);
	return st;
}

static int getattr(struct raw_conn *c, bool none, const struct mnt_result *m)
{
	return nfs_call(c, none, 1, m, NULL);
}

/* CREATE name UNCHECKED mode 0644 in the directory m. */
static int create(struct raw_conn *c, bool none, const struct mnt_result *m, const char *name)
{
	struct xb more;
	int st;

	xb_init(&more);
	xb_string(&more, name);
	xb_u32(&more, 0);     /* UNCHECKED */
	xb_u32(&more, 1);     /* set mode */
	xb_u32(&more, 0644);
	for (int i = 0; i < 5; i++)
		xb_u32(&more, 0); /* uid, gid, size, atime, mtime: don't set */
	st = nfs_call(c, none, 8, m, &more);
	xb_free(&more);
	return st;
}

static bool lists(const struct mnt_result *m, uint32_t flavor)
{
	for (uint32_t i = 0; i < m->nflavors && i < 4; i++)
		if (m->flavors[i] == flavor)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	char none_dir[PATH_MAX], both_dir[PATH_MAX];
	struct mnt_result sys_m, m;
	struct raw_conn c;
	struct raw_reply r;

	hx_begin("sec_flavor", argc, argv);
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	snprintf(none_dir, sizeof(none_dir), "%s", hx_path(&env, "none"));
	snprintf(both_dir, sizeof(both_dir), "%s", hx_path(&env, "both"));
	chmod(env.export_dir, 0777); /* so AUTH_NONE's anonymous user could create, if admitted */
	mkdir(none_dir, 0777);
	chmod(none_dir, 0777);
	mkdir(both_dir, 0777);
	chmod(both_dir, 0777);
	hx_write_exports(&env, "%s 127.0.0.1(rw,no_root_squash,insecure)\n"
			 "%s 127.0.0.1(rw,insecure,sec=none)\n"
			 "%s 127.0.0.1(rw,insecure,sec=sys:none)\n", env.export_dir, none_dir, both_dir);
	if (hx_daemon_start(&env) != 0)
		return hx_end();
	if (!CHECK(raw_connect(&c, env.port) == 0, "raw connection"))
		return hx_end();

	hx_section("NULL needs no export");
	CHECK(raw_call_none(&c, 1, RAW_NFS_PROG, 3, 0, NULL, 0, &r) == RAW_RECV_OK && r.reply_stat == 0 &&
	      r.accept_stat == 0, "NFS NULL with AUTH_NONE answered");
	raw_reply_free(&r);

	hx_section("sec=sys (default)");
	mnt(&c, false, env.export_dir, &sys_m);
	CHECK(sys_m.status == MNT3_OK, "MNT with AUTH_SYS (%s)", hx_mntstat_name(sys_m.status));
	CHECK(sys_m.nflavors == 1 && lists(&sys_m, 1), "MNT lists AUTH_SYS only (%u flavors)", sys_m.nflavors);
	mnt(&c, true, env.export_dir, &m);
	CHECK(m.reply_stat == 1 && m.auth_stat == AUTH_ERROR_TOOWEAK,
	      "MNT with AUTH_NONE: AUTH_ERROR AUTH_TOOWEAK (reply_stat %u auth_stat %u, mountstat3 %d)",
	      m.reply_stat, m.auth_stat, m.status);
	CHECK_NFS(getattr(&c, false, &sys_m), NFS3_OK, "GETATTR with AUTH_SYS");
	CHECK_NFS(getattr(&c, true, &sys_m), NFS3ERR_ACCES, "GETATTR with AUTH_NONE");
	CHECK_NFS(create(&c, true, &sys_m, "by-none"), NFS3ERR_ACCES, "CREATE with AUTH_NONE");
	CHECK(access(hx_xpath(&env, "by-none"), F_OK) != 0, "nothing created");
	CHECK_NFS(create(&c, false, &sys_m, "by-sys"), NFS3_OK, "CREATE with AUTH_SYS");

	hx_section("sec=none");
	mnt(&c, true, none_dir, &m);
	CHECK(m.status == MNT3_OK, "MNT with AUTH_NONE (%s)", hx_mntstat_name(m.status));
	CHECK(m.nflavors == 1 && lists(&m, 0), "MNT lists AUTH_NONE only (%u flavors)", m.nflavors);
	mnt(&c, false, none_dir, &m);
	CHECK(m.status == MNT3_OK, "MNT with AUTH_SYS answered, as the Linux client sends it (%s)",
	      hx_mntstat_name(m.status));
	CHECK(m.nflavors == 1 && lists(&m, 0), "... and lists AUTH_NONE only (%u flavors)", m.nflavors);
	if (m.status == MNT3_OK) {
		CHECK_NFS(getattr(&c, true, &m), NFS3_OK, "GETATTR with AUTH_NONE");
		CHECK_NFS(create(&c, true, &m, "anon"), NFS3_OK, "CREATE with AUTH_NONE");
		CHECK_NFS(getattr(&c, false, &m), NFS3ERR_ACCES, "GETATTR with AUTH_SYS");
	}

	hx_section("sec=sys:none");
	mnt(&c, true, both_dir, &m);
	CHECK(m.status == MNT3_OK, "MNT with AUTH_NONE (%s)", hx_mntstat_name(m.status));
	mnt(&c, false, both_dir, &m);
	CHECK(m.status == MNT3_OK, "MNT with AUTH_SYS (%s)", hx_mntstat_name(m.status));
	CHECK(m.nflavors == 2 && lists(&m, 0) && lists(&m, 1), "MNT lists both (%u flavors)", m.nflavors);
	if (m.status == MNT3_OK) {
		CHECK_NFS(getattr(&c, true, &m), NFS3_OK, "GETATTR with AUTH_NONE");
		CHECK_NFS(getattr(&c, false, &m), NFS3_OK, "GETATTR with AUTH_SYS");
	}

	raw_close(&c);
	hx_daemon_stop(&env);
	return hx_end();
}
