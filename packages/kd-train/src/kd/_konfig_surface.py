"""What a config in konfig's safe mode may build from kd, and from the libraries kd configures.

`konfig.resolve(cfg, allowed=["kd", "optax", "flax", "jax"])` admits these names, not every attribute
of those packages (kd-train's pyproject declares them as `konfig.surfaces` entry points). What is here:
the classes a config describes (models, losses, metrics, summaries, data sources and transforms,
optimizer helpers, evaluators, checkpointer and writer classes, sharding strategies) and pure functions.
What never is: what launches (`kd.xm`), writes files by itself (`kd._atomic`, `kd.export`,
`kd.evals.evaluate_checkpoints`), imports or runs code by name (`kd.cli`, `kd.kauldron_alias`, konfig),
or reads a run (`kd.inspect`). A class on the list may still do what it is built to do once used
(a writer writes where its config says): safe mode governs what is built, see docs/guides/konfig.md.

Usage: `konfig.declared_surface("kd")  # KD`.
"""

from __future__ import annotations

# kd's namespaces whose every public name is a configurable class or a pure function.
_WHOLE = (
    "kd.losses",
    "kd.metrics",
    "kd.summaries",
    "kd.nn",
    "kd.optim",
    "kd.random",
    "kd.typing",
    "kd.sharding",
    "kd.data",
    "kd.data.py",
    "kd.writers",
    "kd.ckpts",
)

KD: tuple[str, ...] = (
    *(f"{namespace}:*" for namespace in _WHOLE),
    # Classmethods a config calls by name.
    "kd.nn:VitEncoder.from_variant_str",
    "kd.nn:ViTSpec.from_variant_string",
    # kd.train: the classes a config describes, not the functions that run or read a run.
    *(
        f"kd.train:{name}"
        for name in (
            "Trainer",
            "TrainStep",
            "Setup",
            "Auxiliaries",
            "RngStream",
            "RngStreams",
            "Profiler",
            "Progress",
            "TqdmInfo",
            "PerformanceTimer",
            "InterestFilter",
            "LinenModel",
            "NnxModel",
            "ROOT_CFG_REF",
        )
    ),
    # kd.runtime: the same classes under the room they live in.
    *(f"kd.runtime:{name}" for name in ("RngStream", "RngStreams", "InterestFilter", "LinenModel", "NnxModel")),
    "kd.evals:*",  # the evaluators and their schedules; not evaluate_checkpoints (below)
    # Functions of those namespaces that read or write files by themselves.
    "!kd.ckpts:workdir_from_xid",
    "!kd.evals:evaluate_checkpoints",
    # Steps of a run and of the commands (public for kd's other parts), not something a config builds.
    "!kd.ckpts:apply_init_transform",
    "!kd.ckpts:barrier",
    "!kd.ckpts:what_is_missing",
    "!kd.writers:leave_out_writers",
    "!kd.writers:short_labels",
    # Functions that change the process's global state rather than build something.
    "!kd.typing:enable_*",
    "!kd.typing:disable_*",
    "!kd.typing:set_*",
)

OPTAX: tuple[str, ...] = (
    "optax:*",
    "optax.schedules:*",
    "optax.contrib:*",
    "!optax:tree_utils",
    "!optax:tree",
)

FLAX: tuple[str, ...] = (
    "flax.linen:*",
    "flax.linen.initializers:*",
    "flax.nnx:*",
    "!flax.linen:tabulate",
    "!flax.nnx:display",
    # Global state (printing, graph mode, axis rules, registries), not something built.
    "!flax.linen:set_*",
    "!flax.linen:enable_*",
    "!flax.linen:disable_*",
    "!flax.nnx:set_*",
    "!flax.nnx:register_*",
    "!flax.nnx:use_*",
)

JAX: tuple[str, ...] = (
    "jax.nn:*",
    "jax.nn.initializers:*",
    "jax.numpy:*",
    "jax.random:*",
    "jax:ShapeDtypeStruct",
    "!jax.numpy:load",
    "!jax.numpy:fromfile",
    "!jax.numpy:save",
    "!jax.numpy:savez",
    # Global state, and planners whose work grows exponentially with their arguments.
    "!jax.numpy:set_printoptions",
    "!jax.numpy:printoptions",
    "!jax.numpy:einsum",
    "!jax.numpy:einsum_path",
)


def _kauldron() -> tuple[str, ...]:
    """kd's entries under Kauldron's module names (`kauldron.modules:*` for `kd.nn:*`), negations too."""
    from kd import kauldron_alias

    entries = []
    for kauldron_name, namespace in kauldron_alias.MODULES.items():
        for entry in KD:
            negated = entry.startswith("!")
            module, _, name = entry.lstrip("!").partition(":")
            if module == namespace:
                entries.append(f"{'!' if negated else ''}{kauldron_name}:{name}")
            elif namespace == "kd" and module.startswith("kd."):  # kauldron.kd.nn is kd.nn
                entries.append(f"{'!' if negated else ''}kauldron.{module}:{name}")
    return tuple(dict.fromkeys(entries))


def __getattr__(name: str) -> tuple[str, ...]:
    if name == "KAULDRON":  # computed on first use: the alias's tables
        return _kauldron()
    raise AttributeError(name)
