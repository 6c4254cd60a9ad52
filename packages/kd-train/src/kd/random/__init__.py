"""kd.random: JAX keys as objects, and helpers between keys and integer seeds (Kauldron's names).

key = kd.random.PRNGKey(0).fold_in("dropout")
seed = kd.random.random_seed(kd.random.fold_in_str(jax.random.PRNGKey(0), "shuffle"))
"""

from kd.random._keys import fold_in_str as fold_in_str
from kd.random._keys import random_seed as random_seed
from kd.random._prng_key import PRNGKey as PRNGKey

__all__ = ["PRNGKey", "fold_in_str", "random_seed"]
