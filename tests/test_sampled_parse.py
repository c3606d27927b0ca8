"""A correction that assumes uniform sampling, asked with popularity sampling, is refused when the metric is parsed."""

from __future__ import annotations

import pytest

from receval.cli import main
from receval.errors import ConfigError, MetricError
from receval.metrics import Metric, parse_metric
from receval.stats.sampled import check_correction
from receval.vocabulary import SAMPLED_CORRECTIONS, UNIFORM_ONLY_CORRECTIONS


def test_the_issue_example_is_one_line_naming_the_parameters_and_the_fix():
    text = "recall@10(sampled=100,sampling=popularity,correction=bv)"
    with pytest.raises(MetricError) as info:
        parse_metric(text)
    message = str(info.value)
    assert message == (
        f"metric {text!r}: correction=bv assumes uniformly sampled negatives, but sampling=popularity; "
        "write sampling=uniform or correction=none"
    )


@pytest.mark.parametrize("correction", SAMPLED_CORRECTIONS)
def test_the_metrics_layer_refuses_what_the_estimators_refuse(correction):
    # the vocabulary's set and the estimators' own check (receval.stats.sampled) must agree on every word
    text = f"hr@5(sampled=50,sampling=popularity,exponent=0.5,correction={correction})"
    try:
        check_correction(correction, "recall", sampling="popularity")
    except ConfigError:
        refused_by_stats = True
    else:
        refused_by_stats = False
    assert refused_by_stats == (correction in UNIFORM_ONLY_CORRECTIONS)
    if correction in UNIFORM_ONLY_CORRECTIONS:
        with pytest.raises(MetricError, match=rf"correction={correction} assumes uniformly sampled negatives"):
            parse_metric(text)
        with pytest.raises(MetricError, match="write sampling=uniform or correction=none"):
            Metric.of("recall", 10, sampled=50, sampling="popularity", correction=correction)
    else:
        assert parse_metric(text).params["sampling"] == "popularity"


@pytest.mark.parametrize("correction", UNIFORM_ONLY_CORRECTIONS)
def test_uniform_sampling_keeps_every_correction(correction):
    metric = parse_metric(f"recall@10(sampled=100,sampling=uniform,correction={correction})")
    assert metric.params["correction"] == correction
    assert parse_metric(str(metric)) == metric


def test_words_in_any_case_are_refused_too():
    with pytest.raises(MetricError, match="correction=ls assumes uniformly sampled negatives, but sampling=popularity"):
        parse_metric("ndcg@10(sampled=100,sampling=Popularity,correction=LS)")


_CONFIG = """\
name = "sampled-popularity"
seeds = [0]
metrics = ["ndcg@5", "recall@10(sampled=20,sampling=popularity,correction=bv)"]

[datasets.synthetic]
generate = { n_users = 30, n_items = 40, n_ratings = 400, seed = 1 }

[split]
method = "holdout"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = 5

[recommenders.popularity]
"""


def test_a_config_asking_it_exits_2_before_any_task(tmp_path, capsys):
    config = tmp_path / "sampled.toml"
    config.write_text(_CONFIG)
    out = tmp_path / "results"
    assert main(["run", str(config), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith(f"error: {config}, line 3: ")
    assert err.endswith("correction=bv assumes uniformly sampled negatives, but sampling=popularity; "
                        "write sampling=uniform or correction=none")  # fmt: skip
    assert not out.exists()
