/* Another preloaded tool, as profilers and I/O tracers are: it wraps getpid through
 * dlsym(RTLD_NEXT, ...), which finds the next definition after the *caller's* object. Preloaded
 * after the recorder (whose exported dlsym sees every lookup), it must still get libc's getpid,
 * not its own (tests/interposed.rs). Build: cc -shared -fPIC -o libnext_tool.so next_tool.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static int depth;

pid_t getpid(void) {
  if (++depth > 2) _exit(42); /* found itself again: recursion */
  pid_t (*next)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, "getpid");
  pid_t pid = next ? next() : -1;
  depth--;
  return pid;
}
