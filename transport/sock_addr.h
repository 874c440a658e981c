/*
 * sock_addr.h - socket address helpers the socket transports share (TCP,
 * UDP): a configured numeric address and port as a sockaddr, and a peer's
 * address as "addr:port" for log lines.
 */
#ifndef RNFSD_SOCK_ADDR_H
#define RNFSD_SOCK_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Numeric IPv4 or IPv6 addr and port -> *ss, *len. 0, or -1 with errno EINVAL. */
int sock_addr_parse(const char *addr, uint16_t port, struct sockaddr_storage *ss, socklen_t *len);

/* "a.b.c.d:port" or "[v6]:port" into out (len bytes, always terminated). */
void sock_addr_name(const struct sockaddr_storage *ss, char *out, size_t len);

/* The port a bound socket has, or 0. */
uint16_t sock_fd_port(int fd);

#endif
