"""A ViT-S/16 (Kauldron's `kd.nn.Vit`, 12 blocks of 384 wide, 6 heads) on the digits upsampled to 32x32,
monitoring the last block's attention weights without touching the model.

Run: `hatch run train --cfg=examples/digits_vit.py` (22M parameters on 4 patches: slow on a laptop CPU;
`--cfg.num_train_steps=50` for a look). The attention weights are
`interms.encoder.layers_11.attention.attn_weights[0]`, `(batch, heads, 4, 4)`: their spread (standard
deviation, 0 while every patch attends to all alike) is logged as `metrics/attention_spread`.
"""

import konfig

with konfig.imports():
    import functools

    import digits_data
    import kd
    import optax


def _digits(split: str, training: bool):
    return kd.data.InMemoryPipeline(
        loader=functools.partial(digits_data.load, split=split),
        batch_size=64,
        shuffle=training,
        num_epochs=None if training else 1,
        drop_remainder=training,
        # Deterministic: runs once, at load; the examples then stay on the device.
        transforms=[kd.data.Resize(key="image", size=(32, 32))],
    )


def get_config() -> konfig.ConfigDict:
    cfg = kd.train.Trainer()
    cfg.seed = 0
    cfg.num_train_steps = 300
    cfg.log_metrics_every = 25
    cfg.train_ds = _digits("train", training=True)
    cfg.eval_ds = _digits("test", training=False)
    cfg.model = kd.nn.Vit(
        image="batch.image",
        encoder=kd.nn.VitEncoder.from_variant_str("S/16"),
        num_classes=10,
    )
    cfg.schedules = {
        "learning_rate": optax.warmup_cosine_decay_schedule(
            init_value=0.0,
            peak_value=3e-4,
            warmup_steps=cfg.ref.num_train_steps // 10,
            decay_steps=cfg.ref.num_train_steps,
        )
    }
    cfg.optimizer = optax.adamw(learning_rate=cfg.ref.schedules["learning_rate"], weight_decay=1e-4)
    cfg.train_losses = {
        "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds.logits", labels="batch.label"),
    }
    cfg.train_metrics = {
        "accuracy": kd.metrics.Accuracy(logits="preds.logits", labels="batch.label"),
        "attention_spread": kd.metrics.Std(values="interms.encoder.layers_11.attention.attn_weights[0]"),
    }
    cfg.evals = {"test": kd.evals.Evaluator(run=kd.evals.EveryNSteps(150))}
    return cfg
