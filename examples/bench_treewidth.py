"""Benchmarks of exact treewidth on the shared instances.

``--set pace2017`` (the default): the 159 PACE 2017 exact-track instances of
``../shared/data/graphs/bench/`` with known widths. The instances are solved by worker
processes pinned to their CPUs, each of which loads the compiled kernels once (the Numba and
GPU compilation is never timed) and then solves instances one after another with the
solver's ``time_limit``; a worker is killed a few seconds past the limit and replaced.
``--devices cpu,auto`` runs every instance with each device in the same run, and
``--shards N`` runs N workers per device at once, each on its own cores (one for
``device="cpu"``, two for ``device="auto"``: the thread that drives the GPU runs beside PID);
the workers of ``auto`` share the GPU. One run at the largest limit gives every column: the solver's path does not depend
on the limit, so an instance is solved within ``t`` seconds when its run proved optimality
in at most ``t`` seconds. Prints a Markdown summary (solved counts, median times on the
instances both solve) and a per-instance table next to the times of Tamaki's PACE 2017
solver in ``bench/peers.csv`` (measured on the development CPU, 20 s each, one core).

``--set paper``: the Table 1 graphs of the GPU treewidth paper (van der Zanden and Bodlaender, "Computing
treewidth on the GPU") with the default pipeline and the paper's breadth-first search
(``method="bfs"``, on the GPU when one is usable and on the CPU), next to the paper's
GTX 1060 times.

    python examples/bench_treewidth.py --set pace2017                 # 159 instances, 20 s and 60 s
    python examples/bench_treewidth.py --set pace2017 --limits 20 --instances ex001,ex010
    python examples/bench_treewidth.py --set pace2017 --limits 20 --devices cpu,auto --shards 5 --cpu 1
    python examples/bench_treewidth.py --set paper
    python examples/bench_treewidth.py --set device --paper-limit 10 --device-limit 6

``--set device``: on a machine with a GPU, in one process, the breadth-first search on the
GPU (``method="bfs"``), PID on the CPU and ``device="auto"`` (PID racing the GPU search on
dense pieces) on the paper's graphs and a few bench instances whose pieces after
preprocessing are small and dense, each run checked against its time limit (overrun).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _shared_data import SHARED  # noqa: E402

BENCH = SHARED / "graphs" / "bench"
TW_DIR = SHARED / "graphs" / "treewidth"

# name: (file, treewidth, paper GPU seconds, paper states)
PAPER = {
    "water": ("water.1.21.gr", 9, 0.197, 1_240),
    "queen5_5": ("queen5_5.1.25.gr", 18, 0.212, 3_134),
    "queen6_6": ("queen6_6.1.36.gr", 25, 0.254, 35_973),
    "myciel4": ("myciel4.1.23.gr", 10, 0.234, 97_765),
    "RandomBoundedToleranceGraph_60": ("RandomBoundedToleranceGraph_60.1.59.gr", 30, 0.274, 56_028),
    "McGeeGraph": ("McGeeGraph.1.24.gr", 7, 1.298, 3_853_249),
    "NonisotropicUnitaryPolarGraph_3_3": ("NonisotropicUnitaryPolarGraph_3_3.1.63.gr", 53, 1.158, 1_558_852),
    "DoubleStarSnark": ("DoubleStarSnark.1.30.gr", 6, 34.497, 87_628_083),
    "contiki_dhcpc_handle_dhcp": ("contiki_dhcpc_handle_dhcp.1.39.gr", 6, 1490.413, 2_933_148_926),
    "HarborthGraph": ("HarborthGraph.1.40.gr", 5, 697.909, 1_535_664_481),
    "1ubq": ("1ubq.1.47.gr", 12, 1132.360, 2_296_029_372),
}


# --------------------------------------------------------------------------- worker
def warm_up(device="cpu", method="auto"):
    """Load (or compile, the first time on a machine) every kernel the solver uses with
    ``method``, the GPU search's too where ``device`` may use a GPU."""
    import networkx as nx

    import graphkit
    from kernels.backend import gpu_available
    from kernels.treewidth.solve import warm_up as compile_treewidth
    from kernels.treewidth.solve import warm_up_gpu

    if device != "cpu" and gpu_available():
        warm_up_gpu()
    # what a limited solve compiles before its own clock starts, here before ours
    compile_treewidth("pid")
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(5, 7))
    G.add_edges_from([(0, 40), (40, 41), (41, 42), (42, 40), (34, 43), (43, 44), (44, 34)])
    graphkit.treewidth(G, device="cpu")
    graphkit.treewidth(nx.petersen_graph(), device="cpu")
    if method == "bfs":  # the paper's search on the CPU (not used by the default path)
        compile_treewidth("bfs")
        graphkit.treewidth(nx.random_regular_graph(3, 16, seed=2), method="bfs", device="cpu", preprocess=False,
                           separators=False)


def _pin(cpus):
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cpus))


def solve_one(path, time_limit, method, device):
    """Solve one instance (kernels already loaded): the result as a JSON-able dict."""
    import graphkit

    G = graphkit.read_graph(path)
    t0 = time.perf_counter()
    c0 = time.process_time()
    res = graphkit.treewidth(G, device=device, time_limit=time_limit, method=method)
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - c0
    valid = graphkit.is_tree_decomposition(G, res.decomposition, width=res.width)
    races = [p["race"] for p in res.stats.get("pieces", []) if "race" in p]
    return {"width": res.width, "lower": res.lower_bound, "optimal": res.optimal, "status": res.status,
            "phase": res.phase, "seconds": seconds, "cpu_seconds": cpu_seconds, "valid": bool(valid),
            "core": res.reduced_size, "parts": res.stats.get("parts", 0), "times": res.stats.get("times", {}),
            "device": res.device, "races": races}


def worker(path, time_limit, cpus, method, device):
    """Solve one instance in a fresh process; print one JSON line."""
    _pin(cpus)
    warm_up(device, method)
    print(json.dumps(solve_one(path, time_limit, method, device)))


def serve(cpus, method, device):
    """Solve the instances named on stdin (one JSON request a line), one JSON line each."""
    _pin(cpus)
    t = time.perf_counter()
    warm_up(device, method)
    print(json.dumps({"ready": time.perf_counter() - t}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        print(json.dumps(solve_one(req["path"], req["time_limit"], method, device)), flush=True)


def run_worker(path, time_limit, cpu, method="auto", device="cpu", grace=15.0):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(path), "--time-limit", str(time_limit),
           "--method", method, "--device", device]
    if cpu is not None:
        cmd += ["--cpu", str(cpu)]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=time_limit + grace)
    except subprocess.TimeoutExpired:
        return {"status": "killed", "optimal": False, "seconds": time.perf_counter() - t0, "valid": False}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"status": "crashed", "optimal": False, "seconds": time.perf_counter() - t0, "valid": False,
                "error": out.stderr.strip().splitlines()[-1:] if out.stderr else []}
    return json.loads(lines[-1])


class Server:
    """A solver process pinned to ``cpus`` that loads the kernels once and then solves
    instances one after another; killed when one runs past its limit plus ``grace``
    seconds (or crashes), and started again for the next."""

    def __init__(self, cpus, method, device, grace=15.0):
        self.cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", "--method", method, "--device", device,
                    "--cpus", ",".join(map(str, cpus)) if cpus else "-1"]
        self.grace = grace
        self.proc = None
        self.err = None

    def _start(self):
        import tempfile

        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     text=True, bufsize=1)
        return self._read(600.0)  # {"ready": seconds}, or None

    def _read(self, timeout):
        import select

        end = time.perf_counter() + timeout
        while True:
            left = end - time.perf_counter()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            line = self.proc.stdout.readline()
            if not line:
                return ""  # the process ended
            if line.startswith("{"):
                return json.loads(line)

    def _stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def solve(self, path, time_limit):
        if self.proc is None and not self._start():
            self._stop()
            return {"status": "crashed", "optimal": False, "seconds": 0.0, "valid": False, "error": ["start"]}
        t0 = time.perf_counter()
        self.proc.stdin.write(json.dumps({"path": str(path), "time_limit": time_limit}) + "\n")
        self.proc.stdin.flush()
        res = self._read(time_limit + self.grace)
        if res:
            return res
        self.err.seek(0)
        tail = self.err.read().strip().splitlines()[-1:]
        self._stop()
        if res is None:
            return {"status": "killed", "optimal": False, "seconds": time.perf_counter() - t0, "valid": False}
        return {"status": "crashed", "optimal": False, "seconds": time.perf_counter() - t0, "valid": False,
                "error": tail}

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


def _core_plan(devices, shards, first_cpu):
    """CPUs of each server: ``shards`` per device, one core for "cpu", two where the GPU
    may be used (the thread that drives it beside PID's); None: no pinning."""
    plan, nxt = [], first_cpu
    for dev in devices:
        for _ in range(shards):
            if first_cpu is None:
                plan.append((dev, None))
                continue
            need = 1 if dev == "cpu" else 2
            plan.append((dev, list(range(nxt, nxt + need))))
            nxt += need
    if first_cpu is not None and nxt > (os.cpu_count() or 1):
        raise SystemExit(f"{shards} shards per device need {nxt - first_cpu} CPUs from CPU {first_cpu}; "
                         f"this machine has {os.cpu_count()}")
    return plan


# --------------------------------------------------------------------------- PACE 2017
def pace_instances():
    with open(BENCH / "answers.csv") as fh:
        answers = [r for r in csv.DictReader(fh) if r["set"] == "tw17"]
    with open(BENCH / "peers.csv") as fh:
        peers = {r["file"]: r for r in csv.DictReader(fh) if r["set"] == "tw17"}
    rows = []
    for r in answers:
        p = peers.get(r["file"], {})
        rows.append({"name": Path(r["file"]).name.removesuffix(".gr.xz"), "file": r["file"], "n": int(r["n"]),
                     "m": int(r["m"]), "tw": int(r["answer"]),
                     "peer_seconds": float(p["seconds"]) if p.get("solved") == "1" else None,
                     "peer_solver": p.get("solver", "")})
    return rows


def _seconds(row, clock):
    return row.get("cpu_seconds" if clock == "cpu" else "seconds", 1e9)


def _solved_within(row, limit, clock="wall"):
    return bool(row.get("optimal")) and _seconds(row, clock) <= limit


def _devices(rows):
    seen = {d for r in rows for d in r.get("by_device", {})}
    return [d for d in ("cpu", "auto", "gpu") if d in seen]


def _on(rows, dev):
    """The rows with the results of device ``dev`` (runs of several devices)."""
    return [{**r, **r["by_device"][dev]} if dev in r.get("by_device", {}) else {**r, "optimal": False}
            for r in rows]


def pace_summary(rows, limits, peer_limit=20.0, clock="wall"):
    lines = []
    devices = _devices(rows)
    peer_solved = [r for r in rows if r["peer_seconds"] is not None and r["peer_seconds"] <= peer_limit]
    lines.append(f"| device | time limit | instances | solved (ours) | solved (Tamaki, {peer_limit:g} s) | both solve | "
                 f"median s, ours (both) | median s, Tamaki (both) |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for dev in devices or [None]:
        view = rows if dev is None else _on(rows, dev)
        for lim in limits:
            ours = [r for r in view if _solved_within(r, lim, clock)]
            both = [r for r in ours if r["peer_seconds"] is not None and r["peer_seconds"] <= peer_limit]
            med_o = statistics.median(_seconds(r, clock) for r in both) if both else float("nan")
            med_p = statistics.median(r["peer_seconds"] for r in both) if both else float("nan")
            lines.append(f"| {dev or 'cpu'} | {lim:g} s | {len(rows)} | {len(ours)} | {len(peer_solved)} | {len(both)} | "
                         f"{med_o:.2f} | {med_p:.2f} |")
    return "\n".join(lines)


def pace_device_table(rows, limit, clock="wall", only_gpu=False):
    """Per instance, each device's time side by side (``>t``: not proved within ``t``) and
    what the races of the GPU devices ended with (``gpu``: the GPU search found the piece's
    decomposition, ``cpu``: PID did first, ``bound``: the widths below the greedy one were
    refuted, ``search stopped``: the search gave up, its bounds kept, ``started``: the time
    ran out)."""
    devices = _devices(rows)
    gpu_devs = [d for d in devices if d != "cpu"]
    lines = ["| instance | n | tw | " + " | ".join(f"{d} s" for d in devices) + " | races | Tamaki s |",
             "|---|---|---|" + "---|" * len(devices) + "---|---|"]
    for r in rows:
        runs = r.get("by_device", {})
        races = [x for d in gpu_devs for x in runs.get(d, {}).get("races", [])]
        used = any(runs.get(d, {}).get("device") == "gpu" for d in gpu_devs)
        if only_gpu and not used:
            continue
        cells = []
        for d in devices:
            x = {**r, **runs[d]} if d in runs else {"optimal": False}
            cells.append(f"{_seconds(x, clock):.2f}" if _solved_within(x, limit, clock) else f">{limit:g}")
        summary = ", ".join(f"{races.count(k)} {k}" for k in sorted(set(races))) or "-"
        peer = f"{r['peer_seconds']:.2f}" if r["peer_seconds"] is not None else f">{limit:g}"
        lines.append(f"| {r['name']} | {r['n']} | {r['tw']} | " + " | ".join(cells) + f" | {summary} | {peer} |")
    return "\n".join(lines)


def pace_table(rows, limits, clock="wall"):
    lines = ["| instance | n | m | tw | ours: width (lower) | ours s | phase | Tamaki s |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "width" in r:
            wl = f"{r['width']}" if r["optimal"] else f"{r['width']} ({r['lower']})"
        else:
            wl = r.get("status", "-")
        sec = f"{_seconds(r, clock):.2f}" if _solved_within(r, max(limits), clock) else f"> {max(limits):g}"
        peer = f"{r['peer_seconds']:.2f}" if r["peer_seconds"] is not None else "> 20"
        lines.append(f"| {r['name']} | {r['n']} | {r['m']} | {r['tw']} | {wl} | {sec} | {r.get('phase') or '-'} | "
                     f"{peer} |")
    return "\n".join(lines)


def pace_compact_table(rows, limit, clock="wall", groups=3):
    """The per-instance times, ``groups`` instances per line: ``tw``, ours, Tamaki's.

    ``>t``: not proved optimal within ``t`` seconds; ``w/l``: the width and lower bound we
    ended with."""
    cells = []
    for r in rows:
        if _solved_within(r, limit, clock):
            ours = f"{_seconds(r, clock):.2f}"
        elif "width" in r:
            ours = f">{limit:g} ({r['width']}/{r['lower']})"
        else:
            ours = f">{limit:g} ({r.get('status', '-')})"
        peer = f"{r['peer_seconds']:.2f}" if r["peer_seconds"] is not None else f">{limit:g}"
        cells.append(f"{r['name']} | {r['tw']} | {ours} | {peer}")
    head = " | ".join(["instance | tw | ours s | Tamaki s"] * groups)
    lines = [f"| {head} |", "|" + "---|" * (4 * groups)]
    for i in range(0, len(cells), groups):
        part = cells[i: i + groups] + [" |  |  | "] * (groups - len(cells[i: i + groups]))
        lines.append("| " + " | ".join(part) + " |")
    return "\n".join(lines)


def run_pace(args):
    if not (BENCH / "answers.csv").exists():
        print(f"bench data not found at {BENCH}; nothing to benchmark", file=sys.stderr)
        return 1
    if args.from_json:
        data = json.loads(Path(args.from_json).read_text())
        rows, limits = data["rows"], data["meta"]["limits"]
        args.clock = data["meta"].get("clock", args.clock)
        _print_pace(rows, limits, args, data["meta"])
        return 0
    rows = pace_instances()
    if args.instances:
        wanted = set(args.instances.split(","))
        rows = [r for r in rows if r["name"] in wanted]
    if args.first:
        rows = rows[: args.first]
    limits = sorted(float(x) for x in args.limits.split(","))
    devices = args.devices.split(",") if args.devices else [args.device]
    # on a shared machine, --clock cpu judges by CPU seconds and gives the solver more wall time
    wall_limit = max(limits) * (3.0 if args.clock == "cpu" else 1.0)
    # compile / load the kernels once before any timed run
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--warm-up", "--method", args.method, "--device",
                    "auto" if any(d != "cpu" for d in devices) else "cpu"], check=True)
    plan = _core_plan(devices, args.shards, args.cpu)
    import queue
    import threading

    todo = {dev: queue.Queue() for dev in devices}
    # the instances Tamaki's solver found hardest first, so that the shards end together
    for r in sorted(rows, key=lambda r: -(r["peer_seconds"] if r["peer_seconds"] is not None else 1e9)):
        r["by_device"] = {}
        for dev in devices:
            todo[dev].put(r)
    lock = threading.Lock()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"machine": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(), "cpu": args.cpu,
            "limits": limits, "clock": args.clock, "method": args.method, "device": devices[0], "devices": devices,
            "shards": args.shards}
    if any(d != "cpu" for d in devices):
        from kernels.backend import gpu_available

        if gpu_available():
            import cupy

            meta["gpu"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()

    def serve_queue(dev, cpus):
        server = Server(cpus, args.method, dev)
        try:
            while True:
                try:
                    r = todo[dev].get_nowait()
                except queue.Empty:
                    return
                res = server.solve(BENCH / r["file"], wall_limit)
                if res.get("optimal") and (res.get("width") != r["tw"] or not res.get("valid")):
                    res["error"] = f"wrong answer: width {res.get('width')} valid {res.get('valid')} (known {r['tw']})"
                    res["optimal"] = False
                with lock:
                    r["by_device"][dev] = res
                    mark = f"{res.get('width')} ({res.get('lower')})" if "width" in res else res["status"]
                    print(f"{r['name']} [{dev}]: n={r['n']} tw={r['tw']} -> {mark} {res.get('status')} "
                          f"{res['seconds']:.2f} s (cpu {res.get('cpu_seconds', float('nan')):.2f} s) "
                          f"[peer {r['peer_seconds']}]" + (f" ERROR {res['error']}" if "error" in res else ""),
                          file=sys.stderr, flush=True)
                    # rewritten after every result: a run cut short keeps what it measured
                    # (--from-json prints its tables)
                    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        finally:
            server.close()

    threads = [threading.Thread(target=serve_queue, args=(dev, cpus)) for dev, cpus in plan]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in rows:
        r["by_device"] = {d: r["by_device"][d] for d in devices if d in r["by_device"]}
        r.update(r["by_device"].get(devices[0], {"status": "not run", "optimal": False, "seconds": 0.0}))
    meta["load_average"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    _print_pace(rows, limits, args, meta)
    print(f"\n(written to {out})", file=sys.stderr)
    return 0 if not any("error" in res for r in rows for res in r["by_device"].values()) else 1


def _print_pace(rows, limits, args, meta):
    what = "CPU seconds" if args.clock == "cpu" else "wall-clock seconds"
    devices = _devices(rows)
    where = f", GPU: {meta['gpu']}" if meta.get("gpu") else ""
    print(f"## Exact treewidth, PACE 2017 exact track ({len(rows)} instances, {what}, devices "
          f"{', '.join(devices or ['cpu'])}{where}; {meta.get('shards', 1)} shard(s) per device)\n")
    print(pace_summary(rows, limits, clock=args.clock))
    print()
    if len(devices) > 1:
        print(pace_device_table(rows, max(limits), clock=args.clock, only_gpu=args.compact))
    else:
        print(pace_compact_table(rows, max(limits), clock=args.clock) if args.compact else
              pace_table(rows, limits, clock=args.clock))


# --------------------------------------------------------------------------- the GPU paper's Table 1
def run_paper(args):
    if not TW_DIR.is_dir():
        print(f"shared data not found at {TW_DIR}; nothing to benchmark", file=sys.stderr)
        return 1
    from kernels.backend import gpu_available

    names = list(PAPER) if args.all else list(PAPER)[:8]
    if args.instances:
        names = [x for x in args.instances.split(",") if x in PAPER]
    configs = [("pid", "cpu"), ("bfs", "cpu")]
    if gpu_available():
        configs.append(("bfs", "gpu"))
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--warm-up", "--method", "bfs"], check=True)
    rows = []
    for name in names:
        fname, tw, p_gpu, p_states = PAPER[name]
        row = {"graph": name, "tw": tw, "paper_gpu_seconds": p_gpu, "paper_states": p_states}
        for method, device in configs:
            limit = args.paper_limit * (3.0 if args.clock == "cpu" and device == "cpu" else 1.0)
            res = run_worker(TW_DIR / fname, limit, args.cpu, method, device)
            ok = res.get("optimal") and res.get("width") == tw and res.get("valid")
            sec = _seconds(res, args.clock if device == "cpu" else "wall")
            row[f"{method}_{device}"] = sec if ok and sec <= args.paper_limit else None
            row[f"{method}_{device}_status"] = res.get("status")
        rows.append(row)
        print(row, file=sys.stderr, flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows}, indent=1))
    cols = [f"{m}_{d}" for m, d in configs]
    print(f"CPU columns in {'CPU' if args.clock == 'cpu' else 'wall-clock'} seconds, one core\n")
    print("| graph | tw | paper GPU s (GTX 1060) | " + " | ".join(f"{c} s" for c in cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for r in rows:
        cells = [f"{r[c]:.3f}" if r[c] is not None else f"> {args.paper_limit:g} ({r[c + '_status']})" for c in cols]
        print(f"| {r['graph']} | {r['tw']} | {r['paper_gpu_seconds']:.3f} | " + " | ".join(cells) + " |")
    return 0


# --------------------------------------------------------------------------- GPU vs CPU
DEVICE_BENCH = ("ex003", "ex056", "ex063", "ex086", "ex118", "ex123", "ex136", "ex143")  # small dense pieces


def run_device(args):
    """One process: ``method="bfs"`` on the GPU against PID on the CPU, every run timed
    against its ``time_limit`` (overrun = wall seconds / limit). Results are rewritten
    after every run, so an interrupted call keeps what it measured."""

    import graphkit
    from kernels.backend import gpu_available

    if not gpu_available():
        print("no usable GPU; nothing to compare", file=sys.stderr)
        return 1
    warm_up("auto", "bfs")
    import networkx as nx
    import numpy as np

    from kernels import treewidth as ktw

    # compile the search's CUDA kernels for 1, 2 and 4 words and its CPU helpers
    for n in (20, 100, 200):
        A = nx.to_numpy_array(nx.cycle_graph(n)) != 0
        ktw.search_gpu(ktw.to_bitsets(A), ktw.to_bitsets(np.ones((1, n), dtype=bool))[0], 2, 2)
    graphkit.treewidth(nx.grid_2d_graph(4, 5), method="bfs", device="gpu", preprocess=False, separators=False)
    cases = [(name, TW_DIR / PAPER[name][0], PAPER[name][1], args.paper_limit) for name in list(PAPER)[:8]]
    answers = {r["name"]: r for r in pace_instances()} if (BENCH / "answers.csv").exists() else {}
    for name in (args.instances.split(",") if args.instances else DEVICE_BENCH):
        if name in answers:
            cases.append((name, BENCH / answers[name]["file"], answers[name]["tw"], args.device_limit))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, path, tw, limit in cases:
        if not path.exists():
            continue
        G = graphkit.read_graph(path)
        row = {"graph": name, "n": G.n, "m": G.m, "tw": tw, "limit": limit}
        for key, kw in (("pid_cpu", {"device": "cpu"}), ("bfs_gpu", {"device": "gpu", "method": "bfs"}),
                        ("auto", {"device": "auto"})):
            t0 = time.perf_counter()
            res = graphkit.treewidth(G, time_limit=limit, **kw)
            wall = time.perf_counter() - t0
            ok = bool(graphkit.is_tree_decomposition(G, res.decomposition, width=res.width))
            row[key] = {"seconds": wall, "overrun": wall / limit, "width": res.width, "lower": res.lower_bound,
                        "optimal": res.optimal, "status": res.status, "valid": ok, "core": res.reduced_size,
                        "exact_seconds": res.stats["times"].get("exact", 0.0),
                        "pieces": [(p["piece"], p.get("method")) for p in res.stats["pieces"]],
                        "gpu_pieces": sorted({it["component"] for it in res.iterations if it.get("device") == "gpu"}),
                        "races": [p["race"] for p in res.stats["pieces"] if "race" in p]}
            if res.optimal and res.width != tw:
                row[key]["error"] = f"width {res.width} != {tw}"
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        out.write_text(json.dumps({"rows": rows}, indent=1))
        _device_markdown(rows, Path(str(out.with_suffix("")) + ".md"))
    return 0 if not any("error" in r[k] for r in rows for k in ("pid_cpu", "bfs_gpu", "auto")) else 1


def _device_markdown(rows, path):
    lines = ["| graph | n | tw | limit s | PID (CPU) s | width | bfs (GPU) s | width | auto s | width | races | "
             "worst overrun |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def cell(r):
        return f"{r['seconds']:.3f}" + ("" if r["optimal"] else f" ({r['status']})"), \
            f"{r['width']}" + ("" if r["optimal"] else f" (>= {r['lower']})")

    for row in rows:
        a, b, c = row["pid_cpu"], row["bfs_gpu"], row["auto"]
        races = ", ".join(c["races"]) or "-"
        lines.append(f"| {row['graph']} | {row['n']} | {row['tw']} | {row['limit']:g} | {' | '.join(cell(a))} | "
                     f"{' | '.join(cell(b))} | {' | '.join(cell(c))} | {races} | "
                     f"{max(a['overrun'], b['overrun'], c['overrun']):.2f} |")
    path.write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=["pace2017", "paper", "device"], default="pace2017")
    ap.add_argument("--limits", default="20,60", help="seconds per instance (pace2017), comma-separated")
    ap.add_argument("--paper-limit", type=float, default=60.0, help="seconds per instance (paper, device)")
    ap.add_argument("--device-limit", type=float, default=6.0, help="seconds per bench instance (device)")
    ap.add_argument("--instances", default="", help="comma-separated instance names (e.g. ex001,ex010)")
    ap.add_argument("--first", type=int, default=0, help="only the first N instances")
    ap.add_argument("--compact", action="store_true", help="pace2017: three instances per table line")
    ap.add_argument("--from-json", default=None, help="pace2017: print the tables of an earlier run's JSON")
    ap.add_argument("--all", action="store_true", help="paper: also the instances the paper could not finish")
    ap.add_argument("--cpu", type=int, default=0,
                    help="CPU to pin the workers to, the first of them with --shards (-1: no pinning)")
    ap.add_argument("--devices", default="",
                    help="pace2017: comma-separated devices run side by side in one run (e.g. cpu,auto)")
    ap.add_argument("--shards", type=int, default=1,
                    help="pace2017: solver processes per device running at once, each on its own cores "
                         "(one for 'cpu', two where the GPU may be used)")
    ap.add_argument("--clock", default="wall", choices=["wall", "cpu"],
                    help="judge the limits by wall-clock or, on a shared machine, by CPU seconds")
    ap.add_argument("--method", default="auto", choices=["auto", "pid", "bfs"])
    ap.add_argument("--device", default="cpu", choices=["auto", "cpu", "gpu"])
    ap.add_argument("--out", default="bench_results/bench_treewidth.json")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--time-limit", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--warm-up", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cpus", default="-1", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.cpu is not None and args.cpu < 0:
        args.cpu = None
    if args.warm_up:
        warm_up(args.device, args.method)
        return 0
    if args.serve:
        serve([int(c) for c in args.cpus.split(",")] if args.cpus != "-1" else None, args.method, args.device)
        return 0
    if args.worker:
        worker(args.worker, args.time_limit, None if args.cpu is None else [args.cpu], args.method, args.device)
        return 0
    return {"pace2017": run_pace, "paper": run_paper, "device": run_device}[args.set](args)


if __name__ == "__main__":
    sys.exit(main())
