"""fastloop.Loader over Parquet files in the Hugging Face Hub's layout (``parquet:PATTERN[::VAL]``) and over a
``datasets.Dataset``: the same batches as the same images in a folder (evaluation, in order) and as tar shards
of the same grouping (training, row groups shuffled as shards are); Parquet written by pyarrow and by
``datasets``; class names from the ``huggingface`` metadata; resuming mid-epoch and another number of ranks;
a damaged file, a missing column, a null cell and a cell that is not an image named by file, row group and
row."""

import io
import json
import pathlib
from collections import Counter
from typing import List, Optional

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from torchvision.transforms import v2

import fastloop
from test_loader_state import assert_same, check_resume, elastic, epochs, take, write_shards

IMAGES = dict(image_size=32, seed=5)
CLASSES = ["ant", "bee", "cat"]
PIPELINE = v2.Compose([v2.RandomResizedCrop(32, antialias=True), v2.RandomHorizontalFlip(),
                       v2.ToDtype(torch.float32, scale=True), v2.Normalize([0.5] * 3, [0.25] * 3)])


def hf_table(files: List[pathlib.Path], labels: List[int], classes: Optional[List[str]] = CLASSES) -> pa.Table:
    """The Hub's layout: ``image`` a struct of the file's bytes and its name, ``label`` ClassLabel indices, the
    class names in the schema's ``huggingface`` metadata (as ``datasets`` writes it)."""
    image = pa.array([{"bytes": p.read_bytes(), "path": p.name} for p in files],
                     pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    features = {"image": {"_type": "Image"}, "label": {"names": classes, "_type": "ClassLabel"}}
    metadata = {"huggingface": json.dumps({"info": {"features": features}})} if classes else None
    return pa.table({"image": image, "label": pa.array(labels, pa.int64())}, metadata=metadata)


def write_parquet(table: pa.Table, out: pathlib.Path, per_file: int, per_group: int) -> None:
    """`table` as train-NNNNN.parquet files of `per_file` rows, in row groups of `per_group` rows."""
    out.mkdir(parents=True, exist_ok=True)
    for start in range(0, table.num_rows, per_file):
        pq.write_table(table.slice(start, per_file), out / f"train-{start // per_file:05d}.parquet",
                       row_group_size=per_group)


def folder_files(image_folder: pathlib.Path, split: str) -> List[pathlib.Path]:
    return sorted((image_folder / split).glob("*/*"))


def folder_labels(files: List[pathlib.Path]) -> List[int]:
    return [CLASSES.index(p.parent.name) for p in files]


@pytest.fixture(scope="module")
def parquet_set(image_folder, tmp_path_factory) -> pathlib.Path:
    """image_folder's 36 train images as 2 files of 18 rows in row groups of 6 (the shards' grouping), and its
    12 val images as val.parquet."""
    out = tmp_path_factory.mktemp("parquet")
    train = folder_files(image_folder, "train")
    write_parquet(hf_table(train, folder_labels(train)), out, per_file=18, per_group=6)
    val = folder_files(image_folder, "val")
    pq.write_table(hf_table(val, folder_labels(val)), out / "val.parquet", row_group_size=5)
    return out


def test_evaluation_batches_equal_the_image_folders(parquet_set, image_folder):
    parquet = fastloop.Loader(f"parquet:{parquet_set}/train-*.parquet::{parquet_set}/val.parquet", split="val",
                              batch_size=5, workers=2, image_size=32)
    folder = fastloop.Loader(f"imagefolder:{image_folder}", split="val", batch_size=5, workers=2, image_size=32)
    assert parquet.classes == CLASSES and len(parquet) == len(folder) == 3
    assert_same(epochs(parquet, 1), epochs(folder, 1))


@pytest.mark.parametrize("workers", [0, 2])
def test_training_batches_equal_tar_shards_of_the_same_grouping(parquet_set, image_folder, tmp_path, workers):
    """Row groups of 6 as shards of 6: the same shuffle of groups, the same buffer, the same augmentation."""
    train = folder_files(image_folder, "train")
    write_shards(train, folder_labels(train), tmp_path)
    make = lambda source: fastloop.Loader(source, batch_size=4, workers=workers, shuffle_buffer=8,  # noqa: E731
                                          transform=PIPELINE, **IMAGES)
    parquet, shards = make(f"parquet:{parquet_set}/train-{{00000,00001}}.parquet"), make(f"shards:{tmp_path}")
    for epoch in (0, 1):
        parquet.set_epoch(epoch), shards.set_epoch(epoch)
        assert_same(epochs(parquet, 1), epochs(shards, 1))


def test_parquet_written_by_datasets_reads_as_the_folder(image_folder, tmp_path):
    """``Dataset.from_dict(...).cast_column("image", Image())`` then ``to_parquet``, as the issue's users write it."""
    datasets = pytest.importorskip("datasets")
    val = folder_files(image_folder, "val")
    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=CLASSES)})
    ds = datasets.Dataset.from_dict({"image": [str(p) for p in val], "label": folder_labels(val)}, features=features)
    ds.to_parquet(str(tmp_path / "val.parquet"))
    loader = fastloop.Loader(f"parquet:{tmp_path}/val.parquet", split="train", shuffle=False, augment=False,
                             drop_last=False, batch_size=4, workers=1, image_size=32)
    want = fastloop.Loader(fastloop.Files(val, folder_labels(val), CLASSES), split="train", shuffle=False,
                           augment=False, drop_last=False, batch_size=4, workers=1, image_size=32)
    assert loader.classes == CLASSES
    assert_same(epochs(loader, 1), epochs(want, 1))


def test_a_datasets_dataset_is_read_in_place_in_its_row_order(image_folder):
    datasets = pytest.importorskip("datasets")
    val = folder_files(image_folder, "val")
    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=CLASSES)})
    ds = datasets.Dataset.from_dict({"image": [{"bytes": p.read_bytes(), "path": None} for p in val],
                                     "label": folder_labels(val)}, features=features)
    shuffled = ds.shuffle(seed=3)  # an indices mapping over the same Arrow table
    order = shuffled._indices.column(0).to_pylist()
    kwargs = dict(split="val", batch_size=4, workers=2, image_size=32)
    loader = fastloop.Loader(shuffled, **kwargs)
    want = fastloop.Loader(fastloop.Files([val[i] for i in order], [folder_labels(val)[i] for i in order], CLASSES),
                           **kwargs)
    assert loader.classes == CLASSES and len(loader) == 3
    assert_same(epochs(loader, 1), epochs(want, 1))
    train = fastloop.Loader(ds, batch_size=4, workers=2, **IMAGES)  # shuffled whole, as a folder is
    assert sorted(y for _, labels in epochs(train, 1) for y in labels.tolist()) == sorted(folder_labels(val))
    by_path = datasets.Dataset.from_dict({"image": [str(p) for p in val], "label": folder_labels(val)},
                                         features=features).shuffle(seed=3)  # cells that name local files
    assert_same(epochs(fastloop.Loader(by_path, **kwargs), 1), epochs(want, 1))


def test_class_names_come_from_the_metadata_or_the_label_names(image_folder, tmp_path):
    val = folder_files(image_folder, "val")
    pq.write_table(hf_table(val, folder_labels(val), classes=["a", "b", "c", "d"]), tmp_path / "meta.parquet")
    assert fastloop.Loader(f"parquet:{tmp_path}/meta.parquet", batch_size=4, workers=1).classes == ["a", "b", "c", "d"]
    pq.write_table(hf_table(val, folder_labels(val), classes=None), tmp_path / "bare.parquet")
    assert fastloop.Loader(f"parquet:{tmp_path}/bare.parquet", batch_size=4, workers=1).classes == ["0", "1", "2"]
    names = pa.table({"picture": [p.read_bytes() for p in val], "kind": [p.parent.name for p in val]})
    pq.write_table(names, tmp_path / "names.parquet")
    loader = fastloop.Loader(f"parquet:{tmp_path}/names.parquet", image_column="picture", label_column="kind",
                             split="train", shuffle=False, drop_last=False, batch_size=12, workers=1, image_size=32)
    assert loader.classes == CLASSES
    (_, labels), = epochs(loader, 1)
    assert labels.tolist() == folder_labels(val)


@pytest.mark.parametrize("workers", [1, 2])
def test_resuming_parquet_after_k_batches_equals_the_uninterrupted_run(parquet_set, workers):
    check_resume(lambda: fastloop.Loader(f"parquet:{parquet_set}/train-*.parquet", batch_size=4, workers=workers,
                                         shuffle_buffer=8, **IMAGES))


@pytest.mark.parametrize("old,new,k", [(2, 3, 3), (3, 2, 2)])
def test_another_number_of_ranks_shares_the_rest_of_a_parquet_epoch(old, new, k, image_folder, tmp_path):
    files = sorted(image_folder.glob("*/*/*"))
    write_parquet(hf_table(files, list(range(len(files))), classes=None), tmp_path, per_file=24, per_group=6)
    make = lambda rank, world: fastloop.Loader(  # noqa: E731
        f"parquet:{tmp_path}/train-*.parquet", batch_size=4, workers=2, rank=rank, world_size=world,
        shuffle_buffer=8, drop_last=False, **IMAGES)
    elastic(make, old, new, k, len(files))


def test_the_first_batches_are_not_decoded_again(image_folder, tmp_path):
    """The image cells of the samples in the first 5 batches are made undecodable: the resumed Loader (which
    stops at an undecodable image) never decodes them; a fresh epoch stops at one, naming its row."""
    files = sorted(image_folder.glob("*/*/*"))
    table = hf_table(files, list(range(len(files))), classes=None)
    write_parquet(table, tmp_path, per_file=48, per_group=6)
    make = lambda: fastloop.Loader(f"parquet:{tmp_path}/train-*.parquet", batch_size=4, workers=2,  # noqa: E731
                                   shuffle_buffer=8, **IMAGES)
    want = epochs(make(), 1)
    first = make()
    taken = take(first, 5)
    state = first.state_dict()
    first.close()
    spoiled = {label for _, y in taken for label in y.tolist()}
    bad = [{"bytes": b"not an image" if i in spoiled else p.read_bytes(), "path": p.name} for i, p in enumerate(files)]
    write_parquet(table.set_column(0, "image", pa.array(bad, table.schema.field("image").type)), tmp_path / "new",
                  per_file=48, per_group=6)
    for path in (tmp_path / "new").iterdir():  # a new file in its place: the first Loader's mapping keeps the old
        path.replace(tmp_path / path.name)
    second = make()
    second.load_state_dict(state)
    assert_same(epochs(second, 1), want[5:])
    with pytest.raises(ValueError, match=r"train-00000\.parquet, row group \d, row \d"):
        epochs(make(), 1)


def test_a_damaged_file_is_named(parquet_set, tmp_path):
    data = (parquet_set / "train-00000.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"cut\.parquet: not a readable Parquet file"):
        fastloop.Loader(f"parquet:{tmp_path}/cut.parquet", batch_size=4)
    (tmp_path / "text.parquet").write_text("label,image\n")
    with pytest.raises(ValueError, match=r"text\.parquet: not a readable Parquet file"):
        fastloop.Loader(f"parquet:{tmp_path}/text.parquet", batch_size=4)


def test_a_damaged_row_group_is_named_when_it_is_read(parquet_set, tmp_path):
    """The footer and the label column intact, an image page overwritten: the iteration names the row group."""
    data = bytearray((parquet_set / "train-00000.parquet").read_bytes())
    column = pq.ParquetFile(parquet_set / "train-00000.parquet").metadata.row_group(1).column(0)
    start = column.data_page_offset
    data[start:start + 64] = b"\xff" * 64
    (tmp_path / "train-0.parquet").write_bytes(bytes(data))
    loader = fastloop.Loader(f"parquet:{tmp_path}/train-0.parquet", batch_size=4, workers=1, **IMAGES)
    with pytest.raises(ValueError, match=r"train-0\.parquet, row group 1: cannot be read"):
        epochs(loader, 1)


def test_a_missing_column_is_named_with_the_argument_to_change(parquet_set):
    with pytest.raises(ValueError, match=r"train-00000\.parquet: no column 'img' \(it has image, label\); name the "
                                         r"right one with image_column="):
        fastloop.Loader(f"parquet:{parquet_set}/train-*.parquet", image_column="img")
    with pytest.raises(ValueError, match=r"no column 'y' .* label_column="):
        fastloop.Loader(f"parquet:{parquet_set}/train-*.parquet", label_column="y")


def test_null_cells_and_missing_labels_are_named(image_folder, tmp_path):
    val = folder_files(image_folder, "val")
    table = hf_table(val, folder_labels(val))
    cells = [None if i == 7 else {"bytes": p.read_bytes(), "path": p.name} for i, p in enumerate(val)]
    pq.write_table(table.set_column(0, "image", pa.array(cells, table.schema.field("image").type)),
                   tmp_path / "null.parquet", row_group_size=5)
    with pytest.raises(ValueError, match=r"null\.parquet, row group 1, row 2: the image cell is null"):
        epochs(fastloop.Loader(f"parquet:{tmp_path}/null.parquet", batch_size=4, workers=1, **IMAGES), 1)
    pq.write_table(table.set_column(1, "label", pa.array([-1] * len(val))), tmp_path / "test.parquet")
    with pytest.raises(ValueError, match=r"test\.parquet, row 0: label -1 is not a class index"):
        fastloop.Loader(f"parquet:{tmp_path}/test.parquet")


def test_patterns_and_splits_are_checked(parquet_set):
    with pytest.raises(ValueError, match=r"names no file"):
        fastloop.Loader(f"parquet:{parquet_set}/nothing-*.parquet")
    with pytest.raises(ValueError, match=r"has no val split"):
        fastloop.Loader(f"parquet:{parquet_set}/train-*.parquet", split="val")
    loader = fastloop.Loader(f"parquet:{parquet_set}/train-*.parquet", batch_size=4, workers=1, **IMAGES)
    assert Counter(y for _, labels in epochs(loader, 1) for y in labels.tolist()) == Counter({0: 12, 1: 12, 2: 12})


def test_a_parquet_loader_pickles_and_its_state_names_the_source(parquet_set):
    import pickle

    loader = fastloop.Loader(f"parquet:{parquet_set}/train-*.parquet", batch_size=4, workers=1, **IMAGES)
    copy = pickle.loads(pickle.dumps(loader))
    assert_same(epochs(copy, 1), epochs(loader, 1))
    assert loader.state_dict()["source"] == f"parquet:{parquet_set}/train-*.parquet"


def test_the_getting_started_parquet_example_runs(parquet_set):
    import re
    import subprocess
    import sys

    from conftest import ROOT

    page = (ROOT / "docs/getting-started.md").read_text()
    section = page[page.index("### Hugging Face datasets and Parquet"):]
    block = re.search(r"^```python\n(.*?)^```$", section, re.M | re.S).group(1)
    for written, small in [("/data/beans/data/train-*.parquet", f"{parquet_set}/train-*.parquet"),
                           ("/data/beans/data/validation-*.parquet", f"{parquet_set}/val.parquet"),
                           ("batch_size=64", "batch_size=4"), ("print(loader.classes)", "assert loader.classes == "
                                                               f"{CLASSES!r}"),
                           ("    pass\nds =", "    assert images.shape == (4, 3, 224, 224) and labels.dtype == "
                                              "torch.int64\nds ="), ("import datasets,", "import torch, datasets,")]:
        assert written in block, f"the example no longer has {written!r}"
        block = block.replace(written, small)
    done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{block}\nexited {done.returncode}:\n{done.stdout}\n{done.stderr}"


def test_fastloop_pack_writes_parquet_as_the_shards_the_cli_reads(parquet_set, cli, tmp_path):
    """`fastloop pack parquet:TRAIN::VAL OUT`: every train image once, the val split in the files' order
    (the same evaluation batches as the Parquet files), the class names kept; a damaged file is named."""
    import os
    import subprocess
    import sys

    source = f"parquet:{parquet_set}/train-*.parquet::{parquet_set}/val.parquet"
    env = dict(os.environ, FASTLOOP_PYTHON=sys.executable)
    done = subprocess.run([str(cli), "pack", source, str(tmp_path / "out")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "train with --data shards:" in done.stdout
    assert (tmp_path / "out/classes.txt").read_text() == "ant\nbee\ncat\n"
    assert (tmp_path / "out/shards.idx").exists()
    kwargs = dict(split="val", batch_size=5, workers=1, image_size=32)
    assert_same(epochs(fastloop.Loader(f"shards:{tmp_path}/out", **kwargs), 1),
                epochs(fastloop.Loader(source, **kwargs), 1))
    train = fastloop.Loader(f"shards:{tmp_path}/out", batch_size=4, workers=1, drop_last=False, **IMAGES)
    assert Counter(y for _, labels in epochs(train, 1) for y in labels.tolist()) == Counter({0: 12, 1: 12, 2: 12})
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    done = subprocess.run([str(cli), "pack", f"parquet:{tmp_path}/bad.parquet", str(tmp_path / "bad")], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "bad.parquet: not a readable Parquet file" in done.stderr, done.stderr


def test_parquet_over_http_reads_by_ranges_as_the_local_files(parquet_set, tmp_path):
    """The same files served over HTTP (tests/tools/remote_store.py's range server): the same batches, train
    and val, resumed mid-epoch as the local ones; a missing file is named with its URL."""
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "tests/tools"))
    import remote_store

    http = remote_store.HttpFiles(parquet_set)
    try:
        local, remote = (f"parquet:{root}/train-{{00000,00001}}.parquet::{root}/val.parquet"
                         for root in (parquet_set, http.url))
        make = lambda source, split="train": fastloop.Loader(  # noqa: E731
            source, split=split, batch_size=4, workers=2, shuffle_buffer=8, **IMAGES)
        assert make(remote).classes == CLASSES
        assert_same(epochs(make(remote), 1), epochs(make(local), 1))
        assert_same(epochs(make(remote, "val"), 1), epochs(make(local, "val"), 1))
        check_resume(lambda: make(remote))
        with pytest.raises(ValueError, match=r"/train-00009\.parquet: 404"):
            fastloop.Loader(f"parquet:{http.url}/train-00009.parquet")
    finally:
        http.close()


def test_parquet_in_s3_signed_and_through_dropped_transfers(parquet_set, tmp_path, monkeypatch):
    """The files in an S3 bucket (SeaweedFS on loopback, SigV4 with the admin key), behind a proxy that drops
    each of the first 3 answers after 3000 bytes and answers 503 twice: the same batches as the local files."""
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "tests/tools"))
    import remote_store

    s3 = remote_store.SeaweedS3(remote_store.weed_program(), tmp_path / "weed")
    proxy = remote_store.FaultProxy(s3.port)
    try:
        s3.upload(parquet_set, "pq")
        for name, value in (("AWS_ACCESS_KEY_ID", remote_store.ACCESS_KEY), ("AWS_SECRET_ACCESS_KEY",
                            remote_store.SECRET_KEY), ("AWS_REGION", remote_store.REGION),
                            ("AWS_ENDPOINT_URL", proxy.url)):
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("AWS_PROFILE", raising=False)
        proxy.mode("drop:3000:3")
        proxy.mode("status:503:2")
        make = lambda source: fastloop.Loader(source, batch_size=4, workers=2, shuffle_buffer=8, **IMAGES)  # noqa
        remote = make(f"parquet:s3://{remote_store.BUCKET}/pq/train-{{00000,00001}}.parquet")
        assert_same(epochs(remote, 1), epochs(make(f"parquet:{parquet_set}/train-*.parquet"), 1))
        assert proxy.requests > 6
    finally:
        proxy.close()
        s3.close()


def test_a_cache_folder_keeps_remote_files_for_later_loaders(parquet_set, tmp_path):
    """With cache_dir, each file is fetched whole when its first row group is read; a later Loader over the same
    URLs (another run) reads the copies and sends no request at all; the batches stay the same."""
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "tests/tools"))
    import remote_store

    http = remote_store.HttpFiles(parquet_set)
    proxy = remote_store.FaultProxy(int(http.url.rsplit(":", 1)[1]))
    try:
        source = f"parquet:{proxy.url}/train-{{00000,00001}}.parquet"
        make = lambda **kw: fastloop.Loader(source, batch_size=4, workers=2, shuffle_buffer=8, **IMAGES, **kw)  # noqa
        want = epochs(make(), 1)
        assert_same(epochs(make(cache_dir=str(tmp_path / "cache")), 1), want)
        assert len(list((tmp_path / "cache").glob("parquet-*-train-0000?.parquet"))) == 2
        before = proxy.requests
        assert_same(epochs(make(cache_dir=str(tmp_path / "cache")), 2)[:len(want)], want)
        assert proxy.requests == before, "the second run read its files from the cache"
    finally:
        proxy.close()
        http.close()
