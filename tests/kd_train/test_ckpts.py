"""kd.ckpts: real orbax checkpoints on disk under tmp_path."""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import pathlib
import shutil
import signal
import subprocess
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp
import pytest
from kd import ckpts, konfig
from kd._root_ref import ROOT_CFG_REF

_ORBAX_DIR = os.path.dirname(ocp.__file__) + os.sep


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class TrainState:
    """Shaped like kd.train's state: a step, params, collections and an optax state."""

    step: jax.Array
    params: Any
    collections: Any
    opt_state: Any


_TX = optax.adam(1e-2)


def _params(features: int = 3, value: float = 1.0, extra: bool = False) -> dict[str, Any]:
    params = {"dense": {"kernel": jnp.full((2, features), value), "bias": jnp.zeros((features,))}}
    if extra:
        params["head"] = {"kernel": jnp.ones((features, 1))}
    return params


def _state(step: int = 0, **params_kwargs: Any) -> TrainState:
    params = _params(**params_kwargs)
    opt_state = _TX.init(params)
    if step:  # one real adam update, so that mu, nu and count are not their initial values
        grads = jax.tree.map(lambda p: jnp.full_like(p, 0.5), params)
        updates, opt_state = _TX.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
    return TrainState(
        step=jnp.asarray(step, jnp.int32),
        params=params,
        collections={"batch_stats": {"mean": jnp.arange(3.0)}},
        opt_state=opt_state,
    )


@pytest.fixture
def make_ckpt(tmp_path: pathlib.Path):
    opened: list[ckpts.Checkpointer] = []

    def make(**kwargs: Any) -> ckpts.Checkpointer:
        kwargs.setdefault("workdir", tmp_path)
        kwargs.setdefault("save_interval_steps", 1)
        ckpt = ckpts.Checkpointer(**kwargs)
        opened.append(ckpt)
        return ckpt

    yield make
    for ckpt in opened:
        ckpt.close()


def _assert_trees_equal(actual: Any, expected: Any) -> None:
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(e))


# Round trips


def test_restore_latest_gives_back_the_saved_state(make_ckpt):
    saved = _state(step=5)
    ckpt = make_ckpt()
    assert ckpt.maybe_save(5, state=saved)
    ckpt.close()

    state, _ = make_ckpt().restore_latest(_state())  # a second Checkpointer: read back from disk

    assert int(state.step) == 5
    _assert_trees_equal(state.params, saved.params)
    _assert_trees_equal(state.opt_state, saved.opt_state)
    _assert_trees_equal(state.collections, saved.collections)


def test_restore_keeps_the_template_pytree_types(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state(step=1))

    state, _ = ckpt.restore_latest(_state())

    assert type(state) is TrainState
    assert [type(s) for s in state.opt_state] == [optax.ScaleByAdamState, optax.EmptyState]
    assert jax.tree.structure(state) == jax.tree.structure(_state())


def test_restore_gives_arrays_with_the_template_dtype_and_sharding(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state(step=1))
    template = _state()

    state, _ = ckpt.restore_latest(template)

    for restored, wanted in zip(jax.tree.leaves(state), jax.tree.leaves(template), strict=True):
        assert isinstance(restored, jax.Array)
        assert restored.dtype == wanted.dtype
        assert restored.sharding == wanted.sharding


def test_restore_onto_an_abstract_template(make_ckpt):
    saved = _state(step=3)
    ckpt = make_ckpt()
    ckpt.maybe_save(3, state=saved)

    state, _ = ckpt.restore_latest(jax.eval_shape(lambda: _state()))

    assert int(state.step) == 3
    _assert_trees_equal(state.params, saved.params)


def test_data_state_round_trips(make_ckpt):
    data_state = {"index": 12, "epoch": 1, "shuffle": {"seed": 3, "order": [2, 0, 1]}, "source": "train"}
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state(), data_state=data_state)
    ckpt.close()

    _, restored = make_ckpt().restore_latest(_state())

    assert restored == data_state


def test_checkpoint_saved_without_data_state_restores_none_for_it(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state())

    assert ckpt.restore_latest(_state()).data_state is None


def test_restore_a_given_step(make_ckpt):
    ckpt = make_ckpt()
    for step in (1, 2, 3):
        ckpt.maybe_save(step, state=_state(step=step), data_state={"index": step})

    state, data_state = ckpt.restore(_state(), step=2)

    assert int(state.step) == 2
    assert data_state == {"index": 2}


def test_restore_a_step_not_saved_raises_file_not_found_listing_the_saved_ones(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state())

    with pytest.raises(FileNotFoundError, match=r"step 7 .*available steps: 1\)"):
        ckpt.restore(_state(), step=7)


def test_restore_latest_without_checkpoint_returns_none(make_ckpt):
    assert make_ckpt().restore_latest(_state()) is None


# Which steps are saved and kept


def test_checkpoints_are_written_under_workdir_checkpoints(make_ckpt, tmp_path):
    ckpt = make_ckpt()
    ckpt.maybe_save(4, state=_state())
    ckpt.wait_until_finished()

    assert ckpt.directory == tmp_path / "checkpoints"
    assert [p.name for p in (tmp_path / "checkpoints").iterdir()] == ["ckpt_4"]


def test_maybe_save_writes_only_at_multiples_of_save_interval_steps(make_ckpt):
    ckpt = make_ckpt(save_interval_steps=3, max_to_keep=None)

    saved = [step for step in range(1, 10) if ckpt.maybe_save(step, state=_state(step=step))]

    assert saved == [3, 6, 9]
    assert ckpt.all_steps() == (3, 6, 9)


def test_forced_save_writes_off_the_interval(make_ckpt):
    ckpt = make_ckpt(save_interval_steps=100)

    assert not ckpt.maybe_save(7, state=_state())
    assert ckpt.maybe_save(7, state=_state(), force=True)
    assert ckpt.all_steps() == (7,)


def test_save_on_steps_adds_steps_to_the_interval(make_ckpt):
    ckpt = make_ckpt(save_interval_steps=10, save_on_steps=[3], max_to_keep=None)

    saved = [step for step in range(1, 12) if ckpt.maybe_save(step, state=_state())]

    assert saved == [3, 10]


def test_never_save_step_zero_skips_step_zero_unless_forced(make_ckpt):
    ckpt = make_ckpt(save_interval_steps=5, never_save_step_zero=True)

    assert not ckpt.should_save(0)
    assert not ckpt.maybe_save(0, state=_state())
    assert ckpt.maybe_save(0, state=_state(), force=True)


def test_saving_a_step_twice_is_skipped(make_ckpt):
    ckpt = make_ckpt()
    assert ckpt.maybe_save(2, state=_state(step=2))

    assert not ckpt.maybe_save(2, state=_state(step=99), force=True)
    assert int(ckpt.restore_latest(_state()).state.step) == 2


def test_a_synchronous_save_is_on_disk_when_maybe_save_returns(make_ckpt):
    ckpt = make_ckpt(enable_async_checkpointing=False)
    ckpt.maybe_save(3, state=_state(step=3))

    assert make_ckpt().all_steps() == (3,)


def test_max_to_keep_keeps_the_newest_checkpoints(make_ckpt):
    ckpt = make_ckpt(max_to_keep=2)
    for step in range(1, 6):
        ckpt.maybe_save(step, state=_state(step=step))
    ckpt.wait_until_finished()

    assert ckpt.all_steps() == (4, 5)
    assert make_ckpt().all_steps() == (4, 5)  # on disk, not just in this Checkpointer's memory


def test_keep_period_keeps_its_multiples_beyond_max_to_keep(make_ckpt):
    ckpt = make_ckpt(max_to_keep=1, keep_period=2)
    for step in range(1, 6):
        ckpt.maybe_save(step, state=_state())
    ckpt.wait_until_finished()

    assert ckpt.all_steps() == (2, 4, 5)


def test_latest_step_is_the_newest_saved_step(make_ckpt):
    ckpt = make_ckpt(save_interval_steps=2)
    assert ckpt.latest_step is None

    for step in range(1, 6):
        ckpt.maybe_save(step, state=_state())

    assert ckpt.latest_step == 4
    ckpt.wait_until_finished()
    assert make_ckpt().latest_step == 4


# A process killed while saving

_SAVE_LOOP = """
import sys
import jax.numpy as jnp
from kd import ckpts

ckpt = ckpts.Checkpointer(workdir=sys.argv[1], save_interval_steps=1, max_to_keep=2)
step = 0
while True:
    step += 1
    state = {"step": jnp.int32(step), "w": jnp.full((64,), float(step))}
    ckpt.maybe_save(step, state=state, data_state={"index": step})
    print(step, flush=True)
"""


def _is_partial(path: pathlib.Path) -> bool:
    return ".orbax-checkpoint-tmp" in path.name


def _run_save_loop_and_kill_it_mid_save(workdir: pathlib.Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _SAVE_LOOP, str(workdir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        for _ in range(3):  # three saves started: at least two complete on disk
            assert child.stdout.readline(), "the save loop exited early"
        checkpoints = workdir / "checkpoints"
        while child.poll() is None and not any(_is_partial(p) for p in checkpoints.iterdir()):
            pass  # until a save is in flight
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory) -> pathlib.Path:
    """A workdir whose save loop got SIGKILL while writing a checkpoint."""
    for attempt in range(3):  # the kill may land in the instant between two saves: then again
        workdir = tmp_path_factory.mktemp(f"killed_run_{attempt}")
        _run_save_loop_and_kill_it_mid_save(workdir)
        if any(_is_partial(p) for p in (workdir / "checkpoints").iterdir()):
            return workdir
    pytest.fail("three SIGKILLs in a row landed between saves: none left a checkpoint half written")


@pytest.fixture
def killed_workdir(killed_run, tmp_path) -> pathlib.Path:
    workdir = tmp_path / "workdir"
    shutil.copytree(killed_run, workdir)
    return workdir


def _steps_on_disk(workdir: pathlib.Path) -> tuple[list[int], set[int]]:
    """(complete steps, sorted; partial steps), from the directory names alone."""
    complete, partial = [], set()
    for path in (workdir / "checkpoints").iterdir():
        step = int(path.name.split(".")[0].removeprefix("ckpt_"))
        if _is_partial(path):
            partial.add(step)
        else:
            complete.append(step)
    return sorted(complete), partial


def test_a_checkpoint_being_written_when_the_process_is_killed_is_never_restored(killed_workdir):
    complete, partial = _steps_on_disk(killed_workdir)
    ckpt = ckpts.Checkpointer(workdir=killed_workdir, save_interval_steps=1, max_to_keep=2)
    try:
        with pytest.warns(
            ckpts.CheckpointWarning, match=r"incomplete checkpoint .*ckpt_\d+\.orbax-checkpoint-tmp"
        ):
            state, data_state = ckpt.restore_latest({"step": jnp.int32(0), "w": jnp.zeros((64,))})

        assert int(state["step"]) not in partial
        assert int(state["step"]) == complete[-1] == ckpt.latest_step
        assert ckpt.all_steps() == tuple(complete)
        assert np.all(np.isfinite(state["w"]))
        np.testing.assert_array_equal(state["w"], np.full((64,), float(complete[-1])))
        assert data_state == {"index": complete[-1]}
    finally:
        ckpt.close()


def test_the_step_a_killed_process_left_half_written_can_be_saved_again(killed_workdir):
    (step,) = _steps_on_disk(killed_workdir)[1]
    ckpt = ckpts.Checkpointer(workdir=killed_workdir, save_interval_steps=1, max_to_keep=2)
    try:
        with pytest.warns(ckpts.CheckpointWarning, match="incomplete checkpoint"):
            ckpt.all_steps()
        assert ckpt.maybe_save(step, state={"step": jnp.int32(step), "w": jnp.full((64,), -1.0)})
        state, _ = ckpt.restore_latest({"step": jnp.int32(0), "w": jnp.zeros((64,))})

        assert int(state["step"]) == step
        np.testing.assert_array_equal(state["w"], np.full((64,), -1.0))
    finally:
        ckpt.close()


def test_the_leftover_of_an_incomplete_save_is_removed_once_warned_about(killed_workdir):
    ckpt = ckpts.Checkpointer(workdir=killed_workdir, save_interval_steps=1, max_to_keep=2)
    try:
        with pytest.warns(ckpts.CheckpointWarning):
            ckpt.all_steps()
        ckpt.wait_until_finished()
    finally:
        ckpt.close()

    assert _steps_on_disk(killed_workdir)[1] == set()


def test_a_read_only_checkpointer_leaves_a_save_in_flight_alone(killed_workdir):
    with ckpts.Checkpointer(workdir=killed_workdir, save_interval_steps=1, read_only=True) as ckpt:
        complete = ckpt.all_steps()

    assert list(complete) == _steps_on_disk(killed_workdir)[0]
    assert _steps_on_disk(killed_workdir)[1]  # another process may still be writing it


# Reading another process's checkpoints


def test_read_only_deletes_nothing_and_refuses_to_save(make_ckpt):
    _save_steps(make_ckpt, [1, 2, 3, 4], max_to_keep=None)
    reader = make_ckpt(read_only=True, max_to_keep=1)

    with pytest.raises(PermissionError, match=r"maybe_save\(step=5\): this Checkpointer is read_only"):
        reader.maybe_save(5, state=_state())
    reader.close()

    assert make_ckpt().all_steps() == (1, 2, 3, 4)


def test_read_only_without_a_checkpoint_folder_says_so(tmp_path):
    ckpt = ckpts.Checkpointer(workdir=tmp_path / "not_yet", save_interval_steps=1, read_only=True)

    with pytest.raises(FileNotFoundError, match="there is no checkpoint folder"):
        ckpt.all_steps()
    assert not (tmp_path / "not_yet").exists()


def test_reload_sees_the_steps_another_checkpointer_saved(make_ckpt):
    writer = make_ckpt(enable_async_checkpointing=False)
    writer.maybe_save(1, state=_state())
    reader = make_ckpt(read_only=True)
    assert reader.all_steps() == (1,)

    writer.maybe_save(2, state=_state())
    reader.reload()

    assert reader.all_steps() == (1, 2)


# A checkpoint whose files were damaged after it was complete


def _largest_file(folder: pathlib.Path) -> pathlib.Path:
    return max((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)


def _save_steps(make_ckpt, steps, **kwargs):
    ckpt = make_ckpt(enable_async_checkpointing=False, **kwargs)
    for step in steps:
        ckpt.maybe_save(step, state=_state(step=step), data_state={"index": step})
    ckpt.close()


def test_a_truncated_newest_checkpoint_falls_back_to_the_one_before_with_a_warning(make_ckpt, tmp_path):
    _save_steps(make_ckpt, [1, 2])
    damaged = _largest_file(tmp_path / "checkpoints" / "ckpt_2")
    with damaged.open("r+b") as f:
        f.truncate(damaged.stat().st_size // 2)

    ckpt = make_ckpt()
    with pytest.warns(
        ckpts.CheckpointWarning, match=r"ckpt_2 cannot be read .*restoring the checkpoint before"
    ):
        state, data_state = ckpt.restore_latest(_state())

    _assert_trees_equal(state, _state(step=1))
    assert data_state == {"index": 1}
    assert ckpt.all_steps() == (1,)


def test_an_unreadable_checkpoint_is_kept_aside_not_deleted(make_ckpt, tmp_path):
    _save_steps(make_ckpt, [1, 2])
    damaged = _largest_file(tmp_path / "checkpoints" / "ckpt_2")
    damaged.write_bytes(b"")

    with pytest.warns(ckpts.CheckpointWarning, match="moved to"):
        make_ckpt().restore_latest(_state())

    assert (tmp_path / ckpts.UNREADABLE_FOLDER_NAME / "ckpt_2").is_dir()
    assert not (tmp_path / "checkpoints" / "ckpt_2").exists()


def test_the_step_of_an_unreadable_checkpoint_is_saved_again(make_ckpt, tmp_path):
    _save_steps(make_ckpt, [1, 2])
    _largest_file(tmp_path / "checkpoints" / "ckpt_2").write_bytes(b"")
    ckpt = make_ckpt()
    with pytest.warns(ckpts.CheckpointWarning):
        ckpt.restore_latest(_state())

    assert ckpt.maybe_save(2, state=_state(step=2))
    ckpt.wait_until_finished()
    _assert_trees_equal(ckpt.restore(_state(), step=2).state, _state(step=2))


def test_restoring_an_unreadable_step_by_number_raises_naming_it(make_ckpt, tmp_path):
    _save_steps(make_ckpt, [1])
    _largest_file(tmp_path / "checkpoints" / "ckpt_1").write_bytes(b"")

    with pytest.raises(ckpts.CheckpointReadError, match=r"checkpoint .*ckpt_1 cannot be read") as info:
        make_ckpt().restore(_state(), step=1)

    assert info.value.step == 1


def test_only_unreadable_checkpoints_restore_as_a_fresh_start(make_ckpt, tmp_path):
    _save_steps(make_ckpt, [1])
    _largest_file(tmp_path / "checkpoints" / "ckpt_1").write_bytes(b"")

    with pytest.warns(ckpts.CheckpointWarning):
        assert make_ckpt().restore_latest(_state()) is None


# Run info and the best checkpoint


def test_info_and_metrics_saved_with_a_step_come_back(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(
        4, state=_state(), metrics={"eval/losses/total": np.float32(0.5), "img": np.ones(3)}, info={"seed": 7}
    )

    assert ckpt.info(4) == {"metrics": {"eval/losses/total": 0.5}, "seed": 7}


def test_best_metric_checkpoint_is_kept_beside_the_newest(make_ckpt):
    ckpt = make_ckpt(max_to_keep=2, best_metric_path="eval/metrics/acc")
    for step, acc in [(1, 0.5), (2, 0.9), (3, 0.6), (4, 0.7), (5, 0.65)]:
        ckpt.maybe_save(step, state=_state(step=step), metrics={"eval/metrics/acc": acc})
    ckpt.wait_until_finished()

    assert ckpt.all_steps() == (2, 4, 5)
    assert ckpt.best_step == 2
    assert make_ckpt(max_to_keep=2, best_metric_path="eval/metrics/acc").best_step == 2  # read back from disk


def test_best_mode_min_keeps_the_lowest(make_ckpt):
    ckpt = make_ckpt(max_to_keep=1, best_metric_path="eval/losses/total", best_mode="min")
    for step, loss in [(1, 3.0), (2, 1.0), (3, 2.0)]:
        ckpt.maybe_save(step, state=_state(), metrics={"eval/losses/total": loss})
    ckpt.wait_until_finished()

    assert ckpt.all_steps() == (2, 3)


def test_kauldron_dotted_best_metric_path_finds_the_logged_metric(make_ckpt):
    ckpt = make_ckpt(max_to_keep=1, best_metric_path="eval.acc")
    for step, acc in [(1, 0.9), (2, 0.1)]:
        ckpt.maybe_save(step, state=_state(), metrics={"eval/metrics/acc": acc})

    assert ckpt.best_step == 1


def test_a_best_metric_path_never_logged_warns_with_the_near_miss(make_ckpt):
    ckpt = make_ckpt(best_metric_path="eval/metrics/accuracy")

    with pytest.warns(ckpts.CheckpointWarning, match="Did you mean 'eval/metrics/acc'"):
        ckpt.maybe_save(1, state=_state(), metrics={"eval/metrics/acc": 0.5})


def test_the_newest_complete_checkpoint_stays_until_the_next_is_complete(make_ckpt):
    ckpt = make_ckpt(max_to_keep=1)
    ckpt.maybe_save(1, state=_state())
    ckpt.wait_until_finished()
    ckpt.maybe_save(2, state=_state())  # in flight: step 1 must still be on disk

    assert 1 in [int(p.name.split("_")[1]) for p in ckpt.directory.iterdir() if "tmp" not in p.name]
    ckpt.wait_until_finished()
    assert ckpt.all_steps() == (2,)


@pytest.mark.parametrize(
    ("steps", "kwargs", "expected"),
    [
        ([1, 2, 3], {"max_to_keep": 5, "keep_period": None}, {1, 2, 3}),
        ([1, 2, 3], {"max_to_keep": None, "keep_period": None}, {1, 2, 3}),
        ([1, 2, 3, 4], {"max_to_keep": 1, "keep_period": 2}, {2, 4}),
        ([1, 2, 3], {"max_to_keep": 1, "keep_period": None, "metric": {1: float("nan"), 2: 0.1}}, {2, 3}),
    ],
)
def test_retention_rules(steps, kwargs, expected):
    from kd.ckpts import _retention

    assert _retention.steps_to_keep(steps, **kwargs) == expected


# A template that does not match the checkpoint


def test_restoring_onto_a_changed_shape_names_the_path_and_both_shapes(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state(features=3))

    with pytest.raises(ckpts.CheckpointStructureError) as info:
        ckpt.restore_latest(_state(features=4))

    assert info.value.path == "params.dense.bias"
    message = str(info.value)
    assert "'params.dense.bias'" in message
    assert (
        "'params.dense.bias' has shape (4,) float32 in the template but (3,) float32 in the checkpoint"
        in message
    )
    assert "step 1" in message


def test_a_structure_error_lists_every_difference(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state(features=3))

    with pytest.raises(ckpts.CheckpointStructureError) as info:
        ckpt.restore_latest(_state(features=4))

    # bias and kernel, in params and in adam's mu and nu
    assert len(info.value.differences) == 6
    assert "5 more difference(s): 'params.dense.kernel' has shape (2, 4)" in str(info.value)


def test_restoring_onto_a_template_with_a_new_param_names_it(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state())

    with pytest.raises(
        ckpts.CheckpointStructureError,
        match=r"'params\.head\.kernel' is in the template but not in the checkpoint",
    ):
        ckpt.restore_latest(_state(extra=True))


def test_restoring_onto_a_template_missing_a_param_names_it(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state(extra=True))

    with pytest.raises(ckpts.CheckpointStructureError) as info:
        ckpt.restore_latest(_state())

    assert info.value.path == "opt_state[0].mu.head.kernel"
    assert "'opt_state[0].mu.head.kernel' is in the checkpoint but not in the template" in str(info.value)
    assert isinstance(info.value, ValueError)


# Configuration


def test_builds_from_a_konfig_config(tmp_path):
    with konfig.imports():
        from kd import ckpts as ckpts_cfg

    cfg = ckpts_cfg.Checkpointer(workdir=str(tmp_path), save_interval_steps=2, max_to_keep=1)
    ckpt = konfig.resolve(cfg)
    try:
        assert isinstance(ckpt, ckpts.Checkpointer)
        assert ckpt.maybe_save(2, state={"w": jnp.ones(2)})
        assert ckpt.directory == tmp_path / "checkpoints"
    finally:
        ckpt.close()


def test_workdir_defaults_to_the_trainer_workdir_reference():
    with konfig.imports():
        from kd import ckpts as ckpts_cfg

    ckpt = konfig.resolve(ckpts_cfg.Checkpointer(save_interval_steps=10))

    assert ckpt.workdir == ROOT_CFG_REF.workdir
    assert ckpt.max_to_keep == 3


def test_using_a_checkpointer_whose_workdir_was_never_filled_says_so():
    ckpt = ckpts.Checkpointer(save_interval_steps=10)

    with pytest.raises(ValueError, match=r"workdir is still ROOT_CFG_REF\.workdir"):
        ckpt.restore_latest({"w": jnp.zeros(2)})


@pytest.mark.parametrize(
    ("field", "value"), [("save_interval_steps", 0), ("max_to_keep", -1), ("keep_period", 1.5)]
)
def test_invalid_counts_raise_naming_the_field(field, value):
    kwargs = {"save_interval_steps": 1, field: value}

    with pytest.raises(ValueError, match=rf"Checkpointer\.{field}: expected a positive int"):
        ckpts.Checkpointer(**kwargs)


def test_data_state_that_is_not_json_raises_type_error(make_ckpt):
    ckpt = make_ckpt()

    with pytest.raises(TypeError, match=r"data_state=.*not JSON serializable"):
        ckpt.maybe_save(1, state=_state(), data_state={"rng": np.arange(2)})
    assert ckpt.all_steps() == ()


def test_a_copy_does_not_share_the_open_orbax_manager(make_ckpt):
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state())
    ckpt.wait_until_finished()

    twin = copy.deepcopy(ckpt)
    try:
        assert twin == ckpt
        assert twin.all_steps() == (1,)
    finally:
        twin.close()


def test_context_manager_finishes_the_saves(tmp_path):
    with ckpts.Checkpointer(workdir=tmp_path, save_interval_steps=1) as ckpt:
        ckpt.maybe_save(1, state=_state())

    assert (tmp_path / "checkpoints" / "ckpt_1").is_dir()


# Logs


def _orbax_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.pathname.startswith(_ORBAX_DIR)]


def test_orbax_info_and_warnings_stay_off_the_terminal(make_ckpt, caplog):
    caplog.set_level(logging.INFO)
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state(), data_state={"index": 1})
    ckpt.restore_latest(_state())
    ckpt.close()

    assert _orbax_records(caplog) == []


def test_orbax_logs_again_once_the_checkpointer_is_closed(make_ckpt, caplog, tmp_path):
    caplog.set_level(logging.INFO)
    ckpt = make_ckpt()
    ckpt.maybe_save(1, state=_state())
    ckpt.close()

    manager = ocp.CheckpointManager(tmp_path / "plain")
    manager.close()

    assert _orbax_records(caplog)


# NoopCheckpointer


def test_noop_checkpointer_saves_nothing_and_restores_nothing():
    ckpt = ckpts.NoopCheckpointer()

    assert not ckpt.maybe_save(10, state=_state(), data_state={"index": 1}, force=True)
    assert ckpt.restore_latest(_state()) is None
    assert ckpt.latest_step is None
    assert ckpt.all_steps() == ()
    assert not ckpt.should_save(0)
    ckpt.wait_until_finished()
    ckpt.close()


def test_noop_checkpointer_restore_of_a_step_raises_file_not_found():
    with pytest.raises(FileNotFoundError, match="saves nothing"):
        ckpts.NoopCheckpointer().restore(_state(), step=1)


def test_both_checkpointers_share_the_interface():
    assert issubclass(ckpts.Checkpointer, ckpts.BaseCheckpointer)
    assert issubclass(ckpts.NoopCheckpointer, ckpts.BaseCheckpointer)
