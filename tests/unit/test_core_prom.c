/*
 * test_core_prom.c - core/prom.c, the Prometheus text format writer: HELP
 * and TYPE once per family (a second declaration refused, its samples
 * dropped), the label format, the escaping of label values and HELP text,
 * integer and special float values; and core/stats.c's page
 * (stats_render_prom()): the latency histogram's cumulative buckets, and a
 * section's Prometheus writer called in the section's place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "core/prom.h"
#include "core/stats.h"

static char *buf;
static size_t len;

static struct prom_out *open_out(void)
{
	static struct prom_out p;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	prom_begin(&p, f);
	return &p;
}

/* Close the stream; the text written. */
static const char *close_out(struct prom_out *p)
{
	assert_int_equal(prom_end(p), 0);
	fclose(p->f);
	return buf;
}

static void test_family_and_labels(void **state)
{
	struct prom_out *p = open_out();
	const struct prom_label l[] = { { "program", "nfs" }, { "procedure", "GETATTR" } };

	(void)state;
	assert_true(prom_family(p, "rnfsd_x_total", PROM_COUNTER, "Calls"));
	prom_sample_u64(p, NULL, l, 2, 18446744073709551615ull);
	prom_sample_u64(p, NULL, NULL, 0, 3);
	assert_true(prom_family(p, "rnfsd_g", PROM_GAUGE, "A gauge"));
	prom_sample(p, NULL, l, 1, 0.5);
	assert_string_equal(close_out(p), "# HELP rnfsd_x_total Calls\n"
					  "# TYPE rnfsd_x_total counter\n"
					  "rnfsd_x_total{program=\"nfs\",procedure=\"GETATTR\"} 18446744073709551615\n"
					  "rnfsd_x_total 3\n"
					  "# HELP rnfsd_g A gauge\n"
					  "# TYPE rnfsd_g gauge\n"
					  "rnfsd_g{program=\"nfs\"} 0.5\n");
	free(buf);
}

static void test_family_once(void **state)
{
	struct prom_out *p = open_out();

	(void)state;
	prom_counter1(p, "rnfsd_a_total", "A", 1);
	/* The same family again: refused, and its samples go nowhere. */
	assert_false(prom_family(p, "rnfsd_a_total", PROM_COUNTER, "A"));
	prom_sample_u64(p, NULL, NULL, 0, 2);
	assert_int_equal(p->refused, 1);
	assert_string_equal(close_out(p), "# HELP rnfsd_a_total A\n# TYPE rnfsd_a_total counter\nrnfsd_a_total 1\n");
	free(buf);
}

static void test_escaping(void **state)
{
	struct prom_out *p = open_out();
	const struct prom_label l[] = { { "path", "a\\b\"c\nd" }, { "empty", NULL } };

	(void)state;
	assert_true(prom_family(p, "rnfsd_e", PROM_GAUGE, "back\\slash \"quoted\"\nnext line"));
	prom_sample(p, NULL, l, 2, 1);
	/* Label values: \\ \" \n; HELP: \\ and \n only (quotes stay). */
	assert_string_equal(close_out(p), "# HELP rnfsd_e back\\\\slash \"quoted\"\\nnext line\n"
					  "# TYPE rnfsd_e gauge\n"
					  "rnfsd_e{path=\"a\\\\b\\\"c\\nd\",empty=\"\"} 1\n");
	free(buf);
}

static void test_special_values(void **state)
{
	struct prom_out *p = open_out();

	(void)state;
	assert_true(prom_family(p, "rnfsd_f", PROM_GAUGE, "F"));
	prom_sample(p, NULL, NULL, 0, INFINITY);
	prom_sample(p, NULL, NULL, 0, -INFINITY);
	prom_sample(p, NULL, NULL, 0, NAN);
	prom_sample(p, NULL, NULL, 0, 1e-5);
	assert_string_equal(close_out(p), "# HELP rnfsd_f F\n# TYPE rnfsd_f gauge\n"
					  "rnfsd_f +Inf\nrnfsd_f -Inf\nrnfsd_f NaN\nrnfsd_f 1e-05\n");
	free(buf);
}

/* ---- the page ---- */

static struct stats_hist hist;

static void procs(stats_proc_cb cb, void *arg)
{
	struct stats_proc sp = { .program = "nfs", .vers = 3, .proc = "READ", .calls = 3, .errors = 1,
				 .latency_ns_total = 2000003000, .latency = &hist };

	cb(&sp, arg);
}

static void section_json(struct json_out *j, const char *name, void *arg)
{
	(void)j, (void)name, (void)arg;
}

static void section_prom(struct prom_out *p, void *arg)
{
	prom_gauge1(p, "rnfsd_section_thing", "From a section", *(double *)arg);
}

static void test_page(void **state)
{
	const struct stats_sources src = { .procs_foreach = procs };
	static double thing = 7;

	(void)state;
	memset(&hist, 0, sizeof(hist));
	stats_hist_record(&hist, 1000);          /* 1 us */
	stats_hist_record(&hist, 2000);          /* 2 us */
	stats_hist_record(&hist, 2000000000ull); /* 2 s */
	stats_set_sources(&src);
	stats_sections_clear();
	assert_int_equal(stats_section_add(STATS_PLACE_STATE, "thing", section_json, &thing), 0);
	assert_int_equal(stats_section_set_prom("thing", section_prom), 0);
	assert_int_equal(stats_section_set_prom("nothing", section_prom), -1);

	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(stats_render_prom(f), 0);
	fclose(f);
#define L "{program=\"nfs\",version=\"3\",procedure=\"READ\""
	assert_non_null(strstr(buf, "rnfsd_rpc_calls_total" L "} 3\n"));
	assert_non_null(strstr(buf, "rnfsd_rpc_errors_total" L "} 1\n"));
	assert_non_null(strstr(buf, "# TYPE rnfsd_rpc_duration_seconds histogram\n"));
	/* Cumulative: two samples under 10 us, the third only from 2.5 s. */
	assert_non_null(strstr(buf, "rnfsd_rpc_duration_seconds_bucket" L ",le=\"1e-05\"} 2\n"));
	assert_non_null(strstr(buf, "rnfsd_rpc_duration_seconds_bucket" L ",le=\"1\"} 2\n"));
	assert_non_null(strstr(buf, "rnfsd_rpc_duration_seconds_bucket" L ",le=\"2.5\"} 3\n"));
	assert_non_null(strstr(buf, "rnfsd_rpc_duration_seconds_bucket" L ",le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(buf, "rnfsd_rpc_duration_seconds_sum" L "} 2.000003\n"));
	assert_non_null(strstr(buf, "rnfsd_rpc_duration_seconds_count" L "} 3\n"));
	assert_non_null(strstr(buf, "rnfsd_connections{transport=\"tcp\"} 0\n"));
	assert_non_null(strstr(buf, "# HELP rnfsd_section_thing From a section\n"
				    "# TYPE rnfsd_section_thing gauge\nrnfsd_section_thing 7\n"));
#undef L
	free(buf);
	stats_sections_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_and_labels),
		cmocka_unit_test(test_family_once),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_special_values),
		cmocka_unit_test(test_page),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
