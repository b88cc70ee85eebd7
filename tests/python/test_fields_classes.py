"""fastloop.Loader(..., fields=...): the classes a Loader of fields reports (its class field's, or None), and Parquet's
image columns read together (each file's metadata opened once, one reader call per row group for every column)."""

import json
import pathlib

import numpy as np
import pytest
import torch

import fastloop
from test_fields import caption, caption_samples, encoded, every_batch, transform, write_tar


@pytest.fixture(scope="module")
def class_shards(tmp_path_factory) -> pathlib.Path:
    """test_fields' caption samples (.cls 0, 1 or 2) as 2 shards of 6, in a folder of their own."""
    root = tmp_path_factory.mktemp("classes")
    for s in range(2):
        write_tar(root / f"train-{s:06d}.tar", caption_samples(6, start=6 * s, seed=s))
    return root


def test_a_shard_loaders_classes_are_its_cls_fields(class_shards):
    common = dict(transform=transform(), batch_size=4, workers=1)
    source = f"shards:{class_shards}"
    plain = fastloop.Loader(source, **common)
    with_class = fastloop.Loader(source, fields=("jpg;png", "txt", "cls"), **common)
    assert plain.num_classes == with_class.num_classes == 3  # not the 12 samples
    assert with_class.classes == plain.classes == ["0", "1", "2"]
    captions = fastloop.Loader(source, fields=("jpg;png", "txt"), **common)
    assert captions.num_classes is None and captions.classes is None  # no class field asked: no classes
    mixture = fastloop.Loader([source, source], weights=[1, 1], **common)  # (images, labels) of both
    assert mixture.num_classes == 3 and mixture.classes == ["0", "1", "2"]
    state = with_class.state_dict()
    assert state["num_classes"] == 3
    with_class.load_state_dict(state)


def test_classes_txt_beside_the_shards_names_them(class_shards, tmp_path):
    for path in class_shards.glob("*.tar"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "classes.txt").write_text("cat\ndog\nbird\n")
    loader = fastloop.Loader(f"shards:{tmp_path}", fields=("jpg;png", "cls"), transform=transform(), batch_size=4)
    assert loader.classes == ["cat", "dog", "bird"] and loader.num_classes == 3
    assert fastloop.Loader(f"shards:{tmp_path}", transform=transform(), batch_size=4).classes == loader.classes
    (tmp_path / "classes.txt").write_text("cat\ndog\n")
    short = fastloop.Loader(f"shards:{tmp_path}", fields=("jpg;png", "cls"), transform=transform(), batch_size=4)
    with pytest.raises(ValueError, match="classes.txt names 2 classes, the shards' .cls members count 3"):
        short.num_classes


def hf_parquet(path: pathlib.Path, count: int, names=("cat", "dog", "bird")) -> None:
    """A caption Parquet with a ``label`` column of ClassLabel `names` (in the schema's ``huggingface`` metadata,
    as ``datasets`` writes it; none when `names` is None) and an integer ``score`` column."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(3)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    features = {"image": {"_type": "Image"}, "label": {"names": list(names or ()), "_type": "ClassLabel"}}
    metadata = {"huggingface": json.dumps({"info": {"features": features}})} if names else None
    pq.write_table(pa.table({"image": pa.array([{"bytes": encoded(rng, "JPEG"), "path": None} for _ in range(count)],
                                               image),
                             "caption": [caption(i) for i in range(count)],
                             "label": pa.array([i % 2 for i in range(count)], pa.int64()),
                             "score": list(range(count))}, metadata=metadata), path, row_group_size=3)


def test_an_arrow_loaders_classes_are_its_label_columns(tmp_path):
    import datasets
    hf_parquet(tmp_path / "named.parquet", 6)
    hf_parquet(tmp_path / "plain.parquet", 6, names=None)
    common = dict(transform=transform(), batch_size=3)
    named = fastloop.Loader(f"parquet:{tmp_path}/named.parquet", fields=("image", "caption", "label"), **common)
    assert named.classes == ["cat", "dog", "bird"] and named.num_classes == 3  # the names, though 2 are used
    assert named.classes == fastloop.Loader(f"parquet:{tmp_path}/named.parquet", **common).classes
    plain = fastloop.Loader(f"parquet:{tmp_path}/plain.parquet", fields=("image", "label"), **common)
    assert plain.classes == ["0", "1"]  # numbered up to the largest, as the image Loader numbers them
    renamed = fastloop.Loader(f"parquet:{tmp_path}/plain.parquet", fields=("image", "score"), label_column="score",
                              **common)
    assert renamed.num_classes == 6
    for other in (("image", "caption", "score"), ("image", "caption")):  # neither a label column nor ClassLabel
        loader = fastloop.Loader(f"parquet:{tmp_path}/plain.parquet", fields=other, **common)
        assert loader.num_classes is None and loader.classes is None
    data = datasets.Dataset.from_dict({"image": [{"bytes": encoded(np.random.default_rng(0), "PNG"), "path": None}],
                                       "kind": [1]},
                                      features=datasets.Features({"image": datasets.Image(),
                                                                  "kind": datasets.ClassLabel(names=["a", "b"])}))
    assert fastloop.Loader(data, fields=("image", "kind"), **common).classes == ["a", "b"]  # a ClassLabel column


@pytest.mark.parametrize("workers", [1, 2])
def test_parquet_image_columns_are_read_together_and_each_file_opened_once(tmp_path, monkeypatch, workers):
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(5)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    for f in range(2):
        pq.write_table(pa.table({"image": pa.array([{"bytes": encoded(rng, "JPEG"), "path": None} for _ in range(7)],
                                                   image),
                                 "caption": [caption(7 * f + i) for i in range(7)],
                                 "depth": pa.array([{"bytes": encoded(rng, "PNG"), "path": None} for _ in range(7)],
                                                   image)}), tmp_path / f"train-{f}.parquet", row_group_size=3)
    opened, groups_read = [], []

    class Counted(pq.ParquetFile):
        def __init__(self, source, *args, **kwargs):
            opened.append(pathlib.Path(str(source)).name)
            super().__init__(source, *args, **kwargs)

        def read_row_group(self, i, *args, **kwargs):
            groups_read.append(i)
            return super().read_row_group(i, *args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", Counted)
    loader = fastloop.Loader(f"parquet:{tmp_path}/train-{{0..1}}.parquet", fields=("image", "caption", "depth"),
                             transform=transform(), batch_size=4, shuffle=True, drop_last=False, workers=workers)
    batches = every_batch(loader)
    assert sorted(c for b in batches for c in b[1]) == sorted(caption(i) for i in range(14))
    assert all(b[0].shape == b[2].shape == (len(b[1]), 3, 16, 16) for b in batches)
    assert sorted(opened) == ["train-0.parquet", "train-1.parquet"]  # each file's metadata once
    assert len(groups_read) == 6  # 3 row groups per file, each read once for both image columns
    assert not torch.equal(batches[0][0], batches[0][2])
