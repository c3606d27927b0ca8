"""Every example configuration in examples/ runs with --quick (real-data ones skip without ../shared/data)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from receval.cli import main
from receval.experiment import expand, load_config

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))


def _needs_shared_data(path: Path) -> list[str]:
    return re.findall(r'path = "(/work/shared/data/[^"]+)"', path.read_text())


def test_quickstart_is_a_grid_of_at_least_20_tasks() -> None:
    cfg = load_config(Path(EXAMPLES[0]).parent / "quickstart.toml")
    assert len(expand(cfg)) >= 20
    assert all(spec.generate is not None for spec in cfg.datasets.values())  # no download needed


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_configs_validate(path: Path) -> None:
    assert len(expand(load_config(path))) >= len(expand(load_config(path, quick=True))) >= 1


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_quick(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for folder in _needs_shared_data(path):
        if not Path(folder).exists():
            pytest.skip(f"real data not available: {folder}")
    status = main(["run", str(path), "--out", str(tmp_path / "out"), "--quick"])
    out = capsys.readouterr().out
    assert status == 0, out
    tasks = pd.read_parquet(tmp_path / "out" / "tasks.parquet")
    assert len(tasks) == len(expand(load_config(path, quick=True))) and set(tasks["status"]) == {"ok"}
    assert len(pd.read_parquet(tmp_path / "out" / "aggregates.parquet")) >= len(tasks)
