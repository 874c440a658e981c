/*
 * prom.h - a small writer of the Prometheus text exposition format
 * (version 0.0.4), for the metrics page (core/stats.h, stats_render_prom())
 * and the writers other layers attach to their stats sections. Like
 * core/json.h it writes straight to a FILE and allocates nothing.
 *
 * A metric family is declared once with prom_family() (its "# HELP" and
 * "# TYPE" lines), then its samples follow with prom_sample(). A family
 * declared a second time is refused (its samples are dropped and counted in
 * prom_out.refused), since the format wants each family's lines together.
 * Label values are escaped (backslash, double quote, newline), HELP text
 * too (backslash, newline); names are the caller's constants and are not
 * checked beyond being non-empty.
 *
 * Use: prom_begin(), prom_family(), prom_sample()..., prom_end().
 */
#ifndef RNFSD_CORE_PROM_H
#define RNFSD_CORE_PROM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PROM_FAMILIES_MAX 160 /* families per page */

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

struct prom_label {
	const char *name;
	const char *value; /* NULL is "" */
};

struct prom_out {
	FILE *f;
	const char *family;      /* the family whose samples may follow, NULL: none */
	const char *seen[PROM_FAMILIES_MAX];
	unsigned nseen;
	unsigned refused;        /* families declared twice (or beyond the table): samples dropped */
};

void prom_begin(struct prom_out *p, FILE *f);
/* 0, or -1 on a write error of f. */
int prom_end(struct prom_out *p);

/* Declare family name (kept by pointer: a constant). false: refused, see above. */
bool prom_family(struct prom_out *p, const char *name, enum prom_type type, const char *help);
/*
 * One sample of the current family: name is the family's for counters and
 * gauges, or family + "_bucket"/"_sum"/"_count" for histograms (suffix
 * gives that part, NULL for none). labels[0..n) are written in order.
 */
void prom_sample(struct prom_out *p, const char *suffix, const struct prom_label *labels, unsigned n,
		 double value);
/* The same for an integer value (exact beyond 2^53). */
void prom_sample_u64(struct prom_out *p, const char *suffix, const struct prom_label *labels, unsigned n,
		     uint64_t value);
/* A whole family of one unlabelled sample. */
void prom_gauge1(struct prom_out *p, const char *name, const char *help, double value);
void prom_counter1(struct prom_out *p, const char *name, const char *help, uint64_t value);

#endif
