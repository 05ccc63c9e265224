#!/usr/bin/env bash
# The GPU wrapper: parts of the suite (every part, or those named), each in a process of its
# own under a time limit (360 s), with REQUIRE_ALL=1 (a missing dependency — no ncu, one GPU, no
# tmux, no JAX — fails) unless told otherwise. Prints each part's FAIL, SKIP, STALL and FIGURE
# lines and its "PART NAME: N passed, N failed, N skipped", then "TOTAL: N passed, N failed,
# N skipped"; a part that does not end in time is a failure naming the command it was running.
# Every part's record and figure is appended to $OUT/results.jsonl; the run's JSON (the
# machine: GPU, driver, CUDA, CPU, cores, memory, disk; the commit, the date, the parts and their
# figures) is written to $OUT/DATE-COMMIT-GPU.json, for docs/performance/
# (`python3 scripts/perf-page.py add FILE` there, which also renders docs/PERFORMANCE.md).
#
#   COMMIT=<sha> bash tests/gpu/run-parts.sh [--part NAME[,NAME]] [--no-require-all]
#                                            [--timeout SECONDS] [--verbose] [RR-TUI]
#
# The commit: $COMMIT, else `git rev-parse HEAD` where the tree is a git checkout, else a
# .commit file at the root. A run too long for one call (the device tool allows 10 minutes)
# is split by --part over several calls; each writes its JSON, and `perf-page.py add` merges
# files of the same name (date, commit, GPU) part by part. Output tails stay short: the full
# output of a part is $OUT/NAME.out, its log $OUT/NAME.log.
set -u
cd "$(dirname "$0")/../.." || exit 2
source tests/gpu/parts.sh
list=""; rr=""; limit=${PART_TIMEOUT:-360}; verbose=0
export REQUIRE_ALL=${REQUIRE_ALL:-1}
while [ $# -gt 0 ]; do
  case $1 in
    --part|--parts) list=${2:?--part NAME[,NAME]}; shift 2 ;;
    --part=*) list=${1#--part=}; shift ;;
    --no-require-all) REQUIRE_ALL=0; shift ;;
    --timeout) limit=${2:?--timeout SECONDS}; shift 2 ;;
    --verbose|-v) verbose=1; shift ;;
    --list) exec bash tests/gpu/run-suite.sh --list ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) rr=$1; shift ;;
  esac
done
if [ -n "$list" ]; then
  parts=$(echo "$list" | tr ',' ' ')
  for p in $parts; do
    part_field "$p" 1 >/dev/null || { echo "no part named '$p'; the parts:" >&2; part_names >&2; exit 2; }
  done
else
  parts=$(part_names | tr '\n' ' ')
fi
OUTDIR=${OUT:-/tmp/rr-suite}
mkdir -p "$OUTDIR"
OUTDIR=$(realpath "$OUTDIR")
export OUT=$OUTDIR
export RESULTS="$OUTDIR/results.jsonl"
SUITE_RUN_ID=$(date -u +%Y%m%dT%H%M%SZ)-$$
export SUITE_RUN_ID
echo "run $SUITE_RUN_ID: parts $parts; limit $limit s each; REQUIRE_ALL=$REQUIRE_ALL; binary ${rr:-(default)}"
tp=0; tf=0; ts=0; lines=""
for p in $parts; do
  t0=$(date +%s)
  : >"$OUTDIR/.current-$p"
  if [ "$verbose" = 1 ]; then
    timeout -k 20 "$limit" bash tests/gpu/run-part.sh "$p" ${rr:+"$rr"} 2>&1 | tee "$OUTDIR/$p.out"
  else
    timeout -k 20 "$limit" bash tests/gpu/run-part.sh "$p" ${rr:+"$rr"} 2>&1 | tee "$OUTDIR/$p.out" \
      | grep -aE --line-buffered '^(FAIL|SKIP|STALL|STOPPED|FIGURE|PART|== part)'
  fi
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - t0 ))
  line=$(grep -a "^PART $p: " "$OUTDIR/$p.out" | tail -n 1)
  np=0; nf=0; ns=0
  if [ -n "$line" ]; then
    read -r np nf ns < <(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')
  fi
  why=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    why="part $p did not end within $limit s (exit $rc)"
  elif [ -z "$line" ]; then
    why="part $p ended without its summary (exit $rc)"
  fi
  if [ -n "$why" ]; then
    last=$(tr '\n' ' ' <"$OUTDIR/.current-$p" 2>/dev/null)
    echo "FAIL $why; it was running: ${last:-?}"
    python3 - "$p" "$why" "$last" "$secs" >>"$RESULTS" <<'PY'
import json, os, sys
part, why, last, secs = sys.argv[1:5]
print(json.dumps({"kind": "part-limit", "run": os.environ["SUITE_RUN_ID"], "part": part, "failed": 1,
                  "status": "time limit" if "did not end" in why else "no summary",
                  "message": "%s; it was running: %s" % (why, last or "?"), "seconds": int(secs)}))
PY
    nf=$((nf + 1))
    line="PART $p: $np passed, $nf failed, $ns skipped ($why)"
  fi
  tp=$((tp + np)); tf=$((tf + nf)); ts=$((ts + ns))
  lines="$lines$line [${secs} s]"$'\n'
done
echo
printf '%s' "$lines"
echo "TOTAL: $tp passed, $tf failed, $ts skipped"
python3 scripts/perf-page.py collect --results "$RESULTS" --run "$SUITE_RUN_ID" --out-dir "$OUTDIR" \
  --command "tests/gpu/run-parts.sh${list:+ --part $list}${rr:+ $rr} (REQUIRE_ALL=$REQUIRE_ALL)" \
  | sed 's/^/run JSON: /'
[ "$tf" -eq 0 ]
