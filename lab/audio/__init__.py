"""Caller audio: PCM frames and voice-activity endpointing."""
