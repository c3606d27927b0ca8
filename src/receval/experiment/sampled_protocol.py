"""Where the ``sampled`` protocol was defined; it has its own module now,
:mod:`receval.experiment.protocols.sampled`; its name stays importable from here.
"""

from receval.experiment.protocols.sampled import sampled

__all__ = ["sampled"]
