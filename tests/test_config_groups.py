"""``groups =`` in an experiment configuration: checked before any task, a gap table per one-shot task, the report.

The stored gaps are checked against scipy's Welch test and the group means recomputed from the run's own
per-user table, so the table is the same computation ``receval evaluate --user-groups`` prints.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from receval.cli import main
from receval.errors import ConfigError
from receval.experiment import parse_config, run_experiment
from receval.experiment.config import load_config
from receval.stats.groups import GAPS_FRAME_COLUMNS

CONFIG = """\
metrics = ["ndcg@10", "arp@10"]
seeds = [0, 1]
[datasets.toy]
generate = { n_users = 60, n_items = 40, n_ratings = 900, seed = 1 }
[protocol]
name = "one-shot"
[recommenders.popularity]
"""


def _groups(folder, users=range(1, 61), extra: str = "") -> None:
    lines = ["user,group", *(f"{u},{'odd' if u % 2 else 'even'}" for u in users)]
    (folder / "g.csv").write_text("\n".join(lines) + "\n" + extra)


def test_each_task_stores_the_gaps_of_its_per_user_values(tmp_path) -> None:
    _groups(tmp_path, extra="999,odd\n")
    (tmp_path / "exp.toml").write_text(CONFIG + '[groups]\npath = "g.csv"\n')  # relative to the file's folder
    with pytest.warns(UserWarning, match=r"1 users in groups file 'g.csv' are not in data set 'toy' \(e.g. 999\)"):
        report = run_experiment(tmp_path / "exp.toml", out=tmp_path / "run", processes=False)
    assert report.ok == 2 and report.failed == 0
    gaps = report.store.read("groups")
    per_user = report.store.read("per_user")
    assert list(gaps.columns) == ["task_id", *GAPS_FRAME_COLUMNS]
    assert set(gaps["task_id"]) == set(per_user["task_id"]) and set(gaps["metric"]) == {"ndcg@10", "arp@10"}
    for (task, metric), rows in gaps.groupby(["task_id", "metric"]):
        values = per_user[(per_user["task_id"] == task) & (per_user["metric"] == metric)].dropna(subset="value")
        odd = values["user"].astype(int) % 2 == 1
        even_v, odd_v = values.loc[~odd, "value"].to_numpy(), values.loc[odd, "value"].to_numpy()
        mine = rows.set_index("group")
        assert mine.loc["even", "mean"] == pytest.approx(even_v.mean(), rel=1e-12)
        assert mine.loc["odd", "n"] == len(odd_v)
        assert mine["gap"].iloc[0] == pytest.approx(even_v.mean() - odd_v.mean(), rel=1e-12)  # even < odd by name
        assert mine["p_value"].iloc[0] == pytest.approx(stats.ttest_ind(even_v, odd_v, equal_var=False).pvalue)
        assert mine["ci_low"].iloc[0] <= mine["gap"].iloc[0] <= mine["ci_high"].iloc[0]
        assert mine["test"].iloc[0] == "Welch's t-test"
    # Holm across the two metrics of one task: the smaller p doubled, the larger at least that
    one = gaps.drop_duplicates(["task_id", "metric"])
    for _, task in one.groupby("task_id"):
        p = np.sort(task["p_value"].to_numpy())
        assert np.sort(task["p_value_adj"].to_numpy())[0] == pytest.approx(min(1.0, 2 * p[0]))
    from receval.report.html import build_report

    page = build_report(tmp_path / "run", dataset_overview=False).read_text(encoding="utf-8")
    assert "toy: gaps between user groups" in page and 'id="group-gaps-toy"' in page
    assert "Further tables (not shown): groups" not in page and "section '" not in page


def test_unknown_group_pools_and_a_string_names_the_file(tmp_path) -> None:
    _groups(tmp_path, users=range(1, 31))
    text = CONFIG.replace("seeds = [0, 1]", "seeds = [0]")
    (tmp_path / "exp.toml").write_text(f'groups = {{ path = "g.csv", unknown_group = "rest", test = "mannwhitney" }}\n'
                                       f"{text}")  # fmt: skip
    report = run_experiment(tmp_path / "exp.toml", out=tmp_path / "run", processes=False)
    gaps = report.store.read("groups")
    assert set(gaps["group"]) == {"even", "odd", "rest"}
    assert set(gaps["gap_kind"]) == {"range"} and set(gaps["test"]) == {"Kruskal–Wallis H test"}
    (tmp_path / "short.toml").write_text('groups = "g.csv"\n' + text)
    assert load_config(tmp_path / "short.toml").groups.path == "g.csv"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("groups", "content", "line", "message"),
    [
        ('groups = "none.csv"', None, 1, "groups file '"),
        ('groups = "g.csv"', "user,group\n1,a\n2,a\n", 1, "names one group only (a)"),
        ('groups = "g.csv"', "user,sex\n1,a\n2,b\n", 1, "need columns user, group"),
        (
            '[groups]\npath = "g.csv"\ntest = "welsh"',
            "",
            10,
            "groups test 'welsh' is not one of welch, mannwhitney, permutation; did you mean 'welch'?",
        ),
        (
            '[groups]\npath = "g.csv"\nunknown = "x"',
            "",
            10,
            "unknown key 'unknown' in [groups]; valid keys: path, test, unknown_group; did you mean 'unknown_group'?",
        ),
        ("[groups]\ntest = 'welch'", "", 8, "[groups] needs path"),
        ('groups = "g.csv"\n[tune]\ntrials = 2', "", 1, "not to a [tune] section"),
    ],
)
def test_bad_groups_say_what_and_where(tmp_path, groups: str, content: str | None, line: int, message: str) -> None:
    if content == "":
        _groups(tmp_path)
    elif content is not None:
        (tmp_path / "g.csv").write_text(content)
    top, _, table = groups.partition("\n") if groups.startswith("groups") else ("", "", groups)
    (tmp_path / "exp.toml").write_text(f"{top}\n{CONFIG}{table}\n" if top else f"{CONFIG}{table}\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "exp.toml")
    assert message in err.value.message and err.value.line == line


def test_another_protocol_is_refused() -> None:
    text = 'groups = "g.csv"\nmetrics = ["recall"]\n[datasets.toy]\ngenerate = { n_users = 9 }\n'
    with pytest.raises(ConfigError, match="groups apply to the one-shot protocol's evaluations, not to protocol 'cy"):
        parse_config(text + '[protocol]\nname = "cyclic"\n[recommenders.popularity]\n')


def test_data_users_without_a_group_stop_receval_run_before_any_task(tmp_path, capsys) -> None:
    _groups(tmp_path, users=range(1, 59))
    (tmp_path / "exp.toml").write_text(CONFIG + '[groups]\npath = "g.csv"\n')
    assert main(["run", str(tmp_path / "exp.toml"), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert "line 9: 2 users of data set 'toy' have no group in groups file 'g.csv' (e.g. 59, 60)" in err
    assert "groups unknown_group = NAME" in err
    assert not (tmp_path / "run" / "parts").exists()


def test_a_group_too_small_on_the_test_users_leaves_the_metric_out() -> None:
    from receval.stats.groups import group_gaps, group_gaps_frame

    table = pd.DataFrame({"user": [1, 2, 3, 4, 5], "m": [1.0, 2.0, 3.0, 4.0, 5.0], "n": [1.0, 2, 3, 4, np.nan]})
    groups = pd.Series({1: "a", 2: "a", 3: "a", 4: "b", 5: "b"})
    with pytest.raises(Exception, match="every group needs at least 2 users"):
        group_gaps(table, groups)
    frame = group_gaps_frame(group_gaps(table, groups, skip_undefined=True))
    assert set(frame["metric"]) == {"m"} and frame["p_value_adj"].tolist() == frame["p_value"].tolist()


def test_a_changed_groups_file_is_other_work_not_a_resume(tmp_path) -> None:
    _groups(tmp_path)
    (tmp_path / "exp.toml").write_text('groups = "g.csv"\n' + CONFIG)
    assert run_experiment(tmp_path / "exp.toml", out=tmp_path / "run", processes=False).ok == 2
    again = run_experiment(tmp_path / "exp.toml", out=tmp_path / "run", processes=False)  # unchanged: a resume
    assert again.ok == 0 and again.failed == 0
    (tmp_path / "g.csv").write_text("user,group\n" + "".join(f"{u},{'a' if u < 30 else 'b'}\n" for u in range(1, 61)))
    with pytest.raises(ConfigError, match=r"the groups file 'g.csv' changed since \(sha256 .*force=True"):
        run_experiment(tmp_path / "exp.toml", out=tmp_path / "run", processes=False)
