"""The evaluation card: what a run did, in enough detail to rerun it bit for bit (``card.json`` of every run).

:func:`build_card` gathers, from a validated configuration: the data sets (where they were
read, the content hash of every file read — the run's own :func:`~receval.experiment.datasets.input_hashes` —,
the generator's recipe), their preprocessing (filters), the split, the protocol with every
option (defaults included), the library convention and the resolved metric strings, the
seeds, the significance test and correction ``receval compare`` applies by default, the
versions of receval and its dependencies, and the protocol's findings
(:func:`~receval.experiment.check.config_findings`). ``config_toml`` is the effective
configuration, ``config_folder`` where its relative data paths are read: :func:`card_config` parses it back, and
running it (``receval run``) reproduces the run's table (Gundersen & Kjensmo, "State of the
art: reproducibility in artificial intelligence", AAAI 2018, list what such a record holds).

Examples
--------
>>> from receval.experiment.config import parse_config
>>> text = 'seeds = 2\\nmetrics = ["ndcg@10"]\\n[datasets.toy]\\ngenerate = { n_users = 30, n_items = 20 }\\n'
>>> cfg = parse_config(text + '[protocol]\\nname = "one-shot"\\n[recommenders.popularity]\\n', path="demo.toml")
>>> card = build_card(cfg, {"receval": "0"})
>>> card["seeds"], card["protocol"]["options"]["k"], card_config(card).hash == cfg.hash
([0, 1], 10, True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from receval import jsontext
from receval.experiment.check import config_findings, toml_text
from receval.experiment.config import ExperimentConfig, parse_config
from receval.experiment.datasets import input_hashes
from receval.experiment.protocols import get_protocol
from receval.experiment.store import data_paths

__all__ = ["CARD_FILE", "build_card", "card_config", "write_card"]

CARD_FILE = "card.json"
"""The card's file name in a run's output folder."""


def _folder(cfg: ExperimentConfig) -> str | None:
    """The absolute folder the configuration's relative data paths are read from (None: no data path)."""
    base = next((spec.base for spec in cfg.datasets.values() if spec.base is not None), None)
    return None if base is None else str(Path(base).resolve())


def build_card(
    cfg: ExperimentConfig, versions: Mapping[str, str], tests: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The evaluation card of configuration ``cfg`` run with ``versions`` (JSON-able).

    ``tests``: the significance test and correction the run's results are compared with by default
    (the runner's ``compare`` defaults).
    """
    hashes = input_hashes(cfg)
    paths = data_paths(cfg.datasets)
    proto = get_protocol(cfg.protocol.name)
    config = json.loads(json.dumps(dict(cfg.effective)))
    return {
        "name": cfg.name,
        "config_hash": cfg.hash,
        "source": cfg.source,
        "data": {
            label: {
                "name": spec.name,
                "path": paths.get(label),
                "format": spec.format,
                "options": dict(spec.options),
                "generate": None if spec.generate is None else dict(spec.generate),
                "content_hash": hashes.get("datasets", {}).get(label),
                "test_content_hash": hashes.get("test_path", {}).get(label),
            }
            for label, spec in cfg.datasets.items()
        },
        "preprocessing": {label: dict(spec.filters) for label, spec in cfg.datasets.items()},
        "split": dict(cfg.split),
        "protocol": {"name": proto.name, "options": proto.defaults() | dict(cfg.protocol.options)},
        "conventions": {
            "convention": cfg.convention,
            "thresholds": {label: spec.threshold for label, spec in cfg.datasets.items()},
        },
        "metrics": list(cfg.metrics),
        "tests": {"run": "none: receval run stores per-user values; receval compare tests them", **(tests or {})},
        "seeds": list(cfg.seeds),
        "tune": None if cfg.tune is None else {"seed": cfg.tune.seed, "trials": cfg.tune.trials},
        "versions": dict(versions),
        "findings": [f.as_dict() for f in config_findings(cfg)],
        "config": config,
        "config_toml": toml_text(config),
        "config_folder": _folder(cfg),
    }


def card_config(card: Mapping[str, Any], folder: str | Path | None = None) -> ExperimentConfig:
    """The configuration a card records, parsed and validated again (run it to reproduce the run).

    Relative data paths are read from ``folder`` (default: the configuration's folder, ``config_folder``):
    give another folder when the data moved with the card. The configuration's hash is the run's.
    """
    base = Path(folder if folder is not None else card.get("config_folder") or ".")
    return parse_config(str(card["config_toml"]), path=str(base / Path(str(card.get("source", "card.toml"))).name))


def write_card(
    root: str | Path, cfg: ExperimentConfig, versions: Mapping[str, str], tests: Mapping[str, Any] | None = None
) -> Path:
    """Write ``root/card.json`` (:func:`build_card`) atomically and return its path."""
    from receval.atomic import write_text

    card = build_card(cfg, versions, tests)
    return write_text(Path(root) / CARD_FILE, jsontext.dumps(card, indent=2, sort_keys=True) + "\n")
