/*
 * log.c - see log.h. Rate limiting is per call site (each site owns a
 * struct log_limit) and guarded by one mutex, since workers log too.
 */
#include "core/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool log_stderr = true;
static int log_level;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_init(bool to_stderr, int verbosity)
{
	log_stderr = to_stderr;
	log_level = verbosity;
	if (!to_stderr)
		openlog("rnfsd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

int log_verbosity(void)
{
	return log_level;
}

static void log_v(int prio, const char *fmt, va_list ap)
{
	if (log_stderr) {
		static const char *names[] = {"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug"};
		char line[1024];
		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "rnfsd: %s: %s\n", names[prio & 7], line);
	} else {
		vsyslog(prio, fmt, ap);
	}
}

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v(prio, fmt, ap);
	va_end(ap);
}

void log_limited(struct log_limit *lim, int prio, const char *fmt, ...)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	unsigned suppressed = 0;
	bool emit = false;

	pthread_mutex_lock(&log_lock);
	if (lim->last.tv_sec == 0 && lim->last.tv_nsec == 0) {
		lim->tokens = LOG_LIMIT_BURST;
	} else {
		double dt = (double)(now.tv_sec - lim->last.tv_sec) + (now.tv_nsec - lim->last.tv_nsec) / 1e9;
		lim->tokens += dt * LOG_LIMIT_PER_SEC;
		if (lim->tokens > LOG_LIMIT_BURST)
			lim->tokens = LOG_LIMIT_BURST;
	}
	lim->last = now;
	if (lim->tokens >= 1.0) {
		lim->tokens -= 1.0;
		emit = true;
		suppressed = lim->suppressed;
		lim->suppressed = 0;
	} else {
		lim->suppressed++;
	}
	pthread_mutex_unlock(&log_lock);

	if (!emit)
		return;
	if (suppressed)
		log_msg(prio, "(%u similar messages suppressed)", suppressed);
	va_list ap;
	va_start(ap, fmt);
	log_v(prio, fmt, ap);
	va_end(ap);
}

/* Bytes byte c takes once escaped: \\ for a backslash, \xNN outside printable ASCII. */
static size_t log_escaped_width(unsigned char c)
{
	return c == '\\' ? 2 : (c < 0x20 || c > 0x7e) ? 4 : 1;
}

const char *log_escape(char *out, size_t outlen, const void *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = s;
	size_t total = 0, room, o = 0;

	if (outlen < 4) {
		if (outlen)
			out[0] = '\0';
		return out;
	}
	for (size_t i = 0; i < len; i++)
		total += log_escaped_width(p[i]);
	/* All of it if it fits, else as many whole escapes as leave room for "..." */
	room = total < outlen ? total : outlen - 4;
	for (size_t i = 0; i < len && o + log_escaped_width(p[i]) <= room; i++) {
		unsigned char c = p[i];

		if (c == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
		} else if (log_escaped_width(c) == 4) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	if (total >= outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

const char *log_escape_str(char *out, size_t outlen, const char *s)
{
	return log_escape(out, outlen, s, s ? strlen(s) : 0);
}
