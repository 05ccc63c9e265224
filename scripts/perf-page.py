#!/usr/bin/env python3
"""The performance page: benchmark results as JSON under docs/performance/, and
docs/PERFORMANCE.md rendered from them. No figure of the page is typed by hand.

    python3 scripts/perf-page.py render
        docs/PERFORMANCE.md from every docs/performance/*.json: the newest GPU run and the newest
        CPU run in full (machine, commit, date, parts, one table per area), older runs listed.
    python3 scripts/perf-page.py cpu [--bench report_scale,diff_throughput,explorer_frames]
                                     [--no-build] [--from NAME=FILE ...]
        The CPU benchmarks (`cargo build --release`, then `cargo bench --bench NAME` each; or
        outputs saved before, --from), their printed figures parsed into a run JSON
        (docs/performance/DATE-COMMIT-cpu.json), then render.
    python3 scripts/perf-page.py gpu [--part a,b] [RR-TUI]
        On a GPU machine: tests/gpu/run-parts.sh (every part, or those named; REQUIRE_ALL=1),
        then add its run JSON and render.
    python3 scripts/perf-page.py add FILE...
        Run JSONs written elsewhere (run-parts.sh writes one into $OUT on the GPU machine) copied
        into docs/performance/; a file of the same name (the same date, commit and GPU: a run
        split over several calls) is merged part by part. Then render.
    python3 scripts/perf-page.py collect --results FILE --run ID --out-dir DIR [--command TEXT]
        (run-parts.sh) this run's part records and figures from the results file, with the
        machine's facts, the commit and the date: DIR/DATE-COMMIT-GPU.json.

A run JSON: {"schema": 1, "kind": "gpu"|"cpu", "name", "date", "commit", "dirty", "command",
"machine": {...}, "parts": [{"part", "passed", "failed", "skipped", "seconds", "status", ...}],
"totals": {"passed", "failed", "skipped"}, "figures": [{"area", "name", "value", "unit",
"goal_op", "goal", "low", "high", "ok", "limit_name", "limit_value", "limit_unit", "measured",
"measured_unit", "part", ...}]}. Standard library only.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.path.join(ROOT, "docs", "performance")
PAGE = os.path.join(ROOT, "docs", "PERFORMANCE.md")
SCHEMA = 1
BENCHES = ["report_scale", "diff_throughput", "explorer_frames"]

# Areas in the page's order, with their titles (areas not listed follow, by name).
AREAS = [
    ("replay", "Replay and restore"),
    ("tune", "Tuning"),
    ("multi-gpu", "Several GPUs"),
    ("record", "Recording"),
    ("storm", "Launch storm (recorder loaded, recording nothing)"),
    ("model", "Model-sized processes"),
    ("ab", "A/B replays and compile-time tuning"),
    ("profile", "Profiles"),
    ("energy", "Energy"),
    ("explorer", "Explorer"),
    ("cpu-report", "Browsing (CPU)"),
    ("cpu-diff", "Comparing snapshots (CPU)"),
    ("cpu-explorer", "Explorer (CPU)"),
    ("cpu", "Other CPU figures"),
]


# ---------------------------------------------------------------- facts of the machine

def sh(cmd, timeout=30):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.stdout if p.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_facts(gpu=True, where=ROOT):
    m = {}
    try:
        cpuinfo = open("/proc/cpuinfo").read()
        names = re.findall(r"(?m)^model name\s*:\s*(.+)$", cpuinfo)
        m["cpu"] = names[0].strip() if names else platform.processor()
        m["sockets"] = len(set(re.findall(r"(?m)^physical id\s*:\s*(\d+)$", cpuinfo))) or None
    except OSError:
        m["cpu"] = platform.processor()
    m["cores"] = os.cpu_count()
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", open("/proc/meminfo").read()).group(1))
        m["memory_gib"] = round(kb / 2**20, 1)
    except (OSError, AttributeError):
        pass
    m["kernel"] = platform.release()
    df = sh(["df", "-P", "-B1", "-T", where]).splitlines()
    if len(df) >= 2:
        f = df[1].split()
        if len(f) >= 7:
            m["disk"] = {"device": f[0], "fs": f[1], "size_gib": round(int(f[2]) / 2**30, 1),
                         "free_gib": round(int(f[4]) / 2**30, 1), "mount": f[6]}
    blk = sh(["lsblk", "-d", "-n", "-o", "NAME,MODEL,SIZE,ROTA,TYPE"]).splitlines()
    disks = [" ".join(l.split()) for l in blk if l.strip().endswith("disk")]
    if disks:
        m["block_devices"] = disks
    if gpu:
        q = sh(["nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,pci.bus_id",
                "--format=csv,noheader"])
        gpus = []
        for line in q.splitlines():
            f = [x.strip() for x in line.split(",")]
            if len(f) >= 5:
                gpus.append({"index": int(f[0]) if f[0].isdigit() else f[0], "name": f[1], "driver": f[2],
                             "memory": f[3], "bus": f[4]})
        m["gpus"] = gpus
        if gpus:
            m["gpu"] = gpus[0]["name"]
            m["gpu_count"] = len(gpus)
            m["driver"] = gpus[0]["driver"]
            m["gpu_memory"] = gpus[0]["memory"]
        cv = re.search(r"CUDA Version:\s*([\d.]+)", sh(["nvidia-smi"]))
        if cv:
            m["cuda_driver_api"] = cv.group(1)
        nv = re.search(r"release ([\d.]+)", sh(["nvcc", "--version"]))
        if nv:
            m["nvcc"] = nv.group(1)
        ncu = sh(["ncu", "--version"]).strip().splitlines()
        if ncu:
            m["ncu"] = ncu[-1].strip()
    return m


def commit_facts():
    """(commit, dirty): $COMMIT, else git, else a .commit file, else "unknown"."""
    c = os.environ.get("COMMIT", "").strip()
    dirty = None
    if not c:
        c = sh(["git", "-C", ROOT, "rev-parse", "HEAD"]).strip()
        if c:
            dirty = bool(sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).strip())
    if not c and os.path.exists(os.path.join(ROOT, ".commit")):
        c = open(os.path.join(ROOT, ".commit")).read().strip()
    if os.environ.get("COMMIT_DIRTY") in ("0", "1"):
        dirty = os.environ["COMMIT_DIRTY"] == "1"
    return c or "unknown", dirty


def slug(text):
    s = re.sub(r"[^a-z0-9]+", "-", text.lower().replace("nvidia", "")).strip("-")
    return s or "unknown"


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_name(date, commit, what):
    return "%s-%s-%s" % (date[:10], commit[:10] if commit != "unknown" else "unknown", slug(what))


def totals(parts):
    return {k: sum(p.get(k, 0) for p in parts) for k in ("passed", "failed", "skipped")}


# ---------------------------------------------------------------- collect (GPU runs)

def collect(results, run, out_dir, command):
    parts, extra, figures = {}, {}, []
    for line in open(results):
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("run") != run:
            continue
        if r.get("kind") == "part":
            parts[r["part"]] = r
        elif r.get("kind") == "part-limit":
            extra.setdefault(r["part"], []).append(r)
        elif r.get("kind") == "figure":
            figures.append(r)
    plist = []
    for name in list(parts) + [p for p in extra if p not in parts]:
        p = dict(parts.get(name) or {"part": name, "passed": 0, "failed": 0, "skipped": 0, "status": "no summary"})
        for e in extra.get(name, []):
            p["failed"] = p.get("failed", 0) + e.get("failed", 1)
            p.setdefault("failed_checks", []).append(e.get("message", "part limit"))
            p["status"] = e.get("status", p.get("status"))
        p.pop("kind", None)
        plist.append(p)
    commit, dirty = commit_facts()
    date = now_utc()
    mach = machine_facts(gpu=True, where=tempfile.gettempdir())
    doc = {"schema": SCHEMA, "kind": "gpu", "name": run_name(date, commit, mach.get("gpu", "no-gpu")),
           "date": date, "commit": commit, "dirty": dirty, "command": command,
           "require_all": os.environ.get("REQUIRE_ALL") == "1", "runs": [run], "machine": mach,
           "parts": plist, "totals": totals(plist), "figures": figures}
    path = os.path.join(out_dir, doc["name"] + ".json")
    if os.path.exists(path):  # another call of the same run into the same $OUT
        doc = merge(json.load(open(path)), doc)
    write_json(path, doc)
    print(path)
    return path


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def same_machine(a, b):
    keys = ("gpu", "gpu_count", "driver", "cpu", "cores")
    return all(a.get(k) == b.get(k) for k in keys)


def merge(old, new):
    """`new`'s parts replace `old`'s of the same name (with their figures); the rest is kept."""
    names = {p["part"] for p in new.get("parts", [])}
    parts = [p for p in old.get("parts", []) if p["part"] not in names]
    figures = [f for f in old.get("figures", []) if f.get("part") not in names]
    newparts = [dict(p) for p in new.get("parts", [])]
    if not same_machine(old.get("machine", {}), new.get("machine", {})):
        for p in newparts:
            p["machine"] = new.get("machine")
    parts += newparts
    figures += new.get("figures", [])
    doc = dict(old)
    doc["parts"] = parts
    doc["figures"] = figures
    doc["totals"] = totals(parts)
    doc["runs"] = list(dict.fromkeys(old.get("runs", []) + new.get("runs", [])))
    doc["date"] = max(old.get("date", ""), new.get("date", ""))
    cmds = [c for c in (old.get("command"), new.get("command")) if c]
    doc["command"] = "; ".join(dict.fromkeys(cmds))
    return doc


def add(files, directory, render_after=True):
    os.makedirs(directory, exist_ok=True)
    for f in files:
        doc = json.load(open(f))
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or doc.get("kind") not in ("gpu", "cpu"):
            sys.exit("%s: not a run JSON of schema %d" % (f, SCHEMA))
        dest = os.path.join(directory, doc["name"] + ".json")
        if os.path.exists(dest):
            doc = merge(json.load(open(dest)), doc)
        write_json(dest, doc)
        print("wrote", os.path.relpath(dest, ROOT))
    if render_after:
        render(directory, PAGE)


# ---------------------------------------------------------------- CPU benchmarks

NUM = r"([0-9]+(?:\.[0-9]+)?)"
GOAL = r"\(goal\s*(<=|>=|<|>|≤|≥)\s*([0-9][0-9 ,.]*)\s*([^)]*)\)"


def fig(area, name, value, goal_op="-", goal=None, unit="", **kw):
    f = {"kind": "figure", "part": "cpu", "area": area, "name": name, "value": value, "unit": unit,
         "goal_op": None if goal is None else goal_op, "goal": goal, "low": None, "high": None,
         "limit_name": None, "limit_value": None, "limit_unit": None, "measured": None,
         "measured_unit": None}
    f.update(kw)
    f["ok"] = judge(f)
    return f


def judge(f):
    g, v, op = f.get("goal"), f.get("value"), f.get("goal_op")
    if g is None or op is None:
        return None
    if v is None:
        return False
    lo, hi = f.get("low"), f.get("high")
    if lo is not None and hi is not None:
        if op in (">=", ">"):
            v = max(lo, hi)
        elif op in ("<=", "<"):
            v = min(lo, hi)
    if op == ">=":
        return v >= g
    if op == "<=":
        return v <= g
    if op == ">":
        return v > g
    if op == "<":
        return v < g
    if op == "in":
        return g[0] <= v <= g[1]
    return None


def ffloat(s):
    return float(s.replace(" ", "").replace(",", "").replace("\u202f", "").replace("\u00a0", ""))


def op(s):
    return {"≤": "<=", "≥": ">="}.get(s, s) if s else "-"


def goal_of(m, i):
    """(operator, value) of the optional GOAL group starting at group i of match m."""
    if m.group(i):
        return op(m.group(i)), ffloat(m.group(i + 1))
    return "-", None


def _report(m, text):
    # groups: 1 instances, 2 what, 3 in-process|process, 4 value, 5.. goal
    n, what, how, v = m.group(1).strip(), m.group(2), m.group(3), float(m.group(4))
    if how == "in-process":
        return [fig("cpu-report", "report, %s instances, %s: in-process" % (n, what), v, unit="ms")]
    o, g = goal_of(m, 5)
    return [fig("cpu-report", "report, %s instances, %s: `rr-tui report` process" % (n, what), v, o, g, unit="ms")]


def _diff_ratio(m, text):
    kw = {}
    ours = re.search(r"(?m)^rr-tui index, 1 GiB with 5 differing ranges: " + NUM + r" s \(" + NUM + r" GB/s\)", text)
    cmp_ = re.search(r"(?m)^cmp, identical 1 GiB files: " + NUM + r" s \(" + NUM + r" GB/s\)", text)
    if ours:
        kw.update(measured=float(ours.group(2)), measured_unit="GB/s")
    if cmp_:
        kw.update(limit_name="cmp on identical 1 GiB files", limit_value=float(cmp_.group(2)), limit_unit="GB/s")
    o, g = goal_of(m, 2)
    return [fig("cpu-diff", "byte comparison of 1 GiB with 5 differing ranges, against cmp", float(m.group(1)), o, g,
                unit="x", **kw)]


def _diff_rss(m, text):
    o, g = goal_of(m, 3)
    return [fig("cpu-diff", "`rr-tui diff a b` (1 GiB): peak resident memory", float(m.group(2)), o, g, unit="MiB"),
            fig("cpu-diff", "`rr-tui diff a b` (1 GiB): wall time", float(m.group(1)), unit="s")]


def _typed(m, text):
    return [fig("cpu-diff", "typed f32 comparison (rtol 1e-6), 1 GiB, %s: %s cores against one" % (m.group(1), m.group(4)),
                float(m.group(5)), unit="x", measured=float(m.group(3)), measured_unit="s",
                limit_name="one core", limit_value=float(m.group(2)), limit_unit="s")]


def _sparse(m, text):
    return [fig("cpu-diff", "sparse 4 GiB pair: index of the identical pair, against cmp", float(m.group(3)), ">=", 1.0,
                unit="x", measured=float(m.group(2)), measured_unit="s", limit_name="cmp (identical pair)",
                limit_value=float(m.group(1)), limit_unit="s"),
            fig("cpu-diff", "sparse 4 GiB pair: index of the pair with differences", float(m.group(4)), unit="s")]


def _sparse_process(m, text):
    return [fig("cpu-diff", "`rr-tui diff sa sb` (sparse 4 GiB pair, the process)", float(m.group(1)), unit="s")]


def _first_frame(m, text):
    o, g = goal_of(m, 3)
    return [fig("cpu-explorer", "first frame, %s instances (load + draw)" % m.group(1).strip(), float(m.group(2)), o, g,
                unit="ms")]


def _streaming(m, text):
    o, g = goal_of(m, 6)
    what = "frame while a replay streams 10 000 repetitions/s"
    return [fig("cpu-explorer", what + ": slowest of the frames", float(m.group(5)), o, g, unit="ms"),
            fig("cpu-explorer", what + ": median", float(m.group(3)), unit="ms"),
            fig("cpu-explorer", what + ": p99", float(m.group(4)), unit="ms"),
            fig("cpu-explorer", "repetitions per second the replay screen sustains", float(m.group(9)), unit="/s")]


def _big(m, text):
    o, g = goal_of(m, 6)
    return [fig("cpu-explorer", "8 GiB snapshots: peak resident memory while viewing", float(m.group(5)), o, g, unit="MiB"),
            fig("cpu-explorer", "8 GiB snapshots: index rate", float(m.group(2)), unit="GB/s")]


OPT_GOAL = r"(?:\s*" + GOAL + r")?"
N_INST = r"([\d ,\u202f\u00a0]+)"
# Per benchmark: (regex over one printed line, handler(match, whole output) -> figures). Written
# against the println! of benches/*.rs; a line no rule matches but holding "(goal OP N UNIT)"
# is still read, by parse_generic.
RULES = {
    "report_scale": [
        (r"^report, " + N_INST + r" instances, (.+?): (in-process|`rr-tui report` process) median " + NUM + r" ms" + OPT_GOAL,
         _report),
    ],
    "diff_throughput": [
        (r"^throughput ratio rr-tui / cmp: " + NUM + OPT_GOAL, _diff_ratio),
        (r"^`rr-tui diff a b` \(1 GiB\): " + NUM + r" s, peak resident memory " + NUM + r" MiB" + OPT_GOAL, _diff_rss),
        (r"^typed f32 comparison \(rtol 1e-6\), 1 GiB, (.+?): " + NUM + r" s on one core, " + NUM
         + r" s on (\d+) cores \(" + NUM + r"x\)", _typed),
        (r"^sparse 4 GiB pair \(64 MiB of data each\): cmp \(identical pair\) " + NUM + r" s; rr-tui index: identical pair "
         + NUM + r" s \(" + NUM + r"x cmp's speed\), pair with differences " + NUM + r" s", _sparse),
        (r"^`rr-tui diff sa sb` \(sparse 4 GiB pair, the process\): " + NUM + r" s", _sparse_process),
    ],
    "explorer_frames": [
        (r"^first frame, " + N_INST + r" instances: " + NUM + r" ms" + OPT_GOAL, _first_frame),
        (r"^replay screen while streaming: (\d+) repetitions in " + NUM + r" s of work; .*?median " + NUM + r" ms, p99 "
         + NUM + r" ms, max " + NUM + r" ms" + OPT_GOAL + r"; sustainable " + NUM + r" repetitions/s", _streaming),
        (r"^8 GiB snapshots: indexed in " + NUM + r" s \(" + NUM + r" GB/s\), (\d+) differing ranges; .*?"
         r"resident memory (\d+) MiB before, peak (\d+) MiB while viewing" + OPT_GOAL, _big),
    ],
}


def parse_generic(bench, line):
    """A line holding "(goal OP N UNIT)" that no rule read: the number right before it, checked."""
    g = re.search(GOAL, line)
    if not g:
        return []
    head = line[:g.start()].rstrip()
    n = re.search(NUM + r"\s*([A-Za-z/%µ]*)$", head)
    if not n:
        return []
    name = re.sub(r"\s+", " ", head[:n.start()]).strip().rstrip(":,=; ").strip()
    return [fig("cpu", "%s: %s" % (bench, name or "figure"), float(n.group(1)), op(g.group(1)), ffloat(g.group(2)),
                unit=n.group(2) or g.group(3).strip())]


def parse_bench(bench, text):
    figs = []
    rules = [(re.compile(r), h) for r, h in RULES.get(bench, [])]
    for line in text.splitlines():
        line = line.strip()
        for rx, handler in rules:
            m = rx.search(line)
            if m:
                figs += handler(m, text)
                break
        else:
            figs += parse_generic(bench, line)
    for f in figs:
        f["bench"] = bench
        f["part"] = "cpu:" + bench
    return figs


def cpu(benches, build, sources, directory, render_after=True):
    outputs, codes = {}, {}
    for spec in sources:
        name, _, path = spec.partition("=")
        outputs[name] = open(path).read()
        codes[name] = 0
    todo = [b for b in benches if b not in outputs]
    if todo:
        if not shutil.which("cargo"):
            sys.exit("cargo is not installed: run on a machine with the Rust toolchain, or pass saved outputs with --from NAME=FILE")
        if build:
            subprocess.run(["cargo", "build", "--release", "--locked"], cwd=ROOT, check=True)
    cmds = []
    for b in todo:
        cmd = ["cargo", "bench", "--locked", "--bench", b]
        cmds.append(" ".join(cmd))
        print("$", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        sys.stdout.write(p.stdout)
        if p.returncode:
            sys.stdout.write(p.stderr[-3000:])
        outputs[b], codes[b] = p.stdout, p.returncode
    parts, figures = [], []
    for b in benches:
        text = outputs.get(b, "")
        figs = parse_bench(b, text)
        figures += figs
        failed = sum(f["ok"] is False for f in figs)
        problems = []
        if codes.get(b):
            problems.append("cargo bench --bench %s exited %d" % (b, codes[b]))
        if not figs:
            problems.append("no figure parsed from its output")
        part = {"part": "cpu:" + b, "passed": sum(f["ok"] is True for f in figs), "failed": failed + len(problems),
                "skipped": 0, "status": "; ".join(problems) or "done", "figures": len(figs),
                "failed_checks": problems + ["%s: %s" % (f["area"], f["name"]) for f in figs if f["ok"] is False]}
        mm = re.search(r"(?m)^machine: (.+)$", text)
        if mm:
            part["machine_line"] = mm.group(1).strip()
        parts.append(part)
    commit, dirty = commit_facts()
    date = now_utc()
    mach = machine_facts(gpu=False)
    doc = {"schema": SCHEMA, "kind": "cpu", "name": run_name(date, commit, "cpu"), "date": date, "commit": commit,
           "dirty": dirty, "command": "python3 scripts/perf-page.py cpu" + (" (" + "; ".join(cmds) + ")" if cmds else ""),
           "machine": mach, "parts": parts, "totals": totals(parts), "figures": figures}
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, doc["name"] + ".json")
    if os.path.exists(path):
        doc = merge(json.load(open(path)), doc)
    write_json(path, doc)
    print("wrote", os.path.relpath(path, ROOT))
    if render_after:
        render(directory, PAGE)


# ---------------------------------------------------------------- render

def fmt(v, unit=""):
    if v is None:
        return "—"
    a = abs(v)
    s = ("0" if a == 0 else "%.0f" % v if a >= 1000 else "%.1f" % v if a >= 100 else "%.2f" % v if a >= 10
         else "%.3f" % v if a >= 0.1 else "%.3g" % v)
    if unit in ("x", "×"):
        return s + "×"
    return s + (" " + unit if unit else "")


def goal_str(f):
    op_, g, u = f.get("goal_op"), f.get("goal"), f.get("unit") or ""
    if g is None or op_ is None:
        return "—"
    sym = {">=": "≥", "<=": "≤", ">": ">", "<": "<"}.get(op_)
    if op_ == "in":
        return "%s–%s" % (fmt(g[0], ""), fmt(g[1], u))
    return "%s %s" % (sym, fmt(g, u))


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def is_ratio(f):
    return (f.get("unit") or "") in ("x", "×")


def row(f):
    interval = ""
    if f.get("low") is not None and f.get("high") is not None:
        interval = " [%s–%s]" % (fmt(f["low"]), fmt(f["high"]))
    if is_ratio(f):
        measured = fmt(f.get("measured"), f.get("measured_unit") or "") if f.get("measured") is not None else "—"
        ratio = fmt(f.get("value"), "x") + interval
    else:
        measured = fmt(f.get("value"), f.get("unit") or "") + interval
        ratio = "—"
    against = "—"
    if f.get("limit_name"):
        against = f["limit_name"] + (": " + fmt(f.get("limit_value"), f.get("limit_unit") or "") if f.get("limit_value") is not None else "")
    result = {True: "pass", False: "**FAIL**", None: "—"}[f.get("ok")]
    if f.get("ok") is False and f.get("value") is None:
        result = "**FAIL** (no value)"
    return "| %s |" % " | ".join(cell(x) for x in (f["name"], measured, against, ratio, goal_str(f), result))


def machine_line(m, kind):
    bits = []
    if kind == "gpu":
        g = m.get("gpu", "no GPU found")
        n = m.get("gpu_count", 0)
        bits.append("%s%s" % (g, " × %d" % n if n and n > 1 else ""))
        if m.get("gpu_memory"):
            bits.append(m["gpu_memory"])
        if m.get("driver"):
            bits.append("driver " + m["driver"])
        if m.get("cuda_driver_api"):
            bits.append("CUDA " + m["cuda_driver_api"])
        if m.get("nvcc"):
            bits.append("nvcc " + m["nvcc"])
        if m.get("ncu"):
            bits.append(m["ncu"])
    cpu_ = m.get("cpu", "?")
    bits.append("%s, %s cores%s" % (cpu_, m.get("cores", "?"), ", %s GiB" % m["memory_gib"] if m.get("memory_gib") else ""))
    d = m.get("disk")
    if d:
        bits.append("disk %s (%s, %s GiB, %s GiB free)" % (d.get("device"), d.get("fs"), d.get("size_gib"), d.get("free_gib")))
    if m.get("block_devices"):
        bits.append("block devices: " + "; ".join(m["block_devices"][:4]))
    return "; ".join(bits)


def section(doc, path, title):
    out = ["## %s" % title, ""]
    commit = doc.get("commit", "unknown")
    out.append("- run: `%s` (%s)" % (os.path.relpath(path, ROOT), doc.get("date", "?")))
    out.append("- build: commit `%s`%s" % (commit, " with uncommitted changes" if doc.get("dirty") else ""))
    out.append("- machine: %s" % cell(machine_line(doc.get("machine", {}), doc.get("kind"))))
    if doc.get("command"):
        out.append("- command: `%s`" % doc["command"].replace("`", "'"))
    t = doc.get("totals", {})
    out.append("- checks: **%d passed, %d failed, %d skipped**%s" % (
        t.get("passed", 0), t.get("failed", 0), t.get("skipped", 0),
        " (REQUIRE_ALL: a missing dependency fails)" if doc.get("require_all") else ""))
    out.append("")
    parts = doc.get("parts", [])
    if parts:
        out += ["| part | passed | failed | skipped | seconds | status |", "|---|---|---|---|---|---|"]
        for p in parts:
            status = p.get("status", "")
            if p.get("machine"):
                status += "; on " + machine_line(p["machine"], doc.get("kind"))
            out.append("| %s |" % " | ".join(cell(x) for x in (
                p.get("part"), p.get("passed", 0), p.get("failed", 0), p.get("skipped", 0),
                p.get("seconds", "—"), status)))
        out.append("")
        fails = [(p["part"], c) for p in parts for c in p.get("failed_checks", [])]
        if fails:
            out.append("Failed checks:")
            out.append("")
            out += ["- %s: %s" % (cell(p), cell(c)) for p, c in fails]
            out.append("")
    figures = doc.get("figures", [])
    known = [a for a, _ in AREAS]
    areas = [a for a in known if any(f.get("area") == a for f in figures)]
    areas += sorted({f.get("area") for f in figures} - set(known))
    titles = dict(AREAS)
    for a in areas:
        out.append("### %s" % titles.get(a, a))
        out.append("")
        out += ["| figure | measured | against (limit or peer, same run) | ratio | goal | result |",
                "|---|---|---|---|---|---|"]
        out += [row(f) for f in figures if f.get("area") == a]
        out.append("")
    if not figures:
        out += ["No figures in this run.", ""]
    return out


def load_runs(directory):
    runs = []
    for p in sorted(glob.glob(os.path.join(directory, "*.json"))):
        try:
            d = json.load(open(p))
        except (OSError, ValueError):
            continue
        if isinstance(d, dict) and d.get("schema") == SCHEMA:
            runs.append((p, d))
    runs.sort(key=lambda r: (r[1].get("date", ""), r[0]))
    return runs


def render(directory, page):
    runs = load_runs(directory)
    rel = os.path.relpath(directory, os.path.dirname(page))
    out = ["# Performance", "",
           "<!-- Generated by `python3 scripts/perf-page.py render` from docs/performance/*.json. "
           "Do not edit: rerun the benchmarks (below) and render again. -->", "",
           "This page is generated by `python3 scripts/perf-page.py render` from the result files in "
           "[`docs/performance/`](%s/); do not edit it by hand. Each row is one figure of one run, with "
           "the limit or peer it is measured against in the same run, their ratio and the goal; "
           "a figure with a goal is a check of that run." % rel, "",
           "How the results are made:", "",
           "- GPU: `COMMIT=$(git rev-parse HEAD) bash tests/gpu/run-parts.sh [--part NAME,...] RR-TUI` on the GPU "
           "machine writes `$OUT/DATE-COMMIT-GPU.json`; `python3 scripts/perf-page.py add FILE` puts it here "
           "(runs split over several calls merge) and renders this page.",
           "- CPU: `python3 scripts/perf-page.py cpu` runs `cargo bench --bench NAME` for "
           + ", ".join("`%s`" % b for b in BENCHES) + " and parses their printed figures.", ""]
    if not runs:
        out += ["No runs recorded yet.", ""]
    shown = []
    for kind, title in (("gpu", "GPU: the newest run"), ("cpu", "CPU: the newest run")):
        mine = [r for r in runs if r[1].get("kind") == kind]
        if mine:
            path, doc = mine[-1]
            shown.append(path)
            out += section(doc, path, title)
    older = [r for r in runs if r[0] not in shown]
    if older:
        out += ["## Older runs", "",
                "| file | date | commit | machine | passed | failed | skipped |", "|---|---|---|---|---|---|---|"]
        for path, d in reversed(older):
            m = d.get("machine", {})
            what = m.get("gpu") or m.get("cpu", "?") if d.get("kind") == "gpu" else "CPU: " + m.get("cpu", "?")
            t = d.get("totals", {})
            out.append("| %s |" % " | ".join(cell(x) for x in (
                "[`%s`](%s/%s)" % (os.path.basename(path), rel, os.path.basename(path)), d.get("date", "?")[:10],
                "`%s`" % d.get("commit", "?")[:10], what, t.get("passed", 0), t.get("failed", 0), t.get("skipped", 0))))
        out.append("")
    text = "\n".join(out).rstrip("\n") + "\n"
    with open(page, "w") as f:
        f.write(text)
    print("wrote", os.path.relpath(page, ROOT))


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    r = sub.add_parser("render")
    r.add_argument("--dir", default=DIR)
    r.add_argument("--out", default=PAGE)
    c = sub.add_parser("cpu")
    c.add_argument("--bench", default=",".join(BENCHES))
    c.add_argument("--no-build", action="store_true")
    c.add_argument("--from", dest="sources", action="append", default=[], metavar="NAME=FILE")
    c.add_argument("--dir", default=DIR)
    c.add_argument("--no-render", action="store_true")
    g = sub.add_parser("gpu")
    g.add_argument("--part", default="")
    g.add_argument("--no-render", action="store_true")
    g.add_argument("rr", nargs="?", default="")
    a = sub.add_parser("add")
    a.add_argument("files", nargs="+")
    a.add_argument("--dir", default=DIR)
    a.add_argument("--no-render", action="store_true")
    k = sub.add_parser("collect")
    k.add_argument("--results", required=True)
    k.add_argument("--run", required=True)
    k.add_argument("--out-dir", required=True)
    k.add_argument("--command", default="")
    args = ap.parse_args()
    if args.cmd in (None, "render"):
        render(getattr(args, "dir", DIR), getattr(args, "out", PAGE))
    elif args.cmd == "cpu":
        cpu([b for b in args.bench.split(",") if b], not args.no_build, args.sources, args.dir, not args.no_render)
    elif args.cmd == "add":
        add(args.files, args.dir, not args.no_render)
    elif args.cmd == "collect":
        collect(args.results, args.run, args.out_dir, args.command)
    elif args.cmd == "gpu":
        out = os.environ.get("OUT") or tempfile.mkdtemp(prefix="rr-perf-")
        env = dict(os.environ, OUT=out)
        cmd = ["bash", os.path.join(ROOT, "tests/gpu/run-parts.sh")] + (["--part", args.part] if args.part else []) + ([args.rr] if args.rr else [])
        rc = subprocess.run(cmd, cwd=ROOT, env=env).returncode
        docs = []
        for p in sorted(glob.glob(os.path.join(out, "*.json")), key=os.path.getmtime):
            try:
                d = json.load(open(p))
            except (OSError, ValueError):
                continue
            if isinstance(d, dict) and d.get("schema") == SCHEMA and d.get("kind") == "gpu":
                docs.append(p)
        if not docs:
            sys.exit("run-parts.sh wrote no run JSON into %s (exit %d)" % (out, rc))
        add([docs[-1]], DIR, not args.no_render)
        sys.exit(rc)


if __name__ == "__main__":
    main()
