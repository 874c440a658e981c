/*
 * rpcbind_live.c - whose is an rpcbind registration (rpcbind.h): the rules
 * that decide, per program, version and netid, whether this instance may add,
 * replace or remove a registration, and the one fact they need from the
 * system: does a process other than this one serve a given port (a socket
 * listening on it in /proc/net/tcp{,6}, or bound to it in /proc/net/udp{,6},
 * whose inode is not one of our descriptors)?
 *
 * rpcbind keeps one address per program, version and netid (RFC 1833 §2.2.1:
 * RPCBPROC_SET refuses a mapping that exists), so several servers on one host
 * share one entry. As portmap's PMAPPROC_SET does (RFC 1833 §3.2: refused if
 * the mapped port is bound, replaced if it is not), a registration naming a
 * port that another live process serves belongs to that process: it is
 * neither replaced at start (unless [rnfsd] rpcbind-replace) nor removed at
 * exit. A registration naming a port nobody serves is stale (a server that
 * died) and is replaced. (knfsd replaces unconditionally: one kernel server
 * per network namespace.)
 *
 * Nothing here allocates; the /proc files are read line by line.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/rpcbind.h"

#define RPCBIND_OWN_MAX 4096 /* descriptors looked at; beyond, a socket counts as another's */
#define TCP_LISTEN 0x0A      /* include/net/tcp_states.h: TCP_LISTEN */
#define UDP_UNCONNECTED 0x07 /* TCP_CLOSE: a bound, unconnected datagram socket */

int rpcbind_net_line(const char *line, uint16_t *port, unsigned *st, unsigned long *inode)
{
	/* "  sl  local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ..." */
	char local[64], remote[64], txrx[40], trtm[40];
	unsigned sl, retr, uid, timeout, state;
	unsigned long ino;

	if (sscanf(line, " %u: %63s %63s %x %39s %39s %x %u %u %lu", &sl, local, remote, &state, txrx, trtm,
		   &retr, &uid, &timeout, &ino) != 10)
		return -1;
	const char *colon = strrchr(local, ':');
	char *end;
	if (!colon)
		return -1;
	unsigned long p = strtoul(colon + 1, &end, 16);
	if (*end != '\0' || end == colon + 1 || p > 65535)
		return -1;
	*port = (uint16_t)p;
	*st = state;
	*inode = ino;
	return 0;
}

int rpcbind_uaddr_port(const char *uaddr)
{
	/* RFC 1833 §2.2.1 (r_addr) and RFC 5665 §5.2.3.3: the port is the last two decimal octets. */
	const char *lo = strrchr(uaddr, '.');
	unsigned long hi_v, lo_v;
	char *end;

	if (!lo || lo == uaddr)
		return -1;
	const char *hi = lo - 1;
	while (hi > uaddr && *hi != '.')
		hi--;
	if (*hi != '.')
		return -1;
	hi_v = strtoul(hi + 1, &end, 10);
	if (end != lo || end == hi + 1 || hi_v > 255)
		return -1;
	lo_v = strtoul(lo + 1, &end, 10);
	if (*end != '\0' || end == lo + 1 || lo_v > 255)
		return -1;
	return (int)(hi_v * 256 + lo_v);
}

/* Our socket inodes ("socket:[N]" links in /proc/self/fd); returns how many (at most max). */
static unsigned rpcbind_own_inodes(unsigned long *out, unsigned max)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned n = 0;

	if (!dir)
		return 0;
	while (n < max && (de = readdir(dir)) != NULL) {
		char link[64], path[300];
		unsigned long ino;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		ssize_t len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) == 1)
			out[n++] = ino;
	}
	closedir(dir);
	return n;
}

static bool rpcbind_inode_in(unsigned long ino, const unsigned long *set, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (set[i] == ino)
			return true;
	return false;
}

/* A socket on port in one /proc/net table, in state st, that is not ours? */
static bool rpcbind_table_has_other(const char *table, uint16_t port, unsigned want_st,
				    const unsigned long *own, unsigned n_own)
{
	FILE *f = fopen(table, "re");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		uint16_t p;
		unsigned st;
		unsigned long ino;

		if (rpcbind_net_line(line, &p, &st, &ino) != 0 || p != port || st != want_st)
			continue;
		found = !rpcbind_inode_in(ino, own, n_own);
	}
	fclose(f);
	return found;
}

bool rpcbind_port_served_by_other(uint16_t port, bool tcp)
{
	/* 32 KiB, once per registration at start and exit: not on a helper thread's stack. */
	unsigned long *own = malloc(RPCBIND_OWN_MAX * sizeof(*own));
	unsigned n_own = own ? rpcbind_own_inodes(own, RPCBIND_OWN_MAX) : 0;
	bool other;

	if (tcp)
		other = rpcbind_table_has_other("/proc/net/tcp", port, TCP_LISTEN, own, n_own) ||
			rpcbind_table_has_other("/proc/net/tcp6", port, TCP_LISTEN, own, n_own);
	else
		other = rpcbind_table_has_other("/proc/net/udp", port, UDP_UNCONNECTED, own, n_own) ||
			rpcbind_table_has_other("/proc/net/udp6", port, UDP_UNCONNECTED, own, n_own);
	free(own);
	return other;
}

enum rpcbind_start rpcbind_start_action(int cur_port, bool other_live, bool replace)
{
	if (cur_port == 0)
		return RPCBIND_ADD;
	if (cur_port < 0)
		return RPCBIND_REPLACE; /* rpcbind could not tell: as before, ours to set */
	if (other_live && !replace)
		return RPCBIND_KEEP;
	return RPCBIND_REPLACE;     /* stale (nobody serves it), ours already, or replace = yes */
}

bool rpcbind_exit_unset(int cur_port, uint16_t our_port, bool other_live)
{
	if (cur_port < 0)
		return true;  /* rpcbind could not tell: remove what we registered */
	if (cur_port != our_port)
		return false; /* gone, or another server's since */
	return !other_live; /* a server on another address with the same port still uses it */
}
