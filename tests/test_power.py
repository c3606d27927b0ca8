"""Power, minimum detectable effect and users needed (receval.stats.power) against statsmodels' TTestPower.

Reference: statsmodels 0.15.0 (statsmodels/stats/power.py, ``TTestPower``: ``power``, ``solve_power``), the
version installed in the environment; read at statsmodels/statsmodels@main, file statsmodels/stats/power.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from statsmodels.stats.power import TTestPower

from receval.cli import main
from receval.errors import ConfigError, DataError
from receval.stats.power import power_analysis, resampled_power, ttest_mde, ttest_n_needed, ttest_power


@settings(max_examples=60, deadline=None)
@given(
    d=st.floats(0.01, 2.0),
    n=st.integers(3, 5000),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
)
def test_power_equals_statsmodels(d: float, n: int, alpha: float) -> None:
    sd = 0.2
    ours = ttest_power(d * sd, sd=sd, n=n, alpha=alpha)
    ref = TTestPower().power(effect_size=d, nobs=n, alpha=alpha, alternative="two-sided")
    assert 0.0 <= ours <= 1.0
    assume(not math.isnan(ref))  # scipy's nct.cdf is NaN deep in its tails, and statsmodels' power with it
    assert ours == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize(("n", "alpha", "power"), [(20, 0.05, 0.8), (300, 0.01, 0.9), (5000, 0.05, 0.5)])
def test_mde_equals_statsmodels_solve_power(n: int, alpha: float, power: float) -> None:
    sd = 0.15
    ref = TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power) * sd
    ours = ttest_mde(sd=sd, n=n, alpha=alpha, power=power)
    assert ours == pytest.approx(ref, rel=1e-5)  # statsmodels' root finder stops at about 1e-6
    assert ttest_power(ours, sd=sd, n=n, alpha=alpha) == pytest.approx(power, abs=1e-9)


@pytest.mark.parametrize(("effect", "alpha", "power"), [(0.5, 0.05, 0.8), (0.1, 0.05, 0.8), (0.02, 0.01, 0.95)])
def test_n_needed_is_ceiling_of_statsmodels_nobs(effect: float, alpha: float, power: float) -> None:
    ref = TTestPower().solve_power(effect_size=effect, nobs=None, alpha=alpha, power=power)
    n = ttest_n_needed(effect, sd=1.0, alpha=alpha, power=power)
    assert n == math.ceil(ref)
    assert ttest_power(effect, sd=1.0, n=n - 1, alpha=alpha) < power <= ttest_power(effect, sd=1.0, n=n, alpha=alpha)


def test_resampled_power_of_ttest_matches_closed_form() -> None:
    d = np.random.default_rng(3).normal(0.0, 1.0, 400)
    sd = float(d.std(ddof=1))
    closed = ttest_power(0.4, sd=sd, n=40, alpha=0.05)
    sim = resampled_power(d, 0.4, n=40, test="ttest", n_sims=2000, seed=1)
    assert abs(sim - closed) < 3 * math.sqrt(closed * (1 - closed) / 2000) + 0.01
    assert resampled_power(d, 0.4, n=40, test="ttest", n_sims=200, seed=1) == resampled_power(
        d, 0.4, n=40, test="ttest", n_sims=200, seed=1
    )


def test_resampled_power_of_wilcoxon_and_permutation_grow_with_effect() -> None:
    d = np.random.default_rng(5).normal(0.0, 1.0, 300)
    for test in ("wilcoxon", "permutation"):
        small = resampled_power(d, 0.05, n=50, test=test, n_sims=150, n_permutations=200, seed=2)
        large = resampled_power(d, 0.6, n=50, test=test, n_sims=150, n_permutations=200, seed=2)
        assert small < 0.3 < 0.85 < large


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"alpha": 0.0}, ConfigError),
        ({"alpha": 1.0}, ConfigError),
        ({"power": 1.5}, ConfigError),
        ({"effect": -0.1}, ConfigError),
    ],
)
def test_bad_options_are_refused(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        power_analysis(np.arange(10.0), **kwargs)


def test_constant_differences_are_refused() -> None:
    with pytest.raises(DataError, match="standard deviation"):
        power_analysis(np.ones(10), effect=0.1)


def _files(tmp_path):
    rng = np.random.default_rng(0)
    truth, recs_a, recs_b = ["user,item,rating"], ["user,item,rank"], ["user,item,rank"]
    for u in range(200):
        rel = rng.choice(50, 5, replace=False)
        truth += [f"{u},{i},{1 + i % 5}" for i in rel]
        ranked_a = list(rng.permutation(50)[:10])
        ranked_b = list(rng.permutation(50)[:10])
        recs_a += [f"{u},{i},{r + 1}" for r, i in enumerate(ranked_a)]
        recs_b += [f"{u},{i},{r + 1}" for r, i in enumerate(ranked_b)]
    (tmp_path / "t.csv").write_text("\n".join(truth) + "\n")
    (tmp_path / "a.csv").write_text("\n".join(recs_a) + "\n")
    (tmp_path / "b.csv").write_text("\n".join(recs_b) + "\n")


def test_cli_power_one_run_uses_sqrt2_sd(tmp_path, capsys) -> None:
    _files(tmp_path)
    args = ["power", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "a.csv"), "--metric", "ndcg@10"]
    assert main([*args, "--effect", "0.01", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["n_users"] == 200
    from receval import evaluate

    per_user = evaluate(str(tmp_path / "a.csv"), str(tmp_path / "t.csv"), ["ndcg@10"]).per_user["ndcg@10"]
    sd = math.sqrt(2) * float(per_user.std(ddof=1))
    assert body["sd"] == pytest.approx(sd)
    assert body["power"] == pytest.approx(TTestPower().power(0.01 / sd, 200, 0.05))
    assert body["mde"] == pytest.approx(TTestPower().solve_power(nobs=200, alpha=0.05, power=0.8) * sd, rel=1e-5)
    assert body["n_needed"] == math.ceil(TTestPower().solve_power(0.01 / sd, alpha=0.05, power=0.8))


def test_cli_power_two_runs_uses_differences(tmp_path, capsys) -> None:
    _files(tmp_path)
    args = ["power", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "a.csv")]
    args += ["--recs", str(tmp_path / "b.csv"), "--metric", "ndcg@10", "--effect", "0.02", "--json"]
    assert main(args) == 0
    body = json.loads(capsys.readouterr().out)
    from receval import evaluate

    a = evaluate(str(tmp_path / "a.csv"), str(tmp_path / "t.csv"), ["ndcg@10"]).per_user.set_index("user")
    b = evaluate(str(tmp_path / "b.csv"), str(tmp_path / "t.csv"), ["ndcg@10"]).per_user.set_index("user")
    assert body["sd"] == pytest.approx(float((a["ndcg@10"] - b["ndcg@10"]).std(ddof=1)))


@pytest.mark.parametrize(
    ("extra", "word"), [(["--alpha", "1.2"], "alpha"), (["--power", "0"], "power"), (["--effect", "-1"], "effect")]
)
def test_cli_power_bad_input_exits_2(tmp_path, capsys, extra, word) -> None:
    _files(tmp_path)
    args = ["power", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "a.csv"), "--metric", "ndcg@10"]
    assert main([*args, "--effect", "0.01", *extra, "--json"]) == 2
    out = capsys.readouterr().out
    assert word in json.loads(out)["error"] and out.count("\n") == 1
