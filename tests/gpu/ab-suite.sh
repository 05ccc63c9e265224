# A/B replays and compile-time tuning (sourced by run-suite.sh): a program built with a
# deliberately slow kernel (SLOW=4) is recorded; then `replay --candidate` runs, on its recorded input, the kernel's
# source compiled with NVRTC (faster), a slower variant, a wrong one, one whose parameters differ,
# one that does not compile, and the recorded image itself 20 times (the same within noise in at
# least 19). Figures go to $OUTDIR/ab-bench.txt.
echo "== A/B replays" | tee -a "$LOG"
AB=$W/ab
nvcc -O3 -arch=sm_90 -DSLOW=4 -o "$W/ab_prog" tests/gpu/samples/ab_kernel.cu >>"$LOG" 2>&1 || bad "nvcc ab_kernel"
"$RR" record --dir "$AB" -- "$W/ab_prog" >>"$LOG" 2>&1 || bad "record ab_kernel"
ABJ=$(ls "$AB"/*.json 2>/dev/null | head -n 1)
SRC=tests/gpu/samples/ab_kernel.cu
ab() { "$RR" replay "$ABJ" --candidate "$@"; }
expect "A/B: the kernel's source without SLOW is faster and verifies" 0 "Verdict: .*: faster" -- ab "$SRC" -D SLOW=0 --repetitions 60
expect "A/B: SLOW=16 is slower and verifies" 0 "Verdict: .*: slower" -- ab "$SRC" -D SLOW=16 --repetitions 60
expect "A/B: a wrong candidate fails verification (exit 1)" 1 "the candidate's device memory failed to verify" -- ab "$SRC" -D SLOW=4 -D WRONG --repetitions 10
expect "A/B: a different parameter layout is refused with both layouts" 1 "recorded \[0:8, 8:8, 16:4\], candidate \[0:8, 8:8, 16:4, 24:8\]" -- ab "$SRC" -D BAD_LAYOUT
expect "A/B: a source that does not compile says its first error" 1 "does not compile: .*error: .*more error" -- ab "$SRC" -D BROKEN
expect "A/B: --json carries the candidate, its verification and the verdict" 0 '"event":"compare".*"verdict":"faster"' -- ab "$SRC" -D SLOW=0 --repetitions 20 --json
expect "A/B: --save-output writes the candidate's memory" 0 "Replay output saved to .*candidate_output" -- ab "$SRC" -D SLOW=0 --repetitions 6 --save-output --output-dir "$W"
IMG=$(python3 -c 'import json,sys,os; d=json.load(open(sys.argv[1])); print(os.path.join(os.path.dirname(sys.argv[1]), d["ImageFile"]))' "$ABJ" 2>/dev/null)
same=0; ratios=""
t0=$(date +%s.%N)
for i in $(seq 1 20); do
  out=$(ab "$IMG" --repetitions 100 2>&1); echo "$out" >>"$LOG"
  echo "$out" | grep -q "Verdict: .*: same within noise" && same=$((same+1))
  ratios="$ratios $(echo "$out" | grep -o 'candidate [0-9.]*×' | grep -o '[0-9.]*')"
done
t1=$(date +%s.%N)
[ "$same" -ge 19 ] && ok "A/B: the recorded image against itself is the same within noise in $same of 20 runs" \
  || bad "A/B against itself" "same in only $same of 20 runs; ratios:$ratios"
python3 - "$t0" "$t1" $ratios <<'PY' | tee -a "$OUTDIR/ab-bench.txt"
import statistics, sys
t0, t1, r = float(sys.argv[1]), float(sys.argv[2]), [float(x) for x in sys.argv[3:]]
if r:
    print(f"A/B self-comparison, 20 runs of 100 pairs: ratio median {statistics.median(r):.4f}, "
          f"min {min(r):.4f}, max {max(r):.4f}, spread (max-min) {100*(max(r)-min(r)):.2f} %; "
          f"{(t1-t0)/20:.2f} s per A/B replay")
PY
ab "$SRC" -D SLOW=0 --repetitions 100 2>&1 | grep -E "Candidate |Verdict" | tee -a "$OUTDIR/ab-bench.txt"

echo "== compile-time tuning" | tee -a "$LOG"
# The recorded launch has TILE=4 (grid n/(256*4)); each variant's grid keeps every element covered.
CT="$RR tune $ABJ --source $SRC -D TILE=1,2,3,4,8 -D SLOW=0,4 --grid GRID_X*4/TILE --samples 20"
rm -rf "${XDG_CACHE_HOME:-$HOME/.cache}/rr-tui/nvrtc"
rm -f "$W/tuned.json" "$W/tuned.h"
expect "tune --source: every compiled variant verifies, TILE=3 is reported as not compiling" 0 "TILE=3 SLOW=0 .*invalid: does not compile: .*TILE 3 is not supported" -- $CT --json "$W/ct.json" --csv "$W/ct.csv" --export "$W/tuned.json"
grep -E "^Compiled|^Best|^[0-9]+ configuration" "$W/out.txt" | tee -a "$OUTDIR/ab-bench.txt"
python3 - "$W/ct.json" "$W/ct.csv" <<'PY' && ok "tune --source: the report holds the define axes, the compile figures and the define columns" || bad "tune --source report"
import csv, json, sys
r = json.load(open(sys.argv[1]))
assert [a["name"] for a in r["defines"]["axes"]] == ["TILE", "SLOW"], r["defines"]
c = r["compile"]; assert c["variants"] == 10 and c["failed"] == 2 and c["compiled"] == 8, c
ok = [t for t in r["trials"] if t["status"] == "ok" and "variant" in t]
assert len(ok) == 8, [t["status"] for t in r["trials"]]
rows = list(csv.DictReader(open(sys.argv[2])))
assert {"TILE", "SLOW"} <= set(rows[0]), rows[0].keys()
best = r["best"]; assert best.get("variant") is not None, best
print("best variant", best["variant"], "speedup", r["speedup"])
PY
expect "tune --source again: every variant comes from the cache" 0 "Compiled 0 of 10 variant\(s\) .*8 from the cache, 2 failed" -- $CT

grep -q "^#define RR_AB_SCALE_SM90_TILE " "$W/tuned.h" && ok "tune --export: the header defines the best variant's TILE" || bad "tune --export header" "$(cat "$W/tuned.h" 2>&1 | head -5)"
# The exported configuration compiled into the program: its own timing shows the speed-up the
# sweep measured (within 15 %).
nvcc -O3 -arch=sm_90 -include "$W/tuned.h" -DTILE=RR_AB_SCALE_SM90_TILE -DSLOW=RR_AB_SCALE_SM90_SLOW -o "$W/ab_tuned" "$SRC" >>"$LOG" 2>&1 || bad "nvcc with the exported header"
base=$(AB_TIME=200 "$W/ab_prog" | grep -o "median_us=[0-9.]*" | cut -d= -f2)
tuned=$(AB_TIME=200 "$W/ab_tuned" | grep -o "median_us=[0-9.]*" | cut -d= -f2)
python3 - "$W/ct.json" "$base" "$tuned" <<'PY' | tee -a "$OUTDIR/ab-bench.txt"
import json, sys
r = json.load(open(sys.argv[1])); base, tuned = float(sys.argv[2]), float(sys.argv[3])
print(f"exported best in the program: {base:.2f} us -> {tuned:.2f} us = {base/tuned:.3f}x; the sweep measured {r['speedup']:.3f}x")
sys.exit(0 if abs(base / tuned / r["speedup"] - 1) <= 0.15 else 1)
PY
[ "${PIPESTATUS[0]}" -eq 0 ] && ok "tune --export: the program built with the header reproduces the sweep's speed-up" || bad "exported speed-up not reproduced in the program"
# The same signature again replaces its entry; a smaller problem (another signature) adds one.
"$RR" tune "$ABJ" --source "$SRC" -D TILE=2,4 -D SLOW=0 --grid "GRID_X*4/TILE" --samples 5 --export "$W/tuned.json" >>"$LOG" 2>&1
"$RR" record --dir "$W/ab-small" -- "$W/ab_prog" 1048576 >>"$LOG" 2>&1
SMALL=$(ls "$W"/ab-small/*.json 2>/dev/null | head -n 1)
"$RR" tune "$SMALL" --source "$SRC" -D TILE=2,4 -D SLOW=0 --grid "GRID_X*4/TILE" --samples 5 --export "$W/tuned.json" >>"$LOG" 2>&1
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["entries"]; sys.exit(0 if len(e)==2 and e[0]["signature_id"]!=e[1]["signature_id"] else 1)' "$W/tuned.json" \
  && ok "tune --export: the same signature replaces its entry, another adds one" || bad "tune --export merge" "$(grep -c signature_id "$W/tuned.json") entries"
grep -q "^#define RR_AB_SCALE_SM90_TILE " "$W/tuned.h" && bad "two signatures still define the unqualified RR_AB_SCALE_SM90_TILE" || ok "tune --export: two signatures are told apart in the header"
