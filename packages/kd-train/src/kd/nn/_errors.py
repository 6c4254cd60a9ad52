"""kd.nn's exceptions: each names what was given, what was expected and the nearest valid choice."""

from __future__ import annotations


class VariantError(ValueError):
    """A ViT variant string (`"ViT-B/16"`) that names no known size, or no patch size where one is needed."""


class PatchSizeError(ValueError):
    """An image whose height or width is not a multiple of the patch size."""


class TrainingModeError(RuntimeError, ValueError):
    """The training mode was read where none is set, or set to something that is not a bool.

    A RuntimeError (kd's `is_training()` outside a forward pass) and a ValueError (Kauldron's
    `train_property` raises one), so code written against either catches it.
    """
