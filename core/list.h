/*
 * list.h - the intrusive doubly linked list, for records that leave from the
 * middle: list_remove() unlinks an element in O(1) without its list, where
 * core/queue.h (singly linked, for FIFOs and free lists) would walk to find
 * the predecessor. A list is a circular ring through a head link (empty: the
 * head points at itself); the element embeds a struct list_link per list it
 * can be on, and nothing is allocated. A head must be list_init()ed (or
 * LIST_INIT) before use; an element's link needs no setup before
 * list_insert(), and after list_remove() it points at itself. No locking: the
 * owner of the list guards it.
 *
 *   struct item { int v; struct list_link link; };
 *   struct list_link items = LIST_INIT(items);
 *   list_insert(&items, &it->link);                     (at the front)
 *   list_foreach_entry(x, &items, struct item, link) ...
 *   list_remove(&it->link);
 */
#ifndef RNFSD_CORE_LIST_H
#define RNFSD_CORE_LIST_H

#include <stdbool.h>
#include <stddef.h>

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct list_link {
	struct list_link *prev, *next;
};

#define LIST_INIT(head) {&(head), &(head)}

static inline void list_init(struct list_link *head)
{
	head->prev = head->next = head;
}

static inline bool list_empty(const struct list_link *head)
{
	return head->next == head;
}

/* Put l right after pos (after the head: at the front). */
static inline void list_insert(struct list_link *pos, struct list_link *l)
{
	l->prev = pos;
	l->next = pos->next;
	pos->next->prev = l;
	pos->next = l;
}

/* Put l at the back of the list headed by head. */
static inline void list_insert_tail(struct list_link *head, struct list_link *l)
{
	list_insert(head->prev, l);
}

/* Take l out of whatever list it is on (O(1)); l then points at itself. */
static inline void list_remove(struct list_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	list_init(l);
}

/* The first link, NULL if empty. */
static inline struct list_link *list_first(const struct list_link *head)
{
	return list_empty(head) ? NULL : head->next;
}

/* The link after l in the list headed by head, NULL at the end. */
static inline struct list_link *list_next(const struct list_link *head, const struct list_link *l)
{
	return l->next == head ? NULL : l->next;
}

/* The element holding link l (NULL stays NULL); l is evaluated once. */
#define list_entry(l, type, member) ({ \
	struct list_link *list_l_ = (l); \
	list_l_ ? container_of(list_l_, type, member) : (type *)NULL; \
})

#define list_first_entry(head, type, member) list_entry(list_first(head), type, member)
#define list_next_entry(head, e, type, member) list_entry(list_next(head, &(e)->member), type, member)

/* Walk the elements of the list headed by head as type *e (declared here);
 * the body must not remove e. The _safe walk reads the next element first,
 * so its body may remove e (but not the next one). */
#define list_foreach_entry(e, head, type, member) \
	for (type *e = list_first_entry(head, type, member); e; e = list_next_entry(head, e, type, member))
#define list_foreach_entry_safe(e, n, head, type, member) \
	for (type *e = list_first_entry(head, type, member), *n = e ? list_next_entry(head, e, type, member) : NULL; \
	     e; e = n, n = e ? list_next_entry(head, e, type, member) : NULL)

#endif
