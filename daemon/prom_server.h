/*
 * prom_server.h - the Prometheus page over HTTP ([stats] prometheus =
 * ADDRESS:PORT, rnfsd.conf(5)): GET /metrics answers the text exposition
 * format that core/stats.c's stats_render_prom() writes from the registry
 * and the sections' Prometheus writers.
 *
 * The HTTP server is libmicrohttpd's, on its own internal polling thread
 * (never the loop thread), with a small connection limit and timeout; this
 * file has no HTTP code of its own. The page is rendered on that thread from
 * relaxed atomic counters and the sections' snapshots, which take only the
 * short locks the JSON document takes as well.
 *
 * Built only where libmicrohttpd was found (HAVE_MICROHTTPD); otherwise
 * prom_server_start() refuses a configured address with a clear error.
 */
#ifndef RNFSD_PROM_SERVER_H
#define RNFSD_PROM_SERVER_H

#include <stdbool.h>

#include "conf/config.h"

/* Whether this build can serve the page. */
bool prom_server_available(void);
/* Main thread, after the stats sections are added. Listen on a and serve. 0, or -1 (logged). */
int prom_server_start(const struct config_listen *a);
/* Stop the server and join its thread (no-op if not running). */
void prom_server_stop(void);

#endif
