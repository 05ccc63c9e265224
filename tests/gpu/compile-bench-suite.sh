# Compile-time tuning benchmark (tests/gpu/run-part.sh compile-bench): tests/gpu/bench-compile.sh,
# 64 variants of ab_kernel.cu (TILE x SLOW) swept from an empty NVRTC cache on 1 compiler thread
# and on every core, again from the cache, and with 300 samples per configuration (the GPU
# slower than the compiler). Figures: variants compiled per second (every core against one),
# and the GPU's idle fraction waiting for compilations when compiling keeps up (goal < 10 %).
echo "== compile-time tuning benchmark (tests/gpu/bench-compile.sh)" | tee -a "$LOG"
note_cmd bash tests/gpu/bench-compile.sh "$RR"
BENCH_COMPILE_JSON="$W/compile.jsonl" timeout 300 bash tests/gpu/bench-compile.sh "$RR" >"$W/compile.txt" 2>&1; rc=$?
cat "$W/compile.txt" | tee -a "$OUTDIR/compile-bench.txt" >>"$LOG"
py "$W/compile.jsonl" "$rc" <<'PY' | tee -a "$LOG"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
try:
    rows = {r["label"]: r for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip())}
except (OSError, ValueError):
    rows = {}
check("bench-compile.sh: four sweeps measured (exit %s)" % sys.argv[2], len(rows) == 4 and sys.argv[2] == "0",
      "sweeps: %s" % sorted(rows))
one, every, cached, slow = (rows.get(k) for k in ("cold, 1 thread", "cold, all cores", "cached, all cores", "cold, 300 samples"))
if one and every:
    figure("ab", "NVRTC variants compiled per second, every core (%d) against one thread" % every["threads"],
           every["per_s"] / one["per_s"], unit="x", measured=every["per_s"], measured_unit="variants/s",
           limit="one thread", limit_value=one["per_s"], limit_unit="variants/s")
if cached:
    check("bench-compile: the second sweep takes every variant from the cache (%s of %s)" % (cached["cached"], cached["variants"]),
          cached["compiled"] == 0 and cached["cached"] == cached["variants"])
name = "GPU idle waiting for compilations, 64 variants at 300 samples a configuration (compiling keeps up)"
figure("ab", name, 100 * slow["gpu_idle_fraction"] if slow else None, "<", 10, unit="%",
       detail=("%.1f configurations/s over %d" % (slow["configs_per_s"], slow["configs"])) if slow else "no sweep")
if every:
    figure("ab", "GPU idle waiting for compilations at 10 samples a configuration (the GPU faster than the compiler)",
           100 * every["gpu_idle_fraction"], unit="%", detail="%.1f configurations/s" % every["configs_per_s"])
PY
