"""Trees as JSON-ready specs: `json_spec_like`, and the context (`plot_context`) and sharding (`plot_sharding`)
of a Trainer in that form.

    json_spec_like({"image": np.zeros((2, 8, 8, 3), np.uint8)}) == {"image": "ui8[2 8 8 3]"}
    plot_context(trainer)["params"]["hidden"]["kernel"] == "f32[2 16]"
    plot_sharding(trainer)["params"]["hidden"]["kernel"]   # "f32[2 16] NamedSharding(devices 1, P())"
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

if TYPE_CHECKING:
    from kd.train import Trainer


def json_spec_like(obj: Any) -> Any:
    """`obj` with every array replaced by its dtype and shape (`"f32[8 2]"`), made of JSON types.

    Usage: `json.dumps(json_spec_like(batch))`. Mappings and dataclasses become dicts (a dataclass field with
    `hash=False` is left out), named tuples dicts, lists lists, tuples tuples; numbers, booleans, None and
    strings stay; anything else is its `str`.
    """
    if _is_array(obj):
        return spec_text(obj)
    if isinstance(obj, Mapping):
        return {key: json_spec_like(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [json_spec_like(value) for value in obj]
    if isinstance(obj, tuple) and hasattr(obj, "_asdict"):
        return json_spec_like(obj._asdict())
    if isinstance(obj, tuple):
        return tuple(json_spec_like(value) for value in obj)
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            field.name: json_spec_like(getattr(obj, field.name))
            for field in dataclasses.fields(obj)
            if field.hash is not False
        }
    return str(obj)


def plot_context(trainer: Trainer) -> dict[str, Any]:
    """Every field of a train step's Context (`trainer.context_specs`) as `json_spec_like` specs.

    Usage: `plot_context(trainer)["batch"]`. `grads` and `updates` are the shape of `params` and say so. Nothing
    runs: the step is traced abstractly.
    """
    context = trainer.context_specs
    fields = {field.name: getattr(context, field.name) for field in dataclasses.fields(context)}
    fields["grads"] = "[same as params]"
    fields["updates"] = "[same as params]"
    return json_spec_like(fields)


def plot_sharding(trainer: Trainer) -> dict[str, Any]:
    """The train state's tree with each array as `"<dtype>[<shape>] <where it lives>"`.

    Usage: `plot_sharding(trainer)["params"]`; the shardings are `trainer.sharding.state_shardings(...)`,
    what `trainer.init_state()` places the arrays with. Nothing is allocated.
    """
    specs = trainer.state_specs
    shardings = trainer.sharding.state_shardings(specs)
    tree = jax.tree.map(
        lambda spec, sharding: f"{spec_text(spec)} {sharding_text(sharding)}", specs, shardings
    )
    return json_spec_like(tree)


def spec_text(array: Any) -> str:
    """`"f32[8 2]"`: the short dtype, then the shape."""
    return f"{short_dtype(array.dtype)}[{' '.join(str(d) for d in np.shape(array))}]"


def short_dtype(dtype: Any) -> str:
    """`f32`, `bf16`, `i32`, `ui8`, `bool`, `c64`, or the dtype's own name (PRNG keys, float8 types)."""
    name = str(dtype)
    if name == "bfloat16":
        return "bf16"
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:  # a JAX extended dtype (PRNG keys)
        return name
    bits = np_dtype.itemsize * 8
    prefix = {"f": "f", "i": "i", "u": "ui", "c": "c"}.get(np_dtype.kind)
    if np_dtype.kind == "b":
        return "bool"
    if prefix is None or name != f"{np_dtype.name}" or not name.endswith(str(bits)):
        return name
    return f"{prefix}{bits}"


def sharding_text(sharding: Any) -> str:
    """`NamedSharding(devices 2, P('devices',))`: the mesh's axes and the spec, without the device list."""
    mesh, spec = getattr(sharding, "mesh", None), getattr(sharding, "spec", None)
    if mesh is None or spec is None:
        return str(sharding)
    axes = ", ".join(f"{name} {size}" for name, size in mesh.shape.items())
    return f"{type(sharding).__name__}({axes}, {spec})"


def _is_array(obj: Any) -> bool:
    return hasattr(obj, "shape") and hasattr(obj, "dtype") and not isinstance(obj, type)
