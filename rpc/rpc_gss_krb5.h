/*
 * rpc_gss_krb5.h - setup of RPCSEC_GSS with the krb5 mechanism (rpc/rpc_gss_krb5.c),
 * for the daemon. The calls themselves flow through rpc_call.c.
 */
#ifndef RNFSD_RPC_GSS_KRB5_H
#define RNFSD_RPC_GSS_KRB5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Main thread, before serving: serve RPCSEC_GSS with the keys of keytab
 * ([rnfsd] keytab). A keytab that is missing or holds no key leaves the
 * flavor off (logged; such calls get AUTH_REJECTEDCRED as before).
 * host_root: machine principals (nfs/host@REALM) map to root, else nobody.
 * contexts: the context table's size; per_client: a client's share of it.
 * 0, or -1 (logged) when memory ran out.
 */
int rpc_gss_init(const char *keytab, bool host_root, uint32_t contexts, uint32_t per_client);
/* Any thread: contexts held, the table's size (0 when Kerberos is off), contexts evicted. */
void rpc_gss_counts(uint64_t *live, uint64_t *cap, uint64_t *evictions);
/* Any thread (the stats request): the principals of the established contexts, each with its
 * count, sorted (rpc_gss_table_principals); 0 and *out NULL when Kerberos is off. */
struct rpc_gss_princ_count;
size_t rpc_gss_principals(struct rpc_gss_princ_count **out);
/* Any thread, while c is served: the display name of the principal behind an RPCSEC_GSS data
 * call ("user@REALM", the context's; RFC 8881 §2.4.3 needs it to tell clients' principals apart),
 * or NULL (another flavor, or a name longer than RPC_GSS_PRINC_MAX). */
struct rpc_call;
const char *rpc_gss_call_principal(const struct rpc_call *c);
/* Any thread, while c is served (RFC 7530 §3.3.3, the NFSv4.0 callback's initiator): the name the
 * client's context targeted, its acceptor ("nfs/host@REALM"), into buf (NUL-terminated). false: not an
 * RPCSEC_GSS call, or the name does not fit. */
bool rpc_gss_call_acceptor(const struct rpc_call *c, char *buf, size_t cap);
/* The keytab serving RPCSEC_GSS ([rnfsd] keytab; its keys also initiate the callbacks), or NULL when off. */
const char *rpc_gss_keytab(void);
/* Main thread, after serving stopped. */
void rpc_gss_release(void);

#endif
