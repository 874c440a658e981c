/*
 * nfs4_pseudo.h - the NFSv4 pseudo file system (RFC 7530 §7, RFC 8881 §7.3,
 * §7.7): one namespace joining every export at its own path, as knfsd builds
 * it when no export is marked fsid=0, so "server:/srv/data" names the same
 * directory over NFSv3 and NFSv4. A client sees only the exports its address
 * is admitted to: a pseudo directory exists only above one of those.
 *
 * Pure functions over a list of export paths (absolute, normalised, no
 * trailing slash, as conf/exports.c keeps them) and admission flags; paths
 * in and out are NUL-terminated strings. A pseudo directory is named by a
 * 64-bit id of its path (FNV-1a), stable across restarts and reloads, used
 * as its fileid and inside its file handle.
 */
#ifndef RNFSD_NFS4_PSEUDO_H
#define RNFSD_NFS4_PSEUDO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NFS4_PSEUDO_PATH_MAX 1024u /* deeper pseudo paths are not reachable */

#define NFS4_SEC_MAX 5u /* security flavors one export may list (conf/exports.h EXPORT_SEC_COUNT) */

/* Security flavors in preference order: bit numbers of EXPORT_SEC_* (conf/exports.h), each once. */
struct nfs4_sec_list {
	uint8_t n;
	uint8_t bit[NFS4_SEC_MAX];
};

struct nfs4_pseudo_exp {
	const char *path;
	bool admitted;            /* this client may see it */
	struct nfs4_sec_list sec; /* admitted: the flavors its sec= gives this client */
};

/* What a path is for this client. */
enum nfs4_pseudo_kind {
	NFS4_PSEUDO_NONE = 0, /* nothing visible there */
	NFS4_PSEUDO_DIR,      /* a pseudo directory ("/" always is one unless an export sits there) */
	NFS4_PSEUDO_EXPORT,   /* an admitted export's root (*idx set) */
};

enum nfs4_pseudo_kind nfs4_pseudo_classify(const struct nfs4_pseudo_exp *v, unsigned n, const char *path,
					   unsigned *idx);

/*
 * dir/name into out (cap bytes) and what it is. name is one component
 * (checked by the caller, nfs4_name_check()). Returns NFS4_OK, NFS4ERR_NOENT
 * (nothing visible there), NFS4ERR_NAMETOOLONG (path longer than cap).
 */
uint32_t nfs4_pseudo_lookup(const struct nfs4_pseudo_exp *v, unsigned n, const char *dir, const char *name,
			    uint32_t namelen, char *out, size_t cap, enum nfs4_pseudo_kind *kind, unsigned *idx);

/*
 * RFC 8881 §2.6.3.1.1.3 (security policy boundaries may be crossed below a
 * pseudo directory): the flavors of the pseudo directory dir are those of
 * the admitted exports beneath it, in export order, each once. Empty when
 * none is beneath (a root that shows this client nothing).
 */
void nfs4_pseudo_sec(const struct nfs4_pseudo_exp *v, unsigned n, const char *dir, struct nfs4_sec_list *out);

/* Is flavor bit number b in l? */
bool nfs4_sec_has(const struct nfs4_sec_list *l, unsigned b);

/* The parent of path into out ("/" for "/"); out may be path. */
void nfs4_pseudo_parent(const char *path, char *out, size_t cap);

/* FNV-1a 64 of the path: the pseudo directory's id. */
uint64_t nfs4_pseudo_id(const char *path);

/* The visible pseudo directory whose id is id, into out. false: none (STALE). */
bool nfs4_pseudo_find(const struct nfs4_pseudo_exp *v, unsigned n, uint64_t id, char *out, size_t cap);

/*
 * The entries of the pseudo directory dir (each child component once, in
 * export order): fn(arg, name, len, kind, idx) for each; fn returns false
 * to stop. Returns the number of entries offered.
 */
typedef bool (*nfs4_pseudo_fn)(void *arg, const char *name, uint32_t len, enum nfs4_pseudo_kind kind,
			       unsigned idx);
unsigned nfs4_pseudo_children(const struct nfs4_pseudo_exp *v, unsigned n, const char *dir, nfs4_pseudo_fn fn,
			      void *arg);

#endif
