"""A real SMTP server (aiosmtpd's Controller on a free loopback port) for the digest tests."""
import email
import email.policy
import threading

import pytest
from aiosmtpd.controller import Controller

from tests.support import free_port


class Inbox:
    """aiosmtpd handler: keeps every message it accepts, parsed."""

    def __init__(self):
        self.messages = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.lock:
            self.messages.append(message)
        return "250 OK"


class SmtpServer:
    def __init__(self):
        self.port = free_port()
        self.inbox = Inbox()
        self.controller = None

    @property
    def url(self):
        return f"smtp://127.0.0.1:{self.port}"

    @property
    def messages(self):
        with self.inbox.lock:
            return list(self.inbox.messages)

    def start(self):
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self):
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


@pytest.fixture
def smtp_server():
    server = SmtpServer()
    server.start()
    yield server
    server.stop()
