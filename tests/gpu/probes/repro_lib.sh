# Shared by the repro_*.sh probes (sourced): with RR (rr-tui), D (the output folder), KERNELS
# (default SoftMax) and REPS set, `probe_record` records the first instance of KERNELS that
# tests/gpu/samples/torch_ops.py launches into $D/rec (its descriptor in $J) and writes its
# reproducer to $D/r; `summary [FLAGS]` prints replay's median kernel time in µs and `median
# PROGRAM [ARGS]` a reproducer's, each over $REPS repetitions.
KERNELS=${KERNELS:-SoftMax}
probe_record() {
  mkdir -p "$D"
  "$RR" record --dir "$D/rec" --kernels "$KERNELS" -- python3 tests/gpu/samples/torch_ops.py >"$D/record.txt" 2>&1 || { tail "$D/record.txt"; exit 1; }
  J=$(ls "$D"/rec/*.json | grep -v report | head -n 1)
  "$RR" repro "$J" --out "$D/r" --force >/dev/null || exit 1
}
summary() {
  "$RR" replay "$J" --json --repetitions "$REPS" "$@" 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "summary":
        print("%.3f" % (e["kernel_ns"]["median"] / 1e3))'
}
median() { "$@" --repetitions "$REPS" 2>&1 | grep -oE 'median [0-9.]+ us' | grep -oE '[0-9.]+'; }
