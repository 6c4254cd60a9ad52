"""kd.ckpts: save and restore the train state and the data iterator state (orbax, under the workdir).

    ckpt = kd.ckpts.Checkpointer(workdir="/tmp/run", save_interval_steps=1000)
    restored = ckpt.restore_latest(state)  # None in a new workdir
    if restored is not None:
        state, data_state = restored
    ckpt.maybe_save(step, state=state, data_state=data_state)
    ckpt.close()

Each checkpoint is saved with a digest of every array and of the data position; `restore_latest` sets
a damaged one aside (`CheckpointDamagedError`, `CheckpointDigestError`) and restores the one before.

`NoopCheckpointer` has the same interface and keeps nothing (the default without a workdir, or with
`Trainer(checkpointer=None)`); with a workdir the Trainer's default is `default_checkpointer(...)`.
`PartialLoader` (an `InitTransform`) warm-starts a run from parts of another run's checkpoint:

    cfg.init_transform = kd.ckpts.PartialLoader(workdir="/runs/pretrain", new_to_old={"params.enc": "params.enc"})

Kauldron's names and call forms work beside these: `ckpt.save(state, step=100)`,
`ckpt.maybe_save(state, step=step)`, `state = ckpt.restore(state)` (the latest, the state alone),
`ckpt.all_steps` as a property, `delete`, `item_metadata`, `iter_new_checkpoints`, `kd.ckpts.items`
(`StandardCheckpointItem`, ...), `SimpleCheckpointLoader`, `MultiTransform`, `NoopTransform`.
"""

from . import items as items
from . import partial_loader as partial_loader  # Kauldron's module path: its public names
from ._base import BaseCheckpointer as BaseCheckpointer
from ._base import Restored as Restored
from ._base import Steps as Steps
from ._checkpointer import CHECKPOINT_FOLDER_NAME as CHECKPOINT_FOLDER_NAME
from ._checkpointer import UNREADABLE_FOLDER_NAME as UNREADABLE_FOLDER_NAME
from ._checkpointer import Checkpointer as Checkpointer
from ._default import DefaultCheckpointer as DefaultCheckpointer
from ._default import NoWorkdirCheckpointer as NoWorkdirCheckpointer
from ._default import default_checkpointer as default_checkpointer
from ._errors import CheckpointDamagedError as CheckpointDamagedError
from ._errors import CheckpointDigestError as CheckpointDigestError
from ._errors import CheckpointReadError as CheckpointReadError
from ._errors import CheckpointStructureError as CheckpointStructureError
from ._errors import CheckpointWarning as CheckpointWarning
from ._init_transform import InitTransform as InitTransform
from ._init_transform import MultiTransform as MultiTransform
from ._init_transform import NoopTransform as NoopTransform
from ._init_transform import apply_init_transform as apply_init_transform
from ._new_to_old import PartialLoadError as PartialLoadError
from ._noop import NoopCheckpointer as NoopCheckpointer
from ._orbax import barrier as barrier
from ._orbax import what_is_missing as what_is_missing
from ._partial_loader import PartialKauldronLoader as PartialKauldronLoader
from ._partial_loader import PartialLoader as PartialLoader
from ._partial_loader import SimpleCheckpointLoader as SimpleCheckpointLoader
from ._partial_loader import workdir_from_xid as workdir_from_xid

__all__ = [
    "CHECKPOINT_FOLDER_NAME",
    "UNREADABLE_FOLDER_NAME",
    "BaseCheckpointer",
    "CheckpointDamagedError",
    "CheckpointDigestError",
    "CheckpointReadError",
    "CheckpointStructureError",
    "CheckpointWarning",
    "Checkpointer",
    "DefaultCheckpointer",
    "InitTransform",
    "MultiTransform",
    "NoWorkdirCheckpointer",
    "NoopCheckpointer",
    "NoopTransform",
    "PartialKauldronLoader",
    "PartialLoadError",
    "PartialLoader",
    "Restored",
    "SimpleCheckpointLoader",
    "Steps",
    "apply_init_transform",
    "barrier",
    "default_checkpointer",
    "items",
    "partial_loader",
    "what_is_missing",
    "workdir_from_xid",
]
