"""The convergence study's plot: legend outside the panels, failed runs marked, a bounded number of curves per panel."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from precond import study  # noqa: E402


def fake_row(matrix, name, iterations, converged=True, n=100):
    residuals = list(np.geomspace(1.0, 1e-9 if converged else 1e-3, iterations + 1))
    return {"matrix": matrix, "n": n, "preconditioner": name, "iterations": iterations, "converged": converged,
            "residual_history": residuals, "error_history": [1.0] + residuals[1:]}


@pytest.fixture
def drawn(monkeypatch, tmp_path):
    """Draws rows and returns the figure that was saved, and the file."""
    from matplotlib.figure import Figure

    saved = {}
    original = Figure.savefig

    def keep(self, *args, **kwargs):
        saved["figure"] = self
        saved["kwargs"] = kwargs
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)

    def draw(rows):
        path = tmp_path / "convergence.png"
        study.plot(rows, path)
        assert path.stat().st_size > 10_000
        return saved["figure"], saved["kwargs"]

    return draw


def curves(ax):
    return [line for line in ax.get_lines() if line.get_linestyle() not in ("None", "none", "")]


def crosses(ax):
    return [line for line in ax.get_lines() if line.get_marker() == "x"]


def test_legend_outside_panels_and_failed_runs_marked(drawn):
    names = ["none", "jacobi", "tridiagonal", "algebraic_tridiagonal"]
    rows = [fake_row(m, p, 40 + 5 * i, converged=not (m == "b" and p == "none"))
            for m in ("a", "b", "c") for i, p in enumerate(names)]
    rows.append({"matrix": "d", "n": 0, "preconditioner": "(loading)", "error": "missing"})  # not drawn
    fig, kwargs = drawn(rows)
    assert kwargs.get("bbox_inches") == "tight"  # the legend beside the panels is kept in the file
    used = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    assert len(used) == 6  # a residual and an error panel per matrix
    assert all(len(curves(ax)) == len(names) for ax in used)
    (legend,) = fig.legends
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # the study closed the figure: draw it again to measure it
    canvas.draw()
    renderer = canvas.get_renderer()
    right_edge = max(ax.get_tightbbox(renderer).x1 for ax in used)
    assert legend.get_window_extent(renderer).x0 >= right_edge - 1  # outside the panels, right of them
    labels = [text.get_text() for text in legend.get_texts()]
    assert labels[:4] == ["none", "Jacobi", "TriScal", "AlgTriScal"] and "not converged" in labels[-1]
    marked = [ax.get_title() for ax in used if crosses(ax)]
    assert len(marked) == 2 and all(title.startswith("b") for title in marked)


def test_many_preconditioners_are_split_over_panels(drawn):
    names = [f"method{i}" for i in range(study.PLOT_LINES_PER_PANEL + 3)]
    fig, _ = drawn([fake_row("a", p, 30) for p in names])
    used = [ax for ax in fig.axes if ax.axison]
    assert len(used) == 4  # two residual and two error panels
    counts = [len(curves(ax)) for ax in used]
    assert max(counts) <= study.PLOT_LINES_PER_PANEL and sum(counts) == 2 * len(names)
    assert not any(crosses(ax) for ax in used)
    assert "not converged" not in " ".join(t.get_text() for t in fig.legends[0].get_texts())
