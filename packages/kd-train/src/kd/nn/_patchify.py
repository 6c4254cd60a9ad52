"""Images to tokens, as ViT cuts them: `Patchify` (pixels of each patch) and `PatchifyEmbed` (projected).

tokens = kd.nn.PatchifyEmbed(patch_size=(16, 16), hidden_size=768).apply(variables, images)  # (b, n, 768)
"""

from __future__ import annotations

from typing import Any

import jax
from flax import linen as nn

from kd.nn._errors import PatchSizeError
from kd.nn._train_property import accept_training_property


def as_pair(size: int | tuple[int, int]) -> tuple[int, int]:
    """`16` -> `(16, 16)`; a pair stays as it is."""
    if isinstance(size, int):
        return (size, size)
    height, width = size
    return (int(height), int(width))


def patch_grid(image_shape: tuple[int, ...], patch_size: tuple[int, int]) -> tuple[int, int]:
    """How many patches fit along the height and width of images `(*b, h, w, c)`.

    Raises:
        PatchSizeError: the image is not `(*b, h, w, c)`, or `h` / `w` is no multiple of the patch size.
    """
    if len(image_shape) < 3:
        raise PatchSizeError(
            f"expected images of shape (*batch, height, width, channels), got shape {image_shape}"
        )
    height, width = image_shape[-3], image_shape[-2]
    patch_h, patch_w = patch_size
    if height % patch_h or width % patch_w:
        raise PatchSizeError(
            f"image size {height}x{width} (shape {image_shape}) is not divisible by the patch size "
            f"{patch_h}x{patch_w}: resize or crop the images to a multiple of it "
            f"(e.g. {height - height % patch_h or patch_h}x{width - width % patch_w or patch_w}) or pick "
            "another patch size"
        )
    return height // patch_h, width // patch_w


@accept_training_property
class Patchify(nn.Module):
    """Cuts images `(*b, h, w, c)` into patches: tokens `(*b, h/ph * w/pw, ph * pw * c)`, row-major patches.

    Usage: `kd.nn.Patchify(patch_size=(8, 8))`.
    """

    patch_size: int | tuple[int, int]

    @nn.compact
    def __call__(self, images: jax.Array) -> jax.Array:
        patch_h, patch_w = as_pair(self.patch_size)
        rows, cols = patch_grid(images.shape, (patch_h, patch_w))
        *batch, _, _, channels = images.shape
        grid = images.reshape(*batch, rows, patch_h, cols, patch_w, channels)
        grid = grid.swapaxes(-4, -3)  # (*b, rows, cols, patch_h, patch_w, c)
        return grid.reshape(*batch, rows * cols, patch_h * patch_w * channels)


@accept_training_property
class PatchifyEmbed(nn.Module):
    """Cuts images into patches and projects each linearly (a strided conv `patchifier`): `(*b, n, hidden)`.

    Usage: `kd.nn.PatchifyEmbed(patch_size=(16, 16), hidden_size=768)`.
    """

    patch_size: int | tuple[int, int]
    hidden_size: int

    @nn.compact
    def __call__(self, images: jax.Array) -> Any:
        patch = as_pair(self.patch_size)
        rows, cols = patch_grid(images.shape, patch)
        tokens = nn.Conv(
            features=self.hidden_size,
            kernel_size=patch,
            strides=patch,
            padding="VALID",
            dtype=images.dtype,
            name="patchifier",
        )(images)
        return tokens.reshape(*tokens.shape[:-3], rows * cols, self.hidden_size)
