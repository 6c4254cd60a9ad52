"""kd.ckpts under Kauldron's names and call forms, beside kd's own: real orbax checkpoints under tmp_path."""

from __future__ import annotations

import contextlib
import json
import pathlib
import threading
import time
import typing
from typing import Any, NamedTuple

import flax
import jax
import jax.numpy as jnp
import kd
import numpy as np
import optax
import orbax.checkpoint as ocp
import pytest
from kd import ckpts

_TX = optax.adam(1e-2)


def _params(value: float) -> dict[str, Any]:
    return {"dense": {"kernel": jnp.full((2, 3), value), "bias": jnp.full((3,), value)}}


def _state(value: float = 0.0, *, step: int = 0) -> kd.train.TrainState:
    """A kd.train.TrainState whose every float leaf (opt_state's included) is `value`."""
    params = _params(value)
    opt_state = jax.tree.map(lambda x: jnp.full_like(x, value) if x.ndim else x, _TX.init(params))
    return kd.train.TrainState(
        step=jnp.asarray(step, jnp.int32),
        params=params,
        collections={"batch_stats": {"mean": jnp.full((3,), value)}},
        opt_state=opt_state,
    )


def _assert_equal(actual: Any, expected: Any) -> None:
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(e))


def _ckpt(workdir: pathlib.Path, **kwargs: Any) -> ckpts.Checkpointer:
    kwargs.setdefault("save_interval_steps", 1)
    return ckpts.Checkpointer(workdir=workdir, max_to_keep=None, **kwargs)


@flax.struct.dataclass
class MyState(ckpts.items.StandardCheckpointItem):
    x: jax.Array


class _Saved(typing.NamedTuple):
    state: MyState
    DEFAULT_ITEM = "state"


class Saved(_Saved, ckpts.items.TopLevelCheckpointItem):
    pass


class JsonItem(ckpts.items.CheckpointItem):
    """An item with its own orbax handler (JSON), as Kauldron's PerformanceTimer."""

    def __init__(self, value: float = 0.0) -> None:
        self.value = value

    def __kd_ocp_handlers__(self) -> Any:
        return ocp.JsonCheckpointHandler()

    def __kd_ocp_save_args__(self) -> Any:
        return ocp.args.JsonSave({"value": self.value})

    def __kd_ocp_restore_args__(self) -> Any:
        return ocp.args.JsonRestore()

    def __kd_ocp_restore_post__(self, value: Any) -> JsonItem:
        return JsonItem(value["value"])


class WithJson(NamedTuple):
    state: MyState
    extra: JsonItem
    DEFAULT_ITEM = "state"


class StateAndJson(WithJson, ckpts.items.TopLevelCheckpointItem):
    pass


class Clashing(NamedTuple):
    state: MyState
    info: JsonItem
    DEFAULT_ITEM = "state"


class ClashingItem(Clashing, ckpts.items.TopLevelCheckpointItem):
    pass


# ---------------------------------------------------------------------------------------------- saving


def test_save_in_kauldron_form_restores_in_kd_form(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        assert ckpt.save(_state(1.0, step=4), step=4)

    with _ckpt(tmp_path) as ckpt:
        state, data_state = ckpt.restore(_state(0.0), step=4)
    _assert_equal(state, _state(1.0, step=4))
    assert data_state is None


def test_maybe_save_accepts_kd_and_kauldron_call_forms(tmp_path):
    with _ckpt(tmp_path, save_interval_steps=2) as ckpt:
        assert ckpt.maybe_save(2, state=_state(2.0))  # kd
        assert ckpt.maybe_save(_state(4.0), step=4)  # Kauldron
        assert not ckpt.maybe_save(_state(5.0), step=5)  # off the interval
        assert ckpt.maybe_save(_state(5.0), step=5, force=True)

        assert ckpt.all_steps() == (2, 4, 5)
        _assert_equal(ckpt.restore(_state(), step=4).state, _state(4.0))


@pytest.mark.parametrize(
    "call",
    [
        lambda c, s: c.maybe_save(s),  # neither keyword
        lambda c, s: c.maybe_save(state=s),  # no step
        lambda c, s: c.maybe_save(3, step=3, state=s),  # both keywords and a positional
    ],
)
def test_maybe_save_without_one_positional_and_one_keyword_raises_type_error(tmp_path, call):
    with _ckpt(tmp_path) as ckpt, pytest.raises(TypeError, match=r"maybe_save\(state, step=step\)"):
        call(ckpt, _state())
    assert not (tmp_path / "checkpoints").exists() or not list((tmp_path / "checkpoints").iterdir())


def test_save_skips_steps_off_the_interval_unless_forced(tmp_path):
    with _ckpt(tmp_path, save_interval_steps=10) as ckpt:
        assert not ckpt.save(_state(), step=3)
        assert ckpt.save(_state(), step=3, force=True)
        assert ckpt.all_steps == (3,)


def test_save_writes_step_zero_that_maybe_save_skips_under_never_save_step_zero(tmp_path):
    with _ckpt(tmp_path, never_save_step_zero=True) as ckpt:
        assert not ckpt.maybe_save(_state(), step=0)
        assert ckpt.save(_state(), step=0)
        assert ckpt.all_steps == (0,)


def test_save_metrics_nested_with_numpy_values_choose_the_best_checkpoint(tmp_path):
    with _ckpt(tmp_path, best_metric_path="eval.accuracy") as ckpt:
        ckpt.save(_state(1.0), step=1, metrics={"eval": {"accuracy": np.float32(0.9)}})
        ckpt.save(_state(2.0), step=2, metrics={"eval": {"accuracy": np.float32(0.5)}})
        ckpt.wait_until_finished()

        assert ckpt.best_step == 1
        assert ckpt.info(1)["metrics"] == {"eval/accuracy": pytest.approx(0.9)}


# ---------------------------------------------------------------------------------------------- restoring


def test_restore_without_a_step_gives_the_latest_state_alone(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(_state(1.0), step=1)
        ckpt.save(_state(2.0), step=2)

    with _ckpt(tmp_path) as ckpt:
        restored = ckpt.restore(_state(0.0))
        at_minus_one = ckpt.restore(_state(0.0), step=-1)
    _assert_equal(restored, _state(2.0))
    _assert_equal(at_minus_one, _state(2.0))


def test_restore_noop_if_missing_returns_the_state_in_a_new_workdir(tmp_path):
    fresh = _state(3.0)
    with _ckpt(tmp_path) as ckpt:
        assert ckpt.restore(fresh, noop_if_missing=True) is fresh


def test_restore_without_a_checkpoint_raises_file_not_found(tmp_path):
    with _ckpt(tmp_path) as ckpt, pytest.raises(FileNotFoundError, match="noop_if_missing=True"):
        ckpt.restore(_state())


def test_restore_donate_frees_the_template_arrays(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(_state(1.0), step=1)
        template = _state(0.0)

        restored = ckpt.restore(template, step=1, donate=True)

    _assert_equal(restored, _state(1.0))
    assert template.params["dense"]["kernel"].is_deleted()
    assert not restored.params["dense"]["kernel"].is_deleted()


def test_restore_of_a_standard_item_subclass_gives_that_class(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(MyState(x=jnp.ones((1, 2))), step=1)
        ckpt.wait_until_finished()

        restored = ckpt.restore(MyState(x=jnp.zeros((1, 2))), step=1)

    assert isinstance(restored, MyState)
    np.testing.assert_array_equal(restored.x, np.ones((1, 2)))


def test_restore_of_the_bare_standard_item_gives_the_saved_tree_as_dicts(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(MyState(x=jnp.ones((1, 2))), step=1)

        restored = ckpt.restore(ckpts.items.StandardCheckpointItem(), step=1)

    assert isinstance(restored, dict)
    np.testing.assert_array_equal(restored["x"], np.ones((1, 2)))


def test_a_standard_item_and_a_plain_state_share_one_layout(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.maybe_save(1, state={"x": jnp.full((1, 2), 7.0)})

        restored = ckpt.restore(MyState(x=jnp.zeros((1, 2))), step=1)

    np.testing.assert_array_equal(restored.x, np.full((1, 2), 7.0))


def test_a_top_level_item_with_its_default_item_alone_round_trips(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(Saved(MyState(x=jnp.ones((2,)))), step=1)

        (restored,) = ckpt.restore(Saved(MyState(x=jnp.zeros((2,)))), step=1)

    assert isinstance(restored, MyState)
    np.testing.assert_array_equal(restored.x, np.ones((2,)))


def test_an_item_with_its_own_orbax_handler_round_trips_through_its_handler(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(JsonItem(3.5), step=1)
    with _ckpt(tmp_path) as fresh:  # a new process: the item's handler is registered at restore
        restored = fresh.restore(JsonItem(0.0), step=1)

    assert isinstance(restored, JsonItem) and restored.value == 3.5
    assert json.loads((tmp_path / "checkpoints" / "ckpt_1" / "item" / "metadata").read_text()) == {
        "value": 3.5
    }


def test_a_top_level_item_saves_its_state_and_each_own_handler_field_beside_it(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(StateAndJson(MyState(x=jnp.ones((2,))), JsonItem(7.0)), step=1)
        state, extra = ckpt.restore(StateAndJson(MyState(x=jnp.zeros((2,))), JsonItem(0.0)), step=1)
        plain = ckpt.restore(MyState(x=jnp.zeros((2,))), step=1)  # the state alone, as any train state

    np.testing.assert_array_equal(state.x, np.ones((2,)))
    assert isinstance(extra, JsonItem) and extra.value == 7.0
    np.testing.assert_array_equal(plain.x, np.ones((2,)))
    assert sorted(p.name for p in (tmp_path / "checkpoints" / "ckpt_1").iterdir() if p.is_dir()) == [
        "digests",
        "extra",
        "info",
        "state",
    ]


def test_an_item_field_named_like_kds_own_items_is_refused_naming_it(tmp_path):
    with _ckpt(tmp_path) as ckpt, pytest.raises(TypeError, match=r"\['info'\].*rename"):
        ckpt.save(ClashingItem(MyState(x=jnp.ones((2,))), JsonItem()), step=1)


def test_restoring_an_item_the_checkpoint_lacks_names_what_it_holds(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(MyState(x=jnp.ones((2,))), step=1)
        with pytest.raises(FileNotFoundError, match=r"no item \['extra'\].*'state'"):
            ckpt.restore(StateAndJson(MyState(x=jnp.zeros((2,))), JsonItem()), step=1)


def test_kd_form_restore_of_a_step_still_gives_restored_with_the_data_state(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.maybe_save(_state(1.0), step=1, data_state={"position": 5})

        restored = ckpt.restore(_state(0.0), step=1)

    assert isinstance(restored, ckpts.Restored)
    assert restored.data_state == {"position": 5}


# ---------------------------------------------------------------------------------------------- listing


def test_all_steps_reads_as_a_property_and_as_a_method(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(_state(), step=1)
        ckpt.save(_state(), step=2)
        ckpt.wait_until_finished()

        assert ckpt.all_steps == (1, 2)
        assert ckpt.all_steps() == (1, 2)
        assert list(ckpt.all_steps) == [1, 2]


def test_delete_removes_that_checkpoint_from_disk(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(_state(), step=1)
        ckpt.save(_state(), step=2)

        ckpt.delete(1)

        assert ckpt.all_steps == (2,)
    assert not (tmp_path / "checkpoints" / "ckpt_1").exists()
    with _ckpt(tmp_path) as ckpt:
        assert ckpt.all_steps == (2,)


def test_delete_of_a_step_not_saved_raises_file_not_found(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(_state(), step=1)
        with pytest.raises(FileNotFoundError, match="available steps: 1"):
            ckpt.delete(5)


def test_item_metadata_of_the_latest_step_gives_the_state_shapes(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(_state(), step=1)
        ckpt.save({"x": jnp.ones((4, 5))}, step=2)

        metadata = ckpt.item_metadata()
        first = ckpt.item_metadata(1)

    assert tuple(metadata["state"].tree["x"].shape) == (4, 5)
    assert tuple(first["state"].tree["params"]["dense"]["kernel"].shape) == (2, 3)


def test_item_metadata_without_a_checkpoint_raises_file_not_found(tmp_path):
    with _ckpt(tmp_path) as ckpt, pytest.raises(FileNotFoundError):
        ckpt.item_metadata()


def test_iter_new_checkpoints_yields_the_newest_step_then_each_newer_one_another_process_saves(tmp_path):
    with _ckpt(tmp_path) as writer:
        writer.save(_state(), step=1)
    reader = ckpts.Checkpointer(workdir=tmp_path, save_interval_steps=1, read_only=True)
    steps = reader.iter_new_checkpoints(seconds_to_sleep=0.05, timeout=30)
    assert next(steps) == 1  # already there

    def write() -> None:
        with _ckpt(tmp_path, enable_async_checkpointing=False) as other:
            for step in (2, 3):
                time.sleep(0.3)
                other.save(_state(float(step)), step=step)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        seen = [next(steps), next(steps)]
    finally:
        thread.join()
    assert seen == [2, 3]
    _assert_equal(reader.restore(_state()), _state(3.0))
    reader.close()


def test_iter_new_checkpoints_never_yields_a_half_written_save(tmp_path):
    with _ckpt(tmp_path) as writer:
        writer.save(_state(), step=1)
    half = tmp_path / "checkpoints" / "ckpt_5.orbax-checkpoint-tmp-1234"
    (half / "state").mkdir(parents=True)
    (half / "state" / "_METADATA").write_text("{")  # cut short by a killed writer

    reader = ckpts.Checkpointer(workdir=tmp_path, save_interval_steps=1, read_only=True)
    assert list(reader.iter_new_checkpoints(seconds_to_sleep=0.05, timeout=0.3)) == [1]
    assert half.exists()  # a reader leaves the writer's folders alone
    reader.close()


def test_iter_new_checkpoints_of_a_read_only_reader_waits_for_the_folder(tmp_path):
    reader = ckpts.Checkpointer(workdir=tmp_path, save_interval_steps=1, read_only=True)
    steps = reader.iter_new_checkpoints(seconds_to_sleep=0.05, timeout=30)

    def write() -> None:
        time.sleep(0.3)
        with _ckpt(tmp_path) as writer:
            writer.save(_state(), step=4)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        assert next(steps) == 4
    finally:
        thread.join()
    reader.close()


def test_iter_new_checkpoints_keeps_waiting_while_timeout_fn_says_so(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        calls = []
        found = list(
            ckpt.iter_new_checkpoints(
                seconds_to_sleep=0.01, timeout=0.05, timeout_fn=lambda: calls.append(1) or len(calls) >= 3
            )
        )
    assert found == []
    assert len(calls) == 3


def test_contextmanager_protocol_closes_and_flushes_saves(tmp_path):
    ckpt = _ckpt(tmp_path)
    with contextlib.contextmanager(ckpt.__contextmanager__)() as opened:  # as etils' epy.ContextManager
        assert opened is ckpt
        ckpt.save(_state(1.0), step=1)
    with _ckpt(tmp_path) as again:
        assert again.all_steps == (1,)


# ---------------------------------------------------------------------------------------------- NoopCheckpointer


def test_noop_checkpointer_takes_kauldron_call_forms_and_keeps_nothing():
    ckpt = ckpts.NoopCheckpointer()
    state = _state()

    assert ckpt.maybe_save(state, step=1, force=True) is False
    assert ckpt.save(state, step=1) is False
    assert ckpt.restore(state) is state
    assert ckpt.all_steps == ()
    assert ckpt.all_steps() == ()
    assert list(ckpt.iter_new_checkpoints(timeout=0)) == []


def test_noop_checkpointer_restore_needs_a_state():
    with pytest.raises(ValueError, match="a state is needed"):
        ckpts.NoopCheckpointer().restore()


# ---------------------------------------------------------------------------------------------- loaders


@pytest.fixture
def source(tmp_path: pathlib.Path) -> pathlib.Path:
    """A run whose step-1 checkpoint holds 1.0 in every float leaf."""
    with _ckpt(tmp_path / "source") as ckpt:
        ckpt.save(_state(1.0, step=1), step=1)
    return tmp_path / "source"


def test_simple_loader_loads_params_and_collections_not_opt_state(source):
    fresh = _state(0.0)

    loaded = ckpts.SimpleCheckpointLoader(workdir=source).transform(fresh)

    _assert_equal(loaded.params, _params(1.0))
    _assert_equal(loaded.collections, {"batch_stats": {"mean": jnp.ones(3)}})
    _assert_equal(loaded.opt_state, fresh.opt_state)
    assert int(loaded.step) == 0


def test_simple_loader_after_optimizer_loads_opt_state_when_asked(source):
    loader = ckpts.SimpleCheckpointLoader(workdir=source, load_opt_state=True)
    without = ckpts.SimpleCheckpointLoader(workdir=source)

    loaded = loader.transform_after_optimizer(_state(0.0))

    _assert_equal(loaded.opt_state, _state(1.0).opt_state)
    _assert_equal(loaded.params, _params(0.0))  # the after-optimizer hook loads opt_state alone
    _assert_equal(without.transform_after_optimizer(_state(0.0)).opt_state, _state(0.0).opt_state)


def test_simple_loader_transform_loads_opt_state_too_for_kd_trainer(source):
    loaded = ckpts.SimpleCheckpointLoader(workdir=source, load_opt_state=True).transform(_state(0.0))

    _assert_equal(loaded.opt_state, _state(1.0).opt_state)
    _assert_equal(loaded.params, _params(1.0))


def test_simple_loader_of_a_different_model_raises_partial_load_error(source):
    params = {"other": {"kernel": jnp.zeros((2, 3))}}
    state = _state(0.0).replace(params=params)
    with pytest.raises(ckpts.PartialLoadError, match=r"params\.other\.kernel"):
        ckpts.SimpleCheckpointLoader(workdir=source).transform(state)


def test_loaders_are_context_managers(source):
    with ckpts.SimpleCheckpointLoader(workdir=source) as loader:
        _assert_equal(loader.transform(_state(0.0)).params, _params(1.0))
    with contextlib.contextmanager(ckpts.PartialLoader(workdir=source).__contextmanager__)() as loader:
        _assert_equal(loader.transform(_state(0.0)).params, _params(1.0))


def test_partial_loader_after_optimizer_loads_only_opt_state_entries(source):
    loader = ckpts.PartialKauldronLoader(
        workdir=source, new_to_old={"params": "params", "opt_state": "opt_state"}
    )

    loaded = loader.transform_after_optimizer(_state(0.0))

    _assert_equal(loaded.opt_state, _state(1.0).opt_state)
    _assert_equal(loaded.params, _params(0.0))
    fresh = _state(0.0)
    assert ckpts.PartialLoader(workdir=source).transform_after_optimizer(fresh) is fresh


def test_multi_transform_applies_each_in_order(source):
    class Double(ckpts.InitTransform):
        def transform(self, state):
            return state.replace(params=jax.tree.map(lambda x: x * 2, state.params))

    multi = ckpts.MultiTransform(load=ckpts.SimpleCheckpointLoader(workdir=source), double=Double())

    _assert_equal(multi.transform(_state(0.0)).params, _params(2.0))
    assert list(multi.transforms) == ["load", "double"]


def test_multi_transform_names_the_transform_that_failed(tmp_path):
    multi = ckpts.MultiTransform(
        ok=ckpts.NoopTransform(), missing=ckpts.SimpleCheckpointLoader(workdir=tmp_path / "nowhere")
    )
    with pytest.raises(FileNotFoundError) as info:
        multi.transform(_state())
    assert any("'missing' failed" in note for note in info.value.__notes__)


def test_multi_transform_refuses_what_is_not_an_init_transform():
    with pytest.raises(TypeError, match=r"MultiTransform\(bad=...\)"):
        ckpts.MultiTransform(bad=lambda s: s)


def test_multi_transform_is_a_hashable_config_value():
    a = ckpts.MultiTransform(x=ckpts.NoopTransform())
    assert a == ckpts.MultiTransform(x=ckpts.NoopTransform())
    assert hash(a) == hash(ckpts.MultiTransform(x=ckpts.NoopTransform()))
    assert a != ckpts.MultiTransform(y=ckpts.NoopTransform())


def test_noop_transform_returns_the_state_itself():
    state = _state()
    assert ckpts.NoopTransform().transform(state) is state
    assert ckpts.NoopTransform().transform_after_optimizer(state) is state


def test_workdir_from_xid_raises_naming_the_missing_xmanager():
    with pytest.raises(NotImplementedError, match="no XManager"):
        ckpts.workdir_from_xid(12345)


def test_reading_all_steps_without_using_it_opens_nothing(tmp_path):
    ckpt = _ckpt(tmp_path)
    assert callable(ckpt.all_steps)  # what kd.evals checks before making a read-only copy
    assert not (tmp_path / "checkpoints").exists()


# ---------------------------------------------------------------------------------------------- in the Trainer


class _Recording(ckpts.InitTransform):
    """A Kauldron-style transform: params in `transform`, the optimizer state in `transform_after_optimizer`."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def transform(self, state):
        self.calls.append("transform")
        return state.replace(params=jax.tree.map(jnp.zeros_like, state.params))

    def transform_after_optimizer(self, state):
        self.calls.append("after")
        return state.replace(
            opt_state=jax.tree.map(lambda x: jnp.full_like(x, 3) if x.ndim else x, state.opt_state)
        )


def test_the_trainer_calls_both_kauldron_hooks_in_order_on_a_fresh_state():
    from train_fixtures import make_trainer

    recording = _Recording()
    state = make_trainer(init_transform=recording).init_state()

    assert recording.calls == ["transform", "after"]
    assert all(float(jnp.abs(x).max()) == 0.0 for x in jax.tree.leaves(state.params))
    assert all(float(x.min()) == 3.0 for x in jax.tree.leaves(state.opt_state) if x.ndim)


def test_kd_loaders_read_their_checkpoint_once_in_the_trainers_order(source, monkeypatch):
    from kd.ckpts import _init_transform, _partial_loader

    reads = []
    real = _partial_loader.read_checkpoint
    monkeypatch.setattr(_partial_loader, "read_checkpoint", lambda *a, **k: reads.append(a) or real(*a, **k))
    loader = ckpts.SimpleCheckpointLoader(workdir=source, load_opt_state=True)
    multi = ckpts.MultiTransform(load=loader, after=_Recording())

    state = _init_transform.apply_init_transform(multi, _state(0.0))

    assert len(reads) == 1  # the loader's transform loaded opt_state too; its after-hook was not run again
    _assert_equal(state.collections, {"batch_stats": {"mean": jnp.ones(3)}})
    assert all(float(x.min()) == 3.0 for x in jax.tree.leaves(state.opt_state) if x.ndim)


class _CustomFileItem(JsonItem):
    """An item whose handler is configured (another file name): the checkpoint must use that handler."""

    def __kd_ocp_handlers__(self) -> Any:
        return ocp.JsonCheckpointHandler(filename="custom.json")


def test_an_items_own_configured_handler_writes_and_reads_its_item(tmp_path):
    with _ckpt(tmp_path) as ckpt:
        ckpt.save(_CustomFileItem(2.5), step=1)
    item_folder = tmp_path / "checkpoints" / "ckpt_1" / "item"
    assert json.loads((item_folder / "custom.json").read_text()) == {"value": 2.5}
    with _ckpt(tmp_path) as fresh:
        assert fresh.restore(_CustomFileItem(0.0), step=1).value == 2.5
