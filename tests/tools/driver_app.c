/* A driver-API program for tests of the preloaded recorder on a stand-in driver
 * (tests/interposed.rs): it finds the driver the three ways programs do (dlsym on libcuda's
 * handle, cuGetProcAddress, and here nothing linked directly), allocates device memory, loads the
 * device image file argv[1] with cuModuleLoadData (a pointer without a length, as cudart and
 * Triton pass it) and launches its kernel argv[2] times, loads it again as a library
 * (cuLibraryLoadData, as cudart does), then the image file argv[3] as a second library defining
 * a kernel of the same name, and launches the first library's kernel once with another grid,
 * then frees the memory. It prints "ok".
 * Build: cc -o driver_app driver_app.c -ldl */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*gpa_t)(const char *, void **, int, unsigned long long, int *);

/* The file at `path` into `buf` (NUL-terminated within it); 0 when unreadable or empty. */
static size_t slurp(const char *path, char *buf, size_t size) {
  FILE *in = fopen(path, "rb");
  if (!in) { perror(path); return 0; }
  size_t len = fread(buf, 1, size - 1, in);
  fclose(in);
  buf[len] = 0;
  return len;
}

static void *get(gpa_t gpa, const char *name) {
  void *f = NULL;
  int status = 0;
  if (gpa(name, &f, 12000, 0, &status) != 0 || !f) { fprintf(stderr, "no %s\n", name); exit(2); }
  return f;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: driver_app IMAGE LAUNCHES OTHER_IMAGE\n"); return 2; }
  static char image[1 << 20], other[1 << 20];
  if (!slurp(argv[1], image, sizeof image) || !slurp(argv[3], other, sizeof other - 1)) return 2;
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!cuda) { fprintf(stderr, "%s\n", dlerror()); return 2; }
  gpa_t gpa = (gpa_t)dlsym(cuda, "cuGetProcAddress_v2");
  int (*init)(unsigned) = get(gpa, "cuInit");
  int (*alloc)(uint64_t *, size_t) = get(gpa, "cuMemAlloc");
  int (*free_)(uint64_t) = get(gpa, "cuMemFree");
  int (*load)(void **, const void *) = get(gpa, "cuModuleLoadData");
  int (*function)(void **, void *, const char *) = get(gpa, "cuModuleGetFunction");
  int (*sync)(void) = get(gpa, "cuCtxSynchronize");
  int (*load_library)(void **, const void *, void *, void **, unsigned, void *, void **, unsigned) =
      get(gpa, "cuLibraryLoadData");
  int (*library_kernel)(void **, void *, const char *) = dlsym(cuda, "cuLibraryGetKernel");
  /* Launches the way Triton and XLA find them: dlsym on libcuda's handle. */
  int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                void **, void **) = dlsym(cuda, "cuLaunchKernel");
  if (init(0) != 0) return 3;
  uint64_t a = 0, b = 0;
  if (alloc(&a, 1 << 16) || alloc(&b, 1 << 16)) return 3;
  void *module = NULL, *kernel = NULL;
  if (load(&module, image) || function(&kernel, module, "rr_stencil3d")) return 3;
  int nx = 16, ny = 16, nz = 16;
  void *params[] = {&a, &b, &a, &nx, &ny, &nz};
  for (int i = 0; i < atoi(argv[2]); i++)
    if (launch(kernel, 2, 2, 2, 8, 8, 4, 0, NULL, params, NULL)) return 3;
  void *library = NULL, *lib_kernel = NULL, *second = NULL;
  if (load_library(&library, image, NULL, NULL, 0, NULL, NULL, 0) ||
      load_library(&second, other, NULL, NULL, 0, NULL, NULL, 0) ||
      library_kernel(&lib_kernel, library, "rr_stencil3d"))
    return 3;
  if (launch(lib_kernel, 4, 1, 1, 8, 8, 4, 0, NULL, params, NULL)) return 3;
  sync();
  free_(a);
  free_(b);
  printf("ok\n");
  return 0;
}
