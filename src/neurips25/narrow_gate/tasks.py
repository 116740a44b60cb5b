"""Caption and question-answering evaluation of the toys (teacher-forced, answers restricted to their words).

Layout (image first, N image tokens): position N+2 is [EOI]; a caption's words sit at N+3..N+6 and are
predicted from positions N+2..N+5; a question sits at N+3 and its answer is predicted from there.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from neurips25.narrow_gate.data import ATTRIBUTES, Batch, Vocab, patches
from neurips25.narrow_gate.toy import CAPTION, AdapterToyVLM, NativeToyVLM, text_tokens


@dataclasses.dataclass
class ToyEval:
    """Evaluation inputs for one toy: caption and QA sequences of the same images, with the truth."""

    model: object
    batch: Batch
    caption: dict
    qa: dict
    question: np.ndarray  # (4n,) attribute index of each QA row
    n_image: int

    @classmethod
    def build(cls, model, batch: Batch, tokenizer=None, patch: int = 3) -> ToyEval:
        vocab, n = Vocab(), len(batch)
        if isinstance(model, NativeToyVLM):
            if tokenizer is None:
                raise ValueError("the native toy needs its tokenizer to encode images")
            vis = tokenizer.encode(batch.images)
        elif isinstance(model, AdapterToyVLM):
            vis = patches(batch.images, patch)
        else:
            raise TypeError(f"model must be a NativeToyVLM or AdapterToyVLM; got {type(model).__name__}")
        q = np.repeat(np.arange(len(ATTRIBUTES)), n)
        rep = Batch(np.tile(batch.images, (len(ATTRIBUTES), 1, 1, 1)),
                    {k: np.tile(v, len(ATTRIBUTES)) for k, v in batch.attrs.items()})
        cap = model.inputs(vis, text_tokens(vocab, batch, "caption"))
        qa = model.inputs(np.tile(vis, (len(ATTRIBUTES),) + (1,) * (vis.ndim - 1)), text_tokens(vocab, rep, "qa", q))
        return cls(model, batch, cap, qa, q, vis.shape[1])

    @property
    def spans(self):
        return self.model.spans(self.caption["input_ids"])

    def _pred(self, logits: torch.Tensor, pos: int, attribute: str) -> np.ndarray:
        ids = Vocab().answer_ids(attribute)
        return logits[:, pos, ids].argmax(-1).numpy()

    @torch.no_grad()
    def logits(self, kind: str) -> torch.Tensor:
        return self.model(**(self.caption if kind == "caption" else self.qa)).logits.float()

    @torch.no_grad()
    def qa_predictions(self) -> np.ndarray:
        """Predicted answer index of each QA row."""
        lg = self.logits("qa")
        out = np.zeros(len(self.question), dtype=np.int64)
        for j, a in enumerate(ATTRIBUTES):
            rows = self.question == j
            out[rows] = self._pred(lg[torch.from_numpy(rows)], self.n_image + 3, a)
        return out

    @torch.no_grad()
    def accuracy(self) -> dict:
        """``{"vqa", "caption", "task", "caption_text", "task_text"}`` in percent, per-attribute entries too.

        ``task`` is the mean of caption and VQA accuracy; ``task_text`` the same over the predictions made at
        text positions after the image (the caption's first word, predicted at [EOI], left out).
        """
        lg = self.logits("caption")
        res = {}
        cap = []
        for j, a in enumerate(CAPTION):
            c = self._pred(lg, self.n_image + 2 + j, a) == self.batch.attrs[a]
            res[f"caption_{a}"] = 100 * c.mean()
            cap.append(c)
        pred = self.qa_predictions()
        truth = np.concatenate([self.batch.attrs[a] for a in ATTRIBUTES])
        for j, a in enumerate(ATTRIBUTES):
            res[f"vqa_{a}"] = 100 * (pred[self.question == j] == truth[self.question == j]).mean()
        res["caption"] = 100 * float(np.mean(cap))
        res["vqa"] = 100 * float((pred == truth).mean())
        res["task"] = (res["caption"] + res["vqa"]) / 2
        # the caption's first word is predicted *at* [EOI], never a text query: "text" scores only predictions
        # made at text positions after the image (the rows a text->image knockout acts on)
        res["caption_text"] = 100 * float(np.mean(cap[1:]))
        res["task_text"] = (res["caption_text"] + res["vqa"]) / 2
        return {k: float(v) for k, v in res.items()}
