/*
 * fuzz_rdma_privdata.c - libFuzzer target: RFC 8797 private data parsing and
 * threshold computation on arbitrary CM private data.
 */
#include <stdint.h>
#include <stdlib.h>

#include "transport/rdma_privdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdma_privdata p;
	struct rdma_inline in;
	uint8_t again[RDMA_PD_LEN];

	bool found = rdma_privdata_parse(data, size, &p);
	CHECK(found == p.present);
	CHECK(p.send_size >= 1024 && p.send_size <= RDMA_PD_SIZE_MAX);
	CHECK(p.recv_size >= 1024 && p.recv_size <= RDMA_PD_SIZE_MAX);
	if (found) {
		/* What we parse, we can build back identically (reserved bits aside). */
		struct rdma_privdata q;
		rdma_privdata_build(again, p.remote_inv, p.send_size, p.recv_size);
		CHECK(rdma_privdata_parse(again, sizeof(again), &q));
		CHECK(q.remote_inv == p.remote_inv && q.send_size == p.send_size &&
		      q.recv_size == p.recv_size);
	} else {
		CHECK(!p.remote_inv && p.send_size == 1024 && p.recv_size == 1024);
	}
	for (uint32_t v = 1; v <= 2; v++) {
		rdma_privdata_thresholds(&p, v, 4096, 4096, true, &in);
		CHECK(in.reply_max >= 1024 && in.reply_max <= 4096);
		CHECK(in.call_max >= 1024 && in.call_max <= 4096);
		CHECK(!in.send_inv || (found && p.remote_inv));
	}
	return 0;
}
