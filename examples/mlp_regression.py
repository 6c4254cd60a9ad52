"""The default example: a flax MLP fitting a synthetic function (no download), trained by `kd.train.Trainer`.

Run: `hatch run train` (this file is the default), or
     `hatch run train --cfg.num_train_steps=600 --cfg.model.model.layers[0].features=64`.
Nothing in `get_config` builds a model or an optimizer: every call is captured as data.
"""

import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn


def get_config() -> konfig.ConfigDict:
    cfg = kd.train.Trainer()
    cfg.seed = 0
    cfg.num_train_steps = 400
    cfg.log_metrics_every = 100
    cfg.train_ds = kd.data.InMemoryPipeline(
        loader=kd.data.SyntheticRegression(num_examples=4096), batch_size=64, shuffle=True
    )
    # A third-party module, wired to `batch.x` in the config (no subclass).
    cfg.model = kd.nn.ExternalModule(
        model=nn.Sequential(
            layers=[nn.Dense(features=32), nn.relu, nn.Dense(features=32), nn.relu, nn.Dense(features=1)]
        ),
        keys="batch.x",
    )
    # `decay_steps` follows `num_train_steps` wherever that is changed (Python, CLI, sweep, JSON).
    cfg.schedules = {
        "learning_rate": optax.warmup_cosine_decay_schedule(
            init_value=0.0,
            peak_value=3e-3,
            warmup_steps=cfg.ref.num_train_steps // 20,
            decay_steps=cfg.ref.num_train_steps,
        )
    }
    cfg.optimizer = optax.adam(learning_rate=cfg.ref.schedules["learning_rate"])
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    return cfg


def sweep():
    """`konfig.expand_sweep("examples/mlp_regression.py")`: one config per training length."""
    for num_train_steps in (200, 400):
        yield {"num_train_steps": num_train_steps}


def sweep_width():
    """`kd-train --sweep=width`: the first layer's width, each run in `<workdir>/<item>`."""
    for features in (16, 64):
        yield {"model.model.layers[0].features": features}
