"""fastloop.video_shards over tar shards of videos in object storage (a SeaweedFS S3 gateway on loopback,
tests/tools/remote_store.py): the shards fetched by the remote shards' machinery, each video decoded from its
fetched member as a local shard's is. The same frames, presentation times and labels as the same shards on disk
(1 and 2 workers), webdataset's order when shuffled (shards split across ranks), a state_dict resume and a pickled
Loader, the member indices cached under
their bytes' checksum, and a missing shard, a member that is not a video and a truncated shard named."""

import io
import pathlib
import pickle
import sys
import tarfile

import pytest
import torch

fastloop = pytest.importorskip("fastloop")
from torchvision.transforms import v2  # noqa: E402

from conftest import run  # noqa: E402
from video_data import clip_paths, make_clips  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import remote_store  # noqa: E402

TRANSFORM = v2.Compose([v2.RandomResizedCrop(32, antialias=True), v2.RandomHorizontalFlip(),
                        v2.ToDtype(torch.float32, scale=True)])
CLIPS = dict(num_frames_per_clip=4, num_indices_between_frames=2, num_clips=2)
URL = "s3://shards/videos/train-{000000..000001}.tar"


def _shard(path: pathlib.Path, members) -> None:
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def _indexed(folder: pathlib.Path, cli) -> pathlib.Path:
    run([cli, "pack", "--index-only", folder])
    return folder


@pytest.fixture(scope="module")
def local(tmp_path_factory, cli) -> pathlib.Path:
    """Two shards of two videos each (labels 0 0 | 1 1), with the shards.idx `fastloop pack --index-only` writes."""
    files = clip_paths(make_clips(tmp_path_factory.mktemp("videos")))
    folder = tmp_path_factory.mktemp("video_shards")
    for s in range(2):
        members = []
        for k in range(2):
            members += [(f"v{s}{k}.mp4", pathlib.Path(files[2 * s + k]).read_bytes()), (f"v{s}{k}.cls", str(s).encode())]
        _shard(folder / f"train-{s:06d}.tar", members)
    return _indexed(folder, cli)


@pytest.fixture(scope="module")
def store(local, tmp_path_factory, cli):
    try:
        weed = remote_store.weed_program()
    except FileNotFoundError as missing:
        pytest.skip(str(missing))
    work = tmp_path_factory.mktemp("weed")
    s3 = remote_store.SeaweedS3(weed, work)
    try:
        s3.upload(local, "videos")
        good = (local / "train-000000.tar").read_bytes()
        with tarfile.open(local / "train-000000.tar") as archive:
            video = archive.extractfile("v00.mp4").read()
        bad = work / "bad"  # shard 0 as it is; shard 1's second video is not a video
        bad.mkdir()
        (bad / "train-000000.tar").write_bytes(good)
        _shard(bad / "train-000001.tar", [("j0.mp4", video), ("j0.cls", b"1"),
                                          ("j1.mp4", bytes(range(256)) * 64), ("j1.cls", b"1")])
        s3.upload(_indexed(bad, cli), "bad")
        cut = work / "cut"  # the index of the whole shards, shard 1 cut in half on the server; shard 2 missing
        cut.mkdir()
        for name in ("train-000000.tar", "train-000001.tar", "shards.idx"):
            (cut / name).write_bytes((local / name).read_bytes())
        (cut / "train-000002.tar").write_bytes(good)
        _indexed(cut, cli)
        data = (cut / "train-000001.tar").read_bytes()
        (cut / "train-000001.tar").write_bytes(data[:len(data) // 2])
        (cut / "train-000002.tar").unlink()
        s3.upload(cut, "cut")
        yield s3
    finally:
        s3.close()


@pytest.fixture
def signed(store, monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", remote_store.ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", remote_store.SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", remote_store.REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", store.endpoint)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("FASTLOOP_CACHE", str(tmp_path / "cache"))  # the video index files of this test alone
    return store


def _batches(dataset, **kwargs):
    loader = fastloop.Loader(dataset, transform=TRANSFORM, batch_size=4, seed=5, **kwargs)
    return loader, [(x.clone(), y.clone()) for x, y in loader]


def _samples(batches):
    return [(x[b], int(y[b])) for x, y in batches for b in range(len(y))]


@pytest.mark.parametrize("workers", [1, 2])
def test_s3_clips_equal_those_of_the_same_shards_on_disk(signed, local, workers):
    remote = fastloop.video_shards(URL, **CLIPS)
    assert remote.paths == [f"s3://shards/videos/train-00000{s}.tar/#{k}" for s in range(2) for k in range(2)]
    assert len(remote) == 8 and remote.classes == ["0", "1"]
    _, want = _batches(fastloop.video_shards(local, **CLIPS), workers=1, shuffle=False)
    loader, got = _batches(remote, workers=workers, shuffle=False)
    assert len(got) == len(want) == 2
    for (x, y), (wx, wy) in zip(got, want):
        assert torch.equal(y, wy) and torch.equal(x, wx)
    for k, name in enumerate(remote.paths):  # while the loader lives, its videos read as the local members
        member = f"{local}/train-00000{k // 2}.tar/v{k // 2}{k % 2}.mp4"
        assert fastloop._C._video_info(name) == fastloop._C._video_info(member)
        frames, pts = fastloop._C._video_frames(name, [0, 7, 40, 3])
        want_frames, want_pts = fastloop._C._video_frames(member, [0, 7, 40, 3])
        assert torch.equal(frames, want_frames) and pts == want_pts
    del loader


def test_shuffled_epochs_read_whole_shards_per_rank_in_any_worker_count(signed, local):
    _, ordered = _batches(fastloop.video_shards(local, **CLIPS), workers=1, shuffle=False)
    every = _samples(ordered)  # sample i's clip and draws do not depend on the order it is read in
    remote = fastloop.video_shards(URL, **CLIPS)
    _, one = _batches(remote, workers=1)
    _, two = _batches(remote, workers=2)
    assert all(torch.equal(a, b) for (a, _), (b, _) in zip(one, two)) and len(one) == len(two) == 2

    def position(sample):
        return next(i for i, (x, y) in enumerate(every) if y == sample[1] and torch.equal(x, sample[0]))

    read = [position(s) for s in _samples(one)]
    assert sorted(read) == list(range(8))
    assert all(read[2 * j + 1] == read[2 * j] + 1 for j in range(4))  # a video's two clips one after the other
    shards_of_ranks = []
    for rank in range(2):
        _, mine = _batches(remote, workers=1, rank=rank, world_size=2)
        shards_of_ranks.append({position(s) // 4 for s in _samples(mine)})
    assert shards_of_ranks in ([{0}, {1}], [{1}, {0}])  # each rank reads one whole shard


def test_state_dict_resumes_and_a_pickled_loader_refetches(signed):
    remote = fastloop.video_shards(URL, **CLIPS)

    def loader(workers):
        return fastloop.Loader(remote, transform=TRANSFORM, batch_size=2, seed=3, workers=workers)

    whole = [x.clone() for x, _ in loader(1)]
    assert len(whole) == 4
    first = loader(2)
    it = iter(first)
    next(it)
    state = first.state_dict()
    del it, first
    resumed = loader(1)
    resumed.load_state_dict(state)
    rest = [x.clone() for x, _ in resumed]
    assert len(rest) == 3 and all(torch.equal(a, b) for a, b in zip(rest, whole[1:]))
    copy = pickle.loads(pickle.dumps(loader(1)))
    assert torch.equal(next(iter(copy))[0], whole[0])


def test_member_indices_are_cached_under_their_bytes(signed):
    fastloop._C._video_index_forget()
    before = fastloop._C._video_index_counts()
    _batches(fastloop.video_shards(URL, **CLIPS), workers=1, shuffle=False)
    middle = fastloop._C._video_index_counts()
    assert middle["cache_written"] - before["cache_written"] == 4
    fastloop._C._video_index_forget()
    _batches(fastloop.video_shards(URL, **CLIPS), workers=1, shuffle=False)
    after = fastloop._C._video_index_counts()
    assert after["cache_read"] - middle["cache_read"] == 4 and after["scanned"] == middle["scanned"]
    fastloop._C._video_index_forget()


def test_a_missing_shard_a_member_not_a_video_and_a_cut_shard_are_named(signed):
    with pytest.raises(ValueError, match=r"s3://shards/bad/train-000001.tar/#1: FFmpeg cannot open it as a video"):
        _batches(fastloop.video_shards("s3://shards/bad/train-{000000..000001}.tar", **CLIPS), workers=1,
                 shuffle=False)
    loader, got = _batches(fastloop.video_shards("s3://shards/bad/train-{000000..000001}.tar", num_clips=1,
                                                 num_frames_per_clip=4), workers=1, shuffle=False,
                           bad_image_policy="skip")
    assert loader.samples_skipped == 1 and [y.tolist() for _, y in got] == [[0, 0, 1, 0]]
    with pytest.raises(ValueError, match=r"s3://shards/cut/train-000001.tar: .*truncated"):
        _batches(fastloop.video_shards("s3://shards/cut/train-{000000..000001}.tar", **CLIPS), workers=1,
                 shuffle=False)
    with pytest.raises(ValueError, match=r"s3://shards/cut/train-000002.tar \(http://127.0.0.1:\d+/shards/cut/"
                                         r"train-000002.tar\): 404 NoSuchKey: no such object"):
        _batches(fastloop.video_shards("s3://shards/cut/train-000002.tar", **CLIPS), workers=1, shuffle=False)
    with pytest.raises(ValueError, match=r"s3://shards/nothing/shards.idx: no shard index"):
        fastloop.video_shards("s3://shards/nothing/train-000000.tar")
    with pytest.raises(ValueError, match="regular_timestamps"):
        fastloop.video_shards(URL, sampler="regular_timestamps", seconds_between_clip_starts=1.0)
    with pytest.raises(TypeError, match="read through fastloop.Loader"):
        fastloop.video_shards(URL)[0]
