#!/usr/bin/env python3
"""A standalone reproducer of one recorded kernel launch, written by rr-tui repro (README.txt).

It needs only the CUDA driver and NVIDIA's cuda-python bindings (pip install cuda-python): it
reserves the recorded device addresses, loads the recorded image, sets the module globals,
restores the recorded input, launches with the recorded geometry and parameter bytes, compares
every recorded byte with the recorded output, and times repetitions with CUDA events.

Usage: python3 repro.py [--image FILE] [--data DIR] [--repetitions N] [--device N]
Exit status: 0 verified, 1 the result differs from the recorded output, 2 trouble.
"""
import argparse
import ctypes
import math
import os
import struct
import sys

# NVIDIA's bindings, imported once the arguments have parsed (`--help` needs none): see load_cuda.
cu = None
ELAPSED = None

# @@RECORD@@

# The timing kernels of rr-tui replay, as it loads them (after nvbench): rr_block spins until a
# host-mapped flag is set (or a second passes), holding the stream while the start event, the
# kernel and the stop event are queued, so the timed interval holds no launch latency; rr_clock,
# queued after the stop event, spins 20 us on one SM and measures the SM clock. Replay's loop runs
# both, and the kernel's time depends on it (a one-thread spin after each launch changes the next
# launch's time by a few per cent on an H200), so this program runs both too.
# @@TIMING_PTX@@

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
PROT_NONE, PROT_RW = 0, 3
MAP_PRIVATE, MAP_ANONYMOUS, MAP_FIXED, MAP_NORESERVE, MAP_FIXED_NOREPLACE = 0x02, 0x20, 0x10, 0x4000, 0x100000


def die(what):
    print(f"repro: {what}", file=sys.stderr)
    sys.exit(2)


def load_cuda():
    """Import cuda-python's driver module; without it, one line and exit status 2 (the program
    could not run: no verdict), not a traceback."""
    global cu, ELAPSED
    try:
        try:
            from cuda.bindings import driver
        except ImportError:  # cuda-python before 12.6 spelled it this way
            from cuda import cuda as driver
    except ImportError as e:
        die(f"cuda-python is not installed (pip install cuda-python): {e}")
    except Exception as e:  # the bindings load libcuda as they are imported, in some versions
        die(f"cannot load the CUDA driver through cuda-python ({type(e).__name__}: {e})")
    cu = driver
    # CUDA 12.8 added cuEventElapsedTime_v2 (what cuda.h's cuEventElapsedTime means from CUDA 13).
    ELAPSED = getattr(cu, "cuEventElapsedTime_v2", None) or cu.cuEventElapsedTime


def init_cuda():
    """cuInit; a driver that cannot be loaded is one line and exit status 2, as in load_cuda."""
    try:
        result = cu.cuInit(0)
    except Exception as e:  # DynamicLibNotFoundError and the like: no libcuda on this machine
        die(f"no CUDA driver found ({type(e).__name__}: {e}): the reproducer needs an NVIDIA GPU and its driver")
    check(result, "cuInit")


def check(result, call):
    """cuda-python returns (error, values...): the values when the call succeeded."""
    err, rest = result[0], result[1:]
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        die(f"{call} failed: {name.decode() if isinstance(name, bytes) else name}")
    return rest[0] if len(rest) == 1 else rest


def hold(ranges):
    """PROT_NONE mappings over the recorded ranges, so nothing else is placed there."""
    held = []
    for addr, size in ranges:
        p = LIBC.mmap(addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0)
        held.append(p == addr)
        if p not in (None, addr, ctypes.c_void_p(-1).value):
            LIBC.munmap(p, size)
    return held


def start_afresh(why):
    """Start again as a fresh process, whose address layout differs (ASLR), at most 3 times, as
    rr-tui replay does; returns when those are spent."""
    attempt = int(os.environ.get("RR_REPRO_ATTEMPT", "0") or 0)
    if attempt >= 3:
        return
    os.environ["RR_REPRO_ATTEMPT"] = str(attempt + 1)
    print(f"repro: {why}; starting afresh ({attempt + 1} of 3)", file=sys.stderr)
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable] + sys.argv)


def fresh_layout_if_taken(held):
    """A recorded range this process already uses (the interpreter's own mappings) cannot be
    had: a fresh process may have it free. After 3, go on: the driver may still honour it."""
    if not all(held):
        start_afresh("a recorded range is in use in this process")


def reserve_and_map(dev):
    """Reserve every range at its recorded address and back the recorded bytes, as replay does."""
    for addr, size in RESERVE:
        got = check(cu.cuMemAddressReserve(size, 0, addr, 0), "cuMemAddressReserve")
        if int(got) != addr:
            # The driver's own mappings can land there too: another layout may leave it free.
            start_afresh(f"the driver offered {int(got):#x} for the recorded address {addr:#x}")
            die(f"could not reserve the recorded address {addr:#x}: the driver offered {int(got):#x}")
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = dev
    access = cu.CUmemAccessDesc()
    access.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    access.location.id = dev
    access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    for addr, size in MAP:
        handle = check(cu.cuMemCreate(size, prop, 0), "cuMemCreate")
        check(cu.cuMemMap(addr, size, 0, handle, 0), "cuMemMap")
        check(cu.cuMemSetAccess(addr, size, [access], 1), "cuMemSetAccess")


def map_host(held):
    """Page-locked host memory at its recorded address, registered so the device reaches it there."""
    flags = cu.CU_MEMHOSTREGISTER_PORTABLE | cu.CU_MEMHOSTREGISTER_DEVICEMAP
    for (addr, size), ours in zip(HOST, held):
        fixed = MAP_FIXED if ours else MAP_FIXED_NOREPLACE
        if LIBC.mmap(addr, size, PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0) != addr:
            die(f"could not map host memory at the recorded address {addr:#x}")
        check(cu.cuMemHostRegister(addr, size, flags), "cuMemHostRegister")
        if int(check(cu.cuMemHostGetDevicePointer(addr, 0), "cuMemHostGetDevicePointer")) != addr:
            die(f"host memory at {addr:#x} is not reached there by the device")


def read_at(path, offset, size):
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(size)
    except OSError as e:
        die(f"{path}: {e.strerror} (run where README.txt says, or pass --data DIR)")
    if len(data) != size:
        die(f"{path}: shorter than the record says")
    return bytearray(data)


def address(buf):
    return ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf)) if len(buf) else 0


def load(data, output):
    """Each segment's recorded bytes, before the kernel or (output) after it."""
    out = []
    for _addr, size, _host, in_file, in_off, out_file, out_off in COPY:
        name, offset = (out_file, out_off) if output else (in_file, in_off)
        out.append(read_at(os.path.join(data, name), offset, size))
    return out


def bind_globals(data, module):
    values = read_at(os.path.join(data, "globals.bin"), 0, max((o + s for _, s, o in GLOBAL), default=0))
    where = []
    for name, size, offset in GLOBAL:
        ptr, got = check(cu.cuModuleGetGlobal(module, name), f"cuModuleGetGlobal {name!r}")
        if got != size:
            die(f"global {name!r} is {got} bytes in the image but was recorded with {size}")
        where.append((ptr, values[offset:offset + size]))
    return where


def restore(inputs, globals_):
    """Put the recorded input and globals back (untimed, before every launch)."""
    for (addr, size, host, *_), data in zip(COPY, inputs):
        if host:
            ctypes.memmove(addr, address(data), size)
        elif size:
            check(cu.cuMemcpyHtoD(addr, address(data), size), "cuMemcpyHtoD")
    for ptr, value in globals_:
        if value:
            check(cu.cuMemcpyHtoD(ptr, address(value), len(value)), "cuMemcpyHtoD (global)")
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")


def ordered(bits, width):
    """Float bits as an integer ordered like the floats, so a ULP distance is a difference."""
    sign = 1 << (width - 1)
    mag = bits & (sign - 1)
    return -mag if bits & sign else mag


def close_enough(want, got):
    """replay's rules for an element whose bits differ (see repro.cpp's close_enough)."""
    fmt, ifmt = ("<f", "<I") if TOL_BYTES == 4 else ("<d", "<Q")
    (x,), (y,) = struct.unpack(fmt, want), struct.unpack(fmt, got)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if x == y:
        return True
    if math.isinf(x) or math.isinf(y):
        return False
    (a,), (b,) = struct.unpack(ifmt, want), struct.unpack(ifmt, got)
    ulp = abs(ordered(a, TOL_BYTES * 8) - ordered(b, TOL_BYTES * 8))
    return min(abs(x - y), sys.float_info.max) <= TOL_ATOL + TOL_RTOL * abs(y) or ulp <= TOL_ULP


def compare(addr, want, got):
    """(differing bytes, first differing address or None, elements within the tolerance)."""
    differing, first, within, k = 0, None, 0, 0
    while TOL_BYTES and k + TOL_BYTES <= len(want):
        w, g = want[k:k + TOL_BYTES], got[k:k + TOL_BYTES]
        if w != g:
            if close_enough(bytes(w), bytes(g)):
                within += 1
            else:
                first = addr + k if first is None else first
                differing += TOL_BYTES
        k += TOL_BYTES
    for j in range(k, len(want)):
        if want[j] != got[j]:
            first = addr + j if first is None else first
            differing += 1
    return differing, first, within


def verify(expected):
    """Every recorded byte against the recorded output (with TOL_BYTES: elements within the
    tolerance, the rest byte for byte). True when all pass."""
    differing, first, total, within = 0, None, 0, 0
    for (addr, size, host, *_), want in zip(COPY, expected):
        got = bytearray(size)
        if host:
            ctypes.memmove(address(got), addr, size)
        elif size:
            check(cu.cuMemcpyDtoH(address(got), addr, size), "cuMemcpyDtoH")
        if got != want:
            d, f, w = compare(addr, want, got)
            first = f if first is None else first
            differing, within = differing + d, within + w
        total += size
    how = " beyond the tolerance" if TOL_BYTES else ""
    if differing == 0:
        extra = f" ({within} elements within the tolerance)" if TOL_BYTES else ""
        print(f"verified: {total} bytes in {len(COPY)} segments equal the recorded output{extra}")
        return True
    print(f"FAILED: {differing} of {total} bytes differ from the recorded output{how} (the first at {first:#x})")
    return False


class Launcher:
    def __init__(self, fn, stream):
        self.fn, self.stream = fn, stream
        self.params = (ctypes.c_char * max(len(PARAMS), 1)).from_buffer_copy(PARAMS or b"\0")
        base = ctypes.addressof(self.params)
        self.args = (ctypes.c_void_p * max(len(SLOT), 1))(*[base + off for off, _ in SLOT])
        if SHARED_MEM > 48 * 1024:
            attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            check(cu.cuFuncSetAttribute(fn, attr, SHARED_MEM), "cuFuncSetAttribute")

    def __call__(self):
        kp = ctypes.addressof(self.args) if SLOT else 0
        if COOPERATIVE:
            check(cu.cuLaunchCooperativeKernel(self.fn, *GRID, *BLOCK, SHARED_MEM, self.stream, kp), "cuLaunchCooperativeKernel")
        else:
            check(cu.cuLaunchKernel(self.fn, *GRID, *BLOCK, SHARED_MEM, self.stream, kp, 0), "cuLaunchKernel")


def time_launches(n, again, launch, stream):
    """`n` timed launches, each from the restored input: kernel times in microseconds (sorted),
    and the SM clock in MHz the probe after each measured (none where it measured no time)."""
    module = check(cu.cuModuleLoadData(TIMING_PTX), "cuModuleLoadData (timing kernels)")
    block_fn = check(cu.cuModuleGetFunction(module, b"rr_block"), "cuModuleGetFunction")
    clock_fn = check(cu.cuModuleGetFunction(module, b"rr_clock"), "cuModuleGetFunction")
    flag_host = check(cu.cuMemHostAlloc(4, cu.CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc")
    flag = ctypes.c_uint32.from_address(int(flag_host))
    flag_dev = int(check(cu.cuMemHostGetDevicePointer(flag_host, 0), "cuMemHostGetDevicePointer"))
    clock_out = int(check(cu.cuMemAlloc(16), "cuMemAlloc"))
    words = (ctypes.c_uint64 * 3)(flag_dev, 1_000_000_000, clock_out)
    block_args = (ctypes.c_void_p * 2)(ctypes.addressof(words), ctypes.addressof(words) + 8)
    clock_args = (ctypes.c_void_p * 1)(ctypes.addressof(words) + 16)
    probe = (ctypes.c_uint64 * 2)()
    start = check(cu.cuEventCreate(0), "cuEventCreate")
    stop = check(cu.cuEventCreate(0), "cuEventCreate")
    times, mhz = [], []
    for _ in range(n):
        again()
        flag.value = 0
        check(cu.cuLaunchKernel(block_fn, 1, 1, 1, 1, 1, 1, 0, stream, ctypes.addressof(block_args), 0), "cuLaunchKernel")
        check(cu.cuEventRecord(start, stream), "cuEventRecord")
        launch()
        check(cu.cuEventRecord(stop, stream), "cuEventRecord")
        check(cu.cuLaunchKernel(clock_fn, 1, 1, 1, 1, 1, 1, 0, stream, ctypes.addressof(clock_args), 0), "cuLaunchKernel")
        flag.value = 1
        check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize")
        times.append(check(ELAPSED(start, stop), "cuEventElapsedTime") * 1000.0)
        check(cu.cuMemcpyDtoH(ctypes.addressof(probe), clock_out, 16), "cuMemcpyDtoH")
        if probe[1]:
            mhz.append(probe[0] * 1e3 / probe[1])
    return sorted(times), sorted(mhz)


def median_of(v):
    """The median of a sorted, non-empty list."""
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def count(text):
    """--repetitions: a whole number from 0."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 0")
    return n


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(
        description="Replay one recorded kernel launch and verify it.",
        epilog="Exit status: 0 verified, 1 the result differs from the recorded output, 2 trouble "
        "(bad arguments, no cuda-python, no CUDA driver, a driver error).",
    )
    ap.add_argument("--image", help="device image to load instead of the recorded one")
    ap.add_argument("--data", default=os.path.join(here, "data"), help="the folder of the recorded data")
    ap.add_argument("--repetitions", type=count, default=DEFAULT_REPETITIONS)
    ap.add_argument("--device", type=int, default=RECORDED_DEVICE)
    o = ap.parse_args()
    image_path = o.image or os.path.join(o.data, IMAGE_FILE)
    # The recorded ranges are held before the bindings are imported (some load the driver then),
    # and the device ones given back right before cuInit.
    device_held, host_held = hold(RESERVE), hold(HOST)
    fresh_layout_if_taken(device_held + host_held)
    load_cuda()
    for (addr, size), ours in zip(RESERVE, device_held):
        if ours:
            LIBC.munmap(addr, size)
    init_cuda()
    dev = check(cu.cuDeviceGet(o.device), "cuDeviceGet")
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    gpu = check(cu.cuDeviceGetName(256, dev), "cuDeviceGetName").split(b"\0")[0].decode(errors="replace")
    print(f"kernel {KERNEL_NAME.decode(errors='replace')} on {gpu} (device {o.device}), image {image_path}")
    reserve_and_map(dev)
    map_host(host_held)
    try:
        with open(image_path, "rb") as f:
            image = f.read() + b"\0"  # PTX is text: the driver wants it NUL-terminated
    except OSError as e:
        die(f"{image_path}: {e.strerror}")
    module = check(cu.cuModuleLoadData(image), f"loading the image {image_path}")
    fn = check(cu.cuModuleGetFunction(module, KERNEL_NAME), "cuModuleGetFunction (the recorded kernel's name)")
    globals_ = bind_globals(o.data, module)
    inputs, expected = load(o.data, False), load(o.data, True)
    stream = check(cu.cuStreamCreate(int(cu.CUstream_flags.CU_STREAM_NON_BLOCKING)), "cuStreamCreate")
    launch = Launcher(fn, stream)
    restore(inputs, globals_)
    launch()
    check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize")
    ok = verify(expected)
    if o.repetitions > 0:
        us, mhz = time_launches(o.repetitions, lambda: restore(inputs, globals_), launch, stream)
        clock = f" (SM clock median {median_of(mhz):.0f} MHz)" if mhz else ""
        print(f"kernel time over {len(us)} repetitions: min {us[0]:.3f} us, median {median_of(us):.3f} us{clock}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
