"""Tiny components for the kd.train tests: a loss, metrics, a dataset and models (linen and NNX).

They follow the protocols the Trainer relies on and nothing more, so the trainer tests do not depend on
kd.losses / kd.metrics / kd.data. Imported by name (`import train_fixtures`), also inside `konfig.imports()`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import kd
import kontext
import numpy as np
import optax
from flax import linen as nn
from flax import nnx

# ---------------------------------------------------------------------------------------------- states


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Average:
    """A mergeable running mean."""

    total: jax.Array
    count: jax.Array

    def merge(self, other: Average) -> Average:
        return Average(self.total + other.total, self.count + other.count)

    def compute(self) -> jax.Array:
        return self.total / self.count


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Kept:
    """A summary state: keeps the first value it saw."""

    value: jax.Array

    def merge(self, other: Kept) -> Kept:
        return self

    def compute(self) -> jax.Array:
        return self.value


# ---------------------------------------------------------------------------------------------- losses, metrics


@dataclasses.dataclass(frozen=True, kw_only=True)
class MSE:
    """Mean squared error of `preds` against `targets` (a loss, or a metric)."""

    preds: kontext.Key = "preds"
    targets: kontext.Key = "batch.y"

    def get_state_from_context(self, context: Any) -> Average:
        kw = kontext.resolve_from_keyed_obj(context, self)
        return Average(jnp.mean((kw["preds"] - kw["targets"]) ** 2), jnp.ones(()))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Mean:
    """Mean of the array at `values`."""

    values: kontext.Key = kontext.REQUIRED

    def get_state_from_context(self, context: Any) -> Average:
        kw = kontext.resolve_from_keyed_obj(context, self)
        return Average(jnp.mean(kw["values"]), jnp.ones(()))


@dataclasses.dataclass(frozen=True, kw_only=True)
class GlobMean:
    """Mean over every leaf a glob key (`"interms.**.__call__[0]"`) selects."""

    values: kontext.Key = kontext.REQUIRED

    def get_state_from_context(self, context: Any) -> Average:
        leaves = jax.tree.leaves(kontext.filter_by_path(context, self.values))
        return Average(sum(jnp.mean(leaf) for leaf in leaves) / len(leaves), jnp.ones(()))


@dataclasses.dataclass(frozen=True, kw_only=True)
class FirstRows:
    """A summary: the first two rows of `values`."""

    values: kontext.Key = "preds"

    def get_state_from_context(self, context: Any) -> Kept:
        return Kept(kontext.resolve_from_keyed_obj(context, self)["values"][:2])


# ---------------------------------------------------------------------------------------------- data


def _batch(seed: int, index: int, batch_size: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([seed, index])
    x = rng.uniform(-1, 1, (batch_size, 2)).astype(np.float32)
    return {"x": x, "y": (0.5 * x[:, :1] - x[:, 1:]).astype(np.float32)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Regression:
    """`num_batches` batches `{"x": (b, 2), "y": (b, 1)}` per epoch, `num_epochs` times (None: forever)."""

    batch_size: int = 8
    num_batches: int = 4
    num_epochs: int | None = None
    seed: int = 0

    @property
    def element_spec(self) -> dict[str, jax.ShapeDtypeStruct]:
        return {
            "x": jax.ShapeDtypeStruct((self.batch_size, 2), np.float32),
            "y": jax.ShapeDtypeStruct((self.batch_size, 1), np.float32),
        }

    def __len__(self) -> int:
        """Batches over all epochs (Kauldron's meaning, which the Trainer reads); TypeError when endless."""
        if self.num_epochs is None:
            raise TypeError("Regression repeats forever (num_epochs=None)")
        return self.num_batches * self.num_epochs

    def __iter__(self) -> RegressionIterator:
        return RegressionIterator(self)

    def batch(self, index: int) -> dict[str, np.ndarray]:
        return _batch(self.seed, index % self.num_batches, self.batch_size)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PoisonedRegression(Regression):
    """A `Regression` whose batches at the positions `poisoned` (0-based, counted over all epochs) hold NaN
    targets: the step that trains on batch i is step i + 1."""

    poisoned: tuple[int, ...] = ()

    def __iter__(self) -> RegressionIterator:
        return PoisonedIterator(self)


class RegressionIterator:
    """Iterates a `Regression`; `get_state` / `set_state` give the position."""

    def __init__(self, ds: Regression) -> None:
        self.ds = ds
        self.position = 0

    def __iter__(self) -> RegressionIterator:
        return self

    def __next__(self) -> dict[str, np.ndarray]:
        epochs = self.ds.num_epochs
        if epochs is not None and self.position >= epochs * self.ds.num_batches:
            raise StopIteration
        self.position += 1
        return self.ds.batch(self.position - 1)

    def get_state(self) -> dict[str, int]:
        return {"position": self.position}

    def set_state(self, state: dict[str, int]) -> None:
        self.position = int(state["position"])


class PoisonedIterator(RegressionIterator):
    def __next__(self) -> dict[str, np.ndarray]:
        batch = super().__next__()
        if self.position - 1 in self.ds.poisoned:
            batch = {**batch, "y": np.full_like(batch["y"], np.nan)}
        return batch


# ---------------------------------------------------------------------------------------------- linen models


class Mlp(nn.Module):
    """x (b, 2) -> hidden (b, 16) -> out (b, 1)."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.Dense(1, name="out")(nn.relu(nn.Dense(16, name="hidden")(x)))


class SixDense(nn.Module):
    """Six Dense layers `dense_0` ... `dense_5`."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        for i in range(5):
            x = nn.tanh(nn.Dense(4, name=f"dense_{i}")(x))
        return nn.Dense(1, name="dense_5")(x)


class Sowing(nn.Module):
    """Sows its hidden features as `intermediates/features`."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = nn.relu(nn.Dense(4, name="hidden")(x))
        self.sow("intermediates", "features", h)
        return nn.Dense(1, name="out")(h)


class Dropout(nn.Module):
    """Dropout (rate 0.5) of `batch.x`, on only while training (`kd.nn.is_training()`)."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.Dropout(0.5, deterministic=not kd.nn.is_training())(x)


class DropoutTrainProperty(nn.Module):
    """Like `Dropout`, reading the mode from a `kd.nn.train_property()` attribute."""

    x: kontext.Key = "batch.x"
    is_training = kd.nn.train_property()

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.Dropout(0.5, deterministic=not self.is_training)(x)


class DropoutKwarg(nn.Module):
    """Like `Dropout`, taking the mode as an `is_training` argument."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array, is_training: bool = False) -> jax.Array:
        return nn.Dropout(0.5, deterministic=not is_training)(x)


class BatchNormed(nn.Module):
    """Dense + BatchNorm: `batch_stats` move while training and stay put in eval."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        h = nn.BatchNorm(use_running_average=not kd.nn.is_training(), momentum=0.5, name="bn")(nn.Dense(4)(x))
        return nn.Dense(1, name="out")(h)


class TakesBatch(nn.Module):
    """No kontext keys: the module receives the whole batch."""

    @nn.compact
    def __call__(self, batch: dict[str, jax.Array]) -> jax.Array:
        return nn.Dense(1, name="out")(batch["x"])


class Noisy(nn.Module):
    """Adds noise drawn from a user RNG stream named `noise`."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.Dense(1, name="out")(x) + jax.random.normal(self.make_rng("noise"), (x.shape[0], 1))


# ---------------------------------------------------------------------------------------------- NNX models


class NnxMlp(nnx.Module):
    """din -> 16 -> dout; sows the hidden features as `h`."""

    x: kontext.Key = "batch.x"

    def __init__(self, din: int, dout: int, *, rngs: nnx.Rngs) -> None:
        self.hidden = nnx.Linear(din, 16, rngs=rngs)
        self.out = nnx.Linear(16, dout, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        h = nnx.relu(self.hidden(x))
        self.sow(nnx.Intermediate, "h", h)
        return self.out(h)


class NnxDropout(nnx.Module):
    """Dropout (rate 0.5) of `batch.x`; NNX switches it with `module.train()` / `module.eval()`."""

    x: kontext.Key = "batch.x"

    def __init__(self, *, rngs: nnx.Rngs) -> None:
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.dropout(x)


# ---------------------------------------------------------------------------------------------- trainer


@dataclasses.dataclass(frozen=True, kw_only=True)
class Seeded:
    """Any user object: its `seed` comes from the Trainer holding it, with no registration."""

    name: str = "thing"
    seed: int = kd.train.ROOT_CFG_REF.seed


def make_trainer(**fields: Any) -> kd.train.Trainer:
    """A small valid Trainer (linen `Mlp`, adam, MSE, 4 steps, an in-memory writer, no checkpointer unless
    given: the tests of the default checkpointer name it); `fields` override."""
    defaults: dict[str, Any] = {
        "checkpointer": None,
        "train_ds": Regression(),
        "model": Mlp(),
        "optimizer": optax.adam(1e-2),
        "train_losses": {"l2": MSE()},
        "num_train_steps": 4,
        "writer": kd.writers.InMemoryWriter(),
    }
    return kd.train.Trainer(**{**defaults, **fields})
