/*
 * prom_server.c - see prom_server.h. libmicrohttpd owns the listening
 * socket, the connections and its thread; prom_answer() is its access
 * handler: the page for GET /metrics (and /), 404 elsewhere, 405 for other
 * methods. Each answer is a fresh open_memstream buffer that libmicrohttpd
 * frees (MHD_RESPMEM_MUST_FREE).
 */
#include "daemon/prom_server.h"

#include "rnfsd_build.h"
#include "core/log.h"

#if HAVE_MICROHTTPD

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "core/stats.h"

#define PROM_CONN_MAX 4        /* scrapers at once */
#define PROM_CONN_TIMEOUT_S 10 /* an idle or slow connection is closed */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

static struct MHD_Daemon *prom_mhd;

/* A short fixed answer (status, text). */
static enum MHD_Result prom_reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The page, rendered now. */
static enum MHD_Result prom_reply_metrics(struct MHD_Connection *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!f)
		return prom_reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	int bad = stats_render_prom(f);
	if (fclose(f) != 0 || bad) {
		free(buf);
		return prom_reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "could not render the metrics\n");
	}
	r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result prom_answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				   const char *version, const char *upload_data, size_t *upload_data_size,
				   void **req_cls)
{
	(void)cls, (void)version, (void)upload_data;
	/* The first call only announces the request's headers (no body expected of a GET). */
	if (!*req_cls) {
		*req_cls = c;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* a body is ignored */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return prom_reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	if (strcmp(url, "/metrics") != 0 && strcmp(url, "/") != 0)
		return prom_reply_text(c, MHD_HTTP_NOT_FOUND, "the metrics are at /metrics\n");
	return prom_reply_metrics(c);
}

/* a as a socket address; false if it is not numeric. */
static bool prom_addr(const struct config_listen *a, struct sockaddr_storage *ss, bool *v6)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, a->addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(a->port);
		*v6 = false;
		return true;
	}
	if (inet_pton(AF_INET6, a->addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(a->port);
		*v6 = true;
		return true;
	}
	return false;
}

bool prom_server_available(void)
{
	return true;
}

int prom_server_start(const struct config_listen *a)
{
	struct sockaddr_storage ss;
	bool v6;

	if (prom_mhd)
		return 0;
	if (!prom_addr(a, &ss, &v6)) {
		log_err("[stats] prometheus = %s:%u: not a numeric address", a->addr, a->port);
		return -1;
	}
	prom_mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0),
				    a->port, NULL, NULL, prom_answer, NULL,
				    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROM_CONN_MAX,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PROM_CONN_TIMEOUT_S,
				    MHD_OPTION_END);
	if (!prom_mhd) {
		log_err("[stats] prometheus = %s%s%s:%u: cannot listen (address in use or not on this host?)",
			v6 ? "[" : "", a->addr, v6 ? "]" : "", a->port);
		return -1;
	}
	log_info("Prometheus metrics on http://%s%s%s:%u/metrics", v6 ? "[" : "", a->addr, v6 ? "]" : "", a->port);
	return 0;
}

void prom_server_stop(void)
{
	if (prom_mhd)
		MHD_stop_daemon(prom_mhd);
	prom_mhd = NULL;
}

#else /* !HAVE_MICROHTTPD */

bool prom_server_available(void)
{
	return false;
}

int prom_server_start(const struct config_listen *a)
{
	log_err("[stats] prometheus = %s:%u: this rnfsd was built without libmicrohttpd (Debian: "
		"libmicrohttpd-dev), so it cannot serve Prometheus metrics; remove the setting or rebuild",
		a->addr, a->port);
	return -1;
}

void prom_server_stop(void)
{
}

#endif
