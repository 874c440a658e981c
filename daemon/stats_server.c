/*
 * stats_server.c - see stats_server.h.
 *
 * Three parts:
 *   1. the periodic STATUS= line (core/notify.h);
 *   2. the socket: a listener and at most STATS_MAX_CLIENTS clients, all
 *      driven by the loop. A client's state machine:
 *
 *        accept --(peer uid ok)--> READING --(newline or EOF)--> WRITING --(all sent)--> closed
 *              \--(uid refused)--> closed        any error or STATS_CLIENT_TIMEOUT --> closed
 *
 *      stats_client_close() is the only close path;
 *   3. the "resources" section of the document.
 */
#include "daemon/stats_server.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rnfsd_build.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/notify.h"

#define STATS_MAX_CLIENTS 8
#define STATS_CLIENT_TIMEOUT_S 5
#define STATS_REQ_MAX (PATH_MAX + 512) /* "export add PATH CLIENT(OPTIONS)" */

/* ---- 1. periodic STATUS= ---- */

static struct loop_ev *status_timer;
static struct timeval status_interval;

void stats_status_refresh(void)
{
	char line[256];
	stats_status_line(line, sizeof(line));
	notify_status("%s", line);
}

static void stats_status_tick(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	stats_status_refresh();
}

int stats_status_start(struct loop *l, unsigned interval_s)
{
	if (!notify_enabled())
		return 0;
	status_timer = loop_timer(l, true, stats_status_tick, NULL);
	if (!status_timer)
		return -1;
	status_interval.tv_sec = interval_s ? interval_s : 1;
	if (loop_ev_add(status_timer, &status_interval) != 0) {
		loop_ev_free(status_timer);
		status_timer = NULL;
		return -1;
	}
	stats_status_refresh();
	return 0;
}

void stats_status_stop(void)
{
	loop_ev_free(status_timer);
	status_timer = NULL;
}

/* ---- 2. the socket ---- */

struct stats_client {
	int fd;                 /* -1: slot free */
	struct loop_ev *ev;
	bool writing;
	char req[STATS_REQ_MAX];
	size_t req_len;
	char *out;              /* the document, from open_memstream */
	size_t out_len, out_sent;
};

static struct loop *stats_loop;
static int stats_listen_fd = -1;
static struct loop_ev *stats_listen_ev;
static char stats_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct stats_client stats_clients[STATS_MAX_CLIENTS];
static struct log_limit stats_refuse_limit;
static int (*stats_control)(char *req, FILE *out);

void stats_server_set_control(int (*handler)(char *req, FILE *out))
{
	stats_control = handler;
}

static void stats_client_close(struct stats_client *c)
{
	loop_ev_free(c->ev);
	c->ev = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_sent = c->req_len = 0;
	c->writing = false;
}

static void stats_client_cb(int fd, short what, void *arg);

/* Re-arm the client's event for reading or writing, with the timeout. */
static int stats_client_arm(struct stats_client *c, short what)
{
	const struct timeval tmo = {.tv_sec = STATS_CLIENT_TIMEOUT_S};

	loop_ev_free(c->ev);
	c->ev = loop_io(stats_loop, c->fd, what | LOOP_PERSIST, stats_client_cb, c);
	if (!c->ev || loop_ev_add(c->ev, &tmo) != 0)
		return -1;
	return 0;
}

/* The request is complete: render the answer and start writing it. */
static int stats_client_answer(struct stats_client *c)
{
	char *req = c->req;
	req[c->req_len] = '\0';
	req[strcspn(req, "\r\n")] = '\0';

	FILE *f = open_memstream(&c->out, &c->out_len);
	if (!f)
		return -1;
	if (!*req || !strcmp(req, "stats"))
		stats_render_json(f);
	else if (!strcmp(req, "stats verbose"))
		stats_render_json_verbose(f);
	else if (!stats_control || stats_control(req, f) != 0)
		fprintf(f, "{\"error\": \"unknown request\"}\n");
	if (fclose(f) != 0)
		return -1;
	c->writing = true;
	return stats_client_arm(c, LOOP_WRITE);
}

static void stats_client_read(struct stats_client *c)
{
	ssize_t n = read(c->fd, c->req + c->req_len, sizeof(c->req) - 1 - c->req_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		stats_client_close(c);
		return;
	}
	c->req_len += (size_t)n;
	bool line = memchr(c->req, '\n', c->req_len) != NULL;
	if (n == 0 || line || c->req_len == sizeof(c->req) - 1) {
		if (stats_client_answer(c) != 0)
			stats_client_close(c);
	}
}

static void stats_client_write(struct stats_client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		stats_client_close(c);
		return;
	}
	c->out_sent += (size_t)n;
	if (c->out_sent == c->out_len)
		stats_client_close(c);
}

static void stats_client_cb(int fd, short what, void *arg)
{
	struct stats_client *c = arg;
	(void)fd;

	if (what & LOOP_TIMEOUT)
		stats_client_close(c);
	else if (c->writing)
		stats_client_write(c);
	else
		stats_client_read(c);
}

/* Root only: the socket is 0600 already (a non-root caller's connect() is EACCES); the peer's
 * uid is checked as well, in case the mode was widened. A refused peer is told why in one line
 * (the socket is new and empty: a short send does not block) before the close. */
static bool stats_peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char msg[160];
	int n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return false;
	if (cred.uid == 0 || cred.uid == geteuid())
		return true;
	log_limited(&stats_refuse_limit, LOG_WARNING,
		    "stats socket: refused pid %ld uid %u (root only)", (long)cred.pid, (unsigned)cred.uid);
	n = snprintf(msg, sizeof(msg), "{\"error\": \"permission denied: the control socket is root-only "
		     "(caller uid %u)\"}\n", (unsigned)cred.uid);
	(void)!send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	return false;
}

static void stats_accept_cb(int fd, short what, void *arg)
{
	(void)what;
	(void)arg;

	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	if (!stats_peer_allowed(cfd)) {
		close(cfd);
		return;
	}
	struct stats_client *c = NULL;
	for (unsigned i = 0; i < STATS_MAX_CLIENTS; i++) {
		if (stats_clients[i].fd < 0) {
			c = &stats_clients[i];
			break;
		}
	}
	if (!c) {
		log_limited(&stats_refuse_limit, LOG_WARNING,
			    "stats socket: more than %d clients at once, refusing one", STATS_MAX_CLIENTS);
		close(cfd);
		return;
	}
	c->fd = cfd;
	if (stats_client_arm(c, LOOP_READ) != 0)
		stats_client_close(c);
}

/*
 * Remove a socket file left by a daemon that died, but refuse to take over
 * one that still answers (another rnfsd is running). 0 if path is free.
 */
static int stats_clear_stale(const struct sockaddr_un *addr)
{
	struct stat st;
	if (lstat(addr->sun_path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		log_err("stats socket %s: %s", addr->sun_path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		log_err("stats socket %s: exists and is not a socket", addr->sun_path);
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = fd < 0 ? -1 : connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	if (fd >= 0)
		close(fd);
	if (r == 0) {
		log_err("stats socket %s: in use (is another rnfsd running?)", addr->sun_path);
		return -1;
	}
	if (unlink(addr->sun_path) != 0) {
		log_err("stats socket %s: cannot remove the stale socket: %s", addr->sun_path, strerror(errno));
		return -1;
	}
	log_info("stats socket %s: replaced a stale socket", addr->sun_path);
	return 0;
}

/*
 * Outside systemd nobody made /run/rnfsd (RuntimeDirectory= does): create
 * the socket's directory, one level, mode 0755. Errors surface at bind().
 */
void stats_server_make_dir(const char *path)
{
	char dir[sizeof(stats_path)];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) == 0)
		log_info("created %s for the stats socket", dir);
}

int stats_server_start(struct loop *l, const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	if (stats_loop) {
		log_err("stats socket %s: the stats server is already running", path);
		return -1;
	}
	stats_uptime_start();
	if (strlen(path) >= sizeof(addr.sun_path) || path[0] != '/') {
		log_err("stats socket %s: not an absolute path of at most %zu bytes", path,
			sizeof(addr.sun_path) - 1);
		return -1;
	}
	strcpy(addr.sun_path, path);
	stats_server_make_dir(path);
	if (stats_clear_stale(&addr) != 0)
		return -1; /* logged */

	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail_path;
	/* Created 0600 from the start (no window in which others could connect). */
	mode_t old = umask(0177);
	int r = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (r != 0)
		goto fail_fd;
	if (chmod(path, 0600) != 0 || listen(fd, 16) != 0)
		goto fail_unlink;
	stats_listen_ev = loop_io(l, fd, LOOP_READ | LOOP_PERSIST, stats_accept_cb, NULL);
	if (!stats_listen_ev || loop_ev_add(stats_listen_ev, NULL) != 0)
		goto fail_ev;
	for (unsigned i = 0; i < STATS_MAX_CLIENTS; i++)
		stats_clients[i] = (struct stats_client){.fd = -1};
	stats_loop = l;
	stats_listen_fd = fd;
	strcpy(stats_path, path);
	return 0;

fail_ev:
	loop_ev_free(stats_listen_ev);
	stats_listen_ev = NULL;
fail_unlink:
	unlink(path);
fail_fd:
	r = errno;
	close(fd);
	errno = r;
fail_path:
	log_err("stats socket %s: %s", path, strerror(errno));
	return -1;
}

void stats_server_stop(void)
{
	if (!stats_loop)
		return;
	for (unsigned i = 0; i < STATS_MAX_CLIENTS; i++)
		if (stats_clients[i].fd >= 0 || stats_clients[i].ev)
			stats_client_close(&stats_clients[i]);
	loop_ev_free(stats_listen_ev);
	stats_listen_ev = NULL;
	if (stats_listen_fd >= 0) {
		close(stats_listen_fd);
		unlink(stats_path);
	}
	stats_listen_fd = -1;
	stats_loop = NULL;
}

/* ---- 3. "resources" ---- */

static void (*resources_fill)(struct stats_resources *out);

/* fill's numbers and the resident memory. */
static void stats_resources_get(struct stats_resources *r)
{
	unsigned long long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	*r = (struct stats_resources){ 0 };
	resources_fill(r);
	if (f) {
		if (fscanf(f, "%llu %llu", &pages, &rss) == 2)
			r->rss_bytes = rss * (unsigned long long)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
}

static void stats_resources_write(struct json_out *j, const char *name, void *arg)
{
	struct stats_resources r;

	(void)arg;
	stats_resources_get(&r);
	json_obj_open(j, name);
	json_u64(j, "fds", r.fds);
	json_u64(j, "fd_limit", r.fd_limit);
	json_u64(j, "fd_reserve", r.fd_reserve);
	json_u64(j, "lock_descriptions", r.lock_descriptions);
	json_u64(j, "lock_descriptions_max", r.lock_descriptions_max);
	json_u64(j, "lock_shared_descriptions", r.lock_shared_descriptions);
	json_u64(j, "lock_shared_pieces", r.lock_shared_pieces);
	json_u64(j, "uring_personalities", r.uring_personalities);
	json_u64(j, "uring_personalities_max", r.uring_personalities_max);
	json_u64(j, "handle_cache", r.handle_cache);
	json_u64(j, "handle_cache_max", r.handle_cache_max);
	json_u64(j, "handle_cache_hits", r.handle_cache_hits);
	json_u64(j, "handle_cache_misses", r.handle_cache_misses);
	json_u64(j, "nlm_owners", r.nlm_owners);
	json_u64(j, "nlm_held", r.nlm_held);
	json_u64(j, "nlm_per_host_max", r.nlm_per_host_max);
	json_u64(j, "gss_contexts", r.gss_contexts);
	json_u64(j, "gss_contexts_max", r.gss_contexts_max);
	json_u64(j, "gss_evictions", r.gss_evictions);
	json_obj_close(j);
}

/* The same numbers on the Prometheus page (core/prom.h). */
static void stats_resources_prom(struct prom_out *p, void *arg)
{
	struct stats_resources r;

	(void)arg;
	stats_resources_get(&r);
	prom_gauge1(p, "rnfsd_process_resident_memory_bytes", "Resident memory of the rnfsd process",
		    (double)r.rss_bytes);
	prom_gauge1(p, "rnfsd_process_open_fds", "Descriptors open in the rnfsd process", (double)r.fds);
	prom_gauge1(p, "rnfsd_process_max_fds", "RLIMIT_NOFILE of the rnfsd process", (double)r.fd_limit);
	prom_gauge1(p, "rnfsd_lock_descriptions", "The local backend's lock descriptions in use",
		    (double)r.lock_descriptions);
	prom_gauge1(p, "rnfsd_uring_personalities", "Caller identities registered with the io_uring of the receiving thread",
		    (double)r.uring_personalities);
	prom_gauge1(p, "rnfsd_handle_cache_entries", "File handles the local backend keeps for directory listings",
		    (double)r.handle_cache);
	prom_counter1(p, "rnfsd_handle_cache_hits_total", "Directory entries whose handle came from the cache",
		      r.handle_cache_hits);
	prom_counter1(p, "rnfsd_handle_cache_misses_total", "Directory entries whose handle was asked of the kernel",
		      r.handle_cache_misses);
	prom_gauge1(p, "rnfsd_nlm_lock_owners", "NLM lock owners", (double)r.nlm_owners);
	prom_gauge1(p, "rnfsd_nlm_locks", "NLM (owner, file) lock records held", (double)r.nlm_held);
	prom_gauge1(p, "rnfsd_nlm_lock_waiters", "NLM blocked lock requests waiting", (double)r.nlm_waiters);
	prom_gauge1(p, "rnfsd_gss_contexts", "RPCSEC_GSS contexts held", (double)r.gss_contexts);
	prom_counter1(p, "rnfsd_gss_evictions_total", "RPCSEC_GSS contexts evicted from a full table or share",
		      r.gss_evictions);
}

int stats_server_resources_add(void (*fill)(struct stats_resources *out))
{
	resources_fill = fill;
	return stats_section_add_prom(STATS_PLACE_STATE, "resources", stats_resources_write, NULL, stats_resources_prom);
}
