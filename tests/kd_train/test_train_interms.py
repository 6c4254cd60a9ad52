"""Only the intermediates some key asks for are captured (`interms.<module path>.<method>[0]`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import numpy as np
import pytest
import train_fixtures as lib
from kd.train import InterestFilter

_LAYERS = {f"dense_{i}" for i in range(6)}


def _interms(trainer: kd.train.Trainer, capture: InterestFilter | None = None) -> dict:
    state = trainer.init_state()
    batch = {"x": jnp.ones((8, 2)), "y": jnp.zeros((8, 1))}
    context = trainer.trainstep.forward(
        state.params, state.collections, batch, jnp.int32(0), is_training=True, capture=capture
    )
    return context.interms


def _six_dense(**metrics) -> kd.train.Trainer:
    return lib.make_trainer(model=lib.SixDense(), train_metrics=metrics)


def test_metric_key_captures_only_its_layer():
    trainer = _six_dense(h3=lib.Mean(values="interms.dense_3.__call__[0]"))
    interms = _interms(trainer)
    assert set(interms) == {"dense_3"}
    assert set(interms["dense_3"]) == {"__call__"}
    assert interms["dense_3"]["__call__"][0].shape == (8, 4)


def test_capture_all_gives_every_layer_and_the_filtered_one_is_the_same_value():
    trainer = _six_dense()
    everything = _interms(trainer, capture=InterestFilter(["interms.**"]))
    only = _interms(trainer, capture=InterestFilter(["interms.dense_3.__call__[0]"]))
    assert _LAYERS <= set(everything)
    assert set(only) == {"dense_3"}
    np.testing.assert_array_equal(only["dense_3"]["__call__"][0], everything["dense_3"]["__call__"][0])


def test_glob_key_captures_every_layer():
    trainer = _six_dense(all_layers=lib.GlobMean(values="interms.**.__call__[0]"))
    assert _LAYERS <= set(_interms(trainer))


def test_glob_key_metric_reads_the_captured_values_in_a_step():
    trainer = _six_dense(all_layers=lib.GlobMean(values="interms.**.__call__[0]"))
    interms = trainer.context_specs.interms
    assert _LAYERS <= set(interms)
    _, aux = trainer.train()
    assert np.isfinite(aux["metrics/all_layers"])


def test_no_interms_key_captures_nothing():
    trainer = _six_dense(loss_again=lib.MSE())
    assert not trainer.trainstep.capture
    assert _interms(trainer) == {}
    assert trainer.context_specs.interms == {}


def test_metric_on_a_captured_layer_trains():
    trainer = _six_dense(h3=lib.Mean(values="interms.dense_3.__call__[0]"))
    _, aux = trainer.train()
    assert np.isfinite(aux["metrics/h3"])


def test_linen_sow_value_is_reachable():
    trainer = lib.make_trainer(
        model=lib.Sowing(), train_metrics={"f": lib.Mean(values="interms.features[0]")}
    )
    interms = _interms(trainer)
    assert interms["features"][0].shape == (8, 4)
    assert "hidden" not in interms  # the sown value, not every layer's output
    _, aux = trainer.train()
    assert np.isfinite(aux["metrics/f"])


def test_nnx_sow_value_is_reachable():
    trainer = lib.make_trainer(
        model=lambda rngs: lib.NnxMlp(2, 1, rngs=rngs), train_metrics={"h": lib.Mean(values="interms.h[0]")}
    )
    assert _interms(trainer)["h"][0].shape == (8, 16)
    _, aux = trainer.train()
    assert np.isfinite(aux["metrics/h"])


def test_interms_specs_follow_the_filter():
    trainer = _six_dense(h3=lib.Mean(values="interms.dense_3.__call__[0]"))
    specs = trainer.context_specs.interms
    assert jax.tree.map(lambda s: s.shape, specs) == {"dense_3": {"__call__": ((8, 4),)}}


# ---------------------------------------------------------------------------------------------- InterestFilter


def test_filter_wants_the_named_layer_only():
    capture = InterestFilter(["interms.encoder.dense.__call__[0]"])
    assert capture.wants(("encoder", "dense"), "__call__")
    assert not capture.wants(("encoder", "other"), "__call__")
    assert not capture.wants(("encoder",), "__call__")
    assert not capture.wants((), "__call__")
    assert not capture.wants(("encoder", "dense"), "encode")


def test_filter_ignores_keys_outside_interms():
    capture = InterestFilter(["preds", "batch.x", "params.dense.kernel"])
    assert not capture
    assert not capture.wants(("dense",), "__call__")


def test_filter_is_true_when_some_key_names_interms():
    assert InterestFilter(["batch.x", "interms.a.__call__[0]"])
    assert not InterestFilter([])


def test_single_star_matches_exactly_one_level():
    capture = InterestFilter(["interms.*.dense.__call__[0]"])
    assert capture.wants(("encoder", "dense"), "__call__")
    assert capture.wants(("decoder", "dense"), "__call__")
    assert not capture.wants(("dense",), "__call__")
    assert not capture.wants(("a", "b", "dense"), "__call__")


def test_double_star_matches_any_depth():
    capture = InterestFilter(["interms.**.dense.__call__[0]"])
    assert capture.wants(("dense",), "__call__")
    assert capture.wants(("a", "b", "dense"), "__call__")
    assert not capture.wants(("a", "other"), "__call__")


def test_double_star_alone_matches_everything():
    capture = InterestFilter(["interms.**"])
    assert capture.wants((), "__call__")
    assert capture.wants(("a", "b"), "encode")


@pytest.mark.parametrize("path", ["interms.encoder", "interms.*"])
def test_key_naming_a_module_captures_everything_under_it(path):
    capture = InterestFilter([path])
    assert capture.wants(("encoder",), "__call__")
    assert capture.wants(("encoder", "dense"), "__call__")


def test_filter_accepts_path_parts():
    capture = InterestFilter([("interms", "block", "__call__", 0)])
    assert capture.wants(("block",), "__call__")
    assert not capture.wants(("other",), "__call__")


def test_key_naming_a_whole_module_resolves_in_a_step():
    trainer = _six_dense(block=lib.GlobMean(values="interms.dense_2"))
    assert set(trainer.context_specs.interms) == {"dense_2"}
