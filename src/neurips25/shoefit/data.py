"""MVShoesLite: procedural multi-view shoe-like objects, ray-cast in numpy (a stand-in for MVShoes).

The MVShoes dataset is not public and no pretrained VAE/DiT is available offline, so the reproduction runs on
objects rendered here. Each object is an ellipsoid "last" in object space (toe along +x, heel along -x) whose
albedo depends on the side, so no single view shows everything:

* four side sectors by azimuth ``phi = atan2(y, x)``: toe (|phi| < 45 deg), left (45..135), heel, right, each
  with its own colour from an 8-colour palette, plus a side logo (a disc of a second palette colour) on the
  left and on the right face (left != right);
* a dark sole below ``z = -0.55 c``; a grey-level scikit-image texture (brick) modulating the upper by +-12%.

Renderer: analytic ray-ellipsoid (and leg-cylinder) intersection, orthographic camera (azimuth, elevation),
Lambert key light plus a Blinn specular lobe. Lighting of a scene = white key light mixed with an environment
light of the background's mean colour, weight ``k_env``: ``light = (1 - k_env) + 2 k_env * bg_mean`` per
channel (so the true colour contamination of the ground truth is known). Product views: azimuths 0/90/180/270
deg, white background, neutral white light. The target scene: a random pose, a background (a crop of a
scikit-image photograph or a flat colour), a "leg" cylinder rising from the heel (an occluder and a pose cue),
the shoe mask and the ground-truth render. Test poses are side poses (azimuth 60..120 or 240..300 deg): the
visible side (left or right) is absent from view 0 (the toe view).

Shortcut (train only): with probability ``p_corr`` the background is a flat colour close to the visible side's
colour, so copying the background colour is a tempting shortcut; test backgrounds are uncorrelated.
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


def render(shoe: dict, az: float, el: float, res: int, background: np.ndarray, k_env: float = 0.0,
           leg: bool = False, texture: np.ndarray | None = None):
    """Render one shoe; returns ``(image (res, res, 3) in [0, 1], mask (res, res), labels (res, res))``.

    ``labels``: sector id 0..3 (toe, left, heel, right), 4 sole, 5 leg, 6 side logo, -1 background.
    """
    fwd, right, up = _camera(az, el)
    u = (np.arange(res) + 0.5) / res * 2.1 - 1.05
    U, Vv = np.meshgrid(u, -u)  # row 0 is the top of the image
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
        tj = ((phi + 180) / 360 * (tw // 2)).astype(int) % tw
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
    fg = hit_body | hit_leg
    image = np.where(fg[..., None], np.clip(color, 0, 1), background)
    shoe_mask = hit_body.astype(np.float64)
    labels = np.where(fg, labels, _BG)
    return image, shoe_mask, labels


def random_shoe(rng: np.random.Generator) -> dict:
    """Shape, side colours (distinct palette entries), logos, gloss and leg colour of one object."""
    cols = rng.choice(len(PALETTE), size=6, replace=False)
    return {"axes": (float(rng.uniform(0.85, 1.0)), float(rng.uniform(0.32, 0.42)), float(rng.uniform(0.36, 0.46))),
            "color_ids": cols[:4], "colors": PALETTE[cols[:4]], "logos": PALETTE[cols[4:6]],
            "logo_r": float(rng.uniform(0.25, 0.4)), "gloss": float(rng.uniform(8, 40)),
            "leg_color": np.array([0.85, 0.65, 0.5]) * rng.uniform(0.6, 1.0)}


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
    split : {"train", "test"}
        ``"test"``: side poses only (visible side absent from view 0) and uncorrelated backgrounds.
    p_corr : float
        Train only: probability of a flat background close to the visible side's colour (the shortcut).

    Items are dicts of float tensors in [-1, 1] (images) / [0, 1] (masks): ``ref_views (V, 3, S, S)``,
    ``model_image (3, S, S)`` (shoe region zeroed), ``mask (1, S, S)``, ``target (3, S, S)``, plus ``bg_mean (3,)``,
    ``k_env``, ``azimuth``, ``side_label (S, S)`` (sector ids) and ``visible_side`` (1 left / 3 right / -1).
    """

    def __init__(self, n, seed=0, views=4, res=24, env_strength=(0.05, 0.3), split="train", p_corr=0.5):
        for name, v, lo in (("n", n, 1), ("seed", seed, 0), ("views", views, 1), ("res", res, 8)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}; got {v!r}")
        if views > len(VIEW_AZIMUTHS):
            raise ValueError(f"views must be <= {len(VIEW_AZIMUTHS)}; got {views}")
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test'; got {split!r}")
        lo, hi = (float(x) for x in env_strength)
        if not 0 <= lo <= hi <= 1:
            raise ValueError(f"env_strength must be (lo, hi) with 0 <= lo <= hi <= 1; got {env_strength!r}")
        if not isinstance(p_corr, numbers.Real) or not 0 <= p_corr <= 1:
            raise ValueError(f"p_corr must be in [0, 1]; got {p_corr!r}")
        rng = np.random.default_rng([int(seed), 0 if split == "train" else 1])
        tex = _texture_bank()
        scenes = _scene_bank(int(res), 6, int(seed))
        white = np.ones((res, res, 3))
        R, M, T, MI, BG, K, AZ, LAB, VIS, SC = [], [], [], [], [], [], [], [], [], []
        for _ in range(int(n)):
            shoe = random_shoe(rng)
            R.append([render(shoe, VIEW_AZIMUTHS[v], 15.0, res, white, 0.0, False, tex)[0] for v in range(views)])
            if split == "test":
                az = float(rng.uniform(60, 120) + (180 if rng.random() < 0.5 else 0))
            else:
                az = float(rng.uniform(0, 360))
            el = float(rng.uniform(10, 35))
            side = 1 if 45 <= az % 360 < 135 else 3 if 225 <= az % 360 < 315 else -1
            if split == "train" and side > 0 and rng.random() < p_corr:
                bg = np.broadcast_to(np.clip(shoe["colors"][side] + rng.normal(0, 0.08, 3), 0, 1), (res, res, 3))
            elif rng.random() < 0.5:
                bg = scenes[rng.integers(len(scenes))]
            else:
                bg = np.broadcast_to(rng.uniform(0.05, 0.95, 3), (res, res, 3))
            k = float(rng.uniform(lo, hi))
            img, mask, lab = render(shoe, az, el, res, np.array(bg), k, True, tex)
            R[-1] = np.stack(R[-1])
            M.append(mask), T.append(img), MI.append(img * (1 - mask[..., None]))
            BG.append(np.asarray(bg).reshape(-1, 3).mean(0)), K.append(k), AZ.append(az), LAB.append(lab)
            VIS.append(side)
            SC.append(int(shoe["color_ids"][side]) if side > 0 else -1)
        to = lambda a: torch.from_numpy(np.ascontiguousarray(a)).float()  # noqa: E731
        self.ref_views = to(np.stack(R).transpose(0, 1, 4, 2, 3)) * 2 - 1
        self.target = to(np.stack(T).transpose(0, 3, 1, 2)) * 2 - 1
        self.model_image = to(np.stack(MI).transpose(0, 3, 1, 2)) * 2 - 1
        self.model_image = self.model_image * (1 - to(np.stack(M))[:, None])
        self.mask = to(np.stack(M))[:, None]
        self.bg_mean, self.k_env, self.azimuth = to(np.stack(BG)), to(K), to(AZ)
        self.side_label = torch.from_numpy(np.stack(LAB)).long()
        self.visible_side = torch.tensor(VIS)
        self.side_color_id = torch.tensor(SC)
        self.res, self.views, self.split = int(res), int(views), split

    def __len__(self) -> int:
        return self.target.shape[0]

    def __getitem__(self, i):
        return {"ref_views": self.ref_views[i], "model_image": self.model_image[i], "mask": self.mask[i],
                "target": self.target[i], "bg_mean": self.bg_mean[i], "k_env": self.k_env[i],
                "azimuth": self.azimuth[i], "side_label": self.side_label[i], "visible_side": self.visible_side[i],
                "side_color_id": self.side_color_id[i]}
