# A/B replays and compile-time tuning (tests/gpu/run-part.sh ab; suite-lib.sh defines
# ok/bad/expect/figure/$W/$RR/$LOG): a program built with a deliberately slow kernel (SLOW=4) is
# recorded; then `replay --candidate` runs, on its recorded input, the kernel's source compiled
# with NVRTC (faster), a slower variant, a wrong one, one whose parameters differ, one that does
# not compile, and the recorded image itself 20 times (the same within noise in at least 19, the
# 20 ratios within 3 % of one another: the verdict's own threshold). Verdicts and ratios are read
# from the replay's JSON `compare` event. Figures also go to $OUTDIR/ab-bench.txt.
echo "== A/B replays" | tee -a "$LOG"
record_ab_kernel || return 0
SRC=tests/gpu/samples/ab_kernel.cu
ab() { "$RR" replay "$ABJ" --candidate "$@"; }
# ab_verdict NAME VERDICT LABEL CANDIDATE ARGS...: a --json A/B replay: exit 0, the candidate
# verified, the compare event's verdict VERDICT; its ratio and interval a figure (no goal).
ab_verdict() {
  local name=$1 want=$2 label=$3; shift 3
  note_cmd "$RR" replay "$ABJ" --candidate "$@" --json
  timeout 300 "$RR" replay "$ABJ" --candidate "$@" --json >"$W/abv.jsonl" 2>"$W/abv.err"; local rc=$?
  cat "$W/abv.jsonl" "$W/abv.err" >>"$LOG"
  py "$W/abv.jsonl" "$rc" "$name" "$want" "$(tail -n 2 "$W/abv.err" | tr '\n' ' ')" "$label" <<'PY' | tee -a "$LOG"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
path, rc, name, want, err, label = sys.argv[1:7]
ev = []
for l in open(path):
    try:
        ev.append(json.loads(l))
    except ValueError:
        pass
cmp_ = [e for e in ev if e.get("event") == "compare"]
ver = [e for e in ev if e.get("event") == "verify" and e.get("candidate")]
c = cmp_[0] if cmp_ else {}
check(name, rc == "0" and c.get("verdict") == want and bool(ver) and ver[0].get("passed") is True,
      "exit %s, verdict %s (wanted %s), candidate verified %s; %s" % (rc, c.get("verdict"), want,
                                                                   [v.get("passed") for v in ver], err))
ci = c.get("ci") or [None, None]
figure("ab", "A/B replay, %s: candidate time against the recorded kernel's" % label, c.get("ratio"), "-", None,
       ci[0], ci[1], unit="x", interval="95 % interval", detail="verdict %s, %s pairs" % (c.get("verdict"), c.get("pairs")))
PY
}
ab_verdict "A/B: the kernel's source without SLOW is faster and verifies" faster "the source with SLOW=0 (NVRTC)" "$SRC" -D SLOW=0 --repetitions 60
ab_verdict "A/B: SLOW=16 is slower and verifies" slower "the source with SLOW=16 (NVRTC)" "$SRC" -D SLOW=16 --repetitions 60
expect "A/B: a wrong candidate fails verification (exit 1)" 1 "the candidate's device memory failed to verify" -- ab "$SRC" -D SLOW=4 -D WRONG --repetitions 10
expect "A/B: a different parameter layout is refused with both layouts" 2 "recorded \[0:8, 8:8, 16:4\], candidate \[0:8, 8:8, 16:4, 24:8\]" -- ab "$SRC" -D BAD_LAYOUT
expect "A/B: a source that does not compile says its first error" 2 "does not compile: .*error: .*more error" -- ab "$SRC" -D BROKEN
expect "A/B: --json carries the candidate, its verification and the verdict" 0 '"event":"compare".*"verdict":"faster"' -- ab "$SRC" -D SLOW=0 --repetitions 20 --json
expect "A/B: --save-output writes the candidate's memory" 0 "Replay output saved to .*candidate_output" -- ab "$SRC" -D SLOW=0 --repetitions 6 --save-output --output-dir "$W"
IMG=$(python3 -c 'import json,sys,os; d=json.load(open(sys.argv[1])); print(os.path.join(os.path.dirname(sys.argv[1]), d["ImageFile"]))' "$ABJ" 2>/dev/null)
# The recorded image against itself, 20 times: the compare events of every run.
: >"$W/self.jsonl"
t0=$(date +%s.%N)
for i in $(seq 1 20); do
  note_cmd "$RR" replay "$ABJ" --candidate "$IMG" --repetitions 100 --json "(self-comparison $i of 20)"
  timeout 120 "$RR" replay "$ABJ" --candidate "$IMG" --repetitions 100 --json 2>>"$LOG" | tee -a "$LOG" | grep '"event":"compare"' >>"$W/self.jsonl"
done
t1=$(date +%s.%N)
py "$W/self.jsonl" "$t0" "$t1" <<'PY' | tee -a "$LOG" "$OUTDIR/ab-bench.txt"
import json, os, statistics, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure
ev = []
for l in open(sys.argv[1]):
    try:
        ev.append(json.loads(l))
    except ValueError:
        pass
t0, t1 = float(sys.argv[2]), float(sys.argv[3])
r = [e["ratio"] for e in ev if isinstance(e.get("ratio"), (int, float))]
same = sum(e.get("verdict") == "same" for e in ev)
print("A/B self-comparison: %d of 20 runs gave a verdict; %d same within noise; verdicts %s" % (
    len(ev), same, [e.get("verdict") for e in ev]))
figure("ab", "the recorded image against itself: runs (of 20) same within noise", same, ">=", 19, unit="runs",
       detail="verdicts: %s" % ", ".join(sorted({str(e.get("verdict")) for e in ev})))
if r:
    print(f"A/B self-comparison, 20 runs of 100 pairs: ratio median {statistics.median(r):.4f}, "
          f"min {min(r):.4f}, max {max(r):.4f}, spread (max-min) {100*(max(r)-min(r)):.2f} %; "
          f"{(t1-t0)/20:.2f} s per A/B replay")
figure("ab", "the recorded image against itself: spread of the 20 ratios (max - min)",
       100 * (max(r) - min(r)) if len(r) == 20 else None, "<=", 3, unit="%", detail=("ratios %.4f-%.4f, median %.4f" % (min(r), max(r), statistics.median(r))) if r else
       "%d ratios of 20" % len(r))
figure("ab", "one A/B replay of 100 pairs, wall time", (t1 - t0) / 20, unit="s")
PY
ab "$SRC" -D SLOW=0 --repetitions 100 2>&1 | grep -E "Candidate |Verdict" | tee -a "$OUTDIR/ab-bench.txt"

echo "== compile-time tuning" | tee -a "$LOG"
# The recorded launch has TILE=4 (grid n/(256*4)); each variant's grid keeps every element covered.
CT="$RR tune $ABJ --source $SRC -D TILE=1,2,3,4,8 -D SLOW=0,4 --grid GRID_X*4/TILE --samples 20"
rm -rf "${XDG_CACHE_HOME:-$HOME/.cache}/rr-tui/nvrtc"
rm -f "$W/tuned.json" "$W/tuned.h"
expect "tune --source: every compiled variant verifies, TILE=3 is reported as not compiling" 0 "TILE=3 SLOW=0 .*invalid: does not compile: .*TILE 3 is not supported" -- $CT --json-out "$W/ct.json" --csv "$W/ct.csv" --export "$W/tuned.json"
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
py "$W/ct.json" "${base:-}" "${tuned:-}" <<'PY' | tee -a "$LOG" "$OUTDIR/ab-bench.txt"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure
name = "tune --export: the speed-up of the program built with the exported header, against the sweep's"
try:
    r = json.load(open(sys.argv[1])); base, tuned = float(sys.argv[2]), float(sys.argv[3])
except (OSError, ValueError) as e:
    figure("ab", name, None, "in", "0.85..1.15", unit="x", detail="base %r, tuned %r: %r" % (sys.argv[2], sys.argv[3], e))
    sys.exit(0)
print(f"exported best in the program: {base:.2f} us -> {tuned:.2f} us = {base/tuned:.3f}x; the sweep measured {r['speedup']:.3f}x")
figure("ab", name, base / tuned / r["speedup"], "in", "0.85..1.15", unit="x", measured=base / tuned, measured_unit="x",
       limit="the sweep's speed-up", limit_value=r["speedup"], limit_unit="x",
       detail="the program's own timing: %.2f µs -> %.2f µs" % (base, tuned))
PY
# The same signature again replaces its entry; a smaller problem (another signature) adds one.
"$RR" tune "$ABJ" --source "$SRC" -D TILE=2,4 -D SLOW=0 --grid "GRID_X*4/TILE" --samples 5 --export "$W/tuned.json" >>"$LOG" 2>&1
"$RR" record --dir "$W/ab-small" -- "$W/ab_prog" 1048576 >>"$LOG" 2>&1
SMALL=$(ls "$W"/ab-small/*.json 2>/dev/null | head -n 1)
"$RR" tune "$SMALL" --source "$SRC" -D TILE=2,4 -D SLOW=0 --grid "GRID_X*4/TILE" --samples 5 --export "$W/tuned.json" >>"$LOG" 2>&1
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["entries"]; sys.exit(0 if len(e)==2 and e[0]["signature_id"]!=e[1]["signature_id"] else 1)' "$W/tuned.json" \
  && ok "tune --export: the same signature replaces its entry, another adds one" || bad "tune --export merge" "$(grep -c signature_id "$W/tuned.json") entries"
grep -q "^#define RR_AB_SCALE_SM90_TILE " "$W/tuned.h" && bad "two signatures still define the unqualified RR_AB_SCALE_SM90_TILE" || ok "tune --export: two signatures are told apart in the header"
