#!/usr/bin/env bash
# The stream-ordered recorder attacked (tests/gpu/samples/hostile_record.cu): each mode runs plainly
# and under `rr-tui record`, every run bounded by `timeout`; the recorded run must print what the
# plain run printed (its checksum last) with the same exit status, and its instances must replay and
# verify (or fail saying "note: when recorded, its snapshots may have raced"). A part of the GPU
# suite (tests/gpu/run-part.sh recorder-hostile, with suite-lib.sh's ok/bad/skip, $RR, $W, $LOG),
# or alone:  bash tests/gpu/recorder-hostile-suite.sh [RR-TUI]   (about 3 minutes on one H100)
#
#   fill          --staging 64M, 512 MiB of new content: "staging full" among the reasons, nothing
#                 hangs, and a 4 MiB kernel launched 10 times over 2 s after it (a launch lost to a ring
#                 still busy is selected again) is recorded and verifies: the ring has room again
#   capture       graphs captured in global mode on one thread while another launches recorded kernels:
#                 no capture invalidated ("capture failures: 0"), kernels of the other stream recorded
#   reset[-big]   cudaDeviceReset between recorded kernels: same output, exit 0, the 3 instances
#                 from before the reset verify; those after it verify or are not recorded, with a reason
#   fork          children forked after CUDA started exit() or exec: none hangs, the parent goes on
#   exit-running  exit(0) while a recorded 2 s kernel runs: record ends within 60 s, says it waited,
#                 and the instance verifies
#   streams       64 streams made and destroyed on 8 threads: every instance verifies (or raced)
#   unaligned     odd pointers, byte-array globals, host memory registered at an odd address: the
#                 instances verify; --snapshot args either verifies or warns
#   perthread     8 threads on their per-thread default streams: every instance verifies (or raced)
#   capture-exit  exit(0) with a global capture left open while the recorder copies 256 MiB: record
#                 ends (the recorder's thread cannot wait for that capture to end), within 80 s
#   and for every recorded run: each selected launch is recorded or counted under a reason
if ! declare -F ok >/dev/null || [ -z "${W:-}" ]; then
  cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
  if [ -f tests/gpu/suite-lib.sh ]; then
    PART=${PART:-recorder-hostile}
    # shellcheck disable=SC1091
    source tests/gpu/suite-lib.sh "$@"
    HOSTILE_ALONE=lib
  else
    HOSTILE_ALONE=own
    RR=${1:-}
    if [ -z "$RR" ]; then for c in .gpu-build/rr-tui target/release/rr-tui; do [ -x "$c" ] && { RR=$c; break; }; done; fi
    RR=$(realpath -m "${RR:-target/release/rr-tui}")
    OUTDIR=${OUT:-/tmp/rr-suite}; mkdir -p "$OUTDIR"
    W=$(mktemp -d "${TMPDIR:-/tmp}/rr-suite-hostile.XXXXXX")
    LOG="$OUTDIR/recorder-hostile.log"; : >"$LOG"
    _np=0; _nf=0; _ns=0
    ok() { _np=$((_np + 1)); echo "PASS $1" | tee -a "$LOG"; }
    bad() { _nf=$((_nf + 1)); echo "FAIL $1${2:+: $2}" | tee -a "$LOG"; }
    skip() { _ns=$((_ns + 1)); echo "SKIP $1: $2" | tee -a "$LOG"; }
    since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
  fi
fi
declare -F since >/dev/null || since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
declare -F note_cmd >/dev/null || note_cmd() { :; }
export RR
HS="$W/hostile"
mkdir -p "$HS"
echo "== recorder, attacked: staging overflow, captures, resets, forks, exits, streams, alignment" | tee -a "$LOG"

nvcc -O2 -arch=sm_90 -o "$HS/hostile" tests/gpu/samples/hostile_record.cu >>"$LOG" 2>&1 & _c1=$!
nvcc -O2 -arch=sm_90 --default-stream per-thread -o "$HS/hostile_pt" tests/gpu/samples/hostile_record.cu >>"$LOG" 2>&1 & _c2=$!
wait "$_c1" || bad "nvcc hostile_record.cu"
wait "$_c2" || bad "nvcc hostile_record.cu --default-stream per-thread"
H="$HS/hostile"

# plain NAME LIMIT PROGRAM ARGS...: the program alone: $HS/NAME.plain.{out,err,rc,s}.
plain() {
  local n=$1 lim=$2 t; shift 2
  t=$(date +%s.%N)
  timeout -k 10 "$lim" "$@" >"$HS/$n.plain.out" 2>"$HS/$n.plain.err"; echo $? >"$HS/$n.plain.rc"
  since "$t" >"$HS/$n.plain.s"
}
# recorded NAME LIMIT [RECORD OPTIONS...] -- PROGRAM ARGS...: under rr-tui record into $HS/NAME.rec:
# $HS/NAME.rec.{out,err,rc,s}.
recorded() {
  local n=$1 lim=$2 t opts=(); shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  t=$(date +%s.%N)
  timeout -k 10 "$lim" "$RR" record --dir "$HS/$n.rec" ${opts[@]+"${opts[@]}"} -- "$@" \
    >"$HS/$n.rec.out" 2>"$HS/$n.rec.err"; echo $? >"$HS/$n.rec.rc"
  since "$t" >"$HS/$n.rec.s"
}
# both NAME LIMIT [RECORD OPTIONS...] -- PROGRAM ARGS...: plainly (LIMIT), then recorded (2 x LIMIT).
both() {
  local n=$1 lim=$2 a=("${@:3}") prog=() seen=0 x
  for x in "${a[@]}"; do [ "$seen" = 1 ] && prog+=("$x"); [ "$x" = -- ] && seen=1; done
  echo "-- $n: ${prog[*]}" | tee -a "$LOG"
  note_cmd "${prog[@]}"
  plain "$n" "$lim" "${prog[@]}"
  note_cmd "$RR" record "${a[@]}"
  recorded "$n" $((2 * lim)) "${a[@]}"
  HOSTILE_RUNS="${HOSTILE_RUNS:-} $n"
  { echo "--- $n plain (exit $(cat "$HS/$n.plain.rc"), $(cat "$HS/$n.plain.s") s)"; cat "$HS/$n.plain.out" "$HS/$n.plain.err"
    echo "--- $n recorded (exit $(cat "$HS/$n.rec.rc"), $(cat "$HS/$n.rec.s") s)"; cat "$HS/$n.rec.out" "$HS/$n.rec.err"; } >>"$LOG"
}
# differs NAME: nothing when the recorded run printed what the plain run printed, with its exit
# status; otherwise why not.
differs() {
  local n=$1 prc rrc
  prc=$(cat "$HS/$n.plain.rc"); rrc=$(cat "$HS/$n.rec.rc")
  if [ "$rrc" = 124 ] || [ "$rrc" = 137 ]; then
    echo "the recorded run did not end within $(cat "$HS/$n.rec.s") s (exit $rrc): $(tail -n 2 "$HS/$n.rec.err" | tr '\n' ' ')"
  elif [ "$prc" = 124 ] || [ "$prc" = 137 ]; then echo "the plain run did not end (exit $prc)"
  elif ! grep -qE '^checksum=[0-9a-f]{16}$' "$HS/$n.plain.out"; then
    echo "the plain run printed no checksum (exit $prc): $(tail -n 2 "$HS/$n.plain.out" "$HS/$n.plain.err" | tr '\n' ' ')"
  elif [ "$prc" != "$rrc" ]; then
    echo "exit $rrc recorded, $prc plain: $(tail -n 2 "$HS/$n.rec.out" "$HS/$n.rec.err" | tr '\n' ' ')"
  elif ! cmp -s "$HS/$n.plain.out" "$HS/$n.rec.out"; then
    echo "the output differs: plain '$(tr '\n' ' ' <"$HS/$n.plain.out")', recorded '$(tr '\n' ' ' <"$HS/$n.rec.out")'"
  fi
}
# same NAME WHAT: a check that the recorded run behaved as the plain one.
same() {
  local why; why=$(differs "$1")
  if [ -z "$why" ]; then ok "$1: $2 ($(tail -n 1 "$HS/$1.plain.out"), plain $(cat "$HS/$1.plain.s") s, recorded $(cat "$HS/$1.rec.s") s)"
  else bad "$1: $2" "$why"; fi
}
# reasons NAME: the recorder's "not recorded" lines, on one line.
reasons() { grep -E '^rr-tui record: (not recorded|launches|recording stopped)' "$HS/$1.rec.err" | sed 's/^rr-tui record: //' | tr '\n' ';'; }
# not_recorded NAME PATTERN: launches counted under reasons matching PATTERN ("not selected" never
# counts: those launches were not meant to be recorded).
not_recorded() {
  sed -nE 's/^rr-tui record: not recorded: ([0-9]+) (.*)$/\1\t\2/p' "$HS/$1.rec.err" \
    | awk -F'\t' -v p="$2" '$2 ~ p && $2 !~ /^(not selected|after recording stopped)/ { s += $1 } END { print s + 0 }'
}
# accounted NAME: every selected launch was recorded or counted under a reason (none vanished).
# Said only of a recorded run that ended by itself (one that crashed or hung failed already).
accounted() {
  local n=$1 line sel rec why
  [ "$(cat "$HS/$n.rec.rc")" -lt 124 ] || return 0
  line=$(grep -E '^rr-tui record: launches: ' "$HS/$n.rec.err" | tail -n 1)
  sel=$(echo "$line" | sed -nE 's/.* ([0-9]+) selected.*/\1/p'); rec=$(echo "$line" | sed -nE 's/.* ([0-9]+) recorded.*/\1/p')
  why=$(not_recorded "$n" .)
  if [ -n "$sel" ] && [ -n "$rec" ] && [ $((sel - rec)) -eq "$why" ]; then
    ok "$n: every selected launch is recorded or not recorded with a reason ($sel selected, $rec recorded, $why with a reason)"
  else
    bad "$n: every selected launch is recorded or not recorded with a reason" "${line:-no 'launches:' line}; $why with a reason [$(reasons "$n")]"
  fi
}
no_stop() { # NAME: recording did not stop
  if grep -q "recording stopped" "$HS/$1.rec.err"; then
    bad "$1: recording did not stop" "$(grep -m1 'recording stopped' "$HS/$1.rec.err")"
  else ok "$1: recording did not stop"; fi
}

# verdict_one JSON OUT: the instance replayed and verified: "KERNEL FILE verified|raced|timeout|failed"
# in OUT, the replay's output in OUT.txt. "raced" is a verification failure the replay excuses.
verdict_one() {
  local j=$1 out=$2 rc name v
  timeout -k 10 120 "$RR" replay "$j" --verify --kernel-timeout 30 >"$out.txt" 2>&1; rc=$?
  name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("Name", "?"))' "$j" 2>/dev/null)
  if [ "$rc" -eq 0 ] && grep -q "device memory verified" "$out.txt"; then v=verified
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then v=timeout
  elif grep -q "failed to verify" "$out.txt" && grep -q "note: when recorded, its snapshots may have raced" "$out.txt"; then v=raced
  else v=failed; fi
  echo "${name:-?} $(basename "$j") $v" >"$out"
}
export -f verdict_one
# verdicts NAME [MAX]: up to MAX (24) instances of $HS/NAME.rec replayed, 4 at a time: $HS/NAME.v.
verdicts() {
  local n=$1 vd="$HS/$1.vd"
  mkdir -p "$vd"
  find "$HS/$n.rec" -maxdepth 1 -name '*.json' 2>/dev/null | sort | head -n "${2:-24}" \
    | xargs -r -P 4 -I{} bash -c 'verdict_one "$1" "$2/$(basename "$1").v"' _ {} "$vd"
  cat "$vd"/*.v 2>/dev/null | sort >"$HS/$n.v"
  for f in "$vd"/*.txt; do [ -e "$f" ] && { echo "--- replay $(basename "$f" .v.txt)"; cat "$f"; }; done >>"$LOG"
  sed 's/^/  /' "$HS/$n.v" | tee -a "$LOG"
}
count() { grep -cE "$2" "$HS/$1.v" 2>/dev/null; } # NAME REGEX: verdict lines matching
# replays_ok NAME WHAT: every verdict verified or raced (at least one instance).
replays_ok() {
  local n=$1 total good raced
  total=$(count "$n" .); good=$(count "$n" ' verified$'); raced=$(count "$n" ' raced$')
  if [ "${total:-0}" -gt 0 ] && [ $((good + raced)) -eq "$total" ]; then
    ok "$n: $2: $total instance(s) replayed, $good verify, $raced differ having raced (as they say)"
  else
    bad "$n: $2" "$((total - good - raced)) of $total instance(s) neither verify nor say they raced: $(grep -vE ' (verified|raced)$' "$HS/$n.v" | head -n 6 | tr '\n' ';') [recorder: $(reasons "$n")]"
  fi
}

# ---- capture-exit runs in the background (it may take the recorder's 60 s limit, or hang) ----
( plain capture-exit 60 "$H" capture-exit 5 ) &
_bg1=$!
( recorded capture-exit 100 -- "$H" capture-exit 5 ) &
_bg2=$!

# ---- 1. new content larger than the staging ring ----
both fill 60 --staging 64M -- "$H" fill
same fill "512 MiB of new content over a 64 MiB ring: the program's output and exit status are unchanged"
n=$(not_recorded fill '^staging full')
[ "$n" -ge 1 ] && ok "fill: $n launch(es) not recorded as \"staging full\"" \
  || bad "fill: the reasons say \"staging full\"" "$(reasons fill)"
verdicts fill
if grep -q 'k_big' "$HS/fill.v"; then
  bad "fill: no instance of the kernel whose new content exceeded the ring" "$(grep k_big "$HS/fill.v")"
else ok "fill: no instance of the kernel whose new content exceeded the ring"; fi
grep -q 'k_small.* verified$' "$HS/fill.v" \
  && ok "fill: a 4 MiB kernel launched again while the drain catches up is recorded and verifies: the ring has room again" \
  || bad "fill: a 4 MiB kernel launched again while the drain catches up is recorded and verifies" "$(tr '\n' ';' <"$HS/fill.v") [recorder: $(reasons fill)]"

# ---- 2. graph captures in global mode beside recorded launches ----
both capture 60 -- "$H" capture
if grep -qE '^capture failures: 0; launch errors: 0$' "$HS/capture.plain.out"; then
  same capture "captures in global mode on one thread, recorded launches on another: no capture invalidated"
else
  bad "capture: the plain run's captures succeed" "$(grep -m1 'capture failures' "$HS/capture.plain.out")"
fi
verdicts capture
w=$(count capture 'k_work'); c=$(count capture 'k_cap')
[ "${w:-0}" -ge 1 ] && ok "capture: launches of the other stream are recorded during captures ($w k_work instance(s) replayed, $c k_cap)" \
  || bad "capture: launches of the other stream are recorded" "no k_work instance [recorder: $(reasons capture)]"
replays_ok capture "instances recorded beside captures replay"
no_stop capture

# ---- 3. cudaDeviceReset in the middle ----
for m in reset reset-big; do
  both "$m" 60 --staging 64M -- "$H" "$m"
  same "$m" "cudaDeviceReset between recorded kernels: same output, no crash"
  verdicts "$m"
  nb=$(count "$m" 'k_before.* verified$')
  [ "${nb:-0}" -eq 3 ] && ok "$m: the 3 instances from before the reset verify" \
    || bad "$m: the 3 instances from before the reset verify" "$nb verify: $(grep k_before "$HS/$m.v" | tr '\n' ';') [recorder: $(reasons "$m")]"
  na=$(count "$m" 'k_after'); nav=$(count "$m" 'k_after.* verified$'); lost=$(not_recorded "$m" .)
  if [ "${na:-0}" -eq "${nav:-0}" ] && { [ "${na:-0}" -eq 3 ] || [ "$lost" -ge $((3 - ${na:-0})) ]; }; then
    ok "$m: after the reset, $nav instance(s) verify, the other launches are not recorded with a reason"
  else
    bad "$m: after the reset, every instance verifies or the launch is not recorded with a reason" \
      "$nav of $na verify: $(grep k_after "$HS/$m.v" | tr '\n' ';') [recorder: $(reasons "$m")]"
  fi
done

# ---- 4. fork() after CUDA started ----
both fork 60 -- "$H" fork
if ! grep -qE '^children: 40 exited, 0 hung, 0 ended otherwise$' "$HS/fork.plain.out"; then
  skip "fork: forked children that exit() while a thread launches" "the plain run's children do not all end: $(grep -m1 children "$HS/fork.plain.out")"
else
  same fork "40 children forked after CUDA started exit() or exec, none hangs; the parent goes on"
fi
ls -d "$HS/fork.rec"/pid-* >/dev/null 2>&1 && bad "fork: the children (no CUDA) recorded nothing" "$(ls -d "$HS/fork.rec"/pid-* | head -n 3 | tr '\n' ' ')"
no_stop fork
verdicts fork 12
replays_ok fork "instances recorded while children were forked replay"

# ---- 5. exit while a recorded kernel runs ----
both exit-running 60 -- "$H" exit-running
same exit-running "exit(0) while a recorded 2 s kernel runs: same output and exit status"
took=$(sed -nE 's/.*the program ended; writing the last instances took ([0-9.]+) s more.*/\1/p' "$HS/exit-running.rec.err" | tail -n 1)
secs=$(cat "$HS/exit-running.rec.s")
if [ -n "$took" ] && awk -v t="$took" -v s="$secs" 'BEGIN { exit !(t >= 1.0 && s < 60) }'; then
  ok "exit-running: record ended in $secs s, having waited $took s for the running kernel (and said so)"
else
  bad "exit-running: record waits for the running kernel, says so, ends within 60 s" \
    "ended in $secs s, said it waited '${took:-nothing}' [recorder: $(reasons exit-running)]"
fi
[ "$(not_recorded exit-running 'program ended before')" -eq 0 ] \
  || bad "exit-running: the 2 s kernel is not given up" "$(reasons exit-running)"
verdicts exit-running
grep -q 'k_spin.* verified$' "$HS/exit-running.v" && ok "exit-running: the kernel still running at exit was recorded and verifies" \
  || bad "exit-running: the kernel still running at exit was recorded and verifies" "$(tr '\n' ';' <"$HS/exit-running.v") [recorder: $(reasons exit-running)]"

# ---- 6. many streams, many threads ----
both streams 60 -- "$H" streams
same streams "64 non-blocking streams on 8 threads, made and destroyed 4 times"
verdicts streams
replays_ok streams "every instance replays"
no_stop streams

# ---- 7. odd pointers and unaligned globals ----
both unaligned 60 -- "$H" unaligned
same unaligned "odd pointers, byte-array globals, odd registered host memory ($(grep -m1 'mod 16' "$HS/unaligned.plain.out"); $(grep -m1 'registered' "$HS/unaligned.plain.out"))"
verdicts unaligned
[ "$(count unaligned 'k_unal.* verified$')" -eq 3 ] && ok "unaligned: the 3 instances verify (odd host memory and globals snapshot byte by byte)" \
  || bad "unaligned: the 3 instances verify" "$(tr '\n' ';' <"$HS/unaligned.v") [recorder: $(reasons unaligned)]"
# --snapshot args: the pointer at byte 1 of a packed struct parameter is no 8-byte-aligned word.
recorded unaligned-args 120 --snapshot args -- "$H" unaligned
for f in out err rc s; do cp "$HS/unaligned.plain.$f" "$HS/unaligned-args.plain.$f"; done
cat "$HS/unaligned-args.rec.out" "$HS/unaligned-args.rec.err" >>"$LOG"
same unaligned-args "--snapshot args: same output"
verdicts unaligned-args
nv=$(count unaligned-args ' verified$'); nt=$(count unaligned-args .)
if [ "$nt" -ge 1 ] && [ "$nv" -eq "$nt" ]; then ok "unaligned --snapshot args: every instance verifies"
elif grep -q "rr-tui record: warning:" "$HS/unaligned-args.rec.err"; then
  ok "unaligned --snapshot args: $((nt - nv)) of $nt instance(s) do not verify, and record warned: $(grep -m1 'warning:' "$HS/unaligned-args.rec.err")"
else
  bad "unaligned --snapshot args: every instance verifies, or record warns" \
    "$((nt - nv)) of $nt fail with no warning (the pointer at an odd offset of a packed struct parameter is not seen): $(tr '\n' ';' <"$HS/unaligned-args.v")"
fi

# ---- 8. per-thread default streams ----
both perthread 60 -- "$HS/hostile_pt" perthread
if ! grep -q '^per-thread default stream: no$' "$HS/perthread.plain.out"; then
  same perthread "8 threads on their per-thread default streams"
  verdicts perthread
  replays_ok perthread "every instance replays (a snapshot on one thread's default stream is not ordered with another's)"
else
  bad "perthread: built with --default-stream per-thread" "the program says: $(head -n 1 "$HS/perthread.plain.out")"
fi

# ---- 9. a global capture left open at exit (background, started first) ----
note_cmd "$RR" record -- "$H" capture-exit 5 "(in the background since the start)"
wait "$_bg1"; wait "$_bg2"
{ echo "--- capture-exit plain (exit $(cat "$HS/capture-exit.plain.rc"))"; cat "$HS/capture-exit.plain.out" "$HS/capture-exit.plain.err"
  echo "--- capture-exit recorded (exit $(cat "$HS/capture-exit.rec.rc"), $(cat "$HS/capture-exit.rec.s") s)"; cat "$HS/capture-exit.rec.out" "$HS/capture-exit.rec.err"; } >>"$LOG"
why=$(differs capture-exit); secs=$(cat "$HS/capture-exit.rec.s")
if [ -n "$why" ]; then
  bad "capture-exit: exit(0) with a global capture open while the recorder copies: record ends, same output" "$why"
elif awk -v s="$secs" 'BEGIN { exit !(s < 80) }'; then
  ok "capture-exit: exit(0) with a global capture open while the recorder copies: record ended in $secs s, same output ($(reasons capture-exit))"
else
  bad "capture-exit: record ends within 80 s" "it took $secs s [recorder: $(reasons capture-exit)]"
fi

# ---- every recorded run: no selected launch vanished without a reason ----
for n in ${HOSTILE_RUNS:-} unaligned-args capture-exit; do accounted "$n"; done

case ${HOSTILE_ALONE:-} in
  lib) summary; exit $? ;;
  own)
    echo "PART recorder-hostile: $_np passed, $_nf failed, $_ns skipped" | tee -a "$LOG"
    [ -z "${KEEP_WORK:-}" ] && rm -rf "$W"
    [ "$_nf" -eq 0 ]; exit $? ;;
esac
