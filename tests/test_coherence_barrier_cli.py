"""``receval coherence-barrier`` and the ``coherence-barrier`` protocol: the validation table of Said & Bellogín
(UMUAI 2018, Table 2) on generated data whose per-user noise is known.

The expected correlations are computed here from the raw ratings (pandas per-user barrier,
scipy correlations), not read back from receval's own table.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from receval.cli import main
from receval.data.synthetic import generate_with_truth
from receval.stats.coherence import ALL_GAMMAS, BASELINES, coherence

M = 3


@pytest.fixture(scope="module")
def truth():
    return generate_with_truth(
        n_users=200, n_items=300, n_ratings=6000, n_aspects=8, reratings=M, noise=(0.1, 1.0), seed=1
    )


@pytest.fixture(scope="module")
def files(truth, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rerated")
    truth.data.to_frame().to_csv(folder / "r.csv", index=False)
    a = truth.data.aspects.tocoo()
    aspects = pd.DataFrame({"item": truth.data.item_ids[a.row], "aspect": truth.data.aspect_names[a.col]})
    aspects.to_csv(folder / "genres.csv", index=False)
    return folder / "r.csv", folder / "genres.csv"


def _run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _per_user_barrier(frame: pd.DataFrame) -> pd.Series:
    """Algorithm 1 per user (ddof 0), written out with pandas."""
    pair = frame.groupby(["user", "item"])["rating"]
    sq = (frame["rating"] - pair.transform("mean")) ** 2
    frame = frame.assign(sq=sq, m=pair.transform("size"))
    per_pair = frame[frame["m"] > 1].groupby(["user", "item"]).agg(eps=("sq", "mean"))
    return np.sqrt(per_pair.groupby("user")["eps"].mean())


def test_json_table_against_an_independent_computation(truth, files, capsys):
    ratings, genres = files
    code, out, err = _run(capsys, "coherence-barrier", "--data", ratings, "--format", "csv", "--aspects", genres,
                          "--json")  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    assert list(got["spearman"]) == list(got["pearson"]) == [*ALL_GAMMAS, *BASELINES]
    frame = truth.data.to_frame().astype({"rating": np.float64})
    barrier = _per_user_barrier(frame)
    first = frame.drop_duplicates(["user", "item"], keep="first")  # --keep first: the system's rating
    counts = first.groupby("user").size().reindex(barrier.index)
    means = first.groupby("user")["rating"].mean().reindex(barrier.index)
    rho = stats.spearmanr(counts, barrier).statistic
    # barriers tie often (integer ratings); rounding in the last bit may order two tied values either way
    assert got["spearman"]["n_ratings"] == pytest.approx(rho, abs=1e-3)
    assert got["pearson"]["n_ratings"] == pytest.approx(stats.pearsonr(counts, barrier).statistic, abs=1e-12)
    assert got["pearson"]["mean_rating"] == pytest.approx(stats.pearsonr(means, barrier).statistic, abs=1e-12)
    # Eq. 8 from its definition: the user's sum of squared deviations from each pair's mean
    eq8 = (
        ((frame["rating"] - frame.groupby(["user", "item"])["rating"].transform("mean")) ** 2)
        .groupby(frame["user"])
        .sum()
    )
    assert got["spearman"]["barrier"] == pytest.approx(stats.spearmanr(eq8[barrier.index], barrier).statistic, abs=1e-3)
    assert got["pearson"]["barrier"] == pytest.approx(stats.pearsonr(eq8[barrier.index], barrier).statistic, abs=1e-12)
    assert got["barrier"]["n_users"] == 200 and got["barrier"]["m_min"] == got["barrier"]["m_max"] == M
    assert set(got["n_users"].values()) == {200} and got["keep"] == "first"


def test_truth_noisier_users_have_the_higher_barrier_and_wstd_finds_them(truth, files, capsys):
    ratings, genres = files
    code, out, err = _run(capsys, "coherence-barrier", "--data", ratings, "--format", "csv", "--aspects", genres,
                          "--json")  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    barrier = _per_user_barrier(truth.data.to_frame())
    noise = pd.Series(truth.user_noise, index=truth.data.user_ids).reindex(barrier.index)
    assert stats.spearmanr(noise, barrier).statistic > 0.8  # the barrier recovers the known noise
    rho = got["spearman"]
    assert rho["wstd"] < -0.4 and rho["std"] < -0.3  # coherent users are the less noisy ones
    assert rho["barrier"] > 0.6  # Eq. 8 grows with the barrier
    assert abs(rho["random"]) < 0.2
    assert abs(rho["wstd"]) > abs(rho["random"]) + 0.2


def test_text_table_and_options(files, capsys):
    ratings, genres = files
    code, out, err = _run(capsys, "coherence-barrier", "--data", ratings, "--format", "csv", "--aspects", genres)
    assert code == 0, err
    lines = out.splitlines()
    assert "Table 2" in lines[0] and "first rating of each pair" in lines[0]
    for name in (*ALL_GAMMAS, *BASELINES):
        assert any(line.split()[:1] == [name] for line in lines), name
    seeded = []
    for seed in (0, 0, 1):
        _, out, _ = _run(capsys, "coherence-barrier", "--data", ratings, "--format", "csv", "--aspects", genres,
                         "--seed", seed, "--keep", "mean", "--json")  # fmt: skip
        seeded.append(json.loads(out))
    assert seeded[0]["spearman"]["random"] == seeded[1]["spearman"]["random"] != seeded[2]["spearman"]["random"]
    assert seeded[0]["spearman"]["barrier"] == seeded[2]["spearman"]["barrier"]  # Eq. 8 ignores --keep
    assert seeded[0]["keep"] == "mean"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--keep", "median"], "--keep must be one of first, last, mean"),
        (["--ddof", "2"], "--ddof 2"),
        (["--seed", "-1"], "seed"),
    ],
)
def test_bad_options_are_one_line(files, capsys, extra, message):
    ratings, genres = files
    code, out, err = _run(capsys, "coherence-barrier", "--data", ratings, "--format", "csv", "--aspects", genres,
                          *extra)  # fmt: skip
    assert code == 2 and out == "" and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_data_without_repeated_ratings_is_one_line_with_the_fix(truth, tmp_path, capsys):
    once = tmp_path / "once.csv"
    truth.data.deduplicate("first").to_frame().to_csv(once, index=False)
    code, out, err = _run(capsys, "coherence-barrier", "--data", once, "--format", "csv", "--json")
    assert code == 2 and err == ""
    message = json.loads(out)["error"]
    assert "repeated ratings" in message and "rated once" in message and "reratings=" in message


def test_table1_functions_need_item_attributes(files, capsys):
    ratings, _ = files
    code, _, err = _run(capsys, "coherence-barrier", "--data", ratings, "--format", "csv")
    assert code == 2 and "--aspects" in err and err.count("\n") == 1


def test_protocol_from_a_toml_config_into_the_store(truth, tmp_path):
    from receval.experiment import parse_config, run_experiment
    from receval.experiment.store import ResultStore

    cfg = parse_config(
        """
        name = "validation"
        seeds = [0, 1]
        [datasets.noisy]
        generate = { n_users = 200, n_items = 300, n_ratings = 6000, n_aspects = 8, reratings = 3, seed = 1 }
        [protocol]
        name = "coherence-barrier"
        """
    )
    report = run_experiment(cfg, out=tmp_path / "run")
    assert (report.n_tasks, report.ok, report.failed) == (2, 2, 0)
    store = ResultStore(tmp_path / "run")
    agg = store.read("aggregates")
    table = store.read("coherence_barrier")
    assert set(table["predictor"]) == {*ALL_GAMMAS, *BASELINES}
    wide = agg.pivot_table(index="task_id", columns="metric", values="value")
    assert wide["spearman[wstd]"].nunique() == 1  # coherence does not depend on the seed
    assert wide["spearman[random]"].nunique() == 2  # the random baseline does
    assert (wide["n_barrier_users"] == 200).all()
    # the same data generated in Python gives the same Eq. 8 correlation as the store holds
    from receval.data.synthetic import generate
    from receval.stats.barrier import magic_barrier

    data = generate(n_users=200, n_items=300, n_ratings=6000, n_aspects=8, reratings=3, seed=1)
    users = magic_barrier(data, n_bootstrap=0).users
    c = coherence(data, "barrier").values[users["index"].to_numpy()]
    rho = stats.spearmanr(c, users["barrier"]).statistic
    assert wide["spearman[barrier]"].iloc[0] == pytest.approx(rho, abs=1e-12)  # the same computation: no tie noise


@pytest.mark.parametrize(("avg", "said"), [("users", "--avg equal gives the plain mean"), ("equal", "the plain mean")])
def test_coherence_split_says_which_avg_reproduces_the_paper_tables(tmp_path, capsys, avg, said):
    small = generate_with_truth(n_users=60, n_items=80, n_ratings=1500, n_aspects=5, seed=2).data
    small.to_frame().to_csv(tmp_path / "r.csv", index=False)
    a = small.aspects.tocoo()
    pd.DataFrame({"item": small.item_ids[a.row], "aspect": small.aspect_names[a.col]}).to_csv(
        tmp_path / "g.csv", index=False
    )
    code, out, err = _run(capsys, "coherence-split", "--data", tmp_path / "r.csv", "--format", "csv", "--aspects",
                          tmp_path / "g.csv", "--models", "ib", "--folds", "2", "--p", "0.5", "--avg", avg)  # fmt: skip
    assert code == 0, err
    note = out.splitlines()[-1]
    assert note.startswith("Avg: ") and said in note and "paper's tables" in note
