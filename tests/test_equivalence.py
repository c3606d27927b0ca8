"""TOST and non-inferiority (receval.stats.equivalence) against statsmodels' ``ttost_paired`` and ``DescrStatsW``.

Reference: statsmodels 0.15.0, statsmodels/stats/weightstats.py (``ttost_paired``, ``DescrStatsW.ttest_mean``,
``DescrStatsW.tconfint_mean``), read at statsmodels/statsmodels@main.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.weightstats import DescrStatsW, ttost_paired

from receval.errors import ConfigError, DataError
from receval.stats.equivalence import noninferiority_paired, parse_margin, resolve_margin, tost_paired


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 400), shift=st.floats(-0.05, 0.05), margin=st.floats(0.001, 0.1))
def test_tost_equals_statsmodels(seed: int, n: int, shift: float, margin: float) -> None:
    rng = np.random.default_rng(seed)
    b = rng.uniform(0, 1, n)
    a = b + shift + rng.normal(0, 0.05, n)
    ours = tost_paired(a, b, margin=margin)
    p, (t1, p1, _), (t2, p2, _) = ttost_paired(a, b, -margin, margin)
    assert ours.pvalue == pytest.approx(p, abs=1e-12)
    assert (ours.t_lower, ours.p_lower, ours.t_upper, ours.p_upper) == pytest.approx((t1, p1, t2, p2), abs=1e-9)
    lo, hi = DescrStatsW(a - b).tconfint_mean(alpha=0.1)  # the 1 - 2 alpha interval
    assert (ours.ci_low, ours.ci_high) == pytest.approx((lo, hi), abs=1e-12)
    assert ours.equivalent == (-margin < lo and hi < margin)


def test_noninferiority_equals_statsmodels() -> None:
    rng = np.random.default_rng(1)
    b = rng.uniform(0, 1, 300)
    a = b - 0.004 + rng.normal(0, 0.03, 300)
    r = noninferiority_paired(a, b, margin=0.01)
    t, p, _ = DescrStatsW(a - b).ttest_mean(-0.01, alternative="larger")
    assert (r.statistic, r.pvalue) == pytest.approx((t, p), abs=1e-12)
    assert r.noninferior == (r.ci_low > -0.01)


def test_margins() -> None:
    assert parse_margin("1%") == (0.01, True)
    assert parse_margin(0.2) == (0.2, False)
    assert resolve_margin("1%", 0.4) == pytest.approx(0.004)
    for bad in ("0", "-1%", "abc", "nan", "1e400", "inf%"):
        with pytest.raises(ConfigError, match="margin"):
            parse_margin(bad)
    with pytest.raises(ConfigError, match="finite number > 0, got '1e400'"):
        parse_margin("1e400")
    with pytest.raises(DataError):
        resolve_margin("1%", 0.0)


def test_alpha_and_variance_refused() -> None:
    with pytest.raises(ConfigError, match="alpha"):
        tost_paired([1.0, 2.0], [1.0, 1.0], margin=0.1, alpha=0.0)
    with pytest.raises(DataError, match="all equal"):
        tost_paired([1.0, 2.0], [0.0, 1.0], margin=0.1)


def _runs(tmp_path):
    rng = np.random.default_rng(0)
    truth, runs = ["user,item,rating"], {name: ["user,item,rank"] for name in "abc"}
    for u in range(300):
        rel = rng.choice(40, 6, replace=False)
        truth += [f"{u},{i},{1 + i % 5}" for i in rel]
        for name in "abc":
            hits = list(rel[:3]) if name == "c" else []
            rest = [i for i in rng.permutation(40) if i not in hits][: 10 - len(hits)]
            runs[name] += [f"{u},{i},{r + 1}" for r, i in enumerate(hits + rest)]
    (tmp_path / "t.csv").write_text("\n".join(truth) + "\n")
    for name, lines in runs.items():
        (tmp_path / f"{name}.csv").write_text("\n".join(lines) + "\n")
    return [str(tmp_path / f"{name}.csv") for name in "abc"]


def test_compare_margin_and_mde(tmp_path, capsys) -> None:
    import json

    from statsmodels.stats.power import TTestPower

    from receval import evaluate
    from receval.cli import main

    files = _runs(tmp_path)
    truth = str(tmp_path / "t.csv")
    assert main(["compare", "--truth", truth, *files[:2], "--metrics", "P@10", "--margin", "10%", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["tests"][0]
    a = evaluate(files[0], truth, ["P@10"]).per_user.set_index("user")["P@10"]
    b = evaluate(files[1], truth, ["P@10"]).per_user.set_index("user")["P@10"]
    d = (a - b).to_numpy()
    assert row["margin"] == pytest.approx(0.1 * b.mean())
    p, _, _ = ttost_paired(a.to_numpy(), b.to_numpy(), -row["margin"], row["margin"])
    assert row["tost_p"] == pytest.approx(p) and row["equivalent"] == (p < 0.05)
    mde = TTestPower().solve_power(nobs=len(d), alpha=0.05, power=0.8) * d.std(ddof=1)
    assert row["mde"] == pytest.approx(mde, rel=1e-5)
    assert main(["compare", "--truth", truth, *files[:2], "--metrics", "P@10", "--margin", "0.05"]) == 0
    assert "a is within 0.05 of b (P@10)" in capsys.readouterr().out
    for bad in ("0", "-1%", "x"):
        assert main(["compare", "--truth", truth, *files[:2], "--metrics", "P@10", "--margin", bad, "--json"]) == 2
        assert "margin" in json.loads(capsys.readouterr().out)["error"]


def test_compare_report_shows_mde_and_tost(tmp_path, capsys) -> None:
    import json

    from receval.cli import main

    files = _runs(tmp_path)
    out = tmp_path / "r.html"
    args = ["compare", "--truth", str(tmp_path / "t.csv"), *files, "--metrics", "ndcg@10", "--margin", "0.05"]
    assert main([*args, "--report", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["tests"]
    page = out.read_text(encoding="utf-8")
    assert "Power and equivalence" in page and "TOST p" in page
    for row in rows:  # every pair's mde in the page, and the within-margin line of each equivalent pair
        assert f"{row['mde']:.4f}" in page
        assert (f"{row['a']} is within 0.05 of {row['b']} (ndcg@10)" in page) is row["equivalent"]
    assert any(row["equivalent"] for row in rows) and not all(row["equivalent"] for row in rows)
