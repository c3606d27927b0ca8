"""The simulator's boundary: sizes refused before work, a missing λ resolved once, models told apart by capability."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_path
from receval import Interactions
from receval.cli import main
from receval.errors import ConfigError
from receval.recommenders.bandits import KernelDriven, make_online
from receval.simulate import simulate
from receval.split import holdout


def _data(seed: int = 5) -> Interactions:
    rng = np.random.default_rng(seed)
    pairs = sorted({(int(u), int(i)) for u, i in zip(rng.integers(0, 30, 400), rng.integers(0, 25, 400), strict=True)})
    users, items = zip(*pairs, strict=True)
    return Interactions.from_arrays(list(users), list(items), rng.integers(1, 6, len(pairs)))


def _file(tmp_path: Path, data: Interactions | None = None) -> Path:
    data = _data() if data is None else data
    path = tmp_path / "ratings.csv"
    rows = zip(data.users, data.items, data.ratings, strict=True)
    path.write_text("user,item,rating\n" + "".join(f"{u},{i},{r:g}\n" for u, i, r in rows))
    return path


def test_rounds_beyond_memory_are_refused_before_the_fit():
    train, test = holdout(_data(), 0.2, seed=0)
    model = make_online("popularity")
    with pytest.raises(ConfigError, match=r"rounds=1000000000000 for 30 users x 25 items needs 64\.0 TB of memory"):
        simulate(model, train, test, rounds=10**12, threshold=4)
    assert not hasattr(model, "a_")  # refused before the model was fitted


@pytest.mark.parametrize(
    "options",
    [
        {"rounds": 1, "n_per_round": 10**12, "updates": "batched"},  # one round's feedback buffer
        {"rounds": 10**6, "n_per_round": 10**6, "record_log": True},  # the log
    ],
)
def test_other_sizes_beyond_memory_are_refused(options):
    train, test = holdout(_data(), 0.2, seed=0)
    with pytest.raises(ConfigError, match=r"of memory and .* are available; give fewer rounds"):
        simulate("random", train, test, threshold=4, **options)


def test_the_command_refuses_rounds_beyond_memory_with_exit_2(tmp_path, capsys):
    path = _file(tmp_path)
    code = main(["simulate", "--data", str(path), "--threshold", "4", "--rounds", "1000000000000",
                 "--algorithms", "random"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--rounds 1000000000000" in err and "64.0 TB of memory" in err and len(err.strip().splitlines()) == 1


def test_a_missing_threshold_is_the_scales_default():
    train, test = holdout(_data(), 0.2, seed=0)
    lam = train.scale.relevance().threshold
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # λ = 1 on 1-5: no negatives, Fallout NaN
        resolved = simulate("item-bandit-ts", train, test, rounds=4, seed=2)
        given = simulate("item-bandit-ts", train, test, rounds=4, seed=2, threshold=lam)
    assert resolved.settings["threshold"] == lam == 1.0
    assert resolved.table.equals(given.table)


def test_the_command_reads_the_threshold_the_simulator_resolved(tmp_path, capsys):
    path = _file(tmp_path)
    base = ["simulate", "--data", str(path), "--rounds", "3", "--algorithms", "random,popularity"]
    assert main(base) == 0
    assert "after 3 rounds (λ = 1, preset standard" in capsys.readouterr().out
    assert main([*base, "--threshold", "4"]) == 0
    assert "after 3 rounds (λ = 4, preset standard" in capsys.readouterr().out


class _Wrapped:
    """A model of no receval class that declares the kernel capability by delegating to a bandit."""

    def __init__(self) -> None:
        self.inner = make_online("item-bandit-egreedy", epsilon=0.3)

    def get_params(self) -> dict:
        return self.inner.get_params()

    def set_params(self, **params: object) -> None:
        self.inner.set_params(**params)

    def fit(self, train: Interactions) -> _Wrapped:
        self.inner.fit(train)
        return self

    def score(self, users: np.ndarray) -> np.ndarray:
        return self.inner.score(users)

    def kernel_state(self) -> tuple:
        return self.inner.kernel_state()


def test_a_model_with_kernel_state_is_driven_by_the_kernels_whatever_its_class():
    train, test = holdout(_data(), 0.2, seed=0)
    wrapped = _Wrapped()
    assert isinstance(wrapped, KernelDriven)
    ours = simulate(wrapped, train, test, rounds=6, threshold=4, seed=3, record_log=True)
    bandit = simulate(make_online("item-bandit-egreedy", epsilon=0.3), train, test, rounds=6, threshold=4, seed=3,
                      record_log=True)  # fmt: skip
    assert ours.table.equals(bandit.table) and ours.log.equals(bandit.log)
    assert wrapped.inner.a_.sum() > make_online("item-bandit-egreedy", threshold=4).fit(train).a_.sum()  # it learned


def _cm100k_like(tmp_path: Path) -> Path:
    """Ratings 1-4 as CM100k's: without a threshold λ = 1 and no rating is negative."""
    data = _data()
    return _file(tmp_path, Interactions.from_arrays(data.users, data.items, np.minimum(data.ratings, 4)))


@pytest.mark.parametrize("preset", ["standard", "cyclorec", "thesis"])
def test_every_preset_has_one_rule_for_a_missing_threshold(tmp_path, capsys, preset):
    """No threshold: λ is the scale's default for every preset, Fallout is NaN and the warning names --threshold."""
    path = _cm100k_like(tmp_path)
    code = main(["simulate", "--data", str(path), "--rounds", "3", "--algorithms", "random,popularity",
                 "--preset", preset, "--json"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    final = json.loads(captured.out)["final"]
    assert all(row["fallout"] is None and row["recall"] is not None for row in final.values())
    assert "no negative rating (below threshold 1)" in captured.err and "--threshold 4" in captured.err


@pytest.mark.realdata
@pytest.mark.slow
def test_cyclorec_and_thesis_treat_cm100k_without_a_threshold_alike(capsys):
    folder = shared_path("cm100k")
    outcome = {}
    for preset in ("cyclorec", "thesis"):
        code = main(["simulate", "--data", str(folder), "--format", "cm100k", "--rounds", "2", "--algorithms",
                     "random,popularity", "--preset", preset, "--json"])  # fmt: skip
        captured = capsys.readouterr()
        final = json.loads(captured.out)["final"] if code == 0 else None
        outcome[preset] = (
            code,
            final and {n: row["fallout"] for n, row in final.items()},
            "--threshold" in captured.err,
        )
    assert outcome["cyclorec"] == outcome["thesis"] == (0, {"random": None, "popularity": None}, True)
