"""kd.contrib.train: Kauldron's contributed training pieces (`kauldron.contrib.train`): the `NpzWriter`.

trainer = kd.train.Trainer(..., writer=kd.contrib.train.NpzWriter(key_patterns=[r"summaries/logits"]))
np.load(f"{workdir}/array_dumps/train/000001000.npz")["summaries/logits"]
"""

from ._npz_writer import NpzWriter as NpzWriter

# Kauldron's own tests read these helpers off `kauldron.contrib.train.npz_writer`, a view (kd.kauldron_alias)
# that looks its names up here; they stay private (not in `__all__`).
from ._npz_writer import _filter_arrays as _filter_arrays
from ._npz_writer import _scalars_as_arrays as _scalars_as_arrays

__all__ = ["NpzWriter"]
