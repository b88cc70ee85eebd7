"""fastloop.Loader(batch_transform=...): torchvision.transforms.v2's MixUp, CutMix and RandomChoice of them on
each batch, equal to torchvision's own output for the same draws, reproducible from the seed, and every
unsupported combination a TypeError naming it."""

import pickle
import random

import pytest
import torch
from torchvision.transforms import v2

import fastloop
from fastloop import _batch

SOURCE = "synthetic:3x16x16:64"


def loader(**kwargs):
    return fastloop.Loader(SOURCE, batch_size=8, workers=1, seed=5, **kwargs)


def plain_batches(n):
    it = iter(loader())
    return [next(it) for _ in range(n)]


@pytest.mark.parametrize("make", [lambda: v2.MixUp(alpha=0.4, num_classes=10),
                                  lambda: v2.CutMix(alpha=1.0, num_classes=10)])
def test_each_batch_equals_torchvisions_output_for_the_same_draws(make):
    mix = make()
    mixed = loader(batch_transform=mix)
    assert mixed.batch_transform == f"{type(mix).__name__}(alpha={mix.alpha!r}, num_classes=10)"
    plain = plain_batches(3)
    for k, (images, soft) in zip(range(3), mixed):
        assert images.shape == (8, 3, 16, 16) and soft.shape == (8, 10) and soft.dtype == torch.float32
        assert torch.allclose(soft.sum(1), torch.ones(8))
        # torchvision's transform on the plain batch, its make_params replaced by the Loader's draws.
        spec, params = _batch.mix_params(_batch.compile_batch_transform(mix), _batch.batch_rng(5, 0, 0, k), 16, 16)
        mix.make_params = lambda flat_inputs, params=params: params
        want_images, want_soft = mix(plain[k][0].clone(), plain[k][1].clone())
        assert torch.equal(images, want_images) and torch.equal(soft, want_soft)


def test_random_choice_draws_each_with_its_probability_and_the_seed_repeats_it():
    choice = v2.RandomChoice([v2.MixUp(alpha=1.0, num_classes=10), v2.CutMix(alpha=1.0, num_classes=12)], p=[0.25, 0.75])
    spec = _batch.compile_batch_transform(choice)
    assert _batch.batch_transform_repr(spec) == ("RandomChoice([MixUp(alpha=1.0, num_classes=10), "
                                                 "CutMix(alpha=1.0, num_classes=12)], p=[0.25, 0.75])")
    kinds = [_batch.mix_params(spec, _batch.batch_rng(0, 0, 0, k), 8, 8)[0][0] for k in range(4000)]
    assert abs(kinds.count("CutMix") / 4000 - 0.75) < 0.03  # 4000 draws: sd 0.007
    lams = [_batch.mix_params(("MixUp", 0.4, 10), random.Random(k), 8, 8)[1]["lam"] for k in range(4000)]
    assert abs(sum(lams) / 4000 - 0.5) < 0.02 and abs(sum((x - 0.5) ** 2 for x in lams) / 4000 - 0.25 / 1.8) < 0.01
    a, b = loader(batch_transform=choice), loader(batch_transform=choice)
    for (x, y), (u, v) in zip(a, b):
        assert torch.equal(x, u) and torch.equal(y, v)
    assert [s.shape[1] for _, s in loader(batch_transform=choice)].count(12) > 0  # each child's num_classes
    copy = pickle.loads(pickle.dumps(a))  # a has run epoch 0: the copy's next iteration is epoch 1
    assert copy.batch_transform == a.batch_transform
    fresh = loader(batch_transform=choice)
    fresh.set_epoch(1)
    assert torch.equal(next(iter(copy))[1], next(iter(fresh))[1])
    assert not torch.equal(next(iter(loader(batch_transform=choice)))[1], next(iter(fresh))[1])


def test_unsupported_batch_transforms_are_type_errors_naming_them():
    with pytest.raises(TypeError, match=r"batch_transform: torchvision.transforms.v2._container.Compose is not supported"):
        loader(batch_transform=v2.Compose([v2.MixUp(num_classes=10)]))
    with pytest.raises(TypeError, match=r"RandomHorizontalFlip is not supported; supported: torchvision.transforms.v2.MixUp"):
        loader(batch_transform=v2.RandomChoice([v2.MixUp(num_classes=10), v2.RandomHorizontalFlip()]))
    with pytest.raises(TypeError, match=r"MixUp\(labels_getter=...\) is not supported"):
        loader(batch_transform=v2.MixUp(num_classes=10, labels_getter=lambda inputs: inputs[1]))
    with pytest.raises(ValueError, match=r"num_classes must be passed if the labels are index-based"):
        loader(batch_transform=v2.CutMix())
    with pytest.raises(ValueError, match=r"num_classes is below the data's 10 classes"):
        loader(batch_transform=v2.MixUp(num_classes=4))
    with pytest.raises(TypeError, match=r"CutMix in transform= is a batch transform.*batch_transform=CutMix"):
        fastloop.Loader("synthetic:3x16x16:64", transform=v2.Compose([v2.ToDtype(torch.float32, scale=True),
                                                                         v2.CutMix(num_classes=10)]))
