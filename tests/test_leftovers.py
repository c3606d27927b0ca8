"""Small correctness fixes noticed in review: strict JSON, duplicate names, ids, grids and output folders."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from receval import jsontext


def _strict(text: str) -> Any:
    """``text`` parsed as JSON by a parser that refuses ``NaN`` and ``Infinity``, as jq and JSON.parse do."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _expected(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _expected(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_expected(v) for v in value]
    return float(value) if math.isfinite(value) else None


_numbers = st.floats(allow_nan=True, allow_infinity=True) | st.floats().map(np.float64) | st.just(np.float32("inf"))
_values = st.recursive(
    _numbers, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
)


@given(_values)
def test_jsontext_is_strict_json_with_every_non_finite_number_null(value: Any) -> None:
    assert _strict(jsontext.dumps(value)) == _expected(value)


def test_evaluate_json_writes_infinity_as_null_like_nan(capsys: pytest.CaptureFixture[str]) -> None:
    from receval.cli.evaluate import _report

    result = SimpleNamespace(
        summary={"ndcg@10": 0.5, "gap": float("inf"), "lift": -float("inf"), "recall@10": float("nan")},
        conventions=SimpleNamespace(to_dict=lambda: {"cold_start": "empty"}),
    )
    _report(result, None, "json")  # type: ignore[arg-type]
    body = _strict(capsys.readouterr().out)
    assert body == {
        "ndcg@10": 0.5,
        "gap": None,
        "lift": None,
        "recall@10": None,
        "conventions": {"cold_start": "empty"},
    }


def test_json_tables_write_infinity_as_null() -> None:
    from receval.cli.output import Table, render

    table = Table(["metric", "value"], [["gap", float("inf")], ["lift", np.float64("-inf")], ["p", float("nan")]])
    assert _strict(render(table, "json"))["rows"] == [["gap", None], ["lift", None], ["p", None]]


# ---------------------------------------------------------------- --unknown-group naming a group of the file

TRUTH = "user\titem\trating\n" + "".join(f"{u}\t{1 + u % 2}\t5\n" for u in range(1, 7))
RECS = "user\titem\tscore\n" + "".join(f"{u}\t{1 + (u % 3 == 0)}\t1\n" for u in range(1, 7))
GROUPS = "user,group\n1,a\n2,a\n3,b\n4,b\n"


def test_unknown_group_naming_a_group_of_the_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--unknown-group a with a group 'a' in the file merged users 5 and 6 into 'a' (counts a=4), silently."""
    from receval.cli import main

    for name, text in (("t.tsv", TRUTH), ("r.tsv", RECS), ("g.csv", GROUPS)):
        (tmp_path / name).write_text(text)
    argv = ["evaluate", "--truth", str(tmp_path / "t.tsv"), "--recs", str(tmp_path / "r.tsv"), "--metrics", "ndcg@3",
            "--user-groups", str(tmp_path / "g.csv"), "--unknown-group"]  # fmt: skip
    assert main([*argv, "a"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        "error: --unknown-group a is already a group of --user-groups, so the users without a group would join it; "
        "give --unknown-group a name no group has, e.g. 'other'"
    )
    assert main([*argv, "other", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"]["ndcg@3"]["counts"] == {"a": 2, "b": 2, "other": 2}


def test_align_groups_refuses_an_unknown_group_named_like_a_group() -> None:
    from receval.errors import ConfigError
    from receval.stats.groups import align_groups

    with pytest.raises(ConfigError, match=r"^unknown_group='b' is already a group of the user groups"):
        align_groups([1, 2, 3, 4, 5], {1: "a", 2: "a", 3: "b", 4: "b"}, unknown_group="b")


def test_config_unknown_group_named_like_a_group_is_refused_at_its_line(tmp_path: Path) -> None:
    from receval.errors import ConfigError
    from receval.experiment.config import load_config

    (tmp_path / "g.csv").write_text(GROUPS)
    (tmp_path / "exp.toml").write_text(
        'metrics = ["ndcg@10"]\n[datasets.toy]\ngenerate = { n_users = 6, n_items = 4, n_ratings = 20, seed = 1 }\n'
        '[protocol]\nname = "one-shot"\n[recommenders.popularity]\n[groups]\npath = "g.csv"\nunknown_group = "a"\n'
    )
    with pytest.raises(
        ConfigError, match=r"exp\.toml, line 9: groups unknown_group='a' is already a group of '.*g\.csv'"
    ):
        load_config(tmp_path / "exp.toml")


# ---------------------------------------------------------------- an algorithm named twice

RATINGS = "user,item,rating\n" + "".join(
    f"{u},{i},{1 + (u * i) % 5}\n" for u in range(1, 21) for i in range(1, 16) if (u + i) % 3
)


@pytest.mark.parametrize(
    "argv",
    [["sampled", "--n", "5", "--repeats", "2", "--split", "holdout"], ["simulate", "--rounds", "2"]],
    ids=["sampled", "simulate"],
)
def test_an_algorithm_named_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """sampled and simulate keyed their systems by name: the second 'popularity' was dropped, silently (exit 0)."""
    from receval.cli import main

    (tmp_path / "d.csv").write_text(RATINGS)
    args = [*argv, "--data", str(tmp_path / "d.csv"), "--format", "csv", "--algorithms", "popularity,random,popularity"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        "error: --algorithms popularity,random,popularity: 'popularity' is named twice; name each once"
    )


def test_simulate_many_refuses_a_name_given_twice() -> None:
    from receval import Interactions
    from receval.errors import ConfigError
    from receval.simulate import simulate_many

    data = Interactions.from_arrays([0, 1, 0, 0, 1, 1], [0, 1, 1, 2, 0, 2], [5, 5, 4, 1, 2, 5])
    with pytest.raises(ConfigError, match=r"^algorithms=random,random: 'random' is named twice"):
        simulate_many(["random", "random"], data.subset([0, 1]), data.subset([2, 3, 4, 5]), rounds=2, threshold=4)


# ---------------------------------------------------------------- a grid listing a value twice

GRID = """\
metrics = ["ndcg@5"]
seeds = [0]
[datasets.toy]
generate = { n_users = 50, n_items = 40 }
[protocol]
name = "one-shot"
k = [10]
[recommenders.item-knn]
params = { k = [20, 30] }
"""


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("k = [10]", "k = [10, 10]", r"line 7: protocol option 'k' lists 10 twice \(\[10, 10\]\)"),
        ("[20, 30]", "[20, 30, 20.0]", r"line 9: \[recommenders.item-knn\] parameter 'k' lists 20.0 twice"),
        ("seeds = [0]", "seeds = [3, 1, 3]", r"line 2: seeds lists 3 twice \(\[3, 1, 3\]\)"),
    ],
)
def test_a_grid_value_listed_twice_is_refused_naming_file_line_key_and_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, message: str
) -> None:
    """k = [10, 10] ran every task of k=10 twice (four tasks, two ids with the parameter grid as well)."""
    from receval.cli import main

    (tmp_path / "exp.toml").write_text(GRID.replace(old, new))
    assert main(["check", str(tmp_path / "exp.toml")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith(f"error: {tmp_path / 'exp.toml'}, ")
    assert err.endswith("the grid would run the same tasks twice; list each value once")
    assert re.search(message, err)


# ---------------------------------------------------------------- ids that are lists or dicts


@pytest.mark.parametrize(
    ("column", "cells", "shown"),
    [
        ("user", [1, 2, [3, 4]], "user id [3, 4] of row 2 is a list"),
        ("item", ["a", {"b": 1}, {"b": 1}], "item id {'b': 1} of row 1 is a dict"),
        ("item", [1, (2, 3), 4], "item id (2, 3) of row 1 is a tuple"),
    ],
)
@pytest.mark.parametrize("arrow", [False, True], ids=["pandas", "arrow"])
def test_from_frame_refuses_ids_that_hold_several_values(
    column: str, cells: list[Any], shown: str, arrow: bool
) -> None:
    """A list or dict in an id cell was kept as the id '[3, 4]' (its text), silently."""
    import pandas as pd

    from receval import Interactions
    from receval.errors import DataError

    frame: Any = pd.DataFrame({"user": [1, 2, 3], "item": ["x", "y", "z"], "rating": [1.0, 2.0, 3.0]})
    frame[column] = pd.Series(cells, dtype=object)
    if arrow:
        if isinstance(cells[1], tuple | dict) and column == "item":
            pytest.skip("Arrow has no column of mixed scalars and tuples or structs")
        import pyarrow as pa

        frame = pa.Table.from_pandas(frame.assign(**{column: [c if isinstance(c, list) else [c] for c in cells]}))
        shown = f"{column} id [{cells[0]!r}] of row 0 is a list"
    with pytest.raises(DataError, match=f"^column {column}: {re.escape(shown)}, not one id; give one id"):
        Interactions.from_frame(frame)


# ---------------------------------------------------------------- power with a tiny alpha and few users


def test_power_mde_with_a_tiny_alpha_and_three_users_is_the_noncentral_t_root() -> None:
    """power --alpha 1e-12 with 3 users took 15 s (scipy's noncentral t series at nc ~ 1e6) and, past where that series
    converges, gave an MDE of 577364 sd where the power is 0.63, not 0.8."""
    from scipy import stats

    from receval.stats.power import power_analysis

    result = power_analysis(np.array([0.0, 2**0.5, 2**0.5]), effect=0.1, alpha=1e-12, power=0.8)
    crit = float(stats.t.isf(0.5e-12, 2))
    nc = result.mde / result.sd * 3**0.5
    # df = 2: |T| > crit is V < 2 ((Z + nc) / crit)^2 with V ~ chi2(2), whose cdf is 1 - exp(-x / 2); Z / crit < 1e-5
    assert 1 - math.exp(-((nc / crit) ** 2)) == pytest.approx(0.8, abs=1e-6)
    assert result.power == pytest.approx(1e-12, rel=0.1)  # an effect of 0.1 is nothing against crit ~ 1e6


def test_power_cli_with_a_tiny_alpha_prints_strict_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from receval.cli import main

    (tmp_path / "t.csv").write_text("user,item\n1,a\n2,b\n3,a\n")
    (tmp_path / "r.csv").write_text("user,item,rank\n1,a,1\n2,a,1\n3,b,1\n3,a,2\n")
    argv = ["power", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "r.csv"), "--metric", "recall@10",
            "--effect", "0.1", "--alpha", "1e-12", "--json"]  # fmt: skip
    assert main(argv) == 0
    body = _strict(capsys.readouterr().out)
    assert body["n_users"] == 3 and body["mde"] == pytest.approx(0.8164965809 * 732447.475, rel=1e-6)


# ---------------------------------------------------------------- --out folders: an earlier run's files


def test_simulate_out_removes_its_own_file_that_this_run_does_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """best_per_algorithm.csv of a run with two configurations of one algorithm stayed beside the tables of a run
    with none, as if that run had selected them; a file the command never writes stays."""
    from receval.cli import main

    (tmp_path / "d.csv").write_text(RATINGS)
    out = tmp_path / "out"
    args = ["simulate", "--data", str(tmp_path / "d.csv"), "--format", "csv", "--rounds", "2", "--out", str(out)]
    assert main([*args, "--algorithms", "popularity,popularity@again,random"]) == 0
    assert (out / "best_per_algorithm.csv").is_file()
    (out / "notes.txt").write_text("mine")
    assert main([*args, "--algorithms", "popularity,random"]) == 0
    capsys.readouterr()
    assert not (out / "best_per_algorithm.csv").exists()
    assert (out / "notes.txt").read_text() == "mine" and (out / "final.csv").is_file()


def test_report_removes_only_the_tables_an_earlier_report_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report --latex kept an earlier report's tables (another run's metrics) beside the new ones."""
    import _report_data as rd
    from receval.cli import main

    root = rd.cyclic(tmp_path / "cyc", systems=2, rounds=5)
    tex = tmp_path / "tex"
    tex.mkdir()
    (tex / "index.json").write_text(json.dumps({"old-run.tex": "a table of another run"}))
    (tex / "old-run.tex").write_text("old")
    (tex / "mine.tex").write_text("not the report's")
    assert main(["report", str(root), "--out", str(tmp_path / "x.html"), "--latex", str(tex), "--no-data"]) == 0
    capsys.readouterr()
    written = sorted(p.name for p in tex.glob("*.tex"))
    assert "old-run.tex" not in written and "mine.tex" in written
    assert sorted(json.loads((tex / "index.json").read_text())) == [n for n in written if n != "mine.tex"]


def test_a_ranx_json_run_refuses_an_infinite_score(tmp_path: Path) -> None:
    """A ranx JSON run held {"2": -Infinity}: invalid JSON, and ranx has no score of null."""
    import pandas as pd

    from receval.data.writers import write_table
    from receval.errors import DataError

    run = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "score": [3.0, -np.inf], "rank": [1, 2]})
    with pytest.raises(DataError, match=r"r\.json: score -inf of user 1, item 'b' is not a finite number"):
        write_table(run, tmp_path / "r.json", format="ranx-json")
    assert not (tmp_path / "r.json").exists()
    write_table(run.iloc[:1], tmp_path / "r.json", format="ranx-json")
    assert _strict((tmp_path / "r.json").read_text()) == {"1": {"a": 3.0}}


def test_power_mde_at_alpha_1e_100_is_computed_not_refused() -> None:
    """At alpha = 1e-100 (6 users) scipy's noncentral t gave NaN and the request was refused; the integral computes it.

    With crit ~ 1.8e20, Z / crit vanishes: |T| > crit is V < 5 (nc / crit)^2, so nc = crit sqrt(chi2.ppf(0.8, 5) / 5).
    """
    from scipy import stats

    from receval.stats.power import ttest_mde

    crit = float(stats.t.isf(0.5e-100, 5))
    expected = crit * math.sqrt(stats.chi2.ppf(0.8, 5) / 5) / math.sqrt(6)
    assert ttest_mde(sd=1.0, n=6, alpha=1e-100) == pytest.approx(expected, rel=1e-9)
