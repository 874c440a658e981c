/*
 * rt_mount.h - the export's root file handle via MOUNT v3 over TCP
 * (rpcbind lookup unless the MOUNT port is given).
 */
#ifndef RT_MOUNT_H
#define RT_MOUNT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/rdma/rt_rpc.h"

/* 0, or -1 with why. mount_port 0: ask rpcbind on port 111. */
int rt_mount_root(const struct sockaddr_in *srv, uint16_t mount_port, const char *path,
		  struct rt_fh *fh, char *why, size_t n);

#endif
