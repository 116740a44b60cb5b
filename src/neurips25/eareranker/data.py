"""AdequacySynth: a generated knowledge base with (query, document) pairs of known adequacy.

No RAG benchmark ships offline, so the data is generated (reconstructed; the paper's four benchmarks are not
known here). Fictional entities (people, companies, cities) have 6-8 attributes each. A query asks for 2-4
attributes of one entity. Each document is written from templates whose controlled factors map one-to-one to
the rubric's four dimensions, given the query:

- coverage: the fraction of the requested attributes the document states;
- completeness: the fraction of the requested attributes stated without hedging ("possibly", "around");
- verifiability: requested facts stated with specific values and no contradiction (a second, conflicting value
  lowers it), plus a cited source;
- structure: well formed (100), boilerplate first (60), truncated mid-text (40, the last fact is cut off) or
  sentences shuffled (30).

Documents about another entity of the same kind (same-topic distractors) cover nothing: their score is their
structure term alone (<= 25), although their cosine similarity to the query is high: that is what makes plain
relevance fail. Every sentence has several paraphrases and attribute names have synonyms. Documents run from
``min_words`` to ``max_words`` words (log-uniform); the facts come first and neutral background text pads the
rest, so an encoder that truncates still sees the facts (the length-independence test needs length, not
hidden labels). Entities are split into train / val / test, so no test entity is seen in training.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from neurips25.eareranker.checks import positive_int
from neurips25.eareranker.rubric import AdequacyRubric

_SYL = ("ka", "lo", "mer", "vin", "tas", "or", "bel", "dri", "sen", "qua", "mar", "tel", "rin", "zo", "phi",
        "gan", "lu", "ver", "nos", "ad", "cor", "ith", "ul", "bra", "den", "sy", "mon", "fa", "rek", "ti")
_SOURCES = ("the National Registry", "the Hollen Archive", "Meridian Yearbook", "the Civic Records Office",
            "the Atlas Statistical Bureau", "Northgate Gazette")
_OCCUPATIONS = ("architect", "chemist", "violinist", "surgeon", "economist", "pilot", "geologist", "novelist")
_INDUSTRIES = ("shipbuilding", "software", "textiles", "biotechnology", "mining", "logistics", "aerospace")
_FILLER = (
    "Historians describe the surrounding region as shaped by trade routes and seasonal markets.",
    "Much of the archive material was digitised during a long renovation of the public library.",
    "Local newspapers of the period devoted considerable space to weather and harvest reports.",
    "Several committees have since reviewed how such records are collected and stored.",
    "Visitors often remark on the old stone bridges and the narrow streets near the harbour.",
    "The broader economy went through cycles of expansion and contraction over the decades.",
    "Commentators have debated the meaning of these developments in essays and public lectures.",
    "Photographs from that era show crowded squares, tram lines and busy workshops.",
    "Education reforms introduced new curricula and longer school years in the same period.",
    "The climate is mild, with wet winters and long, bright summers.",
)
_BOILER = ("Cookie notice: this site uses cookies to improve your experience. Subscribe for updates.",
           "Advertisement. Sign in to continue reading. Related links and sponsored content below.",
           "Menu | Home | About | Contact | Newsletter. Share this page on social media.")

# attribute -> (query names (synonyms), value kind); kinds drive value generation and vague paraphrases
_ATTRS = {
    "person": {
        "birth_year": (("birth year", "year of birth"), "year"),
        "birthplace": (("birthplace", "place of birth"), "city"),
        "occupation": (("occupation", "profession"), "occupation"), "employer": (("employer", "workplace"), "company"),
        "awards": (("number of awards", "award count"), "count"), "spouse": (("spouse", "partner"), "person"),
        "height_cm": (("height", "stature"), "height"), "university": (("university", "alma mater"), "uni"),
    },
    "company": {
        "founded": (("founding year", "year founded"), "year"), "hq": (("headquarters", "head office"), "city"),
        "ceo": (("chief executive", "CEO"), "person"), "employees": (("headcount", "number of employees"), "count"),
        "revenue": (("annual revenue", "yearly revenue"), "money"), "industry": (("industry", "sector"), "industry"),
        "ticker": (("stock ticker", "ticker symbol"), "ticker"),
    },
    "city": {
        "population": (("population", "number of inhabitants"), "count"), "founded": (("founding year",
        "year of foundation"), "year"), "mayor": (("mayor", "city leader"), "person"), "area": (("area",
        "land area"), "area"), "river": (("river", "main river"), "river"), "elevation": (("elevation",
        "altitude"), "height"), "twin": (("twin city", "sister city"), "city"),
    },
}
_STRUCTURES = {"well_formed": 100.0, "boilerplate": 60.0, "truncated": 40.0, "shuffled": 30.0}


def _word(rng, k=(2, 3)) -> str:
    return "".join(rng.choice(_SYL, size=rng.integers(k[0], k[1] + 1))).capitalize()


def _value(kind: str, rng) -> str:
    if kind == "year":
        return str(int(rng.integers(1890, 2021)))
    if kind in ("city", "river"):
        return _word(rng) + (" River" if kind == "river" else "")
    if kind == "person":
        return f"{_word(rng)} {_word(rng)}"
    if kind == "company":
        return f"{_word(rng)} {rng.choice(['Industries', 'Group', 'Labs', 'Holdings'])}"
    if kind == "uni":
        return f"the University of {_word(rng)}"
    if kind == "occupation":
        return str(rng.choice(_OCCUPATIONS))
    if kind == "industry":
        return str(rng.choice(_INDUSTRIES))
    if kind == "ticker":
        return "".join(rng.choice(list("ABCDEFGHKLMNPRSTVXZ"), size=4))
    if kind == "count":
        return f"{int(rng.integers(2, 90000)):,}"
    if kind == "money":
        return f"{int(rng.integers(5, 900))} million dollars"
    if kind == "height":
        return f"{int(rng.integers(150, 2400))} {'metres' if rng.random() < 0.5 else 'meters'}"
    if kind == "area":
        return f"{int(rng.integers(20, 900))} square kilometres"
    raise ValueError(kind)


def _vague(kind: str, value: str, rng) -> str:
    """A non-specific rendering of a value (lowers verifiability)."""
    if kind == "year":
        return f"sometime in the {value[:3]}0s"
    if kind in ("count", "money", "height", "area"):
        return str(rng.choice(["a considerable number", "a modest figure", "a large amount", "a figure few agree on"]))
    return str(rng.choice(["someone or something locals rarely name", "a place or name not recorded precisely",
                           "an unspecified one"]))


_STATE = ("The {attr} of {name} is {val}.", "{name}'s {attr}: {val}.", "Records give {val} as the {attr} of {name}.",
          "As for the {attr}, {name} lists {val}.", "{val} is the {attr} associated with {name}.")
_HEDGE = ("The {attr} of {name} is possibly {val}, though this is unconfirmed.",
          "It is sometimes said that {name}'s {attr} might be {val}.",
          "Perhaps {val} is the {attr} of {name}, but sources are unsure.")
_CONTRA = (" Other accounts, however, give {alt} instead.", " A conflicting record states {alt}.",
           " Yet another source claims it is {alt}.")
_QUERY = ("What are the {attrs} of {name}?", "Tell me the {attrs} of {name}.", "I need {name}'s {attrs}.",
          "Find the {attrs} for {name}.", "Give me information on the {attrs} of {name}.")
_CITE = ("According to {src} ({yr}), ", "As documented by {src} in {yr}, ", "Source: {src}, {yr}. ")


@dataclasses.dataclass
class AdequacyData:
    """Generated texts, pairs and ground truth.

    ``pair_query[i]`` / ``pair_doc[i]`` index :attr:`queries` / :attr:`docs`; ``dims[i]`` are the four
    dimension scores (columns in rubric order), ``scores[i]`` the rubric score, ``bins[i]`` its bin,
    ``split[i]`` one of "train", "val", "test"; ``distractor[i]`` marks a document about another entity.
    """

    queries: list[str]
    docs: list[str]
    doc_words: np.ndarray
    pair_query: np.ndarray
    pair_doc: np.ndarray
    dims: np.ndarray
    scores: np.ndarray
    bins: np.ndarray
    split: np.ndarray
    distractor: np.ndarray

    def mask(self, split: str) -> np.ndarray:
        return self.split == split


class AdequacySynth:
    """Generator of the adequacy data (see the module docstring).

    Parameters
    ----------
    n_entities : int
        Fictional entities (a third each people, companies, cities).
    docs_per_entity : int, default 6
        Documents written about each entity, of varied quality.
    queries_per_entity : int, default 3
        Queries per entity (each asks for 2-4 attributes).
    distractors_per_query : int, default 6
        Candidate documents per query about other entities of the same kind (same split).
    min_words, max_words : int, default 30, 2000
        Document length range (log-uniform).
    rubric : AdequacyRubric, optional
    seed : int, default 0

    Examples
    --------
    >>> d = AdequacySynth(n_entities=12, seed=0).generate()
    >>> len(d.queries), len(d.docs), bool(d.scores[d.distractor].max() <= 25)
    (36, 72, True)
    """

    def __init__(self, n_entities: int = 600, docs_per_entity: int = 6, queries_per_entity: int = 3,
                 distractors_per_query: int = 6, min_words: int = 30, max_words: int = 2000,
                 rubric: AdequacyRubric | None = None, seed: int = 0, split_fractions=(0.7, 0.1, 0.2)):
        self.n_entities = positive_int(n_entities, "n_entities", 6)
        self.docs_per_entity = positive_int(docs_per_entity, "docs_per_entity")
        self.queries_per_entity = positive_int(queries_per_entity, "queries_per_entity")
        self.distractors_per_query = positive_int(distractors_per_query, "distractors_per_query", 0)
        self.min_words = positive_int(min_words, "min_words", 10)
        self.max_words = positive_int(max_words, "max_words", self.min_words)
        self.rubric = rubric or AdequacyRubric()
        self.seed = positive_int(seed, "seed", 0)
        f = np.asarray(split_fractions, dtype=float)
        if f.shape != (3,) or np.any(f <= 0) or abs(f.sum() - 1) > 1e-9:
            raise ValueError(f"`split_fractions` must be 3 positive numbers summing to 1; got {split_fractions!r}")
        self.split_fractions = f

    # --- entities ---------------------------------------------------------------------------------------------
    def _entity(self, kind: str, rng, surname: str | None = None) -> dict:
        if kind == "person":
            name = f"{_word(rng)} {surname or _word(rng)}"
        elif kind == "company":
            name = f"{surname or _word(rng)} {rng.choice(['Corporation', 'Systems', 'Partners', 'Works'])}"
        else:
            name = f"{surname or _word(rng)}{rng.choice(['ford', 'ville', 'burg', 'haven'])}"
        names = list(_ATTRS[kind])
        chosen = rng.choice(names, size=int(rng.integers(min(6, len(names)), len(names) + 1)), replace=False)
        attrs = {a: _value(_ATTRS[kind][a][1], rng) for a in chosen}
        return {"kind": kind, "name": name, "attrs": attrs}

    # --- texts ------------------------------------------------------------------------------------------------
    def _query(self, ent: dict, rng) -> tuple[str, list[str]]:
        keys = list(ent["attrs"])
        req = list(rng.choice(keys, size=int(rng.integers(2, 5)), replace=False))
        names = [str(rng.choice(_ATTRS[ent["kind"]][a][0])) for a in req]
        attrs = ", ".join(names[:-1]) + " and " + names[-1]
        return str(rng.choice(_QUERY)).format(attrs=attrs, name=ent["name"]), req

    def _facts(self, ent: dict, rng, quality: float | None = None) -> dict:
        """Per-attribute rendering decisions of one document; ``quality`` in [0, 1] shifts them all."""
        q = rng.random() if quality is None else quality
        keys = list(ent["attrs"])
        facts = {}
        for a in keys:
            if rng.random() > 0.15 + 0.8 * q:
                continue  # not stated
            facts[a] = {"hedged": rng.random() < 0.45 * (1 - q) + 0.05, "vague": rng.random() < 0.5 * (1 - q),
                        "contra": rng.random() < 0.35 * (1 - q)}
        return {"facts": facts, "cited": rng.random() < 0.25 + 0.6 * q,
                "structure": str(rng.choice(list(_STRUCTURES), p=self._structure_p(q)))}

    @staticmethod
    def _structure_p(q: float) -> np.ndarray:
        p = np.array([0.25 + 0.6 * q, 0.25 * (1 - q) + 0.05, 0.25 * (1 - q) + 0.05, 0.25 * (1 - q) + 0.05])
        return p / p.sum()

    def _render(self, ent: dict, plan: dict, n_words: int, rng) -> tuple[str, dict]:
        name, kind = ent["name"], ent["kind"]
        sentences, order = [], list(plan["facts"])
        rng.shuffle(order)
        for a in order:
            f = plan["facts"][a]
            vkind = _ATTRS[kind][a][1]
            attr = str(rng.choice(_ATTRS[kind][a][0]))
            val = _vague(vkind, ent["attrs"][a], rng) if f["vague"] else ent["attrs"][a]
            s = str(rng.choice(_HEDGE if f["hedged"] else _STATE)).format(attr=attr, name=name, val=val)
            if f["contra"]:
                s += str(rng.choice(_CONTRA)).format(alt=_value(vkind, rng))
            sentences.append(s[0].upper() + s[1:])
        stated = dict(plan["facts"])
        structure = plan["structure"]
        if structure == "truncated" and sentences:
            cut = sentences.pop()  # the last fact is cut off mid-sentence: it no longer counts
            stated.pop(order[-1])
            sentences.append(" ".join(cut.split()[: max(1, len(cut.split()) // 3)]))
        elif structure == "shuffled":
            words = " ".join(sentences).split()
            rng.shuffle(words)
            sentences = [" ".join(words)]
        head = ""
        if plan["cited"]:
            head = str(rng.choice(_CITE)).format(src=rng.choice(_SOURCES), yr=int(rng.integers(1995, 2025)))
        intro = f"{name} is a {kind if kind != 'company' else 'company'} described in this note."
        body = " ".join(sentences)
        text = (str(rng.choice(_BOILER)) + " " if structure == "boilerplate" else "") + head + intro + " " + body
        words = text.split()
        while len(words) < n_words:
            words += str(rng.choice(_FILLER)).split()
        if structure != "truncated":
            words = words[:max(n_words, len(text.split()))]
        return " ".join(words), {"stated": stated, "cited": plan["cited"], "structure": structure}

    def make_document(self, n_words: int, seed: int = 0, kind: str = "person") -> str:
        """One document of exactly ``n_words`` words about a fresh entity (times scoring vs length; no label)."""
        rng = np.random.default_rng(seed)
        ent = self._entity(kind, rng)
        n = positive_int(n_words, "n_words")
        return " ".join(self._render(ent, self._facts(ent, rng, 0.8), n, rng)[0].split()[:n])  # exactly n words

    # --- ground truth -----------------------------------------------------------------------------------------
    @staticmethod
    def dimensions(requested: list[str], doc: dict, same_entity: bool) -> np.ndarray:
        """Dimension scores (verifiability, coverage, completeness, structure) of a document for a query."""
        structure = _STRUCTURES[doc["structure"]]
        if not same_entity:
            return np.array([0.0, 0.0, 0.0, structure])
        st = [doc["stated"][a] for a in requested if a in doc["stated"]]
        coverage = 100.0 * len(st) / len(requested)
        completeness = 100.0 * sum(not f["hedged"] for f in st) / len(requested)
        specific = sum((not f["vague"]) * (not f["contra"]) for f in st) / len(requested)
        verifiability = 100.0 * (0.75 * specific + 0.25 * float(doc["cited"]) * (len(st) > 0))
        return np.array([verifiability, coverage, completeness, structure])

    def generate(self) -> AdequacyData:
        rng = np.random.default_rng(self.seed)
        kinds = ("person", "company", "city")
        ents = []
        surnames = [_word(rng) for _ in range(max(1, self.n_entities // 3))]
        for i in range(self.n_entities):
            # a third of entities share a surname / stem with another: near-duplicate names as hard distractors
            sur = surnames[i % len(surnames)] if rng.random() < 0.33 else None
            ents.append(self._entity(kinds[i % 3], rng, sur))
        split_of = rng.choice(["train", "val", "test"], size=self.n_entities, p=self.split_fractions)
        docs, doc_meta, doc_ent, doc_words = [], [], [], []
        for e, ent in enumerate(ents):
            for _ in range(self.docs_per_entity):
                n_words = int(np.exp(rng.uniform(np.log(self.min_words), np.log(self.max_words))))
                text, meta = self._render(ent, self._facts(ent, rng), n_words, rng)
                docs.append(text), doc_meta.append(meta), doc_ent.append(e), doc_words.append(len(text.split()))
        doc_ent = np.array(doc_ent)
        queries, pq, pd, dims, split, distr = [], [], [], [], [], []
        for e, ent in enumerate(ents):
            pool = np.flatnonzero((split_of[doc_ent] == split_of[e]) & (doc_ent != e)
                                  & (doc_ent % 3 == e % 3))
            for _ in range(self.queries_per_entity):
                text, req = self._query(ent, rng)
                qi = len(queries)
                queries.append(text)
                own = np.flatnonzero(doc_ent == e)
                k = min(self.distractors_per_query, pool.size)
                others = rng.choice(pool, size=k, replace=False) if k else np.array([], dtype=int)
                for di in np.concatenate([own, others]).astype(int):
                    pq.append(qi), pd.append(di), split.append(split_of[e]), distr.append(doc_ent[di] != e)
                    dims.append(self.dimensions(req, doc_meta[di], doc_ent[di] == e))
        dims = np.array(dims)
        scores = self.rubric.score(dims)
        return AdequacyData(queries=queries, docs=docs, doc_words=np.array(doc_words), pair_query=np.array(pq),
                            pair_doc=np.array(pd), dims=dims, scores=scores, bins=self.rubric.to_bin(scores),
                            split=np.array(split), distractor=np.array(distr))


def planted_pairs(n: int, d: int, seed: int = 0, noise: float = 0.3, rank: int = 4):
    """Embedding pairs with a planted adequacy, to check that a scorer learns beyond the raw cosine.

    ``q`` and ``x`` are unit vectors in ``d`` dimensions whose cosine spreads over (-0.2, 0.9). The latent
    adequacy is ``z = c + 0.6 b + 0.4 l`` (each term standardised): ``c`` the cosine, ``b = sum_k (a_k . q)
    (b_k . x)`` a rank-``rank`` bilinear term (which aspects of the query the document covers) and ``l = v . x``
    a document-quality direction. The score is ``100 sigmoid(1.5 (z + noise e))`` with ``e ~ N(0, 1)``; the
    oracle is the noise-free ``100 sigmoid(1.5 z)``. With the defaults the raw cosine reaches a Spearman
    correlation of about 0.78 with the score and the oracle about 0.96, at every ``d``.

    Returns
    -------
    q, x : (n, d) float32 arrays; scores : (n,) in [0, 100]; oracle : (n,) in [0, 100]
    """
    n, d, rank = positive_int(n, "n"), positive_int(d, "d", 2), positive_int(rank, "rank")
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not np.isfinite(noise) or noise < 0:
        raise ValueError(f"`noise` must be a finite real number >= 0; got {noise!r}")
    rng = np.random.default_rng([positive_int(seed, "seed", 0), d])
    unit = lambda a: a / np.linalg.norm(a, axis=-1, keepdims=True)  # noqa: E731
    q = unit(rng.normal(size=(n, d)))
    rho = rng.uniform(-0.2, 0.9, size=(n, 1))
    x = unit(rho * q + np.sqrt(1 - rho ** 2) * unit(rng.normal(size=(n, d))))
    a, b, v = unit(rng.normal(size=(rank, d))), unit(rng.normal(size=(rank, d))), unit(rng.normal(size=d))
    std = lambda t: (t - t.mean()) / t.std()  # noqa: E731
    z = std(np.sum(q * x, 1)) + 0.6 * std(np.sum((q @ a.T) * (x @ b.T), 1)) + 0.4 * std(x @ v)
    z = z / z.std()
    oracle = 100 / (1 + np.exp(-1.5 * z))
    scores = 100 / (1 + np.exp(-1.5 * (z + float(noise) * rng.normal(size=n))))
    return q.astype(np.float32), x.astype(np.float32), scores, oracle
