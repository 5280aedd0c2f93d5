"""The benchmark scripts' plots: drawn from CPU-only and GPU-shaped results, files written."""
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import _plotting  # noqa: E402
import bench_vc  # noqa: E402


def vc_row(problem, gpu, finished=True):
    row = {"instance": "p_hat300-1", "n": 300, "m": 33917, "min": 292, "problem": problem, "cpu_time": 0.108,
           "cpu_finished": finished, "cpu_nodes": 14099, "paper_seq": 0.138, "paper_stackonly": 0.78,
           "paper_hybrid": 0.021, "correct": True}
    if gpu:
        row.update(stackonly_time=0.069, stackonly_finished=True, stackonly_nodes=15370,
                   stackonly_load_max_over_mean=120.7, hybrid_time=0.0072, hybrid_finished=True, hybrid_nodes=14769,
                   hybrid_load_max_over_mean=4.37)
    return row


@pytest.mark.parametrize("gpu", [False, True])
def test_vc_plot(tmp_path, gpu):
    meta = {"gpu": "NVIDIA H100 80GB HBM3" if gpu else None, "time_limit": 6.0, "cpu_time_limit": 3.0,
            "stackonly_time_limit": 1.0}
    rows = [vc_row(p, gpu, finished=p != "mvc") for p in ("mvc", "k-1", "k", "k+1")]
    path = tmp_path / "bench_vc.png"
    bench_vc.plot_results({"meta": meta, "rows": rows}, path)
    assert path.stat().st_size > 10_000


def test_shared_plot_helpers(tmp_path):
    def bars(ax):
        _plotting.grouped_bars(ax, ["a", "b"], {"ours": [1.0, None], "paper": [2.0, 3.0]}, ylabel="s", log=True,
                               hatched=("paper",))
        _plotting.mark_stopped(ax, {"ours": [True, False]})
        _plotting.leave_room_for_legend(ax)

    def stacked(ax):
        _plotting.stacked_bars(ax, ["a"], {"factor": [1.0], "forest": [2.0]}, ylabel="ms", reference=[0.5],
                               reference_label="one SpMV")

    path = _plotting.save_figure(tmp_path / "x.png", [bars, stacked])
    assert path is not None and path.exists()
    assert _plotting.plot_path("bench_results/bench_vc.json") == Path("bench_results/bench_vc.png")
    assert _plotting.save_figure(tmp_path / "none.png", []) is None
