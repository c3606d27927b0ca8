"""Where the ``cyclic``, ``coherence-split`` and ``metaeval`` protocols were defined; each has its own module now.

:mod:`receval.experiment.protocols.cyclic`, :mod:`~receval.experiment.protocols.coherence_split` and
:mod:`~receval.experiment.protocols.metaeval`; their names stay importable from here.
"""

from receval.experiment.protocols.coherence_split import coherence_split
from receval.experiment.protocols.cyclic import cyclic
from receval.experiment.protocols.metaeval import METAEVAL_EXPERIMENTS, metaeval

__all__ = ["METAEVAL_EXPERIMENTS", "coherence_split", "cyclic", "metaeval"]
