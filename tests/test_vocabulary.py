"""One vocabulary: every ``receval split --method`` name means the same in a configuration and in
:func:`receval.split.split_by_name`, and every configuration name works on the command line (receval.vocabulary)."""

from __future__ import annotations

from pathlib import Path

import pytest

from receval.cli import main
from receval.data.synthetic import generate
from receval.data.tables import read_table
from receval.errors import ConfigError
from receval.experiment import expand, parse_config
from receval.experiment.protocols import split_for
from receval.recommenders import list_algorithms
from receval.split import split_by_name
from receval.vocabulary import NO_SPLIT, SPLIT_ALIASES, SPLIT_METHODS, split_method

# the names a configuration accepted before the vocabulary was one table: they keep their meaning
_CONFIG_NAMES = {
    "holdout": "holdout",
    "per_user_holdout": "per-user",
    "temporal": "temporal",
    "leave_one_out": "leave-one-out",
    "kfold_per_user": "kfold",
}
_ALL = [*SPLIT_METHODS, *SPLIT_ALIASES, *_CONFIG_NAMES]


def _spellings(name: str) -> list[str]:
    return sorted({name, name.replace("-", "_"), name.upper(), name.title().replace("_", "-")})


@pytest.fixture(scope="module")
def data():
    return generate(n_users=40, n_items=50, n_ratings=700, seed=3)  # with timestamps, for the temporal methods


def _pairs(parts) -> list[list[tuple[int, int]]]:
    return [sorted(zip(test.users.tolist(), test.items.tolist(), strict=True)) for _, test in parts]


def _config(method: str, options: str = "") -> str:
    return f"""
seeds = [4]
metrics = ["precision@5"]
[datasets.toy]
generate = {{ n_users = 40, n_items = 50, n_ratings = 700, seed = 3 }}
[split]
method = "{method}"
{options}
[protocol]
name = "one-shot"
[recommenders.pop]
algorithm = "popularity"
"""


def test_the_table_names_each_function_and_its_options():
    import inspect

    import receval.split as splits

    excluded = {"temporal-per-user": {"at"}}  # one cut date for all users contradicts per-user cuts (refused)
    for method in SPLIT_METHODS.values():
        params = inspect.signature(getattr(splits, method.function)).parameters
        keywords = [p for p in list(params)[1:] if p != "seed"]
        assert set(method.fixed) <= set(keywords), method
        left = set(keywords) - set(method.fixed) - excluded.get(method.name, set())
        assert sorted(method.options) == sorted(left), method
    assert {split_method(name).name for name in SPLIT_ALIASES} <= set(SPLIT_METHODS)


@pytest.mark.parametrize("name", _ALL)
def test_each_name_means_one_split_in_python_and_in_a_configuration(data, name):
    canonical = _CONFIG_NAMES.get(name, SPLIT_ALIASES.get(name, name))
    expected = _pairs(split_by_name(data, canonical, seed=4))
    for spelling in _spellings(name):
        assert _pairs(split_by_name(data, spelling, seed=4)) == expected, spelling
        cfg = parse_config(_config(spelling), path="t.toml")
        tasks = expand(cfg)
        parts = [split_for(task, data) for task in tasks if task.recommender == "pop"]
        assert _pairs(parts) == expected, spelling


@pytest.mark.parametrize("name", _ALL)
def test_each_name_works_on_the_command_line(tmp_path: Path, data, name):
    ratings = tmp_path / "r.tsv"
    frame = data.to_frame()
    frame[["user", "item", "rating", "timestamp"]].to_csv(ratings, sep="\t", index=False)
    expected = split_by_name(data, name, seed=4)
    out = tmp_path / "out"
    assert main(["split", str(ratings), "--method", name.upper(), "--seed", "4", "--out", str(out)]) == 0
    for number, (_, test) in enumerate(expected, start=1):
        folder = out / f"fold-{number}" if len(expected) > 1 else out
        written = read_table(folder / "test.tsv", "truth")
        got = sorted(zip(written["user"].astype(int), written["item"].astype(int), strict=True))
        ids = sorted(zip(data.user_ids[test.users].astype(int), data.item_ids[test.items].astype(int), strict=True))
        assert got == ids, (name, number)


def test_a_configuration_sets_the_options_of_its_method(data):
    cfg = parse_config(_config("temporal", "per_user = true\ntest_fraction = 0.3"), path="t.toml")
    (task,) = expand(cfg)
    assert _pairs([split_for(task, data)]) == _pairs(split_by_name(data, "temporal-per-user", test_fraction=0.3))
    with pytest.raises(ConfigError, match=r"t\.toml, line 8: unknown key 'per_user' of split method 'loo'"):
        parse_config(_config("loo", "per_user = true"), path="t.toml")
    with pytest.raises(
        ConfigError, match=r"unknown split method 'random'; use one of holdout, per-user, .* \(or none\)"
    ):
        parse_config(_config("random"), path="t.toml")


def test_no_split_is_a_configuration_word_only(tmp_path: Path, capsys):
    assert parse_config(_config(NO_SPLIT), path="t.toml").split["method"] == NO_SPLIT
    ratings = tmp_path / "r.csv"
    ratings.write_text("user,item,rating\n1,2,3\n")
    assert main(["split", str(ratings), "--method", NO_SPLIT, "--out", str(tmp_path / "o")]) == 2
    assert "--method: unknown split method 'none'; use one of holdout" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_convention_names_are_the_presets():
    from receval.metrics.conventions import LIBRARIES
    from receval.vocabulary import CONVENTION_NAMES

    assert tuple(LIBRARIES) == CONVENTION_NAMES


@pytest.mark.parametrize("name", [a.name for a in list_algorithms()])
def test_each_algorithm_name_is_one_model_in_a_configuration_and_in_python(name):
    """``receval recommend -a NAME`` builds ``make(NAME)``; a configuration's ``algorithm = NAME`` builds the same
    class with the same parameters (the task's seed set, as the runner seeds every model)."""
    from receval.experiment.protocols import make_model
    from receval.recommenders import make

    text = _config("holdout").replace('algorithm = "popularity"', f'algorithm = "{name}"')
    (task,) = expand(parse_config(text, path="t.toml"))
    model, reference = make_model(task), make(name)
    assert type(model) is type(reference)
    differ = {k: v for k, v in model.get_params().items() if reference.get_params().get(k) != v}
    assert differ in ({}, {"seed": 4}), differ
