/*
 * drivers.h - the drivers linked into the daemon, for registry.c: one
 * extern per backend folder, listed in BE_BUILTIN_DRIVERS.
 */
#ifndef RNFSD_BACKEND_DRIVERS_H
#define RNFSD_BACKEND_DRIVERS_H

#include "backend/backend.h"

extern const struct be_driver local_driver; /* backend/local/ */

#define BE_BUILTIN_DRIVERS &local_driver

#endif
