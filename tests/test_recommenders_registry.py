"""One algorithm registry: a name means one class in make(), the runner and the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from receval.data.synthetic import generate
from receval.errors import ConfigError
from receval.experiment.protocols import build_model
from receval.recommenders import make
from receval.recommenders.bandits import OFFLINE_ALGORITHMS, ONLINE_ALGORITHMS, make_online
from receval.recommenders.baselines import Average, MostPopular, Random
from receval.recommenders.registry import ALGORITHMS, PRESETS
from receval.simulate import simulate
from receval.split import holdout


@pytest.fixture(scope="module")
def split():
    return holdout(generate(40, 50, 900, seed=8), test_fraction=0.3, seed=8)


@pytest.mark.parametrize("name", [*ONLINE_ALGORITHMS, *OFFLINE_ALGORITHMS])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_same_class_everywhere(name, preset):
    assert name in ALGORITHMS
    one = make(name, preset=preset)
    assert type(make_online(name, preset=preset)) is type(one)
    assert type(build_model(name, {}, {"preset": preset})) is type(one)
    assert make_online(name, preset=preset).get_params() == one.get_params()


def test_baselines_are_the_online_learners(split):
    train, test = split
    assert (type(make("random")), type(make("popularity")), type(make("average"))) == (Random, MostPopular, Average)
    traj = simulate("popularity", train, test, rounds=5, threshold=4, seed=1)
    assert type(traj.model) is MostPopular
    # the simulator's kernels learned into the same counts that rank one-shot
    fresh = MostPopular(threshold=4).fit(train)
    assert traj.model.score([0])[0].sum() > fresh.score([0])[0].sum()
    np.testing.assert_array_equal(traj.model.score([0])[0], traj.model.counts_)


def test_presets_are_parameter_sets():
    assert make("popularity", preset="cyclorec").get_params() == {
        "count": "any",
        "update_count": "positive",
        "threshold": 4.0,
    }
    bandit = make("im-item-bandit-ts", preset="cyclorec", alpha0="2")
    assert (bandit.policy, bandit.unknown, bandit.alpha0, bandit.beta0, bandit.draw_offset) == (
        "thompson",
        "ignore",
        2.0,
        0.0,
        1.0,
    )
    assert make("item-knn", preset="cyclorec").get_params() == make("item-knn").get_params()
    with pytest.raises(ConfigError, match="has no parameter 'policy'"):
        make("item-bandit-ts", policy="ucb")
    with pytest.raises(ConfigError, match="unknown preset"):
        make("random", preset="nope")


def test_simulator_refuses_what_its_kernels_cannot_count(split):
    train, test = split
    with pytest.raises(ConfigError, match="update_count='positive'"):
        simulate(make("popularity", update_count="any"), train, test, rounds=2, threshold=4)
