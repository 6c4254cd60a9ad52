"""A mistyped context key is answered with the paths under the same context field first."""

from __future__ import annotations

import jax
import kd
import kontext
import pytest
import train_fixtures as lib
from flax import linen as nn


class DecoderLogits(nn.Module):
    """Predicts `{"decoder": {"logits": ...}}` with a Dense layer named `logits` (so `params.logits`)."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> dict[str, dict[str, jax.Array]]:
        return {"decoder": {"logits": nn.Dense(1, name="logits")(x)}}


def test_mistyped_preds_key_offers_the_preds_path_before_the_params_one():
    trainer = lib.make_trainer(model=DecoderLogits(), train_losses={"l2": lib.MSE(preds="preds.logit")})
    with pytest.raises(kd.train.KeyPathError) as info:
        trainer.check()
    message = str(info.value)
    assert "train_losses['l2']" in message and "preds = 'preds.logit'" in message
    (hint,) = [line.strip() for line in message.splitlines() if line.strip().startswith("Did you mean")]
    assert hint.startswith("Did you mean 'preds.decoder.logits' or 'params.logits'")
