"""`PRNGKey`: a JAX key as an object, with `split`, `fold_in` (by int or str) and the samplers as methods.

Usage:

    key = kd.random.PRNGKey(0)
    dropout_key = key.fold_in("dropout")
    k0, k1 = key.split()
    x = k0.normal((3,))  # == jax.random.normal(k0.rng, (3,))
    x = jax.random.uniform(key.rng)  # jax.random (and flax's init) take the key array, `key.rng`
    seed = key.as_seed()  # an int in [0, 2**32) for numpy, grain, ...

    x = jax.random.uniform(key)  # as Kauldron's keys: the first key made opts into kd_compat's patch

`import kd` patches nothing. The first `PRNGKey` a program makes enables kd_compat's opt-in
`prng_key_wrappers` patch (owner "kd.random"; the kauldron alias enables it too), with which `jax.random`
and flax's `init` / `apply` take the key itself, as Kauldron's keys are taken: a program that uses kd's key
objects asked for them. Where the installed JAX or flax is not a version the patch was verified on, nothing
is patched (a `kd_compat.PatchSkippedWarning` says why) and they take `key.rng`.
`kd_compat.disable("prng_key_wrappers", owner="kd.random")` takes it back (later keys leave it off).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np

from kd.random._keys import _str_to_uint32, random_seed

__all__ = ["PRNGKey"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    _Base = jax.Array  # to a type checker a PRNGKey is a key array, as it is to jax.random
else:
    _Base = object


_KEYS_ACCEPTED: list[bool] = []  # the first key made has enabled kd_compat's patch (once a process)


def _accept_key_objects() -> None:
    """The first kd key made: jax.random and flax take key objects from now on (see the module docstring)."""
    import kd_compat

    _KEYS_ACCEPTED.append(True)
    kd_compat.enable("prng_key_wrappers", owner="kd.random")


def _is_key_dtype(dtype: Any) -> bool:
    return jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def _key_array(seed_or_rng: Any, impl: str | None) -> Any:
    """The key array behind `PRNGKey(seed_or_rng, impl=impl)`: a new one for a seed, else the key given."""
    if isinstance(seed_or_rng, PRNGKey):
        seed_or_rng = seed_or_rng.rng
    elif isinstance(seed_or_rng, (bool, np.bool_)) or not (
        isinstance(seed_or_rng, (int, np.integer)) or hasattr(seed_or_rng, "dtype")
    ):
        raise TypeError(
            "PRNGKey: seed_or_rng must be an int seed, a 0-d integer array seed or a key array "
            f"(jax.random.PRNGKey(0), jax.random.key(0), a PRNGKey); got {type(seed_or_rng).__name__} {seed_or_rng!r}"
        )
    if isinstance(seed_or_rng, (int, np.integer)):
        return jax.random.PRNGKey(seed_or_rng, impl=impl)
    dtype, shape = seed_or_rng.dtype, tuple(seed_or_rng.shape)
    if _is_key_dtype(dtype):  # a typed key array, `jax.random.key(0)` or split from one
        key = seed_or_rng
    elif shape == () and jax.dtypes.issubdtype(dtype, np.integer):  # a seed, traced or not
        return jax.random.PRNGKey(seed_or_rng, impl=impl)
    elif np.dtype(dtype) == np.uint32 and len(shape) >= 1:  # raw key data, `jax.random.PRNGKey(0)`
        key = jax.numpy.asarray(seed_or_rng) if isinstance(seed_or_rng, np.ndarray) else seed_or_rng
    else:
        raise ValueError(
            "PRNGKey: seed_or_rng must be a 0-d integer seed or a key array (uint32 key data such as "
            f"jax.random.PRNGKey(0), shape (..., 2), or a typed jax.random.key); got an array of dtype "
            f"{dtype} and shape {shape}"
        )
    if impl is not None:
        raise ValueError(
            f"PRNGKey: impl={impl!r} chooses the generator of a new key from a seed; seed_or_rng is already "
            "a key (its generator is fixed): pass an int seed, or drop impl"
        )
    return key


def _sampler(name: str) -> Callable[..., Any]:
    """The method `key.<name>(...)`: `jax.random.<name>(key.rng, ...)`."""
    fn = getattr(jax.random, name)

    def method(self: PRNGKey, *args: Any, **kwargs: Any) -> Any:
        return fn(self.rng, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"`jax.random.{name}` drawn with this key: `jax.random.{name}(key.rng, ...)`."
    return method


@jax.tree_util.register_pytree_node_class
class PRNGKey(_Base):
    """A JAX random key (or an array of keys) with `jax.random` as methods; a pytree with one leaf.

    Built from an int seed (`PRNGKey(0)` is `jax.random.PRNGKey(0)`), a 0-d integer array (a seed,
    also a traced one under `jax.jit`) or an existing key array (raw uint32 or typed). The samplers are
    its methods (`key.normal(shape)`); `jax.random` functions and flax's `init` take `key.rng` (JAX 0.10
    refuses `__jax_array__` there). They take the key itself once kd_compat's `prng_key_wrappers` patch is
    on: the first key made enables it (and `kd.kauldron_alias.install()`, as Kauldron patches JAX and flax on
    import; `import kd` alone does not); it unwraps any object whose class defines `__kd_prng_key__`. `np.asarray(key)` is
    its key data, and through `jax.jit`/`jax.vmap`/`jax.tree.map` it travels as its key array.

    Attributes:
      rng: The key array: uint32 data of shape (..., 2) for the default generator, or a typed key array.
    """

    __slots__ = ("rng",)
    rng: jax.Array

    def __init__(self, seed_or_rng: int | jax.Array | PRNGKey = 0, *, impl: str | None = None) -> None:
        self.rng = _key_array(seed_or_rng, impl)
        if not _KEYS_ACCEPTED:
            _accept_key_objects()

    @classmethod
    def _wrap(cls, rng: Any) -> PRNGKey:
        """A key around `rng` as it is, unchecked (jax hands pytrees placeholder leaves)."""
        key = object.__new__(cls)
        key.rng = rng
        return key

    # A key array's face, so that jax.random and ktyping's `PRNGKey` annotation take the object itself.
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.rng.shape)

    @property
    def dtype(self) -> Any:
        return self.rng.dtype

    @property
    def ndim(self) -> int:
        return len(self.rng.shape)

    def __jax_array__(self) -> jax.Array:
        return self.rng

    def __kd_prng_key__(self) -> jax.Array:
        """The key array, for kd_compat's `prng_key_wrappers` patch (jax.random and flax unwrap the key)."""
        return self.rng

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self.rng, dtype=dtype)

    def __len__(self) -> int:
        return len(self.rng)

    def __iter__(self) -> Iterator[PRNGKey]:
        return (self._wrap(rng) for rng in self.rng)

    def __getitem__(self, index: Any) -> PRNGKey:
        return self._wrap(self.rng[index])

    def split(self, n: int = 2) -> PRNGKey:
        """`n` new keys, as one PRNGKey of `n` keys: `jax.random.split(key.rng, n)`."""
        return self._wrap(jax.random.split(self.rng, n))

    def fold_in(self, data: int | str) -> PRNGKey:
        """A new key for `data`; a str is folded in as the first 4 bytes of its SHA-1 (big-endian)."""
        if isinstance(data, str):
            data = _str_to_uint32(data)
        elif isinstance(data, bool) or not (isinstance(data, (int, np.integer)) or hasattr(data, "dtype")):
            raise TypeError(
                f"PRNGKey.fold_in: data must be an int or a str; got {type(data).__name__} {data!r}"
            )
        return self._wrap(jax.random.fold_in(self.rng, data))

    def next(self) -> PRNGKey:
        """One new key: `key.split(1)[0]`."""
        return self.split(1)[0]

    def as_seed(self) -> int:
        """An int in [0, 2**32) drawn from the key, for libraries seeded by ints (not the seed it was built from)."""
        return random_seed(self.rng)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.rng!r})"

    def tree_flatten(self) -> tuple[list[Any], None]:
        return [self.rng], None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: list[Any]) -> Any:
        (rng,) = children
        # `jax.tree.map(lambda x: None, key)` gives None, and a mapping to numpy (`np.asarray`, chex's
        # asserts) gives the numpy array: neither is a key to wrap.
        if rng is None or isinstance(rng, np.ndarray):
            return rng
        return cls._wrap(rng)

    ball = _sampler("ball")
    bernoulli = _sampler("bernoulli")
    beta = _sampler("beta")
    bits = _sampler("bits")
    categorical = _sampler("categorical")
    cauchy = _sampler("cauchy")
    chisquare = _sampler("chisquare")
    choice = _sampler("choice")
    dirichlet = _sampler("dirichlet")
    double_sided_maxwell = _sampler("double_sided_maxwell")
    exponential = _sampler("exponential")
    f = _sampler("f")
    gamma = _sampler("gamma")
    generalized_normal = _sampler("generalized_normal")
    geometric = _sampler("geometric")
    gumbel = _sampler("gumbel")
    key_data = _sampler("key_data")
    laplace = _sampler("laplace")
    loggamma = _sampler("loggamma")
    logistic = _sampler("logistic")
    maxwell = _sampler("maxwell")
    multivariate_normal = _sampler("multivariate_normal")
    normal = _sampler("normal")
    orthogonal = _sampler("orthogonal")
    pareto = _sampler("pareto")
    permutation = _sampler("permutation")
    poisson = _sampler("poisson")
    rademacher = _sampler("rademacher")
    randint = _sampler("randint")
    rayleigh = _sampler("rayleigh")
    t = _sampler("t")
    truncated_normal = _sampler("truncated_normal")
    uniform = _sampler("uniform")
    wald = _sampler("wald")
    weibull_min = _sampler("weibull_min")
