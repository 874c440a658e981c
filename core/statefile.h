/*
 * statefile.h - files under the daemon's state directory (rnfsd.conf
 * state-dir, /var/lib/rnfsd), and the only file-system calls made for the
 * protocol layers:
 *   - a secret made once and kept across restarts, such as the file-handle
 *     MAC key (fh.key);
 *   - a file read whole at start, replaced whole atomically (temporary file,
 *     fsync, rename, fsync of the directory) and appended to in between,
 *     such as NFSv4's client records (nfs4-clients, nfs/v4/recovery/).
 * The daemon holds the state directory alone (core/pidlock.h), so a
 * temporary file's name is fixed ("<path>.tmp") and a stale one is reused.
 * Every function sets errno on failure; none logs except statefile_secret().
 */
#ifndef RNFSD_STATEFILE_H
#define RNFSD_STATEFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Fill key[len] from state_dir/name, creating the directory (0700) and the
 * file (0600, never a partial file) with random bytes if it does not exist.
 * A file that cannot be used (wrong size, unreadable) is left alone and a
 * random key is used for this run (logged, naming what the key is for).
 * Returns 0, or -1 if not even random bytes could be had (logged).
 */
int statefile_secret(const char *state_dir, const char *name, uint8_t *key, size_t len, const char *what);

/* Create dir (mode 0700) unless it exists. 0, or -1. */
int statefile_mkdir(const char *dir);

/* The first max bytes of path (the rest is not read) in a malloc'd buffer the caller frees, its
 * length in *len; or NULL (errno ENOENT: no such file). Symbolic links are not followed. */
void *statefile_load(const char *path, size_t max, size_t *len);

/* A new version of a file: statefile_begin(), statefile_put() any number of times, then
 * statefile_commit() (or statefile_abort()). A crash leaves the old version or the new one. */
struct statefile_new {
	int fd;                /* the temporary file; -1 once closed */
	int err;               /* the first error (errno) of begin or put; 0: none */
	const char *path;      /* the file replaced (the caller's string, kept until commit) */
	char tmp[PATH_MAX + 8];
};
/* Create "<path>.tmp" (0600, truncated). 0, or -1 (then commit fails; abort cleans up). */
int statefile_begin(struct statefile_new *w, const char *path);
/* Append len bytes (retried on EINTR and short writes). 0, or -1 (also for every later put). */
int statefile_put(struct statefile_new *w, const void *buf, size_t len);
/* fsync, rename over path, fsync the directory (the rename durable too). 0, or -1: the temporary file
 * is removed; path is the old version, or (only when the directory's fsync failed) the new one. */
int statefile_commit(struct statefile_new *w);
void statefile_abort(struct statefile_new *w);

/* An existing file appended to, each record with one write. */
struct statefile_log {
	int fd; /* -1: closed (statefile_log_init()) */
};
void statefile_log_init(struct statefile_log *l);
bool statefile_log_is_open(const struct statefile_log *l);
/* Open path for appending (closing what l had). 0, or -1 (l closed). */
int statefile_log_open(struct statefile_log *l, const char *path);
/* Append len bytes (retried on EINTR and short writes). 0, or -1. */
int statefile_log_append(struct statefile_log *l, const void *buf, size_t len);
/* Make what was appended durable (fdatasync). 0, or -1. */
int statefile_log_sync(struct statefile_log *l);
void statefile_log_close(struct statefile_log *l);

#endif
