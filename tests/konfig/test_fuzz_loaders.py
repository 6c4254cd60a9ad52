"""Property-based fuzzing of the two grammars konfig reads from outside: JSON configs and
CLI overrides. Any input gives a valid result or konfig's own error, with work bounded by
the size of the input (counted, never timed)."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator

import konfig
import pytest
from hypothesis import HealthCheck, given, settings
from konfig import _json_decode
from konfig._config_dict import ConfigDict

from .strategies import json_data, override_paths, override_values


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
