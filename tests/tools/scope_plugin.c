/* A plugin opened with RTLD_LOCAL that looks a symbol of its own dependency up in the default
 * scope, as Python extension modules do: glibc searches from the caller's place, which the
 * recorder's exported dlsym must keep (tests/interposed.rs). */
#define _GNU_SOURCE
#include <dlfcn.h>
int dep_symbol(void);
int plugin_check(void) {
  int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "dep_symbol");
  return f && f() == 42 && dep_symbol() == 42;
}
