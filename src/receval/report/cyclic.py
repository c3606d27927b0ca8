"""Figures of cyclic simulations: normalised Recall/Fallout curves and ranking plots.

Both take a mapping of algorithm names to :class:`~receval.simulate.Trajectory` (or
trajectory tables) and write a PNG atomically; :func:`write_outputs` writes a run's
tables and both figures to a folder, as one set (:func:`receval.atomic.publish`).

Examples
--------
>>> import pandas as pd, tempfile, pathlib
>>> t = pd.DataFrame({"round": [1, 2], "recall_norm": [0.1, 0.2], "fallout_norm": [0.2, 0.1],
...                   "recall": [0.1, 0.2], "fallout": [0.2, 0.3]})
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> plot_curves({"a": t, "b": t * 1.0}, out / "curves.png").exists()
True
>>> plot_ranks({"a": t, "b": t * 1.0}, out / "ranks.png").exists()
True
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from receval.atomic import atomic_write, publish, write_frame
from receval.errors import DataError
from receval.stats.agreement import ranks_over_time, tau_curve
from receval.studies.cyclic_selection import DEFAULT_ROUND, Selection, best_of_runs, best_per_algorithm

__all__ = ["OUTPUT_FILES", "plot_curves", "plot_ranks", "write_outputs", "store_best_per_algorithm"]

OUTPUT_FILES = ("trajectories.parquet", "trajectories.csv", "final.csv", "tau.csv", "ranks.csv",
                "best_per_algorithm.csv", "curves.png", "ranks.png")  # fmt: skip
"""Every file :func:`write_outputs` may write (``best_per_algorithm.csv`` only when the run is long enough)."""


def _figure(ncols: int):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, *plt.subplots(1, ncols, figsize=(6 * ncols, 4.5), squeeze=False)


def _table(traj: Any):
    return traj.table if hasattr(traj, "table") else traj


def plot_curves(
    trajectories: Mapping[str, Any], path: str | Path, metrics: tuple[str, ...] = ("recall_norm", "fallout_norm")
) -> Path:
    """One panel per metric (default the normalised Recall and Fallout), one line per algorithm.

    Returns
    -------
    pathlib.Path
        ``path``, now holding the PNG.

    Examples
    --------
    >>> import tempfile
    >>> t = pd.DataFrame({"round": [1, 2], "recall_norm": [0.1, 0.2], "fallout_norm": [0.2, 0.1]})
    >>> plot_curves({"a": t, "b": t * 0.5}, Path(tempfile.mkdtemp()) / "curves.png").read_bytes()[:4]
    b'\\x89PNG'
    """
    plt, fig, axes = _figure(len(metrics))
    for ax, metric in zip(axes[0], metrics, strict=True):
        for name, traj in trajectories.items():
            table = _table(traj)
            ax.plot(table["round"], table[metric], label=name)
        ax.set_xlabel("round t")
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize="small")
    fig.tight_layout()
    out = atomic_write(path, lambda p: fig.savefig(p, format="png", dpi=110))
    plt.close(fig)
    return out


def plot_ranks(
    trajectories: Mapping[str, Any], path: str | Path, metrics: tuple[str, ...] = ("recall", "fallout")
) -> Path:
    """Each algorithm's quality rank (1 = best) under each metric over the rounds.

    Returns
    -------
    pathlib.Path
        ``path``, now holding the PNG.

    Examples
    --------
    >>> import tempfile
    >>> t = pd.DataFrame({"round": [1, 2], "recall": [0.1, 0.2], "fallout": [0.2, 0.3]})
    >>> plot_ranks({"a": t, "b": t * 0.5}, Path(tempfile.mkdtemp()) / "ranks.png").name
    'ranks.png'
    """
    plt, fig, axes = _figure(len(metrics))
    for ax, metric in zip(axes[0], metrics, strict=True):
        ranks = ranks_over_time(trajectories, metric)
        for name in ranks.columns:
            ax.plot(ranks.index, ranks[name], label=name)
        ax.set_xlabel("round t")
        ax.set_ylabel(f"rank by {metric} (1 = best)")
        ax.invert_yaxis()
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize="small")
    fig.tight_layout()
    out = atomic_write(path, lambda p: fig.savefig(p, format="png", dpi=110))
    plt.close(fig)
    return out


def write_outputs(out: str | Path, runs: Mapping[str, Any], tau: str = "b") -> Path:
    """Write ``trajectories.parquet``/``.csv``, ``final.csv``, ``tau.csv``, ``ranks.csv``,
    ``curves.png`` and ``ranks.png`` for trajectories of several algorithms to ``out``.

    ``tau`` is the Kendall τ variant of ``tau.csv`` (``"b"`` or the thesis' ``"a"``).
    When a label ``NAME@TAG`` makes several configurations of one algorithm NAME,
    ``best_per_algorithm.csv`` holds each algorithm's best configuration at the last
    round by Recall and by Fallout, their ranks and τ between the rankings
    (:func:`receval.studies.cyclic_selection.best_of_runs`).

    Returns
    -------
    pathlib.Path
        ``out``, now holding the seven files (eight with several configurations of one
        algorithm), published together.

    Examples
    --------
    >>> import tempfile
    >>> a = pd.DataFrame({"round": [1, 2], "recall_norm": [0.1, 0.2], "fallout_norm": [0.2, 0.1], "recall": [0.1, 0.2],
    ...                   "fallout": [0.2, 0.3], "precision": [0.3, 0.2], "anti_precision": [0.1, 0.2]})
    >>> b = a.assign(recall=[0.05, 0.1], fallout=[0.3, 0.4])  # worse than a by both
    >>> out = write_outputs(Path(tempfile.mkdtemp()) / "simulation", {"a": a, "b": b})
    >>> sorted(p.name for p in out.iterdir())
    ['curves.png', 'final.csv', 'ranks.csv', 'ranks.png', 'tau.csv', 'trajectories.csv', 'trajectories.parquet']
    >>> pd.read_csv(out / "tau.csv")["recall_fallout"].tolist()  # Recall and Fallout rank a first in every round
    [1.0, 1.0]
    """
    out = Path(out)
    tables = pd.concat([_table(run).assign(algorithm=name) for name, run in runs.items()], ignore_index=True)
    final = pd.DataFrame({name: _table(run).iloc[-1] for name, run in runs.items()}).T.rename_axis("algorithm")
    curve = tau_curve(runs, "recall", "fallout", tau).rename(columns={"tau": "recall_fallout"})
    curve["precision_anti_precision"] = tau_curve(runs, "precision", "anti_precision", tau)["tau"]
    selection = best_of_runs(runs, tau=tau)
    ranks = pd.concat(
        {m: ranks_over_time(runs, m) for m in ("recall", "fallout", "precision", "anti_precision")}, axis=1
    )
    ranks.columns = [f"{m}:{a}" for m, a in ranks.columns]
    with publish(out) as publication:
        publication.owns(out, OUTPUT_FILES)  # best_per_algorithm.csv of an earlier, longer run goes
        write_frame(publication.path(out / "trajectories.parquet"), tables)
        write_frame(publication.path(out / "trajectories.csv"), tables)
        write_frame(publication.path(out / "final.csv"), final, index=True)
        write_frame(publication.path(out / "tau.csv"), curve)
        write_frame(publication.path(out / "ranks.csv"), ranks, index=True)
        if selection is not None:
            best = selection.table.drop(columns="dataset").assign(kendall_tau=selection.tau[""])
            write_frame(publication.path(out / "best_per_algorithm.csv"), best)
        plot_curves(runs, publication.path(out / "curves.png"))
        plot_ranks(runs, publication.path(out / "ranks.png"))
    return out


def store_best_per_algorithm(store: Any, t: int | None = DEFAULT_ROUND, tau: str | None = None) -> Selection:
    """:func:`~receval.studies.cyclic_selection.best_per_algorithm` of a cyclic experiment's results.

    ``store`` is a :class:`~receval.experiment.store.ResultStore`; a configuration is a
    finished task's label without its seed and fold (values averaged over seeds), its
    algorithm the registered name (``item-bandit-egreedy``). ``tau`` None: the
    configuration's ``[protocol] tau``, else its preset's
    (:data:`receval.recommenders.registry.SIMULATION_PRESETS`).

    Returns
    -------
    Selection
        Per data set, the best configuration of each algorithm at round ``t`` by Recall
        and by Fallout, the algorithms' ranks and τ between the two rankings.

    Examples
    --------
    >>> import tempfile
    >>> from receval.experiment import parse_config, run_experiment
    >>> text = 'name = "g"\\nmetrics = ["recall", "fallout"]\\n[datasets.toy]\\n'
    >>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 300 }\\nthreshold = 4\\n'
    >>> text += '[recommenders.pop]\\nalgorithm = "popularity"\\n'
    >>> text += '[recommenders.eg]\\nalgorithm = "item-bandit-egreedy"\\n'
    >>> text += 'params = { epsilon = [0.1, 0.3] }\\n[protocol]\\nname = "cyclic"\\nrounds = 3\\npreset = "thesis"\\n'
    >>> report = run_experiment(parse_config(text), out=tempfile.mkdtemp(), processes=False)
    >>> sel = store_best_per_algorithm(report.store)
    >>> sel.variant, sel.table["algorithm"].tolist()  # the thesis preset's τ-a
    ('a', ['item-bandit-egreedy', 'popularity'])
    """
    from receval.experiment.runner import _configs  # the label without seed and fold, as the summary groups
    from receval.recommenders.registry import SIMULATION_PRESETS

    if "trajectories" not in store.table_names():
        raise DataError(
            f"{str(store.root)!r} holds no trajectories table: the best configuration per algorithm needs the results "
            'of a cyclic experiment ([protocol] name = "cyclic")'
        )
    if tau is None:
        protocol = (store.meta() or {}).get("config", {}).get("protocol", {})
        tau = protocol.get("tau") or SIMULATION_PRESETS.get(protocol.get("preset", "standard"), {}).get("tau", "b")
    tasks = store.read("tasks")
    tasks = tasks[tasks["status"] == "ok"].assign(configuration=lambda f: _configs(f).str.split("/", n=1).str[-1])
    traj = store.read("trajectories").merge(tasks[["task_id", "dataset", "algorithm", "configuration"]], on="task_id")
    return best_per_algorithm(traj.drop(columns="task_id"), t, tau=str(tau))
