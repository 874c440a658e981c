/*
 * ceph_module.c - the entry point of the loadable module rnfsd_ceph.so: the
 * one symbol backend/registry.c looks up (BE_MODULE_ENTRY) when an export
 * first names fs=ceph. The module resolves the few daemon functions it calls
 * (logging, be_ceph_settings) from the executable (backend/module.syms).
 */
#include "backend/drivers.h"

const struct be_driver *rnfsd_backend_driver(void);

const struct be_driver *rnfsd_backend_driver(void)
{
	return &ceph_driver;
}
