/*
 * registry.c - the built-in backend drivers, found by name: an export names
 * its driver with the option fs=NAME ("local" when it names none), and
 * be_fs_open() opens one instance of it for that export. Drivers are static
 * data (tests add theirs with be_driver_register()); be_init()/be_shutdown()
 * run each built-in driver's process-wide setup once. Drivers that need
 * process-wide settings from rnfsd.conf (ceph) read them from here.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/drivers.h"

static const struct be_driver *const be_drivers[] = {
	BE_BUILTIN_DRIVERS
};
#define BE_NDRIVERS (sizeof(be_drivers) / sizeof(be_drivers[0]))
#define BE_MAX_EXTRA 4

static const struct be_driver *be_extra[BE_MAX_EXTRA]; /* be_driver_register() */

static unsigned be_initialized; /* drivers whose init ran */
static struct be_ceph_settings be_ceph; /* kept even where no ceph driver is built in */

void be_ceph_configure(const struct be_ceph_settings *s)
{
	be_ceph = *s;
}

const struct be_ceph_settings *be_ceph_settings(void)
{
	return &be_ceph;
}

int be_init(void)
{
	for (; be_initialized < BE_NDRIVERS; be_initialized++) {
		const struct be_driver *d = be_drivers[be_initialized];
		int err = d && d->init ? d->init() : 0;

		if (err) {
			be_shutdown();
			return err;
		}
	}
	return 0;
}

void be_shutdown(void)
{
	while (be_initialized > 0) {
		const struct be_driver *d = be_drivers[--be_initialized];

		if (d && d->shutdown)
			d->shutdown();
	}
}

const struct be_driver *be_driver_find(const char *name)
{
	if (!name || !*name)
		name = "local";
	for (size_t i = 0; i < BE_NDRIVERS; i++)
		if (be_drivers[i] && !strcmp(be_drivers[i]->name, name))
			return be_drivers[i];
	for (size_t i = 0; i < BE_MAX_EXTRA; i++)
		if (be_extra[i] && !strcmp(be_extra[i]->name, name))
			return be_extra[i];
	return NULL;
}

int be_driver_register(const struct be_driver *d)
{
	for (size_t i = 0; i < BE_MAX_EXTRA; i++) {
		if (!be_extra[i]) {
			be_extra[i] = d;
			return 0;
		}
	}
	return ENOSPC;
}

int be_fs_open(const char *driver, const struct be_fs_config *cfg, struct be_fs **out)
{
	const struct be_driver *d = be_driver_find(driver);

	*out = NULL;
	return d ? d->open(cfg, out) : ENOENT;
}
