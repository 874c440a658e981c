/*
 * drivers.h - the drivers linked into the daemon, for registry.c: one
 * extern per backend folder, listed in BE_BUILTIN_DRIVERS.
 */
#ifndef RNFSD_BACKEND_DRIVERS_H
#define RNFSD_BACKEND_DRIVERS_H

#include "backend/backend.h"

#define BE_BUILTIN_DRIVERS NULL

#endif
