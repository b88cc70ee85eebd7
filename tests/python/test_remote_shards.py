"""fastloop.Loader and `fastloop train` over tar shards in object storage: a SeaweedFS S3 gateway and a plain
HTTP server on loopback (tests/tools/remote_store.py, one for this module), some behind a fault-injecting proxy.
Batches equal those of the same shards on disk (1 and 2 workers, 2 torchrun ranks), the cache's second epoch
asks nothing of the store, and each fault of the issue (5xx, dropped connection, 403, 404, a truncated shard, a
server that stops answering, Ctrl-C during a fetch) ends as it should."""

import io
import os
import pathlib
import signal
import subprocess
import sys
import tarfile
import threading
import time
from typing import Iterator, List

import pytest
import torch

import fastloop
from conftest import loader_threads_left, run, sigint_raises_keyboard_interrupt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import remote_store  # noqa: E402

ARGS = dict(batch_size=5, workers=2, image_size=32, seed=3)


@pytest.fixture(scope="module")
def shards(image_folder, cli, tmp_path_factory) -> pathlib.Path:
    """image_folder's 36 train and 12 val images as webdataset shards of 6 samples (written by Python's tarfile,
    as webdataset users write them), indexed by `fastloop pack --index-only`."""
    out = tmp_path_factory.mktemp("shards")
    classes = sorted(p.name for p in (image_folder / "train").iterdir())
    for split in ("train", "val"):
        files = sorted((image_folder / split).glob("*/*"))
        for start in range(0, len(files), 6):
            with tarfile.open(out / f"{split}-{start // 6:06d}.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
                for k, path in enumerate(files[start:start + 6]):
                    key = f"{start + k:06d}"
                    tar.add(path, arcname=f"{key}{path.suffix}")
                    label = out / "label.cls"
                    label.write_text(str(classes.index(path.parent.name)))
                    tar.add(label, arcname=f"{key}.cls")
    (out / "label.cls").unlink()
    (out / "classes.txt").write_text("\n".join(classes) + "\n")
    run([cli, "pack", "--index-only", out])
    return out


class Store:
    def __init__(self, work: pathlib.Path, shards: pathlib.Path):
        self.s3 = remote_store.SeaweedS3(remote_store.weed_program(), work)
        self.s3.upload(shards, "photos")
        truncated = work / "truncated"
        truncated.mkdir()
        for path in shards.iterdir():
            data = path.read_bytes()
            (truncated / path.name).write_bytes(data[:len(data) // 2] if path.name == "train-000002.tar" else data)
        self.s3.upload(truncated, "truncated")
        no_index = work / "no_index"
        no_index.mkdir()
        (no_index / "train-000000.tar").write_bytes((shards / "train-000000.tar").read_bytes())
        self.s3.upload(no_index, "no_index")
        missing = work / "missing_shard"
        missing.mkdir()
        for path in shards.iterdir():
            if path.name != "train-000001.tar":
                (missing / path.name).write_bytes(path.read_bytes())
        self.s3.upload(missing, "missing_shard")
        self.http = remote_store.HttpFiles(shards)
        self.s3_proxy = remote_store.FaultProxy(self.s3.port)
        self.http_proxy = remote_store.FaultProxy(int(self.http.url.rsplit(":", 1)[1]))

    def close(self) -> None:
        self.s3_proxy.close()
        self.http_proxy.close()
        self.http.close()
        self.s3.close()


@pytest.fixture(scope="module")
def store(shards, tmp_path_factory) -> Iterator[Store]:
    try:
        remote_store.weed_program()
    except FileNotFoundError as missing:
        pytest.skip(str(missing))
    started = Store(tmp_path_factory.mktemp("weed"), shards)
    try:
        yield started
    finally:
        started.close()


@pytest.fixture
def signed(store, monkeypatch):
    """The admin key and the gateway's endpoint in the environment, as a user sets them."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", remote_store.ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", remote_store.SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", remote_store.REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", store.s3.endpoint)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    store.s3_proxy.mode("pass")
    store.http_proxy.mode("pass")
    return store


def batches(loader: fastloop.Loader, epoch: int = 1) -> List[torch.Tensor]:
    loader.set_epoch(epoch)
    return [(x.clone(), y.clone()) for x, y in loader]


def assert_same(got, want) -> None:
    assert len(got) == len(want)
    for (x, y), (wx, wy) in zip(got, want):
        assert torch.equal(y, wy)
        assert torch.equal(x, wx)


@pytest.mark.parametrize("workers", [1, 2])
def test_s3_batches_equal_the_local_shards(signed, shards, workers):
    args = dict(ARGS, workers=workers)
    want = batches(fastloop.Loader(f"shards:{shards}", **args))
    assert_same(batches(fastloop.Loader("shards:s3://shards/photos", **args)), want)
    val = fastloop.Loader("shards:s3://shards/photos", split="val", **args)
    assert_same(batches(val), batches(fastloop.Loader(f"shards:{shards}", split="val", **args)))
    assert val.classes == ["ant", "bee", "cat"]


def test_http_patterns_with_a_val_split_give_the_local_batches(signed, shards):
    url = signed.http.url
    remote = f"shards:{url}/train-{{000000..000005}}.tar::{url}/val-{{000000..000001}}.tar"
    local = f"shards:{shards}/train-{{000000..000005}}.tar::{shards}/val-{{000000..000001}}.tar"
    for split in ("train", "val"):
        assert_same(batches(fastloop.Loader(remote, split=split, **ARGS)),
                    batches(fastloop.Loader(local, split=split, **ARGS)))


@pytest.fixture(scope="module")
def caption_shards(shards, cli, tmp_path_factory) -> pathlib.Path:
    """The train shards as image-caption shards (each .cls replaced by a .txt caption and a .json), with no
    class: indexed by `fastloop pack --index-only` all the same."""
    out = tmp_path_factory.mktemp("captions")
    for path in sorted(shards.glob("train-*.tar")):
        with tarfile.open(path) as source, tarfile.open(out / path.name, "w", format=tarfile.USTAR_FORMAT) as tar:
            for member in source.getmembers():
                key, ext = member.name.split(".", 1)
                if ext != "cls":
                    tar.addfile(member, source.extractfile(member))
                    continue
                for ext, data in (("txt", f"photo {key} — café"), ("json", f'{{"caption": "json {key}"}}')):
                    info = tarfile.TarInfo(f"{key}.{ext}")
                    info.size = len(data.encode())
                    tar.addfile(info, io.BytesIO(data.encode()))
    run([cli, "pack", "--index-only", out])
    return out


def test_fields_of_s3_shards_are_those_of_the_same_shards_on_disk(signed, caption_shards):
    signed.s3.upload(caption_shards, "captions")
    fields = ("jpg;png", "txt", "json:caption")
    for shuffle in (False, True):
        args = dict(ARGS, fields=fields, shuffle=shuffle, shuffle_buffer=4, drop_last=False)
        want = list(fastloop.Loader(f"shards:{caption_shards}", **args))
        got = list(fastloop.Loader("shards:s3://shards/captions", **args))
        assert len(got) == len(want) == 8  # 36 samples, batches of 5
        for (images, texts, picked), (want_images, want_texts, want_picked) in zip(got, want):
            assert torch.equal(images, want_images)
            assert texts == want_texts and picked == want_picked
            assert [t.split()[1] for t in texts] == [p.split()[1] for p in picked]
        keys = sorted(t.split()[1] for _, texts, _ in got for t in texts)
        assert keys == [f"{i:06d}" for i in range(36)]


def test_two_image_fields_of_s3_shards_are_those_of_the_same_shards_on_disk(signed, caption_shards, cli,
                                                                           tmp_path):
    """Each sample's image again as KEY.seg.EXT: the second image field comes from what the workers kept of the
    sample, with and without other fields (then reading the last image releases it)."""
    for path in sorted(caption_shards.glob("train-*.tar")):
        with tarfile.open(path) as source, tarfile.open(tmp_path / path.name, "w", format=tarfile.USTAR_FORMAT) as tar:
            for member in source.getmembers():
                data = source.extractfile(member).read()
                tar.addfile(member, io.BytesIO(data))
                key, ext = member.name.split(".", 1)
                if ext in ("jpg", "png"):
                    info = tarfile.TarInfo(f"{key}.seg.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    run([cli, "pack", "--index-only", tmp_path])
    signed.s3.upload(tmp_path, "pairs")
    for fields in (("jpg;png", "txt", "seg.jpg;seg.png"), ("seg.jpg;seg.png", "jpg;png")):
        args = dict(ARGS, fields=fields, shuffle=True, shuffle_buffer=4, drop_last=False)
        want = list(fastloop.Loader(f"shards:{tmp_path}", **args))
        got = list(fastloop.Loader("shards:s3://shards/pairs", **args))
        assert len(got) == len(want) == 8
        for batch, want_batch in zip(got, want):
            for value, want_value in zip(batch, want_batch):
                assert torch.equal(value, want_value) if isinstance(value, torch.Tensor) else value == want_value
        assert not torch.equal(got[0][0], got[0][-1])  # independent draws of the same pixels


RANK_SCRIPT = """
import sys, torch, torch.distributed as dist, fastloop
dist.init_process_group("gloo")
loader = fastloop.Loader(sys.argv[2], batch_size=3, workers=2, image_size=32, seed=3, drop_last=False)
loader.set_epoch(1)
torch.save([(x.clone(), y.clone()) for x, y in loader], sys.argv[1] + f"/rank{dist.get_rank()}.pt")
dist.destroy_process_group()
"""


def test_two_torchrun_ranks_read_disjoint_shares_that_equal_the_local_ranks(signed, shards, tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    torchrun = pathlib.Path(sys.executable).parent / "torchrun"
    done = subprocess.run([str(torchrun), "--standalone", "--nproc-per-node", "2", str(script), str(tmp_path),
                           "shards:s3://shards/photos"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    seen = []
    for rank in range(2):
        got = torch.load(tmp_path / f"rank{rank}.pt")
        want = batches(fastloop.Loader(f"shards:{shards}", batch_size=3, workers=2, image_size=32, seed=3,
                                       drop_last=False, rank=rank, world_size=2))
        assert_same(got, want)
        seen.append({bytes(x.numpy().tobytes()) for b, _ in got for x in b})
    assert not seen[0] & seen[1]
    assert len(seen[0]) + len(seen[1]) == 36  # 36 distinct images: every one once


def test_the_caches_second_epoch_asks_nothing_of_the_store(signed, shards, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", signed.s3_proxy.url)
    before = signed.s3_proxy.requests
    loader = fastloop.Loader("shards:s3://shards/photos", cache_dir=str(tmp_path / "cache"), **ARGS)
    first = batches(loader, 1)
    fetched = signed.s3_proxy.requests
    assert fetched - before >= 6  # the index, classes.txt and six shards at least
    second = batches(loader, 2)
    assert signed.s3_proxy.requests == fetched
    assert_same(second, batches(fastloop.Loader(f"shards:{shards}", **ARGS), 2))
    assert len(first) == len(second)
    # A second process (another rank) sharing the folder asks only for the index and classes.txt.
    other = fastloop.Loader("shards:s3://shards/photos", cache_dir=str(tmp_path / "cache"), **ARGS)
    batches(other, 3)
    assert signed.s3_proxy.requests - fetched <= 2


def test_5xx_answers_and_dropped_connections_are_retried_and_resumed(signed, shards, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", signed.s3_proxy.url)
    loader = fastloop.Loader("shards:s3://shards/photos", **ARGS)
    signed.s3_proxy.mode("status:503:3")
    signed.s3_proxy.mode("drop:2000:4")
    got = batches(loader)
    assert "drop" not in signed.s3_proxy.faults and "status" not in signed.s3_proxy.faults  # all were met
    assert_same(got, batches(fastloop.Loader(f"shards:{shards}", **ARGS)))


def test_a_denied_key_names_the_url_and_the_credential_source_never_the_secret(signed, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", remote_store.READONLY_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", remote_store.READONLY_SECRET)
    with pytest.raises(ValueError) as error:
        fastloop.Loader("shards:s3://shards/photos", **ARGS)
    message = str(error.value)
    assert "s3://shards/photos/shards.idx" in message and "403" in message
    assert "environment (AWS_ACCESS_KEY_ID)" in message
    assert remote_store.READONLY_SECRET not in message


def test_a_session_token_goes_with_every_request_and_a_refused_one_is_named(signed, monkeypatch):
    """AWS_SESSION_TOKEN is sent (signed, as x-amz-security-token) with each request: SeaweedFS, which holds no
    session for this key, refuses what the same key reads without it, and the message says a session token was
    in use, never its value or the secret."""
    monkeypatch.setenv("AWS_SESSION_TOKEN", "fastloop-session-0123456789")
    with pytest.raises(ValueError) as error:
        fastloop.Loader("shards:s3://shards/photos", **ARGS)
    message = str(error.value)
    assert "403" in message and "environment (AWS_ACCESS_KEY_ID), with a session token" in message
    assert "fastloop-session-0123456789" not in message and remote_store.SECRET_KEY not in message
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    assert len(batches(fastloop.Loader("shards:s3://shards/photos", **ARGS))) == 7


def test_a_missing_object_and_a_missing_index_say_what_to_do(signed):
    with pytest.raises(ValueError, match="s3://shards/photos/train-000098.tar: not listed in s3://shards/photos/shards.idx"):
        fastloop.Loader("shards:s3://shards/photos/train-{000098..000099}.tar", **ARGS)
    with pytest.raises(ValueError, match=r"s3://shards/nothing/shards.idx: no shard index .*`fastloop pack --index-only DIR`"):
        fastloop.Loader("shards:s3://shards/nothing", **ARGS)
    with pytest.raises(ValueError, match="no shard index beside the shards"):
        fastloop.Loader("shards:s3://shards/no_index/train-000000.tar", **ARGS)
    with pytest.raises(ValueError, match=r"http://127.0.0.1:\d+/missing/shards.idx: no shard index"):
        fastloop.Loader(f"shards:{signed.http.url}/missing/train-0.tar", **ARGS)
    loader = fastloop.Loader("shards:s3://shards/missing_shard", **ARGS)  # listed in the index, not in the bucket
    with pytest.raises(ValueError, match=r"s3://shards/missing_shard/train-000001.tar \(http://127.0.0.1:\d+/shards/"
                                         r"missing_shard/train-000001.tar\): 404 NoSuchKey: no such object"):
        batches(loader)


def test_a_shard_truncated_on_the_server_is_named_as_a_local_one(signed, shards, tmp_path):
    loader = fastloop.Loader("shards:s3://shards/truncated", **ARGS)
    with pytest.raises(ValueError) as remote:
        batches(loader)
    local = tmp_path / "train-000002.tar"
    data = (shards / "train-000002.tar").read_bytes()
    local.write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError) as on_disk:
        fastloop.Loader(f"shards:{local}", **ARGS)
    what = str(on_disk.value).split(str(local) + ": ", 1)[1]
    assert "tar header at byte" in what and "truncated" in what
    assert f"s3://shards/truncated/train-000002.tar: {what}" in str(remote.value)


def test_a_server_that_stops_answering_ends_the_iteration_after_the_timeout(signed, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", signed.s3_proxy.url)
    loader = fastloop.Loader("shards:s3://shards/photos", timeout=2.0, **ARGS)
    signed.s3_proxy.mode("stall")
    try:
        with pytest.raises(RuntimeError, match=r"no data for [\d.]+ s \(--data-timeout 2\): the server stopped answering"):
            batches(loader)
    finally:
        signed.s3_proxy.mode("pass")
    assert loader_threads_left() == 0


def test_ctrl_c_during_a_fetch_stops_the_workers(signed, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", signed.s3_proxy.url)
    loader = fastloop.Loader("shards:s3://shards/photos", timeout=600.0, **ARGS)
    signed.s3_proxy.mode("stall")  # every fetch waits: Ctrl-C must not wait for the 600 s timeout
    fetching = threading.Event()

    def interrupt() -> None:
        if fetching.wait(timeout=60):
            time.sleep(0.5)  # the workers are inside their fetches by now
            os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    started = time.monotonic()
    try:
        with sigint_raises_keyboard_interrupt(), pytest.raises(KeyboardInterrupt):
            sender.start()
            loader.set_epoch(1)
            iterator = iter(loader)
            fetching.set()
            next(iterator)
    finally:
        signed.s3_proxy.mode("pass")
        sender.join()
    assert time.monotonic() - started < 60
    assert loader_threads_left() == 0


@pytest.mark.parametrize("setup", [["--whiten-stem", "off", "--time-budget", "off", "--epochs", "1"],
                                   ["--whiten-stem", "on", "--time-budget", "60s"]],
                         ids=["in the loop", "in the stem whitening and calibration at start"])
def test_ctrl_c_stops_the_cli_waiting_on_a_fetch(signed, cli, monkeypatch, setup):
    monkeypatch.setenv("AWS_ENDPOINT_URL", signed.s3_proxy.url)
    stalled = signed.s3_proxy.stalled
    signed.s3_proxy.mode("stall:2")  # shards.idx and classes.txt pass; every shard fetch then waits
    process = subprocess.Popen([str(cli), "train", "--data", "shards:s3://shards/photos", "--image-size", "32",
                                "--batch-size", "6", "--device", "cpu", "--workers", "2", "--data-timeout", "600",
                                *setup],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while signed.s3_proxy.stalled == stalled and time.monotonic() < deadline:
            time.sleep(0.05)
        assert signed.s3_proxy.stalled > stalled, "no shard fetch reached the proxy"
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)  # not the 600 s timeout
    finally:
        signed.s3_proxy.mode("pass")
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130 and "stopped at step 0" in output, f"exit {process.returncode}: {output}"


def test_a_loader_made_after_a_run_stopped_by_ctrl_c_fetches_again(signed, shards, monkeypatch):
    """Ctrl-C cancels every fetch of the process while a run lives; the run's end lifts that, so a Loader made
    afterwards in the same interpreter reads the store (it used to fail with "read cancelled")."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", signed.s3_proxy.url)
    stalled = signed.s3_proxy.stalled
    signed.s3_proxy.mode("stall:2")  # shards.idx and classes.txt pass; every shard fetch then waits

    def interrupt() -> None:
        deadline = time.monotonic() + 60
        while signed.s3_proxy.stalled == stalled and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    try:
        with sigint_raises_keyboard_interrupt(), pytest.raises(KeyboardInterrupt):
            sender.start()
            fastloop.train(quiet=True, time_budget="off", **{
                "data.source": "shards:s3://shards/photos", "data.image_size": 32, "data.batch_size": 6,
                "data.workers": 2, "data.timeout": 600.0, "model.whiten_stem": "off", "device": "cpu",
                "epochs": 1})
    finally:
        signed.s3_proxy.mode("pass")
        sender.join()
    assert signed.s3_proxy.stalled > stalled, "no shard fetch reached the proxy"
    monkeypatch.setenv("AWS_ENDPOINT_URL", signed.s3.endpoint)
    assert_same(batches(fastloop.Loader("shards:s3://shards/photos", **ARGS)),
                batches(fastloop.Loader(f"shards:{shards}", **ARGS)))


def test_the_cli_trains_from_s3_and_a_bad_url_exits_two(signed, cli, tmp_path):
    env = dict(os.environ)
    done = run([cli, "train", "--data", "shards:s3://shards/photos", "--model", "small_cnn", "--image-size", "32",
                "--batch-size", "6", "--max-steps", "3", "--device", "cpu", "--workers", "2",
                "--data-cache", tmp_path / "cache", "--data-timeout", "30"], env=env)
    assert "test accuracy" in done.stdout
    bad = subprocess.run([str(cli), "train", "--data", "shards:s3://No_Such/x.tar", "--device", "cpu"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 2
    assert "shard URL 's3://No_Such/x.tar'" in bad.stdout + bad.stderr
