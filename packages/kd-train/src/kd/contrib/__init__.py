"""kd.contrib: Kauldron's contributed pieces, kept apart from the core: `kd.contrib.metrics`,
`kd.contrib.summaries`, `kd.contrib.train` (writers), `kd.contrib.nn` (Kauldron's `contrib.modules`) and
`kd.contrib.evals`. They follow the core's contracts but are tested less widely; each loads on first use.

    cfg.train_metrics = {"rmse": kd.contrib.metrics.RootMeanSquaredError(preds="preds", targets="batch.y")}
"""

import importlib as _importlib

_SUBPACKAGES = frozenset({"metrics", "summaries", "train", "nn", "evals"})


def __getattr__(name: str) -> object:
    if name in _SUBPACKAGES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (its parts: {', '.join(sorted(_SUBPACKAGES))})")


def __dir__() -> list[str]:
    return sorted(_SUBPACKAGES)


__all__ = sorted(_SUBPACKAGES)
