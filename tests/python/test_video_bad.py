"""Videos that cannot be read under the Loader's bad_image_policy: "stop" (the default) raises naming the file;
"skip" counts each clip of such a video in samples_skipped and puts the next video's first clip in its place,
deterministically: the same batches for any number of workers, the stand-in's row that clip's own."""

import pathlib

import pytest
import torch

fastloop = pytest.importorskip("fastloop")
from torchvision.transforms import v2  # noqa: E402

from video_data import clip_paths, make_clips  # noqa: E402

TRANSFORM = v2.Compose([v2.RandomResizedCrop(32, antialias=True), v2.RandomHorizontalFlip(),
                        v2.ToDtype(torch.float32, scale=True)])


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> pathlib.Path:
    """root/CLASS/*.mp4 (the four clips of make_clips) and a third class zbad/ of two videos FFmpeg cannot open:
    cut.mp4, the first third of a clip (its index, written at the end, cut off), and garbage.mp4."""
    root = make_clips(tmp_path_factory.mktemp("videos")) / "clips"
    (root / "zbad").mkdir()
    good = pathlib.Path(clip_paths(root.parent)[0]).read_bytes()
    (root / "zbad" / "cut.mp4").write_bytes(good[: len(good) // 3])
    (root / "zbad" / "garbage.mp4").write_bytes(bytes(range(256)) * 64)
    return root


def _epoch(loader):
    batches = [(x.clone(), y.clone()) for x, y in loader]
    return batches, loader.samples_skipped


@pytest.mark.parametrize("workers", [1, 2])
def test_skip_puts_the_next_videos_clip_in_place_of_a_bad_one(folder, workers):
    dataset = fastloop.VideoFolder(folder, num_frames_per_clip=4, num_clips=2)
    assert dataset.classes == ["pattern", "rgb", "zbad"] and len(dataset) == 12  # samples 8-11: the bad videos'
    loader = fastloop.Loader(dataset, transform=TRANSFORM, batch_size=2, workers=workers, seed=4, shuffle=False,
                             drop_last=False, bad_image_policy="skip")
    batches, skipped = _epoch(loader)
    images = torch.cat([x for x, _ in batches])
    labels = torch.cat([y for _, y in batches])
    # cut.mp4's clips (8, 9) step over garbage.mp4 to the first video's first clip (0): 2 skips each; garbage's
    # clips (10, 11) step to it at once: 1 each
    assert skipped == 6
    assert labels.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0]
    for bad in range(8, 12):
        assert torch.equal(images[bad], images[0])  # sample 0 itself, its own draws
    assert not torch.equal(images[1], images[0])
    reference = fastloop.Loader(fastloop.VideoFiles(dataset.paths[:4], dataset.labels[:4], num_frames_per_clip=4,
                                                    num_clips=2), transform=TRANSFORM, batch_size=2, workers=1,
                                seed=4, shuffle=False, drop_last=False)
    assert torch.equal(images[:8], torch.cat([x for x, _ in reference]))  # the good clips as without bad videos
    again, skipped_again = _epoch(fastloop.Loader(dataset, transform=TRANSFORM, batch_size=2, workers=3 - workers,
                                                  seed=4, shuffle=False, drop_last=False, bad_image_policy="skip"))
    assert skipped_again == 6 and torch.equal(torch.cat([x for x, _ in again]), images)


def test_stop_names_the_bad_video(folder):
    dataset = fastloop.VideoFolder(folder, num_frames_per_clip=4, num_clips=2)
    with pytest.raises(ValueError, match=r"zbad/cut\.mp4: FFmpeg cannot open it as a video"):
        list(fastloop.Loader(dataset, transform=TRANSFORM, batch_size=2, workers=2, shuffle=False, drop_last=False))


def test_a_bad_first_video(folder):
    """The Loader reads the first video's frame size when the transform leaves it open; under "skip" a bad first
    video gives way to the next, under "stop" it is named."""
    paths = [str(folder / "zbad" / "garbage.mp4"), *clip_paths(folder.parent)[:2]]
    dataset = fastloop.VideoFiles(paths, [0, 1, 1], num_frames_per_clip=3)
    keep_size = v2.ToDtype(torch.float32, scale=True)
    loader = fastloop.Loader(dataset, transform=keep_size, batch_size=3, workers=1, shuffle=False,
                             bad_image_policy="skip")
    (clips, labels), = list(loader)
    assert clips.shape == (3, 3, 3, 240, 320) and labels.tolist() == [1, 1, 1] and loader.samples_skipped == 1
    with pytest.raises(ValueError, match=r"garbage\.mp4: FFmpeg cannot open it"):
        list(fastloop.Loader(dataset, transform=keep_size, batch_size=3, workers=1))
