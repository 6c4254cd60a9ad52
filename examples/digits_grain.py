"""Digits through Kauldron's grain pipelines: a weighted mixture of the plain digits and zoomed, shifted
copies (a random crop, the same in a resumed run), transforms on single examples, an evaluator.

Run: `hatch run train --cfg=examples/digits_grain.py` (about 98% test accuracy in under a minute on a laptop CPU);
`--cfg.train_ds.num_workers=2` makes the batches in two worker processes.
"""

import konfig

with konfig.imports():
    import digits_data
    import digits_models
    import kd
    import optax


def _train_ds():
    plain = kd.data.py.DataSource(digits_data.DigitsSource("train"), shuffle=True)
    zoomed = kd.data.py.DataSource(
        digits_data.DigitsSource("train"),
        shuffle=True,
        transforms=[
            kd.data.Resize(key="image", size=(10, 10)),  # nearest: uint8 stays uint8
            kd.data.py.RandomCrop(key="image", shape=(8, 8, 1)),  # back to 8x8, shifted by up to 2 pixels
        ],
    )
    return kd.data.py.Mix(
        [plain, zoomed],
        weights=[3, 1],
        batch_size=128,
        num_workers=0,
        transforms=[
            kd.data.ValueRange(key="image", in_vrange=(0, 16), vrange=(0, 1)),
            kd.data.Cast(key="label", dtype="int32"),
        ],
    )


def _test_ds():
    return kd.data.py.DataSource(
        digits_data.DigitsSource("test"),
        shuffle=False,
        batch_size=120,
        num_epochs=1,
        batch_drop_remainder=False,
        num_workers=0,
        transforms=[
            kd.data.ValueRange(key="image", in_vrange=(0, 16), vrange=(0, 1)),
            kd.data.Cast(key="label", dtype="int32"),
        ],
    )


def get_config() -> konfig.ConfigDict:
    cfg = kd.train.Trainer()
    cfg.seed = 0
    cfg.num_train_steps = 1000
    cfg.log_metrics_every = 100
    cfg.train_ds = _train_ds()
    cfg.eval_ds = _test_ds()
    cfg.model = digits_models.MLP(hidden=(128, 64), num_classes=10)
    cfg.optimizer = optax.adamw(learning_rate=2e-3, weight_decay=1e-4)
    cfg.train_losses = {
        "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label"),
    }
    cfg.train_metrics = {"accuracy": kd.metrics.Accuracy(logits="preds", labels="batch.label")}
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps=100)
    cfg.evals = {"test": kd.evals.Evaluator(run=kd.evals.EveryNSteps(500))}
    return cfg
