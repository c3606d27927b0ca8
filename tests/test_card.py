"""The evaluation card (card.json): written by every run, and rerunning its configuration reproduces the run's table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pandas.testing as pdt

from receval.experiment.card import CARD_FILE, card_config
from receval.experiment.datasets import input_hashes
from receval.experiment.runner import run_experiment, summarise, versions


def _config(folder: Path) -> Path:
    rng = np.random.default_rng(3)
    rows = [
        (u, i, int(rng.integers(1, 6)), 1000 + u * 20 + i) for u in range(40) for i in range(20) if rng.random() < 0.6
    ]
    (folder / "data").mkdir()
    pd.DataFrame(rows, columns=["user", "item", "rating", "timestamp"]).to_csv(folder / "data" / "r.csv", index=False)
    text = (
        'name = "card"\nseeds = 2\nmetrics = ["ndcg@5", "recall@5"]\nconvention = "lenskit"\n'
        '[datasets.d]\npath = "data/r.csv"\nformat = "csv"\nfilters = { min_user_ratings = 2 }\n'
        "[datasets.g]\ngenerate = { n_users = 40, n_items = 30, n_ratings = 600, seed = 2 }\n"
        '[split]\nmethod = "per-user"\ntest_fraction = 0.25\n'
        '[protocol]\nname = "one-shot"\nk = 5\nthreshold = 3\n'
        "[recommenders.popularity]\n[recommenders.item-knn]\nparams = { k = [5, 10] }\n"
    )
    (folder / "c.toml").write_text(text)
    return folder / "c.toml"


def test_card_records_the_run_and_reruns_it_exactly(tmp_path: Path) -> None:
    path = _config(tmp_path)
    report = run_experiment(path, out=tmp_path / "a", processes=False)
    card = json.loads((tmp_path / "a" / CARD_FILE).read_text(encoding="utf-8"))
    cfg = report.config
    assert card["config_hash"] == cfg.hash
    assert card["data"]["d"]["content_hash"] == input_hashes(cfg)["datasets"]["d"]  # the run's own data hash
    assert card["data"]["d"]["path"] == str((tmp_path / "data" / "r.csv").resolve())
    assert card["data"]["g"]["generate"] == {"n_users": 40, "n_items": 30, "n_ratings": 600, "seed": 2}
    assert card["preprocessing"] == {"d": {"min_user_ratings": 2}, "g": {}}
    assert card["split"] == {"method": "per-user", "test_fraction": 0.25}
    assert card["protocol"]["options"]["k"] == 5 and card["protocol"]["options"]["cold_start"] == "empty"
    assert card["conventions"]["convention"] == "lenskit" and card["metrics"] == list(cfg.metrics)
    assert card["metrics"][1] != "recall@5"  # the preset's resolved metric string, not the word written
    assert card["seeds"] == [0, 1] and card["versions"] == versions()
    assert card["tests"]["compare_default_test"] == "ttest" and card["tests"]["compare_default_correction"] == "holm"
    assert [f["rule"] for f in card["findings"]] == ["R003", "R004", "R006"]
    # rerun from the card alone, from another folder (the config file moved away): the same table, bit for bit
    (tmp_path / "c.toml").unlink()
    again = run_experiment(card_config(card), out=tmp_path / "b", processes=False)
    assert again.config.hash == cfg.hash
    table = summarise(report.store)
    assert len(table) == 6 and table["n"].eq(2).all()  # 2 data sets x 3 configurations, 2 seeds each
    pdt.assert_frame_equal(summarise(again.store), table, check_exact=True)
    first, second = report.store.read("per_user"), again.store.read("per_user")
    keys = list(first.columns[:-1])
    first, second = (f.sort_values(keys).reset_index(drop=True) for f in (first, second))
    pdt.assert_frame_equal(first, second, check_exact=True)


def test_report_shows_the_card(tmp_path: Path) -> None:
    from receval.report.html import build_report

    run_experiment(_config(tmp_path), out=tmp_path / "a", processes=False)
    page = build_report(tmp_path / "a", out=tmp_path / "report.html").read_text(encoding="utf-8")
    card = json.loads((tmp_path / "a" / CARD_FILE).read_text(encoding="utf-8"))
    assert 'id="card"' in page and card["data"]["d"]["content_hash"] in page and "R004" in page
