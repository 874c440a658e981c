/*
 * log.c - see log.h. Rate limiting is per call site (each site owns a
 * struct log_limit) and guarded by one mutex, since workers log too.
 */
#include "log.h"

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
