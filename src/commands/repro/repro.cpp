// A standalone reproducer of one recorded kernel launch, written by rr-tui repro (README.txt).
// It needs only the CUDA driver (cuda.h, libcuda) and a C++17 compiler: it reserves the
// recorded device addresses, loads the recorded image, sets the module globals, restores the
// recorded input, launches with the recorded geometry and parameter bytes, compares every
// recorded byte with the recorded output, and times repetitions with CUDA events.
//
// Usage: ./repro [--image FILE] [--data DIR] [--repetitions N] [--device N]
// Exit status: 0 verified, 1 the result differs from the recorded output, 2 trouble.
#include <cuda.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Range { uint64_t addr, size; };
struct Slot { size_t offset, size; };
// One recorded segment: `size` bytes at `addr`, before the kernel in `in_file` at `in_off` and
// after it in `out_file` at `out_off` (files under the data folder). `host`: page-locked host
// memory the kernel reached at its host address.
struct Copy { uint64_t addr, size; bool host; const char *in_file; uint64_t in_off; const char *out_file; uint64_t out_off; };
struct GlobalVar { const char *name; uint64_t size, offset; };

// @@RECORD@@

// The timing kernels of rr-tui replay, as it loads them (after nvbench): rr_block spins until a
// host-mapped flag is set (or a second passes), holding the stream while the start event, the
// kernel and the stop event are queued, so the timed interval holds no launch latency; rr_clock,
// queued after the stop event, spins 20 us on one SM and measures the SM clock. Replay's loop
// runs both, and the kernel's time depends on it (a one-thread spin after each launch changes
// the next launch's time by a few per cent on an H200), so this program runs both too.
// @@TIMING_PTX@@

[[noreturn]] void die(const std::string &what) {
    std::fprintf(stderr, "repro: %s\n", what.c_str());
    std::exit(2);
}

void check(CUresult r, const char *call) {
    if (r == CUDA_SUCCESS) return;
    const char *name = "?", *text = "?";
    cuGetErrorName(r, &name);
    cuGetErrorString(r, &text);
    die(std::string(call) + " failed: " + name + " (" + text + ")");
}
#define CHECK(call) check((call), #call)

std::string hex(uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(v));
    return b;
}

// `len` bytes at `off` of `path`, read into `dst`.
void read_at(const std::string &path, uint64_t off, uint64_t len, unsigned char *dst) {
    FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) die(path + ": cannot open (run where README.txt says, or pass --data DIR)");
    if (fseeko(f, static_cast<off_t>(off), SEEK_SET) != 0) die(path + ": cannot seek");
    size_t got = std::fread(dst, 1, len, f);
    std::fclose(f);
    if (got != len) die(path + ": shorter than the record says");
}

std::vector<unsigned char> read_file(const std::string &path) {
    FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) die(path + ": cannot open");
    std::vector<unsigned char> bytes;
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
    bytes.push_back(0);  // PTX is text: the driver wants it NUL-terminated
    return bytes;
}

// A whole number from 0 (`--repetitions`) or any integer (`--device`), all of `text`;
// anything else is refused (strtoul would read "abc" as 0).
long long number(const std::string &flag, const std::string &text, bool from_zero) {
    errno = 0;
    char *end = nullptr;
    long long n = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || (from_zero && n < 0) || n > 0x7fffffff || n < -0x7fffffff)
        die(flag + " " + text + ": not a " + (from_zero ? "whole number from 0" : "number"));
    return n;
}

struct Options {
    std::string image, data;
    unsigned repetitions = DEFAULT_REPETITIONS;
    int device = RECORDED_DEVICE;
};

const char *USAGE =
    "usage: ./repro [--repetitions N] [--device N] [--data DIR] [--image FILE]\n"
    "  --repetitions N  timed repetitions after the verified launch (0: verify only)\n"
    "  --device N       the GPU's ordinal (default: the recorded device's)\n"
    "  --data DIR       the recorded data (default: data/ beside this program)\n"
    "  --image FILE     a device image (cubin, fatbin, PTX) to load instead of the recorded one\n"
    "Exit status: 0 verified, 1 the output differs, 2 it could not run.\n";

// The data folder is missing but `--pack`'s archive lies beside the program: it was never
// unpacked. Said before anything else, rather than a bare "cannot open" on its first file.
void check_unpacked(const std::string &data, const std::string &here) {
    struct stat st;
    if (stat(data.c_str(), &st) == 0) return;
    std::string tar = here + "/data.tar";
    if (stat(tar.c_str(), &st) != 0) return;
    die(data + ": missing; unpack the recorded data first: cd " + here + " && tar xf data.tar");
}

Options parse(int argc, char **argv) {
    Options o;
    std::string self = argv[0];
    size_t slash = self.rfind('/');
    std::string here = slash == std::string::npos ? std::string(".") : self.substr(0, slash);
    o.data = here + "/data";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::fputs(USAGE, stdout);
            std::exit(0);
        }
        if (a == "--image") o.image = value();
        else if (a == "--data") o.data = value();
        else if (a == "--repetitions") o.repetitions = static_cast<unsigned>(number(a, value(), true));
        else if (a == "--device") o.device = static_cast<int>(number(a, value(), false));
        else die("unknown argument " + a + " (--image FILE, --data DIR, --repetitions N, --device N, --help)");
    }
    check_unpacked(o.data, here);
    if (o.image.empty()) o.image = o.data + "/" + IMAGE_FILE;
    return o;
}

// PROT_NONE mappings over the recorded ranges, taken before the driver starts so that neither
// it nor the C library places anything there; device ones are given back right before cuInit.
std::vector<bool> hold(const Range *ranges, size_t n) {
    std::vector<bool> held(n);
    for (size_t i = 0; i < n; i++) {
        void *want = reinterpret_cast<void *>(ranges[i].addr);
        void *p = mmap(want, ranges[i].size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        held[i] = p == want;
        if (p != MAP_FAILED && p != want) munmap(p, ranges[i].size);
    }
    return held;
}

// A recorded range this process already uses (its own mappings, placed by ASLR) cannot be had:
// start again as a fresh process, whose layout differs, at most 3 times, as rr-tui replay does.
// After that, go on: the driver may still honour the address.
char **ARGV = nullptr;  // main's, for starting afresh

// Start again as a fresh process, whose address layout differs (ASLR), at most 3 times, as
// rr-tui replay does; returns when those are spent.
void start_afresh(const std::string &why) {
    const char *was = std::getenv("RR_REPRO_ATTEMPT");
    int attempt = was ? std::atoi(was) : 0;
    if (attempt >= 3 || !ARGV) return;
    setenv("RR_REPRO_ATTEMPT", std::to_string(attempt + 1).c_str(), 1);
    std::fprintf(stderr, "repro: %s; starting afresh (%d of 3)\n", why.c_str(), attempt + 1);
    std::fflush(stdout);
    execv("/proc/self/exe", ARGV);
}

void fresh_layout_if_taken(const std::vector<bool> &device_held, const std::vector<bool> &host_held, char **argv) {
    ARGV = argv;
    bool all = true;
    for (bool h : device_held) all = all && h;
    for (bool h : host_held) all = all && h;
    if (!all) start_afresh("a recorded range is in use in this process");
}

// Reserve every range at its recorded address and back the recorded bytes with device memory,
// as rr-tui replay does (the driver honours an address hint for large, aligned reservations).
void reserve_and_map(CUdevice dev) {
    for (size_t i = 0; i < N_RESERVE; i++) {
        CUdeviceptr got = 0;
        CHECK(cuMemAddressReserve(&got, RESERVE[i].size, 0, RESERVE[i].addr, 0));
        if (got != RESERVE[i].addr) {
            // The driver's own mappings can land there too: another layout may leave it free.
            start_afresh("the driver offered " + hex(got) + " for the recorded address " + hex(RESERVE[i].addr));
            die("could not reserve the recorded address " + hex(RESERVE[i].addr) + ": the driver offered " +
                hex(got) + " (something in this process uses that range)");
        }
    }
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (size_t i = 0; i < N_MAP; i++) {
        CUmemGenericAllocationHandle h;
        CHECK(cuMemCreate(&h, MAP[i].size, &prop, 0));
        CHECK(cuMemMap(MAP[i].addr, MAP[i].size, 0, h, 0));
        CHECK(cuMemSetAccess(MAP[i].addr, MAP[i].size, &access, 1));
    }
}

// Page-locked host memory at its recorded address, registered so the device reaches it there.
void map_host(const std::vector<bool> &held) {
    for (size_t i = 0; i < N_HOST; i++) {
        void *want = reinterpret_cast<void *>(HOST[i].addr);
        int fixed = held[i] ? MAP_FIXED : MAP_FIXED_NOREPLACE;  // over our own placeholder only
        void *p = mmap(want, HOST[i].size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
        if (p != want) die("could not map host memory at the recorded address " + hex(HOST[i].addr));
        CHECK(cuMemHostRegister(p, HOST[i].size, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
        CUdeviceptr d = 0;
        CHECK(cuMemHostGetDevicePointer(&d, p, 0));
        if (d != HOST[i].addr) die("host memory at " + hex(HOST[i].addr) + " is not reached there by the device");
    }
}

struct Snapshot {
    std::vector<unsigned char> bytes;  // every segment, one after the other
    std::vector<size_t> at;           // where each segment starts in `bytes`
};

Snapshot load(const Options &o, bool output) {
    Snapshot s;
    size_t total = 0;
    for (size_t i = 0; i < N_COPY; i++) { s.at.push_back(total); total += COPY[i].size; }
    s.bytes.resize(total);
    for (size_t i = 0; i < N_COPY; i++) {
        const Copy &c = COPY[i];
        read_at(o.data + "/" + (output ? c.out_file : c.in_file), output ? c.out_off : c.in_off, c.size,
                s.bytes.data() + s.at[i]);
    }
    return s;
}

struct Globals {
    std::vector<unsigned char> values;  // globals.bin: every value, one after the other
    std::vector<CUdeviceptr> where;
};

Globals bind_globals(const Options &o, CUmodule mod) {
    Globals g;
    uint64_t total = 0;
    for (size_t i = 0; i < N_GLOBAL; i++) total = std::max(total, GLOBAL[i].offset + GLOBAL[i].size);
    g.values.resize(total);
    if (total) read_at(o.data + "/globals.bin", 0, total, g.values.data());
    for (size_t i = 0; i < N_GLOBAL; i++) {
        CUdeviceptr p;
        size_t size;
        CUresult r = cuModuleGetGlobal(&p, &size, mod, GLOBAL[i].name);
        if (r == CUDA_ERROR_NOT_FOUND)
            die("the image " + o.image + " lacks global " + GLOBAL[i].name + ", which the recorded kernel uses");
        check(r, GLOBAL[i].name);
        if (size != GLOBAL[i].size)
            die(std::string("global ") + GLOBAL[i].name + " is " + std::to_string(size) +
                " bytes in the image but was recorded with " + std::to_string(GLOBAL[i].size));
        g.where.push_back(p);
    }
    return g;
}

// Put the recorded input and globals back (untimed, before every launch): from a copy on the
// device when it fits, else from the host.
struct Restorer {
    const Snapshot &input;
    const Globals &globals;
    CUdeviceptr pristine = 0;

    Restorer(const Snapshot &in, const Globals &g) : input(in), globals(g) {
        size_t device_bytes = 0;
        for (size_t i = 0; i < N_COPY; i++) if (!COPY[i].host) device_bytes += COPY[i].size;
        if (device_bytes && cuMemAlloc(&pristine, device_bytes) == CUDA_SUCCESS) {
            for (size_t i = 0; i < N_COPY; i++)
                if (!COPY[i].host) CHECK(cuMemcpyHtoD(pristine + offset_of(i), input.bytes.data() + input.at[i], COPY[i].size));
        } else {
            pristine = 0;
        }
    }
    size_t offset_of(size_t k) const {
        size_t off = 0;
        for (size_t i = 0; i < k; i++) if (!COPY[i].host) off += COPY[i].size;
        return off;
    }
    void operator()() const {
        size_t off = 0;
        for (size_t i = 0; i < N_COPY; i++) {
            const Copy &c = COPY[i];
            const unsigned char *src = input.bytes.data() + input.at[i];
            if (c.host) { std::memcpy(reinterpret_cast<void *>(c.addr), src, c.size); continue; }
            if (pristine) CHECK(cuMemcpyDtoD(c.addr, pristine + off, c.size));
            else CHECK(cuMemcpyHtoD(c.addr, src, c.size));
            off += c.size;
        }
        for (size_t i = 0; i < N_GLOBAL; i++)
            if (GLOBAL[i].size) CHECK(cuMemcpyHtoD(globals.where[i], globals.values.data() + GLOBAL[i].offset, GLOBAL[i].size));
        CHECK(cuCtxSynchronize());
    }
};

struct Launcher {
    CUfunction fn;
    CUstream stream;
    std::vector<unsigned char> params{PARAMS, PARAMS + PARAM_BYTES};
    std::vector<void *> args;

    Launcher(CUfunction f, CUstream s) : fn(f), stream(s) {
        for (size_t i = 0; i < N_SLOT; i++) args.push_back(params.data() + SLOT[i].offset);
        if (SHARED_MEM > 48 * 1024)
            CHECK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, SHARED_MEM));
    }
    void operator()() {
        void **kp = args.empty() ? nullptr : args.data();
        if (COOPERATIVE)
            CHECK(cuLaunchCooperativeKernel(fn, GRID[0], GRID[1], GRID[2], BLOCK[0], BLOCK[1], BLOCK[2], SHARED_MEM, stream, kp));
        else
            CHECK(cuLaunchKernel(fn, GRID[0], GRID[1], GRID[2], BLOCK[0], BLOCK[1], BLOCK[2], SHARED_MEM, stream, kp, nullptr));
    }
};

// Float bits mapped to integers ordered like the floats, so a ULP distance is a difference.
long long ordered(uint64_t bits, unsigned width) {
    uint64_t sign = 1ull << (width - 1);
    long long mag = static_cast<long long>(bits & (sign - 1));
    return (bits & sign) ? -mag : mag;
}

// With a tolerance (TOL_BYTES 4: f32, 8: f64), replay's rules for an element whose bits differ:
// NaN against NaN passes, NaN against a number fails, equal values (+0, -0) pass, an infinity
// against anything else fails, and two numbers pass when |a - b| <= atol + rtol * |b| (b: this
// run's value) or when they are at most ulp ULPs apart.
bool close_enough(const unsigned char *want, const unsigned char *got) {
    uint64_t a = 0, b = 0;
    std::memcpy(&a, want, TOL_BYTES);
    std::memcpy(&b, got, TOL_BYTES);
    double x, y;
    if (TOL_BYTES == 4) {
        float f, g;
        std::memcpy(&f, want, 4);
        std::memcpy(&g, got, 4);
        x = f, y = g;
    } else {
        std::memcpy(&x, want, 8);
        std::memcpy(&y, got, 8);
    }
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    if (x == y) return true;
    if (std::isinf(x) || std::isinf(y)) return false;
    double diff = std::min(std::fabs(x - y), DBL_MAX);
    long long oa = ordered(a, TOL_BYTES * 8), ob = ordered(b, TOL_BYTES * 8);
    uint64_t ulp = oa > ob ? uint64_t(oa) - uint64_t(ob) : uint64_t(ob) - uint64_t(oa);
    return diff <= TOL_ATOL + TOL_RTOL * std::fabs(y) || ulp <= TOL_ULP;
}

// Every recorded byte against the recorded output (elements of TOL_BYTES from each segment's
// start within the tolerance, the rest byte for byte); prints what differs. True when all pass.
bool verify(const Snapshot &expected) {
    uint64_t differing = 0, first = 0, total = 0, within = 0;
    std::vector<unsigned char> got;
    for (size_t i = 0; i < N_COPY; i++) {
        const Copy &c = COPY[i];
        got.resize(c.size);
        if (c.host) std::memcpy(got.data(), reinterpret_cast<void *>(c.addr), c.size);
        else if (c.size) CHECK(cuMemcpyDtoH(got.data(), c.addr, c.size));
        const unsigned char *want = expected.bytes.data() + expected.at[i];
        uint64_t k = 0;
        for (; TOL_BYTES && k + TOL_BYTES <= c.size; k += TOL_BYTES) {
            if (std::memcmp(got.data() + k, want + k, TOL_BYTES) == 0) continue;
            if (close_enough(want + k, got.data() + k)) { within++; continue; }
            if (differing == 0) first = c.addr + k;
            differing += TOL_BYTES;
        }
        for (; k < c.size; k++)
            if (got[k] != want[k] && differing++ == 0) first = c.addr + k;
        total += c.size;
    }
    const char *how = TOL_BYTES ? " beyond the tolerance" : "";
    if (differing == 0) {
        std::printf("verified: %llu bytes in %zu segments equal the recorded output", static_cast<unsigned long long>(total), N_COPY);
        if (TOL_BYTES) std::printf(" (%llu elements within the tolerance)", static_cast<unsigned long long>(within));
        std::printf("\n");
        return true;
    }
    std::printf("FAILED: %llu of %llu bytes differ from the recorded output%s (the first at %s)\n",
                static_cast<unsigned long long>(differing), static_cast<unsigned long long>(total), how, hex(first).c_str());
    return false;
}

// `n` timed launches, each from the restored input: kernel times in microseconds, and the SM
// clock in MHz that the probe after each measured (none where it measured no time).
struct Timings { std::vector<double> us, mhz; };

Timings time_launches(unsigned n, const Restorer &restore, Launcher &launch, CUstream stream) {
    CUmodule bm;
    CUfunction block_fn, clock_fn;
    CHECK(cuModuleLoadData(&bm, TIMING_PTX));
    CHECK(cuModuleGetFunction(&block_fn, bm, "rr_block"));
    CHECK(cuModuleGetFunction(&clock_fn, bm, "rr_clock"));
    volatile unsigned *flag = nullptr;
    CHECK(cuMemHostAlloc((void **)&flag, sizeof *flag, CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr flag_dev, clock_out;
    CHECK(cuMemHostGetDevicePointer(&flag_dev, (void *)flag, 0));
    CHECK(cuMemAlloc(&clock_out, 16));
    uint64_t timeout_ns = 1000000000ull;
    void *block_args[] = {&flag_dev, &timeout_ns};
    void *clock_args[] = {&clock_out};
    CUevent start, stop;
    CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    Timings t;
    for (unsigned r = 0; r < n; r++) {
        restore();
        *flag = 0;
        CHECK(cuLaunchKernel(block_fn, 1, 1, 1, 1, 1, 1, 0, stream, block_args, nullptr));
        CHECK(cuEventRecord(start, stream));
        launch();
        CHECK(cuEventRecord(stop, stream));
        CHECK(cuLaunchKernel(clock_fn, 1, 1, 1, 1, 1, 1, 0, stream, clock_args, nullptr));
        *flag = 1;
        CHECK(cuStreamSynchronize(stream));
        float ms = 0;
        CHECK(cuEventElapsedTime(&ms, start, stop));
        t.us.push_back(ms * 1000.0);
        uint64_t probe[2] = {0, 0};
        CHECK(cuMemcpyDtoH(probe, clock_out, sizeof probe));
        if (probe[1]) t.mhz.push_back(double(probe[0]) * 1e3 / double(probe[1]));
    }
    return t;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<bool> device_held = hold(RESERVE, N_RESERVE);
    std::vector<bool> host_held = hold(HOST, N_HOST);
    fresh_layout_if_taken(device_held, host_held, argv);
    Options o = parse(argc, argv);
    for (size_t i = 0; i < N_RESERVE; i++)
        if (device_held[i]) munmap(reinterpret_cast<void *>(RESERVE[i].addr), RESERVE[i].size);
    CHECK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuDeviceGet(&dev, o.device));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    char gpu[256] = "?";
    cuDeviceGetName(gpu, sizeof gpu, dev);
    std::printf("kernel %s on %s (device %d), image %s\n", KERNEL_NAME, gpu, o.device, o.image.c_str());
    reserve_and_map(dev);
    map_host(host_held);
    std::vector<unsigned char> image = read_file(o.image);
    CUmodule mod;
    CUfunction fn;
    check(cuModuleLoadData(&mod, image.data()), ("loading the image " + o.image).c_str());
    check(cuModuleGetFunction(&fn, mod, KERNEL_NAME), "cuModuleGetFunction (the recorded kernel's name)");
    Globals globals = bind_globals(o, mod);
    Snapshot input = load(o, false), expected = load(o, true);
    CUstream stream;
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    Restorer restore(input, globals);
    Launcher launch(fn, stream);
    restore();
    launch();
    CHECK(cuStreamSynchronize(stream));
    bool ok = verify(expected);
    if (o.repetitions > 0) {
        Timings t = time_launches(o.repetitions, restore, launch, stream);
        double fastest = *std::min_element(t.us.begin(), t.us.end());
        std::printf("kernel time over %zu repetitions: min %.3f us, median %.3f us", t.us.size(), fastest, median_of(t.us));
        if (!t.mhz.empty()) std::printf(" (SM clock median %.0f MHz)", median_of(t.mhz));
        std::printf("\n");
    }
    return ok ? 0 : 1;
}
