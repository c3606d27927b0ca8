"""Popularity-bias metrics: hand-computed examples, the libraries' own formulas as plain loops, bad input.

References read (their formulas re-written below as loops over dicts and sets, not receval's arrays):
- Elliot, sisinflab/elliot at 012692632dc192de893429994264422c22a39213: evaluation/metrics/bias/arp/arp.py,
  aplt/aplt.py, aclt/aclt.py, pop_reo/pop_reo.py, and its Popularity class (get_short_head: items by decreasing
  number of training users, appended until 80% of the training transactions are used up, the crossing item in);
  pop_rsp/pop_rsp.py at c085d430258f4e18bca38133c5f979835032f4ec (and 0e002db8e570bc377562720f2e06ba9103fd4ecb).
- RecBole, RUCAIBox/RecBole at f289a009293b4f050a26819f52a8000966bdad47: recbole/evaluator/metrics.py
  AveragePopularity (mean training count, cumsum / arange(1..k)) and TailPercentage (tail_ratio <= 1: the
  max(int(n * ratio), 1) training items of lowest (count, id)).
- RecTools, MobileTeleSystems/RecTools at 408dc1ae0a5f63807d3e8eed6285ccc34a1e3758: rectools/metrics/popularity.py
  AvgRecPopularity (value_counts(normalize=...) of the previous interactions, the mean over each user's top k).
- ClayRS, swapUniba/ClayRS at 25786bb9cf4118736463c38a8f5e63901be47859: clayrs/evaluation/metrics/fairness_metrics.py
  DeltaGap (see the test at the end).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.cli import main
from receval.errors import MetricError
from receval.metrics import MetricInput, parse_metric
from receval.metrics.popularity import long_tail, popularity_lift_curve, user_groups_by_profile

N_USERS, N_ITEMS, WIDTH = 30, 25, 8


def _world(seed: int) -> tuple[MetricInput, dict[int, list[int]], dict[int, set[int]], dict[int, set[int]]]:
    """Random train/test/lists (lists avoid training items); and the same as Python dicts and sets."""
    rng = np.random.default_rng(seed)
    train = (rng.random((N_USERS, N_ITEMS)) < rng.random(N_ITEMS) * 0.6).astype(float)
    test = np.where((train == 0) & (rng.random((N_USERS, N_ITEMS)) < 0.2), rng.integers(1, 6, (N_USERS, N_ITEMS)), 0)
    rankings = np.full((N_USERS, WIDTH), -1)
    lists, seen, liked = {}, {}, {}
    for u in range(N_USERS):
        unseen = np.flatnonzero(train[u] == 0)
        n = int(rng.integers(1, min(WIDTH, unseen.size) + 1))
        rankings[u, :n] = rng.permutation(unseen)[:n]
        lists[u] = [int(i) for i in rankings[u, :n]]
        seen[u] = set(np.flatnonzero(train[u]).tolist())
        liked[u] = set(np.flatnonzero(test[u] >= 4).tolist())
    data = MetricInput(rankings, sp.csr_matrix(test.astype(float)), train=sp.csr_matrix(train), threshold=4)
    return data, lists, seen, liked


def _value(metric: str, data: MetricInput) -> float:
    return parse_metric(metric).compute(data)


# ------------------------------------------------------------------------------- Elliot, as loops
def _elliot_pop(seen: dict[int, set[int]]) -> tuple[dict[int, int], set[int], set[int]]:
    pop = {i: sum(i in s for s in seen.values()) for i in range(N_ITEMS)}
    ordered = dict(sorted(pop.items(), key=lambda kv: kv[1], reverse=True))  # Python's sort is stable
    limit = sum(len(s) for s in seen.values()) * 0.8
    head = []
    for i, p in ordered.items():
        head.append(i)
        limit -= p
        if limit <= 0:
            break
    return pop, set(head), {i for i in ordered if i not in set(head)}


@pytest.mark.parametrize("seed", range(5))
def test_equal_to_elliot_loops(seed: int) -> None:
    data, lists, seen, liked = _world(seed)
    k = 5
    pop, head, tail = _elliot_pop(seen)
    arp = np.mean([sum(pop[i] for i in lists[u][:k]) / len(lists[u][:k]) for u in lists])
    aplt = np.mean([len(set(lists[u][:k]) & tail) / len(lists[u][:k]) for u in lists])
    aclt = np.mean([len(set(lists[u][:k]) & tail) for u in lists])
    num_reo, den_reo, num_rsp, den_rsp = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)
    for u in lists:
        top = set(lists[u][:k])
        if liked[u]:  # PopREO: users with a relevant test item
            hits = top & liked[u]
            num_reo += [len(hits & head), len(hits & tail)]
            den_reo += [len((head & liked[u]) - seen[u]), len((tail & liked[u]) - seen[u])]
        num_rsp += [len(top & head), len(top & tail)]
        den_rsp += [len(head - seen[u]), len(tail - seen[u])]
    reo, rsp = num_reo / den_reo, num_rsp / den_rsp
    assert _value(f"arp@{k}(convention=elliot)", data) == pytest.approx(arp, abs=1e-9)
    assert _value(f"aplt@{k}(convention=elliot)", data) == pytest.approx(aplt, abs=1e-9)
    assert _value(f"aclt@{k}(convention=elliot)", data) == pytest.approx(aclt, abs=1e-9)
    assert _value(f"pop_reo@{k}(convention=elliot)", data) == pytest.approx(np.std(reo) / np.mean(reo), abs=1e-9)
    assert _value(f"pop_rsp@{k}(convention=elliot)", data) == pytest.approx(np.std(rsp) / np.mean(rsp), abs=1e-9)


# ------------------------------------------------------------------------------- RecBole, RecTools
@pytest.mark.parametrize("seed", range(5))
def test_equal_to_recbole_and_rectools_loops(seed: int) -> None:
    data, _, seen, _ = _world(seed)
    # full lists of the same length, as RecBole's rec.items matrix holds
    rng = np.random.default_rng(seed)
    rankings = np.array([rng.permutation(N_ITEMS)[:WIDTH] for _ in range(N_USERS)])
    data = MetricInput(rankings, data.truth, train=data.train, threshold=4)
    k = 6
    count = Counter(i for s in seen.values() for i in s)  # RecBole's count_items: training items only
    ranked = sorted(count.items(), key=lambda kv: (kv[1], kv[0]))
    tail_items = {i for i, _ in ranked[: max(int(len(ranked) * 0.1), 1)]}
    average_popularity = np.mean([np.cumsum([count.get(i, 0) for i in row])[k - 1] / k for row in rankings])
    tail_percentage = np.mean([np.cumsum([i in tail_items for i in row])[k - 1] / k for row in rankings])
    assert _value(f"arp@{k}(convention=recbole)", data) == pytest.approx(average_popularity, abs=1e-9)
    assert _value(f"aplt@{k}(convention=recbole)", data) == pytest.approx(tail_percentage, abs=1e-9)
    total = sum(count.values())
    for normalize in (False, True):
        popularity = {i: c / total if normalize else c for i, c in count.items()}
        per_user = [np.mean([popularity.get(i, 0) for i in row[:k]]) for row in rankings]
        metric = f"arp@{k}(convention=rectools,normalize={str(normalize).lower()})"
        assert _value(metric, data) == pytest.approx(np.mean(per_user), abs=1e-9)


# ------------------------------------------------------------------------------- hand-computed
def _small() -> MetricInput:
    # items 0..4: training users 3, 2, 1, 0, 0 (6 interactions); head (80%: 4.8) = {0, 1} (3 + 2 >= 4.8)
    train = sp.csr_matrix(np.array([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0.0]]))
    truth = sp.csr_matrix(np.array([[0, 0, 0, 5, 0], [0, 0, 5, 0, 4], [0, 5, 0, 0, 0.0]]))
    return MetricInput(np.array([[3, 4], [2, 3], [1, -1]]), truth, train=train, threshold=4)


def test_hand_computed_popularity_metrics() -> None:
    data = _small()
    assert long_tail(data.item_popularity).tolist() == [False, False, True, True, True]
    assert parse_metric("arp@2").per_user(data).tolist() == [0.0, 0.5, 2.0]
    assert parse_metric("arp@2(normalize=true)").per_user(data).tolist() == [0.0, 0.5 / 6, 2 / 6]
    assert parse_metric("aplt@2").per_user(data).tolist() == [1.0, 1.0, 0.0]
    assert parse_metric("aclt@2").per_user(data).tolist() == [2.0, 2.0, 0.0]
    # test popularity (ClayRS): items 1, 2, 3, 4 rated once in the truth
    assert parse_metric("arp@2(popularity=test)").per_user(data).tolist() == [1.0, 1.0, 1.0]
    # tail by items: the 40% least popular of 5 = items 3, 4 (ties by index)
    assert parse_metric("aplt@2(tail=0.4,tail_by=items)").per_user(data).tolist() == [1.0, 0.5, 0.0]
    # PopRSP: recommended head 1 (item 1), tail 4; unseen head 0 + 0 + 1 = 1, tail 2 + 3 + 3 = 8 -> 1 and 1/2
    p = np.array([1.0, 0.5])
    assert _value("pop_rsp@2", data) == pytest.approx(p.std() / p.mean())
    # PopREO: relevant unseen head: item 1 (user 2); tail: 3 (u0), 2 and 4 (u1); recommended relevant: 1; 3 and 2
    p = np.array([1.0, 2 / 3])
    assert _value("pop_reo@2", data) == pytest.approx(p.std() / p.mean())


def test_hand_computed_delta_gap_and_groups() -> None:
    data = _small()
    # popularity as a share of the 3 training users: [1, 2/3, 1/3, 0, 0]
    # profiles: u0 (1 + 2/3 + 1/3)/3 = 2/3, u1 5/6, u2 1; lists: u0 0, u1 1/6, u2 2/3
    gap_p, gap_r = (2 / 3 + 5 / 6 + 1) / 3, (0 + 1 / 6 + 2 / 3) / 3
    assert _value("delta_gap@2", data) == pytest.approx((gap_r - gap_p) / gap_p)
    # head share of the profile: u0 2/3, u1 1, u2 1 -> niche u0, blockbuster u2 (stable order), diverse u1
    assert user_groups_by_profile(data, 1 / 3).tolist() == ["niche", "diverse", "blockbuster"]
    assert _value("delta_gap@2(group=niche,user_share=0.3)", data) == pytest.approx(-1.0)
    assert _value("delta_gap@2(group=blockbuster,user_share=0.3)", data) == pytest.approx(-1 / 3)
    profile, lift = popularity_lift_curve(data, 2, n_bins=3)
    assert profile.tolist() == pytest.approx([2 / 3, 5 / 6, 1.0])
    assert lift.tolist() == pytest.approx([-1.0, (1 / 6 - 5 / 6) / (5 / 6), -1 / 3])
    # per given user group: each group's point is delta_gap of that group (here the profile groups, sorted by name)
    _, by_group = popularity_lift_curve(data, 2, groups=user_groups_by_profile(data, 1 / 3))
    names = ("blockbuster", "diverse", "niche")
    assert by_group.tolist() == pytest.approx([_value(f"delta_gap@2(group={g},user_share=0.3)", data) for g in names])
    _, pooled = popularity_lift_curve(data, 2, groups=np.array(["a", "a", "b"]))
    assert pooled.tolist() == pytest.approx([((1 / 6) / 2 - (2 / 3 + 5 / 6) / 2) / ((2 / 3 + 5 / 6) / 2), -1 / 3])
    with pytest.raises(MetricError, match="one label per user row"):
        popularity_lift_curve(data, 2, groups=np.array(["a", "b"]))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.05, 0.95))
def test_aplt_is_aclt_over_the_list_length_and_tail_grows_with_the_cut(seed: int, tail: float) -> None:
    data, *_ = _world(seed)
    aplt = parse_metric(f"aplt@5(tail={tail})").per_user(data)
    aclt = parse_metric(f"aclt@5(tail={tail})").per_user(data)
    np.testing.assert_allclose(aplt * np.minimum(data.list_length, 5), aclt, atol=1e-12)
    smaller = long_tail(data.item_popularity, tail / 2)
    assert np.all(~smaller | long_tail(data.item_popularity, tail))


# ------------------------------------------------------------------------------- bad input, the CLI
@pytest.mark.parametrize(
    "text", ["aplt@10(tail=1.5)", "aclt@10(tail=0)", "pop_reo@10(tail=1)", "delta_gap@10(tail=-1)"]
)
def test_a_tail_outside_the_open_unit_interval_is_refused_when_read(text: str) -> None:
    with pytest.raises(MetricError, match=r"tail must be in \(0, 1\)"):
        parse_metric(text)


def _files(tmp_path: Path) -> dict[str, Path]:
    train = "\n".join(f"u{u},i{i},5" for u in range(6) for i in range(u + 1)) + "\n"
    truth = "\n".join(f"u{u},i{(u + 3) % 8},5" for u in range(6)) + "\n"
    recs = "\n".join(f"u{u},i{i},{1 / (r + 1)}" for u in range(6) for r, i in enumerate(range(7, 2, -1))) + "\n"
    out = {}
    for name, text in (("train", train), ("truth", truth), ("recs", recs)):
        out[name] = tmp_path / f"{name}.csv"
        out[name].write_text(text, encoding="utf-8")
    return out


def test_cli_evaluates_the_popularity_metrics_with_train(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _files(tmp_path)
    metrics = "arp@3,arp@3(normalize=true),aplt@3,aclt@3,pop_reo@3,pop_rsp@3,delta_gap@3"
    status = main(["evaluate", "--truth", str(f["truth"]), "--recs", str(f["recs"]), "--train", str(f["train"]),
                   "--metrics", metrics, "--json"])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 0, captured.err
    out = json.loads(captured.out)
    # every top 3 is i7, i6, i5: no training user, none, u5 (of 21 training ratings); all in the long tail
    assert out["arp@3"] == pytest.approx(1 / 3) and out["arp@3(normalize=true)"] == pytest.approx(1 / 63)
    assert out["aplt@3"] == 1.0 and out["aclt@3"] == 3.0
    status = main(["evaluate", "--truth", str(f["truth"]), "--recs", str(f["recs"]), "--metrics", "arp@3"])
    captured = capsys.readouterr()
    assert status == 2 and "train" in captured.err and len(captured.err.strip().splitlines()) == 1
    status = main(["evaluate", "--truth", str(f["truth"]), "--recs", str(f["recs"]), "--train", str(f["train"]),
                   "--metrics", "aplt@3(tail=2)"])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 2 and "tail must be in (0, 1)" in captured.err and "Traceback" not in captured.err


# ------------------------------------------------------------------------------- ClayRS, as a loop
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("source", ["train", "test"])
def test_delta_gap_of_all_users_equals_clayrs_loop(seed: int, source: str) -> None:
    """ClayRS DeltaGap (swapUniba/ClayRS at 25786bb9cf4118736463c38a8f5e63901be47859,
    clayrs/evaluation/metrics/fairness_metrics.py): item popularity = times rated in ``original_ratings`` / its
    users; GAP = Σ over the group's users with recommendations of their mean item popularity / |group|;
    ΔGAP = (GAP_recs − GAP_profile) / GAP_profile. One group holding every user; ``original_ratings`` is the
    training data (popularity=train) or the held-out ratings (popularity=test)."""
    data, lists, seen, _ = _world(seed)
    truth = data.truth.toarray()
    original = seen if source == "train" else {u: set(np.flatnonzero(truth[u]).tolist()) for u in range(N_USERS)}
    raters = [u for u in original if original[u]]
    pop = {i: sum(i in original[u] for u in raters) / len(raters) for i in range(N_ITEMS)}
    group = {u for u in lists if lists[u] and seen[u]}

    def gap(items_of: dict[int, list[int]]) -> float:
        return sum(sum(pop[i] for i in items_of[u]) / len(items_of[u]) for u in group) / len(group)

    k = 5
    recs_gap = gap({u: lists[u][:k] for u in group})
    profile_gap = gap({u: sorted(seen[u]) for u in group})
    want = (recs_gap - profile_gap) / profile_gap
    assert _value(f"delta_gap@{k}(popularity={source})", data) == pytest.approx(want, abs=1e-9)
