"""kd.optim: optimizer helpers. Any optax GradientTransformation is a Trainer optimizer as it is.

cfg.optimizer = optax.adamw(learning_rate=cfg.ref.schedules["lr"])
cfg.optimizer = kd.optim.named_chain(clip=optax.clip_by_global_norm(1.0), adam=optax.scale_by_adam())
cfg.optimizer = kd.optim.partial_updates(optax.adam(1e-3), mask=kd.optim.select("lora"))
cfg.optimizer = kd.optim.named_chain(adam=optax.adam(1e-3), ema=kd.optim.ema_params(decay=0.999))
cfg.evals = {"ema": kd.evals.Evaluator(init_transform=kd.optim.UseEmaParams())}
"""

from ._decay_to_init import DecayToInitState as DecayToInitState
from ._decay_to_init import decay_to_init as decay_to_init
from ._ema_params import EmaParamsState as EmaParamsState
from ._ema_params import UseEmaParams as UseEmaParams
from ._ema_params import ema_params as ema_params
from ._masks import exclude as exclude
from ._masks import select as select
from ._named_chain import named_chain as named_chain
from ._partial_updates import partial_updates as partial_updates
from ._schedules import current_learning_rates as current_learning_rates

__all__ = [
    "DecayToInitState",
    "EmaParamsState",
    "UseEmaParams",
    "current_learning_rates",
    "decay_to_init",
    "ema_params",
    "exclude",
    "named_chain",
    "partial_updates",
    "select",
]
