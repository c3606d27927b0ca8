"""Search spaces (receval.recommenders.space): one parser for configurations and the studies' Python spaces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.errors import ConfigError
from receval.experiment.config import load_config
from receval.recommenders.space import ParamRange, draw, parse_space


def _tune_config(folder: Path, space: str) -> Path:
    """A tuning configuration of item-kNN over a small ratings file, its space the TOML lines ``space``
    (they start at line 12)."""
    (folder / "r.csv").write_text("user,item,rating\n1,1,5\n1,2,3\n2,1,4\n2,3,2\n3,2,5\n3,3,1\n")
    path = folder / "c.toml"
    path.write_text(f"""
metrics = ["ndcg@10"]
[datasets.d]
path = "r.csv"
format = "csv"
[protocol]
name = "one-shot"
[tune]
metric = "ndcg@10"
trials = 2
[recommenders.item-knn.space]
{space}""")
    return path


def test_a_configuration_and_a_python_space_parse_to_the_same_ranges(tmp_path) -> None:
    cfg = load_config(
        _tune_config(
            tmp_path,
            """k = { int = [5, 50], step = 5 }
similarity = { choices = ["cosine", "pearson"] }
shrink = { float = [0.1, 100.0], log = true, when = { similarity = "pearson" } }
""",
        )
    )
    ours = parse_space({
        "k": {"int": [5, 50], "step": 5},
        "similarity": {"choices": ["cosine", "pearson"]},
        "shrink": {"float": [0.1, 100.0], "log": True, "when": {"similarity": "pearson"}},
    })  # fmt: skip
    assert cfg.recommenders["item-knn"].space == ours
    assert ours[2] == ParamRange("shrink", "float", 0.1, 100.0, True, when={"similarity": ("pearson",)})


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"int": [5, 1]}, "is inverted"),
        ({"int": [5, 5]}, "is empty"),
        ({"int": [1.5, 5]}, "give two integers"),
        ({"float": [0, float("inf")]}, "two finite numbers"),
        ({"float": [1, 5], "step": 0}, "give a positive float"),
        ({"float": [1, 5], "step": 1, "log": True}, "a step or a log scale"),
        ({"choices": []}, "choices are empty"),
        ({"choices": [5, 10, 5.0]}, r"choices list 5.0 twice \(\[5, 10, 5.0\]\): list each value once"),
        ({"int": [1, 5], "when": {"c": "a"}}, "must be a choices parameter above it"),
    ],
)
def test_bad_entries_name_the_parameter_and_the_key(entry, words) -> None:
    paths = []

    def fail(path, message):
        paths.append(path)
        return ConfigError(message)

    with pytest.raises(ConfigError, match=words):
        parse_space({"x": entry}, fail)
    assert paths[0][0] == "x"


@settings(max_examples=60, deadline=None)
@given(low=st.integers(-50, 50), width=st.integers(1, 200), step=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_a_stepped_range_draws_points_of_its_grid(low, width, step, seed) -> None:
    (r,) = parse_space({"n": {"int": [low, low + width], "step": step}})
    values = {draw((r,), np.random.default_rng([seed, i]))["n"] for i in range(20)}
    assert values <= set(r.grid())


def test_a_conditional_parameter_is_drawn_only_when_its_parent_allows() -> None:
    space = parse_space({"c": {"choices": ["a", "b"]}, "x": {"float": [0, 1], "when": {"c": "a"}}})
    draws = [draw(space, np.random.default_rng(s)) for s in range(40)]
    assert {d["c"] for d in draws} == {"a", "b"}
    assert all(("x" in d) == (d["c"] == "a") for d in draws)


def test_a_choice_listed_twice_is_refused_with_the_file_and_line(tmp_path) -> None:
    """choices = ["cosine", "pearson", "cosine"] ran each grid trial of cosine twice and gave it twice the prior
    weight in TPE and random search; True and 1 stay two values (a flag and a count)."""
    path = _tune_config(tmp_path, 'similarity = { choices = ["cosine", "pearson", "cosine"] }\n')
    with pytest.raises(ConfigError, match=r"c.toml, line 12: space.similarity choices list 'cosine' twice"):
        load_config(path)
    assert parse_space({"flag": {"choices": [True, 1]}})[0].choices == (True, 1)
