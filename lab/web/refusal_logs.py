"""Expected refusals (403, 400, 404, 429…) are logged as one line; only a 5xx keeps its
traceback. Django attaches the exception to every refusal it logs, so a flood of bad requests
would otherwise fill the log with stack traces of nothing going wrong."""

from __future__ import annotations

import logging


class OneLineRefusals(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        return True
