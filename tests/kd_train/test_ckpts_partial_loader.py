"""kd.ckpts.PartialLoader: warm starts from real orbax checkpoints of another run, under tmp_path."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import jax
import jax.numpy as jnp
import kd
import numpy as np
import optax
import pytest
import train_fixtures as lib
from kd import ckpts, konfig

# Imported from the module until kd.ckpts exports the names.
PartialLoader = ckpts.PartialLoader
PartialLoadError = ckpts.PartialLoadError

_TX = optax.adam(1e-2)


def _params(value: float = 1.0, *, names: tuple[str, ...] = ("dense",), features: int = 3) -> dict[str, Any]:
    return {
        name: {"kernel": jnp.full((2, features), value), "bias": jnp.full((features,), value)}
        for name in names
    }


def _state(value: float = 0.0, *, step: int = 0, **params_kwargs: Any) -> kd.train.TrainState:
    """A kd.train.TrainState whose every float leaf (opt_state's included) is `value`."""
    params = _params(value, **params_kwargs)
    opt_state = jax.tree.map(lambda x: jnp.full_like(x, value) if x.ndim else x, _TX.init(params))
    return kd.train.TrainState(
        step=jnp.asarray(step, jnp.int32),
        params=params,
        collections={"batch_stats": {"mean": jnp.full((3,), value)}},
        opt_state=opt_state,
    )


def _save(workdir: pathlib.Path, state: Any, step: int = 1) -> pathlib.Path:
    with ckpts.Checkpointer(workdir=workdir, save_interval_steps=1, max_to_keep=None) as ckpt:
        ckpt.maybe_save(step, state=state, force=True)
    return workdir


def _assert_equal(actual: Any, expected: Any) -> None:
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(e))


@pytest.fixture
def source(tmp_path: pathlib.Path) -> pathlib.Path:
    """A run whose step-1 checkpoint holds 1.0 in every float leaf."""
    return _save(tmp_path / "source", _state(1.0, step=1))


# What is loaded


def test_loads_all_params_and_collections_from_another_run(source):
    loaded = PartialLoader(workdir=source).transform(_state(0.0))

    _assert_equal(loaded.params, _params(1.0))
    _assert_equal(loaded.collections, {"batch_stats": {"mean": jnp.ones(3)}})


def test_step_and_opt_state_are_not_loaded_by_default(source):
    fresh = _state(0.0)

    loaded = PartialLoader(workdir=source).transform(fresh)

    assert int(loaded.step) == 0
    _assert_equal(loaded.opt_state, fresh.opt_state)


def test_opt_state_is_loaded_when_mapped(source):
    loaded = PartialLoader(workdir=source, new_to_old={"opt_state": "opt_state"}).transform(_state(0.0))

    assert [type(s) for s in loaded.opt_state] == [optax.ScaleByAdamState, optax.EmptyState]
    _assert_equal(loaded.opt_state, _state(1.0).opt_state)
    _assert_equal(loaded.params, _params(0.0))


def test_a_renamed_subtree_loads(tmp_path):
    _save(tmp_path, _state(1.0, names=("encoder",)))
    fresh = _state(0.0, names=("encoder", "decoder"))

    loaded = PartialLoader(workdir=tmp_path, new_to_old={"params.decoder": "params.encoder"}).transform(fresh)

    _assert_equal(loaded.params["decoder"], _params(1.0)["dense"])
    _assert_equal(loaded.params["encoder"], _params(0.0)["dense"])


def test_a_single_leaf_loads(source):
    loaded = PartialLoader(
        workdir=source, new_to_old={"params.dense.kernel": "params.dense.kernel"}
    ).transform(_state(0.0))

    np.testing.assert_array_equal(loaded.params["dense"]["kernel"], jnp.ones((2, 3)))
    np.testing.assert_array_equal(loaded.params["dense"]["bias"], jnp.zeros(3))


def test_a_glob_loads_only_the_leaves_it_selects(tmp_path):
    _save(tmp_path, _state(1.0, names=("a", "b")))

    loaded = PartialLoader(workdir=tmp_path, new_to_old={"params.**.kernel": "params.**.kernel"}).transform(
        _state(0.0, names=("a", "b"))
    )

    for name in ("a", "b"):
        np.testing.assert_array_equal(loaded.params[name]["kernel"], jnp.ones((2, 3)))
        np.testing.assert_array_equal(loaded.params[name]["bias"], jnp.zeros(3))
    np.testing.assert_array_equal(loaded.collections["batch_stats"]["mean"], jnp.zeros(3))


def test_a_glob_with_a_renamed_prefix_loads_below_the_old_prefix(tmp_path):
    _save(tmp_path, _state(1.0, names=("encoder",)))

    loaded = PartialLoader(
        workdir=tmp_path, new_to_old={"params.decoder.**.kernel": "params.encoder.**.kernel"}
    ).transform(_state(0.0, names=("encoder", "decoder")))

    np.testing.assert_array_equal(loaded.params["decoder"]["kernel"], jnp.ones((2, 3)))
    np.testing.assert_array_equal(loaded.params["decoder"]["bias"], jnp.zeros(3))
    np.testing.assert_array_equal(loaded.params["encoder"]["kernel"], jnp.zeros((2, 3)))


def test_a_later_entry_overrides_an_earlier_one(tmp_path):
    params = {"encoder": _params(1.0)["dense"], "decoder": _params(2.0)["dense"]}
    _save(tmp_path, dataclasses.replace(_state(0.0, names=("encoder", "decoder")), params=params))

    loaded = PartialLoader(
        workdir=tmp_path, new_to_old={"params": "params", "params.decoder": "params.encoder"}
    ).transform(_state(0.0, names=("encoder", "decoder")))

    np.testing.assert_array_equal(loaded.params["decoder"]["kernel"], jnp.ones((2, 3)))
    np.testing.assert_array_equal(loaded.params["encoder"]["kernel"], jnp.ones((2, 3)))


def test_loaded_leaves_keep_the_template_dtype_and_sharding(source):
    fresh = _state(0.0)
    fresh = fresh.replace(params=jax.tree.map(lambda x: x.astype(jnp.bfloat16), fresh.params))

    loaded = PartialLoader(workdir=source).transform(fresh)

    for got, template in zip(jax.tree.leaves(loaded), jax.tree.leaves(fresh), strict=True):
        assert isinstance(got, jax.Array)
        assert got.dtype == template.dtype
        assert got.sharding == template.sharding
    np.testing.assert_array_equal(np.asarray(loaded.params["dense"]["kernel"], np.float32), np.ones((2, 3)))


def test_the_input_state_is_unchanged(source):
    fresh = _state(0.0)
    before = jax.tree.map(np.asarray, fresh)

    PartialLoader(workdir=source).transform(fresh)

    _assert_equal(fresh, before)


# Which checkpoint


def test_step_picks_a_given_checkpoint_and_the_default_is_the_latest(tmp_path):
    _save(tmp_path, _state(1.0), step=1)
    _save(tmp_path, _state(2.0), step=2)

    latest = PartialLoader(workdir=tmp_path).transform(_state(0.0))
    first = PartialLoader(workdir=tmp_path, step=1).transform(_state(0.0))

    _assert_equal(latest.params, _params(2.0))
    _assert_equal(first.params, _params(1.0))


def test_a_step_not_saved_raises_file_not_found_listing_the_saved_ones(source):
    with pytest.raises(FileNotFoundError, match=r"step 7 .*available steps: 1\)"):
        PartialLoader(workdir=source, step=7).transform(_state(0.0))


def test_the_checkpoints_folder_itself_is_accepted(source):
    loaded = PartialLoader(workdir=source / "checkpoints").transform(_state(0.0))

    _assert_equal(loaded.params, _params(1.0))


def test_a_workdir_without_checkpoints_raises_file_not_found_and_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "checkpoints")):
        PartialLoader(workdir=tmp_path).transform(_state(0.0))

    assert list(tmp_path.iterdir()) == []


def test_an_empty_checkpoints_folder_raises_file_not_found(tmp_path):
    (tmp_path / "checkpoints").mkdir()

    with pytest.raises(FileNotFoundError, match=r"no checkpoint in .*checkpoints"):
        PartialLoader(workdir=tmp_path).transform(_state(0.0))


def test_loading_deletes_no_checkpoint_of_the_source_run(tmp_path):
    for step in range(1, 6):
        _save(tmp_path, _state(float(step)), step=step)

    PartialLoader(workdir=tmp_path).transform(_state(0.0))

    with ckpts.Checkpointer(workdir=tmp_path, save_interval_steps=1, read_only=True) as ckpt:
        assert ckpt.all_steps() == (1, 2, 3, 4, 5)


# Errors


def test_a_shape_mismatch_names_the_path_and_both_shapes(source):
    with pytest.raises(PartialLoadError) as info:
        PartialLoader(workdir=source).transform(_state(0.0, features=4))

    assert "'params.dense.kernel': shape (2, 4) float32 in the model but (2, 3) float32" in str(info.value)
    assert info.value.path == "params.dense.bias"  # the first problem, in tree order


def test_a_model_leaf_missing_from_the_checkpoint_suggests_the_closest_path(tmp_path):
    _save(tmp_path, _state(1.0, names=("dense_0",)))

    with pytest.raises(PartialLoadError) as info:
        PartialLoader(workdir=tmp_path, new_to_old={"params": "params"}).transform(
            _state(0.0, names=("dense0",))
        )

    message = str(info.value)
    assert "'params.dense0.kernel': in the model but not in the checkpoint" in message
    assert "did you mean 'params.dense_0.kernel'?" in message


def test_a_renamed_subtree_leaf_missing_from_the_checkpoint_names_the_path_looked_for(tmp_path):
    _save(tmp_path, _state(1.0, names=("encoder",)))
    fresh = _state(0.0, names=("decoder",))
    fresh = fresh.replace(params={"decoder": {**fresh.params["decoder"], "scale": jnp.ones(3)}})

    with pytest.raises(PartialLoadError) as info:
        PartialLoader(workdir=tmp_path, new_to_old={"params.decoder": "params.encoder"}).transform(fresh)

    assert info.value.problems == (
        (
            "params.decoder.scale",
            "in the model but not in the checkpoint (looked for 'params.encoder.scale')",
        ),
    )


def test_an_unused_checkpoint_leaf_below_a_mapped_path_is_an_error(tmp_path):
    _save(tmp_path, _state(1.0, names=("dense", "head")))

    with pytest.raises(PartialLoadError) as info:
        PartialLoader(workdir=tmp_path).transform(_state(0.0))

    assert [path for path, _ in info.value.problems] == ["params.head.bias", "params.head.kernel"]
    assert "'params.head.kernel': in the checkpoint below a mapped path, but loaded into nothing" in str(
        info.value
    )


def test_a_new_to_old_key_that_matches_nothing_in_the_model_is_an_error(source):
    with pytest.raises(
        PartialLoadError,
        match=r"'params\.dens': not in the model \(a new_to_old key\); did you mean 'params\.dense'\?",
    ):
        PartialLoader(workdir=source, new_to_old={"params.dens": "params.dense"}).transform(_state(0.0))


def test_a_glob_that_matches_nothing_in_the_model_is_an_error(source):
    with pytest.raises(PartialLoadError, match=r"'params\.\*\*\.scale': .*matches nothing in the model"):
        PartialLoader(workdir=source, new_to_old={"params.**.scale": "params.**.scale"}).transform(
            _state(0.0)
        )


def test_a_new_to_old_value_not_in_the_checkpoint_is_an_error(source):
    with pytest.raises(
        PartialLoadError,
        match=r"'params\.encoder': not in the checkpoint \(the new_to_old value for 'params\.dense'\)",
    ):
        PartialLoader(workdir=source, new_to_old={"params.dense": "params.encoder"}).transform(_state(0.0))


def test_all_problems_are_listed_in_one_error_naming_the_checkpoint(source):
    fresh = _state(0.0, names=("dense", "extra"), features=4)

    with pytest.raises(PartialLoadError) as info:
        PartialLoader(workdir=source).transform(fresh)

    message = str(info.value)
    assert f"step 1 of {source / 'checkpoints'}" in message
    assert "'params.dense.kernel': shape (2, 4)" in message
    assert "'params.extra.kernel': in the model but not in the checkpoint" in message
    assert len(info.value.problems) == 4


def test_the_error_is_a_checkpoint_structure_error_and_a_value_error(source):
    with pytest.raises(PartialLoadError) as info:
        PartialLoader(workdir=source).transform(_state(0.0, features=4))

    assert isinstance(info.value, ckpts.CheckpointStructureError)
    assert isinstance(info.value, ValueError)


# Ignoring keys


def test_ignore_model_keys_keeps_their_init_values(source):
    fresh = _state(0.0, names=("dense", "extra"))

    loaded = PartialLoader(workdir=source, ignore_model_keys=("params.extra.**",)).transform(fresh)

    _assert_equal(loaded.params["dense"], _params(1.0)["dense"])
    _assert_equal(loaded.params["extra"], _params(0.0)["dense"])


def test_ignore_model_keys_also_match_below_the_mapped_path(source):
    fresh = _state(0.0, names=("dense", "extra"))

    loaded = PartialLoader(
        workdir=source, new_to_old={"params": "params"}, ignore_model_keys=("extra.*",)
    ).transform(fresh)

    _assert_equal(loaded.params["extra"], _params(0.0)["dense"])


def test_ignore_restored_keys_leave_checkpoint_leaves_unused(tmp_path):
    _save(tmp_path, _state(1.0, names=("dense", "head")))

    loaded = PartialLoader(workdir=tmp_path, ignore_restored_keys=("**.head.**",)).transform(_state(0.0))

    _assert_equal(loaded.params, _params(1.0))


# In a run


def test_a_trainer_starts_from_the_loaded_params(tmp_path):
    source_state, _ = lib.make_trainer(
        workdir=str(tmp_path / "source"), checkpointer=ckpts.Checkpointer(save_interval_steps=100)
    ).train()
    trainer = lib.make_trainer(seed=1, init_transform=PartialLoader(workdir=tmp_path / "source"))

    state = trainer.init_state()

    _assert_equal(state.params, source_state.params)
    assert int(state.step) == 0
    assert int(trainer.train()[0].step) == 4


def test_builds_from_a_konfig_config_and_is_hashable(source):
    with konfig.imports():
        from kd import ckpts as partial_cfg

    cfg = konfig.ConfigDict()
    cfg.init_transform = partial_cfg.PartialLoader(
        workdir=str(source), new_to_old={"params.dense": "params.dense"}, ignore_model_keys=["params.x.**"]
    )

    loader = konfig.resolve(cfg).init_transform

    assert isinstance(loader, PartialLoader)
    assert hash(loader) == hash(
        PartialLoader(
            workdir=str(source),
            new_to_old={"params.dense": "params.dense"},
            ignore_model_keys=("params.x.**",),
        )
    )
    assert loader.new_to_old == {"params.dense": "params.dense"}
    _assert_equal(loader.transform(_state(0.0)).params, _params(1.0))


def test_kauldron_name_is_the_same_class():
    assert ckpts.PartialKauldronLoader is PartialLoader
    assert issubclass(PartialLoader, ckpts.InitTransform)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"step": -2}, r"PartialLoader\.step"),
        ({"new_to_old": {}}, r"PartialLoader\.new_to_old: expected a non-empty mapping"),
        ({"new_to_old": {"params.a.**": "params.b"}}, r"both paths must end alike"),
        ({"new_to_old": {"params[": "params"}}, r"PartialLoader\.new_to_old key"),
    ],
)
def test_invalid_settings_are_refused_when_built(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PartialLoader(workdir="/nowhere", **kwargs)
