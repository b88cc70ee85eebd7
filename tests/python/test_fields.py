"""fastloop.Loader(..., fields=...): image-caption samples of shards, Parquet and datasets.Dataset, checked against
webdataset (run from the venv here) and against fastloop's own image pipeline; bad samples; tokenizer hook."""

import io
import itertools
import json
import pathlib
import subprocess
import tarfile
from typing import Dict, List, Optional

import numpy as np
import pytest
import torch
from torchvision.transforms import v2

import fastloop

FIELDS = ("jpg;png", "txt", "json", "cls")


def transform() -> v2.Compose:
    return v2.Compose([v2.ToImage(), v2.RandomResizedCrop(16, scale=(0.9, 1.0)), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize([0.5] * 3, [0.25] * 3)])


def encoded(rng: np.random.Generator, fmt: str) -> bytes:
    from PIL import Image
    h, w = int(rng.integers(20, 40)), int(rng.integers(20, 40))
    out = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(out, format=fmt)
    return out.getvalue()


def write_tar(path: pathlib.Path, samples: List[Dict[str, bytes]]) -> None:
    """Each sample's members in a row, KEY.EXT, as webdataset's TarWriter and img2dataset write them."""
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for sample in samples:
            key = sample["__key__"].decode()
            for ext, data in sample.items():
                if ext == "__key__":
                    continue
                info = tarfile.TarInfo(f"{key}.{ext}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def caption(i: int) -> str:
    return f"a photo of thing {i} — café"  # non-ASCII: UTF-8 all the way


def caption_samples(count: int, start: int = 0, seed: int = 0) -> List[Dict[str, bytes]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(start, start + count):
        ext, fmt = ("png", "PNG") if i % 5 == 3 else ("jpg", "JPEG")
        out.append({"__key__": f"{i:06d}".encode(), ext: encoded(rng, fmt), "txt": caption(i).encode(),
                    "json": json.dumps({"caption": caption(i), "i": i, "tags": ["x"] * (i % 3)}).encode(),
                    "cls": str(i % 3).encode()})
    return out


@pytest.fixture(scope="module")
def caption_shards(tmp_path_factory) -> List[pathlib.Path]:
    root = tmp_path_factory.mktemp("captions")
    paths = []
    for s in range(3):
        paths.append(root / f"train-{s:06d}.tar")
        write_tar(paths[-1], caption_samples(7, start=7 * s, seed=s))
    return paths


def spec(paths: List[pathlib.Path]) -> str:
    return "shards:" + str(paths[0].parent / "train-{000000..000002}.tar")


def every_batch(loader: fastloop.Loader) -> List[tuple]:
    return [tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in batch) for batch in loader]


def webdataset_rows(paths: List[pathlib.Path], fields=("txt", "json", "cls")) -> List[tuple]:
    import webdataset as wds
    dataset = wds.WebDataset([str(p) for p in paths], shardshuffle=False, empty_check=False).decode()
    return [tuple(row) for row in dataset.to_tuple("__key__", *fields)]


@pytest.mark.parametrize("workers", [1, 2])
def test_fields_are_webdatasets_keys_captions_json_and_classes_in_order(caption_shards, workers):
    loader = fastloop.Loader(spec(caption_shards), fields=FIELDS, transform=transform(), batch_size=4, shuffle=False,
                             drop_last=False, workers=workers)
    batches = every_batch(loader)
    assert loader.classes == ["0", "1", "2"] and loader.num_classes == 3  # its .cls field's, not its 21 samples
    want = webdataset_rows(caption_shards)
    assert len(want) == 21
    images = torch.cat([b[0] for b in batches])
    assert images.shape == (21, 3, 16, 16) and images.dtype == torch.float32
    assert [c for b in batches for c in b[1]] == [row[1] for row in want]
    assert [d for b in batches for d in b[2]] == [row[2] for row in want]
    classes = torch.cat([b[3] for b in batches])
    assert classes.dtype == torch.int64 and classes.tolist() == [row[3] for row in want]


@pytest.mark.parametrize("shuffle", [False, True])
def test_the_image_field_is_the_image_pipelines_batch_in_the_same_order(caption_shards, shuffle):
    """The shards hold a .cls per sample, so the classification loader reads them too: same order, same pixels."""
    common = dict(transform=transform(), batch_size=5, shuffle=shuffle, workers=2, seed=3, shuffle_buffer=4)
    plain = every_batch(fastloop.Loader(spec(caption_shards), **common))
    fields = every_batch(fastloop.Loader(spec(caption_shards), fields=("jpg;png", "cls"), **common))
    assert len(plain) == len(fields) == 4
    for (images, labels), (field_images, classes) in zip(plain, fields):
        assert torch.equal(images, field_images)
        assert torch.equal(labels, classes)


def test_a_json_key_is_picked_and_other_extensions_are_bytes(caption_shards):
    loader = fastloop.Loader(spec(caption_shards), fields=("json:caption", "png;jpg", "json:tags", "cls"),
                             transform=transform(), batch_size=7, shuffle=False, workers=1)
    captions, images, tags, _ = next(iter(loader))
    assert captions == [caption(i) for i in range(7)]
    assert tags == [["x"] * (i % 3) for i in range(7)]
    assert images.shape == (7, 3, 16, 16)
    raw = next(iter(fastloop.Loader(spec(caption_shards), fields=("jpg;png", "txt;cls", "json"),
                                    transform=transform(), batch_size=3, shuffle=False, workers=1)))
    assert raw[1] == [caption(i) for i in range(3)]  # the first extension present wins


def test_a_tokenizer_runs_once_per_batch_on_the_captions(caption_shards):
    import open_clip
    tokenizer = open_clip.get_tokenizer("ViT-B-32")
    calls = []

    def tokenize(texts):
        calls.append(len(texts))
        return tokenizer(texts)

    loader = fastloop.Loader(spec(caption_shards), fields=("jpg;png", "txt"), field_transforms={"txt": tokenize},
                             transform=transform(), batch_size=8, shuffle=False, drop_last=False, workers=2)
    batches = list(loader)
    assert calls == [8, 8, 5]
    tokens = torch.cat([b[1] for b in batches])
    assert torch.equal(tokens, tokenizer([caption(i) for i in range(21)]))
    with pytest.raises(ValueError, match="field_transforms"):
        fastloop.Loader(spec(caption_shards), fields=("jpg;png", "txt"), field_transforms={"json": tokenize})


def bad_shard(tmp_path: pathlib.Path, fault: str) -> str:
    samples = caption_samples(6)
    if fault == "missing":
        del samples[2]["txt"]
    elif fault == "utf8":
        samples[2]["txt"] = b"caf\xe9 latin-1"
    elif fault == "json":
        samples[2]["json"] = b'{"caption": "cut'
    elif fault == "cls":
        samples[2]["cls"] = b"two"
    path = tmp_path / "train-000000.tar"
    write_tar(path, samples)
    return f"shards:{path}"


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("fault, words", [("missing", "no .txt member"), ("utf8", "not UTF-8"),
                                          ("json", "not valid JSON"), ("cls", "not a whole number")])
def test_a_bad_sample_stops_naming_shard_and_key_or_is_skipped_and_counted(tmp_path, fault, words, workers):
    source = bad_shard(tmp_path, fault)
    loader = fastloop.Loader(source, fields=FIELDS, transform=transform(), batch_size=3, shuffle=False,
                             workers=workers)
    with pytest.raises(ValueError, match=f"train-000000.tar:000002.*{words}"):
        list(loader)
    skipping = fastloop.Loader(source, fields=FIELDS, transform=transform(), batch_size=3, shuffle=False,
                               workers=workers, bad_image_policy="skip")
    batches = list(skipping)
    assert skipping.samples_skipped == 1
    # the next sample stands in for the bad one, as for an undecodable image
    assert [c for b in batches for c in b[1]] == [caption(i) for i in (0, 1, 3, 3, 4, 5)]


def test_bad_fields_arguments_are_named(caption_shards):
    with pytest.raises(ValueError, match="image fields"):
        fastloop.Loader(spec(caption_shards), fields=("txt", "json"))
    with pytest.raises(ValueError, match="picked from a .json field"):
        fastloop.Loader(spec(caption_shards), fields=("jpg", "txt:caption"))
    with pytest.raises(ValueError, match="shuffle=False"):
        fastloop.Loader([spec(caption_shards), spec(caption_shards)], fields=FIELDS, split="val")
    with pytest.raises(TypeError, match="batch_transform"):
        fastloop.Loader(spec(caption_shards), fields=FIELDS, batch_transform=v2.MixUp(alpha=1.0, num_classes=3))


def image_pair_samples(count: int, start: int = 0, lacking: Optional[int] = None) -> List[Dict[str, bytes]]:
    """A photo, a depth map of another size (PNG) and a caption per key; sample `lacking` has no depth map."""
    rng = np.random.default_rng(100 + start)
    out = []
    for i in range(start, start + count):
        sample = {"__key__": f"{i:06d}".encode(), "jpg": encoded(rng, "JPEG"), "depth.png": encoded(rng, "PNG"),
                  "txt": caption(i).encode()}
        if i == lacking:
            del sample["depth.png"]
        out.append(sample)
    return out


@pytest.fixture(scope="module")
def pair_shards(tmp_path_factory) -> List[pathlib.Path]:
    root = tmp_path_factory.mktemp("pairs")
    paths = [root / f"train-{s:06d}.tar" for s in range(3)]
    for s, path in enumerate(paths):
        write_tar(path, image_pair_samples(6, start=6 * s))
    return paths


def by_caption(batches: List[tuple], image: int, text: int) -> Dict[str, torch.Tensor]:
    return {c: images[k] for b in batches for images, captions in [(b[image], b[text])] for k, c in enumerate(captions)}


@pytest.mark.parametrize("shuffle, workers", [(False, 1), (True, 2), (True, 1), (False, 2)])
def test_each_image_field_is_the_batch_of_a_loader_of_that_field_alone(pair_shards, shuffle, workers):
    """Image field k draws as view k (seed view_seed(seed, k)), decoded from its own member."""
    from fastloop import _C
    common = dict(transform=transform(), batch_size=4, shuffle=shuffle, workers=workers, shuffle_buffer=5,
                  drop_last=False)
    loader = fastloop.Loader(spec(pair_shards), fields=("jpg", "txt", "depth.png"), seed=3, **common)
    both = every_batch(loader)
    assert loader._impl.images_decoded == 2 * 18  # each image field decoded once per sample
    assert all(b[0].shape == b[2].shape == (len(b[1]), 3, 16, 16) for b in both)
    photos = by_caption(every_batch(fastloop.Loader(spec(pair_shards), fields=("jpg", "txt"), seed=3, **common)), 0, 1)
    depths = by_caption(every_batch(fastloop.Loader(spec(pair_shards), fields=("depth.png", "txt"),
                                                    seed=_C._view_seed(3, 1), **common)), 0, 1)
    assert len(photos) == len(depths) == 18
    for captions, photo, depth in ((b[1], b[0], b[2]) for b in both):
        for k, c in enumerate(captions):
            assert torch.equal(photo[k], photos[c]) and torch.equal(depth[k], depths[c])
    if not shuffle:  # the order is the shards' too
        assert [c for b in both for c in b[1]] == [caption(i) for i in range(18)]


def test_image_fields_take_a_pipeline_each_and_refuse_views(pair_shards):
    small = v2.Compose([v2.ToImage(), v2.Resize((8, 8)), v2.ToDtype(torch.float32, scale=True)])
    loader = fastloop.Loader(spec(pair_shards), fields=("depth.png", "jpg", "txt"), transform=[transform(), small],
                             batch_size=6, shuffle=False)
    depth, photo, captions = next(iter(loader))
    assert depth.shape == (6, 3, 16, 16) and photo.shape == (6, 3, 8, 8) and len(captions) == 6
    with pytest.raises(ValueError, match="2 image fields"):
        fastloop.Loader(spec(pair_shards), fields=("jpg", "depth.png"), transform=transform(), views=2)
    with pytest.raises(ValueError, match="2 image fields"):
        fastloop.Loader(spec(pair_shards), fields=("jpg", "depth.png"), transform=[transform()] * 3)


def test_a_sample_lacking_one_image_field_is_named_or_skipped(tmp_path):
    path = tmp_path / "train-000000.tar"
    write_tar(path, image_pair_samples(6, lacking=2))
    fields = ("jpg", "depth.png", "txt")
    loader = fastloop.Loader(f"shards:{path}", fields=fields, transform=transform(), batch_size=3, shuffle=False)
    with pytest.raises(ValueError, match=r"train-000000.tar:000002.*no \.depth\.png member"):
        list(loader)
    skipping = fastloop.Loader(f"shards:{path}", fields=fields, transform=transform(), batch_size=3, shuffle=False,
                               bad_image_policy="skip", workers=2)
    batches = every_batch(skipping)
    assert skipping.samples_skipped == 1
    assert [c for b in batches for c in b[2]] == [caption(i) for i in (0, 1, 3, 3, 4, 5)]
    assert torch.equal(batches[0][1][2], batches[1][1][0])  # the stand-in's depth map both times


def test_an_undecodable_second_image_is_named_or_skipped(tmp_path):
    samples = image_pair_samples(6)
    samples[4]["depth.png"] = b"\x89PNG\r\n\x1a\n not a png"
    path = tmp_path / "train-000000.tar"
    write_tar(path, samples)
    fields = ("jpg", "txt", "depth.png")
    with pytest.raises(ValueError, match="train-000000.tar:000004"):
        list(fastloop.Loader(f"shards:{path}", fields=fields, transform=transform(), batch_size=3, shuffle=False))
    skipping = fastloop.Loader(f"shards:{path}", fields=fields, transform=transform(), batch_size=3, shuffle=False,
                               bad_image_policy="skip")
    assert [c for b in every_batch(skipping) for c in b[1]] == [caption(i) for i in (0, 1, 2, 3, 5, 5)]
    assert skipping.samples_skipped == 1


def test_a_mixture_of_image_pair_sources(pair_shards, tmp_path):
    write_tar(tmp_path / "train-000000.tar", image_pair_samples(5, start=100))
    other = f"shards:{tmp_path}/train-000000.tar"
    fields = ("jpg", "depth.png", "txt")
    mixed = fastloop.Loader([spec(pair_shards), other], weights=[2, 1], fields=fields, transform=transform(),
                            batch_size=23, seed=4)
    photos, depths, captions = next(iter(mixed))
    assert photos.shape == depths.shape == (23, 3, 16, 16)
    assert not torch.equal(photos, depths)
    with pytest.raises(ValueError, match="image fields"):
        fastloop.Loader([spec(pair_shards), (other, ("jpg", "txt", "txt"))], fields=fields)


def test_img2dataset_output_is_read_as_it_is(tmp_path):
    """img2dataset's webdataset layout: NNNNN.tar of KEY.jpg / KEY.txt / KEY.json, a .parquet and _stats.json beside."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    for shard in range(2):
        samples = []
        for j in range(4):
            key = f"{shard:05d}{j:04d}"
            meta = {"url": f"http://example.com/{key}.jpg", "caption": f"caption {key}", "key": key,
                    "status": "success", "width": 32, "height": 24}
            samples.append({"__key__": key.encode(), "jpg": encoded(np.random.default_rng(j), "JPEG"),
                            "txt": meta["caption"].encode(), "json": json.dumps(meta).encode()})
        write_tar(tmp_path / f"{shard:05d}.tar", samples)
        pq.write_table(pa.table({"key": [s["__key__"].decode() for s in samples]}), tmp_path / f"{shard:05d}.parquet")
        (tmp_path / f"{shard:05d}_stats.json").write_text("{}")
    loader = fastloop.Loader(f"shards:{tmp_path}/{{00000..00001}}.tar", fields=("jpg", "txt", "json:key"),
                             transform=transform(), batch_size=8, shuffle=False, workers=2)
    images, captions, keys = next(iter(loader))
    assert keys == [f"{s:05d}{j:04d}" for s in range(2) for j in range(4)]
    assert captions == [f"caption {k}" for k in keys]


def parquet_file(path: pathlib.Path, count: int, start: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(start)
    table = pa.table({"image": pa.array([{"bytes": encoded(rng, "JPEG"), "path": None} for _ in range(count)],
                                        pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                      "caption": [caption(i) for i in range(start, start + count)],
                      "score": list(range(start, start + count))})
    pq.write_table(table, path, row_group_size=4)


@pytest.mark.parametrize("workers", [1, 2])
def test_parquet_columns_are_fields(tmp_path, workers):
    parquet_file(tmp_path / "train-0.parquet", 10)
    loader = fastloop.Loader(f"parquet:{tmp_path}/train-0.parquet", fields=("caption", "image", "score"),
                             transform=transform(), batch_size=4, shuffle=False, drop_last=False, workers=workers)
    batches = list(loader)
    assert [c for b in batches for c in b[0]] == [caption(i) for i in range(10)]
    assert torch.cat([b[2] for b in batches]).tolist() == list(range(10))
    assert batches[0][1].shape == (4, 3, 16, 16)


def bad_parquet(tmp_path: pathlib.Path, fault: str) -> str:
    """parquet_file's 6 rows plus a JSON column, row 3 broken as `fault` says (in the second of two files)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    for f, start in enumerate((0, 3)):
        parquet_file(tmp_path / f"p{f}.parquet", 3, start=start)
        table = pq.read_table(tmp_path / f"p{f}.parquet")
        captions = [caption(i).encode() for i in range(start, start + 3)]
        docs = [json.dumps({"caption": caption(i), "i": i}) for i in range(start, start + 3)]
        if f == 1 and fault == "null":
            captions[0] = None
        if f == 1 and fault == "utf8":
            captions[0] = b"caf\xe9 latin-1"
        if f == 1 and fault == "json":
            docs[0] = '{"caption": "cut'
        text = pa.array(captions, pa.binary()).view(pa.string())  # as a writer that does not check UTF-8 leaves it
        table = table.set_column(1, "caption", text).append_column("json", pa.array(docs))
        pq.write_table(table, tmp_path / f"p{f}.parquet", row_group_size=2)
    return f"parquet:{tmp_path}/p{{0..1}}.parquet"


def test_parquet_json_columns_are_parsed_and_keys_picked(tmp_path):
    loader = fastloop.Loader(bad_parquet(tmp_path, "none"), fields=("image", "json", "json:caption", "caption"),
                             transform=transform(), batch_size=6, shuffle=False, workers=2)
    _, docs, picked, captions = next(iter(loader))
    assert docs == [{"caption": caption(i), "i": i} for i in range(6)]
    assert picked == captions == [caption(i) for i in range(6)]
    with pytest.raises(ValueError, match="picked from a JSON column"):
        fastloop.Loader(bad_parquet(tmp_path, "none"), fields=("image", "caption:x"))


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("fault, column, words", [("null", "caption", "is null"), ("utf8", "caption", "is not UTF-8"),
                                                  ("json", "json", "not valid JSON")])
def test_a_bad_parquet_cell_stops_naming_file_row_and_column_or_is_skipped(tmp_path, fault, column, words, workers):
    source = bad_parquet(tmp_path, fault)
    fields = ("image", "caption", "json:i")
    loader = fastloop.Loader(source, fields=fields, transform=transform(), batch_size=3, shuffle=False,
                             workers=workers)
    with pytest.raises(ValueError, match=f"p1.parquet row 0: column '{column}' {words}"):
        list(loader)
    skipping = fastloop.Loader(source, fields=fields, transform=transform(), batch_size=3, shuffle=False,
                               workers=workers, bad_image_policy="skip")
    batches = every_batch(skipping)
    assert skipping.samples_skipped == 1
    # the next sample stands in for the bad one, as for a shard's
    assert [c for b in batches for c in b[1]] == [caption(i) for i in (0, 1, 2, 4, 4, 5)]
    assert [i for b in batches for i in b[2]] == [0, 1, 2, 4, 4, 5]
    assert torch.equal(batches[1][0][0], batches[1][0][1])


def test_a_null_cell_of_a_datasets_dataset_is_named_by_its_index(tmp_path):
    import datasets
    rng = np.random.default_rng(2)
    texts = [caption(i) for i in range(6)]
    texts[4] = None
    data = datasets.Dataset.from_dict({"image": [{"bytes": encoded(rng, "PNG"), "path": None} for _ in range(6)],
                                       "text": texts},
                                      features=datasets.Features({"image": datasets.Image(),
                                                                  "text": datasets.Value("string")}))
    picked = data.select([5, 4, 0])
    with pytest.raises(ValueError, match="datasets.Dataset row 1: column 'text' is null"):
        list(fastloop.Loader(picked, fields=("image", "text"), transform=transform(), batch_size=3, shuffle=False))
    skipping = fastloop.Loader(picked, fields=("image", "text"), transform=transform(), batch_size=3, shuffle=False,
                               bad_image_policy="skip")
    assert next(iter(skipping))[1] == [caption(5), caption(0), caption(0)]
    assert skipping.samples_skipped == 1


@pytest.mark.parametrize("kind, shuffle, workers", [("parquet", True, 2), ("parquet", False, 1),
                                                    ("datasets", True, 1), ("datasets", False, 2)])
def test_two_image_columns_are_each_the_batch_of_a_loader_of_that_column_alone(tmp_path, kind, shuffle, workers):
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq
    from fastloop import _C
    rng = np.random.default_rng(7)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table({"image": pa.array([{"bytes": encoded(rng, "JPEG"), "path": None} for _ in range(10)], image),
                      "caption": [caption(i) for i in range(10)],
                      "depth": pa.array([{"bytes": encoded(rng, "PNG"), "path": None} for _ in range(10)], image)})
    if kind == "parquet":
        pq.write_table(table, tmp_path / "train-0.parquet", row_group_size=3)
        source = f"parquet:{tmp_path}/train-0.parquet"
    else:
        features = datasets.Features({"image": datasets.Image(), "caption": datasets.Value("string"),
                                      "depth": datasets.Image()})
        source = datasets.Dataset.from_dict(table.to_pydict(), features=features)
        source = source.select([9, 2, 4, 0, 1, 3, 5, 6, 8, 7])
    common = dict(transform=transform(), batch_size=4, shuffle=shuffle, workers=workers, shuffle_buffer=3,
                  drop_last=False)
    both = every_batch(fastloop.Loader(source, fields=("depth", "caption", "image"), seed=3, **common))
    assert all(b[0].shape == b[2].shape == (len(b[1]), 3, 16, 16) for b in both)
    depths = by_caption(every_batch(fastloop.Loader(source, fields=("depth", "caption"), seed=3, **common)), 0, 1)
    photos = by_caption(every_batch(fastloop.Loader(source, fields=("image", "caption"), seed=_C._view_seed(3, 1),
                                                    **common)), 0, 1)
    assert len(photos) == len(depths) == 10
    for captions, depth, photo in ((b[1], b[0], b[2]) for b in both):
        for k, c in enumerate(captions):
            assert torch.equal(photo[k], photos[c]) and torch.equal(depth[k], depths[c])


def test_a_datasets_dataset_with_text_columns(tmp_path):
    import datasets
    rng = np.random.default_rng(1)
    data = datasets.Dataset.from_dict({"image": [{"bytes": encoded(rng, "PNG"), "path": None} for _ in range(9)],
                                       "text": [caption(i) for i in range(9)]},
                                      features=datasets.Features({"image": datasets.Image(),
                                                                  "text": datasets.Value("string")}))
    picked = data.select([8, 1, 5, 0])
    loader = fastloop.Loader(picked, fields=("image", "text"), transform=transform(), batch_size=2, shuffle=False,
                             workers=1)
    assert [t for _, texts in loader for t in texts] == [caption(i) for i in (8, 1, 5, 0)]


@pytest.fixture(scope="module")
def other_shards(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("other")
    for s in range(2):
        samples = caption_samples(6, start=100 + 6 * s, seed=10 + s)
        write_tar(root / f"train-{s:06d}.tar", samples)
    return f"shards:{root}/train-{{000000..000001}}.tar"


def mixture(caption_shards, other_shards, **kwargs) -> fastloop.Loader:
    args = dict(fields=("jpg;png", "txt", "cls"), transform=transform(), batch_size=4, workers=2, seed=1,
                shuffle_buffer=4, weights=[3, 1])
    args.update(kwargs)
    return fastloop.Loader([spec(caption_shards), other_shards], **args)


def thing(text: str) -> int:
    return int(text.split()[4])


@pytest.mark.parametrize("workers", [1, 2])
def test_a_mixture_draws_each_source_by_its_weight(caption_shards, other_shards, workers):
    loader = mixture(caption_shards, other_shards, batch_size=11, drop_last=False, workers=workers)
    assert len(loader) == 3  # an epoch: as many samples as the sources hold together (21 + 12)
    firsts = []
    drawn = []
    for epoch in range(12):
        loader.set_epoch(epoch)
        things = [thing(t) for _, texts, _ in loader for t in texts]
        assert len(things) == 33
        firsts.append(things[:5])
        drawn += things
    share = sum(t < 100 for t in drawn) / len(drawn)
    sigma = (0.75 * 0.25 / len(drawn)) ** 0.5
    assert abs(share - 0.75) < 4 * sigma, share  # 396 draws: within 4 standard errors of the weight
    assert len({tuple(f) for f in firsts}) > 1  # each epoch draws afresh
    assert set(drawn) == set(range(21)) | set(range(100, 112))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_mixture_is_deterministic_and_resumes_from_its_state(caption_shards, other_shards, workers):
    def texts(loader, n=None):
        return [t for batch in itertools.islice(loader, n) for t in batch[1]]

    whole = texts(mixture(caption_shards, other_shards))
    assert whole == texts(mixture(caption_shards, other_shards, workers=1))
    first = mixture(caption_shards, other_shards, workers=workers)
    head = texts(first, 3)
    state = first.state_dict()
    resumed = mixture(caption_shards, other_shards, workers=3 - workers)  # resumed by another count of workers
    resumed.load_state_dict(state)
    assert head + texts(resumed) == whole
    with pytest.raises(ValueError, match="source"):
        mixture(caption_shards, other_shards, weights=[1, 1]).load_state_dict(state)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_mixtures_ranks_share_each_epoch(caption_shards, other_shards, workers):
    ranks = [mixture(caption_shards, other_shards, rank=r, world_size=2, batch_size=4, workers=workers)
             for r in range(2)]
    assert len(ranks[0]) == len(ranks[1]) == 4  # ceil(33 / 2) = 17 samples each, 4 whole batches
    seen = [[t for _, texts, _ in loader for t in texts] for loader in ranks]
    assert seen[0] != seen[1]
    again = [t for _, texts, _ in mixture(caption_shards, other_shards, rank=1, world_size=2, batch_size=4)
             for t in texts]
    assert again == seen[1]
    # Each source's shards are split among the ranks as for that source alone: each rank's first pass over a
    # source (its share: 11 of the 21, padded by one as DistributedSampler pads; 6 of the 12) is the other's
    # complement.
    whole = [[thing(t) for _, texts, _ in mixture(caption_shards, other_shards, rank=r, world_size=2, batch_size=17,
                                                  drop_last=False) for t in texts] for r in range(2)]
    for low, high, share, padding in ((0, 100, 11, 1), (100, 200, 6, 0)):
        firsts = [[t for t in run if low <= t < high][:share] for run in whole]
        assert min(len(f) for f in firsts) >= 4, firsts
        assert len(set(firsts[0]) & set(firsts[1])) <= padding, firsts


def test_a_mixture_of_shards_and_parquet(caption_shards, tmp_path):
    parquet_file(tmp_path / "train-0.parquet", 8, start=200)
    parquet = f"parquet:{tmp_path}/train-0.parquet"
    with pytest.raises(ValueError, match="image fields"):  # a shard's fields are extensions: "image" is none
        fastloop.Loader([spec(caption_shards), parquet], fields=("image", "caption"))
    # each source may name the Loader's fields its own way: (source, its names)
    loader = fastloop.Loader([(spec(caption_shards), ("jpg;png", "txt")), parquet], weights=[1, 1],
                             fields=("image", "caption"), transform=transform(), batch_size=29, workers=2)
    images, captions = next(iter(loader))
    assert images.shape == (29, 3, 16, 16)
    assert set(captions) <= {caption(i) for i in list(range(21)) + list(range(200, 208))}
    assert {thing(c) >= 200 for c in captions} == {False, True}


def test_resampled_shards_draw_whole_shards_with_replacement(caption_shards):
    def things(epoch):
        loader = fastloop.Loader(spec(caption_shards), fields=("jpg;png", "txt"), transform=transform(),
                                 batch_size=7, shuffle_buffer=1, resampled=True, workers=2)
        loader.set_epoch(epoch)
        return [thing(t) for _, texts in loader for t in texts]

    runs = [things(epoch) for epoch in range(6)]
    for run in runs:
        assert len(run) == 21
        blocks = [run[k:k + 7] for k in range(0, 21, 7)]
        assert all(b == list(range(b[0], b[0] + 7)) and b[0] % 7 == 0 for b in blocks)  # whole shards, in order
    assert runs[0] == things(0)
    assert any(len({tuple(b) for b in (r[:7], r[7:14], r[14:])}) < 3 for r in runs)  # a shard drawn twice


def test_the_getting_started_clip_example_trains(caption_shards, other_shards, tmp_path):
    """docs/getting-started.md's contrastive loop, made small: it runs, and its loss is finite at every step."""
    import re
    import sys
    from conftest import ROOT
    page = (ROOT / "docs/getting-started.md").read_text()
    section = page[page.index("### Captions and mixtures"):]
    block = re.search(r"^```python\n(.*?)^```$", section, re.M | re.S).group(1)
    for written, small in [('"shards:/data/cc3m/{00000..00331}.tar"', repr(spec(caption_shards))),
                           ('"shards:/data/laion/{00000..00999}.tar"', repr(other_shards)),
                           ("RandomResizedCrop(224", "RandomResizedCrop(32"), ("batch_size=256", "batch_size=8"),
                           ("workers=8", "workers=2"), ("step == 99", "step == 3")]:
        assert written in block, f"the example no longer has {written!r}"
        block = block.replace(written, small)
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{block}\nexited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    steps = [line.split() for line in done.stdout.splitlines()]
    assert [int(s) for s, _ in steps] == [0, 1, 2, 3]
    assert all(0 < float(loss) < 10 for _, loss in steps)


def test_pack_keeps_sidecar_captions_of_an_image_folder(cli, tmp_path):
    from conftest import run
    rng = np.random.default_rng(5)
    by_bytes = {}
    for c in ("cat", "dog"):
        (tmp_path / "photos/train" / c).mkdir(parents=True)
        for i in range(4):
            data = encoded(rng, "JPEG")
            (tmp_path / "photos/train" / c / f"{i}.jpg").write_bytes(data)
            if i != 3:  # one image without its caption: packed without .txt
                (tmp_path / "photos/train" / c / f"{i}.txt").write_text(f"a {c} number {i}")
                (tmp_path / "photos/train" / c / f"{i}.json").write_text(json.dumps({"i": i}))
            by_bytes[data] = (f"a {c} number {i}" if i != 3 else None, i)
    run([cli, "pack", tmp_path / "photos", tmp_path / "shards"])
    import webdataset as wds
    rows = list(wds.WebDataset(str(tmp_path / "shards/train-000000.tar"), shardshuffle=False, empty_check=False))
    assert len(rows) == 8
    for row in rows:
        text, i = by_bytes[row["jpg"]]
        assert row.get("txt", b"").decode() == (text or "")
        assert (json.loads(row["json"]) == {"i": i}) if text else "json" not in row
    loader = fastloop.Loader(f"shards:{tmp_path}/shards", fields=("jpg", "txt", "cls"), transform=transform(),
                             batch_size=6, shuffle=False, bad_image_policy="skip", workers=1)
    _, texts, classes = next(iter(loader))
    assert all(t.startswith(("a cat", "a dog")) for t in texts)
    assert [t.split()[1] for t in texts] == [["cat", "dog"][c] for c in classes.tolist()]


def test_pack_converts_a_caption_parquet_to_image_caption_shards(cli, tmp_path):
    from conftest import run
    parquet_file(tmp_path / "caps.parquet", 9, start=300)
    done = run([cli, "pack", f"parquet:{tmp_path}/caps.parquet", tmp_path / "shards"],
               env={**__import__("os").environ, "FASTLOOP_PYTHON": __import__("sys").executable})
    assert "no label column" in done.stdout
    loader = fastloop.Loader(f"shards:{tmp_path}/shards", fields=("jpg", "txt", "json:score"), transform=transform(),
                             batch_size=9, shuffle=False, workers=1)
    _, captions, scores = next(iter(loader))
    assert sorted(zip(scores, captions)) == [(i, caption(i)) for i in range(300, 309)]


def test_a_mixture_with_fields_pickles_as_its_arguments(caption_shards, other_shards):
    import pickle
    loader = mixture(caption_shards, other_shards, field_transforms={"txt": len}, resampled=True)
    copy = pickle.loads(pickle.dumps(loader))
    assert copy._args == loader._args and repr(copy) == repr(loader)
    assert [b[1] for b in copy] == [b[1] for b in loader]  # the same batches: lengths of the same captions


def test_pack_converts_a_csv_with_a_caption_column(cli, tmp_path):
    from conftest import run
    rng = np.random.default_rng(6)
    (tmp_path / "img").mkdir()
    lines = ["path,label,caption,url"]
    for i in range(5):
        (tmp_path / "img" / f"{i}.jpg").write_bytes(encoded(rng, "JPEG"))
        lines.append(f'img/{i}.jpg,{["cat", "dog"][i % 2]},"{caption(i)}, with a comma",http://x/{i}')
    (tmp_path / "list.csv").write_text("\n".join(lines) + "\n")
    run([cli, "pack", f"csv:{tmp_path}/list.csv", tmp_path / "shards"])
    loader = fastloop.Loader(f"shards:{tmp_path}/shards", fields=("jpg", "txt", "json", "cls"), transform=transform(),
                             batch_size=5, shuffle=False, workers=1)
    _, captions, metas, classes = next(iter(loader))
    assert sorted(captions) == [f"{caption(i)}, with a comma" for i in range(5)]
    for text, meta, c in zip(captions, metas, classes.tolist()):
        i = thing(text)
        assert meta == {"caption": text, "url": f"http://x/{i}"} and c == i % 2  # cat, dog: sorted class names
    assert (tmp_path / "shards/classes.txt").read_text() == "cat\ndog\n"
    assert (tmp_path / "shards/shards.idx").exists()  # what remote shards need
    latin1 = tmp_path / "latin1.csv"  # a caption saved as Latin-1: named, not a crash
    latin1.write_bytes(b"path,caption\nimg/0.jpg,caf\xe9\n")
    done = subprocess.run([cli, "pack", f"csv:{latin1}", tmp_path / "latin1"], capture_output=True, text=True)
    assert done.returncode == 2 and "latin1.csv line 2: column 'caption' is not UTF-8 text" in done.stderr, done.stderr


def test_a_mixture_of_classification_shards_yields_images_and_labels(caption_shards, other_shards):
    loader = fastloop.Loader([spec(caption_shards), other_shards], weights=[1, 1], transform=transform(), batch_size=33,
                             drop_last=False, workers=2)
    images, labels = next(iter(loader))
    assert images.shape == (33, 3, 16, 16) and labels.dtype == torch.int64
    assert set(labels.tolist()) <= {0, 1, 2}


def test_a_mixture_saved_by_two_ranks_resumes_on_one(caption_shards, other_shards):
    from collections import Counter

    def make(rank, world_size):
        return mixture(caption_shards, other_shards, rank=rank, world_size=world_size, batch_size=4, drop_last=False)

    full = [[t for _, texts, _ in make(r, 2) for t in texts] for r in range(2)]
    ranks = [make(r, 2) for r in range(2)]
    heads = [[t for _, texts, _ in itertools.islice(loader, 2) for t in texts] for loader in ranks]
    state = ranks[0].state_dict()
    assert state == ranks[1].state_dict() and state["position"] == 16
    alone = make(0, 1)
    alone.load_state_dict(state)
    rest = [t for _, texts, _ in alone for t in texts]
    assert len(rest) == 34 - 16  # the 2-rank order's 34 positions (17 each), 16 taken
    assert Counter(heads[0] + heads[1] + rest) == Counter(full[0] + full[1])
