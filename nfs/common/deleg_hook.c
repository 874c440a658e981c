/*
 * deleg_hook.c - how NFSv3 and NLM learn of NFSv4's delegations without
 * knowing NFSv4: NFSv4 sets the hook (nfs_deleg_hook_set(), at the start of
 * its delegation table; the hook is static and lives as long as the
 * process); until then nothing is delegated and every check is clear. The
 * pointer is read by any worker without a lock. The same for pNFS layouts
 * (nfs_layout_hook_set(), set when NFSv4 is a metadata server).
 */
#include <stdatomic.h>

#include "nfs/common/nfs_common.h"

static const struct nfs_deleg_hook *_Atomic nfs_deleg_hook;

const struct nfs_deleg_hook *nfs_deleg_hook_set(const struct nfs_deleg_hook *h)
{
	return atomic_exchange(&nfs_deleg_hook, h);
}

bool nfs_deleg_any(void)
{
	const struct nfs_deleg_hook *h = atomic_load(&nfs_deleg_hook);

	return h && h->any();
}

enum nfs_deleg_verdict nfs_deleg_recall(const uint8_t *fkey, uint32_t fkey_len, enum nfs_deleg_access acc)
{
	const struct nfs_deleg_hook *h = atomic_load(&nfs_deleg_hook);

	return h ? h->recall(fkey, fkey_len, acc) : NFS_DELEG_CLEAR;
}

enum nfs_deleg_verdict nfs_deleg_recall_at(const struct nfs_export *exp, const struct be_cred *cr,
					   const struct be_obj *dir, const char *name, bool removed)
{
	const struct nfs_deleg_hook *h = atomic_load(&nfs_deleg_hook);

	return h ? h->recall_at(exp, cr, dir, name, removed) : NFS_DELEG_CLEAR;
}

enum nfs_deleg_verdict nfs_deleg_getattr(const uint8_t *fkey, uint32_t fkey_len, bool may_wait, struct be_attr *attr)
{
	const struct nfs_deleg_hook *h = atomic_load(&nfs_deleg_hook);

	return h && h->getattr ? h->getattr(fkey, fkey_len, may_wait, attr) : NFS_DELEG_CLEAR;
}

bool nfs_deleg_dir_any(void)
{
	const struct nfs_deleg_hook *h = atomic_load(&nfs_deleg_hook);

	return h && h->dir_any && h->dir_any();
}

enum nfs_deleg_verdict nfs_deleg_dir_changed(const uint8_t *fkey, uint32_t fkey_len, enum nfs_dir_change ch)
{
	const struct nfs_deleg_hook *h = atomic_load(&nfs_deleg_hook);

	return h && h->dir_changed ? h->dir_changed(fkey, fkey_len, ch) : NFS_DELEG_CLEAR;
}

void nfs_deleg_dir_note(const uint8_t *fkey, uint32_t fkey_len, const struct nfs_dir_note *n)
{
	const struct nfs_deleg_hook *h = atomic_load(&nfs_deleg_hook);

	if (h && h->dir_note)
		h->dir_note(fkey, fkey_len, n);
}

void nfs_deleg_dir_note1(const uint8_t *fkey, uint32_t fkey_len, enum nfs_dir_change kind, const char *name)
{
	const struct nfs_dir_note n = { .kind = kind, .name = name };

	nfs_deleg_dir_note(fkey, fkey_len, &n);
}

static _Atomic nfs_layout_hook_fn nfs_layout_hook;

nfs_layout_hook_fn nfs_layout_hook_set(nfs_layout_hook_fn fn)
{
	return atomic_exchange(&nfs_layout_hook, fn);
}

void nfs_layout_conflict(const uint8_t *fkey, uint32_t fkey_len, const struct sockaddr *peer)
{
	nfs_layout_hook_fn fn = atomic_load(&nfs_layout_hook);

	if (fn)
		fn(fkey, fkey_len, peer);
}

bool nfs_layout_mds(void)
{
	return atomic_load(&nfs_layout_hook) != NULL;
}
