"""ShapesWorld: a synthetic image-text world generated in-process (the stand-in for VQAv2 / COCO / ImageNet).

Each image holds one object with four attributes: shape (square, circle, triangle, cross), colour (red,
green, blue, yellow), size (small, big) and quadrant, on a noisy dark background. The class label used for
neighbourhood overlap is (shape, colour): 16 classes. Text comes from a template grammar over a small word
vocabulary shared by both toys: a caption ``colour shape size quadrant`` and single-word questions
(``what-colour``, ``what-shape``, ``what-size``, ``where``) with one-word answers.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

SHAPES = ("square", "circle", "triangle", "cross")
COLOURS = ("red", "green", "blue", "yellow")
SIZES = ("small", "big")
QUADRANTS = ("top-left", "top-right", "bottom-left", "bottom-right")
ATTRIBUTES = {"colour": COLOURS, "shape": SHAPES, "size": SIZES, "where": QUADRANTS}
QUESTIONS = tuple(f"q-{a}" for a in ATTRIBUTES)
SPECIALS = ("<pad>", "<bos>", "<eos>", "<boi>", "<eoi>", "<image>")
_RGB = {"red": (0.9, 0.15, 0.1), "green": (0.15, 0.8, 0.2), "blue": (0.15, 0.3, 0.95), "yellow": (0.95, 0.9, 0.15)}


class Vocab:
    """Word vocabulary shared by both toys: specials, attribute words, question words."""

    def __init__(self):
        words = list(SPECIALS) + [w for vals in ATTRIBUTES.values() for w in vals] + list(QUESTIONS)
        self.words = tuple(words)
        self.index = {w: i for i, w in enumerate(words)}

    def __len__(self):
        return len(self.words)

    def __getitem__(self, word: str) -> int:
        if word not in self.index:
            raise KeyError(f"{word!r} is not in the ShapesWorld vocabulary")
        return self.index[word]

    def ids(self, words) -> list[int]:
        return [self[w] for w in words]

    def answer_ids(self, attribute: str) -> list[int]:
        """Ids of the possible answers of a question about ``attribute``."""
        if attribute not in ATTRIBUTES:
            raise ValueError(f"attribute must be one of {tuple(ATTRIBUTES)}; got {attribute!r}")
        return self.ids(ATTRIBUTES[attribute])


@dataclasses.dataclass
class Batch:
    """Images (n, H, W, 3) float32 in [0, 1] and integer attributes, each (n,)."""

    images: np.ndarray
    attrs: dict

    def __len__(self):
        return len(self.images)

    @property
    def label(self) -> np.ndarray:
        """(shape, colour) class in 0..15."""
        return self.attrs["shape"] * len(COLOURS) + self.attrs["colour"]

    def words(self, i: int, attribute: str) -> str:
        return ATTRIBUTES[attribute][int(self.attrs[attribute][i])]


class ShapesWorld:
    """Generator of ShapesWorld images.

    Parameters
    ----------
    image_size : int
        Side in pixels (multiple of 4; 24 by default).
    noise : float
        Std of the Gaussian pixel noise.

    Example
    -------
    >>> b = ShapesWorld().sample(8, seed=0)
    >>> b.images.shape, sorted(b.attrs)
    ((8, 24, 24, 3), ['colour', 'shape', 'size', 'where'])
    """

    def __init__(self, image_size: int = 24, noise: float = 0.05):
        if not isinstance(image_size, numbers.Integral) or image_size < 16 or image_size % 4:
            raise ValueError(f"image_size must be an int >= 16 divisible by 4; got {image_size!r}")
        if not isinstance(noise, numbers.Real) or not 0 <= noise < 0.5:
            raise ValueError(f"noise must be a float in [0, 0.5); got {noise!r}")
        self.image_size = int(image_size)
        self.noise = float(noise)

    def render(self, shape: int, colour: int, size: int, where: int, rng: np.random.Generator) -> np.ndarray:
        s = self.image_size
        q = s // 4
        cy = (q if where in (0, 1) else 3 * q) + rng.integers(-1, 2)
        cx = (q if where in (0, 2) else 3 * q) + rng.integers(-1, 2)
        r = (0.45 if size == 0 else 0.85) * q + 0.5
        yy, xx = np.mgrid[0:s, 0:s]
        dy, dx = yy - cy, xx - cx
        name = SHAPES[shape]
        if name == "square":
            m = (np.abs(dx) <= r * 0.85) & (np.abs(dy) <= r * 0.85)
        elif name == "circle":
            m = dx ** 2 + dy ** 2 <= r ** 2
        elif name == "triangle":
            m = (dy >= -r) & (dy <= r) & (np.abs(dx) <= (dy + r) / 2)
        else:
            m = ((np.abs(dx) <= r / 3) | (np.abs(dy) <= r / 3)) & (np.abs(dx) <= r) & (np.abs(dy) <= r)
        img = np.full((s, s, 3), 0.08)
        rgb = np.clip(np.array(_RGB[COLOURS[colour]]) + rng.normal(0, 0.04, 3), 0, 1)
        img[m] = rgb
        img = img + rng.normal(0, self.noise, img.shape)
        return np.clip(img, 0, 1).astype(np.float32)

    def sample(self, n: int, seed=None, rng: np.random.Generator | None = None, **fixed) -> Batch:
        """``n`` random images; ``fixed`` pins attributes (``colour=0`` or an array of n values)."""
        if not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n must be a positive int; got {n!r}")
        rng = rng if rng is not None else np.random.default_rng(seed)
        attrs = {}
        for a, vals in ATTRIBUTES.items():
            if a in fixed:
                v = np.broadcast_to(np.asarray(fixed[a], dtype=np.int64), (n,)).copy()
                if v.min() < 0 or v.max() >= len(vals):
                    raise ValueError(f"{a} values must lie in [0, {len(vals)}); got {v.min()}..{v.max()}")
                attrs[a] = v
            else:
                attrs[a] = rng.integers(0, len(vals), n)
        unknown = set(fixed) - set(ATTRIBUTES)
        if unknown:
            raise ValueError(f"unknown attributes {sorted(unknown)}; expected some of {tuple(ATTRIBUTES)}")
        imgs = np.stack([self.render(attrs["shape"][i], attrs["colour"][i], attrs["size"][i], attrs["where"][i], rng)
                         for i in range(n)])
        return Batch(imgs, attrs)


def patches(images: np.ndarray, patch: int) -> np.ndarray:
    """(n, H, W, 3) -> (n, (H/patch)*(W/patch), patch*patch*3), row-major over the patch grid."""
    images = np.asarray(images)
    if images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"images must have shape (n, H, W, 3); got {images.shape}")
    n, h, w, _ = images.shape
    if h % patch or w % patch:
        raise ValueError(f"patch {patch} must divide the image size {h}x{w}")
    x = images.reshape(n, h // patch, patch, w // patch, patch, 3).transpose(0, 1, 3, 2, 4, 5)
    return x.reshape(n, (h // patch) * (w // patch), patch * patch * 3)
