/*
 * statefile.c - secrets kept under the state directory (statefile.h).
 * Written with a temporary file and link(2), so a crash never leaves a
 * partial key, and two instances starting at once agree on one key.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "core/statefile.h"
#include "core/log.h"

#define STATEFILE_SECRET_MAX 64

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
	if (write(fd, key, len) != (ssize_t)len || fsync(fd) < 0)
		err = errno ? errno : EIO;
	close(fd);
	if (!err && link(tmp, path) < 0)
		err = errno;
	unlink(tmp);
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
	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
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
