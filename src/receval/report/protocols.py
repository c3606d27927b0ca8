"""Figures, tables and the HTML page of the protocols study (:mod:`receval.studies.protocols`).

:func:`values_figure` draws a metric per recommender across the protocols, one panel per
k-core (the tuned variant, when the study has it, dashed beside the defaults);
:func:`tau_figure` the Kendall τ between the rankings of every two settings as a heat map,
one variant at a time. :func:`write_outputs` writes the study's tables (CSV), the figures
and ``report.html`` into a folder, as one set (:func:`receval.atomic.publish`).

Examples
--------
>>> import tempfile, pathlib
>>> from receval.studies.protocols import ProtocolsStudy, kendall_pairs
>>> values = pd.DataFrame({"protocol": ["random"] * 2 + ["temporal"] * 2, "core": 0, "algorithm": ["a", "b"] * 2,
...                        "metric": "ndcg@10", "value": [0.3, 0.2, 0.1, 0.15]})
>>> settings = pd.DataFrame({"protocol": ["random", "temporal"], "core": 0, "train_after_test": [0.9, 0.0]})
>>> study = ProtocolsStudy(settings, values, kendall_pairs(values), {"metrics": ["ndcg@10"]})
>>> [p.name for p in write_outputs(study, pathlib.Path(tempfile.mkdtemp()))]
['settings.csv', 'values.csv', 'kendall.csv', 'values.png', 'tau.png', 'report.html']
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from receval.atomic import publish, write_frame, write_text
from receval.report.html import Report
from receval.report.style import figure, series_style
from receval.studies.protocols import ProtocolsStudy
from receval.vocabulary import STUDY_VARIANTS

__all__ = ["tau_figure", "values_figure", "write_outputs"]

_DEFAULTS = next(iter(STUDY_VARIANTS))  # the variant every study has


def values_figure(values: pd.DataFrame, metric: str) -> Any:
    """``metric`` per recommender (one line each) across the protocols, one panel per k-core.

    With a ``variant`` column holding ``tuned`` rows, each recommender's tuned values are a
    dashed line of its colour, labelled ``NAME (tuned)``.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per core, the protocols on the x axis.

    Examples
    --------
    >>> v = pd.DataFrame({"protocol": ["loo", "temporal"] * 2, "core": 0, "algorithm": ["a", "a", "b", "b"],
    ...                   "metric": "ndcg@10", "value": [0.1, 0.2, 0.3, 0.1]})
    >>> ax = values_figure(v, "ndcg@10").axes[0]
    >>> ax.get_title(), [line.get_label() for line in ax.get_lines()]
    ('no k-core', ['a', 'b'])
    >>> both = pd.concat([v.assign(variant="defaults"), v.assign(variant="tuned", value=v["value"] + 0.1)])
    >>> [line.get_label() for line in values_figure(both, "ndcg@10").axes[0].get_lines()]
    ['a', 'a (tuned)', 'b', 'b (tuned)']
    """
    part = values[values["metric"] == metric]
    if "variant" not in part:
        part = part.assign(variant=_DEFAULTS)
    cores = list(dict.fromkeys(part["core"]))
    protocols = list(dict.fromkeys(part["protocol"]))
    fig, axes = figure(1, len(cores), width=3.4, height=3.2)
    for ax, core in zip(axes[0], cores, strict=True):
        here = part[part["core"] == core]
        grid = here.pivot_table(index="protocol", columns=["algorithm", "variant"], values="value", sort=False)
        grid = grid.reindex(protocols)
        names = list(dict.fromkeys(here["algorithm"]))
        for i, name in enumerate(names):
            for variant in STUDY_VARIANTS:
                if (name, variant) not in grid.columns:
                    continue
                tuned = variant != _DEFAULTS
                style = {**series_style(i), **({"linestyle": "--", "alpha": 0.8} if tuned else {})}
                label = f"{name} ({variant})" if tuned else str(name)
                ax.plot(range(len(protocols)), grid[name, variant].to_numpy(dtype=float), label=label, **style)
        ax.set_xticks(range(len(protocols)), protocols)
        ax.set(title=f"{core}-core" if core else "no k-core", ylabel=metric)
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return fig


def tau_figure(kendall: pd.DataFrame, metric: str, variant: str = "defaults") -> Any:
    """Kendall τ between the rankings by ``metric`` of every two settings (protocol/core), as a heat map.

    With a ``variant`` column, the rankings of ``variant`` only.

    Returns
    -------
    matplotlib.figure.Figure
        A symmetric matrix on −1 … 1, the diagonal 1, each cell printed with its τ.

    Examples
    --------
    >>> k = pd.DataFrame({"metric": "m", "protocol_a": ["loo"], "core_a": 0, "protocol_b": ["random"], "core_b": 0,
    ...                   "tau": [0.5], "n": [3]})
    >>> [t.get_text() for t in tau_figure(k, "m").axes[0].get_xticklabels()]
    ['loo/0', 'random/0']
    """
    part = kendall[kendall["metric"] == metric]
    if "variant" in part:
        part = part[part["variant"] == variant]
    a = part["protocol_a"] + "/" + part["core_a"].astype(str)
    b = part["protocol_b"] + "/" + part["core_b"].astype(str)
    names = list(dict.fromkeys([*a, *b]))
    matrix = np.eye(len(names))
    for x, y, tau in zip(a, b, part["tau"], strict=True):
        matrix[names.index(x), names.index(y)] = matrix[names.index(y), names.index(x)] = tau
    side = 1.6 + 0.45 * len(names)
    fig, axes = figure(1, 1, width=side + 1.0, height=side)
    ax = axes[0][0]
    image = ax.imshow(matrix, cmap="RdBu", vmin=-1, vmax=1)
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.grid(False)
    for (r, c), v in np.ndenumerate(matrix):
        if np.isfinite(v) and len(names) <= 20:
            ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(image, ax=ax, label=f"Kendall τ-b of the rankings by {metric} ({variant})")
    return fig


def _tau_name(variant: str) -> str:
    """The τ heat map's figure name of ``variant``: ``tau``, ``tau-tuned``."""
    return "tau" if variant == _DEFAULTS else f"tau-{variant}"


def write_outputs(study: ProtocolsStudy, folder: str | Path) -> list[Path]:
    """``settings.csv``, ``values.csv``, ``kendall.csv`` (``tuning.csv`` when tuned), the figures and ``report.html``.

    Written as one set; the τ heat map of the tuned variant is ``tau-tuned``.

    Returns
    -------
    list of pathlib.Path
        The CSV files, the PNG figures and the page.
    """
    out = Path(folder)
    tables = {"settings": study.settings, "values": study.values, "kendall": study.kendall}
    tuned = not study.tuning.empty
    if tuned:
        tables["tuning"] = study.tuning
    paths = [out / f"{name}.csv" for name in tables]
    metric = (study.design.get("metrics") or list(dict.fromkeys(study.values["metric"])))[0]
    held = set(study.values["variant"]) if "variant" in study.values else {_DEFAULTS}
    variants = [v for v in STUDY_VARIANTS if v in held]
    with publish(out) as publication:
        # the tuned variant's table and figure of an earlier run with --trials go when this one has none
        figures = ["values", *(_tau_name(v) for v in STUDY_VARIANTS)]
        owned = ["settings.csv", "values.csv", "kendall.csv", "tuning.csv", "report.html"]
        publication.owns(out, [*owned, *(f"{name}.{ext}" for name in figures for ext in ("png", "svg"))])
        for path, frame in zip(paths, tables.values(), strict=True):
            write_frame(publication.path(path), frame)
        rep = Report(title="Protocols: leakage and the ranking of recommenders", figures_dir=out,
                     publication=publication)  # fmt: skip
        rep.footnote = (
            "train_after_test: share of training interactions later than their user's first test interaction; "
            "global_after_test: mean over test users of the share of all training interactions later than the "
            "user's test time (Ji et al., TOIS 2023). Values of rolling windows are the mean over the windows."
        )
        if tuned:
            rep.footnote += (
                f" tuned: {study.design.get('trials')} seeded random-search draws per recommender and setting, "
                f"chosen with the defaults by {metric} on a validation part of each training part (the same kind "
                "of split), refitted on the training part; τ is computed within each variant."
            )
        rep.heading("Leakage and what each k-core kept")
        rep.frame(study.settings, "settings")
        rep.heading(f"{metric} per recommender")
        rep.figure("values", f"{metric} per recommender and protocol, one panel per k-core",
                   lambda: values_figure(study.values, metric))  # fmt: skip
        for variant in variants:
            if tuned:
                rep.heading(f"{metric}, {variant}: {STUDY_VARIANTS[variant]}")
            grid = study.table(metric, variant).reset_index()
            rep.frame(grid, "values" if variant == _DEFAULTS else f"values-{variant}")
        rep.heading("Agreement between the protocols")
        if study.kendall.empty:  # one protocol and one core: an empty heat map (and matplotlib's singular-limits noise)
            rep.text("One setting (protocol and k-core) only: there is no pair of rankings to compare.")
        for variant in variants if not study.kendall.empty else []:
            name = _tau_name(variant)
            rep.figure(name, f"Kendall τ between the rankings by {metric} of every two settings ({variant})",
                       partial(tau_figure, study.kendall, metric, variant))  # fmt: skip
        rep.frame(study.kendall, "kendall")
        if tuned:
            rep.heading("Chosen parameters (draw 0: the defaults)")
            rep.frame(study.tuning[study.tuning["chosen"]].drop(columns="chosen"), "tuning")
        page = out / "report.html"
        write_text(publication.path(page), rep.render(str(study.design.get("data") or "")))
    drawn = [path for path in rep.files if path.suffix == ".png"]
    return [*paths, *drawn, page]
