"""HTML/LaTeX reports and figures: content, significance marks against scipy + statsmodels, bad result dirs."""

from __future__ import annotations

import base64
import io
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _report_data as rd
from receval.cli import main
from receval.errors import DataError
from receval.report import figures as F
from receval.report.html import build_report, latex_table, report_from_tables, significance_marks
from receval.report.style import OKABE_ITO, figure, save, svg_text


def _pngs(html: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r'src="data:image/png;base64,([^"]+)"', html)]


def _images(html: str) -> list[np.ndarray]:
    import matplotlib.image as mpimg

    return [mpimg.imread(io.BytesIO(png), format="png") for png in _pngs(html)]


def _notices(html: str) -> str:
    m = re.search(r'<div class="notice" id="notices">(.*?)</div>', html, re.S)
    return m.group(1) if m else ""


@pytest.fixture(scope="module")
def oneshot_report(tmp_path_factory):
    root = rd.one_shot(tmp_path_factory.mktemp("res") / "oneshot")
    tex = root.parent / "tex"
    path = build_report(root, root / "r.html", latex_dir=tex, figures_dir=root.parent / "figs")
    return root, path.read_text(), tex


def test_oneshot_report_tables_figures_and_marks(oneshot_report):
    root, html, tex = oneshot_report
    for i in range(3):
        assert f"sys{i}(k={i})" in html
    assert "partial" not in _notices(html)
    images = _images(html)
    # data overview, metric bars, precision-recall (two cutoffs), slice heatmaps (2 metrics)
    assert len(images) == 5
    assert all(im.shape[0] > 100 and im.shape[1] > 100 and im.std() > 0 for im in images)
    table = re.search(r'<table id="summary-synthetic-one-shot">.*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
    # sys2 has the highest values (best, bold) except for fallout@10 (lower is better: sys0 best)
    assert 'class="best"' in rows[2] and "†" not in rows[2].split("</td>")[1]
    assert "†" in rows[0].split("</td>")[1]  # sys0 vs sys2 on precision@5: far apart
    fallout = [r.split("</td>")[6] for r in rows]
    assert 'class="best"' in fallout[0] and "↓" in table
    tex_text = (tex / "synthetic-one-shot.tex").read_text()
    assert r"\toprule" in tex_text and r"\bottomrule" in tex_text and r"\textbf{" in tex_text
    assert r"$^\dagger$" in tex_text and r"sys0(k=0)" in tex_text
    assert sorted(p.suffix for p in (root.parent / "figs").iterdir()).count(".svg") == 5
    # the page embeds the very PNG files written beside it, one per figure
    assert sorted(_pngs(html)) == sorted(p.read_bytes() for p in (root.parent / "figs").glob("*.png"))


def test_significance_marks_match_scipy_and_statsmodels():
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    frames = [
        pd.DataFrame({"system": s, "user": np.arange(40), "metric": "m", "value": rng.normal(mu, 0.3, 40)})
        for s, mu in (("a", 0.5), ("b", 0.45), ("c", 0.2))
    ]
    pu = pd.concat(frames, ignore_index=True)
    ours = significance_marks(pu, "m", "a")
    raw = [stats.ttest_rel(frames[i]["value"], frames[0]["value"]).pvalue for i in (1, 2)]
    expected = multipletests(raw, method="holm")[1]
    assert ours["b"] == pytest.approx(expected[0], rel=1e-9)
    assert ours["c"] == pytest.approx(expected[1], rel=1e-9)


def test_bootstrap_table_matches_significance_bootstrap():
    from receval.stats.significance import bootstrap_ci

    rng = np.random.default_rng(0)
    v = rng.random(50)
    pu = pd.DataFrame({"system": "s", "user": np.arange(50), "metric": "m", "value": v})
    row = F.bootstrap_table(pu, n_resamples=500, seed=4).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == bootstrap_ci(v, n_resamples=500, seed=4)
    assert row["mean"] == pytest.approx(v.mean())


def test_partial_result_dir_says_what_is_missing(tmp_path):
    root = rd.one_shot(tmp_path / "partial", write=2)  # 2 of 6 tasks, combined tables never rebuilt
    html = build_report(root, tmp_path / "r.html").read_text()
    assert "partial results: 2 of 6 tasks finished" in _notices(html)
    assert "sys0(k=0)" in html and "sys1(k=1)" not in html


@pytest.mark.parametrize("case", ["missing", "empty", "meta-only", "old"])
def test_bad_result_dirs_never_crash(tmp_path, case):
    root = tmp_path / "res"
    if case == "empty":
        root.mkdir()
    elif case == "meta-only":
        root.mkdir()
        (root / "experiment.json").write_text(json.dumps({"name": "x", "config_hash": "h", "n_tasks": 3}))
    elif case == "old":  # an older layout: no experiment.json, tasks without dataset/protocol columns
        root.mkdir()
        pd.DataFrame({"task_id": ["a", "b"], "label": ["pop seed=0", "rand seed=0"], "status": "ok"}).to_parquet(
            root / "tasks.parquet"
        )
        pd.DataFrame({"task_id": ["a", "b"], "metric": "ndcg@10", "value": [0.3, 0.1]}).to_parquet(
            root / "aggregates.parquet"
        )
    html = build_report(root, tmp_path / "r.html").read_text()
    notices = _notices(html)
    assert notices, "a bad result dir must give a visible notice"
    if case == "old":
        assert "pop" in html and "no experiment.json" in notices and "no &#x27;dataset&#x27; column" in notices
    else:
        assert "no finished task" in notices
    assert not _images(html) or all(im.size for im in _images(html))


def test_cyclic_coherence_metaeval_reports(tmp_path):
    html = build_report(rd.cyclic(tmp_path / "cyc"), tmp_path / "c.html").read_text()
    assert "Kendall τ-b between the rankings by Recall and by Fallout" in html  # no preset: the standard τ-b
    assert "cumulative and normalised metrics" in html and "bandit3()" in html
    assert len(_images(html)) == 4  # data set, curves, tau, ranks
    html = build_report(rd.coherence(tmp_path / "coh"), tmp_path / "h.html").read_text()
    assert "RMSE change relative to All-All" in html and 'id="coherence-synthetic"' in html
    html = build_report(rd.metaeval(tmp_path / "me"), tmp_path / "m.html").read_text()
    for caption in ("number of swaps", "discriminative power", "incomplete judgments"):
        assert caption in html
    assert "ab_ndcg@10" in html


def test_cli_report(tmp_path, capsys):
    root = rd.cyclic(tmp_path / "cyc", systems=2, rounds=5)
    assert (
        main(["report", str(root), "--out", str(tmp_path / "x.html"), "--latex", str(tmp_path / "tex"), "--no-data"])
        == 0
    )
    out = capsys.readouterr().out
    assert "report written to" in out
    assert (tmp_path / "x.html").exists() and (tmp_path / "tex" / "synthetic-cyclic.tex").exists()
    written = sorted(p.name for p in (tmp_path / "tex").glob("*.tex"))
    assert f"{len(written)} LaTeX table(s) in {tmp_path / 'tex'}" in out
    assert sorted(json.loads((tmp_path / "tex" / "index.json").read_text())) == written
    assert not list(tmp_path.glob(".*tmp*"))  # atomic writes leave no temporary file


def test_cli_report_says_when_no_latex_table_was_written(tmp_path, capsys):
    root = tmp_path / "res"  # a store that has started but finished no task: nothing to tabulate
    root.mkdir()
    (root / "experiment.json").write_text(json.dumps({"name": "x", "config_hash": "h", "n_tasks": 3}))
    assert main(["report", str(root), "--latex", str(tmp_path / "tex"), "--no-data"]) == 0
    out = capsys.readouterr().out
    assert (
        "no LaTeX table written: " in out
        and "has no successful task to tabulate" in out
        and "LaTeX table(s) in" not in out
    )
    assert not list((tmp_path / "tex").glob("*.tex"))
    assert json.loads((tmp_path / "tex" / "index.json").read_text()) == {}


def test_report_from_tables_demo_shape(tmp_path):
    from receval.data.stats import dataset_stats
    from receval.data.synthetic import generate

    data = generate(n_users=50, n_items=60, n_ratings=800, seed=0)
    tables = {
        "stats": dataset_stats(data),
        "one_shot": pd.DataFrame({"ndcg@10": [0.1, 0.3], "fallout@10": [0.2, 0.1]}, index=["random", "pop"]),
        "cyclic": pd.DataFrame({"recall": [0.1, 0.2]}, index=["random", "ts"]),
        "kendall_tau": {"recall_fallout": -1.0},
    }
    html = report_from_tables(tables, tmp_path / "demo.html", latex_dir=tmp_path / "tex").read_text()
    assert "pop" in html and "ts" in html and "Recall vs Fallout -1.00" in html
    assert len(_images(html)) == 3 and "no per-user values" in _notices(html)
    assert (tmp_path / "tex" / "one_shot.tex").exists()


def test_latex_escaping_and_best():
    frame = pd.DataFrame({"rmse": [0.9, 0.8], "ndcg@10": [0.3, 0.1], "a_b%": [1.0, 2.0]}, index=["x&y", "z"])
    tex = latex_table(frame)
    assert r"x\&y" in tex and r"a\_b\%" in tex
    # rmse: lower is better; ndcg: higher; a column with no better direction is never bold
    assert r"x\&y & 0.9000 & \textbf{0.3000} & 1.0000" in tex
    assert r"z & \textbf{0.8000} & 0.1000 & 2.0000" in tex


def test_figures_refuse_empty_input_and_use_the_palette(tmp_path):
    with pytest.raises(DataError):
        F.metric_bars(pd.DataFrame(columns=["system", "metric", "mean", "ci_low", "ci_high"]))
    with pytest.raises(DataError, match="two algorithms"):
        F.rank_plot({"recall": pd.DataFrame({"a": [1.0, 1.0]})})
    with pytest.raises(DataError, match="undefined"):
        F.tau_plot(pd.DataFrame({"round": [1, 2], "recall_fallout": [np.nan, np.nan]}))
    fig = F.tau_plot(pd.DataFrame({"round": [1, 2], "recall_fallout": [0.5, -0.2]}))
    assert fig.axes[0].get_lines()[0].get_color().upper() == OKABE_ITO[0]
    svg = svg_text(fig)
    assert "<svg" in svg and "Kendall" in svg  # text kept as text
    paths = save(fig, tmp_path / "tau")
    assert [p.suffix for p in paths] == [".png", ".svg"] and all(p.stat().st_size > 0 for p in paths)
    fig, axes = figure(2, 3)
    assert axes.shape == (2, 3)


def test_report_names_damaged_tasks_and_leaves_them_out(tmp_path) -> None:
    from receval.experiment.store import ResultStore
    from receval.report.html import build_report

    root = tmp_path / "results"
    rd.one_shot(root, systems=2, seeds=2, users=20, slices=False)
    store = ResultStore(root)
    victim = sorted(store.finished_ids())[0]
    part = next(store.parts.glob(f"{victim}.*.parquet"))
    part.write_bytes(b"not parquet")
    html = build_report(root, tmp_path / "r.html", dataset_overview=False).read_text()
    assert "1 damaged task(s)" in html and victim in html
    assert victim not in set(store.read_parts("task")["task_id"])


def _tau_a(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-a by its definition: (concordant − discordant) pairs over all n(n − 1)/2 pairs."""
    n = len(x)
    signs = [np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n)]
    return float(sum(signs) / (n * (n - 1) / 2))


def test_trajectory_tau_figure_uses_the_variant_and_names_it(monkeypatch):
    from scipy.stats import kendalltau

    from receval.report import html as H

    # a tie in Recall at round 1 (s0, s1): τ-a = 2/3 and τ-b = 2/√6 differ
    recall = np.array([[0.1, 0.1, 0.3], [0.2, 0.3, 0.1]])
    fallout = np.array([[0.05, 0.02, 0.01], [0.03, 0.03, 0.01]])
    mean = pd.DataFrame(
        [
            {"system": f"s{s}", "round": r + 1, "recall": recall[r, s], "fallout": fallout[r, s]}
            for s in range(3)
            for r in range(2)
        ]
    )
    drawn: list[pd.DataFrame] = []
    plot = F.tau_plot
    monkeypatch.setattr(H.F, "tau_plot", lambda taus: drawn.append(taus) or plot(taus))
    labels: list[str] = []
    close = H.close_figure
    monkeypatch.setattr(H, "close_figure", lambda fig: labels.append(fig.axes[0].get_ylabel()) or close(fig))
    expected = {
        "a": [_tau_a(recall[r], -fallout[r]) for r in range(2)],  # a lower fallout ranks higher
        "b": [kendalltau(recall[r], -fallout[r], variant="b").statistic for r in range(2)],
    }
    assert expected["a"][0] == pytest.approx(2 / 3) and expected["b"][0] == pytest.approx(2 / np.sqrt(6))
    for variant in ("a", "b"):
        rep = H.Report(title="t")
        drawn.clear()
        labels.clear()
        H._trajectory_figures(rep, "toy", mean, variants={f"s{s}": variant for s in range(3)})
        np.testing.assert_allclose(drawn[0]["recall_fallout"], expected[variant])
        figure = next(p for p in rep.parts if 'id="fig-toy-tau"' in p)
        assert f"Kendall τ-{variant} between the rankings" in figure
        assert f"Kendall τ-{variant} (" in labels[1]  # the τ figure's axis, after the curves
        assert not rep.notices
    rep = H.Report(title="t")
    H._trajectory_figures(rep, "toy", mean)  # no variant given: the standard preset's
    assert any("Kendall τ-b between the rankings" in p for p in rep.parts)


_CYCLIC = """\
name = "tau"
metrics = ["recall", "fallout"]
[datasets.toy]
generate = { n_users = 30, n_items = 20, n_ratings = 300, seed = 3 }
threshold = 4
[recommenders.pop]
algorithm = "popularity"
[recommenders.rand]
algorithm = "random"
[recommenders.eg]
algorithm = "item-bandit-egreedy"
[protocol]
name = "cyclic"
rounds = 3
"""


@pytest.mark.parametrize(
    ("protocol", "figures"),
    [
        ('preset = "thesis"\n', {"toy-tau": "a"}),  # the thesis preset's τ-a
        ('preset = "thesis"\ntau = "b"\n', {"toy-tau": "b"}),  # [protocol] tau wins over the preset
        ("", {"toy-tau": "b"}),
        ('tau = ["a", "b"]\n', {"toy-tau-a": "a", "toy-tau-b": "b"}),  # a grid over tau: one figure per variant
    ],
)
def test_cyclic_report_takes_tau_from_the_configuration(tmp_path, protocol, figures):
    from receval.experiment import parse_config, run_experiment

    out = tmp_path / "results"
    run_experiment(parse_config(_CYCLIC + protocol), out=out, processes=False)
    html = build_report(out, tmp_path / "r.html", dataset_overview=False).read_text()
    found = dict(re.findall(r'<figure id="fig-(toy-tau[^"]*)"><img alt="toy: Kendall τ-([ab]) between', html))
    assert found == figures
