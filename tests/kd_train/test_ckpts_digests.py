"""kd.ckpts verifies a checkpoint before trusting it: digests saved with it, damage set aside, other errors raised.

One real run (a Trainer saving real orbax checkpoints at steps 2, 4 and 6) is trained once per module; each
test damages a copy of its workdir and restores from it.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import jax
import kd
import kontext
import numpy as np
import pytest
import train_fixtures as lib
from etils import epath
from flax import linen as nn
from kd import ckpts
from kd.ckpts import _digests, _errors, _structure

NUM_STEPS, SAVE_EVERY = 6, 2


class Wide(nn.Module):
    """x (b, 2) -> 64 -> 64 -> 1: its 64 x 64 kernel (16 KB) is stored in a data file, not inline."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = nn.relu(nn.Dense(64, name="in")(x))
        return nn.Dense(1, name="out")(nn.relu(nn.Dense(64, name="wide")(h)))


@dataclasses.dataclass(frozen=True, kw_only=True)
class RecordingCheckpointer(kd.ckpts.Checkpointer):
    """A Checkpointer that keeps a host copy of each state and data position it saves."""

    saved: dict[int, Any] = dataclasses.field(default_factory=dict, compare=False)

    def maybe_save(self, step: int, *, state: Any, data_state: Any = None, **kwargs: Any) -> bool:
        saved = super().maybe_save(step, state=state, data_state=data_state, **kwargs)
        if saved:
            self.saved[int(step)] = (jax.tree.map(np.array, state), data_state)
        return saved


def _trainer(workdir: Path, checkpointer: Any) -> kd.train.Trainer:
    return lib.make_trainer(
        workdir=str(workdir), model=Wide(), num_train_steps=NUM_STEPS, checkpointer=checkpointer
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, dict[int, Any]]:
    """`(workdir, {step: (state as saved, data state)})` of a run checkpointed at steps 2, 4 and 6."""
    workdir = tmp_path_factory.mktemp("digests") / "run"
    checkpointer = RecordingCheckpointer(save_interval_steps=SAVE_EVERY, max_to_keep=None)
    _trainer(workdir, checkpointer).train()
    assert sorted(checkpointer.saved) == [2, 4, 6]
    return workdir, checkpointer.saved


@pytest.fixture
def run(trained, tmp_path) -> Path:
    """A copy of the trained workdir, to damage."""
    shutil.copytree(trained[0], tmp_path / "run")
    return tmp_path / "run"


@pytest.fixture
def opened():
    made: list[ckpts.Checkpointer] = []

    def make(workdir: Path, **kwargs: Any) -> ckpts.Checkpointer:
        made.append(ckpts.Checkpointer(workdir=workdir, save_interval_steps=SAVE_EVERY, **kwargs))
        return made[-1]

    yield make
    for ckpt in made:
        ckpt.close()


def _step_dir(run: Path, step: int) -> Path:
    return run / ckpts.CHECKPOINT_FOLDER_NAME / f"ckpt_{step}"


def _largest_file(folder: Path) -> Path:
    return max((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)


def _file_holding(folder: Path, array: np.ndarray) -> Path:
    """The array file under `folder` that holds `array`'s bytes (orbax spreads arrays over several)."""
    (found,) = [p for p in folder.rglob("*") if p.is_file() and array.tobytes() in p.read_bytes()]
    return found


def _largest_array_in(file: Path, state: Any) -> tuple[str, np.ndarray]:
    """`(path, array)`: the largest array of `state` whose bytes are in `file`."""
    content = file.read_bytes()
    held = []
    for keys, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:
        leaf = np.asarray(leaf)
        if leaf.nbytes > 64 and leaf.tobytes() in content:
            held.append(
                (leaf.nbytes, _structure._path_str(tuple(_structure._key_part(k) for k in keys)), leaf)
            )
    assert held, f"no array of the state is stored whole in {file}"
    _, path, array = max(held, key=lambda h: h[0])
    return path, array


def _assert_bit_identical(actual: Any, expected: Any) -> None:
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape
        assert a.tobytes() == e.tobytes()


def _restore_latest(ckpt: ckpts.Checkpointer, template: Any) -> tuple[Any, list[str]]:
    """`(what restore_latest gives back, the CheckpointWarnings it gave, one string each)`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        restored = ckpt.restore_latest(template)
    messages = [str(w.message) for w in caught if issubclass(w.category, ckpts.CheckpointWarning)]
    return restored, messages


def _assert_set_aside_once(run: Path, messages: list[str], step: int) -> None:
    assert len(messages) == 1, messages
    assert f"Step {step}:" in messages[0] and f"ckpt_{step}" in messages[0]
    assert str(run / ckpts.UNREADABLE_FOLDER_NAME / f"ckpt_{step}") in messages[0]
    assert "\n" not in messages[0]
    assert (run / ckpts.UNREADABLE_FOLDER_NAME / f"ckpt_{step}").is_dir()  # kept, not deleted
    assert not _step_dir(run, step).exists()


# ---------------------------------------------------------------------------------------------- damage


def test_a_flipped_bit_in_the_newest_checkpoint_sets_it_aside_and_the_previous_one_restores_bit_for_bit(
    trained, run, opened
):
    saved = trained[1]
    largest = _largest_file(_step_dir(run, 6) / "state")
    path, array = _largest_array_in(largest, saved[6][0])
    content = bytearray(largest.read_bytes())
    content[bytes(content).find(array.tobytes()) + array.nbytes // 2] ^= 0x01  # one bit of that array
    largest.write_bytes(bytes(content))

    (state, data_state), messages = _restore_latest(opened(run), saved[6][0])

    _assert_set_aside_once(run, messages, 6)
    assert f"digest (crc32) of its array '{path}' differs" in messages[0], messages[0]
    _assert_bit_identical(state, saved[4][0])
    assert data_state == saved[4][1] == {"position": 4}


def test_restoring_a_step_whose_digest_differs_names_the_array(trained, run, opened):
    saved = trained[1]
    kernel = saved[6][0].params["wide"]["kernel"]
    held = _file_holding(_step_dir(run, 6) / "state", kernel)
    held.write_bytes(held.read_bytes().replace(kernel.tobytes(), (kernel + 1).tobytes(), 1))
    path = "params.wide.kernel"

    with pytest.raises(ckpts.CheckpointDigestError, match=r"ckpt_6 cannot be read") as info:
        opened(run).restore(saved[6][0], step=6)

    assert (info.value.step, info.value.path) == (6, path)
    assert isinstance(info.value, ckpts.CheckpointDamagedError)
    assert _step_dir(run, 6).is_dir()  # restore(step=...) moves nothing


def test_a_truncated_array_file_sets_the_checkpoint_aside(trained, run, opened):
    saved = trained[1]
    largest = _largest_file(_step_dir(run, 6) / "state")
    with largest.open("r+b") as f:
        f.truncate(largest.stat().st_size // 2)

    (state, data_state), messages = _restore_latest(opened(run), saved[6][0])

    _assert_set_aside_once(run, messages, 6)
    assert re.search(r"its array '[\w.]+' is missing or cut short", messages[0]), messages[0]
    _assert_bit_identical(state, saved[4][0])
    assert data_state == {"position": 4}


def test_a_wrong_data_position_is_detected_and_the_checkpoint_set_aside(trained, run, opened):
    saved = trained[1]
    (data_file,) = [p for p in (_step_dir(run, 6) / "data").iterdir() if p.name != "commit_success.txt"]
    position = json.loads(data_file.read_text())
    assert position == {"position": 6}
    data_file.write_text(json.dumps({"position": 5}))  # valid, and consistent with the format: but wrong

    (state, data_state), messages = _restore_latest(opened(run), saved[6][0])

    _assert_set_aside_once(run, messages, 6)
    assert "data position" in messages[0]
    _assert_bit_identical(state, saved[4][0])
    assert data_state == {"position": 4}


def test_an_edited_digest_file_makes_the_checkpoint_damaged(trained, run, opened):
    digests = _step_dir(run, 6) / "digests" / "digests.json"
    record = json.loads(digests.read_text())
    record["arrays"][0]["digest"] = "0" * len(record["arrays"][0]["digest"])
    digests.write_text(json.dumps(record))

    with pytest.raises(ckpts.CheckpointDigestError) as info:
        opened(run).restore(trained[1][6][0], step=6)
    assert info.value.path == record["arrays"][0]["path"]


def test_an_undecodable_digest_file_makes_the_checkpoint_damaged(trained, run, opened):
    (_step_dir(run, 6) / "digests" / "digests.json").write_text('{"format": 1, "arr')

    with pytest.raises(ckpts.CheckpointDamagedError, match="JSONDecodeError"):
        opened(run).restore(trained[1][6][0], step=6)


def test_restore_raw_is_verified_too(trained, run, opened):
    wide = trained[1][6][0].params["wide"]["kernel"]
    held = _file_holding(_step_dir(run, 6) / "state", wide)
    held.write_bytes(held.read_bytes().replace(wide.tobytes()[:8], bytes(8), 1))

    with pytest.raises(ckpts.CheckpointDigestError) as info:
        opened(run).restore_raw(step=6)
    assert info.value.path == "params.wide.kernel"


def test_every_checkpoint_damaged_is_set_aside_and_said_in_one_more_line(trained, run, opened):
    for step in (2, 4, 6):
        largest = _largest_file(_step_dir(run, step) / "state")
        largest.write_bytes(largest.read_bytes()[:10])

    restored, messages = _restore_latest(opened(run), trained[1][6][0])

    assert restored is None
    assert [m.split(":")[0] for m in messages[:3]] == ["Step 6", "Step 4", "Step 2"]
    assert len(messages) == 4 and "Every checkpoint" in messages[3] and "step 0" in messages[3]
    assert sorted(p.name for p in (run / ckpts.UNREADABLE_FOLDER_NAME).iterdir()) == [
        "ckpt_2",
        "ckpt_4",
        "ckpt_6",
    ]


def test_a_deleted_manifest_costs_one_line_on_stderr_and_the_run_resumes(run):
    os.remove(_step_dir(run, 6) / "state" / "manifest.ocdbt")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_ckpts_digests as t, kd\n"
        "state, _ = t._trainer(t.Path(sys.argv[2]), kd.ckpts.Checkpointer(save_interval_steps=2)).train()\n"
        "print(int(state.step))\n"
    )
    here = str(Path(__file__).parent)
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": here}
    proc = subprocess.run(
        [sys.executable, "-c", script, here, str(run)], capture_output=True, text=True, env=env, timeout=300
    )

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"resuming from step 4 ({run / 'checkpoints' / 'ckpt_4'})",  # the one before the damaged 6
        str(NUM_STEPS),
    ]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "CheckpointWarning: Step 6:" in lines[0] and "moved to" in lines[0]
    assert "Traceback" not in proc.stderr and "asyncio" not in proc.stderr
    assert (run / ckpts.UNREADABLE_FOLDER_NAME / "ckpt_6").is_dir()


# ---------------------------------------------------------------------------------------------- not damage


def _fail_reads_under(monkeypatch, folder: Path, error: OSError) -> list[str]:
    """Makes every read of a file under `folder` through etils' paths raise `error` (orbax reads its JSON
    and metadata files that way): a transient I/O error, at the I/O boundary."""
    cls = type(epath.Path(folder))
    original = cls.read_text
    failed: list[str] = []

    def read_text(self, *args: Any, **kwargs: Any) -> str:
        if str(self).startswith(str(folder)):
            failed.append(str(self))
            raise error
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "read_text", read_text)
    return failed


@pytest.mark.parametrize(
    "error",
    [PermissionError(errno.EACCES, "Permission denied"), OSError(errno.EIO, "Input/output error")],
    ids=["permission", "eio"],
)
def test_an_io_error_during_restore_is_raised_and_nothing_is_set_aside(
    trained, run, opened, monkeypatch, error
):
    ckpt = opened(run)
    assert ckpt.all_steps() == (2, 4, 6)
    failed = _fail_reads_under(monkeypatch, _step_dir(run, 6), error)

    with pytest.raises(type(error)) as info:
        ckpt.restore_latest(trained[1][6][0])

    assert failed and info.value is error
    assert any("not set aside" in note for note in getattr(info.value, "__notes__", []))
    assert ckpt.all_steps() == (2, 4, 6)
    assert not (run / ckpts.UNREADABLE_FOLDER_NAME).exists()


def test_a_file_replaced_by_a_folder_is_an_os_error_raised_not_damage(trained, run, opened):
    (data_file,) = [p for p in (_step_dir(run, 6) / "data").iterdir() if p.name != "commit_success.txt"]
    data_file.unlink()
    data_file.mkdir()  # reading it: IsADirectoryError, not a sign of a damaged checkpoint

    with pytest.raises(IsADirectoryError):
        opened(run).restore_latest(trained[1][6][0])

    assert _step_dir(run, 6).is_dir() and not (run / ckpts.UNREADABLE_FOLDER_NAME).exists()


def test_memory_error_is_not_damage():
    try:
        try:
            raise MemoryError
        except MemoryError as e:
            raise ValueError("OUT_OF_RANGE: cannot read") from e
    except ValueError as e:
        assert not _errors.proves_damage(e)
    assert _errors.proves_damage(ValueError("DATA_LOSS: checksum mismatch"))
    assert not _errors.proves_damage(ValueError("PERMISSION_DENIED: not allowed"))
    assert not _errors.proves_damage(RuntimeError("something else"))


# ---------------------------------------------------------------------------------------------- without digests


def test_a_checkpoint_without_digests_restores_unverified(trained, run, opened):
    shutil.rmtree(_step_dir(run, 6) / "digests")  # as an older kd wrote it

    (state, data_state), messages = _restore_latest(opened(run), trained[1][6][0])

    assert messages == []
    _assert_bit_identical(state, trained[1][6][0])
    assert data_state == {"position": 6}


def test_digest_algorithm_none_saves_no_digests_and_restores(tmp_path, opened):
    state = {"w": np.arange(600, dtype=np.float32).reshape(20, 30)}
    ckpt = opened(tmp_path, digest_algorithm=None, enable_async_checkpointing=False)
    ckpt.maybe_save(2, state=state, force=True)

    assert not (_step_dir(tmp_path, 2) / "digests").exists()
    _assert_bit_identical(ckpt.restore(state, step=2).state, state)


@pytest.mark.parametrize("algorithm", ["sha256", "blake2b", "crc32"])
def test_each_digest_algorithm_catches_a_changed_value(tmp_path, opened, algorithm):
    state = {"w": np.arange(600, dtype=np.float32).reshape(20, 30)}
    ckpt = opened(tmp_path, digest_algorithm=algorithm)
    ckpt.maybe_save(2, state=state, data_state={"position": 2}, force=True)
    ckpt.wait_until_finished()
    _assert_bit_identical(ckpt.restore(state, step=2).state, state)
    held = _file_holding(_step_dir(tmp_path, 2) / "state", state["w"])
    changed = state["w"].copy()
    changed[10, 0] = -300.0  # was 300
    held.write_bytes(held.read_bytes().replace(state["w"].tobytes(), changed.tobytes()))

    with pytest.raises(ckpts.CheckpointDigestError, match=rf"\({algorithm}\) of its array 'w'"):
        ckpt.restore(state, step=2)


def test_digests_are_computed_off_the_saving_thread(tmp_path, opened, monkeypatch):
    threads: list[threading.Thread] = []
    original = _digests.digest_record

    def digest_record(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(_digests, "digest_record", digest_record)
    ckpt = opened(tmp_path)
    ckpt.maybe_save(2, state={"w": np.ones((8, 8), np.float32)}, force=True)
    ckpt.wait_until_finished()

    assert threads and threads[0] is not threading.current_thread()
    assert (_step_dir(tmp_path, 2) / "digests" / "digests.json").is_file()


def test_an_unknown_digest_algorithm_is_refused_naming_the_choices(tmp_path):
    with pytest.raises(
        ValueError, match=r"digest_algorithm: expected one of 'sha256', 'blake2b', 'crc32' or None"
    ):
        ckpts.Checkpointer(workdir=tmp_path, save_interval_steps=1, digest_algorithm="md5")


_SHARDED = """
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding
from kd import ckpts
mesh = Mesh(np.array(jax.devices()), ("data",))
state = {
    "split": jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, PartitionSpec("data"))),
    "replicated": jax.device_put(jnp.ones(4), NamedSharding(mesh, PartitionSpec())),
}
with ckpts.Checkpointer(workdir=sys.argv[1], save_interval_steps=1) as ckpt:
    ckpt.maybe_save(1, state=state, force=True)
one = SingleDeviceSharding(jax.devices()[0])
template = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=one), state)
with ckpts.Checkpointer(workdir=sys.argv[1], save_interval_steps=1) as ckpt:
    restored = ckpt.restore(template, step=1).state
assert np.asarray(restored["split"]).tobytes() == np.arange(64.0, dtype=np.float32).tobytes()
print(restored["split"].sharding.device_set == {jax.devices()[0]})
"""


def test_an_array_sharded_over_two_devices_restores_verified_onto_one(tmp_path):
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", _SHARDED, str(tmp_path)], capture_output=True, text=True, env=env, timeout=300
    )

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True"]
    record = json.loads((_step_dir(tmp_path, 1) / "digests" / "digests.json").read_text())
    assert sorted(e["path"] for e in record["arrays"] if "digest" in e) == ["replicated", "split"]


def test_a_failed_reads_late_never_retrieved_report_is_dropped_while_a_checkpointer_is_open(caplog):
    # A read orbax left behind may be collected after the restore returned (orbax's loop thread held it):
    # asyncio then logs "Future exception was never retrieved". Built here with an error raised from a
    # file under orbax's source folder, as such a read's error is.
    import logging

    from kd.ckpts import _orbax, _quiet

    code = compile(
        "raise ValueError('NOT_FOUND: a read of a damaged checkpoint')",
        _orbax.source_directory() + "x.py",
        "exec",
    )
    try:
        exec(code)
    except ValueError as e:
        orbax_error = e
    try:
        raise ValueError("not orbax's")
    except ValueError as e:
        other_error = e
    # A tensorstore read that failed in C++ has no Python frame at all (seen in CI): its message names its spec.
    tensorstore_error = ValueError('NOT_FOUND: Error opening "zarr" driver [tensorstore_spec=\'{"driver": "zarr"}\']')
    # ...or only asyncio's own frame, when the read was wrapped in a task (seen in CI as well).
    import asyncio
    import os

    in_asyncio: dict = {}
    exec(
        compile(
            "def caught(message):\n"
            "    try:\n"
            "        raise ValueError(message)\n"
            "    except ValueError as e:\n"
            "        return e\n",
            os.path.join(os.path.dirname(asyncio.__file__), "tasks.py"),
            "exec",
        ),
        in_asyncio,
    )
    wrapped_tensorstore_error = in_asyncio["caught"](str(tensorstore_error))
    try:  # a tensorstore message raised from code that is not asyncio's is someone else's: kept
        raise ValueError(str(tensorstore_error))
    except ValueError as e:
        users_tensorstore_error = e
    log = logging.getLogger("asyncio")
    _quiet.hold()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            for error in (orbax_error, tensorstore_error, wrapped_tensorstore_error, users_tensorstore_error, other_error):
                log.error(
                    "Future exception was never retrieved", exc_info=(type(error), error, error.__traceback__)
                )
    finally:
        _quiet.release()
    assert [r.exc_info[1] for r in caplog.records] == [users_tensorstore_error, other_error]
