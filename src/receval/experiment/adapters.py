"""Protocols beyond one-shot, each a small adapter over the library's entry point.

Importing this module registers them in :data:`receval.experiment.protocols.PROTOCOLS`.
"""

from __future__ import annotations
