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

from . import _build

if torch.__version__ != _build.torch_version:
    raise ImportError(
        f"fastloop {_build.version} was built against torch {_build.torch_version}, but this Python imports "
        f"torch {torch.__version__}; rebuild it in this environment (pip install . in fastloop's source tree)"
    )

from ._files import Files  # noqa: E402
from ._loader import Loader  # noqa: E402
from ._run import evaluate, model_info, train  # noqa: E402

__version__: str = _build.version
__all__ = ["Loader", "Files", "train", "evaluate", "model_info", "__version__"]
