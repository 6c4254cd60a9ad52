"""kd.nn's exceptions: each names what was given, what was expected and the nearest valid choice."""

from __future__ import annotations


class VariantError(ValueError):
    """A ViT variant string (`"ViT-B/16"`) that names no known size, or no patch size where one is needed."""


class PatchSizeError(ValueError):
    """An image whose height or width is not a multiple of the patch size."""
