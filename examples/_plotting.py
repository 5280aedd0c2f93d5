"""Plots for the benchmark scripts: grouped and stacked bar charts written as PNG files.

Every script saves its plot next to its JSON results (same name, ``.png``), unless it is
run with ``--no-plot``. matplotlib is optional (the ``plot`` extra): without it the plot
is skipped with a note on stderr, the tables and the JSON are written as usual.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np


def plot_path(json_path) -> Path:
    """The PNG written next to a results file."""
    return Path(json_path).with_suffix(".png")


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -e '.[plot]')", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def milliseconds(seconds):
    """Seconds as milliseconds; None for a missing or failed measurement (None, or a note
    such as ``"unavailable: ..."``)."""
    return seconds * 1e3 if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else None


def _values(vals):
    """Floats with None / non-finite / non-positive (on log axes) as NaN (no bar)."""
    return np.array([np.nan if v is None or not np.isfinite(v) else float(v) for v in vals], dtype=float)


def grouped_bars(ax, labels, series, *, ylabel, log=False, title=None, hatched=()):
    """One group of bars per label, one bar per series (``{name: values}``); NaN = no bar.

    Series named in ``hatched`` are drawn hatched (references such as a paper's numbers).
    """
    k = max(len(series), 1)
    width = 0.8 / k
    x = np.arange(len(labels))
    for i, (name, vals) in enumerate(series.items()):
        v = _values(vals)
        if log:
            v[v <= 0] = np.nan
        ax.bar(x + (i - (k - 1) / 2) * width, v, width, label=name, hatch="//" if name in hatched else None,
               edgecolor="black" if name in hatched else None, linewidth=0.5)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)


def stacked_bars(ax, labels, parts, *, ylabel, title=None, reference=None, reference_label=None):
    """One stacked bar per label from ``{part: values}``; ``reference`` (one value per
    label, e.g. the time of one SpMV) is drawn as a short black line on each bar."""
    x = np.arange(len(labels))
    bottom = np.zeros(len(labels))
    for name, vals in parts.items():
        v = np.nan_to_num(_values(vals))
        ax.bar(x, v, 0.6, bottom=bottom, label=name)
        bottom += v
    if reference is not None:
        ref = _values(reference)
        ax.hlines(ref, x - 0.35, x + 0.35, colors="black", linewidth=2, label=reference_label)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)


def mark_stopped(ax, stopped):
    """Write ">" over the bars of runs stopped before the end (time limit, overflow);
    ``stopped``: {series: [bool per label]}."""
    for bars in ax.containers:
        for bar, hit in zip(bars, stopped.get(bars.get_label(), ())):
            if hit:
                ax.annotate(">", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom",
                            fontsize=8, fontweight="bold")


def leave_room_for_legend(ax):
    """Raise the top of the axis by 40% of its range (of its decades on a log axis) and put
    the legend there, in three columns."""
    low, high = ax.get_ylim()
    ax.set_ylim(low, high * (high / low) ** 0.4 if ax.get_yscale() == "log" else high + 0.4 * (high - low))
    ax.legend(fontsize=7, ncol=3, loc="upper center")


def matrix_label(row):
    """``"aniso2 f64"`` from a row with ``matrix`` and ``dtype``."""
    return f"{row['matrix']} {row['dtype'].replace('float', 'f')}"


def save_figure(path, panels, *, suptitle=None, ncols=None):
    """Draw ``panels`` (callables taking an Axes) on one figure and save it to ``path``.

    Returns the path, or None when matplotlib is missing or there is nothing to draw.
    """
    panels = [p for p in panels if p is not None]
    if not panels:
        return None
    plt = _pyplot()
    if plt is None:
        return None
    ncols = ncols or min(len(panels), 2)
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, 4.2 * nrows), squeeze=False)
    for ax, draw in zip(axes.ravel(), panels):
        draw(ax)
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    if suptitle:
        fig.suptitle(suptitle, fontsize=11)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"plot: {path}")
    return path
