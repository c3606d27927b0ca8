"""``[tune.validation] method = "temporal"``: the tuner's parts are time-ordered (fit < validation cut <= test cut)."""

from __future__ import annotations

import numpy as np

from receval.experiment.config import parse_config
from receval.experiment.tune import _carve, _split_parts

_CONFIG = """
metrics = ["ndcg@10"]
[datasets.toy]
generate = { n_users = 60, n_items = 40, n_ratings = 900, seed = 1 }
[split]
method = "temporal"
test_fraction = 0.2
[tune]
trials = 2
[tune.validation]
method = "temporal"
test_fraction = 0.25
[recommenders.biases]
space = { item_damping = { float = [0.1, 100], log = true } }
"""


def test_temporal_validation_is_cut_before_the_test_cut():
    from receval.experiment.datasets import prepare_dataset

    cfg = parse_config(_CONFIG)
    data = prepare_dataset(cfg.datasets["toy"]).data
    train, held = _split_parts(cfg, "toy", data, seed=0)
    test = held.open()
    parts = _carve(cfg, train, seed=0)
    fit, validation = parts.fit, parts.validation
    # no fit event after the validation cut, no validation event after the test cut (synthetic pairs are unique)
    assert fit.timestamps.max() <= validation.timestamps.min()
    assert validation.timestamps.max() <= test.timestamps.min()
    assert len(fit) + len(validation) == len(train) and len(train) + len(test) == len(data)
    assert len(validation) == round(0.25 * len(train)) and len(test) == round(0.2 * len(data))
    assert np.all(fit.timestamps < np.median(test.timestamps))
