"""The benchmark scripts' Markdown tables (what BENCHMARKS.md holds), from CPU-only and GPU-shaped results."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import _markdown  # noqa: E402
import bench_forest  # noqa: E402
import bench_mis  # noqa: E402
import bench_precond  # noqa: E402
import convergence  # noqa: E402
import coverage_table  # noqa: E402


def rows_of(markdown: str) -> list[list[str]]:
    """The cells of every table row (header and separator lines included) of ``markdown``."""
    return [line.strip("|").split(" | ") for line in markdown.splitlines() if line.startswith("| ")]


def assert_well_formed(markdown: str, n_rows: int):
    """Every table line has as many cells as its header, and the body has ``n_rows`` rows in all."""
    tables, current = [], None
    for line in markdown.splitlines():
        if line.startswith("|"):
            if current is None:
                current = []
                tables.append(current)
            current.append(line)
        else:
            current = None
    assert tables, markdown
    body = 0
    for lines in tables:
        width = lines[0].count(" | ")
        assert lines[1] == "|" + "---|" * (width + 1)
        assert all(line.replace("\\|", "").count(" | ") == width for line in lines[:1] + lines[2:]), lines
        body += len(lines) - 2
    assert body == n_rows


def test_table_helpers():
    text = _markdown.table(["a", "b"], [[1, None], ["x|y", 2.5]])
    assert text.splitlines() == ["| a | b |", "|---|---|", "| 1 | - |", "| x\\|y | 2.5 |"]
    with pytest.raises(ValueError):
        _markdown.table(["a"], [[1, 2]])
    assert _markdown.ms(0.0012345) == "1.234"
    assert _markdown.ms("unavailable: no cuSPARSE") == "-"
    assert _markdown.ratio(1.0, 0.0) == "-" and _markdown.ratio(3.0, 2.0) == "1.50"
    assert _markdown.number(float("nan")) == "-" and _markdown.number(True) == "-"
    assert "Python" in _markdown.machine_line(None) and "GPU: X" in _markdown.machine_line("X")


def forest_row(gpu):
    row = {"matrix": "aniso2", "grid": 300, "dtype": "float32", "N": 90000, "nnz": 449400,
           "cpu": {"abs_graph": 0.036, "sym_check": 0.025, "factor_M5": 0.11, "forest": 0.008,
                   "precond_end_to_end": 0.16, "spmv": 0.0008}}
    if gpu:
        row["gpu"] = {"spmv": 2.6e-4, "propose_k1": 4.9e-5, "propose_warp_k1": 6e-5, "scan_step": 2.2e-4,
                      "copy_same_bytes": 7.8e-5, "sym_check": 3.4e-4, "abs_graph": 4e-4, "symmetric": True,
                      "factor_M5": 5.6e-4, "forest_ruling": 1.7e-3, "forest_early_exit": 1.2e-2,
                      "forest_paper_log2N": 1.2e-2, "total_factor_forest": 2.3e-3, "precond_end_to_end": 3.4e-3,
                      "phases_ruling": {"select_rulers": 1e-4, "walks": 7.6e-4, "ruler_scan": 2.7e-4, "finish": 3.1e-4,
                                        "permutation": 3.2e-4, "ruler_steps": 12, "rulers": 193158}}
    return row


@pytest.mark.parametrize("gpu", [False, True])
def test_bench_forest_tables(gpu):
    text = bench_forest.markdown_tables([forest_row(gpu), forest_row(gpu)])
    assert_well_formed(text, 4 if gpu else 2)
    if gpu:
        assert "| aniso2 300 | f32 | 90,000 | 0.260 |" in text and "| 8.8 |" in text  # total / SpMV


def precond_results():
    part1 = {"matrix": "aniso2", "dtype": "float64", "N": 6250000, "spmv": 4.2e-4, "spmv_ours": 3.8e-4,
             "gtsv2_nopivot": 6.4e-4, "gtsv2": "unavailable: not in this CUDA", "triscal_apply": 3.6e-4,
             "algtriscal_apply": 5e-4, "algtriscal_setup": 1.9e-3, "algtriscal_setup_per_spmv": 4.5,
             "algtriscal_setup_breakdown": {"factor": 8e-4, "forest": 7e-4, "factorize": 4e-4},
             "algtriblock_apply": 5.3e-4, "algtriblock_setup_per_spmv": 27.7}
    part2 = [{"matrix": "aniso2", "N": 6250000, "preconditioner": p, "ours_per_iter": 2e-3,
              "ours_eager_per_iter": 2.1e-3, "cupyx_per_iter": 2.6e-3, "floor_per_iter": 1.9e-3}
             for p in bench_precond.GPU_PRECONDS]
    part3 = [{"matrix": "aniso2", "n": 10000, "device": "cpu", "preconditioner": "jacobi", "iterations": 132,
              "converged": True, "setup_time": 0.0, "solve_time": 0.07, "time_to_solution": 0.07},
             {"matrix": "aniso2", "n": 10000, "device": "gpu", "preconditioner": "pyamg", "error": "no pyamg"}]
    return [part1], part2, part3


def test_bench_precond_tables():
    part1, part2, part3 = precond_results()
    setup = bench_precond.markdown_setup_apply(part1)
    assert_well_formed(setup, 1)
    assert "| aniso2 | f64 | 6,250,000 | 0.420 | 0.380 | 0.640 | - |" in setup
    assert_well_formed(bench_precond.markdown_iterations(part2), len(part2))
    tts = bench_precond.markdown_time_to_solution(part3)
    assert_well_formed(tts, 2)
    assert "failed: no pyamg" in tts


def mis_row(gpu, maximum=True):
    row = {"graph": "grid2d 2^14", "n": 16384, "m": 32512, "ecl_size": 6000, "luby_size": 5900, "improved_size": 7000,
           "ecl_cpu_time": 0.002, "luby_cpu_time": 0.003, "ecl_cpu_vps": 8e9}
    if maximum:
        row.update(ecl_ratio_to_max=0.9, improved_ratio_to_max=0.95)
    if gpu:
        row.update(ecl_cvps=6e9, ecl_skip_cvps=6.4e9, luby_cvps=2.9e9, gpu_equals_cpu=True)
    return row


@pytest.mark.parametrize("gpu", [False, True])
def test_bench_mis_table(gpu):
    text = bench_mis.markdown_table([mis_row(gpu), mis_row(gpu, maximum=False)], gpu)
    assert_well_formed(text, 2)
    assert ("| 6.00 | 6.40 | 2.90 |" in text) == gpu


def test_coverage_tables():
    by_n = [{"n": n, "parallel": 0.67, "sequential": 0.66, "sequential_index": 0.67} for n in (1, 2, 3, 4)]
    configs = [{"m": m, "k_m": k, "c5": 0.67, "cM": 0.67, "M_max": 11, "maximal": k == 0}
               for m, k in coverage_table.CONFIGS]
    rows = [{"matrix": name, "N": 3600, "c_id": 0.13, "configs": configs, "sequential": 0.67, "by_n": by_n}
            for name in ("aniso2", "add20")]
    text = coverage_table.markdown_tables(rows)
    assert_well_formed(text, 4)
    assert "0.67/0.67/11+ [0.57/0.57/12]" in text  # not maximal, and the paper's values on its matrices


def test_convergence_table():
    rows = [{"matrix": "aniso2", "n": 4096, "preconditioner": "jacobi", "iterations": 81, "converged": True,
             "time_to_solution": 0.069},
            {"matrix": "aniso2", "n": 4096, "preconditioner": "algebraic_tridiagonal", "iterations": 5000,
             "converged": False, "time_to_solution": 1.2},
            {"matrix": "add20", "n": 2395, "preconditioner": "jacobi", "error": "singular"},
            {"matrix": "missing", "n": 0, "preconditioner": "(loading)", "error": "no such file"}]
    text = convergence.markdown_table(rows)
    assert_well_formed(text, 3)
    assert "| aniso2 | 4,096 | 81 / 69 | 5000* / 1200 |" in text
    assert "| add20 | 2,395 | failed | - |" in text
    assert "| missing | - | not loaded | not loaded |" in text
