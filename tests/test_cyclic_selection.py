"""The cyclic grid's conclusion step: best configuration per algorithm at round t, ranking, τ."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from receval.cli import main
from receval.errors import ConfigError, DataError, MetricError
from receval.studies.cyclic_selection import best_of_runs, best_per_algorithm


def _rows(dataset, configuration, algorithm, seed, recall, fallout):
    """A trajectory of len(recall) rounds."""
    n = len(recall)
    return pd.DataFrame({"dataset": dataset, "configuration": configuration, "algorithm": algorithm, "seed": seed,
                         "round": np.arange(1, n + 1), "recall": recall, "fallout": fallout})  # fmt: skip


def _grid():
    return pd.concat(
        [
            # data set A: two seeds of each configuration, averaged; b@2 stops after round 2
            _rows("A", "a@1", "a", 0, [0.1, 0.2, 0.4], [0.1, 0.2, 0.3]),
            _rows("A", "a@1", "a", 1, [0.1, 0.2, 0.2], [0.1, 0.2, 0.1]),  # mean at t = 3: 0.3, 0.2
            _rows("A", "a@2", "a", 0, [0.1, 0.3, 0.5], [0.1, 0.3, 0.5]),
            _rows("A", "a@2", "a", 1, [0.1, 0.3, 0.3], [0.1, 0.3, 0.3]),  # 0.4, 0.4
            _rows("A", "b@1", "b", 0, [0.0, 0.1, 0.35], [0.0, 0.1, 0.15]),
            _rows("A", "b@1", "b", 1, [0.0, 0.1, 0.35], [0.0, 0.1, 0.15]),  # 0.35, 0.15
            _rows("A", "b@2", "b", 0, [0.2, 0.45], [0.2, 0.6]),
            _rows("A", "b@2", "b", 1, [0.2, 0.45], [0.2, 0.6]),  # ended at round 2: 0.45, 0.6
            _rows("A", "c", "c", 0, [0.05, 0.1, 0.1], [0.3, 0.3, 0.3]),
            _rows("A", "c", "c", 1, [0.05, 0.1, 0.1], [0.3, 0.3, 0.3]),  # 0.1, 0.3
            # data set B: one seed
            _rows("B", "a@1", "a", 0, [0.1, 0.2, 0.3], [0.1, 0.1, 0.1]),
            _rows("B", "b@1", "b", 0, [0.1, 0.2, 0.2], [0.1, 0.2, 0.2]),
        ],
        ignore_index=True,
    )


def test_best_per_algorithm_by_hand():
    sel = best_per_algorithm(_grid(), t=3)
    a = sel.table[sel.table["dataset"] == "A"].set_index("algorithm")
    # by Recall: a@2 (0.4) beats a@1 (0.3); b@2 (0.45, its last row) beats b@1 (0.35)
    assert a["best_by_recall"].to_dict() == {"a": "a@2", "b": "b@2", "c": "c"}
    assert a["recall"].to_dict() == pytest.approx({"a": 0.4, "b": 0.45, "c": 0.1})
    assert a["recall_rank"].to_dict() == {"a": 2.0, "b": 1.0, "c": 3.0}
    # by Fallout (lower is better): a@1 (0.2), b@1 (0.15)
    assert a["best_by_fallout"].to_dict() == {"a": "a@1", "b": "b@1", "c": "c"}
    assert a["fallout"].to_dict() == pytest.approx({"a": 0.2, "b": 0.15, "c": 0.3})
    assert a["fallout_rank"].to_dict() == {"a": 2.0, "b": 1.0, "c": 3.0}
    assert sel.tau["A"] == pytest.approx(1.0)  # the two rankings agree: b, a, c
    b = sel.table[sel.table["dataset"] == "B"].set_index("algorithm")
    assert b["recall_rank"].to_dict() == {"a": 1.0, "b": 2.0} and b["fallout_rank"].to_dict() == {"a": 1.0, "b": 2.0}


def test_round_t_and_the_last_round():
    early = best_per_algorithm(_grid(), t=1).table.set_index(["dataset", "algorithm"])
    assert early.loc[("A", "b"), "best_by_recall"] == "b@2" and early.loc[("A", "b"), "recall"] == pytest.approx(0.2)
    assert early.loc[("A", "a"), "round"] == 1
    # the default t = 500 is past every run: each counts with its last row, as t=None does
    pd.testing.assert_frame_equal(best_per_algorithm(_grid()).table, best_per_algorithm(_grid(), t=None).table)


def test_tau_variants_differ_on_tied_rankings():
    table = pd.concat(
        [
            _rows("", "x", "x", 0, [0.3], [0.1]),
            _rows("", "y", "y", 0, [0.2], [0.1]),  # ties x by Fallout
            _rows("", "z", "z", 0, [0.1], [0.2]),
        ]
    )
    assert best_per_algorithm(table, tau="a").tau[""] == pytest.approx(2 / 3)
    assert best_per_algorithm(table, tau="b").tau[""] == pytest.approx(2 / math.sqrt(6))


def test_best_of_runs_splits_labels_at_the_at_sign():
    one = pd.DataFrame({"round": [1, 2], "recall": [0.1, 0.2], "fallout": [0.1, 0.2]})
    runs = {"ucb": one, "ucb@d05": one.assign(recall=[0.1, 0.3]), "pop": one.assign(fallout=[0.0, 0.05])}
    sel = best_of_runs(runs, 2)
    assert sel.table.set_index("algorithm")["best_by_recall"].to_dict() == {"ucb": "ucb@d05", "pop": "pop"}
    assert best_of_runs({"ucb": one, "pop": one}) is None


def test_bad_input_is_refused():
    with pytest.raises(DataError, match="no column 'algorithm'"):
        best_per_algorithm(_grid().drop(columns="algorithm"))
    with pytest.raises(ConfigError, match="tau='c'"):
        best_per_algorithm(_grid(), tau="c")
    with pytest.raises(ConfigError, match="t=0 must be a positive round"):
        best_per_algorithm(_grid(), t=0)
    with pytest.raises(MetricError, match="unknown metric 'lucky'"):
        best_per_algorithm(_grid(), metrics=("lucky", "fallout"))


def test_results_command_selects_in_a_cyclic_store(tmp_path, capsys):
    config = tmp_path / "grid.toml"
    config.write_text(
        'name = "g"\nmetrics = ["recall", "fallout"]\nseeds = [0, 1]\n[datasets.toy]\n'
        "generate = { n_users = 30, n_items = 20, n_ratings = 300 }\nthreshold = 4\n"
        '[recommenders.pop]\nalgorithm = "popularity"\n[recommenders.eg]\nalgorithm = "item-bandit-egreedy"\n'
        'params = { epsilon = [0.1, 0.5] }\n[protocol]\nname = "cyclic"\nrounds = 4\npreset = "thesis"\ntau = "b"\n'
    )
    out = tmp_path / "res"
    assert main(["run", str(config), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["results", str(out), "--best-per-algorithm", "--output", "json"]) == 0
    doc = __import__("json").loads(capsys.readouterr().out)["best_per_algorithm"]
    rows = {r[1]: dict(zip(doc["columns"], r, strict=True)) for r in doc["rows"]}
    assert set(rows) == {"popularity", "item-bandit-egreedy"} and "τ-b" in doc["title"]
    # independent: the trajectories' last rounds, averaged over the two seeds, by configuration
    from receval.experiment.store import ResultStore

    store = ResultStore(out)
    tasks = store.read("tasks")
    traj = store.read("trajectories").merge(tasks[["task_id", "label"]], on="task_id")
    last = traj[traj["round"] == 4].assign(config=lambda f: f["label"].str.replace(r" seed=\d+$", "", regex=True))
    means = last.groupby("config")[["recall", "fallout"]].mean()
    eg = means[means.index.str.contains("eg")]
    assert rows["item-bandit-egreedy"]["recall"] == pytest.approx(eg["recall"].max())
    assert rows["item-bandit-egreedy"]["fallout"] == pytest.approx(eg["fallout"].min())
    assert main(["results", str(out), "--best-per-algorithm"]) == 0
    assert "τ-b(Recall ranking, Fallout ranking)" in capsys.readouterr().out
