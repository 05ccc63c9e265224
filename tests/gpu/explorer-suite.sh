# The explorer (tests/gpu/run-part.sh explorer; needs tmux, or TMUX_BIN from .gpu-tools/, and
# Nsight Compute for the profile screen): tests/gpu/explorer-demo.sh drives it in tmux on the
# bundled two-kernel recording: a replay of 20 000 repetitions streamed live and verified, the
# recorded output against the replay's, a live sweep on the tuning screen (at least one
# configuration verified: the count read from the screen), profiles side by side. Screen
# captures go to $OUTDIR/explorer-*.txt.
echo "== explorer (tmux)" | tee -a "$LOG"
note_cmd bash tests/gpu/explorer-demo.sh "$RR" record-fixtures/llvm-two-kernels "$OUTDIR"
timeout 300 bash tests/gpu/explorer-demo.sh "$RR" record-fixtures/llvm-two-kernels "$OUTDIR" >"$W/demo.txt" 2>&1; rc=$?
cat "$W/demo.txt" >>"$LOG"
[ "$rc" -eq 0 ] && ok "explorer replays and verifies live from the UI, sweeps and profiles" \
  || bad "explorer demo" "exit $rc$(why_status "$rc" | sed 's/^/, /'): $(grep -E 'timeout waiting|failed|did not|no verified' "$W/demo.txt" | head -n 3 | tr '\n' ' ')"
v=$(grep -oE "tuning screen: [0-9]+ verified of [0-9]+" "$W/demo.txt" | tail -n 1 | grep -oE "[0-9]+ verified of [0-9]+")
[ "${v%% *}" -ge 1 ] 2>/dev/null && ok "explorer tuning screen: $v configurations verified (>= 1)" \
  || bad "explorer tuning screen: no configuration verified" "${v:-no count shown}"
