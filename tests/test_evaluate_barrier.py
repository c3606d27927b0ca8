"""evaluate(barrier=...) flags an RMSE below the magic barrier of the same users."""

import numpy as np
import pytest

import receval
from receval.data.synthetic import generate_with_truth
from receval.errors import MetricError
from receval.split import holdout
from receval.stats.barrier import magic_barrier


@pytest.fixture(scope="module")
def setup():
    truth = generate_with_truth(150, 200, 4000, reratings=3, seed=4)
    barrier = magic_barrier(truth.data, n_bootstrap=0, ddof=1)
    _, test = holdout(truth.data.deduplicate("last"), 0.3, seed=0)
    return truth, barrier, test


def test_noise_fitting_predictor_is_flagged(setup):
    truth, barrier, test = setup
    frame = test.to_frame()
    # a "model" that has seen the test ratings: far below the noise floor
    leaked = frame.assign(prediction=0.8 * frame["rating"] + 0.2 * truth.true_rating(test.users, test.items))
    with pytest.warns(RuntimeWarning, match="below"):
        result = receval.evaluate(None, test, ["rmse", "mae"], predictions=leaked, barrier=barrier)
    assert result.overfitting.flagged
    assert result.overfitting.rmse < result.overfitting.barrier


def test_honest_predictor_is_not_flagged(setup):
    truth, barrier, test = setup
    frame = test.to_frame()
    # the true preference itself reaches the barrier but not below it
    exact = frame.assign(prediction=truth.true_rating(test.users, test.items))
    result = receval.evaluate(None, test, ["rmse"], predictions=exact, barrier=barrier)
    assert not result.overfitting.flagged
    assert np.isclose(result.overfitting.barrier, barrier.system, rtol=0.1)
    plain = receval.evaluate(None, test, ["rmse"], predictions=exact)
    assert plain.overfitting is None


def test_barrier_needs_rmse(setup):
    _truth, barrier, test = setup
    frame = test.to_frame().assign(prediction=3.0)
    with pytest.raises(MetricError, match="add 'rmse'"):
        receval.evaluate(None, test, ["mae"], predictions=frame, barrier=barrier)


def test_cli_warns_on_stderr(setup, tmp_path, capsys):
    from receval.cli import main

    truth, _, test = setup
    frame = test.to_frame()
    frame.to_csv(tmp_path / "truth.csv", index=False)
    leaked = frame.assign(prediction=0.8 * frame["rating"] + 0.2 * truth.true_rating(test.users, test.items))
    leaked.to_csv(tmp_path / "pred.csv", index=False)
    truth.data.to_frame()[["user", "item", "rating"]].to_csv(tmp_path / "rerated.csv", index=False)
    args = ["evaluate", "--truth", str(tmp_path / "truth.csv"), "--predictions", str(tmp_path / "pred.csv")]
    assert main([*args, "--metrics", "rmse", "--barrier-data", str(tmp_path / "rerated.csv"), "--json"]) == 0
    captured = capsys.readouterr()
    assert "WARNING overfitting" in captured.err and "rmse" in captured.out
