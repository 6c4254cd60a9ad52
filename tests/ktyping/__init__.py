"""ktyping's tests: one file per behaviour area, shared array builders in `arrays.py`."""
