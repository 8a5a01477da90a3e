"""Reading a websocket straight from its TCP socket, in exact sizes.

gevent-websocket reads frames through pywsgi's buffered file, a C object
that calls back into Python for every read. Every such C level stays on the
reader greenlet's stack, which is saved for as long as the connection
waits: reading the socket directly keeps it shallow (58 -> 32 KiB per idle
connection together with the other savings, bench/RESULTS.md). A client
sends nothing after its upgrade request until the server's answer (RFC
6455, 4.1), so nothing is left behind in the buffered file.
"""
MAX_FRAME = 1 << 20  # bytes; a Socket.IO message is at most max_http_buffer_size (100 kB)
READ_CHUNK = 64 * 1024


class FrameTooLarge(OSError):
    """A frame header announced more than MAX_FRAME bytes."""


def exact_reader(sock):
    """``read(size)`` on ``sock``: ``size`` bytes, or fewer once the peer has closed.

    A frame that declares more than MAX_FRAME bytes is refused before any of
    it is read (gevent-websocket would otherwise try to allocate what a
    hostile header claims), and a large one is read in chunks.
    """
    def read(size):
        if size > MAX_FRAME:
            raise FrameTooLarge(f"websocket frame of {size} bytes refused (at most {MAX_FRAME})")
        data = sock.recv(min(size, READ_CHUNK))
        if len(data) == size or not data:
            return data
        chunks = [data]
        size -= len(data)
        while size:
            data = sock.recv(min(size, READ_CHUNK))
            if not data:
                break
            chunks.append(data)
            size -= len(data)
        return b"".join(chunks)
    return read
