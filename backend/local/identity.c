/*
 * identity.c - run the local backend's calls with the caller's credentials
 * on the worker thread, so the kernel enforces permissions as for a local
 * process.
 *
 * Linux keeps credentials per thread: setfsuid()/setfsgid() and the raw
 * setgroups system call change only the calling thread. (glibc's setgroups()
 * broadcasts the change to ALL threads of the process - never used here.)
 * Switching fsuid away from 0 also drops the fs-related capabilities
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_CHOWN, CAP_MKNOD,
 * CAP_FSETID...) from the thread's effective set; switching back to 0
 * restores them. Handles are therefore opened as root (local_id_server).
 *
 * The kernel does not drop CAP_SYS_RESOURCE with the fsuid, and with it a
 * thread ignores disk quotas and may use ext4's reserved blocks: like knfsd
 * (CAP_NFSD_SET = fs capabilities + CAP_SYS_RESOURCE), it is dropped from
 * the thread's effective set for non-root callers (capset is per thread too)
 * so users get EDQUOT/ENOSPC as they would locally.
 *
 * Switching is lazy: a thread remembers which identity it runs as, so the
 * calls of one client call cost one switch, and a root caller without groups
 * (no_root_squash) on a thread in the verified root state costs none. The
 * NFS layer ends every call with be_end_call(), which returns the thread to
 * root, so no identity outlives the call it was applied for.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "backend/local/local.h"
#include "core/log.h"
#include "core/loop.h"

static struct log_limit local_id_limit;
static __thread bool id_resource_dropped; /* this thread's CAP_SYS_RESOURCE is off */
/* This thread is verified to be in the root state (fsuid 0, fsgid 0, no
 * supplementary groups, CAP_SYS_RESOURCE as at start). */
static __thread bool id_is_root;
/* Whether the root state is reachable on this thread: 0 not yet checked, 1 yes, -1 no (not root) */
static __thread signed char id_restore_works;
/* A caller's identity is applied (id_cred). */
static __thread bool id_is_caller;
static __thread struct be_cred id_cred;

static bool id_same(const struct be_cred *a, const struct be_cred *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, a->ngroups * sizeof(a->groups[0]));
}

static int id_setgroups(uint32_t n, const uint32_t *groups)
{
	gid_t g[BE_CRED_MAX_GROUPS];

	for (uint32_t i = 0; i < n; i++)
		g[i] = groups[i];
	return (int)syscall(SYS_setgroups, (size_t)n, n ? g : NULL);
}

/* Add or remove CAP_SYS_RESOURCE in this thread's effective set. 0 or -1. */
static int id_sys_resource(bool on)
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

int local_id_caller(const struct be_cred *cr)
{
	uint32_t n = cr->ngroups <= BE_CRED_MAX_GROUPS ? cr->ngroups : BE_CRED_MAX_GROUPS;

	if (id_is_caller && id_same(cr, &id_cred))
		return 0;
	if (id_is_root && cr->uid == 0 && cr->gid == 0 && n == 0)
		return 0;
	/* The event-loop thread owns the RDMA verbs files, which the kernel
	 * refuses to serve once the thread's credentials changed (ib_uverbs:
	 * "changed security contexts after opening file descriptor"): a call
	 * answered there (rpc/rpc_inline.h) must never need the caller's identity. */
	if (loop_is_loop_thread()) {
		log_limited(&local_id_limit, LOG_ERR,
			    "local: a call on the event-loop thread needs uid %u's identity: refused (SERVERFAULT)",
			    cr->uid);
		return BE_ESERVERFAULT;
	}
	if (id_is_caller)
		local_id_server(); /* from one caller to another through the clean state */
	id_is_root = false;
	if (id_setgroups(n, cr->groups) < 0)
		goto fail;
	setfsgid(cr->gid);
	if ((uint32_t)setfsgid((gid_t)-1) != cr->gid)
		goto fail;
	setfsuid(cr->uid);
	if ((uint32_t)setfsuid((uid_t)-1) != cr->uid)
		goto fail;
	if (cr->uid != 0) {
		if (id_sys_resource(false) < 0)
			goto fail;
		id_resource_dropped = true;
	}
	id_is_caller = true;
	id_cred = *cr;
	id_cred.ngroups = n;
	return 0;
fail:
	log_limited(&local_id_limit, LOG_ERR, "local: cannot switch to uid %u gid %u: %s", cr->uid, cr->gid,
		    strerror(errno));
	id_is_caller = true; /* whatever was half applied is undone */
	local_id_server();
	return BE_ESERVERFAULT;
}

void local_id_server(void)
{
	bool ok = true;

	/* The event-loop thread never leaves the server's identity (see
	 * local_id_caller()), and must not even set it again: setgroups()
	 * always makes new credentials, which its RDMA verbs files refuse. */
	if (id_is_root || loop_is_loop_thread())
		return;
	id_is_caller = false;
	/* fsuid first: back to 0 restores the fs capabilities for the rest */
	setfsuid(0);
	if (id_resource_dropped) {
		if (id_sys_resource(true) < 0)
			log_limited(&local_id_limit, LOG_ERR, "local: capset: %s", strerror(errno));
		else
			id_resource_dropped = false;
	}
	setfsgid(0);
	if (id_setgroups(0, NULL) < 0) {
		log_limited(&local_id_limit, LOG_ERR, "local: setgroups(0): %s", strerror(errno));
		ok = false;
	}
	/* setfsuid/setfsgid report no error: read back once per thread before trusting them */
	if (ok && !id_resource_dropped && id_restore_works == 0)
		id_restore_works = setfsuid((uid_t)-1) == 0 && setfsgid((gid_t)-1) == 0 ? 1 : -1;
	id_is_root = ok && !id_resource_dropped && id_restore_works > 0;
}

uint32_t local_id_uid(void)
{
	return id_is_caller ? id_cred.uid : 0;
}

void local_end_call(struct be_fs *fs)
{
	(void)fs;
	if (id_is_caller || !id_is_root)
		local_id_server();
}
