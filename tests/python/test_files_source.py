"""fastloop.Files and csv: sources: image files listed with their labels give the batches the same files give
as an image folder, labels map as documented, bad input is a clear error, and a Files Loader pickles."""

import os
import pickle

import pytest
import torch

import fastloop


def folder_files(image_folder, split):
    """(paths, class names) of an image folder's split, in ImageFolder's order."""
    paths, names = [], []
    for name in sorted(os.listdir(image_folder / split)):
        for f in sorted(os.listdir(image_folder / split / name)):
            paths.append(str(image_folder / split / name / f))
            names.append(name)
    return paths, names


def test_files_give_the_image_folders_batches(image_folder):
    paths, names = folder_files(image_folder, "val")
    files = fastloop.Files(paths, names)
    assert files.classes == ["ant", "bee", "cat"] and files.labels == [0] * 4 + [1] * 4 + [2] * 4
    ours = fastloop.Loader(files, split="val", batch_size=5, workers=2, image_size=32)
    theirs = fastloop.Loader(f"imagefolder:{image_folder}", split="val", batch_size=5, workers=1, image_size=32)
    assert ours.classes == theirs.classes and ours.num_classes == 3 and len(ours) == len(theirs)
    for (x, y), (u, v) in zip(ours, theirs):
        assert torch.equal(x, u) and torch.equal(y, v)
    # Training: the same seed gives the folder's augmented batches too.
    train_paths, train_names = folder_files(image_folder, "train")
    a = next(iter(fastloop.Loader(fastloop.Files(train_paths, train_names), batch_size=6, workers=1, image_size=32, seed=4)))
    b = next(iter(fastloop.Loader(f"imagefolder:{image_folder}", batch_size=6, workers=1, image_size=32, seed=4)))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_labels_as_indices_or_names_with_given_classes(image_folder):
    paths, _ = folder_files(image_folder, "val")
    by_index = fastloop.Files(paths[:3], [4, 0, 2])
    assert by_index.labels == [4, 0, 2] and by_index.classes is None
    loader = fastloop.Loader(by_index, split="val", batch_size=3, workers=0, image_size=16)
    assert loader.num_classes == 5 and loader.classes == ["0", "1", "2", "3", "4"]
    assert next(iter(loader))[1].tolist() == [4, 0, 2]
    named = fastloop.Files(paths[:2], ["zebra", "ant"], classes=["ant", "bee", "zebra"])
    assert named.labels == [2, 0]
    assert fastloop.Loader(named, split="val", workers=0, image_size=16).classes == ["ant", "bee", "zebra"]
    assert fastloop.Files(paths[:1], [torch.tensor(1)]).labels == [1]  # integer tensors and numpy ints


def test_bad_files_and_labels_are_clear_errors(image_folder, tmp_path):
    paths, names = folder_files(image_folder, "val")
    with pytest.raises(ValueError, match=r"3 paths but 2 labels"):
        fastloop.Files(paths[:3], names[:2])
    with pytest.raises(TypeError, match=r"labels\[1\] is str; labels are all class indices \(int\) or all class names"):
        fastloop.Files(paths[:2], [0, "ant"])
    with pytest.raises(TypeError, match=r"labels\[0\] is float"):
        fastloop.Files(paths[:1], [1.5])
    with pytest.raises(ValueError, match=r"labels\[0\] = -1 is not a class index"):
        fastloop.Files(paths[:1], [-1])
    with pytest.raises(ValueError, match=r"labels\[0\] 'dog' is not one of classes"):
        fastloop.Files(paths[:1], ["dog"], classes=["ant"])
    with pytest.raises(ValueError, match=r"no files"):
        fastloop.Files([], [])
    gone = str(tmp_path / "gone.jpg")
    with pytest.raises(ValueError, match=r"fastloop.Files: paths\[1\]: " + gone + ": no such file"):
        fastloop.Loader(fastloop.Files([paths[0], gone], [0, 1]), workers=0)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match=r"paths\[0\]: .*notes.txt is not an image file"):
        fastloop.Loader(fastloop.Files([tmp_path / "notes.txt"], [0]), workers=0)
    with pytest.raises(TypeError, match=r"mixtures \(a list of sources\) read shards:, parquet: and datasets.Dataset "
                                        r"sources, not '.*000.png'; image files with labels are fastloop.Files"):
        fastloop.Loader(paths)  # a list is a mixture of sources
    with pytest.raises(TypeError, match=r"source must be a --data string, a fastloop.Files, a datasets.Dataset or a "
                                        r"data set with targets .*, not dict"):
        fastloop.Loader({"paths": paths})


def test_relative_paths_are_made_absolute_and_a_files_loader_pickles(image_folder, monkeypatch):
    monkeypatch.chdir(image_folder / "val")
    files = fastloop.Files(["ant/" + sorted(os.listdir(image_folder / "val" / "ant"))[0]], ["ant"])
    assert files.paths[0] == str(image_folder / "val" / "ant" / sorted(os.listdir(image_folder / "val" / "ant"))[0])
    loader = fastloop.Loader(files, split="val", batch_size=1, workers=0, image_size=16)
    copy = pickle.loads(pickle.dumps(loader))
    assert copy.source == files and copy.classes == ["ant"]
    assert torch.equal(next(iter(copy))[0], next(iter(loader))[0])


def test_a_csv_source_reads_paths_relative_to_the_file(image_folder, tmp_path):
    paths, names = folder_files(image_folder, "val")
    rows = ["path,label"] + [f"{os.path.relpath(p, tmp_path)},{n}" for p, n in zip(paths, names)]
    (tmp_path / "val.csv").write_text("\n".join(rows) + "\n")
    ours = fastloop.Loader(f"csv:{tmp_path / 'val.csv'}", batch_size=12, workers=1, image_size=32, augment=False,
                           shuffle=False)
    theirs = fastloop.Loader(f"imagefolder:{image_folder}", split="val", batch_size=12, workers=1, image_size=32)
    (x, y), (u, v) = next(iter(ours)), next(iter(theirs))
    assert ours.classes == ["ant", "bee", "cat"] and torch.equal(x, u) and torch.equal(y, v)
    (tmp_path / "bad.csv").write_text("path,label\n" + os.path.relpath(paths[0], tmp_path) + ",ant\nmissing.jpg,bee\n")
    with pytest.raises(ValueError, match=r"bad.csv line 3: .*missing.jpg: no such file"):
        fastloop.Loader(f"csv:{tmp_path / 'bad.csv'}")
