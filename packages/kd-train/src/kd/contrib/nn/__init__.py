"""kd.contrib.nn: Kauldron's contributed modules (`kauldron.contrib.modules`): NNX modules behind linen's API.

model = kd.contrib.nn.LinenModuleFromNnxDef(nnx_init=functools.partial(MyNnxModel, din=3, dout=8))
variables = model.init({"params": jax.random.key(0)}, x)
y = model.apply(variables, x, rngs={"dropout": jax.random.key(1)})
"""

from ._knnx import KdNnxModule as KdNnxModule
from ._knnx import LinenModuleFromNnxDef as LinenModuleFromNnxDef

__all__ = ["KdNnxModule", "LinenModuleFromNnxDef"]
