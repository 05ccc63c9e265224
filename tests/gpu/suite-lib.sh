# The GPU suite's shared library, sourced by tests/gpu/run-part.sh before a part's script
# (`source tests/gpu/suite-lib.sh [RR-TUI]`); every part runs in a process of its own.
#
# Sets ROOT (the repository), RR (the binary: the argument, else .gpu-build/rr-tui, else
# target/release/rr-tui), OUTDIR (${OUT:-/tmp/rr-suite}), W (a scratch folder, removed at the
# end unless KEEP_WORK=1), LOG ($OUTDIR/PART.log), RESULTS ($OUTDIR/results.jsonl), and
# defines:
#   ok NAME / bad NAME [WHY] / skip NAME WHY   count a check (skip fails under REQUIRE_ALL=1)
#   expect NAME STATUS PATTERN -- command...   the command's exit status and output; a command
#                                             killed by its time limit (124) or a signal (>= 128)
#                                             fails saying so
#   figure AREA NAME VALUE GOAL_OP GOAL [LOW HIGH] [--unit U] [--measured V U]
#          [--limit NAME V U] [--interval TEXT] [--detail TEXT]
#                                             a figure: printed, checked against its goal (with
#                                             LOW HIGH: fails only when the whole interval misses)
#                                             and appended to $RESULTS (tests/gpu/figure.py)
#   need WHAT... / have WHAT                   dependencies (gpus2, ncu, tmux, torch, jax, ray)
#   note_cmd CMD... / watch_file FILE          what the progress watchdog names when stalled
#   build_harness, make_bench_record, build_sample NAME [NVCC ARGS], record_profile_kernels,
#   record_ab_kernel                           what several parts build, each for itself; status 1
#                                             (after a FAIL) when what the part needs is missing:
#                                             the part then stops (`build_harness || return 0`)
#   summary                                    "PART NAME: N passed, N failed, N skipped"
# A watchdog names the command a part waits on when its log (and the output file the current
# check writes) has not grown for 60 s: "STALL: waiting 60 s on: <command>".
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export ROOT
cd "$ROOT" || exit 2
PART=${PART:-adhoc}
export PART
_rr=${1:-}
if [ -z "$_rr" ]; then
  for _c in .gpu-build/rr-tui target/release/rr-tui; do
    [ -x "$_c" ] && { _rr=$_c; break; }
  done
fi
RR=$(realpath -m "${_rr:-target/release/rr-tui}")
export RR
OUTDIR=${OUT:-/tmp/rr-suite}
mkdir -p "$OUTDIR"
OUTDIR=$(realpath "$OUTDIR")
W=$(mktemp -d "${TMPDIR:-/tmp}/rr-suite-$PART.XXXXXX")
LOG="$OUTDIR/$PART.log"
: >"$LOG"
RESULTS=${RESULTS:-$OUTDIR/results.jsonl}
# The counts (a line per check) live in a file: checks counted in a subshell or by Python
# (tests/gpu/figure.py) count too.
COUNTS="$W/.counts"
: >"$COUNTS"
# What the part runs now (read by the watchdog, and by run-parts.sh after a time-out).
CURRENT="$OUTDIR/.current-$PART"
: >"$CURRENT"
SUITE_RUN_ID=${SUITE_RUN_ID:-$(date -u +%Y%m%dT%H%M%SZ)-$$}
export SUITE_LOG="$LOG" SUITE_RESULTS="$RESULTS" SUITE_COUNTS="$COUNTS" SUITE_PART="$PART" SUITE_RUN_ID SUITE_CURRENT="$CURRENT"
SUITE_START=$(date +%s.%N)
# tmux for the explorer demo: the GPU machine has none; a copy unpacked from Debian's packages
# into .gpu-tools/ (see README, "The GPU suite") travels with `carry`.
if ! command -v tmux >/dev/null && [ -x "$ROOT/.gpu-tools/x/usr/bin/tmux" ]; then
  export TMUX_BIN="$ROOT/.gpu-tools/x/usr/bin/tmux" TMUX_LIB="$ROOT/.gpu-tools/x/usr/lib/x86_64-linux-gnu"
fi
# A command run by expect ends within this many seconds (0: no limit).
CMD_TIMEOUT=${CMD_TIMEOUT:-300}

_count() { printf '%s\t%s\n' "$1" "$2" >>"$COUNTS"; }
ok()  { _count PASS "$1"; echo "PASS $1" | tee -a "$LOG"; }
bad() { _count FAIL "$1"; echo "FAIL $1${2:+: $2}" | tee -a "$LOG"; }
# skip NAME WHY: a check that cannot run here (a missing tool, too few GPUs); a failure when
# REQUIRE_ALL=1 (what the GPU wrapper sets: there everything must run).
skip() {
  if [ "${REQUIRE_ALL:-0}" = 1 ]; then
    bad "$1" "cannot run ($2) and REQUIRE_ALL=1"
  else
    _count SKIP "$1"; echo "SKIP $1: $2" | tee -a "$LOG"
  fi
}
py() { python3 - "$@"; }
figure() { python3 "$ROOT/tests/gpu/figure.py" "$@" | tee -a "$LOG"; }
note_cmd() { printf '%s\n' "$*" >"$CURRENT"; }
watch_file() { printf '%s\n' "${1:-}" >"$W/.watch"; }

# timed CMD...: the command under CMD_TIMEOUT (shell functions run as they are).
timed() {
  if declare -F "$1" >/dev/null || [ "${CMD_TIMEOUT:-0}" = 0 ]; then "$@"; else timeout -k 10 "$CMD_TIMEOUT" "$@"; fi
}
# why_status RC: nothing for an ordinary exit; what ended the command otherwise.
why_status() {
  if [ "$1" -eq 124 ]; then echo "timed out (exit 124, limit ${CMD_TIMEOUT} s)"
  elif [ "$1" -ge 128 ]; then echo "killed by signal $(($1 - 128)) (exit $1)"
  fi
}
# expect NAME EXPECTED_STATUS GREP_PATTERN -- command...
expect() {
  local name=$1 want=$2 pat=$3; shift 4
  note_cmd "$@"; watch_file "$W/out.txt"
  timed "$@" >"$W/out.txt" 2>&1; local rc=$?
  cat "$W/out.txt" >>"$LOG"
  local killed; killed=$(why_status "$rc")
  if [ -n "$killed" ] && [ "$rc" -ne "$want" ]; then bad "$name" "$killed: $(tail -n 3 "$W/out.txt" | tr '\n' ' ')"; return; fi
  if [ "$rc" -ne "$want" ]; then bad "$name" "exit $rc, wanted $want: $(tail -n 3 "$W/out.txt" | tr '\n' ' ')"; return; fi
  if [ -n "$pat" ] && ! grep -qE "$pat" "$W/out.txt"; then bad "$name" "output lacks /$pat/: $(tail -n 3 "$W/out.txt" | tr '\n' ' ')"; return; fi
  ok "$name"
}

# have WHAT: 0 when the dependency is there.
have() {
  case $1 in
    gpus2) [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ] ;;
    ncu) command -v ncu >/dev/null ;;
    tmux) command -v tmux >/dev/null || [ -n "${TMUX_BIN:-}" ] ;;
    torch|jax|ray|rr_tui) python3 -c "import $1" >/dev/null 2>&1 ;;
    *) command -v "$1" >/dev/null ;;
  esac
}
# what_missing WHAT...: a description of the first missing dependency (nothing when none is).
what_missing() {
  local d
  for d in "$@"; do
    [ "$d" = - ] && continue
    if ! have "$d"; then
      case $d in
        gpus2) echo "fewer than 2 GPUs ($(nvidia-smi -L 2>/dev/null | grep -c '^GPU') found)" ;;
        torch|jax|ray|rr_tui) echo "python3 cannot import $d" ;;
        *) echo "no $d" ;;
      esac
      return
    fi
  done
}

# The watchdog: progress is the log, or the output file of the current check, growing.
_watchdog() {
  trap - DEBUG
  local parent=$1 last=-1 still=0 size wf msg nap=""
  # Its sleep holds no output open and ends with it (the part's pipe closes at once).
  trap 'kill $nap 2>/dev/null; exit 0' TERM
  while true; do
    sleep 5 </dev/null >/dev/null 2>&1 &
    nap=$!
    wait "$nap"
    kill -0 "$parent" 2>/dev/null || exit 0
    wf=$(cat "$W/.watch" 2>/dev/null)
    size=$(( $(stat -c %s "$LOG" 2>/dev/null || echo 0) + $( { [ -n "$wf" ] && stat -c %s "$wf" 2>/dev/null; } || echo 0) ))
    if [ "$size" -eq "$last" ]; then still=$((still + 5)); else still=0; last=$size; fi
    if [ "$still" -gt 0 ] && [ $((still % 60)) -eq 0 ]; then
      msg="STALL: waiting $still s on: $(head -c 400 "$CURRENT" 2>/dev/null | tr '\n' ' ')"
      echo "$msg"; echo "$msg" >>"$LOG"
      # Our own line is no progress.
      last=$(( $(stat -c %s "$LOG" 2>/dev/null || echo 0) + $( { [ -n "$wf" ] && stat -c %s "$wf" 2>/dev/null; } || echo 0) ))
    fi
  done
}
_watchdog $$ &
WATCHDOG_PID=$!
# Top-level commands of the part (not those inside the suite's functions, which say what they
# run with note_cmd) are what the watchdog names; a pipeline's `tee`, an `echo` and the
# `source` of a file are not.
set -T
trap 'case ${FUNCNAME[0]:-main} in source|main) case $BASH_COMMAND in tee\ *|"echo "*|"source "*|_on_exit*|_on_term*) ;; *) printf "%s:%s: %s\n" "${BASH_SOURCE[0]:-main}" "$LINENO" "$BASH_COMMAND" >"$CURRENT" 2>/dev/null ;; esac ;; esac' DEBUG

_summarised=0
# summary [STATUS]: the part's counts, its record in $RESULTS; status 1 when a check failed.
summary() {
  [ "$_summarised" = 1 ] && return
  _summarised=1
  trap - DEBUG
  kill "$WATCHDOG_PID" 2>/dev/null
  wait "$WATCHDOG_PID" 2>/dev/null
  true
  local p f s status=${1:-done}
  p=$(grep -c '^PASS' "$COUNTS"); f=$(grep -c '^FAIL' "$COUNTS"); s=$(grep -c '^SKIP' "$COUNTS")
  echo "PART $PART: $p passed, $f failed, $s skipped" | tee -a "$LOG"
  python3 - "$PART" "$p" "$f" "$s" "$SUITE_START" "$status" "$COUNTS" "$CURRENT" >>"$RESULTS" <<'PY'
import json, os, sys, time
part, p, f, s, start, status, counts, current = sys.argv[1:9]
failed = [l.split("\t", 1)[1].rstrip("\n") for l in open(counts) if l.startswith("FAIL\t")]
skipped = [l.split("\t", 1)[1].rstrip("\n") for l in open(counts) if l.startswith("SKIP\t")]
rec = {"kind": "part", "run": os.environ.get("SUITE_RUN_ID"), "part": part, "passed": int(p), "failed": int(f),
       "skipped": int(s), "seconds": round(time.time() - float(start), 1), "status": status,
       "failed_checks": failed, "skipped_checks": skipped}
if status != "done":
    rec["last_command"] = open(current).read().strip() if os.path.exists(current) else ""
print(json.dumps(rec))
PY
  [ "$status" = "done" ] && rm -f "$CURRENT"
  if [ -z "${KEEP_WORK:-}" ]; then rm -rf "$W"; else echo "work folder kept: $W" | tee -a "$LOG"; fi
  [ "$f" -eq 0 ]
}
# A part that ends early (an error under set -u, an exit) or is terminated still reports.
_on_exit() {
  local rc=$1
  if [ "$_summarised" = 0 ]; then
    bad "part $PART ended early (exit $rc) at: $(tr '\n' ' ' <"$CURRENT" 2>/dev/null)"
    summary ended
  fi
}
_on_term() {
  echo "STOPPED: part $PART terminated while running: $(tr '\n' ' ' <"$CURRENT" 2>/dev/null)" | tee -a "$LOG"
  summary terminated
  exit 143
}
trap '_on_exit $?' EXIT
trap '_on_term' TERM INT

# ---- what several parts build, each for itself ----

# find_json DIR NAME: the descriptor of DIR whose kernel is NAME.
find_json() { py "$1" "$2" <<'PY'
import json, os, sys
d, name = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(d)):
    if f.endswith(".json") and json.load(open(os.path.join(d, f))).get("Name") == name:
        print(os.path.join(d, f)); break
PY
}
# build_harness: kernels.cu for sm_90 and sm_80, the recording harness, and its recordings:
# sets SAXPY, SCALE (LLVM layout, $W/llvm), SMEM, ATOMIC ($W/extras), STENCIL ($W/rrtui).
build_harness() {
  echo "== build" | tee -a "$LOG"
  nvcc -cubin -arch=sm_90 -O3 -o "$W/kernels.cubin" tests/gpu/kernels.cu >>"$LOG" 2>&1 || bad "nvcc sm_90"
  nvcc -cubin -arch=sm_80 -O3 -o "$W/kernels_sm80.cubin" tests/gpu/kernels.cu >>"$LOG" 2>&1 || bad "nvcc sm_80"
  nvcc -O2 -o "$W/harness" tests/gpu/record_harness.cu -lcuda >>"$LOG" 2>&1 || bad "nvcc harness"
  export RR_CUBIN="$W/kernels.cubin"
  _rec() { local d=$1; shift; "$W/harness" "$@" >>"$LOG" 2>&1 && python3 tests/gpu/name_records.py "$d" >>"$LOG" 2>&1; }
  _rec "$W/llvm" llvm "$W/llvm" two-kernels 1048576 || bad "record two-kernels"
  _rec "$W/extras" llvm "$W/extras" extras 1048576 --no-report || bad "record extras"
  _rec "$W/rrtui" rrtui "$W/rrtui" 128 || bad "record rrtui"
  SAXPY=$(find_json "$W/llvm" rr_saxpy); SCALE=$(find_json "$W/llvm" rr_scale_global)
  SMEM=$(find_json "$W/extras" rr_smem_reverse); ATOMIC=$(find_json "$W/extras" rr_atomic_sum)
  STENCIL=$(ls "$W"/rrtui/*.json 2>/dev/null | head -1)
  if [ -z "$SAXPY" ] || [ -z "$SCALE" ] || [ -z "$SMEM" ] || [ -z "$ATOMIC" ] || [ -z "$STENCIL" ]; then
    bad "harness recordings (the part stops here)" "saxpy '$SAXPY', scale '$SCALE', smem '$SMEM', atomic '$ATOMIC', stencil '$STENCIL'"
    return 1
  fi
}
# make_bench_record (after build_harness): saxpy over 1 GiB, recorded with the harness, which
# also times the kernel itself ($W/harness.txt); sets BENCH.
make_bench_record() {
  "$W/harness" llvm "$W/bench" bench 134217728 --time-reps 50 >"$W/harness.txt" 2>&1; cat "$W/harness.txt" >>"$LOG"
  python3 tests/gpu/name_records.py "$W/bench" >>"$LOG" 2>&1
  BENCH=$(ls "$W"/bench/*.json 2>/dev/null | head -1)
  [ -n "$BENCH" ] || { bad "record the 1 GiB benchmark instance (the part stops here)" "$(tail -n 3 "$W/harness.txt" | tr '\n' ' ')"; return 1; }
}
# build_sample NAME [NVCC ARGS...]: tests/gpu/samples/NAME.cu into $W/samples/NAME.
build_sample() {
  mkdir -p "$W/samples"
  [ -x "$W/samples/$1" ] && return 0
  nvcc -O2 -arch=sm_90 -o "$W/samples/$1" "tests/gpu/samples/$1.cu" "${@:2}" >>"$LOG" 2>&1 || { bad "nvcc $1"; return 1; }
}
# record_profile_kernels: profile_kernels.cu recorded ($W/prof); sets TRIAD and FMA.
record_profile_kernels() {
  nvcc -O3 -arch=sm_90 -o "$W/prof_prog" tests/gpu/samples/profile_kernels.cu >>"$LOG" 2>&1 || bad "nvcc profile_kernels"
  "$RR" record --dir "$W/prof" --kernels 'rr_triad|rr_fma_chain' -- "$W/prof_prog" >>"$LOG" 2>&1 || bad "record profile_kernels"
  _pick() { python3 -c 'import json,os,sys
for f in sorted(os.listdir(sys.argv[1])):
    if f.endswith(".json") and sys.argv[2] in json.load(open(os.path.join(sys.argv[1], f))).get("Name", ""): print(os.path.join(sys.argv[1], f)); break' "$W/prof" "$1" 2>/dev/null; }
  TRIAD=$(_pick rr_triad); FMA=$(_pick rr_fma_chain)
  [ -n "$TRIAD" ] && [ -n "$FMA" ] || { bad "recorded profile kernels (the part stops here)" "triad '$TRIAD', fma '$FMA'"; return 1; }
}
# record_ab_kernel: ab_kernel.cu built with a deliberately slow kernel (SLOW=4) and recorded
# ($W/ab); sets ABJ.
record_ab_kernel() {
  nvcc -O3 -arch=sm_90 -DSLOW=4 -o "$W/ab_prog" tests/gpu/samples/ab_kernel.cu >>"$LOG" 2>&1 || bad "nvcc ab_kernel"
  "$RR" record --dir "$W/ab" -- "$W/ab_prog" >>"$LOG" 2>&1 || bad "record ab_kernel"
  ABJ=$(ls "$W"/ab/*.json 2>/dev/null | head -n 1)
  [ -n "$ABJ" ] || { bad "recorded ab_kernel (the part stops here)"; return 1; }
}
# since T: seconds since T (a `date +%s.%N`).
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
