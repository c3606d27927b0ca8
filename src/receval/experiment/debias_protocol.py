"""Where the ``debiased`` protocol was defined; it has its own module now,
:mod:`receval.experiment.protocols.debiased`; its name stays importable from here.
"""

from receval.experiment.protocols.debiased import debiased

__all__ = ["debiased"]
