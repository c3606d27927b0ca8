"""What is registered does not depend on what was imported first (each check in a fresh interpreter).

The built-in metrics, estimators and protocols register where they are defined, and their
packages (``receval.metrics``, ``receval.experiment``) import the modules they list before
any of their modules can be used. Each case runs the same lookup after a different first
import and must give the same answer, which is also checked against a value worked out by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from receval.errors import MetricError
from receval.metrics._definition import Metric
from receval.metrics._input import MetricInput

_FIRST_IMPORTS = (
    "import receval.metrics._definition",
    "import receval.metrics.debiased",
    "import receval.evaluation",
    "import receval.experiment.config",
    "import receval.cli.app",
)

# one user, items 0 and 1 relevant (ratings 5 and 4, threshold 4) with propensities 0.5 and 0.25,
# so inverse-propensity weights 2 and 4; the list ranks item 0 first
_DEBIASED = """
import json
import numpy as np, scipy.sparse as sp
from receval.metrics._definition import Metric
from receval.metrics._input import MetricInput
from receval.metrics.debiased import Propensities
p = Propensities(truth=np.array([0.5, 0.25]), population=2.0, model="known")
data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4, propensities={"known": p})
recall = Metric.of("recall", 1, estimator="ips", propensity="known")
precision = Metric.of("precision", 1, estimator="ips", propensity="known")
print(json.dumps([recall.compute(data), precision.per_user(data).tolist(), Metric.of("recall", 1).compute(data)]))
"""

_PROTOCOLS = """
import json
from receval.experiment.protocols import get_protocol, protocol_names
print(json.dumps([protocol_names(), get_protocol("attack").options["size"][1], get_protocol("cyclic").name]))
"""


def _fresh(first: str, code: str) -> list:
    """The JSON printed by ``code`` run in a new interpreter right after ``first``."""
    done = subprocess.run([sys.executable, "-c", f"{first}\n{code}"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("first", _FIRST_IMPORTS)
def test_debiased_metric_is_the_same_whatever_was_imported_first(first):
    # IPS recall@1 = w(item 0) / (w(0) + w(1)) = 2 / 6; IPS precision@1 = w(0) / 1 = 2; naive recall@1 = 1 / 2
    assert _fresh(first, _DEBIASED) == [pytest.approx(1 / 3), [2.0], 0.5]


@pytest.mark.parametrize("first", _FIRST_IMPORTS)
def test_protocol_lookup_is_the_same_whatever_was_imported_first(first):
    names, attack_size, cyclic = _fresh(first, _PROTOCOLS)
    assert names == [
        "attack",
        "coherence-barrier",
        "coherence-split",
        "cyclic",
        "debiased",
        "metaeval",
        "one-shot",
        "ope",
        "sampled",
    ]
    assert (attack_size, cyclic) == (0.05, "cyclic")


def test_metric_table_is_complete_from_the_definition_module_alone():
    code = "import json\nfrom receval.metrics._definition import available_metrics as names\nprint(json.dumps(names()))"
    names = _fresh("", code)
    assert {"ndcg", "recall", "rmse", "alpha_ndcg", "gini"} <= set(names)
    assert names == sorted(names) == _fresh("import receval.metrics.registry", code)


def test_a_debiasing_parameter_is_never_computed_naively():
    # without the propensities the estimator needs, the value is refused, not the naive one returned
    data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4)
    metric = Metric.of("recall", 1, estimator="ips", propensity="known")
    assert metric.debiased and not Metric.of("recall", 1).debiased
    with pytest.raises(MetricError, match="needs propensities 'known'"):
        metric.compute(data)
    with pytest.raises(MetricError, match="unknown estimator 'magic'"):
        Metric.of("recall", 1, estimator="magic").per_user(data)


def test_naive_estimator_equals_the_plain_metric():
    # the list ranks item 1 (relevant) first: recall@1 = 1 / 2, precision@1 = 1 / 1
    data = MetricInput(np.array([[1, 0]]), sp.csr_matrix(np.array([[5.0, 4.0]])), threshold=4)
    for name, value in (("recall", 0.5), ("precision", 1.0)):
        assert Metric.of(name, 1, estimator="naive").compute(data) == Metric.of(name, 1).compute(data) == value
