"""Videos in local tar shards (fastloop.video_shards: KEY.mp4 beside KEY.cls, as WebDataset writes them), read in
place from the shard's mapping through an AVIOContext: the same index, frames and batches as the same videos as
files, their indices cached under the shard's stamp, and a bad member named or skipped."""

import io
import pathlib
import tarfile

import pytest
import torch

fastloop = pytest.importorskip("fastloop")
from torchvision.transforms import v2  # noqa: E402

from video_data import clip_paths, make_clips  # noqa: E402

TRANSFORM = v2.Compose([v2.RandomResizedCrop(32, antialias=True), v2.RandomHorizontalFlip(),
                        v2.ToDtype(torch.float32, scale=True)])


def _shard(path: pathlib.Path, members) -> None:
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """(the four clips as files with their labels, a folder of two shards holding them: 2 samples each, the
    second shard's videos under a sub-folder of the archive)."""
    root = make_clips(tmp_path_factory.mktemp("videos"))
    files = clip_paths(root)
    labels = [0, 0, 1, 1]
    folder = root / "shards"
    folder.mkdir()
    for s, names in enumerate((("a000", "a001"), ("clips/b000", "clips/b001"))):
        members = []
        for k, key in enumerate(names):
            video = files[2 * s + k]
            members += [(f"{key}.mp4", pathlib.Path(video).read_bytes()), (f"{key}.cls", str(labels[2 * s + k]).encode())]
        _shard(folder / f"train-{s:06d}.tar", members)
    return files, labels, folder


def test_members_read_as_their_files(shards):
    files, labels, folder = shards
    dataset = fastloop.video_shards(folder, num_frames_per_clip=4, num_clips=2)
    assert dataset.paths == [f"{folder}/train-000000.tar/a000.mp4", f"{folder}/train-000000.tar/a001.mp4",
                             f"{folder}/train-000001.tar/clips/b000.mp4", f"{folder}/train-000001.tar/clips/b001.mp4"]
    assert dataset.labels == labels
    member, file = dataset.paths[2], files[2]
    assert fastloop._C._video_info(member) == fastloop._C._video_info(file)
    indices = [0, 1, 31, 89, 45, 2]  # across keyframes, backwards: the AVIOContext's seeks
    ours, pts = fastloop._C._video_frames(member, indices)
    theirs, their_pts = fastloop._C._video_frames(file, indices)
    assert torch.equal(ours, theirs) and pts == their_pts
    as_files = fastloop.VideoFiles(files, labels, num_frames_per_clip=4, num_clips=2)
    expected = [x for x, _ in fastloop.Loader(as_files, transform=TRANSFORM, batch_size=2, workers=1, seed=5)]
    for workers in (1, 2):
        got = [x for x, _ in fastloop.Loader(dataset, transform=TRANSFORM, batch_size=2, workers=workers, seed=5)]
        assert len(got) == 4 and all(torch.equal(a, b) for a, b in zip(got, expected))


def test_member_indices_are_cached_under_the_shards_stamp(shards, tmp_path, monkeypatch):
    _, _, folder = shards
    monkeypatch.setenv("FASTLOOP_CACHE", str(tmp_path / "cache"))
    fastloop._C._video_index_forget()
    member = f"{folder}/train-000001.tar/clips/b001.mp4"
    before = fastloop._C._video_index_counts()
    info = fastloop._C._video_info(member)
    assert fastloop._C._video_index_counts()["cache_written"] == before["cache_written"] + 1
    fastloop._C._video_index_forget()
    assert fastloop._C._video_info(member) == info
    after = fastloop._C._video_index_counts()
    assert after["cache_read"] == before["cache_read"] + 1 and after["scanned"] == before["scanned"] + 1
    fastloop._C._video_index_forget()


def test_bad_members_and_shards_are_named(shards, tmp_path):
    files, _, _ = shards
    bad = tmp_path / "bad.tar"
    _shard(bad, [("good.mp4", pathlib.Path(files[0]).read_bytes()), ("good.cls", b"0"),
                 ("junk.mp4", bytes(range(256)) * 64), ("junk.cls", b"1")])
    dataset = fastloop.video_shards(bad, num_frames_per_clip=4)
    with pytest.raises(ValueError, match=r"bad\.tar/junk\.mp4: FFmpeg cannot open it as a video"):
        list(fastloop.Loader(dataset, transform=TRANSFORM, batch_size=2, workers=1, shuffle=False))
    loader = fastloop.Loader(dataset, transform=TRANSFORM, batch_size=2, workers=1, shuffle=False,
                             bad_image_policy="skip")
    (clips, labels), = list(loader)
    assert labels.tolist() == [0, 0] and loader.samples_skipped == 1 and torch.equal(clips[0], clips[1])
    with pytest.raises(ValueError, match=r"bad\.tar/missing\.mp4: the shard .*bad\.tar has no member missing\.mp4"):
        fastloop._C._video_info(f"{bad}/missing.mp4")
    unlabelled = tmp_path / "unlabelled.tar"
    _shard(unlabelled, [("a.mp4", pathlib.Path(files[0]).read_bytes())])
    with pytest.raises(ValueError, match=r"unlabelled\.tar: sample 'a' has no \.cls member"):
        fastloop.video_shards(unlabelled)
    compressed = tmp_path / "compressed.tar"
    with tarfile.open(compressed, "w:gz") as archive:
        archive.add(files[0], arcname="a.mp4")
    with pytest.raises(ValueError, match=r"compressed\.tar: not a plain tar shard"):
        fastloop.video_shards(compressed)


def test_a_rewritten_shard_is_read_afresh(shards, tmp_path):
    files, _, _ = shards
    shard = tmp_path / "one.tar"
    _shard(shard, [("x.mp4", pathlib.Path(files[0]).read_bytes()), ("x.cls", b"0")])
    assert fastloop._C._video_info(f"{shard}/x.mp4")["frames"] == 90
    short = pathlib.Path(files[0]).parents[2] / "short.mp4"  # 10 frames
    _shard(tmp_path / "next.tar", [("x.mp4", short.read_bytes()), ("x.cls", b"0")])
    (tmp_path / "next.tar").replace(shard)  # another file under the name: mapped and listed again
    assert fastloop._C._video_info(f"{shard}/x.mp4")["frames"] == 10
    frames, _ = fastloop._C._video_frames(f"{shard}/x.mp4", [9])
    assert frames.shape == (1, 3, 240, 320)
