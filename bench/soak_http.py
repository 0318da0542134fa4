"""A minimal HTTP/1.1 client over raw sockets, for bench/soak_driver.py.

http.client hides what a soak needs to control: closing the socket after the response
headers and one SSE event, closing it before any response byte, sending half a body. This
client does those, keeps connections alive between requests when the server allows it, and
decodes Content-Length, chunked and close-delimited bodies. Not thread-safe: one Connection
per worker thread.
"""
import socket


class HttpError(Exception):
    """The connection failed or the server broke HTTP framing (reset, EOF, timeout)."""


class Response:
    """Status, lower-cased headers and the body (bytes) of one response."""

    def __init__(self, status, headers, body=b""):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name, default=""):
        return self.headers.get(name.lower(), default)


class Connection:
    """One keep-alive connection to HOST:PORT, reopened when needed."""

    def __init__(self, host, port, timeout):
        self.host = host
        self.port = port
        self.timeout = timeout
        self.sock = None
        self.buffer = b""

    # --- connection management -------------------------------------------------------------
    def open(self):
        self.close()
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except OSError as e:
            raise HttpError(f"connect failed: {e}") from e
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None
        self.buffer = b""

    def abort(self):
        """Closes with an RST (SO_LINGER 0), as a client process that dies would."""
        if self.sock is not None:
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                     b"\x01\x00\x00\x00\x00\x00\x00\x00")
            except OSError:
                pass
        self.close()

    # --- writing ----------------------------------------------------------------------------
    @staticmethod
    def encode(method, path, headers, body):
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1"]
        for name, value in headers.items():
            lines.append(f"{name}: {value}")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()
        return head + (body or b"")

    def send(self, method, path, headers, body=None, partial=False):
        """Sends a request (opening the connection if needed). With partial, only the head
        and half the body go out, so the server is left waiting for the rest."""
        if self.sock is None:
            self.open()
        data = self.encode(method, path, headers, body)
        if partial:
            data = data[: len(data) - max(1, len(body or b"") // 2)]
        try:
            self.sock.sendall(data)
        except OSError as e:
            self.close()
            raise HttpError(f"send failed: {e}") from e

    # --- reading ----------------------------------------------------------------------------
    def _fill(self):
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout as e:
            raise HttpError("timed out reading") from e
        except OSError as e:
            raise HttpError(f"read failed: {e}") from e
        if not chunk:
            raise HttpError("connection closed by the server")
        self.buffer += chunk

    def _read_until(self, marker):
        while marker not in self.buffer:
            self._fill()
        head, _, self.buffer = self.buffer.partition(marker)
        return head

    def _read_exact(self, n):
        while len(self.buffer) < n:
            self._fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def read_head(self):
        """Reads the status line and headers; returns a Response without its body."""
        head = self._read_until(b"\r\n\r\n").decode("latin-1")
        lines = head.split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HttpError(f"bad status line {lines[0]!r}")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return Response(int(parts[1]), headers)

    def body_pieces(self, response):
        """Yields the body as it arrives (chunked, Content-Length or until close)."""
        if response.header("transfer-encoding").lower() == "chunked":
            while True:
                size_line = self._read_until(b"\r\n").split(b";")[0].strip()
                try:
                    size = int(size_line, 16)
                except ValueError as e:
                    raise HttpError(f"bad chunk size {size_line!r}") from e
                if size == 0:
                    self._read_until(b"\r\n")  # no trailers are expected
                    return
                data = self._read_exact(size)
                self._read_exact(2)
                yield data
        elif response.header("content-length"):
            yield self._read_exact(int(response.header("content-length")))
        else:
            while True:
                try:
                    self._fill()
                except HttpError:
                    break
                data, self.buffer = self.buffer, b""
                yield data
            self.close()

    def finish(self, response):
        """After the body was read: keeps the connection unless either side closes it."""
        if response.header("connection").lower() == "close":
            self.close()

    def request(self, method, path, headers, body=None):
        """One whole exchange; returns the Response with its body."""
        self.send(method, path, headers, body)
        try:
            response = self.read_head()
            response.body = b"".join(self.body_pieces(response))
        except HttpError:
            self.close()
            raise
        self.finish(response)
        return response


class SseReader:
    """Splits a streamed body into (event name, data) pairs as they arrive."""

    def __init__(self, pieces):
        self.pieces = pieces
        self.text = ""
        self.raw = []  # every data payload, in order

    def events(self):
        for piece in self.pieces:
            self.text += piece.decode("utf-8", errors="replace")
            while "\n\n" in self.text:
                block, self.text = self.text.split("\n\n", 1)
                name, data = "", []
                for line in block.split("\n"):
                    if line.startswith("event:"):
                        name = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip(" "))
                if data:
                    payload = "\n".join(data)
                    self.raw.append(payload)
                    yield name, payload

    def leftover(self):
        """Text after the last complete event (should be empty)."""
        return self.text.strip()
