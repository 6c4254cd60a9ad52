"""Example config: a flax MLP fitting a synthetic function with a cosine-decayed Adam.

Run: `hatch run train` (this file is the default), or
     `hatch run train --cfg.num_train_steps=600 --cfg.model.layers[0].features=64`.
Nothing in `get_config` builds a model or an optimizer: every call is captured as data.
"""

import konfig

with konfig.imports():
    import losses
    import optax
    import synthetic
    from flax import linen as nn


def get_config() -> konfig.ConfigDict:
    cfg = konfig.ConfigDict()
    cfg.seed = 0
    cfg.num_train_steps = 400
    cfg.log_every = 100
    cfg.batch_size = 64
    cfg.train_ds = synthetic.regression_batches(batch_size=cfg.ref.batch_size, seed=cfg.ref.seed)
    cfg.model = nn.Sequential(layers=[nn.Dense(features=32), nn.relu, nn.Dense(features=32), nn.relu, nn.Dense(features=1)])
    # `decay_steps` follows `num_train_steps` wherever that is changed (Python, CLI, sweep, JSON).
    cfg.schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=3e-3,
        warmup_steps=20,
        decay_steps=cfg.ref.num_train_steps,
    )
    cfg.optimizer = optax.adam(learning_rate=cfg.ref.schedule)
    cfg.loss = losses.MeanSquaredError(preds="preds", targets="batch.y")
    return cfg


def sweep():
    """`konfig.expand_sweep("examples/mlp_regression.py")`: one config per training length."""
    for num_train_steps in (200, 400):
        yield {"num_train_steps": num_train_steps}
