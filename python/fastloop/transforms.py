"""torchvision transforms compiled for fastloop's C++ workers.

``compile_transform(obj)`` reads the public attributes of a ``torchvision.transforms`` (v1) or
``torchvision.transforms.v2`` object — ``Compose``, ``RandomApply``, ``RandomChoice``, ``RandomOrder`` and
every supported operation, nested as the user wrote them — and returns the pipeline in fastloop's spec
language, the same text the CLI's ``--transform`` and the TOML recipes take::

    >>> import torchvision.transforms.v2 as T
    >>> compile_transform(T.Compose([T.RandomResizedCrop(224, scale=(0.35, 1)), T.RandomHorizontalFlip()]))
    'RandomResizedCrop(size=(224, 224), scale=(0.35, 1.0), ratio=(0.75, 1.3333333333333333), ...'

Anything fastloop does not run exactly as torchvision does — a ``Lambda``, a user's own class, an option
that is not implemented — raises ``TypeError`` naming it and listing what is supported; nothing is
approximated or silently skipped (nor is the Loader's JPEG decode, unless ``decode="fast"`` asks for it:
:class:`Loader`).

How close to torchvision, on which CPU: each operation on uint8 images computes what torchvision's kernel
computes, in the same float32 arithmetic, and gives the same bytes on every CPU (a batch is the same bits on any
machine, pinned by digests under every ATen capability). torchvision's own bytes follow run-time choices: the
kernels ATen picks for the CPU's instructions, and for the warps' grids MKL's code path, which MKL picks by the
CPU's vendor too (an AMD CPU with AVX-512 gets its AVX2 code). Where the tests show torchvision runs
fastloop's arithmetic (ATen's AVX-512 kernels, and warp grids bit-equal to fastloop's on probes: an Intel CPU
with AVX-512), every operation equals torchvision's bytes. Elsewhere the warps — affine, rotate, perspective and
the geometric operations of AutoAugment, RandAugment, TrivialAugmentWide and AugMix — differ where a float32
result falls within a few ulps of a rounding boundary: a bilinear warp by at most 1 level on at most 1% of the
values (measured: 0.52%), a nearest warp only where a sample point falls on the middle between two pixels (a
shear whose sample points do so row after row: up to 57 levels on 0.01% of the values), differences that
AutoContrast or Equalize after the warp stretch with the channel's levels (6 levels on 0.007% of the values);
and without AVX2 the colour blends (brightness, contrast, saturation, sharpness), which fastloop fuses as ATen's
AVX2 and AVX-512 kernels do, by 1 level (2 after a later contrast). Every other operation keeps its tested bound
on every CPU (flips, pads, crops, resizes, posterize, solarize, equalize: equal bytes; GaussianBlur: 1 level).
The bounds and their measurements: ``tests/python/kernel_parity.py``.

Operations after the conversion to float (``ToDtype(torch.float32, scale=True)`` first, then ``Resize``,
``ColorJitter``, ...) run on float images with torchvision's float semantics, no rounding between them, by
ATen's own ops in torchvision's order: torchvision's values on the machine that runs them (measured equal on an
AVX-512 Xeon under every ATen capability), but not the same bits on every machine. Which operations run on
float images: ``fastloop._C._float_step_names()``; the others raise ``TypeError`` there.

``LinearTransformation(transformation_matrix, mean_vector)`` (whitening) runs there too: the flattened image
minus the mean, times the [D, D] matrix, by ``torch.mm`` as torchvision computes it (compared within 1e-5 of the
values' scale: the GEMM's summation order is the BLAS's). Its tensors travel as a safetensors file that
``compile_transform`` writes once into ``$FASTLOOP_CACHE/tensors/`` (default ``~/.cache/fastloop``), named by a
hash of its contents, and the spec names that file; in a spec (the CLI's ``--transform``, a recipe) give a path to
your own file (the tensor named as the argument, or the file's only one) or, for small matrices, nested lists.
Before the conversion to float it is a ``TypeError`` that says to put ``ToDtype(torch.float32, scale=False)`` first
(torchvision's result on a uint8 image).
"""

from __future__ import annotations

import enum
import hashlib
import math
import numbers
import os
from typing import Any, Callable, Dict, List, Sequence, Tuple

import torch

from . import _C

__all__ = ["compile_transform", "supported_transforms"]

# The torchvision classes fastloop runs, with the constructor arguments in order. The attribute holding each
# argument is the argument's name in v1 and v2 alike (checked against torchvision 0.29); where a constructor
# rewrites its argument (ColorJitter's ranges, RandomRotation's degrees, Resize's [size]), the rewritten value
# means the same when given back, and the C++ side applies torchvision's checks again.
_SIGNATURES: Dict[str, Tuple[str, ...]] = {
    "RandomResizedCrop": ("size", "scale", "ratio", "interpolation", "antialias"),
    "Resize": ("size", "interpolation", "max_size", "antialias"),
    "CenterCrop": ("size",),
    "RandomCrop": ("size", "padding", "pad_if_needed", "fill", "padding_mode"),
    "Pad": ("padding", "fill", "padding_mode"),
    "RandomHorizontalFlip": ("p",),
    "RandomVerticalFlip": ("p",),
    "RandomRotation": ("degrees", "interpolation", "expand", "center", "fill"),
    "RandomAffine": ("degrees", "translate", "scale", "shear", "interpolation", "fill", "center"),
    "RandomPerspective": ("distortion_scale", "p", "interpolation", "fill"),
    "ColorJitter": ("brightness", "contrast", "saturation", "hue"),
    "Grayscale": ("num_output_channels",),
    "RandomGrayscale": ("p",),
    "GaussianBlur": ("kernel_size", "sigma"),
    "RandomInvert": ("p",),
    "RandomPosterize": ("bits", "p"),
    "RandomSolarize": ("threshold", "p"),
    "RandomAdjustSharpness": ("sharpness_factor", "p"),
    "RandomAutocontrast": ("p",),
    "RandomEqualize": ("p",),
    "AutoAugment": ("policy", "interpolation", "fill"),
    "RandAugment": ("num_ops", "magnitude", "num_magnitude_bins", "interpolation", "fill"),
    "TrivialAugmentWide": ("num_magnitude_bins", "interpolation", "fill"),
    "AugMix": ("severity", "mixture_width", "chain_depth", "alpha", "all_ops", "interpolation", "fill"),
    "RandomErasing": ("p", "scale", "ratio", "value", "inplace"),
    "Normalize": ("mean", "std", "inplace"),
    "ToTensor": (),
    "PILToTensor": (),
    "ToImage": (),
    "ToDtype": ("dtype", "scale"),
    "ConvertImageDtype": ("dtype",),
    "SanitizeBoundingBoxes": ("min_size", "min_area", "labels_getter"),
    "ClampBoundingBoxes": ("clamping_mode",),
    "ConvertBoundingBoxFormat": ("format",),
    "ClampKeyPoints": (),
    "SanitizeKeyPoints": ("labels_getter",),
    "SetClampingMode": ("clamping_mode",),
    "RandomZoomOut": ("fill", "side_range", "p"),
    "RandomIoUCrop": ("min_scale", "max_scale", "min_aspect_ratio", "max_aspect_ratio", "sampler_options", "trials"),
    "RandomPhotometricDistort": ("brightness", "contrast", "saturation", "hue", "p"),
    "RandomShortestSize": ("min_size", "max_size", "interpolation", "antialias"),
    "RandomResize": ("min_size", "max_size", "interpolation", "antialias"),
    "ScaleJitter": ("target_size", "scale_range", "interpolation", "antialias"),
    "FixedSizeCrop": ("size", "fill", "padding_mode"),
    "Identity": (),
    "ToPureTensor": (),
    "RGB": (),
    "RandomChannelPermutation": (),
    "GaussianNoise": ("mean", "sigma", "clip"),
    "JPEG": ("quality",),
    "ElasticTransform": ("alpha", "sigma", "interpolation", "fill"),
    "FiveCrop": ("size",),  # a tuple of crops: fastloop.Loader runs the pipeline as views (crop_views.h)
    "TenCrop": ("size", "vertical_flip"),
    "LinearTransformation": ("transformation_matrix", "mean_vector"),  # its tensors travel in a file: _tensor_file
}
# Arguments a class keeps under another attribute (RandomIoUCrop's sampler_options, None made the default list,
# in `options`; FixedSizeCrop's size in crop_height and crop_width).
_ATTRIBUTES: Dict[Tuple[str, str], Callable[[Any], Any]] = {
    ("RandomIoUCrop", "sampler_options"): lambda obj: obj.options,
    ("FixedSizeCrop", "size"): lambda obj: (obj.crop_height, obj.crop_width),
}
# FixedSizeCrop lives in torchvision.prototype.transforms (not in torchvision's wheels; a source build has it).
_PROTOTYPES = ("FixedSizeCrop",)
_CONTAINERS = ("Compose", "RandomApply", "RandomChoice", "RandomOrder")


def supported_transforms() -> List[str]:
    """The torchvision class names fastloop compiles (those of this build: ``_C._transform_names()``; its
    internal transforms, whose names start with ``_``, aside)."""
    return sorted(set(name for name in _C._transform_names() if not name.startswith("_")))


def _refuse(what: str) -> TypeError:
    return TypeError(f"{what}; fastloop's transforms are: {', '.join(supported_transforms())}")


def _literal(value: Any, where: str) -> str:
    """A Python value as fastloop's spec language spells it (a subset of Python literals)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, enum.Enum):  # InterpolationMode.BILINEAR, AutoAugmentPolicy.IMAGENET
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, torch.dtype):
        return str(value)  # torch.float32
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise TypeError(f"{where}: {number} is not supported (a finite number is)")
        return repr(number)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, torch.Tensor) and value.dim() <= 1:
        return _literal(value.tolist(), where)
    if isinstance(value, (list, tuple)):
        items = [_literal(v, where) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise TypeError(f"{where}: a value of type {type(value).__name__} ({value!r}) is not supported")


def _class_name(obj: Any) -> str:
    """The torchvision class name of `obj`, or TypeError for anything that is not torchvision's own class."""
    cls = type(obj)
    module = getattr(cls, "__module__", "")
    prototype = module.startswith("torchvision.prototype.transforms") and cls.__name__ in _PROTOTYPES
    if not module.startswith("torchvision.transforms") and not prototype:
        raise _refuse(f"{cls.__module__}.{cls.__qualname__} is not a torchvision transform fastloop can compile")
    name = cls.__name__
    if name not in _SIGNATURES and name not in _CONTAINERS:
        raise _refuse(f"torchvision's {name} is not supported")
    return name


def _children(obj: Any, name: str) -> str:
    transforms = obj.transforms
    if isinstance(transforms, torch.nn.ModuleList):
        transforms = list(transforms)
    if not isinstance(transforms, Sequence) or isinstance(transforms, (str, bytes)):
        raise TypeError(f"{name}.transforms should be a sequence of transforms, got {type(transforms).__name__}")
    return "[" + ", ".join(_compile_one(t) for t in transforms) + "]"


def _tensor_file(tensors: Dict[str, torch.Tensor]) -> str:
    """A safetensors file holding `tensors` (a transform's tensor arguments, which the spec names by path), in
    ``$FASTLOOP_CACHE`` (default ``~/.cache/fastloop``)'s ``tensors/``, named by a hash of the contents: compiling the
    same transform again finds the same file, and processes that share the folder share it."""
    tensors = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    digest = hashlib.sha256()
    for key, tensor in sorted(tensors.items()):
        digest.update(f"{key}:{tensor.dtype}:{tuple(tensor.shape)}:".encode())
        digest.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    cache = os.environ.get("FASTLOOP_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "fastloop")
    folder = os.path.join(cache, "tensors")
    path = os.path.join(folder, digest.hexdigest()[:32] + ".safetensors")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        _C._save_tensors(path, sorted(tensors.items()))  # atomic: a reader sees the whole file or none
    return path


def _argument(obj: Any, name: str, arg: str) -> str:
    if name == "LinearTransformation":
        return repr(_tensor_file({"transformation_matrix": obj.transformation_matrix, "mean_vector": obj.mean_vector}))
    value = _ATTRIBUTES[(name, arg)](obj) if (name, arg) in _ATTRIBUTES else getattr(obj, arg)
    if name == "RandomErasing" and arg == "value" and value is None:
        value = "random"  # v2 stores value='random' as None
    if isinstance(value, dict) and (arg == "fill" or (name, arg) == ("ToDtype", "dtype")):
        return _type_dict(value, f"{name}.{arg}")
    return _literal(value, f"{name}.{arg}")


def _type_dict(value: Dict[Any, Any], where: str) -> str:
    """A value per tv_tensor type (a ``fill`` dict, ``ToDtype``'s dict of dtypes) as (type name, value) pairs.

    A ``defaultdict``'s default is not among them: torchvision never asks for it (``_get_fill`` tests membership,
    and a type neither in the dict nor under ``"others"`` gets fill None, i.e. 0). So the detection references'
    ``RandomZoomOut(fill=defaultdict(lambda: mean, {tv_tensors.Mask: 0}))`` pads images with 0 in torchvision
    0.29, and in fastloop alike; write ``{tv_tensors.Mask: 0, "others": mean}`` for the mean."""
    pairs = [f"({_literal(k if isinstance(k, str) else k.__name__, where)}, {_literal(v, where)})"
             for k, v in value.items()]
    return "(" + ", ".join(pairs) + ("," if len(pairs) == 1 else "") + ")"


def _compile_one(obj: Any) -> str:
    if isinstance(obj, str):
        return obj  # a spec already
    name = _class_name(obj)
    if name in _CONTAINERS:
        parts = [_children(obj, name)]
        if name == "RandomApply":
            parts.append(f"p={_literal(obj.p, 'RandomApply.p')}")
        elif name == "RandomChoice" and obj.p is not None:
            parts.append(f"p={_literal(obj.p, 'RandomChoice.p')}")
        return f"{name}({', '.join(parts)})"
    args = [f"{arg}={_argument(obj, name, arg)}" for arg in _SIGNATURES[name]]
    return f"{name}({', '.join(args)})"


def compile_transform(obj: Any) -> str:
    """The fastloop pipeline of a torchvision transform, in the spec language of ``--transform``.

    Args:
        obj: a ``torchvision.transforms`` or ``torchvision.transforms.v2`` transform (``Compose`` and the
            other containers nest), a spec string (returned in its canonical spelling), or a list of either
            (a ``Compose``).

    Returns:
        The canonical spec of the compiled pipeline, e.g. ``"RandomResizedCrop(size=(224, 224), ...),
        RandomHorizontalFlip(p=0.5)"``; a top-level ``Compose`` becomes the comma-separated list.

    Raises:
        TypeError: a transform fastloop does not run (a ``Lambda``, a user's class, an unsupported option),
            naming it and listing the supported ones.
        ValueError: an argument out of torchvision's range, with torchvision's message.
    """
    if isinstance(obj, (list, tuple)):
        spec = ", ".join(_compile_one(t) for t in obj)
    elif not isinstance(obj, str) and _class_name(obj) == "Compose":
        transforms = obj.transforms
        spec = ", ".join(_compile_one(t) for t in (list(transforms) if isinstance(transforms, torch.nn.ModuleList) else transforms))
    else:
        spec = _compile_one(obj)
    # Made once in C++: torchvision's checks run here (on each view a FiveCrop or TenCrop makes, see compile_views).
    return _C._transform_views(spec)[0]


def compile_views(spec: str) -> List[str]:
    """The pipelines a compiled spec runs as, one per image it returns: the spec itself, or with a ``FiveCrop`` /
    ``TenCrop`` (whose tuple of crops the transforms after it each go through, as torchvision applies them) one
    per crop, the crop at that place of torchvision's tuple standing for the ``FiveCrop``."""
    return list(_C._transform_views(spec)[1])
