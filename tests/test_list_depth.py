"""A metric cut deeper than the lists evaluate_model makes is refused before any work (recall@50 of 10-item
lists would be recall@10 under another name), on every surface that sets the list length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from receval.cli.app import main
from receval.data.synthetic import generate
from receval.errors import ConfigError
from receval.evaluation import evaluate_model
from receval.experiment.config import load_config
from receval.recommenders import make
from receval.split import holdout
from receval.studies.aa import refit_values


@pytest.fixture(scope="module")
def parts():
    return holdout(generate(80, 120, 2400, seed=0), test_fraction=0.2, seed=0)


class _NeverFitted:
    def fit(self, train):  # the refusal comes first
        raise AssertionError("fitted before the metrics were checked")


def test_a_deeper_cutoff_is_refused_before_the_model_is_fitted(parts) -> None:
    train, test = parts
    with pytest.raises(ConfigError, match=r"recall@50 reads the top 50 .* k = 10 items") as info:
        evaluate_model(_NeverFitted(), train, test, ["ndcg@10", "recall@50", "recall@20"], k=10)
    assert list(info.value.parameters) == ["k"]


def test_cutoffs_within_the_lists_sampled_and_error_metrics_pass(parts) -> None:
    train, test = parts
    result = evaluate_model(make("biases"), train, test, ["ndcg@10", "map", "rmse", "ndcg@50(sampled=20)"], k=10)
    assert np.isfinite(result.summary["ndcg@10"]) and np.isfinite(result.summary["rmse"])


def test_a_configuration_names_the_line_of_k(tmp_path: Path) -> None:
    text = 'metrics = ["ndcg@10", "recall@20"]\n[datasets.toy]\ngenerate = { n_users = 30, n_items = 40 }\n' \
           '[protocol]\nname = "one-shot"\nk = [10, 20]\n[recommenders.popularity]\n'  # fmt: skip
    (tmp_path / "c.toml").write_text(text)
    with pytest.raises(ConfigError, match="recall@20 reads the top 20") as info:
        load_config(tmp_path / "c.toml")
    assert info.value.line == 6
    (tmp_path / "c.toml").write_text(text.replace("k = [10, 20]", "k = [20, 30]"))
    assert load_config(tmp_path / "c.toml").protocol.options["k"] == [20, 30]


def test_the_protocols_study_refuses_it_on_the_command_line(tmp_path: Path, capsys) -> None:
    data = tmp_path / "r.csv"
    rows = generate(30, 40, 400, seed=1)
    data.write_text("user,item,rating\n" + "".join(
        f"{u},{i},{r:g}\n" for u, i, r in zip(rows.users, rows.items, rows.ratings, strict=True)))  # fmt: skip
    assert main(["protocols-study", str(data), "--k", "5", "--metrics", "ndcg@10", "--out", str(tmp_path / "o")]) == 2
    assert "ndcg@10 reads the top 10 of each list, but the lists hold k = 5 items" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_aa_makes_lists_as_deep_as_its_metric() -> None:
    data = generate(80, 120, 2400, seed=0)
    a, b = refit_values(data, "popularity", "recall@30", seeds=(0, 0))
    from receval.split import split_by_name

    (train, test), *_ = split_by_name(data, "per-user", test_fraction=0.2, seed=0)
    expected = evaluate_model(make("popularity"), train, test, ["recall@30"], k=30, seed=0).per_user
    np.testing.assert_array_equal(a, expected.set_index("user")["recall@30"].dropna().sort_index().to_numpy())
    np.testing.assert_array_equal(a, b)


def _tiny(tmp_path: Path) -> Path:
    """Three items, eight users: fewer items than aa's default list length of 10."""
    data = tmp_path / "tiny.csv"
    data.write_text("user,item,rating\n" + "".join(f"{u},{i},{1 + (u + i) % 5}\n" for u in range(8) for i in range(3)))
    return data


def test_aa_names_the_metric_when_the_catalogue_is_shallower(tmp_path: Path, capsys) -> None:
    """aa has no --k: the cutoff comes from --metric, and the message says so (it said "use k <= 3")."""
    assert main(["aa", str(_tiny(tmp_path)), "--algorithm", "popularity", "--metric", "ndcg@10"]) == 2
    err = capsys.readouterr().err
    assert "ndcg@10 reads 10 items but the data has 3; use a cutoff <= 3" in err
    assert "k <=" not in err


def test_aa_lists_of_a_small_catalogue_hold_all_of_it(tmp_path: Path) -> None:
    """A metric without a cutoff ranks the whole catalogue when it is under 10 items, as k = 3 would."""
    from receval.data.loaders import load
    from receval.split import split_by_name

    data = load(_tiny(tmp_path))
    a, _ = refit_values(data, "popularity", "mrr", seeds=(0, 0), threshold=3)
    (train, test), *_ = split_by_name(data, "per-user", test_fraction=0.2, seed=0)
    expected = evaluate_model(make("popularity"), train, test, ["mrr"], k=3, threshold=3, seed=0).per_user
    np.testing.assert_array_equal(a, expected.set_index("user")["mrr"].dropna().sort_index().to_numpy())
    assert a.size
