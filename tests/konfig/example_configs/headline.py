"""The headline config: a schedule whose `decay_steps` refers to `num_train_steps`."""

import dataclasses

import konfig

with konfig.imports():
    import konfig_example_targets as optax  # stands in for the real optax
    from konfig_example_targets import Dense, Sequential


@dataclasses.dataclass
class ConfigArgs:
    width: int = 16
    name: str = "base"


def get_config(args: ConfigArgs) -> konfig.ConfigDict:
    cfg = konfig.ConfigDict()
    cfg.name = args.name
    cfg.num_train_steps = 1000
    cfg.batch_size = 32
    cfg.schedule = optax.cosine_decay_schedule(init_value=0.1, decay_steps=cfg.ref.num_train_steps)
    cfg.model = Sequential(layers=[Dense(features=args.width), Dense(features=10, activation="softmax")])
    cfg.eval = konfig.ConfigDict({"batch_size": 8, "every": 100})
    return cfg


def sweep():
    for steps in [10, 20]:
        yield {"num_train_steps": steps}


def sweep_width():
    for width in [32, 64, 128]:
        yield {"__args__.width": width}


def sweep_lr():
    yield {"schedule.init_value": 0.1}
    yield {"schedule.init_value": 0.01}


def sweep_model():
    yield {"model": "py::konfig_example_targets.Dense(features=3)"}


def sweep_batch():
    yield {"**.batch_size": 64}


def sweep_steps_again():
    yield {"num_train_steps": 5}
