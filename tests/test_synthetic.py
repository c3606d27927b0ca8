import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import RatingScale
from receval.data.synthetic import generate, generate_with_truth
from receval.errors import ConfigError


def gini(counts: np.ndarray) -> float:
    x = np.sort(counts[counts > 0]).astype(float)
    n = len(x)
    j = np.arange(1, n + 1)
    return float(((2 * j - n - 1) * x).sum() / ((n - 1) * x.sum()))


def same(a, b) -> bool:
    fields = ("users", "items", "ratings", "timestamps", "user_ids", "item_ids")
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields) and (a.aspects != b.aspects).nnz == 0


def test_deterministic_and_seed_sensitive():
    a = generate(200, 150, 3000, seed=7, familiar_fraction=0.1)
    b = generate(200, 150, 3000, seed=7, familiar_fraction=0.1)
    c = generate(200, 150, 3000, seed=8, familiar_fraction=0.1)
    assert same(a, b)
    assert np.array_equal(a.extra["familiar"], b.extra["familiar"])
    assert not np.array_equal(a.ratings, c.ratings)
    g = generate(200, 150, 3000, seed=np.random.default_rng(7), familiar_fraction=0.1)
    assert same(a, g)


@pytest.mark.parametrize("exposure", ["mnar", "mar"])
def test_counts_scale_and_unique_pairs(exposure):
    d = generate(300, 200, 5000, exposure=exposure, seed=1)
    assert (d.n_users, d.n_items, d.n_ratings) == (300, 200, 5000)
    assert not d.has_duplicates
    assert d.scale == RatingScale(1, 5, 1)
    assert set(np.unique(d.ratings).tolist()) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert len(np.unique(d.ratings)) == 5  # every level is used at this size
    assert d.timestamps is not None and d.timestamps.dtype == np.int64
    # every user gets at least min(20, n // (2 n_users)) = 8 ratings
    assert np.bincount(d.users, minlength=300).min() >= 8
    assert d.name == f"synthetic-{exposure}"


def test_density_and_other_scales():
    d = generate(50, 40, density=0.25, scale=RatingScale(0, 100, 5), seed=2)
    assert d.n_ratings == 500
    assert d.scale.contains(d.ratings)
    steps = (d.ratings - 0) / 5
    assert np.allclose(steps, np.round(steps))
    odd = generate(50, 40, 300, scale=RatingScale(1, 5, 1.5), seed=2)
    assert set(np.unique(odd.ratings).tolist()) <= {1.0, 2.5, 4.0}
    c = generate(50, 40, 300, scale=RatingScale(1, 10), seed=2)
    assert c.scale.step is None and c.ratings.min() >= 1 and c.ratings.max() <= 10
    assert len(np.unique(c.ratings)) > 250  # real-valued


def test_aspects_shape_and_genres_per_item():
    d = generate(100, 500, 2000, n_aspects=19, seed=3)
    assert d.aspects.shape == (500, 19)
    assert d.aspect_names[0] == "Drama" and len(d.aspect_names) == 19
    per_item = np.diff(d.aspects.indptr)
    assert per_item.min() >= 1 and per_item.max() <= 3
    assert set(np.unique(d.aspects.data)) == {1.0}
    freq = np.asarray(d.aspects.sum(axis=0)).ravel()
    assert freq[0] > 3 * freq[-1]  # skewed genre distribution
    many = generate(10, 30, 100, n_aspects=25, seed=3)
    assert many.aspect_names[-1] == "genre_25"
    none = generate(10, 30, 100, n_aspects=0, seed=3)
    assert none.aspects is None
    two = generate(10, 30, 100, n_aspects=2, seed=3)
    assert np.diff(two.aspects.indptr).max() <= 2


def test_genre_affinity_shapes_ratings():
    # users' mean rating differs by genre much more than independent noise would give
    t = generate_with_truth(400, 300, 20_000, n_factors=0, noise=0.0, scale=RatingScale(1, 5), seed=4)
    d = t.data
    single = np.diff(d.aspects.indptr) == 1
    genre = np.full(d.n_items, -1)
    genre[single] = d.aspects.indices[d.aspects.indptr[:-1][single]]
    rows = genre[d.items] >= 0
    prefs = t._preferences
    a = prefs.affinity[d.users[rows], genre[d.items[rows]]]
    resid = t.true_ratings[rows]
    corr = np.corrcoef(a, resid)[0, 1]
    assert corr > 0.3


def test_mnar_more_concentrated_than_mar():
    from receval.data.stats import dataset_stats

    mnar = generate(943, 1682, 100_000, exposure="mnar", seed=0)
    mar = generate(943, 1682, 100_000, exposure="mar", seed=0)
    sn, sa = dataset_stats(mnar), dataset_stats(mar)
    assert (sn["mar_mnar"]["label"], sa["mar_mnar"]["label"]) == ("MNAR", "MAR")
    assert sn["gini_item_popularity"] == pytest.approx(gini(np.bincount(mnar.items)), abs=1e-9)
    pn = np.bincount(mnar.items, minlength=mnar.n_items)
    pa = np.bincount(mar.items, minlength=mar.n_items)
    assert gini(pn) > 0.55 and gini(pa) < 0.15
    assert pn.std() / pn.mean() > 1.0 > 0.3 > pa.std() / pa.mean()
    weaker = generate(943, 1682, 100_000, popularity_exponent=1.0, seed=0)
    assert gini(pa) < gini(np.bincount(weaker.items)) < gini(pn)
    # MAR default: equal user activity, like CM100k
    act = np.bincount(mar.users)
    assert act.std() / act.mean() < 0.2


def test_mnar_popular_items_better_liked():
    t = generate_with_truth(500, 400, 20_000, seed=5)
    pop = np.bincount(t.data.items, minlength=400)
    corr = np.corrcoef(np.argsort(np.argsort(pop)), np.argsort(np.argsort(t._preferences.item_bias)))[0, 1]
    assert corr > 0.3


def test_complete_observation():
    t = generate_with_truth(30, 25, complete=True, seed=6)
    d = t.data
    assert d.n_ratings == 30 * 25 and not d.has_duplicates
    assert np.array_equal(d.to_csr("ones").toarray(), np.ones((30, 25), dtype=np.float32))
    assert d.name == "synthetic-complete"
    assert np.allclose(t.item_popularity, 1 / 25)


def test_dense_user_sampling_is_exact_and_distinct():
    # users asking for nearly every item go through the Gumbel top-k path
    d = generate(20, 30, 580, seed=9)
    counts = np.bincount(d.users, minlength=20)
    assert counts.sum() == 580 and counts.max() <= 30
    assert not d.has_duplicates


def test_reratings_rows_timestamps_and_noise():
    scale = RatingScale(-1000, 1000)  # wide and continuous: no rounding, almost no clipping
    t = generate_with_truth(40, 30, 200, reratings=40, noise=(5.0, 50.0), scale=scale, seed=10)
    d = t.data
    assert d.n_ratings == 200 * 40
    keys = d.users.astype(np.int64) * d.n_items + d.items
    uniq, counts = np.unique(keys, return_counts=True)
    assert len(uniq) == 200 and np.all(counts == 40)
    # a pair's rows are adjacent, with strictly increasing timestamps
    ts = d.timestamps.reshape(200, 40)
    assert np.all(np.diff(ts, axis=1) > 0)
    assert np.all(keys.reshape(200, 40) == keys.reshape(200, 40)[:, :1])
    # per-user spread of the ratings around the true value matches the declared noise
    eff = t.noise_rmse(per_user=True)
    rated = ~np.isnan(eff)
    rel = eff[rated] / t.user_noise[rated]
    n_rows = np.bincount(d.users, minlength=40)[rated]
    assert np.all(np.abs(rel - 1) < 5 / np.sqrt(n_rows))
    # the exact barrier sits just below sigma_u (a little clipping near the ends)
    mb = t.magic_barrier(per_user=True)[rated]
    assert np.all(mb <= t.user_noise[rated] + 1e-9) and mb == pytest.approx(t.user_noise[rated], rel=1e-2)


def test_magic_barrier_matches_simulation_with_rounding():
    # exact V[r] of the rounded, clipped rating vs Monte Carlo over many re-ratings
    t = generate_with_truth(20, 15, 60, reratings=3000, noise=(0.2, 1.5), seed=11)
    d = t.data
    r = d.ratings.reshape(60, 3000).astype(np.float64)
    mean, var = t.rating_moments()
    m, v = mean.reshape(60, 3000)[:, 0], var.reshape(60, 3000)[:, 0]
    assert np.all(np.abs(r.mean(axis=1) - m) < 4.5 * np.sqrt(v / 3000) + 1e-9)
    assert np.all(np.abs(r.var(axis=1) - v) < 4.5 * np.sqrt(2 / 3000) * v + 0.01)
    # rounding makes the effective noise differ from the declared one
    assert t.noise_rmse() != pytest.approx(np.sqrt((t.user_noise[d.users] ** 2).mean()), rel=1e-3)
    assert t.magic_barrier() == pytest.approx(np.sqrt(r.var(axis=1).mean()), rel=0.03)


def test_continuous_moments_censored_normal():
    t = generate_with_truth(10, 10, 50, reratings=4000, noise=2.0, scale=RatingScale(1, 5), seed=12)
    r = t.data.ratings.reshape(50, 4000).astype(np.float64)
    mean, var = t.rating_moments()
    assert (r == 1).any() and (r == 5).any()  # clipping happens
    m, v = mean.reshape(50, 4000)[:, 0], var.reshape(50, 4000)[:, 0]
    assert np.all(np.abs(r.mean(axis=1) - m) < 4.5 * np.sqrt(v / 4000))
    assert np.all(np.abs(r.var(axis=1) / v - 1) < 4.5 * np.sqrt(2 / 4000))
    assert np.all(v < 4.0)  # clipping removes variance


def test_true_rating_function():
    t = generate_with_truth(30, 20, 200, seed=13)
    d = t.data
    assert np.allclose(t.true_rating(d.users, d.items), t.true_ratings)
    grid = t.true_rating(np.repeat(np.arange(30), 20).reshape(30, 20), np.tile(np.arange(20), (30, 1)))
    assert grid.shape == (30, 20) and grid.min() >= 1 and grid.max() <= 5
    with pytest.raises(ConfigError, match="item indices"):
        t.true_rating([0], [20])


def test_per_user_noise_distribution():
    t = generate_with_truth(2000, 20, 4000, seed=14)
    assert t.user_noise.min() >= 0.2 and t.user_noise.max() <= 1.2
    assert t.user_noise.mean() == pytest.approx(0.7, abs=0.03)
    fixed = generate_with_truth(50, 20, 400, noise=0.5, seed=14)
    assert np.all(fixed.user_noise == 0.5)


def test_familiar_flag():
    d = generate(500, 400, 20_000, familiar_fraction=0.11, seed=15)
    fam = d.extra["familiar"]
    assert fam.dtype == bool and fam.sum() == round(0.11 * 20_000)
    pop = np.bincount(d.items, minlength=400)
    assert gini(np.bincount(d.items[fam], minlength=400)) > gini(pop)
    assert pop[d.items[fam]].mean() > pop[d.items].mean()
    r = generate(50, 40, 300, reratings=2, familiar_fraction=0.5, seed=15)
    f = r.extra["familiar"].reshape(300, 2)
    assert np.all(f[:, 0] == f[:, 1])  # flag belongs to the pair
    assert "familiar" not in generate(20, 20, 50).extra


def test_familiar_subset_of_mar_data_is_mnar():
    # CM100k-like: MAR overall, the familiar subset popularity-biased (stats helper's diagnostic)
    from receval.data.stats import dataset_stats, mar_mnar

    d = generate(1054, 1084, 103_584, exposure="mar", familiar_fraction=0.112, scale=RatingScale(1, 4, 1), seed=0)
    assert dataset_stats(d)["mar_mnar"]["label"] == "MAR"
    fam = d.subset(d.extra["familiar"])
    assert fam.n_ratings == 11_601
    assert dataset_stats(fam)["mar_mnar"]["label"] == "MNAR"
    counts = np.bincount(fam.items, minlength=d.n_items)
    assert 0.9 < mar_mnar(counts[counts > 0])["cv"] < 1.8


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_users": 0}, "n_users"),
        ({"n_ratings": 10**9}, "exceeds"),
        ({"density": 1.5}, "density"),
        ({"exposure": "zipf"}, "exposure"),
        ({"exposure": "mar", "popularity_exponent": 1.0}, "uniform"),
        ({"popularity_exponent": -1}, "popularity_exponent"),
        ({"reratings": 0}, "reratings"),
        ({"noise": -0.1}, "noise"),
        ({"noise": (1.0, 0.5)}, "noise"),
        ({"familiar_fraction": 2}, "familiar"),
        ({"complete": True, "n_users": 10_000, "n_items": 10_000}, "50 million"),
        ({"scale": RatingScale(3, 3)}, "no range"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        generate(**{"n_users": 20, "n_items": 20, "n_ratings": 50, **kwargs})


@settings(max_examples=30, deadline=None)
@given(
    n_users=st.integers(1, 15),
    n_items=st.integers(1, 15),
    fill=st.floats(0.01, 1.0),
    reratings=st.integers(1, 3),
    exposure=st.sampled_from(["mnar", "mar"]),
    exponent=st.floats(0, 8),
    activity=st.floats(0, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_generator_invariants(n_users, n_items, fill, reratings, exposure, exponent, activity, seed):
    n = max(1, round(fill * n_users * n_items))
    t = generate_with_truth(
        n_users,
        n_items,
        n,
        reratings=reratings,
        exposure=exposure,
        popularity_exponent=exponent if exposure == "mnar" else None,
        user_activity_sigma=activity,
        n_aspects=4,
        seed=seed,
    )
    d = t.data
    assert d.n_ratings == n * reratings and (d.n_users, d.n_items) == (n_users, n_items)
    keys = d.users.astype(np.int64) * n_items + d.items
    assert len(np.unique(keys)) == n
    assert d.scale.contains(d.ratings)
    assert np.all(d.timestamps.reshape(n, reratings)[:, 1:] > d.timestamps.reshape(n, reratings)[:, :-1])
    assert np.allclose(t.true_rating(d.users, d.items), t.true_ratings)
    assert 1 <= t.true_ratings.min() and t.true_ratings.max() <= 5
