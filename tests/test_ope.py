"""Off-policy evaluation: estimators against hand computations, the logging pass's propensities, log files, the command.

The formulas are those of Open Bandit Pipeline's obp/ope/estimators.py (st-tech/zr-obp, commit
51eba00f0dda5c26c1fa6826f544c60de485da52): obp is not installed here, so every estimator is checked
against a plain-Python computation of that formula.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from receval import Interactions
from receval.errors import ConfigError, DataError, ReceValWarning
from receval.simulate.logged import from_obp, log_policy, policy_table, policy_value, read_log, write_log
from receval.stats.ope import estimate, estimate_many, replay, slate_estimates

# a 5-round log: reward, logging propensity, target probability of the logged action,
# the reward model's prediction for the logged pair and its expectation under the target
R = [1.0, 0.0, 1.0, 1.0, 0.0]
P = [0.5, 0.25, 0.8, 0.1, 0.5]
E = [1.0, 0.5, 0.2, 0.9, 0.0]
QL = [0.6, 0.3, 0.7, 0.4, 0.2]
QT = [0.55, 0.45, 0.35, 0.6, 0.5]


def _by_hand(clip=None, tau=10.0, lam=10.0):
    n = len(R)
    w = [e / p for e, p in zip(E, P, strict=True)]
    if clip is not None:
        w = [min(x, clip) for x in w]
    out = {
        "dm": sum(QT) / n,
        "ips": sum(x * r for x, r in zip(w, R, strict=True)) / n,
        "snips": sum(x * r for x, r in zip(w, R, strict=True)) / sum(w),
    }
    out["dr"] = sum(qt + x * (r - ql) for qt, x, r, ql in zip(QT, w, R, QL, strict=True)) / n
    out["switch"] = sum(qt + (x if x <= tau else 0) * (r - ql) for qt, x, r, ql in zip(QT, w, R, QL, strict=True)) / n
    out["dros"] = sum(qt + lam * x / (x * x + lam) * (r - ql) for qt, x, r, ql in zip(QT, w, R, QL, strict=True)) / n
    return out, w


@pytest.mark.parametrize(("clip", "tau", "lam"), [(None, 10.0, 10.0), (3.0, 5.0, 1.0), (None, 1.5, 0.5)])
def test_estimators_equal_their_formulas(clip, tau, lam):
    expected, w = _by_hand(clip, tau, lam)
    got = estimate(R, P, E, q_logged=QL, q_target=QT, clip=clip, switch_tau=tau, dros_lambda=lam, n_bootstrap=0)
    for k, v in expected.items():
        assert got[k].value == pytest.approx(v, rel=1e-12), k
    assert got["ips"].ess == pytest.approx(sum(w) ** 2 / sum(x * x for x in w))
    assert got["ips"].max_weight == pytest.approx(max(w))
    assert got["ips"].clipped == (0 if clip is None else sum(e / p > clip for e, p in zip(E, P, strict=True)))


def test_many_targets_equal_one_at_a_time():
    rng = np.random.default_rng(4)
    n = 300
    r, p = rng.integers(0, 2, n), rng.uniform(0.2, 1, n)
    targets = {t: (rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.uniform(0, 1, n)) for t in "abc"}
    many = estimate_many(r, p, targets, n_bootstrap=50, seed=3, clip=2.0)
    for t, (e, ql, qt) in targets.items():
        one = estimate(r, p, e, q_logged=ql, q_target=qt, n_bootstrap=50, seed=3, clip=2.0)
        for k, est in one.items():
            assert many[t][k].value == pytest.approx(est.value)
            assert (many[t][k].low, many[t][k].high) == pytest.approx((est.low, est.high))


def test_switch_between_dm_and_dr():
    # τ below every weight: switch-DR is DM; τ above every weight: it is DR
    small = estimate(R, P, E, q_logged=QL, q_target=QT, switch_tau=1e-9, n_bootstrap=0)
    large = estimate(R, P, E, q_logged=QL, q_target=QT, switch_tau=1e9, n_bootstrap=0)
    assert small["switch"].value == pytest.approx(small["dm"].value)
    assert large["switch"].value == pytest.approx(large["dr"].value)


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    n = 400
    r, p, e = rng.integers(0, 2, n), rng.uniform(0.2, 1, n), rng.uniform(0, 1, n)
    a = estimate(r, p, e, n_bootstrap=100, seed=7)
    b = estimate(r, p, e, n_bootstrap=100, seed=7)
    c = estimate(r, p, e, n_bootstrap=100, seed=8)
    assert a["ips"].low == b["ips"].low and a["snips"].high == b["snips"].high
    assert a["ips"].low != c["ips"].low
    for k in ("ips", "snips"):
        assert a[k].low < a[k].value < a[k].high
    # the percentile interval of IPS, by hand: resample rows, mean of w·r
    gen = np.random.default_rng(7)
    reps = []
    for _ in range(100):
        idx = gen.integers(0, n, n)
        reps.append(float(np.mean(e[idx] / p[idx] * r[idx])))
    assert a["ips"].low == pytest.approx(np.quantile(reps, 0.025))
    assert a["ips"].high == pytest.approx(np.quantile(reps, 0.975))


@pytest.mark.parametrize(
    ("p", "r", "message"),
    [
        ([0.5, 0.0], [1, 0], "propensity outside (0, 1]"),
        ([0.5, 1.5], [1, 0], "propensity outside (0, 1]"),
        ([0.5, 0.5], [1, float("nan")], "reward: 1 value(s) are not finite"),
        ([0.5, 0.5], ["a", 1], "reward must be numbers"),
    ],
)
def test_bad_logs_are_one_line_errors(p, r, message):
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        estimate(r, p, [1, 1], n_bootstrap=0)
    assert "\n" not in str(err.value)


def test_reward_model_that_cannot_predict_is_refused():
    with pytest.raises(DataError, match="not finite"):
        estimate(R, P, E, q_logged=[0.1, np.inf, 0, 0, 0], q_target=QT, n_bootstrap=0)
    with pytest.raises(ConfigError, match="both"):
        estimate(R, P, E, q_logged=QL, n_bootstrap=0)


def test_snips_without_target_mass_is_zero_not_nan():
    out = estimate([1, 0], [0.5, 0.5], [0, 0], n_bootstrap=10)
    assert out["snips"].value == 0.0 and np.isfinite(out["snips"].low)


def test_replay_is_the_matched_mean():
    # uniform log over 3 actions; deterministic target matches rounds 0 and 2
    assert replay([1, 1, 0, 1], [1 / 3] * 4, [1, 0, 1, 0], [3] * 4) == (0.5, 2)
    with pytest.raises(DataError, match="uniformly random"):
        replay([1], [0.5], [1], [3])


def test_slate_estimators_by_hand():
    r = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    p = np.array([[0.5, 0.25, 0.5], [0.2, 0.5, 0.4]])
    e = np.array([[1.0, 0.5, 0.25], [0.4, 0.25, 0.8]])
    w = e / p
    iips = np.mean([sum(w[i, j] * r[i, j] for j in range(3)) for i in range(2)])
    sips = np.mean([w[i, 0] * w[i, 1] * w[i, 2] * r[i].sum() for i in range(2)])
    rips = np.mean([sum(np.prod(w[i, : j + 1]) * r[i, j] for j in range(3)) for i in range(2)])
    got = slate_estimates(r, p, e)
    assert got == pytest.approx({"iips": iips, "sips": sips, "rips": rips})


def _complete(n_users=6, n_items=4, seed=0):
    rng = np.random.default_rng(seed)
    users, items = np.divmod(np.arange(n_users * n_items), n_items)
    return Interactions.from_arrays(users, items, rng.integers(1, 6, n_users * n_items))


@pytest.mark.parametrize("spec", ["random", "egreedy:0.3", "softmax:0.5", "greedy", "ucb"])
def test_logged_propensities_are_the_policys_frequencies(spec):
    data = _complete()
    table = policy_table(spec, data, data, threshold=4)
    assert np.allclose(table.probs.sum(axis=1), 1.0)
    log = log_policy(table, data, threshold=4, rounds=60000, seed=1).frame
    assert np.allclose(log["propensity"], table.probs[log["user"], log["item"]])
    freq = pd.crosstab(log["user"], log["item"], normalize="index").reindex(columns=range(4), fill_value=0)
    assert np.abs(freq.to_numpy() - table.probs).max() < 0.03
    if spec in ("greedy", "ucb"):
        assert (log["propensity"] == 1.0).all()


def test_thompson_propensities_are_monte_carlo_estimates():
    data = _complete()
    table = policy_table("thompson:4000", data, data, threshold=4, seed=2)
    log = log_policy(table, data, threshold=4, rounds=40000, seed=3)
    assert log.propensity == "monte-carlo (4000 draws)"
    freq = log.frame["item"].value_counts(normalize=True).reindex(range(4), fill_value=0).to_numpy()
    assert np.abs(freq - table.probs[0]).max() < 0.03  # every user has all items: one law
    assert (log.frame["propensity"] > 0).all()


def test_policy_value_is_the_expected_reward():
    data = _complete()
    table = policy_table("softmax:0.5", data, data, threshold=4)
    r = (data.ratings >= 4).astype(float).reshape(6, 4)
    assert policy_value(table, r, np.ones((6, 4), bool)) == pytest.approx(np.mean((table.probs * r).sum(axis=1)))
    on_policy = log_policy(table, data, threshold=4, rounds=100000, seed=5).frame["reward"].mean()
    assert on_policy == pytest.approx(policy_value(table, r, np.ones((6, 4), bool)), abs=0.01)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_log_round_trip(tmp_path, suffix):
    data = _complete()
    log = log_policy(policy_table("random", data, data, threshold=4), data, threshold=4, rounds=50, seed=0)
    back = read_log(write_log(tmp_path / f"log{suffix}", log))
    pd.testing.assert_frame_equal(back, log.frame, check_dtype=False)


def test_bad_log_files(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("round,user,item,reward,propensity\n1,0,1,1,0.5\n2,0,1,1,0\n")
    with pytest.raises(DataError, match=r"outside \(0, 1\] \(first 0.0 at line 3\)"):
        read_log(path)
    path.write_text("round,user,item,reward\n1,0,1,1\n")
    with pytest.raises(DataError, match=r"log.csv, line 1, column propensity: missing required column 'propensity'"):
        read_log(path)
    path.write_bytes(b"round,user,item,reward,propensity\n1,0,1,1,\xff\n")  # not UTF-8: the one reader's check
    with pytest.raises(DataError, match=r"log.csv"):
        read_log(path)


def test_obp_dictionary():
    fb = {
        "action": np.array([2, 0, 1]),
        "reward": np.array([1, 0, 1]),
        "pscore": np.array([0.5, 0.25, 0.2]),
        "position": np.array([0, 1, 0]),
        "context": np.array([[0.1, 1.0], [0.2, 0.0], [0.1, 1.0]]),
    }
    frame = from_obp(fb)
    assert frame["user"].tolist() == [0, 1, 0] and frame["item"].tolist() == [2, 0, 1]
    assert frame["position"].tolist() == [0, 1, 0]
    with pytest.raises(DataError, match="pscore"):
        from_obp({"action": [1], "reward": [1]})


def test_study_warns_about_uncovered_target_mass():
    from receval.studies.ope import ope_study

    data = _complete()
    with pytest.warns(ReceValWarning, match=r"target 'random' puts 75.0% of its mass"):
        ope_study(data, data, logging="greedy", targets=["random"], threshold=4, rounds=200, n_bootstrap=0)


def test_command_json(capsys):
    from receval.cli.app import main

    code = main(["ope", "--synthetic", "40x12", "--rounds", "3000", "--targets", "random,greedy,egreedy:0.2",
                 "--bootstrap", "20", "--threshold", "4", "--json"])  # fmt: skip
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    for k in ("truth", "estimates", "error", "kendall_tau", "width", "coverage"):
        assert k in out
    assert {"dm", "ips", "snips", "dr"} <= set(out["estimates"])
    assert set(out["truth"]) == {"random", "greedy", "egreedy:0.2"}
    truth = out["truth"]
    mae = np.mean([abs(out["estimates"]["ips"][p] - truth[p]) for p in truth])
    assert out["error"]["ips"] == pytest.approx(mae)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--synthetic", "40x12", "--logging", "bogus"], "'bogus' is not one of"),
        (["--synthetic", "40x12", "--logging", "egreedy:2"], "ε ≤ 1"),
        (["--synthetic", "40x12", "--rounds", "0"], "--rounds"),
        (["--targets", "random"], "give one of --data"),
    ],
)
def test_command_errors(capsys, args, message):
    from receval.cli.app import main

    assert main(["ope", *args, "--json"]) == 2
    assert message in json.loads(capsys.readouterr().out)["error"]


def test_command_out_writes_tables_and_figures(tmp_path, capsys):
    from receval.cli.app import main

    out = tmp_path / "ope"
    code = main(["ope", "--synthetic", "30x10", "--rounds", "1000", "--targets", "random,greedy", "--bootstrap", "10",
                 "--threshold", "4", "--out", str(out), "--log-out", str(tmp_path / "log.parquet")])  # fmt: skip
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "error_by_size.csv", "error_by_size.png", "estimates.csv", "estimates.png"
    ]  # fmt: skip
    sizes = pd.read_csv(out / "error_by_size.csv")
    assert sorted(sizes["rounds"].unique()) == [10, 100, 1000]
    assert len(read_log(tmp_path / "log.parquet")) == 1000
    assert "per estimator" in capsys.readouterr().out


def _write(path, text):
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("log_text", "extra", "message"),
    [
        ("round,user,item,reward,propensity\n1,0,1,1,0.5\n2,1,0,0,0\n", [], "propensit(ies) outside (0, 1]"),
        ("round,user,item,reward,propensity\n1,0,1,1,0.5\n2,1,0,0,1.5\n", [], "propensit(ies) outside (0, 1]"),
        ("round,user,item,reward,propensity\n1,0,1,yes,0.5\n", [], "column reward is not numeric"),
        ("round,user,item,reward,propensity\n1,0,99,1,0.5\n", [], "item index(es) beyond"),
        ("round,user,item,reward,propensity\n1,0,1,1,0.5\n", ["--reward-model", "popularity"], "cannot predict"),
    ],
)
def test_command_bad_input_is_one_line_exit_2(tmp_path, capsys, log_text, extra, message):
    from receval.cli.app import main

    log = _write(tmp_path / "log.csv", log_text)
    args = ["ope", "--synthetic", "20x6", "--threshold", "4", "--log", log, "--targets", "random", *extra, "--json"]
    assert main(args) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert message in error and "\n" not in error


def test_command_given_log_and_target_table(tmp_path, capsys):
    # a log written by one run, read back by another with a target given as a table of probabilities
    from receval.cli.app import main

    log = tmp_path / "log.parquet"
    common = ["ope", "--synthetic", "20x6", "--threshold", "4", "--bootstrap", "0", "--json"]
    assert main([*common, "--rounds", "4000", "--logging", "random", "--targets", "random", "--log-out", str(log)]) == 0
    first = json.loads(capsys.readouterr().out)
    rows = "".join(f"{u},{i},{1 / 6}\n" for u in range(20) for i in range(6))
    table = _write(tmp_path / "uniform.csv", "user,item,probability\n" + rows)
    assert main([*common, "--log", str(log), "--targets", "", "--target-table", table]) == 0
    second = json.loads(capsys.readouterr().out)
    # the uniform table is the random policy on complete data: same truth and IPS estimate on the same log
    assert second["truth"]["uniform"] == pytest.approx(first["truth"]["random"])
    assert second["estimates"]["ips"]["uniform"] == pytest.approx(first["estimates"]["ips"]["random"])
    assert set(second["diagnostics"]["uniform"]) == {"ess", "max_weight", "overlap"}
    bad = _write(tmp_path / "bad.csv", "user,item,probability\n0,0,0.5\n")
    assert main([*common, "--log", str(log), "--targets", "", "--target-table", bad]) == 2
    assert "do not sum to 1" in json.loads(capsys.readouterr().out)["error"]


def test_command_warns_about_uncovered_mass_with_its_share(capsys):
    from receval.cli.app import main

    args = ["ope", "--synthetic", "20x6", "--threshold", "4", "--rounds", "500", "--logging", "greedy",
            "--targets", "random,greedy", "--bootstrap", "10", "--json"]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "warning: target 'random' puts 83.3% of its mass" in captured.err  # the command states its warnings
    out = json.loads(captured.out)
    assert out["diagnostics"]["random"]["overlap"] == pytest.approx(1 / 6)
    values = [v for row in out["estimates"].values() for v in row.values()]
    assert all(np.isfinite(values))
