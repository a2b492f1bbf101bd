"""A hostile gRPC client in raw HTTP/2 frames, for tests/it/memory.rs.

It opens CONNECTIONS connections to 127.0.0.1 and on each as many streams as
the server allows (at most STREAMS), and for SECONDS pushes request bytes at
the server as fast as HTTP/2 flow control lets it, reading nothing back
(received DATA is never acknowledged, so the server's responses stall at
the client's receive windows). Two modes:

- solve: each Solve stream sends a 5-byte gRPC prefix claiming CLAIM bytes,
  then CLAIM - 1 bytes of payload at most, so the message never completes
  and the server can only hold it.
- batch: each SolveBatch stream sends complete messages of about CLAIM
  bytes (1,024 items with long junk text) one after another, and never
  half-closes.

At the end it prints one line, `attack: mode=... connections=...
streams=... offered_bytes=... sent_bytes=... resets=... goaways=...`, where
sent_bytes counts the DATA payload flow control let through.
"""

import argparse
import selectors
import socket
import struct
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

from protowire import varint


def batch_message(claim):
    """A SolveBatchRequest of 1,024 items whose encoded size is about
    `claim` bytes (junk puzzle text: every item fails to parse)."""
    items = 1024
    per_item = max(16, claim // items - 12)
    out = bytearray()
    for i in range(items):
        text = b"x" * per_item
        grid = b"\x0a" + varint(len(text)) + text
        item = b"\x08" + varint(i) + b"\x12" + varint(len(grid)) + grid
        out += b"\x0a" + varint(len(item)) + item
    return bytes(out)


class Conn:
    def __init__(self, args, index):
        self.args = args
        self.sock = socket.create_connection((args.host, args.port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.initiate_connection()
        self.out = bytearray()
        self.settled = False  # the server's SETTINGS arrived
        self.closed = False
        # stream id -> bytes of the current message still to send (a
        # memoryview into the message, prefix included)
        self.pending = {}
        self.sendable = set()
        self.opened = 0
        self.sent = 0
        self.resets = 0
        self.goaway = False
        self.index = index
        self.flush_h2()

    def flush_h2(self):
        self.out += self.h2.data_to_send()

    def open_streams(self):
        if not self.settled or self.closed:
            return
        limit = min(self.args.streams, self.h2.remote_settings.max_concurrent_streams)
        path = (
            "/sudoku.v1.SudokuService/Solve"
            if self.args.mode == "solve"
            else "/sudoku.v1.SudokuService/SolveBatch"
        )
        while self.opened < limit and self.h2.open_outbound_streams < limit:
            sid = self.h2.get_next_available_stream_id()
            self.h2.send_headers(
                sid,
                [
                    (":method", "POST"),
                    (":scheme", "http"),
                    (":path", path),
                    (":authority", "%s:%d" % (self.args.host, self.args.port)),
                    ("content-type", "application/grpc"),
                    ("te", "trailers"),
                ],
            )
            self.pending[sid] = memoryview(self.args.frame)
            self.sendable.add(sid)
            self.opened += 1
        self.flush_h2()

    def pump(self):
        """Sends what flow control allows, keeping the local buffer small."""
        if self.closed:
            return
        max_frame = self.h2.max_outbound_frame_size
        while self.sendable and len(self.out) < (1 << 20):
            sid = next(iter(self.sendable))
            try:
                window = self.h2.local_flow_control_window(sid)
            except (h2.exceptions.StreamClosedError, KeyError):
                self.sendable.discard(sid)
                self.pending.pop(sid, None)
                continue
            if window <= 0:
                self.sendable.discard(sid)
                continue
            rest = self.pending[sid]
            if len(rest) == 0:
                if self.args.mode == "batch":
                    rest = memoryview(self.args.frame)
                else:
                    self.sendable.discard(sid)
                    continue
            n = min(window, max_frame, len(rest))
            try:
                self.h2.send_data(sid, rest[:n].tobytes())
            except h2.exceptions.StreamClosedError:
                self.sendable.discard(sid)
                self.pending.pop(sid, None)
                continue
            self.pending[sid] = rest[n:]
            self.sent += n
            self.flush_h2()

    def on_readable(self):
        try:
            data = self.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.closed = True
            return
        if not data:
            self.closed = True
            return
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.closed = True
            return
        for ev in events:
            if isinstance(ev, h2.events.RemoteSettingsChanged):
                self.settled = True
            elif isinstance(ev, h2.events.WindowUpdated):
                if ev.stream_id == 0:
                    self.sendable.update(self.pending.keys())
                elif ev.stream_id in self.pending:
                    self.sendable.add(ev.stream_id)
            elif isinstance(ev, h2.events.StreamReset):
                self.resets += 1
                self.pending.pop(ev.stream_id, None)
                self.sendable.discard(ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                self.pending.pop(ev.stream_id, None)
                self.sendable.discard(ev.stream_id)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.goaway = True
                self.closed = True
        self.flush_h2()
        self.open_streams()

    def on_writable(self):
        if not self.out:
            return
        try:
            n = self.sock.send(self.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.closed = True
            return
        del self.out[:n]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True, help="host:port (127.0.0.1 only)")
    p.add_argument("--mode", choices=["solve", "batch"], default="solve")
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--streams", type=int, default=256)
    p.add_argument("--claim", type=int, default=1 << 20)
    p.add_argument("--seconds", type=float, default=8.0)
    args = p.parse_args()
    host, port = args.target.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost"):
        sys.exit("refusing a target off the loopback: %s" % host)
    args.host, args.port = "127.0.0.1", int(port)

    if args.mode == "solve":
        # The prefix claims `claim` bytes; one byte less follows at most.
        args.frame = struct.pack(">BI", 0, args.claim) + b"\0" * (args.claim - 1)
    else:
        msg = batch_message(args.claim - 5)
        args.frame = struct.pack(">BI", 0, len(msg)) + msg

    sel = selectors.DefaultSelector()
    conns = []
    for i in range(args.connections):
        c = Conn(args, i)
        conns.append(c)
        sel.register(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)

    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        live = [c for c in conns if not c.closed]
        if not live:
            break
        for c in live:
            c.pump()
            want = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.out else 0)
            sel.modify(c.sock, want, c)
        for key, mask in sel.select(timeout=min(0.05, max(0.0, deadline - time.monotonic()))):
            c = key.data
            if mask & selectors.EVENT_READ:
                c.on_readable()
            if mask & selectors.EVENT_WRITE:
                c.on_writable()

    sent = sum(c.sent for c in conns)
    opened = sum(c.opened for c in conns)
    per_stream = len(args.frame) if args.mode == "solve" else None
    offered = opened * per_stream if per_stream else sent
    print(
        "attack: mode=%s connections=%d streams=%d offered_bytes=%d sent_bytes=%d "
        "resets=%d goaways=%d"
        % (
            args.mode,
            len(conns),
            opened,
            offered,
            sent,
            sum(c.resets for c in conns),
            sum(1 for c in conns if c.goaway),
        ),
        flush=True,
    )
    for c in conns:
        try:
            c.sock.close()
        except OSError:
            pass


if __name__ == "__main__":
    main()
