// A small CUDA application that records its own kernel launches the way libomptarget does
// (LIBOMPTARGET_RECORD=1) and, in `rrtui` mode, the way rr-tui's CUDA recorder lays records out.
// It builds the suite's record directories and the committed fixtures; name_records.py then
// renames the files to their XXH3 names.
//
//   record_harness llvm   OUTDIR SCENARIO N [--no-report] [--time-reps R]
//   record_harness rrtui  OUTDIR N
//   SCENARIO: two-kernels | extras | bench
//
// Files are written as <tmpname>.{json,record_input,record_output,globals,image}; the report
// file (report.txt) names those tmp files.

#include <cuda.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

static std::string out_dir;
static std::vector<char> cubin;
static CUmodule mod;

static void write_file(const std::string &name, const void *p, size_t n) {
  FILE *f = fopen((out_dir + "/" + name).c_str(), "wb");
  if (!f) { perror(name.c_str()); exit(1); }
  if (n) fwrite(p, 1, n, f);
  fclose(f);
}

static std::vector<char> read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  std::vector<char> v;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  fclose(f);
  return v;
}

// The module globals the application set, in lookup order (what libomptarget's get_global sees).
static std::vector<char> globals_blob() {
  const char *names[] = {"g_scale", "c_bias"};
  std::vector<char> out(4);
  uint32_t count = 2;
  memcpy(out.data(), &count, 4);
  for (const char *name : names) {
    CUdeviceptr p; size_t sz;
    CK(cuModuleGetGlobal(&p, &sz, mod, name));
    std::vector<char> data(sz);
    CK(cuMemcpyDtoH(data.data(), p, sz));
    uint32_t nl = strlen(name) + 1; uint64_t s64 = sz;
    out.insert(out.end(), (char *)&nl, (char *)&nl + 4);
    out.insert(out.end(), (char *)&s64, (char *)&s64 + 8);
    out.insert(out.end(), name, name + nl);
    out.insert(out.end(), data.begin(), data.end());
  }
  return out;
}

static void set_globals(float scale, const float bias[8]) {
  CUdeviceptr p; size_t sz;
  CK(cuModuleGetGlobal(&p, &sz, mod, "g_scale"));
  CK(cuMemcpyHtoD(p, &scale, sizeof scale));
  CK(cuModuleGetGlobal(&p, &sz, mod, "c_bias"));
  CK(cuMemcpyHtoD(p, bias, 8 * sizeof(float)));
}

// ---------------------------------------------------------------- LLVM layout (bump region)
static const uint64_t VADDR = 0x153940000000ull;
static uint64_t vsize, cur = 0;

static CUdeviceptr bump(size_t n) {
  size_t aligned = (n + 15) & ~size_t(15);
  if (cur + aligned > vsize) { fprintf(stderr, "run out of record replay memory\n"); exit(1); }
  CUdeviceptr p = VADDR + cur;
  cur += aligned;
  return p;
}

struct Instance { std::string tmp, name; uint64_t ns = 0, occ = 0; };
static std::vector<Instance> order;
static std::map<std::string, size_t> seen;

static void launch_recorded(const char *name, unsigned teams, unsigned threads, unsigned shmem, std::vector<uint64_t> args,
                            unsigned tl_min, unsigned tl_max, uint64_t trip) {
  CUfunction f;
  CK(cuModuleGetFunction(&f, mod, name));
  if (shmem >= 48 * 1024) CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shmem));
  std::vector<void *> params;
  for (auto &a : args) params.push_back(&a);
  std::string key = std::string(name) + "__" + std::to_string(teams) + "_" + std::to_string(threads) + "_" + std::to_string(shmem);
  auto it = seen.find(key);
  if (it != seen.end()) {  // only the first launch of a key is recorded
    order[it->second].occ++;
    CK(cuLaunchKernel(f, teams, 1, 1, threads, 1, 1, shmem, 0, params.data(), nullptr));
    CK(cuCtxSynchronize());
    return;
  }
  seen[key] = order.size();
  Instance inst; inst.tmp = key; inst.name = name; inst.occ = 1;
  char json[4096];
  std::string ptrs, offs;
  for (size_t i = 0; i < args.size(); i++) {
    ptrs += (i ? "," : "") + std::to_string((int64_t)args[i]);
    offs += (i ? ",0" : "0");
  }
  snprintf(json, sizeof json,
           "{\"ArgOffsets\":[%s],\"ArgPtrs\":[%s],\"DeviceId\":0,\"LoopTripCount\":%llu,\"Name\":\"%s\",\"NumArgs\":%zu,"
           "\"NumTeams\":%u,\"NumThreads\":%u,\"SharedMemorySize\":%u,\"TeamsLimits\":[0,0],\"ThreadsLimits\":[%u,%u],"
           "\"VAllocAddr\":%lld,\"VAllocSize\":%llu}",
           offs.c_str(), ptrs.c_str(), (unsigned long long)trip, name, args.size(), teams, threads, shmem, tl_min, tl_max,
           (long long)VADDR, (unsigned long long)vsize);
  write_file(key + ".json", json, strlen(json));
  auto g = globals_blob();
  write_file(key + ".globals", g.data(), g.size());
  write_file(key + ".image", cubin.data(), cubin.size());
  CK(cuCtxSynchronize());
  std::vector<char> snap(cur);
  CK(cuMemcpyDtoH(snap.data(), VADDR, cur));
  write_file(key + ".record_input", snap.data(), snap.size());
  auto t0 = std::chrono::steady_clock::now();
  CK(cuLaunchKernel(f, teams, 1, 1, threads, 1, 1, shmem, 0, params.data(), nullptr));
  CK(cuCtxSynchronize());
  inst.ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  CK(cuMemcpyDtoH(snap.data(), VADDR, cur));
  write_file(key + ".record_output", snap.data(), snap.size());
  order.push_back(inst);
}

static CUdeviceptr upload(const std::vector<float> &v) {
  CUdeviceptr p = bump(v.size() * 4);
  CK(cuMemcpyHtoD(p, v.data(), v.size() * 4));
  return p;
}

static double time_kernel(const char *name, unsigned teams, unsigned threads, std::vector<uint64_t> args, int reps) {
  CUfunction f;
  CK(cuModuleGetFunction(&f, mod, name));
  std::vector<void *> params;
  for (auto &a : args) params.push_back(&a);
  CUevent a, b;
  CK(cuEventCreate(&a, CU_EVENT_DEFAULT));
  CK(cuEventCreate(&b, CU_EVENT_DEFAULT));
  std::vector<float> ms;
  for (int r = 0; r < reps; r++) {
    CK(cuEventRecord(a, 0));
    CK(cuLaunchKernel(f, teams, 1, 1, threads, 1, 1, 0, 0, params.data(), nullptr));
    CK(cuEventRecord(b, 0));
    CK(cuEventSynchronize(b));
    float t; CK(cuEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e6;
}

static int llvm_mode(const std::string &scenario, long n, bool report, int time_reps) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t gran;
  CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  vsize = scenario == "bench" ? (size_t)n * 8 + (64ull << 20) : (256ull << 20);
  vsize = (vsize + gran - 1) / gran * gran;
  CUdeviceptr got;
  CK(cuMemAddressReserve(&got, vsize, 0, VADDR, 0));
  if (got != VADDR) { fprintf(stderr, "could not reserve recorded virtual address\n"); return 1; }
  CUmemGenericAllocationHandle h;
  CK(cuMemCreate(&h, vsize, &prop, 0));
  CK(cuMemMap(VADDR, vsize, 0, h, 0));
  CUmemAccessDesc acc = {};
  acc.location = prop.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CK(cuMemSetAccess(VADDR, vsize, &acc, 1));
  CK(cuModuleLoadData(&mod, cubin.data()));
  float bias[8] = {0.5f, -1.0f, 0.25f, 2.0f, -0.125f, 1.5f, 0.0f, 3.0f};
  set_globals(2.5f, bias);
  const uint64_t SENT = ~0ull;
  std::vector<float> x(n), y(n);
  for (long i = 0; i < n; i++) { x[i] = (float)(i % 1000) * 0.001f; y[i] = (float)(i % 7) - 3.0f; }
  if (scenario == "two-kernels") {
    CUdeviceptr dx = upload(x), dy = upload(y);
    double a = 1.5;
    uint64_t abits; memcpy(&abits, &a, 8);
    launch_recorded("rr_saxpy", 8, 128, 0, {dy, dx, abits, (uint64_t)n, SENT}, 1, 1024, n);
    launch_recorded("rr_saxpy", 16, 64, 0, {dy, dx, abits, (uint64_t)n, SENT}, 1, 1024, n);
    launch_recorded("rr_saxpy", 8, 128, 0, {dy, dx, abits, (uint64_t)n, SENT}, 1, 1024, n);
    CUdeviceptr dout = bump(n * 4);
    launch_recorded("rr_scale_global", 4, 256, 0, {dout, dy, (uint64_t)n, SENT}, 1, 256, n);
    set_globals(-0.75f, bias);
    launch_recorded("rr_scale_global", 32, 32, 0, {dout, dx, (uint64_t)n, SENT}, 1, 256, n);
  } else if (scenario == "extras") {
    CUdeviceptr dd = upload(x);
    long tile = 16384;  // 64 KiB of floats per block
    launch_recorded("rr_smem_reverse", (unsigned)((n + tile - 1) / tile), 256, tile * 4, {dd, (uint64_t)n, (uint64_t)tile, SENT}, 1, 1024, n);
    std::vector<float> mixed(n);
    for (long i = 0; i < n; i++) mixed[i] = (i % 3 == 0) ? 1.0e7f + i : 1.0e-3f * (i % 97);
    CUdeviceptr din = upload(mixed), dsum = upload(std::vector<float>(8, 0.0f));
    launch_recorded("rr_atomic_sum", 132, 256, 0, {dsum, din, (uint64_t)n, SENT}, 1, 1024, n);
  } else if (scenario == "bench") {
    CUdeviceptr dx = upload(x), dy = upload(y);
    double a = 1.5;
    uint64_t abits; memcpy(&abits, &a, 8);
    launch_recorded("rr_saxpy", 1056, 256, 0, {dy, dx, abits, (uint64_t)n, SENT}, 1, 1024, n);
    if (time_reps > 0)
      printf("harness kernel median ns: %.0f\n", time_kernel("rr_saxpy", 1056, 256, {dy, dx, abits, (uint64_t)n, SENT}, time_reps));
  } else {
    fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
    return 1;
  }
  if (report) {
    std::string r = "=== Kernel Record Report ===\nDirectory: " + out_dir + "\nTotal Instances: " + std::to_string(order.size()) +
                    "\nJSON Filename, Kernel Name, Time (ns), Occurrences:\n";
    for (auto &i : order) r += i.tmp + ".json, " + i.name + ", " + std::to_string(i.ns) + ", " + std::to_string(i.occ) + "\n";
    r += "=== End Kernel Record Report ===\n";
    write_file("report.txt", r.data(), r.size());
  }
  return 0;
}

// ---------------------------------------------------------------- rr-tui layout (scattered)
static int rrtui_mode(int n) {
  CK(cuModuleLoadData(&mod, cubin.data()));
  float bias[8] = {0.5f, -1.0f, 0.25f, 2.0f, -0.125f, 1.5f, 0.0f, 3.0f};
  set_globals(0.5f, bias);
  long cells = (long)n * n * n;
  std::vector<float> in(cells);
  for (long i = 0; i < cells; i++) in[i] = (float)((i * 37) % 101) * 0.01f;
  float coef[4] = {0.4f, 0.1f, 0.1f, 0.1f};
  CUdeviceptr pad, din, dout, dcoef;  // `pad` puts a gap between the segments
  CK(cuMemAlloc(&din, cells * 4));
  CK(cuMemAlloc(&pad, 3 << 20));
  CK(cuMemAlloc(&dout, cells * 4));
  CK(cuMemAlloc(&dcoef, 256));
  CK(cuMemcpyHtoD(din, in.data(), cells * 4));
  CK(cuMemsetD8(dout, 0, cells * 4));
  CK(cuMemcpyHtoD(dcoef, coef, sizeof coef));
  CUfunction f;
  CK(cuModuleGetFunction(&f, mod, "rr_stencil3d"));

  system(("mkdir -p " + out_dir + "/images").c_str());
  write_file("images/kernels-sm90.cubin", cubin.data(), cubin.size());
  struct Seg { CUdeviceptr a; size_t s; } segs[3] = {{din, (size_t)cells * 4}, {dout, (size_t)cells * 4}, {dcoef, 256}};
  for (int occurrence = 0; occurrence < 2; occurrence++) {
    CUdeviceptr src = occurrence ? dout : din, dst = occurrence ? din : dout;
    int nx = n, ny = n, nz = n;
    void *params[] = {&dst, &src, &dcoef, &nx, &ny, &nz};
    // The parameter buffer in device layout, from cuFuncGetParamInfo.
    std::vector<unsigned char> buf;
    std::string layout;
    for (int i = 0;; i++) {
      size_t off, sz;
      if (cuFuncGetParamInfo(f, i, &off, &sz) != CUDA_SUCCESS) break;
      if (buf.size() < off + sz) buf.resize(off + sz);
      memcpy(buf.data() + off, params[i], sz);
      layout += (i ? "," : "") + std::string("[") + std::to_string(off) + "," + std::to_string(sz) + "]";
    }
    std::string hex;
    char h[3];
    for (auto c : buf) { snprintf(h, 3, "%02x", c); hex += h; }
    CUdeviceptr lo = ~0ull, hi = 0;
    std::string segjson;
    uint64_t file_off = 0;
    for (int i = 0; i < 3; i++) {
      lo = std::min(lo, segs[i].a); hi = std::max(hi, segs[i].a + segs[i].s);
      segjson += (i ? "," : "") + std::string("{\"Addr\":") + std::to_string((int64_t)segs[i].a) + ",\"Offset\":" + std::to_string(file_off) +
                 ",\"Size\":" + std::to_string(segs[i].s) + "}";
      file_off += segs[i].s;
    }
    unsigned gx = (n + 7) / 8, gy = (n + 7) / 8, gz = (n + 3) / 4;
    std::string key = "rr_stencil3d__occ" + std::to_string(occurrence);
    char json[8192];
    snprintf(json, sizeof json,
             "{\"ArgOffsets\":[],\"ArgPtrs\":[],\"Block\":[8,8,4],\"Cooperative\":false,\"DeviceId\":0,\"Grid\":[%u,%u,%u],"
             "\"ImageFile\":\"images/kernels-sm90.cubin\",\"LoopTripCount\":0,\"Name\":\"rr_stencil3d\",\"NumArgs\":6,\"NumTeams\":%u,"
             "\"NumThreads\":8,\"Occurrence\":%d,\"ParamBuffer\":\"%s\",\"ParamLayout\":[%s],\"RrTuiFormat\":1,\"Segments\":[%s],"
             "\"SharedMemorySize\":0,\"TeamsLimits\":[0,0],\"ThreadsLimits\":[0,0],\"VAllocAddr\":%lld,\"VAllocSize\":%llu}",
             gx, gy, gz, gx, occurrence, hex.c_str(), layout.c_str(), segjson.c_str(), (long long)lo, (unsigned long long)(hi - lo));
    write_file(key + ".json", json, strlen(json));
    auto g = globals_blob();
    write_file(key + ".globals", g.data(), g.size());
    auto snap = [&](const char *ext) {
      std::vector<char> all;
      for (auto &s : segs) {
        std::vector<char> b(s.s);
        CK(cuMemcpyDtoH(b.data(), s.a, s.s));
        all.insert(all.end(), b.begin(), b.end());
      }
      write_file(key + ext, all.data(), all.size());
    };
    CK(cuCtxSynchronize());
    snap(".record_input");
    CK(cuLaunchKernel(f, gx, gy, gz, 8, 8, 4, 0, 0, params, nullptr));
    CK(cuCtxSynchronize());
    snap(".record_output");
    printf("segment addresses: in %#llx out %#llx coef %#llx\n", (unsigned long long)din, (unsigned long long)dout, (unsigned long long)dcoef);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5 && !(argc >= 4 && std::string(argv[1]) == "rrtui")) {
    fprintf(stderr, "usage: record_harness llvm OUTDIR SCENARIO N [--no-report] [--time-reps R] | rrtui OUTDIR N  (CUBIN from $RR_CUBIN)\n");
    return 2;
  }
  const char *cubin_path = getenv("RR_CUBIN");
  cubin = read_file(cubin_path ? cubin_path : "kernels.cubin");
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  std::string mode = argv[1];
  out_dir = argv[2];
  system(("mkdir -p " + out_dir).c_str());
  if (mode == "rrtui") return rrtui_mode(atoi(argv[3]));
  bool report = true;
  int time_reps = 0;
  for (int i = 5; i < argc; i++) {
    if (!strcmp(argv[i], "--no-report")) report = false;
    if (!strcmp(argv[i], "--time-reps") && i + 1 < argc) time_reps = atoi(argv[++i]);
  }
  return llvm_mode(argv[3], atol(argv[4]), report, time_reps);
}
