/* A library whose constructor calls cuInit while lock_app.c's main thread is in its first
 * cuInit: the constructor runs inside dlopen, holding the loader's lock, so the recorder's start
 * (which other threads' cuInit waits for) must not need that lock (tests/interposed.rs). */
#include <dlfcn.h>
#include <unistd.h>
extern volatile int go;
__attribute__((constructor)) static void ctor(void) {
  go = 1;        /* let the main thread call cuInit */
  usleep(300000); /* it enters the recorder's start meanwhile */
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
  unsigned (*init)(unsigned) = (unsigned (*)(unsigned))dlsym(cuda, "cuInit");
  init(0);
}
