/*
 * main.c - the rnfsd daemon: command line, configuration and exports,
 * start-up in one sequence (unwound in reverse with goto labels), signals
 * through the event loop, graceful shutdown.
 *
 *   rnfsd [-c FILE] [-e FILE] [-f|--foreground] [--export DIR]... [-p PORT]
 *         [--listen ADDR:PORT]... [--check-config] [-v]... [--version] [--help]
 *
 * Where the configuration comes from: -c FILE, else RNFSD_SYSCONFDIR/rnfsd.conf
 * if it exists, else the embedded defaults (config_defaults()).
 * Where the exports come from: -e FILE, else --export DIR (an embedded line
 * "DIR *(rw,root_squash)" per directory; "secure" is the default), else the
 * configuration's exports file if rnfsd.conf names it ("exports =": it must
 * exist) or it exists, else the same embedded line for RNFSD_DEFAULT_EXPORT
 * (created if missing). A reload never falls back to that built-in default
 * when the exports came from a file: a file that went missing is an error,
 * and the running exports stay.
 *
 * Start-up order matters: without -f the process daemonizes (fork, setsid)
 * before any thread or RDMA resource exists; the transports are created
 * before the workers so that, unwinding in reverse, workers_stop() delivers
 * the last completions while the transports still exist. Every transport
 * (TCP, RPC-over-RDMA) is driven the same way through rpc/xprt.h: start,
 * drain, stop (what is left is closed just before workers_stop()), free.
 *
 * One instance per state directory: before daemonizing (so the error reaches
 * the terminal), before any state is read (fh.key, NFSv4 client records) and
 * before rpcbind, rnfsd locks state-dir/rnfsd.lock and <stats-socket>.lock
 * (core/pidlock.h); a second rnfsd with either in common exits 1 naming the
 * first one's pid. --check-config takes no lock (it runs beside the daemon).
 *
 * Event loops ([rnfsd] loops, core/loop_pool.h): loop 0 runs on the main
 * thread (listeners, RDMA, UDP, timers, signals, the calls the server
 * makes); the others each own a share of the TCP connections
 * (transport/tcp_loops.c). They start after the workers and are stopped
 * first, before anything they use is torn down.
 *
 * Signals (handled on the loop thread, loop_signal):
 *   SIGTERM, SIGINT  every transport drains: stops accepting, answers the
 *                    calls in flight, closes its connections (at most
 *                    RNFSD_DRAIN_TIMEOUT_S in all); unregister, exit 0.
 *                    Workers still inside a call RNFSD_WORKERS_STOP_S
 *                    later are logged and left: exit 0 at once around
 *                    them (exit_around_stuck_workers).
 *                    A second one stops at once.
 *   SIGHUP           re-read rnfsd.conf and the exports; a bad file is logged
 *                    with file:line and everything running is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rnfsd_build.h"
#include "backend/backend.h"
#include "conf/config.h"
#include "conf/exports.h"
#include "conf/fd_budget.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/loop_pool.h"
#include "core/notify.h"
#include "core/pidlock.h"
#include "daemon/prom_server.h"
#include "daemon/ctl_exports.h"
#include "daemon/stats_server.h"
#include "core/workers.h"
#include "nfs/nfs.h"
#include "nfs/v4/nfs4.h"
#include "nfs/v4/nfs4_setup.h"
#include "nfs/v4/cb/nfs4_cb.h"
#include "nfs/v4/compound/nfs4_stats.h"
#include "nlm/nlm.h"
#include "nlm/nlm4_xdr.h"
#include "nlm/nlm_reboot.h"
#include "rpc/rpc.h"
#include "rpc/rpc_clnt.h"
#include "rpc/rpc_gss_krb5.h"
#include "rpc/rpc_stats.h"
#include "rpc/rpcbind.h"
#include "rpc/xprt.h"
#include "transport/tcp.h"
#include "transport/rdma_stats.h"
#include "transport/udp.h"
#if HAVE_RDMA
#include "transport/rdma.h"
#endif

#define RNFSD_DEFAULT_EXPORT "/srv/rnfsd"
#define RNFSD_MAX_EXPORT_DIRS 16
#define RNFSD_DRAIN_TIMEOUT_S 10
/* Seconds shutdown then waits for the workers (after the drain: the calls in flight already had
 * RNFSD_DRAIN_TIMEOUT_S, what a worker still runs is a queued call, milliseconds on a local disk, or
 * a call stuck in a backend that stopped answering, which nothing cancels): those still inside a
 * call are left running and the process exits around them. */
#define RNFSD_WORKERS_STOP_S 5
#define RNFSD_STATUS_INTERVAL_S 5
#define RNFSD_ERRLEN 1024
#define RNFSD_MAX_XPRTS 3 /* TCP, UDP (NLM), RPC-over-RDMA */

/* What the command line asked for. */
struct opts {
	const char *conf_path;      /* -c, or NULL */
	const char *exports_path;   /* -e, or NULL */
	const char *export_dirs[RNFSD_MAX_EXPORT_DIRS]; /* --export */
	unsigned n_export_dirs;
	bool foreground;            /* -f: stay attached, log to stderr */
	bool check_config;
	int verbosity;              /* -v count */
	int port;                   /* -p, or -1 */
	struct config_listen listen[CONFIG_MAX_LISTEN]; /* --listen */
	unsigned n_listen;
};

/* The running daemon; touched only by the main (= loop) thread. */
static struct {
	struct opts o;
	struct rnfsd_config cfg;
	char conf_file[PATH_MAX];   /* the rnfsd.conf in use, "" for built-in defaults */
	struct loop *loop;
	struct tcp_xprt *tcp;       /* also d.xprts[0]: its port goes to rpcbind */
	struct udp_xprt *udp;       /* NLM over UDP (with [rnfsd] nlm), or NULL */
	struct xprt *xprts[RNFSD_MAX_XPRTS]; /* every transport, in start order */
	unsigned n_xprts;
	unsigned draining;          /* transports still draining after SIGTERM */
	struct loop_ev *ev_sigterm, *ev_sigint, *ev_sighup;
	struct loop_ev *ev_drain_timeout;
	bool stopping;
	bool exports_from_file;     /* the running exports were read from a file */
	int ready_fd;               /* daemonize: tells the parent we are up; -1 if none */
	struct fd_budget budget;    /* descriptors shared out at start-up (conf/fd_budget.h) */
	uint64_t nofile;            /* RLIMIT_NOFILE then */
	struct pidlock lock_state;  /* state-dir/rnfsd.lock, held for the process's life */
	struct pidlock lock_stats;  /* <stats-socket>.lock, likewise */
} d = {.ready_fd = -1, .lock_state = {.fd = -1}, .lock_stats = {.fd = -1}};

/* The signals the loop handles: blocked from the start until it can. */
static void signals_block(bool block)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rnfsd [-c FILE] [-e FILE] [-f|--foreground] [--export DIR]... [-p PORT]\n"
		"             [--listen ADDR:PORT]... [-v]... \n"
		"       rnfsd --check-config [-c FILE] [-e FILE]\n"
		"       rnfsd --version | --help\n"
		"  -c, --config FILE    configuration (default %s/rnfsd.conf, else built in)\n"
		"  -e, --exports FILE   exports (default: the configuration's exports file)\n"
		"  -f, --foreground     do not daemonize; log to standard error\n"
		"      --export DIR     export DIR as \"DIR *(rw,root_squash)\" instead of a file\n"
		"  -p, --port PORT      TCP port for every listen address\n"
		"      --listen A:P     listen on A:P (repeatable; replaces the configured list)\n"
		"      --check-config   check the configuration and exports, then exit 0 or 1\n"
		"  -v, --verbose        log more (repeatable)\n",
		RNFSD_SYSCONFDIR);
}

enum { OPT_EXPORT = 256, OPT_LISTEN, OPT_CHECK, OPT_VERSION };

/* Returns 0, or the exit status to leave with (0 for --help/--version, 2 on errors). */
static int parse_args(int argc, char **argv, struct opts *o, bool *exit_now)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"exports", required_argument, NULL, 'e'},
		{"foreground", no_argument, NULL, 'f'},
		{"port", required_argument, NULL, 'p'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"export", required_argument, NULL, OPT_EXPORT},
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"check-config", no_argument, NULL, OPT_CHECK},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	int ch;
	char *end;

	memset(o, 0, sizeof(*o));
	o->port = -1;
	*exit_now = false;
	while ((ch = getopt_long(argc, argv, "c:e:fp:vh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->conf_path = optarg;
			break;
		case 'e':
			o->exports_path = optarg;
			break;
		case 'f':
			o->foreground = true;
			break;
		case 'p': {
			long v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < 0 || v > 65535) {
				fprintf(stderr, "rnfsd: bad port '%s'\n", optarg);
				return 2;
			}
			o->port = (int)v;
			break;
		}
		case 'v':
			o->verbosity++;
			break;
		case 'h':
			usage(stdout);
			*exit_now = true;
			return 0;
		case OPT_EXPORT:
			if (o->n_export_dirs == RNFSD_MAX_EXPORT_DIRS) {
				fprintf(stderr, "rnfsd: at most %d --export options\n", RNFSD_MAX_EXPORT_DIRS);
				return 2;
			}
			o->export_dirs[o->n_export_dirs++] = optarg;
			break;
		case OPT_LISTEN:
			if (o->n_listen == CONFIG_MAX_LISTEN ||
			    config_parse_listen(optarg, 2049, &o->listen[o->n_listen]) != 0) {
				fprintf(stderr, "rnfsd: bad or too many --listen '%s'\n", optarg);
				return 2;
			}
			o->n_listen++;
			break;
		case OPT_CHECK:
			o->check_config = true;
			break;
		case OPT_VERSION:
			printf("rnfsd %s\n", RNFSD_VERSION);
			*exit_now = true;
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rnfsd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (o->exports_path && o->n_export_dirs) {
		fprintf(stderr, "rnfsd: -e and --export exclude each other\n");
		return 2;
	}
	return 0;
}

/* ---- configuration and exports ---- */

static bool file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The command line's listen overrides, on top of a loaded configuration. */
static void config_apply_opts(const struct opts *o, struct rnfsd_config *cfg)
{
	if (o->n_listen) {
		memcpy(cfg->tcp_listen, o->listen, o->n_listen * sizeof(o->listen[0]));
		cfg->n_tcp_listen = o->n_listen;
	}
	if (o->port >= 0)
		for (unsigned i = 0; i < cfg->n_tcp_listen; i++)
			cfg->tcp_listen[i].port = (uint16_t)o->port;
}

/*
 * Load rnfsd.conf as described at the top into cfg; conf_file gets its path
 * ("" for built-in defaults). 0, or -1 with the message in err.
 */
static int config_resolve(const struct opts *o, struct rnfsd_config *cfg, char *conf_file,
			  char *err, size_t errlen)
{
	const char *path = o->conf_path;
	char def[PATH_MAX];

	config_defaults(cfg);
	conf_file[0] = '\0';
	if (!path) {
		snprintf(def, sizeof(def), "%s/rnfsd.conf", RNFSD_SYSCONFDIR);
		if (file_exists(def))
			path = def;
	}
	if (path) {
		if (config_load(path, cfg, err, errlen) != 0)
			return -1;
		/* Absolute, so SIGHUP finds it after chdir("/"). */
		if (!realpath(path, conf_file))
			snprintf(conf_file, PATH_MAX, "%s", path);
	}
	config_apply_opts(o, cfg);
	/* [stats] prometheus: one address, and a build that can serve it (daemon/prom_server.h). */
	if (cfg->n_prometheus > 1) {
		snprintf(err, errlen, "%s: [stats] prometheus takes one ADDRESS:PORT, not %u", conf_file,
			 cfg->n_prometheus);
		return -1;
	}
	if (cfg->n_prometheus && !prom_server_available()) {
		snprintf(err, errlen, "%s: [stats] prometheus is set, but this rnfsd was built without "
			 "libmicrohttpd (Debian: libmicrohttpd-dev) and cannot serve Prometheus metrics", conf_file);
		return -1;
	}
	return 0;
}

/* Embedded exports: one "DIR" *(rw,root_squash) line per directory. */
static int exports_embedded(const char *const *dirs, unsigned n, bool create,
			    struct export_table *t, char *err, size_t errlen)
{
	char text[RNFSD_MAX_EXPORT_DIRS * (PATH_MAX + 32)];
	size_t len = 0;

	text[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		char abs[PATH_MAX];
		if (create && mkdir(dirs[i], 0755) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s: %s", dirs[i], strerror(errno));
			return -1;
		}
		if (!realpath(dirs[i], abs)) {
			snprintf(err, errlen, "--export %s: %s", dirs[i], strerror(errno));
			return -1;
		}
		if (strpbrk(abs, "\"\\\n")) {
			snprintf(err, errlen, "--export %s: unsupported character in path", dirs[i]);
			return -1;
		}
		len += (size_t)snprintf(text + len, sizeof(text) - len, "\"%s\" *(rw,root_squash)\n", abs);
	}
	return exports_parse(text, "--export", t, err, errlen);
}

/* Read the configuration's exports file rather than the built-in default? */
static bool exports_use_file(const struct rnfsd_config *cfg, bool reloading)
{
	return cfg->exports_named || file_exists(cfg->exports_file) || (reloading && d.exports_from_file);
}

/*
 * Load the exports as described at the top (reloading: on SIGHUP). 0, or -1
 * with the message in err. *from_file: they were read from a file.
 */
static int exports_resolve(const struct opts *o, const struct rnfsd_config *cfg, bool reloading,
			   struct export_table *t, bool *from_file, char *err, size_t errlen)
{
	static const char *const def[] = {RNFSD_DEFAULT_EXPORT};

	*from_file = true;
	if (o->exports_path)
		return exports_load(o->exports_path, t, err, errlen);
	*from_file = false;
	if (o->n_export_dirs)
		return exports_embedded(o->export_dirs, o->n_export_dirs, false, t, err, errlen);
	if (exports_use_file(cfg, reloading)) {
		*from_file = true;
		return exports_load(cfg->exports_file, t, err, errlen);
	}
	return exports_embedded(def, 1, true, t, err, errlen);
}

/* An export whose xprtsec= this server cannot meet (no [tls] certificate, or no ca for
 * mtls) is served but admits nobody: said once per load. */
static void exports_warn_xprtsec(const struct export_table *t, const struct rnfsd_config *cfg)
{
	const struct export *e = NULL;
	const struct export_client *c = exports_xprtsec_unmet(t, cfg->tls_cert[0] != 0, cfg->tls_ca[0] != 0, &e);
	char modes[24];

	if (!c)
		return;
	export_xprtsec_format(c->opts.xprtsec, modes, sizeof(modes));
	log_warn("exports: %s (line %u) %s: xprtsec=%s cannot be met without [tls] %s in rnfsd.conf: "
		 "no call is admitted", e->path, e->line, c->spec, modes, cfg->tls_cert[0] ? "ca" : "certificate");
}

static const char *exports_source(const struct opts *o, bool from_file, const struct rnfsd_config *cfg)
{
	if (o->exports_path)
		return o->exports_path;
	if (o->n_export_dirs)
		return "--export";
	if (from_file)
		return cfg->exports_file;
	return RNFSD_DEFAULT_EXPORT " (built in)";
}

/* ---- one instance per state directory ---- */

/* Lock path for what ("state-dir X"); 0, 1 if another process holds it (logged), or -1 if the lock
 * cannot be taken at all (logged; start-up goes on: such a directory keeps no state either). */
static int instance_lock_one(struct pidlock *l, const char *path, const char *what)
{
	char err[RNFSD_ERRLEN];
	pid_t holder;

	if (pidlock_acquire(l, path, &holder, err, sizeof(err)) == 0)
		return 0;
	if (holder < 0) {
		log_warn("%s: %s; running without the one-instance lock", what, err);
		return -1;
	}
	if (holder > 0)
		log_err("%s is in use by another rnfsd (pid %ld): refusing to start. Each instance needs its "
			"own state-dir, stats-socket and listen addresses (rnfsd(8), SEVERAL INSTANCES)",
			what, (long)holder);
	else
		log_err("%s is in use by another rnfsd (pid not yet written to %s): refusing to start",
			what, path);
	return 1;
}

/* Both locks (see the top). 0, or 1 when another instance holds one (logged). */
static int instance_lock(const struct rnfsd_config *cfg)
{
	char path[PATH_MAX + 16], what[PATH_MAX + 32];

	/* One level, as core/statefile.c makes it. */
	if (mkdir(cfg->state_dir, 0700) != 0 && errno != EEXIST)
		log_warn("state-dir %s: %s", cfg->state_dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/rnfsd.lock", cfg->state_dir);
	snprintf(what, sizeof(what), "state-dir %s", cfg->state_dir);
	if (instance_lock_one(&d.lock_state, path, what) == 1)
		return 1;
	if (!cfg->stats_socket[0])
		return 0;
	stats_server_make_dir(cfg->stats_socket);
	snprintf(path, sizeof(path), "%s.lock", cfg->stats_socket);
	snprintf(what, sizeof(what), "stats-socket %s", cfg->stats_socket);
	if (instance_lock_one(&d.lock_stats, path, what) == 1) {
		pidlock_release(&d.lock_state);
		return 1;
	}
	return 0;
}

/* After fork: the child keeps the locks; the files name it. */
static void instance_lock_update(void)
{
	pidlock_update(&d.lock_state);
	pidlock_update(&d.lock_stats);
}

/* ---- daemonizing ---- */

/*
 * Fork; the parent waits until the child reports start-up (daemon_ready())
 * and exits 0, or 1 if the child failed. Returns in the child, detached.
 */
static int daemonize(void)
{
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		char c = 1;
		ssize_t r;
		signals_block(false); /* the parent may be interrupted while it waits */
		close(pfd[1]);
		do
			r = read(pfd[0], &c, 1);
		while (r < 0 && errno == EINTR);
		_exit(r == 1 && c == 0 ? 0 : 1);
	}
	close(pfd[0]);
	if (setsid() < 0 || chdir("/") != 0)
		return -1;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	d.ready_fd = pfd[1];
	return 0;
}

/* Tell a waiting parent (if any) how start-up went. */
static void daemon_ready(bool ok)
{
	if (d.ready_fd < 0)
		return;
	char c = ok ? 0 : 1;
	if (write(d.ready_fd, &c, 1) != 1)
		log_warn("cannot report start-up to the parent process: %s", strerror(errno));
	close(d.ready_fd);
	d.ready_fd = -1;
}

/* ---- signals ---- */

/* One transport finished draining; the last one ends the loop. */
static void drained_cb(void *arg)
{
	(void)arg;
	if (d.draining && --d.draining == 0) {
		log_info("all connections closed");
		loop_break(d.loop);
	}
}

static void drain_timeout_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	log_warn("connections still busy after %d s: closing them", RNFSD_DRAIN_TIMEOUT_S);
	loop_break(d.loop);
}

static void sigterm_cb(int signo, short what, void *arg)
{
	(void)what;
	(void)arg;
	if (d.stopping) {
		log_warn("signal %d again: stopping now", signo);
		loop_break(d.loop);
		return;
	}
	d.stopping = true;
	log_info("signal %d: stopping (answering calls in flight)", signo);
	notify_stopping();
	struct timeval tv = {RNFSD_DRAIN_TIMEOUT_S, 0};
	if (loop_ev_add(d.ev_drain_timeout, &tv) != 0)
		log_warn("cannot arm the shutdown timer");
	d.draining = d.n_xprts; /* set first: a drain may be done at once */
	for (unsigned i = 0; i < d.n_xprts; i++)
		d.xprts[i]->ops->drain(d.xprts[i], drained_cb, NULL);
}

/* Settings a reload cannot change: say so rather than pretend. */
static void reload_warn_restart(const struct rnfsd_config *old, const struct rnfsd_config *cur)
{
	if (old->threads != cur->threads || old->drc_entries != cur->drc_entries ||
	    old->max_connections != cur->max_connections || old->max_record != cur->max_record ||
	    old->tcp_max_calls != cur->tcp_max_calls || old->tcp_conn_max_calls != cur->tcp_conn_max_calls ||
	    old->tcp_record_timeout != cur->tcp_record_timeout ||
	    old->tcp_send_timeout != cur->tcp_send_timeout || old->tcp_idle_timeout != cur->tcp_idle_timeout ||
	    old->n_tcp_listen != cur->n_tcp_listen ||
	    memcmp(old->tcp_listen, cur->tcp_listen, sizeof(old->tcp_listen)) != 0 ||
	    old->rdma != cur->rdma || strcmp(old->stats_socket, cur->stats_socket) != 0 ||
	    strcmp(old->state_dir, cur->state_dir) != 0 || old->rpcbind != cur->rpcbind ||
	    old->rpcbind_replace != cur->rpcbind_replace || old->nfsv4 != cur->nfsv4 ||
	    old->nfsv4_grace_time != cur->nfsv4_grace_time || old->nfsv4_lease_time != cur->nfsv4_lease_time ||
	    old->nfsv4_delegations != cur->nfsv4_delegations || old->nfsv4_dir_delegations != cur->nfsv4_dir_delegations ||
	    old->nfsv4_max_clients != cur->nfsv4_max_clients ||
	    old->nfsv4_max_open_files != cur->nfsv4_max_open_files ||
	    old->nfsv4_max_open_files_per_client != cur->nfsv4_max_open_files_per_client ||
	    old->nfsv4_max_lock_owners_per_client != cur->nfsv4_max_lock_owners_per_client ||
	    old->lock_descriptions != cur->lock_descriptions || old->nlm_locks_per_host != cur->nlm_locks_per_host ||
	    old->uring_calls != cur->uring_calls || old->loops != cur->loops || old->uring_personalities != cur->uring_personalities ||
	    old->nfsv4_copy_workers != cur->nfsv4_copy_workers ||
	    old->nfsv4_copy_workers_per_client != cur->nfsv4_copy_workers_per_client ||
	    strcmp(old->nfsv4_idmap, cur->nfsv4_idmap) != 0 || strcmp(old->nfsv4_domain, cur->nfsv4_domain) != 0 ||
	    old->nlm != cur->nlm || old->nlm_udp_port != cur->nlm_udp_port ||
	    old->n_prometheus != cur->n_prometheus || old->n_pnfs_ds != cur->n_pnfs_ds ||
	    memcmp(old->pnfs_ds, cur->pnfs_ds, sizeof(old->pnfs_ds)) != 0 ||
	    old->pnfs_ds_unavailable != cur->pnfs_ds_unavailable ||
	    memcmp(old->prometheus, cur->prometheus, sizeof(old->prometheus)) != 0)
		log_warn("reload: changed listen, threads, loops, cache, TCP limits, RDMA, NFSv4, pNFS, NLM, socket, Prometheus or state settings take effect at the next start");
}

static void reload(void)
{
	struct rnfsd_config cfg;
	struct export_table t = {0};
	char conf_file[PATH_MAX];
	char err[RNFSD_ERRLEN];
	bool from_file;

	if (config_resolve(&d.o, &cfg, conf_file, err, sizeof(err)) != 0) {
		log_err("reload: %s; keeping the running configuration and exports", err);
		return;
	}
	if (exports_resolve(&d.o, &cfg, true, &t, &from_file, err, sizeof(err)) != 0) {
		log_err("reload: %s; keeping the running exports", err);
		return;
	}
	exports_warn_xprtsec(&t, &cfg);
	unsigned n = t.n;
	if (nfs_exports_replace(&t) != 0) {
		exports_free(&t);
		log_err("reload: the new exports cannot be served (see above); keeping the running exports");
		return;
	}
	reload_warn_restart(&d.cfg, &cfg);
	/* RPC-with-TLS: the certificate, key and CA files again (renewed certificates). */
	if (d.tcp && tcp_xprt_tls_reload(d.tcp, &cfg) == 0) {
		memcpy(d.cfg.tls_cert, cfg.tls_cert, sizeof(d.cfg.tls_cert));
		memcpy(d.cfg.tls_key, cfg.tls_key, sizeof(d.cfg.tls_key));
		memcpy(d.cfg.tls_ca, cfg.tls_ca, sizeof(d.cfg.tls_ca));
	}
	/* Only what a reload can change is taken over. */
	memcpy(d.cfg.exports_file, cfg.exports_file, sizeof(d.cfg.exports_file));
	memcpy(d.conf_file, conf_file, sizeof(d.conf_file));
	d.cfg.exports_named = cfg.exports_named;
	d.exports_from_file = from_file;
	ctl_exports_set_file(from_file ? exports_source(&d.o, true, &d.cfg) : NULL);
	log_info("reload: %u exports from %s", n, exports_source(&d.o, from_file, &d.cfg));
}

static void sighup_cb(int signo, short what, void *arg)
{
	char status[256];
	(void)signo;
	(void)what;
	(void)arg;
	if (d.stopping)
		return;
	notify_reloading();
	reload();
	stats_status_line(status, sizeof(status));
	notify_ready(status);
}

static int signals_init(void)
{
	d.ev_sigterm = loop_signal(d.loop, SIGTERM, sigterm_cb, NULL);
	d.ev_sigint = loop_signal(d.loop, SIGINT, sigterm_cb, NULL);
	d.ev_sighup = loop_signal(d.loop, SIGHUP, sighup_cb, NULL);
	d.ev_drain_timeout = loop_timer(d.loop, false, drain_timeout_cb, NULL);
	if (!d.ev_sigterm || !d.ev_sigint || !d.ev_sighup || !d.ev_drain_timeout ||
	    loop_ev_add(d.ev_sigterm, NULL) || loop_ev_add(d.ev_sigint, NULL) ||
	    loop_ev_add(d.ev_sighup, NULL))
		return -1;
	return 0;
}

static void signals_release(void)
{
	loop_ev_free(d.ev_sigterm);
	loop_ev_free(d.ev_sigint);
	loop_ev_free(d.ev_sighup);
	loop_ev_free(d.ev_drain_timeout);
	d.ev_sigterm = d.ev_sigint = d.ev_sighup = d.ev_drain_timeout = NULL;
}

/* ---- descriptors ---- */

/*
 * Issue 24 defect 3: every table that holds descriptors (NFSv4 open files,
 * lock descriptions, the file cache) gets a share of RLIMIT_NOFILE as it is
 * now, after a reserve for connections and the daemon's own, so a client at
 * its bound (or all of them) never leaves accept() or another client's
 * LOOKUP without a descriptor. Before the backends and NFSv4 start.
 */
static void fd_budget_apply(void)
{
	struct rlimit rl = { .rlim_cur = 1024 };
	const struct rnfsd_config *c = &d.cfg;

	(void)getrlimit(RLIMIT_NOFILE, &rl);
	d.nofile = rl.rlim_cur == RLIM_INFINITY ? 1048576 : (uint64_t)rl.rlim_cur;
	/* max-connections is per transport; an RDMA connection holds a descriptor too (its completion
	 * channel); and each NFSv4.0 client record may hold a callback connection of its own (nfs4_cb.c) */
	struct fd_budget_in in = { .nofile = d.nofile,
				   .max_connections = c->max_connections * (c->rdma == CONFIG_NO ? 1 : 2) +
						      (c->nfsv4 ? c->nfsv4_max_clients : 0),
				   .open_files = c->nfsv4_max_open_files,
				   .open_files_per_client = c->nfsv4_max_open_files_per_client,
				   .lock_owners_per_client = c->nfsv4_max_lock_owners_per_client,
				   .lock_descs = c->lock_descriptions, .nlm_locks_per_host = c->nlm_locks_per_host };
	fd_budget_derive(&in, &d.budget);
	be_local_configure(&(struct be_local_settings){ .lock_descriptions = d.budget.lock_descs,
							.file_cache = d.budget.file_cache,
							.uring_personalities = c->uring_calls ? c->uring_personalities : 0 });
	nfs_service_nfs4_bounds(d.budget.open_files, d.budget.open_files_per_client, d.budget.lock_owners_per_client);
	nlm_configure(d.budget.nlm_locks_per_host);
	log_info("descriptors: RLIMIT_NOFILE %llu, %u kept for connections and the daemon, file cache %u; NFSv4 open "
		 "files %u (%u per client), lock descriptions %u (NFSv4 lock owners %u per client, NLM %u per host)",
		 (unsigned long long)d.nofile, d.budget.reserve, d.budget.file_cache, d.budget.open_files,
		 d.budget.open_files_per_client, d.budget.lock_descs, d.budget.lock_owners_per_client,
		 d.budget.nlm_locks_per_host);
	if (d.budget.lowered)
		log_warn("descriptors: a max-open-files, lock-descriptions or per-client setting is larger than "
			 "RLIMIT_NOFILE %llu allows: lowered (raise LimitNOFILE)", (unsigned long long)d.nofile);
}

static uint64_t fds_open(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t n = 0;

	if (!dir)
		return 0;
	while ((e = readdir(dir)))
		n += e->d_name[0] != '.';
	closedir(dir);
	return n ? n - 1 : 0; /* not the directory's own */
}

/* The "resources" section's numbers (the stats thread). */
static void resources_stats(struct stats_resources *out)
{
	struct nlm_counters nc = { 0 };
	unsigned max = 0;

	out->fds = fds_open();
	out->fd_limit = d.nofile;
	out->fd_reserve = d.budget.reserve;
	out->lock_descriptions = be_local_lock_descriptions(&max);
	out->lock_descriptions_max = max;
	out->lock_shared_descriptions = be_local_lock_shared(&max);
	out->lock_shared_pieces = max;
	out->uring_personalities = be_local_uring_personalities(&max);
	out->uring_personalities_max = max;
	out->handle_cache = be_local_handle_cache(&out->handle_cache_max, &out->handle_cache_hits,
						  &out->handle_cache_misses);
	if (d.cfg.nlm)
		nlm_counters(&nc);
	out->nlm_owners = nc.owners, out->nlm_held = nc.held, out->nlm_per_host_max = nc.per_host;
	out->nlm_waiters = nc.waiters;
	rpc_gss_counts(&out->gss_contexts, &out->gss_contexts_max, &out->gss_evictions);
}

/* ---- statistics and readiness ---- */

/* The event loop's and the worker pool's utilisation (core/stats.h). */
static void usage_stats(struct stats_usage *out)
{
	struct workers_usage w;

	workers_usage(&w);
	out->loop_busy_s = loop_busy_seconds(d.loop);
	out->workers_busy_s = (double)w.busy_ns / 1e9;
	out->workers = w.threads;
	out->workers_busy = w.busy;
	out->queued = w.queued;
}

/* 0, or -1: the Prometheus page was configured but cannot be served (logged). */
static int stats_start(void)
{
	const struct stats_sources src = {
		.exports_count = nfs_exports_count,
		.procs_foreach = rpc_stats_procs_foreach,
		.inline_counts = rpc_inline_counts,
	};
	stats_set_sources(&src);
	stats_set_usage(usage_stats);
	stats_set_top_clients(d.cfg.prometheus_top_clients);
	/* The document's sections, in order: NFSv4's state, the exports' counters, the descriptors, the calls by flavor, then RPC-over-RDMA's memory. */
	stats_sections_clear();
	if (d.cfg.nfsv4)
		(void)nfs4_stats_sections_add(NULL);
	(void)nfs_stats_sections_add();
	(void)stats_server_resources_add(resources_stats);
	(void)rpc_stats_section_add(); /* calls by flavor, RPCSEC_GSS contexts */
	(void)rdma_stats_sections_add();
	(void)tcp_tls_stats_section_add(); /* RPC-with-TLS handshakes */
	if (tcp_xprt_loops(d.tcp) > 1)
		(void)tcp_loops_stats_section_add(d.tcp); /* connections per event loop */
	stats_server_set_control(ctl_exports_request); /* rnfsctl export ... */
	ctl_exports_set_file(d.exports_from_file ? exports_source(&d.o, true, &d.cfg) : NULL);
	if (d.cfg.stats_socket[0])
		stats_server_start(d.loop, d.cfg.stats_socket); /* logged; serve without it */
	stats_status_start(d.loop, RNFSD_STATUS_INTERVAL_S);
	/* Asked for explicitly: a page that cannot be served fails the start. */
	return d.cfg.n_prometheus ? prom_server_start(&d.cfg.prometheus[0]) : 0;
}

static void stats_stop(void)
{
	prom_server_stop(); /* its thread joined before the sections' owners go */
	stats_status_stop();
	stats_server_stop();
}

/* ---- transports (rpc/xprt.h) ---- */

/* ---- event loops ---- */

/* The loops after loop 0, created (not running) for [rnfsd] loops. 0, or -1 (logged). */
static int loops_create(void)
{
	unsigned n = loop_pool_count(d.cfg.loops, sysconf(_SC_NPROCESSORS_ONLN));

	/* Every rpc_clnt on a connection (NFSv4.1 back channels) lives on loop 0. */
	rpc_clnt_loop_set(d.loop);
	if (n > 1 && d.cfg.uring_calls) {
		log_warn("uring-calls needs loops = 1 (one ring, the first loop's): callers' calls stay on the workers");
		d.cfg.uring_calls = false;
	}
	return n > 1 ? loop_pool_create(n) : 0;
}

/* Every loop stopped: what they still sent each other (an accepted socket on its way, a back
 * channel call or reply) runs here, as on its loop, so that nothing is lost or leaks. */
static void loops_flush(void)
{
	for (unsigned round = 0; round < 8 && loop_flush(d.loop) + loop_pool_flush() > 0; round++)
		;
}

/* A TCP shard and a workers home per extra loop. 0, or -1 (logged). */
static int loops_add_tcp(void)
{
	for (unsigned i = 1; loop_pool_get(i); i++) {
		int home = workers_home_add(loop_pool_get(i));
		if (home < 0 || tcp_xprt_add_loop(d.tcp, loop_pool_get(i), (unsigned)home) != 0)
			return -1;
	}
	return 0;
}

/* Create every configured transport and start it. 0, or -1 (logged). */
static int xprts_start(void)
{
	_Static_assert(RNFSD_MAX_XPRTS >= 3, "room for TCP, UDP and RDMA");
	struct tcp_params tp;

	tcp_params_from_config(&tp, &d.cfg);
	d.tcp = tcp_xprt_create(d.loop, &tp);
	if (!d.tcp)
		return -1;
	d.xprts[d.n_xprts++] = tcp_xprt_base(d.tcp);
	if (loops_add_tcp() != 0)
		return -1;
	if (d.cfg.nlm) {
		struct udp_params up;

		udp_params_from_config(&up, &d.cfg);
		up.progs[up.n_progs++] = NLM_PROGRAM; /* and rpc.statd's notifications, NLM's procedure 16 */
		d.udp = udp_xprt_create(d.loop, &up);
		if (!d.udp)
			return -1;
		d.xprts[d.n_xprts++] = udp_xprt_base(d.udp);
	}
#if HAVE_RDMA
	struct rdma_xprt *rdma = rdma_xprt_create(d.loop, &d.cfg); /* NULL: enable = no */
	if (rdma)
		d.xprts[d.n_xprts++] = rdma_xprt_base(rdma);
#else
	if (d.cfg.rdma == CONFIG_YES) {
		log_err("rdma: built without RDMA support (libibverbs, librdmacm)");
		return -1;
	}
#endif
	for (unsigned i = 0; i < d.n_xprts; i++)
		if (d.xprts[i]->ops->start(d.xprts[i]) != 0)
			return -1;
	return 0;
}

/* Close what is left of every transport's connections; before workers_stop(). */
static void xprts_stop(void)
{
	for (unsigned i = 0; i < d.n_xprts; i++)
		d.xprts[i]->ops->stop(d.xprts[i]);
}

/* After workers_stop(). */
static void xprts_free(void)
{
	while (d.n_xprts > 0) {
		struct xprt *x = d.xprts[--d.n_xprts];
		x->ops->free(x);
	}
	d.tcp = NULL;
	d.udp = NULL;
}

/* ---- main ---- */

/*
 * Workers still inside calls that never returned (a Ceph export whose cluster stopped answering):
 * they use the connections, the exports and the backends' mounts, so nothing is freed or unmounted
 * under them; and exit() would run libraries' destructors (libcephfs's) under their feet. rpcbind
 * and the stats socket are already done with. What the backends cached and was not committed was
 * never promised stable (RFC 1813 §3.3.7: the write verifier changes at the next start).
 */
static _Noreturn void exit_around_stuck_workers(int rc)
{
	if (rc == 0)
		log_info("stopped (calls still inside a backend were abandoned)");
	fflush(NULL);
	_exit(rc);
}

/*
 * The process before any thread: arguments, configuration and exports read,
 * --check-config answered, the instance lock taken, detached unless -f.
 * -1 to go on serving, or the exit code (exports freed).
 */
static int process_prepare(int argc, char **argv, struct export_table *exports)
{
	char err[RNFSD_ERRLEN];
	bool exit_now;

	int arc = parse_args(argc, argv, &d.o, &exit_now);
	if (arc || exit_now)
		return arc;
	log_init(true, d.o.verbosity);

	if (config_resolve(&d.o, &d.cfg, d.conf_file, err, sizeof(err)) != 0 ||
	    exports_resolve(&d.o, &d.cfg, false, exports, &d.exports_from_file, err, sizeof(err)) != 0) {
		fprintf(stderr, "rnfsd: %s\n", err);
		return 1;
	}
	exports_warn_xprtsec(exports, &d.cfg);
	if (d.o.check_config) {
		if (tcp_tls_check_config(&d.cfg) != 0) { /* [tls] files: logged */
			exports_free(exports);
			return 1;
		}
		printf("%s: ok\n%s: %u exports ok\n", d.conf_file[0] ? d.conf_file : "built-in configuration",
		       exports_source(&d.o, d.exports_from_file, &d.cfg), exports->n);
		exports_free(exports);
		return 0;
	}

	if (instance_lock(&d.cfg) != 0) {
		exports_free(exports);
		return 1;
	}
	/* Before any thread or RDMA resource: those do not survive fork(). */
	if (!d.o.foreground && daemonize() != 0) {
		fprintf(stderr, "rnfsd: cannot daemonize: %s\n", strerror(errno));
		exports_free(exports);
		return 1;
	}
	instance_lock_update();
	log_init(d.o.foreground, d.o.verbosity);
	return -1;
}

/* Everything is up: rpcbind told, NLM's reclaimers notified, systemd told; the loop runs until a stop. */
static int serve_until_stopped(unsigned reclaimers)
{
	char status[256];

	if (d.cfg.rpcbind) {
		unsigned netids = (tcp_xprt_listens(d.tcp, AF_INET) ? RPCBIND_TCP4 : 0) |
				  (tcp_xprt_listens(d.tcp, AF_INET6) ? RPCBIND_TCP6 : 0);
		rpc_rpcbind_set_replace(d.cfg.rpcbind_replace);
		rpc_rpcbind_register(tcp_xprt_port(d.tcp), netids); /* failures logged */
		if (d.udp)
			nlm_rpcbind_register_udp(udp_xprt_port(d.udp),
						 (udp_xprt_listens(d.udp, AF_INET) ? RPCBIND_UDP4 : 0) |
						 (udp_xprt_listens(d.udp, AF_INET6) ? RPCBIND_UDP6 : 0));
	}
	if (reclaimers && d.cfg.reboot_notify)
		(void)nlm_reboot_notify(d.cfg.statd_dir); /* they reclaim now that rnfsd serves; failure logged */

	log_info("rnfsd %s: serving %u exports from %s on tcp port %u, %u threads", RNFSD_VERSION,
		 nfs_exports_count(), exports_source(&d.o, d.exports_from_file, &d.cfg), tcp_xprt_port(d.tcp),
		 d.cfg.threads);
	stats_status_line(status, sizeof(status));
	notify_ready(status);
	daemon_ready(true);

	return loop_run(d.loop) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct export_table exports = {0};
	unsigned reclaimers;
	int rc = 1;

	signal(SIGPIPE, SIG_IGN); /* a peer's reset is an error return, not a death */
	signals_block(true);      /* until the loop handles them */
	int prc = process_prepare(argc, argv, &exports);
	if (prc >= 0)
		return prc;

	d.loop = loop_new();
	if (!d.loop) {
		log_err("cannot create the event loop");
		goto err_loop;
	}
	/* Before any listener: a signal must never find the default action. */
	if (signals_init() != 0) {
		log_err("cannot set up signal handling");
		goto err_signals;
	}
	signals_block(false); /* pending ones reach the loop's handlers */
	if (rpc_init(d.cfg.drc_entries) != 0)
		goto err_rpc;
	/* RPCSEC_GSS: off unless the keytab holds keys. */
	if (rpc_gss_init(d.cfg.keytab, d.cfg.gss_host_root, d.cfg.gss_contexts, d.cfg.gss_contexts_per_client) != 0)
		goto err_nfs;
	fd_budget_apply();
	if (nfs_service_init(&d.cfg, &exports) != 0)
		goto err_nfs;
	/* XNFS §10.4, §11: the hosts statd still monitors held locks before this start */
	reclaimers = d.cfg.nlm ? nlm_reboot_hosts(d.cfg.statd_dir) : 0;
	if (d.cfg.nlm && (nlm_register() != 0 ||
			  nlm_start(d.loop, nlm_reboot_grace(d.cfg.grace_period, d.cfg.grace_period_set, reclaimers)) != 0))
		goto err_xprts;
	/* NFSv4 callback paths: calls made from the loop thread (nfs/v4/cb/nfs4_cb.h). */
	if (d.cfg.nfsv4 && nfs4_cb_start(d.loop) != 0)
		goto err_xprts;
	/* NFSv4 leases expire on a timer, not only when some client calls (nfs/v4/nfs4.h). */
	if (d.cfg.nfsv4 && nfs4_expiry_start(nfs_service_nfs4(), d.loop) != 0)
		goto err_xprts;
	if (loops_create() != 0)
		goto err_xprts;
	rpc_inline_configure(d.cfg.inline_calls);
	rpc_inline_callers(d.cfg.uring_calls && d.cfg.inline_calls);
	if (d.cfg.uring_calls)
		(void)be_local_loop_prepare(); /* failure logged: the workers act as the callers */
	if (xprts_start() != 0)
		goto err_xprts;
	if (workers_start(d.loop, d.cfg.threads) != 0)
		goto err_workers;
	if (loop_pool_run() != 0 || stats_start() != 0)
		goto stop_serving;
	rc = serve_until_stopped(reclaimers);
stop_serving:
	loop_pool_stop(); /* the other loops first: nothing below runs beside them */
	loops_flush();
	nfs4_cb_stop(); /* callbacks in flight dropped; their connections let go */
	nfs4_expiry_stop(nfs_service_nfs4());

	rpc_rpcbind_unregister(); /* what was registered, if anything */
	stats_stop();
	xprts_stop();
	/* last completions reach the transports */
	if (workers_stop_within(RNFSD_WORKERS_STOP_S) != 0)
		exit_around_stuck_workers(rc); /* logged which calls */
err_workers:
err_xprts:
	loop_pool_stop(); /* idempotent */
	nfs4_cb_stop(); /* idempotent */
	nfs4_expiry_stop(nfs_service_nfs4());
	xprts_free();
	nlm_stop(); /* after the workers: no NLM call runs; its locks released */
	nfs_service_shutdown();
err_nfs:
	rpc_gss_release();
	rpc_release();
err_rpc:
err_signals:
	signals_release();
	loop_pool_free(); /* after the transports and the workers: their events are gone */
	loop_free(d.loop);
err_loop:
	exports_free(&exports);
	if (rc == 0)
		log_info("stopped");
	daemon_ready(rc == 0);
	return rc;
}
