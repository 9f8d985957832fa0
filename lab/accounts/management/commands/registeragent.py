"""manage.py registeragent TENANT SLUG --connector C [--url U --model M --key-env V --name N]."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from pydantic import ValidationError

from lab.accounts.agent_forms import NewAgentForm
from lab.accounts.agent_targets import CONNECTORS
from lab.accounts.agents import secret_env_refusal
from lab.accounts.models import Agent, Tenant


class Command(BaseCommand):
    help = (
        "Register a tenant's agent under test, as /t/TENANT/agents/ does (an agent of that slug "
        "is updated): its URL follows the same rules, LAB_ALERT_ALLOWED_HOSTS included."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("tenant")
        parser.add_argument("slug", help="lower-case letters, digits, - and _")
        parser.add_argument("--connector", required=True, choices=sorted(CONNECTORS))
        parser.add_argument("--url", default="", help="http(s)://… (openai) or ws(s)://…/ws")
        parser.add_argument("--model", default="")
        parser.add_argument("--key-env", default="", help="the LAB_AGENT_KEY_… variable's name")
        parser.add_argument("--name", default="")
        parser.add_argument(
            "--tools", type=Path, metavar="FILE", help="the agent's own tools file (checktools)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant {options['tenant']!r} (manage.py createtenant)")
        try:
            form = NewAgentForm.model_validate(
                {
                    "slug": options["slug"],
                    "name": options["name"],
                    "connector": options["connector"],
                    "endpoint": options["url"],
                    "model": options["model"],
                    "secret_env": options["key_env"],
                    "tools": _read(options["tools"]),
                },
                context={"tenant": tenant.slug},
            )
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg'].removeprefix('Value error, ')}"
                for e in error.errors(include_url=False)
            )
            raise CommandError(problems) from None
        if refusal := secret_env_refusal(form.secret_env, tenant.slug):
            raise CommandError(f"--key-env: {refusal}")
        fields = form.stored()
        slug = fields.pop("slug")
        _, created = Agent.objects.update_or_create(tenant=tenant, slug=slug, defaults=fields)
        state = "registered" if created else "updated"
        self.stdout.write(f"agent {tenant.slug}/{slug} {state}")


def _read(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.read_text()
    except OSError as error:
        raise CommandError(f"--tools: {error}") from None
