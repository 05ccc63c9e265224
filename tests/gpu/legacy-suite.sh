#!/usr/bin/env bash
# Legacy LLVM records (LLVM 16–22) in the GPU suite (sourced by core-suite.sh, the core part;
# suite-lib.sh defines ok/bad/expect/py/$W/$RR/$LOG). The fixtures were written on the H100 by
# tests/gpu/legacy_harness.cu exactly as those recorders wrote them; their kernels are
# tests/gpu/kernels.cu built for sm_90, the committed cubin below.
echo "== legacy records (LLVM 16–22)" | tee -a "$LOG"
CUBIN=record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin
L16=record-fixtures/llvm16-saxpy/rr_saxpy.json
L18=record-fixtures/llvm18-two-kernels
L19=record-fixtures/llvm19-saxpy/rr_saxpy.json
# expect_also NAME PATTERN: the previous expect's output also matches PATTERN.
expect_also() { grep -qE "$2" "$W/out.txt" && ok "$1" || bad "$1" "output lacks /$2/"; }

# LLVM 16–17: no image (pass one), no start address (inferred, or given), no globals.
expect "LLVM 16: replay without --image asks for it" 2 "never saved the device image; pass --image FILE" -- "$RR" replay "$L16" --verify
expect "LLVM 16: inferred start + --image verifies" 0 "device memory verified" -- "$RR" replay "$L16" --image "$CUBIN" --verify --repetitions 3
expect_also "LLVM 16: the inferred start is said" "note: region start 0x7fe7aa000000, inferred"
expect "LLVM 16: explicit --base-address verifies" 0 "device memory verified" -- "$RR" replay "$L16" --image "$CUBIN" --base-address 0x7fe7aa000000 --verify
expect_also "LLVM 16: the given start is said" "note: region start 0x7fe7aa000000 \(--base-address\)"
expect "LLVM 16: a wrong --base-address is doubted (and cannot verify)" 1 "doubtful: the region \[0x7f0000000000" -- "$RR" replay "$L16" --image "$CUBIN" --base-address 0x7f0000000000 --verify
mkdir -p "$W/l16" && cp record-fixtures/llvm16-saxpy/* "$W/l16/"
expect "LLVM 16: --save-output writes a .replay_output beside the JSON" 0 "saved to .*/l16/rr_saxpy.replay_output" -- "$RR" replay "$W/l16/rr_saxpy.json" --image "$CUBIN" --verify --save-output
cmp -s "$W/l16/rr_saxpy.original.output" record-fixtures/llvm16-saxpy/rr_saxpy.original.output && ok "LLVM 16: .original.output untouched" || bad "LLVM 16: .original.output changed"
# Exit 1 as cmp (the kernel changed its input); the verdict names input → output only.
expect "LLVM 16: diff finds the replay output equal to the recorded one" 1 "^different: input → output$" -- "$RR" diff "$W/l16/rr_saxpy.json"
# Without num_teams/thread_limit clauses the LLVM 16 plugin chose the geometry: derived from
# LoopTripCount (1024 → 8 × 128); saxpy is a grid-stride loop, so the bytes must still match.
mkdir -p "$W/l16derived" && cp record-fixtures/llvm16-saxpy/* "$W/l16derived/"
py "$W/l16derived/rr_saxpy.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["NumTeamsClause"] = 0; d["ThreadLimitClause"] = 0
open(sys.argv[1], "w").write(json.dumps(d, separators=(",", ":"), sort_keys=True))
PY
expect "LLVM 16: derived geometry (no clauses) verifies" 0 "device memory verified" -- "$RR" replay "$W/l16derived/rr_saxpy.json" --image "$CUBIN" --verify
expect_also "LLVM 16: the derived geometry is said to be a guess" "derived 8 × 128 from LoopTripCount 1024.*a guess"

# LLVM 18: at BumpAllocVAStart, with the count-less globals restored.
for j in "$L18"/*.json; do
  expect "LLVM 18: $(basename "$j") replays and verifies x3" 0 "device memory verified" -- "$RR" replay "$j" --verify --repetitions 3
done
mkdir -p "$W/l18glob" && cp "$L18"/rr_scale_global.* "$W/l18glob/"
py "$W/l18glob/rr_scale_global.globals" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b"g_scale\0") + len(b"g_scale\0") + 4   # the name, then the u32 size, then the data
b[i:i+4] = struct.pack("<f", 123.0)
open(sys.argv[1], "wb").write(b)
PY
expect "LLVM 18: globals are restored (altered g_scale fails verification)" 1 "failed to verify" -- "$RR" replay "$W/l18glob/rr_scale_global.json" --verify
mkdir -p "$W/l18" && cp "$L18"/* "$W/l18/"
expect "LLVM 18: --save-output writes a .replay_output" 0 "saved to .*/l18/rr_saxpy.replay_output" -- "$RR" replay "$W/l18/rr_saxpy.json" --verify --save-output
cmp -s "$W/l18/rr_saxpy.original.output" "$L18/rr_saxpy.original.output" && ok "LLVM 18: .original.output untouched" || bad "LLVM 18: .original.output changed"

# LLVM 19–22: the argument values are lost; refused with the reason, still explorable.
expect "LLVM 19: replay is refused with the reason" 2 "host addresses of the argument slots .* cannot be replayed" -- "$RR" replay "$L19" --verify
expect "LLVM 19: still inspectable" 0 "LLVM 19–22 layout" -- "$RR" inspect "$L19"
