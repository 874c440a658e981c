/*
 * test_client_refused.c - client matching (exports(5), RFC 1813 §5.2.1):
 *  - an export to 192.0.2.0/24 only: MNT from 127.0.0.1 is MNT3ERR_ACCES;
 *  - a handle obtained while 127.0.0.1 was allowed is refused for NFS
 *    after a restart that exports to 192.0.2.0/24 only, and works again
 *    once 127.0.0.1 is allowed again (so the refusal was the client check,
 *    not a stale handle);
 *  - "secure" (the default): MNT and NFS from a source port >= 1024 are
 *    refused, from a reserved port accepted. Needs root for reserved ports.
 */
#include "tests/integration/harness.h"
#include "tests/integration/rawrpc.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct hx_env env;

static int raw_getattr(struct raw_conn *c, const uint8_t *fh, uint32_t len, uint32_t *accept_stat)
{
	struct raw_reply r;
	struct xb a;
	int st = -1;

	xb_init(&a);
	xb_opaque(&a, fh, len);
	*accept_stat = 0xffffffff;
	if (raw_call(c, 0x47410000u | (len & 0xffff), RAW_NFS_PROG, 3, 1, a.p, a.len, &r) == RAW_RECV_OK) {
		*accept_stat = r.reply_stat == 0 ? r.accept_stat : 100 + r.reject_stat;
		if (r.reply_stat == 0 && r.accept_stat == 0)
			st = (int)xd_u32(&r.body);
		raw_reply_free(&r);
	}
	xb_free(&a);
	return st;
}

static void restart_with(const char *opts_127)
{
	if (env.pid > 0)
		hx_daemon_stop(&env);
	if (opts_127)
		hx_write_exports(&env, "%s 127.0.0.1(%s)\n%s 127.0.0.1(rw)\n", env.export_dir, opts_127,
				 hx_path(&env, "secure"));
	else
		hx_write_exports(&env, "%s 192.0.2.0/24(rw,no_root_squash,insecure)\n%s 127.0.0.1(rw)\n",
				 env.export_dir, hx_path(&env, "secure"));
	hx_daemon_start(&env);
}

int main(int argc, char **argv)
{
	struct rpc_context *mnt, *nfs;
	struct hx_fh fh;
	struct raw_conn c;
	uint8_t rfh[64];
	uint32_t rfh_len = 0, as;
	fattr3 attr;
	READ3res r;
	int st;

	hx_begin("client_refused", argc, argv);
	hx_require_root();
	hx_env_init(&env);
	hx_require_own_daemon(&env);
	mkdir(hx_path(&env, "secure"), 0755);
	hx_write_file(hx_xpath(&env, "file"), "data", 4, 0644);

	hx_section("export to 192.0.2.0/24 only, client 127.0.0.1");
	restart_with(NULL);
	if (env.pid <= 0)
		return hx_end();
	mnt = hx_rpc_connect(&env, MOUNT_PROGRAM, MOUNT_V3, -1, -1);
	if (CHECK(mnt != NULL, "MOUNT connection")) {
		st = hx_mnt(mnt, env.export_dir, NULL);
		CHECK(st == MNT3ERR_ACCES, "MNT refused with MNT3ERR_ACCES (%s)", hx_mntstat_name(st));
	}
	hx_rpc_close(mnt);

	hx_section("\"secure\" export: source port must be < 1024");
	if (CHECK(raw_connect(&c, env.port) == 0, "connect from an unprivileged port")) {
		st = raw_mnt(&c, 1, hx_path(&env, "secure"), rfh, &rfh_len);
		CHECK(st != MNT3_OK, "MNT from an unprivileged port refused (%d: %s)", st,
		      st >= 0 ? hx_mntstat_name(st) : "RPC-level rejection or no reply");
		raw_close(&c);
	}
	if (CHECK(raw_connect_reserved(&c, env.port) == 0, "connect from a reserved port")) {
		st = raw_mnt(&c, 2, hx_path(&env, "secure"), rfh, &rfh_len);
		CHECK(st == MNT3_OK, "MNT from a reserved port accepted (%s)", hx_mntstat_name(st));
		if (st == MNT3_OK) {
			st = raw_getattr(&c, rfh, rfh_len, &as);
			CHECK(st == NFS3_OK, "GETATTR from a reserved port (%s, accept %u)", hx_nfsstat_name(st), as);
		}
		raw_close(&c);
	}
	if (rfh_len && CHECK(raw_connect(&c, env.port) == 0, "connect from an unprivileged port")) {
		st = raw_getattr(&c, rfh, rfh_len, &as);
		CHECK(st != NFS3_OK, "GETATTR from an unprivileged port on a secure export refused "
		      "(%s, accept/reject %u)", hx_nfsstat_name(st), as);
		raw_close(&c);
	}

	hx_section("a handle from when 127.0.0.1 was allowed");
	restart_with("rw,no_root_squash,insecure");
	if (env.pid <= 0 || hx_open_export(&env, env.export_dir, 0, 0, &nfs, &fh) != 0)
		return hx_end();
	CHECK_NFS(hx3_getattr(nfs, &fh, NULL), NFS3_OK, "GETATTR while allowed");
	hx_rpc_close(nfs);

	restart_with(NULL);
	nfs = hx_rpc_connect(&env, NFS_PROGRAM, NFS_V3, 0, 0);
	if (CHECK(nfs != NULL, "NFS connection after restart with 192.0.2.0/24 only")) {
		st = hx3_getattr(nfs, &fh, &attr);
		CHECK(st != NFS3_OK && st != -1, "GETATTR with the old handle refused (%s)", hx_nfsstat_name(st));
		st = hx3_read(nfs, &fh, 0, 10, &r);
		CHECK(st != NFS3_OK && st != -1, "READ with the old handle refused (%s)", hx_nfsstat_name(st));
		st = hx3_create(nfs, &fh, "sneaky", 0644, NULL);
		CHECK(st != NFS3_OK && st != -1, "CREATE with the old handle refused (%s)", hx_nfsstat_name(st));
		CHECK(access(hx_xpath(&env, "sneaky"), F_OK) != 0, "nothing created");
	}
	hx_rpc_close(nfs);

	restart_with("rw,no_root_squash,insecure");
	nfs = hx_rpc_connect(&env, NFS_PROGRAM, NFS_V3, 0, 0);
	if (CHECK(nfs != NULL, "NFS connection after restart with 127.0.0.1 allowed again"))
		CHECK_NFS(hx3_getattr(nfs, &fh, NULL), NFS3_OK,
			  "the same handle works again (the refusal was the client check)");
	hx_rpc_close(nfs);
	CHECK(hx_daemon_alive(&env), "daemon still running");
	hx_daemon_stop(&env);
	return hx_end();
}
