/*
 * statefile.h - small files under the daemon's state directory (rnfsd.conf
 * state-dir, /var/lib/rnfsd): a secret made once and kept across restarts,
 * such as the file-handle MAC key (fh.key); later NFSv4's server identity
 * and NSM's state number.
 */
#ifndef RNFSD_STATEFILE_H
#define RNFSD_STATEFILE_H

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

#endif
