"""The runtime description a report carries: lab build, machine, speech engines, settings."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from importlib.metadata import version

from django.conf import settings

import lab
from lab.evaluation.evaluator import EVALUATOR_VERSION
from lab.events.types import Channel, Mode
from lab.facts.knowledge import build_knowledge_base
from lab.facts.schema import ConstraintList
from lab.reports.schema import (
    FactsUsed,
    RetrievalComponent,
    Runtime,
    SpeechModel,
    TurnModel,
    VadSettings,
)
from lab.retrieval.bm25 import RETRIEVER


@functools.cache
def git_commit() -> str:
    """HEAD of the checkout the lab runs from, else LAB_COMMIT (images carry no .git)."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return os.environ.get("LAB_COMMIT", "unknown")
    return result.stdout.strip()


@functools.cache
def _speech_models() -> tuple[SpeechModel, SpeechModel]:
    # Imported here: loading the speech stacks costs a second that verification never needs.
    from lab.speech import asr, tts

    return (
        SpeechModel(name=asr.model_name(), files_sha256=asr.model_files_digest()),
        SpeechModel(name=tts.VOICE_NAME, files_sha256=tts.voice_files_digest()),
    )


def turn_model() -> TurnModel | None:
    """The end-of-turn model a voice run consults, or None (off, or its wheel is missing)."""
    from lab.speech import smart_turn

    if not settings.LAB_TURN_MODEL or not settings.LAB_TURN_CANDIDATE_MS:
        return None
    if not smart_turn.available():
        return None
    return TurnModel(
        name=smart_turn.MODEL_NAME,
        package=f"{smart_turn.PACKAGE} {version(smart_turn.PACKAGE)}",
        license=smart_turn.LICENSE,
        file_sha256=smart_turn.model_sha256(),
        candidate_ms=settings.LAB_TURN_CANDIDATE_MS,
    )


def facts_used(constraints: ConstraintList) -> FactsUsed:
    return FactsUsed(
        tenant=constraints.tenant,
        constraint_list_version=constraints.version,
        constraint_list_digest=constraints.digest(),
        knowledge_base_version=build_knowledge_base(constraints).version,
    )


def runtime_describe(
    *,
    mode: Mode,
    channel: Channel,
    gate_version: str,
    agent_version: str,
    constraints: ConstraintList,
) -> Runtime:
    """What runs now, with the gate and agent versions the run itself recorded."""
    asr_model, tts_voice = _speech_models()
    return Runtime(
        lab_version=lab.__version__,
        git_commit=git_commit(),
        python=f"{platform.python_implementation()} {platform.python_version()}",
        os=platform.platform(),
        asr=asr_model,
        tts=tts_voice,
        vad=VadSettings(
            engine=getattr(settings, "LAB_VAD_ENGINE", "webrtcvad"),
            aggressiveness=getattr(settings, "LAB_VAD_AGGRESSIVENESS", 2),
            end_silence_ms=getattr(settings, "LAB_VAD_END_SILENCE_MS", 500),
        ),
        gate_version=gate_version,
        agent_version=agent_version,
        evaluator_version=EVALUATOR_VERSION,
        channel=channel,
        mode=mode,
        retrieval=RetrievalComponent(
            name=RETRIEVER, library="rank-bm25", library_version=version("rank-bm25")
        ),
        facts=facts_used(constraints),
        turn_model=turn_model() if channel == Channel.VOICE else None,
    )
