#!/usr/bin/env bash
# The GPU suite: run on the GPU machine from the repository root, with the binary built on the
# development machine (cargo build --release) carried along:
#   bash tests/gpu/run-suite.sh [RR-TUI]                  every part, one after the other
#   bash tests/gpu/run-suite.sh --part core,bench [RR-TUI] those parts
#   bash tests/gpu/run-suite.sh --list                    the parts, what each covers, about how long
# The binary defaults to .gpu-build/rr-tui, else target/release/rr-tui.
#
# The suite is made of parts (tests/gpu/parts.sh), each run in a process of its own by
# tests/gpu/run-part.sh: each builds what it needs (nvcc, the recording harness, the samples, its
# recordings) and reads nothing another part set, so any subset runs alone. Each ends in
# "PART NAME: N passed, N failed, N skipped"; this script adds them up: "N passed, N failed,
# N skipped", exit status 1 when anything failed. Figures with a goal (restore rates, overheads,
# throughputs, ratios against a plain program or a peer measured in the same run) are checked
# against it and written with the machine's other figures to $OUT/results.jsonl
# (tests/gpu/figure.py); tests/gpu/run-parts.sh runs the parts under a time limit each, sets
# REQUIRE_ALL=1 and writes the run's JSON for docs/PERFORMANCE.md (scripts/perf-page.py).
#
# A check that cannot run here (no ncu, one GPU, no tmux, no JAX or PyTorch) is a skip, counted;
# with REQUIRE_ALL=1 it is a failure. SKIP_<PART>=1 (the part's name upper-cased, '-' as '_':
# SKIP_CORE, SKIP_TUNE_BENCH, SKIP_RECORD_BENCH, SKIP_MODEL_RECORD, ...) leaves a part out of a run
# of every part; SKIP_RECORDER=1 is SKIP_RECORD=1. A part that makes no progress for a minute
# prints "STALL: waiting N s on: <command>". Logs: $OUT (or /tmp/rr-suite), PART.log each.
set -u
cd "$(dirname "$0")/../.." || exit 2
source tests/gpu/parts.sh
list=""; rr=""
while [ $# -gt 0 ]; do
  case $1 in
    --list)
      suite_parts | awk -F'|' '{ printf "%-17s ~%3d s  %s%s\n", $1, $3, $5, ($4 != "-" ? "  [needs " $4 "]" : "") }'
      exit 0 ;;
    --part|--parts) list=${2:?--part NAME[,NAME]}; shift 2 ;;
    --part=*) list=${1#--part=}; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) rr=$1; shift ;;
  esac
done
[ "${SKIP_RECORDER:-}" ] && export SKIP_RECORD=1
if [ -n "$list" ]; then
  parts=$(echo "$list" | tr ',' ' ')
  for p in $parts; do
    part_field "$p" 1 >/dev/null || { echo "no part named '$p'; the parts:" >&2; part_names >&2; exit 2; }
  done
  explicit=1
else
  parts=$(part_names | tr '\n' ' ')
  explicit=0
fi
OUTDIR=${OUT:-/tmp/rr-suite}
mkdir -p "$OUTDIR"
export SUITE_RUN_ID=${SUITE_RUN_ID:-$(date -u +%Y%m%dT%H%M%SZ)-$$}
tp=0; tf=0; ts=0; lines=""; left=""
for p in $parts; do
  var="SKIP_$(echo "$p" | tr 'a-z-' 'A-Z_')"
  if [ "$explicit" = 0 ] && [ -n "${!var:-}" ]; then left="$left $p"; continue; fi
  bash tests/gpu/run-part.sh "$p" ${rr:+"$rr"} 2>&1 | tee "$OUTDIR/$p.out"
  line=$(grep -a "^PART $p: " "$OUTDIR/$p.out" | tail -n 1)
  if [ -z "$line" ]; then
    line="PART $p: 0 passed, 1 failed, 0 skipped (it ended without its summary)"
  fi
  read -r np nf ns < <(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')
  tp=$((tp + np)); tf=$((tf + nf)); ts=$((ts + ns))
  lines="$lines$line"$'\n'
done
echo
printf '%s' "$lines"
[ -n "$left" ] && echo "parts left out (SKIP_*):$left"
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
