#!/usr/bin/env bash
# The recorder's part of the GPU suite (tests/gpu/run-part.sh record; suite-lib.sh defines
# ok/bad/skip/expect/$W/$RR/$LOG). Every sample program runs plainly and under `rr-tui record`:
# the same checksum (the recorder changes nothing), then every recorded instance replays at its
# recorded addresses and verifies. The recorder's benchmark: record-bench-suite.sh.
SAMPLES=tests/gpu/samples
source tests/gpu/capture-lib.sh
echo "== recorder: sample programs" | tee -a "$LOG"
build_sample structs; build_sample smem_streams; build_sample pointers; build_sample pools_managed
build_sample cluster -lcuda; build_sample nvrtc -lcuda -lnvrtc
roundtrip() { # NAME TOLERANCE -- command...
  local name=$1 tol=$2; shift 3
  local plain rec dir="$W/rec-$name"
  note_cmd "$@"
  plain=$(timeout 300 "$@" 2>>"$LOG" | tail -n 1)
  note_cmd "$RR" record --dir "$dir" -- "$@"
  timeout 300 "$RR" record --dir "$dir" -- "$@" >"$W/rec-$name.out" 2>"$W/rec-$name.err"; local rc=$?
  rec=$(tail -n 1 "$W/rec-$name.out")
  cat "$W/rec-$name.err" >>"$LOG"
  if [ "$rc" -ne 0 ] || [ -z "$plain" ] || [ "$plain" != "$rec" ]; then
    bad "record $name: the program's result is unchanged" "exit $rc$(why_status "$rc" | sed 's/^/, /'), plain '$plain', recorded '$rec': $(tail -n 2 "$W/rec-$name.err" | tr '\n' ' ')"; return
  fi
  ok "record $name: the program's result is unchanged ($rec)"
  local n=0 failed=0
  for j in "$dir"/*.json; do
    [ -e "$j" ] || continue
    n=$((n+1))
    note_cmd "$RR" replay "$j" --verify $tol
    if ! timeout 300 "$RR" replay "$j" --verify $tol >"$W/replay.txt" 2>&1; then
      failed=$((failed+1)); cat "$W/replay.txt" >>"$LOG"
      echo "  replay failed: $(basename "$j"): $(grep -m1 -E 'Error|differ' "$W/replay.txt")" | tee -a "$LOG"
    fi
  done
  [ "$n" -gt 0 ] && [ "$failed" -eq 0 ] && ok "record $name: all $n instance(s) replay and verify" || bad "record $name: replay" "$failed of $n instance(s) failed"
  strict_check "$name" "$dir"
}
roundtrip structs "" -- "$W/samples/structs"
roundtrip smem_streams "" -- "$W/samples/smem_streams"
roundtrip pointers "" -- "$W/samples/pointers"
roundtrip pools_managed "" -- "$W/samples/pools_managed"
roundtrip cluster "" -- "$W/samples/cluster"
roundtrip nvrtc "" -- "$W/samples/nvrtc"
if have torch; then
  roundtrip torch "" -- python3 "$SAMPLES/torch_ops.py"
else
  skip "record torch (PyTorch + cuBLAS + Triton)" "$(what_missing torch)"
fi
expect "record: a directory with another recording is refused" 2 "already holds a recording" -- "$RR" record --dir "$W/rec-structs" -- "$W/samples/structs"
# Only the allocations parameter words point into (here: pointers inside a struct passed by
# value); a kernel that follows pointers stored in device memory needs the default `all`.
"$RR" record --dir "$W/rec-args" --snapshot args --kernels 'k_struct' -- "$W/samples/structs" >/dev/null 2>>"$LOG"
n=0; good=0
for j in "$W"/rec-args/*.json; do [ -e "$j" ] || continue; n=$((n+1)); "$RR" replay "$j" --verify >>"$LOG" 2>&1 && good=$((good+1)); done
full=$(python3 -c "import json,glob; print(sum(len(json.load(open(f))['Segments']) for f in glob.glob('$W/rec-structs/*.json')))")
args=$(python3 -c "import json,glob; print(sum(len(json.load(open(f))['Segments']) for f in glob.glob('$W/rec-args/*.json')))")
[ "$n" -ge 1 ] && [ "$good" -eq "$n" ] && [ "$args" -lt "$full" ] && ok "record --snapshot args --kernels: $n instance(s) with $args segment(s) (all: $full) replay and verify" || bad "record --snapshot args" "$good of $n verified; segments $args vs $full"
if have torch; then
  "$RR" report "$W/rec-torch" >"$W/torch-report.txt" 2>>"$LOG"
  n=$(grep -oE "Total Instances: [0-9]+" "$W/torch-report.txt" | grep -oE "[0-9]+$")
  [ "${n:-0}" -ge 1 ] && ok "report of the PyTorch recording ($n instances)" || bad "report of the PyTorch recording" "Total Instances: ${n:-none}"
  cp "$W/torch-report.txt" "$OUTDIR/" 2>/dev/null
fi

