"""The device mesh: named axes over all devices (of all hosts), e.g. `{"data": -1, "model": 2}`.

mesh = make_mesh({"data": -1, "model": 2})   # 8 devices: data 4 x model 2
mesh = make_mesh(None)                       # one axis, "devices", over all of them (Kauldron's)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import jax
from jax.sharding import Mesh

DEFAULT_AXIS = "devices"  # Kauldron's name for its one mesh axis


def check_axes(axes: Mapping[str, int] | None, *, where: str) -> None:
    """Raises ValueError unless `axes` is None or a dict of name -> size >= 1, with at most one -1."""
    if axes is None:
        return
    if not isinstance(axes, Mapping) or not axes:
        raise ValueError(
            f"{where}: expected a dict of axis name -> size such as {{'data': -1}}, got {axes!r}"
        )
    for name, size in axes.items():
        if (
            not isinstance(name, str)
            or not isinstance(size, int)
            or isinstance(size, bool)
            or size == 0
            or size < -1
        ):
            raise ValueError(
                f"{where}: axis {name!r}: expected a name and a size >= 1 (or -1 for the rest), got {size!r}"
            )
    unknown = [name for name, size in axes.items() if size == -1]
    if len(unknown) > 1:
        raise ValueError(f"{where}: at most one axis can be -1 (the rest of the devices); got {unknown}")


def axis_sizes(axes: Mapping[str, int] | None, num_devices: int, *, where: str) -> dict[str, int]:
    """`axes` with its one `-1` (if any) filled so that the sizes multiply to `num_devices`."""
    if axes is None:
        return {DEFAULT_AXIS: num_devices}
    check_axes(axes, where=where)
    unknown = [name for name, size in axes.items() if size == -1]
    known = math.prod(size for size in axes.values() if size != -1)
    if unknown:
        if num_devices % known:
            raise ValueError(
                f"{where}={dict(axes)}: the fixed axes take {known} devices, which does not divide the "
                f"{num_devices} devices there are"
            )
        return {name: (num_devices // known if size == -1 else size) for name, size in axes.items()}
    if known != num_devices:
        raise ValueError(
            f"{where}={dict(axes)}: the axes multiply to {known} devices but there are {num_devices}; "
            "give one axis -1 to take the rest"
        )
    return dict(axes)


def make_mesh(axes: Mapping[str, int] | None, *, where: str = "ShardingStrategy.mesh") -> Mesh:
    """A mesh over `jax.devices()` (every host's), laid out by JAX for the hardware's topology."""
    sizes = axis_sizes(axes, jax.device_count(), where=where)
    # Auto axes: jit propagates shardings as it always has (make_mesh's default, Explicit, types them).
    auto = (jax.sharding.AxisType.Auto,) * len(sizes)
    return jax.make_mesh(tuple(sizes.values()), tuple(sizes), axis_types=auto, devices=jax.devices())
