"""A run that exercises everything a resume must restore: shuffled data mid-epoch, dropout, batch norm,
adam, a schedule, an evaluator, JSONL and TensorBoard logs, async checkpoints (tests/integration only)."""

import konfig

with konfig.imports():
    import kd
    import optax
    import resumable_model


def get_config() -> konfig.ConfigDict:
    cfg = kd.train.Trainer()
    cfg.seed = 3
    cfg.num_train_steps = 240
    cfg.log_metrics_every = 10
    cfg.train_ds = kd.data.InMemoryPipeline(
        loader=kd.data.SyntheticRegression(num_examples=700, num_features=8), batch_size=32, shuffle=True
    )  # 21 batches per epoch: checkpoints land mid-epoch
    cfg.eval_ds = kd.data.InMemoryPipeline(
        loader=kd.data.SyntheticRegression(num_examples=128, num_features=8, seed=1),
        batch_size=64,
        num_epochs=1,
    )
    cfg.model = resumable_model.DropoutMlp()
    cfg.optimizer = optax.adam(
        learning_rate=optax.cosine_decay_schedule(1e-3, decay_steps=cfg.ref.num_train_steps)
    )
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    cfg.evals = {"eval": kd.evals.Evaluator(run=kd.evals.EveryNSteps(40))}
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps=20, max_to_keep=2)
    cfg.writer = kd.writers.MultiWriter(writers=[kd.writers.JsonlWriter(), kd.writers.TensorBoardWriter()])
    return cfg
