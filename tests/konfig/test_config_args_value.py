"""A `ConfigArgs` dataclass assigned into a config (Kauldron's `configargs_demo`: `cfg.aux = args`)."""

from __future__ import annotations

import dataclasses
import json

import konfig
import pytest


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConfigArgs:
    model: str = "tiny_vit"
    dataset_names: tuple[str, ...] = ("imagenet2012", "coco")
    dataset_weights: tuple[float, ...] = (1.0, 0.5)
    batch_size: int = 256


@dataclasses.dataclass(frozen=True)
class Settings:
    lr: float = 0.1


def test_config_args_is_stored_as_its_fields():
    cfg = konfig.ConfigDict()
    cfg.aux = ConfigArgs()
    assert cfg.aux.batch_size == 256
    assert isinstance(cfg.aux, konfig.ConfigDict)
    cfg.aux.batch_size = 32  # editable like any config
    assert konfig.resolve(cfg).aux.batch_size == 32


def test_config_args_resolves_to_a_mapping_equal_to_its_fields():
    args = ConfigArgs(model="vit", batch_size=8)
    cfg = konfig.ConfigDict(aux=args)
    aux = konfig.resolve(cfg).aux
    assert aux == dataclasses.asdict(args)
    assert aux.model == args.model and aux.dataset_names == args.dataset_names
    assert ConfigArgs(**aux) == args


def test_config_args_survives_a_json_round_trip():
    cfg = konfig.ConfigDict()
    cfg.aux = ConfigArgs()
    loaded = konfig.from_json(cfg.to_json())
    assert konfig.resolve(loaded) == konfig.resolve(cfg)
    assert json.loads(cfg.to_json())  # plain data: no import of the config module needed


def test_other_live_dataclasses_are_still_refused():
    cfg = konfig.ConfigDict()
    with pytest.raises(konfig.ConfigValueError, match=r"cfg\.settings: .*konfig\.export"):
        cfg.settings = Settings()
