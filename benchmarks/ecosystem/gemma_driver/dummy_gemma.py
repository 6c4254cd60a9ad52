"""gm.testing.DummyGemma trained on synthetic tokens: a Kauldron config as gemma's users write it.

kd-train --cfg=benchmarks/ecosystem/gemma_driver/dummy_gemma.py --cfg.workdir=/tmp/dummy_gemma
"""

from kauldron import konfig

with konfig.imports():
    import optax
    import synthetic
    from gemma import gm
    from kauldron import kd


def get_config():
    return kd.train.Trainer(
        seed=0,
        train_ds=kd.data.InMemoryPipeline(loader=synthetic.token_batches, batch_size=8, shuffle=True),
        model=gm.testing.DummyGemma(tokens="batch.input"),
        num_train_steps=30,
        train_losses={
            "xentropy": kd.losses.SoftmaxCrossEntropyWithIntLabels(
                logits="preds.logits", labels="batch.target"
            ),
        },
        optimizer=optax.adam(learning_rate=1e-2),
        log_metrics_every=10,
    )
