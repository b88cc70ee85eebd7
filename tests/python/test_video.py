"""Video clips (fastloop.VideoFiles / VideoFolder through fastloop.Loader) against torchcodec from .venv: the same
frames and presentation times for the same indices, torchcodec's sampler definitions, the same batches for any
number of workers, resume, the v2 pipeline with one draw per clip, and bad input named. The videos are made by
video_data.py with the `ffmpeg` CLI (Debian's FFmpeg 5.1, the libraries fastloop opens at run time)."""

import os
import pathlib
import pickle
import shutil
import subprocess
import sys

import pytest
import torch

fastloop = pytest.importorskip("fastloop")
torchcodec = pytest.importorskip("torchcodec")
from torchcodec.decoders import VideoDecoder  # noqa: E402
from torchcodec.samplers import clips_at_regular_indices  # noqa: E402
from torchvision.transforms import v2  # noqa: E402

from video_data import clip_paths as _clip_paths  # noqa: E402
from video_data import ffmpeg as _ffmpeg  # noqa: E402
from video_data import make_videos  # noqa: E402


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> pathlib.Path:
    return make_videos(tmp_path_factory.mktemp("videos"))


@pytest.mark.parametrize("name", ["clips/pattern/0.mp4", "odd_width.mp4", "vp9.webm", "short.mp4", "hevc.mkv",
                                  "av1.mkv", "mpeg4.avi"])
def test_frames_and_times_equal_torchcodec(videos, name):
    path = str(videos / name)
    decoder = VideoDecoder(path, seek_mode="exact")
    n = len(decoder)
    info = fastloop._C._video_info(path)
    if name.endswith(".avi"):
        # AVI carries no presentation times: FFmpeg's decoder guesses them, and gives none for the last frame, which
        # torchcodec lists but cannot decode ("Requested next frame while there are no more frames left to
        # decode"); fastloop's index (made by decoding such a stream) lists the frames that have a time. After a
        # seek torchcodec's get_frames_at gives the frame before the one asked for (frame 5 is its frame 4's bytes
        # and time), so fastloop is compared with torchcodec's decode from the start, which it equals.
        assert info["frames"] == n - 1
        n -= 1
    else:
        assert info["frames"] == n
    # across keyframes, backwards, repeated, and the last frame
    indices = sorted({0, 1, 5, n // 3, n // 3 + 1, n // 2, n - 1}) + [n - 1, 2, 0]
    ours, pts = fastloop._C._video_frames(path, indices)
    if name.endswith(".avi"):  # torchcodec's seeks there give a neighbouring frame: its front-to-back decode
        whole = decoder.get_frames_at(indices=list(range(n)))
        theirs = type(whole)(whole.data[indices], whole.pts_seconds[indices], whole.duration_seconds[indices])
    else:
        theirs = decoder.get_frames_at(indices=indices)
    assert pts == pytest.approx(theirs.pts_seconds.tolist(), abs=1e-9)
    assert ours.shape == theirs.data.shape
    diff = (ours.int() - theirs.data.int()).abs()
    # libswscale's bilinear YUV->RGB at the frame's size with the frame's matrix, as torchcodec converts (its swscale
    # path for widths that are a multiple of 32, its filtergraph otherwise): the same bytes.
    assert diff.max().item() == 0, f"{name}: max difference {diff.max().item()}, {(diff > 0).float().mean():.4f} differ"


def test_regular_clips_are_torchcodecs(videos):
    path = _clip_paths(videos)[0]
    decoder = VideoDecoder(path, seek_mode="exact")
    for clips, per_clip, between, policy, file in ((3, 4, 2, "repeat_last", path), (5, 16, 1, "repeat_last", path),
                                                  (1, 16, 1, "repeat_last", str(videos / "short.mp4")),
                                                  (2, 6, 3, "wrap", str(videos / "short.mp4"))):
        dataset = fastloop.VideoFiles([file], [0], num_frames_per_clip=per_clip, num_indices_between_frames=between,
                                      num_clips=clips, sampler="regular", policy=policy)
        theirs = clips_at_regular_indices(VideoDecoder(file, seek_mode="exact"), num_clips=clips,
                                          num_frames_per_clip=per_clip, num_indices_between_frames=between,
                                          policy=policy)
        pts = fastloop._C._video_info(file)["pts_seconds"]
        for c in range(clips):
            assert [pts[f] for f in dataset.clip_frames(c)] == pytest.approx(theirs.pts_seconds[c].tolist())
    assert len(decoder) == 90


def test_random_clips_follow_the_definition(videos):
    path = _clip_paths(videos)[0]  # 90 frames
    dataset = fastloop.VideoFiles([path], [0], num_frames_per_clip=8, num_indices_between_frames=3, num_clips=4)
    starts = set()
    for epoch in range(8):
        for c in range(4):
            frames = dataset.clip_frames(c, seed=5, epoch=epoch)
            assert len(frames) == 8 and all(b - a == 3 for a, b in zip(frames, frames[1:]))
            assert 0 <= frames[0] and frames[-1] <= 89  # span 22: starts in [0, 68]
            starts.add(frames[0])
        assert dataset.clip_frames(0, seed=5, epoch=epoch) == dataset.clip_frames(0, seed=5, epoch=epoch)
    assert len(starts) > 8  # drawn anew per epoch and clip
    short = fastloop.VideoFiles([str(videos / "short.mp4")], [0], num_frames_per_clip=16)
    assert short.clip_frames(0, seed=1, epoch=3) == list(range(10)) + [9] * 6  # starts at 0, repeat_last


def test_random_timestamp_clips_follow_torchcodecs_definition(videos):
    """clips_at_random_timestamps: the stream's begin, end and average fps as torchcodec's scan gives them; clip
    starts inside [begin, end - (frames - 1) * step); each frame the one played at start + k * step; a video
    shorter than a clip refused, as torchcodec refuses it."""
    from torchcodec.samplers import clips_at_random_timestamps

    path = _clip_paths(videos)[0]
    meta = VideoDecoder(path, seek_mode="exact").metadata
    info = fastloop._C._video_info(path)
    assert (info["begin_seconds"], info["end_seconds"]) == pytest.approx((meta.begin_stream_seconds,
                                                                          meta.end_stream_seconds))
    assert info["frames"] / (info["end_seconds"] - info["begin_seconds"]) == pytest.approx(meta.average_fps)
    dataset = fastloop.VideoFiles([path], [0], num_frames_per_clip=5, num_clips=3, sampler="random_timestamps",
                                  seconds_between_frames=0.1)
    pts = info["pts_seconds"]
    starts = set()
    for epoch in range(6):
        for c in range(3):
            frames = dataset.clip_frames(c, seed=2, epoch=epoch)
            assert len(frames) == 5 and pts[frames[-1]] < info["end_seconds"]
            assert pts[frames[0]] < info["end_seconds"] - 4 * 0.1
            # frame k is played at start + 0.1 k, start within frame 0's display: 0.1 s = 3 frames on from it
            assert all(abs((pts[b] - pts[a]) - 0.1) < 1 / 30 + 1e-9 for a, b in zip(frames, frames[1:]))
            starts.add(frames[0])
    assert len(starts) > 6
    default = fastloop.VideoFiles([path], [0], num_frames_per_clip=4, sampler="random_timestamps")
    frames = default.clip_frames(0, seed=1)
    assert all(b - a == 1 for a, b in zip(frames, frames[1:]))  # one frame's duration apart
    timed = fastloop.VideoFiles(_clip_paths(videos), [0, 0, 1, 1], num_frames_per_clip=4, sampler="random_timestamps",
                                seconds_between_frames=0.2)
    one = [x for x, _ in _loader(timed, TRAIN, workers=1, seed=6)]
    two = [x for x, _ in _loader(timed, TRAIN, workers=2, seed=6)]
    assert len(one) == 2 and all(torch.equal(a, b) for a, b in zip(one, two))
    short = str(videos / "short.mp4")  # 10 frames: a clip of 16 does not fit
    with pytest.raises(ValueError, match="sampling_range_start"):
        clips_at_random_timestamps(VideoDecoder(short), num_frames_per_clip=16)
    with pytest.raises(ValueError, match=r"short\.mp4: sampling_range_start .* shorter than a clip"):
        fastloop.VideoFiles([short], [0], sampler="random_timestamps").clip_frames(0)


def test_regular_timestamp_clips_are_torchcodecs(videos):
    """clips_at_regular_timestamps: clip starts torch.arange(range start, range end, seconds_between_clip_starts),
    each frame the one played at start + k * seconds_between_frames; fastloop's clips, clip for clip, have the pts
    of torchcodec's (equal floats: the same arange, the same pts * num / den), the same number of them per video,
    the default step (1 / average fps) putting every time on a frame's start, the policies past the end."""
    from torchcodec.samplers import clips_at_regular_timestamps

    clip = _clip_paths(videos)[0]  # 3 s at 30 fps
    for file, kwargs in ((clip, dict(seconds_between_clip_starts=0.5, num_frames_per_clip=4)),
                         (clip, dict(seconds_between_clip_starts=0.3, num_frames_per_clip=3, seconds_between_frames=0.1,
                                     sampling_range_start=0.25, sampling_range_end=2.0)),
                         (clip, dict(seconds_between_clip_starts=0.7, num_frames_per_clip=6, seconds_between_frames=0.45,
                                     sampling_range_end=3.5)),  # clips past the end: repeat_last
                         (clip, dict(seconds_between_clip_starts=0.7, num_frames_per_clip=6, seconds_between_frames=0.45,
                                     sampling_range_end=3.5, policy="wrap")),
                         (str(videos / "odd_width.mp4"), dict(seconds_between_clip_starts=1 / 3, num_frames_per_clip=5)),
                         (str(videos / "vp9.webm"), dict(seconds_between_clip_starts=0.25, num_frames_per_clip=8))):
        theirs = clips_at_regular_timestamps(VideoDecoder(file, seek_mode="exact"), **kwargs)
        dataset = fastloop.VideoFiles([file], [0], sampler="regular_timestamps", **kwargs)
        pts = fastloop._C._video_info(file)["pts_seconds"]
        assert len(dataset) == theirs.data.shape[0] > 1, kwargs
        for c in range(len(dataset)):
            assert [pts[f] for f in dataset.clip_frames(c)] == theirs.pts_seconds[c].tolist(), (kwargs, c)
    assert torch.equal(dataset[2][0], theirs.data[2])  # and the frames decoded equal
    files = fastloop.VideoFiles(_clip_paths(videos) + [str(videos / "odd_width.mp4")], [0, 0, 1, 1, 2],
                                num_frames_per_clip=3, sampler="regular_timestamps", seconds_between_clip_starts=1.0)
    assert files.clip_offsets == [0, 3, 6, 9, 12, 14] and files.clip_frames(13)[0] == 25  # 1.0 s at 25 fps
    one = [(x, y) for x, y in _loader(files, TRAIN, workers=1, seed=2, shuffle=False, drop_last=False)]
    two = [(x, y) for x, y in _loader(files, TRAIN, workers=2, seed=2, shuffle=False, drop_last=False)]
    assert torch.cat([y for _, y in one]).tolist() == [0] * 6 + [1] * 6 + [2] * 2
    assert all(torch.equal(a, c) and torch.equal(b, d) for (a, b), (c, d) in zip(one, two))
    short = str(videos / "short.mp4")  # 10 frames: a clip of 16 does not fit
    with pytest.raises(ValueError, match="sampling_range_start"):
        clips_at_regular_timestamps(VideoDecoder(short), seconds_between_clip_starts=0.1, num_frames_per_clip=16)
    # its clips are counted when the data set is made: it keeps one sample, which says why when read
    shorts = fastloop.VideoFiles([short], [0], sampler="regular_timestamps", seconds_between_clip_starts=0.1)
    assert len(shorts) == 1
    with pytest.raises(ValueError, match=r"short\.mp4: sampling_range_start .* shorter than a clip"):
        shorts.clip_frames(0)
    with pytest.raises(ValueError, match="takes no num_clips"):
        fastloop.VideoFiles([clip], [0], sampler="regular_timestamps", seconds_between_clip_starts=1.0, num_clips=2)
    with pytest.raises(ValueError, match="seconds_between_clip_starts"):
        fastloop.VideoFiles([clip], [0], sampler="regular_timestamps")


def _loader(dataset, transform, **kwargs):
    return fastloop.Loader(dataset, transform=transform, batch_size=2, **kwargs)


TRAIN = v2.Compose([v2.RandomResizedCrop(48, antialias=True), v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32, scale=True),
                    v2.Normalize([0.45, 0.45, 0.45], [0.225, 0.225, 0.225])])


def test_batches_equal_for_any_worker_count_and_resume(videos):
    dataset = fastloop.VideoFiles(_clip_paths(videos), [0, 0, 1, 1], num_frames_per_clip=6,
                                  num_indices_between_frames=2, num_clips=2)
    one = [(x.clone(), y.clone()) for x, y in _loader(dataset, TRAIN, workers=1, seed=3)]
    two = [(x.clone(), y.clone()) for x, y in _loader(dataset, TRAIN, workers=2, seed=3)]
    assert len(one) == 4 and one[0][0].shape == (2, 6, 3, 48, 48) and one[0][0].dtype == torch.float32
    for (x1, y1), (x2, y2) in zip(one, two):
        assert torch.equal(x1, x2) and torch.equal(y1, y2)
    assert sorted(torch.cat([y for _, y in one]).tolist()) == [0, 0, 0, 0, 1, 1, 1, 1]
    other = [x for x, _ in _loader(dataset, TRAIN, workers=1, seed=4)]
    assert not torch.equal(one[0][0], other[0])
    # state_dict after one batch resumes at the second, bit for bit
    loader = _loader(dataset, TRAIN, workers=2, seed=3)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    resumed = _loader(dataset, TRAIN, workers=1, seed=3)
    resumed.load_state_dict(state)
    rest = [x for x, _ in resumed]
    assert len(rest) == 3 and all(torch.equal(a, b[0]) for a, b in zip(rest, one[1:]))
    # a pickled Loader makes the same batches
    copy = pickle.loads(pickle.dumps(_loader(dataset, TRAIN, workers=1, seed=3)))
    assert torch.equal(next(iter(copy))[0], one[0][0])


def test_clips_equal_torchvision_on_torchcodec_frames(videos):
    """A deterministic pipeline: fastloop's batch equals torchvision's transform of torchcodec's frames of the
    same clip, within the resize's stated parity (1 level of 255 where ATen's uint8 resize is not AVX2's)."""
    transform = v2.Compose([v2.Resize(40, antialias=True), v2.CenterCrop(36), v2.ToDtype(torch.float32, scale=True),
                            v2.Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.3])])
    dataset = fastloop.VideoFiles(_clip_paths(videos), [0, 0, 1, 1], num_frames_per_clip=5,
                                  num_indices_between_frames=3, num_clips=2, output_format="CTHW")
    loader = _loader(dataset, transform, workers=2, seed=9, shuffle=False)
    index = 0
    for clips, labels in loader:
        assert clips.shape[1:] == (3, 5, 36, 36)
        for clip in clips:
            frames = dataset.clip_frames(index, seed=9, epoch=0)
            decoder = VideoDecoder(dataset.paths[index // 2], seek_mode="exact")
            from torchvision import tv_tensors
            expected = transform(tv_tensors.Video(decoder.get_frames_at(indices=frames).data)).permute(1, 0, 2, 3)
            assert (clip - expected).abs().max().item() <= 1.01 / 255 / 0.2
            index += 1
    assert index == 8


def test_one_draw_per_clip(videos):
    """Every frame of a still video is the same bytes: after RandomResizedCrop, flip and ColorJitter each clip's
    frames must still be equal (one draw per clip), and clips must differ (a draw per sample)."""
    transform = v2.Compose([v2.RandomResizedCrop(32, antialias=True), v2.RandomHorizontalFlip(),
                            v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.ToDtype(torch.float32, scale=True)])
    dataset = fastloop.VideoFiles([str(videos / "static.mp4")] * 4, [0, 1, 2, 3], num_frames_per_clip=8)
    clips, _ = next(iter(fastloop.Loader(dataset, transform=transform, batch_size=4, workers=1, seed=1)))
    for clip in clips:
        assert all(torch.equal(clip[0], frame) for frame in clip[1:])
    assert not all(torch.equal(clips[0], clip) for clip in clips[1:])


def test_uniform_temporal_subsample_picks_frames_before_decoding(videos):
    base = [v2.Resize(32, antialias=True), v2.CenterCrop(32), v2.ToDtype(torch.float32, scale=True)]
    dataset = fastloop.VideoFiles(_clip_paths(videos)[:2], [0, 1], num_frames_per_clip=10, sampler="regular")
    whole, _ = next(iter(_loader(dataset, v2.Compose(base), workers=1, shuffle=False)))
    sub, _ = next(iter(_loader(dataset, v2.Compose([v2.UniformTemporalSubsample(4), *base]), workers=1,
                               shuffle=False)))
    assert sub.shape == (2, 4, 3, 32, 32)
    assert torch.equal(sub, v2.UniformTemporalSubsample(4)(whole))


def test_video_folder_layouts(videos, tmp_path):
    folder = fastloop.VideoFolder(videos / "clips", num_frames_per_clip=4)
    assert folder.classes == ["pattern", "rgb"] and folder.labels == [0, 0, 1, 1]
    video, label = folder[3]
    assert type(video).__name__ == "Video" and video.shape == (4, 3, 240, 320) and video.dtype == torch.uint8
    assert label == 1
    kinetics = tmp_path / "kinetics"
    shutil.copytree(videos / "clips", kinetics / "train")
    assert fastloop.VideoFolder(kinetics, split="train").paths == [str(kinetics / "train" / p.relative_to(videos / "clips"))
                                                                   for p in map(pathlib.Path, _clip_paths(videos))]
    listed = tmp_path / "list.csv"
    listed.write_text("path,label\n" + "".join(f"{os.path.relpath(p, tmp_path)},{p.split(os.sep)[-2]}\n"
                                                for p in _clip_paths(videos)))
    from_csv = fastloop.video_csv(listed, num_frames_per_clip=4)
    assert from_csv.classes == ["pattern", "rgb"] and from_csv.labels == [0, 0, 1, 1]


def test_bad_input_is_named(videos, tmp_path):
    good = _clip_paths(videos)[0]
    faststart = tmp_path / "faststart.mp4"  # its index (moov) first: a cut leaves it whole
    _ffmpeg("-i", good, "-c", "copy", "-movflags", "+faststart", str(faststart))
    truncated, headless = tmp_path / "truncated.mp4", tmp_path / "headless.mp4"
    truncated.write_bytes(faststart.read_bytes()[: faststart.stat().st_size // 3])
    headless.write_bytes(pathlib.Path(good).read_bytes()[: pathlib.Path(good).stat().st_size // 3])  # moov cut off
    damaged = tmp_path / "damaged.mp4"  # its middle overwritten: FFmpeg conceals what it can, no crash
    data = bytearray(faststart.read_bytes())
    data[len(data) // 2: len(data) // 2 + 4096] = bytes(range(256)) * 16
    damaged.write_bytes(bytes(data))
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(bytes(range(256)) * 64)
    audio = tmp_path / "audio.m4a"
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", str(audio))
    for path, words in ((garbage, "cannot open it as a video"), (audio, "no video stream"),
                        (headless, "cannot open it as a video")):
        with pytest.raises(ValueError, match=str(path).replace(".", r"\.") + ".*" + words):
            fastloop._C._video_info(str(path))
        with pytest.raises(ValueError, match=str(path).replace(".", r"\.")):
            next(iter(_loader(fastloop.VideoFiles([str(path)] * 2, [0, 1]), TRAIN, workers=2)))
    # a truncated file: what is left is indexed; a frame past it is named with its time, by the Loader too
    info = fastloop._C._video_info(str(truncated))
    assert 0 < info["frames"] < 90
    with pytest.raises(ValueError, match=r"truncated\.mp4: frame 89 is outside the video's \d+ frames"):
        fastloop._C._video_frames(str(truncated), [89])
    last = info["frames"] - 1
    try:  # the last packet indexed may itself be cut short: decoded, or named with its time
        assert fastloop._C._video_frames(str(truncated), [0, last])[0].shape[0] == 2
    except ValueError as error:
        assert f"truncated.mp4: frame {last} (" in str(error) and "could not be decoded" in str(error)
    with pytest.raises(ValueError, match=r"truncated\.mp4: .*frame"):
        fastloop.Loader(fastloop.VideoFiles([str(truncated)] * 2, [0, 1], num_frames_per_clip=90,
                                            policy="error"), transform=TRAIN, batch_size=2).__iter__().__next__()
    frames, _ = fastloop._C._video_frames(str(damaged), list(range(0, 90, 7)))
    assert frames.shape == (13, 3, 240, 320)
    with pytest.raises(ValueError, match="no such video file"):
        fastloop.VideoFiles([str(tmp_path / "missing.mp4")], [0])
    listed = tmp_path / "bad.csv"
    listed.write_text(f"path,label\n{good},0\nmissing.mp4,1\n")
    with pytest.raises(ValueError, match=r"bad\.csv, row 3: .*missing\.mp4: no such video file"):
        fastloop.video_csv(listed)
    with pytest.raises(ValueError, match=r"short\.mp4: a clip of 16 frames .*past the video's 10 frames"):
        next(iter(_loader(fastloop.VideoFiles([str(videos / "short.mp4")] * 2, [0, 1], policy="error"), TRAIN)))
    with pytest.raises(TypeError, match="FiveCrop"):
        _loader(fastloop.VideoFiles([good], [0]), v2.Compose([v2.FiveCrop(32), v2.ToDtype(torch.float32, scale=True)]))


def test_getting_started_video_example_runs(videos, tmp_path):
    """docs/getting-started.md's video example, run as written on a small Kinetics-style folder, shorter clips."""
    import re

    from conftest import ROOT

    page = (ROOT / "docs/getting-started.md").read_text()
    section = page[page.index("### Video clips"):]
    block = re.search(r"^```python\n(.*?)^```$", section, re.M | re.S).group(1)
    shutil.copytree(videos / "clips", tmp_path / "kinetics" / "train")
    for written, run in (('"/data/kinetics"', repr(str(tmp_path / "kinetics"))), ("num_frames_per_clip=16", "num_frames_per_clip=4"),
                         ("RandomResizedCrop(112)", "RandomResizedCrop(32)"), ("batch_size=8", "batch_size=2, workers=1")):
        assert written in block, written
        block = block.replace(written, run)
    scope = {}
    exec(compile(block, "getting-started.md", "exec"), scope)
    assert scope["step"] == 1 and scope["clips"].shape == (2, 3, 4, 32, 32)


def test_without_ffmpeg_video_names_what_to_install_and_images_still_load(videos, image_folder):
    """FFmpeg's libavcodec hidden (/dev/null bound over it in a user and mount namespace): a video source raises
    naming the library and what to install; an image folder loads as before."""
    lib = pathlib.Path("/usr/lib/x86_64-linux-gnu/libavcodec.so.59")
    if shutil.which("unshare") is None or not lib.exists():
        pytest.skip("needs unshare(1) and Debian's libavcodec59 to hide it")
    script = f"""
import fastloop, torch
images, labels = next(iter(fastloop.Loader("imagefolder:{image_folder}", batch_size=2, workers=1, image_size=32)))
assert images.shape == (2, 3, 32, 32)
try:
    next(iter(fastloop.Loader(fastloop.VideoFiles([{str(_clip_paths(videos)[0])!r}] * 2, [0, 1]),
                              transform="ToDtype(torch.float32, scale=True)", batch_size=2, workers=1)))
except RuntimeError as error:
    print(error)
"""
    done = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount --bind /dev/null {lib} && exec \"$0\" -c \"$1\"",
                           sys.executable, script],
                          capture_output=True, text=True, env=os.environ)
    if "mount" in done.stderr and done.returncode != 0 and "Operation not permitted" in done.stderr:
        pytest.skip(f"no user namespaces here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert "libavcodec.so.59 did not load" in done.stdout and "apt-get install libavformat59 libavcodec59" in done.stdout
