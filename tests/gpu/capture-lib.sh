# Helpers of the recorder's GPU suite parts (sourced by record-, capture- and ordered-suite.sh;
# suite-lib.sh defines ok/bad/note_cmd/$W/$RR/$LOG).
# count_graph DIR: instances recorded from graph launches
count_graph() { python3 -c "import json,glob,sys; print(sum(bool(json.load(open(f)).get('FromGraph')) for f in glob.glob(sys.argv[1] + '/*.json')))" "$1"; }
# capture NAME RECORD_OPTIONS -- command...: record, compare results, replay and verify everything
capture() {
  local name=$1 opts=$2; shift 3
  local plain rec dir="$W/cap-$name"
  note_cmd "$@"
  plain=$(timeout 300 "$@" 2>>"$LOG" | tail -n 1)
  note_cmd "$RR" record --dir "$dir" $opts -- "$@"
  # shellcheck disable=SC2086
  timeout 300 "$RR" record --dir "$dir" $opts -- "$@" >"$W/cap-$name.out" 2>"$W/cap-$name.err"; local rc=$?
  rec=$(tail -n 1 "$W/cap-$name.out")
  cat "$W/cap-$name.err" >>"$LOG"
  if [ "$rc" -ne 0 ] || [ -z "$plain" ] || [ "$plain" != "$rec" ]; then
    bad "record $name: the program's result is unchanged" "exit $rc$(why_status "$rc" | sed 's/^/, /'), plain '$plain', recorded '$rec': $(tail -n 3 "$W/cap-$name.err" | tr '\n' ' ')"; return
  fi
  local n=0 failed=0 excused=0
  for j in "$dir"/*.json; do
    [ -e "$j" ] || continue
    n=$((n+1))
    note_cmd "$RR" replay "$j" --verify --kernel-timeout 10
    if ! timeout 120 "$RR" replay "$j" --verify --kernel-timeout 10 >"$W/replay.txt" 2>&1; then
      cat "$W/replay.txt" >>"$LOG"
      # An instance that says why its output need not be reproducible (its snapshots raced, or
      # host threads wrote the host memory it reads) may differ; no other may.
      if grep -qE "note: (when recorded, its snapshots may have raced|host memory it reads changed while it ran)" "$W/replay.txt"; then
        excused=$((excused+1))
        echo "  replay differs, as its caveat says: $(basename "$j"): $(grep -m1 -E 'note: (when|host)' "$W/replay.txt")" | tee -a "$LOG"
      else
        failed=$((failed+1))
        echo "  replay failed: $(basename "$j"): $(grep -m1 -E 'rror|differ' "$W/replay.txt")" | tee -a "$LOG"
      fi
    fi
  done
  local graph; graph=$(count_graph "$dir")
  [ "$n" -gt 0 ] && [ "$failed" -eq 0 ] && ok "record $name: result unchanged ($rec); $((n - excused)) of $n instance(s) replay and verify, $excused differ as their caveat says, $graph from graph launches" \
    || bad "record $name: replay" "$failed of $n instance(s) failed"
  grep -q "launches:.*seen" "$W/cap-$name.err" && ok "record $name: says what it saw, selected and recorded" || bad "record $name: summary" "$(tail -n 2 "$W/cap-$name.err" | tr '\n' ' ')"
  echo "$graph" >"$W/cap-$name.graph"
}
graph_at_least() { # NAME N
  local g; g=$(cat "$W/cap-$1.graph" 2>/dev/null || echo 0)
  [ "${g:-0}" -ge "$2" ] && ok "record $1: $g instance(s) from inside CUDA graphs (>= $2)" || bad "record $1: graph instances" "$g < $2"
}


# strict_check NAME DIR: `check --strict` finds nothing but snapshots that raced with another
# stream of the program (which the recorder must say: Snapshot all covers every allocation, and
# a kernel on another stream may write one meanwhile).
strict_check() {
  local name=$1 dir=$2 rc others
  note_cmd "$RR" check --strict "$dir"
  timeout 300 "$RR" check --strict "$dir" >"$W/strict.txt" 2>&1; rc=$?; cat "$W/strict.txt" >>"$LOG"
  others=$(grep -E "(warning|error):" "$W/strict.txt" | grep -vc "may have raced with another stream")
  [ "$others" -eq 0 ] && { [ "$rc" -eq 0 ] || grep -q "may have raced" "$W/strict.txt"; } \
    && ok "record $name: check --strict finds nothing but snapshots that raced (exit $rc)" \
    || bad "record $name: check --strict" "$(grep -m3 -E '(warning|error):' "$W/strict.txt" | tr '\n' ' ')"
}
