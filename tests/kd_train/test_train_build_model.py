"""The Trainer's `model` as a konfig node: a linen module is resolved, an NNX class waits for the Trainer's rngs."""

from __future__ import annotations

import functools

import kd
import konfig
import numpy as np
import pytest
import train_fixtures as lib
from flax import linen as nn
from flax import nnx
from kd.runtime._build_model import build_model

with konfig.imports():
    import kd as cfg_kd
    import train_fixtures as cfg_lib
    from flax import linen as cfg_nn
    from flax import nnx as cfg_nnx


def test_linen_node_is_resolved_to_the_module():
    model = build_model(cfg_lib.Mlp(x="batch.y"))
    assert isinstance(model, lib.Mlp) and model.x == "batch.y"


def test_nested_linen_nodes_are_resolved():
    model = build_model(cfg_kd.nn.ExternalModule(model=cfg_nn.Dense(3), keys="batch.x"))
    assert isinstance(model.model, nn.Dense) and model.model.features == 3


def test_nnx_node_becomes_an_nnx_model():
    model = build_model(cfg_lib.NnxMlp(2, dout=3))
    assert isinstance(model, kd.train.NnxModel)
    assert model.name == "NnxMlp"


def test_nnx_model_builds_with_the_given_positional_and_keyword_arguments():
    model = build_model(cfg_lib.NnxMlp(2, dout=3))
    assert isinstance(model.build, functools.partial)
    assert model.build.args == (2,) and model.build.keywords == {"dout": 3}
    module = model.build(rngs=nnx.Rngs(0))
    assert (module.hidden.in_features, module.out.out_features) == (2, 3)


def test_nnx_positional_arguments_keep_their_order():
    model = build_model(cfg_nnx.Linear(5, 2))
    module = model.build(rngs=nnx.Rngs(0))
    assert (module.in_features, module.out_features) == (5, 2)


def test_nnx_arguments_that_are_nodes_are_resolved():
    with konfig.imports():
        from flax.nnx import initializers as cfg_init
    model = build_model(cfg_nnx.Linear(2, 3, kernel_init=cfg_init.ones))
    np.testing.assert_array_equal(model.build(rngs=nnx.Rngs(0)).kernel[...], np.ones((2, 3)))


def test_nnx_node_with_rngs_raises_config_error():
    node = cfg_lib.NnxMlp(2, dout=3, rngs=cfg_nnx.Rngs(0))
    with pytest.raises(
        kd.train.ConfigError, match=r"train_fixtures:NnxMlp is an NNX module; leave out `rngs`"
    ):
        build_model(node)


@pytest.mark.parametrize(
    "value",
    [lib.Mlp(), None, functools.partial(lib.NnxMlp, 2, 1)],
    ids=["linen-module", "none", "partial"],
)
def test_a_value_that_is_not_a_config_dict_passes_through(value):
    assert build_model(value) is value


def test_a_failing_linen_node_raises_naming_cfg_model():
    with pytest.raises(
        konfig.ResolveError, match=r"^In cfg\.model\.x: .*EveryNSteps.n: expected a positive int"
    ):
        build_model(cfg_lib.Mlp(x=cfg_kd.evals.EveryNSteps(0)))


def test_an_unknown_qualname_raises_naming_cfg_model():
    with pytest.raises(konfig.ResolveError, match=r"^In cfg\.model: .*train_fixtures:Nope"):
        build_model(konfig.ConfigDict({"__qualname__": "train_fixtures:Nope"}))


def test_a_failing_nnx_argument_raises_naming_its_path_under_cfg_model():
    with pytest.raises(
        konfig.ResolveError, match=r"^In cfg\.model\.dout: .*EveryNSteps.n: expected a positive int"
    ):
        build_model(cfg_lib.NnxMlp(2, dout=cfg_kd.evals.EveryNSteps(0)))


def test_trainer_builds_an_nnx_node_with_its_rngs():
    trainer = lib.make_trainer(model=cfg_lib.NnxMlp(2, dout=1))
    assert isinstance(trainer.model, kd.train.NnxModel)
    state = trainer.init_state()
    assert state.params["hidden"]["kernel"].shape == (2, 16)


def test_an_uncalled_nnx_class_is_resolved_to_the_class():
    cfg = konfig.ConfigDict()
    cfg.model = cfg_lib.NnxDropout
    assert build_model(cfg.model) is lib.NnxDropout
