"""Protocols: what one task does with its data set, one module per protocol over a shared registry.

:mod:`~receval.experiment.protocols.base` holds the registry (:func:`register_protocol`,
:func:`get_protocol`, :func:`protocol_names`), what a task gets and gives
(:class:`PreparedDataset`, :class:`TaskOutput`) and the steps protocols share
(:func:`split_for`, :func:`make_model`, :func:`task_threshold`). Each built-in protocol is
a small adapter over one of the library's entry points, in its own module, which this
package imports so that every process that can look a protocol up has them all:

- ``one-shot`` (:mod:`.one_shot`): split, fit, recommend, :func:`receval.evaluate`;
- ``cyclic`` (:mod:`.cyclic`): :func:`receval.simulate.simulate`;
- ``coherence-split`` (:mod:`.coherence_split`) and ``coherence-barrier``
  (:mod:`.coherence_barrier`): Said & Bellogín's studies of coherence;
- ``metaeval`` (:mod:`.metaeval`): the meta-evaluation of metrics;
- ``attack`` (:mod:`.attack`), ``debiased`` (:mod:`.debiased`) and ``sampled``
  (:mod:`.sampled`): shilling attacks, debiased estimates, sampled metrics;
- ``ope`` (:mod:`.ope`): off-policy evaluation against the simulator's truth.

Examples
--------
>>> "one-shot" in protocol_names()
True
>>> get_protocol("one-shot").options["k"]
(<class 'int'>, 10)
>>> get_protocol("oneshot")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
receval.errors.ConfigError: unknown protocol 'oneshot'; known: ...one-shot...
"""

from receval.experiment.protocols import (  # noqa: F401  # importing each registers its protocol
    attack,
    coherence_barrier,
    coherence_split,
    cyclic,
    debiased,
    metaeval,
    one_shot,
    ope,
    sampled,
)
from receval.experiment.protocols.base import (
    PROTOCOLS,
    PreparedDataset,
    Protocol,
    TaskOutput,
    build_model,
    get_protocol,
    long_per_user,
    make_model,
    protocol_names,
    register_protocol,
    split_for,
    task_threshold,
)

__all__ = [
    "PROTOCOLS",
    "PreparedDataset",
    "Protocol",
    "TaskOutput",
    "build_model",
    "get_protocol",
    "long_per_user",
    "make_model",
    "protocol_names",
    "register_protocol",
    "split_for",
    "task_threshold",
]
