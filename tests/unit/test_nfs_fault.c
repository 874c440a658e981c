#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
int main(void) { return 77; }
