"""Kauldron's TensorFlow annotations (`TfFloat`, `TfArray`, ...): kd has no TensorFlow, so each one says what to use.

Usage:

    def f(x: kd.typing.TfFloat["b n"]): ...  # raises NoTensorFlowError: use ktyping.Float["b n"]
"""

from __future__ import annotations

__all__ = ["NoTensorFlowError", "TfArray", "TfFloat", "TfFloat32", "TfInt", "TfUInt8"]

# Each TensorFlow annotation -> the ktyping one that checks the same dtypes (on any array library).
_INSTEAD = {
    "TfArray": "Array",
    "TfFloat": "Float",
    "TfFloat32": "Float32",
    "TfInt": "Int",
    "TfUInt8": "UInt8",
}


class NoTensorFlowError(TypeError):
    """A TensorFlow-only annotation of Kauldron's kd.typing was used; kd is built without TensorFlow."""


class _TensorFlowAnnotation(type):
    def _refuse(cls) -> NoTensorFlowError:
        instead = _INSTEAD[cls.__name__]
        return NoTensorFlowError(
            f"kd.typing.{cls.__name__} annotates TensorFlow tensors, and kd has no TensorFlow: use "
            f"ktyping.{instead}[...] (kd.typing.{instead}), which checks numpy, jax and torch arrays (and tf "
            f"tensors, by their .shape and .dtype), or convert the tensor with np.asarray(x) first"
        )

    def __getitem__(cls, spec: object) -> object:
        raise cls._refuse()

    def __instancecheck__(cls, value: object) -> bool:
        raise cls._refuse()

    def __call__(cls, *args: object, **kwargs: object) -> object:
        raise cls._refuse()

    def __repr__(cls) -> str:
        return f"kd.typing.{cls.__name__}"


TfArray = _TensorFlowAnnotation(
    "TfArray", (), {"__doc__": "TensorFlow arrays: unavailable, see ktyping.Array."}
)
TfFloat = _TensorFlowAnnotation(
    "TfFloat", (), {"__doc__": "TensorFlow floats: unavailable, see ktyping.Float."}
)
TfFloat32 = _TensorFlowAnnotation("TfFloat32", (), {"__doc__": "unavailable, see ktyping.Float32."})
TfInt = _TensorFlowAnnotation("TfInt", (), {"__doc__": "TensorFlow ints: unavailable, see ktyping.Int."})
TfUInt8 = _TensorFlowAnnotation("TfUInt8", (), {"__doc__": "unavailable, see ktyping.UInt8."})
