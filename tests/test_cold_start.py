"""Cold-start users (test users without a training rating): one policy, the same numbers on every surface.

The hand-made data set: training ratings a:x5,y4  b:x5,z3  c:x1 (x has 3 training ratings,
y and z one each: the fallback list is x, y, ties by id); test ratings a:z5  b:y5  d:x5
e:y5, so d and e are cold. Popularity (positive training ratings, λ = 4: x 2, y 1, z 0)
recommends a:[z] and b:[y] (their training items excluded), one hit each. With λ = 4:

- empty: d and e score 0: precision@1 = (1 + 1 + 0 + 0) / 4 = 0.5, recall@2 = 0.5;
- exclude: a and b only: precision@1 = recall@2 = 1;
- fallback: d gets [x, y] (hit at 1), e gets [x, y] (hit at 2): precision@1 = 3/4,
  recall@2 = 4/4.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval import evaluate
from receval.cli import main
from receval.cold_start import fallback_items
from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.evaluation import evaluate_model
from receval.recommenders import make, recommend
from receval.split import split_by_name
from receval.vocabulary import COLD_START_DEFAULT, COLD_START_POLICIES

TRAIN = "user,item,rating,timestamp\na,x,5,1\na,y,4,2\nb,x,5,3\nb,z,3,4\nc,x,1,5\n"
TEST = "user,item,rating,timestamp\na,z,5,6\nb,y,5,7\nd,x,5,8\ne,y,5,9\n"
METRICS = "precision@1,recall@2"
# policy -> (precision@1, recall@2, users evaluated, cold users, cold users without a list in the given lists)
EXPECTED = {
    "empty": (0.5, 0.5, 4),
    "exclude": (1.0, 1.0, 2),
    "fallback": (0.75, 1.0, 4),
}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "train.csv").write_text(TRAIN)
    (tmp_path / "test.csv").write_text(TEST)
    (tmp_path / "all.csv").write_text(TRAIN + TEST.split("\n", 1)[1])
    return tmp_path


def _frame(text: str) -> pd.DataFrame:
    rows = [line.split(",") for line in text.strip().splitlines()[1:]]
    return pd.DataFrame({"user": [r[0] for r in rows], "item": [r[1] for r in rows],
                         "rating": [int(r[2]) for r in rows]})  # fmt: skip


POPULARITY_LISTS = pd.DataFrame({"user": ["a", "b"], "item": ["z", "y"], "score": [0.0, 1.0]})


def test_the_vocabulary_has_the_three_policies_and_empty_is_the_default() -> None:
    assert list(COLD_START_POLICIES) == ["empty", "exclude", "fallback"] and COLD_START_DEFAULT == "empty"


def test_fallback_items_are_the_most_rated_ties_by_id_as_text_and_never_unrated() -> None:
    counts = np.array([2, 5, 2, 0, 2])
    ids = np.array([10, 3, 9, 1, 100])
    # 3 (5 ratings), then the ties 10, 100, 9 in text order; item 1 has no training rating
    assert fallback_items(counts, ids, 10).tolist() == [1, 0, 4, 2]
    assert fallback_items(counts, ids, 2).tolist() == [1, 0]


@pytest.mark.parametrize("policy", list(EXPECTED))
def test_evaluate_applies_each_policy_with_the_hand_computed_values(policy: str) -> None:
    res = evaluate(POPULARITY_LISTS, _frame(TEST), METRICS, train=_frame(TRAIN), threshold=4, cold_start=policy)
    precision, recall, evaluated = EXPECTED[policy]
    assert res.summary == pytest.approx({"precision@1": precision, "recall@2": recall})
    c = res.conventions
    assert (c.cold_start, c.users_evaluated, c.users_cold, c.users_cold_without_list) == (policy, evaluated, 2, 2)
    assert sorted(res.per_user["user"]) == (["a", "b"] if policy == "exclude" else ["a", "b", "d", "e"])
    assert c.users_without_list == (2 if policy == "empty" else 0)
    if policy == "fallback":
        assert res.per_user.set_index("user").loc[["d", "e"], "recall@2"].tolist() == [1.0, 1.0]


def test_without_training_data_cold_users_are_not_counted_and_only_empty_is_accepted() -> None:
    res = evaluate(POPULARITY_LISTS, _frame(TEST), METRICS, threshold=4)
    assert (res.conventions.users_cold, res.conventions.users_cold_without_list) == (None, None)
    assert res.conventions.users_without_list == 2 and res.summary["precision@1"] == 0.5
    for policy in ("exclude", "fallback"):
        with pytest.raises(ConfigError, match=f"cold_start='{policy}' needs the training data"):
            evaluate(POPULARITY_LISTS, _frame(TEST), METRICS, threshold=4, cold_start=policy)


def test_a_cold_user_with_a_list_keeps_it_under_empty_and_fallback_and_is_left_out_under_exclude() -> None:
    lists = pd.concat([POPULARITY_LISTS, pd.DataFrame({"user": ["d"], "item": ["x"], "score": [1.0]})])
    values = {p: evaluate(lists, _frame(TEST), "precision@1", train=_frame(TRAIN), threshold=4, cold_start=p)
              for p in EXPECTED}  # fmt: skip
    # d's own list hits; e has none: empty 0, fallback [x, y] misses at 1
    assert values["empty"].summary["precision@1"] == pytest.approx(3 / 4)
    assert values["fallback"].summary["precision@1"] == pytest.approx(3 / 4)
    assert values["exclude"].summary["precision@1"] == 1.0
    assert [values[p].conventions.users_cold_without_list for p in EXPECTED] == [1, 1, 1]


def _split(files: Path) -> tuple[Interactions, Interactions]:
    frame = pd.read_csv(files / "all.csv", dtype={"user": str, "item": str})
    data = Interactions.from_frame(frame, timestamp="timestamp")
    train, test = split_by_name(data, "temporal", seed=0, test_fraction=4 / 9)[0]
    assert sorted(zip(train.user_ids[train.users], train.item_ids[train.items], strict=True)) == [
        ("a", "x"), ("a", "y"), ("b", "x"), ("b", "z"), ("c", "x")]  # fmt: skip
    return train, test


@pytest.mark.parametrize("policy", list(EXPECTED))
def test_evaluate_model_and_recommend_apply_each_policy(files: Path, policy: str) -> None:
    train, test = _split(files)
    res = evaluate_model(make("popularity", threshold=4), train, test, METRICS, k=2, threshold=4, cold_start=policy)
    precision, recall, evaluated = EXPECTED[policy]
    assert res.summary == pytest.approx({"precision@1": precision, "recall@2": recall})
    c = res.conventions
    assert (c.cold_start, c.users_evaluated, c.users_cold, c.users_cold_without_list) == (policy, evaluated, 2, 2)
    assert res.rankings is not None and len(res.rankings) == len(res.per_user)
    model = make("popularity", threshold=4).fit(train)
    d = test.user_index(["d"])
    items, _ = recommend(model, d, 2, exclude=train, cold_start=policy)
    expected = ["x", "y"] if policy == "fallback" else []
    assert [train.item_ids[i] for i in items[0] if i >= 0] == expected
    listed, _ = recommend(model, d, 2, exclude=train)  # no policy: the model ranks for the cold user too
    assert (listed[0] >= 0).all()


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("policy", list(EXPECTED))
def test_recommend_then_evaluate_on_the_command_line(files: Path, capsys: pytest.CaptureFixture[str],
                                                     policy: str) -> None:  # fmt: skip
    recs = files / f"recs_{policy}.csv"
    assert main(["recommend", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"), "-a",
                 "popularity", "-p", "threshold=4", "--k", "2", "--out", str(recs),
                 "--cold-start", policy]) == 0  # fmt: skip
    said = capsys.readouterr().out
    assert "2 test users are not in the training file (cold)" in said
    written = pd.read_csv(recs, dtype=str)
    assert sorted(set(written["user"])) == (["a", "b", "d", "e"] if policy == "fallback" else ["a", "b"])
    if policy == "fallback":
        assert written[written["user"] == "d"]["item"].tolist() == ["x", "y"]
    argv = ["evaluate", "--truth", str(files / "test.csv"), "--recs", str(recs), "--train", str(files / "train.csv"),
            "--metrics", METRICS, "--threshold", "4", "--cold-start", policy]  # fmt: skip
    body = _json(capsys, [*argv, "--json"])
    precision, recall, evaluated = EXPECTED[policy]
    assert (body["precision@1"], body["recall@2"]) == pytest.approx((precision, recall))
    conv = body["conventions"]
    # the lists recommend wrote for the cold users are lists: none is left without one under fallback
    assert (conv["cold_start"], conv["users_evaluated"], conv["users_cold"]) == (policy, evaluated, 2)
    assert conv["users_cold_without_list"] == (0 if policy == "fallback" else 2)
    assert main(argv) == 0
    header = capsys.readouterr().out
    assert "cold users (no training rating): 2 of 4" in header and f"(--cold-start {policy})" in header


@pytest.mark.parametrize("policy", list(EXPECTED))
def test_evaluate_on_lists_without_cold_users_gives_the_same_numbers(files: Path, capsys, policy: str) -> None:
    POPULARITY_LISTS.to_csv(files / "pop.csv", index=False)
    body = _json(capsys, ["evaluate", "--truth", str(files / "test.csv"), "--recs", str(files / "pop.csv"),
                          "--train", str(files / "train.csv"), "--metrics", METRICS, "--threshold", "4",
                          "--cold-start", policy, "--json"])  # fmt: skip
    precision, recall, _ = EXPECTED[policy]
    assert (body["precision@1"], body["recall@2"], body["conventions"]["users_cold_without_list"]) == pytest.approx(
        (precision, recall, 2)
    )


@pytest.mark.parametrize("policy", list(EXPECTED))
def test_compare_applies_the_policy_to_every_run_and_reports_it(files: Path, capsys, policy: str) -> None:
    POPULARITY_LISTS.to_csv(files / "pop.csv", index=False)
    # run 'miss' lists only misses for a and b
    pd.DataFrame({"user": ["a", "b"], "item": ["y", "z"], "score": [1.0, 1.0]}).to_csv(files / "miss.csv", index=False)
    argv = ["compare", "--truth", str(files / "test.csv"), str(files / "pop.csv"), str(files / "miss.csv"),
            "--train", str(files / "train.csv"), "--metrics", METRICS, "--threshold", "4",
            "--cold-start", policy]  # fmt: skip
    body = _json(capsys, [*argv, "--json", "--report", str(files / "cmp.html")])
    precision, recall, evaluated = EXPECTED[policy]
    assert body["summary"]["pop"] == pytest.approx({"precision@1": precision, "recall@2": recall})
    cold_hits = {"empty": (0.0, 0.0), "exclude": (0.0, 0.0), "fallback": (0.25, 0.5)}[policy]
    assert body["summary"]["miss"] == pytest.approx(dict(zip(["precision@1", "recall@2"], cold_hits, strict=True)))
    for run in ("pop", "miss"):
        conv = body["conventions"][run]
        assert (conv["cold_start"], conv["users_evaluated"], conv["users_cold"]) == (policy, evaluated, 2)
    assert {row["n"] for row in body["tests"]} == {evaluated}
    page = (files / "cmp.html").read_text()
    assert "<th>cold users</th>" in page and f"(cold-start policy: {policy})" in page
    assert main(argv) == 0
    assert "pop: cold users (no training rating): 2 of 4" in capsys.readouterr().out


def _config(files: Path, policy: str) -> Path:
    path = files / f"{policy}.toml"
    path.write_text(
        f'name = "cold"\nseeds = [0]\nmetrics = ["precision@1", "recall@2"]\n'
        f'[datasets.toy]\npath = "{(files / "all.csv").as_posix()}"\nformat = "csv"\n'
        f'[split]\nmethod = "temporal"\ntest_fraction = {4 / 9!r}\n'
        f'[protocol]\nname = "one-shot"\nk = 2\nthreshold = 4\ncold_start = "{policy}"\n'
        "[recommenders.popularity]\nparams = { threshold = 4 }\n"
    )
    return path


@pytest.mark.parametrize("policy", list(EXPECTED))
def test_a_configuration_run_applies_the_policy_and_stores_the_counts(files: Path, capsys, policy: str) -> None:
    out = files / f"out_{policy}"
    assert main(["run", str(_config(files, policy)), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"[protocol] cold_start = '{policy}'; 1 task" in said and "cold users (no training rating): 2 of" in said
    aggregates = pd.read_parquet(out / "aggregates.parquet").set_index("metric")["value"]
    precision, recall, evaluated = EXPECTED[policy]
    assert aggregates.to_dict() == pytest.approx({"precision@1": precision, "recall@2": recall})
    counts = pd.read_parquet(out / "cold_start.parquet").iloc[0]
    assert (counts["cold_start"], counts["users_evaluated"], counts["users_cold"]) == (policy, evaluated, 2)
    assert counts["users_cold_without_list"] == 2  # the model made no list for them: the policy did


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--truth", "{test}", "--recs", "{test}", "--metrics", "precision@1"],
        ["compare", "--truth", "{test}", "{test}", "b={test}", "--metrics", "precision@1"],
        ["recommend", "--train", "{train}", "--test", "{test}", "-a", "popularity", "--out", "{dir}/r.csv"],
    ],
)
def test_a_bad_policy_is_one_line_and_exit_2(files: Path, capsys, argv: list[str]) -> None:
    argv = [a.format(test=files / "test.csv", train=files / "train.csv", dir=files) for a in argv]
    assert main([*argv, "--cold-start", "popular"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --cold-start popular is not a cold-start policy; use one of empty, exclude, fallback"]
    assert not (files / "r.csv").exists()


def test_exclude_without_train_is_one_line_and_exit_2(files: Path, capsys) -> None:
    argv = ["evaluate", "--truth", str(files / "test.csv"), "--recs", str(files / "test.csv"), "--metrics", "mrr"]
    assert main([*argv, "--cold-start", "exclude"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --cold-start exclude needs the training data to tell cold users (truth users without a training "
        "rating): pass --train"
    ]


def test_a_bad_policy_in_a_configuration_names_its_line(files: Path, capsys) -> None:
    assert main(["run", str(_config(files, "Nope")), "--out", str(files / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(
        "Nope.toml, line 14: cold_start='Nope' is not a cold-start policy; use one of empty, exclude, fallback"
    )
    with pytest.raises(ConfigError, match="not a cold-start policy"):
        evaluate(POPULARITY_LISTS, _frame(TEST), "mrr", train=_frame(TRAIN), cold_start="none")


@pytest.mark.realdata
def test_ml_latest_small_global_temporal_split_88_of_116_test_users_are_cold(ml_latest_small_dir: Path) -> None:
    from receval.data.loaders import load

    data = load(ml_latest_small_dir, "movielens-latest")
    train, test = split_by_name(data, "temporal", seed=0, test_fraction=0.2)[0]
    results = {p: evaluate_model(make("popularity"), train, test, "precision@10,recall@10", k=10, threshold=4,
                                 cold_start=p) for p in EXPECTED}  # fmt: skip
    for policy, res in results.items():
        c = res.conventions
        assert (c.users_cold, c.users_cold_without_list) == (88, 88)
        assert c.users_evaluated == (28 if policy == "exclude" else 116)
    empty, exclude, fallback = (results[p].per_user.set_index("user") for p in EXPECTED)
    warm = exclude.index
    # the warm users' values are the same under every policy; exclude averages them alone
    pd.testing.assert_frame_equal(empty.loc[warm], exclude)
    pd.testing.assert_frame_equal(fallback.loc[warm], exclude)
    assert results["exclude"].summary["precision@10"] == pytest.approx(exclude["precision@10"].mean())
    cold = empty.index.difference(warm)
    assert (empty.loc[cold] == 0).all().all()
    # fallback: each cold user's precision@10 from the ten most-rated training movies, computed here
    counts = pd.Series(train.item_ids[train.items]).value_counts()
    ranked = sorted(counts.index, key=lambda item: (-counts[item], str(item)))[:10]
    truth = pd.DataFrame({"user": test.user_ids[test.users], "item": test.item_ids[test.items],
                          "rating": test.ratings})  # fmt: skip
    hits = truth[truth["item"].isin(ranked) & (truth["rating"] >= 4)].groupby("user").size()
    expected = hits.reindex(cold, fill_value=0) / 10
    np.testing.assert_allclose(fallback.loc[cold, "precision@10"].to_numpy(), expected.to_numpy())
    assert fallback.loc[cold, "precision@10"].sum() > 0  # popular movies do hit some cold users
