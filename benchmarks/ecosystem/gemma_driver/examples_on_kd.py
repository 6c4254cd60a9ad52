"""gemma's examples/seq2seq.py and examples/lora.py with only the downloads replaced: the weights
(gm.testing.DummyGemma, no checkpoint to load), the data source (prompt/response pairs in memory instead of
TFDS's mtnt) and the tokenizer (synthetic.WordTokenizer instead of the Gemma 3 SentencePiece file). Every
other field (losses, optimizer, checkpointer, the evaluators, gemma's SamplerEvaluator included) is the
example's own.

    cfg = examples_on_kd.get_config("seq2seq")  # or "lora"
"""

from __future__ import annotations

import importlib

from kauldron import konfig

with konfig.imports():
    import synthetic
    from gemma import gm
    from kauldron import kd

NUM_TRAIN_STEPS = 40
EVERY = 20


def _replace_data(ds, *, batch_size=None, max_length=None):
    task = ds.transforms[0]  # the example's gm.data.Seq2SeqTask
    task.tokenizer = synthetic.WordTokenizer()
    if max_length is not None:
        task.max_length = max_length
    return kd.data.py.DataSource(
        data_source=synthetic.PAIRS,
        shuffle=ds.shuffle,
        num_epochs=ds.num_epochs,
        batch_size=batch_size if ds.batch_size is not None else None,
        num_workers=0,
        transforms=[task],
        seed=0,
    )


def get_config(example: str):
    cfg = importlib.import_module(example).get_config()
    if example == "lora":
        cfg.model.model = gm.testing.DummyGemma(tokens="batch.input")  # inside the example's gm.nn.LoRA
    else:
        cfg.model = gm.testing.DummyGemma(tokens="batch.input")
    cfg.init_transform = kd.ckpts.NoopTransform()  # no pretrained checkpoint
    cfg.num_train_steps = NUM_TRAIN_STEPS
    cfg.train_ds = _replace_data(cfg.train_ds, batch_size=4, max_length=16)
    cfg.evals.test.ds = _replace_data(cfg.evals.test.ds, batch_size=4, max_length=16)
    cfg.evals.test.run = kd.evals.EveryNSteps(EVERY)
    cfg.evals.sampling.ds = _replace_data(cfg.evals.sampling.ds)
    cfg.evals.sampling.run = kd.evals.EveryNSteps(EVERY)
    cfg.evals.sampling.max_new_tokens = 4
    cfg.evals.sampling.cache_length = 64
    cfg.checkpointer.save_interval_steps = EVERY
    return cfg
