/*
 * nfs4_layout_xdr.h - XDR of pNFS (RFC 8881 §12, §18.40-18.44) with the
 * flexible-files layout type (RFC 8435), GETDEVICELIST (§18.41), and the NFSv4.2 LAYOUTERROR and
 * LAYOUTSTATS arguments (RFC 7862 §15.6, §15.7). Pure and standalone (only
 * rpc/xdr.h): the server, the unit tests, the fuzz target and the
 * integration tests' client decode with the same code.
 *
 * Decoders: true, or false when the bytes do not hold the item (the caller
 * answers NFS4ERR_BADXDR). Every count is checked against its limit before
 * use; nothing is allocated; opaque bodies are pointers into the message.
 * Encoders write into the caller's xdr_enc (its overflow flag is sticky).
 *
 * The layout rnfsd hands out (nfs4_ff_enc_layout): one mirror holding one
 * data server (the Linux client takes no striping within a mirror), NFSv3,
 * tightly coupled (RFC 8435 §2.2): the file handle is the metadata server's
 * own, the stateid anonymous (§5.1: an NFSv3 data server has no stateids).
 */
#ifndef RNFSD_NFS4_LAYOUT_XDR_H
#define RNFSD_NFS4_LAYOUT_XDR_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc/xdr.h"

/* layouttype4 (RFC 8881 §3.3.13; RFC 8435 §13: LAYOUT4_FLEX_FILES). */
enum { LAYOUT4_NFSV4_1_FILES = 1, LAYOUT4_FLEX_FILES = 4 };
/* layoutiomode4 (RFC 8881 §3.3.20). */
enum { LAYOUTIOMODE4_READ = 1, LAYOUTIOMODE4_RW = 2, LAYOUTIOMODE4_ANY = 3 };
/* layoutreturn_type4 (RFC 8881 §3.3.21). */
enum { LAYOUTRETURN4_FILE = 1, LAYOUTRETURN4_FSID = 2, LAYOUTRETURN4_ALL = 3 };
/* ffv_flags4 (RFC 8435 §5.1). */
#define FF_FLAGS_NO_LAYOUTCOMMIT 0x1u
#define FF_FLAGS_NO_IO_THRU_MDS 0x2u
#define FF_FLAGS_NO_READ_IO 0x4u
#define FF_FLAGS_WRITE_ONE_MIRROR 0x8u

#define NFS4_DEVICEID_SIZE 16u  /* deviceid4 (RFC 8881 §3.3.14) */
#define NFS4_LAYOUT_FH_MAX 128u /* nfs_fh4 (NFS4_FHSIZE) */
#define NFS4_LAYOUT_BODY_MAX 4096u /* an opaque layout, device or update body we take */
#define NFS4_NETID_MAX 8u       /* "tcp", "tcp6", "rdma", "rdma6" and a NUL */
#define NFS4_UADDR_MAX 64u      /* an IPv6 universal address ".p1.p2" and a NUL */
#define NFS4_FF_ID_MAX 16u      /* ffds_user/ffds_group: a decimal id and a NUL */
#define NFS4_FF_ERRORS_MAX 32u  /* device errors kept from one call (more are parsed, not kept) */
#define NFS4_FF_LIST_MAX 64u    /* reports, errors per report, netaddrs, versions we parse */
#define NFS4_DEVLIST_MAX 8u     /* device ids in one GETDEVICELIST answer (the data servers rnfsd takes) */
#define NFS4_DEVLIST_VERF 8u    /* verifier4 */

struct nfs4_layout_sid { /* stateid4 */
	uint32_t seqid;
	uint8_t other[12];
};

/* netaddr4 (RFC 8881 §3.3.9; RFC 5665 §5.2.3.5: universal addresses). */
struct nfs4_netaddr {
	char netid[NFS4_NETID_MAX];
	char uaddr[NFS4_UADDR_MAX];
};

/* ff_device_addr4 with one netaddr and one ff_device_versions4 (RFC 8435 §4.1). */
struct nfs4_ff_devaddr {
	struct nfs4_netaddr addr;   /* decoding: the first of ffda_netaddrs */
	uint32_t naddrs;            /* decoding: how many were sent */
	uint32_t version, minorversion, rsize, wsize; /* ffda_versions[0] */
	bool tightly_coupled;
	uint32_t nversions;         /* decoding: how many were sent */
};

/* ff_layout4 with one mirror of one data server (RFC 8435 §5.1). */
struct nfs4_ff_layout {
	uint64_t stripe_unit;
	uint8_t deviceid[NFS4_DEVICEID_SIZE];
	uint32_t efficiency;
	struct nfs4_layout_sid sid;        /* ffds_stateid */
	uint32_t fh_len;
	uint8_t fh[NFS4_LAYOUT_FH_MAX];    /* ffds_fh_vers[0] */
	char user[NFS4_FF_ID_MAX], group[NFS4_FF_ID_MAX]; /* ffds_user, ffds_group (numeric strings) */
	uint32_t flags;                    /* ffv_flags4 */
	uint32_t stats_hint;               /* ffl_stats_collect_hint */
	uint32_t nmirrors, nservers, nfhs; /* decoding: counts as sent */
};

/* device_error4 (RFC 7862 §15.6.1). */
struct nfs4_device_error {
	uint8_t deviceid[NFS4_DEVICEID_SIZE];
	uint32_t status; /* nfsstat4 the data server answered */
	uint32_t opnum;  /* the operation that failed (for NFSv3: OP_READ/OP_WRITE/OP_COMMIT) */
};

/* The device errors of one call, from every ff_ioerr4 or LAYOUTERROR4args. */
struct nfs4_layout_errors {
	uint32_t n;      /* kept */
	uint32_t total;  /* sent (n is at most NFS4_FF_ERRORS_MAX) */
	struct nfs4_device_error e[NFS4_FF_ERRORS_MAX];
};

/* ff_layoutreturn4 (RFC 8435 §9.3): the errors, and how many ff_iostats4 came. */
struct nfs4_ff_layoutreturn {
	struct nfs4_layout_errors errors;
	uint32_t niostats;
	uint64_t read_bytes, write_bytes; /* summed over the ff_iostats4 */
};

/* ff_layoutupdate4 (RFC 8435 §9.2.2): what LAYOUTSTATS reports of one data server. */
struct nfs4_ff_layoutupdate {
	struct nfs4_netaddr addr;
	uint64_t read_ops, read_bytes, write_ops, write_bytes; /* completed */
	bool local;
};

/* ---- the operations' arguments and results ---- */

/* GETDEVICEINFO4args (RFC 8881 §18.40.1); notify types are read and dropped (we signal none). */
struct nfs4_getdeviceinfo_args {
	uint8_t deviceid[NFS4_DEVICEID_SIZE];
	uint32_t layout_type;
	uint32_t maxcount;
};
/* GETDEVICELIST4args (RFC 8881 §18.41.1). */
struct nfs4_getdevicelist_args {
	uint32_t layout_type, maxdevices;
	uint64_t cookie;
	uint8_t cookieverf[NFS4_DEVLIST_VERF];
};
/* LAYOUTGET4args (§18.43.1). */
struct nfs4_layoutget_args {
	bool signal_avail;
	uint32_t layout_type, iomode;
	uint64_t offset, length, minlength;
	struct nfs4_layout_sid sid;
	uint32_t maxcount;
};
/* LAYOUTRETURN4args (§18.44.1); a FILE return's flexfiles body decoded into ff. */
struct nfs4_layoutreturn_args {
	bool reclaim;
	uint32_t layout_type, iomode, returntype;
	uint64_t offset, length;        /* FILE */
	struct nfs4_layout_sid sid;     /* FILE */
	struct nfs4_ff_layoutreturn ff; /* FILE, LAYOUT4_FLEX_FILES */
};
/* LAYOUTCOMMIT4args (§18.42.1): the body of loca_layoutupdate is not used by flexfiles. */
struct nfs4_layoutcommit_args {
	uint64_t offset, length;
	bool reclaim;
	struct nfs4_layout_sid sid;
	bool has_last_write;
	uint64_t last_write;
	bool has_mtime;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	uint32_t layout_type;
};
/* LAYOUTERROR4args (RFC 7862 §15.6.1). */
struct nfs4_layouterror_args {
	uint64_t offset, length;
	struct nfs4_layout_sid sid;
	struct nfs4_layout_errors errors;
};
/* LAYOUTSTATS4args (RFC 7862 §15.7.1); a flexfiles layoutupdate decoded into ff. */
struct nfs4_layoutstats_args {
	uint64_t offset, length;
	struct nfs4_layout_sid sid;
	uint64_t read_count, read_bytes, write_count, write_bytes; /* io_info4 */
	uint8_t deviceid[NFS4_DEVICEID_SIZE];
	uint32_t layout_type;
	bool has_ff;
	struct nfs4_ff_layoutupdate ff;
};

/* GETDEVICEINFO4res (§18.40.2): NFS4_OK: the device address; NFS4ERR_TOOSMALL: mincount. */
struct nfs4_getdeviceinfo_res {
	struct nfs4_ff_devaddr addr;
	uint32_t mincount;
};
/* GETDEVICELIST4resok (§18.41.2). */
struct nfs4_getdevicelist_res {
	uint64_t cookie;
	uint8_t cookieverf[NFS4_DEVLIST_VERF];
	uint32_t n; /* at most NFS4_DEVLIST_MAX */
	uint8_t ids[NFS4_DEVLIST_MAX][NFS4_DEVICEID_SIZE];
	bool eof;
};
/* LAYOUTGET4res (§18.43.2): one layout4 with a flexfiles body. */
struct nfs4_layoutget_res {
	bool return_on_close;
	struct nfs4_layout_sid sid;
	uint64_t offset, length;
	uint32_t iomode;
	struct nfs4_ff_layout ff;
};
/* LAYOUTRETURN4res (§18.44.2): the layout stateid while layouts remain. */
struct nfs4_layoutreturn_res {
	bool has_sid;
	struct nfs4_layout_sid sid;
};
/* LAYOUTCOMMIT4resok (§18.42.2). */
struct nfs4_layoutcommit_res {
	bool size_changed;
	uint64_t new_size;
};

/* ---- flexfiles bodies ---- */
void nfs4_ff_enc_layout(struct xdr_enc *e, const struct nfs4_ff_layout *l);
bool nfs4_ff_dec_layout(struct xdr_dec *d, struct nfs4_ff_layout *l);
void nfs4_ff_enc_devaddr(struct xdr_enc *e, const struct nfs4_ff_devaddr *a);
bool nfs4_ff_dec_devaddr(struct xdr_dec *d, struct nfs4_ff_devaddr *a);
bool nfs4_ff_dec_layoutreturn(struct xdr_dec *d, struct nfs4_ff_layoutreturn *r);
bool nfs4_ff_dec_layoutupdate(struct xdr_dec *d, struct nfs4_ff_layoutupdate *u);
/* Encoders of the same (what a client sends; for the tests). */
void nfs4_ff_enc_ioerr(struct xdr_enc *e, uint64_t offset, uint64_t length, const struct nfs4_layout_sid *sid,
		       const struct nfs4_device_error *errs, uint32_t n);
void nfs4_ff_enc_layoutupdate(struct xdr_enc *e, const struct nfs4_ff_layoutupdate *u);

/* RFC 5665 §5.2.3.5: "tcp"/"tcp6"/"rdma"/"rdma6" and the universal address of ip:port.
 * false: ip is not a numeric IPv4 or IPv6 address. */
bool nfs4_netaddr_make(struct nfs4_netaddr *na, const char *ip, uint16_t port, bool rdma);

/* ---- the operations ---- */
bool nfs4_dec_getdeviceinfo(struct xdr_dec *d, struct nfs4_getdeviceinfo_args *a);
bool nfs4_dec_getdevicelist(struct xdr_dec *d, struct nfs4_getdevicelist_args *a);
bool nfs4_dec_layoutget(struct xdr_dec *d, struct nfs4_layoutget_args *a);
bool nfs4_dec_layoutreturn(struct xdr_dec *d, struct nfs4_layoutreturn_args *a);
bool nfs4_dec_layoutcommit(struct xdr_dec *d, struct nfs4_layoutcommit_args *a);
bool nfs4_dec_layouterror(struct xdr_dec *d, struct nfs4_layouterror_args *a);
bool nfs4_dec_layoutstats(struct xdr_dec *d, struct nfs4_layoutstats_args *a);
/* The results after their status (NFS4_OK, or the status whose arm has data). */
void nfs4_enc_getdeviceinfo_res(struct xdr_enc *e, uint32_t status, const struct nfs4_getdeviceinfo_res *r);
void nfs4_enc_getdevicelist_res(struct xdr_enc *e, uint32_t status, const struct nfs4_getdevicelist_res *r);
void nfs4_enc_layoutget_res(struct xdr_enc *e, uint32_t status, const struct nfs4_layoutget_res *r);
void nfs4_enc_layoutreturn_res(struct xdr_enc *e, uint32_t status, const struct nfs4_layoutreturn_res *r);
void nfs4_enc_layoutcommit_res(struct xdr_enc *e, uint32_t status, const struct nfs4_layoutcommit_res *r);
/* The same results decoded after their status (a client's side: the tests). */
bool nfs4_dec_getdeviceinfo_res(struct xdr_dec *d, uint32_t status, struct nfs4_getdeviceinfo_res *r);
bool nfs4_dec_getdevicelist_res(struct xdr_dec *d, uint32_t status, struct nfs4_getdevicelist_res *r);
bool nfs4_dec_layoutget_res(struct xdr_dec *d, uint32_t status, struct nfs4_layoutget_res *r);
bool nfs4_dec_layoutreturn_res(struct xdr_dec *d, uint32_t status, struct nfs4_layoutreturn_res *r);
/* Bytes of the LAYOUTGET4resok for r (what loga_maxcount bounds, RFC 8881 §18.43.3). */
uint32_t nfs4_layoutget_size(const struct nfs4_layoutget_res *r);
/* Bytes of the GETDEVICEINFO4resok for a (the gdia_maxcount it must fit, RFC 8881 §18.40.3). */
uint32_t nfs4_getdeviceinfo_size(const struct nfs4_ff_devaddr *a);

#endif
