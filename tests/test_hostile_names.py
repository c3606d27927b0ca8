"""Names from users never leave the folder named, never break a writer, never inject LaTeX.

A data set label, a recommender label or an experiment name reaches file names (LaTeX
tables, figures, the default store). Each is made one safe file name by
:func:`receval.outputs.safe_name`; every file a command writes must lie under the
folder the user named, and LaTeX text and labels are escaped.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from receval.cli import main
from receval.experiment import ResultStore, register_protocol
from receval.experiment.protocols import PROTOCOLS, TaskOutput
from receval.outputs import MAX_NAME_BYTES, safe_name
from receval.report.html import INDEX, latex_table

HOSTILE = [
    "../../ESCAPE_REL",
    "/tmp/ESCAPE_ABS",
    "a/b",
    "x}\\typeout{INJECTED}%",
    "[bold]",
    "L" * 250,
    "données-日本語-😀",
    "tab\there\x01\x1b[31mred",
    "..",
]


# ---------------------------------------------------------------- the one function
@given(st.text(max_size=300))
def test_safe_name_is_one_bounded_file_name_that_stays_in_its_folder(text: str) -> None:
    name = safe_name(text)
    assert name and name not in (".", "..") and not name.startswith(".")
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert not any(unicodedata.category(ch)[0] == "C" for ch in name)
    assert len(name.encode("utf-8")) <= MAX_NAME_BYTES
    assert (Path("/folder") / name).parent == Path("/folder")


@given(st.text(max_size=60), st.text(max_size=60))
def test_different_names_never_share_a_file_name(a: str, b: str) -> None:
    if a != b:
        assert safe_name(a) != safe_name(b)


def test_safe_names_by_hand() -> None:
    assert safe_name("ml-100k") == "ml-100k"  # a safe name is kept as it is
    assert safe_name("a/b").startswith("a_b+") and safe_name("a_b") == "a_b"
    assert safe_name("/tmp/ESCAPE_ABS").startswith("_tmp_ESCAPE_ABS+")
    assert safe_name("..").startswith("__+")


def test_latex_labels_and_captions_are_escaped() -> None:
    means = pd.DataFrame({"ndcg@10": [0.2, 0.3]}, index=["x}\\typeout{INJECTED}%", "[bold]"])
    hostile = "x}\\typeout{INJECTED}%"
    tex = latex_table(means, caption=hostile, label=f"tab:{hostile}")
    assert "\\typeout{INJECTED}" not in tex
    assert r"\caption{x\}\textbackslash{}typeout\{INJECTED\}\%}" in tex
    assert r"x\}\textbackslash{}typeout\{INJECTED\}\% & 0.2000 \\" in tex
    (label,) = re.findall(r"\\label\{([^}]*)\}", tex)
    assert re.fullmatch(r"[A-Za-z0-9:._\-]+", label) and label.startswith("tab:x")
    assert "\n\n" not in latex_table(means, caption="two\n\nparagraphs")  # a blank line would end the caption


# ---------------------------------------------------------------- receval report --latex --figures
def _store(root: Path, datasets: list[str], systems: list[str]) -> Path:
    """A finished one-shot experiment over ``datasets`` x ``systems``, written through the store's API."""
    store = ResultStore(root)
    store.open({"name": "hostile", "config_hash": "h", "config": {}, "n_tasks": len(datasets) * len(systems)})
    rng = np.random.default_rng(3)
    for d, dataset in enumerate(datasets):
        for s, system in enumerate(systems):
            users = 30
            per_user = pd.concat(
                [
                    pd.DataFrame(
                        {
                            "user_index": np.arange(users, dtype=np.int32),
                            "user": [str(u) for u in range(users)],
                            "metric": metric,
                            "value": np.clip(rng.normal(0.1 * (s + 1), 0.05, users), 0, 1),
                        }
                    )
                    for metric in ("precision@5", "recall@5")
                ],
                ignore_index=True,
            )
            agg = per_user.groupby("metric", sort=False)["value"].mean().reset_index()
            record = {
                "label": f"{dataset}/{system} seed=0",
                "dataset": dataset,
                "recommender": system,
                "protocol": "one-shot",
                "seed": 0,
                "status": "ok",
                "error": None,
            }
            store.write_task(f"t{d}x{s}", record, {"aggregates": agg, "per_user": per_user})
    store.rebuild()
    return root


def _tree(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


def test_report_with_hostile_labels_writes_only_into_the_folders_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    systems = ["pop[bold]", "knn/../x", "mf"]
    root = _store(tmp_path / "store", HOSTILE, systems)
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)  # relative names would land next to the folders named
    latex, figures, out = work / "tex", work / "figs", work / "html" / "r.html"
    out.parent.mkdir()
    before = _tree(tmp_path)
    abs_before = set(Path("/tmp").glob("ESCAPE_ABS*"))
    argv = ["report", str(root), "--out", str(out), "--latex", str(latex), "--figures", str(figures), "--no-data"]
    assert main(argv) == 0
    capsys.readouterr()
    written = _tree(tmp_path) - before
    assert written and all(p == out or latex in p.parents or figures in p.parents or p in (latex, figures)
                           for p in written), sorted(map(str, written))  # fmt: skip
    assert set(Path("/tmp").glob("ESCAPE_ABS*")) == abs_before
    assert all(p.parent in (latex, figures) for p in written if p.is_file() and p != out)
    assert all(len(p.name.encode()) <= 255 for p in written)
    tex_files = sorted(latex.glob("*.tex"))
    assert len(tex_files) == len(HOSTILE)  # one table per data set, none lost to a collision or a failure
    for path in tex_files:
        text = path.read_text(encoding="utf-8")
        assert "\\typeout{INJECTED}" not in text and "\x1b" not in text and "\x01" not in text
        for label in re.findall(r"\\label\{([^}]*)\}", text):
            assert re.fullmatch(r"[A-Za-z0-9:._\-]+", label)
    index = json.loads((latex / INDEX).read_text(encoding="utf-8"))
    assert sorted(index.values()) == sorted(f"{d}-one-shot" for d in HOSTILE)  # the mapping back to each name
    assert set(index) == {p.name for p in tex_files}
    figure_index = json.loads((figures / INDEX).read_text(encoding="utf-8"))
    assert set(figure_index) == {p.name for p in figures.iterdir() if p.name != INDEX}
    assert len([n for n in figure_index if n.endswith(".png")]) >= len(HOSTILE)
    html = out.read_text(encoding="utf-8")
    assert "pop[bold]" in html and "knn/../x" in html  # system names keep their slash (the data set's is split off)


# ---------------------------------------------------------------- receval run with a hostile name
@pytest.fixture
def constant_protocol():
    @register_protocol("test-constant", uses_recommenders=False, needs_metrics=False)
    def constant(task, dataset) -> TaskOutput:
        return TaskOutput(aggregates={"ratings": float(dataset.data.n_ratings)})

    yield constant
    del PROTOCOLS["test-constant"]


@pytest.mark.parametrize(
    "name", ["../../ESCAPE_RUN", "/tmp/ESCAPE_RUN_ABS", "a/b", "x}\\typeout{INJECTED}%", "N" * 250]
)
def test_run_with_a_hostile_name_keeps_the_default_store_under_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], constant_protocol, name: str
) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    config = work / "c.toml"
    config.write_text(
        f"name = {json.dumps(name)}\n"
        '[datasets."../data/x"]\ngenerate = { n_users = 20, n_items = 20, n_ratings = 100 }\n'
        '[protocol]\nname = "test-constant"\n',
        encoding="utf-8",
    )
    before = _tree(tmp_path)
    assert main(["run", str(config)]) == 0
    capsys.readouterr()
    written = _tree(tmp_path) - before
    (store,) = [p for p in written if p.parent == work / "results"]
    assert store.name == safe_name(name) and all(work / "results" in p.parents or p == work / "results"
                                                 for p in written)  # fmt: skip
    assert json.loads((store / "experiment.json").read_text(encoding="utf-8"))["name"] == name  # the mapping back
    assert not Path("/tmp/ESCAPE_RUN_ABS").exists()
    assert pd.read_parquet(store / "tasks.parquet")["dataset"].tolist() == ["../data/x"]
    assert os.path.commonpath([*written]) == str(work / "results")


@pytest.mark.parametrize(("task_id", "table"), [("../x", "aggregates"), ("t1", "a/b"), ("t1", "x.y"), ("/abs", "t")])
def test_the_store_refuses_ids_and_table_names_that_are_not_one_file_name(
    tmp_path: Path, task_id: str, table: str
) -> None:
    store = ResultStore(tmp_path / "exp")
    with pytest.raises(ValueError, match="cannot be part of a file name"):
        store.write_task(task_id, {"status": "ok"}, {table: pd.DataFrame({"metric": ["m"], "value": [1.0]})})
    assert _tree(tmp_path) <= {tmp_path / "exp", tmp_path / "exp" / "parts"}  # nothing written, nowhere
