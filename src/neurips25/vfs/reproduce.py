"""Reproduction of VFS's qualitative claims on simulated sparse vertical data.

Claims (abstract, qualitative; the paper's tables are not known here) and the criteria fixed in
issue 6 before any run:

c1 exactness  Paillier and plaintext backends decrypt identical integers and select identical sets.
c2 sure screening  VFS keeps every true feature in >= 95% of reps, within 0.03 of one-stage screening.
c3 cost  >= 10x fewer ciphertexts returned and decrypted and >= 2x fewer homomorphic operations than
         one-stage screening; with negative sampling at 1% positives < 5% of labels encrypted and a
         coverage loss <= 0.03 against no sampling.
c4 downstream  L1-logistic on the VFS set reaches test AUC within 0.01 of the model on the true set.
c5 mixed signs  stress case (signs alternate inside true groups): stage 1 keeps the true groups in
         >= 95% of reps and coverage stays within 0.03 of one-stage screening; reported as is.

Large runs use the plaintext backend (same integer arithmetic, costs counted identically); the
Paillier run is small and uses real 2048-bit keys at quick scale.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from neurips25.repro import Claim, Outcome, Scale, progress, register
from neurips25.vfs.data import (
    alternate_signs,
    column_block,
    logistic_labels,
    make_vertical_sparse_classification,
    sparse_binary_matrix,
)
from neurips25.vfs.parties import ActiveParty, PassiveParty
from neurips25.vfs.protocol import resolve_keep, run_protocol, sis_model_size


@dataclasses.dataclass(frozen=True)
class VFSConfig:
    """All knobs of the experiment; ``smoke`` / ``quick`` / ``paper`` are three instances."""

    n: int
    n_test: int
    p: int
    n_parties: int
    group_size: int
    density: float
    reps: int
    main_rate: float = 0.05  # positive rate of the main design (c2, c3 ratios, c4, c5)
    rare_rate: float = 0.01  # positive rate of the subsampling check (c3)
    ratio: float = 3.0  # negative sampling ratio r
    group_fraction: float = 0.05  # d1 = 5% of the G groups
    sweep: tuple = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
    n_active_groups: int = 3
    n_active_per_group: int = 4
    beta_range: tuple = (1.5, 2.5)
    pai_n: int = 4000
    pai_p: int = 5000
    pai_rate: float = 0.01
    pai_key_bits: int = 2048
    pai_seeds: int = 3
    l1_C: float = 1.0
    weak_scale: float = 0.5  # reported-only scenario: all effects halved


CONFIGS = {
    Scale.SMOKE: VFSConfig(
        n=3000,
        n_test=1000,
        p=2000,
        n_parties=2,
        group_size=50,
        density=0.02,
        reps=2,
        main_rate=0.1,
        rare_rate=0.05,
        group_fraction=0.2,
        pai_n=300,
        pai_p=200,
        pai_rate=0.1,
        pai_key_bits=512,
        pai_seeds=2,
    ),
    Scale.QUICK: VFSConfig(n=50_000, n_test=10_000, p=100_000, n_parties=4, group_size=50, density=0.01, reps=5),
    Scale.PAPER: VFSConfig(n=50_000, n_test=10_000, p=100_000, n_parties=4, group_size=50, density=0.01, reps=20),
}


def _screen(parts, y, ratio, sample_seed, two_stage, cfg, n_groups_keep=None):
    """One protocol run with the plaintext backend; the same ``sample_seed`` gives the same rows."""
    active = ActiveParty(y, backend="plaintext", negative_sampling_ratio=ratio, random_state=sample_seed)
    passives = [
        PassiveParty(P, group_size=cfg.group_size if two_stage else 1, name=f"party{k}") for k, P in enumerate(parts)
    ]
    res = run_protocol(active, passives, n_groups_keep=n_groups_keep or cfg.group_fraction, two_stage=two_stage)
    return res, active


def _covered(res, support) -> bool:
    return bool(np.isin(support, res.support).all())


def _min_model_size(ranking: np.ndarray, support: np.ndarray) -> float:
    """Smallest top-k of the ranking that contains every true feature (inf if one was never scored)."""
    pos = {int(j): r for r, j in enumerate(ranking)}
    ranks = [pos.get(int(j)) for j in support]
    return math.inf if any(r is None for r in ranks) else float(max(ranks) + 1)


def _sweep(group_res, feat_res, rows_nnz, support, d2, cfg, n_groups) -> list[dict]:
    """Two-stage selection and cost for each d1 in ``cfg.sweep``, from all-group and all-feature scores.

    Same integers as the protocol (the design d1 is checked against the protocol run); stage-2 cost is
    counted with the protocol's formula: ``max(nnz_j - 1, 0)`` additions + 2 per feature.
    """
    out = []
    gscores = group_res.group_scores
    fscores = feat_res.feature_scores
    fgroup = group_res.feature_group
    stage1_hom = group_res.cost.hom_operations - _stage2_hom(rows_nnz, group_res.ranking)
    for frac in cfg.sweep:
        d1 = resolve_keep(frac, n_groups, "n_groups_keep")
        gid = np.arange(n_groups)
        kept = gid[np.lexsort((gid, -gscores))][:d1]
        cand = np.flatnonzero(np.isin(fgroup, kept))
        ranking = cand[np.lexsort((cand, -fscores[cand]))]
        sel = ranking[: min(d2, len(ranking))]
        out.append(
            {
                "fraction": frac,
                "d1": d1,
                "covered": bool(np.isin(support, sel).all()),
                "groups_kept": bool(np.isin(np.unique(fgroup[support]), kept).all()),
                "decryptions": n_groups + len(cand),
                "hom_operations": int(stage1_hom + _stage2_hom(rows_nnz, cand)),
                "selected": sel,
            }
        )
    return out


def _stage2_hom(rows_nnz: np.ndarray, cols: np.ndarray) -> int:
    k = rows_nnz[cols]
    return int(np.maximum(k - 1, 0).sum() + 2 * len(cols))


def _auc(parts_train, y_train, parts_test, y_test, cols, C) -> float:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    Xtr = sp.hstack(parts_train, format="csc")[:, cols]
    Xte = sp.hstack(parts_test, format="csc")[:, cols]
    model = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C, max_iter=200).fit(Xtr, y_train)
    return float(roc_auc_score(y_test, model.decision_function(Xte)))


def _paillier_exactness(cfg: VFSConfig, seed: int) -> list[dict]:
    """Real-key VFS vs plaintext VFS on small data, several data seeds: identical integers and sets."""
    rows = []
    for s in range(cfg.pai_seeds):
        data = make_vertical_sparse_classification(
            cfg.pai_n,
            cfg.pai_p,
            n_parties=cfg.n_parties,
            group_size=cfg.group_size,
            density=cfg.density,
            positive_rate=cfg.pai_rate,
            beta_range=cfg.beta_range,
            random_state=[seed, 7919, s],
        )
        out = {}
        for name in ("plaintext", "paillier"):
            t0 = time.perf_counter()
            active = ActiveParty(
                data.y,
                backend=name,
                key_bits=cfg.pai_key_bits,
                negative_sampling_ratio=cfg.ratio,
                random_state=[seed, s],
            )
            passives = [
                PassiveParty(P, group_size=cfg.group_size, name=f"party{k}") for k, P in enumerate(data.X_parts)
            ]
            out[name] = (
                run_protocol(active, passives, n_groups_keep=cfg.group_fraction),
                time.perf_counter() - t0,
            )
        a, b = out["plaintext"][0], out["paillier"][0]
        rows.append(
            {
                "data_seed": s,
                "same_support": bool(np.array_equal(a.support, b.support)),
                "same_group_ints": a.group_diffs.tolist() == b.group_diffs.tolist(),
                "same_feature_ints": a.feature_diffs.tolist() == b.feature_diffs.tolist(),
                "paillier_s": round(out["paillier"][1], 2),
                "plaintext_s": round(out["plaintext"][1], 3),
                "encryptions": b.cost.encryptions,
                "decryptions": b.cost.decryptions,
                "n": cfg.pai_n,
            }
        )
    return rows


@register("vfs")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    cfg = CONFIGS[scale]
    c1 = Claim(
        "c1_exact",
        statement="The secure protocol computes exactly the plaintext screening statistics "
        "(Paillier is additively homomorphic on integers), so encryption changes no selection.",
        paper_value="qualitative (protocol correctness)",
        criterion=f"Paillier ({cfg.pai_key_bits}-bit) and plaintext backends decrypt identical D_u and "
        f"select identical sets on all {cfg.pai_seeds} data seeds",
        kind="check",
    )
    c2 = Claim(
        "c2_sure_screening",
        statement="VFS keeps the true features (sure screening) about as well as "
        "one-stage federated / centralized screening.",
        paper_value="qualitative ('superior performance')",
        criterion="VFS (r=3, d1=5% of groups, d2=floor(n1/log n1)) coverage P_a >= 0.95 and >= one-stage "
        "(all rows) P_a - 0.03",
        kind="headline",
    )
    c3 = Claim(
        "c3_cost",
        statement="VFS needs far less computation, communication and encryption; subsampling "
        "makes it cheap under severe imbalance without losing accuracy.",
        paper_value="qualitative",
        criterion=">= 10x fewer ciphertexts returned and decrypted and >= 2x fewer homomorphic operations "
        "than one-stage screening on all rows (the conventional baseline); at 1% positives r=3 "
        "encrypts < 5% of the labels with coverage loss <= 0.03 vs no sampling",
        kind="supporting",
    )
    c4 = Claim(
        "c4_downstream",
        statement="Downstream models on the screened set lose nothing.",
        paper_value="qualitative",
        criterion="mean test AUC of L1-logistic on VFS features >= mean AUC on the true features - 0.01",
        kind="supporting",
    )
    c5 = Claim(
        "c5_mixed_signs",
        statement="Stress case (not a paper claim): opposite-sign effects inside a "
        "group can cancel in the group sum and be lost at stage 1.",
        paper_value="n/a",
        criterion="stage 1 keeps every true group in >= 95% of reps and VFS coverage >= one-stage coverage - 0.03",
        kind="supporting",
    )

    # --- c1: real Paillier vs plaintext -------------------------------------------------------------
    try:
        pai = _paillier_exactness(cfg, seed)
    except ImportError as err:  # core install without the `fed` extra: the rest still runs
        pai, pai_missing = [], str(err)
    else:
        pai_missing = ""

    # --- simulation loop ----------------------------------------------------------------------------
    reps = []
    for i in progress(range(cfg.reps), desc="vfs reps", total=cfg.reps):
        rng = np.random.default_rng([seed, i])
        data = make_vertical_sparse_classification(
            cfg.n,
            cfg.p,
            n_parties=cfg.n_parties,
            group_size=cfg.group_size,
            density=cfg.density,
            n_active_groups=cfg.n_active_groups,
            n_active_per_group=cfg.n_active_per_group,
            beta_range=cfg.beta_range,
            positive_rate=cfg.main_rate,
            random_state=rng,
        )
        parts, support, groups = data.X_parts, data.support, data.groups
        n_groups = int(groups.max()) + 1
        block = column_block(parts, data.party_columns, support)
        eta = block @ data.coef[support]
        y_rare, _ = logistic_labels(eta, cfg.rare_rate, rng)
        coef_mixed = alternate_signs(data.coef, support, groups)
        y_mixed, _ = logistic_labels(block @ coef_mixed[support], cfg.main_rate, rng)
        sample_seed = int(rng.integers(2**31))
        rec: dict = {"rep": i, "n_pos_main": int(data.y.sum()), "n_pos_rare": int(y_rare.sum())}

        # main design: VFS (r=3, r=None) vs one-stage (all rows = centralized SIS; and r=3 as ablation)
        vfs3, act3 = _screen(parts, data.y, cfg.ratio, sample_seed, True, cfg)
        vfs0, _ = _screen(parts, data.y, None, sample_seed, True, cfg)
        one0, _ = _screen(parts, data.y, None, sample_seed, False, cfg)
        one3, _ = _screen(parts, data.y, cfg.ratio, sample_seed, False, cfg)
        d2 = sis_model_size(int(data.y.sum()))
        rows3 = act3.label_message().rows
        nnz3 = np.concatenate([np.diff(sp.csc_matrix(P[rows3]).indptr) for P in parts])
        nnz0 = np.concatenate([np.diff(P.indptr) for P in parts])
        sweep3 = _sweep(vfs3, one3, nnz3, support, d2, cfg, n_groups)
        sweep0 = _sweep(vfs0, one0, nnz0, support, d2, cfg, n_groups)
        design = [s for s in sweep3 if s["fraction"] == cfg.group_fraction][0]
        rec["sweep_matches_protocol"] = bool(np.array_equal(np.sort(design.pop("selected")), vfs3.support))
        for s in sweep3 + sweep0:
            s.pop("selected", None)
        rec.update(
            {
                "d2": d2,
                "cov_vfs_r3": _covered(vfs3, support),
                "cov_vfs_all": _covered(vfs0, support),
                "cov_one_all": _covered(one0, support),
                "cov_one_r3": _covered(one3, support),
                "groups_kept_r3": bool(np.isin(np.unique(groups[support]), vfs3.kept_groups).all()),
                "mms_vfs_r3": _min_model_size(vfs3.ranking, support),
                "mms_one_all": _min_model_size(one0.ranking, support),
                "cost_vfs_r3": vfs3.cost.as_dict(),
                "cost_vfs_all": vfs0.cost.as_dict(),
                "cost_one_all": one0.cost.as_dict(),
                "cost_one_r3": one3.cost.as_dict(),
                "wall_vfs_r3": vfs3.wall_s,
                "wall_one_all": one0.wall_s,
                "sweep_r3": sweep3,
                "sweep_all": sweep0,
            }
        )

        # c4: downstream L1-logistic on a fresh test set from the same model
        test_parts = [sparse_binary_matrix(cfg.n_test, P.shape[1], cfg.density, rng) for P in parts]
        eta_test = column_block(test_parts, data.party_columns, support) @ data.coef[support]
        y_test = (rng.random(cfg.n_test) < expit(data.intercept + eta_test)).astype(int)
        rec["auc_vfs"] = _auc(parts, data.y, test_parts, y_test, vfs3.support, cfg.l1_C)
        rec["auc_oracle"] = _auc(parts, data.y, test_parts, y_test, support, cfg.l1_C)
        del test_parts

        # c3 (rare positives): subsampling vs none, both two-stage
        r3, ar = _screen(parts, y_rare, cfg.ratio, sample_seed, True, cfg)
        r0, _ = _screen(parts, y_rare, None, sample_seed, True, cfg)
        # figure only: the d1 sweep at rare positives (all-feature scores on the same sampled rows)
        one3_rare, _ = _screen(parts, y_rare, cfg.ratio, sample_seed, False, cfg)
        rows_rare = ar.label_message().rows
        nnz_rare = np.concatenate([np.diff(sp.csc_matrix(P[rows_rare]).indptr) for P in parts])
        sweep_rare = _sweep(r3, one3_rare, nnz_rare, support, sis_model_size(int(y_rare.sum())), cfg, n_groups)
        for s_ in sweep_rare:
            s_.pop("selected")
        rec.update(
            {
                "sweep_rare_r3": sweep_rare,
                "rare_enc_fraction": r3.cost.encryptions / cfg.n,
                "cov_rare_r3": _covered(r3, support),
                "cov_rare_all": _covered(r0, support),
            }
        )

        # c5: mixed signs
        m3, _ = _screen(parts, y_mixed, cfg.ratio, sample_seed, True, cfg)
        m1, _ = _screen(parts, y_mixed, None, sample_seed, False, cfg)
        neg = support[coef_mixed[support] < 0]
        rec.update(
            {
                "mixed_groups_kept": bool(np.isin(np.unique(groups[support]), m3.kept_groups).all()),
                "cov_mixed_vfs": _covered(m3, support),
                "cov_mixed_one": _covered(m1, support),
                "mixed_neg_kept_vfs": float(np.isin(neg, m3.support).mean()),
                "mixed_neg_kept_one": float(np.isin(neg, m1.support).mean()),
                "mixed_pos_kept_vfs": float(np.isin(support[coef_mixed[support] > 0], m3.support).mean()),
            }
        )

        # reported only (no claim): weaker effects, where screening itself starts to miss features
        y_weak, _ = logistic_labels(block @ (cfg.weak_scale * data.coef[support]), cfg.main_rate, rng)
        w3, aw = _screen(parts, y_weak, cfg.ratio, sample_seed, True, cfg)
        w1_3, _ = _screen(parts, y_weak, cfg.ratio, sample_seed, False, cfg)
        w1_0, _ = _screen(parts, y_weak, None, sample_seed, False, cfg)
        rows_w = aw.label_message().rows
        nnz_w = np.concatenate([np.diff(sp.csc_matrix(P[rows_w]).indptr) for P in parts])
        sweep_w = _sweep(w3, w1_3, nnz_w, support, sis_model_size(int(y_weak.sum())), cfg, n_groups)
        for s_ in sweep_w:
            s_.pop("selected")
        rec.update(
            {
                "sweep_weak_r3": sweep_w,
                "weak_cov_vfs_r3": _covered(w3, support),
                "weak_cov_one_all": _covered(w1_0, support),
                "weak_cov_one_r3": _covered(w1_3, support),
                "weak_retention_vfs_r3": float(np.isin(support, w3.support).mean()),
                "weak_retention_one_all": float(np.isin(support, w1_0.support).mean()),
                "weak_groups_kept": float(np.isin(np.unique(groups[support]), w3.kept_groups).mean()),
            }
        )
        reps.append(rec)
        del data, parts, block

    # --- judge ----------------------------------------------------------------------------------------
    def mean(key):
        return float(np.mean([r[key] for r in reps]))

    def cost_mean(which, key):
        return float(np.mean([r[which][key] for r in reps]))

    exact = all(r["same_support"] and r["same_group_ints"] and r["same_feature_ints"] for r in pai)
    c1.judge(
        exact if pai else None,
        measured={"seeds": pai},
        note=pai_missing
        or f"n={cfg.pai_n}, p={cfg.pai_p}, {cfg.pai_rate:.0%} positives, r={cfg.ratio:g}, {cfg.pai_key_bits}-bit keys",
    )

    P_vfs, P_one = mean("cov_vfs_r3"), mean("cov_one_all")
    mms_v = float(np.median([r["mms_vfs_r3"] for r in reps]))
    mms_o = float(np.median([r["mms_one_all"] for r in reps]))
    c2.judge(
        P_vfs >= 0.95 and P_vfs >= P_one - 0.03,
        measured={
            "P_a_vfs_r3": P_vfs,
            "P_a_one_stage_all_rows": P_one,
            "P_a_vfs_no_sampling": mean("cov_vfs_all"),
            "P_a_one_stage_r3": mean("cov_one_r3"),
            "median_min_model_size_vfs": mms_v,
            "median_min_model_size_one_stage": mms_o,
            "d2": [r["d2"] for r in reps],
        },
        note=f"{cfg.reps} reps (the notes ask 20 at paper scale), n={cfg.n}, p={cfg.p}, density "
        f"{cfg.density}, {cfg.main_rate:.0%} positives. One-stage on all rows equals centralized SIS "
        "(exact integer arithmetic).",
    )

    def ratio(key, base="cost_one_all", new="cost_vfs_r3"):
        return cost_mean(base, key) / max(cost_mean(new, key), 1)

    r_dec, r_ret, r_hom = ratio("decryptions"), ratio("ciphertexts_to_active"), ratio("hom_operations")
    enc_frac = max(r["rare_enc_fraction"] for r in reps)
    P_r3, P_r0 = mean("cov_rare_r3"), mean("cov_rare_all")
    c3.judge(
        r_dec >= 10 and r_ret >= 10 and r_hom >= 2 and enc_frac < 0.05 and P_r3 >= P_r0 - 0.03,
        measured={
            "decryption_ratio": r_dec,
            "returned_ciphertext_ratio": r_ret,
            "hom_op_ratio": r_hom,
            "hom_op_ratio_same_rows_r3": ratio("hom_operations", "cost_one_r3"),
            "hom_op_ratio_no_sampling_both": ratio("hom_operations", "cost_one_all", "cost_vfs_all"),
            "encryption_ratio": ratio("encryptions"),
            "bytes_to_passive_ratio": ratio("bytes_to_passive"),
            "bytes_to_active_ratio": ratio("bytes_to_active"),
            "rare_max_label_fraction_encrypted": enc_frac,
            "rare_P_a_r3": P_r3,
            "rare_P_a_no_sampling": P_r0,
        },
        note="Ratios are means of one-stage (all rows) over VFS (r=3). The hom-op saving comes mostly from "
        "label subsampling: against one-stage on the same sampled rows it is hom_op_ratio_same_rows_r3 "
        f"(group sums of {cfg.group_size} features at density {cfg.density} are barely sparser than the "
        "features). Costs are counted by the plaintext backend with the Paillier formulas.",
    )

    auc_v, auc_o = mean("auc_vfs"), mean("auc_oracle")
    c4.judge(
        auc_v >= auc_o - 0.01,
        measured={"auc_vfs": auc_v, "auc_oracle": auc_o, "gap": auc_o - auc_v},
        note="Every true feature is in the VFS set (c2), so a gap comes from the extra screened noise "
        "features the fixed-C L1 fit keeps, not from missed features; C was fixed before the run. "
        f"liblinear L1-logistic C={cfg.l1_C}, trained on the n={cfg.n} screening rows, tested on "
        f"{cfg.n_test} fresh rows.",
    )

    kept_mixed, Pm_v, Pm_o = mean("mixed_groups_kept"), mean("cov_mixed_vfs"), mean("cov_mixed_one")
    c5.judge(
        kept_mixed >= 0.95 and Pm_v >= Pm_o - 0.03,
        measured={
            "true_groups_kept": kept_mixed,
            "P_a_vfs": Pm_v,
            "P_a_one_stage": Pm_o,
            "neg_feature_retention_vfs": mean("mixed_neg_kept_vfs"),
            "neg_feature_retention_one_stage": mean("mixed_neg_kept_one"),
            "pos_feature_retention_vfs": mean("mixed_pos_kept_vfs"),
        },
        note="Negative effects on rare 0/1 features barely move the class means, so the negative features "
        "are hard for any marginal screen; the group sum is dominated by the positive features.",
    )

    _figures(reps, cfg, out)
    weak = {
        k: mean(k)
        for k in (
            "weak_cov_vfs_r3",
            "weak_cov_one_all",
            "weak_cov_one_r3",
            "weak_retention_vfs_r3",
            "weak_retention_one_all",
            "weak_groups_kept",
        )
    }
    metrics = {
        "weak_effects": weak,
        "config": dataclasses.asdict(cfg),
        "paillier": pai,
        "reps": reps,
        "sweep_matches_protocol": all(r["sweep_matches_protocol"] for r in reps),
    }
    return Outcome(
        [c1, c2, c3, c4, c5],
        metrics=metrics,
        notes="Simulation per the notes (reconstructed statistic: class mean difference through "
        "D = n_s T - n1 S). Plaintext backend for the large runs; real Paillier for c1.",
    )


def _figures(reps: list[dict], cfg: VFSConfig, out: Path) -> None:
    from matplotlib.figure import Figure

    fr = np.array(cfg.sweep)
    fig = Figure(figsize=(9, 3.6))
    ax1, ax2 = fig.subplots(1, 2)
    for key, label in (
        ("sweep_r3", f"VFS r={cfg.ratio:g}, {cfg.main_rate:.0%} pos."),
        ("sweep_all", f"VFS no sampling, {cfg.main_rate:.0%} pos."),
        ("sweep_rare_r3", f"VFS r={cfg.ratio:g}, {cfg.rare_rate:.0%} pos."),
        ("sweep_weak_r3", f"VFS r={cfg.ratio:g}, effects x{cfg.weak_scale:g}"),
    ):
        cov = [np.mean([r[key][j]["covered"] for r in reps]) for j in range(len(fr))]
        ax1.plot(fr * 100, cov, marker="o", label=label)
    ax1.axhline(np.mean([r["cov_one_all"] for r in reps]), color="k", ls="--", label="one-stage (all rows)")
    weak_one = np.mean([r["weak_cov_one_all"] for r in reps])
    ax1.axhline(weak_one, color="C3", ls=":", label=f"one-stage, effects x{cfg.weak_scale:g}")
    ax1.set(
        xscale="log",
        xlabel="groups kept at stage 1 (% of G)",
        ylabel="coverage P_a",
        ylim=(-0.05, 1.05),
        title="Coverage vs groups kept",
    )
    ax1.legend(fontsize=8)
    base_dec = np.mean([r["cost_one_all"]["decryptions"] for r in reps])
    base_hom = np.mean([r["cost_one_all"]["hom_operations"] for r in reps])
    for key, ls in (("sweep_r3", "-"), ("sweep_all", ":")):
        dec = [base_dec / np.mean([r[key][j]["decryptions"] for r in reps]) for j in range(len(fr))]
        hom = [base_hom / np.mean([r[key][j]["hom_operations"] for r in reps]) for j in range(len(fr))]
        tag = f"r={cfg.ratio:g}" if key == "sweep_r3" else "no sampling"
        ax2.plot(fr * 100, dec, ls=ls, marker="o", color="C0", label=f"decryptions, {tag}")
        ax2.plot(fr * 100, hom, ls=ls, marker="s", color="C1", label=f"hom. ops, {tag}")
    ax2.set(
        xscale="log",
        yscale="log",
        xlabel="groups kept at stage 1 (% of G)",
        ylabel="one-stage cost / VFS cost",
        title="Cost saving vs groups kept",
    )
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "figures" / "coverage_cost_vs_groups.png", dpi=120)
