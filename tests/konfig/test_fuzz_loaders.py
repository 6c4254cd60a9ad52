"""Property-based fuzzing of the two grammars konfig reads from outside: JSON configs and
CLI overrides. Any input gives a valid result or konfig's own error, with work bounded by
the size of the input (counted, never timed)."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator

import konfig
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from konfig import _json_decode
from konfig._config_dict import ConfigDict
from konfig._placeholder import Placeholder
from konfig._refs import OpRef, PathRef

from .strategies import common_json_data, json_data, override_paths, override_values


def _is_konfig_error(error: BaseException) -> bool:
    return type(error).__module__.split(".")[0] == "konfig"


def _json_values(data: object) -> int:
    """How many JSON values (objects, arrays and scalars) `data` holds, itself included."""
    count, stack = 0, [data]
    while stack:
        value = stack.pop()
        count += 1
        if type(value) is dict:
            stack.extend(value.values())
        elif type(value) is list:
            stack.extend(value)
    return count


@contextlib.contextmanager
def _counted_decoder_steps() -> Iterator[list[int]]:
    """Counts the decoder's `value` and `mapping` steps (each call: one JSON value read)."""
    steps = [0]
    originals = {name: getattr(_json_decode._Decoder, name) for name in ("value", "mapping")}

    def counting(name: str):
        original = originals[name]

        def step(self: object, data: object) -> object:
            steps[0] += 1
            return original(self, data)

        return step

    for name in originals:
        setattr(_json_decode._Decoder, name, counting(name))
    try:
        yield steps
    finally:
        for name, original in originals.items():
            setattr(_json_decode._Decoder, name, original)


def _has_nan(text: str) -> bool:
    return "NaN" in text


@settings(max_examples=250, suppress_health_check=[HealthCheck.too_slow])
@given(json_data())
def test_any_json_loads_as_a_config_or_a_json_format_error_in_steps_bounded_by_its_size(data):
    text = json.dumps(data)
    with _counted_decoder_steps() as steps:
        try:
            cfg = konfig.from_json(text)
        except konfig.JsonFormatError:
            cfg = None
    assert steps[0] <= 2 * _json_values(data)  # each value read once; a marker may read an absent default
    if cfg is None:
        return
    repr(cfg)
    try:
        written = konfig.to_json(cfg)
    except konfig.ConfigValueError:  # e.g. a `nan` key, which JSON cannot hold
        return
    reloaded = konfig.from_json(written)
    if not _has_nan(written):
        assert reloaded == cfg if isinstance(cfg, ConfigDict) else konfig.to_json(reloaded) == written


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(json_data())
def test_any_plain_data_given_to_resolve_decodes_or_is_a_json_format_error(data):
    with _counted_decoder_steps() as steps:
        try:
            _json_decode.decode(data)  # what `konfig.resolve(plain_dict)` builds from
        except konfig.JsonFormatError:
            pass
    assert steps[0] <= 2 * _json_values(data)  # each value read once; a marker may read an absent default


def _cli_config() -> ConfigDict:
    cfg = ConfigDict(
        lst=[1, 2, 3],
        node=ConfigDict({"__qualname__": "types:SimpleNamespace", "0": 1, "rate": 0.5}),
        plain=ConfigDict(a=1, name="x", inner=ConfigDict(b=[1, (2, 3)])),
        const=ConfigDict({"__const__": "os:getcwd"}),
        pair=(1, "two"),
    )
    cfg.alias = cfg.ref.plain.a
    return cfg


@settings(max_examples=300)
@given(override_paths(), override_values)
def test_any_override_sets_a_value_or_is_a_konfig_error(path, value):
    cfg = _cli_config()
    try:
        konfig.apply_overrides(cfg, {path: value}, from_strings=True)
    except Exception as e:
        assert _is_konfig_error(e), f"{type(e).__name__}: {e}"
        return
    repr(cfg)
    try:
        cfg.to_json()
    except konfig.ConfigValueError:  # e.g. a `nan` key set with `+plain[...]`
        pass


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("fuzz") / "cfg.json"
    path.write_text(_cli_config().to_json())
    return str(path)


@settings(max_examples=150)
@given(path=override_paths(), value=override_values)
def test_any_command_line_flag_gives_a_config_or_a_konfig_error(config_file, path, value):
    argv = [f"--cfg={config_file}", f"--cfg.{path}={value}"]
    try:
        cfg, rest = konfig.parse_flags(argv)
    except Exception as e:
        assert _is_konfig_error(e), f"{type(e).__name__}: {e}"
        return
    assert rest == [] and isinstance(cfg, ConfigDict)
    repr(cfg)


def test_the_fuzzed_json_reaches_the_markers():
    # The strategy is only useful if it draws loadable markers too.
    loaded = konfig.from_json('{"t": {"__tuple__": [1]}, "r": {"__range__": [0, 3, 1]}, "n": NaN}')
    assert loaded.t == (1,) and loaded.r == range(3) and math.isnan(loaded.n)


# --- The one-pass reader of common shapes reads what the decoder reads -----------------------


def _by_the_decoder(text: str) -> object:
    """`konfig.from_json(text)` as the tree decoder alone reads it (no one-pass reader)."""
    return _json_decode._decode(json.loads(text), _json_decode._Decoder)


def _without_addresses(message: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x...", message)  # `<ast.Name object at 0x...>` in some errors


def _same(a: object, b: object, a_root: object, b_root: object) -> bool:
    """`a` and `b` hold the same values, keys in the same order, references from matching roots
    (cycles compared once)."""
    stack = [(a, b)]
    seen: set[tuple[int, int]] = set()  # pairs compared (configs may hold themselves)
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if type(x) in (ConfigDict, list, tuple, PathRef, OpRef):
            if (id(x), id(y)) in seen:
                continue
            seen.add((id(x), id(y)))
        if type(x) is ConfigDict:
            if list(x._fields) != list(y._fields) or x._origin != y._origin:
                return False
            stack.extend(zip(x._fields.values(), y._fields.values()))
        elif type(x) in (list, tuple):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif type(x) is PathRef:
            if (x._konfig_root is a_root) != (y._konfig_root is b_root):
                return False
            if x._konfig_root is not a_root:
                stack.append((x._konfig_root, y._konfig_root))
            stack.append((x._konfig_path, y._konfig_path))
        elif type(x) is OpRef:
            if x._konfig_op != y._konfig_op or list(x._konfig_kwargs) != list(y._konfig_kwargs):
                return False
            stack.append((x._konfig_args, y._konfig_args))
            stack.extend(zip(x._konfig_kwargs.values(), y._konfig_kwargs.values()))
        elif type(x) is Placeholder:  # its default may be a reference, which `==` does not compare
            if x.type != y.type or x.required != y.required:
                return False
            stack.append((x.default, y.default))
        elif type(x) is float and math.isnan(x):
            if not math.isnan(y):
                return False
        elif x != y:
            return False
    return True


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_data(), common_json_data()))
def test_from_json_reads_any_json_as_the_decoder_does_result_or_error(data):
    text = json.dumps(data)
    try:
        expected = _by_the_decoder(text)
    except konfig.JsonFormatError as e:
        with pytest.raises(konfig.JsonFormatError) as raised:
            konfig.from_json(text)
        assert _without_addresses(str(raised.value)) == _without_addresses(str(e))
        return
    got = konfig.from_json(text)
    assert _same(got, expected, got, expected)


def _common_config_text() -> str:
    ref = {"__ref__": ["steps"]}
    layer = {"__qualname__": "m:Dense", "0": 8, "1": {"__tuple__": [3, 3]}, "act": {"__const__": "m:relu"}}
    return json.dumps(
        {
            "__konfig_version__": 1,
            "steps": 10,
            "model": {"__qualname__": "m:Model", "layers": [layer, layer], "lr": ref},
            "warmup": {"__op__": "floordiv", "args": [ref, 20]},
            "ids": {"__set__": [1, 2]},
            "size": {
                "__placeholder__": "builtins:int",
                "default": {"__tuple__": [1, ref]},
                "required": False,
            },
            "other": {"__ref__": ["x"], "__root__": {"x": 1}},
            "empty": {},
            "nested": [[1, [2]], {"a": None}],
        }
    )


def test_common_shapes_are_read_in_one_pass_with_references_to_the_root():
    text = _common_config_text()
    cfg = _json_decode._read_common(text, json.loads)  # the one-pass reader takes it (raises otherwise)
    expected = _by_the_decoder(text)
    assert _same(cfg, expected, cfg, expected)
    assert type(cfg) is ConfigDict and cfg.model.lr == 10
    assert (
        cfg.model._fields["lr"]._konfig_root is cfg
        and cfg._fields["warmup"]._konfig_args[0]._konfig_root is cfg
    )
    assert cfg.model.layers[1][1] == (3, 3) and "__konfig_version__" not in cfg._fields


@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"__set__": [{"b": 1}]}}',  # a malformed marker
        '{"a": {"__id__": 0, "x": 1}, "b": {"__id__": 0}}',  # shared nodes
        '{"__raw__=1": 2}',  # keys that are not str
        '{"__konfig_version__": 1, "__root__": [1]}',  # a wrapped document
        '[{"__ref__": ["a"]}]',  # a reference from a root that is not a node
        '{"a": {"__qualname__": 1}}',  # malformed
        '{"a": ' * 200 + "1" + "}" * 200,  # deeper than the one-pass reader goes
    ],
)
def test_uncommon_shapes_are_left_to_the_decoder(text):
    with pytest.raises(Exception):  # Any error: from_json reads the text again.
        _json_decode._read_common(text, json.loads)
    try:
        expected = _by_the_decoder(text)
    except konfig.JsonFormatError as e:
        with pytest.raises(konfig.JsonFormatError, match=re.escape(str(e))):
            konfig.from_json(text)
    else:
        got = konfig.from_json(text)
        assert _same(got, expected, got, expected)
