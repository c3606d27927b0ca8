"""Experiments: TOML configurations, grids of tasks, executors and the result store.

>>> from receval.experiment import parse_config, expand
>>> cfg = parse_config('''
... metrics = ["precision@5"]
... [datasets.toy]
... generate = { n_users = 40, n_items = 30 }
... [recommenders.popularity]
... ''')
>>> [t.describe() for t in expand(cfg)]
['toy/popularity() seed=0']
"""

from receval.experiment.config import ExperimentConfig, load_config, parse_config
from receval.experiment.grid import Task, expand
from receval.experiment.protocols import PROTOCOLS, TaskOutput, get_protocol, register_protocol
from receval.experiment.runner import RunReport, run_experiment, summarise
from receval.experiment.store import ResultStore

__all__ = [
    "PROTOCOLS",
    "ExperimentConfig",
    "ResultStore",
    "RunReport",
    "Task",
    "TaskOutput",
    "expand",
    "get_protocol",
    "load_config",
    "parse_config",
    "register_protocol",
    "run_experiment",
    "summarise",
]
