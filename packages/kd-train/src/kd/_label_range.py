"""Integer labels within the logits' classes: what a loss or metric declares, and the check inside a step.

    class MyLoss(kd.losses.Loss):
        label_range_keys = ("logits", "labels", "mask")  # the fields naming the logits, labels and mask

A label must be in `0..n-1`, `n` the logits' last axis (a `(*b, 1)` label is read as `(*b,)`); a label where
the mask is 0 (a padding label such as -1) is left unchecked. The Trainer checks the first batch it trains on
(`kd.train._first_batch`, on the host); with checkify's user checks on (`Trainer.checkify_error_categories`
holding `checkify.user_checks`, e.g. `checkify.all_checks`) a loss also checks every batch in its step. Only
a step that `with_label_checks` wraps holds that check: other steps compile exactly as without it.

Shared by `kd.losses` (a loss's check in its step) and `kd.train` (the first batch's check, the wrapped step).
"""

from __future__ import annotations

import contextvars
import functools
from typing import Any

import jax.numpy as jnp
from jax.experimental import checkify

_CHECKING = contextvars.ContextVar("kd_checking_label_ranges", default=False)


def with_label_checks(fn: Any) -> Any:
    """`fn`, tracing with the in-step label checks on: wrap a function that `checkify.checkify` transforms.

    Usage: `checkify.checkify(with_label_checks(train_step), errors=checkify.all_checks)`.
    """

    @functools.wraps(fn)
    def traced(*args: Any, **kwargs: Any) -> Any:
        token = _CHECKING.set(True)
        try:
            return fn(*args, **kwargs)
        finally:
            _CHECKING.reset(token)

    return traced


def class_labels(labels: Any, logits_ndim: int) -> Any:
    """`(*b, 1)` labels as `(*b,)` (labels with as many axes as the logits); `(*b,)` as they are."""
    return labels[..., 0] if labels.ndim == logits_ndim else labels


def check_in_step(owner: Any, *, logits: Any, labels: Any, mask: Any = None) -> None:
    """Inside a step that `with_label_checks` wraps: a checkify check that the (unmasked) labels are in
    `0..n-1`; elsewhere nothing (no operation is added). `owner` is the loss or metric: its `label_range_keys`
    name the keys the message gives."""
    if not _CHECKING.get():
        return
    labels = jnp.asarray(labels)
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        return  # the loss names labels of another dtype
    keep = None
    if mask is not None:
        try:
            keep = jnp.broadcast_to(jnp.asarray(mask), labels.shape) != 0
        except ValueError:
            return  # the loss says that its mask does not fit its values
        keep = class_labels(keep, logits.ndim)
    labels = class_labels(labels, logits.ndim)
    keep = jnp.ones(labels.shape, bool) if keep is None else keep
    num_classes = logits.shape[-1]
    extreme = jnp.iinfo(labels.dtype)
    inside = ~keep | ((labels >= 0) & (labels < num_classes))
    lowest = jnp.min(jnp.where(keep, labels, extreme.max), initial=extreme.max)
    highest = jnp.max(jnp.where(keep, labels, extreme.min), initial=extreme.min)
    logits_field, labels_field = type(owner).label_range_keys[:2]
    logits_key, labels_key = _braces(getattr(owner, logits_field)), _braces(getattr(owner, labels_field))
    checkify.debug_check(
        jnp.all(inside),
        f"{type(owner).__name__}: labels at {labels_key} hold values {{}}..{{}}, but the logits at "
        f"{logits_key} have {_classes(num_classes)} on their last axis: a label must be in "
        f"0..{num_classes - 1}",
        lowest,
        highest,
    )


def _classes(n: int) -> str:
    return f"{n} class" if n == 1 else f"{n} classes"


def _braces(key: Any) -> str:
    """A key as text inside a checkify message, whose `{}` are its arguments."""
    return str(key).replace("{", "{{").replace("}", "}}")
