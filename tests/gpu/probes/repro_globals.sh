#!/usr/bin/env bash
# repro_globals.sh RR-TUI DIR: the softmax reproducer's gap to replay is neither the clock
# (repro_ramp.sh: 1979 MHz in every quartile of both) nor the L2 state alone (repro_l2.sh: it
# holds with L2 flushed on both sides). What is left between the two restores: replay queues the
# device copies AND the globals' host-to-device copies on the kernel's stream and waits for the
# stream; the reproducer copies synchronously on the legacy default stream and waits for the
# context. SoftMax's module has 28 one-byte globals. Variants, two rounds each, against replay:
#  noglob: the globals not written again (the kernel does not write them);
#  async:  both kinds of copy on the kernel's stream, then cuStreamSynchronize (replay's way);
#  globfirst: the globals written before the device copies;
#  asyncglob: only the globals on the kernel's stream.
set -u
RR=$1 D=$2
REPS=${REPS:-300}
source "$(dirname "$0")/repro_lib.sh"
probe_record
S="$D/r/repro.cpp"
STREAM_DECL='s/^struct Restorer {/static CUstream RR_STREAM = nullptr;\n&/'
STREAM_SET='s/^Timings time_launches(unsigned n, const Restorer \&restore, Launcher \&launch, CUstream stream) {/&\n    RR_STREAM = stream;/'
GLOB='            if (GLOBAL\[i\].size) CHECK(cuMemcpyHtoD(globals.where\[i\], globals.values.data() + GLOBAL\[i\].offset, GLOBAL\[i\].size));'
sed -e "s/^$GLOB\$/            if (false) {}/" "$S" >"$D/r/noglob.cpp"
sed -e "$STREAM_DECL" -e "$STREAM_SET" \
    -e 's/CHECK(cuMemcpyDtoD(c.addr, pristine + off, c.size));/CHECK(cuMemcpyDtoDAsync(c.addr, pristine + off, c.size, RR_STREAM));/' \
    -e 's/CHECK(cuMemcpyHtoD(globals.where\[i\], globals.values.data() + GLOBAL\[i\].offset, GLOBAL\[i\].size));/CHECK(cuMemcpyHtoDAsync(globals.where[i], globals.values.data() + GLOBAL[i].offset, GLOBAL[i].size, RR_STREAM));/' \
    -e 's/^        CHECK(cuCtxSynchronize());$/        CHECK(RR_STREAM ? cuStreamSynchronize(RR_STREAM) : cuCtxSynchronize());/' "$S" >"$D/r/async.cpp"
sed -e "$STREAM_DECL" -e "$STREAM_SET" \
    -e 's/CHECK(cuMemcpyHtoD(globals.where\[i\], globals.values.data() + GLOBAL\[i\].offset, GLOBAL\[i\].size));/CHECK(cuMemcpyHtoDAsync(globals.where[i], globals.values.data() + GLOBAL[i].offset, GLOBAL[i].size, RR_STREAM));/' \
    -e 's/^        CHECK(cuCtxSynchronize());$/        if (RR_STREAM) CHECK(cuStreamSynchronize(RR_STREAM));\n&/' "$S" >"$D/r/asyncglob.cpp"
# globfirst: the globals' loop moved before the device copies (both loops are two lines and a
# block; python does the move).
python3 - "$S" "$D/r/globfirst.cpp" <<'PY'
import sys
s = open(sys.argv[1]).read()
loop = "        for (size_t i = 0; i < N_GLOBAL; i++)\n            if (GLOBAL[i].size) CHECK(cuMemcpyHtoD(globals.where[i], globals.values.data() + GLOBAL[i].offset, GLOBAL[i].size));\n"
start = "    void operator()() const {\n"
assert loop in s and start in s, "globfirst: patterns not found"
s = s.replace(loop, "").replace(start, start + loop)
open(sys.argv[2], "w").write(s)
PY
for v in repro noglob async asyncglob globfirst; do
  [ $v != repro ] && cmp -s "$S" "$D/r/$v.cpp" && echo "$v: no change made"
  (cd "$D/r" && nvcc -O2 -std=c++17 $v.cpp -lcuda -o $v) || echo "$v did not build" &
done
wait
for round in 1 2 3; do
  line="round $round: replay $(summary) reproducer $(median "$D/r/repro")"
  for v in noglob async asyncglob globfirst; do line="$line $v $(median "$D/r/$v")"; done
  echo "$line"
done
