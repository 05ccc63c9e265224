# Model-sized processes (sourced by run-suite.sh): rr-tui's fingerprint kernel against its host
# reference and its committed PTX, then a PyTorch process with GiB resident recorded (memory
# already stored is told on the GPU, not copied) and replayed (loaded through pinned staging,
# verified on the GPU; a wrong result still gets the detailed report).
echo "== model-sized processes" | tee -a "$LOG"
expect "fingerprint kernel matches its host reference" 0 "leaf_hash ok" -- bash tests/gpu/make_ptx.sh "$W"
grep -v '^//' crates/rr-cuda/kernels/leaf_hash.ptx >"$W/committed.ptx"
grep -v '^//' "$W/leaf_hash.ptx" >"$W/rebuilt.ptx"
cmp -s "$W/committed.ptx" "$W/rebuilt.ptx" && ok "committed leaf_hash.ptx is what nvcc builds from leaf_hash.cu" \
  || bad "committed leaf_hash.ptx is stale (run tests/gpu/make_ptx.sh and commit)"

M=$W/model
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
expect "check resident" 0 "0 error" -- "$RR" check "$M"
