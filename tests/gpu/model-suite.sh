# Model-sized processes (tests/gpu/run-part.sh model; needs PyTorch): rr-tui's fingerprint
# kernel against its host reference and its committed PTX, then a PyTorch process with 2 GiB
# resident recorded (memory already stored is told on the GPU, not copied) and replayed (loaded
# through pinned staging, verified on the GPU; a wrong result still gets the detailed report),
# tune DIR with kept engines and the explorer's kept replay process. (24 GiB: the model-record
# part.)
echo "== model-sized processes" | tee -a "$LOG"
expect "fingerprint kernel matches its host reference" 0 "leaf_hash ok" -- bash tests/gpu/make_ptx.sh "$W"
grep -v '^//' crates/rr-cuda/kernels/leaf_hash.ptx >"$W/committed.ptx"
grep -v '^//' "$W/leaf_hash.ptx" >"$W/rebuilt.ptx"  # make_ptx.sh wrote its .version line as committed
cmp -s "$W/committed.ptx" "$W/rebuilt.ptx" && ok "committed leaf_hash.ptx is what nvcc builds from leaf_hash.cu" \
  || bad "committed leaf_hash.ptx is stale (run tests/gpu/make_ptx.sh and commit)"

M=$W/model
# 2 GiB resident; before each small kernel 10 % of it (0.2 GiB at the start of one tensor) is
# rewritten: chunks partly changed, most memory the same from instance to instance.
plain=$(python3 tests/gpu/samples/resident.py 2 10 2>>"$LOG" | grep -o "checksum=.*")
"$RR" record --dir "$M" -- python3 tests/gpu/samples/resident.py 2 10 >"$W/model.out" 2>"$W/model.err"; rc=$?
cat "$W/model.err" >>"$LOG"
rec=$(grep -o "checksum=.*" "$W/model.out")
[ "$rc" -eq 0 ] && [ -n "$plain" ] && [ "$plain" = "$rec" ] && ok "record resident: the program's result is unchanged" \
  || bad "record resident" "exit $rc, plain '$plain', recorded '$rec'"
known=$(grep -o "([0-9.]* [KMG]iB known on the GPU)" "$W/model.err")
[ -n "$known" ] && ok "record resident: memory already stored is told on the GPU $known" || bad "record resident: nothing known on the GPU" "$(grep -m1 'snapshot cost' "$W/model.err")"
grep -q "^rr-tui record:   .*json: [0-9.]* s, " "$W/model.err" && ok "record resident: per-instance cost printed" || bad "record resident: no per-instance cost"

"$RR" record --dir "$M-copy" --no-fingerprints -- python3 tests/gpu/samples/resident.py 2 10 >>"$LOG" 2>&1
ids() { ls "$1/blobs" | sort; }
[ "$(ids "$M")" = "$(ids "$M-copy")" ] && ok "record resident: fingerprints store the same blobs as copying everything" \
  || bad "record resident: blobs differ with --no-fingerprints"
rm -rf "$M-copy"

# One 2 GiB allocation holding both tensors, one of them rewritten before each kernel: stored in
# 64 MiB chunks, an instance writes only the changed half, and replays from its chunks verify.
M1=$W/model-one
plain1=$(python3 tests/gpu/samples/resident.py 2 50 one 2>>"$LOG" | grep -o "checksum=.*")
"$RR" record --dir "$M1" -- python3 tests/gpu/samples/resident.py 2 50 one >"$W/model-one.out" 2>"$W/model-one.err"; rc=$?
cat "$W/model-one.err" >>"$LOG"
rec1=$(grep -o "checksum=.*" "$W/model-one.out")
# Each kernel after one of the tensors was rewritten writes 1 GiB (the changed chunks), not the
# 2 GiB allocation; only the instance that fills the allocation writes all of it.
news=$(python3 - "$M1" "$W/model-one.err" <<'PY'
import glob, json, re, sys
unit = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
new = [float(n) * unit[u] / (1 << 30) for n, u in re.findall(r"json: [\d.]+ s, .*, ([\d.]+) (B|KiB|MiB|GiB) new", open(sys.argv[2]).read())]
d = json.load(open(sorted(glob.glob(sys.argv[1] + "/*.json"))[-1]))
chunks = sum(1 for s in d["Segments"] if s.get("Continues"))
half = sum(1 for g in new if 0.9 <= g <= 1.1)
whole = sum(1 for g in new if g > 1.1)
print(f"{half} {whole} {chunks} " + ",".join(f"{g:.2f}" for g in new))
PY
)
read -r half whole chunked list <<<"$news"
[ "$rc" -eq 0 ] && [ "$plain1" = "$rec1" ] && [ "${half:-0}" -ge 3 ] && [ "${whole:-9}" -le 1 ] && [ "${chunked:-0}" -ge 31 ] \
  && ok "record one allocation, half rewritten per kernel: only the changed chunks are written (GiB new per instance: $list; $chunked continuing chunks)" \
  || bad "record in chunks" "exit $rc, plain '$plain1', recorded '$rec1', GiB new per instance $list, $chunked continuing chunks"
n1=0; failed1=0
for j in "$M1"/*.json; do
  [ -e "$j" ] || continue; n1=$((n1+1))
  "$RR" replay "$j" --verify >"$W/replay.txt" 2>&1 || { failed1=$((failed1+1)); cat "$W/replay.txt" >>"$LOG"; }
done
[ "$n1" -gt 0 ] && [ "$failed1" -eq 0 ] && ok "replay from chunks: all $n1 instance(s) verify" || bad "replay from chunks" "$failed1 of $n1 failed"
expect "inspect joins the chunks of one allocation" 0 "0x[0-9a-f]+\.\.0x[0-9a-f]+  2 GiB" -- "$RR" inspect "$(ls "$M1"/*.json | head -1)"
rm -rf "$M1"

n=0; failed=0
for j in "$M"/*.json; do
  [ -e "$j" ] || continue; n=$((n+1))
  "$RR" replay "$j" --verify >"$W/replay.txt" 2>&1 || { failed=$((failed+1)); cat "$W/replay.txt" >>"$LOG"; }
done
[ "$n" -gt 0 ] && [ "$failed" -eq 0 ] && ok "replay resident: all $n instance(s) verify" || bad "replay resident" "$failed of $n failed"
# An elementwise kernel of many blocks: with one block, most of its output is not written.
WIDE=$(python3 - "$M" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f))
    if d.get("Grid", [0])[0] >= 64 and "elementwise" in d.get("Name", ""):
        print(f); break
PY
)
expect "replay resident: an equal result is verified on the GPU" 0 "equal fingerprints computed on the GPU" -- "$RR" replay "$WIDE" --verify --repetitions 3
expect "replay resident: a different result is still reported byte by byte" 1 "byte\(s\) differ" -- "$RR" replay "$WIDE" --verify --num-teams 1
# The different result compared only where the GPU's chunk fingerprints differ says what the
# whole comparison on the host says, and costs less (the time of each, from the JSON stream).
python3 - "$RR" "$WIDE" >"$W/within.txt" 2>&1 <<'PY' && ok "replay resident: a different result compared only in the chunks that differ says what the host comparison says ($(tail -n 1 "$W/within.txt"))" || bad "replay resident: chunked verification" "$(tail -n 3 "$W/within.txt" | tr '\n' ' ')"
import json, subprocess, sys, time
rr, wide = sys.argv[1:3]
def run(*extra):
    t0 = time.perf_counter()
    p = subprocess.run([rr, "replay", wide, "--verify", "--num-teams", "1", "--json", *extra], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    v = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{") and '"verify"' in l]
    return p.returncode, (v[-1] if v else {}), wall
code_a, a, wall_a = run()
code_b, b, wall_b = run("--verify-on-host")
keys = ["passed", "differing_bytes", "differing_ranges", "first_ranges", "expected_len"]
same = code_a == code_b == 1 and all(a.get(k) == b.get(k) for k in keys) and \
    [(r["label"], r["differing_bytes"]) for r in a.get("regions", [])] == [(r["label"], r["differing_bytes"]) for r in b.get("regions", [])]
print({k: (a.get(k), b.get(k)) for k in keys})
print("%s differing bytes; the replay with chunked verification %.2f s, with --verify-on-host %.2f s" % (
    a.get("differing_bytes"), wall_a, wall_b))
sys.exit(0 if same else 1)
PY
# tune DIR: a GPU's engine goes on from one instance to the next, keeping on the GPU the chunks
# that did not change (the rest uploaded); with --fresh-engines every instance starts its own. Same verdicts; the times of
# one run each.
tune_dir() { # NAME FLAGS...
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  note_cmd "$RR" tune "$M" --block 128 --samples 5 --hot --reports "$W/$name" "$@"
  timeout 300 "$RR" tune "$M" --block 128 --samples 5 --hot --reports "$W/$name" "$@" >"$W/$name.txt" 2>&1; local rc=$?
  cat "$W/$name.txt" >>"$LOG"
  echo "$rc $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')"
}
read -r rc_keep s_keep < <(tune_dir tune-kept)
read -r rc_fresh s_fresh < <(tune_dir tune-fresh --fresh-engines)
kept=$(grep -c "engine kept from the last instance: " "$W/tune-kept.txt")
# The first instance (torch.rand filling the first tensor) ran before the second was allocated.
moved=$(grep -c "a new engine: its memory is laid out differently" "$W/tune-kept.txt")
fresh_kept=$(grep -c "engine kept from the last instance" "$W/tune-fresh.txt")
swept=$(grep -c "^== instance " "$W/tune-kept.txt")
grep -E "engine kept from the last instance|a new engine" "$W/tune-kept.txt" | sed 's/^ */  /' | tee -a "$OUTDIR/model-tune-dir.txt"
echo "tune DIR over $swept instance(s): kept engines ${s_keep} s, fresh engines ${s_fresh} s" | tee -a "$OUTDIR/model-tune-dir.txt"
figure model "tune DIR over the 2 GiB recording: engines kept from one instance to the next, speed-up over --fresh-engines (wall)" \
  "$(awk -v k="${s_keep:-0}" -v f="${s_fresh:-0}" 'BEGIN { if (k > 0) printf "%.3f", f / k }')" - - \
  --unit x --measured "${s_keep:-}" s --limit "--fresh-engines" "${s_fresh:-}" s --detail "$swept instances"
[ "$rc_keep" -eq 0 ] && [ "$rc_fresh" -eq 0 ] && [ "$kept" -ge $((swept - 2)) ] && [ $((kept + moved)) -eq $((swept - 1)) ] && [ "$fresh_kept" -eq 0 ] \
  && ok "tune DIR: engines go on to the next instance keeping unchanged memory on the GPU ($kept of $((swept - 1)) switches; ${s_keep} s, fresh engines ${s_fresh} s)" \
  || bad "tune DIR kept engines" "exit $rc_keep/$rc_fresh, $kept kept and $moved moved of $((swept - 1)) switches, $fresh_kept with --fresh-engines"
python3 - "$W/tune-kept/summary.json" "$W/tune-fresh/summary.json" <<'PY' && ok "tune DIR: kept and fresh engines give the same verdicts" || bad "tune DIR: verdicts differ between kept and fresh engines"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
rows = lambda s: [(r["instance"], r["outcome"], r["verified"], r["failed"]) for r in (s["instances"] if isinstance(s, dict) else s)]
print(rows(a)); print(rows(b))
sys.exit(0 if rows(a) == rows(b) and all(r[1] == "swept" and r[2] > 0 for r in rows(a)) else 1)
PY
# The explorer's replays: one serving process takes the next instance on stdin and keeps the
# resident memory on the GPU; the same verdicts as a fresh process per replay.
python3 tests/gpu/probes/serve_replays.py "$RR" "$M" --repetitions 3 --verify >"$W/serve.txt" 2>&1; rc=$?
cat "$W/serve.txt" | tee -a "$OUTDIR/model-serve.txt" >>"$LOG"
served=$(tail -n 1 "$W/serve.txt")
read -r served_s fresh_s < <(echo "$served" | sed -nE 's/.*served ([0-9.]+) s, fresh processes ([0-9.]+) s.*/\1 \2/p')
figure model "the explorer's replays of every instance: one kept process, speed-up over a fresh process each (wall)" \
  "$(awk -v a="${served_s:-0}" -v b="${fresh_s:-0}" 'BEGIN { if (a > 0) printf "%.3f", b / a }')" - - \
  --unit x --measured "${served_s:-}" s --limit "a fresh process each" "${fresh_s:-}" s
[ "$rc" -eq 0 ] \
  && ok "explorer replays: the next instance switches into the served process ($served)" \
  || bad "explorer replays through one process" "exit $rc: $served"
expect "check resident" 0 ": 0 error\(s\)" -- "$RR" check "$M"
