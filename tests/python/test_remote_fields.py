"""fastloop.Loader(..., fields=...) over tar shards in object storage (a SeaweedFS S3 gateway on loopback): shards
evicted from memory and from a small cache folder and read again give the fields and images of the same shards on
disk (1 and 2 workers), what the workers kept of a skipped sample is let go, and the classes are the store's."""

import io
import pathlib
import sys
import tarfile
from typing import Iterator

import numpy as np
import pytest
import torch

import fastloop
from conftest import run
from test_fields import caption, encoded, transform

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import remote_store  # noqa: E402

SHARDS, PER_SHARD = 100, 10


def write_shard(path: pathlib.Path, start: int, count: int, bad: int = -1) -> None:
    """`count` samples of a tiny JPEG, a caption, a JSON document and a class; sample `bad`'s JPEG is cut short."""
    rng = np.random.default_rng(start)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(start, start + count):
            image = encoded(rng, "JPEG")
            members = {"jpg": image[:len(image) // 3] if i == bad else image, "txt": caption(i).encode(),
                       "json": f'{{"i": {i}}}'.encode(), "cls": str(i % 4).encode()}
            for ext, data in members.items():
                info = tarfile.TarInfo(f"{i:06d}.{ext}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


@pytest.fixture(scope="module")
def many_shards(cli, tmp_path_factory) -> pathlib.Path:
    """SHARDS shards of PER_SHARD samples: more than the read-ahead and a shuffle buffer of 300 keep in memory at
    once, so shards a later sample still needs are dropped and their samples fetched alone."""
    out = tmp_path_factory.mktemp("many")
    for s in range(SHARDS):
        write_shard(out / f"train-{s:06d}.tar", s * PER_SHARD, PER_SHARD)
    (out / "classes.txt").write_text("a\nb\nc\nd\n")
    run([cli, "pack", "--index-only", out])
    return out


@pytest.fixture(scope="module")
def bad_shards(cli, tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("bad")
    for s in range(3):
        write_shard(out / f"train-{s:06d}.tar", s * 6, 6, bad=8)
    run([cli, "pack", "--index-only", out])
    return out


@pytest.fixture(scope="module")
def store(many_shards, bad_shards, tmp_path_factory) -> Iterator[remote_store.SeaweedS3]:
    try:
        weed = remote_store.weed_program()
    except FileNotFoundError as missing:
        pytest.skip(str(missing))
    s3 = remote_store.SeaweedS3(weed, tmp_path_factory.mktemp("weed"))
    try:
        s3.upload(many_shards, "many")
        s3.upload(bad_shards, "bad")
        yield s3
    finally:
        s3.close()


@pytest.fixture
def signed(store, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", remote_store.ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", remote_store.SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", remote_store.REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", store.endpoint)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return store


FIELDS = ("jpg", "txt", "json", "cls")


def epochs(loader: fastloop.Loader, count: int = 2) -> list:
    out = []
    for epoch in range(count):
        loader.set_epoch(epoch)
        out.append([tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in batch) for batch in loader])
    return out


def assert_same(got: list, want: list) -> None:
    assert len(got) == len(want)
    for batch, want_batch in zip(got, want):
        for value, want_value in zip(batch, want_batch):
            assert torch.equal(value, want_value) if isinstance(value, torch.Tensor) else value == want_value


@pytest.mark.parametrize("workers", [1, 2])
def test_evicted_shards_read_again_give_the_fields_of_the_shards_on_disk(signed, many_shards, tmp_path, workers):
    args = dict(fields=FIELDS, transform=transform(), batch_size=50, workers=workers, seed=5, shuffle=True,
                shuffle_buffer=300, drop_last=False)
    want = epochs(fastloop.Loader(f"shards:{many_shards}", **args))
    shard_bytes = (many_shards / "train-000000.tar").stat().st_size
    cache = tmp_path / "cache"
    loader = fastloop.Loader("shards:s3://shards/many", cache_dir=str(cache), cache_size=10 * shard_bytes, **args)
    got = epochs(loader)
    for epoch in range(2):
        assert_same(got[epoch], want[epoch])
        assert sorted(c for batch in got[epoch] for c in batch[1]) == sorted(caption(i) for i in range(1000))
    remote = loader._fields.native[0]
    # Without an eviction from memory: each shard fetched whole once per epoch (fewer with the cache), plus the
    # index and classes.txt. Beyond that: samples of shards dropped while later samples still needed them,
    # fetched alone by Range (about 60 here).
    assert remote.requests > 2 * SHARDS + 2 + 20, remote.requests
    assert sum(p.stat().st_size for p in cache.iterdir()) <= 10 * shard_bytes
    assert remote.kept == 0
    assert loader.classes == ["a", "b", "c", "d"] and loader.num_classes == 4


@pytest.mark.parametrize("workers", [1, 2])
def test_what_the_workers_kept_of_a_skipped_or_abandoned_sample_is_let_go(signed, workers):
    loader = fastloop.Loader("shards:s3://shards/bad", fields=FIELDS, transform=transform(), batch_size=4,
                             workers=workers, shuffle=False, drop_last=False, bad_image_policy="skip")
    remote = loader._fields.native[0]
    texts = [t for _, batch, _, _ in loader for t in batch]
    assert loader.samples_skipped == 1  # sample 8's JPEG: its fields were read and kept before it failed to decode
    assert texts == [caption(i) for i in range(18) if i != 8][:8] + [caption(9)] + [caption(i) for i in range(9, 18)]
    assert remote.kept == 0
    next(iter(loader))  # an iteration abandoned after one batch: the workers read ahead of it
    list(loader)  # a new plan lets go of what the last one kept
    assert remote.kept == 0
