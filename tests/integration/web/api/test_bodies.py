"""Request bodies at and past the limits, however they are sent: chunked REST
bodies, and long-polling Engine.IO posts."""
import json

import requests


def chunks(*parts):
    yield from parts  # a generator body: requests sends it chunked


def test_a_chunked_body_is_read_whole_and_refused_past_64_kib(live_server, api_key, redis):
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    small = requests.post(live_server.url + "/api/notifications", headers=headers, timeout=10,
                          data=chunks(b'{"topic": "ops", ', b'"title": "chunked"}'))
    assert small.status_code == 201, small.text
    big = requests.post(live_server.url + "/api/notifications", headers=headers, timeout=10,
                        data=chunks(b'{"topic": "ops", "title": "x", "body": "',
                                    *[b"y" * 1000] * 80, b'"}'))
    assert big.status_code == 413 and big.json() == {"error": "request body is over 64 KiB"}
    assert redis.xlen("herald:stream") == 1


def test_a_long_polling_post_past_the_limit_is_answered_413(live_server):
    opened = requests.get(live_server.url + "/socket.io/?EIO=4&transport=polling", timeout=5)
    sid = json.loads(opened.text[1:])["sid"]
    reply = requests.post(live_server.url + f"/socket.io/?EIO=4&transport=polling&sid={sid}",
                          data=b"4" + b"x" * 150_000, timeout=10)
    assert reply.status_code == 413 and "at most 100000" in reply.text
    gone = requests.get(live_server.url + f"/socket.io/?EIO=4&transport=polling&sid={sid}",
                        timeout=10)
    assert gone.status_code == 400  # its session was closed with it
