/*
 * nfs4_owner.c - owner / owner_group strings (see nfs4_owner.h; RFC 7530
 * §5.9, RFC 8881 §5.9). The mode and domain are process-wide, written by
 * nfs4_owner_config() at start-up before any worker runs (a reload does not
 * change them: rnfsd.conf(5)). Name service lookups use the *_r functions
 * with a buffer on the worker's stack: nothing is allocated per call.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nfs/v4/xdr/nfs4_const.h"
#include "nfs/v4/xdr/nfs4_owner.h"

/* getpw*_r / getgr*_r buffer: enough for any passwd/group entry with a
 * modest member list; a larger one is treated as unknown. */
#define OWNER_NSS_BUF 8192u

static enum nfs4_idmap_mode owner_mode = NFS4_IDMAP_NUMERIC;
static char owner_domain[NFS4_DOMAIN_MAX + 1] = "localdomain";

void nfs4_owner_config(enum nfs4_idmap_mode mode, const char *domain)
{
	char host[256];
	const char *dot;

	owner_mode = mode;
	if (domain && domain[0]) {
		snprintf(owner_domain, sizeof(owner_domain), "%s", domain);
		return;
	}
	/* The host's DNS domain, as nfsidmap guesses it: what follows the first
	 * dot of the host name; without one, "localdomain". */
	snprintf(owner_domain, sizeof(owner_domain), "localdomain");
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		dot = strchr(host, '.');
		if (dot && dot[1])
			snprintf(owner_domain, sizeof(owner_domain), "%s", dot + 1);
	}
}

const char *nfs4_owner_domain(void)
{
	return owner_domain;
}

/* A decimal id: 1..10 digits, below 2^32-1 (-1 means "no id" to chown). */
static bool owner_numeric(const uint8_t *s, uint32_t len, uint32_t *id)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return false;
	for (uint32_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v >= UINT32_MAX)
		return false;
	*id = (uint32_t)v;
	return true;
}

/* A name of the name service -> id. */
static bool owner_lookup(const char *name, bool group, uint32_t *id)
{
	char buf[OWNER_NSS_BUF];

	if (group) {
		struct group gr, *r = NULL;
		if (getgrnam_r(name, &gr, buf, sizeof(buf), &r) != 0 || !r)
			return false;
		*id = (uint32_t)r->gr_gid;
	} else {
		struct passwd pw, *r = NULL;
		if (getpwnam_r(name, &pw, buf, sizeof(buf), &r) != 0 || !r)
			return false;
		*id = (uint32_t)r->pw_uid;
	}
	return true;
}

uint32_t nfs4_owner_to_id(const uint8_t *s, uint32_t len, bool group, uint32_t *id)
{
	char name[NFS4_OWNER_STR_MAX];
	const uint8_t *at;
	uint32_t nlen;

	/* RFC 7530 §12.7: a zero-length string where none is allowed is NFS4ERR_INVAL (pynfs SATT16, SATT17). */
	if (len == 0)
		return NFS4ERR_INVAL;
	/* RFC 8881 §5.9: a numeric string stands for the id itself. */
	if (owner_numeric(s, len, id))
		return NFS4_OK;
	/* "user@dns_domain" (§5.9): the domain must be ours (DNS names compare
	 * without case); the name, with no NUL, must be known. */
	at = len ? memchr(s, '@', len) : NULL;
	if (!at || at == s)
		return NFS4ERR_BADOWNER;
	nlen = (uint32_t)(at - s);
	if (nlen >= sizeof(name) || memchr(s, 0, len) || len - nlen - 1 != strlen(owner_domain) ||
	    strncasecmp((const char *)at + 1, owner_domain, len - nlen - 1) != 0)
		return NFS4ERR_BADOWNER;
	memcpy(name, s, nlen);
	name[nlen] = 0;
	return owner_lookup(name, group, id) ? NFS4_OK : NFS4ERR_BADOWNER;
}

/* id -> its name; false: unknown to the name service. */
static bool owner_name(uint32_t id, bool group, char *out, size_t cap)
{
	char buf[OWNER_NSS_BUF];
	const char *n = NULL;

	if (group) {
		struct group gr, *r = NULL;
		if (getgrgid_r((gid_t)id, &gr, buf, sizeof(buf), &r) == 0 && r)
			n = r->gr_name;
	} else {
		struct passwd pw, *r = NULL;
		if (getpwuid_r((uid_t)id, &pw, buf, sizeof(buf), &r) == 0 && r)
			n = r->pw_name;
	}
	if (!n || strlen(n) >= cap)
		return false;
	snprintf(out, cap, "%s", n);
	return true;
}

uint32_t nfs4_owner_from_id(uint32_t id, bool group, char *buf, size_t cap)
{
	char name[256];
	int n;

	if (owner_mode == NFS4_IDMAP_NUMERIC) {
		n = snprintf(buf, cap, "%u", id);
	} else {
		/* RFC 8881 §5.9: an id without a name is sent as "nobody" here, as
		 * nfsidmap does (the client maps it to its own nobody). */
		if (!owner_name(id, group, name, sizeof(name)))
			snprintf(name, sizeof(name), "nobody");
		n = snprintf(buf, cap, "%s@%s", name, owner_domain);
	}
	if (n < 0)
		return 0;
	return (size_t)n < cap ? (uint32_t)n : (uint32_t)(cap ? cap - 1 : 0);
}
