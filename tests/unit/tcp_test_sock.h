/*
 * tcp_test_sock.h - blocking-socket helpers for the TCP tests that play the
 * other end of an RPC connection: read exactly n bytes, read one record
 * (RFC 5531 §11, any number of fragments). Header-only.
 */
#ifndef RNFSD_TEST_TCP_SOCK_H
#define RNFSD_TEST_TCP_SOCK_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/* false at EOF, error or timeout (SO_RCVTIMEO). */
static inline bool ts_recv_all(int fd, void *p, size_t n)
{
	uint8_t *b = p;
	while (n) {
		ssize_t r = recv(fd, b, n, 0);
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}

/* One record into buf[0 .. cap): its length, or -1. */
static inline ssize_t ts_recv_record(int fd, uint8_t *buf, size_t cap)
{
	size_t len = 0;
	for (;;) {
		uint32_t mark;
		if (!ts_recv_all(fd, &mark, 4))
			return -1;
		mark = ntohl(mark);
		size_t frag = mark & 0x7fffffffu;
		if (frag > cap - len || !ts_recv_all(fd, buf + len, frag))
			return -1;
		len += frag;
		if (mark & 0x80000000u)
			return (ssize_t)len;
	}
}

#endif
