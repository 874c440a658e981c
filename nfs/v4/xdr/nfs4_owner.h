/*
 * nfs4_owner.h - owner and owner_group strings (RFC 7530 §5.9, RFC 8881
 * §5.9): uid/gid <-> utf8str_mixed. Decoding takes a numeric string
 * ("1000") or "name@domain" (looked up through the name service); encoding
 * gives numeric strings unless "[nfsv4] idmap = names" is configured. The
 * configuration is process-wide, set once at start-up (and on reload) before
 * workers use it; lookups use the caller's buffers (no allocation).
 */
#ifndef RNFSD_NFS4_OWNER_H
#define RNFSD_NFS4_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Room for an encoded owner string (a name, '@', a domain). */
#define NFS4_OWNER_STR_MAX 512u
/* Longest idmapping domain kept. */
#define NFS4_DOMAIN_MAX 255u

enum nfs4_idmap_mode {
	NFS4_IDMAP_NUMERIC = 0, /* "1000" both ways (Linux's nfs4_disable_idmapping) */
	NFS4_IDMAP_NAMES,       /* "name@domain" out, both forms accepted in */
};

/* Set the mode and domain (NULL or "": the host's DNS domain, else "localdomain"). */
void nfs4_owner_config(enum nfs4_idmap_mode mode, const char *domain);
/* The domain in use (tests, logs). */
const char *nfs4_owner_domain(void);

/*
 * An owner (group false) or owner_group (group true) string -> id.
 * NFS4_OK, or NFS4ERR_BADOWNER: empty, not a decimal id below 2^32-1 nor
 * "name@domain" of our domain with a name the name service knows.
 */
uint32_t nfs4_owner_to_id(const uint8_t *s, uint32_t len, bool group, uint32_t *id);

/*
 * id -> its string in buf (cap >= 16; NFS4_OWNER_STR_MAX holds any), returning
 * its length. With idmap = names an id the name service does not know is
 * "nobody@domain" (RFC 8881 §5.9 leaves the choice to the server).
 */
uint32_t nfs4_owner_from_id(uint32_t id, bool group, char *buf, size_t cap);

#endif
