/*
 * test_core_log.c - log_escape(): what a peer sends can never forge, hide or
 * garble a log line. Every byte outside printable ASCII becomes \xNN, a
 * backslash \\, printable text is kept, the result always fits its buffer
 * (cut short with "..."), and the escaping can be undone unambiguously.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/log.h"

static void test_printable_kept(void **state)
{
	char out[LOG_ESCAPED_MAX];
	(void)state;
	assert_string_equal(log_escape_str(out, sizeof(out), "/srv/data a-b_c.d ~!@#$%^&*()"),
			    "/srv/data a-b_c.d ~!@#$%^&*()");
	assert_string_equal(log_escape_str(out, sizeof(out), ""), "");
	assert_string_equal(log_escape_str(out, sizeof(out), NULL), "");
}

static void test_controls_escaped(void **state)
{
	char out[LOG_ESCAPED_MAX];
	(void)state;
	assert_string_equal(log_escape_str(out, sizeof(out), "a\nrnfsd: error: x"), "a\\x0arnfsd: error: x");
	assert_string_equal(log_escape_str(out, sizeof(out), "\r\t\033[2K\177"), "\\x0d\\x09\\x1b[2K\\x7f");
	assert_string_equal(log_escape_str(out, sizeof(out), "back\\slash"), "back\\\\slash");
	/* NUL inside the bytes does not cut the line short */
	assert_string_equal(log_escape(out, sizeof(out), "a\0b", 3), "a\\x00b");
	/* bytes >= 0x80 (UTF-8, C1 controls) too: nothing non-ASCII reaches the log */
	assert_string_equal(log_escape(out, sizeof(out), "\xc2\x9b\xff", 3), "\\xc2\\x9b\\xff");
}

/* No byte of any value ever comes out raw unless it is printable ASCII. */
static void test_every_byte(void **state)
{
	uint8_t in[256];
	char out[4 * 256 + 1];
	(void)state;
	for (unsigned i = 0; i < 256; i++)
		in[i] = (uint8_t)i;
	log_escape(out, sizeof(out), in, sizeof(in));
	assert_int_equal(strlen(out), 4 * (0x20 + 0x81) + 2 + (0x7f - 0x20 - 1));
	for (const char *p = out; *p; p++)
		assert_true(*p >= 0x20 && *p <= 0x7e);
}

static void test_truncation(void **state)
{
	char big[2000], out[16];
	(void)state;
	memset(big, 'a', sizeof(big));
	log_escape(out, sizeof(out), big, sizeof(big));
	assert_string_equal(out, "aaaaaaaaaaaa...");
	/* an escape is never cut in half */
	log_escape(out, sizeof(out), "aaaaaaaaa\n\n\n", 12);
	assert_string_equal(out, "aaaaaaaaa...");
	/* exactly fitting: no "..." */
	log_escape(out, sizeof(out), "aaaaaaaaaaa\n", 12);
	assert_string_equal(out, "aaaaaaaaaaa\\x0a");
	/* tiny buffers */
	log_escape(out, 4, "abcdef", 6);
	assert_string_equal(out, "...");
	log_escape(out, 4, "ab", 2);
	assert_string_equal(out, "ab");
	out[0] = 'x';
	log_escape(out, 2, "ab", 2);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printable_kept),
		cmocka_unit_test(test_controls_escaped),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_truncation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
