"""Where the ``attack`` protocol was defined; it has its own module now,
:mod:`receval.experiment.protocols.attack`; its name stays importable from here.
"""

from receval.experiment.protocols.attack import attack

__all__ = ["attack"]
