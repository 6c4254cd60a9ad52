"""`LpipsVgg`: the LPIPS perceptual distance (VGG features), with weights from a local file.

kd.metrics.LpipsVgg(pred="preds.image", target="batch.image", weights_path="/data/lpips_vgg_weights.bin")
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

import flax.linen as nn
import flax.serialization
import jax
import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
from ktyping import Bool, Float

from . import _base
from ._state import AverageState

_WEIGHTS_HELP = (
    "`LpipsVgg` requires the LPIPS-VGG weights as a local file, given as `weights_path=` (nothing is "
    "downloaded). Use Kauldron's `kauldron/metrics/data/lpips_vgg_weights.bin` (flax-serialized params "
    "of the VGG-16 trunk and the five LPIPS 'lin' layers), or convert the LPIPS project's VGG and "
    "`vgg.pth` lin weights into that layout with `flax.serialization.to_bytes`."
)

# (features, convolutions) of the five VGG-16 stages whose outputs LPIPS compares.
_STAGES = ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3))
# ImageNet statistics of the LPIPS VGG input, for images in [0, 1]. NumPy: importing kd must not start JAX's
# backend (jax.distributed.initialize has to come first on several hosts).
_SHIFT = (1.0 + np.array([-0.030, -0.088, -0.188], np.float32)) / 2.0
_SCALE = np.array([0.458, 0.448, 0.450], np.float32) / 2.0


class _Lpips(nn.Module):
    """LPIPS on `(*b, h, w, 3)` images in [0, 1]; parameter names follow Kauldron's weights file."""

    @nn.compact
    def __call__(self, images_1: Any, images_2: Any, epsilon: float = 1e-5) -> Any:
        both = (jnp.stack([images_1, images_2]) - _SHIFT) / _SCALE  # (2, *b, h, w, 3)
        features = _VggTrunk(name="VggNet_0")(both)
        distance = 0.0
        for stage, x in enumerate(features):
            x = x * jax.lax.rsqrt(jnp.sum(jnp.square(x), axis=-1, keepdims=True, dtype=jnp.float32) + epsilon)
            squared = jnp.square(x[0] - x[1])
            weighted = nn.Conv(features=1, kernel_size=(1, 1), use_bias=False, name=f"Conv_{stage}")(squared)
            distance = distance + jnp.mean(weighted, axis=(-3, -2, -1), dtype=jnp.float32)
        return distance[..., None]


class _VggTrunk(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> list[Any]:
        outputs = []
        for stage, (features, convs) in enumerate(_STAGES):
            if stage:
                x = nn.max_pool(x, window_shape=(2, 2), strides=(2, 2))
            x = _VggStage(features=features, convs=convs, name=f"VggBlock_{stage}")(x)
            outputs.append(x)
        return outputs


class _VggStage(nn.Module):
    features: int
    convs: int

    @nn.compact
    def __call__(self, x: Any) -> Any:
        for i in range(self.convs):
            x = jax.nn.relu(
                nn.Conv(features=self.features, kernel_size=(3, 3), padding="SAME", name=f"Conv_{i}")(x)
            )
        return x


@functools.cache
def _load_params(path: str) -> Any:
    """The flax params read from `path` (cached per path: the file is read once per process)."""
    model = _Lpips()
    dummy = jnp.zeros((16, 16, 3), jnp.float32)
    template = jax.eval_shape(lambda: model.init(jax.random.PRNGKey(0), dummy, dummy))
    template = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), template)
    with open(path, "rb") as f:
        data = f.read()
    try:
        return flax.serialization.from_bytes(template, data)
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(
            f"LpipsVgg: weights_path={path!r} is not LPIPS-VGG flax params: {e}. {_WEIGHTS_HELP}"
        ) from e


@dataclasses.dataclass(frozen=True, kw_only=True)
class LpipsVgg(_base.Metric):
    """The LPIPS distance (VGG-16 features) between images, per image, averaged over the batch.

    Usage: `kd.metrics.LpipsVgg(pred="preds.image", target="batch.image", weights_path=path)`.

    Lower is closer (0 for identical images). Images need h and w of at least 16 pixels and
    three channels; they are rescaled from `in_vrange` to [0, 1].

    Attributes:
      pred: key of the predicted images `(*b, h, w, 3)`.
      target: key of the target images, of the same shape.
      mask: optional key of per-image weights `(*b, 1)`.
      in_vrange: the range `(min, max)` of pixel values.
      weights_path: a local file of the LPIPS-VGG weights (Kauldron's `lpips_vgg_weights.bin`);
        required when the metric runs, never downloaded.
    """

    pred: kontext.Key = kontext.REQUIRED
    target: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None
    in_vrange: tuple[float, float] = (0.0, 1.0)
    weights_path: str | None = None

    State = AverageState

    def _params(self) -> Any:
        if self.weights_path is None:
            raise FileNotFoundError(f"{_WEIGHTS_HELP} weights_path is not set.")
        path = os.fspath(os.path.expanduser(self.weights_path))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{_WEIGHTS_HELP} No file at weights_path={self.weights_path!r}.")
        return _load_params(path)

    @ktyping.typechecked
    def get_state(
        self,
        pred: Float["*b h w c"],
        target: Float["*b h w c"],
        mask: Bool["*b 1"] | Float["*b 1"] | None = None,
    ) -> AverageState:
        if pred.shape[-1] != 3 or min(pred.shape[-3], pred.shape[-2]) < 16:
            raise ValueError(
                f"LpipsVgg: images must be (*b, h, w, 3) with h, w >= 16, got pred {tuple(pred.shape)}."
            )
        params = self._params()
        low, high = self.in_vrange
        values = _Lpips().apply(params, (pred - low) / (high - low), (target - low) / (high - low))
        return AverageState.from_values(values, mask=mask)
