r"""The paper's measurements on recorded residuals and attention maps.

- Modality gap (Sec. 3.1): per layer, the mean cosine similarity between image-token and text-token residuals
  (cross) and within each modality (intra)::

      cross_l = mean_{i in I, t in T} cos(h_l[i], h_l[t])

- Homogeneity (Sec. 3.1): cluster the layer's residuals and score how pure the clusters are w.r.t. the
  modality label (sklearn ``homogeneity_score``; KMeans stands in for the paper's Advanced Density Peaks).
- Cross-modal attention share (Sec. 3.2): for text queries ``T`` and image-side keys ``I'``,
  :math:`A_l = \frac{1}{|T|}\sum_{q\in T}\sum_{k\in I'} \bar a^{l}_{qk}` (heads averaged) and the fraction of
  :math:`A_l` carried by [EOI], [BOI], the last image token and the other image tokens.
- Neighbourhood overlap (Sec. 3.3): :math:`\chi^l_k`, the mean fraction of a point's k nearest neighbours that
  share its label.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

from neurips25.narrow_gate.positions import ModalitySpans


def _check_residuals(residuals, spans: ModalitySpans) -> torch.Tensor:
    if not isinstance(spans, ModalitySpans):
        raise TypeError(f"spans must be a ModalitySpans; got {type(spans).__name__}")
    if isinstance(residuals, np.ndarray):
        residuals = torch.from_numpy(residuals)
    if not isinstance(residuals, torch.Tensor) or residuals.ndim != 4:
        raise ValueError("residuals must be a tensor of shape (layers, batch, seq, d)")
    if not torch.isfinite(residuals).all():
        raise ValueError("residuals contain NaN or inf")
    seq = residuals.shape[2]
    top = max(spans.image + spans.text)
    if top >= seq:
        raise ValueError(f"spans reach position {top} but the residuals have sequence length {seq}")
    if not spans.image or not spans.text:
        raise ValueError("spans need at least one image and one text position")
    return residuals.float()


def modality_cosine(residuals, spans: ModalitySpans, text=None) -> dict[str, np.ndarray]:
    """Per-layer mean cosine: ``{"cross", "intra_image", "intra_text"}``, each shape (layers,).

    Pairs are taken within each sequence (image and text tokens of the same example). ``text`` overrides the
    text positions (e.g. ``spans.text_after_image()``).
    """
    r = _check_residuals(residuals, spans)
    text = list(spans.text if text is None else text)
    u = torch.nn.functional.normalize(r, dim=-1)
    img, txt = u[:, :, list(spans.image)], u[:, :, text]

    def mean_cos(a, b, same):
        c = torch.einsum("lbid,lbjd->lbij", a, b)
        if same:
            n = a.shape[2]
            off = ~torch.eye(n, dtype=torch.bool)
            return (c[:, :, off].mean(dim=(1, 2)) if n > 1 else torch.ones(c.shape[0])).numpy()
        return c.mean(dim=(1, 2, 3)).numpy()
    return {"cross": mean_cos(img, txt, False), "intra_image": mean_cos(img, img, True),
            "intra_text": mean_cos(txt, txt, True)}


def modality_homogeneity(residuals, spans: ModalitySpans, n_clusters: int = 2, seed: int = 0,
                         max_points: int = 4000) -> np.ndarray:
    """Per-layer homogeneity (w.r.t. the modality label) of a KMeans clustering of image + text residuals.

    1 means every cluster holds one modality only. Shape (layers,).
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import homogeneity_score

    if not isinstance(n_clusters, numbers.Integral) or n_clusters < 2:
        raise ValueError(f"n_clusters must be an int >= 2; got {n_clusters!r}")
    r = _check_residuals(residuals, spans)
    img, txt = r[:, :, list(spans.image)], r[:, :, list(spans.text)]
    out = []
    rng = np.random.default_rng(seed)
    for layer in range(r.shape[0]):
        x = torch.cat([img[layer].reshape(-1, r.shape[-1]), txt[layer].reshape(-1, r.shape[-1])]).numpy()
        y = np.r_[np.zeros(img[layer].shape[0] * img.shape[2]), np.ones(txt[layer].shape[0] * txt.shape[2])]
        if len(x) > max_points:
            keep = rng.choice(len(x), max_points, replace=False)
            x, y = x[keep], y[keep]
        x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        lab = KMeans(n_clusters=n_clusters, n_init=4, random_state=seed).fit_predict(x)
        out.append(homogeneity_score(y, lab))
    return np.array(out)


def cross_modal_attention_share(attn, spans: ModalitySpans, queries=None) -> dict[str, np.ndarray]:
    """Text->image attention per layer and the share of it each image-side key group carries.

    Parameters
    ----------
    attn : tensor (layers, batch, heads, seq, seq)
        Post-softmax weights (:func:`~neurips25.narrow_gate.recorder.attention_weights`).
    spans : ModalitySpans
        Needs ``eoi``; ``boi`` is used when present.
    queries : iterable of int, optional
        Text query rows; default the text tokens after the image.

    Returns
    -------
    dict of str to ndarray
        ``{"total": A_l, "eoi", "boi", "last_img", "other_img", "max_single"}``, each shape (layers,);
        shares sum to 1 and ``max_single`` is the largest share of any single image-side position. ``eoi`` /
        ``boi`` are NaN when the spans have no such delimiter (Llava has none): the share is undefined there,
        not 0.
    """
    if isinstance(attn, np.ndarray):
        attn = torch.from_numpy(attn)
    if not isinstance(attn, torch.Tensor) or attn.ndim != 5 or attn.shape[-1] != attn.shape[-2]:
        raise ValueError("attn must be a tensor of shape (layers, batch, heads, seq, seq)")
    if not torch.isfinite(attn).all():
        raise ValueError("attn contains NaN or inf")
    q = list(spans.text_after_image() if queries is None else queries)
    if not q:
        raise ValueError("no text query positions after the image")
    seq = attn.shape[-1]
    keys = list(spans.image_side)
    if max(keys + q) >= seq:
        raise ValueError(f"spans reach position {max(keys + q)} but attn has sequence length {seq}")
    a = attn.float().mean(dim=2)[:, :, q][:, :, :, keys].mean(dim=(1, 2))  # (layers, |I'|) mean over batch, rows
    total = a.sum(-1)
    share = a / total.clamp_min(1e-12)[:, None]
    col = {p: j for j, p in enumerate(keys)}
    nan = torch.full((a.shape[0],), float("nan"))  # a model without the delimiter (Llava): undefined, not 0
    eoi = share[:, col[spans.eoi]] if "eoi" in spans.special else nan
    boi = share[:, col[spans.boi]] if "boi" in spans.special else nan
    last = share[:, col[max(spans.image)]]
    other = 1 - torch.nan_to_num(eoi) - torch.nan_to_num(boi) - last
    return {"total": total.numpy(), "eoi": eoi.numpy(), "boi": boi.numpy(), "last_img": last.numpy(),
            "other_img": other.numpy(), "max_single": share.max(-1).values.numpy()}


def neighborhood_overlap(X, labels, k: int = 10) -> float:
    r"""Label overlap :math:`\chi_k`: mean over points of the fraction of their k nearest neighbours sharing
    their label (cosine-free Euclidean neighbours, the point itself excluded)."""
    from sklearn.neighbors import NearestNeighbors

    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_points, d); got shape {X.shape}")
    if labels.shape != (X.shape[0],):
        raise ValueError(f"labels must have shape ({X.shape[0]},); got {labels.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or inf")
    if not isinstance(k, numbers.Integral) or not 1 <= k < X.shape[0]:
        raise ValueError(f"k must be an int in [1, n_points - 1] = [1, {X.shape[0] - 1}]; got {k!r}")
    nn_ = NearestNeighbors(n_neighbors=int(k) + 1).fit(X)
    _, ind = nn_.kneighbors(X)
    ind = ind[:, 1:]
    return float((labels[ind] == labels[:, None]).mean())
