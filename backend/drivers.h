/*
 * drivers.h - the drivers linked into the daemon, for registry.c: one
 * extern per backend folder, listed in BE_BUILTIN_DRIVERS.
 */
#ifndef RNFSD_BACKEND_DRIVERS_H
#define RNFSD_BACKEND_DRIVERS_H

#include "backend/backend.h"

#include "rnfsd_build.h"

extern const struct be_driver local_driver; /* backend/local/ */
#if HAVE_CEPH
extern const struct be_driver ceph_driver; /* backend/ceph/ */
#define BE_BUILTIN_DRIVERS &local_driver, &ceph_driver
#else
#define BE_BUILTIN_DRIVERS &local_driver
#endif

#endif
