/*
 * prom.c - see prom.h: the Prometheus text format (HELP, TYPE, samples with
 * escaped labels), written straight to a FILE.
 */
#include "core/prom.h"

#include <math.h>
#include <string.h>

void prom_begin(struct prom_out *p, FILE *f)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
}

int prom_end(struct prom_out *p)
{
	return fflush(p->f) != 0 || ferror(p->f) ? -1 : 0;
}

/* Backslash and newline as \\ and \n; with quote, also " as \". */
static void prom_put_escaped(FILE *f, const char *s, bool quote)
{
	for (; s && *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (quote && *s == '"')
			fputs("\\\"", f);
		else
			fputc(*s, f);
	}
}

bool prom_family(struct prom_out *p, const char *name, enum prom_type type, const char *help)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };

	p->family = NULL;
	for (unsigned i = 0; i < p->nseen; i++)
		if (!strcmp(p->seen[i], name)) {
			p->refused++;
			return false;
		}
	if (!name[0] || p->nseen == PROM_FAMILIES_MAX) {
		p->refused++;
		return false;
	}
	p->seen[p->nseen++] = name;
	p->family = name;
	fprintf(p->f, "# HELP %s ", name);
	prom_put_escaped(p->f, help, false);
	fprintf(p->f, "\n# TYPE %s %s\n", name, types[type]);
	return true;
}

/* "name_suffix{a="x",b="y"} " */
static bool prom_sample_head(struct prom_out *p, const char *suffix, const struct prom_label *labels, unsigned n)
{
	if (!p->family)
		return false;
	fprintf(p->f, "%s%s", p->family, suffix ? suffix : "");
	for (unsigned i = 0; i < n; i++) {
		fprintf(p->f, "%c%s=\"", i ? ',' : '{', labels[i].name);
		prom_put_escaped(p->f, labels[i].value, true);
		fputc('"', p->f);
	}
	fputs(n ? "} " : " ", p->f);
	return true;
}

void prom_sample(struct prom_out *p, const char *suffix, const struct prom_label *labels, unsigned n, double value)
{
	if (!prom_sample_head(p, suffix, labels, n))
		return;
	if (isnan(value))
		fputs("NaN\n", p->f);
	else if (isinf(value))
		fputs(value > 0 ? "+Inf\n" : "-Inf\n", p->f);
	else
		fprintf(p->f, "%.15g\n", value);
}

void prom_sample_u64(struct prom_out *p, const char *suffix, const struct prom_label *labels, unsigned n,
		     uint64_t value)
{
	if (prom_sample_head(p, suffix, labels, n))
		fprintf(p->f, "%llu\n", (unsigned long long)value);
}

void prom_gauge1(struct prom_out *p, const char *name, const char *help, double value)
{
	if (prom_family(p, name, PROM_GAUGE, help))
		prom_sample(p, NULL, NULL, 0, value);
}

void prom_counter1(struct prom_out *p, const char *name, const char *help, uint64_t value)
{
	if (prom_family(p, name, PROM_COUNTER, help))
		prom_sample_u64(p, NULL, NULL, 0, value);
}
