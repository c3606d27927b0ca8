"""Figures and reports of results (matplotlib with the Agg backend; files written atomically)."""
