"""A client that asks for large answers and never reads them, for
tests/it/memory.rs: Validate calls of a 64x64 grid with a 1 in every cell,
as the puzzle and as the player's grid (an 8 KB request whose conflicts,
listed in full, ran to 12 MB); with --side 9, of a 9x9 grid of ones (170
bytes, whose answer ran to 24 KB).

Modes:

- h2: gRPC over HTTP/2. The connection's SETTINGS give every stream a
  receive window of 0, so the server can send each answer's headers but
  none of its body; CALLS calls go out on each of CONNECTIONS connections
  (up to the server's stream limit), and nothing is read but frames.
- web-h2: the same calls as gRPC-Web text (base64) over HTTP/2.
- web-h1: gRPC-Web text over HTTP/1.1, one call on each of CONNECTIONS
  connections whose receive buffer is small; the response head is read, and
  nothing after it.

A call is answered when its response headers arrive. The client waits until
every call is answered or SECONDS pass, holds its connections HOLD seconds
more, and prints one line: `attack: mode=... connections=... calls=...
answered=... shed=... resets=... goaways=... seconds=...`, where shed counts
answers whose headers carry a non-zero grpc-status.
"""

import argparse
import base64
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

PATH = "/sudoku.v1.SudokuService/Validate"


def field(tag, payload):
    return bytes([tag]) + varint(len(payload)) + payload


def request_frame(side):
    """A gRPC-framed ValidateRequest: a grid of ones (64x64 or 9x9), twice."""
    cells = field(0x12, b"\x01" * (side * side))  # Grid.cells, packed
    grid = cells
    if side == 64:
        grid += b"\x18\x08" + b"\x20\x08"  # box_rows 8, box_cols 8
    msg = field(0x0A, grid) + field(0x12, grid)  # puzzle, current
    return struct.pack(">BI", 0, len(msg)) + msg


class H2Conn:
    def __init__(self, args, web):
        self.args = args
        self.web = web
        self.sock = socket.create_connection((args.host, args.port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config=config)
        self.h2.initiate_connection()
        # Sent before any request, so the server applies it to every stream.
        self.h2.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        self.out = bytearray(self.h2.data_to_send())
        self.settled = False
        self.closed = False
        self.opened = 0
        self.pending = {}
        self.answered = 0
        self.shed = 0
        self.resets = 0
        self.goaway = False
        if web:
            self.body = base64.b64encode(args.frame)
            self.content_type = "application/grpc-web-text"
        else:
            self.body = args.frame
            self.content_type = "application/grpc"

    def open_streams(self):
        if not self.settled or self.closed:
            return
        limit = min(self.args.calls, self.h2.remote_settings.max_concurrent_streams)
        while self.opened < limit:
            sid = self.h2.get_next_available_stream_id()
            headers = [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", PATH),
                (":authority", "%s:%d" % (self.args.host, self.args.port)),
                ("content-type", self.content_type),
            ]
            if self.web:
                headers.append(("accept", "application/grpc-web-text"))
                headers.append(("x-grpc-web", "1"))
            else:
                headers.append(("te", "trailers"))
            self.h2.send_headers(sid, headers)
            self.pending[sid] = memoryview(self.body)
            self.opened += 1
        self.pump()

    def pump(self):
        """Sends the requests' bytes as the server's windows allow."""
        for sid in list(self.pending):
            rest = self.pending[sid]
            try:
                window = self.h2.local_flow_control_window(sid)
            except (h2.exceptions.StreamClosedError, KeyError):
                del self.pending[sid]
                continue
            n = min(window, self.h2.max_outbound_frame_size, len(rest))
            if n <= 0:
                continue
            self.h2.send_data(sid, rest[:n].tobytes(), end_stream=n == len(rest))
            if n == len(rest):
                del self.pending[sid]
            else:
                self.pending[sid] = rest[n:]
        self.out += self.h2.data_to_send()

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
            elif isinstance(ev, h2.events.ResponseReceived):
                self.answered += 1
                status = dict(ev.headers).get("grpc-status")
                if status not in (None, "0"):
                    self.shed += 1
            elif isinstance(ev, h2.events.StreamReset):
                self.resets += 1
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.goaway = True
                self.closed = True
            # DATA is never acknowledged: the windows stay shut.
        self.out += self.h2.data_to_send()
        self.open_streams()
        self.pump()

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

    def done(self):
        return self.closed or (self.opened >= self.args.calls and self.answered >= self.opened)


class H1Conn:
    """One gRPC-Web call over HTTP/1.1; reads the response head only."""

    def __init__(self, args):
        self.args = args
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.connect((args.host, args.port))
        self.sock.setblocking(False)
        body = base64.b64encode(args.frame)
        head = (
            "POST %s HTTP/1.1\r\nhost: %s:%d\r\ncontent-type: application/grpc-web-text\r\n"
            "accept: application/grpc-web-text\r\nx-grpc-web: 1\r\ncontent-length: %d\r\n\r\n"
            % (PATH, args.host, args.port, len(body))
        )
        self.out = bytearray(head.encode() + body)
        self.head = bytearray()
        self.opened = 1
        self.answered = 0
        self.shed = 0
        self.resets = 0
        self.goaway = False
        self.closed = False

    def on_readable(self):
        if self.answered:
            return
        try:
            data = self.sock.recv(1)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.closed = True
            return
        if not data:
            self.closed = True
            return
        self.head += data
        if self.head.endswith(b"\r\n\r\n"):
            self.answered = 1
            text = self.head.decode("latin-1").lower()
            if "grpc-status:" in text and "grpc-status: 0" not in text:
                self.shed = 1

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

    def open_streams(self):
        pass

    def done(self):
        return self.closed or self.answered == 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True, help="host:port (127.0.0.1 only)")
    p.add_argument("--mode", choices=["h2", "web-h2", "web-h1"], default="h2")
    p.add_argument("--connections", type=int, default=1)
    p.add_argument("--calls", type=int, default=256)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--hold", type=float, default=1.0)
    p.add_argument("--side", type=int, choices=[9, 64], default=64)
    args = p.parse_args()
    host, port = args.target.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost"):
        sys.exit("refusing a target off the loopback: %s" % host)
    args.host, args.port = "127.0.0.1", int(port)
    args.frame = request_frame(args.side)

    sel = selectors.DefaultSelector()
    conns = []
    for _ in range(args.connections):
        if args.mode == "web-h1":
            c = H1Conn(args)
        else:
            c = H2Conn(args, web=args.mode == "web-h2")
        conns.append(c)
        sel.register(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)

    started = time.monotonic()
    deadline = started + args.seconds
    hold_until = None
    while True:
        now = time.monotonic()
        if hold_until is None and (now >= deadline or all(c.done() for c in conns)):
            hold_until = now + args.hold
        if hold_until is not None and now >= hold_until:
            break
        for c in conns:
            if c.closed:
                continue
            # Once answered, an HTTP/1.1 connection is no longer read.
            want = 0 if isinstance(c, H1Conn) and c.answered else selectors.EVENT_READ
            if c.out:
                want |= selectors.EVENT_WRITE
            if want:
                sel.modify(c.sock, want, c)
            else:
                sel.unregister(c.sock)
                c.closed = True  # held open, but no longer watched
        for key, mask in sel.select(timeout=0.05):
            c = key.data
            if mask & selectors.EVENT_READ:
                c.on_readable()
            if mask & selectors.EVENT_WRITE:
                c.on_writable()
    elapsed = time.monotonic() - started
    print(
        "attack: mode=%s connections=%d calls=%d answered=%d shed=%d resets=%d goaways=%d "
        "seconds=%.1f"
        % (
            args.mode,
            len(conns),
            sum(c.opened for c in conns),
            sum(c.answered for c in conns),
            sum(c.shed for c in conns),
            sum(c.resets for c in conns),
            sum(1 for c in conns if c.goaway),
            elapsed,
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
