/*
 * log.h - logging: stderr in the foreground, syslog otherwise. Lines about
 * peers go through a rate limiter so a misbehaving client cannot flood the log.
 */
#ifndef RNFSD_CORE_LOG_H
#define RNFSD_CORE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>
#include <time.h>

void log_init(bool to_stderr, int verbosity);
int log_verbosity(void);
void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A token bucket: at most `burst` lines, refilled at `per_sec` lines a second. */
struct log_limit {
	double tokens;
	struct timespec last;
	unsigned suppressed;
};
#define LOG_LIMIT_BURST 10.0
#define LOG_LIMIT_PER_SEC 1.0
/* Logs unless the bucket is empty; reports how many lines were suppressed. Thread-safe. */
void log_limited(struct log_limit *lim, int prio, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Bytes a peer chose (MNT paths, file names, AUTH_SYS machine names, DNS
 * names, ...) made safe for a log line: every byte outside printable ASCII
 * (0x20..0x7e) becomes \xNN and a backslash becomes \\, so a peer can neither
 * forge or hide lines (newline, carriage return), nor send terminal escape
 * sequences, nor cut a line short (NUL); the escaping stays unambiguous.
 * Written NUL-terminated into out (outlen >= 4), cut short with "..." if it
 * does not fit. Returns out, for use as a "%s" argument. Any thread.
 */
#define LOG_ESCAPED_MAX 512 /* a good size for out */
const char *log_escape(char *out, size_t outlen, const void *s, size_t len);
/* The same for a NUL-terminated string. */
const char *log_escape_str(char *out, size_t outlen, const char *s);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (log_verbosity() > 0) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
