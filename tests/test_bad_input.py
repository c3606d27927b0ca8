"""Bad options, configuration values and file contents: one clean error before any work.

Each test is one class of bad input, parametrised over the commands that take it. Every
case must end with exit status 2 and exactly one line on stderr, ``error: ...``, naming
the option or the file and line; no traceback, no warning with a source line, and no
output written (the ``--out`` path does not exist afterwards).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval.cli import main

SEEDS_OUT_OF_RANGE = ["-1", "99999999999999999999"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny fixtures: 30 users x 10 ratings on a 1..5 scale over 40 items, aspects, runs and predictions."""
    d = tmp_path_factory.mktemp("bad-input")
    rng = np.random.default_rng(0)
    rows = [(u, int(i), int(rng.integers(1, 6))) for u in range(30) for i in rng.choice(40, 10, replace=False)]
    data = pd.DataFrame(rows, columns=["user", "item", "rating"])
    out = {"data": d / "data.csv", "aspects": d / "aspects.csv", "truth": d / "truth.csv", "recs": d / "recs.csv"}
    data.to_csv(out["data"], index=False)
    pd.DataFrame({"item": range(40), "aspect": [f"g{i % 4}" for i in range(40)]}).to_csv(out["aspects"], index=False)
    truth = data.iloc[:200]
    truth.to_csv(out["truth"], index=False)
    truth[["user", "item"]].assign(score=rng.random(200)).to_csv(out["recs"], index=False)
    preds = truth.iloc[:50].assign(prediction=3.0)
    out["pred_dup"] = d / "pred_dup.csv"  # line 52 repeats line 5
    pd.concat([preds, preds.iloc[[3]]]).to_csv(out["pred_dup"], index=False)
    out["pred_inf"] = d / "pred_inf.csv"
    preds.astype({"prediction": object}).assign(prediction=["inf"] + [3.0] * 49).to_csv(out["pred_inf"], index=False)
    for bad in ("0", "-7", "2.5"):
        ranks = truth[["user", "item"]].iloc[:20].assign(rank=[str(r) for r in range(1, 21)])
        ranks.loc[4, "rank"] = bad  # line 6
        out[f"rank{bad}"] = d / f"rank{bad}.csv"
        ranks.to_csv(out[f"rank{bad}"], index=False)
    for name, value in (("inf", "inf"), ("big", "1e308"), ("nan", "nan")):
        frame = data.astype({"rating": object})
        frame.loc[10, "rating"] = value  # line 12
        out[f"rating_{name}"] = d / f"rating_{name}.csv"
        frame.to_csv(out[f"rating_{name}"], index=False)
    out["recs_unknown"] = d / "recs_unknown.csv"
    pd.concat([pd.read_csv(out["recs"]), pd.DataFrame({"user": [999], "item": [1], "score": [0.5]})]).to_csv(
        out["recs_unknown"], index=False
    )
    return out


def refused(capsys: pytest.CaptureFixture[str], args: list[str], *, names: str, out: Path | None = None) -> str:
    """Run the command; assert exit 2, one ``error:`` line containing ``names``, nothing written. The line."""
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert status == 2, captured.err
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert "Traceback" not in captured.err and ".py:" not in captured.err
    assert names in lines[0], lines[0]
    if out is not None:
        assert not out.exists(), f"{out} was written"
    return lines[0]


# ------------------------------------------------------------------ options
def _command(name: str, f: dict[str, Path], out: Path, option: list[str]) -> list[object]:
    data = ["--data", f["data"], "--format", "csv"]
    attack = ["attack", *data, "--attack", "random", "--size", "0.1", "--target", "3"]
    return {
        "evaluate": ["evaluate", "--truth", f["truth"], "--recs", f["recs"], "--metrics", "ndcg@10", *option],
        "attack": [*attack, "-a", "popularity", *option],
        "metaeval": ["metaeval", *data, "--aspects", f["aspects"], "--out", out, *option],
        "simulate": ["simulate", *data, "--rounds", "2", "--out", out, *option],
        "recommend": ["recommend", "--train", f["data"], "--algorithm", "popularity", "--out", out, *option],
        "recommend-knn": ["recommend", "--train", f["data"], "--algorithm", "item-knn", "--out", out, *option],
        "predict": ["predict", "--train", f["data"], "--test", f["truth"], "-a", "biases", "--out", out, *option],
        "coherence-split": ["coherence-split", *data, "--aspects", f["aspects"], "--out", out, *option],
        "barrier": ["barrier", *data, *option],
        "debias": ["debias", *data, "--out", out, *option],
        "demo": ["demo", "--out", out, *option],
    }[name]


@pytest.mark.parametrize("value", ["10", "nan", "inf", "-inf"])
@pytest.mark.parametrize("command", ["evaluate", "attack", "metaeval", "simulate"])
def test_threshold_off_the_rating_scale(files, tmp_path, capsys, command: str, value: str) -> None:
    out = tmp_path / "out"
    line = refused(capsys, _command(command, files, out, ["--threshold", value]), names="threshold", out=out)
    assert "outside the rating scale 1..5" in line


@pytest.mark.parametrize("value", SEEDS_OUT_OF_RANGE)
@pytest.mark.parametrize(
    "command",
    ["attack", "metaeval", "simulate", "recommend", "predict", "coherence-split", "barrier", "debias", "demo"],
)
def test_seed_out_of_range(files, tmp_path, capsys, command: str, value: str) -> None:
    out = tmp_path / "out"
    line = refused(capsys, _command(command, files, out, ["--seed", value]), names="--seed", out=out)
    assert "0 to 4294967295" in line


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("metaeval", ["--seeds", "0"]),
        ("recommend", ["--k", "0"]),
        ("recommend", ["--k", "-1"]),
        ("attack", ["--k", "0"]),
        ("simulate", ["--rounds", "0"]),
        ("demo", ["--users", "0"]),
        ("demo", ["--rounds", "0"]),
    ],
)
def test_count_below_one(files, tmp_path, capsys, command: str, option: list[str]) -> None:
    out = tmp_path / "out"
    line = refused(capsys, _command(command, files, out, option), names=option[0], out=out)
    assert "at least 1" in line


@pytest.mark.parametrize(
    ("command", "option", "expected"),
    [
        ("recommend-knn", ["--param", "k=-3"], "k must be an integer >= 1"),
        ("predict", ["-a", "mf", "--param", "factors=0"], "mf (BiasedMF): factors must be a positive integer"),
        ("predict", ["-a", "mf", "--param", "seed=-1"], "mf (BiasedMF): seed -1: a seed is an integer from 0"),
        ("simulate", ["--test-fraction", "1.5"], "--test-fraction"),
        ("barrier", ["--rmse", "-1"], "--rmse -1"),
        ("barrier", ["--rmse", "nan"], "--rmse nan: give a finite number"),
        ("barrier", ["--confidence", "1.5"], "--confidence"),
        ("metaeval", ["--fractions", "0.5,2"], "--fractions 2"),
        ("attack", ["--size", "nan"], "--size nan"),
    ],
)
def test_parameter_out_of_range(files, tmp_path, capsys, command: str, option: list[str], expected: str) -> None:
    out = tmp_path / "out"
    refused(capsys, _command(command, files, out, option), names=expected, out=out)


@pytest.mark.parametrize("folds", ["200", "100000", "11"])
def test_folds_above_the_fewest_ratings_of_a_user(files, tmp_path, capsys, folds: str) -> None:
    out = tmp_path / "out"
    args = _command("coherence-split", files, out, ["--folds", folds])
    line = refused(capsys, args, names=f"--folds {folds}", out=out)
    assert "the fewest: 10" in line


@pytest.mark.parametrize("metric", ["alpha_ndcg@10(alpha=x)", "ndcg@10(threshold=x)", "entropy@10(base=x)"])
def test_metric_parameter_of_the_wrong_type(files, tmp_path, capsys, metric: str) -> None:
    args = ["evaluate", "--truth", files["truth"], "--recs", files["recs"], "--metrics", metric, "--aspects"]
    line = refused(capsys, [*args, files["aspects"], "--per-user", tmp_path / "u.csv"], names=metric)
    assert not (tmp_path / "u.csv").exists()
    assert "must be" in line


def test_ranker_in_coherence_split(files, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    line = refused(capsys, _command("coherence-split", files, out, ["--models", "popularity"]), names="--models")
    assert "popularity" in line and "biases" in line and "item-knn" in line  # names the models that predict
    assert not out.exists()


# ------------------------------------------------------------------ files that would give a wrong number
@pytest.mark.parametrize(
    ("key", "where"),
    [
        ("pred_dup", "line 52: user '0'"),  # a repeated prediction is counted twice in RMSE
        ("pred_inf", "line 2, column prediction"),  # {"rmse": Infinity}
    ],
)
def test_predictions_that_would_give_a_wrong_rmse(files, tmp_path, capsys, key: str, where: str) -> None:
    args = ["evaluate", "--truth", files["truth"], "--predictions", files[key], "--metrics", "rmse"]
    refused(capsys, [*args, "--per-user", tmp_path / "u.csv"], names=f"{files[key]}, {where}")
    assert not (tmp_path / "u.csv").exists()


@pytest.mark.parametrize("rank", ["0", "-7", "2.5"])
def test_ranks_are_positive_integers(files, capsys, rank: str) -> None:
    args = ["evaluate", "--truth", files["truth"], "--recs", files[f"rank{rank}"], "--metrics", "ndcg@10"]
    line = refused(capsys, args, names=f"{files[f'rank{rank}']}, line 6, column rank")
    assert "positive integers" in line


@pytest.mark.parametrize(
    ("key", "problem"), [("rating_inf", "not a finite number"), ("rating_big", "too large"), ("rating_nan", "rating")]
)
@pytest.mark.parametrize("command", ["coherence", "recommend", "evaluate"])
def test_bad_rating_named_by_its_line(files, tmp_path, capsys, command: str, key: str, problem: str) -> None:
    """No numpy RuntimeWarning first, and the line is named (not the scale blamed)."""
    path, out = files[key], tmp_path / "out.tsv"
    args = {
        "coherence": ["coherence", "--data", path, "--format", "csv", "--aspects", files["aspects"]],
        "recommend": ["recommend", "--train", path, "--algorithm", "popularity", "--out", out],
        "evaluate": ["evaluate", "--truth", path, "--recs", files["recs"], "--metrics", "ndcg@10"],
    }[command]
    line = refused(capsys, args, names=f"{path}, line 12, column rating", out=out)
    assert problem in line


# ------------------------------------------------------------------ warnings
def test_warning_is_one_line_without_source(files, capsys) -> None:
    args = ["evaluate", "--truth", files["truth"], "--recs", files["recs_unknown"], "--metrics", "ndcg@10"]
    assert main([str(a) for a in args]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: 1 user(s) of the recommendations have no truth"), err
    assert ".py" not in err[0]


# ------------------------------------------------------------------ memory
@pytest.mark.parametrize(
    ("command", "memory", "what"),
    [
        ("recommend-item-knn", 1000, "ItemKNN's dense 40 x 40"),
        ("recommend-user-knn", 1000, "UserKNN's dense 30 x 30"),
        ("simulate-random", 1000, "cyclic simulation's state for 30 users x 40 items"),
        ("simulate-knn-bandit", 10_000, "KNNBandit on 30 users x 40 items"),
    ],
)
def test_allocation_sized_before_it_is_made(files, tmp_path, capsys, monkeypatch, command, memory, what) -> None:
    """With (pretended) kilobytes free, a users x items or items² allocation is refused, never made."""
    import receval.validate

    monkeypatch.setattr(receval.validate, "available_memory", lambda: memory)
    out = tmp_path / "out"
    kind, name = command.split("-", 1)
    if kind == "simulate":
        args = _command("simulate", files, out, ["--algorithms", name])
    else:
        args = ["recommend", "--train", files["data"], "--algorithm", name, "--out", out]
    line = refused(capsys, args, names=what, out=out)
    assert f"of memory and {memory / 1000:.1f} kB are available" in line


# ------------------------------------------------------------------ configurations
BASE = """seeds = 1
metrics = ["ndcg@10"]

[datasets.toy]
generate = { n_users = 40, n_items = 30, n_ratings = 600 }

[split]
method = "holdout"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = 10

[recommenders.iknn]
algorithm = "item-knn"
params = { k = 5 }
"""


@pytest.mark.parametrize(
    ("old", "new", "line", "expected"),
    [
        ("test_fraction = 0.2", "test_fraction = 1.5", 9, "split.test_fraction 1.5"),
        ("test_fraction = 0.2", "test_fraction = 0", 9, "split.test_fraction 0"),
        ("test_fraction = 0.2", "test_fractio = 0.2", 9, "unknown key 'test_fractio'"),
        ("k = 10", "k = 0", 13, "protocol.k 0"),
        ("k = 10", "k = -1", 13, "protocol.k -1"),
        ("k = 5 }", "k = -3 }", 15, "k must be an integer >= 1, got -3"),
        ('["ndcg@10"]', '["alpha_ndcg@10(alpha=x)"]', 2, "alpha must be a finite number"),
        ("seeds = 1", "seeds = [-1]", 1, "seeds=-1"),
        ('"item-knn"\nparams = { k = 5 }', '"mf"\nparams = { seed = -1 }', 15, "mf (BiasedMF): seed -1: a seed"),
        ("n_ratings = 600 }", "n_ratings = 600 }\nthreshold = 10", 6, "threshold 10 is outside the rating scale"),
        ("n_ratings = 600 }", "n_ratings = 600 }\nfilters = { min_user_ratings = 1000 }", 6, "leave no ratings"),
        (
            'name = "one-shot"\nk = 10',
            'name = "cyclic"\nrounds = 0',
            13,
            "protocol.rounds 0",
        ),
    ],
)
def test_config_that_would_fail_its_tasks_fails_at_start(
    tmp_path, capsys, old: str, new: str, line: int, expected: str
) -> None:
    assert old in BASE
    config = tmp_path / "bad.toml"
    config.write_text(BASE.replace(old, new), encoding="utf-8")
    out = tmp_path / "results"
    message = refused(capsys, ["run", config, "--out", out], names=f"{config}, line {line}: ", out=out)
    assert expected in message


# ------------------------------------------------------------------ operating-system errors
# commands that write, each with the options that make it succeed on the fixture data, and its output's name
WRITERS = {
    "simulate": (["--threshold", "4"], "out"),
    "recommend": (["--k", "10"], "out.tsv"),
    "predict": ([], "out.tsv"),
    "coherence-split": ([], "out"),
    "demo": (["--users", "40", "--items", "50", "--ratings", "800", "--rounds", "2"], "out"),
}


def _no_files(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if not p.is_dir()) if folder.exists() else []


def _fail_writes(monkeypatch: pytest.MonkeyPatch, error: OSError, *, when: str) -> None:
    """Make receval's writers fail with ``error``: as they write (``write``) or on reaching the folder (``folder``).

    Both are single names of :mod:`receval.atomic` that every write looks up when it runs,
    so the fault ends with the test.
    """
    import contextlib

    import receval.atomic

    def raise_it(*_: object) -> None:
        raise error

    if when == "folder":  # every write first looks into its folder
        monkeypatch.setattr(receval.atomic, "_clean_once", raise_it)
        return
    naming = receval.atomic.naming_path

    @contextlib.contextmanager
    def full(path: Path) -> Iterator[None]:  # the write fails as it starts, and is named as a real one is
        with naming(path):
            raise_it()
        yield

    monkeypatch.setattr(receval.atomic, "naming_path", full)


@pytest.mark.parametrize("command", WRITERS)
def test_output_on_a_full_disk(files, tmp_path, capsys, monkeypatch, command: str) -> None:
    import errno
    import os

    _fail_writes(monkeypatch, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), when="write")
    options, name = WRITERS[command]
    out = tmp_path / name
    line = refused(capsys, _command(command, files, out, options), names=f"error: {out}")
    assert "no space left on the device; free some space or write elsewhere" in line
    assert _no_files(out) == []


@pytest.mark.parametrize("command", WRITERS)
def test_output_folder_permission_denied(files, tmp_path, capsys, monkeypatch, command: str) -> None:
    """As root (the tests) permissions stop nothing: the folder refuses by fault injection, as for another user."""
    import errno
    import os

    options, name = WRITERS[command]
    out = tmp_path / name
    folder = out if out.suffix == "" else tmp_path
    _fail_writes(monkeypatch, PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder)), when="folder")
    line = refused(capsys, _command(command, files, out, options), names=f"error: {folder}: permission denied")
    assert "choose a place you may write" in line
    assert _no_files(out) == []


@pytest.mark.parametrize("command", WRITERS)
def test_output_name_too_long(files, tmp_path, capsys, command: str) -> None:
    """300 characters: longer than any file system takes (255), refused before any work."""
    import os

    options, name = WRITERS[command]
    out = tmp_path / ("o" * 300 + name.removeprefix("out"))
    line = refused(capsys, _command(command, files, out, options), names="o" * 300)
    assert "the name is too long for the file system; choose a shorter name" in line
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------ names that look like markup
@pytest.mark.parametrize("name", ["pop[bold]", "[red]x[/red]", "a[", "receval[surprise]"])
@pytest.mark.parametrize("command", ["recommend", "predict", "attack"])
def test_algorithm_name_with_brackets_is_quoted_as_written(files, tmp_path, capsys, command: str, name: str) -> None:
    out = tmp_path / "out"
    line = refused(capsys, _command(command, files, out, ["-a", name]), names=repr(name), out=out)
    assert "unknown" in line or "algorithm" in line


# ------------------------------------------------------------------ parameters named as flags
def test_store_refusal_names_the_flags_of_run(tmp_path, capsys) -> None:
    """The store's message names out= and force=True; `receval run` shows them as --out and --force."""
    config = tmp_path / "c.toml"
    config.write_text(BASE, encoding="utf-8")
    out = tmp_path / "theirs"
    out.mkdir()
    (out / "notes.txt").write_text("not receval's", encoding="utf-8")
    line = refused(capsys, ["run", config, "--out", out], names="choose another --out or pass --force")
    assert "=" not in line.split("choose another", 1)[1], line
    assert (out / "notes.txt").read_text(encoding="utf-8") == "not receval's"


@pytest.mark.parametrize(
    ("algorithm", "model", "otherwise"),
    [
        ("popularity", "MostPopular", ""),
        ("average", "Average", ""),
        ("ease", "EASE", ", or threshold=none to count every rating"),
        ("rp3beta", "RP3beta", ", or threshold=none to count every rating"),
        ("ials", "IALS", ", or threshold=none to count every rating"),
    ],
)
def test_a_model_threshold_off_the_scale_names_the_model_and_its_parameter(
    tmp_path, capsys, algorithm: str, model: str, otherwise: str
) -> None:
    data = tmp_path / "implicit.csv"  # every rating 3: the models' default threshold 4 selects nothing
    rows = [(u, i) for u in range(12) for i in range(u % 5, u % 5 + 6)]
    data.write_text("user,item,rating\n" + "".join(f"{u},{i},3\n" for u, i in rows))
    args = ["recommend", "--train", str(data), "--algorithm", algorithm, "--k", "3", "--out", str(tmp_path / "r.csv")]
    line = refused(capsys, args, names=f"{model}'s threshold 4 is outside the rating scale 3..3")
    assert line.endswith(f"(parameter threshold, e.g. threshold=3){otherwise}"), line
    args[args.index("--k") : args.index("--k")] = ["--param", "threshold=3"]
    assert main(args) == 0  # what the message says to do works
