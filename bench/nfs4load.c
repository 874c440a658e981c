/*
 * nfs4load.c - the NFSv4.1 side of the host-side load generator: units of
 * one kind, one at a time (depth 1: tests/integration/nfs4raw.c speaks on
 * slot 0 only), on one TCP connection and one session to 127.0.0.1, every
 * reply checked, over the tree `nfsload --setup` laid out. The COMPOUNDs are
 * the Linux client's for the same system calls:
 *   getattr  SEQUENCE, PUTFH nfsload/data, GETATTR (the fattr3 attributes)
 *   lookup   SEQUENCE, PUTFH nfsload/, LOOKUP "data", GETFH, GETATTR
 *   read4k   SEQUENCE, PUTFH nfsload/data, READ 4 KiB (an OPEN stateid;
 *            offsets cycling over the 1 MiB file)
 *
 *   nfs4load -p PORT -e EXPORT -o OP [-n UNITS]
 * Prints "nfs4load: op OP units N seconds S units/s U errors E"; exit 0, or 1
 * on any wrong reply, 2 on usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/integration/nfs4raw.h"

#define N4L_IO 4096u
#define N4L_DATA (1u << 20)

struct n4l {
	struct n4_client k;
	uint8_t top[128], data[128];
	uint32_t top_len, data_len;
	struct n4_sid sid;
	char top_path[4096];
};

/* GETATTR4args for what NFSv3's fattr3 holds: type, change, size, fsid, fileid; mode,
 * numlinks, owner, owner_group, rawdev, space_used, time_access, time_metadata, time_modify. */
static void n4l_getattr_args(struct xb *a)
{
	xb_u32(a, N4_GETATTR);
	xb_u32(a, 2);
	xb_u32(a, (1u << 1) | (1u << 3) | (1u << 4) | (1u << 8) | (1u << 20));
	xb_u32(a, (1u << 1) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 9) | (1u << 13) | (1u << 15) | (1u << 20) |
			  (1u << 21));
}

/* One unit; true when its reply is right. */
static bool n4l_unit(struct n4l *l, const char *op, uint64_t i)
{
	struct raw_reply r;
	struct xb a;
	bool ok;

	if (!strcmp(op, "read4k")) {
		static uint8_t buf[N4L_IO];
		uint32_t got = 0;

		return n4_read(&l->k, l->data, l->data_len, &l->sid, (i * N4L_IO) % N4L_DATA, N4L_IO, buf, &got) == 0 &&
		       got == N4L_IO;
	}
	if (!strcmp(op, "getattr")) {
		n4_begin_fh(&l->k, &a, 2, l->data, l->data_len);
		n4l_getattr_args(&a);
		ok = n4_call(&l->k, &a, &r) == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_GETATTR) == 0;
	} else {
		n4_begin_fh(&l->k, &a, 4, l->top, l->top_len);
		xb_u32(&a, N4_LOOKUP);
		xb_string(&a, "data");
		xb_u32(&a, N4_GETFH);
		n4l_getattr_args(&a);
		ok = n4_call(&l->k, &a, &r) == 0 && n4_res(&r, N4_PUTFH) == 0 && n4_res(&r, N4_LOOKUP) == 0 &&
		     n4_res(&r, N4_GETFH) == 0;
	}
	raw_reply_free(&r);
	return ok;
}

/* The session, nfsload/'s handle and nfsload/data opened for reading. 0 or -1. */
static int n4l_setup(struct n4l *l, uint16_t port, const char *export)
{
	uint32_t depth;
	struct raw_reply r;
	const uint8_t *p;
	struct xb a;
	int ok;

	snprintf(l->top_path, sizeof(l->top_path), "%s/nfsload", export);
	depth = n4_walk(NULL, l->top_path);
	if (n4_start(&l->k, port, 1, "nfs4load") != 0)
		return -1;
	n4_begin(&l->k, &a, depth + 1);
	n4_walk(&a, l->top_path);
	xb_u32(&a, N4_GETFH);
	ok = n4_call(&l->k, &a, &r) == 0;
	for (uint32_t i = 0; ok && i < depth; i++)
		ok = n4_res(&r, i ? N4_LOOKUP : N4_PUTROOTFH) == 0;
	ok = ok && n4_res(&r, N4_GETFH) == 0 && (p = xd_opaque(&r.body, &l->top_len, sizeof(l->top))) != NULL;
	if (ok)
		memcpy(l->top, p, l->top_len);
	raw_reply_free(&r);
	if (!ok)
		return -1;
	return n4_open(&l->k, l->top_path, "data", false, N4_ACCESS_READ, 0, "nfs4load", NULL, &l->sid, l->data,
		       &l->data_len) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static struct n4l l;
	const char *export = NULL, *op = NULL;
	long port = 0, units = 10000, errors = 0;
	struct timespec t0, t1;
	int c;

	while ((c = getopt(argc, argv, "p:e:o:n:")) != -1) {
		if (c == 'p')
			port = strtol(optarg, NULL, 10);
		else if (c == 'e')
			export = optarg;
		else if (c == 'o')
			op = optarg;
		else if (c == 'n')
			units = strtol(optarg, NULL, 10);
		else
			return 2;
	}
	if (!export || !op || port <= 0 || port > 65535 || units < 0 ||
	    (strcmp(op, "getattr") && strcmp(op, "lookup") && strcmp(op, "read4k"))) {
		fprintf(stderr, "usage: nfs4load -p PORT -e EXPORT -o getattr|lookup|read4k [-n UNITS]\n");
		return 2;
	}
	if (n4l_setup(&l, (uint16_t)port, export) != 0) {
		fprintf(stderr, "nfs4load: no session, or nfsload/data not found (run nfsload --setup first)\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < units; i++)
		errors += !n4l_unit(&l, op, (uint64_t)i);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("nfs4load: op %s units %ld seconds %.3f units/s %.0f errors %ld\n", op, units, s, s > 0 ? units / s : 0,
	       errors);
	n4_client_close(&l.k);
	return errors ? 1 : 0;
}
