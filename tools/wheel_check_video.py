"""The video half of scripts/wheel_check.sh, run by the fresh venv's Python inside its sandbox: the installed
wheel decodes video with the system's FFmpeg (opened at run time, never bundled) when it is there, and when
the sandbox hides FFmpeg too, images still load while a video Loader says what to install.

Usage: python tools/wheel_check_video.py VIDEO IMAGES present|absent   (prints one ``ok:`` line per check and
exits 1 at the first that fails)
"""

import ctypes
import sys

from wheel_check import check


def video_batch(video: str) -> "torch.Tensor":  # noqa: F821 (torch is imported by the caller)
    import torch
    from torchvision.transforms import v2 as T

    import fastloop

    dataset = fastloop.VideoFiles([video], [0], num_frames_per_clip=4, num_indices_between_frames=2)
    transform = T.Compose([T.Resize(16), T.CenterCrop(16), T.ToDtype(torch.float32, scale=True)])
    clips, _ = next(iter(fastloop.Loader(dataset, transform=transform, batch_size=1, workers=1)))
    return clips


def main() -> None:
    video, images, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "present":
        clips = video_batch(video)
        check("a video clip through the system's FFmpeg", tuple(clips.shape) == (1, 4, 3, 16, 16),
              f"{tuple(clips.shape)} from {video.rsplit('/', 1)[-1]}")
        return
    try:
        ctypes.CDLL("libavcodec.so.59")
        hidden = False
    except OSError:
        hidden = True
    check("the system's libavcodec.so.59 is hidden", hidden)
    import torch
    from torchvision.transforms import v2 as T

    import fastloop

    transform = T.Compose([T.Resize(24), T.CenterCrop(24), T.ToDtype(torch.float32, scale=True)])
    batch, _ = next(iter(fastloop.Loader(f"imagefolder:{images}", batch_size=4, workers=1, transform=transform)))
    check("images without FFmpeg", tuple(batch.shape) == (4, 3, 24, 24), f"{tuple(batch.shape)}")
    try:
        video_batch(video)
        message = ""
    except Exception as error:  # the loader's error, as the user sees it
        message = str(error)
    check("video without FFmpeg says what to install", "needs FFmpeg 5" in message and "apt-get install" in message,
          message.splitlines()[0][:160] if message else "no error raised")


if __name__ == "__main__":
    main()
