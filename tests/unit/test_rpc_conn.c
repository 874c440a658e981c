/*
 * test_rpc_conn.c - rpc/rpc_conn.c: the reference count upper layers hold
 * from any thread, the close hooks (once, in order, removable until the
 * close took them; a remove from another thread waits for a hook the close
 * path is running), and the release of the memory with the last reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "rpc/xprt.h"

struct fake_conn {
	struct rpc_conn rpc;
	int released;
};

static void fake_release(struct rpc_conn *rc)
{
	container_of(rc, struct fake_conn, rpc)->released++;
}

static const struct xprt_ops fake_ops = {.name = "fake", .conn_release = fake_release};
static struct xprt fake_xprt = {.ops = &fake_ops};

struct probe {
	struct rpc_conn_hook hook;
	int calls;
	int order;        /* position among the hooks that ran */
	bool drop_ref;    /* put one reference from inside the hook */
	int released_seen; /* conn->released when the hook ran */
};

static int hook_seq;

static void probe_closed(struct rpc_conn *conn, struct rpc_conn_hook *h)
{
	struct probe *p = container_of(h, struct probe, hook);
	p->calls++;
	p->order = ++hook_seq;
	p->released_seen = container_of(conn, struct fake_conn, rpc)->released;
	assert_true(rpc_conn_is_closed(conn));
	if (p->drop_ref)
		rpc_conn_put(conn);
}

static void test_refs_release(void **state)
{
	(void)state;
	struct fake_conn c = {0};

	rpc_conn_init(&c.rpc, &fake_xprt);
	rpc_conn_get(&c.rpc);
	rpc_conn_put(&c.rpc);
	assert_int_equal(c.released, 0);
	rpc_conn_put(&c.rpc); /* the transport's */
	assert_int_equal(c.released, 1);
}

static void test_hooks_once_in_order(void **state)
{
	(void)state;
	struct fake_conn c = {0};
	struct probe a = {.hook.closed = probe_closed}, b = {.hook.closed = probe_closed};
	struct probe removed = {.hook.closed = probe_closed}, late = {.hook.closed = probe_closed};

	hook_seq = 0;
	rpc_conn_init(&c.rpc, &fake_xprt);
	assert_false(rpc_conn_is_closed(&c.rpc));
	assert_true(rpc_conn_hook_add(&c.rpc, &a.hook));
	assert_true(rpc_conn_hook_add(&c.rpc, &removed.hook));
	assert_true(rpc_conn_hook_add(&c.rpc, &b.hook));
	assert_true(rpc_conn_hook_remove(&c.rpc, &removed.hook));
	rpc_conn_closed(&c.rpc);
	rpc_conn_closed(&c.rpc); /* idempotent */
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1);
	assert_int_equal(a.order, 1);
	assert_int_equal(b.order, 2);
	assert_int_equal(removed.calls, 0);
	/* After the close: adding is refused, removing says it already ran. */
	assert_false(rpc_conn_hook_add(&c.rpc, &late.hook));
	assert_false(rpc_conn_hook_remove(&c.rpc, &a.hook));
	assert_int_equal(late.calls, 0);
	rpc_conn_put(&c.rpc);
	assert_int_equal(c.released, 1);
}

/* An upper layer dropping its reference from its hook, while the transport
 * already dropped its own: the memory outlives the close path. */
static void test_hook_drops_last_reference(void **state)
{
	(void)state;
	struct fake_conn c = {0};
	struct probe p = {.hook.closed = probe_closed, .drop_ref = true};

	rpc_conn_init(&c.rpc, &fake_xprt);
	rpc_conn_get(&c.rpc);       /* the upper layer's */
	assert_true(rpc_conn_hook_add(&c.rpc, &p.hook));
	rpc_conn_put(&c.rpc);       /* the transport is done with it */
	assert_int_equal(c.released, 0);
	rpc_conn_closed(&c.rpc);
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.released_seen, 0);
	assert_int_equal(c.released, 1);
}

/* A hook the close path runs on one thread while another removes it: the
 * remover returns only after the hook did (nfs4_cb reuses the hook's memory
 * when remove returns; ThreadSanitizer caught the close path still in it). */
struct slow_probe {
	struct rpc_conn_hook hook;
	atomic_int running, remover_started, done;
	bool self_remove_result;
};

static void slow_closed(struct rpc_conn *conn, struct rpc_conn_hook *h)
{
	struct slow_probe *p = container_of(h, struct slow_probe, hook);

	/* Its own thread removing it: no wait for itself. */
	p->self_remove_result = rpc_conn_hook_remove(conn, h);
	atomic_store(&p->running, 1);
	while (!atomic_load(&p->remover_started))
		usleep(100);
	usleep(50 * 1000); /* the remover is blocked now, or it would see done == 0 */
	atomic_store(&p->done, 1);
}

static void *closer_thread(void *arg)
{
	rpc_conn_closed(arg);
	return NULL;
}

static void test_remove_waits_for_running_hook(void **state)
{
	(void)state;
	struct fake_conn c = {0};
	struct slow_probe p = {.hook.closed = slow_closed, .self_remove_result = true};
	pthread_t th;

	rpc_conn_init(&c.rpc, &fake_xprt);
	assert_true(rpc_conn_hook_add(&c.rpc, &p.hook));
	assert_int_equal(pthread_create(&th, NULL, closer_thread, &c.rpc), 0);
	while (!atomic_load(&p.running))
		usleep(100);
	atomic_store(&p.remover_started, 1);
	assert_false(rpc_conn_hook_remove(&c.rpc, &p.hook));
	assert_int_equal(atomic_load(&p.done), 1);
	assert_false(p.self_remove_result);
	pthread_join(th, NULL);
	rpc_conn_put(&c.rpc);
	assert_int_equal(c.released, 1);
}

#define THREADS 4
#define ROUNDS 100000

static void *refs_thread(void *arg)
{
	struct rpc_conn *rc = arg;
	for (int i = 0; i < ROUNDS; i++) {
		rpc_conn_get(rc);
		rpc_conn_put(rc);
	}
	return NULL;
}

static void test_refs_threads(void **state)
{
	(void)state;
	struct fake_conn c = {0};
	pthread_t th[THREADS];

	rpc_conn_init(&c.rpc, &fake_xprt);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, refs_thread, &c.rpc), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(c.released, 0);
	assert_int_equal(atomic_load(&c.rpc.refs), 1);
	rpc_conn_put(&c.rpc);
	assert_int_equal(c.released, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_release),
		cmocka_unit_test(test_hooks_once_in_order),
		cmocka_unit_test(test_hook_drops_last_reference),
		cmocka_unit_test(test_remove_waits_for_running_hook),
		cmocka_unit_test(test_refs_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
