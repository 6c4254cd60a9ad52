"""kd.export: Kauldron's model exporters, a trained model's forward pass saved to run without its code.

    exporter = kd.export.JaxModelExporter(workdir="/tmp/run", rng_streams=kd.train.RngStreams(seed=0))
    folder = exporter.export(model=trainer.model, state=state, element_spec=trainer.element_spec,
                             is_training=False)        # or: kd.export.export_model(trainer, state)
    model = kd.export.load_exported(folder)            # later, anywhere: needs only jax, numpy and kontext
    out = model(x=batch["x"])                          # {"preds": ..., "interms": ...}

The folder holds the `jax.export` serialization of the forward pass, the parameters and collections, and a
`signature.json` naming the inputs. Names load on first use: `load_exported` imports no model code, no flax
and no `kd.train`.
"""

from __future__ import annotations

import importlib as _importlib

_HOMES = {
    "ModelExporter": "_exporter",
    "JaxModelExporter": "_exporter",
    "NoopExporter": "_exporter",
    "export_model": "_exporter",
    "ExportedModel": "_loader",
    "load_exported": "_loader",
}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.export._exporter import JaxModelExporter as JaxModelExporter
    from kd.export._exporter import ModelExporter as ModelExporter
    from kd.export._exporter import NoopExporter as NoopExporter
    from kd.export._exporter import export_model as export_model
    from kd.export._loader import ExportedModel as ExportedModel
    from kd.export._loader import load_exported as load_exported
del TYPE_CHECKING


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'kd.export' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"kd.export.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))


__all__ = [
    "ExportedModel",
    "JaxModelExporter",
    "ModelExporter",
    "NoopExporter",
    "export_model",
    "load_exported",
]
