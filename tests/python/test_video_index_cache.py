"""The on-disk cache of video frame indices ($FASTLOOP_CACHE/video-index/*.vidx): a video is scanned once, its
index written beside the others and read back by a later Loader (the process's indices dropped first, as a new
process starts them empty) with the same batches; a video rewritten since, and a cache file damaged, truncated,
emptied or of another video, are indexed afresh, never trusted; an unwritable cache only goes without files."""

import pathlib
import shutil

import pytest
import torch

fastloop = pytest.importorskip("fastloop")
from torchvision.transforms import v2  # noqa: E402

from video_data import clip_paths, make_clips  # noqa: E402

TRANSFORM = v2.Compose([v2.RandomResizedCrop(32, antialias=True), v2.RandomHorizontalFlip(),
                        v2.ToDtype(torch.float32, scale=True)])


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> pathlib.Path:
    return make_clips(tmp_path_factory.mktemp("videos"))


@pytest.fixture
def videos(clips, tmp_path, monkeypatch):
    """A copy of the four clips (this test's own files to rewrite) and a cache folder of this test's own, the
    process's indices dropped: the videos' indices are neither in memory nor on disk."""
    shutil.copytree(clips / "clips", tmp_path / "clips")
    monkeypatch.setenv("FASTLOOP_CACHE", str(tmp_path / "cache"))
    fastloop._C._video_index_forget()
    yield clip_paths(tmp_path)
    fastloop._C._video_index_forget()


def _batches(paths, workers):
    dataset = fastloop.VideoFiles(paths, [0, 0, 1, 1], num_frames_per_clip=4, num_indices_between_frames=2, num_clips=2)
    return [(x.clone(), y.clone()) for x, y in fastloop.Loader(dataset, transform=TRANSFORM, batch_size=4,
                                                               workers=workers, seed=7)]


def _equal(a, b):
    return len(a) == len(b) > 0 and all(torch.equal(x1, x2) and torch.equal(y1, y2) for (x1, y1), (x2, y2) in zip(a, b))


def _delta(before):
    after = fastloop._C._video_index_counts()
    return {k: after[k] - before[k] for k in after}


def _cache_files(tmp_path):
    """The cache file of each clip, in clip_paths' order (named HASH-BASENAME.vidx; the class folders' files share
    basenames, so they are told apart by the path each holds)."""
    files = sorted((tmp_path / "cache" / "video-index").glob("*.vidx"))
    return [next(f for f in files if str(path).encode() in f.read_bytes()) for path in clip_paths(tmp_path)]


def test_a_second_loader_reads_the_cache_files(videos, tmp_path):
    before = fastloop._C._video_index_counts()
    first = _batches(videos, workers=1)
    assert _delta(before) == {"scanned": 4, "cache_read": 0, "cache_written": 4}
    files = _cache_files(tmp_path)
    stamps = [(f.stat().st_mtime_ns, f.read_bytes()) for f in files]
    assert all(data.startswith(b"FLVIDX\r\n") for _, data in stamps)
    fastloop._C._video_index_forget()  # as a new process
    before = fastloop._C._video_index_counts()
    second = _batches(videos, workers=2)
    counts = _delta(before)
    assert counts["scanned"] == 0 and counts["cache_written"] == 0 and counts["cache_read"] >= 4
    assert [(f.stat().st_mtime_ns, f.read_bytes()) for f in files] == stamps  # read, not rewritten
    assert _equal(first, second)
    info = fastloop._C._video_info(videos[0])  # the index read equals the index scanned
    fastloop._C._video_index_forget()
    shutil.rmtree(tmp_path / "cache")
    assert fastloop._C._video_info(videos[0]) == info


def test_a_rewritten_video_is_indexed_afresh(videos, clips, tmp_path):
    _batches(videos, workers=1)
    shutil.copyfile(clips / "short.mp4", videos[1])  # 10 frames where there were 90: size and mtime change
    assert fastloop._C._video_info(videos[1])["frames"] == 10  # the process's index of it is stale too
    fastloop._C._video_index_forget()
    before = fastloop._C._video_index_counts()
    rewritten = _batches(videos, workers=2)
    counts = _delta(before)
    assert counts["scanned"] == 0 and counts["cache_read"] >= 4  # the rewrite's index was written above
    fresh_dir = tmp_path / "fresh"
    with pytest.MonkeyPatch.context() as patch:  # the same videos indexed from scratch
        patch.setenv("FASTLOOP_CACHE", str(fresh_dir))
        fastloop._C._video_index_forget()
        assert _equal(rewritten, _batches(videos, workers=1))
    assert fastloop._C._video_info(videos[1])["frames"] == 10


def test_a_damaged_cache_file_is_ignored_and_rebuilt(videos, tmp_path):
    first = _batches(videos, workers=1)
    files = _cache_files(tmp_path)
    flipped = bytearray(files[0].read_bytes())
    flipped[len(flipped) // 2] ^= 0x40  # a bit in a frame's time: the CRC-32 no longer matches
    files[0].write_bytes(bytes(flipped))
    files[1].write_bytes(files[1].read_bytes()[:-30])  # truncated
    files[2].write_bytes(files[3].read_bytes())  # another video's index, whole
    files[3].write_bytes(b"")
    fastloop._C._video_index_forget()
    before = fastloop._C._video_index_counts()
    second = _batches(videos, workers=1)  # one thread: each video indexed once, by it or by the Loader's set-up
    assert _delta(before) == {"scanned": 4, "cache_read": 0, "cache_written": 4}  # none trusted, each rewritten
    assert _equal(first, second)
    fastloop._C._video_index_forget()
    before = fastloop._C._video_index_counts()
    assert _equal(first, _batches(videos, workers=2))  # rewritten whole: read back
    counts = _delta(before)
    assert counts["scanned"] == 0 and counts["cache_read"] >= 4


def test_an_unwritable_cache_goes_without_files(videos, tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("FASTLOOP_CACHE", str(blocked))
    before = fastloop._C._video_index_counts()
    assert len(_batches(videos, workers=2)) == 2
    counts = _delta(before)
    assert counts["scanned"] >= 4 and counts["cache_written"] == 0
