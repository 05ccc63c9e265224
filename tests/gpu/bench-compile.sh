#!/usr/bin/env bash
# Compile-time tuning benchmark (GPU machine): 64 variants of tests/gpu/samples/ab_kernel.cu
# (TILE × SLOW) swept from an empty NVRTC cache with 1 compiler thread and with every core, then
# again from the cache, and once with 300 samples per configuration (the GPU slower than the
# compiler). Prints variants compiled per second, the GPU's idle fraction waiting for
# compilations and configurations per second, all measured in this run.
#   bash tests/gpu/bench-compile.sh [rr-tui]
# BENCH_COMPILE_JSON=FILE appends a JSON line per sweep to FILE (the GPU suite's compile-bench
# part reads them).
set -u
RR=$(realpath "${1:-target/release/rr-tui}")
W=$(mktemp -d)
nvcc -O3 -arch=sm_90 -DSLOW=4 -o "$W/ab_prog" tests/gpu/samples/ab_kernel.cu || exit 1
"$RR" record --dir "$W/ab" -- "$W/ab_prog" >/dev/null 2>&1 || exit 1
J=$(ls "$W"/ab/*.json | head -n 1)
export XDG_CACHE_HOME=$W/cache
sweep() {  # LABEL THREADS [SAMPLES]
  local out=$W/${1// /_}.json
  RR_TUI_COMPILE_THREADS=$2 "$RR" tune "$J" --source tests/gpu/samples/ab_kernel.cu \
    -D TILE=1,2,4,8 -D SLOW=0..15 --grid "GRID_X*4/TILE" --samples "${3:-10}" --json-out "$out" >/dev/null 2>&1
  python3 - "$1" "$out" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[2])); c = r["compile"]
if os.environ.get("BENCH_COMPILE_JSON"):
    with open(os.environ["BENCH_COMPILE_JSON"], "a") as f:
        f.write(json.dumps({"label": sys.argv[1], "configs_per_s": r["configs_per_s"], "configs": len(r["trials"]),
                            **{k: c.get(k) for k in ("variants", "threads", "compiled", "seconds", "per_s", "cached",
                                                     "gpu_wait_s", "gpu_idle_fraction")}}) + "\n")
print(f"{sys.argv[1]:<22} {c['variants']} variants on {c['threads']:>2} thread(s): {c['compiled']} compiled in {c['seconds']:.2f} s = "
      f"{c['per_s']:.1f} variants/s, {c['cached']} from the cache; GPU waited {c['gpu_wait_s']:.2f} s = "
      f"{100*c['gpu_idle_fraction']:.1f} % idle; {r['configs_per_s']:.1f} configs/s over {len(r['trials'])} configs")
PY
}
nproc
rm -rf "$W/cache"; sweep "cold, 1 thread" 1
rm -rf "$W/cache"; sweep "cold, all cores" "$(nproc)"
sweep "cached, all cores" "$(nproc)"
# Longer measurements per configuration: compiling keeps up with the GPU.
rm -rf "$W/cache"; sweep "cold, 300 samples" "$(nproc)" 300
