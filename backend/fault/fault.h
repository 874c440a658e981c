/*
 * fault.h - the "fault" backend, for tests only (never linked into the
 * daemon): an instance wraps an instance of another backend and passes every
 * call through, except where a rule says otherwise:
 *
 *   BE_FAULT_ERROR  the call fails with an errno value (EIO, ENOSPC, EDQUOT,
 *                   ESTALE, ...) without reaching the inner backend
 *   BE_FAULT_SHORT  read/write move at most short_bytes (a short read, a
 *                   partial write), as a real file system may
 *   BE_FAULT_DELAY  the call sleeps delay_ms, then passes through (a slow disk)
 *   BE_FAULT_HOLD   the call blocks until be_fault_release(), then passes
 *                   through: a test holds one client's call inside the backend
 *                   and proves every other client is still served (no timed
 *                   assertions: the test waits for events, never for time)
 *
 * A rule names one operation (or BE_FAULT_ANY), fires on the nth matching
 * call from when it is set (1: the next) and then once, or on every call
 * from then on (always). One rule per operation; setting one replaces it.
 *
 * As a driver ("fault", registered by the test with be_fault_register()),
 * an export with fs=fault opens a "local" instance of its path and wraps it;
 * be_fault_find() then gives the test that instance to command.
 */
#ifndef RNFSD_BACKEND_FAULT_H
#define RNFSD_BACKEND_FAULT_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"

enum be_fault_op {
	BE_FAULT_ANY = 0,
	BE_FAULT_ROOT,
	BE_FAULT_OPEN_HANDLE,
	BE_FAULT_HANDLE,
	BE_FAULT_OBJ_DUP,
	BE_FAULT_LOOKUP_PATH,
	BE_FAULT_GETATTR,
	BE_FAULT_SETATTR,
	BE_FAULT_ACCESS,
	BE_FAULT_LOOKUP,
	BE_FAULT_READLINK,
	BE_FAULT_CREATE,
	BE_FAULT_LINK,
	BE_FAULT_REMOVE,
	BE_FAULT_RMDIR,
	BE_FAULT_RENAME,
	BE_FAULT_READDIR,
	BE_FAULT_STATFS,
	BE_FAULT_COMMIT_META,
	BE_FAULT_FILE_OPEN,
	BE_FAULT_FILE_OPEN_HANDLE,
	BE_FAULT_FILE_GETATTR,
	BE_FAULT_READ,
	BE_FAULT_WRITE,
	BE_FAULT_COMMIT,
	BE_FAULT_ALLOCATE,
	BE_FAULT_SEEK,
	BE_FAULT_COPY,
	BE_FAULT_CLONE,
	BE_FAULT_LOCK_TEST,
	BE_FAULT_LOCK_SET,
	BE_FAULT_LOCK_UNSET,
	BE_FAULT_GETXATTR,
	BE_FAULT_SETXATTR,
	BE_FAULT_LISTXATTR,
	BE_FAULT_REMOVEXATTR,
	BE_FAULT_NOPS,
};

enum be_fault_kind {
	BE_FAULT_ERROR = 0,
	BE_FAULT_SHORT,
	BE_FAULT_DELAY,
	BE_FAULT_HOLD,
};

struct be_fault_rule {
	enum be_fault_op op;
	enum be_fault_kind kind;
	int err;             /* BE_FAULT_ERROR: the errno value (or BE_E*) returned */
	unsigned nth;        /* fire on the nth matching call from now; 0 is taken as 1 */
	bool always;         /* and on every matching call after it (else once) */
	size_t short_bytes;  /* BE_FAULT_SHORT */
	unsigned delay_ms;   /* BE_FAULT_DELAY */
};

/* Wrap inner (taken: closing the result closes it). NULL on allocation failure. */
struct be_fs *be_fault_wrap(struct be_fs *inner);
/* Make the "fault" driver findable by be_fs_open(). */
int be_fault_register(void);
/* The fault instance opened for the export at path (most recent), or NULL. */
struct be_fs *be_fault_find(const char *path);

/* Set (replace) the rule for r->op. */
void be_fault_set(struct be_fs *fs, const struct be_fault_rule *r);
/* Drop every rule and release held calls. */
void be_fault_clear(struct be_fs *fs);
/* Calls of op seen so far (BE_FAULT_ANY: all). */
unsigned be_fault_calls(struct be_fs *fs, enum be_fault_op op);
/* Block until at least n calls are held (BE_FAULT_HOLD). */
void be_fault_wait_held(struct be_fs *fs, unsigned n);
/* Let every held call go on; later matching calls are not held (the rule is dropped). */
void be_fault_release(struct be_fs *fs);

#endif
