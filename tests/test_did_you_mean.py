"""A mistyped model parameter or algorithm name: the error suggests the close name (Python, config, CLI)."""

from __future__ import annotations

import pytest

from receval.cli import main
from receval.errors import ConfigError
from receval.recommenders.registry import ALGORITHMS, list_algorithms, make


def _message(name: str, **params: object) -> str:
    with pytest.raises(ConfigError) as info:
        make(name, **params)
    return info.value.message


def test_a_mistyped_parameter_keeps_the_message_and_suggests_the_parameter():
    valid = ", ".join(list_algorithms(["item-knn"])[0].params)
    assert _message("item-knn", kk=20) == (
        f"item-knn (ItemKNN) has no parameter 'kk'; valid: {valid}; did you mean 'k'?"
    )
    assert _message("item-knn", simlarity="cosine").endswith("; did you mean 'similarity'?")


def test_no_suggestion_without_a_close_name():
    message = _message("biases", zzz=1)
    assert message == "biases (Biases) has no parameter 'zzz'; valid: item_damping, user_damping, clip"


def test_a_parameter_given_too_is_not_suggested():
    # k is set as well: 'kk' is not a typo of it, and the configuration's error must point at 'kk'
    assert "did you mean" not in _message("item-knn", k=20, kk=30)


@pytest.mark.parametrize("info", list_algorithms(), ids=lambda info: info.name)
def test_every_parameter_with_one_letter_too_many_is_suggested(info):
    # one inserted letter keeps difflib's ratio at 2L/(2L+1) >= 2/3, above the 0.6 cutoff
    for param in info.params:
        message = _message(info.name, **{param + "x": 1})
        assert f"'{param}'" in message.rpartition("; did you mean ")[2], message


def test_a_mistyped_algorithm_or_preset_is_suggested():
    assert _message("itemknn").endswith("; did you mean 'item-knn'?")
    assert _message("ppularity").endswith("; did you mean 'popularity'?")
    assert _message("popularity", preset="thesys").endswith("; did you mean 'thesis'?")
    assert _message("suprise:SVD").endswith("; did you mean 'surprise'?")
    with pytest.raises(ConfigError, match=r"unknown algorithm 'ease_r'.*; did you mean 'ease'\?$"):
        list_algorithms(["ease_r"])
    assert "did you mean" not in _message("qwertyuiop")
    for name in ALGORITHMS:
        assert f"'{name}'" in _message(name + "x").rpartition("; did you mean ")[2]


_CONFIG = """\
name = "typo"
seeds = [0]
metrics = ["ndcg@5"]

[datasets.synthetic]
generate = {{ n_users = 30, n_items = 40, n_ratings = 400, seed = 1 }}

[split]
method = "holdout"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = 5

[recommenders.item-knn]
params = {{ {params} }}
"""


def test_a_config_with_a_mistyped_parameter_exits_2_with_one_line_naming_the_file(tmp_path, capsys):
    config = tmp_path / "typo.toml"
    config.write_text(_CONFIG.format(params="kk = [10, 20]"))
    out = tmp_path / "results"
    assert main(["run", str(config), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    line = config.read_text().splitlines().index("params = { kk = [10, 20] }") + 1
    assert err.count("\n") == 0
    assert err.startswith(f"error: {config}, line {line}: item-knn (ItemKNN) has no parameter 'kk'; valid: k, ")
    assert err.endswith("; did you mean 'k'?")
    assert not out.exists()  # refused before any task


def test_the_cli_param_with_a_typo_exits_2_before_writing(tmp_path, capsys):
    train = tmp_path / "train.csv"
    train.write_text("user,item,rating\n1,1,5\n1,2,3\n2,1,4\n2,3,2\n")
    out = tmp_path / "recs.tsv"
    args = ["recommend", "--train", str(train), "--algorithm", "user-knn", "--out", str(out)]
    assert main([*args, "--param", "min_supprt=2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith("error: user-knn (UserKNN) has no parameter 'min_supprt'; valid: k, ")
    assert err.endswith("; did you mean 'min_support'?")
    assert not out.exists()
    assert main([*args[:3], "--algorithm", "userknn", "--out", str(out)]) == 2
    assert "; did you mean 'user-knn'" in capsys.readouterr().err.strip()  # first ('sknn' is close too)
