"""Analyses over data and results: significance, agreement, magic barrier and coherence, axioms."""
