"""A tuning run killed with SIGKILL resumes from its study: finished trials kept, none repeated, the same results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")

from receval.experiment.tune import tune_experiment  # noqa: E402

# 14 trials: TPE's 10 random start-up trials, then 4 drawn from its model of the finished ones,
# so the resumed part exercises TPE itself; a trial takes a few tenths of a second
_CONFIG = """
metrics = ["ndcg@10"]
[datasets.toy]
generate = { n_users = 1500, n_items = 1000, n_ratings = 60000, seed = 2 }
[split]
method = "per-user"
[tune]
trials = 14
seed = 1
[recommenders.mf]
params = { epochs = 2 }
space = { factors = { int = [2, 64] }, regularization = { float = [0.001, 0.5], log = true } }
"""


def _complete(storage: str) -> list:
    names = optuna.study.get_all_study_names(storage)
    if not names:
        return []
    study = optuna.load_study(study_name=names[0], storage=storage)
    return [t for t in study.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.COMPLETE]


@pytest.mark.slow
def test_sigkill_then_resume_equals_uninterrupted_tpe_run(tmp_path: Path) -> None:
    cfg = tmp_path / "tune.toml"
    cfg.write_text(_CONFIG)
    reference = tune_experiment(cfg, out=tmp_path / "reference")
    out = tmp_path / "out"
    storage = f"sqlite:///{(out / 'tune.sqlite3').resolve()}"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from receval.cli.app import entry; entry()", "tune", str(cfg), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        start_new_session=True,
    )
    lines: list[str] = []  # the trial lines on stderr: the storage is read only after the run made it
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, b"")), daemon=True)
    reader.start()
    try:
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None and sum(b" trial " in x for x in lines) < 3:
            time.sleep(0.05)
        assert proc.poll() is None, f"the run ended before it could be killed: {b''.join(lines).decode()}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = [(t.number, t.params, t.value) for t in _complete(storage)]
    assert 3 <= len(before) < 14
    assert not (out / "tune.json").exists()  # nothing of the results was published
    resumed = tune_experiment(cfg, out=out)
    after = _complete(storage)
    assert [(t.number, t.params, t.value) for t in after][: len(before)] == before  # kept, not run again
    assert len(after) == 14 and len({t.number for t in after}) == 14
    # trial for trial the uninterrupted study: the same parameters and validation values in the same order
    cols = ["trial", "params", "value", "best_so_far"]
    assert resumed.trials[cols].to_dict("records") == reference.trials[cols].to_dict("records")
    assert json.dumps(resumed.summary, sort_keys=True, default=str) == json.dumps(
        reference.summary | {"algorithms": {
            k: v | {"trial_seconds": resumed.summary["algorithms"][k]["trial_seconds"]}
            for k, v in reference.summary["algorithms"].items()
        }}, sort_keys=True, default=str,
    )  # fmt: skip
