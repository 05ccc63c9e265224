/* Checks of the stand-in driver's own bookkeeping (tests/fake_driver.rs links this against
 * fake_libcuda.c's libcuda.so.1 and runs it with FAKE_CUDA_MEMORY): a module's globals keep
 * their address and size for the module's lifetime, as a real driver's do; memory freed or
 * unmapped gives its place back, so far more allocations than the driver holds at once come and
 * go; and a leak ends in CUDA_ERROR_OUT_OF_MEMORY (2), never in a crash. Prints each failure
 * and exits 1 if any. */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
typedef int CUresult;
CUresult cuModuleLoadData(void **m, const void *img);
CUresult cuModuleUnload(void *m);
CUresult cuModuleGetGlobal_v2(uint64_t *p, size_t *s, void *m, const char *name);
CUresult cuModuleGetFunction(void **f, void *m, const char *name);
CUresult cuMemAlloc_v2(uint64_t *p, size_t s);
CUresult cuMemFree_v2(uint64_t p);
CUresult cuMemAddressReserve(uint64_t *p, size_t s, size_t al, uint64_t addr, unsigned long long f);
CUresult cuMemMap(uint64_t p, size_t s, size_t o, uint64_t h, unsigned long long f);
CUresult cuMemUnmap(uint64_t p, size_t s);
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n);
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n);

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAILED line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

/* A round trip through device memory at p: it holds bytes. */
static int holds_bytes(uint64_t p){
  uint32_t in = 0x5eed1234u ^ (uint32_t)p, out = 0;
  return cuMemcpyHtoD_v2(p, &in, 4) == 0 && cuMemcpyDtoH_v2(&out, p, 4) == 0 && out == in;
}

static void globals(void){
  void *a, *b;
  CHECK(cuModuleLoadData(&a, "// a\n") == 0 && cuModuleLoadData(&b, "// b\n") == 0, "two modules load");
  uint64_t p1 = 0, p2 = 0, q = 0, r = 0;
  size_t s1 = 0, s2 = 0, sq = 0;
  CHECK(cuModuleGetGlobal_v2(&p1, &s1, a, "c_bias") == 0 && cuModuleGetGlobal_v2(&p2, &s2, a, "c_bias") == 0, "c_bias twice");
  CHECK(p1 == p2 && p1 != 0, "one address per (module, name): %#llx then %#llx", (unsigned long long)p1, (unsigned long long)p2);
  CHECK(s1 == 32 && s2 == 32, "one size per name: %zu then %zu", s1, s2);
  CHECK(cuModuleGetGlobal_v2(&q, &sq, a, "g_scale") == 0 && q != p1 && sq == 4, "another name, another address");
  CHECK(cuModuleGetGlobal_v2(&r, NULL, b, "c_bias") == 0 && r != p1, "another module, another address");
  CHECK(holds_bytes(p1) && holds_bytes(r), "globals hold bytes");
  /* Asked for many times (as every switch of a rotation asks): no new memory each time. */
  for (int i = 0; i < 200000; i++) {
    uint64_t again = 0;
    if (cuModuleGetGlobal_v2(&again, NULL, a, "c_bias") != 0 || again != p1) { CHECK(0, "call %d: %#llx", i, (unsigned long long)again); break; }
  }
  void *f1, *f2;
  CHECK(cuModuleGetFunction(&f1, a, "k") == 0 && cuModuleGetFunction(&f2, a, "k") == 0 && f1 == f2, "one function handle per (module, name)");
  CHECK(cuModuleUnload(a) == 0 && cuModuleUnload(b) == 0, "unload");
  CHECK(!holds_bytes(p1), "an unloaded module's globals are gone");
}

static void allocations(void){
  /* Far more than the driver holds at once, each freed: the places are given back. */
  for (int i = 0; i < 100000; i++) {
    uint64_t p = 0;
    if (cuMemAlloc_v2(&p, 64) != 0 || !holds_bytes(p)) { CHECK(0, "allocation %d", i); break; }
    cuMemFree_v2(p);
    if (i == 0) CHECK(!holds_bytes(p), "freed memory holds nothing");
  }
  uint64_t base = 0;
  CHECK(cuMemAddressReserve(&base, 4u << 20, 0, 0x7f0000000000ull, 0) == 0, "reserve");
  /* Small mappings (the driver does not check the granularity): big ones cost a host mmap each. */
  for (int i = 0; i < 100000; i++) {
    uint64_t at = base + (uint64_t)(i % 2) * 4096;
    if (cuMemMap(at, 4096, 0, 1, 0) != 0 || !holds_bytes(at)) { CHECK(0, "mapping %d", i); break; }
    cuMemUnmap(at, 4096);
  }
  /* A leak: refused once the driver holds its most, as out of memory. */
  CUresult r = 0;
  int n = 0;
  for (; n < 1000000 && r == 0; n++) { uint64_t p; r = cuMemAlloc_v2(&p, 16); }
  CHECK(r == 2, "a leak ends in CUDA_ERROR_OUT_OF_MEMORY, not %d after %d", r, n);
  CHECK(n > 1000 && n < 1000000, "bounded: %d allocations", n);
  uint64_t big;
  CHECK(cuMemAlloc_v2(&big, (size_t)64 << 30) == 2, "64 GiB is more than the driver backs");
}

int main(void){
  globals();
  allocations();
  printf("%d failure(s)\n", failures);
  return failures != 0;
}
