#!/usr/bin/env bash
# Record the README's tour of the explorer: drive `rr-tui` in tmux over the bundled records (no
# GPU needed) and write
#   assets/tour/NN-name.txt   text screenshots (tmux capture-pane, 100×30, no colour escapes)
#   assets/tour/explorer.cast the same steps as an asciicast v2 recording, with the keys typed
#                             in between (`asciinema play assets/tour/explorer.cast`)
# Every step waits for text on the screen and then for the screen to stop changing, never for a
# fixed time (as tests/e2e_tmux.rs does); the cast's clock is the script's own (a fixed pause per
# frame), so recording again on an unchanged explorer gives the same files.
#
# Usage: scripts/record-tour.sh            (RR_TUI=path/to/rr-tui to use another binary;
#                                           default target/release/rr-tui, built when missing)
# Needs tmux and python3 (the cast's JSON).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${RR_TUI:-target/release/rr-tui}
[ -x "$BIN" ] || cargo build --release --locked --bin rr-tui
command -v tmux >/dev/null || { echo "record-tour: tmux is not installed" >&2; exit 1; }

OUT=assets/tour
WIDTH=100
HEIGHT=30
SESSION="rr-tui-tour-$$"
FRAMES=$(mktemp -d)
trap 'tmux kill-session -t "$SESSION" 2>/dev/null || true; rm -rf "$FRAMES"' EXIT
rm -f "$OUT"/*.txt "$OUT"/explorer.cast
mkdir -p "$OUT"

screen() { tmux capture-pane -p -t "$SESSION"; }

# Wait until the screen shows $1, then until it stops changing (a capture may catch a redraw).
wait_for() {
  local start=$SECONDS
  until screen | grep -qF -- "$1"; do
    if (( SECONDS - start > 15 )); then
      echo "record-tour: timed out waiting for \"$1\"; screen:" >&2
      screen >&2
      exit 1
    fi
    sleep 0.05
  done
  local last now
  last=$(screen)
  while sleep 0.2; now=$(screen); [ "$now" != "$last" ]; do last=$now; done
}

FRAME=0
# Keep the screen as the cast's next frame, shown for $1 seconds.
frame() {
  FRAME=$((FRAME + 1))
  screen >"$FRAMES/$(printf %03d "$FRAME")-$1.frame"
}

# Send keys ($2…), wait for the text $1, keep the frame (shown for a short pause).
keys() {
  local want=$1
  shift
  tmux send-keys -t "$SESSION" "$@"
  wait_for "$want"
  frame 0.6
}

# Keep the screen as the screenshot $OUT/$1.txt too, and show it longer in the cast.
shot() {
  screen >"$OUT/$1.txt"
  frame 3
}

# --no-config: the built-in defaults, whatever the recording person's config file says.
tmux new-session -d -s "$SESSION" -x "$WIDTH" -y "$HEIGHT" -c "$PWD" \
  "$BIN --no-config record-fixtures/llvm-two-kernels"

wait_for "4 of 4 instance(s)"
frame 1.5
shot 01-instances

# A filter, typed (the cast shows each key), then cleared.
keys "filter:" /
for c in s c a l e; do keys "$c" "$c"; done
keys "2 of 4 instance(s)" Enter
frame 1.5
keys "4 of 4 instance(s)" Escape

# The descriptor of the instance under the cursor.
keys "Descriptor ·" 2
shot 02-descriptor

# Two instances side by side: mark the first, select the second.
keys "marked" 1 m
keys "fields differ" j 2
shot 03-descriptors-compared

# Snapshots: the selected instance's recorded input → output, at its first difference.
keys "1 differing range(s)" 3
keys "differing bytes at offset" n
shot 04-snapshots

# The same bytes as 32-bit floats (t cycles u8, i8, … f32).
keys "· f32" t t t t t t t t t t t
shot 05-snapshots-f32

# Every key.
keys "Everywhere" "?"
shot 06-help
# Escape alone: followed at once by another key, a terminal reads the pair as Alt+key.
keys "n next diff" Escape
keys "Enter open" 1
frame 2

# The cast: asciicast v2, a header line then [time, "o", text] lines, each frame drawn from a
# cleared screen; the pause after a frame is in its file name.
python3 - "$FRAMES" "$WIDTH" "$HEIGHT" >"$OUT/explorer.cast" <<'PY'
import json, os, sys
frames, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print(json.dumps({"version": 2, "width": width, "height": height,
                  "title": "rr-tui explorer: the bundled llvm-two-kernels record",
                  "env": {"TERM": "xterm-256color"}}))
t = 0.0
for name in sorted(os.listdir(frames)):
    pause = float(name.rsplit("-", 1)[1].removesuffix(".frame"))
    with open(os.path.join(frames, name), encoding="utf-8") as f:
        text = f.read().rstrip("\n").replace("\n", "\r\n")
    print(json.dumps([round(t, 3), "o", "\x1b[H\x1b[2J" + text], ensure_ascii=False))
    t += pause
PY

echo "record-tour: wrote $(ls "$OUT"/*.txt | wc -l) screens and $OUT/explorer.cast ($FRAME frames)"
