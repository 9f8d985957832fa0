"""Speech workers as real `manage.py runspeechworker` processes over a real Redis."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from channels_redis.core import RedisChannelLayer

from lab.config import redis_channel_host
from lab.speech.protocol import SPEECH_CHANNELS, AsrOptions
from lab.speech.service import Workers
from tests.conftest import ROOT

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server here"),
]

LINE = "I'd like to book an appointment on Tuesday morning."


class WatchedLayer(RedisChannelLayer):
    """Counts the speech requests this process sends, and says when one has gone out."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.asked = 0
        self.sent = asyncio.Event()

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        await super().send(channel, message)
        if channel == SPEECH_CHANNELS["asr"]:
            self.asked += 1
            self.sent.set()


@pytest.fixture
def start_worker(redis_url: str, tmp_path: Path) -> Iterator[Any]:
    env = {**os.environ, "REDIS_URL": redis_url, "LAB_SPEECH_WORKERS": "1"}
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        with (tmp_path / f"worker-{len(started)}.log").open("wb") as log:
            worker = subprocess.Popen(
                [sys.executable, "manage.py", "runspeechworker"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()
        worker.wait()


def _freeze(process: subprocess.Popen[bytes]) -> None:
    """Stop `process` and return once the kernel reports it stopped, not merely signalled."""
    process.send_signal(signal.SIGSTOP)
    stat = Path(f"/proc/{process.pid}/stat")
    deadline = time.monotonic() + 10
    # The state follows the command's parenthesised name, which may itself hold spaces.
    while stat.read_text().rpartition(")")[2].split()[0] != "T":
        assert time.monotonic() < deadline, f"the worker did not stop: {stat.read_text()}"
        time.sleep(0.001)


async def test_a_worker_process_answers_and_one_killed_mid_request_is_covered_by_another(
    redis_url, start_worker
):
    layer = WatchedLayer(hosts=[redis_channel_host(redis_url)])
    queue = redis.Redis.from_url(redis_url)
    # Generous while the worker process starts Django and loads both models on first use.
    warming = Workers(layer, in_flight=2, timeout_s=120)
    workers = Workers(layer, in_flight=2, timeout_s=15)
    try:
        first = start_worker()
        # Queue keys as channels_redis names them (prefix and channel, no separator). The worker is
        # still warming and takes nothing yet, so this request must be seen waiting: a wait below
        # on a misnamed key would pass at once, killing a worker that had taken nothing.
        tts_queue, asr_queue = (layer.prefix + SPEECH_CHANNELS[kind] for kind in ("tts", "asr"))
        synthesizing = asyncio.ensure_future(warming.synthesize(LINE))
        async with asyncio.timeout(10):
            while not queue.zcard(tts_queue):  # noqa: ASYNC110 -- another process's state
                await asyncio.sleep(0.005)
        pcm = await synthesizing
        heard = await warming.recognize(pcm + bytes(16_000), AsrOptions())
        assert "tuesday" in heard.text.lower()

        layer.asked, long_pcm = 0, (pcm + bytes(8_000)) * 4
        layer.sent.clear()
        recognizing = asyncio.ensure_future(workers.recognize(long_pcm, AsrOptions()))
        await layer.sent.wait()
        while queue.zcard(asr_queue):  # noqa: ASYNC110 -- another process's state
            await asyncio.sleep(0.005)
        # The first worker has taken the request. channels_redis also keeps an in-flight copy
        # until the worker's receive returns, which the next receiver would put back: the worker
        # dies only frozen where that copy is gone, holding the request in its memory alone.
        _freeze(first)
        while queue.zcard(f"{asr_queue}$inflight"):
            first.send_signal(signal.SIGCONT)
            await asyncio.sleep(0.005)
            _freeze(first)
        await asyncio.sleep(0.5)  # an answer it had already sent would have reached the inbox
        assert not recognizing.done()  # else the first worker answered and nothing was covered
        first.kill()
        first.wait()
        start_worker()
        transcript = await recognizing
    finally:
        warming.close()
        workers.close()
        queue.close()
        await layer.close_pools()
    assert layer.asked == 2  # no answer to the first attempt; the second went to the new worker
    assert "tuesday" in transcript.text.lower()
    assert transcript.audio_ms == len(long_pcm) // 32
