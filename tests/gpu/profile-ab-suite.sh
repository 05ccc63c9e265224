# A vs B profiles (tests/gpu/run-part.sh profile-ab; needs Nsight Compute): ab_kernel.cu recorded
# with a deliberately slow kernel (SLOW=4), profiled, then profiled with its source without SLOW
# as the candidate: the candidate in its own range and its own report, and faster (a figure:
# the candidate's duration against the recorded kernel's, goal <= 0.97). Figures also go to
# $OUTDIR/profile-bench.txt.
echo "== profile --candidate (A vs B)" | tee -a "$LOG"
record_ab_kernel || return 0
note_cmd "$RR" profile "$ABJ" --json
timeout 300 "$RR" profile "$ABJ" --json >"$W/pa.json" 2>>"$LOG" </dev/null; rca=$?
note_cmd "$RR" profile "$ABJ" --candidate tests/gpu/samples/ab_kernel.cu -D SLOW=0 --json
timeout 300 "$RR" profile "$ABJ" --candidate tests/gpu/samples/ab_kernel.cu -D SLOW=0 --json >"$W/pb.json" 2>>"$LOG" </dev/null; rcb=$?
py "$W/pa.json" "$W/pb.json" "$rca" "$rcb" <<'PY' | tee -a "$LOG" "$OUTDIR/profile-bench.txt"
import json, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/gpu")
from figure import figure, check
name = "profile A vs B: the candidate's duration (ab_scale, SLOW=0) against the recorded kernel's (SLOW=4)"
try:
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    da, db = a["profile"]["duration_ns"], b["profile"]["duration_ns"]
except (OSError, ValueError, KeyError, TypeError) as e:
    check("profile --candidate: both profiles", False, "exit %s / %s: %r" % (sys.argv[3], sys.argv[4], e))
    figure("profile", name, None, "<=", 0.97, unit="x", detail=repr(e))
    sys.exit(0)
print("profile A vs B (ab_scale SLOW=4 recorded, the source with SLOW=0 as candidate): %.2f us vs %.2f us = %.3fx; SM %.1f %% vs %.1f %%, memory %.1f %% vs %.1f %%" % (
    da / 1e3, db / 1e3, db / da, a["profile"]["sm_throughput_pct"], b["profile"]["sm_throughput_pct"], a["profile"]["memory_throughput_pct"], b["profile"]["memory_throughput_pct"]))
check("profile --candidate: the candidate in its own range and report (%s)" % os.path.basename(str(b.get("report"))),
      str(b.get("candidate", "")).endswith("ab_kernel.cu") and str(b.get("report", "")).endswith(".candidate.ncu-rep")
      and a.get("report") != b.get("report"), "reports %s / %s" % (a.get("report"), b.get("report")))
figure("profile", name, db / da, "<=", 0.97, unit="x", measured=db / 1e3, measured_unit="µs", limit="the recorded kernel",
       limit_value=da / 1e3, limit_unit="µs")
PY
