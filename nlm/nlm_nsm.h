/*
 * nlm_nsm.h - NSM through the host's rpc.statd (XNFS chapter 11): each
 * client host that takes a lock is monitored (SM_MON to the local statd,
 * program 100024 over loopback TCP, its port from rpcbind), with my_id
 * naming rnfsd's private NLM procedure 16 (knfsd's NLMPROC_NSM_NOTIFY), so
 * statd's reboot notification reaches nlm_nsm_notify_exec() and releases
 * that host's locks; a host whose locks are all released (FREE_ALL, the
 * notification) is unmonitored (SM_UNMON).
 */
#ifndef RNFSD_NLM_NSM_H
#define RNFSD_NLM_NSM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nlm/nlm4_xdr.h"

/* Any thread: host (caller_name) at peer took a lock; monitor it once. */
void nlm_nsm_monitor(const char *host, uint32_t host_len, const struct sockaddr *peer, socklen_t peer_len);
/* Any thread: the host's locks are gone; stop monitoring it. */
void nlm_nsm_unmonitor(const char *host, uint32_t host_len);
/* The caller_name behind a notification's priv (what nlm_nsm_monitor put
 * there) into name (NLM_HOST_MAX + 1 bytes); false if it is not one of ours. */
bool nlm_nsm_host_of(const uint8_t priv[NSM_PRIV_SIZE], char *name, uint32_t *name_len);
/* Main thread, at start: this run's tag in priv (bytes 12..15), which a
 * notification must carry back. */
void nlm_nsm_init(uint32_t run);
/* Main thread: forget every host (shutdown). */
void nlm_nsm_reset(void);

/* Pure: priv for host slot idx of generation gen, and back. */
void nlm_nsm_priv(uint8_t priv[NSM_PRIV_SIZE], uint32_t idx, uint32_t gen);
bool nlm_nsm_priv_parse(const uint8_t priv[NSM_PRIV_SIZE], uint32_t *idx, uint32_t *gen);

#endif
