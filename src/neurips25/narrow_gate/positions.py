"""Where each modality sits in a (merged) VLM sequence.

In Hugging Face VLMs the processor expands one ``<image>`` placeholder into as many placeholder tokens
as the vision tower emits, so the merged ``input_ids`` already show every image position; Chameleon
additionally brackets the image with begin/end-of-image tokens. :class:`ModalitySpans` keeps the image
positions, the text positions and the special delimiters ([BOI], [EOI]) of one layout; it is the index
set the paper's measurements are taken over (Sec. 3: text queries ``T``, image-side keys ``I'``).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Iterable

import torch


def _as_positions(value, name: str, length: int | None) -> tuple[int, ...]:
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bool:
            raise TypeError(f"{name} must be integer positions, got a boolean tensor; use .nonzero()")
        value = value.reshape(-1).tolist()
    if isinstance(value, numbers.Integral):
        value = [value]
    out = []
    for v in value:
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"{name} must hold integer positions; got {v!r}")
        v = int(v)
        if v < 0 or (length is not None and v >= length):
            raise ValueError(f"{name} position {v} is outside the sequence of length {length}")
        out.append(v)
    if len(set(out)) != len(out):
        raise ValueError(f"{name} has repeated positions")
    return tuple(sorted(out))


@dataclasses.dataclass(frozen=True)
class ModalitySpans:
    """Positions of image tokens, text tokens and delimiters in one sequence layout.

    Parameters
    ----------
    image : iterable of int
        Positions holding image tokens (VQ codes or projected patch embeddings).
    text : iterable of int
        Positions holding text tokens (queries of the text->image measurements).
    special : dict of str -> int
        Named delimiters, e.g. ``{"boi": 1, "eoi": 66}``.
    length : int, optional
        Sequence length; when given every position is checked against it.

    Example
    -------
    >>> s = ModalitySpans(image=range(2, 6), text=[7, 8], special={"boi": 1, "eoi": 6}, length=9)
    >>> s.eoi, s.image_side
    (6, (1, 2, 3, 4, 5, 6))
    """

    image: tuple[int, ...]
    text: tuple[int, ...]
    special: dict = dataclasses.field(default_factory=dict)
    length: int | None = None

    def __post_init__(self):
        if self.length is not None and (not isinstance(self.length, numbers.Integral) or self.length <= 0):
            raise ValueError(f"length must be a positive int; got {self.length!r}")
        length = None if self.length is None else int(self.length)
        object.__setattr__(self, "length", length)
        object.__setattr__(self, "image", _as_positions(self.image, "image", length))
        object.__setattr__(self, "text", _as_positions(self.text, "text", length))
        if not isinstance(self.special, dict):
            raise TypeError(f"special must be a dict name -> position; got {type(self.special).__name__}")
        special = {str(k): _as_positions(v, f"special[{k!r}]", length)[0] for k, v in self.special.items()}
        object.__setattr__(self, "special", special)
        overlap = set(self.image) & set(self.text)
        if overlap:
            raise ValueError(f"image and text spans overlap at positions {sorted(overlap)[:5]}")
        for k, p in special.items():  # a delimiter counted as text would hide the text after the image
            if p in self.text:
                raise ValueError(f"special[{k!r}] = {p} is also in the text span")

    @property
    def eoi(self) -> int:
        """Position of the end-of-image token."""
        if "eoi" not in self.special:
            raise KeyError("these spans have no 'eoi' delimiter; pass eoi_id to spans_from_input_ids")
        return self.special["eoi"]

    @property
    def boi(self) -> int:
        if "boi" not in self.special:
            raise KeyError("these spans have no 'boi' delimiter; pass boi_id to spans_from_input_ids")
        return self.special["boi"]

    @property
    def image_side(self) -> tuple[int, ...]:
        """Image tokens plus the image delimiters (the key set ``I'`` of the attention share)."""
        return tuple(sorted(set(self.image) | {p for k, p in self.special.items() if k in ("boi", "eoi")}))

    def text_after_image(self) -> tuple[int, ...]:
        """Text positions after the last image-side position (the tokens that read the image)."""
        last = max(self.image_side) if self.image_side else -1
        return tuple(p for p in self.text if p > last)

    def after_image(self):
        """Every position after the last image-side one, generated tokens included (``From(last + 1)``).

        The query set to use under ``generate``: :meth:`text_after_image` is a fixed tuple of prompt positions.
        """
        from neurips25.narrow_gate.knockout import From

        return From(max(self.image_side) + 1 if self.image_side else 0)


def _id_set(ids, name: str) -> set[int]:
    if ids is None:
        return set()
    if isinstance(ids, numbers.Integral):
        return {int(ids)}
    if isinstance(ids, range):
        return set(ids)
    if isinstance(ids, Iterable):
        out = set()
        for i in ids:
            if not isinstance(i, numbers.Integral):
                raise TypeError(f"{name} must be an int, a range or ints; got element {i!r}")
            out.add(int(i))
        return out
    raise TypeError(f"{name} must be an int, a range or ints; got {type(ids).__name__}")


def spans_from_input_ids(input_ids, image_token_id, boi_id=None, eoi_id=None, ignore_ids=()) -> ModalitySpans:
    """Read the modality layout off merged ``input_ids``.

    Parameters
    ----------
    input_ids : LongTensor of shape (seq,) or (batch, seq)
        Merged ids (image placeholders already expanded). A batch must share one layout.
    image_token_id : int, range or iterable of int
        Ids that mark image positions: Llava's placeholder id, or the range of a native model's VQ codes.
    boi_id, eoi_id : int, optional
        Begin / end-of-image delimiter ids; each must occur exactly once when given.
    ignore_ids : iterable of int
        Ids that are neither text nor image (BOS, padding).
    """
    if not isinstance(input_ids, torch.Tensor) or input_ids.dtype not in (torch.int64, torch.int32):
        raise TypeError("input_ids must be an integer torch tensor of shape (seq,) or (batch, seq)")
    if input_ids.ndim == 2:
        if input_ids.shape[0] == 0:
            raise ValueError("input_ids has an empty batch")
        img = _id_set(image_token_id, "image_token_id")
        masks = torch.isin(input_ids, torch.tensor(sorted(img), dtype=input_ids.dtype)) if img else None
        if masks is not None and not bool((masks == masks[0]).all()):
            raise ValueError("input_ids rows have different image layouts; compute spans per row")
        input_ids = input_ids[0]
    if input_ids.ndim != 1:
        raise ValueError(f"input_ids must have shape (seq,) or (batch, seq); got {tuple(input_ids.shape)}")
    img = _id_set(image_token_id, "image_token_id")
    if not img:
        raise ValueError("image_token_id is empty")
    ids = input_ids.tolist()
    image = [i for i, t in enumerate(ids) if t in img]
    if not image:
        raise ValueError("no image token found in input_ids; check image_token_id")
    special = {}
    for name, tid in (("boi", boi_id), ("eoi", eoi_id)):
        if tid is None:
            continue
        where = [i for i, t in enumerate(ids) if t == int(tid)]
        if len(where) != 1:
            raise ValueError(f"{name}_id {tid} must occur exactly once in input_ids; found {len(where)}")
        special[name] = where[0]
    skip = _id_set(ignore_ids, "ignore_ids")
    text = [i for i, t in enumerate(ids) if t not in img and t not in skip and i not in special.values()]
    return ModalitySpans(image=image, text=text, special=special, length=len(ids))


def llava_spans(input_ids, config, ignore_ids=()) -> ModalitySpans:
    """Spans for a ``LlavaForConditionalGeneration`` layout: image placeholders at ``config.image_token_id``.

    Llava has no image delimiters, so ``special`` is empty (the "post-image" token is the first text token).
    """
    tid = getattr(config, "image_token_id", None)
    if tid is None:
        tid = getattr(config, "image_token_index", None)
    if tid is None:
        raise ValueError("config has no image_token_id; is it a Llava config?")
    return spans_from_input_ids(input_ids, tid, ignore_ids=ignore_ids)


def chameleon_spans(input_ids, config, ignore_ids=()) -> ModalitySpans:
    """Spans for a ``ChameleonForConditionalGeneration`` layout.

    The processor writes ``<racm3:break>`` (begin of image), ``image_seq_length`` copies of ``<image>`` and
    ``<eoss>`` (end of image); the ids come from ``config.vocabulary_map``.
    """
    vocab = getattr(config, "vocabulary_map", None) or {}
    missing = [k for k in ("<image>", "<racm3:break>", "<eoss>") if k not in vocab]
    if missing:
        raise ValueError(f"config.vocabulary_map lacks {missing}; is it a Chameleon config?")
    return spans_from_input_ids(input_ids, vocab["<image>"], boi_id=vocab["<racm3:break>"], eoi_id=vocab["<eoss>"],
                                ignore_ids=ignore_ids)
