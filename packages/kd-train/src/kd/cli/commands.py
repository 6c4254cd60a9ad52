"""Kauldron's command line for looking into a config (`kauldron.cli.main`): `<noun> <verb> --cfg=CONFIG.py`.

    python -m kd.cli.commands config show --cfg=examples/digits.py --cfg.seed=1
    python -m kd.cli.commands data element_spec --cfg=examples/digits.py --patch.batch_size=4
    python -m kd.cli.commands run eval_shape --cfg=examples/digits.py

Nouns and verbs: `config show|resolve`, `data element_spec`, `run eval_shape`. The config is patched first for a
quick trial (`kd.cli.PatchConfig`: one step, a batch per device, no checkpoints; each field a
`--patch.<field>=VALUE` flag); an override given with `--cfg.<path>` wins over a patch. The flags are read with
argparse from the commands' dataclasses (Kauldron reads them with simple_parsing; the same flags).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import types
import typing
from typing import Any

import konfig

from . import cmd_utils as cu
from . import config, data, patch_config, run

_CONFIG = konfig.DEFINE_config_file("cfg", None, "Path to the Kauldron configuration file.", lock_config=False)

# noun -> (its group, {verb: sub-command})
NOUNS: dict[str, tuple[type[cu.CommandGroup], dict[str, type[cu.SubCommand]]]] = {
    "config": (config.Config, {"show": config.Show, "resolve": config.Resolve}),
    "data": (data.Data, {"element_spec": data.ElementSpec}),
    "run": (run.Run, {"eval_shape": run.EvalShape}),
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Args:
    """The command line, read: the command (its group, holding the verb) and the patch."""

    command: config.Config | data.Data | run.Run
    patch: patch_config.PatchConfig = dataclasses.field(
        default_factory=patch_config.PatchConfig, metadata={"cmd": False}
    )


def flag_parser(argv: list[str]) -> Args:
    """Reads `argv` (the program first): `--patch.*` flags anywhere, the noun and verb with their flags; the rest
    (`--cfg=...`, `--cfg.<path>=...`, absl's own) goes to absl. A missing or unknown noun or verb exits (2)."""
    from absl import flags

    with konfig.set_lazy_imported_modules():
        patch, rest = _patch_parser().parse_known_args(argv[1:])
        parser = _command_parser(prog="kd-train" if argv[0] == "kd-train" else "kauldron")
        namespace, rest = parser.parse_known_args(rest)
        group, verbs = NOUNS[namespace.noun]
        verb = verbs[namespace.verb]
        verb_flags = {f.name: getattr(namespace, f.name) for f in _flag_fields(verb)}
        command = group(sub_command=verb(**verb_flags))
        flags.FLAGS[_CONFIG.name].define_overrides(rest)
        flags.FLAGS(argv[:1] + rest)
    return Args(command=command, patch=patch_config.PatchConfig(**{k: v for k, v in vars(patch).items()}))


def main(args: Args) -> None:
    """Runs the command on the config of `--cfg`, patched (the command line's overrides win over patches)."""
    from absl import flags

    flag = flags.FLAGS[_CONFIG.name]
    source = flag.config_filename or ""
    if source.endswith(".py") and os.path.dirname(os.path.abspath(source)) not in sys.path:
        sys.path.insert(0, os.path.dirname(os.path.abspath(source)))  # its neighbours, as kd-train does
    cfg = _CONFIG.value
    overrides = dict(flag.override_values)
    with tempfile.TemporaryDirectory(prefix="kd_cli_") as workdir:
        if cfg.get("workdir") is None:
            overrides |= cu.tracked_update(cfg, "workdir", workdir)
        patched, patches = args.patch(cfg)
        for path in set(overrides) & set(patches):
            cu.tracked_update(patched, path, overrides[path])
            del patches[path]
        origin = patch_config.ConfigOrigin(filename=flag.config_filename, overrides=overrides, patches=patches)
        cu.execute_command(group=args.command, cfg=patched, origin=origin)


def _flag_fields(cls: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if f.metadata.get("cmd", True) and f.name != "sub_command"]


def _patch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for field in dataclasses.fields(patch_config.PatchConfig):
        _add_flag(parser, f"--patch.{field.name}", field, dest=field.name, owner=patch_config.PatchConfig)
    return parser


def _command_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Look into a config: show it, resolve it, its data's element spec, a step's shapes.",
        epilog="config flags:\n  --cfg CFG           the config file\n  --cfg.KEY=VALUE     an override",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    for field in dataclasses.fields(patch_config.PatchConfig):  # listed in --help (read by the patch parser)
        _add_flag(parser, f"--patch.{field.name}", field, dest=f"_patch_{field.name}", owner=patch_config.PatchConfig)
    nouns = parser.add_subparsers(dest="noun", required=True, metavar="{" + ",".join(NOUNS) + "}")
    for noun, (group, verbs) in NOUNS.items():
        noun_parser = nouns.add_parser(noun, help=(group.__doc__ or "").strip(), allow_abbrev=False)
        verb_parsers = noun_parser.add_subparsers(dest="verb", required=True)
        for verb, command in verbs.items():
            verb_parser = verb_parsers.add_parser(verb, help=(command.__doc__ or "").strip(), allow_abbrev=False)
            for field in _flag_fields(command):
                _add_flag(verb_parser, f"--{field.name}", field, dest=field.name, owner=command)
    return parser


def _add_flag(parser: argparse.ArgumentParser, name: str, field: dataclasses.Field, *, dest: str, owner: type) -> None:
    annotation = _field_type(field, owner)
    default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
    if annotation is bool:
        parser.add_argument(name, dest=dest, nargs="?", const=True, default=default, type=_boolean, metavar="BOOL")
    else:
        parser.add_argument(name, dest=dest, default=default, type=_reader(annotation, name))


def _field_type(field: dataclasses.Field, owner: type) -> Any:
    """A flag field's type (`int | None`): its annotation read in the module that declared it."""
    if not isinstance(field.type, str):
        return field.type
    return eval(field.type, dict(vars(sys.modules[owner.__module__])))  # our own annotation, e.g. "int | None"


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _reader(annotation: Any, name: str) -> Any:
    """Reads a flag's text as its field's type: `int | str | None` tries int, then None ("none"), then str."""
    options = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)

    def read(text: str) -> Any:
        if type(None) in options and text.strip().lower() == "none":
            return None
        for option in options:
            if option in (int, float):
                try:
                    return option(text)
                except ValueError:
                    continue
            if option is str:
                return text
        raise argparse.ArgumentTypeError(f"{name}: expected {annotation}, got {text!r}")

    return read


if __name__ == "__main__":
    from absl import app

    app.run(main, flags_parser=flag_parser)
