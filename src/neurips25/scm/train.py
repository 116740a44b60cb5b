"""Training the monitor: end to end on token ids, or heads only on cached hidden states of a frozen backbone.

With a frozen backbone the hidden states of every training response are computed once
(:func:`cache_hidden_states`) and the two heads train on them; this is exact, not an approximation, because
nothing upstream of the heads changes. Optimiser as the official script: AdamW (weight decay 0.01) with an
exponential learning-rate decay per step; learning rate, steps and batch are ours (heads from scratch).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from neurips25.repro.progress import progress
from neurips25.scm.annotate import IGNORE_INDEX
from neurips25.scm.backbone import call_backbone
from neurips25.scm.data import Encoded


@dataclasses.dataclass
class HiddenSet:
    """Padded hidden states of the *response* tokens: ``hidden`` (N, T, H), ``mask`` (N, T), ``token_labels``
    (N, T, -100 off-label), ``labels`` (N,), ``onsets`` (N,), ``lengths`` (N,)."""

    hidden: torch.Tensor
    mask: torch.Tensor
    token_labels: torch.Tensor
    labels: torch.Tensor
    onsets: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return self.hidden.shape[0]

    def subset(self, idx) -> HiddenSet:
        idx = np.asarray(idx)
        t = torch.as_tensor(idx)
        T = int(self.lengths[idx].max())
        return HiddenSet(self.hidden[t, :T], self.mask[t, :T], self.token_labels[t, :T], self.labels[t],
                         self.onsets[idx], self.lengths[idx])

    @classmethod
    def concat(cls, *sets: HiddenSet) -> HiddenSet:
        """The sets one after another, padded to the longest response (same hidden width required)."""
        if not sets:
            raise ValueError("`sets` is empty: give at least one HiddenSet")
        widths = {s.hidden.shape[-1] for s in sets}
        if len(widths) != 1:
            raise ValueError(f"`sets` must share one hidden width; got {sorted(widths)}")
        T = max(s.hidden.shape[1] for s in sets)

        def pad(x, fill):
            extra = T - x.shape[1]
            if not extra:
                return x
            return torch.cat([x, torch.full((x.shape[0], extra, *x.shape[2:]), fill, dtype=x.dtype)], 1)

        return cls(torch.cat([pad(s.hidden, 0.0) for s in sets]), torch.cat([pad(s.mask, False) for s in sets]),
                   torch.cat([pad(s.token_labels, IGNORE_INDEX) for s in sets]),
                   torch.cat([s.labels for s in sets]), np.concatenate([s.onsets for s in sets]),
                   np.concatenate([s.lengths for s in sets]))


def collate(samples: list[Encoded]):
    """Right-padded ``input_ids``, ``attention_mask``, ``token_labels``, ``response_mask`` and ``labels``."""
    if not samples:
        raise ValueError("`samples` is empty")
    for i, s in enumerate(samples):
        if len(s.token_labels) != len(s.input_ids):
            raise ValueError(f"sample {i}: token labels ({len(s.token_labels)}) misaligned with input length "
                             f"({len(s.input_ids)})")
        if s.response_len < 1:
            raise ValueError(f"sample {i}: empty response (prompt_len {s.prompt_len} = input length)")
    T = max(len(s.input_ids) for s in samples)
    B = len(samples)
    ids = torch.zeros(B, T, dtype=torch.long)
    att = torch.zeros(B, T, dtype=torch.long)
    lab = torch.full((B, T), IGNORE_INDEX, dtype=torch.long)
    resp = torch.zeros(B, T, dtype=torch.bool)
    for i, s in enumerate(samples):
        n = len(s.input_ids)
        ids[i, :n] = torch.tensor(s.input_ids)
        att[i, :n] = 1
        lab[i, :n] = torch.tensor(s.token_labels)
        resp[i, s.prompt_len:n] = True
    return ids, att, lab, resp, torch.tensor([s.label for s in samples])


@torch.no_grad()
def cache_hidden_states(backbone, samples: list[Encoded], batch_size: int = 16, desc="hidden states") -> HiddenSet:
    """Run the frozen backbone once over every sample; keep the final hidden states of response tokens."""
    order = np.argsort([len(s.input_ids) for s in samples])  # length-sorted batches pad less
    per = [None] * len(samples)
    for b in progress(range(0, len(samples), batch_size), desc=desc):
        idx = order[b:b + batch_size]
        ids, att, _, _, _ = collate([samples[i] for i in idx])
        h, _ = call_backbone(backbone, ids, att)
        for j, i in enumerate(idx):
            s = samples[i]
            per[i] = h[j, s.prompt_len:len(s.input_ids)].float().clone()
    return hidden_set(per, samples)


def hidden_set(per: list[torch.Tensor], samples: list[Encoded]) -> HiddenSet:
    """Pad per-sample response states (each (response_len, H)) into a :class:`HiddenSet` with their labels."""
    T = max(p.shape[0] for p in per)
    H = per[0].shape[1]
    hidden = torch.zeros(len(samples), T, H)
    mask = torch.zeros(len(samples), T, dtype=torch.bool)
    tl = torch.full((len(samples), T), IGNORE_INDEX, dtype=torch.long)
    for i, (p, s) in enumerate(zip(per, samples)):
        hidden[i, :p.shape[0]] = p
        mask[i, :p.shape[0]] = True
        tl[i, :p.shape[0]] = torch.tensor(s.token_labels[s.prompt_len:])
    return HiddenSet(hidden, mask, tl, torch.tensor([s.label for s in samples]),
                     np.array([s.onset for s in samples]), np.array([s.response_len for s in samples]))


def _optimiser(params, lr, decay):
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    return opt, torch.optim.lr_scheduler.ExponentialLR(opt, gamma=decay)


def train_heads(monitor, data: HiddenSet, steps: int = 300, batch_size: int = 64, lr: float = 3e-3,
                decay: float = 0.995, seed: int = 0) -> list[float]:
    """Train the heads of ``monitor`` on cached hidden states; returns the loss per step."""
    g = torch.Generator().manual_seed(int(seed))
    params = [p for n, p in monitor.named_parameters() if not n.startswith("backbone.")]
    opt, sched = _optimiser(params, lr, decay)
    monitor.train()
    losses = []
    for _ in range(int(steps)):
        idx = torch.randint(len(data), (min(batch_size, len(data)),), generator=g)
        out = monitor(hidden_states=data.hidden[idx], attention_mask=data.mask[idx],
                      token_labels=data.token_labels[idx], response_labels=data.labels[idx],
                      response_mask=data.mask[idx])
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        sched.step()
        losses.append(float(out.loss.detach()))
    monitor.eval()
    return losses


def train_end_to_end(monitor, samples: list[Encoded], steps: int = 200, batch_size: int = 32, lr: float = 3e-3,
                     decay: float = 0.995, seed: int = 0) -> list[float]:
    """Train every trainable parameter (heads, and the backbone unless frozen) on token ids."""
    if monitor.backbone is None:
        raise ValueError("`monitor` has no backbone; use train_heads on cached hidden states")
    g = torch.Generator().manual_seed(int(seed))
    opt, sched = _optimiser([p for p in monitor.parameters() if p.requires_grad], lr, decay)
    monitor.train()
    losses = []
    for _ in range(int(steps)):
        idx = torch.randint(len(samples), (min(batch_size, len(samples)),), generator=g).tolist()
        ids, att, lab, resp, y = collate([samples[i] for i in idx])
        out = monitor(ids, att, token_labels=lab, response_labels=y, response_mask=resp)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        sched.step()
        losses.append(float(out.loss.detach()))
    monitor.eval()
    return losses


@torch.no_grad()
def score_hidden(monitor, data: HiddenSet):
    """Per response: token-head scores (list of arrays), response-head score on the complete response, and
    the response head applied at every prefix (the full-detection model used as a partial detector)."""
    monitor.eval()
    tok, resp = monitor.heads(data.hidden, data.mask)
    p_tok = tok.softmax(-1)[..., 1]
    p_prefix = monitor.response_head(data.hidden).softmax(-1)[..., 1]
    L = data.lengths
    return ([p_tok[i, :L[i]].numpy() for i in range(len(data))], resp.softmax(-1)[:, 1].numpy(),
            [p_prefix[i, :L[i]].numpy() for i in range(len(data))])


@torch.no_grad()
def score_samples(monitor, samples: list[Encoded], batch_size: int = 32):
    """:func:`score_hidden` on token ids (runs the backbone)."""
    return score_hidden(monitor, cache_hidden_states(monitor.backbone, samples, batch_size, desc="scoring"))
