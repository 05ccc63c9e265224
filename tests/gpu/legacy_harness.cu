// Records rr_saxpy and rr_scale_global (tests/gpu/kernels.cu) the way the LEGACY libomptarget
// recorders wrote them (RecordReplayTy in the nextgen plugin's PluginInterface.cpp, before the
// 2026 rewrite). Sources read: the llvmorg release tarballs 16.0.6, 17.0.6, 18.1.8, 19.1.7,
// 21.1.8, 22.1.8 (FORMAT.md, "Legacy LLVM records", says what each wrote and why).
//
//   nvcc -O2 -o legacy_harness legacy_harness.cu -lcuda
//   RR_CUBIN=kernels.cubin LIBOMPTARGET_RR_SAVE_OUTPUT=1 legacy_harness MODE OUTDIR [--with-image]
//
// How the committed fixtures were made (on the H100 GPU machine):
//   nvcc -cubin -arch=sm_90 -O3 -o k.cubin tests/gpu/kernels.cu
//   nvcc -O2 -o legacy_harness tests/gpu/legacy_harness.cu -lcuda
//   export RR_CUBIN=k.cubin LIBOMPTARGET_RR_SAVE_OUTPUT=1 LIBOMPTARGET_RR_DEVMEM_SIZE=1 LEGACY_RR_MAX_GB=1
//   ./legacy_harness llvm16 out/llvm16; ./legacy_harness llvm18 out/llvm18; ./legacy_harness llvm19 out/llvm19
// then, unchanged: out/llvm16/rr_saxpy.* → record-fixtures/llvm16-saxpy, out/llvm18/* →
// record-fixtures/llvm18-two-kernels, out/llvm19/rr_saxpy.* → record-fixtures/llvm19-saxpy.
// k.cubin is byte for byte record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin, the
// image the GPU suite passes to the LLVM 16 record (tests/gpu/legacy-suite.sh). The addresses in
// the fixtures are what cuMemAlloc returned in that run; every run gives others (ASLR).
//
// MODE (named after the first release that wrote the layout):
//   llvm16  LLVM 16.0.x and 17.0.x: <Name>.json (9 keys), .memory, .original.output. No globals,
//           no BumpAllocVAStart, and NO .image (saveImage() exists but is never called in 16/17);
//           --with-image adds <Name>.image (what a user had to supply for the replay tool).
//           ArgPtrs = TgtArgs (values), ArgOffsets = TgtOffsets (may be != 0),
//           NumTeamsClause/ThreadLimitClause = the clause values (0 = no clause).
//   llvm18  LLVM 18.1.x: adds BumpAllocVAStart, <Name>.globals (no count header), <Name>.image;
//           ArgPtrs = argument values (TgtArgs + offsets), ArgOffsets all 0, clause keys hold the
//           effective blocks/threads.
//   llvm19  LLVM 19.1.x .. 22.1.x: as llvm18, but ArgPtrs = (intptr_t)LaunchParams.Ptrs[I],
//           the HOST addresses of the argument slots: the values are lost.
// Each launch of a kernel overwrites <Name>.* (every launch is recorded), so the files hold the
// LAST launch of each kernel. .original.output is written only if LIBOMPTARGET_RR_SAVE_OUTPUT is
// true (BoolEnvar: 1/true/yes/on), as in every legacy version.
//
// Region: llvm16: cuMemAlloc of LIBOMPTARGET_RR_DEVMEM_SIZE GiB (default 64), stepping down 1 GiB
// on failure (16.0.6 PluginInterface.cpp preallocateDeviceMemory + cuda/src/rtl.cpp allocate).
// llvm18/19: libomptarget passes MemorySize 0 when recording (device.cpp:
// initialize_record_replay(RTLDeviceID, 0, nullptr, true, ...)), the VA map fails ("Memory Map
// Size must be larger than 0") and preAllocateHeuristic cuMemAllocs cuDeviceTotalMem bytes, then
// 1 GiB less until it succeeds. LEGACY_RR_MAX_GB (harness-only) caps the first try; use 1 for
// fixtures. The region size never appears in the files; only used bytes are dumped.
// Checked on the H100 machine: all modes run; the llvm16 (start address inferred from the pointer
// arguments) and llvm18 (BumpAllocVAStart, .globals restored) records replay at that exact VA and
// match .original.output byte for byte (first with a throwaway validator, now with rr-tui in the
// GPU suite).
#include <cuda.h>
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

enum Mode { M16, M18, M19 };
static Mode mode;
static bool with_image = false, save_output = false;
static std::string out_dir;
static std::vector<char> cubin;
static CUmodule mod;
static CUdeviceptr MemoryStart = 0;  // RecordReplayTy::MemoryStart
static uint64_t MemorySize = 0;      // RecordReplayTy::MemorySize: bytes handed out so far

static void write_file(const std::string &name, const void *p, size_t n) {
  FILE *f = fopen((out_dir + "/" + name).c_str(), "wb");  // raw_fd_ostream: truncate
  if (!f) { perror(name.c_str()); exit(1); }
  if (n) fwrite(p, 1, n, f);
  fclose(f);
}

static bool bool_env(const char *name) {  // llvm BoolEnvar accepts 1/true/yes/on
  const char *v = getenv(name);
  if (!v) return false;
  std::string s(v);
  for (auto &c : s) c = (char)tolower(c);
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

// RecordReplayTy::alloc: 16-byte bump, frees are no-ops, alignment requests ignored.
static CUdeviceptr rr_alloc(uint64_t size) {
  CUdeviceptr p = MemoryStart + MemorySize;
  MemorySize += (size + 15) & ~uint64_t(15);
  return p;
}

// preallocateDeviceMemory (16/17) and preAllocateHeuristic (18..22): try, then 1 GiB less.
static void preallocate() {
  const uint64_t GiB = 1ull << 30;
  uint64_t max;
  if (mode == M16) {
    const char *e = getenv("LIBOMPTARGET_RR_DEVMEM_SIZE");  // UInt32Envar, GB, default 64
    max = (e ? strtoull(e, nullptr, 10) : 64) * GiB;
  } else {
    size_t total; CUdevice d; CK(cuDeviceGet(&d, 0)); CK(cuDeviceTotalMem(&total, d));
    max = total;
    if (const char *e = getenv("LEGACY_RR_MAX_GB")) max = std::min<uint64_t>(max, strtoull(e, nullptr, 10) * GiB);
  }
  for (uint64_t t = max; t > 0; t = t > GiB ? t - GiB : 0)  // LLVM: Try -= STEP (size_t)
    if (cuMemAlloc(&MemoryStart, t) == CUDA_SUCCESS) { printf("region %#llx, %llu bytes\n", (unsigned long long)MemoryStart, (unsigned long long)t); return; }
  fprintf(stderr, "Allocating record/replay memory\n");
  exit(1);
}

// dumpDeviceMemory: exactly [MemoryStart, MemoryStart + MemorySize), no header.
static void dump_memory(const std::string &file) {
  std::vector<char> buf(MemorySize);
  if (MemorySize) CK(cuMemcpyDtoH(buf.data(), MemoryStart, MemorySize));
  write_file(file, buf.data(), buf.size());
}

// Globals looked up through __tgt_rtl_get_global (RecordReplay.addEntry), in lookup order.
static const char *global_names[] = {"g_scale", "c_bias"};

// dumpGlobals (18.1.8 .. 22.1.8): repeated { name, '\0', u32 Size, Size bytes }, entries with
// Size == 0 skipped, NO count header, native (little) endian, no padding.
static void dump_globals(const std::string &file) {
  std::vector<char> out;
  for (const char *name : global_names) {
    CUdeviceptr p; size_t sz;
    CK(cuModuleGetGlobal(&p, &sz, mod, name));
    if (!sz) continue;
    out.insert(out.end(), name, name + strlen(name) + 1);
    uint32_t s32 = (uint32_t)sz;
    out.insert(out.end(), (char *)&s32, (char *)&s32 + 4);
    size_t at = out.size();
    out.resize(at + sz);
    CK(cuMemcpyDtoH(out.data() + at, p, sz));
  }
  write_file(file, out.data(), out.size());
}

// json::Value printed by json::OStream: compact, keys sorted bytewise, no trailing newline.
// intptr_t/ptrdiff_t/int32_t print signed; uint64_t/size_t print unsigned; uint32_t via int64.
static std::string int_list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); i++) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

static void launch_recorded(const char *name, std::vector<uint64_t> tgt_args, std::vector<int64_t> tgt_offsets,
                            uint32_t teams_clause, uint32_t threads_clause, uint64_t trip,
                            unsigned blocks, unsigned threads) {
  CUfunction f;
  CK(cuModuleGetFunction(&f, mod, name));
  int32_t num_args = (int32_t)tgt_args.size();
  // prepareArgs: value[i] = TgtArgs[i] + TgtOffsets[i]. 16/17/18 name the values Ptrs and the
  // slot pointers Args; 19+ swap the names and return {Size, Data=&Args[0], Ptrs=&Ptrs[0]}.
  void *Vals[16], *Slots[16];  // SmallVector<void *, 16> inline storage, on this stack frame
  for (int i = 0; i < num_args; i++) {
    Vals[i] = (void *)(intptr_t)(tgt_args[i] + (uint64_t)tgt_offsets[i]);
    Slots[i] = &Vals[i];
  }
  std::vector<int64_t> ptrs, offs;
  for (int i = 0; i < num_args; i++) {
    if (mode == M16) { ptrs.push_back((int64_t)tgt_args[i]); offs.push_back(tgt_offsets[i]); }  // ArgPtrs[I], ArgOffsets[I]
    else if (mode == M18) { ptrs.push_back((int64_t)(intptr_t)Vals[i]); offs.push_back(0); }   // Ptrs.data()
    else { ptrs.push_back((int64_t)(intptr_t)Slots[i]); offs.push_back(0); }                    // LaunchParams.Ptrs[I]
  }
  std::string n(name);
  char json[2048];
  CK(cuCtxSynchronize());
  if (mode == M16) {
    // saveKernelInputInfo (GenericDeviceTy::launchKernel, before the launch): .memory, then .json.
    dump_memory(n + ".memory");
    snprintf(json, sizeof json,
             "{\"ArgOffsets\":%s,\"ArgPtrs\":%s,\"DeviceId\":0,\"DeviceMemorySize\":%llu,\"LoopTripCount\":%llu,"
             "\"Name\":\"%s\",\"NumArgs\":%d,\"NumTeamsClause\":%u,\"ThreadLimitClause\":%u}",
             int_list(offs).c_str(), int_list(ptrs).c_str(), (unsigned long long)MemorySize, (unsigned long long)trip,
             name, num_args, teams_clause, threads_clause);
    if (with_image) write_file(n + ".image", cubin.data(), cubin.size());  // NOT written by 16/17
  } else {
    // GenericKernelTy::launch, after prepareArgs/getNumBlocks: saveImage, saveKernelInput
    // (.globals then .memory), saveKernelDescr (.json).
    write_file(n + ".image", cubin.data(), cubin.size());
    dump_globals(n + ".globals");
    dump_memory(n + ".memory");
    snprintf(json, sizeof json,
             "{\"ArgOffsets\":%s,\"ArgPtrs\":%s,\"BumpAllocVAStart\":%lld,\"DeviceId\":0,\"DeviceMemorySize\":%llu,"
             "\"LoopTripCount\":%llu,\"Name\":\"%s\",\"NumArgs\":%d,\"NumTeamsClause\":%u,\"ThreadLimitClause\":%u}",
             int_list(offs).c_str(), int_list(ptrs).c_str(), (long long)(intptr_t)MemoryStart,
             (unsigned long long)MemorySize, (unsigned long long)trip, name, num_args, blocks, threads);
  }
  write_file(n + ".json", json, strlen(json));
  if (mode == M19) {
    // CUDA launchImpl since PR #95116: one flat buffer of the values.
    size_t size = sizeof(void *) * num_args;
    void *config[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, Vals, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, 0, nullptr, config));
  } else {
    CK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, 0, Slots, nullptr));  // (void **)Args
  }
  CK(cuCtxSynchronize());
  if (save_output) dump_memory(n + ".original.output");  // saveKernelOutputInfo
  printf("recorded %s: %u x %u, %llu bytes\n", name, blocks, threads, (unsigned long long)MemorySize);
}

static CUdeviceptr map_to(const void *host, uint64_t size) {  // a `map(to:)`: bump alloc + H2D
  CUdeviceptr p = rr_alloc(size);
  CK(cuMemcpyHtoD(p, host, size));
  return p;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: legacy_harness llvm16|llvm18|llvm19 OUTDIR [--with-image]  (cubin from $RR_CUBIN)\n");
    return 2;
  }
  std::string m = argv[1];
  if (m == "llvm16") mode = M16;
  else if (m == "llvm18") mode = M18;
  else if (m == "llvm19") mode = M19;
  else {
    fprintf(stderr, "unknown mode %s: LLVM 16-17 write 'llvm16', LLVM 18 'llvm18', LLVM 19-22 'llvm19'\n", argv[1]);
    return 2;
  }
  out_dir = argv[2];
  for (int i = 3; i < argc; i++) if (!strcmp(argv[i], "--with-image")) with_image = true;
  save_output = bool_env("LIBOMPTARGET_RR_SAVE_OUTPUT");
  const char *cp = getenv("RR_CUBIN");
  FILE *cf = fopen(cp ? cp : "kernels.cubin", "rb");
  if (!cf) { perror("cubin"); return 1; }
  char b[65536]; size_t k;
  while ((k = fread(b, 1, sizeof b, cf)) > 0) cubin.insert(cubin.end(), b, b + k);
  fclose(cf);
  if (system(("mkdir -p '" + out_dir + "'").c_str()) != 0) return 1;

  // Device init (context), then RecordReplay init, then the image load: the legacy order.
  CK(cuInit(0));
  CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  preallocate();
  CK(cuModuleLoadData(&mod, cubin.data()));
  if (mode != M16) {
    // The application writes the declare-target globals; only 18+ record them (.globals).
    // In llvm16 mode they keep their image values (g_scale = 1, c_bias = 0), since a replay of
    // an LLVM 16/17 record cannot restore them.
    float scale = 2.5f, bias[8] = {0.5f, -1.0f, 0.25f, 2.0f, -0.125f, 1.5f, 0.0f, 3.0f};
    CUdeviceptr p; size_t sz;
    CK(cuModuleGetGlobal(&p, &sz, mod, "g_scale")); CK(cuMemcpyHtoD(p, &scale, 4));
    CK(cuModuleGetGlobal(&p, &sz, mod, "c_bias")); CK(cuMemcpyHtoD(p, bias, sizeof bias));
  }

  const long n = 1024;  // 4 KiB per array: records of 8 and 12 KiB
  std::vector<float> y(n), x(n), pad(64, 0.25f);
  for (long i = 0; i < n; i++) { x[i] = (float)(i % 100) * 0.01f; y[i] = (float)(i % 7) - 3.0f; }
  // map(tofrom: y[0:n]); then a 256-byte buffer; then map(to: X[64:n-64]) of an array X whose
  // first 64 elements the kernel reads from that buffer: the kernel gets the base X (= pad), and
  // 16/17 record TgtArgs = begin of the section with TgtOffsets = base - begin = -256.
  CUdeviceptr dy = map_to(y.data(), n * 4);
  CUdeviceptr dpad = map_to(pad.data(), 256);
  CUdeviceptr dxs = map_to(x.data() + 64, (n - 64) * 4);
  (void)dpad;
  double a = 1.5;
  uint64_t abits; memcpy(&abits, &a, 8);
  // dyn_ptr: 16/17 have no launch environment (pass nullptr); 18+ pass ~0 when the kernel has
  // no reductions (getKernelLaunchEnvironment). clang 18-22 put it FIRST (prepended by
  // prepareArgs); kernels.cu has it last, so the fixtures carry it in the last slot.
  uint64_t dyn = mode == M16 ? 0 : ~0ull;
  std::vector<int64_t> off0 = {0, -256, 0, 0, 0};
  // Two launches of rr_saxpy: the second overwrites the first's files.
  launch_recorded("rr_saxpy", {dy, dxs, abits, (uint64_t)n, dyn}, off0, 8, 128, n, 8, 128);
  launch_recorded("rr_saxpy", {dy, dxs, abits, (uint64_t)n, dyn}, off0, 16, 64, n, 16, 64);
  CUdeviceptr dout = rr_alloc(n * 4);  // map(from: out[0:n]): allocated, not copied
  // rr_scale_global without num_teams/thread_limit clauses: 16/17 record 0/0 and the plugin
  // picks 128 threads (GV_Default_WG_Size) and ceil(1024/128) = 8 blocks (SPMD, trip count).
  if (mode == M16)
    launch_recorded("rr_scale_global", {dout, dy, (uint64_t)n, dyn}, {0, 0, 0, 0}, 0, 0, n, 8, 128);
  else
    launch_recorded("rr_scale_global", {dout, dy, (uint64_t)n, dyn}, {0, 0, 0, 0}, 0, 0, n, 4, 256);
  return 0;
}
