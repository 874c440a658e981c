/*
 * malloc_count.h - the counter file of the malloc_count.c LD_PRELOAD library
 * (RNFSD_MALLOC_COUNT_FILE): the counted process writes it, a test maps it
 * read-only and reads it at any time.
 */
#ifndef RNFSD_TESTS_MALLOC_COUNT_H
#define RNFSD_TESTS_MALLOC_COUNT_H

#include <stdint.h>

struct malloc_count {
	_Atomic uint64_t allocs; /* malloc, calloc, realloc and the aligned allocators */
	_Atomic uint64_t frees;  /* free of a non-NULL pointer */
	_Atomic uint64_t reallocs; /* of the allocs, realloc of a non-NULL pointer: the block lives on
				    * (live blocks = allocs - reallocs - frees) */
};

#endif
