/*
 * drivers.h - the drivers of the daemon, for registry.c: those linked in
 * (one extern per backend folder, listed in BE_BUILTIN_DRIVERS) and those
 * built as loadable modules (BE_MODULE_DRIVERS, names only: registry.c
 * loads rnfsd_NAME.so when an export first names it, so a daemon without
 * such exports never maps the module's libraries; libcephfs alone costs
 * ~9 MiB of resident memory).
 */
#ifndef RNFSD_BACKEND_DRIVERS_H
#define RNFSD_BACKEND_DRIVERS_H

#include "backend/backend.h"

#include "rnfsd_build.h"

extern const struct be_driver local_driver; /* backend/local/ */
#define BE_BUILTIN_DRIVERS &local_driver

extern const struct be_driver ceph_driver; /* backend/ceph/, in the module rnfsd_ceph.so */
#if HAVE_CEPH
#define BE_MODULE_DRIVERS "ceph"
#else
#define BE_MODULE_DRIVERS NULL
#endif

/* The one symbol a module exports (backend/ceph/ceph_module.c). */
typedef const struct be_driver *(*be_module_entry_fn)(void);
#define BE_MODULE_ENTRY "rnfsd_backend_driver"

#endif
