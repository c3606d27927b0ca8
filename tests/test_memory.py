"""Memory is checked before it is spent: factor matrices and dense score rows larger than the machine are refused.

Each refusal is one line with the estimate and the option that avoids it, before anything of
that size is allocated; long list generation reports its progress.
"""

from __future__ import annotations

import numpy as np
import pytest

from receval.cli import main
from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.progress import reporting
from receval.recommenders import make
from receval.recommenders.topn import recommend
from receval.validate import available_memory

TRAIN = Interactions.from_ids(["a", "a", "b", "c"], ["x", "y", "x", "z"], [5.0, 3.0, 4.0, 1.0])
TOO_MANY = 10**12  # factors: 8 bytes x 10^12 x 6 rows = 48 TB


def test_mf_refuses_factor_matrices_larger_than_memory():
    with pytest.raises(ConfigError) as err:
        make("mf", factors=TOO_MANY).fit(TRAIN)
    # 8 bytes x 10^12 factors x (3 users + 3 items) = 48.0 TB
    assert str(err.value).startswith(
        "fitting BiasedMF with 1,000,000,000,000 factors (3 users + 3 items) needs 48.0 TB of memory"
    )
    assert str(err.value).endswith("lower factors (e.g. factors=50)")


def test_hkv_refuses_factor_matrices_larger_than_memory():
    pytest.importorskip("implicit")
    with pytest.raises(ConfigError, match=r"HKV with 1,000,000,000,000 factors .* needs 24\.0 TB of memory"):
        make("hkv", factors=TOO_MANY).fit(TRAIN)  # implicit's factors are float32: half of mf's


def test_factors_that_fit_are_fitted():
    model = make("mf", factors=3, epochs=2).fit(TRAIN)
    assert model.user_factors_.shape == (3, 3) and model.item_factors_.shape == (3, 3)


def test_recommend_cli_says_so_in_one_line(tmp_path, capsys):
    train = tmp_path / "train.tsv"
    train.write_text("user\titem\trating\n1\t10\t5\n1\t11\t3\n2\t10\t4\n3\t12\t1\n")
    args = ["recommend", "--train", str(train), "--algorithm", "mf", "--param", f"factors={TOO_MANY}", "--k", "2",
            "--out", str(tmp_path / "recs.tsv")]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: fitting BiasedMF") and "lower factors" in err
    assert not (tmp_path / "recs.tsv").exists()


class _Huge:
    """A fitted scorer over more items than any machine holds a row of; scoring it is a failure."""

    n_users_ = 2
    n_items_ = available_memory()  # one float64 row alone: 8 x the free memory

    def score(self, users):
        raise AssertionError("scored before the memory check")


def test_recommend_refuses_score_rows_larger_than_memory():
    with pytest.raises(ConfigError, match=r"scoring 1 users x [\d,]+ items at once needs .*pass a smaller batch_size"):
        recommend(_Huge(), [0, 1], k=1)


def test_recommend_reports_progress_per_batch():
    model = make("popularity").fit(TRAIN)
    seen: list[tuple[int, int, str]] = []
    with reporting(lambda done, total, what: seen.append((done, total, what))):
        items, _ = recommend(model, [0, 1, 2], k=1, batch_size=2)
    assert seen == [(0, 3, "recommend users"), (2, 3, "recommend users"), (3, 3, "recommend users")]
    assert items.shape == (3, 1)
    explicit: list[int] = []
    recommend(model, np.arange(3), k=1, batch_size=1, progress=lambda done, total, what: explicit.append(done))
    assert explicit == [0, 1, 2, 3]
