"""Library presets on every surface, and valid input no longer refused.

- ``evaluate(convention=)``, ``receval evaluate --convention``, ``convention = "..."`` in an
  experiment configuration and ``receval run --convention`` reach the same preset and give
  the same numbers; a name that is no preset is one line, exit status 2, nothing written.
- A run whose recommended items are all outside the truth scores 0, as trec_eval
  (pytrec_eval) and ranx score it; ids that are one number read two ways are still an error.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import receval
from receval.cli import main
from receval.data.synthetic import generate
from receval.errors import ConfigError, DataError
from receval.evaluation import evaluate_model
from receval.experiment import run_experiment
from receval.recommenders import make
from receval.split import holdout

METRICS = ["precision@5", "recall@5", "ndcg@5", "map@5", "mrr"]
DATA = {"n_users": 60, "n_items": 80, "n_ratings": 1500, "seed": 5}
CONFIG = """\
name = "presets"
seeds = [0]
metrics = {metrics}
{convention}
[datasets.toy]
generate = {{ n_users = 60, n_items = 80, n_ratings = 1500, seed = 5 }}

[split]
method = "holdout"
test_fraction = 0.25

[protocol]
name = "one-shot"
k = 5
threshold = 4

[recommenders.popularity]
"""


def _config(tmp_path: Path, convention: str = "", name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(CONFIG.format(metrics=json.dumps(METRICS), convention=convention))
    return path


def _one_error_line(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*"))


# ------------------------------------------------------------------ one preset, every surface
@pytest.fixture(scope="module")
def model_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, float], dict[str, float]]:
    """Popularity's top-5 lists on a generated split, scored from Python with and without trec_eval's preset,
    written as files (truth, ranked lists) for the command line."""
    tmp = tmp_path_factory.mktemp("presets")
    train, test = holdout(generate(**DATA), test_fraction=0.25, seed=0)
    preset = evaluate_model(make("popularity"), train, test, METRICS, k=5, seed=0, threshold=4, convention="trec_eval")
    plain = evaluate_model(make("popularity"), train, test, METRICS, k=5, seed=0, threshold=4)
    users = np.repeat(preset.per_user["user"].to_numpy(), 5)
    items = preset.rankings.ravel()
    keep = items >= 0
    ranks = np.tile(np.arange(1, 6), len(preset.rankings))
    pd.DataFrame({"user": users[keep], "item": test.item_ids[items[keep]], "rank": ranks[keep]}).to_csv(
        tmp / "recs.csv", index=False
    )
    pd.DataFrame({"user": test.user_ids[test.users], "item": test.item_ids[test.items], "rating": test.ratings}).to_csv(
        tmp / "truth.csv", index=False
    )
    return tmp, preset.summary, plain.summary


def test_the_preset_changes_some_numbers(model_run):
    _, preset, plain = model_run
    assert preset["ndcg@5"] != pytest.approx(plain["ndcg@5"])  # trec_eval's gains are the grades, not λ's
    assert preset["precision@5"] == plain["precision@5"]  # the same lists: precision has one convention


@pytest.mark.parametrize("spelling", ["trec_eval", "TREC_eval", "trec-eval"])
def test_evaluate_convention_on_the_command_line_gives_pythons_numbers(model_run, capsys, spelling):
    tmp, preset, _ = model_run
    args = ["evaluate", "--truth", str(tmp / "truth.csv"), "--recs", str(tmp / "recs.csv"),
            "--metrics", ",".join(METRICS), "--threshold", "4", "--convention", spelling, "--json"]  # fmt: skip
    assert main(args) == 0
    got = json.loads(capsys.readouterr().out)
    assert {m: got[m] for m in METRICS} == pytest.approx(preset, rel=1e-12)
    conventions = got["conventions"]
    assert conventions["convention"] == "trec_eval"
    # what each string resolved to: the preset's parameter shown, and the library named
    assert conventions["metrics"]["ndcg@5"]["metric"] == "ndcg@5(graded=true)"
    assert conventions["metrics"]["ndcg@5"]["graded"] is True
    assert conventions["metrics"]["ndcg@5"]["preset"] == "trec_eval"


def test_the_table_output_shows_the_preset_and_what_each_string_resolved_to(model_run, capsys):
    tmp, _, _ = model_run
    args = ["evaluate", "--truth", str(tmp / "truth.csv"), "--recs", str(tmp / "recs.csv"),
            "--metrics", "ndcg@5,ndcg@5(convention=ranx)", "--threshold", "4", "--convention", "trec_eval"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "convention: trec_eval" in out and "ties: ascending rank" in out
    rows = {line.split()[0]: line.split()[-1] for line in out.splitlines() if line.startswith("ndcg@5")}
    assert rows == {"ndcg@5": "ndcg@5(graded=true)", "ndcg@5(convention=ranx)": "ndcg@5"}  # its own convention kept


@pytest.mark.parametrize("where", ["config", "option", "both"])
def test_run_with_a_convention_gives_the_same_numbers(model_run, tmp_path, where):
    _, preset, _ = model_run
    in_file = {"config": 'convention = "trec_eval"', "option": "", "both": 'convention = "lenskit"'}[where]
    option = [] if where == "config" else ["--convention", "trec_eval"]  # the option replaces the file's
    out = tmp_path / "out"
    assert main(["run", str(_config(tmp_path, in_file)), "--out", str(out), *option]) == 0
    aggregates = pd.read_parquet(out / "aggregates.parquet")
    tasks = pd.read_parquet(out / "tasks.parquet")
    assert tasks["convention"].tolist() == ["trec_eval"]  # recorded with every task ...
    assert json.loads((out / "experiment.json").read_text())["config"]["convention"] == "trec_eval"  # ... and the run
    # the metrics are stored as resolved: the preset's values in every name
    values = dict(zip(aggregates["metric"], aggregates["value"], strict=True))
    assert values == pytest.approx({"precision@5": preset["precision@5"], "recall@5": preset["recall@5"],
                                    "ndcg@5(graded=true)": preset["ndcg@5"], "map@5": preset["map@5"],
                                    "mrr": preset["mrr"]}, rel=1e-12)  # fmt: skip


def test_run_and_results_name_the_preset(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(_config(tmp_path, 'convention = "RecBole"')), "--out", str(out)]) == 0
    assert "presets: mean ± std over seeds, convention recbole" in capsys.readouterr().out
    assert main(["results", str(out)]) == 0
    assert ", convention recbole): 1 tasks, 1 ok" in capsys.readouterr().out
    (out / "experiment.json").write_text("{")  # damaged: the tasks' records name the preset too
    assert main(["results", str(out)]) == 0
    assert ", convention recbole): 1 ok" in capsys.readouterr().out


def test_run_experiment_takes_the_convention_from_python(tmp_path):
    report = run_experiment(_config(tmp_path), out=tmp_path / "out", convention="TREC_EVAL")
    assert report.config.convention == "trec_eval" and "ndcg@5(graded=true)" in report.config.metrics
    with pytest.raises(ConfigError, match="convention= is applied when a configuration is parsed"):
        run_experiment(report.config, out=tmp_path / "out2", convention="ranx")


def test_a_config_without_convention_keeps_its_hash_and_names(tmp_path):
    from receval.experiment.config import load_config

    cfg = load_config(_config(tmp_path))
    assert cfg.convention is None and cfg.metrics == tuple(METRICS)
    assert load_config(_config(tmp_path, 'convention = "trec_eval"', "b.toml")).hash != cfg.hash


def test_a_protocol_with_measures_of_its_own_refuses_a_convention():
    from receval.experiment.config import parse_config

    text = 'metrics = ["precision"]\nconvention = "trec_eval"\n[datasets.toy]\ngenerate = { n_users = 20 }\n'
    with pytest.raises(ConfigError, match=r"^c\.toml, line 2: protocol 'cyclic' reports measures of its own, not "):
        parse_config(text + '[protocol]\nname = "cyclic"\n[recommenders.random]\n', path="c.toml")


def test_sharded_lists_take_the_preset():
    import scipy.sparse as sp

    from receval.evaluation.sharded import evaluate_sharded

    truth = sp.csr_matrix(np.array([[5.0, 4, 3, 0], [0, 4, 0, 1], [2, 0, 0, 5]]))
    rankings = np.array([[0, 3], [1, 2], [3, -1]])
    per_user, summary = evaluate_sharded(rankings, truth, ["recall@2"], n_shards=2, threshold=1, convention="LensKit")
    # user 0: 1 of 3 relevant found, divided by min(k, 3) = 2 (LensKit), not by 3
    assert per_user["recall@2"].tolist() == [0.5, 0.5, 0.5]
    plain = evaluate_sharded(rankings, truth, ["recall@2"], n_shards=2, threshold=1)[0]
    assert plain["recall@2"].tolist() == [pytest.approx(1 / 3), 0.5, 0.5]
    assert summary["recall@2"] == 0.5


def test_the_options_help_names_only_presets_that_exist():
    from receval.cli.evaluate import CONVENTION_HELP
    from receval.metrics.conventions import CONVENTION_NAMES

    named = re.search(r"\(([^;]*), \.\.\.;", CONVENTION_HELP)
    assert named is not None and set(named.group(1).split(", ")) <= set(CONVENTION_NAMES)


# ------------------------------------------------------------------ the presets added last, on every surface
# the metrics of METRICS each library has (Microsoft Recommenders has no MRR), and one that only the preset changes
NEW_PRESETS = {
    "msr": ["precision@5", "recall@5", "ndcg@5", "map@5", "r_precision@5"],
    "cornac": ["precision@5", "recall@5", "ndcg@5", "mrr", "ncrr@5"],
}


@pytest.mark.parametrize(("library", "spelling"), [("msr", "MSR"), ("cornac", "Cornac")])
def test_msr_and_cornac_on_every_surface(model_run, tmp_path, capsys, library, spelling):
    tmp, _, _ = model_run
    metrics = NEW_PRESETS[library]
    train, test = holdout(generate(**DATA), test_fraction=0.25, seed=0)
    python = evaluate_model(make("popularity"), train, test, metrics, k=5, seed=0, threshold=4, convention=spelling)
    plain = evaluate_model(make("popularity"), train, test, metrics, k=5, seed=0, threshold=4)
    assert python.summary["ndcg@5"] != pytest.approx(plain.summary["ndcg@5"])  # both presets: binary gains
    # receval evaluate --convention
    args = ["evaluate", "--truth", str(tmp / "truth.csv"), "--recs", str(tmp / "recs.csv"),
            "--metrics", ",".join(metrics), "--threshold", "4", "--convention", spelling, "--json"]  # fmt: skip
    assert main(args) == 0
    got = json.loads(capsys.readouterr().out)
    assert {m: got[m] for m in metrics} == pytest.approx(python.summary, rel=1e-12)
    assert got["conventions"]["convention"] == library
    # a configuration's convention, and receval run --convention
    config = CONFIG.replace(json.dumps(METRICS), json.dumps(metrics)).format(metrics="", convention="")
    path = tmp_path / "c.toml"
    for in_file, option in ((f'convention = "{spelling}"', []), ("", ["--convention", spelling])):
        path.write_text(config.replace("metrics = \n", f"metrics = {json.dumps(metrics)}\n{in_file}\n"))
        out = tmp_path / f"out-{bool(option)}"
        assert main(["run", str(path), "--out", str(out), *option]) == 0
        assert pd.read_parquet(out / "tasks.parquet")["convention"].tolist() == [library]
    capsys.readouterr()
    # receval compare --convention (two copies of the run: compare needs two)
    second = tmp_path / "again.csv"
    second.write_bytes((tmp / "recs.csv").read_bytes())
    compare = ["compare", "--truth", str(tmp / "truth.csv"), str(tmp / "recs.csv"), str(second),
               "--metrics", ",".join(metrics), "--threshold", "4", "--convention", spelling, "--json"]  # fmt: skip
    assert main(compare) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    for values in summary.values():
        assert values == pytest.approx({m: got[m] for m in metrics}, rel=1e-12)


def test_a_metric_the_new_presets_do_not_have_is_refused_in_one_line(model_run, capsys):
    tmp, _, _ = model_run
    args = ["evaluate", "--truth", str(tmp / "truth.csv"), "--recs", str(tmp / "recs.csv"), "--metrics", "mrr",
            "--convention", "msr"]  # fmt: skip
    err = _one_error_line(capsys, args)
    assert "msr has no metric mrr" in err and "convention=" in err


# ------------------------------------------------------------------ a name that is no preset
def test_bad_preset_on_evaluate_is_one_line_and_writes_nothing(model_run, tmp_path, capsys):
    tmp, _, _ = model_run
    per_user = tmp_path / "per_user.csv"
    err = _one_error_line(
        capsys,
        [
            "evaluate",
            "--truth",
            str(tmp / "truth.csv"),
            "--recs",
            str(tmp / "recs.csv"),
            "--metrics",
            "mrr",
            "--convention",
            "pyterrier",
            "--per-user",
            str(per_user),
        ],
    )
    assert err.startswith("error: --convention pyterrier is not a library preset; use one of trec_eval, ranx, ")
    assert not per_user.exists()


def test_bad_preset_on_run_is_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    err = _one_error_line(capsys, ["run", str(_config(tmp_path)), "--out", str(out), "--convention", "pyterrier"])
    assert err.startswith("error: --convention pyterrier is not a library preset; use one of trec_eval, ")
    assert not out.exists()


def test_bad_preset_in_a_config_names_its_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    config = _config(tmp_path, 'convention = "pyterrier"')
    err = _one_error_line(capsys, ["run", str(config), "--out", str(out)])
    assert f"{config}, line 4: convention='pyterrier' is not a library preset; use one of trec_eval" in err
    assert not out.exists() and _files(tmp_path) == ["c.toml"]


def test_bad_preset_from_python_is_one_config_error():
    truth = pd.DataFrame({"user": ["u"], "item": ["a"], "rating": [1]})
    with pytest.raises(ConfigError, match=r"^convention='ir_measures' is not a library preset; use one of "):
        receval.evaluate(truth.assign(score=1.0), truth, ["mrr"], convention="ir_measures")


# ------------------------------------------------------------------ valid input accepted
ALL_MISS = ({"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 2}}, {"q1": {"x": 0.9, "y": 0.5}, "q2": {"z": 0.7, "w": 0.1}})
PEERS = {  # receval's metric -> (trec_eval's measure, ranx's)
    "precision@2": ("P_2", "precision@2"),
    "recall@2": ("recall_2", "recall@2"),
    "ndcg@2": ("ndcg_cut_2", "ndcg@2"),
    "map": ("map", "map"),
    "mrr": ("recip_rank", "mrr"),
}


def test_an_all_miss_run_scores_zero_as_trec_eval_and_ranx_score_it():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ranx = pytest.importorskip("ranx")
    qrels, run = ALL_MISS
    trec = pytrec_eval.RelevanceEvaluator(qrels, {m for m, _ in PEERS.values()}).evaluate(run)
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), [m for _, m in PEERS.values()])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = receval.evaluate(run, qrels, list(PEERS))
    for metric, (trec_name, ranx_name) in PEERS.items():
        assert res.summary[metric] == theirs[ranx_name] == 0.0
        assert res.per_user[metric].tolist() == [trec[q][trec_name] for q in res.per_user["user"]] == [0.0, 0.0]
    # at most a warning, naming both sides' ids
    assert [str(w.message) for w in caught] == [
        "none of the item ids of the recommendations is in the truth (recommendations: 'x', truth: 'd1'): "
        "every list scores as all misses; if these are not the truth's item ids, give the right column"
    ]


def test_an_all_miss_run_file_scores_zero_on_the_command_line(tmp_path, capsys):
    (tmp_path / "t.qrels").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    (tmp_path / "r.trec").write_text("q1 Q0 x 1 0.9 run\nq2 Q0 z 1 0.7 run\n")
    args = ["evaluate", "--truth", str(tmp_path / "t.qrels"), "--recs", str(tmp_path / "r.trec"),
            "--metrics", "precision@1,mrr", "--json"]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    got = json.loads(captured.out)
    assert (got["precision@1"], got["mrr"]) == (0.0, 0.0)
    assert "none of the item ids" in captured.err and len(captured.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("truth_items", "run_items", "pair"),
    [
        ([1, 2], ["1", "3"], "('1' vs 1)"),
        ([7, 8], ["007", "9"], "('007' vs 7)"),
        (["7", "8"], ["007"], "('007' vs '7')"),
    ],
)
def test_ids_that_are_one_number_read_two_ways_are_still_an_error(truth_items, run_items, pair):
    truth = pd.DataFrame({"user": ["u"] * len(truth_items), "item": truth_items, "rating": 1})
    recs = pd.DataFrame({"user": ["u"] * len(run_items), "item": run_items, "score": 1.0})
    with pytest.raises(DataError, match=r"none of the item ids of the recommendations .*" + re.escape(pair)):
        receval.evaluate(recs, truth, ["mrr"])


def test_users_matching_none_of_the_truth_are_still_an_error():
    truth = pd.DataFrame({"user": ["a", "b"], "item": ["x", "y"], "rating": [1, 1]})
    recs = pd.DataFrame({"user": ["c"], "item": ["x"], "score": [1.0]})
    with pytest.raises(DataError, match=r"none of the user ids .* \(recommendations: 'c', truth: 'a'\): are these"):
        receval.evaluate(recs, truth, ["mrr"])
