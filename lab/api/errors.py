"""Every API error as one JSON problem (RFC 9457 fields and a stable `code`), ninja's own too."""

from __future__ import annotations

from http import HTTPStatus

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from pydantic import BaseModel, ConfigDict, Field

from lab.api.rollup_fold import MAX_DAYS
from lab.audit.selectors import MAX_LIMIT

# Query parameters with a range: a bad value gets its own code and one plain sentence.
RANGES = {"limit": (1, MAX_LIMIT), "days": (1, MAX_DAYS)}
PROBLEM_TYPE = "urn:voice-reliability-lab:problem:"
_CODES_BY_STATUS = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    429: "too_many_requests",
}


class FieldError(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str = Field(description="where: query.limit, path.agent, ...")
    message: str


class Problem(BaseModel):
    """What every error answers, with Content-Type application/problem+json."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    code: str = Field(description="stable, for programs: unauthenticated, invalid_limit, ...")
    title: str
    status: int
    detail: str = Field(description="for people: what was wrong and how to put it right")
    errors: list[FieldError] | None = None
    choices: list[str] | None = Field(default=None, description="the values one may choose from")


class ApiError(Exception):
    """An error the API answers as a problem; raised anywhere under a view."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        choices: list[str] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail, self.choices = status, code, detail, choices
        self.retry_after = retry_after


def problem_response(
    status: int,
    code: str,
    detail: str,
    *,
    errors: list[FieldError] | None = None,
    choices: list[str] | None = None,
    retry_after: int | None = None,
) -> HttpResponse:
    problem = Problem(
        type=PROBLEM_TYPE + code,
        code=code,
        title=HTTPStatus(status).phrase,
        status=status,
        detail=detail,
        errors=errors,
        choices=choices,
    )
    response = JsonResponse(
        problem.model_dump(mode="json", exclude_none=True),
        status=status,
        content_type="application/problem+json",
    )
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="lab"'
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def _validation_problem(exc: ValidationError) -> HttpResponse:
    errors: list[FieldError] = []
    for error in exc.errors:
        loc = [str(part) for part in error.get("loc", ())]
        name = loc[-1] if loc else ""
        if loc and loc[0] == "query" and name in RANGES:
            low, high = RANGES[name]
            return problem_response(
                400, f"invalid_{name}", f"{name} must be between {low} and {high}"
            )
        errors.append(FieldError(field=".".join(loc), message=str(error.get("msg", "invalid"))))
    detail = "; ".join(f"{e.field}: {e.message}" for e in errors) or "the request is not valid"
    return problem_response(400, "validation_error", detail, errors=errors)


def install(api: NinjaAPI) -> None:
    """Make every error the API can raise answer as a problem."""

    @api.exception_handler(ApiError)
    def api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
        return problem_response(
            exc.status, exc.code, exc.detail, choices=exc.choices, retry_after=exc.retry_after
        )

    @api.exception_handler(AuthenticationError)
    def unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        sent = request.headers.get("Authorization", "")
        detail = (
            "the bearer token is unknown or revoked"
            if sent.lower().startswith("bearer ")
            else "send an API token as 'Authorization: Bearer TOKEN' (manage.py createtoken USER)"
        )
        return problem_response(401, "unauthenticated", detail)

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        code = _CODES_BY_STATUS.get(exc.status_code, "error")
        return problem_response(exc.status_code, code, str(exc))

    @api.exception_handler(ValidationError)
    def validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        return _validation_problem(exc)

    @api.exception_handler(Http404)
    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return api_not_found(request)


def api_not_found(request: HttpRequest, path: str = "") -> HttpResponse:
    """404 for any address under /api/ that is not an endpoint (also the catch-all view)."""
    return problem_response(404, "not_found", "there is no such endpoint or resource")
