"""The sequential baselines ``markov`` and ``sknn``: hand-computed toy sequences and a plain-Python SKNN/V-SKNN.

The reference below is a direct transcription of Ludewig & Jannach, "Evaluation of session-based recommendation
algorithms", UMUAI 28(4-5), 2018, §3.3 (SKNN: cosine of binary sessions over the ``sample_size`` most recent
sessions sharing an item, ``score(i) = Σ_{n ∈ N_s} sim(s, n) 1_n(i)``; V-SKNN: the current session's events
weighted by a linear decay, the last 1, and a dot product with the binary past session), written with dicts and
loops, one user at a time, independent of receval's sparse implementation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.evaluation import evaluate_model
from receval.recommenders import make
from receval.recommenders.sequential import MarkovChain, SessionKNN


def _data(rows: list[tuple[str, str, int]]) -> Interactions:
    users, items, times = zip(*rows, strict=True)
    return Interactions.from_ids(list(users), list(items), [1.0] * len(rows), timestamps=list(times))


# rows deliberately out of time order: the models must sort by timestamp
TOY = _data(
    [
        ("u1", "c", 3),
        ("u1", "a", 1),
        ("u1", "b", 2),
        ("u1", "a", 4),
        ("u2", "a", 1),
        ("u2", "b", 2),
        ("u2", "d", 3),
        ("u3", "b", 5),
        ("u3", "c", 6),
    ]
)


def _col(data: Interactions, item: str) -> int:
    return int(data.item_index([item])[0])


def test_markov_counts_consecutive_pairs_in_time_order_by_hand():
    # u1: a b c a -> (a,b) (b,c) (c,a); u2: a b d -> (a,b) (b,d); u3: b c -> (b,c)
    # from a: b 2/2; from b: c 2/3, d 1/3; from c: a 1/1; d never followed
    model = make("markov").fit(TOY)
    a, b, c, d = (_col(TOY, x) for x in "abcd")
    counts = model.transitions_.toarray()
    assert counts[a, b] == 2 and counts[b, c] == 2 and counts[b, d] == 1 and counts[c, a] == 1
    assert counts.sum() == 6
    u1, u2, u3 = TOY.user_index(["u1", "u2", "u3"])
    scores = model.score([u1, u2, u3])
    assert scores[0, b] == 1.0 and scores[0].sum() == 1.0  # u1 ends on a
    assert scores[1].tolist() == [0.0] * 4  # u2 ends on d: never followed, no smoothing
    assert scores[2, a] == 1.0  # u3 ends on c


def test_markov_smoothing_is_additive_by_hand():
    model = MarkovChain(smoothing=0.5).fit(TOY)
    b, c, d = (_col(TOY, x) for x in "bcd")
    u3 = TOY.user_index(["u3"])[0]
    # u3's last item c: c->a once; (1 + .5) / (1 + 4 * .5) = 0.5, others .5 / 3
    np.testing.assert_allclose(model.score([u3])[0], [0.5 if i == _col(TOY, "a") else 0.5 / 3 for i in range(4)])
    u2 = TOY.user_index(["u2"])[0]  # d: no transition, uniform 1/4
    np.testing.assert_allclose(model.score([u2])[0], [0.25] * 4)
    assert b != c != d


def _reference_sknn(
    data: Interactions, user: int, k: int, sample_size: int, session_length: int | None, weighting: str
) -> np.ndarray:
    """Ludewig & Jannach's SKNN / V-SKNN for one user, with dicts and loops."""
    history: dict[int, list[tuple[int, int, int]]] = {}
    for row in range(data.n_ratings):
        u, i, t = int(data.users[row]), int(data.items[row]), int(data.timestamps[row])
        history.setdefault(u, []).append((t, row, i))
    for events in history.values():
        events.sort()
    events = [i for _, _, i in history.get(user, [])]
    if session_length is not None:
        events = events[-session_length:]
    positions: dict[int, int] = {}
    for p, item in enumerate(events, start=1):
        positions[item] = p  # the last occurrence wins
    weights = {i: p / len(events) if weighting == "linear" else 1.0 for i, p in positions.items()}
    past = {u: {i for _, _, i in ev} for u, ev in history.items() if u != user}
    last_time = {u: history[u][-1][0] for u in past}
    sharing = [u for u in past if past[u] & set(weights)]
    sharing.sort(key=lambda u: (-last_time[u], u))
    if sample_size:
        sharing = sharing[:sample_size]
    sims = {}
    for u in sharing:
        if weighting == "linear":
            # Σ p/L as (Σ p)/L: the same number exactly, so equal similarities tie as in receval
            sims[u] = sum(p for i, p in positions.items() if i in past[u]) / len(events)
        else:
            sims[u] = len(past[u] & set(weights)) / math.sqrt(len(weights) * len(past[u]))
    neighbours = sorted(sims, key=lambda u: (-sims[u], u))[:k]
    scores = np.zeros(data.n_items)
    for u in neighbours:
        for i in past[u]:
            scores[i] += sims[u]
    return scores


def _random_log(seed: int, n_users: int = 30, n_items: int = 25, n_rows: int = 300) -> Interactions:
    rng = np.random.default_rng(seed)
    users = rng.integers(0, n_users, n_rows)
    items = rng.integers(0, n_items, n_rows)  # repeats within a user included
    times = rng.integers(0, 40, n_rows)  # ties in time included
    return Interactions.from_ids(users, items, np.ones(n_rows), timestamps=times)


@pytest.mark.parametrize("weighting", ["same", "linear"])
@pytest.mark.parametrize(
    ("k", "sample_size", "session_length"), [(1, 0, None), (3, 5, None), (5, 8, 3), (50, 0, 1), (4, 2, 6)]
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sknn_equals_the_papers_formulas_written_as_loops(weighting, k, sample_size, session_length, seed):
    data = _random_log(seed)
    model = SessionKNN(k=k, sample_size=sample_size, session_length=session_length, weighting=weighting).fit(data)
    users = np.arange(data.n_users)
    got = model.score(users)
    expected = np.stack([_reference_sknn(data, u, k, sample_size, session_length, weighting) for u in users])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_sknn_by_hand_on_the_toy():
    # u3's session {b, c}; past sessions u1 {a, b, c} (last t=4), u2 {a, b, d} (last t=3)
    # cosine: u1 2/sqrt(2*3), u2 1/sqrt(2*3); k=1 keeps u1: a, b, c score 2/sqrt(6)
    u3 = TOY.user_index(["u3"])[0]
    scores = SessionKNN(k=1).fit(TOY).score([u3])[0]
    a, b, c, d = (_col(TOY, x) for x in "abcd")
    assert scores[a] == scores[b] == scores[c] == pytest.approx(2 / math.sqrt(6)) and scores[d] == 0
    # sample_size=1: only the most recent sharing session (u1, t=4) is compared
    assert SessionKNN(k=2, sample_size=1).fit(TOY).score([u3])[0][d] == 0
    both = SessionKNN(k=2, sample_size=0).fit(TOY).score([u3])[0]
    assert both[b] == pytest.approx(3 / math.sqrt(6)) and both[d] == pytest.approx(1 / math.sqrt(6))
    # V-SKNN, session of the last event only (c, weight 1): u1 shares c (1.0), u2 none
    linear = SessionKNN(k=5, session_length=1, weighting="linear").fit(TOY).score([u3])[0]
    assert linear.tolist() == [1.0 if i in (a, b, c) else 0.0 for i in range(4)]
    # V-SKNN over u3's two events b (1/2), c (1): u1 shares both (1.5), u2 shares b (0.5)
    linear = SessionKNN(k=5, weighting="linear").fit(TOY).score([u3])[0]
    assert linear[b] == pytest.approx(2.0) and linear[d] == pytest.approx(0.5) and linear[c] == pytest.approx(1.5)


def test_no_timestamps_is_one_line_error():
    data = Interactions.from_ids(["a", "b"], ["x", "y"], [1.0, 1.0], name="flat")
    for name in ("markov", "sknn"):
        with pytest.raises(DataError, match=rf"^{name} orders each user's history by time, but data set 'flat' has"):
            make(name).fit(data)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"k": "0"}, "k must be an integer >= 1"),
        ({"sample_size": "-1"}, "sample_size must be an integer >= 0"),
        ({"session_length": "0"}, "session_length must be an integer >= 1"),
        ({"weighting": "div"}, "weighting"),
    ],
)
def test_bad_sknn_parameters_are_refused_before_the_data(params, match):
    with pytest.raises(ConfigError, match=match):
        make("sknn", **params)


def test_bad_markov_smoothing_is_refused():
    with pytest.raises(ConfigError, match="smoothing must be a finite number >= 0"):
        make("markov", smoothing="-1")


def test_both_run_through_the_ordinary_protocol():
    data = _random_log(5, n_users=40, n_items=30, n_rows=600).deduplicate("last")
    rng = np.random.default_rng(0)
    test_rows = rng.random(data.n_ratings) < 0.2
    train, test = data.subset(np.flatnonzero(~test_rows)), data.subset(np.flatnonzero(test_rows))
    for name in ("markov", "sknn"):
        result = evaluate_model(make(name), train, test, ["ndcg@5"], k=5, threshold=0)
        assert 0 <= result.summary["ndcg@5"] <= 1
