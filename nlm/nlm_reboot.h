/*
 * nlm_reboot.h - rnfsd's own restart seen by NLM clients (XNFS §10.4, §11):
 * the hosts the local rpc.statd still monitors for rnfsd held locks before
 * it stopped (rnfsd never sends SM_UNMON at shutdown); at start they are
 * told to reclaim by sm-notify -f (a new NSM state and SM_NOTIFY to each),
 * and the grace period runs only when there is such a host, unless the
 * administrator set it.
 */
#ifndef RNFSD_NLM_REBOOT_H
#define RNFSD_NLM_REBOOT_H

#include <stdbool.h>

/* Hosts in statd's monitor list (statd_dir/sm) and those notified but not
 * yet answered (statd_dir/sm.bak); 0 when neither can be read. */
unsigned nlm_reboot_hosts(const char *statd_dir);

/* Pure: the grace period to run, seconds. An explicit setting always
 * applies; the default only when some host may reclaim. */
unsigned nlm_reboot_grace(unsigned grace_s, bool grace_set, unsigned hosts);

/* Main thread, once serving: start `sm-notify -f -P statd_dir` (found on
 * PATH) and reap it on a detached thread; its outcome is logged.
 * 0, or -1 (logged) when it could not be started. */
int nlm_reboot_notify(const char *statd_dir);

#endif
