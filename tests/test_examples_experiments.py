"""Every example configuration in examples/ runs with --quick (real-data ones skip without ../shared/data).

The quick runs themselves are made in test_report_layout.py, which also checks their reports.

An example teaches its settings: on MovieLens 100K each built-in personalised recommender
it runs must rank better than Popularity (a setting that does not, such as kNN lists by
co-rated Pearson, is the trap the README warns about).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import SHARED_DATA
from receval.experiment import expand, load_config

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))
# The built-in recommenders whose lists depend on the user's own history (the others rank
# every user's unseen items in one order), and the accuracy metrics compared (higher is better).
PERSONALISED = ("user-knn", "item-knn", "mf", "hkv", "knn-bandit")
ACCURACY = re.compile(r"^(precision|recall|ndcg|map|mrr)(@\d+)?$")


def _written_paths(path: Path) -> list[str]:
    return re.findall(r'^path = "([^"]+)"', path.read_text(), flags=re.M)


def _data_paths(path: Path) -> list[Path]:
    """The data folders a config names, resolved as the runner resolves them (against the config's folder)."""
    return [(path.parent / found).resolve() for found in _written_paths(path)]


def test_example_data_paths_are_relative_to_the_config() -> None:
    # An absolute path names one machine's folders: on any other the example would only skip.
    written = [(example.name, found) for example in EXAMPLES for found in _written_paths(example)]
    assert written and not [pair for pair in written if Path(pair[1]).is_absolute()]
    shared = str(SHARED_DATA.resolve())  # resolved like the configs' paths (shared/ may be a link)
    assert all(str(folder).startswith(shared) for example in EXAMPLES for folder in _data_paths(example))


def test_runner_resolves_a_relative_path_against_the_config(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    data = tmp_path / "data.csv"
    data.write_text("user,item,rating\n1,1,5\n1,2,3\n2,1,4\n2,2,2\n")
    config = tmp_path / "cfg" / "exp.toml"
    config.write_text(
        'name = "rel"\nseeds = [0]\nmetrics = ["rmse"]\n[datasets.d]\npath = "../data.csv"\nformat = "csv"\n'
        '[protocol]\nname = "one-shot"\n[recommenders.gm]\nalgorithm = "global-mean"\n'
    )
    spec = load_config(config).datasets["d"]
    assert spec.path == "../data.csv" and Path(spec.resolved_path).resolve() == data.resolve()


def test_quickstart_is_a_grid_of_at_least_20_tasks() -> None:
    cfg = load_config(Path(EXAMPLES[0]).parent / "quickstart.toml")
    assert len(expand(cfg)) >= 20
    assert all(spec.generate is not None for spec in cfg.datasets.values())  # no download needed


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_configs_validate(path: Path) -> None:
    assert len(expand(load_config(path))) >= len(expand(load_config(path, quick=True))) >= 1


# Each example's quick run is made once, by test_report_layout.py's
# test_example_runs_quick_and_reports_legibly, which checks its results with the two functions below
# and then its report (a run of every example in each file cost the suite a minute).


def require_data(path: Path) -> None:
    """Skip when the real data an example names are absent; fail when ../shared/data is present without them."""
    for folder in _data_paths(path):
        # With ../shared/data present, a real-data example must run: a missing folder is a broken example.
        if not folder.exists():
            if SHARED_DATA.exists():
                pytest.fail(f"{path.name} names {folder}, which does not exist although {SHARED_DATA} does")
            pytest.skip(f"real data not available: {folder}")


def check_quick_run(path: Path, out: Path) -> None:
    """``receval run PATH --quick`` wrote every task, each ok, and personalised models beat popularity on ML-100k."""
    if load_config(path).tune is not None:  # a tuning example writes its study summary, not a task grid
        summary = json.loads((out / "tune.json").read_text())["algorithms"]
        assert summary and all(r["trials"] >= 1 and math.isfinite(r["test"]) for r in summary.values()), summary
        return
    tasks = pd.read_parquet(out / "tasks.parquet")
    assert len(tasks) == len(expand(load_config(path, quick=True))) and set(tasks["status"]) == {"ok"}
    aggregates = pd.read_parquet(out / "aggregates.parquet")
    assert len(aggregates) >= len(tasks)
    ml100k = [label for label, spec in load_config(path).datasets.items() if spec.format == "movielens-100k"]
    merged = aggregates.merge(tasks, on="task_id")
    merged = merged[merged["dataset"].isin(ml100k) & merged["metric"].map(lambda m: bool(ACCURACY.match(m)))]
    means = merged.groupby(["dataset", "metric", "algorithm", "recommender"])["value"].mean()
    below = []
    for (dataset, metric), part in means.groupby(level=["dataset", "metric"]):
        by_algorithm = part.droplevel(["dataset", "metric"])
        if "popularity" not in by_algorithm.index.get_level_values("algorithm"):
            continue
        floor = by_algorithm.loc["popularity"].max()
        for (algorithm, recommender), value in by_algorithm.items():
            if algorithm in PERSONALISED and value < floor:
                below.append(f"{dataset} {metric}: {recommender} {value:.4f} < popularity {floor:.4f}")
    assert not below, f"{path.name}: " + "; ".join(below)
