"""Figures of claims over many systems: the critical-difference diagram (Demšar, JMLR 2006).

:func:`cd_diagram` draws the average ranks of :func:`receval.stats.multiple.friedman_nemenyi`
on an axis from 1 (best, left) to k, each system's name on a leader line, the Nemenyi
critical difference as a bar above the axis, and a thick bar under each group of systems
whose average ranks differ by less than CD (not told apart at alpha).

Examples
--------
>>> import numpy as np
>>> from receval.stats.multiple import friedman_nemenyi
>>> scores = np.random.default_rng(0).uniform(size=(12, 4)) + np.array([0.3, 0.2, 0.0, 0.0])
>>> fig = cd_diagram(friedman_nemenyi(scores, ["ease", "als", "pop", "random"]))
>>> fig.axes[0].get_title()
'Average rank over 12 data sets (1 = best); CD = 1.35 at α = 0.05 (Nemenyi)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from receval.report.style import OKABE_ITO, figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from receval.stats.multiple import FriedmanResult

__all__ = ["cd_diagram"]


def cd_diagram(result: FriedmanResult, *, width: float = 6.0) -> Figure:
    """A critical-difference diagram of ``result`` (one per metric): ranks, CD bar, groups not told apart.

    Returns
    -------
    matplotlib.figure.Figure
        One panel; the better half of the systems is labelled on the left, the other half on the right.
    """
    data = result.cd_data()
    names: list[str] = list(data["systems"])  # type: ignore[call-overload]
    ranks: list[float] = list(data["avg_ranks"])  # type: ignore[call-overload]
    groups: list[list[str]] = list(data["groups"])  # type: ignore[call-overload]
    k = len(names)
    half = (k + 1) // 2
    height = 1.2 + 0.22 * max(half, k - half) + 0.12 * len(groups)
    fig, axes = figure(1, 1, width=width, height=height)
    ax = axes[0, 0]
    ax.set_xlim(-0.9, k + 1.9)  # room for the names beside the axis
    ax.set_ylim(-(max(half, k - half) + 1.5) - 0.5 * len(groups), 1.8)
    ax.axhline(0, color="black", lw=1)
    for r in range(1, k + 1):
        ax.plot([r, r], [0, 0.15], color="black", lw=1)
        ax.text(r, 0.3, str(r), ha="center", va="bottom", fontsize=8)
    ax.plot([1, 1 + result.cd], [1.2, 1.2], color=OKABE_ITO[5], lw=2)
    ax.text(1 + result.cd / 2, 1.35, "CD", ha="center", va="bottom", fontsize=8)
    for i, (name, rank) in enumerate(zip(names, ranks, strict=True)):
        left = i < half
        level = -(i + 1) if left else -(k - i)
        end = 0.6 if left else k + 0.4
        ax.plot([rank, rank, end], [0, level, level], color="black", lw=0.8)
        ax.text(end, level, f"{name} ({rank:.2f})", ha="left" if not left else "right", va="center", fontsize=8)
    if groups:
        position = {name: rank for name, rank in zip(names, ranks, strict=True)}
        for g, group in enumerate(groups):
            y = -0.35 - 0.25 * g
            ax.plot([position[group[0]] - 0.03, position[group[-1]] + 0.03], [y, y], color=OKABE_ITO[1], lw=3)
    ax.set_axis_off()
    title = (
        f"Average rank over {result.n_datasets} data sets (1 = best); CD = {result.cd:.2f} at α = {result.alpha:g} "
        "(Nemenyi)"
    )
    ax.set_title(title, fontsize=9)
    return fig
