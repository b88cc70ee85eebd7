#!/usr/bin/env bash
# Builds an ImageNet-like folder of real photographs for the loader goal measurement (issue 17):
#   scripts/make_photo_set.sh DIR [TRAIN_PER_CLASS=100] [VAL_PER_CLASS=20]
# writes DIR/train/CLASS/*.jpg and DIR/val/CLASS/*.jpg. Source: the 12 nature photographs (1280x1024 to
# 2560x1920) of Debian's mate-backgrounds package, installed here when missing; one class per photograph.
# Each image is a random 4:3 cut (25-100% of the largest one's area; one in five portrait) resized to
# 500x375 or 375x500 (ImageNet's typical size) and saved as JPEG at a random quality in [75, 95] with
# 4:2:0 chroma, as cameras and ImageNet's files are. Seeded: the same arguments give the same files.
# The tests do not need it; `fastloop bench loader --data imagefolder:DIR --compare-python` does.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:?usage: scripts/make_photo_set.sh DIR [TRAIN_PER_CLASS] [VAL_PER_CLASS]}"
train_per_class="${2:-100}"
val_per_class="${3:-20}"
photos=/usr/share/backgrounds/mate/nature
if ! ls "$photos"/*.jpg >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then echo "needs Debian's mate-backgrounds: sudo apt-get install mate-backgrounds" >&2; exit 2; fi
  apt-get update -qq && apt-get install -y -qq --no-install-recommends mate-backgrounds >/dev/null
fi
[ -x .venv/bin/python ] || scripts/setup.sh
.venv/bin/python - "$photos" "$dir" "$train_per_class" "$val_per_class" <<'PY'
import glob, os, random, sys
from PIL import Image

photos, out, per_split = sys.argv[1], sys.argv[2], {"train": int(sys.argv[3]), "val": int(sys.argv[4])}
rng = random.Random(17)
sources = sorted(glob.glob(os.path.join(photos, "*.jpg")))
for path in sources:
    name = os.path.splitext(os.path.basename(path))[0].lower()
    photo = Image.open(path).convert("RGB")
    W, H = photo.size
    for split, count in per_split.items():
        os.makedirs(os.path.join(out, split, name), exist_ok=True)
        for k in range(count):
            portrait = rng.random() < 0.2
            aspect = 3 / 4 if portrait else 4 / 3  # width / height
            full_w = min(W, H * aspect)            # the largest box of this aspect
            side = (rng.uniform(0.25, 1.0)) ** 0.5
            w, h = full_w * side, full_w * side / aspect
            x, y = rng.uniform(0, W - w), rng.uniform(0, H - h)
            size = (375, 500) if portrait else (500, 375)
            image = photo.resize(size, Image.BICUBIC, box=(x, y, x + w, y + h), reducing_gap=3.0)
            image.save(os.path.join(out, split, name, f"{name}_{k:05d}.jpg"), quality=rng.randint(75, 95))
total = len(sources) * sum(per_split.values())
print(f"wrote {total} JPEGs of {len(sources)} classes (500x375 / 375x500, quality 75-95) to {out}")
PY
