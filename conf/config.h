/*
 * config.h - /etc/rnfsd/rnfsd.conf: an INI file in the style of nfs.conf(5).
 *
 *   # comment
 *   [rnfsd]
 *   threads = 8
 *   [tcp]
 *   listen = 0.0.0.0:2049, [::]:2049
 *   [ceph]
 *   conf = /etc/ceph/ceph.conf
 *
 * Unknown sections or keys, bad values and duplicates are errors naming the
 * file and line. config_defaults() gives the embedded configuration used
 * when no file exists. The struct is plain data: no handles, no allocation.
 */
#ifndef RNFSD_CONFIG_H
#define RNFSD_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_MAX_LISTEN 8

struct config_listen {
	char addr[64]; /* numeric IPv4 or IPv6 address; "0.0.0.0" / "::" for wildcard */
	uint16_t port;
	bool optional; /* "ADDR:PORT optional": skipped (with a warning) where the host has no
	                  such address or address family; any other failure fails start-up */
};

enum config_tristate { CONFIG_NO = 0, CONFIG_YES = 1, CONFIG_AUTO = 2 };
/* [nfsv4] delegations: none, read delegations only, or read and write. */
enum config_deleg { CONFIG_DELEG_NO = 0, CONFIG_DELEG_READ = 1, CONFIG_DELEG_YES = 2 };

#define CONFIG_MAX_DS 8

/* A pNFS data server ([pnfs] data-servers): "ADDR[:PORT][/tcp|/rdma]". */
struct config_ds {
	char addr[64]; /* numeric IPv4 or IPv6 address, canonical form */
	uint16_t port; /* default 2049 over TCP, 20049 over RDMA */
	bool rdma;     /* reached over RPC-over-RDMA (netid "rdma"), else TCP ("tcp") */
};

struct rnfsd_config {
	/* [rnfsd] */
	unsigned threads;             /* worker threads; default 8 */
	unsigned loops;               /* event loops (TCP connections spread over them); default 1, 0: one per
	                                 online CPU (core/loop_pool.h) */
	bool inline_calls;            /* cheap calls on the receiving thread (rpc/rpc_inline.h); default yes */
	bool uring_calls;             /* callers' calls on the receiving thread through io_uring; default no */
	unsigned uring_personalities; /* identities registered with that ring at once; default 256 */
	char keytab[PATH_MAX];        /* RPCSEC_GSS acceptor keys (rpc/rpc_gss_krb5.h); default /etc/krb5.keytab */
	bool gss_host_root;           /* machine principals (nfs/host@REALM) map to root; default no (nobody) */
	unsigned gss_contexts;        /* RPCSEC_GSS context table size; default 4096 */
	unsigned gss_contexts_per_client; /* one client address's share of it; default 256 */
	char exports_file[PATH_MAX];  /* default /etc/rnfsd/exports */
	bool exports_named;           /* set by the file: it must exist (no built-in default) */
	char state_dir[PATH_MAX];     /* file-handle key etc.; default /var/lib/rnfsd */
	char stats_socket[PATH_MAX];  /* default /run/rnfsd/rnfsd.sock */
	bool rpcbind;                 /* register with rpcbind; default yes */
	bool rpcbind_replace;         /* take over registrations another running server holds; default no */
	unsigned drc_entries;         /* duplicate request cache size; default 4096 */
	unsigned max_connections;     /* per transport; default 1024 */
	bool nlm;                     /* serve NLM v4 (locks); default yes */
	unsigned nlm_udp_port;        /* NLM over UDP on this port; default 0: one the kernel picks */
	unsigned grace_period;        /* seconds after start in which only NLM lock reclaims succeed: NLM's
	                               * term of the grace clock it shares with NFSv4 (core/grace.h);
	                               * default 90, applied only when statd names hosts that may reclaim */
	bool grace_period_set;        /* set by the file: applied whether or not any host may reclaim */
	bool reboot_notify;           /* at start, sm-notify -f tells statd's monitored hosts to
	                                 reclaim (NLM); default yes */
	char statd_dir[PATH_MAX];     /* rpc.statd's state directory (sm/, sm.bak/); default /var/lib/nfs */
	/* Descriptor-holding tables (conf/fd_budget.h); 0 (default): derived from RLIMIT_NOFILE */
	unsigned lock_descriptions;   /* the local backend's lock descriptions, all owners */
	unsigned nlm_locks_per_host;  /* NLM lock owners, and (owner, file) records, of one client host */

	/* [tcp] */
	struct config_listen tcp_listen[CONFIG_MAX_LISTEN];
	unsigned n_tcp_listen;        /* default 0.0.0.0:2049 and [::]:2049 optional */
	size_t max_record;            /* largest RPC record accepted; default 1 MiB + 64 KiB */
	unsigned tcp_max_calls;       /* call contexts in all; 0 (default): 16 * threads + 64 */
	unsigned tcp_conn_max_calls;  /* calls one connection may have in flight; 0 (default):
	                                 2 * threads + 16 */
	unsigned tcp_record_timeout;  /* seconds a record may take from its first byte; default 30 */
	unsigned tcp_send_timeout;    /* seconds without send progress before closing; default 60 */
	unsigned tcp_idle_timeout;    /* seconds idle (nothing in flight) before closing; default 360 */

	/* [rdma] */
	enum config_tristate rdma;    /* default auto: serve RDMA when a device exists */
	struct config_listen rdma_listen[CONFIG_MAX_LISTEN];
	unsigned n_rdma_listen;       /* default 0.0.0.0:20049 */
	unsigned rdma_credits;        /* credit grant; default 128, 1..1024 */
	unsigned rdma_initial_credits; /* a new connection's first grant, raised while busy; default 8, 0: credits */
	size_t rdma_inline;           /* receive buffer = inline threshold; default 4096, 1024..65536 */
	size_t rdma_max_payload;      /* largest Read/Write chunk payload; default 1 MiB */
	bool rdma_send_invalidate;    /* offer/use Send With Invalidate; default yes */
	size_t rdma_buffer_pool;      /* registered bulk buffers per device; default 256 MiB */

	/* [nfsv4] */
	bool nfsv4;                   /* serve NFSv4.0, 4.1 and 4.2; default yes */
	unsigned nfsv4_grace_time;    /* seconds of NFSv4 reclaims after a restart when clients of the
	                               * previous boot were recorded; default 90, 0 (none) ..3600 */
	unsigned nfsv4_lease_time;    /* lease_time, seconds; default 90, 10..3600 */
	enum config_deleg nfsv4_delegations; /* grant read (and write) delegations (local exports); default read */
	bool nfsv4_dir_delegations;   /* and directory delegations (GET_DIR_DELEGATION); default no */
	unsigned nfsv4_max_clients;   /* NFSv4 client records; default 4096, 16..4096 */
	unsigned nfsv4_max_clients_per_host;      /* ... from one address; 0 (default): max-clients / 2 */
	unsigned nfsv4_max_clients_per_principal; /* ... by one AUTH_SYS uid/gid; 0 (default): no bound */
	size_t nfsv4_reply_cache_size; /* NFSv4.1 sessions' reply caches, bytes; default 64 MiB, 1 MiB..4 GiB */
	unsigned nfsv4_max_open_files; /* files held open by NFSv4 opens, all clients; 0: derived */
	unsigned nfsv4_max_open_files_per_client; /* opens of one client; 0: derived */
	unsigned nfsv4_max_lock_owners_per_client; /* lock owners + lock states of one client; 0: derived */
	unsigned nfsv4_copy_workers;  /* synchronous COPYs at once (each holds a worker); default 0: threads / 4,
	                                 at least 1; 0..256 */
	unsigned nfsv4_copy_workers_per_client; /* of them, one client's; default 1, 1..256 */
	char nfsv4_idmap[16];         /* owner strings: "numeric" (default) or "names" */
	char nfsv4_domain[256];       /* name@domain's domain; "-" (default): the host's DNS domain */

	/* [stats] */
	struct config_listen prometheus[CONFIG_MAX_LISTEN]; /* the Prometheus page's address (one) */
	unsigned n_prometheus;        /* default 0: not served */
	unsigned prometheus_top_clients; /* calls and bytes of the N busiest client addresses (0: off, at most 20) */

	/* [pnfs]: the flexible-files layouts of exports with pnfs=flexfiles (RFC 8435) */
	struct config_ds pnfs_ds[CONFIG_MAX_DS]; /* the data servers, in device-id order */
	unsigned n_pnfs_ds;           /* default 0: none (such exports offer no layouts) */
	unsigned pnfs_ds_unavailable; /* seconds a data server a client reported failing is not handed
	                                 out; default 60, 0..3600 */

	/* [tls]: RPC-with-TLS over TCP (RFC 9289; transport/tcp_tls.c), PEM files */
	char tls_cert[PATH_MAX];      /* server certificate chain; default none: no TLS offered */
	char tls_key[PATH_MAX];       /* its private key; default: in the certificate's file */
	char tls_ca[PATH_MAX];        /* CAs for client certificates (xprtsec=mtls); default none */

	/* [ceph]: the CephFS backend (exports with fs=ceph) */
	char ceph_conf[PATH_MAX];     /* ceph.conf; default /etc/ceph/ceph.conf */
	char ceph_keyring[PATH_MAX];  /* default /etc/ceph/ceph.$name.keyring (Ceph expands $name) */
	char ceph_id[64];             /* cephx client id; default admin */
	char ceph_fs_name[64];        /* file system; default "-": the cluster's default */
	unsigned ceph_mount_timeout;  /* seconds; default 30, 1..600 */
	unsigned ceph_op_timeout;     /* seconds; default 30, 0 (none) ..3600 */
	unsigned ceph_max_calls;      /* per export inside libcephfs; default 0: threads / 2, at least 1 */
};

void config_defaults(struct rnfsd_config *cfg);

/*
 * Parse path into cfg (which should hold config_defaults() first).
 * Returns 0, or -1 with "FILE:LINE: problem" in err. A missing file is an
 * error here; the caller decides whether a missing default file is fine.
 */
int config_load(const char *path, struct rnfsd_config *cfg, char *err, size_t errlen);

/* Same, from a string (name is used in messages). */
int config_parse(const char *text, const char *name, struct rnfsd_config *cfg, char *err, size_t errlen);

/* "0.0.0.0:2049", "[::]:2049", "192.0.2.1" (default port), each optionally followed by
 * blanks and the word "optional" -> listen. 0 or -1. */
int config_parse_listen(const char *s, uint16_t default_port, struct config_listen *out);

/* "ADDR[:PORT][/tcp|/rdma]" -> a data server (default port by transport). 0 or -1. */
int config_parse_ds(const char *s, struct config_ds *out);

#endif
