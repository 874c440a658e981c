/*
 * exports.h - /etc/rnfsd/exports in exports(5) syntax:
 *
 *   /srv/a   192.0.2.0/24(rw,no_root_squash) *.example.com(ro) host1
 *   /srv/b   -ro,sec=sys  2001:db8::/32  "*"(rw,all_squash,anonuid=1000,anongid=1000)
 *
 * A line is a path followed by client specs, each with optional options in
 * parentheses; a leading "-opts" sets defaults for the line's specs; a path
 * with no client gets "*" with the defaults. Backslash-newline continues a
 * line, '#' starts a comment, paths may be double-quoted with \040 escapes.
 * Client specs: a host name (resolved to addresses when the file is loaded),
 * a wildcard host name (*.example.com, matched against the client's reverse
 * DNS name), an IPv4 or IPv6 address, an address/prefix (CIDR) or IPv4
 * address/netmask, or "*".
 * Options: rw ro root_squash no_root_squash all_squash no_all_squash
 * anonuid=N anongid=N secure insecure sec=sys:none:krb5:krb5i:krb5p (any order)
 * xprtsec=none:tls:mtls (any order) fsid=N|root|UUID fs=NAME
 * pnfs=flexfiles
 * sync async subtree_check no_subtree_check wdelay no_wdelay hide nohide
 * crossmnt (the last few are accepted and ignored, as knfsd users expect them).
 * Errors name the file, line and problem. Tables are plain data owned by
 * the caller and released with exports_free().
 */
#ifndef RNFSD_EXPORTS_H
#define RNFSD_EXPORTS_H

#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum export_squash {
	EXPORT_ROOT_SQUASH = 0, /* default */
	EXPORT_NO_ROOT_SQUASH,
	EXPORT_ALL_SQUASH,
};

#define EXPORT_SEC_NONE (1u << 0)
#define EXPORT_SEC_SYS (1u << 1)
#define EXPORT_SEC_KRB5 (1u << 2)  /* RPCSEC_GSS krb5, service none (RFC 2203 §5) */
#define EXPORT_SEC_KRB5I (1u << 3) /* service integrity */
#define EXPORT_SEC_KRB5P (1u << 4) /* service privacy */
#define EXPORT_SEC_COUNT 5u

/* The exports(5) name of the sec= flavor with bit number b: "none", "sys", "krb5", "krb5i", "krb5p". */
const char *export_sec_name(unsigned b);

/* xprtsec= (exports(5) of nfs-utils 2.6.3+, RFC 9289): the transport security a
 * connection must have. Bit 1 << mode, mode as rpc/xprt.h enum rpc_xprtsec. */
#define EXPORT_XPRTSEC_NONE (1u << 0) /* plain TCP or RDMA */
#define EXPORT_XPRTSEC_TLS (1u << 1)  /* TLS, no client certificate */
#define EXPORT_XPRTSEC_MTLS (1u << 2) /* TLS with a verified client certificate */
#define EXPORT_XPRTSEC_ALL 7u         /* the default: any (as knfsd's NFSEXP_XPRTSEC_ALL) */

/* "none", "tls", "mtls" separated by ':' in any order into *mask (repeats count
 * once). 0, or -1 (an empty or unknown mode). */
int export_xprtsec_parse(const char *s, uint32_t *mask);
/* mask as xprtsec= writes it ("none:tls:mtls"), into buf. */
void export_xprtsec_format(uint32_t mask, char *buf, size_t len);
/* Does xprtsec= mask admit a connection whose transport security is mode
 * (rpc_xprtsec)? Exactly the modes listed: a mutually authenticated
 * connection needs mtls, as knfsd's check_xprtsec_policy(). */
static inline bool export_xprtsec_admits(uint32_t mask, unsigned mode)
{
	return mode < 3 && (mask & (1u << mode)) != 0;
}

struct export_opts {
	bool rw;                  /* default ro, as exports(5) */
	enum export_squash squash;
	uint32_t anonuid, anongid; /* default 65534 */
	bool secure;              /* default yes: source port < 1024 required */
	uint32_t sec;             /* EXPORT_SEC_* bitmask; default sys */
	uint8_t sec_order[EXPORT_SEC_COUNT]; /* sec='s flavors in the admin's order (bit numbers of
	                                       EXPORT_SEC_*, each once; as many as sec has bits) */
	uint32_t xprtsec;         /* EXPORT_XPRTSEC_* bitmask; default all */
	bool sync;                /* default yes */
};

enum export_client_kind {
	EXPORT_CLIENT_ANY,      /* "*" */
	EXPORT_CLIENT_NET,      /* an address or CIDR (a host name resolves to one NET per address) */
	EXPORT_CLIENT_WILDCARD, /* "*.example.com": reverse DNS name match */
};

struct export_client {
	enum export_client_kind kind;
	char spec[256];          /* as written, for messages and MOUNT EXPORT */
	struct in6_addr addr;    /* IPv4 as v4-mapped ::ffff:a.b.c.d */
	unsigned prefix;         /* 0..128, on the v6(-mapped) address */
	struct export_opts opts;
};

#define EXPORT_FS_NAME_MAX 15u

/* pnfs=: the layout type NFSv4.1+ clients get (RFC 8881 §12.2.7); one per export. */
enum export_pnfs {
	EXPORT_PNFS_NONE = 0,   /* default: no layouts */
	EXPORT_PNFS_FLEXFILES,  /* LAYOUT4_FLEX_FILES (RFC 8435) over [pnfs] data-servers */
};

struct export {
	char path[PATH_MAX];     /* absolute, normalised, no trailing slash */
	bool fsid_set;
	uint32_t fsid;           /* fsid=N; fsid=root is 0; a UUID is folded to 32 bits */
	char fs[EXPORT_FS_NAME_MAX + 1]; /* fs=NAME: the backend driver; "" is "local" */
	enum export_pnfs pnfs;   /* pnfs=flexfiles */
	struct export_client *clients;
	unsigned nclients;
	unsigned line;           /* where it was defined */
};

struct export_table {
	struct export *exports;
	unsigned n;
};

/* Returns 0, or -1 with "FILE:LINE: problem" in err; t is empty on error. */
int exports_load(const char *path, struct export_table *t, char *err, size_t errlen);
int exports_parse(const char *text, const char *name, struct export_table *t, char *err, size_t errlen);
void exports_free(struct export_table *t);

/* The first client spec of t (its export in *e) whose xprtsec= no connection can meet on this
 * server: tls: TLS is offered ([tls] certificate), ca: client certificates are verified
 * ([tls] ca); NULL if none. (exports.c) */
const struct export_client *exports_xprtsec_unmet(const struct export_table *t, bool tls, bool ca,
						  const struct export **e);

/* The options for a client at sa, or NULL if no spec of e admits it. First match wins, as exports(5). */
const struct export_opts *export_match(const struct export *e, const struct sockaddr *sa, socklen_t salen);

/* The export whose path is exactly path (after normalising), or NULL. */
const struct export *exports_find(const struct export_table *t, const char *path);

/* 32-bit export identifier for file handles: fsid if set, else a stable hash of the path. */
uint32_t export_id(const struct export *e);

#endif
