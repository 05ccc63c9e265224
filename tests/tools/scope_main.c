/* Opens argv[1] (scope_plugin.c's library) with RTLD_LOCAL and runs its check; exits 0 when
 * the plugin found its dependency's symbol (tests/interposed.rs). */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 3; }
  int (*check)(void) = (int (*)(void))dlsym(h, "plugin_check");
  return check && check() ? 0 : 2;
}
