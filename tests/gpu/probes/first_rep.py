"""Times a replay from the outside: `python3 first_rep.py RR-TUI JSON [replay args...]` runs
`RR-TUI replay --json JSON ...` and prints when the first repetition's event arrived, how long
verification took (from the summary to the verify event), the restore and the outcome."""
import json
import subprocess
import sys
import time

start = time.perf_counter()
p = subprocess.Popen(
    [sys.argv[1], "replay", "--json", sys.argv[2], *sys.argv[3:]],
    stdout=subprocess.PIPE,
    text=True,
)
first_rep = summary = verify_at = None
timeline = []
restore = verified = on_device = None
for line in p.stdout:
    now = time.perf_counter() - start
    try:
        e = json.loads(line)
    except ValueError:
        continue
    kind = e.get("event")
    label = e.get("name", kind) if kind == "phase" else kind
    if not timeline or timeline[-1][0] != label:
        timeline.append((label, now))
    if kind == "rep" and first_rep is None:
        first_rep = now
    elif kind == "summary":
        summary = now
    elif kind == "restore":
        restore = e.get("seconds")
    elif kind == "verify":
        verify_at = now
        verified = e.get("passed")
        on_device = e.get("on_device", False)
rc = p.wait()
total = time.perf_counter() - start
fmt = lambda v: "none" if v is None else f"{v:.3f}"
print(
    f"rc={rc} first_rep_s={fmt(first_rep)} restore_s={fmt(restore)} "
    f"verify_s={fmt(verify_at - summary if verify_at and summary else None)} "
    f"verified={verified} on_device={on_device} total_s={total:.3f}"
)
print("  timeline: " + " ".join(f"{k}@{t:.2f}" for k, t in timeline))
