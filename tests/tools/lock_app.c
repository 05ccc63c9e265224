/* One thread dlopens argv[1] (lock_ctor.c's library) while the main thread calls the driver's
 * first cuInit; prints "ok" unless it deadlocks (tests/interposed.rs).
 * Build: cc -rdynamic -o lock_app lock_app.c -ldl -lpthread */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
volatile int go;
static void *open_it(void *path) { return dlopen((const char *)path, RTLD_NOW); }
int main(int argc, char **argv) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
  unsigned (*init)(unsigned) = (unsigned (*)(unsigned))dlsym(cuda, "cuInit");
  pthread_t t;
  pthread_create(&t, 0, open_it, argv[1]);
  while (!go) usleep(1000);
  init(0);
  pthread_join(t, 0);
  puts("ok");
  return 0;
}
