# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""@typechecked on functions, methods, generators, dataclasses and classes."""

import dataclasses
import io
from collections.abc import Generator, Iterator
from typing import NamedTuple, TypedDict

import ktyping
import numpy as np
import pytest
from ktyping import Array, Float, Int, KTypeCheckError, Shape, UInt8

from .arrays import f32, i32


@ktyping.typechecked
def add_bias(x: Float["b n"], bias: Float["n"]) -> Float["b n"]:
    return x + bias


def test_matching_arguments_pass_and_the_result_is_returned() -> None:
    assert add_bias(f32(2, 3), f32(3)).shape == (2, 3)


def test_dims_are_shared_across_arguments() -> None:
    with pytest.raises(KTypeCheckError, match="argument bias"):
        add_bias(f32(2, 3), f32(4))


def test_wrong_dtype_fails() -> None:
    with pytest.raises(KTypeCheckError, match="dtype int32"):
        add_bias(i32(2, 3), f32(3))


def test_keyword_arguments_are_checked() -> None:
    with pytest.raises(KTypeCheckError, match="argument bias"):
        add_bias(x=f32(2, 3), bias=f32(5))


def test_return_value_is_checked_against_the_same_dims() -> None:
    @ktyping.typechecked
    def drop_row(x: Float["b n"]) -> Float["b n"]:
        return x[1:]

    with pytest.raises(KTypeCheckError, match="return value"):
        drop_row(f32(2, 3))


def test_every_call_gets_a_fresh_scope() -> None:
    assert add_bias(f32(2, 3), f32(3)).shape == (2, 3)
    assert add_bias(f32(5, 7), f32(7)).shape == (5, 7)


def test_omitted_arguments_are_not_checked_but_passed_ones_are() -> None:
    @ktyping.typechecked
    def f(x: Float["n"], y: Float["n"] = None, *, z: Float["n"] = None) -> int:  # type: ignore[assignment]
        return 0

    assert f(f32(3)) == 0
    with pytest.raises(KTypeCheckError, match="argument y"):
        f(f32(3), f32(4))
    with pytest.raises(KTypeCheckError, match="argument z"):
        f(f32(3), z=None)


def test_non_array_annotations_are_checked() -> None:
    @ktyping.typechecked
    def f(x: int, names: list[str], table: dict[str, float]) -> str:
        return "ok"

    assert f(1, ["a"], {"a": 1}) == "ok"
    with pytest.raises(KTypeCheckError, match="argument x"):
        f("1", ["a"], {})  # type: ignore[arg-type]
    with pytest.raises(KTypeCheckError, match="argument names"):
        f(1, ["a", 2], {})  # type: ignore[list-item]


def test_var_positional_and_var_keyword_arguments_share_dims() -> None:
    @ktyping.typechecked
    def stack(*xs: Float["n"], **named: Float["n"]) -> int:
        return len(xs) + len(named)

    assert stack(f32(3), f32(3), a=f32(3)) == 3
    with pytest.raises(KTypeCheckError, match="argument xs"):
        stack(f32(3), f32(4))
    with pytest.raises(KTypeCheckError, match="argument named"):
        stack(f32(3), a=f32(4))


def test_union_keeps_every_candidate_until_a_later_argument_decides() -> None:
    @ktyping.typechecked
    def f(x: Float["b n"] | Float["b m"], y: Float["b m"], z: Float["b n"]) -> int:
        return 0

    assert f(f32(2, 3), f32(2, 3), f32(2, 5)) == 0
    assert f(f32(2, 3), f32(2, 5), f32(2, 3)) == 0
    with pytest.raises(KTypeCheckError, match="argument z"):
        f(f32(2, 3), f32(2, 5), f32(2, 4))


def test_union_with_none() -> None:
    @ktyping.typechecked
    def f(mask: Float["n"] | None, x: Float["n"]) -> int:
        return 0

    assert f(None, f32(3)) == 0
    with pytest.raises(KTypeCheckError):
        f(f32(2), f32(3))


def test_dtype_and_dim_choices_in_one_annotation() -> None:
    @ktyping.typechecked
    def f(img: (Float | UInt8)["h w 3|4"]) -> int:
        return 0

    assert f(np.zeros((2, 2, 4), np.uint8)) == 0
    with pytest.raises(KTypeCheckError):
        f(np.zeros((2, 2, 5), np.uint8))


def test_expression_in_return_spec_uses_argument_dims() -> None:
    @ktyping.typechecked
    def pad(x: Float["n"]) -> Float["n+2"]:
        return np.pad(x, 1)

    assert pad(f32(3)).shape == (5,)


def test_backward_solving_binds_dims_for_later_arguments() -> None:
    @ktyping.typechecked
    def f(x: Float["n+1"], y: Float["n"]) -> int:
        return 0

    assert f(f32(4), f32(3)) == 0
    with pytest.raises(KTypeCheckError, match="argument y"):
        f(f32(4), f32(4))


def test_spec_values_from_bound_arguments() -> None:
    class Layer:
        hidden = 8

        @ktyping.typechecked
        def __call__(self, x: Float["b {self.hidden}"], k: int) -> Float["b {k}"]:
            return np.zeros((x.shape[0], k), np.float32)

    assert Layer()(f32(2, 8), 3).shape == (2, 3)
    with pytest.raises(KTypeCheckError, match="argument x"):
        Layer()(f32(2, 7), 3)


class Model:
    def __init__(self, w: np.ndarray) -> None:
        self.w = w

    @ktyping.typechecked
    def apply(self, x: Float["b n"]) -> Float["b n"]:
        return x

    @ktyping.typechecked
    @classmethod
    def build(cls, n: int) -> "Model":
        return cls(f32(n))

    @ktyping.typechecked
    @staticmethod
    def norm(x: Float["n"]) -> Float[""]:
        return np.float32(0.0)

    @ktyping.typechecked
    @property
    def weights(self) -> Float["n"]:
        return self.w


def test_methods_are_checked() -> None:
    assert Model(f32(3)).apply(f32(2, 3)).shape == (2, 3)
    with pytest.raises(KTypeCheckError, match="argument x"):
        Model(f32(3)).apply(i32(2, 3))


def test_classmethods_are_checked() -> None:
    assert isinstance(Model.build(3), Model)
    with pytest.raises(KTypeCheckError, match="argument n"):
        Model.build("3")  # type: ignore[arg-type]


def test_staticmethods_are_checked() -> None:
    assert Model.norm(f32(3)).shape == ()
    with pytest.raises(KTypeCheckError, match="argument x"):
        Model.norm(f32(3, 3))


def test_properties_are_checked() -> None:
    assert Model(f32(3)).weights.shape == (3,)
    with pytest.raises(KTypeCheckError, match="return value"):
        _ = Model(f32(2, 2)).weights


def test_decorating_a_class_checks_all_its_methods() -> None:
    @ktyping.typechecked
    class Encoder:
        def encode(self, x: Float["b n"]) -> Float["b"]:
            return x.sum(-1)

    assert Encoder().encode(f32(2, 3)).shape == (2,)
    with pytest.raises(KTypeCheckError):
        Encoder().encode(f32(2))


def test_generator_yields_are_checked_in_the_call_scope() -> None:
    @ktyping.typechecked
    def rows(x: Float["b n"], bad_at: int) -> Iterator[Float["n"]]:
        for i, row in enumerate(x):
            yield row[:-1] if i == bad_at else row

    assert len(list(rows(f32(3, 2), -1))) == 3
    with pytest.raises(KTypeCheckError, match="yielded value"):
        list(rows(f32(3, 2), 1))


def test_generator_return_value_and_send() -> None:
    @ktyping.typechecked
    def accumulate(x: Float["n"]) -> Generator[Float["n"], float, Int[""]]:
        total = 0
        got = yield x
        while got is not None:
            total += 1
            got = yield x * got
        return np.int32(total)

    gen = accumulate(f32(3))
    assert next(gen).shape == (3,)
    assert gen.send(2.0).shape == (3,)
    with pytest.raises(StopIteration) as stop:
        gen.send(None)
    assert stop.value.value == 1


def test_generator_sees_its_scope_inside_the_body() -> None:
    @ktyping.typechecked
    def dims(x: Float["b n"]) -> Iterator[int]:
        yield ktyping.dim["b"]
        yield ktyping.dim["n"]

    assert list(dims(f32(2, 3))) == [2, 3]


@ktyping.typechecked
@dataclasses.dataclass
class PointCloud:
    pos: Float["n 3"]
    color: UInt8["n 3"]


def test_dataclass_fields_are_checked_on_construction() -> None:
    PointCloud(pos=f32(5, 3), color=np.zeros((5, 3), np.uint8))
    with pytest.raises(KTypeCheckError, match="field color"):
        PointCloud(pos=f32(5, 3), color=np.zeros((4, 3), np.uint8))


def test_each_dataclass_instance_has_its_own_scope() -> None:
    @ktyping.typechecked
    def merge(a: PointCloud, b: PointCloud, n_total: Float["n"]) -> int:
        return 0

    a = PointCloud(pos=f32(5, 3), color=np.zeros((5, 3), np.uint8))
    b = PointCloud(pos=f32(2, 3), color=np.zeros((2, 3), np.uint8))
    assert merge(a, b, f32(7)) == 0


def test_dataclass_argument_is_rechecked_when_passed() -> None:
    @ktyping.typechecked
    def use(p: PointCloud) -> int:
        return 0

    p = PointCloud(pos=f32(5, 3), color=np.zeros((5, 3), np.uint8))
    p.color = np.zeros((4, 3), np.uint8)
    with pytest.raises(KTypeCheckError, match="argument p"):
        use(p)


def test_dataclass_field_specs_can_read_other_fields() -> None:
    @ktyping.typechecked
    @dataclasses.dataclass
    class Embedding:
        dim: int
        table: Float["v {dim}"]

    Embedding(4, f32(10, 4))
    with pytest.raises(KTypeCheckError, match="field table"):
        Embedding(4, f32(10, 5))


class Outputs(TypedDict):
    logits: Float["b n"]
    labels: Int["b"]


def test_typeddict_is_checked_in_its_own_scope() -> None:
    @ktyping.typechecked
    def loss(a: Outputs, b: Outputs) -> int:
        return 0

    good_a: Outputs = {"logits": f32(2, 3), "labels": i32(2)}
    good_b: Outputs = {"logits": f32(4, 5), "labels": i32(4)}
    assert loss(good_a, good_b) == 0
    with pytest.raises(KTypeCheckError, match="argument b"):
        loss(good_a, {"logits": f32(4, 5), "labels": i32(3)})


def test_named_tuple_and_tuple_annotations() -> None:
    class Pair(NamedTuple):
        a: int
        b: int

    @ktyping.typechecked
    def f(p: Pair, t: tuple[Float["n"], Int["n"]]) -> int:
        return p.a

    assert f(Pair(1, 2), (f32(3), i32(3))) == 1
    with pytest.raises(KTypeCheckError, match="argument t"):
        f(Pair(1, 2), (f32(3), i32(4)))


def test_pytree_leaves_share_dims() -> None:
    @ktyping.typechecked
    def f(tree: ktyping.PyTree[Float["b"]]) -> int:
        return 0

    assert f({"a": f32(2), "b": [f32(2), (f32(2), None)]}) == 0
    with pytest.raises(KTypeCheckError, match="argument tree"):
        f({"a": f32(2), "b": [f32(3)]})


def test_shape_annotation_checks_tuples() -> None:
    @ktyping.typechecked
    def f(x: Float["*b n"], s: Shape["*b"]) -> Shape["*b n"]:
        return x.shape

    assert f(f32(2, 3, 4), (2, 3)) == (2, 3, 4)
    with pytest.raises(KTypeCheckError, match="argument s"):
        f(f32(2, 3, 4), (2,))


def test_typechecked_functions_nest_with_independent_scopes() -> None:
    @ktyping.typechecked
    def inner(x: Float["n"]) -> Float["n"]:
        return x

    @ktyping.typechecked
    def outer(x: Float["n"]) -> Float["n"]:
        inner(f32(7))
        return x

    assert outer(f32(3)).shape == (3,)


def test_forward_reference_annotations_are_resolved() -> None:
    @ktyping.typechecked
    def f(x: "Float['n']") -> "Float['n']":
        return x[:-1]

    with pytest.raises(KTypeCheckError, match="return value"):
        f(f32(3))


def test_wrapped_function_keeps_its_name_and_docstring() -> None:
    @ktyping.typechecked
    def documented(x: Array) -> None:
        """Docs."""

    assert documented.__name__ == "documented"
    assert documented.__doc__ == "Docs."


def test_decorating_twice_wraps_once() -> None:
    assert ktyping.typechecked(add_bias) is add_bias


def test_coroutines_are_checked() -> None:
    import asyncio

    @ktyping.typechecked
    async def f(x: Float["n"]) -> Float["n"]:
        return x[:-1]

    with pytest.raises(KTypeCheckError, match="return value"):
        asyncio.run(f(f32(3)))


def test_plain_protocol_annotations_are_accepted_without_isinstance() -> None:
    from typing import Protocol, runtime_checkable

    class HasShape(Protocol):
        shape: tuple

    @runtime_checkable
    class Closable(Protocol):
        def close(self) -> None: ...

    @ktyping.typechecked
    def f(x: HasShape, c: Closable) -> int:
        return 0

    assert f(f32(2), io.StringIO()) == 0
    with pytest.raises(KTypeCheckError, match="argument c"):
        f(f32(2), 3)  # type: ignore[arg-type]


def test_literal_annotations() -> None:
    from typing import Literal

    @ktyping.typechecked
    def f(mode: Literal["mean", "sum"], flag: Literal[1]) -> int:
        return 0

    assert f("sum", 1) == 0
    with pytest.raises(KTypeCheckError, match="argument mode"):
        f("max", 1)  # type: ignore[arg-type]
    with pytest.raises(KTypeCheckError, match="argument flag"):
        f("sum", True)  # type: ignore[arg-type]
    with pytest.raises(KTypeCheckError, match="argument mode"):
        f(f32(2), 1)  # type: ignore[arg-type]


def test_partials_and_callable_objects_can_be_decorated() -> None:
    import functools

    class Scale:
        def __call__(self, x: Float["b n"], factor: float = 2.0) -> Float["b n"]:
            return x * factor

    for checked in (
        ktyping.typechecked(Scale()),
        ktyping.typechecked(functools.partial(Scale(), factor=3.0)),
    ):
        assert checked(f32(2, 3)).shape == (2, 3)
        with pytest.raises(KTypeCheckError, match=r"argument x = np.f32\[2\]"):
            checked(f32(2))


def test_typeddict_required_and_not_required_keys_are_checked() -> None:
    from typing import NotRequired, Required

    class Out(TypedDict, total=False):
        logits: Required[Float["b n"]]
        weights: NotRequired[Float["b"]]

    assert ktyping.isinstance({"logits": f32(2, 3)}, Out)
    assert ktyping.isinstance({"logits": f32(2, 3), "weights": f32(2)}, Out)
    assert not ktyping.isinstance({"logits": f32(2, 3), "weights": f32(3)}, Out)
    assert not ktyping.isinstance({"weights": f32(2)}, Out)


def test_dataclass_field_not_set_by_init_is_not_checked_until_set() -> None:
    @ktyping.typechecked
    @dataclasses.dataclass
    class Cached:
        x: Float["n"]
        cache: Float["n"] = dataclasses.field(init=False, repr=False)

    item = Cached(f32(2))
    assert not hasattr(item, "cache")
    item.cache = f32(3)
    assert not ktyping.isinstance(item, Cached)  # checked once set: n = 2 from x


def test_optional_written_with_none_first_is_checked() -> None:
    @ktyping.typechecked
    def f(mask: None | Float["n"], x: Float["n"]) -> int:  # noqa: RUF036 - the order under test
        return 0

    assert f(None, f32(3)) == 0
    with pytest.raises(KTypeCheckError, match="argument x"):
        f(f32(2), f32(3))
