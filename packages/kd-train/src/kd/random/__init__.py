"""kd.random: helpers between JAX keys and the integer seeds other libraries take (Kauldron's names).

key = kd.random.fold_in_str(jax.random.PRNGKey(0), "dropout")
seed = kd.random.random_seed(key)
"""

from kd.random._keys import fold_in_str as fold_in_str
from kd.random._keys import random_seed as random_seed

__all__ = ["fold_in_str", "random_seed"]
