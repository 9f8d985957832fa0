"""Speech request and reply messages, as they travel between web processes and speech workers."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class AsrOptions(BaseModel):
    """Keywords for one recognition; those left at their defaults are not passed on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_free: bool = False

    def keywords(self) -> dict[str, Any]:
        """The keywords `asr.transcribe` is called with (none, at the defaults)."""
        return self.model_dump(exclude_defaults=True)
