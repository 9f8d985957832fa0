"""A speech worker collecting a batch on Redis gives up waiting without losing a request."""

from __future__ import annotations

import asyncio
import random
import shutil

import pytest
from channels_redis.core import RedisChannelLayer

from lab.config import redis_channel_host
from lab.speech.protocol import SPEECH_CHANNELS
from lab.speech.worker import receive_within

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")

REQUESTS = 300


async def test_collection_windows_that_end_empty_lose_no_request(redis_url):
    # Requests arrive at random while short windows open and close: a window cancelled as
    # Redis handed one over lost it (12 of 1029 with 20 ms windows, before the server's timeout).
    layer = RedisChannelLayer(hosts=[redis_channel_host(redis_url)])
    channel, rng = SPEECH_CHANNELS["asr"], random.Random(28)
    received: list[int] = []
    sent = asyncio.Event()

    async def send_all() -> None:
        for number in range(REQUESTS):
            await asyncio.sleep(rng.uniform(0.0005, 0.01))
            await layer.send(channel, {"number": number})
        sent.set()

    async def take_all() -> None:
        while True:
            message = await receive_within(layer, channel, 0.004)
            if message is not None:
                received.append(message["number"])
            elif sent.is_set():
                return

    try:
        async with asyncio.timeout(60):
            await asyncio.gather(send_all(), take_all())
    finally:
        await layer.close_pools()
    assert received == list(range(REQUESTS))
