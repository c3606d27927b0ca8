"""Sampled metrics: metric strings with sampled=N, evaluate_model/evaluate_sampled, hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from receval.errors import MetricError
from receval.metrics import parse_metric
from receval.vocabulary import SAMPLE_SHAPES, SAMPLED_CORRECTIONS, SAMPLING_SCHEMES, UNIFORM_ONLY_CORRECTIONS

# ----------------------------------------------------------------------------- metric strings


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ndcg@10(sampled=100,correction=bv)", "ndcg@10(correction=bv,sampled=100)"),
        ("recall@10(sampled=100)", "recall@10(sampled=100)"),
        ("recall@10(sampled=100,sampling=uniform,shape=per-item,correction=none)", "recall@10(sampled=100)"),
        ("ndcg@10(candidates=sampled)", "ndcg@10(sampled=100)"),
        ("recall@10(candidates=sampled,correction=BV,gamma=0.5)", "recall@10(correction=bv,gamma=0.5,sampled=100)"),
        ("ndcg@10(candidates=all)", "ndcg@10"),
        ("hr@5(sampled=49,shape=per_user)", "hit_rate@5(sampled=49,shape=per-user)"),
        ("AP@10(sampled=9,sampling=popularity,exponent=0.5)", "map@10(exponent=0.5,sampled=9,sampling=popularity)"),
        ("auc(sampled=99)", "auc(sampled=99)"),
        ("mrr(sampled=99,correction=mle)", "mrr(correction=mle,sampled=99)"),
        ("precision@3(sampled=20,threshold=4)", "precision@3(sampled=20,threshold=4)"),
        ("ab_ndcg@10(gamma=0.5)", "ab_ndcg@10(gamma=0.5)"),  # a metric's own parameter named like bv's is its own
    ],
)
def test_metric_strings_read_and_round_trip(text, canonical):
    metric = parse_metric(text)
    assert str(metric) == canonical
    assert str(parse_metric(str(metric))) == canonical
    assert parse_metric(str(metric)) == metric


def test_parameters_resolved():
    m = parse_metric("ndcg@10(sampled=100,correction=bv)")
    assert m.sampled == 100
    assert {k: m.params[k] for k in ("sampling", "exponent", "shape", "correction", "gamma")} == {
        "sampling": "uniform", "exponent": 1.0, "shape": "per-item", "correction": "bv", "gamma": None,
    }  # fmt: skip
    assert parse_metric("ndcg@10").sampled is None
    # no library preset applies to a sampled metric (one relevant item per list: one definition)
    assert parse_metric("ndcg@10(sampled=100,convention=ranx)").convention is None


@given(
    n=st.integers(1, 10_000),
    sampling=st.sampled_from(SAMPLING_SCHEMES),
    shape=st.sampled_from(SAMPLE_SHAPES),
    correction=st.sampled_from(SAMPLED_CORRECTIONS),
    k=st.integers(1, 50),
    name=st.sampled_from(["recall", "hit_rate", "precision", "ndcg", "mrr", "map"]),
)
def test_every_combination_round_trips(n, sampling, shape, correction, k, name):
    assume(not (sampling == "popularity" and correction in UNIFORM_ONLY_CORRECTIONS))  # refused by design
    parts = [f"sampled={n}", f"sampling={sampling}", f"shape={shape}", f"correction={correction}"]
    if correction == "bv":
        parts.append("gamma=0.25")
    metric = parse_metric(f"{name}@{k}({','.join(parts)})")
    again = parse_metric(str(metric))
    assert again == metric and str(again) == str(metric)
    assert (again.sampled, again.params["sampling"], again.params["shape"], again.params["correction"]) == (
        n, sampling, shape, correction,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndcg@10(sampled=0)", "sampled is the number of sampled negatives, an integer >= 1, got 0"),
        ("ndcg@10(sampled=2.5)", "an integer >= 1, got 2.5"),
        ("ndcg@10(sampled=true)", "an integer >= 1, got True"),
        ("ndcg@10(correction=bv)", "correction= belong to a sampled metric; add sampled=N"),
        ("ndcg@10(sampled=10,correction=lsq)", "correction='lsq' is not known; use one of none, ls, bv, mapping, mle"),
        ("ndcg@10(sampled=10,sampling=pop)", "sampling='pop' is not known; use one of uniform, popularity"),
        ("ndcg@10(sampled=10,shape=row)", "shape='row' is not known; use one of per-item, per-user"),
        ("ndcg@10(sampled=10,exponent=2)", "exponent weights popularity sampling; add sampling=popularity"),
        ("ndcg@10(sampled=10,sampling=popularity,exponent=x)", "exponent must be a finite number, got 'x'"),
        ("ndcg@10(sampled=10,gamma=0.1)", "gamma is the bias-variance trade-off; add correction=bv"),
        ("ndcg@10(sampled=10,correction=bv,gamma=1.5)", "gamma weighs variance against bias, in [0, 1]"),
        ("ndcg@10(sampled=10,gain=exponential)", "a sampled metric has one relevant item per ranked list and no gain"),
        ("recall@10(sampled=10,estimator=ips)", "no estimator"),
        ("coverage@10(sampled=10)", "has no sampled form"),
        ("ndcg@10(candidates=some)", "candidates must be all or sampled, got 'some'"),
        ("ndcg@10(candidates=all,sampled=5)", "candidates=all ranks the whole catalogue"),
    ],
)
def test_bad_parameters_are_one_line_errors(text, message):
    with pytest.raises(MetricError) as err:
        parse_metric(text)
    assert message in str(err.value)
    assert text in str(err.value) and "\n" not in str(err.value)


def test_evaluate_refuses_sampled_metrics_on_lists():
    import pandas as pd

    from receval import evaluate

    truth = pd.DataFrame({"user": ["a"], "item": ["x"], "rating": [5]})
    recs = pd.DataFrame({"user": ["a"], "item": ["x"], "score": [1.0]})
    with pytest.raises(MetricError, match="recommendation lists do not hold"):
        evaluate(recs, truth, ["ndcg@10", "ndcg@10(sampled=100)"])


# ----------------------------------------------------------------------------- a hand-made example
# Items a, b, c, d; each user has one training and one test item and one negative, so every
# full list (the catalogue without the user's training item) has N = 3 items.
#   u0: train a, test b, negative c; scores b 0.5 < c 0.7   -> sampled rank 2
#   u1: train b, test c, negative a; scores c 0.8 > a 0.3   -> sampled rank 1
#   u2: train c, test d, negative b; scores d 0.4 = b 0.4   -> rank 2 (a tie ranks the negative above)
# With one negative and N = 3, P(r~ | r) = [[1, 0], [1/2, 1/2], [0, 1]] (Krichene & Rendle §3) and
# recall@1 = (1, 0, 0) by full rank. Least squares: minimise (x1 - 1)^2 + (x1/2 + x2/2)^2 + x2^2,
# i.e. x = (5/6, -1/6). Bias-variance with gamma = 1/2 and uniform weights over r minimises
# sum_r (1 - g) E[x]^2 - 2 E[x] M(r) + g E[x^2]: ((1 - g) A'A + g diag(A'1)) x = A'M, that is
# [[11/8, 1/8], [1/8, 11/8]] x = (1, 0), x = (11/15, -1/15).

SCORES = np.array(
    [
        [0.9, 0.5, 0.7, 0.1],
        [0.3, 0.9, 0.8, 0.2],
        [0.2, 0.4, 0.9, 0.4],
        [0.1, 0.1, 0.1, 0.1],
    ]
)


class TableModel:
    """Scores from a fixed table (a model with score only: score_items falls back to its rows)."""

    n_items_ = 4

    def fit(self, train):
        return self

    def score(self, users):
        return SCORES[np.asarray(users)]


def _hand_split(cold: bool = False):
    from receval.data.interactions import Interactions

    users = ["u0", "u1", "u2", "u0", "u1", "u2"] + (["u3"] if cold else [])
    items = ["a", "b", "c", "b", "c", "d"] + (["a"] if cold else [])
    data = Interactions.from_ids(users, items, [1.0] * len(users))
    in_test = np.array([0, 0, 0, 1, 1, 1] + ([1] if cold else []), bool)
    return data.subset(~in_test), data.subset(in_test)


def _hand_candidates(train, cold: bool = False):
    from receval.evaluation.candidates import Candidates

    design = {"sampling": "uniform", "n": 1, "exponent": 0.0, "seed": None, "shape": "per-item",
              "exclude": "train+test"}  # fmt: skip
    users, items, negatives = [0, 1, 2], [1, 2, 3], [[2], [0], [1]]
    if cold:
        users, items, negatives = [*users, 3], [*items, 0], [*negatives, [3]]
    return Candidates(users, items, negatives, design, train.user_ids, train.item_ids)


def test_hand_made_example_sampled_and_corrected_values():
    from receval.evaluation.sampled import evaluate_sampled

    train, test = _hand_split()
    metrics = [
        "recall@1(sampled=1)", "hr@1(sampled=1)", "auc(sampled=1)", "ndcg@2(sampled=1)", "mrr(sampled=1)",
        "precision@1(sampled=1)", "recall@1(sampled=1,correction=ls)", "recall@1(sampled=1,correction=bv,gamma=0.5)",
    ]  # fmt: skip
    res = evaluate_sampled(TableModel(), train, test, metrics, candidates=_hand_candidates(train), fitted=True)
    s = res.summary
    assert s["recall@1(sampled=1)"] == pytest.approx(1 / 3)
    assert s["hr@1(sampled=1)"] == pytest.approx(1 / 3)
    assert s["precision@1(sampled=1)"] == pytest.approx(1 / 3)
    assert s["auc(sampled=1)"] == pytest.approx(1 / 3)  # share of the one negative ranked below: 0, 1, 0
    assert s["ndcg@2(sampled=1)"] == pytest.approx((1 + 2 / np.log2(3)) / 3)
    assert s["mrr(sampled=1)"] == pytest.approx((1 / 2 + 1 + 1 / 2) / 3)
    assert s["recall@1(sampled=1,correction=ls)"] == pytest.approx((-1 / 6 + 5 / 6 - 1 / 6) / 3)
    assert s["recall@1(sampled=1,correction=bv,gamma=0.5)"] == pytest.approx((-1 / 15 + 11 / 15 - 1 / 15) / 3)
    per_user = res.per_user.set_index("user")
    assert per_user["recall@1(sampled=1,correction=ls)"].tolist() == pytest.approx([-1 / 6, 5 / 6, -1 / 6])
    assert per_user["recall@1(sampled=1,correction=bv,gamma=0.5)"].tolist() == pytest.approx(
        [-1 / 15, 11 / 15, -1 / 15]
    )
    design = res.conventions.sampled["recall@1(sampled=1)"]
    assert design["n_items"] == 3 and design["rows"] == 3 and design["n"] == 1 and design["exclude"] == "train+test"
    assert res.conventions.to_dict()["sampled"] == res.conventions.sampled


def test_hand_made_per_user_shape():
    from receval.data.interactions import Interactions
    from receval.evaluation.candidates import Candidates
    from receval.evaluation.sampled import evaluate_sampled

    # u0: train a; test b (0.5) and c (0.7) share the negative d (0.6): ranks 2 and 1 (u1 rated d)
    data = Interactions.from_ids(["u0", "u0", "u0", "u1"], list("abcd"), [1.0] * 4)
    in_test = np.array([0, 1, 1, 0], bool)
    train, test = data.subset(~in_test), data.subset(in_test)

    class Model(TableModel):
        def score(self, users):
            return np.array([[0.9, 0.5, 0.7, 0.6]])[np.zeros(len(users), int)]

    design = {
        "sampling": "uniform",
        "n": 1,
        "exponent": 0.0,
        "seed": None,
        "shape": "per-user",
        "exclude": "train+test",
    }
    cands = Candidates([0], None, [[3]], design, data.user_ids, data.item_ids)
    metrics = ["recall@1(sampled=1,shape=per-user)", "mrr(sampled=1,shape=per-user)"]
    res = evaluate_sampled(Model(), train, test, metrics, candidates=cands, fitted=True)
    assert res.summary == pytest.approx({"recall@1(sampled=1,shape=per-user)": 0.5,
                                         "mrr(sampled=1,shape=per-user)": 0.75})  # fmt: skip
    assert res.conventions.sampled["mrr(sampled=1,shape=per-user)"]["rows"] == 2
    with pytest.raises(MetricError, match="asks for shape=per-item, but the candidates given have shape=per-user"):
        evaluate_sampled(Model(), train, test, "recall@1(sampled=1)", candidates=cands, fitted=True)


@pytest.mark.parametrize(
    ("policy", "cold_value", "users"), [("empty", 0.0, 4), ("fallback", 1.0, 4), ("exclude", None, 3)]
)
def test_cold_users_follow_the_policy(policy, cold_value, users):
    from receval.evaluation.sampled import evaluate_sampled

    # u3 has no training rating; its held-out a (training count 1) against d (count 0)
    train, test = _hand_split(cold=True)
    res = evaluate_sampled(TableModel(), train, test, "recall@1(sampled=1)", candidates=_hand_candidates(train, True),
                           fitted=True, cold_start=policy)  # fmt: skip
    per_user = res.per_user.set_index("user")["recall@1(sampled=1)"]
    assert res.conventions.users_evaluated == users
    assert res.conventions.users_cold == (1 if policy != "exclude" else 0)
    if cold_value is None:
        assert "u3" not in per_user.index
    else:
        assert per_user["u3"] == cold_value
    assert per_user[["u0", "u1", "u2"]].tolist() == [0.0, 1.0, 0.0]


# ----------------------------------------------------------------------------- drawn candidates, a real model


def _split():
    from receval.data.synthetic import generate
    from receval.split import holdout

    return holdout(generate(100, 300, 2000, seed=0), test_fraction=0.2, seed=0)


def test_sampled_values_equal_an_independent_numpy_computation():
    from receval.evaluation.candidates import draw_candidates
    from receval.evaluation.sampled import evaluate_sampled
    from receval.recommenders import make

    train, test = _split()
    model = make("mf", factors=8, seed=0).fit(train)
    res = evaluate_sampled(model, train, test, ["recall@10(sampled=40)", "ndcg@10(sampled=40)", "auc(sampled=40)"],
                           seed=3, fitted=True, threshold=4)  # fmt: skip
    cands = draw_candidates(train, test, 40, seed=3)
    full = model.score(np.arange(train.n_users))
    rating = dict(zip(zip(test.users.tolist(), test.items.tolist(), strict=True), test.ratings.tolist(), strict=True))
    keep = np.array([rating[(u, i)] >= 4 for u, i in zip(cands.users.tolist(), cands.items.tolist(), strict=True)])
    pos = full[cands.users, cands.items][keep]
    neg = np.take_along_axis(full[cands.users], cands.negatives.astype(np.int64), axis=1)[keep]
    ranks = 1 + (neg >= pos[:, None]).sum(axis=1)
    assert res.summary["recall@10(sampled=40)"] == pytest.approx(np.mean(ranks <= 10))
    assert res.summary["ndcg@10(sampled=40)"] == pytest.approx(np.mean((ranks <= 10) / np.log2(ranks + 1)))
    assert res.summary["auc(sampled=40)"] == pytest.approx(np.mean((41 - ranks) / 40))
    assert res.conventions.sampled["auc(sampled=40)"]["rows"] == int(keep.sum())


def test_candidates_are_drawn_once_per_design_and_seed(monkeypatch):
    from receval.evaluation import candidates as module
    from receval.evaluation.sampled import evaluate_sampled
    from receval.recommenders import make

    train, test = _split()
    calls = []
    real = module.draw_candidates

    def counting(*args, **kwargs):
        calls.append((args[2], kwargs["shape"], kwargs["seed"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "draw_candidates", counting)
    metrics = ["ndcg@10(sampled=20)", "recall@10(sampled=20,correction=bv)", "mrr(sampled=20)", "recall@10(sampled=30)",
               "recall@10(sampled=20,shape=per-user)"]  # fmt: skip
    res = evaluate_sampled(make("biases"), train, test, metrics, seed=5)
    assert sorted(calls) == [(20, "per-item", 5), (20, "per-user", 5), (30, "per-item", 5)]
    assert {d["seed"] for d in res.conventions.sampled.values()} == {5}
    # given the same candidates, every metric has the values of the drawn ones
    given = real(train, test, 20, seed=5)
    same = evaluate_sampled(make("biases"), train, test, metrics[:3], candidates=given)
    assert same.summary == {m: res.summary[m] for m in metrics[:3]}
    other = evaluate_sampled(make("biases"), train, test, metrics[:1], seed=6)
    assert other.conventions.sampled[metrics[0]]["seed"] == 6


def test_scores_only_candidates_in_batches(monkeypatch):
    from receval.evaluation import sampled
    from receval.recommenders import make

    train, test = _split()
    inner = make("biases").fit(train)
    shapes: list[tuple[int, int]] = []

    class OnlyCandidates:
        n_items_ = train.n_items

        def score(self, users):
            raise AssertionError("a full score row was built")

        def score_items(self, users, items):
            shapes.append(items.shape)
            return inner.score_items(users, items)

    metrics = ["ndcg@10(sampled=20)", "recall@5(sampled=20,correction=bv)"]
    whole = sampled.evaluate_sampled(OnlyCandidates(), train, test, metrics, fitted=True)
    assert len(shapes) == 1 and shapes[0][1] == 21
    monkeypatch.setattr(sampled, "BATCH_CELLS", 21 * 7)  # 7 rows a batch
    shapes.clear()
    batched = sampled.evaluate_sampled(OnlyCandidates(), train, test, metrics, fitted=True)
    assert max(s[0] for s in shapes) == 7 and sum(s[0] for s in shapes) == whole.conventions.sampled[metrics[0]]["rows"]
    assert batched.summary == whole.summary


def test_evaluate_model_routes_sampled_metrics():
    from receval.evaluation import evaluate_model
    from receval.evaluation.sampled import evaluate_sampled
    from receval.recommenders import make

    train, test = _split()
    mixed = evaluate_model(make("biases"), train, test, ["ndcg@10", "ndcg@10(sampled=50,correction=bv)", "rmse"],
                           seed=2, threshold=4)  # fmt: skip
    full = evaluate_model(make("biases"), train, test, ["ndcg@10", "rmse"], seed=2, threshold=4)
    alone = evaluate_sampled(make("biases"), train, test, ["ndcg@10(sampled=50,correction=bv)"], seed=2, threshold=4)
    assert list(mixed.summary) == ["ndcg@10", "ndcg@10(sampled=50,correction=bv)", "rmse"]
    assert mixed.summary["ndcg@10"] == full.summary["ndcg@10"] and mixed.summary["rmse"] == full.summary["rmse"]
    assert mixed.summary["ndcg@10(sampled=50,correction=bv)"] == alone.summary["ndcg@10(sampled=50,correction=bv)"]
    assert list(mixed.per_user.columns) == ["user", "ndcg@10", "ndcg@10(sampled=50,correction=bv)", "rmse"]
    assert mixed.conventions.sampled == alone.conventions.sampled
    assert mixed.conventions.metrics["ndcg@10(sampled=50,correction=bv)"]["correction"] == "bv"
    only = evaluate_model(make("biases"), train, test, "recall@10(sampled=50)", seed=2)
    assert only.rankings is None and list(only.summary) == ["recall@10(sampled=50)"]


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("ndcg@10(sampled=50,sampling=popularity,correction=bv)", "correction=bv assumes uniformly sampled negatives"),
        ("ndcg@10(sampled=50,correction=mapping)", "correction=mapping does not estimate ndcg"),
        ("ndcg@10(sampled=295)", "295"),
    ],
)
def test_bad_designs_fail_before_the_model_is_fitted(metric, message):
    from receval.errors import ReceValError
    from receval.evaluation import evaluate_model

    train, test = _split()

    class Unfittable(TableModel):
        def fit(self, train):
            raise AssertionError("fitted before the metrics were checked")

    with pytest.raises(ReceValError) as err:
        evaluate_model(Unfittable(), train, test, ["ndcg@10", metric])
    assert message in str(err.value) and "\n" not in str(err.value)


def test_evaluate_command_refuses_a_sampled_metric(tmp_path, capsys):
    from receval.cli import main

    (tmp_path / "truth.csv").write_text("user,item,rating\nu,a,5\n")
    (tmp_path / "recs.csv").write_text("user,item,score\nu,a,1\n")
    code = main(["evaluate", "--recs", str(tmp_path / "recs.csv"), "--truth", str(tmp_path / "truth.csv"),
                 "--metrics", "ndcg@10,ndcg@10(sampled=100)"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "sampled negatives" in err and "Traceback" not in err


def test_ml100k_sampled_hit_is_never_below_the_full_hit(ml100k_dir):
    """A sampled list holds a subset of the full list's competitors: each held-out item's sampled rank is at most its
    full rank, so its sampled HR@10 is at least its full one (PureSVD scores, no ties), and the corrections bring
    the estimate back towards the full value (Krichene & Rendle: the sampled HR@10 with 100 negatives is far above)."""
    from receval.data.loaders import load
    from receval.evaluation import evaluate_model
    from receval.recommenders import make
    from receval.split import leave_one_out

    train, test = leave_one_out(load(ml100k_dir, format="movielens-100k"), seed=0)
    res = evaluate_model(make("mf", factors=20), train, test, ["recall@10", "recall@10(sampled=100)",
                         "recall@10(sampled=100,correction=bv)"], seed=0)  # fmt: skip
    per_user = res.per_user.dropna()
    assert len(per_user) == train.n_users
    assert (per_user["recall@10(sampled=100)"] >= per_user["recall@10"]).all()
    full, sampled, bv = (
        res.summary[m] for m in ["recall@10", "recall@10(sampled=100)", "recall@10(sampled=100,correction=bv)"]
    )
    assert sampled > 2 * full
    assert abs(bv - full) < abs(sampled - full)
