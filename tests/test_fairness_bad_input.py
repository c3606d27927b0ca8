"""The bad input of the fairness measures through the CLI: one line naming it, exit 2, before any file is written.

The Python-only inputs (a target distribution by group name, K sampled rankings) are refused in
tests/test_exposure.py (``test_a_target_given_by_group_name``, ``test_sampler_refuses_bad_input``).
"""

from __future__ import annotations

import pytest

from receval.cli import main

TRUTH = "user,item,rating\n1,a,5\n1,b,2\n2,a,4\n2,c,5\n3,b,5\n4,c,4\n"
RECS = "user,item,score\n1,b,0.9\n1,a,0.1\n2,c,.5\n2,b,.4\n3,b,1\n3,a,.5\n4,a,1\n4,c,.2\n"
TRAIN = "user,item,rating\n1,c,5\n2,b,4\n3,a,4\n4,b,3\n"
ASPECTS = "item,aspect\na,x\nb,y\nc,x\n"


@pytest.mark.parametrize(
    ("metric", "extra", "groups", "message"),
    [
        ("recall@2", [], "user,group\n1,F\n2,F\n3,F\n4,F\n", "name one group only (F)"),
        ("recall@2", [], "user,group\n1,F\n2,M\n3,M\n", "1 users of the truth have no group in --user-groups (e.g. 4)"),
        ("recall@2", ["--group-test", "ttest"], "user,group\n1,F\n2,F\n3,M\n4,M\n", "--group-test must be one of"),
        ("recall@2", ["--unknown-group", "x"], None, "--unknown-group applies with --user-groups"),
        ("aplt@2(tail=1.5)", [], None, "the head/tail cut tail must be in (0, 1), got 1.5"),
        ("aclt@2(tail=0)", [], None, "the head/tail cut tail must be in (0, 1), got 0"),
        ("arp@2", ["--no-train"], None, "metric 'arp@2' needs training data: pass --train"),
        ("miscalibration@2", ["--no-aspects"], None, "metric 'miscalibration@2' needs item aspects: pass --aspects"),
        ("miscalibration@2(alpha=2)", [], None, "alpha must be in (0, 1] for divergence=kl"),
        ("awrf@2(target=zipf)", [], None, "target must be one of uniform, catalogue, relevance"),
        ("expected_exposure@2(gamma=1)", [], None, "the patience gamma must be in (0, 1), got 1"),
        ("delta_gap@2(user_share=0.6)", [], None, "user_share must be in (0, 0.5), got 0.6"),
    ],
)
def test_evaluate_refuses_in_one_line(tmp_path, capsys, metric: str, extra: list[str], groups, message: str) -> None:
    for name, text in {"t": TRUTH, "r": RECS, "tr": TRAIN, "asp": ASPECTS}.items():
        (tmp_path / f"{name}.csv").write_text(text)
    argv = ["evaluate", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "r.csv"), "--metrics", metric,
            "--threshold", "4", "--per-user", str(tmp_path / "out.csv")]  # fmt: skip
    argv += [] if "--no-train" in extra else ["--train", str(tmp_path / "tr.csv")]
    argv += [] if "--no-aspects" in extra else ["--aspects", str(tmp_path / "asp.csv")]
    argv += [e for e in extra if not e.startswith("--no-")]
    if groups is not None:
        (tmp_path / "g.csv").write_text(groups)
        argv += ["--user-groups", str(tmp_path / "g.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "out.csv").exists()  # refused before any work


@pytest.mark.parametrize("level", ["0", "-0.1", "1.5", "nan"])
def test_compare_refuses_a_cvar_level_outside_the_unit_interval(tmp_path, capsys, level: str) -> None:
    (tmp_path / "t.csv").write_text(TRUTH)
    (tmp_path / "r.csv").write_text(RECS)
    argv = ["compare", "--truth", str(tmp_path / "t.csv"), str(tmp_path / "r.csv"), str(tmp_path / "r.csv"),
            "--metrics", "recall@2", "--threshold", "4", "--distribution", "--cvar-level", level]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "--cvar-level must lie in (0, 1]" in err and "\n" not in err
