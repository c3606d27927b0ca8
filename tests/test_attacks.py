"""Shilling attacks: profile shapes and rating patterns, robustness measures, detection, CLI, bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from receval import Interactions
from receval.data.synthetic import generate
from receval.errors import ConfigError, DataError
from receval.recommenders import make
from receval.report.studies import plot_attack_experiment
from receval.split import holdout
from receval.studies.attacks import (
    attack_effect,
    attack_experiment,
    choose_targets,
    detect_attackers,
    detection_features,
    detection_quality,
    fake_user_mask,
    inject,
    summarize_attack_experiment,
)


@pytest.fixture(scope="module")
def data() -> Interactions:
    return generate(n_users=300, n_items=200, n_ratings=12_000, seed=7)


def _profiles(result):
    """Fake rows as a frame of (user, item, rating) indices."""
    fake = result.data.subset(np.isin(result.data.users, result.fake_users))
    return pd.DataFrame({"user": fake.users, "item": fake.items, "rating": fake.ratings})


@pytest.mark.parametrize("kind", ["random", "average", "bandwagon", "segment", "love-hate"])
def test_profiles_have_declared_size_and_target_rating(data, kind):
    target = data.item_ids[50]
    result = inject(data, kind, [target], size=0.05, filler=20, seed=1)
    n_real = len(np.unique(data.users))
    assert len(result.fake_users) == round(0.05 * n_real)
    assert result.fake_users.tolist() == list(range(data.n_users, data.n_users + len(result.fake_users)))
    assert result.data.n_users == data.n_users + len(result.fake_users)
    # original rows and indices unchanged, fake ids marked
    n = data.n_ratings
    assert np.array_equal(result.data.users[:n], data.users) and np.array_equal(result.data.ratings[:n], data.ratings)
    assert np.array_equal(fake_user_mask(result.data), result.fake_mask)
    assert result.fake_mask.sum() == len(result.fake_users) and not result.fake_mask[: data.n_users].any()
    prof = _profiles(result)
    n_selected = len(result.selected)
    assert (prof.groupby("user").size() == 1 + n_selected + 20).all()
    assert (prof.groupby("user")["item"].nunique() == 1 + n_selected + 20).all()
    target_ratings = prof.loc[prof["item"] == 50, "rating"]
    assert len(target_ratings) == len(result.fake_users)
    expected = data.scale.low if kind == "love-hate" else data.scale.high
    assert (target_ratings == expected).all()
    assert result.intent == ("nuke" if kind == "love-hate" else "push")
    assert data.scale.contains(prof["rating"].to_numpy())
    if n_selected:
        assert (prof.loc[prof["item"].isin(result.selected), "rating"] == data.scale.high).all()


def test_filler_rating_distributions(data):
    target = data.item_ids[50]
    filler = lambda r: _profiles(r).query("item != 50 and item not in @r.selected.tolist()")  # noqa: E731
    mu, sigma = float(data.ratings.mean()), float(data.ratings.std())
    rnd = filler(inject(data, "random", [target], size=0.5, filler=100, seed=2))
    assert abs(rnd["rating"].mean() - mu) < 0.1
    assert abs(rnd["rating"].std() - sigma) < 0.15  # rounding to the grid changes σ a little
    # average attack: filler ratings follow each item's mean, the random attack's do not
    frame = data.to_frame(original_ids=False)
    item_mean = frame.groupby("item")["rating"].mean()
    avg = filler(inject(data, "average", [target], size=0.5, filler=100, seed=2))
    by_item = avg.groupby("item")["rating"].mean()
    common = by_item.index.intersection(item_mean.index[frame.groupby("item").size() >= 20])
    assert np.corrcoef(by_item[common], item_mean[common])[0, 1] > 0.8
    rnd_by_item = rnd.groupby("item")["rating"].mean()
    common_r = rnd_by_item.index.intersection(common)
    assert abs(np.corrcoef(rnd_by_item[common_r], item_mean[common_r])[0, 1]) < 0.3
    # bandwagon: default selected = most-rated items; filler like random
    band = inject(data, "bandwagon", [target], size=0.5, filler=100, seed=2, n_selected=4)
    counts = np.bincount(data.items, minlength=data.n_items)
    counts[50] = -1
    assert set(band.selected.tolist()) == set(np.argsort(-counts, kind="stable")[:4].tolist())
    assert abs(filler(band)["rating"].mean() - mu) < 0.1
    # segment: filler at the bottom; love/hate: filler at the top
    assert (filler(inject(data, "segment", [target], size=0.05, filler=30, seed=2))["rating"] == data.scale.low).all()
    assert (
        filler(inject(data, "love-hate", [target], size=0.05, filler=30, seed=2))["rating"] == data.scale.high
    ).all()


def test_nuke_push_selected_fraction_and_seeds(data):
    t = [data.item_ids[5], data.item_ids[6]]
    result = inject(data, "average", t, intent="nuke", size=0.1, filler=0.05, seed=3)
    prof = _profiles(result)
    assert (prof.loc[prof["item"].isin([5, 6]), "rating"] == data.scale.low).all()
    assert (prof.groupby("user").size() == 2 + round(0.05 * data.n_items)).all()
    sel = inject(data, "segment", t[:1], selected=[data.item_ids[1], data.item_ids[2]], filler=3, seed=0)
    assert sel.selected.tolist() == [1, 2]
    again = inject(data, "average", t, intent="nuke", size=0.1, filler=0.05, seed=3)
    other = inject(data, "average", t, intent="nuke", size=0.1, filler=0.05, seed=4)
    assert np.array_equal(again.data.items, result.data.items) and np.array_equal(
        again.data.ratings, result.data.ratings
    )
    assert not np.array_equal(other.data.items, result.data.items)


def test_timestamps_extras_and_extend():
    df = pd.DataFrame(
        {
            "user": [1, 1, 2, 2, 3, 3],
            "item": [10, 11, 10, 12, 11, 12],
            "rating": [5, 3, 4, 2, 1, 5],
            "timestamp": [5, 6, 7, 8, 9, 10],
            "familiar": [True, False, True, True, False, False],
        }
    )
    data = Interactions.from_frame(df, timestamp="timestamp", extra=["familiar"])
    train, test = data.subset([0, 1, 2, 4]), data.subset([3, 5])
    result = inject(train, "random", [12], size=0.5, filler=1, seed=0)
    fake = np.isin(result.data.users, result.fake_users)
    assert (result.data.timestamps[fake] == 9).all()
    assert not result.data.extra["familiar"][fake].any() and len(result.data.extra["familiar"]) == len(result.data)
    assert result.data.user_ids.tolist() == [1, 2, 3, "__attack_0", "__attack_1"]
    extended = result.extend(test)
    assert extended.n_users == 5 and np.array_equal(extended.users, test.users)
    with pytest.raises(DataError, match="original user id space"):
        result.extend(result.data)


def test_bad_input(data):
    t = [data.item_ids[3]]
    with pytest.raises(ConfigError, match="strictly between 0 and 1"):
        inject(data, "random", t, size=1.0)
    with pytest.raises(ConfigError, match="strictly between 0 and 1"):
        inject(data, "random", t, size=0.0)
    with pytest.raises(ConfigError, match="strictly between 0 and 1"):
        inject(data, "random", t, size=-0.1)
    with pytest.raises(DataError, match="target item 'nope' does not exist"):
        inject(data, "random", ["nope"])
    with pytest.raises(DataError, match="target item 99999 does not exist"):
        inject(data, "random", [99999])
    with pytest.raises(DataError, match="larger than the catalogue"):
        inject(data, "random", t, filler=data.n_items)
    with pytest.raises(ConfigError, match=r"must lie in \(0, 1\]"):
        inject(data, "random", t, filler=1.5)
    with pytest.raises(ConfigError, match="unknown attack"):
        inject(data, "sybil", t)
    with pytest.raises(ConfigError, match="no push form"):
        inject(data, "love-hate", t, intent="push")
    with pytest.raises(ConfigError, match="no nuke form"):
        inject(data, "segment", t, intent="nuke")
    with pytest.raises(ConfigError, match="no selected items"):
        inject(data, "average", t, selected=[data.item_ids[4]])
    with pytest.raises(ConfigError, match="also a target"):
        inject(data, "bandwagon", t, selected=t)
    no_aspects = Interactions.from_arrays([0, 1, 2], [0, 1, 2], [5, 4, 3])
    with pytest.raises(ConfigError, match="segment attack needs selected items"):
        inject(no_aspects, "segment", [1], size=0.5, filler=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_average_attack_raises_user_knn_predictions_not_random(seed):
    """Property: a 5% average push of a mid-popularity item raises user-kNN predictions; Random scores stay."""
    data = generate(n_users=250, n_items=150, n_ratings=8_000, seed=100 + seed)
    train, _ = holdout(data, seed=seed)
    target = choose_targets(train, 1, seed=seed)
    result = inject(train, "average", target, size=0.05, filler=0.05, seed=seed)
    effects = {}
    for name, params in (("user-knn", {"similarity": "pearson"}), ("random", {})):  # Pearson kNN, as Lam & Riedl
        before, after = make(name, **params).fit(train), make(name, **params).fit(result.data)
        effects[name] = attack_effect(before, after, train, result, k=10)
    knn, rnd = effects["user-knn"], effects["random"]
    assert knn["shift_kind"] == "rating" and knn["prediction_shift"] > 0.05
    assert knn["rank_shift"] > 0
    assert rnd["shift_kind"] == "score" and rnd["prediction_shift"] == 0.0 and rnd["rank_shift"] == 0.0
    assert rnd["hit_ratio_before"] == rnd["hit_ratio_after"]


def test_attack_effect_against_direct_computation(data):
    """Popularity counts positive ratings: a push adds exactly n_fake to the target's score; hit ratio
    and rank equal a direct computation from the lists and scores."""
    from receval.recommenders import recommend

    train, test = holdout(data, seed=0)
    target = choose_targets(train, 1, seed=0)
    result = inject(train, "random", target, size=0.1, filler=10, seed=0)
    before, after = make("popularity").fit(train), make("popularity").fit(result.data)
    effect = attack_effect(before, after, train, result, k=10, test=test, metrics=["ndcg@10"], threshold=4)
    assert effect["prediction_shift"] == pytest.approx(len(result.fake_users))
    t = int(result.targets[0])
    users = np.unique(train.users)
    rated = train.to_csr("ones")
    eligible = users[np.asarray(rated[users, t].todense()).ravel() == 0]
    lists, _ = recommend(after, eligible, 10, exclude=result.data, seed=0)
    assert effect["hit_ratio_after"] == pytest.approx((lists == t).any(axis=1).mean())
    assert effect["n_users"] == len(eligible)
    scores = after.score(eligible).astype(float)
    excl = result.data.to_csr("ones")[eligible].toarray() > 0
    scores[excl] = -np.inf
    assert effect["rank_after"] == pytest.approx(np.mean(1 + (scores > scores[:, [t]]).sum(axis=1)))
    assert effect["ndcg@10_change"] == pytest.approx(effect["ndcg@10_after"] - effect["ndcg@10_before"])
    nuke = inject(train, "random", target, intent="nuke", size=0.1, filler=10, seed=0)
    shift = attack_effect(before, make("popularity").fit(nuke.data), train, nuke, k=10)["prediction_shift"]
    assert shift == 0.0  # r_min is not a positive rating: the count does not move


def test_experiment_frame_and_figure(tmp_path):
    data = generate(n_users=120, n_items=80, n_ratings=3_000, seed=5)
    frame = attack_experiment(
        data, ["average", "love-hate"], [0.03, 0.1], ["item-knn", "random"], n_targets=2, filler=8, metrics=["ndcg@10"]
    )
    assert len(frame) == 2 * 2 * 2 * 2
    assert set(frame["intent"]) == {"push", "nuke"}
    assert {"prediction_shift", "hit_ratio_before", "hit_ratio_after", "rank_shift", "ndcg@10_change"} <= set(frame)
    summary = summarize_attack_experiment(frame)
    assert len(summary) == 8 and (summary["n_targets"] == 2).all()
    assert (frame.loc[frame["algorithm"] == "random", "prediction_shift"] == 0).all()
    png = plot_attack_experiment(frame, tmp_path / "attack.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_detection_quality_hand_made():
    flagged = np.array([True, True, False, False, True, False])
    fake = np.array([True, False, False, True, True, False])
    q = detection_quality(flagged, fake)
    assert q["precision"] == pytest.approx(2 / 3) and q["recall"] == pytest.approx(2 / 3)
    assert q["f1"] == pytest.approx(2 / 3) and q["n_flagged"] == 3 and q["n_fake"] == 3
    q = detection_quality(np.zeros(4, bool), np.array([1, 0, 0, 0], bool))
    assert np.isnan(q["precision"]) and q["recall"] == 0
    with pytest.raises(DataError, match="one flag per user"):
        detection_quality(np.zeros(3, bool), np.zeros(4, bool))


def test_detection_features_hand_made():
    """RDMA by hand and DegSim from numpy Pearson over co-rated items."""
    users = [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3]
    items = [0, 1, 2, 0, 1, 2, 0, 2, 0, 1, 2]
    ratings = [5, 3, 1, 4, 3, 2, 1, 5, 5, 4, 1]
    data = Interactions.from_arrays(users, items, ratings)
    f = detection_features(data, k=1)
    m = data.to_csr().toarray()
    counts = (m > 0).sum(axis=0)
    means = m.sum(axis=0) / counts
    rdma = [np.mean([abs(m[u, i] - means[i]) / counts[i] for i in np.flatnonzero(m[u])]) for u in range(4)]
    assert np.allclose(f["rdma"], rdma)

    def pearson(a, b):
        co = (m[a] > 0) & (m[b] > 0)
        return np.corrcoef(m[a, co], m[b, co])[0, 1]

    degsim = [max(pearson(u, v) for v in range(4) if v != u) for u in range(4)]
    assert np.allclose(f["degsim"], degsim)
    assert np.allclose(f["z_rdma"], (f["rdma"] - f["rdma"].mean()) / f["rdma"].std(ddof=0))


def test_detector_finds_average_attack_profiles(data):
    result = inject(data, "average", [data.item_ids[60]], size=0.1, filler=0.05, seed=0)
    flags, features = detect_attackers(result.data)
    q = detection_quality(flags, result.fake_mask)
    assert len(features) == result.data.n_users
    assert q["recall"] > 0.5 and q["precision"] > 0.5
    with pytest.raises(ConfigError):
        detect_attackers(result.data, threshold=float("nan"))


def test_cli_attack(tmp_path, capsys):
    from receval.cli import main

    data = generate(n_users=150, n_items=100, n_ratings=4_000, seed=3)
    path = tmp_path / "ratings.csv"
    data.to_frame().to_csv(path, index=False)
    base = ["attack", "--data", str(path), "--format", "csv", "--algorithm", "item-knn", "--seed", "1"]
    status = main([*base, "--attack", "average", "--size", "0.05", "--target", "40", "--filler", "10", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert {"prediction_shift", "hit_ratio_before", "hit_ratio_after"} <= set(out)
    assert out["n_fake"] == round(0.05 * len(np.unique(data.users))) and out["intent"] == "push"
    status = main([*base, "--attack", "bandwagon", "--nuke", "--size", "0.05", "--target", "40", "--json"])
    assert status == 0 and json.loads(capsys.readouterr().out)["intent"] == "nuke"
    status = main([*base, "--attack", "average", "--size", "0.05", "--target", "40", "--detect"])
    text = capsys.readouterr().out
    assert status == 0 and "detection_recall" in text and "prediction_shift" in text
    for extra, message in [
        (["--size", "1.0", "--target", "40"], "strictly between 0 and 1"),
        (["--size", "0.05", "--target", "4000"], "does not exist"),
        (["--size", "0.05", "--target", "40", "--filler", "500"], "larger than the catalogue"),
        (["--size", "0.05", "--target", "40", "--filler", "lots"], "fraction"),
    ]:
        assert main([*base, "--attack", "random", *extra]) == 2
        assert message in capsys.readouterr().err


def test_attack_protocol_in_the_experiment_runner(tmp_path):
    import receval.experiment.attack_protocol  # noqa: F401
    from receval.experiment.config import parse_config
    from receval.experiment.runner import run_experiment, summarise

    cfg = parse_config(
        """
        name = "attack-grid"
        seeds = [0]
        metrics = ["ndcg@10"]
        [datasets.toy]
        generate = { n_users = 100, n_items = 70, n_ratings = 2500 }
        [split]
        method = "holdout"
        [protocol]
        name = "attack"
        attack = ["average", "love-hate"]
        size = [0.03, 0.1]
        n_targets = 2
        filler = 0.1
        [recommenders.random]
        [recommenders.ib]
        algorithm = "item-knn"
        """
    )
    report = run_experiment(cfg, out=tmp_path / "run")
    assert (report.n_tasks, report.ok, report.failed) == (8, 8, 0)
    summary = summarise(report.store).set_index("label")
    assert {"prediction_shift", "hit_ratio_after", "ndcg@10_change"} <= set(summary.columns)
    assert (summary.filter(like="random", axis=0)["prediction_shift"] == 0).all()
    nuke = summary.filter(like="ib()/attack=love-hate", axis=0)["prediction_shift"]
    assert len(nuke) == 2 and (nuke < 0).all()
