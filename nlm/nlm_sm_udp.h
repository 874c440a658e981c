/*
 * nlm_sm_udp.h - where rpc.statd's reboot notifications arrive: nfs-utils'
 * statd calls the my_id procedure (NLM v4 procedure 16) over UDP, from a
 * reserved port, to 127.0.0.1, at the port rpcbind gives for NLM v4 on UDP
 * (utils/statd/rmtcall.c). rnfsd serves NLM over TCP only, so this is a
 * loopback UDP socket that answers exactly NULL and that procedure, and is
 * registered with rpcbind as NLM v4 on "udp".
 *
 * nlm_sm_udp_answer() is the pure part (a datagram in, a reply out).
 */
#ifndef RNFSD_NLM_SM_UDP_H
#define RNFSD_NLM_SM_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nlm/nlm4_xdr.h"

struct loop;

/*
 * Pure. The reply to the RPC call msg[0 .. len) in out[0 .. cap) (*out_len
 * bytes; RFC 5531 §9): NULL and NLM4_NSM_NOTIFY of NLM v4 are SUCCESS
 * (*notify filled for the latter, *is_notify set), other procedures
 * PROC_UNAVAIL, other versions PROG_MISMATCH, other programs PROG_UNAVAIL,
 * undecodable arguments GARBAGE_ARGS. false: no reply at all (not a call,
 * too short, a bad credential).
 */
bool nlm_sm_udp_answer(const uint8_t *msg, size_t len, uint8_t *out, size_t cap, size_t *out_len,
		       struct nsm_status_args *notify, bool *is_notify);

/* Loop thread, at start: bind 127.0.0.1 (port 0: any), read on the loop.
 * The port in *port. 0 or -1 (logged). */
int nlm_sm_udp_start(struct loop *loop, uint16_t want_port, uint16_t *port);
void nlm_sm_udp_stop(void);

#endif
