/*
 * notify.h - tell the service manager how the daemon is doing: systemd's
 * sd_notify(3) protocol for a Type=notify unit.
 *
 * Each call sends one datagram of "KEY=VALUE\n" lines to the socket named by
 * $NOTIFY_SOCKET (a file-system path, or "@name" for an abstract socket).
 * Without $NOTIFY_SOCKET (not started by systemd) every call does nothing.
 * With libsystemd (HAVE_LIBSYSTEMD) sd_notify() does the sending; otherwise
 * the built-in notify_send_to() below does, speaking the same protocol.
 *
 * The daemon's sequence (all from the main/loop thread):
 *
 *   start ... every listener up ... notify_ready()        READY=1
 *   SIGHUP  -> notify_reloading() ... reload ... notify_ready()
 *   SIGTERM -> notify_stopping() ... tear down
 *   any time: notify_status("...")                        STATUS=...
 */
#ifndef RNFSD_CORE_NOTIFY_H
#define RNFSD_CORE_NOTIFY_H

#include <stdbool.h>

/* True if $NOTIFY_SOCKET is set (so notifications go somewhere). */
bool notify_enabled(void);

/*
 * Send state (one or more "KEY=VALUE" lines) to $NOTIFY_SOCKET.
 * Returns 1 if sent, 0 if there is no $NOTIFY_SOCKET, -1 on error (errno set).
 */
int notify_send(const char *state);

/*
 * The built-in sender: one datagram with state to socket_name ("/path" or
 * "@abstract"). Always compiled, so it is tested even when libsystemd is
 * used. Returns 1 if sent, -1 on error (errno set).
 */
int notify_send_to(const char *socket_name, const char *state);

/* READY=1 (plus STATUS= if status is not NULL). */
void notify_ready(const char *status);
/* RELOADING=1 with MONOTONIC_USEC= (systemd >= 253 Type=notify-reload wants it). */
void notify_reloading(void);
/* STOPPING=1 */
void notify_stopping(void);
/* STATUS=<formatted text>; newlines in the text are replaced by spaces. */
void notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
