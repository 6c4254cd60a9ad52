"""Kauldron's iterator items (`kd.data.iters`): `NoopArg`, an orbax item that writes nothing."""

from __future__ import annotations

import kd


def test_the_noop_item_saves_nothing_and_a_restore_hands_back_its_own_value(tmp_path):
    # Kauldron's `NoopArg`: for an object that keeps its own state (a live iterator), through a real orbax manager.
    import orbax.checkpoint as ocp

    manager = ocp.CheckpointManager(tmp_path)
    manager.save(0, args=kd.data.iters.NoopArg({"position": 3}))
    manager.wait_until_finished()
    assert manager.all_steps() == [0]

    live = iter([1, 2, 3])
    assert ocp.CheckpointManager(tmp_path).restore(0, args=kd.data.iters.NoopArg(live)) is live
    written = [p for p in tmp_path.rglob("*") if p.is_file() and "position" in p.read_bytes().decode(errors="ignore")]
    assert written == []  # the saved value went nowhere
