"""Tests of kontext: one file per behaviour area; shared hypothesis strategies in `strategies.py`."""
