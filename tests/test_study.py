"""The convergence study (main job) and the precond console script."""
import json

import numpy as np
import pytest

from precond import cli
from precond.study import LOAD_FAILED, format_table, run_study, true_solution


def test_true_solution_is_papers():
    x = true_solution(8)
    np.testing.assert_allclose(x, np.sin(16 * np.pi * np.arange(8) / 8), atol=1e-15)


def test_run_study_rows():
    rows = run_study(["aniso2"], ["none", "jacobi"], n=16, progress=False)
    assert [r["preconditioner"] for r in rows] == ["none", "jacobi"]
    for r in rows:
        assert r["converged"] and r["relative_residual"] < 1e-8
        assert len(r["residual_history"]) == r["iterations"] + 1
    with pytest.raises(ValueError, match="unknown preconditioner"):
        run_study(["aniso2"], ["magic"], n=8, progress=False)


def test_cli_writes_table_json_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    code = cli.main(["convergence", "--matrix", "aniso1", "poisson2d", "--n", "12", "--precond", "none", "jacobi",
                     "--out", str(tmp_path), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    assert "aniso1" in out and "jacobi" in out
    rows = json.loads((tmp_path / "convergence.json").read_text())
    assert len(rows) == 4
    assert (tmp_path / "convergence.png").stat().st_size > 10_000


def test_unloadable_matrix_is_reported_and_the_others_run(tmp_path, capsys):
    missing = str(tmp_path / "missing.mtx")
    rows = run_study([missing, "aniso1"], ["none"], n=8, progress=False)
    assert rows[0]["preconditioner"] == LOAD_FAILED and "missing" in rows[0]["error"]
    assert rows[1]["matrix"] == "aniso1" and rows[1]["converged"]
    code = cli.main(["convergence", "--matrix", missing, "aniso1", "--n", "8", "--precond", "none",
                     "--out", str(tmp_path), "--quiet", "--no-plot"])
    assert code == 1 and "failed" in capsys.readouterr().out


def test_default_grid_gives_about_65536_rows():
    rows = run_study(["convection_diffusion3d"], ["jacobi"], progress=False, maxiter=5)
    assert rows[0]["n"] == 40**3


def test_cli_rejects_unknown_command():
    with pytest.raises(SystemExit):
        cli.main(["frobnicate"])


def test_demo_skips_collection_matrices_not_on_this_machine(monkeypatch, capsys):
    """`--demo` runs offline: collection matrices without a local copy are skipped."""
    from matrices import suitesparse
    from precond.study import DEMO, demo_matrices

    monkeypatch.setattr(suitesparse, "find_local", lambda spec, **kw: None)
    kept = demo_matrices()
    assert kept == [m for m in DEMO["matrices"] if m not in suitesparse.REGISTRY]
    assert kept and "skipped" in capsys.readouterr().out


def test_table_flags_an_indefinite_factorized_system(spd_triangles):
    """The study records the definiteness check: bcsstk25-like SPD triangles whose
    tridiagonal part is indefinite get a flagged negative-pivot count, Poisson none."""
    import warnings

    from precond.study import run_case

    A = spd_triangles(20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bad = run_case(A, "triangles", "algebraic_tridiagonal", maxiter=50, trace=False, warm_up=False)
    assert bad["negative_pivots"] == 20 and bad["indefinite"]
    good = run_study(["poisson2d"], ["tridiagonal", "jacobi"], n=8, progress=False)
    assert good[0]["negative_pivots"] == 0 and not good[0]["indefinite"] and "negative_pivots" not in good[1]
    table = format_table([bad] + good)
    assert "20!" in table and "indefinite where its diagonal is not" in table
