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
/* With FAKE_CUDA_COMPUTE set as well, the GPU's work is done too, so that a verification means
 * something (tests/ab_rotation.rs): asynchronous copies and memsets act at once, as the
 * synchronous ones do; rr_leaf_hash (the fingerprints) sums each leaf's bytes, so equal
 * fingerprints mean equal bytes; and rr_stencil3d (of more than one block) copies its input to
 * its output (a stencil of weight one: out = in, 4 × nx × ny × nz bytes). A module loaded from
 * text (PTX) that contains FAKE_CUDA_STASH cheats instead: its rr_stencil3d computes its first
 * result and writes that same result on every later launch, kept in memory no reset reaches (the
 * STASH cheat of tests/gpu/samples/ab_cheats.cu); with FAKE_CUDA_SKIP, it computes on its first
 * launch only and does nothing after (SKIP_TIMED: the work moved out of the timed runs). */
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
/* The ranges that hold bytes, as long as they are mapped or allocated: the table grows with
 * them and a range unmapped or freed gives its place and bytes back, so a replay that switches
 * through many instances never runs out. A test that leaks ranges still ends: past MAX_BACKED
 * ranges or MAX_BACKED_BYTES bytes the call fails as out of memory (2), said once on stderr. */
#define MAX_BACKED 65536
#define MAX_BACKED_BYTES (4ull << 30)
static struct range { uint64_t addr, size; unsigned char *bytes; } *mem;
static size_t nmem, capmem;
static uint64_t backed_bytes;
static int memory_on(void){ static int on = -1; if (on < 0) on = getenv("FAKE_CUDA_MEMORY") != NULL; return on; }
static int compute_on(void){ static int on = -1; if (on < 0) on = memory_on() && getenv("FAKE_CUDA_COMPUTE") != NULL; return on; }
static CUresult out_of_memory(size_t size){
  static int said;
  if (!said++) fprintf(stderr, "fake libcuda: out of memory backing %zu more bytes (%zu ranges, %llu bytes held; at most %d ranges, %llu bytes)\n",
                       size, nmem, (unsigned long long)backed_bytes, MAX_BACKED, MAX_BACKED_BYTES);
  return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
static CUresult back(uint64_t addr, size_t size){
  if (!memory_on()) return 0;
  if (nmem >= MAX_BACKED || size > MAX_BACKED_BYTES - backed_bytes) return out_of_memory(size);
  if (nmem == capmem) {
    size_t cap = capmem ? capmem * 2 : 256;
    struct range *grown = realloc(mem, cap * sizeof *mem);
    if (!grown) return out_of_memory(size);
    mem = grown; capmem = cap;
  }
  unsigned char *bytes = calloc(1, size ? size : 1);
  if (!bytes) return out_of_memory(size);
  mem[nmem++] = (struct range){ addr, size, bytes };
  backed_bytes += size;
  return 0;
}
/* Give back every range inside [addr, addr + size) (an unmap), or with size 0 the one that
 * starts at addr (a free). The order is kept: `at` answers the first range that holds bytes. */
static void unback(uint64_t addr, uint64_t size){
  size_t kept = 0;
  for (size_t i = 0; i < nmem; i++) {
    int inside = size ? mem[i].addr >= addr && mem[i].addr - addr < size && mem[i].size <= size - (mem[i].addr - addr)
                      : mem[i].addr == addr;
    if (inside) { free(mem[i].bytes); backed_bytes -= mem[i].size; }
    else mem[kept++] = mem[i];
  }
  nmem = kept;
}
/* The backing of [addr, addr + n), or NULL when it is not all in one backed range. */
static unsigned char *at(uint64_t addr, size_t n){
  for (size_t i = 0; i < nmem; i++)
    if (addr >= mem[i].addr && n <= mem[i].size && addr - mem[i].addr <= mem[i].size - n) return mem[i].bytes + (addr - mem[i].addr);
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
CUresult cuMemMap(uint64_t p, size_t s, size_t o, uint64_t h, unsigned long long f){ CUresult r = back(p, s); say("map %#llx %#zx\n", (unsigned long long)p, s); return r; }
CUresult cuMemUnmap(uint64_t p, size_t s){ unback(p, s); return 0; }
CUresult cuMemSetAccess(uint64_t p, size_t s, void *d, size_t c){ return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t s){ *p = fake(s); return back(*p, s); }
CUresult cuMemFree_v2(uint64_t p){ unback(p, 0); return 0; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t){ *f = 70ull<<30; *t = 80ull<<30; return 0; }
CUresult cuMemAllocHost_v2(void **p, size_t s){ *p = calloc(1, s ? s : 1); return 0; }
CUresult cuMemHostAlloc(void **p, size_t s, unsigned f){ *p = calloc(1, s ? s : 1); return 0; }
CUresult cuMemFreeHost(void *p){ free(p); return 0; }
CUresult cuMemHostRegister_v2(void *p, size_t s, unsigned f){ return 0; }
CUresult cuMemHostUnregister(void *p){ return 0; }
/* The copies and memsets: with memory, a synchronous one that leaves it fails (1); with
 * FAKE_CUDA_COMPUTE an asynchronous one acts as the synchronous one, done by the time it returns
 * (a stream's order kept trivially). Otherwise they do nothing. */
static CUresult htod(uint64_t d, const void *s, size_t n){ unsigned char *p = at(d, n); if (!p) return 1; memcpy(p, s, n); return 0; }
static CUresult dtoh(void *d, uint64_t s, size_t n){ unsigned char *p = at(s, n); if (!p) return 1; memcpy(d, p, n); return 0; }
static CUresult dtod(uint64_t d, uint64_t s, size_t n){ unsigned char *to = at(d, n), *from = at(s, n); if (!to || !from) return 1; memmove(to, from, n); return 0; }
static CUresult set8(uint64_t d, unsigned char v, size_t n){ unsigned char *p = at(d, n); if (!p) return 1; memset(p, v, n); return 0; }
static CUresult set32(uint64_t d, unsigned v, size_t n){
  if (n > SIZE_MAX / 4) return 1;
  unsigned char *p = at(d, n * 4);
  if (!p) return 1;
  for (size_t i = 0; i < n; i++) memcpy(p + 4 * i, &v, 4);
  return 0;
}
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n){ return memory_on() ? htod(d, s, n) : 0; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *s, size_t n, void *st){ return compute_on() ? htod(d, s, n) : 0; }
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n){ return memory_on() ? dtoh(d, s, n) : 0; }
CUresult cuMemcpyDtoHAsync_v2(void *d, uint64_t s, size_t n, void *st){ return compute_on() ? dtoh(d, s, n) : 0; }
CUresult cuMemcpyDtoD_v2(uint64_t d, uint64_t s, size_t n){ return memory_on() ? dtod(d, s, n) : 0; }
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void *st){ return compute_on() ? dtod(d, s, n) : 0; }
CUresult cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n){ return compute_on() ? set8(d, v, n) : 0; }
CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void *st){ return compute_on() ? set8(d, v, n) : 0; }
CUresult cuMemsetD32Async(uint64_t d, unsigned v, size_t n, void *st){ return compute_on() ? set32(d, v, n) : 0; }
static void *last_module;
/* The modules loaded from text that contains FAKE_CUDA_STASH or FAKE_CUDA_SKIP (the last 16),
 * and which cheat their rr_stencil3d does. */
enum { LEAF_HASH = 1, STENCIL, STASH, SKIP };
static struct { void *module; int kind; } cheats[16];
static void *load(const void *img){
  const unsigned char *b = img;
  last_module = handle();
  /* Text, not a cubin (\x7fELF) or fatbin (0xba55ed50, which starts with 'P'): NUL-terminated. */
  int text = b && ((b[0] >= 0x20 && b[0] < 0x7f) || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') && strncmp(img, "\x50\xed\x55\xba", 4) != 0;
  static unsigned n;
  int kind = !compute_on() || !text ? 0 : strstr(img, "FAKE_CUDA_STASH") ? STASH : strstr(img, "FAKE_CUDA_SKIP") ? SKIP : 0;
  if (kind) { cheats[n % 16].module = last_module; cheats[n++ % 16].kind = kind; }
  return last_module;
}
/* The kind of module m's rr_stencil3d: a cheat, or the honest stencil. */
static int stencil_of(void *m){ for (int i = 0; i < 16; i++) if (m && cheats[i].module == m) return cheats[i].kind; return STENCIL; }
CUresult cuModuleLoadData(void **m, const void *img){ *m = load(img); return 0; }
CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, void *o, void **ov){ *m = load(img); return 0; }
/* The clock probe of the timing kernels (rr_clock): with memory, its launch writes 39 600 cycles
 * over 20 000 ns, a 1980 MHz SM clock. */
static void *clock_probe;
/* The functions handed out: as a driver's, one handle per (module, name) for the module's
 * lifetime (a cheat's kept result lives as long as its module, as a global would), and the
 * module each belongs to (what cuFuncGetModule answers); what FAKE_CUDA_COMPUTE runs of each.
 * Unloading the module forgets them. At most MAX_FUNCTIONS at once. */
#define MAX_FUNCTIONS 65536
static struct function { void *f, *module; char *name; int kind; unsigned char *kept; size_t kept_len; unsigned long launches; } *functions;
static size_t nfunctions, capfunctions;
static struct function *function_of(void *f){
  for (size_t i = 0; f && i < nfunctions; i++) if (functions[i].f == f) return &functions[i];
  return NULL;
}
/* The handle of `name` in module m: the one handed out before, else a new one (NULL when the
 * table is full or memory runs out). */
static void *function_in(void *m, const char *name){
  for (size_t i = 0; i < nfunctions; i++)
    if (functions[i].module == m && !strcmp(functions[i].name, name)) return functions[i].f;
  if (nfunctions >= MAX_FUNCTIONS) return NULL;
  if (nfunctions == capfunctions) {
    size_t cap = capfunctions ? capfunctions * 2 : 64;
    struct function *grown = realloc(functions, cap * sizeof *functions);
    if (!grown) return NULL;
    functions = grown; capfunctions = cap;
  }
  char *copy = strdup(name);
  if (!copy) return NULL;
  int kind = !compute_on() ? 0 : !strcmp(name, "rr_leaf_hash") ? LEAF_HASH
           : !strcmp(name, "rr_stencil3d") ? stencil_of(m) : 0;
  functions[nfunctions] = (struct function){ handle(), m, copy, kind, NULL, 0, 0 };
  if (!strcmp(name, "rr_clock")) clock_probe = functions[nfunctions].f;
  return functions[nfunctions++].f;
}
static void forget_functions(void *m){
  size_t kept = 0;
  for (size_t i = 0; i < nfunctions; i++) {
    if (functions[i].module == m) { free(functions[i].name); free(functions[i].kept); }
    else functions[kept++] = functions[i];
  }
  nfunctions = kept;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *n){
  if (!n) return 1; /* CUDA_ERROR_INVALID_VALUE */
  *f = function_in(m, n);
  return *f ? 0 : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
/* A module's globals: as a driver's, one address per (module, name) for the module's lifetime,
 * another for every other module or name, and always the same size (32 bytes for c_bias, 4 for
 * any other name); unloading the module gives their memory back. At most MAX_GLOBALS at once. */
#define MAX_GLOBALS 65536
static struct global { void *module; char *name; uint64_t addr; size_t size; } *globals;
static size_t nglobals, capglobals;
CUresult cuModuleGetGlobal_v2(uint64_t *p, size_t *s, void *m, const char *name){
  if (!name) return 1; /* CUDA_ERROR_INVALID_VALUE */
  /* FAKE_CUDA_NO_GLOBAL=NAME: the image lacks global NAME, as a driver says it. */
  const char *lacks = getenv("FAKE_CUDA_NO_GLOBAL");
  if (lacks && !strcmp(lacks, name)) return 500; /* CUDA_ERROR_NOT_FOUND */
  size_t i = 0;
  while (i < nglobals && !(globals[i].module == m && !strcmp(globals[i].name, name))) i++;
  if (i == nglobals) {
    size_t size = strcmp(name, "c_bias") == 0 ? 32 : 4;
    if (nglobals >= MAX_GLOBALS) return out_of_memory(size);
    if (nglobals == capglobals) {
      size_t cap = capglobals ? capglobals * 2 : 64;
      struct global *grown = realloc(globals, cap * sizeof *globals);
      if (!grown) return out_of_memory(size);
      globals = grown; capglobals = cap;
    }
    uint64_t addr = fake(size);
    char *copy = strdup(name);
    if (!copy || back(addr, size)) { free(copy); return out_of_memory(size); }
    globals[nglobals++] = (struct global){ m, copy, addr, size };
  }
  if (p) *p = globals[i].addr;
  if (s) *s = globals[i].size;
  return 0;
}
CUresult cuModuleUnload(void *m){
  size_t kept = 0;
  for (size_t i = 0; i < nglobals; i++) {
    if (globals[i].module == m) { unback(globals[i].addr, 0); free(globals[i].name); }
    else globals[kept++] = globals[i];
  }
  nglobals = kept;
  forget_functions(m);
  return 0;
}
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
/* A leaf's 16 bytes of fingerprint: two 64-bit FNV-1a sums of its bytes, from other seeds (any
 * function of the bytes will do: only this driver's fingerprints are compared with each other). */
static void leaf_sum(const unsigned char *b, uint64_t n, unsigned char out[16]){
  uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
  for (uint64_t i = 0; i < n; i++)
    for (int k = 0; k < 2; k++) h[k] = (h[k] ^ b[i]) * 0x100000001b3ull;
  memcpy(out, h, 16);
}
/* rr_leaf_hash(addr, len, leaf, out): one sum per leaf of [addr, addr + len) at out. */
static CUresult leaf_hash(unsigned leaves, void **p){
  uint64_t addr = *(uint64_t *)p[0], len = *(uint64_t *)p[1], leaf = *(uint64_t *)p[2], out = *(uint64_t *)p[3];
  if (!leaf) return 1;
  for (uint64_t i = 0; i < leaves && i * leaf < len; i++) {
    uint64_t n = len - i * leaf < leaf ? len - i * leaf : leaf;
    unsigned char *from = at(addr + i * leaf, n), *to = at(out + 16 * i, 16);
    if (!from || !to) return 700; /* CUDA_ERROR_ILLEGAL_ADDRESS */
    leaf_sum(from, n, to);
  }
  return 0;
}
/* What FAKE_CUDA_COMPUTE's kernels do (see the top of the file); any other launch does nothing. */
static CUresult compute(void *f, unsigned blocks, void **p){
  struct function *k = p ? function_of(f) : NULL;
  if (!k || !k->kind) return 0;
  if (k->kind == LEAF_HASH) return leaf_hash(blocks, p);
  if (blocks <= 1) return 0;
  uint64_t out = *(uint64_t *)p[0], in = *(uint64_t *)p[1];
  uint64_t n = 4ull * *(uint32_t *)p[3] * *(uint32_t *)p[4] * *(uint32_t *)p[5];
  unsigned char *to = at(out, n), *from = at(in, n);
  if (!to || !from) return 700;
  if (k->kind == STASH && k->kept) { memcpy(to, k->kept, n < k->kept_len ? n : k->kept_len); return 0; }
  if (k->kind == SKIP && k->launches++) return 0;
  memmove(to, from, n);
  if (k->kind == STASH && (k->kept = malloc(n))) { memcpy(k->kept, to, n); k->kept_len = n; }
  return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, void *st, void **p, void **e){
  if (f == clock_probe && f && p && memory_on()) {
    uint64_t probe[2] = {39600, 20000}, *out = (uint64_t *)at(*(uint64_t *)p[0], sizeof probe);
    if (out) memcpy(out, probe, sizeof probe);
    return 0;
  }
  say_launch("launch", gx, gy, gz, bx, by, bz, sh, p);
  CUresult failed = maybe_fail(gx, gy, gz, p);
  return failed ? failed : compute(f, gx * gy * gz, p);
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
  struct function *known = function_of(f);
  if (known) *m = known->module;
  return 0;
}
CUresult cuFuncLoad(void *f){ return 0; }
CUresult cuStreamIsCapturing(void *s, int *status){ *status = 0; return 0; }
/* A library's module is the handle after the library's own. */
CUresult cuLibraryLoadData(void **l, const void *code, void *o, void **ov, unsigned n, void *lo, void **lov, unsigned ln){ *l = handle(); last_module = handle(); return 0; }
CUresult cuLibraryUnload(void *l){ return 0; }
CUresult cuLibraryGetKernel(void **k, void *l, const char *n){ if (!n) return 1; *k = function_in((char *)l + 16, n); return *k ? 0 : 2; }
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
