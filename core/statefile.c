/*
 * statefile.c - files kept under the state directory (statefile.h). Two
 * parts:
 *   1. secrets: written with a temporary file and link(2), so a crash never
 *      leaves a partial key, and two instances starting at once agree on one
 *      key;
 *   2. files replaced whole (temporary file, fsync, rename, fsync of the
 *      directory) and appended to, and read whole at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "core/statefile.h"
#include "core/log.h"

#define STATEFILE_SECRET_MAX 64

/* ---- helpers ---- */

/* Write all of buf (EINTR and short writes retried). 0, or -1 with errno. */
static int statefile_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n < 0 ? errno : EIO;
			return -1;
		}
		p += n, len -= (size_t)n;
	}
	return 0;
}

/* fsync the directory holding path, so a new name in it survives a crash. 0, or -1 with errno. */
static int statefile_sync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, ret, err;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = fsync(fd);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

int statefile_mkdir(const char *dir)
{
	return mkdir(dir, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* ---- 1. secrets ---- */

static int statefile_random(uint8_t *key, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(key + got, len - got, 0);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0)
			got += (size_t)n;
	}
	return 0;
}

/* Reads exactly len bytes from path. 0, or -1 with errno (EINVAL: wrong size). */
static int statefile_read(const char *path, uint8_t *key, size_t len)
{
	uint8_t buf[STATEFILE_SECRET_MAX + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len + 1);
	close(fd);
	if (n != (ssize_t)len) {
		errno = n < 0 ? errno : EINVAL;
		return -1;
	}
	memcpy(key, buf, len);
	return 0;
}

/* Writes key to path without ever exposing a partial file: tmp + link. */
static int statefile_write(const char *path, const uint8_t *key, size_t len)
{
	char tmp[PATH_MAX + 32];
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (statefile_write_all(fd, key, len) < 0 || fsync(fd) < 0)
		err = errno ? errno : EIO;
	close(fd);
	if (!err && link(tmp, path) < 0)
		err = errno;
	unlink(tmp);
	if (!err)
		(void)statefile_sync_dir(path); /* the key is in place either way; this only hastens it to disk */
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int statefile_secret(const char *state_dir, const char *name, uint8_t *key, size_t len, const char *what)
{
	char path[PATH_MAX + 16];

	if (len > STATEFILE_SECRET_MAX || statefile_random(key, len) < 0) {
		log_err("%s: getrandom: %s", what, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", state_dir, name);
	if (statefile_read(path, key, len) == 0)
		return 0;
	if (errno != ENOENT) {
		log_err("%s: %s unusable (%s); using a random key: it will not survive a restart", what, path,
			errno == EINVAL ? "wrong size" : strerror(errno));
		return 0;
	}
	if (statefile_mkdir(state_dir) < 0)
		goto volatile_key;
	if (statefile_write(path, key, len) == 0)
		return 0;
	if (errno == EEXIST && statefile_read(path, key, len) == 0)
		return 0; /* another instance created it first */
volatile_key:
	log_warn("%s: cannot create %s (%s); using a random key: it will not survive a restart", what, path,
		 strerror(errno));
	return 0;
}

/* ---- 2. files replaced whole and appended to ---- */

void *statefile_load(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	uint8_t *buf;

	*len = 0;
	if (fd < 0)
		return NULL;
	buf = malloc(max ? max : 1);
	while (buf && *len < max) {
		ssize_t n = read(fd, buf + *len, max - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	close(fd);
	if (!buf)
		errno = ENOMEM;
	return buf;
}

int statefile_begin(struct statefile_new *w, const char *path)
{
	w->path = path;
	w->err = 0;
	snprintf(w->tmp, sizeof(w->tmp), "%s.tmp", path);
	w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (w->fd < 0)
		w->err = errno;
	return w->fd < 0 ? -1 : 0;
}

int statefile_put(struct statefile_new *w, const void *buf, size_t len)
{
	if (!w->err && statefile_write_all(w->fd, buf, len) < 0)
		w->err = errno;
	errno = w->err ? w->err : errno;
	return w->err ? -1 : 0;
}

void statefile_abort(struct statefile_new *w)
{
	int err = errno;

	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	unlink(w->tmp);
	errno = err;
}

int statefile_commit(struct statefile_new *w)
{
	if (!w->err && fsync(w->fd) < 0)
		w->err = errno;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (!w->err && rename(w->tmp, w->path) < 0)
		w->err = errno;
	if (!w->err && statefile_sync_dir(w->path) < 0)
		w->err = errno;
	if (w->err) {
		statefile_abort(w);
		errno = w->err;
		return -1;
	}
	return 0;
}

void statefile_log_init(struct statefile_log *l)
{
	l->fd = -1;
}

bool statefile_log_is_open(const struct statefile_log *l)
{
	return l->fd >= 0;
}

int statefile_log_open(struct statefile_log *l, const char *path)
{
	statefile_log_close(l);
	l->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	return l->fd < 0 ? -1 : 0;
}

int statefile_log_append(struct statefile_log *l, const void *buf, size_t len)
{
	if (l->fd < 0) {
		errno = EBADF;
		return -1;
	}
	return statefile_write_all(l->fd, buf, len);
}

int statefile_log_sync(struct statefile_log *l)
{
	if (l->fd < 0) {
		errno = EBADF;
		return -1;
	}
	return fdatasync(l->fd);
}

void statefile_log_close(struct statefile_log *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}
