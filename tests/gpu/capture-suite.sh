#!/usr/bin/env bash
# What modern stacks run (tests/gpu/run-part.sh capture; suite-lib.sh defines
# ok/bad/skip/expect/$W/$RR/$LOG): kernels inside CUDA graphs (PyTorch capture, torch.compile
# reduce-overhead, JAX command buffers, the explicit graph API), pinned host memory, textures and
# surfaces, arguments that point outside the recorded memory, a kernel that waits for a thread a
# replay does not have, the recorder's account of what it did not record, both ways the recorder
# sees launches. Every program runs plainly and recorded with the same result, and every
# recorded instance replays at its recorded addresses and verifies. (The launch storm: the storm
# part, storm-suite.sh. PyTorch and JAX checks are skips where they do not import.)
SAMPLES=tests/gpu/samples
echo "== recorder: graphs, host memory, textures" | tee -a "$LOG"
for s in graph_api host_memory textures; do build_sample "$s"; done
source tests/gpu/capture-lib.sh

capture graph_api "" -- "$W/samples/graph_api"
graph_at_least graph_api 3
strict_check graph_api "$W/cap-graph_api"
# After cuGraphExecKernelNodeSetParams and cuGraphExecUpdate: later executions of the nodes.
capture graph_api_updated "--kernels k_sum|k_square --occurrence 3" -- "$W/samples/graph_api"
graph_at_least graph_api_updated 2
if have torch; then
  capture torch_capture "" -- python3 "$SAMPLES/torch_graphs.py" capture
  graph_at_least torch_capture 1
  capture torch_compile "--occurrence 2" -- python3 "$SAMPLES/torch_graphs.py" compile
  graph_at_least torch_compile 1
  "$RR" report "$W/cap-torch_capture" >"$W/report.txt" 2>>"$LOG"
  grep -q "^=== End Kernel Record Report ===" "$W/report.txt" && grep -A1 "^=== End Kernel Record Report ===" "$W/report.txt" | grep -q "^rr-tui: launches:" \
    && ok "report prints the recorder's account after LLVM's table" || bad "report trailer" "$(tail -n 3 "$W/report.txt" | tr '\n' ' ')"
  cp "$W/report.txt" "$OUTDIR/capture-report.txt" 2>/dev/null
else
  skip "record torch_capture, torch_compile and the report's trailer" "$(what_missing torch)"
fi
if have jax; then
  capture jax "" -- python3 "$SAMPLES/jax_graphs.py"
  graph_at_least jax 1
else
  skip "record jax (JAX graphs)" "$(what_missing jax)"
fi

capture host_memory "" -- "$W/samples/host_memory"
python3 -c "import json,glob,sys; sys.exit(0 if any(s.get('Kind') == 'host' for f in glob.glob(sys.argv[1] + '/*.json') for s in json.load(open(f))['Segments']) else 1)" "$W/cap-host_memory" \
  && ok "host memory is recorded as segments of its own kind" || bad "host memory segments"
capture textures "" -- "$W/samples/textures"
python3 - "$W/cap-textures" <<'PY' && ok "texture and surface objects and their CUDA arrays are recorded" || bad "texture objects"
import glob, json, sys
kinds, arrays = set(), 0
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f))
    kinds |= {o["Kind"] for o in d.get("Objects", [])}
    arrays += sum(s.get("Kind") == "array" for s in d["Segments"])
print("objects:", sorted(kinds), "array segments:", arrays)
sys.exit(0 if kinds == {"texture", "surface"} and arrays >= 2 else 1)
PY
T=$(grep -l k_tex_array "$W"/cap-textures/*.json | head -1)
expect "inspect shows a texture object" 0 "texture object .* linear filtering" -- "$RR" inspect "$T"

# Arguments outside the recorded memory: named by record, check and replay; --strict refuses.
"$RR" record --dir "$W/cap-global" -- "$W/samples/host_memory" global >/dev/null 2>"$W/global.err"; cat "$W/global.err" >>"$LOG"
grep -q "points outside the recorded memory" "$W/global.err" && ok "record names an argument outside the recorded memory" || bad "record outside warning" "$(tail -n 3 "$W/global.err" | tr '\n' ' ')"
G=$(ls "$W"/cap-global/*.json | head -1)
expect "check warns about it" 0 "warning: argument 0 = 0x[0-9a-f]+ \(device memory when recorded\) points outside" -- "$RR" check "$W/cap-global"
expect "replay --strict refuses it" 2 "refuses to run" -- "$RR" replay "$G" --strict

# A kernel that waited for another thread of the program: the replay's watchdog names it.
"$RR" record --dir "$W/cap-wait" -- "$W/samples/host_memory" wait >>"$LOG" 2>&1 && ok "record a kernel waiting on host memory" || bad "record wait"
WJ=$(ls "$W"/cap-wait/*.json 2>/dev/null | head -1)
expect "watchdog ends a replay whose kernel waits for a thread that is not there" 1 "kernel k_wait.* has not finished after 3 s: it may be waiting for host memory it reads \(segment [0-9]+: " -- timeout 60 "$RR" replay "$WJ" --kernel-timeout 3

# Both ways of seeing the program record the same instances from the same images.
if have torch; then
  note_cmd "$RR" record --dir "$W/cap-cupti-torch" --hooks cupti -- python3 "$SAMPLES/torch_ops.py"
  timeout 300 "$RR" record --dir "$W/cap-cupti-torch" --hooks cupti -- python3 "$SAMPLES/torch_ops.py" >/dev/null 2>>"$LOG"
  note_cmd "$RR" record --dir "$W/cap-interpose-torch" -- python3 "$SAMPLES/torch_ops.py"
  timeout 300 "$RR" record --dir "$W/cap-interpose-torch" -- python3 "$SAMPLES/torch_ops.py" >/dev/null 2>>"$LOG"
  a=$(ls "$W"/cap-cupti-torch/*.json 2>/dev/null | xargs -n1 basename | sort | tr '\n' ' '); b=$(ls "$W"/cap-interpose-torch/*.json 2>/dev/null | xargs -n1 basename | sort | tr '\n' ' ')
  [ -n "$a" ] && [ "$a" = "$b" ] && ok "interposed entry points and CUPTI callbacks record the same instances (PyTorch + cuBLAS + Triton)" || bad "hooks differ" "cupti: $a; interpose: $b"
  a=$(ls "$W"/cap-cupti-torch/images 2>/dev/null | tr '\n' ' '); b=$(ls "$W"/cap-interpose-torch/images 2>/dev/null | tr '\n' ' ')
  [ -n "$a" ] && [ "$a" = "$b" ] && ok "the same device images (cubins named by content) both ways" || bad "images differ" "cupti: $a; interpose: $b"
  grep -h "were seen\|kept as the program loaded" "$W"/cap-interpose-torch/report.txt "$W"/cap-cupti-torch/report.txt >>"$LOG" 2>&1
  grep -q "everything was seen through the recorder's own driver entry points" "$W/cap-interpose-torch/report.txt" && ok "rr-tui record preloads the recorder (every hook interposed, CUPTI not injected)" || bad "interposition not active" "$(grep -h 'were seen' "$W"/cap-interpose-torch/report.txt)"
else
  skip "interposed entry points and CUPTI callbacks record the same instances (PyTorch)" "$(what_missing torch)"
fi
