"""fastloop from Python: its threaded C++ image loader as a drop-in for ``torch.utils.data.DataLoader``,
and ``fastloop train`` / ``fastloop eval`` behind one call each.

Example::

    import torch, torchvision, fastloop
    loader = fastloop.Loader("imagefolder:photos", batch_size=64, workers=2)
    model = torchvision.models.resnet18(num_classes=loader.num_classes)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(2):
        loader.set_epoch(epoch)
        for images, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
"""

import torch

from . import _build, _install

_mismatch = _install.torch_mismatch(_build.torch_version, torch.__version__, _build.version)
if _mismatch is not None:
    raise ImportError(_mismatch)

try:
    from . import _C  # noqa: F401  (the compiled module, with libfastloop and the codecs it links)
except ImportError as error:  # a library that did not load: name the file, not the linker's words alone
    raise ImportError(_install.load_error(error)) from error

from ._coco import CocoDetection  # noqa: E402
from ._targets import pad_targets  # noqa: E402
from ._files import Files  # noqa: E402
from ._loader import Loader  # noqa: E402
from ._run import evaluate, loader_state, model_info, train  # noqa: E402
from ._voc import SegmentationFiles, VOCSegmentation  # noqa: E402
from ._video import VideoFiles, VideoFolder  # noqa: E402
from ._video_shards import video_shards  # noqa: E402
from ._video_csv import video_csv  # noqa: E402

__version__: str = _build.version
__all__ = ["Loader", "Files", "CocoDetection", "VOCSegmentation", "SegmentationFiles", "VideoFiles",
           "VideoFolder", "video_csv", "video_shards", "pad_targets", "train",
           "evaluate", "model_info", "loader_state", "__version__"]
