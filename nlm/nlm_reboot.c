/*
 * nlm_reboot.c - telling NLM clients that rnfsd restarted (nlm_reboot.h).
 * A restart loses every lock (they are the backend's, held by the process),
 * as a host reboot does for knfsd; the clients' lock managers learn of it
 * from an SM_NOTIFY carrying a new NSM state (XNFS §11), after which they
 * reclaim their locks with reclaim set, which the grace period admits
 * (XNFS §10.4). nfs-utils' sm-notify does exactly that for a host reboot
 * (it moves statd's sm/ entries to sm.bak/, bumps the state, notifies each
 * host and retries in the background); -f makes it run again after boot.
 * SM_SIMU_CRASH to statd would not do it: nfs-utils' statd then only runs
 * sm-notify without -f, which does nothing once the host has booted.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "nlm/nlm_reboot.h"
#include "core/log.h"

extern char **environ;

static unsigned count_entries(const char *statd_dir, const char *sub)
{
	char path[4096];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", statd_dir, sub) >= sizeof(path))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.') /* statd's records are named by host; no dot files */
			n++;
	closedir(d);
	return n;
}

unsigned nlm_reboot_hosts(const char *statd_dir)
{
	return count_entries(statd_dir, "sm") + count_entries(statd_dir, "sm.bak");
}

unsigned nlm_reboot_grace(unsigned grace_s, bool grace_set, unsigned hosts)
{
	/* XNFS §10.4: the grace period lets clients reclaim; with no client
	 * that held locks (none monitored) nothing can be reclaimed */
	return grace_set || hosts ? grace_s : 0;
}

static void *reap_main(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	int st = 0;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		log_info("nlm: sm-notify told the monitored clients to reclaim their locks");
	else
		log_warn("nlm: sm-notify failed (status 0x%x): clients may not reclaim their locks", st);
	return NULL;
}

int nlm_reboot_notify(const char *statd_dir)
{
	char *argv[] = { "sm-notify", "-f", "-P", (char *)statd_dir, NULL };
	posix_spawnattr_t at;
	pthread_attr_t ta;
	pthread_t t;
	sigset_t none, dfl;
	pid_t pid;
	int err;

	/* the child starts with no signal blocked and SIGPIPE at its default,
	 * whatever this process does with them */
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	err = posix_spawnp(&pid, "sm-notify", NULL, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	if (err) {
		log_warn("nlm: cannot run sm-notify: %s: clients will not reclaim their locks", strerror(err));
		return -1;
	}
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &ta, reap_main, (void *)(intptr_t)pid);
	pthread_attr_destroy(&ta);
	if (err) /* it still runs; its zombie stays until rnfsd exits */
		log_warn("nlm: cannot start a thread to wait for sm-notify");
	return 0;
}
