"""The digits classifier as a flax NNX module, configured by its class (the Trainer supplies `rngs`).

Run: `hatch run train --cfg=examples/nnx_digits.py`.
"""

import konfig

with konfig.imports():
    import functools

    import digits_data
    import digits_models
    import kd
    import optax


def get_config() -> konfig.ConfigDict:
    cfg = kd.train.Trainer()
    cfg.seed = 0
    cfg.num_train_steps = 800
    cfg.log_metrics_every = 200
    cfg.train_ds = kd.data.InMemoryPipeline(
        loader=functools.partial(digits_data.load, split="train"), batch_size=128, shuffle=True
    )
    cfg.eval_ds = kd.data.InMemoryPipeline(
        loader=functools.partial(digits_data.load, split="test"),
        batch_size=128,
        shuffle=False,
        num_epochs=1,
        drop_remainder=False,
    )
    cfg.model = digits_models.NnxMLP(din=64, dout=10)
    cfg.optimizer = optax.adam(learning_rate=2e-3)
    cfg.train_losses = {
        "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label"),
    }
    cfg.train_metrics = {
        "accuracy": kd.metrics.Accuracy(logits="preds", labels="batch.label"),
        "hidden_norm": kd.metrics.Norm(tensor="interms.hidden[0]", axis=-1),  # a sown NNX intermediate
    }
    cfg.evals = {"test": kd.evals.Evaluator(run=kd.evals.EveryNSteps(400))}
    return cfg
