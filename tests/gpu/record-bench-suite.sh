# The recorder's benchmark (tests/gpu/run-part.sh record-bench; suite-lib.sh defines
# ok/bad/skip/figure/$W/$RR/$LOG). Figures, each against a peer measured in the same run:
#   - the recorder loaded and recording nothing (no kernel matches): 200 000 launches of a ~3 us
#     kernel (launch-bound, goal <= 1.05 x plain) and 50 000 of a ~20 us kernel (GPU-bound, goal
#     <= 1.02 x plain); three rounds, plain and recorded interleaved; the figure is the best
#     recorded run over the best plain run, its interval the range of the three paired ratios
#     (a noisy figure fails only when the whole interval misses); the suite's storm part
#     measures the same with 31 rounds and a bootstrap interval;
#   - a PyTorch script (start-up included), loaded and recording nothing (no goal);
#   - recording 4 GiB of fresh, distinct data: snapshot throughput against min(pinned D2H,
#     buffered disk write), goal >= 0.8;
#   - a PyTorch recording's bytes on disk against its instances' snapshot sizes (no goal).
# Also $OUTDIR/bench-record.txt.
SAMPLES=tests/gpu/samples
echo "== recorder: benchmark" | tee -a "$LOG"
build_sample bench_record
HAVE_TORCH=0; have torch && HAVE_TORCH=1
[ "$HAVE_TORCH" = 1 ] || skip "record-bench: the PyTorch figures" "$(what_missing torch)"
py "$RR" "$W/samples/bench_record" "$W" "$SAMPLES/torch_ops.py" "$HAVE_TORCH" <<'PY' | tee -a "$LOG" "$OUTDIR/bench-record.txt"
import json, os, re, shutil, statistics, subprocess, sys, time
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check, note
rr, bench, work, torch_script, have_torch = sys.argv[1:6]
have_torch = have_torch == "1"


class Failed(Exception):
    pass


def seconds(out):
    m = re.search(r"seconds=([0-9.]+)", out)
    if not m:
        raise Failed("no seconds= in the program's output: %r" % out[-200:])
    return float(m.group(1))


def run(cmd):
    note(cmd)
    t = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise Failed("%s timed out" % " ".join(cmd[:6]))
    w = time.perf_counter() - t
    if out.returncode != 0:
        raise Failed("%s failed (exit %d): %s" % (" ".join(cmd[:6]), out.returncode, out.stderr[-500:]))
    return out.stdout, w


def recorded(args, name):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    return [rr, "record", "--dir", d] + args + ["--"]


def snapshot_bytes(d):
    """Input + output snapshot bytes of a recording's instances, and their count."""
    tot = n = 0
    for f in os.listdir(d):
        if f.endswith(".json"):
            j = json.load(open(os.path.join(d, f)))
            if "Segments" not in j:
                continue
            n += 1
            tot += sum(s["Size"] for s in j["Segments"]) * (1 + all("Output" in s for s in j["Segments"]))
    return tot, n


# Loaded, recording nothing (no kernel matches): three interleaved rounds each.
for label, words, n, goal in (("launch-bound: 200000 launches of a ~3 us kernel", "4096", "200000", 1.05),
                              ("GPU-bound: 50000 launches of a ~20 us kernel", "8388608", "50000", 1.02)):
    name = "recorder loaded, recording nothing, %s (best of 3 against best of 3)" % label
    try:
        plain, rec = [], []
        for _ in range(3):
            plain.append(seconds(run([bench, "storm", n, words])[0]))
            rec.append(seconds(run(recorded(["--kernels", "^nothing$"], "rec-storm") + [bench, "storm", n, words])[0]))
    except Failed as e:
        figure("record", name, None, "<=", goal, unit="x", detail=str(e))
        continue
    paired = sorted(r / p for r, p in zip(rec, plain))
    ratio = min(rec) / min(plain)
    print("recorder loaded, recording nothing, %s launches %s: %.3f s vs %.3f s without: ratio %.3f (goal <= %s); paired ratios %s" % (
        n, label, min(rec), min(plain), ratio, goal, ", ".join("%.3f" % x for x in paired)))
    figure("record", name, ratio, "<=", goal, min(paired + [ratio]), max(paired + [ratio]), unit="x",
           interval="range of the 3 paired ratios", measured=min(rec), measured_unit="s",
           limit="plain program", limit_value=min(plain), limit_unit="s")
if have_torch:
    try:
        _, tp = run(["python3", torch_script])
        _, tr = run(recorded(["--kernels", "^nothing$"], "rec-torch0") + ["python3", torch_script])
        print("PyTorch script (start-up included), recorder loaded recording nothing: %.2f s vs %.2f s: ratio %.3f" % (tr, tp, tr / tp))
        figure("record", "a PyTorch script (start-up included), recorder loaded, recording nothing", tr / tp, unit="x",
               measured=tr, measured_unit="s", limit="plain", limit_value=tp, limit_unit="s")
    except Failed as e:
        figure("record", "a PyTorch script (start-up included), recorder loaded, recording nothing", None, unit="x", detail=str(e))


# Recording 4 GiB of fresh, distinct data: one kernel reads 8 x 512 MiB and writes 1 MiB.
def dd_rate(extra):
    f = os.path.join(work, "ddtest")
    cmd = ["dd", "if=/dev/zero", "of=" + f, "bs=64M", "count=64"] + extra
    note(cmd)
    err = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stderr
    try:
        os.remove(f)
    except OSError:
        pass
    m = re.search(r"([0-9.]+) ([kMGT]?)B/s", err)
    if not m:
        raise Failed("dd printed no rate: %r" % err[-200:])
    return float(m.group(1)) * {"": 1e-9, "k": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3}[m.group(2)]


name = "recording 4 GiB of fresh data: snapshot throughput against min(pinned D2H, buffered disk write)"
try:
    out, _ = run([bench, "d2h", "4"])
    m = re.search(r"gbps=([0-9.]+)", out)
    if not m:
        raise Failed("bench_record d2h printed no gbps=: %r" % out[-200:])
    d2h = float(m.group(1))
    disk, disk_sync = dd_rate([]), dd_rate(["conv=fdatasync"])
    _, wp = run([bench, "big", "4"])
    _, wr = run(recorded([], "rec-big") + [bench, "big", "4"])
    d = os.path.join(work, "rec-big")
    snap, _ = snapshot_bytes(d)
    ondisk = int(subprocess.check_output(["du", "-sB1", os.path.join(d, "blobs")]).split()[0])
    extra = wr - wp
    thr = snap / extra / 1e9
    limit = min(d2h, disk)
    print("recording 4 GiB of fresh data: input + output snapshots %.2f GiB, %.2f GiB written, %.2f s more than the plain run" % (snap / 2**30, ondisk / 2**30, extra))
    print("recording throughput %.2f GB/s of snapshot; pinned D2H %.1f GB/s; disk write %.2f GB/s (buffered), %.2f GB/s (fdatasync)" % (thr, d2h, disk, disk_sync))
    print("throughput / min(pinned D2H, buffered disk write) = %.2f (goal >= 0.8)" % (thr / limit))
    figure("record", name, thr / limit, ">=", 0.8, unit="x", measured=thr, measured_unit="GB/s",
           limit="pinned D2H" if d2h <= disk else "buffered disk write", limit_value=limit, limit_unit="GB/s",
           detail="%.2f GiB of snapshots, %.2f GiB written, %.2f s more than plain" % (snap / 2**30, ondisk / 2**30, extra))
    figure("record", "pinned device-to-host copy", d2h, unit="GB/s")
    figure("record", "disk write, buffered (dd, 4 GiB)", disk, unit="GB/s")
    figure("record", "disk write, fdatasync (dd, 4 GiB)", disk_sync, unit="GB/s")
    shutil.rmtree(d, ignore_errors=True)
except (Failed, OSError, ValueError, ZeroDivisionError, subprocess.SubprocessError) as e:
    figure("record", name, None, ">=", 0.8, unit="x", detail=str(e))

# PyTorch: bytes on disk against the instances' snapshot sizes.
if have_torch:
    try:
        _, _ = run(recorded([], "rec-torch") + ["python3", torch_script])
        d = os.path.join(work, "rec-torch")
        tot, n = snapshot_bytes(d)
        size = int(subprocess.check_output(["du", "-sB1", d]).split()[0])
        print("PyTorch script: %d instances, snapshots total %.1f MiB, record directory on disk %.1f MiB: ratio %.3f" % (n, tot / 2**20, size / 2**20, size / max(tot, 1)))
        check("record-bench: the PyTorch recording holds instances (%d)" % n, n >= 1)
        figure("record", "a PyTorch recording: bytes on disk against its snapshots' bytes", size / max(tot, 1), unit="x",
               measured=size / 2**20, measured_unit="MiB", limit="snapshots", limit_value=tot / 2**20, limit_unit="MiB",
               detail="%d instances" % n)
    except (Failed, OSError, ValueError, subprocess.SubprocessError) as e:
        figure("record", "a PyTorch recording: bytes on disk against its snapshots' bytes", None, unit="x", detail=str(e))
PY
