"""`ROOT_CFG_REF.<path>` defaults are filled from the Trainer that holds the object, however deep."""

from __future__ import annotations

import dataclasses
from typing import Any

import kd
import pytest
import train_fixtures as lib
from kd import konfig


@dataclasses.dataclass(frozen=True, kw_only=True)
class Seeded:
    """A user class: no registration anywhere, just the default."""

    name: str = "thing"
    seed: int = kd.train.ROOT_CFG_REF.seed


@dataclasses.dataclass(frozen=True, slots=True)
class SeededWithSlots:
    seed: int = kd.train.ROOT_CFG_REF.seed


@dataclasses.dataclass(frozen=True, kw_only=True)
class UsesHead:
    head: Any = kd.train.ROOT_CFG_REF.aux.head


@dataclasses.dataclass(frozen=True, kw_only=True)
class NeedsClasses:
    num_classes: int = kd.train.ROOT_CFG_REF.aux.num_classes


@dataclasses.dataclass(frozen=True, kw_only=True)
class Broken:
    foo: Any = kd.train.ROOT_CFG_REF.no_such_field


@dataclasses.dataclass(frozen=True, kw_only=True)
class BrokenEvaluator(kd.evals.Evaluator):
    foo: Any = kd.train.ROOT_CFG_REF.no_such_field


def test_evaluator_gets_eval_ds_and_train_losses():
    eval_ds = lib.Regression(seed=7)
    trainer = lib.make_trainer(eval_ds=eval_ds, evals={"e": kd.evals.Evaluator()})
    evaluator = trainer.evals["e"]
    assert evaluator.ds is eval_ds
    assert evaluator.losses is trainer.train_losses
    assert evaluator.rng_streams is trainer.rng_streams


def test_explicit_evaluator_ds_wins():
    own = lib.Regression(seed=3)
    trainer = lib.make_trainer(eval_ds=lib.Regression(seed=7), evals={"e": kd.evals.Evaluator(ds=own)})
    assert trainer.evals["e"].ds is own


def test_replace_refills_from_the_new_trainer():
    trainer = lib.make_trainer(
        eval_ds=lib.Regression(seed=7),
        evals={"e": kd.evals.Evaluator()},
        aux={"thing": Seeded()},
    )
    other = lib.Regression(seed=8)
    replaced = dataclasses.replace(trainer, seed=1, eval_ds=other)
    assert replaced.evals["e"].ds is other
    assert replaced.aux["thing"].seed == 1
    assert trainer.evals["e"].ds is not other  # the original is untouched
    assert trainer.aux["thing"].seed == 0


def test_replace_keeps_explicit_values():
    own = lib.Regression(seed=3)
    trainer = lib.make_trainer(
        seed=5,
        eval_ds=lib.Regression(seed=7),
        evals={"e": kd.evals.Evaluator(ds=own)},
        aux={"thing": Seeded(seed=42)},
    )
    replaced = dataclasses.replace(trainer, seed=1, eval_ds=lib.Regression(seed=8))
    assert replaced.evals["e"].ds is own
    assert replaced.aux["thing"].seed == 42


def test_replace_reseeds_the_rng_streams():
    trainer = lib.make_trainer(seed=0)
    replaced = dataclasses.replace(trainer, seed=1)
    assert replaced.rng_streams.seed == 1
    assert (
        replaced.init_state().params["out"]["kernel"] != trainer.init_state().params["out"]["kernel"]
    ).all()


def test_user_dataclass_nested_in_aux_is_filled():
    trainer = lib.make_trainer(seed=3, aux={"things": [{"deep": Seeded()}, Seeded(name="b")]})
    assert trainer.aux["things"][0]["deep"].seed == 3
    assert trainer.aux["things"][1] == Seeded(name="b", seed=3)


def test_user_dataclass_nested_in_evals_is_filled():
    trainer = lib.make_trainer(seed=4, evals={"e": kd.evals.Evaluator(ds=[{"part": Seeded()}])})
    assert trainer.evals["e"].ds[0]["part"].seed == 4


def test_nested_path_into_aux():
    trainer = lib.make_trainer(aux={"num_classes": 10, "head": NeedsClasses()})
    assert trainer.aux["head"].num_classes == 10


def test_explicit_value_of_a_user_dataclass_wins():
    trainer = lib.make_trainer(seed=3, aux={"thing": Seeded(seed=9)})
    assert trainer.aux["thing"].seed == 9


def test_unknown_root_field_names_the_path():
    with pytest.raises(kd.train.ConfigError, match=r"Trainer\.evals\['e'\]\.foo") as info:
        lib.make_trainer(evals={"e": BrokenEvaluator()})
    assert "no_such_field" in str(info.value)


def test_unknown_root_field_deep_inside_names_the_path():
    with pytest.raises(kd.train.ConfigError, match=r"Trainer\.evals\['e'\]\.ds\[0\]\['x'\]\.foo"):
        lib.make_trainer(evals={"e": kd.evals.Evaluator(ds=[{"x": Broken()}])})


def test_unknown_root_field_in_aux_names_the_path():
    with pytest.raises(kd.train.ConfigError, match=r"Trainer\.aux\['b'\]\.foo = ROOT_CFG_REF\.no_such_field"):
        lib.make_trainer(aux={"b": Broken()})


def test_missing_aux_key_names_the_key():
    with pytest.raises(kd.train.ConfigError, match=r"Trainer\.aux\['head'\]\.num_classes.*'num_classes'"):
        lib.make_trainer(aux={"head": NeedsClasses()})


def test_value_taken_from_a_later_field_is_filled_too():
    # `evals` is filled before `aux`: the head it takes from aux must be filled all the same.
    trainer = lib.make_trainer(seed=3, evals={"e": kd.evals.Evaluator(ds=UsesHead())}, aux={"head": Seeded()})
    assert trainer.evals["e"].ds.head == Seeded(seed=3)
    assert trainer.evals["e"].ds.head is trainer.aux["head"]


def test_dataclass_with_slots_is_filled():
    assert lib.make_trainer(seed=6, aux={"s": SeededWithSlots()}).aux["s"].seed == 6


def test_konfig_built_trainer_fills_its_evaluators():
    with konfig.imports():
        import kd as kd_cfg
        import optax as optax_cfg
        import train_fixtures as lib_cfg
    cfg = kd_cfg.train.Trainer()
    cfg.train_ds = lib_cfg.Regression()
    cfg.eval_ds = lib_cfg.Regression(seed=4, num_epochs=1)
    cfg.model = lib_cfg.Mlp()
    cfg.optimizer = optax_cfg.adam(1e-2)
    cfg.train_losses = {"l2": lib_cfg.MSE()}
    cfg.evals = {"e": kd_cfg.evals.Evaluator()}
    cfg.aux = {"things": [lib_cfg.Seeded()]}
    cfg.seed = 2
    cfg.num_train_steps = 1
    trainer = konfig.resolve(cfg)
    assert trainer.evals["e"].ds is trainer.eval_ds
    assert trainer.evals["e"].losses is trainer.train_losses
    assert trainer.aux["things"][0].seed == 2
