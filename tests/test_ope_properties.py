"""Properties of the off-policy estimators that theory promises, checked over many seeded logs.

With exact propensities and full support IPS and DR are unbiased: their mean over 60 logs lies within
two standard errors (of that mean) of the true value. DM with a wrong reward model is biased: its mean
lies many standard errors away. SNIPS, a ratio estimator, varies less than IPS on the same logs.
The logs come from receval's own logging pass (:mod:`receval.simulate.logged`), whose truth is exact.
"""

from __future__ import annotations

import numpy as np
import pytest

from receval import Interactions
from receval.simulate.logged import log_policy, policy_table, policy_value, reward_matrix
from receval.stats.ope import estimate

SEEDS = range(60)


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(11)
    nu, ni = 20, 8
    users, items = np.divmod(np.arange(nu * ni), ni)
    data = Interactions.from_arrays(users, items, rng.integers(1, 6, nu * ni))
    rewards, actions = reward_matrix(data, 4)
    logging = policy_table("softmax:0.3", data, data, threshold=4)  # full support
    target = policy_table("egreedy:0.2", data, data, threshold=4)
    truth = policy_value(target, rewards, actions)
    good_q = np.full((nu, ni), rewards.mean())  # a constant model: DR stays unbiased whatever the model
    out: dict[str, list[float]] = {k: [] for k in ("ips", "snips", "dr", "dm_wrong")}
    for seed in SEEDS:
        log = log_policy(logging, data, threshold=4, rounds=400, seed=seed).frame
        u, i = log["user"].to_numpy(), log["item"].to_numpy()
        # a wrong reward model fitted on the log: each item's mean logged reward, shifted up by 0.25
        item_mean = np.bincount(i, log["reward"], ni) / np.maximum(np.bincount(i, minlength=ni), 1)
        wrong_q = np.clip(item_mean + 0.25, 0, 1)[None, :] * np.ones((nu, 1))
        e = target.probs[u, i]
        est = estimate(
            log["reward"], log["propensity"], e, q_logged=good_q[u, i],
            q_target=(target.probs[u] * good_q[u]).sum(axis=1), n_bootstrap=0,
        )  # fmt: skip
        wrong = estimate(
            log["reward"], log["propensity"], e, q_logged=wrong_q[u, i],
            q_target=(target.probs[u] * wrong_q[u]).sum(axis=1), n_bootstrap=0,
        )  # fmt: skip
        for k in ("ips", "snips", "dr"):
            out[k].append(est[k].value)
        out["dm_wrong"].append(wrong["dm"].value)
    return truth, {k: np.array(v) for k, v in out.items()}


def _z(values: np.ndarray, truth: float) -> float:
    return abs(values.mean() - truth) / (values.std(ddof=1) / np.sqrt(len(values)))


@pytest.mark.parametrize("name", ["ips", "dr"])
def test_unbiased_with_exact_propensities(runs, name):
    truth, values = runs
    assert _z(values[name], truth) < 2.0


def test_dm_with_a_wrong_model_is_biased(runs):
    truth, values = runs
    assert _z(values["dm_wrong"], truth) > 5.0


def test_snips_varies_less_than_ips(runs):
    _, values = runs
    assert values["snips"].var(ddof=1) < values["ips"].var(ddof=1)
