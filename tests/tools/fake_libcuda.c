/* A stand-in for the CUDA driver (libcuda.so.1), for tests of the replay process's protocol and
 * of the preloaded recorder on machines without a GPU (tests/serve.rs and tests/interposed.rs
 * build it with `cc -shared`): every call the replay and recording paths make succeeds, device
 * memory is address arithmetic, copies and launches do nothing, and every event is 10 µs apart.
 * Replays must run with --events-only (no clock probe). Nothing it "computes" means anything: it
 * exercises the process around the GPU, never the GPU. */
/* With FAKE_CUDA_MEMORY set, device memory holds bytes (mapped ranges, cuMemAlloc, module
 * globals): synchronous copies round-trip, and one that leaves that memory fails, so a program
 * that copies where it did not map is caught (tests/repro.rs runs generated reproducers so).
 * With FAKE_CUDA_LOG=FILE, the calls that place memory and launch kernels are appended to FILE,
 * one line each. Without them, nothing changes for the other tests. */
#define _GNU_SOURCE 1 /* dladdr */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <dlfcn.h>
#include <unistd.h>
typedef int CUresult;
static uint64_t next_ptr = 0x7e0000000000ull;
static uint64_t fake(size_t n){ uint64_t p = next_ptr; next_ptr += (n + 0x200000) & ~0x1fffffull; return p; }
static void *handle(void){ static uintptr_t h = 0x1000; h += 16; return (void*)h; }
static struct { uint64_t addr, size; unsigned char *bytes; } mem[256];
static int nmem;
static int memory_on(void){ static int on = -1; if (on < 0) on = getenv("FAKE_CUDA_MEMORY") != NULL; return on; }
static void back(uint64_t addr, size_t size){
  if (memory_on() && nmem < 256) { mem[nmem].addr = addr; mem[nmem].size = size; mem[nmem].bytes = calloc(1, size ? size : 1); nmem++; }
}
/* The backing of [addr, addr + n), or NULL when it is not all in one backed range. */
static unsigned char *at(uint64_t addr, size_t n){
  for (int i = 0; i < nmem; i++)
    if (addr >= mem[i].addr && addr + n <= mem[i].addr + mem[i].size) return mem[i].bytes + (addr - mem[i].addr);
  return NULL;
}
static void say(const char *fmt, ...){
  const char *path = getenv("FAKE_CUDA_LOG");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  va_list ap; va_start(ap, fmt); vfprintf(f, fmt, ap); va_end(ap);
  fclose(f);
}
/* An older driver: -DFAKE_DRIVER_VERSION=12040 (doctor's test). */
#ifndef FAKE_DRIVER_VERSION
#define FAKE_DRIVER_VERSION 13000
#endif
CUresult cuDriverGetVersion(int *v){ *v = FAKE_DRIVER_VERSION; return 0; }
/* A hung GPU or driver, whose cuInit never returns: -DFAKE_INIT_SLEEP (doctor's test). */
#ifdef FAKE_INIT_SLEEP
#include <unistd.h>
CUresult cuInit(unsigned f){ sleep(1000); return 0; }
#else
CUresult cuInit(unsigned f){ return 0; }
#endif
CUresult cuDeviceGetCount(int *c){ *c = 1; return 0; }
CUresult cuDeviceGet(int *d, int o){ *d = o; return 0; }
CUresult cuDeviceGetName(char *n, int len, int d){ strncpy(n, "Fake GPU", len); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d){
  switch(a){
    case 1: *v=1024; break; case 2: *v=1024; break; case 3: *v=1024; break; case 4: *v=64; break;
    case 5: *v=2147483647; break; case 6: *v=65535; break; case 7: *v=65535; break;
    case 8: *v=49152; break; case 10: *v=32; break; case 13: *v=1980000; break; case 16: *v=132; break;
    case 38: *v=50*1024*1024; break; case 75: *v=9; break; case 76: *v=0; break; case 97: *v=227*1024; break;
    default: *v=1;
  }
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int d){ *b = 80ull<<30; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d){ *c = (void*)0x42; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d){ return 0; }
CUresult cuCtxSetCurrent(void *c){ return 0; }
CUresult cuCtxGetCurrent(void **c){ *c=(void*)0x42; return 0; }
CUresult cuCtxPushCurrent_v2(void *c){ return 0; }
CUresult cuCtxPopCurrent_v2(void **c){ if(c)*c=(void*)0x42; return 0; }
static void maybe_hang(void);
CUresult cuCtxSynchronize(void){ maybe_hang(); return 0; }
CUresult cuCtxGetDevice(int *d){ *d=0; return 0; }
CUresult cuMemGetAllocationGranularity(size_t *g, void *p, int o){ *g = 2u<<20; return 0; }
/* FAKE_CUDA_REFUSE_HINT=N: another address than the one asked for while RR_REPRO_ATTEMPT < N (a
 * driver whose own mappings sit there, in a reproducer's first N processes). */
static int refuse_hint(void){ const char *n = getenv("FAKE_CUDA_REFUSE_HINT"), *a = getenv("RR_REPRO_ATTEMPT"); return n && (a ? atoi(a) : 0) < atoi(n); }
CUresult cuMemAddressReserve(uint64_t *p, size_t s, size_t al, uint64_t addr, unsigned long long f){ *p = addr && !refuse_hint() ? addr : fake(s); say("reserve %#llx %#zx\n", (unsigned long long)*p, s); return 0; }
CUresult cuMemAddressFree(uint64_t p, size_t s){ return 0; }
CUresult cuMemCreate(uint64_t *h, size_t s, void *prop, unsigned long long f){ static uint64_t n=1; *h = n++; return 0; }
CUresult cuMemRelease(uint64_t h){ return 0; }
CUresult cuMemMap(uint64_t p, size_t s, size_t o, uint64_t h, unsigned long long f){ back(p, s); say("map %#llx %#zx\n", (unsigned long long)p, s); return 0; }
CUresult cuMemUnmap(uint64_t p, size_t s){ return 0; }
CUresult cuMemSetAccess(uint64_t p, size_t s, void *d, size_t c){ return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t s){ *p = fake(s); back(*p, s); return 0; }
CUresult cuMemFree_v2(uint64_t p){ return 0; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t){ *f = 70ull<<30; *t = 80ull<<30; return 0; }
CUresult cuMemAllocHost_v2(void **p, size_t s){ *p = calloc(1, s ? s : 1); return 0; }
CUresult cuMemHostAlloc(void **p, size_t s, unsigned f){ *p = calloc(1, s ? s : 1); return 0; }
CUresult cuMemFreeHost(void *p){ free(p); return 0; }
CUresult cuMemHostRegister_v2(void *p, size_t s, unsigned f){ return 0; }
CUresult cuMemHostUnregister(void *p){ return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n){ unsigned char *p = at(d, n); if (!memory_on()) return 0; if (!p) return 1; memcpy(p, s, n); return 0; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *s, size_t n, void *st){ return 0; }
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n){ unsigned char *p = at(s, n); if (!memory_on()) return 0; if (!p) return 1; memcpy(d, p, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *d, uint64_t s, size_t n, void *st){ return 0; }
CUresult cuMemcpyDtoD_v2(uint64_t d, uint64_t s, size_t n){ unsigned char *to = at(d, n), *from = at(s, n); if (!memory_on()) return 0; if (!to || !from) return 1; memmove(to, from, n); return 0; }
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void *st){ return 0; }
CUresult cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n){ return 0; }
CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void *st){ return 0; }
CUresult cuMemsetD32Async(uint64_t d, unsigned v, size_t n, void *st){ return 0; }
static void *last_module;
CUresult cuModuleLoadData(void **m, const void *img){ *m = last_module = handle(); return 0; }
CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, void *o, void **ov){ *m = last_module = handle(); return 0; }
CUresult cuModuleUnload(void *m){ return 0; }
/* Which module each function handle belongs to (what cuFuncGetModule answers). */
static struct { void *f, *m; } owners[64];
static void own(void *f, void *m){ static int n; owners[n++ % 64].f = f; owners[(n - 1) % 64].m = m; }
/* The clock probe of the timing kernels (rr_clock): with memory, its launch writes 39 600 cycles
 * over 20 000 ns, a 1980 MHz SM clock. */
static void *clock_probe;
CUresult cuModuleGetFunction(void **f, void *m, const char *n){ *f = handle(); own(*f, m); if (!strcmp(n, "rr_clock")) clock_probe = *f; return 0; }
CUresult cuModuleGetGlobal_v2(uint64_t *p, size_t *s, void *m, const char *n_){ size_t n = strcmp(n_, "c_bias")==0 ? 32 : 4; uint64_t a = fake(n); back(a, n); if(p)*p = a; if(s)*s = n; return 0; }
static const size_t offs[] = {0,8,16,24,28,32}, sizes[] = {8,8,8,4,4,4};
CUresult cuFuncGetParamInfo(void *f, size_t i, size_t *o, size_t *s){ if(i>=6) return 1; if(o)*o=offs[i]; if(s)*s=sizes[i]; return 0; }
CUresult cuFuncGetAttribute(int *v, int a, void *f){ *v = (a==0)?1024:32; return 0; }
CUresult cuFuncSetAttribute(void *f, int a, int v){ return 0; }
CUresult cuFuncGetName(const char **n, void *f){ *n = "rr_stencil3d"; return 0; }
CUresult cuStreamCreate(void **s, unsigned f){ *s = handle(); return 0; }
CUresult cuStreamDestroy_v2(void *s){ return 0; }
CUresult cuStreamSynchronize(void *s){ maybe_hang(); return 0; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f){ return 0; }
CUresult cuEventCreate(void **e, unsigned f){ *e = handle(); return 0; }
CUresult cuEventDestroy_v2(void *e){ return 0; }
CUresult cuEventRecord(void *e, void *s){ return 0; }
CUresult cuEventSynchronize(void *e){ maybe_hang(); return 0; }
CUresult cuEventQuery(void *e){ return 0; }
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b){ *ms = 0.01f; return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b){ *ms = 0.01f; return 0; }
/* The launch, and with FAKE_CUDA_LOG_PARAMS set (a program launching rr_stencil3d), for a launch
 * of more than one block (not the one-thread timing kernel) its parameters as the 6 of
 * rr_stencil3d's layout above, each in hex. */
static void say_launch(const char *how, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, void **p){
  if (!getenv("FAKE_CUDA_LOG")) return;
  char params[256] = "", *w = params;
  for (int i = 0; p && getenv("FAKE_CUDA_LOG_PARAMS") && gx * gy * gz > 1 && i < 6; i++) {
    w += sprintf(w, i ? "," : " params=");
    for (size_t k = 0; k < sizes[i]; k++) w += sprintf(w, "%02x", ((unsigned char *)p[i])[k]);
  }
  say("%s grid=%u,%u,%u block=%u,%u,%u shared=%u%s\n", how, gx, gy, gz, bx, by, bz, sh, params);
}
/* A failing kernel, for tests of what a fault, a crash or a hang on one instance leaves of the
 * others: with FAKE_FAIL_PARAM0=HEX, a launch of more than one block whose first parameter (8
 * bytes) is HEX, after FAKE_FAIL_AFTER (default 0) such launches, fails as FAKE_FAIL_HOW says:
 * "fault" (or unset) returns an illegal address (700), "crash" aborts the process, "hang" makes
 * the next synchronisation never return. Unset, nothing fails. */
static int hang_next;
static void maybe_hang(void){ while (hang_next) sleep(1); }
static CUresult maybe_fail(unsigned gx, unsigned gy, unsigned gz, void **p){
  static long seen;
  const char *param0 = getenv("FAKE_FAIL_PARAM0"), *after = getenv("FAKE_FAIL_AFTER"), *how = getenv("FAKE_FAIL_HOW");
  if (!param0 || !p || gx * gy * gz <= 1 || *(uint64_t *)p[0] != strtoull(param0, 0, 16)) return 0;
  if (seen++ < (after ? atol(after) : 0)) return 0;
  if (how && !strcmp(how, "crash")) abort();
  if (how && !strcmp(how, "hang")) { hang_next = 1; return 0; }
  return 700;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, void *st, void **p, void **e){
  if (f == clock_probe && f && p && memory_on()) {
    uint64_t probe[2] = {39600, 20000}, *out = (uint64_t *)at(*(uint64_t *)p[0], sizeof probe);
    if (out) memcpy(out, probe, sizeof probe);
    return 0;
  }
  say_launch("launch", gx, gy, gz, bx, by, bz, sh, p);
  return maybe_fail(gx, gy, gz, p);
}
CUresult cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, void *st, void **p){ say_launch("cooperative", gx, gy, gz, bx, by, bz, sh, p); return 0; }
CUresult cuLaunchKernelEx(void *cfg, void *f, void **p, void **e){ return 0; }
CUresult cuGetErrorString(int e, const char **s){ *s = "fake error"; return 0; }
CUresult cuGetErrorName(int e, const char **s){ *s = "CUDA_ERROR_FAKE"; return 0; }
CUresult cuMemHostGetDevicePointer_v2(uint64_t *d, void *p, unsigned f){ *d = (uint64_t)(uintptr_t)p; return 0; }
CUresult cuMemHostGetFlags(unsigned *f, void *p){ *f = 0; return 0; }
CUresult cuPointerGetAttribute(void *d, int a, uint64_t p){ if (a == 1) *(void **)d = (void *)0x42; /* CONTEXT: the one context */ else memset(d, 0, 8); return 0; }
CUresult cuStreamQuery(void *s){ return 0; }
CUresult cuDeviceGetUuid_v2(char *u, int d){ memset(u, 1, 16); return 0; }
CUresult cuDeviceGetUuid(char *u, int d){ memset(u, 1, 16); return 0; }
CUresult cuDeviceGetPCIBusId(char *b, int len, int d){ strncpy(b, "0000:01:00.0", len); return 0; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int b, size_t s){ *n = 4; return 0; }
CUresult cuCtxGetLimit(size_t *v, int l){ *v = 1024; return 0; }
CUresult cuCtxSetLimit(int l, size_t v){ return 0; }
/* What the recorder asks of a launch. */
CUresult cuFuncGetModule(void **m, void *f){
  *m = last_module;
  for (int i = 0; i < 64; i++) if (owners[i].f == f) *m = owners[i].m;
  return 0;
}
CUresult cuFuncLoad(void *f){ return 0; }
CUresult cuStreamIsCapturing(void *s, int *status){ *status = 0; return 0; }
/* A library's module is the handle after the library's own. */
CUresult cuLibraryLoadData(void **l, const void *code, void *o, void **ov, unsigned n, void *lo, void **lov, unsigned ln){ *l = handle(); last_module = handle(); return 0; }
CUresult cuLibraryUnload(void *l){ return 0; }
CUresult cuLibraryGetKernel(void **k, void *l, const char *n){ *k = handle(); own(*k, (char *)l + 16); return 0; }
CUresult cuKernelGetFunction(void **f, void *k){ *f = k; return 0; }
/* cuGetProcAddress: the functions above by name (the versioned symbol where there is one). */
CUresult cuGetProcAddress_v2(const char *name, void **pfn, int version, unsigned long long flags, int *status){
  static const struct { const char *name; void *f; } table[] = {
    {"cuInit", (void *)cuInit}, {"cuMemAlloc", (void *)cuMemAlloc_v2}, {"cuMemFree", (void *)cuMemFree_v2},
    {"cuModuleLoadData", (void *)cuModuleLoadData}, {"cuModuleGetFunction", (void *)cuModuleGetFunction},
    {"cuLaunchKernel", (void *)cuLaunchKernel}, {"cuLibraryLoadData", (void *)cuLibraryLoadData},
    {"cuCtxSynchronize", (void *)cuCtxSynchronize}, {"cuGetProcAddress", (void *)cuGetProcAddress_v2},
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (!strcmp(name, table[i].name)) { *pfn = table[i].f; if (status) *status = 0; return 0; }
  /* With FAKE_CUDA_MEMORY (a test of a whole program, e.g. a Python reproducer on cuda-python,
   * which resolves every call this way): any function of this file, the versioned one first. */
  Dl_info self;
  void *me = memory_on() && dladdr((void *)cuGetProcAddress_v2, &self) ? dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
  if (me) {
    char versioned[128];
    snprintf(versioned, sizeof versioned, "%s_v2", name);
    *pfn = dlsym(me, versioned);
    if (!*pfn) *pfn = dlsym(me, name);
    dlclose(me);
    if (*pfn) { if (status) *status = 0; return 0; }
  }
  *pfn = NULL; if (status) *status = 1; return 500; /* CUDA_ERROR_NOT_FOUND */
}
