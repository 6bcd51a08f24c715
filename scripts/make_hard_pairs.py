#!/usr/bin/env python3
"""Make a fresh hard tier of image pairs, the way ../shared/data/hard describes its own, from
pictures that tier does not use, to check that the matcher's choices generalise (issue 13).

    scripts/make_hard_pairs.py OUT [--seed N] [--pictures DIR] [--negatives-only]
    python3 scripts/score_hard.py OUT/truth.json

Classes, 10 pairs each (truth.json in the tier's format: the matrix maps a query pixel to the
reference): clutter (an icon or a textured photo crop pasted at scale 0.3-0.5, any rotation,
into a 1024x768 scene of 28-37 other cut-outs, at most 40 % of it covered), extreme_scale
(0.30-0.45 or 2.2-3.0), heavy_occlusion (50-65 % of the footprint covered by fragments of other
pictures), low_quality (noise 20-30, JPEG 8-15, blur), repetitive (wood, tiles, a painting, a
rocky stream), photometric (contrast x0.2, a red-channel reference with gamma, a hard shadow,
overexposure), and 12 negatives (4 of each kind below). With --negatives-only: 60 negatives (a picture kept out of a
clutter scene, a crop of another photo, a held-out strip of the reference's own picture).

Queries are cut where the picture has texture (25 corners or more), as the tier's are. The
pictures come from Debian packages (`apt-get download` into --pictures, default
~/.cache/geohash-pictures, unpacked with `dpkg -x`); the repository's data/images are used too.
Needs OpenCV for Python (python3-opencv) and NumPy.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import cv2
import numpy as np

PACKAGES = ['lomiri-wallpapers-16.04', 'lomiri-wallpapers-20.04', 'mate-backgrounds',
            'gnome-backgrounds', 'adwaita-icon-theme']
BG = 'usr/share/backgrounds/'
# pictures ../shared/data/hard does not use
PHOTOS = [BG + p for p in ['Bridge_by_Sander_Klootwijk.jpg', 'mate/abstract/Elephants.jpg',
                           'mate/nature/FreshFlower.jpg', 'mate/nature/TwoWings.jpg',
                           'mate/nature/YellowFlower.jpg', 'life_by_Aitzol_Berasategi.jpg',
                           'sunset_by_Aitzol_Berasategi.jpg', 'free_by_Peter_Nerlich.jpg',
                           'mate/nature/Storm.jpg', 'Infinite-Sea_by_Aury88.jpg']]
REPO_PHOTOS = ['butterfly.jpg', 'rubberwhale1.png', 'box_in_scene.png']
REPETITIVE = [BG + p for p in ['gnome/truchet-l.webp', 'gnome/wood-l.webp', 'mate/nature/Wood.jpg',
                               'mate/abstract/Elephants.jpg', 'life_by_Aitzol_Berasategi.jpg']]
ICONS = ['devices/audio-headphones', 'devices/computer', 'devices/drive-harddisk',
         'devices/drive-optical', 'devices/ebook-reader', 'devices/input-mouse', 'devices/printer',
         'devices/scanner', 'devices/video-display', 'devices/media-optical',
         'mimetypes/package-x-generic', 'mimetypes/text-html', 'mimetypes/audio-x-generic',
         'devices/audio-headset', 'mimetypes/font-x-generic']


def fetch_pictures(root):
    """Downloads and unpacks the packages into root once."""
    if os.path.isdir(os.path.join(root, BG)):
        return
    os.makedirs(root, exist_ok=True)
    subprocess.run(['apt-get', 'download'] + PACKAGES, cwd=root, check=True)
    for f in sorted(os.listdir(root)):
        if f.endswith('.deb'):
            subprocess.run(['dpkg', '-x', f, '.'], cwd=root, check=True)


class Maker:
    def __init__(self, out, root, repo_images, seed):
        self.out, self.root, self.rng = out, root, np.random.default_rng(seed)
        self.photos = [os.path.join(root, p) for p in PHOTOS] + \
            [os.path.join(repo_images, p) for p in REPO_PHOTOS]
        self.repetitive = [os.path.join(root, p) for p in REPETITIVE]
        self.cache, self.pairs = {}, []
        os.makedirs(os.path.join(out, 'refs'), exist_ok=True)
        os.makedirs(os.path.join(out, 'queries'), exist_ok=True)

    def load(self, path, long_side=640):
        if (path, long_side) not in self.cache:
            im = cv2.imread(path, cv2.IMREAD_COLOR)
            if im is None:
                sys.exit('make_hard_pairs: cannot read %s' % path)
            f = long_side / max(im.shape[:2])
            self.cache[(path, long_side)] = cv2.resize(im, None, fx=f, fy=f,
                                                       interpolation=cv2.INTER_AREA)
        return self.cache[(path, long_side)]

    def icon(self, name, size):
        path = os.path.join(self.root, 'usr/share/icons/Adwaita/512x512', name + '.png')
        im = cv2.imread(path, cv2.IMREAD_UNCHANGED).astype(np.float32)
        a = im[:, :, 3:4] / 255.0
        rgb = im[:, :, :3] * a + 255 * (1 - a)  # composited on white, as the tier's
        f = size / 512
        rgb = cv2.resize(rgb, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        a = cv2.resize(a[:, :, 0], None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        return np.clip(rgb, 0, 255).astype(np.uint8), a

    def noise(self, im, sigma):
        n = self.rng.normal(0, sigma, im.shape[:2])[:, :, None]  # luminance noise
        return np.clip(im.astype(np.float32) + n, 0, 255).astype(np.uint8)

    def pick(self, items, avoid=None):
        while True:
            x = items[self.rng.integers(len(items))]
            if x != avoid:
                return x

    def crop(self, src, s_q, size, tries=40):
        """A textured query of size (w, h) showing src rotated, src pixels per query pixel s_q;
        returns it and the query -> src matrix."""
        w, h = size
        H, W = src.shape[:2]
        for _ in range(tries):
            m = similarity(s_q, self.rng.uniform(-180, 180), 0, 0)
            reach = 0.5 * math.hypot(w, h) * s_q
            cx = self.rng.uniform(min(reach, W / 2), max(W - reach, W / 2))
            cy = self.rng.uniform(min(reach, H / 2), max(H - reach, H / 2))
            c = m[:, :2] @ np.array([w / 2, h / 2])
            m[:, 2] = [cx - c[0], cy - c[1]]
            q = cv2.warpAffine(src, m, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REFLECT)
            if textured(q):
                break
        return q, m

    def save(self, cls, ref_name, ref, q, q_to_ref, negative=False):
        pid = 'n%03d' % len(self.pairs)
        qp, rp = 'queries/%s_%s.jpg' % (pid, cls), 'refs/%s.jpg' % ref_name
        cv2.imwrite(os.path.join(self.out, qp), q, [cv2.IMWRITE_JPEG_QUALITY, 95])
        cv2.imwrite(os.path.join(self.out, rp), ref, [cv2.IMWRITE_JPEG_QUALITY, 95])
        self.pairs.append({'id': pid, 'difficulty': 'negative' if negative else cls,
                           'reference': rp, 'query': qp, 'negative': negative,
                           'matrix': None if negative else [list(map(float, r)) for r in q_to_ref]})

    def cutout(self, photos, avoid):
        """One cut-out for a scene: an icon (alpha outline) or a textured photo crop."""
        if self.rng.random() < 0.5:
            obj, alpha = self.icon(self.pick(ICONS, avoid), int(self.rng.integers(180, 300)))
            return obj, alpha
        src = self.load(self.pick(photos, avoid))
        w, h = int(self.rng.integers(140, 300)), int(self.rng.integers(120, 300))
        for _ in range(40):
            x0 = int(self.rng.integers(0, src.shape[1] - w))
            y0 = int(self.rng.integers(0, src.shape[0] - h))
            if textured(src[y0:y0 + h, x0:x0 + w]):
                break
        return src[y0:y0 + h, x0:x0 + w].copy(), np.ones((h, w), np.float32)

    def scene(self, photos, target=None):
        """A 1024x768 scene of 28-37 cut-outs on a blurred photo. target: the query's cut-out
        (obj, alpha, source), pasted once among them with at most 40 % covered; returns the
        scene and the target's matrix (None without a target)."""
        while True:
            bg = cv2.GaussianBlur(self.load(self.pick(photos), 1024), (0, 0), 6)
            canvas = cv2.resize(bg, (1024, 768)).astype(np.float32)
            n = int(self.rng.integers(28, 38))
            at = int(self.rng.integers(n // 2, n)) if target else -1
            visible, tm = None, None
            for i in range(n):
                obj, alpha = target[:2] if i == at else self.cutout(photos,
                                                                    target[2] if target else None)
                m = similarity(self.rng.uniform(0.3, 0.5), self.rng.uniform(-180, 180), 0, 0)
                c = m[:, :2] @ np.array([obj.shape[1] / 2, obj.shape[0] / 2])
                m[:, 2] = [self.rng.uniform(100, 924) - c[0], self.rng.uniform(100, 668) - c[1]]
                warped = cv2.warpAffine(obj, m, (1024, 768), flags=cv2.INTER_AREA)
                wa = cv2.warpAffine(alpha, m, (1024, 768))[:, :, None]
                canvas = canvas * (1 - wa) + warped * wa
                if i == at:
                    tm, visible, whole = m, wa[:, :, 0] > 0.5, (wa[:, :, 0] > 0.5).sum()
                elif visible is not None:
                    visible &= ~(wa[:, :, 0] > 0.5)
            if visible is None or visible.sum() >= 0.6 * whole:
                return canvas.astype(np.uint8), tm


def similarity(s, deg, tx, ty):
    r = math.radians(deg)
    return np.array([[s * math.cos(r), -s * math.sin(r), tx], [s * math.sin(r), s * math.cos(r), ty]])


def textured(im, need=25):
    c = cv2.goodFeaturesToTrack(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), 200, 0.02, 5)
    return c is not None and len(c) >= need


def degrade(mk, im):
    if mk.rng.random() < 0.5:
        im = cv2.GaussianBlur(im, (0, 0), mk.rng.uniform(1.5, 3))
    im = mk.noise(im, mk.rng.uniform(20, 30))
    ok, buf = cv2.imencode('.jpg', im, [cv2.IMWRITE_JPEG_QUALITY, int(mk.rng.integers(8, 16))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def occlude(mk, ref, m, size):
    """Covers 50-65 % of the query's footprint in ref with fragments of other pictures."""
    H, W = ref.shape[:2]
    corners = np.array([[[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]]], np.float32)
    foot = np.zeros((H, W), np.uint8)
    cv2.fillPoly(foot, cv2.transform(corners, m).astype(np.int32), 1)
    cover = np.zeros((H, W), np.uint8)
    want, ys, xs = mk.rng.uniform(0.50, 0.65), *np.nonzero(foot)
    for _ in range(60):
        if (cover & foot).sum() >= want * foot.sum():
            break
        other = mk.load(mk.pick(mk.photos), 620)
        w, h = int(mk.rng.integers(20, 70)), int(mk.rng.integers(15, 60))
        x0, y0 = int(mk.rng.integers(0, other.shape[1] - w)), int(mk.rng.integers(0, other.shape[0] - h))
        j = mk.rng.integers(len(xs))
        mm = similarity(mk.rng.uniform(0.8, 1.3), mk.rng.uniform(-180, 180), 0, 0)
        c = mm[:, :2] @ np.array([w / 2, h / 2])
        mm[:, 2] = [xs[j] - c[0], ys[j] - c[1]]
        frag = cv2.warpAffine(other[y0:y0 + h, x0:x0 + w], mm, (W, H))
        mask = cv2.warpAffine(np.ones((h, w), np.uint8), mm, (W, H), flags=cv2.INTER_NEAREST)
        ref[mask > 0] = frag[mask > 0]
        cover |= mask


def photometric(mk, q, ref, recipe):
    qf = q.astype(np.float32)
    if recipe == 0:  # low contrast
        qf = qf * mk.rng.uniform(0.18, 0.24) + mk.rng.uniform(10, 40)
    elif recipe == 1:  # a reference that is its red channel, a gamma on the query
        ref = np.repeat(ref[:, :, 2:3], 3, axis=2)
        qf = 255 * (qf / 255) ** mk.rng.uniform(0.5, 2)
    elif recipe == 2:  # a hard shadow across the query
        hh, ww = qf.shape[:2]
        yy, xx = np.mgrid[0:hh, 0:ww]
        a = mk.rng.uniform(0, 2 * math.pi)
        side = (xx - ww / 2) * math.cos(a) + (yy - hh / 2) * math.sin(a) > 0
        qf = qf * np.where(side, mk.rng.uniform(0.12, 0.3), 1.0)[:, :, None]
    else:  # overexposed, clipped
        qf = 255 * np.clip(qf / 255 * mk.rng.uniform(2.6, 3.2), 0, 1) ** 0.77
    return mk.noise(np.clip(qf, 0, 255).astype(np.uint8), 5), ref


def positives(mk):
    for k in range(10):
        if mk.rng.random() < 0.5:
            name = mk.pick(ICONS)
            obj, alpha = mk.icon(name, int(mk.rng.integers(180, 300)))
        else:
            name = mk.pick(mk.photos)
            obj, alpha = mk.cutout([name], None)
        ref, m = mk.scene(mk.photos, (obj, alpha, name))
        mk.save('clutter', 'scene%d' % k, mk.noise(ref, 2), mk.noise(obj, 2), m)
    for k in range(10):
        path = mk.photos[k % len(mk.photos)]
        s = mk.rng.uniform(0.30, 0.45) if k % 2 == 0 else mk.rng.uniform(2.2, 3.0)
        size = (int(mk.rng.integers(150, 250)), int(mk.rng.integers(140, 240))) if s < 1 else \
            (int(mk.rng.integers(56, 72)), int(mk.rng.integers(54, 72)))
        q, q_to_big = mk.crop(mk.load(path, 620 * 4), s * 4, size)  # from 4x the pixels
        mk.save('extreme_scale', 'xs_%d' % k, mk.noise(mk.load(path, 620), 2), mk.noise(q, 2),
                q_to_big / 4)
    for k in range(10):
        src = mk.load(mk.photos[(k + 3) % len(mk.photos)], 620)
        size = (int(mk.rng.integers(150, 290)), int(mk.rng.integers(120, 230)))
        q, m = mk.crop(src, mk.rng.uniform(0.7, 1.15), size)
        ref = src.copy()
        occlude(mk, ref, m, size)
        mk.save('heavy_occlusion', 'occl_%d' % k, mk.noise(ref, 3), mk.noise(q, 3), m)
    for k in range(10):
        src = mk.load(mk.photos[(k + 5) % len(mk.photos)], 620)
        q, m = mk.crop(src, mk.rng.uniform(0.7, 1.5),
                       (int(mk.rng.integers(120, 200)), int(mk.rng.integers(120, 200))))
        side = k % 3  # query, reference, both
        q = degrade(mk, q) if side != 1 else mk.noise(q, 2)
        ref = degrade(mk, src.copy()) if side != 0 else src
        mk.save('low_quality', 'lq_%d' % k, ref, q, m)
    for k in range(10):
        src = mk.load(mk.repetitive[k % len(mk.repetitive)], 520)
        s = mk.rng.uniform(0.45, 0.7) if k % 2 == 0 else mk.rng.uniform(1.45, 2.2)
        side = mk.rng.uniform(0.2, 0.35) * min(src.shape[:2]) / s
        q, m = mk.crop(src, s, (int(side * mk.rng.uniform(0.8, 1.2)),
                                int(side * mk.rng.uniform(0.8, 1.2))))
        mk.save('repetitive', 'rep_%d' % k, mk.noise(src, 5), mk.noise(q, 5), m)
    for k in range(10):
        src = mk.load(mk.photos[(k + 7) % len(mk.photos)], 620)
        q, m = mk.crop(src, mk.rng.uniform(0.75, 1.45),
                       (int(mk.rng.integers(140, 280)), int(mk.rng.integers(130, 240))))
        q, ref = photometric(mk, q, src.copy(), k % 4)
        mk.save('photometric', 'ph_%d' % k, ref, q, m)


def negatives(mk, n_each):
    """A picture kept out of a scene; a crop of another photo; a held-out strip of the
    reference's picture (a periodic texture would repeat it elsewhere, so photos only)."""
    for k in range(n_each):
        kept_out = mk.photos[k % len(mk.photos)]
        others = [p for p in mk.photos if p != kept_out]
        ref, _ = mk.scene(others)
        q, _ = mk.crop(mk.load(kept_out), mk.rng.uniform(0.7, 1.4),
                       (int(mk.rng.integers(150, 260)), int(mk.rng.integers(130, 240))))
        mk.save('clutter', 'neg_scene%d' % k, mk.noise(ref, 2), mk.noise(q, 2), None, True)
    for k in range(n_each):
        a = mk.photos[k % len(mk.photos)]
        b = mk.pick(mk.photos, a)
        s = [0.35, 0.6, 1.0, 1.5, 2.5][k % 5]
        size = (int(mk.rng.integers(120, 250)), int(mk.rng.integers(110, 230))) if s < 2 else (70, 64)
        q, _ = mk.crop(mk.load(b, 620), s, size)
        mk.save('plain', 'neg_plain%d' % k, mk.noise(mk.load(a, 620), 3), mk.noise(q, 3), None, True)
    for k in range(n_each):
        src = mk.load(mk.photos[k % len(mk.photos)])
        W = src.shape[1]
        strip = src[:, int(W * 0.68):]
        q, _ = mk.crop(strip, mk.rng.uniform(0.6, 1.4), (min(120, strip.shape[1] - 4), 110))
        mk.save('repetitive', 'neg_strip%d' % k, mk.noise(src[:, :int(W * 0.65)].copy(), 5),
                mk.noise(q, 5), None, True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('out')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--pictures', default=os.path.expanduser('~/.cache/geohash-pictures'))
    ap.add_argument('--negatives-only', action='store_true')
    a = ap.parse_args()
    fetch_pictures(a.pictures)
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'images')
    mk = Maker(a.out, a.pictures, repo, a.seed)
    if a.negatives_only:
        negatives(mk, 20)
    else:
        positives(mk)
        negatives(mk, 4)
    with open(os.path.join(a.out, 'truth.json'), 'w') as f:
        json.dump({'description': 'made by scripts/make_hard_pairs.py --seed %d' % a.seed,
                   'pairs': mk.pairs}, f, indent=1)
    print('%d pairs in %s' % (len(mk.pairs), a.out))


if __name__ == '__main__':
    main()
