"""A decoder-only language model of `kd.nn` blocks (`kd.nn.DecoderLM`, variant LM-B: 164M parameters with a
51,200-token vocabulary), bf16 compute with float32 parameters and optimizer state, on synthetic sequences.

Run on an accelerator: `kd-train --cfg=examples/lm.py` (a TPU v5e: the splash attention kernel, 58% of the
chip's bf16 peak; see docs/guides/performance.md). On a CPU, a small variant for a look:
`hatch run train --cfg=examples/lm.py --cfg.model.0=LM-mu --cfg.aux.vocab_size=256
--cfg.aux.sequence_length=128 --cfg.train_ds.batch_size=8 --cfg.num_train_steps=200` (the loss falls from
log(256) = 5.5 toward 0.3 as the model learns to copy the repeated segment).
"""

import konfig

with konfig.imports():
    import functools

    import kd
    import lm_data
    import optax


def get_config() -> konfig.ConfigDict:
    cfg = kd.train.Trainer()
    cfg.seed = 0
    cfg.num_train_steps = 500
    cfg.log_metrics_every = 50
    # Shared sizes, read by the data and the model through references (change them once, from the CLI too).
    cfg.aux = {"vocab_size": 51200, "sequence_length": 1024}
    cfg.train_ds = kd.data.InMemoryPipeline(
        loader=functools.partial(
            lm_data.repeated_segments,
            num_sequences=2048,
            length=cfg.ref.aux["sequence_length"],
            vocab_size=cfg.ref.aux["vocab_size"],
        ),
        batch_size=32,
        shuffle=True,
    )
    cfg.model = kd.nn.DecoderLM.from_variant_str(
        "LM-B",
        vocab_size=cfg.ref.aux["vocab_size"],
        max_length=cfg.ref.aux["sequence_length"],
        dtype="bfloat16",  # compute; parameters and the optimizer's state stay float32
        attention="auto",  # the splash kernel on a TPU, XLA's fused attention elsewhere
        remat="full",  # a block keeps only its input for the backward pass: batch 32 fits in 16 GiB
        tokens="batch.inputs",
    )
    cfg.schedules = {
        "learning_rate": optax.warmup_cosine_decay_schedule(
            init_value=0.0,
            peak_value=6e-4,
            warmup_steps=cfg.ref.num_train_steps // 10,
            decay_steps=cfg.ref.num_train_steps,
        )
    }
    cfg.optimizer = optax.adamw(learning_rate=cfg.ref.schedules["learning_rate"], b2=0.95, weight_decay=0.1)
    cfg.train_losses = {
        "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.targets"),
    }
    return cfg
