/*
 * nfs4_pseudo.c - the pseudo file system's namespace (see nfs4_pseudo.h).
 * Nothing is built or stored: every question is answered from the export
 * paths (a handful per server), so a reload of the exports changes the
 * namespace at once and there is no tree to keep consistent.
 */
#include <stdio.h>
#include <string.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/ops/nfs4_pseudo.h"

/* Is path strictly below anc? */
static bool below(const char *anc, const char *path)
{
	size_t la = strlen(anc);

	if (strcmp(anc, "/") == 0)
		return path[0] == '/' && path[1] != '\0';
	return strncmp(path, anc, la) == 0 && path[la] == '/' && path[la + 1] != '\0';
}

enum nfs4_pseudo_kind nfs4_pseudo_classify(const struct nfs4_pseudo_exp *v, unsigned n, const char *path,
					   unsigned *idx)
{
	bool dir = strcmp(path, "/") == 0;

	for (unsigned i = 0; i < n; i++) {
		if (!v[i].admitted)
			continue;
		if (strcmp(v[i].path, path) == 0) {
			*idx = i;
			return NFS4_PSEUDO_EXPORT;
		}
		if (below(path, v[i].path))
			dir = true;
	}
	return dir ? NFS4_PSEUDO_DIR : NFS4_PSEUDO_NONE;
}

uint32_t nfs4_pseudo_lookup(const struct nfs4_pseudo_exp *v, unsigned n, const char *dir, const char *name,
			    uint32_t namelen, char *out, size_t cap, enum nfs4_pseudo_kind *kind, unsigned *idx)
{
	const char *sep = strcmp(dir, "/") == 0 ? "" : "/";
	int len = snprintf(out, cap, "%s%s%.*s", dir, sep, (int)namelen, name);

	if (len < 0 || (size_t)len >= cap)
		return NFS4ERR_NAMETOOLONG;
	*kind = nfs4_pseudo_classify(v, n, out, idx);
	return *kind == NFS4_PSEUDO_NONE ? NFS4ERR_NOENT : NFS4_OK;
}

bool nfs4_sec_has(const struct nfs4_sec_list *l, unsigned b)
{
	for (unsigned i = 0; i < l->n; i++)
		if (l->bit[i] == b)
			return true;
	return false;
}

void nfs4_pseudo_sec(const struct nfs4_pseudo_exp *v, unsigned n, const char *dir, struct nfs4_sec_list *out)
{
	out->n = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!v[i].admitted || !below(dir, v[i].path))
			continue;
		for (unsigned j = 0; j < v[i].sec.n && j < NFS4_SEC_MAX; j++)
			if (!nfs4_sec_has(out, v[i].sec.bit[j]) && out->n < NFS4_SEC_MAX)
				out->bit[out->n++] = v[i].sec.bit[j];
	}
}

void nfs4_pseudo_parent(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	if (len == 0 || len >= cap) {
		snprintf(out, cap, "/");
		return;
	}
	memmove(out, path, len);
	out[len] = '\0';
}

uint64_t nfs4_pseudo_id(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	return h;
}

bool nfs4_pseudo_find(const struct nfs4_pseudo_exp *v, unsigned n, uint64_t id, char *out, size_t cap)
{
	unsigned idx;

	if (cap < 2)
		return false;
	snprintf(out, cap, "/");
	if (nfs4_pseudo_id(out) == id)
		return nfs4_pseudo_classify(v, n, out, &idx) == NFS4_PSEUDO_DIR;
	/* Every ancestor of every admitted export path is a candidate. */
	for (unsigned i = 0; i < n; i++) {
		const char *p = v[i].path;
		if (!v[i].admitted)
			continue;
		for (const char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
			size_t len = (size_t)(s - p);
			if (len >= cap)
				break;
			memcpy(out, p, len);
			out[len] = '\0';
			if (nfs4_pseudo_id(out) == id)
				return nfs4_pseudo_classify(v, n, out, &idx) == NFS4_PSEUDO_DIR;
		}
	}
	return false;
}

/* The component of path right below dir (path is below dir): its start and length. */
static const char *child_of(const char *dir, const char *path, uint32_t *len)
{
	const char *c = path + (strcmp(dir, "/") == 0 ? 1 : strlen(dir) + 1);
	const char *end = strchr(c, '/');

	*len = (uint32_t)(end ? (size_t)(end - c) : strlen(c));
	return c;
}

/* Is some admitted export exactly dir/c? Its index in *idx. */
static bool child_is_export(const struct nfs4_pseudo_exp *v, unsigned n, const char *dir, const char *c,
			    uint32_t len, unsigned *idx)
{
	for (unsigned k = 0; k < n; k++) {
		uint32_t klen;
		const char *kc;

		if (!v[k].admitted || !below(dir, v[k].path))
			continue;
		kc = child_of(dir, v[k].path, &klen);
		if (klen == len && memcmp(kc, c, len) == 0 && kc[klen] == '\0') {
			*idx = k;
			return true;
		}
	}
	return false;
}

unsigned nfs4_pseudo_children(const struct nfs4_pseudo_exp *v, unsigned n, const char *dir, nfs4_pseudo_fn fn,
			      void *arg)
{
	unsigned count = 0;

	for (unsigned i = 0; i < n; i++) {
		uint32_t len, plen;
		const char *c;
		bool seen = false;

		if (!v[i].admitted || !below(dir, v[i].path))
			continue;
		c = child_of(dir, v[i].path, &len);
		for (unsigned j = 0; j < i && !seen; j++) {
			if (v[j].admitted && below(dir, v[j].path)) {
				const char *pc = child_of(dir, v[j].path, &plen);
				seen = plen == len && memcmp(pc, c, len) == 0;
			}
		}
		if (seen)
			continue;
		count++;
		unsigned idx = i;
		bool exp = child_is_export(v, n, dir, c, len, &idx);
		if (!fn(arg, c, len, exp ? NFS4_PSEUDO_EXPORT : NFS4_PSEUDO_DIR, idx))
			break;
	}
	return count;
}
