#!/usr/bin/env bash
# Drive the explorer on the GPU machine in tmux: replay and verify an instance from the UI,
# capture the screen while timings stream and after verification, then the output-vs-replay
# diff. Usage: bash tests/gpu/explorer-demo.sh RR_TUI_BINARY RECORD_DIR OUTDIR
# Uses tmux from PATH, or TMUX_BIN (with its libraries in TMUX_LIB) when the machine lacks it.
set -u
RR=$(realpath "$1"); DIR=$(realpath "$2"); OUTD=$3
TMUX=${TMUX_BIN:-tmux}
[ -n "${TMUX_LIB:-}" ] && export LD_LIBRARY_PATH="$TMUX_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TERM=xterm-256color
S=rr-demo
"$TMUX" kill-server 2>/dev/null
"$TMUX" new-session -d -s $S -x 130 -y 40 "$RR $DIR" || { echo "tmux failed to start"; exit 1; }
wait_for() { for _ in $(seq 300); do "$TMUX" capture-pane -pt $S | grep -q -- "$1" && return 0; sleep 0.1; done; echo "timeout waiting for: $1"; "$TMUX" capture-pane -pt $S; return 1; }
cap() { "$TMUX" capture-pane -pt $S >"$OUTD/$1"; }
rc=0
wait_for "instance(s)" || rc=1
"$TMUX" send-keys -t $S 4 n BSpace BSpace 2 0 0 0 0 Enter
wait_for "repetitions 20000" || rc=1
"$TMUX" send-keys -t $S v
wait_for "running" || rc=1
sleep 0.3; cap explorer-streaming.txt
wait_for "device memory verified" || rc=1
cap explorer-verified.txt
"$TMUX" send-keys -t $S 3 p
wait_for "recorded output → replay output" || rc=1
wait_for "differing range" || rc=1
cap explorer-output-vs-replay.txt
"$TMUX" send-keys -t $S 1
wait_for "verified" || rc=1
cap explorer-instances.txt
# The tuning screen: a sweep with the default form (block 32..1024*2, grid cover), live.
"$TMUX" send-keys -t $S 5
wait_for "No sweep yet" || rc=1
"$TMUX" send-keys -t $S r
wait_for "running" || rc=1
sleep 1; cap explorer-tuning-live.txt
# "best by time (N verified of M; ...)": the count, not the phrase ("0 verified of 6" has it too).
verified_of() { "$TMUX" capture-pane -pt $S | grep -oE '[0-9]+ verified of [0-9]+' | tail -n 1; }
for _ in $(seq 600); do [ -n "$(verified_of)" ] && "$TMUX" capture-pane -pt $S | grep -qw "done" && break; sleep 0.1; done
v=$(verified_of)
echo "explorer-demo: tuning screen: ${v:-no 'N verified of M' shown}"
[ "${v%% *}" -ge 1 ] 2>/dev/null || { echo "tuning screen: no verified configuration (${v:-none shown})"; rc=1; }
cap explorer-tuning-done.txt
# The profile screen: the recorded configuration (P from the instance list), then the sweep's
# best (P on the tuning screen), side by side with the changes marked.
"$TMUX" send-keys -t $S 1 P
wait_for "recorded: done; ncu-ui opens" || rc=1
"$TMUX" send-keys -t $S 5 P
wait_for "best: .*done; ncu-ui opens" || rc=1
wait_for "change" || rc=1
cap explorer-profile.txt
"$TMUX" send-keys -t $S q
sleep 0.5
"$TMUX" has-session -t $S 2>/dev/null && { echo "explorer did not quit"; rc=1; }
exit $rc
