/*
 * queue.h - the intrusive queue of the code base: a singly linked list
 * with head and tail, used as a FIFO (push at the tail, pop at the head) and,
 * for free lists, as a stack (push at the head, pop at the head). Records
 * that leave from the middle use core/list.h (doubly linked, O(1) removal).
 *
 * The element embeds a struct queue_link; nothing is allocated. An element is
 * on at most one queue per link at a time, and the queue never looks at an
 * element after it was popped. No locking: the owner of the queue guards it
 * (the worker pool's mutex, or the loop thread that alone touches a
 * connection's queues).
 *
 *   struct item { int v; struct queue_link link; };
 *   struct queue q = QUEUE_INIT;
 *   queue_push(&q, &it->link);
 *   struct item *first = queue_pop_entry(&q, struct item, link);   (NULL if empty)
 */
#ifndef RNFSD_CORE_QUEUE_H
#define RNFSD_CORE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct queue_link {
	struct queue_link *next;
};

struct queue {
	struct queue_link *head; /* popped next; NULL when empty */
	struct queue_link *tail; /* pushed after; NULL when empty */
};

#define QUEUE_INIT {NULL, NULL}

static inline void queue_init(struct queue *q)
{
	q->head = q->tail = NULL;
}

static inline bool queue_empty(const struct queue *q)
{
	return q->head == NULL;
}

/* FIFO: append l at the tail. */
static inline void queue_push(struct queue *q, struct queue_link *l)
{
	l->next = NULL;
	if (q->tail)
		q->tail->next = l;
	else
		q->head = l;
	q->tail = l;
}

/* Stack (free lists): put l at the head. */
static inline void queue_push_front(struct queue *q, struct queue_link *l)
{
	l->next = q->head;
	q->head = l;
	if (!q->tail)
		q->tail = l;
}

/* The head, without removing it; NULL if empty. */
static inline struct queue_link *queue_peek(const struct queue *q)
{
	return q->head;
}

/* Remove and return the head; NULL if empty. */
static inline struct queue_link *queue_pop(struct queue *q)
{
	struct queue_link *l = q->head;
	if (l) {
		q->head = l->next;
		if (!q->head)
			q->tail = NULL;
		l->next = NULL;
	}
	return l;
}

/* Remove l wherever it is (linear). True if it was there. */
static inline bool queue_remove(struct queue *q, struct queue_link *l)
{
	struct queue_link **pp = &q->head, *prev = NULL;

	while (*pp && *pp != l) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return false;
	*pp = l->next;
	if (q->tail == l)
		q->tail = prev;
	l->next = NULL;
	return true;
}

/* Move every element of src to the tail of dst (src ends empty). */
static inline void queue_splice(struct queue *dst, struct queue *src)
{
	if (!src->head)
		return;
	if (dst->tail)
		dst->tail->next = src->head;
	else
		dst->head = src->head;
	dst->tail = src->tail;
	src->head = src->tail = NULL;
}

/* The element holding link l (NULL stays NULL); l is evaluated once. */
#define queue_entry(l, type, member) ({ \
	struct queue_link *queue_l_ = (l); \
	queue_l_ ? container_of(queue_l_, type, member) : (type *)NULL; \
})

#define queue_peek_entry(q, type, member) queue_entry(queue_peek(q), type, member)
#define queue_pop_entry(q, type, member) queue_entry(queue_pop(q), type, member)

/* Walk the links of q; the body must not pop or remove the current one
 * (queue_foreach_safe may, since it reads the next link first). */
#define queue_foreach(l, q) for (struct queue_link *l = (q)->head; l; l = l->next)
#define queue_foreach_safe(l, n, q) \
	for (struct queue_link *l = (q)->head, *n = l ? l->next : NULL; l; l = n, n = l ? l->next : NULL)

#endif
