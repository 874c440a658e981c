/*
 * identity.c - run each call with the caller's credentials on the worker
 * thread, so the kernel enforces permissions as for a local process.
 *
 * Linux keeps credentials per thread: setfsuid()/setfsgid() and the raw
 * setgroups system call change only the calling thread. (glibc's setgroups()
 * broadcasts the change to ALL threads of the process - never used here.)
 * Switching fsuid away from 0 also drops the fs-related capabilities
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_CHOWN, CAP_MKNOD,
 * CAP_FSETID...) from the thread's effective set; switching back to 0
 * restores them. Handles are therefore opened before the switch.
 *
 * The kernel does not drop CAP_SYS_RESOURCE with the fsuid, and with it a
 * thread ignores disk quotas and may use ext4's reserved blocks: like knfsd
 * (CAP_NFSD_SET = fs capabilities + CAP_SYS_RESOURCE), it is dropped from
 * the thread's effective set for non-root callers (capset is per thread too)
 * so users get DQUOT/NOSPC as they would locally.
 *
 * Squashing follows exports(5) and knfsd's nfsd_setuser().
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "nfs/nfs_priv.h"
#include "core/log.h"

static struct log_limit nfs_identity_limit;
static __thread bool nfs_resource_dropped; /* this thread's CAP_SYS_RESOURCE is off */
/* This thread is verified to be in the restored state (fsuid 0, fsgid 0, no
 * supplementary groups, CAP_SYS_RESOURCE as at start): a root caller with no
 * groups (no_root_squash) then needs no system call at all, in apply or in
 * the restore after it. Cleared by any other apply. */
static __thread bool nfs_thread_is_root;
/* Whether restore reaches that state on this thread: 0 not yet checked, 1 yes, -1 no (not root) */
static __thread signed char nfs_restore_works;

void nfs_identity_map(const struct rpc_cred *cred, const struct export_opts *o, struct nfs_identity *id)
{
	memset(id, 0, sizeof(*id));
	if (cred->flavor != RPC_AUTH_SYS || o->squash == EXPORT_ALL_SQUASH) {
		id->uid = o->anonuid;
		id->gid = o->anongid;
		return;
	}
	id->uid = cred->uid;
	id->gid = cred->gid;
	id->ngroups = cred->ngroups <= RPC_AUTH_SYS_MAX_GIDS ? cred->ngroups : RPC_AUTH_SYS_MAX_GIDS;
	memcpy(id->groups, cred->groups, id->ngroups * sizeof(id->groups[0]));
	if (o->squash != EXPORT_ROOT_SQUASH)
		return;
	/* root_squash: uid 0 and gid 0 (also as a supplementary group) become anonymous */
	if (id->uid == 0)
		id->uid = o->anonuid;
	if (id->gid == 0)
		id->gid = o->anongid;
	for (uint32_t i = 0; i < id->ngroups; i++)
		if (id->groups[i] == 0)
			id->groups[i] = o->anongid;
}

static int nfs_thread_setgroups(uint32_t n, const uint32_t *groups)
{
	gid_t g[RPC_AUTH_SYS_MAX_GIDS];

	for (uint32_t i = 0; i < n; i++)
		g[i] = groups[i];
	return (int)syscall(SYS_setgroups, (size_t)n, n ? g : NULL);
}

/* Add or remove CAP_SYS_RESOURCE in this thread's effective set. 0 or -1. */
static int nfs_thread_sys_resource(bool on)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];
	const unsigned idx = CAP_TO_INDEX(CAP_SYS_RESOURCE);
	const uint32_t bit = CAP_TO_MASK(CAP_SYS_RESOURCE);

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -1;
	if (!(data[idx].permitted & bit) || !!(data[idx].effective & bit) == on)
		return 0; /* not ours to use, or already as wanted */
	if (on)
		data[idx].effective |= bit;
	else
		data[idx].effective &= ~bit;
	return (int)syscall(SYS_capset, &hdr, data);
}

int nfs_identity_apply(const struct nfs_identity *id)
{
	if (nfs_thread_is_root && id->uid == 0 && id->gid == 0 && id->ngroups == 0)
		return 0;
	nfs_thread_is_root = false;
	if (nfs_thread_setgroups(id->ngroups, id->groups) < 0)
		goto fail;
	setfsgid(id->gid);
	if ((uint32_t)setfsgid((gid_t)-1) != id->gid)
		goto fail;
	setfsuid(id->uid);
	if ((uint32_t)setfsuid((uid_t)-1) != id->uid)
		goto fail;
	if (id->uid != 0) {
		if (nfs_thread_sys_resource(false) < 0)
			goto fail;
		nfs_resource_dropped = true;
	}
	return 0;
fail:
	log_limited(&nfs_identity_limit, LOG_ERR, "nfs: cannot switch to uid %u gid %u: %s",
		    id->uid, id->gid, strerror(errno));
	nfs_identity_restore();
	return -1;
}

void nfs_identity_restore(void)
{
	bool ok = true;

	if (nfs_thread_is_root)
		return;
	/* fsuid first: back to 0 restores the fs capabilities for the rest */
	setfsuid(0);
	if (nfs_resource_dropped) {
		if (nfs_thread_sys_resource(true) < 0)
			log_limited(&nfs_identity_limit, LOG_ERR, "nfs: capset: %s", strerror(errno));
		else
			nfs_resource_dropped = false;
	}
	setfsgid(0);
	if (nfs_thread_setgroups(0, NULL) < 0) {
		log_limited(&nfs_identity_limit, LOG_ERR, "nfs: setgroups(0): %s", strerror(errno));
		ok = false;
	}
	/* setfsuid/setfsgid report no error: read back once per thread before trusting them */
	if (ok && !nfs_resource_dropped && nfs_restore_works == 0)
		nfs_restore_works = setfsuid((uid_t)-1) == 0 && setfsgid((gid_t)-1) == 0 ? 1 : -1;
	nfs_thread_is_root = ok && !nfs_resource_dropped && nfs_restore_works > 0;
}
