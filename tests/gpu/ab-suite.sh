# A/B replays (sourced by run-suite.sh): a program built with a deliberately slow kernel
# (SLOW=2) is recorded; then `replay --candidate` runs, on its recorded input, the kernel's
# source compiled with NVRTC (faster), a slower variant, a wrong one, one whose parameters differ,
# one that does not compile, and the recorded image itself 20 times (the same within noise in at
# least 19). Figures go to $OUTDIR/ab-bench.txt.
echo "== A/B replays" | tee -a "$LOG"
AB=$W/ab
nvcc -O3 -arch=sm_90 -DSLOW=2 -o "$W/ab_prog" tests/gpu/samples/ab_kernel.cu >>"$LOG" 2>&1 || bad "nvcc ab_kernel"
"$RR" record --dir "$AB" -- "$W/ab_prog" >>"$LOG" 2>&1 || bad "record ab_kernel"
ABJ=$(ls "$AB"/*.json 2>/dev/null | head -n 1)
SRC=tests/gpu/samples/ab_kernel.cu
ab() { "$RR" replay "$ABJ" --candidate "$@"; }
expect "A/B: the kernel's source without SLOW is faster and verifies" 0 "Verdict: .*: faster" -- ab "$SRC" -D SLOW=0 --repetitions 60
expect "A/B: SLOW=8 is slower and verifies" 0 "Verdict: .*: slower" -- ab "$SRC" -D SLOW=8 --repetitions 60
expect "A/B: a wrong candidate fails verification (exit 1)" 1 "the candidate's device memory failed to verify" -- ab "$SRC" -D SLOW=2 -D WRONG --repetitions 10
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
