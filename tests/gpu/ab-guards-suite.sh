# `rr-tui ab` on every recorded instance, and the guards a cheating candidate cannot pass
# (tests/gpu/run-part.sh ab-guards; suite-lib.sh defines ok/bad/expect/$W/$RR/$LOG). A program
# launches tests/gpu/samples/ab_cheats.cu's kernel three times (three sizes and contents on the
# same buffers: three instances one worker switches between); then one `ab --json` judges the
# honest source and five cheats of it, each a candidate file that includes the sample with its
# macro, and the leaderboard says what each guard caught. `replay --candidate` is caught the same
# way. Figures (the honest candidate's speed-up and the wall time) go to $OUTDIR/ab-guards.txt.
# Then the two guards that need more than the board: rotation (STASH, a result kept where no
# reset reaches, caught only when the instances rotate) and the bandwidth floor (SKIP_TIMED on
# a 256 MiB instance of ab_stream, recorded by `cheat_prog stream`).
echo "== ab on every instance, and its guards" | tee -a "$LOG"
SAMPLE=$ROOT/tests/gpu/samples/ab_cheats.cu
nvcc -O3 -arch=sm_90 -o "$W/cheat_prog" "$SAMPLE" >>"$LOG" 2>&1 || { bad "nvcc ab_cheats (the part stops here)"; return 0; }
"$RR" record --dir "$W/cheats" -- "$W/cheat_prog" >>"$LOG" 2>&1 || bad "record ab_cheats"
n=$(grep -l '"ab_cheat"' "$W"/cheats/*.json 2>/dev/null | wc -l)
[ "$n" -eq 3 ] && ok "ab: the program's three launches are three instances" || { bad "ab: three instances recorded" "$n found (the part stops here)"; return 0; }
# One candidate file per macro: the sample included by its absolute path.
for c in honest WRITE_NOTHING WRITE_HALF CACHE WRITE_OUTSIDE LAUNCH_BOUNDS; do
  { [ "$c" = honest ] || echo "#define $c"; echo "#include \"$SAMPLE\""; } >"$W/$c.cu"
done
# One file a --candidate.
CANDS=()
for c in honest WRITE_NOTHING WRITE_HALF CACHE WRITE_OUTSIDE LAUNCH_BOUNDS; do CANDS+=(--candidate "$W/$c.cu"); done
t0=$(date +%s.%N)
note_cmd "$RR" ab "$W/cheats" --kernels ab_cheat "${CANDS[@]}" --repetitions 20 --json
timeout 240 "$RR" ab "$W/cheats" --kernels ab_cheat "${CANDS[@]}" \
  --repetitions 20 --json >"$W/board.json" 2>"$W/board.err"; rc=$?
cat "$W/board.json" "$W/board.err" >>"$LOG"
py "$W/board.json" "$rc" "$(since "$t0")" <<'PY' | tee -a "$LOG" "$OUTDIR/ab-guards.txt"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
path, rc, wall = sys.argv[1], sys.argv[2], float(sys.argv[3])
try:
    board = json.load(open(path))
except (OSError, ValueError) as e:
    check("ab --json: one leaderboard document", False, "%r (exit %s)" % (e, rc))
    sys.exit(0)
rows = {os.path.basename(c["candidate"])[:-3]: c for c in board.get("candidates", [])}
check("ab --json: schema rr-tui.ab/1, three instances, six candidates, exit 0 (one verified everywhere)",
      board.get("schema") == "rr-tui.ab/1" and len(board.get("instances", [])) == 3 and len(rows) == 6 and rc == "0",
      "schema %r, %d instances, %d candidates, exit %s" % (board.get("schema"), len(board.get("instances", [])), len(rows), rc))
def statuses(name):
    return [r["status"] for r in rows.get(name, {}).get("instances", [])]
h = rows.get("honest", {})
check("ab: the honest candidate verifies on 3 of 3, with a speed-up interval, poison armed",
      h.get("verified") == 3 and h.get("total") == 3 and h.get("geomean_ci") is not None
      and all(r.get("poisoned_bytes", 0) > 0 for r in h.get("instances", [])),
      "verified %s of %s, ci %s, poisoned %s" % (h.get("verified"), h.get("total"), h.get("geomean_ci"),
                                                [r.get("poisoned_bytes") for r in h.get("instances", [])]))
for name, why in [("WRITE_NOTHING", "poison: a candidate that writes nothing"),
                  ("WRITE_HALF", "poison: a candidate that writes half"),
                  ("WRITE_OUTSIDE", "every byte compared: a write outside the output")]:
    c = rows.get(name, {})
    check("ab guard, %s: wrong on every instance, rejected" % why,
          statuses(name) == ["wrong"] * 3 and c.get("verdict") == "rejected",
          "statuses %s, verdict %s" % (statuses(name), c.get("verdict")))
c = rows.get("CACHE", {})
check("ab guard, globals reset: a result cached in a __device__ flag is recomputed every run (verified, not faster)",
      statuses("CACHE") == ["verified"] * 3 and c.get("verdict") != "faster",
      "statuses %s, verdict %s, reasons %s" % (statuses("CACHE"), c.get("verdict"),
                                               [r.get("reason") for r in c.get("instances", [])]))
c = rows.get("LAUNCH_BOUNDS", {})
reasons = [r.get("reason") or "" for r in c.get("instances", [])]
check("ab guard, launch limits: a kernel that cannot take the recorded block is an error, never a pass",
      statuses("LAUNCH_BOUNDS") == ["error"] * 3 and all("threads per block" in r for r in reasons),
      "statuses %s, reasons %s" % (statuses("LAUNCH_BOUNDS"), reasons))
check("ab: the instances are rotated inside the timing loop (each instance's notes say so)",
      all(any("rotating 3 instances" in n for n in r.get("notes", [])) for r in h.get("instances", [])),
      "notes %s" % [r.get("notes") for r in h.get("instances", [])])
figure("ab-guards", "ab: the honest candidate's geometric-mean speed-up (identical code)", h.get("geomean_speedup"),
       "in", "0.9..1.1", unit="x", detail="interval %s, worst %s" % (h.get("geomean_ci"), h.get("worst")))
figure("ab-guards", "ab: six candidates on three instances, wall time", wall, "<=", 90, unit="s")
PY
expect "ab: only cheats: exit 1 and the text leaderboard says so" 1 "No candidate verified on every instance" -- \
  "$RR" ab "$W/cheats" --kernels ab_cheat --candidate "$W/WRITE_NOTHING.cu" --repetitions 6
J=$(grep -l '"ab_cheat"' "$W"/cheats/*.json | head -n 1)
expect "replay --candidate: the poison catches a candidate that writes nothing (exit 1)" 1 "poisoned before every candidate run" -- \
  "$RR" replay "$J" --candidate "$W/WRITE_NOTHING.cu" --repetitions 6
# The help's example: the bundled candidate (record-fixtures/candidates/saxpy.cu) on the bundled
# record's two rr_saxpy instances, with the recorded image beside it.
X2=record-fixtures/llvm-two-kernels/8683979482637550046_13526365365894479501
expect "ab: the help's example, the bundled candidate on the bundled record, verifies on both instances" 0 "2/2" -- \
  "$RR" ab record-fixtures/llvm-two-kernels --kernels saxpy --candidate "$X2.image" --candidate record-fixtures/candidates/saxpy.cu --repetitions 6

# Rotation: STASH keeps every result in an 80 MiB global (over the 64 MiB of the candidate's own
# globals reset before every run) and hands it back later. Alone on one instance nothing can
# tell: it verifies. `ab` keeps the candidate loaded from one instance to the next, so its first
# run on the second and third instances hands back the first one's results: wrong there.
{ echo "#define STASH"; echo "#include \"$SAMPLE\""; } >"$W/STASH.cu"
expect "rotation guard: alone on one instance, a result stashed beyond the resets verifies (what rotation is for)" 0 "Candidate run, device memory verified" -- \
  "$RR" replay "$J" --candidate "$W/STASH.cu" --repetitions 6
note_cmd "$RR" ab "$W/cheats" --kernels ab_cheat --candidate "$W/STASH.cu" --repetitions 20 --json
timeout 120 "$RR" ab "$W/cheats" --kernels ab_cheat --candidate "$W/STASH.cu" \
  --repetitions 20 --json >"$W/stash.json" 2>"$W/stash.err"; rc=$?
cat "$W/stash.json" "$W/stash.err" >>"$LOG"
py "$W/stash.json" "$rc" <<'PY' | tee -a "$LOG"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import check
path, rc = sys.argv[1], sys.argv[2]
try:
    c = json.load(open(path))["candidates"][0]
except (OSError, ValueError, KeyError, IndexError) as e:
    check("rotation guard: ab --json on STASH gives one candidate row", False, "%r (exit %s)" % (e, rc))
    sys.exit(0)
rows = c.get("instances", [])
st = [r.get("status") for r in rows]
reasons = [r.get("reason") or "" for r in rows]
check("rotation guard: a result stashed beyond the resets fails on the instances that follow another (rejected, exit 1)",
      len(st) == 3 and st[1:] == ["wrong", "wrong"] and c.get("verdict") == "rejected" and rc == "1"
      and all("right after its runs on" in r for r in reasons[1:]),
      "statuses %s, verdict %s, exit %s, reasons %s" % (st, c.get("verdict"), rc, reasons))
PY

# The bandwidth floor: ab_stream on 256 MiB buffers (far beyond the L2). SKIP_TIMED does the
# work on its first launch only; `replay --candidate` verifies that first run, and its timed
# runs (a few µs) are far below what writing 256 MiB takes at the GPU's peak bandwidth (about
# 60 µs on an H100): implausible, exit 1. The honest source on the same instance is not
# flagged (about 170 µs), and `ab`, which verifies after timing too, finds SKIP_TIMED wrong.
"$RR" record --dir "$W/stream" -- "$W/cheat_prog" stream >>"$LOG" 2>&1 || bad "record ab_cheats stream"
S=$(grep -l '"ab_stream"' "$W"/stream/*.json 2>/dev/null | head -n 1)
[ -n "$S" ] || { bad "plausibility guard: the 256 MiB instance of ab_stream is recorded" "none found (the part stops here)"; return 0; }
{ echo "#define SKIP_TIMED"; echo "#include \"$SAMPLE\""; } >"$W/SKIP_TIMED.cu"
expect "plausibility guard: a candidate that skips the work on its timed runs is flagged implausible (replay --candidate, exit 1)" 1 "warning: implausible" -- \
  "$RR" replay "$S" --candidate "$W/SKIP_TIMED.cu" --repetitions 20
expect "plausibility guard: the honest candidate on the same instance verifies and is not flagged (exit 0)" 0 "Candidate run, device memory verified" -- \
  "$RR" replay "$S" --candidate "$W/honest.cu" --repetitions 20
note_cmd "$RR" ab "$W/stream" --kernels ab_stream --candidate "$W/honest.cu" --candidate "$W/SKIP_TIMED.cu" --repetitions 20 --json
timeout 120 "$RR" ab "$W/stream" --kernels ab_stream --candidate "$W/honest.cu" --candidate "$W/SKIP_TIMED.cu" \
  --repetitions 20 --json >"$W/floor.json" 2>"$W/floor.err"; rc=$?
cat "$W/floor.json" "$W/floor.err" >>"$LOG"
py "$W/floor.json" "$rc" <<'PY' | tee -a "$LOG"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import check
path, rc = sys.argv[1], sys.argv[2]
try:
    rows = {os.path.basename(c["candidate"])[:-3]: c for c in json.load(open(path))["candidates"]}
except (OSError, ValueError, KeyError, TypeError) as e:
    check("plausibility guard: ab --json on the floor's instance gives a leaderboard", False, "%r (exit %s)" % (e, rc))
    sys.exit(0)
def first(name):
    r = rows.get(name, {}).get("instances") or [{}]
    return r[0]
h, s = first("honest"), first("SKIP_TIMED")
p = h.get("plausibility") or {}
check("plausibility guard: ab judges the honest candidate on 256 MiB plausible, with a floor",
      h.get("status") == "verified" and p.get("plausibility") == "plausible" and (p.get("floor_ns") or 0) > 10000,
      "status %s, plausibility %s" % (h.get("status"), p))
check("plausibility guard: ab finds the candidate that skips its timed runs wrong after timing (exit 0: the honest one verified)",
      s.get("status") == "wrong" and "timed runs" in (s.get("reason") or "") and rc == "0",
      "status %s, reason %s, exit %s" % (s.get("status"), s.get("reason"), rc))
PY
