/*
 * malloc_count.c - an LD_PRELOAD library for measurements in tests: counts the
 * process's allocations (malloc, calloc, realloc, memalign, posix_memalign,
 * aligned_alloc) and frees into a shared counter file named by
 * RNFSD_MALLOC_COUNT_FILE, which the test maps and reads while the process
 * runs (struct malloc_count). The allocators themselves are glibc's
 * (__libc_malloc and friends); only the counting is added. Allocations made
 * before the constructor mapped the file are not counted. Not built with the
 * sanitizers (they bring their own allocator).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/integration/malloc_count.h"

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

static struct malloc_count *mc;

__attribute__((constructor)) static void malloc_count_init(void)
{
	const char *path = getenv("RNFSD_MALLOC_COUNT_FILE");
	int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;

	if (fd < 0)
		return;
	if (ftruncate(fd, sizeof(*mc)) == 0) {
		void *p = mmap(NULL, sizeof(*mc), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED)
			mc = p;
	}
	close(fd);
}

static void count_alloc(void)
{
	if (mc)
		atomic_fetch_add_explicit(&mc->allocs, 1, memory_order_relaxed);
}

void *malloc(size_t n)
{
	count_alloc();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	count_alloc();
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	count_alloc();
	if (mc && p)
		atomic_fetch_add_explicit(&mc->reallocs, 1, memory_order_relaxed);
	return __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
	count_alloc();
	return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	count_alloc();
	return __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return 22; /* EINVAL */
	count_alloc();
	void *p = __libc_memalign(align, n);
	if (!p)
		return 12; /* ENOMEM */
	*out = p;
	return 0;
}

void free(void *p)
{
	if (mc && p)
		atomic_fetch_add_explicit(&mc->frees, 1, memory_order_relaxed);
	__libc_free(p);
}
