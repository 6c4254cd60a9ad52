"""kd.optim: optimizer helpers. Any optax GradientTransformation is a Trainer optimizer as it is.

cfg.optimizer = optax.adamw(learning_rate=cfg.ref.schedules["lr"])
"""

from ._schedules import current_learning_rates as current_learning_rates

__all__ = ["current_learning_rates"]
