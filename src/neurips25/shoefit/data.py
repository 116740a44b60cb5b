"""MVShoesLite: procedural multi-view shoe-like objects, ray-cast in numpy (a stand-in for MVShoes).

The MVShoes dataset is not public and no pretrained VAE/DiT is available offline, so the reproduction runs on
objects rendered here. Each object is an ellipsoid "last" in object space (long axis x, a dark sole at the
bottom) whose albedo depends on the side, so no single view shows everything:

* four sectors by azimuth ``phi = atan2(y, x)``: toe (|phi| < 45 deg), left (45..135), heel, right. With
  ``symmetric=True`` (the default since issue #51) toe and heel share one "cap" colour, left and right have
  their own colours from an 8-colour palette, and each side face carries a logo of a further colour;
* a grey-level scikit-image texture (brick) modulating the upper by +-12%.

**Views do not describe themselves** (``symmetric=True``): shape, cap colour, sole, logo placement and texture
are invariant under the half turn about the vertical axis, so the right view (270 deg) of a shoe is, pixel for
pixel, the left view (90 deg) of the same shoe with its left and right colours swapped. Nothing in a product
view's pixels says which side it shows; only its position in the list (the view id) does. ``symmetric=False``
keeps the v1 data (toe and heel coloured apart, texture not symmetric), whose side views give their
orientation away (the toe colour is at one end).

Renderer: analytic ray-ellipsoid (and leg-cylinder) intersection, orthographic camera (azimuth, elevation,
zoom, image-plane offset), Lambert key light plus a Blinn specular lobe, and an optional mirror reflection of
the background (``reflect``: the reflected ray's image-plane offset picks the background pixel; reflective
materials pick up the scene's colour, spatially varying). Scene light = white key light mixed with an
environment light of the background's mean colour, weight ``k_env``: ``light = (1 - k_env) + 2 k_env *
bg_mean`` per channel (the true colour of the ground truth is known). Product views: azimuths 0/90/180/270
deg, centred, zoom 1, white background, neutral light. The target scene: a random pose **misaligned in scale
and translation** (zoom in ``zoom_range``, offset up to ``max_offset`` of the half-width), a background (a crop
of a scikit-image photograph or a flat colour), a "leg" cylinder rising from the heel (an occluder and the
pose cue: it says which way the shoe faces, hence which side is visible), the shoe mask and the ground truth.

Splits:

* ``"train"``: random azimuths; with probability ``p_corr`` a side pose gets a flat background close to the
  visible side's colour (a tempting shortcut: background colour predicts the unseen side's colour), and a
  shoe reflects its scene with ``reflect ~ U(0, reflect_max)`` (so background colour does enter the shoe);
* ``"test"``: side poses (azimuth 60..120 or 240..300 deg; the visible side is absent from view 0),
  uncorrelated backgrounds, the training distribution of materials;
* ``"leak"``: side poses, **matte** shoes (``reflect = 0``) on **saturated, out-of-distribution** flat
  backgrounds (full-saturation hues): the regime where a model that learned "background colour goes into the
  shoe" leaks it, measurable against the known physical tint (the colour claim's precondition).
"""

from __future__ import annotations

import functools
import numbers

import numpy as np
import torch

PALETTE = np.array([[0.85, 0.15, 0.15], [0.15, 0.65, 0.20], [0.15, 0.30, 0.85], [0.90, 0.80, 0.15],
                    [0.80, 0.25, 0.75], [0.15, 0.75, 0.80], [0.95, 0.55, 0.15], [0.92, 0.92, 0.92]])
SECTORS = ("toe", "left", "heel", "right")
VIEW_AZIMUTHS = (0.0, 90.0, 180.0, 270.0)
SCENE_IMAGES = ("astronaut", "coffee", "chelsea", "rocket", "grass", "brick", "gravel", "hubble_deep_field")
_SOLE, _LEG, _LOGO, _BG = 4, 5, 6, -1  # label ids beyond the four sectors


def _camera(az: float, el: float):
    a, e = np.radians(az), np.radians(el)
    d = np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])  # towards the camera
    right = np.array([-np.sin(a), np.cos(a), 0.0])
    up = np.array([-np.sin(e) * np.cos(a), -np.sin(e) * np.sin(a), np.cos(e)])
    return -d, right, up


@functools.lru_cache(maxsize=2)
def _texture_bank() -> np.ndarray:
    from skimage import data

    tex = data.brick().astype(np.float64) / 255.0
    return (tex - tex.mean()) / (tex.std() + 1e-9)


@functools.lru_cache(maxsize=4)
def _scene_bank(res: int, per_image: int, seed: int) -> np.ndarray:
    """Random square crops of scikit-image's photographs, resized to ``res`` (cached per arguments)."""
    from skimage import data, transform

    rng = np.random.default_rng([seed, 2])
    crops = []
    for name in SCENE_IMAGES:
        img = getattr(data, name)()
        img = np.repeat(img[..., None], 3, -1) if img.ndim == 2 else img[..., :3]
        img = img.astype(np.float64) / 255.0
        H, W = img.shape[:2]
        for _ in range(per_image):
            s = int(rng.integers(min(H, W) // 4, min(H, W) // 2))
            y, x = int(rng.integers(0, H - s)), int(rng.integers(0, W - s))
            crops.append(transform.resize(img[y:y + s, x:x + s], (res, res), anti_aliasing=True))
    return np.stack(crops)


def _saturated_colors(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` full-saturation, full-value colours of random hue (outside the training backgrounds' range)."""
    h = rng.uniform(0, 6, n)
    x = 1 - np.abs(h % 2 - 1)
    z, o = np.zeros(n), np.ones(n)
    k = h.astype(int) % 6
    table = [(o, x, z), (x, o, z), (z, o, x), (z, x, o), (x, z, o), (o, z, x)]
    return np.stack([np.stack(table[j])[:, i] for i, j in enumerate(k)])


def render(shoe: dict, az: float, el: float, res: int, background: np.ndarray, k_env: float = 0.0,
           leg: bool = False, texture: np.ndarray | None = None, *, zoom: float = 1.0,
           offset: tuple[float, float] = (0.0, 0.0), reflect: float = 0.0):
    """Render one shoe; returns ``(image (res, res, 3) in [0, 1], mask (res, res), labels (res, res))``.

    ``zoom`` scales the object in the image and ``offset = (dx, dy)`` moves it (fractions of the image's
    half-width; +dx right, +dy up). ``reflect`` in [0, 1] mixes a mirror reflection of ``background`` into the
    shoe. ``labels``: sector id 0..3 (toe, left, heel, right), 4 sole, 5 leg, 6 side logo, -1 background.
    """
    fwd, right, up = _camera(az, el)
    u = (np.arange(res) + 0.5) / res * 2.1 - 1.05
    U, Vv = np.meshgrid(u, -u)  # row 0 is the top of the image
    U, Vv = (U - 1.05 * offset[0]) / zoom, (Vv - 1.05 * offset[1]) / zoom
    o = U[..., None] * right + Vv[..., None] * up - 3.0 * fwd
    d = np.broadcast_to(fwd, o.shape)
    s = np.array(shoe["axes"])
    # ray-ellipsoid: |(o + t d) / s|^2 = 1
    os_, ds = o / s, d / s
    A, Bq, C = (ds * ds).sum(-1), 2 * (os_ * ds).sum(-1), (os_ * os_).sum(-1) - 1
    disc = Bq * Bq - 4 * A * C
    t_body = np.where(disc > 0, (-Bq - np.sqrt(np.maximum(disc, 0))) / (2 * A), np.inf)
    t_leg = np.full(t_body.shape, np.inf)
    if leg:
        cx, r, z0 = -0.55 * s[0], 0.28 * s[1] * 1.6, 0.3 * s[2]
        ox, oy = o[..., 0] - cx, o[..., 1]
        a2 = d[..., 0] ** 2 + d[..., 1] ** 2
        b2 = 2 * (ox * d[..., 0] + oy * d[..., 1])
        c2 = ox ** 2 + oy ** 2 - r * r
        disc2 = b2 * b2 - 4 * a2 * c2
        tl = np.where(disc2 > 0, (-b2 - np.sqrt(np.maximum(disc2, 0))) / (2 * a2 + 1e-12), np.inf)
        z = o[..., 2] + tl * d[..., 2]
        t_leg = np.where(z > z0, tl, np.inf)
    hit_body = np.isfinite(t_body) & (t_body <= t_leg)
    hit_leg = np.isfinite(t_leg) & ~hit_body
    p = o + np.where(np.isfinite(t_body), t_body, 0)[..., None] * d
    n = p / (s * s)
    n /= np.linalg.norm(n, axis=-1, keepdims=True) + 1e-12
    phi = np.degrees(np.arctan2(p[..., 1], p[..., 0]))
    sector = np.select([np.abs(phi) < 45, (phi >= 45) & (phi < 135), np.abs(phi) >= 135], [0, 1, 2], 3)
    albedo = np.asarray(shoe["colors"])[sector]
    logo = np.zeros(sector.shape, bool)
    for side, sign in ((1, 1.0), (3, -1.0)):  # side logos: a disc centred on the +-y face
        dist = np.hypot(p[..., 0] / s[0], (p[..., 2] / s[2]) - 0.05)
        on = (sector == side) & (np.sign(p[..., 1]) == sign) & (dist < shoe["logo_r"])
        albedo = np.where(on[..., None], shoe["logos"][0 if side == 1 else 1], albedo)
        logo |= on
    if texture is not None:
        th, tw = texture.shape
        ti = ((p[..., 2] / s[2] + 1) * 0.5 * (th // 3)).astype(int) % th
        # a symmetric shoe's texture repeats every half turn, so it cannot tell the left view from the right
        period = 180.0 if shoe.get("symmetric", False) else 360.0
        tj = (((phi + 180) % period) / period * (tw // 2)).astype(int) % tw
        albedo = albedo * (1 + 0.12 * texture[ti, tj])[..., None]
    sole = p[..., 2] < -0.55 * s[2]
    albedo = np.where(sole[..., None], 0.12, albedo)
    labels = np.where(sole, _SOLE, np.where(logo, _LOGO, sector))
    # leg: skin-like flat colour, normal from the cylinder axis
    if leg:
        pl = o + np.where(np.isfinite(t_leg), t_leg, 0)[..., None] * d
        nl = np.stack([pl[..., 0] + 0.55 * s[0], pl[..., 1], np.zeros_like(pl[..., 0])], -1)
        nl /= np.linalg.norm(nl, axis=-1, keepdims=True) + 1e-12
        n = np.where(hit_leg[..., None], nl, n)
        albedo = np.where(hit_leg[..., None], shoe["leg_color"], albedo)
        labels = np.where(hit_leg, _LEG, labels)
    light_dir = -fwd * 0.6 + up * 0.6 + right * 0.3
    light_dir /= np.linalg.norm(light_dir)
    lam = np.clip((n * light_dir).sum(-1), 0, 1)
    h = light_dir - fwd
    h /= np.linalg.norm(h)
    spec = np.clip((n * h).sum(-1), 0, 1) ** shoe["gloss"] * 0.25
    bg_mean = background.reshape(-1, 3).mean(0)
    light = (1 - k_env) + 2 * k_env * bg_mean  # known environment tint
    color = albedo * light * (0.35 + 0.65 * lam[..., None]) + spec[..., None] * light
    if reflect > 0:  # mirror reflection: the reflected ray's image-plane direction picks a background pixel
        rdir = d - 2 * (d * n).sum(-1, keepdims=True) * n
        ri = np.clip(np.arange(res)[:, None] - np.rint((rdir @ up) * res * 0.5), 0, res - 1).astype(int)
        rj = np.clip(np.arange(res)[None, :] + np.rint((rdir @ right) * res * 0.5), 0, res - 1).astype(int)
        color = (1 - reflect) * color + reflect * background[ri, rj]
    fg = hit_body | hit_leg
    image = np.where(fg[..., None], np.clip(color, 0, 1), background)
    shoe_mask = hit_body.astype(np.float64)
    labels = np.where(fg, labels, _BG)
    return image, shoe_mask, labels


def random_shoe(rng: np.random.Generator, symmetric: bool = True) -> dict:
    """Shape, side colours (distinct palette entries), logos, gloss and leg colour of one object.

    ``symmetric``: toe and heel share the cap colour, so the shoe looks the same after a half turn except for
    its left / right colours and logos (the product views then do not reveal which side they show).
    """
    cols = rng.choice(len(PALETTE), size=6, replace=False)
    if symmetric:
        cols = np.array([cols[0], cols[1], cols[0], cols[2], cols[3], cols[4]])
    return {"axes": (float(rng.uniform(0.85, 1.0)), float(rng.uniform(0.32, 0.42)), float(rng.uniform(0.36, 0.46))),
            "color_ids": cols[:4], "colors": PALETTE[cols[:4]], "logos": PALETTE[cols[4:6]],
            "logo_r": float(rng.uniform(0.25, 0.4)), "gloss": float(rng.uniform(8, 40)),
            "leg_color": np.array([0.85, 0.65, 0.5]) * rng.uniform(0.6, 1.0), "symmetric": bool(symmetric)}


def _real_pair(name, value):
    try:
        lo, hi = (float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair of numbers (lo, hi); got {value!r}") from None
    return lo, hi


class MVShoesLite(torch.utils.data.Dataset):
    """Triplets (product views, masked model image + mask, ground truth) of procedural shoes.

    Parameters
    ----------
    n : int
        Number of triplets (all rendered at construction; ~1 ms per image at 24 px).
    seed : int
        Drives every random choice; the same seed gives the same arrays.
    views : int
        Product views, at azimuths 0, 90, 180, 270 deg (in that order; ``views=1`` keeps the toe view only).
    res : int
        Image side in pixels.
    env_strength : (float, float)
        Range of ``k_env``, the environment light's weight in the scene.
    split : {"train", "test", "leak"}
        ``"test"``: side poses only (visible side absent from view 0), uncorrelated backgrounds; ``"leak"``:
        side poses, matte shoes, saturated out-of-distribution flat backgrounds (see the module docstring).
    p_corr : float
        Train only: probability of a flat background close to the visible side's colour (the shortcut).
    symmetric : bool
        Views that do not describe themselves (default); ``False``: the v1 objects (toe and heel apart).
    zoom_range : (float, float)
        Scale of the target shoe relative to the product views (misalignment in scale); ``(1, 1)``: none.
    max_offset : float
        Largest translation of the target, as a fraction of the image's half-width (per axis); 0: none.
    reflect_max : float
        Reflectivity of a shoe is ``U(0, reflect_max)`` in "train" and "test" (0 in "leak").

    Notes
    -----
    Items are dicts of float tensors in [-1, 1] (images) / [0, 1] (masks): ``ref_views (V, 3, S, S)``,
    ``ref_masks (V, 1, S, S)``, ``model_image (3, S, S)`` (shoe region zeroed), ``mask (1, S, S)``,
    ``target (3, S, S)``, plus ``bg_mean (3,)``, ``k_env``, ``azimuth``, ``zoom``, ``offset (2,)``, ``reflect``,
    ``side_label (S, S)`` (sector ids), ``visible_side`` (1 left / 3 right / -1) and ``side_color_id``.
    """

    def __init__(self, n, seed=0, views=4, res=24, env_strength=(0.05, 0.3), split="train", p_corr=0.5, *,
                 symmetric=True, zoom_range=(0.7, 1.05), max_offset=0.2, reflect_max=0.4):
        for name, v, lo in (("n", n, 1), ("seed", seed, 0), ("views", views, 1), ("res", res, 8)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}; got {v!r}")
        if views > len(VIEW_AZIMUTHS):
            raise ValueError(f"views must be <= {len(VIEW_AZIMUTHS)}; got {views}")
        if split not in ("train", "test", "leak"):
            raise ValueError(f"split must be 'train', 'test' or 'leak'; got {split!r}")
        lo, hi = _real_pair("env_strength", env_strength)
        if not 0 <= lo <= hi <= 1:
            raise ValueError(f"env_strength must be (lo, hi) with 0 <= lo <= hi <= 1; got {env_strength!r}")
        z_lo, z_hi = _real_pair("zoom_range", zoom_range)
        if not 0.25 <= z_lo <= z_hi <= 2:
            raise ValueError(f"zoom_range must be (lo, hi) with 0.25 <= lo <= hi <= 2; got {zoom_range!r}")
        for name, v, top in (("p_corr", p_corr, 1), ("max_offset", max_offset, 0.5), ("reflect_max", reflect_max, 1)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v <= top:
                raise ValueError(f"{name} must be a number in [0, {top}]; got {v!r}")
        rng = np.random.default_rng([int(seed), {"train": 0, "test": 1, "leak": 2}[split]])
        tex = _texture_bank()
        scenes = _scene_bank(int(res), 6, int(seed))
        white = np.ones((res, res, 3))
        R, RM, M, T, MI, BG, K, AZ, LAB, VIS, SC, ZO, OF, RF = ([] for _ in range(14))
        for _ in range(int(n)):
            shoe = random_shoe(rng, bool(symmetric))
            views_ = [render(shoe, VIEW_AZIMUTHS[v], 15.0, res, white, 0.0, False, tex) for v in range(views)]
            R.append(np.stack([im for im, _, _ in views_])), RM.append(np.stack([m for _, m, _ in views_]))
            if split == "train":
                az = float(rng.uniform(0, 360))
            else:
                az = float(rng.uniform(60, 120) + (180 if rng.random() < 0.5 else 0))
            el = float(rng.uniform(10, 35))
            zoom = float(rng.uniform(z_lo, z_hi))
            off = rng.uniform(-max_offset, max_offset, 2)
            side = 1 if 45 <= az % 360 < 135 else 3 if 225 <= az % 360 < 315 else -1
            if split == "leak":
                bg = np.broadcast_to(_saturated_colors(rng, 1)[0], (res, res, 3))
            elif split == "train" and side > 0 and rng.random() < p_corr:
                bg = np.broadcast_to(np.clip(shoe["colors"][side] + rng.normal(0, 0.08, 3), 0, 1), (res, res, 3))
            elif rng.random() < 0.5:
                bg = scenes[rng.integers(len(scenes))]
            else:
                bg = np.broadcast_to(rng.uniform(0.05, 0.95, 3), (res, res, 3))
            k = float(rng.uniform(lo, hi))
            refl = 0.0 if split == "leak" else float(rng.uniform(0, reflect_max))
            img, mask, lab = render(shoe, az, el, res, np.array(bg), k, True, tex, zoom=zoom, offset=tuple(off),
                                    reflect=refl)
            M.append(mask), T.append(img), MI.append(img * (1 - mask[..., None]))
            BG.append(np.asarray(bg).reshape(-1, 3).mean(0)), K.append(k), AZ.append(az), LAB.append(lab)
            VIS.append(side), ZO.append(zoom), OF.append(off), RF.append(refl)
            SC.append(int(shoe["color_ids"][side]) if side > 0 else -1)
        to = lambda a: torch.from_numpy(np.ascontiguousarray(a)).float()  # noqa: E731
        self.ref_views = to(np.stack(R).transpose(0, 1, 4, 2, 3)) * 2 - 1
        self.ref_masks = to(np.stack(RM))[:, :, None]
        self.target = to(np.stack(T).transpose(0, 3, 1, 2)) * 2 - 1
        self.model_image = to(np.stack(MI).transpose(0, 3, 1, 2)) * 2 - 1
        self.model_image = self.model_image * (1 - to(np.stack(M))[:, None])
        self.mask = to(np.stack(M))[:, None]
        self.bg_mean, self.k_env, self.azimuth = to(np.stack(BG)), to(K), to(AZ)
        self.zoom, self.offset, self.reflect = to(ZO), to(np.stack(OF)), to(RF)
        self.side_label = torch.from_numpy(np.stack(LAB)).long()
        self.visible_side = torch.tensor(VIS)
        self.side_color_id = torch.tensor(SC)
        self.res, self.views, self.split = int(res), int(views), split

    def __len__(self) -> int:
        return self.target.shape[0]

    def __getitem__(self, i):
        return {"ref_views": self.ref_views[i], "ref_masks": self.ref_masks[i], "model_image": self.model_image[i],
                "mask": self.mask[i], "target": self.target[i], "bg_mean": self.bg_mean[i], "k_env": self.k_env[i],
                "azimuth": self.azimuth[i], "zoom": self.zoom[i], "offset": self.offset[i], "reflect": self.reflect[i],
                "side_label": self.side_label[i], "visible_side": self.visible_side[i],
                "side_color_id": self.side_color_id[i]}
