"""fastloop.Loader's parameter table (python/fastloop/_loader_params.py): the signature, the docstring, the
stub, pickling and the binding all follow it, so a parameter added there reaches each of them."""

import ast
import inspect
import pathlib
import pickle
import re

import pytest
import torch

import fastloop
from fastloop import _C, _loader_params

NAMES = [p.name for p in _loader_params.PARAMETERS]

# A value other than the default for every parameter; a parameter added to the table without one here fails
# test_every_parameter_survives_pickling, so pickling is checked for it too.
NOT_DEFAULT = dict(
    source="synthetic:3x16x16:96", split="val", batch_size=8, workers=1, prefetch=2, augment=True, image_size=32,
    mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3), dtype=torch.bfloat16, channels_last=True,
    device=torch.device("cpu"), seed=7, shuffle=True, drop_last=True, rank=1, world_size=2, bad_image_policy="skip",
    transform="RandomHorizontalFlip(p=0.5), ToDtype(torch.float32, scale=True), Normalize(mean=[0.5], std=[0.5])",
    views=2,  # left out where batch_transform is set (the two exclude each other), checked on its own
    batch_transform=None,  # set below: torchvision is imported lazily by the test that needs it
    shuffle_buffer=16, image_column="picture", label_column="kind",  # read by Parquet and datasets sources only
    cache_dir="/nonexistent/remote-shards-only", cache_size=2**20, timeout=5.0, decode="fast",
    # fields and mixtures read shards, Parquet or datasets: left out below, pickled by test_fields.py
    fields=("jpg", "txt"), weights=(1.0, 2.0), resampled=True, field_transforms={"txt": len},
)
FIELDS_ONLY = ("fields", "weights", "resampled", "field_transforms")


def test_signature_is_the_table_in_order():
    params = inspect.signature(fastloop.Loader).parameters
    assert list(params) == NAMES
    for p in _loader_params.PARAMETERS:
        assert params[p.name].default is p.default or params[p.name].default == p.default, p.name
        assert params[p.name].annotation == p.annotation, p.name


def test_docstring_documents_each_parameter_once():
    doc = inspect.getdoc(fastloop.Loader)
    args = doc[doc.index("Args:\n"):doc.index("\n\n", doc.index("Args:\n"))]
    documented = [n.strip() for line in args.splitlines()[1:] if re.match(r"    \w", line)
                  for n in line.strip().split(":")[0].split(",")]
    assert documented == NAMES


def test_stub_signature_matches_the_table():
    stub = ast.parse((pathlib.Path(fastloop.__file__).parent / "__init__.pyi").read_text())
    loader = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Loader")
    init = next(n for n in loader.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    names = [a.arg for a in init.args.args][1:]
    assert names == NAMES, "python/fastloop/__init__.pyi's Loader.__init__ differs from _loader_params.PARAMETERS"
    defaults = [ast.unparse(d) for d in init.args.defaults]
    expected = [repr(p.default) for p in _loader_params.PARAMETERS if p.default is not inspect.Parameter.empty]
    assert defaults == expected


def test_a_wrong_call_is_a_type_error_naming_the_argument():
    with pytest.raises(TypeError, match="missing a required argument: 'source'"):
        fastloop.Loader()
    with pytest.raises(TypeError, match="unexpected keyword argument 'batchsize'"):
        fastloop.Loader("synthetic:3x16x16:96", batchsize=8)
    with pytest.raises(TypeError, match="multiple values for argument 'split'"):
        fastloop.Loader("synthetic:3x16x16:96", "val", split="train")


def test_every_parameter_survives_pickling():
    from torchvision.transforms import v2

    given = dict(NOT_DEFAULT, batch_transform=v2.MixUp(alpha=0.4, num_classes=10))
    assert sorted(given) == sorted(NAMES)
    del given["views"]  # a TypeError beside batch_transform
    for name in FIELDS_ONLY:
        del given[name]
    views = fastloop.Loader(**{k: v for k, v in NOT_DEFAULT.items() if k not in FIELDS_ONLY})
    views_copy = pickle.loads(pickle.dumps(views))
    assert views_copy._args == views._args and views_copy.views == 2 and "views=2" in repr(views)
    loader = fastloop.Loader(**given)
    copy = pickle.loads(pickle.dumps(loader))
    assert copy._args == loader._args
    assert repr(copy) == repr(loader)
    for name in NAMES:  # each shown, since none has its default
        assert f"{name}=" in repr(loader) or name in ("source", "views", *FIELDS_ONLY), name
    compared = 0
    for (images, labels), (images_copy, labels_copy) in zip(loader, copy):
        compared += 1
        assert images.dtype == torch.bfloat16 and images.is_contiguous(memory_format=torch.channels_last)
        assert labels.shape == (8, 10)  # MixUp's soft targets
        assert torch.equal(images, images_copy) and torch.equal(labels, labels_copy)
    assert compared == len(loader) > 0


def test_binding_sets_the_cli_settings_through_the_config_table():
    # The settings go by TOML key through config_set: a wrong type or an unknown key names it.
    with pytest.raises(ValueError, match=r"'data.batch_size' \(--batch-size\) must be"):
        _C.Loader({"data.source": "synthetic:3x16x16:96", "data.batch_size": "eight"})
    with pytest.raises(ValueError, match="unknown setting 'bogus'"):
        _C.Loader({"data.source": "synthetic:3x16x16:96", "bogus": 1})
    loader = _C.Loader({"data.source": "synthetic:3x16x16:96", "data.batch_size": 8, "data.workers": 0})
    assert len(loader) == 96 // 8


def test_numpy_integers_are_taken_as_ints():
    import numpy as np

    loader = fastloop.Loader("synthetic:3x16x16:96", batch_size=np.int64(8), workers=np.int32(0))
    assert len(loader) == 96 // 8
