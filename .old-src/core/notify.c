/*
 * notify.c - sd_notify(3) for a Type=notify unit: see notify.h.
 *
 * The protocol (sd_notify(3), "NOTIFY_SOCKET"): a datagram of newline-
 * separated KEY=VALUE assignments sent to the AF_UNIX socket named in
 * $NOTIFY_SOCKET; a leading '@' names a socket in the abstract namespace
 * (the '@' becomes a NUL byte). The manager reads our credentials from the
 * socket, so no reply is expected and none is read.
 *
 * Failures are logged once at debug level and otherwise ignored: a daemon
 * must keep serving even if its manager stopped listening.
 */
#include "core/notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rnfsd_build.h"
#include "core/log.h"

/* NOTIFY_BUILTIN_ONLY: the unit test builds this file a second time with it,
 * so that the built-in sender is tested through the notify_*() helpers too. */
#if HAVE_LIBSYSTEMD && !defined(NOTIFY_BUILTIN_ONLY)
#define NOTIFY_USE_LIBSYSTEMD 1
#include <systemd/sd-daemon.h>
#else
#define NOTIFY_USE_LIBSYSTEMD 0
#endif

bool notify_enabled(void)
{
	const char *s = getenv("NOTIFY_SOCKET");
	return s && *s;
}

/* Fill addr from "/path" or "@abstract". Returns the address length, or 0 if invalid. */
static socklen_t notify_addr(const char *name, struct sockaddr_un *addr)
{
	size_t len = strlen(name);

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (len < 2 || len > sizeof(addr->sun_path) || (name[0] != '/' && name[0] != '@'))
		return 0;
	if (name[0] == '/' && len == sizeof(addr->sun_path))
		return 0; /* a path needs its terminating NUL */
	memcpy(addr->sun_path, name, len);
	if (name[0] == '@')
		addr->sun_path[0] = '\0'; /* abstract: the name is not NUL-terminated */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/'));
}

int notify_send_to(const char *socket_name, const char *state)
{
	struct sockaddr_un addr;
	socklen_t alen = notify_addr(socket_name, &addr);
	if (!alen) {
		errno = EINVAL;
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&addr, alen);
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	return 1;
}

int notify_send(const char *state)
{
	if (!notify_enabled())
		return 0;
#if NOTIFY_USE_LIBSYSTEMD
	int r = sd_notify(0, state);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r > 0 ? 1 : 0;
#else
	return notify_send_to(getenv("NOTIFY_SOCKET"), state);
#endif
}

static void notify_or_log(const char *state)
{
	static bool warned;
	if (notify_send(state) < 0 && !warned) {
		warned = true;
		log_debug("sd_notify: cannot notify the service manager: %s", strerror(errno));
	}
}

/* STATUS= text must stay on one line. */
static void notify_flatten(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

void notify_ready(const char *status)
{
	char buf[512];
	if (status) {
		snprintf(buf, sizeof(buf), "READY=1\nSTATUS=%s", status);
		notify_flatten(buf + strlen("READY=1\n"));
		notify_or_log(buf);
	} else {
		notify_or_log("READY=1");
	}
}

void notify_reloading(void)
{
	struct timespec ts;
	char buf[96];

	/* systemd.service(5), Type=notify-reload: RELOADING=1 must carry
	 * MONOTONIC_USEC= (CLOCK_MONOTONIC, microseconds) from systemd 253 on;
	 * older managers ignore the extra field. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, sizeof(buf), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL);
	notify_or_log(buf);
}

void notify_stopping(void)
{
	notify_or_log("STOPPING=1");
}

void notify_status(const char *fmt, ...)
{
	char buf[512];
	int off = snprintf(buf, sizeof(buf), "STATUS=");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + off, sizeof(buf) - (size_t)off, fmt, ap);
	va_end(ap);
	notify_flatten(buf + off);
	notify_or_log(buf);
}
