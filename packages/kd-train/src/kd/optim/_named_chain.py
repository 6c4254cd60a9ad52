"""`named_chain`: optax transformations chained under names, so configs and states read by name.

cfg.optimizer = kd.optim.named_chain(clip=optax.clip_by_global_norm(1.0), adam=optax.scale_by_adam(b1=0.95))
"""

from __future__ import annotations

import optax


def named_chain(**transforms: optax.GradientTransformation) -> optax.GradientTransformationExtraArgs:
    """The transformations applied in the order given, like `optax.chain`, each known by its name.

    Usage:

        cfg.optimizer = kd.optim.named_chain(**{
            "clip": optax.clip_by_global_norm(max_norm=1.0),
            "adam": optax.scale_by_adam(b1=0.95),
            "lr": optax.scale(-1e-3),
        })

    A config then reads `cfg.optimizer.adam.b1` (not `cfg.optimizer[1].b1`), and the optimizer
    state is a dict `{"clip": ..., "adam": ..., "lr": ...}` (not a tuple), in checkpoints and in
    the context alike. The updates are those of `optax.chain` over the same transformations.

    Args:
      **transforms: name -> `optax.GradientTransformation`, in the order they apply.

    Returns:
      An `optax.GradientTransformationExtraArgs` whose state is a dict keyed by the names.

    Raises:
      TypeError: a value is not a GradientTransformation (e.g. `optax.adam` not called).
    """
    for name, transform in transforms.items():
        if not (callable(getattr(transform, "init", None)) and callable(getattr(transform, "update", None))):
            hint = "; call it first, e.g. optax.adam(1e-3)" if callable(transform) else ""
            raise TypeError(
                f"named_chain: {name}= must be an optax GradientTransformation (with init and update), "
                f"got {transform!r} of type {type(transform).__name__}{hint}."
            )
    return optax.named_chain(*transforms.items())
