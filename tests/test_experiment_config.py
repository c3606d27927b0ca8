"""Experiment configs: validation messages with lines, grid expansion, task ids, the store's rules."""

from __future__ import annotations

import pandas as pd
import pytest

from receval.errors import ConfigError
from receval.experiment import ResultStore, expand, parse_config
from receval.experiment.config import load_config

BASE = """\
name = "t"
seeds = 3
metrics = ["precision@5", "ndcg@5"]

[datasets.toy]
generate = { n_users = 40, n_items = 30, n_ratings = 300 }

[split]
method = "holdout"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = [5, 10]

[recommenders.popularity]
params = { threshold = [3, 4] }

[recommenders.rnd]
algorithm = "random"

[quick]
seeds = [0]
[quick.protocol]
k = 5
"""


def test_grid_size_ids_and_quick() -> None:
    cfg = parse_config(BASE, path="t.toml")
    tasks = expand(cfg)
    assert len(tasks) == (2 + 1) * 2 * 3  # recommender points x k values x seeds
    assert len({t.id for t in tasks}) == len(tasks)
    again = expand(parse_config(BASE, path="elsewhere.toml"))
    assert [t.id for t in again] == [t.id for t in tasks]  # ids do not depend on the file's location
    quick = expand(parse_config(BASE, path="t.toml", quick=True))
    assert len(quick) == 3 and {t.seed for t in quick} == {0} and {t.options["k"] for t in quick} == {5}
    assert parse_config(BASE, quick=True).hash != cfg.hash
    changed = expand(parse_config(BASE.replace("test_fraction = 0.2", "test_fraction = 0.3")))
    assert not {t.id for t in changed} & {t.id for t in tasks}  # any change to what a task does changes its id


def test_seed_list_and_defaults(tmp_path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(BASE.replace("seeds = 3", "seeds = [7, 11]"))
    cfg = load_config(path)
    assert cfg.seeds == (7, 11) and cfg.name == "t"
    assert cfg.protocol.options == {"k": [5, 10]}
    options = expand(cfg)[0].options
    assert options == {"k": 5, "exclude_train": True, "threshold": None, "cold_start": "empty"}  # the data decides


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (("seeds = 3", "sedes = 3"), 2, "unknown key 'sedes' at the top level"),
        (("generate =", "generat ="), 6, "unknown key 'generat' in [datasets.toy]"),
        (("{ threshold", "{ treshold"), 17, "has no parameter 'treshold'"),
        (('algorithm = "random"', 'algorithm = "item-knnn"'), 20, "unknown algorithm 'item-knnn'"),
        (('"ndcg@5"', '"ndgc@5"'), 3, "unknown metric 'ndgc'"),
        (("k = [5, 10]", 'k = "ten"'), 14, "'protocol.k' must be an integer"),
        (("[3, 4]", "[]"), 17, "empty grid"),
        (('"one-shot"', '"oneshot"'), 13, "unknown protocol 'oneshot'; known: attack"),
        (('"one-shot"', '"one-shoot"'), 13, "; did you mean 'one-shot'?"),
        (("k = [5, 10]", "kk = 3"), 14, "unknown option 'kk' of protocol 'one-shot'"),
        (('method = "holdout"', 'method = "holdot"'), 9, "unknown split method 'holdot'"),
        (("test_fraction = 0.2", "test_fraction = [0.2]"), 10, "'split.test_fraction' must be"),
        (("k = [5, 10]", "k = [5, 10"), None, "not valid TOML"),
    ],
)
def test_bad_configs_say_what_and_where(edit: tuple[str, str], line: int | None, message: str) -> None:
    text = BASE.replace(*edit)
    assert text != BASE
    with pytest.raises(ConfigError) as info:
        parse_config(text, path="bad.toml")
    assert message in str(info.value)
    assert info.value.path == "bad.toml"
    if line is not None:
        assert info.value.line == line


def test_other_bad_configs() -> None:
    with pytest.raises(ConfigError, match=r"line 2: seeds = \[\]: give at least one seed"):  # not expand's zero tasks
        parse_config(BASE.replace("seeds = 3", "seeds = []"))
    with pytest.raises(ConfigError, match="needs exactly one of 'name'"):
        parse_config(BASE.replace("generate = {", 'path = "x"\nformat = "csv"\ngenerate = {'))
    with pytest.raises(ConfigError, match="unknown user slice 'activty'"):
        parse_config(BASE + '[slices]\nuser = ["activty"]\n')
    with pytest.raises(ConfigError, match="needs at least one metric"):
        parse_config(BASE.replace('metrics = ["precision@5", "ndcg@5"]', "metrics = []"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_config("/nonexistent/config.toml")


def test_store_refuses_other_config_unless_forced(tmp_path) -> None:
    store = ResultStore(tmp_path / "exp")
    store.open({"name": "a", "config_hash": "aaa"})
    store.write_task("t1", {"status": "ok"}, {"aggregates": pd.DataFrame({"metric": ["m"], "value": [1.0]})})
    store.open({"name": "a", "config_hash": "aaa"})  # same config: fine, keeps results
    assert store.finished_ids() == {"t1"}
    with pytest.raises(ConfigError, match="different configuration"):
        store.open({"name": "b", "config_hash": "bbb"})
    store.open({"name": "b", "config_hash": "bbb"}, force=True)
    assert store.finished_ids() == set() and store.meta()["config_hash"] == "bbb"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not empty"):
        ResultStore(tmp_path / "other").open({"name": "a", "config_hash": "aaa"})


def test_store_rewrites_tasks_atomically_without_duplicates(tmp_path) -> None:
    store = ResultStore(tmp_path)
    store.open({"name": "a", "config_hash": "h"})
    agg = pd.DataFrame({"metric": ["m"], "value": [0.5]})
    store.write_task("t2", {"status": "failed", "error": "boom"}, {})
    store.write_task("t1", {"status": "ok", "error": None}, {"aggregates": agg})
    assert store.finished_ids() == {"t1"} and store.finished_ids(ok_only=False) == {"t1", "t2"}
    store.write_task("t2", {"status": "ok", "error": None}, {"aggregates": agg.assign(value=0.7)})  # a retry
    store.rebuild()
    tasks = pd.read_parquet(tmp_path / "tasks.parquet")
    assert tasks["task_id"].tolist() == ["t1", "t2"] and tasks["status"].tolist() == ["ok", "ok"]
    aggs = pd.read_parquet(tmp_path / "aggregates.parquet")
    assert aggs["task_id"].tolist() == ["t1", "t2"] and aggs["value"].tolist() == [0.5, 0.7]
    assert not list(tmp_path.glob("**/.*tmp*"))


_SAMPLED = """name = "s"
metrics = ["ndcg@10"]
[datasets.toy]
generate = { n_users = 40, n_items = 120, n_ratings = 1200 }
[split]
method = "loo-random"
[recommenders.popularity]
[protocol]
name = "sampled"
"""
_CYCLIC = """name = "y"
[datasets.toy]
generate = { n_users = 30, n_items = 20, n_ratings = 300 }
threshold = 4
[recommenders.popularity]
[protocol]
name = "cyclic"
"""
_OTHERS = """name = "o"
metrics = ["recall@5"]
[datasets.toy]
generate = { n_users = 30, n_items = 20, n_ratings = 300 }
threshold = 4
[recommenders.biases]
[protocol]
"""
_METAEVAL = """name = "m"
metrics = ["ndcg@10"]
[datasets.toy]
generate = { n_users = 30, n_items = 20, n_ratings = 300, n_aspects = 3 }
[protocol]
name = "metaeval"
"""
_COHERENCE = """name = "c"
[datasets.toy]
generate = { n_users = 40, n_items = 30, n_ratings = 500, n_aspects = 4, reratings = 2 }
[protocol]
name = "coherence-barrier"
"""


@pytest.mark.parametrize(
    ("base", "option", "expected"),
    [
        (_SAMPLED, "n = 0", "protocol.n 0: give an integer of at least 1"),
        (_SAMPLED, "repeats = -2", "protocol.repeats -2"),
        (_SAMPLED, 'sampling = "pop"', "protocol.sampling='pop' is not known"),
        (_SAMPLED, 'sampling = ["uniform", "pop"]', "protocol.sampling='pop' is not known"),
        (_SAMPLED, 'shape = "per-row"', "protocol.shape='per-row' is not known"),
        (_SAMPLED, 'corrections = ["bv", "lsq"]', "'lsq' is not known"),
        (_SAMPLED, 'corrections = ["bv"]\nsampling = ["uniform", "popularity"]', "assumes uniformly sampled"),
        (_COHERENCE, 'keep = "median"', "protocol.keep = 'median': use one of first, last, mean"),
        (_COHERENCE, "ddof = 2", "protocol.ddof = 2"),
        (_COHERENCE, 'gammas = ["wstd", "nosuch"]', "give coherence functions of"),
        (_CYCLIC, 'order = "shuffled"', "order='shuffled' is not one of random, uniform-with-replacement"),
        (_CYCLIC, 'updates = ["sequential", "later"]', "updates='later' is not one of sequential, batched"),
        (_CYCLIC, 'unknown = "skip"', "protocol.unknown 'skip' is not one of model"),
        (_CYCLIC, 'preset = "paper"', "protocol.preset 'paper' is not one of standard"),
        (_OTHERS + 'name = "debiased"\n', 'estimators = ["naive", "nips"]', "'nips' is not one of naive, ips"),
        (_OTHERS + 'name = "debiased"\n', 'propensities = ["magic"]', "'magic' is not one of frequency"),
        (_OTHERS + 'name = "attack"\n', 'attack = "flood"', "unknown attack 'flood'"),
        (_OTHERS + 'name = "attack"\n', 'intent = "push"\nattack = ["average", "love-hate"]', "it has no push form"),
        (_OTHERS + 'name = "coherence-split"\n', 'gamma = "median"', "protocol.gamma 'median' is not one of"),
        (_OTHERS + 'name = "coherence-split"\n', 'avg = "mean"', "protocol.avg 'mean' is not one of users, equal"),
        (_OTHERS + 'name = "coherence-split"\n', "ps = [0.5, 1.5]", "protocol.ps 1.5: give a number strictly"),
        (_METAEVAL, 'experiments = ["swap", "power"]', "'power' is not an experiment"),
        (_METAEVAL, "experiments = []", "protocol.experiments: no experiment"),
        (_METAEVAL, 'systems = ["popularty"]', "unknown algorithm 'popularty'"),
        (_METAEVAL, "strengths = [0.2, 1.5]", "strength=1.5: give a number of at most 1"),
        (_METAEVAL, "fractions = [0]", "fraction=0: give a number strictly between 0 and 1"),
    ],
)
def test_protocol_option_values_are_refused_at_parse_time_on_their_line(base, option, expected):
    text = base + option + "\n"
    with pytest.raises(ConfigError) as caught:
        parse_config(text, path="c.toml")
    line = len(base.splitlines()) + 1  # the option's own line (the first of two)
    assert expected in str(caught.value) and f"c.toml, line {line}:" in str(caught.value), str(caught.value)
