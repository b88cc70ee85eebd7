"""Parts of videos: the index samplers' sampling_range_start/_end (frame indices) against torchcodec's, a CSV list's
start and end seconds per video (fastloop.video_csv, VideoFiles(ranges=)) for every sampler, each bad value named
with its file, row and column, and regular_timestamps over a video that cannot be indexed under both
bad_image_policy values. The videos are make_clips' (3 s at 30 fps, 90 frames; short.mp4, 10 frames)."""

import math
import pathlib

import pytest
import torch

fastloop = pytest.importorskip("fastloop")
pytest.importorskip("torchcodec")
from torchcodec.decoders import VideoDecoder  # noqa: E402
from torchcodec.samplers import clips_at_regular_indices, clips_at_regular_timestamps  # noqa: E402
from torchvision.transforms import v2  # noqa: E402

from video_data import clip_paths, make_clips  # noqa: E402

TO_FLOAT = v2.ToDtype(torch.float32, scale=True)


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> pathlib.Path:
    return make_clips(tmp_path_factory.mktemp("videos"))


def _pts(path):
    return fastloop._C._video_info(path)["pts_seconds"]


@pytest.mark.parametrize("kwargs", [
    dict(num_clips=4, num_frames_per_clip=5, num_indices_between_frames=2, sampling_range_start=10,
         sampling_range_end=50),
    dict(num_clips=3, num_frames_per_clip=4, sampling_range_start=-30),  # the last 30 frames
    dict(num_clips=5, num_frames_per_clip=6, num_indices_between_frames=3, sampling_range_start=70,
         sampling_range_end=-1, policy="wrap"),  # clips past the end: wrapped
    dict(num_clips=7, num_frames_per_clip=8, sampling_range_end=200),  # an end past the last frame: the last
    dict(num_clips=2, num_frames_per_clip=3, sampling_range_start=88, sampling_range_end=89),
])
def test_index_sampling_range_is_torchcodecs(videos, kwargs):
    path = clip_paths(videos)[0]
    theirs = clips_at_regular_indices(VideoDecoder(path, seek_mode="exact"), **kwargs)
    sampler_args = {k: v for k, v in kwargs.items()}
    dataset = fastloop.VideoFiles([path], [0], sampler="regular", **sampler_args)
    pts = _pts(path)
    assert len(dataset) == kwargs["num_clips"]
    for c in range(len(dataset)):
        assert [pts[f] for f in dataset.clip_frames(c)] == theirs.pts_seconds[c].tolist(), (kwargs, c)
    # the random sampler: starts drawn inside the same range (torchcodec's randint(start, end))
    random = fastloop.VideoFiles([path], [0], sampler="random", **sampler_args)
    start, end = kwargs.get("sampling_range_start", 0), kwargs.get("sampling_range_end")
    start = start + 90 if start < 0 else start
    span = kwargs.get("num_indices_between_frames", 1) * (kwargs["num_frames_per_clip"] - 1) + 1
    end = max(90 - span + 1, 1) if end is None else min(end + 90 if end < 0 else end, 90)
    starts = {random.clip_frames(c, seed=3, epoch=e)[0] for e in range(6) for c in range(len(random))}
    assert starts <= set(range(start, end)) and (len(starts) > 1 or end - start == 1)


def test_index_sampling_range_refusals_are_torchcodecs(videos):
    path = clip_paths(videos)[0]
    for kwargs in (dict(sampling_range_start=90), dict(sampling_range_start=50, sampling_range_end=40),
                   dict(sampling_range_start=80, num_frames_per_clip=16)):
        with pytest.raises(ValueError) as theirs:
            clips_at_regular_indices(VideoDecoder(path), **kwargs)
        dataset = fastloop.VideoFiles([path], [0], sampler="regular", **kwargs)
        with pytest.raises(ValueError) as ours:
            dataset.clip_frames(0)
        assert str(ours.value) == f"{path}: {theirs.value}"
    with pytest.raises(ValueError, match=r"frame index \(int\)"):
        fastloop.VideoFiles([path], [0], sampler="regular", sampling_range_start=1.5)
    with pytest.raises(ValueError, match=r"a clip of 6 frames 3 apart from frame 80 runs past the video's 90 frames"):
        fastloop.VideoFiles([path], [0], sampler="regular", num_frames_per_clip=6, num_indices_between_frames=3,
                            sampling_range_start=80, sampling_range_end=-1, policy="error").clip_frames(0)


def _listing(tmp_path, rows, name="list.csv"):
    listing = tmp_path / name
    listing.write_text("path,label,start,end\n" + "".join(",".join(map(str, row)) + "\n" for row in rows))
    return listing


def test_csv_ranges_under_the_index_samplers(videos, tmp_path):
    """A row's [start, end) seconds: the frames whose pts lie in it (30 fps: [0.99, 1.99) is frames 30-59), clips in them
    as torchcodec's with sampling_range_start/_end over those frames; a part shorter than a clip starts at its first
    frame and is filled by the policy, or named with its row under 'error'."""
    paths = clip_paths(videos)
    listing = _listing(tmp_path, [(paths[0], "a", 0.99, 1.99), (paths[1], "a", 2.49, ""), (paths[2], "b", "", "0.49"),
                                  (paths[3], "b", "", "")])
    dataset = fastloop.video_csv(listing, num_frames_per_clip=4, num_indices_between_frames=2, num_clips=3,
                                 sampler="regular")
    assert dataset.ranges[0] == (0.99, 1.99) and math.isnan(dataset.ranges[1][1]) and math.isnan(dataset.ranges[3][0])
    for video, (first, last) in enumerate([(30, 59), (75, 89), (0, 14), (0, 89)]):
        span = 7  # 4 frames 2 apart
        theirs = clips_at_regular_indices(VideoDecoder(paths[video], seek_mode="exact"), num_clips=3,
                                          num_frames_per_clip=4, num_indices_between_frames=2,
                                          sampling_range_start=first, sampling_range_end=last - span + 2)
        pts = _pts(paths[video])
        for c in range(3):
            frames = dataset.clip_frames(3 * video + c)
            assert first <= min(frames) and max(frames) <= last
            assert [pts[f] for f in frames] == theirs.pts_seconds[c].tolist(), (video, c)
    randoms = fastloop.video_csv(listing, num_frames_per_clip=4, num_clips=2)
    for e in range(5):
        assert all(30 <= f <= 59 for c in range(2) for f in randoms.clip_frames(c, seed=1, epoch=e))
    short = _listing(tmp_path, [(paths[0], "a", 2.79, "")], "short.csv")  # frames 84-89: 6 for a clip of 8
    assert fastloop.video_csv(short, num_frames_per_clip=8).clip_frames(0) == [84, 85, 86, 87, 88, 89, 89, 89]
    assert fastloop.video_csv(short, num_frames_per_clip=8, policy="wrap").clip_frames(0)[6:] == [84, 85]
    with pytest.raises(ValueError, match=rf"short\.csv, row 2: {paths[0]}: a clip of 8 frames 1 apart from frame 84 "
                                         r"runs past frame 89, the last in its range \[2\.79 s, end\)"):
        fastloop.video_csv(short, num_frames_per_clip=8, policy="error").clip_frames(0)


def test_csv_ranges_under_the_time_samplers(videos, tmp_path):
    """A row's [start, end) is torchcodec's sampling_range_start=start, sampling_range_end=end - (frames - 1) *
    seconds_between_frames: regular_timestamps' clips equal torchcodec's with those, every frame's time in range."""
    paths = clip_paths(videos)
    listing = _listing(tmp_path, [(paths[0], 0, 1.0, 2.0), (paths[1], 0, 0.5, ""), (paths[2], 1, "", 1.5)])
    dataset = fastloop.video_csv(listing, num_frames_per_clip=4, sampler="regular_timestamps",
                                 seconds_between_clip_starts=0.25)
    step = 1 / VideoDecoder(paths[0], seek_mode="exact").metadata.average_fps
    offset = 0
    for video, (start, end) in enumerate([(1.0, 2.0), (0.5, None), (None, 1.5)]):
        decoder = VideoDecoder(paths[video], seek_mode="exact")
        start = decoder.metadata.begin_stream_seconds if start is None else start
        end = decoder.metadata.end_stream_seconds if end is None else end
        theirs = clips_at_regular_timestamps(decoder, seconds_between_clip_starts=0.25, num_frames_per_clip=4,
                                             sampling_range_start=start, sampling_range_end=end - 3 * step)
        count = dataset.clip_offsets[video + 1] - dataset.clip_offsets[video]
        assert count == theirs.data.shape[0] > 1
        pts = _pts(paths[video])
        for c in range(count):
            frames = dataset.clip_frames(offset + c)
            assert [pts[f] for f in frames] == theirs.pts_seconds[c].tolist()
            assert all(start - step < pts[f] < end for f in frames)
        offset += count
    randoms = fastloop.video_csv(listing, num_frames_per_clip=5, sampler="random_timestamps", num_clips=3,
                                 seconds_between_frames=0.1)
    pts = _pts(paths[0])
    for e in range(4):
        for c in range(3):
            frames = randoms.clip_frames(c, seed=2, epoch=e)
            assert all(1.0 - step < pts[f] < 2.0 for f in frames) and pts[frames[-1]] - pts[frames[0]] > 0.35
    short = _listing(tmp_path, [(paths[0], 0, 1.0, 1.1)], "short.csv")
    with pytest.raises(ValueError, match=rf"short\.csv, row 2: {paths[0]}: its range \[1 s, 1\.1 s\) holds 0\.1 s of "
                                         r"the video, less than a clip of 5 frames"):
        fastloop.video_csv(short, num_frames_per_clip=5, sampler="random_timestamps").clip_frames(0)


def test_csv_ranges_through_the_loader_at_1_and_2_workers(videos, tmp_path):
    paths = clip_paths(videos)
    listing = _listing(tmp_path, [(paths[0], 0, 0.99, 1.99), (paths[1], 0, "", 0.99), (paths[2], 1, 1.99, ""),
                                  (paths[3], 1, "", "")])
    dataset = fastloop.video_csv(listing, num_frames_per_clip=3, num_indices_between_frames=2, num_clips=2)
    epochs = []
    for workers in (1, 2):
        loader = fastloop.Loader(dataset, transform=TO_FLOAT, batch_size=4, workers=workers, seed=5, shuffle=False)
        epochs.append(torch.cat([x for x, _ in loader]))
    assert torch.equal(epochs[0], epochs[1]) and epochs[0].shape == (8, 3, 3, 240, 320)
    for i in range(8):  # the Loader's clips are clip_frames' (seed 5, epoch 0), inside each row's range
        frames = dataset.clip_frames(i, seed=5, epoch=0)
        decoded, _ = fastloop._C._video_frames(dataset.paths[i // 2], frames)
        assert torch.equal(epochs[0][i], TO_FLOAT(decoded))
    assert all(30 <= f < 60 for f in dataset.clip_frames(0, seed=5)) and max(dataset.clip_frames(2, seed=5)) < 30


def test_bad_times_are_named_with_file_row_and_column(videos, tmp_path):
    path = clip_paths(videos)[0]
    for start, end, column, words in (("abc", "", "start", "'abc' is not a number of seconds"),
                                      ("", "-1", "end", "-1 is negative"), ("nan", "", "start", "not a number"),
                                      ("", "inf", "end", "not a number"), ("2", "1.5", "end", "is not after the start"),
                                      ("1", "1", "end", "is not after the start")):
        listing = _listing(tmp_path, [(path, 0, "", ""), (path, 0, start, end)])
        with pytest.raises(ValueError, match=rf"list\.csv, row 3, column '{column}': .*{words}"):
            fastloop.video_csv(listing)
    with pytest.raises(ValueError, match=r"ranges\[1\], column 'end'"):
        fastloop.VideoFiles([path] * 2, [0, 0], ranges=[(None, None), (1.0, 0.5)])
    with pytest.raises(ValueError, match="give one or the other"):
        fastloop.VideoFiles([path], [0], ranges=[(1.0, 2.0)], sampler="regular", sampling_range_start=3)
    outside = fastloop.VideoFiles([path] * 2, [0, 0], ranges=[(5.0, None), (None, None)], sampler="regular")
    with pytest.raises(ValueError, match=rf"ranges\[0\]: {path}: no frame's time lies in its range \[5 s, end\)"):
        outside.clip_frames(0)
    timed = fastloop.VideoFiles([path], [0], ranges=[(5.0, None)], sampler="random_timestamps")
    with pytest.raises(ValueError, match=r"starts at or after the video's end \(.* s\)"):
        timed.clip_frames(0)
    with pytest.raises(ValueError, match=rf"ranges\[0\]: {path}: no frame's time"):  # read by the Loader too
        list(fastloop.Loader(outside, transform=TO_FLOAT, batch_size=2, workers=2, shuffle=False))


@pytest.mark.parametrize("workers", [1, 2])
def test_regular_timestamps_with_an_unreadable_video(videos, tmp_path, workers):
    """A video regular_timestamps cannot count the clips of keeps one sample: "skip" counts it as skipped with the
    next video's first clip in its place (an epoch of the same length for 1 and 2 workers), "stop" names it."""
    paths = clip_paths(videos)[:2]
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(bytes(range(256)) * 64)
    short = str(videos / "short.mp4")  # 10 frames: no clip of 16 in its range either
    dataset = fastloop.VideoFiles([paths[0], str(garbage), short, paths[1]], [0, 1, 1, 0], num_frames_per_clip=16,
                                  sampler="regular_timestamps", seconds_between_clip_starts=1.0)
    assert dataset.clip_offsets == [0, 3, 4, 5, 8]
    with pytest.raises(ValueError, match=r"garbage\.mp4: FFmpeg cannot open it"):
        dataset[3]
    kwargs = dict(transform=v2.Compose([v2.CenterCrop(32), TO_FLOAT]), batch_size=2, shuffle=False, drop_last=False)
    loader = fastloop.Loader(dataset, workers=workers, seed=1, bad_image_policy="skip", **kwargs)
    clips = [(x, y) for x, y in loader]
    images, labels = torch.cat([x for x, _ in clips]), torch.cat([y for _, y in clips])
    assert loader.samples_skipped == 3  # garbage's: 2 (garbage, short), short's: 1
    assert images.shape[0] == 8 and labels.tolist() == [0, 0, 0, 0, 0, 0, 0, 0]
    good = fastloop.Loader(fastloop.VideoFiles([paths[0], paths[1]], [0, 0], num_frames_per_clip=16,
                                               sampler="regular_timestamps", seconds_between_clip_starts=1.0),
                           workers=1, seed=1, **kwargs)
    reference = torch.cat([x for x, _ in good])
    assert torch.equal(images[:3], reference[:3]) and torch.equal(images[5:], reference[3:])
    assert torch.equal(images[3], reference[3]) and torch.equal(images[4], reference[3])  # paths[1]'s first clip
    with pytest.raises(ValueError, match=r"garbage\.mp4: FFmpeg cannot open it"):
        list(fastloop.Loader(dataset, workers=workers, **kwargs))
