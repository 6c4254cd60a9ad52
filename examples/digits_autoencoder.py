"""Kauldron's MNIST autoencoder, on the bundled digits: monitors an internal layer without touching the model.

Run: `hatch run train --cfg=examples/digits_autoencoder.py --cfg.workdir=/tmp/ae`.
The config is Kauldron's `examples/mnist_autoencoder.py` with `from kauldron import kd` swapped for
`import kd` and the TFDS source for an in-memory one. The schedule's `decay_steps` follows
`num_train_steps` wherever that is changed (Python, CLI, sweep, JSON).
"""

import konfig

with konfig.imports():
    import functools

    import digits_data
    import kd
    import optax
    from flax import linen as nn


def get_config() -> konfig.ConfigDict:
    cfg = kd.train.Trainer()
    cfg.seed = 42
    cfg.train_ds = _make_ds(training=True)
    cfg.model = kd.nn.FlatAutoencoder(
        inputs="batch.image",
        encoder=nn.Dense(features=32),
        decoder=nn.Dense(features=8 * 8),
    )
    cfg.num_train_steps = 600
    cfg.log_metrics_every = 100
    cfg.log_summaries_every = 300
    cfg.train_losses = {"recon": kd.losses.L2(preds="preds.image", targets="batch.image")}
    cfg.train_metrics = {
        # The encoder's output: captured because this key asks for it (no other layer is kept).
        "latent_norm": kd.metrics.Norm(tensor="interms.encoder.__call__[0]", axis=-1),
        # The global norm of every kernel gradient (a glob over the grads tree).
        "grad_norm": kd.metrics.TreeReduce(
            metric=kd.metrics.Norm(tensor="grads.**.kernel", axis=None, aggregation_type="concat")
        ),
    }
    cfg.train_summaries = {
        "gt": kd.summaries.ShowImages(images="batch.image", num_images=5),
        "recon": kd.summaries.ShowImages(images="preds.image", num_images=5),
    }
    cfg.schedules = {
        "learning_rate": optax.cosine_decay_schedule(init_value=3e-3, decay_steps=cfg.ref.num_train_steps),
    }
    cfg.optimizer = optax.adam(learning_rate=cfg.ref.schedules["learning_rate"])
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps=300)
    # The default writers (with a workdir): the terminal, metrics.jsonl, and TensorBoard event files, where
    # the image summaries appear.
    cfg.evals = {
        "eval": kd.evals.Evaluator(
            run=kd.evals.EveryNSteps(300),
            num_batches=None,
            ds=_make_ds(training=False),
            metrics={},
        )
    }
    return cfg


def _make_ds(training: bool):
    return kd.data.InMemoryPipeline(
        loader=functools.partial(digits_data.load, split="train" if training else "test"),
        batch_size=128,
        shuffle=training,
        num_epochs=None if training else 1,
        drop_remainder=training,
    )
