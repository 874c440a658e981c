/*
 * registry.c - the backend drivers, found by name: an export names its
 * driver with the option fs=NAME ("local" when it names none), and
 * be_fs_open() opens one instance of it for that export. Drivers are static
 * data: built in (local), loaded from a module the first time an export
 * names one (ceph: rnfsd_ceph.so, looked for beside the executable in
 * backend/, as in the build tree, then in RNFSD_MODULEDIR), or added by
 * tests with be_driver_register(). be_init()/be_shutdown() run the built-in
 * drivers' process-wide setup once; a module's runs when it is loaded.
 * Drivers that need process-wide settings from rnfsd.conf (ceph) read them
 * from here.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/drivers.h"
#include "core/log.h"

static const struct be_driver *const be_drivers[] = {
	BE_BUILTIN_DRIVERS
};
#define BE_NDRIVERS (sizeof(be_drivers) / sizeof(be_drivers[0]))
#define BE_MAX_EXTRA 4

static const struct be_driver *be_extra[BE_MAX_EXTRA]; /* be_driver_register() */
static const char *const be_module_names[] = { BE_MODULE_DRIVERS };
static const struct be_driver *be_loaded[sizeof(be_module_names) / sizeof(be_module_names[0])];
static pthread_mutex_t be_module_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned be_initialized; /* drivers whose init ran */
static struct be_ceph_settings be_ceph; /* kept even where no ceph driver is built in */
static struct be_local_settings be_local;

/* The lock release listeners (NLM's retry thread, NFSv4's CB_NOTIFY_LOCK waiters). */
static void (*_Atomic be_lock_listeners[BE_LOCK_LISTENERS])(void);

bool be_lock_listen(void (*released)(void))
{
	for (unsigned i = 0; released && i < BE_LOCK_LISTENERS; i++) {
		void (*none)(void) = NULL;

		if (atomic_load(&be_lock_listeners[i]) == released ||
		    atomic_compare_exchange_strong(&be_lock_listeners[i], &none, released))
			return true;
	}
	return false;
}

void be_lock_unlisten(void (*released)(void))
{
	for (unsigned i = 0; i < BE_LOCK_LISTENERS; i++) {
		void (*was)(void) = released;

		atomic_compare_exchange_strong(&be_lock_listeners[i], &was, NULL);
	}
}

void be_lock_released(void)
{
	for (unsigned i = 0; i < BE_LOCK_LISTENERS; i++) {
		void (*released)(void) = atomic_load(&be_lock_listeners[i]);

		if (released)
			released();
	}
}

/* The change listener (NFSv4's delegations: nfs4_proc_deleg.c). */
static void (*_Atomic be_change_listener)(const struct be_change *c);

void be_change_listen(void (*changed)(const struct be_change *c))
{
	atomic_store(&be_change_listener, changed);
}

void be_changed(const struct be_change *c)
{
	void (*changed)(const struct be_change *c) = atomic_load(&be_change_listener);

	if (changed)
		changed(c);
}

/* The lease listener (NFSv4's delegations: nfs4_deleg_watch.c). */
static void (*_Atomic be_lease_listener)(int lid);

void be_lease_listen(void (*broken)(int lid))
{
	atomic_store(&be_lease_listener, broken);
}

void be_lease_broken(int lid)
{
	void (*broken)(int lid) = atomic_load(&be_lease_listener);

	if (broken)
		broken(lid);
}

void be_ceph_configure(const struct be_ceph_settings *s)
{
	be_ceph = *s;
}

const struct be_ceph_settings *be_ceph_settings(void)
{
	return &be_ceph;
}

void be_local_configure(const struct be_local_settings *s)
{
	be_local = *s;
}

bool be_caller_here(void)
{
	return be_local.uring_personalities != 0;
}

const struct be_local_settings *be_local_settings(void)
{
	return &be_local;
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
	/* Modules stay mapped: their libraries may have threads of their own. */
	pthread_mutex_lock(&be_module_lock);
	for (size_t i = 0; i < sizeof(be_loaded) / sizeof(be_loaded[0]); i++) {
		if (be_loaded[i] && be_loaded[i]->shutdown)
			be_loaded[i]->shutdown();
		be_loaded[i] = NULL;
	}
	pthread_mutex_unlock(&be_module_lock);
	while (be_initialized > 0) {
		const struct be_driver *d = be_drivers[--be_initialized];

		if (d && d->shutdown)
			d->shutdown();
	}
}

/* path <- "DIR/rnfsd_NAME.so"; false if it does not fit. */
static bool be_module_path(char *path, size_t cap, const char *dir, size_t dir_len, const char *name)
{
	int n = snprintf(path, cap, "%.*s/rnfsd_%s.so", (int)dir_len, dir, name);

	return n > 0 && (size_t)n < cap;
}

/* Load module i (be_module_lock held): its driver, initialised, or NULL (logged). */
static const struct be_driver *be_module_load(size_t i)
{
	const char *name = be_module_names[i];
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *slash;
	bool found = false;

	/* beside the executable (the build tree: build/rnfsd, build/backend/), then the installed directory */
	if (n > 0 && (exe[n] = 0, slash = strrchr(exe, '/')) && (size_t)(slash - exe) + 9 < sizeof(exe)) {
		memcpy(exe + (slash - exe), "/backend", 9);
		found = be_module_path(path, sizeof(path), exe, strlen(exe), name) && access(path, R_OK) == 0;
	}
	if (!found && !(be_module_path(path, sizeof(path), RNFSD_MODULEDIR, strlen(RNFSD_MODULEDIR), name) &&
			access(path, R_OK) == 0)) {
		log_err("backend %s: module rnfsd_%s.so not found (beside rnfsd in backend/, or in %s)", name, name,
			RNFSD_MODULEDIR);
		return NULL;
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	be_module_entry_fn entry = h ? (be_module_entry_fn)dlsym(h, BE_MODULE_ENTRY) : NULL;
	const struct be_driver *d = entry ? entry() : NULL;

	if (!d || strcmp(d->name, name) != 0) {
		log_err("backend %s: cannot load %s: %s", name, path, h ? "not an rnfsd backend module" : dlerror());
		if (h)
			dlclose(h);
		return NULL;
	}
	if (d->init && d->init() != 0) {
		log_err("backend %s: %s failed to initialise", name, path);
		return NULL; /* stays mapped: its init may have left threads */
	}
	log_info("backend %s: loaded %s", name, path);
	return be_loaded[i] = d;
}

/* A driver built as a module, loaded on first use; NULL if name is none of them. */
static const struct be_driver *be_module_find(const char *name)
{
	const struct be_driver *d = NULL;

	pthread_mutex_lock(&be_module_lock);
	for (size_t i = 0; i < sizeof(be_module_names) / sizeof(be_module_names[0]); i++) {
		if (be_module_names[i] && !strcmp(be_module_names[i], name)) {
			d = be_loaded[i] ? be_loaded[i] : be_module_load(i);
			break;
		}
	}
	pthread_mutex_unlock(&be_module_lock);
	return d;
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
	return be_module_find(name);
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
