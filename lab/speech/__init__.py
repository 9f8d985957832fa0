"""Speech models: recognition (faster-whisper) and synthesis (piper)."""
