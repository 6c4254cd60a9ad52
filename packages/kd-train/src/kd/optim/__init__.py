"""kd.optim: optimizer helpers. Any optax GradientTransformation is a Trainer optimizer as it is.

cfg.optimizer = optax.adamw(learning_rate=cfg.ref.schedules["lr"])
cfg.optimizer = kd.optim.named_chain(clip=optax.clip_by_global_norm(1.0), adam=optax.scale_by_adam())
"""

from ._named_chain import named_chain as named_chain
from ._schedules import current_learning_rates as current_learning_rates

__all__ = ["current_learning_rates", "named_chain"]
