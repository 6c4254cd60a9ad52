"""A config as it would sit in a repository of one's own (the guide in packages/kd-train/README.md uses it).

    kd-train --cfg=examples/guide/my_config.py --cfg.workdir=/tmp/guide_run
    kd-train inspect --interms --cfg=examples/guide/my_config.py

`my_model` is the module beside this file: kd-train puts the config's folder on `sys.path`.
"""

import konfig

with konfig.imports():
    import kd
    import my_model
    import optax


def get_config() -> konfig.ConfigDict:
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 20
    cfg.log_metrics_every = 10
    cfg.train_ds = kd.data.InMemoryPipeline(
        loader=kd.data.SyntheticRegression(num_examples=256), batch_size=16, shuffle=True
    )
    cfg.eval_ds = kd.data.InMemoryPipeline(
        loader=kd.data.SyntheticRegression(num_examples=64, seed=1), batch_size=16, num_epochs=1
    )
    cfg.model = my_model.MLP(hidden=8)
    cfg.optimizer = optax.adam(1e-2)
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    # An intermediate, found with `kd-train inspect --interms`: the mean norm of the hidden layer's outputs.
    cfg.train_metrics = {"hidden_norm": kd.metrics.Norm(tensor="interms.hidden.__call__[0]")}
    cfg.evals = {"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(10))}
    return cfg
