#!/usr/bin/env bash
# repro_layout.sh RR-TUI DIR: softmax's reproducer stays ~3 % above replay in median and mean
# (repro_stats.sh), while the small fixtures' do not; softmax's instance restores 92 MiB in 8
# segments. Replay keeps its pristine copy at the snapshot file's offsets (each segment on a
# 4 KiB boundary) and allocates a 100 MB flush buffer after it; the reproducer packs the
# segments back to back (segment 1 is 1 KiB: every later one sits 3 KiB lower). Where the copy's
# source lines fall against its destination's decides what the restore leaves in L2. Variants:
#  aligned: the pristine copy's segments on 4 KiB boundaries, as replay's;
#  aligned+flushbuf: also 100 MB allocated after it, as replay's probes do.
set -u
RR=$1 D=$2
REPS=${REPS:-1000}
source "$(dirname "$0")/repro_lib.sh"
probe_record
S="$D/r/repro.cpp"
ALIGN='s/if (!COPY\[i\].host) \(device_bytes\|off\) += COPY\[i\].size;/if (!COPY[i].host) \1 += (COPY[i].size + 4095) \& ~size_t(4095);/; s/^            off += c.size;$/            off += (c.size + 4095) \& ~size_t(4095);/'
sed -e "$ALIGN" "$S" >"$D/r/aligned.cpp"
sed -e "$ALIGN" -e 's/^        } else {$/            { CUdeviceptr fb; CHECK(cuMemAlloc(\&fb, 100u << 20)); }\n&/' "$S" >"$D/r/flushbuf.cpp"
[ "$(grep -c 4095 "$D/r/aligned.cpp")" = 3 ] || echo "aligned: $(grep -c 4095 "$D/r/aligned.cpp") of 3 patterns"
grep -q "100u << 20" "$D/r/flushbuf.cpp" || echo "flushbuf: pattern not found"
for v in repro aligned flushbuf; do (cd "$D/r" && nvcc -O2 -std=c++17 $v.cpp -lcuda -o $v) || echo "$v did not build" & done
wait
summary() {
  "$RR" replay "$J" --json --repetitions "$REPS" 2>/dev/null | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "summary":
        print("%.3f/%.3f" % (e["kernel_ns"]["median"] / 1e3, e["kernel_ns"]["mean"] / 1e3))'
}
for round in 1 2 3; do
  echo "round $round: replay (median/mean) $(summary) | reproducer $(median "$D/r/repro") | aligned $(median "$D/r/aligned") | aligned+flushbuf $(median "$D/r/flushbuf")"
done
