// procaddr_hook.c: the alternative to CUPTI's launch callbacks, measured: an LD_PRELOAD library
// that answers dlsym(libcuda, "cuGetProcAddress[_v2]") with wrappers, which hand out its own
// cuLaunchKernel / cuLaunchKernelEx (counting launches per function handle in a small hash table,
// as a recorder that selects nothing would) and pass everything else through. It also exports
// cuLaunchKernel itself, for programs linked against libcuda.
// Build: gcc -O2 -shared -fPIC -o libprocaddr_hook.so procaddr_hook.c -I$CUDA/include -ldl
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                              void **, void **);
static dlsym_fn real_dlsym;
static gpa2_fn real_gpa2;
static gpa1_fn real_gpa1;
static launch_fn real_launch, real_launch_ptsz;
static unsigned long launches, table_hits, dlsym_cu, gpa_calls;
static struct { void *f; unsigned long n; } table[4096];

static void count(void *f) {
  unsigned long h = ((unsigned long)f >> 4) & 4095;
  for (int i = 0; i < 4096; i++, h = (h + 1) & 4095) {
    if (table[h].f == f) { table[h].n++; table_hits++; return; }
    if (!table[h].f) { table[h].f = f; table[h].n = 1; return; }
  }
}

static CUresult my_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned smem, CUstream s, void **p, void **e) {
  __atomic_fetch_add(&launches, 1, __ATOMIC_RELAXED);
  count(f);
  return real_launch(f, gx, gy, gz, bx, by, bz, smem, s, p, e);
}
static CUresult my_launch_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               unsigned smem, CUstream s, void **p, void **e) {
  __atomic_fetch_add(&launches, 1, __ATOMIC_RELAXED);
  count(f);
  return real_launch_ptsz(f, gx, gy, gz, bx, by, bz, smem, s, p, e);
}

static void *swap(const char *sym, void *pfn, cuuint64_t flags);
static CUresult my_gpa2(const char *sym, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st) {
  gpa_calls++;
  CUresult r = real_gpa2(sym, pfn, ver, flags, st);
  if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = swap(sym, *pfn, flags);
  return r;
}
static CUresult my_gpa1(const char *sym, void **pfn, int ver, cuuint64_t flags) {
  gpa_calls++;
  CUresult r = real_gpa1(sym, pfn, ver, flags);
  if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = swap(sym, *pfn, flags);
  return r;
}
static void *swap(const char *sym, void *pfn, cuuint64_t flags) {
  if (!strcmp(sym, "cuGetProcAddress")) {
    // The runtime asks for cuGetProcAddress through cuGetProcAddress, by version.
    if (!real_gpa2) real_gpa2 = (gpa2_fn)pfn;
    return (void *)my_gpa2;
  }
  if (!strcmp(sym, "cuLaunchKernel")) {
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) { real_launch_ptsz = (launch_fn)pfn; return (void *)my_launch_ptsz; }
    real_launch = (launch_fn)pfn;
    return (void *)my_launch;
  }
  return pfn;
}

static void init(void) {
  if (real_dlsym) return;
  real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!real_dlsym) real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
}

void *dlsym(void *h, const char *name) {
  init();
  void *p = real_dlsym(h, name);
  if (!p || !name || name[0] != 'c' || name[1] != 'u') return p;
  dlsym_cu++;
  if (getenv("HOOK_VERBOSE")) fprintf(stderr, "procaddr_hook: dlsym(%s)\n", name);
  if (!strcmp(name, "cuGetProcAddress_v2")) { real_gpa2 = (gpa2_fn)p; return (void *)my_gpa2; }
  if (!strcmp(name, "cuGetProcAddress")) { real_gpa1 = (gpa1_fn)p; return (void *)my_gpa1; }
  if (!strcmp(name, "cuLaunchKernel")) { real_launch = (launch_fn)p; return (void *)my_launch; }
  return p;
}

// Programs linked against libcuda call this symbol directly.
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, CUstream s, void **p, void **e) {
  init();
  if (!real_launch) real_launch = (launch_fn)real_dlsym(RTLD_NEXT, "cuLaunchKernel");
  return my_launch(f, gx, gy, gz, bx, by, bz, smem, s, p, e);
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "procaddr_hook: %lu launches intercepted (%lu table hits); %lu dlsym cu* lookups, %lu cuGetProcAddress calls\n",
          launches, table_hits, dlsym_cu, gpa_calls);
}
