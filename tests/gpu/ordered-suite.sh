# Recording never changes what the program does (tests/gpu/run-part.sh ordered; suite-lib.sh
# defines ok/bad/skip/expect/$W/$RR/$LOG): the snapshot kernels against their host reference and
# their committed PTX; kernels that wait on the host or on each other (plain and recorded: same
# result, nothing hangs; every instance replays, verifies, or is stopped by the watchdog with a
# message naming the kernel and the host memory it reads; snapshots that raced are said so);
# graphs of every shape; one kernel name in two images; JAX command buffers. (A model-sized
# process recorded within the disk's limit: the model-record part.)
SAMPLES=tests/gpu/samples
source tests/gpu/capture-lib.sh
echo "== recorder: stream-ordered snapshots" | tee -a "$LOG"
mkdir -p "$W/samples"
nvcc -O2 -arch=sm_90 -o "$W/samples/ordering" "$SAMPLES/ordering.cu" >>"$LOG" 2>&1 || bad "nvcc ordering"
nvcc -O2 -arch=sm_90 -o "$W/samples/graph_shapes" "$SAMPLES/graph_shapes.cu" >>"$LOG" 2>&1 || bad "nvcc graph_shapes"
nvcc -O2 -arch=sm_90 -o "$W/samples/same_name" "$SAMPLES/same_name.cu" -lcuda -lnvrtc >>"$LOG" 2>&1 || bad "nvcc same_name"
nvcc -O2 -arch=sm_90 -o "$W/snapshot_check" tests/gpu/probes/snapshot_check.cu >>"$LOG" 2>&1 || bad "nvcc snapshot_check"
expect "snapshot kernels match their host reference (sums, flags, plan, ring wrap, copies)" 0 "snapshot ok" -- "$W/snapshot_check"
nvcc -ptx -arch=compute_75 -O3 -o "$W/snapshot.ptx" crates/rr-cuda/kernels/snapshot.cu >>"$LOG" 2>&1
# (make_ptx.sh sets the ISA version line to 7.0: the rest must be nvcc's.)
cmp -s <(grep -v '^//\|^\.version' crates/rr-cuda/kernels/snapshot.ptx) <(grep -v '^//\|^\.version' "$W/snapshot.ptx") \
  && ok "committed snapshot.ptx is what nvcc builds from snapshot.cu" || bad "committed snapshot.ptx is stale (tests/gpu/make_ptx.sh)"

# verdicts DIR: each instance replayed with a 5 s watchdog: "name verified|hung|failed" lines
verdicts() {
  for j in "$1"/*.json; do
    [ -e "$j" ] || continue
    local name; name=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['Name'])" "$j")
    note_cmd "$RR" replay "$j" --verify --kernel-timeout 5
    timeout 60 "$RR" replay "$j" --verify --kernel-timeout 5 >"$W/v.txt" 2>&1; local rc=$?
    cat "$W/v.txt" >>"$LOG"
    if [ "$rc" -eq 0 ] && grep -q "verified" "$W/v.txt"; then echo "$name verified"
    elif grep -q "kernel .*has not finished after 5 s" "$W/v.txt"; then
      if grep -q "host memory it reads (segment" "$W/v.txt"; then echo "$name hung-host"; else echo "$name hung"; fi
    elif grep -q "note: when recorded, its snapshots may have raced" "$W/v.txt"; then echo "$name differs-raced"
    else echo "$name failed"; fi
  done
}
raced() { python3 -c "import json,glob,sys; print(sum('MayHaveRaced' in json.load(open(f)) for f in glob.glob(sys.argv[1] + '/*.json')))" "$1"; }

# run_both MODE: the program plain and recorded, each bounded: same result, nothing hangs.
run_both() {
  local m=$1 dir="$W/ord-$1" t plain rec rc
  note_cmd "$W/samples/ordering" "$m"
  t=$(date +%s.%N); plain=$(timeout 60 "$W/samples/ordering" "$m" 2>>"$LOG" | tail -n 1)
  local plain_s; plain_s=$(since "$t")
  note_cmd "$RR" record --dir "$dir" -- "$W/samples/ordering" "$m"
  t=$(date +%s.%N); timeout 120 "$RR" record --dir "$dir" -- "$W/samples/ordering" "$m" >"$W/ord-$m.out" 2>"$W/ord-$m.err"; rc=$?
  local rec_s; rec_s=$(since "$t")
  rec=$(tail -n 1 "$W/ord-$m.out"); cat "$W/ord-$m.err" >>"$LOG"
  if [ "$rc" -eq 0 ] && [ -n "$plain" ] && [ "$plain" = "$rec" ]; then
    ok "ordering $m: recorded, the program ends with the same result (plain ${plain_s} s, recorded ${rec_s} s)"
  else
    bad "ordering $m: recorded run" "exit $rc (124: it hung), plain '$plain', recorded '$rec': $(tail -n 2 "$W/ord-$m.err" | tr '\n' ' ')"
  fi
}

run_both flag
verdicts "$W/ord-flag" >"$W/ord-flag.v"; cat "$W/ord-flag.v" | tee -a "$LOG"
grep -q "k_after.* verified" "$W/ord-flag.v" && ! grep -q "k_after.* hung" "$W/ord-flag.v" \
  && ! grep -q "failed$" "$W/ord-flag.v" && ! grep -q "k_delay.* hung$" "$W/ord-flag.v" \
  && ok "ordering flag: every instance verifies, or spins on its recorded flag and the watchdog names the kernel and its host memory" \
  || bad "ordering flag: replays" "$(tr '\n' ';' <"$W/ord-flag.v")"

run_both pair
verdicts "$W/ord-pair" >"$W/ord-pair.v"; cat "$W/ord-pair.v" | tee -a "$LOG"
[ "$(grep -c 'k_produce.* \(verified\|differs-raced\)' "$W/ord-pair.v")" -ge 2 ] && ! grep -q "failed$" "$W/ord-pair.v" \
  && ok "ordering pair: the producer verifies (or differs, its snapshots having raced, as it says); the consumer verifies or is stopped by the watchdog" \
  || bad "ordering pair: replays" "$(tr '\n' ';' <"$W/ord-pair.v")"
n=$(raced "$W/ord-pair")
[ "${n:-0}" -ge 1 ] && ok "ordering pair: $n instance(s) say their snapshots may have raced with the other stream" \
  || bad "ordering pair: no instance says it may have raced"
expect "check lists the instances that may have raced" 0 "may have raced with another stream" -- "$RR" check "$W/ord-pair"

run_both hostfunc
verdicts "$W/ord-hostfunc" >"$W/ord-hostfunc.v"; cat "$W/ord-hostfunc.v" | tee -a "$LOG"
grep -q "k_produce.* verified" "$W/ord-hostfunc.v" && ! grep -q "failed$" "$W/ord-hostfunc.v" \
  && ok "ordering hostfunc: the producer verifies; the waiting kernel verifies or the watchdog names its host memory" \
  || bad "ordering hostfunc: replays" "$(tr '\n' ';' <"$W/ord-hostfunc.v")"

# The flag set late: its recorded input is surely unset, so a replay spins until the watchdog;
# the GPU is usable right after (another replay verifies).
run_both flag-late
D=$(grep -l '"Name":"_Z7k_delayPViPii"' "$W"/ord-flag-late/*.json | xargs grep -l '"Grid":\[32' | head -1)
expect "watchdog stops a replay spinning on its recorded host flag, naming the kernel and the host segment" 1 \
  "kernel k_delay.* has not finished after 3 s: it may be waiting for host memory it reads \(segment [0-9]+: 4 B at 0x" \
  -- timeout 60 "$RR" replay "$D" --kernel-timeout 3
A=$(grep -l '"Name":"_Z7k_afterPKiPii"' "$W"/ord-flag-late/*.json | head -1)
expect "the GPU is usable after the watchdog (another replay verifies)" 0 "verified" -- "$RR" replay "$A" --verify

# Graphs of every shape, one kernel name in two images, JAX command buffers forced on.
capture graph_shapes "" -- "$W/samples/graph_shapes"
graph_at_least graph_shapes 6
if [ ! -f "$W/cap-graph_shapes/report.txt" ]; then
  bad "graph_shapes: no report.txt in the recording"
elif grep -q "could not be read" "$W/cap-graph_shapes/report.txt"; then
  bad "graph_shapes: a graph could not be read" "$(grep 'could not be read' "$W/cap-graph_shapes/report.txt")"
else
  ok "graph_shapes: every graph was read (no edges, independent nodes, updated dependencies, relaxed, thread-local)"
fi
capture same_name "" -- "$W/samples/same_name"
python3 - "$W/cap-same_name" <<'PY' && ok "same_name: each launch of rr_same was recorded with the image it ran from (2 images)" || bad "same_name: images"
import glob, json, sys
imgs = {json.load(open(f))["ImageFile"] for f in glob.glob(sys.argv[1] + "/*.json")}
print("images:", sorted(imgs))
sys.exit(0 if len(imgs) == 2 else 1)
PY
if have jax; then
  export XLA_FLAGS="--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUSTOM_CALL --xla_gpu_graph_min_graph_size=1"
  capture jax_command_buffers "" -- python3 "$SAMPLES/jax_graphs.py"
  unset XLA_FLAGS
  if [ ! -f "$W/cap-jax_command_buffers/report.txt" ]; then
    bad "jax command buffers: no report.txt in the recording"
  elif grep -qE "could not be read|no image seen loading holds" "$W/cap-jax_command_buffers/report.txt"; then
    bad "jax command buffers: not recorded" "$(grep -E 'could not be read|no image' "$W/cap-jax_command_buffers/report.txt")"
  else
    ok "jax command buffers: every graph read, every image holds its kernel"
  fi
else
  skip "record jax_command_buffers (JAX with command buffers forced on)" "$(what_missing jax)"
fi
