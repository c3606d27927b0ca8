"""The ``ope`` protocol in the experiment runner: a tiny configuration run end to end, its options checked."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from receval.cli import main

CONFIG = """\
name = "ope-small"
seeds = [0, 1]

[datasets.toy]
generate = { n_users = 40, n_items = 15, n_ratings = 300, seed = 3 }
threshold = 4

[split]
method = "holdout"
test_fraction = 0.5

[protocol]
name = "ope"
logging = "softmax:0.5"
targets = ["random", "greedy", "egreedy:0.2"]
rounds = 800
bootstrap = 20
"""


def test_ope_protocol_runs_stores_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from receval.simulate.logged import policy_table, policy_value, reward_matrix
    from receval.split import holdout
    from receval.studies.ope import ope_study

    cfg = tmp_path / "ope.toml"
    cfg.write_text(CONFIG)
    out = tmp_path / "out"
    assert main(["run", str(cfg), "--out", str(out)]) == 0
    report = capsys.readouterr().out
    assert "2 ok, 0 failed" in report and "error[ips]" in report  # the run report shows the aggregates
    agg = pd.read_parquet(out / "aggregates.parquet")
    names = set(agg["metric"])
    for k in ("dm", "ips", "snips", "dr", "switch", "dros"):
        assert {f"error[{k}]", f"kendall_tau[{k}]", f"coverage[{k}]", f"width[{k}]"} <= names
    rows = pd.read_parquet(out / "ope_estimates.parquet")
    assert {"estimator", "policy", "estimate", "low", "high", "truth", "ess", "max_weight", "overlap"} <= set(rows)
    # the stored values are those of the study called directly on the same split, seed 0
    from receval.data.synthetic import generate

    data = generate(n_users=40, n_items=15, n_ratings=300, seed=3)
    train, test = holdout(data, 0.5, seed=0)
    direct = ope_study(train, test, logging="softmax:0.5", targets=["random", "greedy", "egreedy:0.2"],
                       threshold=4, rounds=800, seed=0, n_bootstrap=20)  # fmt: skip
    tasks = pd.read_parquet(out / "tasks.parquet")
    seed0 = agg[agg["task_id"] == tasks.loc[tasks["seed"] == 0, "task_id"].iloc[0]].set_index("metric")["value"]
    assert seed0["error[ips]"] == pytest.approx(direct.error["ips"])
    rewards, actions = reward_matrix(test, 4)
    greedy = policy_value(policy_table("greedy", train, test, threshold=4), rewards, actions)
    assert seed0["truth[greedy]"] == pytest.approx(greedy)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ('targets = ["random", "bogus:1"]', "protocol.targets: 'bogus:1'"),
        ('logging = "nosuch"', "protocol.logging: 'nosuch'"),
        ("targets = []", "no target policy"),
        ("rounds = 0", "protocol.rounds"),
        ("bootstrap = -1", "protocol.bootstrap"),
        ("clip = -2.0", "protocol.clip"),
    ],
)
def test_ope_protocol_refuses_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str], option, message) -> None:
    drop = (
        'targets = ["random", "greedy", "egreedy:0.2"]\n',
        'logging = "softmax:0.5"\n',
        "rounds = 800\n",
        "bootstrap = 20\n",
    )
    text = CONFIG
    for line in drop:
        text = text.replace(line, "")
    text += option + "\n"
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    assert main(["run", str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr()
    assert message in err.out + err.err
    assert not (tmp_path / "out").exists()
