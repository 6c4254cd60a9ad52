"""Stand-ins for what gemma's examples download: a 13-word tokenizer (gm.testing.DummyGemma's vocabulary
size) for gemma's chat template, prompt/response pairs, and batches of synthetic tokens.

    tokenizer = synthetic.WordTokenizer()      # a gm.text.Tokenizer; no SentencePiece model file
    pairs = synthetic.PAIRS                    # {"src": ..., "dst": ...} examples, as the mtnt dataset's
"""

from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np
from gemma.gm.text import _tokenizer

VOCAB = (
    "<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>",
    "user", "model", "hello", "world", "there", "!",
)  # fmt: skip
_WORDS = re.compile(r"<[a-z_]+>|[^\s<]+")


class _WordProcessor:
    """SentencePiece's processor interface, one id per word of VOCAB (others: <unk>)."""

    def __init__(self) -> None:
        self._ids = {word: i for i, word in enumerate(VOCAB)}

    def pad_id(self) -> int:
        return 0

    def eos_id(self) -> int:
        return 1

    def bos_id(self) -> int:
        return 2

    def GetPieceSize(self) -> int:
        return len(VOCAB)

    def EncodeAsIds(self, text: str) -> list[int]:
        return [self._ids.get(word, 3) for word in _WORDS.findall(text)]

    def DecodeIds(self, ids: list[int]) -> str:
        return " ".join(self.IdToPiece(int(i)) for i in ids)

    def IdToPiece(self, i: int) -> str:
        return VOCAB[i] if 0 <= i < len(VOCAB) else "<unk>"


@dataclasses.dataclass(frozen=True, kw_only=True)
class WordTokenizer(_tokenizer.Tokenizer):
    """gemma's Gemma3 special tokens over the 13-word vocabulary."""

    path: str = "synthetic:13-words"
    special_tokens = _tokenizer._Gemma3SpecialTokens

    @functools.cached_property
    def _sp(self) -> _WordProcessor:
        return _WordProcessor()


PAIRS = [
    {"src": "hello world", "dst": "hello there !"},
    {"src": "hello there", "dst": "world !"},
    {"src": "world", "dst": "hello world !"},
    {"src": "there !", "dst": "hello"},
] * 8


def token_batches(num_examples: int = 64, length: int = 12, seed: int = 0) -> dict[str, np.ndarray]:
    """Next-token prediction on a repeating pattern: `input` tokens and `target` = input shifted by one."""
    rng = np.random.default_rng(seed)
    starts = rng.integers(5, 13, size=(num_examples, 1))
    tokens = 5 + (starts + np.arange(length + 1)[None, :] - 5) % 8
    return {"input": tokens[:, :-1].astype(np.int32), "target": tokens[:, 1:, None].astype(np.int32)}
