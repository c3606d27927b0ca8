"""The A/A study: rates and Clopper–Pearson intervals against scipy's beta quantiles, the nulls, bad input, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from receval.cli import main
from receval.errors import ConfigError, DataError
from receval.studies.aa import aa_study


def test_clopper_pearson_interval_is_the_beta_quantiles() -> None:
    rng = np.random.default_rng(1)
    a = rng.random(200)
    table = aa_study(a, a + rng.normal(0, 0.2, 200), resamples=60, sizes=(1,), n_permutations=100)
    for row in table.itertuples():
        k, n = row.rejections, row.resamples
        low = 0.0 if k == 0 else stats.beta.ppf(0.025, k, n - k + 1)  # Clopper & Pearson, Biometrika 1934
        high = 1.0 if k == n else stats.beta.ppf(0.975, k + 1, n - k)
        assert row.ci_low == pytest.approx(low, abs=1e-9) and row.ci_high == pytest.approx(high, abs=1e-9)
        assert row.rate == k / n and row.undefined == 0


def test_swap_null_keeps_alpha_and_shift_shows_the_wilcoxon_drift() -> None:
    rng = np.random.default_rng(2)
    a = rng.random(500)
    b = a - rng.exponential(0.1, 500) * (rng.random(500) < 0.3)  # skewed differences, as two fits' NDCGs
    swap = aa_study(a, b, resamples=300, sizes=(1,), n_permutations=200).set_index("test")
    for test in ("ttest", "wilcoxon", "permutation"):  # exchangeable pairs: every test's null holds
        assert swap.loc[test, "ci_low"] <= 0.05 <= swap.loc[test, "ci_high"], test
    shift = aa_study(a, b, resamples=100, sizes=(1, 4), n_permutations=200, null="shift")
    rates = shift.set_index(["test", "n"])["rate"]
    # equal means: the t-test keeps alpha; Wilcoxon tests a zero median, which skewed differences do not have
    assert rates[("ttest", 2000)] <= 0.1 and rates[("wilcoxon", 500)] > 0.5 and rates[("wilcoxon", 2000)] == 1.0
    assert list(shift["n"].unique()) == [500, 2000]


def test_same_list_never_rejects() -> None:
    a = np.random.default_rng(3).random(50)
    table = aa_study(a, a.copy(), resamples=20, sizes=(1,), n_permutations=50).set_index("test")
    assert (table["rejections"] == 0).all()
    assert table.loc["ttest", "undefined"] == 20  # zero variance of the differences: no p-value, not a rejection


def test_same_seed_same_bits() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.random(80), rng.random(80)
    first = aa_study(a, b, resamples=15, sizes=(1, 2), n_permutations=50, seed=7)
    pd.testing.assert_frame_equal(first, aa_study(a, b, resamples=15, sizes=(1, 2), n_permutations=50, seed=7))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"alpha": 0.0}, ConfigError, "alpha"),
        ({"alpha": 1.0}, ConfigError, "alpha"),
        ({"sizes": ()}, ConfigError, "sizes"),
        ({"sizes": (1, -2)}, ConfigError, "sizes"),
        ({"null": "flip"}, ConfigError, "null"),
        ({"resamples": 0}, ConfigError, "resamples"),
    ],
)
def test_bad_options(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        aa_study([0.1, 0.2, 0.3], [0.2, 0.1, 0.3], **kwargs)


def test_bad_values() -> None:
    with pytest.raises(DataError, match="same >= 2 users"):
        aa_study([0.1, 0.2], [0.1])
    with pytest.raises(DataError, match="NaN"):
        aa_study([0.1, np.nan], [0.1, 0.2])


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(5)
    rows = [(u, i, int(rng.integers(1, 6))) for u in range(60) for i in range(40) if rng.random() < 0.3]
    pd.DataFrame(rows, columns=["user", "item", "rating"]).to_csv(tmp_path / "r.csv", index=False)
    args = ["aa", str(tmp_path / "r.csv"), "--format", "csv", "--algorithm", "ials", "--resamples", "10"]
    assert main([*args, "--sizes", "1,2", "--permutations", "50", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["algorithm"] == "ials" and doc["null"] == "swap" and len(doc["rows"]) == 6
    assert {"test", "n", "rate", "ci_low", "ci_high"} <= set(doc["rows"][0])
    assert main([*args, "--alpha", "1.5", "--json"]) == 2
    assert "--alpha" in json.loads(capsys.readouterr().out)["error"]
    assert main([*args, "--sizes", "1,x"]) == 2
