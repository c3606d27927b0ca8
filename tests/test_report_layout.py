"""The shipped examples' reports look finished: complete, and no text of a figure overlaps another or leaves it.

Every figure a report embeds is rendered as the report renders it while
:meth:`matplotlib.text.Text.draw` records the window extent and size of each text actually
drawn (tick labels outside the view are never drawn, so they are not counted); two boxes
that intersect by more than a pixel each way, a box reaching past the figure's edge, or
a text smaller than :data:`MIN_POINTS` as the page shows it (a figure wider than the
page is scaled down to its width, its text with it) is a layout fault. Across the
figures of one report, a labelled line or a named bar (a system, a metric, a model) must
keep one colour.
"""

from __future__ import annotations

import html
import itertools
import re
import sys
from pathlib import Path

import matplotlib.colors
import matplotlib.text
import pytest

import receval.report.html as H
from receval.cli import main
from receval.report.style import figure, png_bytes
from receval.report.tune import is_tune_folder, report_tune_folder

sys.path.insert(0, str(Path(__file__).parent))
EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))
_TOLERANCE = 1.0  # pixels: boxes that only touch are fine
MIN_POINTS = 7.0  # the smallest text a report page may show, in points (the style's legend size)


def layout_problems(fig) -> list[str]:
    """Overlapping texts and texts outside the figure, as the figure renders to PNG."""
    drawn: dict[int, tuple[str, object]] = {}
    points: dict[int, float] = {}
    size: list[tuple[float, float]] = []
    original = matplotlib.text.Text.draw

    def draw(self, renderer):
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn[id(self)] = (self.get_text(), self.get_window_extent(renderer))
            points[id(self)] = self.get_fontsize()
            size.append(renderer.get_canvas_width_height())

    matplotlib.text.Text.draw = draw
    try:
        png_bytes(fig)
    finally:
        matplotlib.text.Text.draw = original
    problems = []
    width, height = size[0] if size else (fig.bbox.width, fig.bbox.height)
    for text, box in drawn.values():
        if box.x0 < -_TOLERANCE or box.y0 < -_TOLERANCE or box.x1 > width + _TOLERANCE or box.y1 > height + _TOLERANCE:
            problems.append(f"{text!r} reaches outside the figure ({box.bounds} in {width:.0f}x{height:.0f})")
    shown = min(1.0, H._PAGE_PX / width)  # the page scales a wider figure down to its width
    for key, (text, _) in drawn.items():
        if points[key] * shown < MIN_POINTS - 0.05:
            problems.append(f"{text!r} shows at {points[key] * shown:.1f} pt ({points[key]:g} pt at {shown:.0%})")
    for (a, box_a), (b, box_b) in itertools.combinations(drawn.values(), 2):
        dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if dx > _TOLERANCE and dy > _TOLERANCE:
            problems.append(f"{a!r} overlaps {b!r}")
    return problems


def colours(fig) -> dict[str, str]:
    """``{label: colour}`` of the figure's labelled lines and named bars (a bar's gid is its system)."""
    out: dict[str, str] = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                out[line.get_label()] = matplotlib.colors.to_hex(line.get_color())
        for patch in ax.patches:
            if patch.get_gid():
                out[patch.get_gid()] = matplotlib.colors.to_hex(patch.get_facecolor())
    return out


def colour_problems(fig, seen: dict[str, str]) -> list[str]:
    """The figure's labels drawn in another colour than in the figures before it (``seen``, updated)."""
    problems = []
    for label, colour in colours(fig).items():
        if seen.setdefault(label, colour) != colour:
            problems.append(f"{label!r} is {colour} here and {seen[label]} in an earlier figure")
    return problems


@pytest.fixture
def checked(monkeypatch):
    """Every figure embedded in a report is checked; returns {caption-less figure number: problems}."""
    found: dict[str, list[str]] = {}
    seen: dict[str, str] = {}  # label -> colour, over every figure drawn in the test
    render = H.png_bytes

    def png(fig):
        title = next((t.get_text() for ax in fig.axes if (t := ax.title).get_text()), f"figure {len(found) + 1}")
        problems = layout_problems(fig) + colour_problems(fig, seen)
        if problems:
            found[f"{len(found) + 1}: {title}"] = problems
        return render(fig)

    monkeypatch.setattr(H, "png_bytes", png)
    return found


def test_the_check_finds_overlaps_and_clipping():
    fig, axes = figure(1, 1)
    ax = axes[0][0]
    ax.text(0.5, 0.5, "first label", transform=ax.transAxes)
    ax.text(0.52, 0.5, "second label", transform=ax.transAxes)
    ax.set_xlabel("a label far too long for its figure " * 4)
    problems = layout_problems(fig)
    assert any("'first label' overlaps 'second label'" in p for p in problems)
    assert any("outside the figure" in p for p in problems)
    fig, axes = figure(1, 2)
    for ax in axes[0]:
        ax.set(title="a title", xlabel="an x label", ylabel="a y label")
    assert layout_problems(fig) == []
    fig, axes = figure(1, 1, width=H._PAGE_PX / 100 * 2)  # twice the page: 10 pt shows at 5 pt
    axes[0][0].set_title("squeezed", fontsize=10)
    assert any("'squeezed' shows at 5.0 pt" in p for p in layout_problems(fig))


def test_the_colour_check_finds_a_system_recoloured():
    import pandas as pd

    from receval.report.figures import metric_bars, precision_recall

    seen: dict[str, str] = {}
    bars = pd.DataFrame({"system": ["a", "b"], "metric": "ndcg@10", "mean": [0.1, 0.2], "ci_low": 0.0, "ci_high": 0.3})
    assert colour_problems(metric_bars(bars), seen) == [] and set(seen) == {"a", "b"}
    summary = pd.DataFrame({"precision@10": [0.1, 0.2], "recall@10": [0.3, 0.4]}, index=["b", "a"])
    assert len(colour_problems(precision_recall(summary), seen)) == 2  # each system takes the other's colour
    styles = {"a": {"color": seen["a"]}, "b": {"color": seen["b"]}}
    assert colour_problems(precision_recall(summary, styles=styles), seen) == []


def test_slice_groups_are_named_with_their_ranges():
    import pandas as pd

    from receval.report.figures import slice_heatmap

    means = pd.DataFrame(
        {
            "dimension": "user",
            "slice": "activity",
            "group": ["q1", "q2", "q1", "q2"],
            "system": ["a", "a", "b", "b"],
            "metric": "ndcg@10",
            "value": [0.1, 0.2, 0.3, 0.4],
            "low": [3.0, 18.0, 3.0, 18.0],
            "high": [17.0, 240.0, 17.0, 240.0],
        }
    )
    ax = slice_heatmap(means, "ndcg@10").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["q1\n3–17", "q2\n18–240"]
    assert "training ratings per user" in ax.get_xlabel()
    plain = slice_heatmap(means.drop(columns=["low", "high"]), "ndcg@10").axes[0]
    assert [t.get_text() for t in plain.get_xticklabels()] == ["q1", "q2"]


def _notices(page: str) -> str:
    match = re.search(r'<div class="notice" id="notices">(.*?)</div>', page, re.S)
    return match.group(1) if match else ""


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_quick_and_reports_legibly(example, tmp_path, checked, capsys):
    """One quick run of each shipped example: its results (test_examples_experiments.py's checks), then its report."""
    from test_examples_experiments import check_quick_run, require_data

    require_data(example)
    assert main(["run", str(example), "--out", str(tmp_path / "out"), "--quick"]) == 0, capsys.readouterr().out
    check_quick_run(example, tmp_path / "out")
    build = report_tune_folder if is_tune_folder(tmp_path / "out") else H.build_report
    page = build(tmp_path / "out", tmp_path / "report.html").read_text()
    assert checked == {}
    assert page.count("<figure") >= 1
    if example.stem == "quickstart":  # the example a new user opens first: nothing missing
        assert _notices(page) == ""


@pytest.mark.slow
def test_demo_report_is_legible(tmp_path, checked):
    from receval.cli.demo import TITLES, run_demo

    tables = run_demo(users=300, items=400, ratings=12_000, rounds=20)
    titles = {key: title.format(rounds=20) for key, title in TITLES.items()}
    page = H.report_from_tables(tables, tmp_path / "report.html", titles=titles).read_text()
    assert checked == {}
    assert page.count("<figure") >= 4 and _notices(page) == ""
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert headings[1:4] == [html.escape(titles[k]) for k in ("one_shot", "rmse", "cyclic")]
    assert "cumulative and normalised metrics vs round" in page  # the simulation round by round
    assert "Precision vs AntiPrecision" in page and "anti vs" not in page


def test_a_report_names_no_figure_its_metrics_do_not_allow(tmp_path, checked):
    import _report_data as rd

    root = rd.one_shot(tmp_path / "results", systems=3, seeds=1, users=40, metrics=("ndcg@10", "recall@20"))
    page = H.build_report(root, tmp_path / "report.html").read_text()
    assert checked == {} and _notices(page) == ""
    assert "precision vs recall" not in page and "<h2>synthetic: One-shot evaluation</h2>" in page


def test_compare_report_is_legible(tmp_path, checked):
    import numpy as np
    import pandas as pd

    from receval.report.compare import compare_report
    from receval.studies.compare import compare_runs

    rng = np.random.default_rng(3)
    truth = pd.DataFrame({"user": np.repeat(np.arange(50), 8), "item": rng.integers(0, 100, 400), "rating": 5})
    truth = truth.drop_duplicates(["user", "item"])
    runs = {
        name: pd.DataFrame({"user": np.repeat(np.arange(50), 10), "item": rng.integers(0, 100, 500), "rank": 1})
        .drop_duplicates(["user", "item"])
        .assign(rank=lambda f: f.groupby("user").cumcount() + 1)
        for name in ("bm25", "item-knn(k=50,similarity=cosine)", "popularity")
    }
    metrics = ["ndcg@10", "precision@10", "recall@10", "mrr", "coverage@10"]
    result = compare_runs(runs, truth, metrics, test="permutation")
    page = compare_report(result, tmp_path / "cmp.html", truth="qrels").read_text()
    assert checked == {} and page.count("<figure") == 1 and _notices(page) == ""


def test_study_figures_are_legible():
    from receval.data.synthetic import generate
    from receval.recommenders import make
    from receval.report.figures import coherence_curves
    from receval.report.studies import attack_curves
    from receval.studies.attacks import attack_experiment
    from receval.studies.partitions import coherence_split_experiment

    data = generate(n_users=120, n_items=80, n_ratings=3_000, n_aspects=6, seed=5)
    frame = attack_experiment(
        data, ["average", "love-hate"], [0.03, 0.1], ["item-knn", "random"], n_targets=1, filler=8, metrics=()
    )
    assert layout_problems(attack_curves(frame)) == []
    split = coherence_split_experiment(data, {"biases": make("biases"), "IB": make("item-knn")}, (0.2, 0.8), folds=2)
    assert layout_problems(coherence_curves(split.table.reset_index(), folds=2)) == []
