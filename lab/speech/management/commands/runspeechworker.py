"""`manage.py runspeechworker [--ready-file PATH]`: one speech worker (lab/speech/worker.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.speech.worker import SpeechWorker


class Command(BaseCommand):
    help = "Serve recognition, synthesis and the turn model to web processes over Redis."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--ready-file",
            type=Path,
            help="written (with this process's id) once the models are warm and work is taken",
        )

    def handle(self, *args: Any, ready_file: Path | None, **options: Any) -> None:
        layer = get_channel_layer()
        if layer is None or isinstance(layer, InMemoryChannelLayer):
            # Nobody else can reach an in-memory layer: the worker would serve no one.
            raise CommandError("a speech worker needs a shared channel layer: set REDIS_URL")
        if ready_file is not None:
            ready_file.unlink(missing_ok=True)
        self.stdout.write("speech worker: loading the models and the agent's fixed lines")

        def ready() -> None:
            if ready_file is not None:
                ready_file.write_text(f"{os.getpid()}\n")
            self.stdout.write("speech worker ready")
            self.stdout.flush()

        asyncio.run(SpeechWorker(layer).serve(on_ready=ready))
