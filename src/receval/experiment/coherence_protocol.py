"""Where the ``coherence-barrier`` protocol was defined; it has its own module now,
:mod:`receval.experiment.protocols.coherence_barrier`; its name stays importable from here.
"""

from receval.experiment.protocols.coherence_barrier import coherence_barrier

__all__ = ["coherence_barrier"]
