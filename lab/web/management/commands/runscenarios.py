"""Headless runs: the scripted caller plays each scenario through the browser's WebSocket path."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.connectors.registry import (
    API_KEY_ENV,
    AgentSpec,
)
from lab.evaluation.evaluator import evaluate
from lab.evaluation.noise import Outcome, ScenarioNoise, outcome_of
from lab.evaluation.verdicts import Verdict
from lab.events import store
from lab.events.models import Run, TrialGroup
from lab.events.types import Channel, Mode
from lab.reports.export import report_bytes
from lab.reports.services import report_for_run
from lab.runs.services import run_start
from lab.runs.trials import trial_group_create
from lab.scenarios.catalog import (
    SCENARIO_DIRS_ENV,
    UnknownScenario,
    all_contracts,
    contract_get,
    free_contract,
)
from lab.scenarios.contracts import Contract
from lab.tools.adapters import ADAPTERS
from lab.web.management.agent_choice import (
    RunStart,
    agent_of,
    attribution,
    trials_path,
    versus_agent,
    with_tools,
)
from lab.web.management.agent_tools import results_read
from lab.web.management.concurrent_calls import measured, play_together
from lab.web.management.database import require_migrated
from lab.web.management.headless import free_lines, play_headless, play_served
from lab.web.management.trial_noise import AgentTrials, print_comparison

MAX_TRIALS = 100
MAX_CALLS = 50


class Command(BaseCommand):
    help = "Play each scenario's scripted caller headless and print one verdict line per scenario."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", action="append", dest="scenarios", metavar="ID")
        parser.add_argument(
            "--scenarios",
            type=Path,
            metavar="DIR",
            dest="scenario_dir",
            help="also the scenarios in DIR (a team's own, or maketemplates' output)",
        )
        parser.add_argument("--unguarded", action="store_true", help="take the policy gate out")
        parser.add_argument(
            "--ungrounded",
            action="store_true",
            help="take the knowledge base away: the agent makes up what it does not know",
        )
        parser.add_argument(
            "--channel", choices=[c.value for c in Channel], default=Channel.TYPED.value
        )
        parser.add_argument(
            "--out", type=Path, help="write each run's signed evidence report to DIR/ID.json"
        )
        parser.add_argument(
            "--free",
            type=Path,
            metavar="FILE",
            help="a free call (both tools, no script) with the caller lines in FILE, typed",
        )
        parser.add_argument(
            "--agent",
            default="scripted",
            metavar="SPEC",
            help="the agent under test: scripted (the lab's own, the default) or openai:URL "
            f"(its API key from ${API_KEY_ENV}, if it needs one); with --agent-slug, the "
            "registered agent's own connector",
        )
        parser.add_argument("--model", default="", help="the outside agent's model name")
        parser.add_argument(
            "--tools",
            type=Path,
            metavar="FILE",
            help="the outside agent's own tools file (its tools list and what each means): the "
            "lab serves and reads its tools in its own names and shapes",
        )
        parser.add_argument(
            "--trials",
            type=int,
            metavar="K",
            help="run each scenario K times and report pass^K, the pass rate with its 95%% "
            "interval and the verdict-flip rate",
        )
        parser.add_argument(
            "--versus",
            metavar="SPEC",
            help="with --trials: run the same trials of a second agent (its model --versus-model) "
            "and say per scenario whether the two differ beyond noise",
        )
        parser.add_argument("--versus-model", default="", help="the --versus agent's model name")
        parser.add_argument(
            "--baseline",
            action="store_true",
            help="with --trials: an A/A run, the same agent's trials twice, measuring the noise "
            "floor",
        )
        parser.add_argument(
            "--as-is",
            action="store_true",
            help="judge the agent on its own: the gate only observes (an unguarded run)",
        )
        parser.add_argument(
            "--tenant",
            help="the tenant the runs are for: their audit rows, cases and alerts land there "
            "(with --agent-slug; without both, nothing lands in any tenant)",
        )
        parser.add_argument(
            "--agent-slug",
            help="the tenant's registered agent: the runs test it (its connector, URL, model and "
            "key) and are attributed to it",
        )
        parser.add_argument(
            "--calls",
            type=int,
            metavar="N",
            help="place N simultaneous calls per scenario (each its own run and report) and "
            "print latency p50/p95, failed connections and the lab's own capacity",
        )
        parser.add_argument(
            "--sandbox-port",
            type=int,
            metavar="PORT",
            help="serve the runs' tools over HTTP on 127.0.0.1:PORT/sandbox/tools/NAME while they "
            "play (bearer token $LAB_SANDBOX_TOKEN): where a deployed bot's tools point",
        )
        parser.add_argument(
            "--time-scale",
            type=float,
            help="compress the conversation clock (1.0 = real time); typed channel only",
        )

    def check_options(self, options: dict[str, Any]) -> None:
        """Refuse option combinations that cannot run, before anything is touched.

        Pure: the README check calls it on every `runscenarios` example it shows."""
        if options["free"] and (options["scenarios"] or options["channel"] != "typed"):
            raise CommandError("--free runs the free call alone, on the typed channel")
        if bool(options["tenant"]) != bool(options["agent_slug"]):
            raise CommandError(
                "--tenant and --agent-slug go together: name the tenant and its agent"
            )
        if options["agent_slug"] and (options["agent"] != "scripted" or options["model"]):
            raise CommandError(
                "--agent-slug runs the agent as its tenant registered it (connector, URL, model, "
                "key's variable): drop --agent and --model, or register another agent "
                "(manage.py registeragent, or /t/TENANT/agents/)"
            )
        if options["agent"] == "scripted" and options["model"]:
            raise CommandError(
                "--model names an outside agent's model; the scripted agent has none"
            )
        scale = options["time_scale"]
        if scale is not None and not 0.001 <= scale <= 10:
            raise CommandError("--time-scale must lie in [0.001, 10]")
        trials = options["trials"]
        if trials is not None and not 1 <= trials <= MAX_TRIALS:
            raise CommandError(f"--trials must lie in [1, {MAX_TRIALS}]")
        calls = options.get("calls")
        if calls is not None and not 1 <= calls <= MAX_CALLS:
            raise CommandError(f"--calls must lie in [1, {MAX_CALLS}]")
        if calls is not None and (trials is not None or options["free"]):
            raise CommandError("--calls places scripted calls once each: no --trials or --free")
        port = options.get("sandbox_port")
        if port is not None and not 1 <= port <= 65535:
            raise CommandError("--sandbox-port must be a TCP port (1-65535)")
        if (options["versus"] or options["baseline"]) and trials is None:
            raise CommandError("--versus and --baseline compare repeat trials: give --trials K")
        if options["versus"] and options["baseline"]:
            raise CommandError("--baseline runs the same agent twice; --versus names another")

    def handle(self, *args: Any, **options: Any) -> None:
        self.check_options(options)
        require_migrated()
        tenant_agent = attribution(options["tenant"], options["agent_slug"])
        lines = free_lines(options["free"]) if options["free"] else None
        if options["scenario_dir"] is not None:
            if not options["scenario_dir"].is_dir():
                raise CommandError(f"--scenarios: {options['scenario_dir']} is not a folder")
            folders = list(filter(None, os.environ.get(SCENARIO_DIRS_ENV, "").split(os.pathsep)))
            # Run again in one process (a test, a notebook), the same folder is read once, not
            # twice: its scenarios would collide with themselves ("id ... is already taken").
            if options["scenario_dir"].resolve() not in {Path(f).resolve() for f in folders}:
                folders.append(str(options["scenario_dir"]))
            os.environ[SCENARIO_DIRS_ENV] = os.pathsep.join(folders)
        try:
            names = options["scenarios"] or sorted(all_contracts())
            contracts = [free_contract()] if lines else [contract_get(s) for s in names]
        except (UnknownScenario, ValueError) as error:
            raise CommandError(str(error)) from None
        if options["time_scale"] is not None:
            settings.LAB_TIME_SCALE = options["time_scale"]
        out: Path | None = options["out"]
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        agent = with_tools(agent_of(options, tenant_agent), options["tools"], self.stderr)
        # A typo'd action ("bok") is refused before anything plays, never run to a verdict.
        unknown = [
            f"{c.id}: {p}" for c in contracts for p in c.unknown_actions(agent.known_actions)
        ]
        if unknown:
            raise CommandError("\n".join(unknown))
        contracts = self._applicable(contracts, agent)
        trials: int | None = options["trials"]
        unguarded = options["unguarded"] or options["as_is"]
        start = RunStart(
            mode=Mode.UNGUARDED if unguarded else Mode.GUARDED,
            channel=Channel(options["channel"]),
            ungrounded=options["ungrounded"],
            agent=agent,
            tenant_agent=tenant_agent,
            sandbox_port=options["sandbox_port"],
        )
        if options.get("calls"):
            verdicts = [
                self._calls(contract, start, options["calls"], out) for contract in contracts
            ]
            if any(verdict is not Verdict.PASS for verdict in verdicts):
                raise SystemExit(1)
            return
        if trials is None:
            verdicts = [self._once(contract, start, lines, out) for contract in contracts]
            if any(verdict is not Verdict.PASS for verdict in verdicts):
                raise SystemExit(1)
            return
        first = self._agent_trials(contracts, start, lines, out, trials)
        second = None
        if options["versus"] or options["baseline"]:
            versus = versus_agent(options) if options["versus"] else agent
            again = replace(
                start, agent=versus, tenant_agent=None if options["versus"] else start.tenant_agent
            )
            second = self._agent_trials(
                contracts, again, lines, out / "versus" if out else None, trials
            )
            print_comparison(self.stdout, first, second, baseline=options["baseline"])
        failed = [
            noise for run in (first, second) if run for _, noise in run.rows if not noise.pass_k
        ]
        if failed:
            raise SystemExit(1)

    def _agent_trials(
        self,
        contracts: list[Contract],
        start: RunStart,
        lines: list[str] | None,
        out: Path | None,
        trials: int,
    ) -> AgentTrials:
        """One agent's K trials of every scenario, each row printed as it finishes."""
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        group = trial_group_create(trials=trials)
        rows = [(c.id, self._trials(c, start, lines, out, group)) for c in contracts]
        found = AgentTrials(label=start.agent.label(), rows=rows)
        self.stdout.write(found.summary())
        self.stdout.write(f"trials page: {trials_path(group, start.tenant_agent)}")
        return found

    def _applicable(self, contracts: list[Contract], agent: AgentSpec) -> list[Contract]:
        """The scenarios the agent's own tools can play; each other one is said not applicable,
        with the reason, rather than run to an INCONCLUSIVE."""
        if agent.toolset is None:
            return contracts
        offered = agent.toolset.actions
        kept = []
        for contract in contracts:
            # What its lines mean to do (a cancel), else what its sandbox tools do.
            meant = {
                line.means.action for line in contract.caller if line.means and line.means.action
            }
            wanted = meant or {ADAPTERS[name].action for name in contract.tools}
            lacking = sorted(str(action) for action in wanted if action not in offered)
            if lacking and len(lacking) == len(wanted):
                self.stdout.write(f"{contract.id} NOT_APPLICABLE")
                self.stderr.write(
                    f"  {contract.id}: the agent's tools offer no {' or '.join(lacking)} action"
                )
            else:
                kept.append(contract)
        return kept

    def _play(
        self,
        contract: Contract,
        start: RunStart,
        lines: list[str] | None,
        trial: tuple[TrialGroup, int] | None = None,
    ) -> Run:
        run = run_start(
            scenario_id=contract.id,
            mode=start.mode,
            channel=start.channel,
            ungrounded=start.ungrounded,
            agent=start.agent,
            tenant_agent=start.tenant_agent,
            trial=trial,
        )
        asyncio.run(play_served(start.sandbox_port, run, lines))
        for line in results_read(store.run_events(run)):
            self.stderr.write(f"  inferred in {contract.id}: {line}")
        return run

    def _once(
        self, contract: Contract, start: RunStart, lines: list[str] | None, out: Path | None
    ) -> Verdict:
        run = self._play(contract, start, lines)
        evaluation = evaluate(contract, store.run_events(run))
        self.stdout.write(f"{contract.id} {evaluation.verdict.value}")
        if evaluation.verdict is not Verdict.PASS:
            # Why, with the turns named, on stderr: stdout stays one "ID VERDICT" line each.
            self.stderr.write(f"  {evaluation.reason}")
        if out is not None:
            (out / f"{contract.id}.json").write_bytes(report_bytes(report_for_run(run)))
        return evaluation.verdict

    def _calls(self, contract: Contract, start: RunStart, calls: int, out: Path | None) -> Verdict:
        """N calls at once, each its own run: a verdict line per call, then what they measured;
        the worst verdict stands for the scenario."""
        runs = [
            run_start(
                scenario_id=contract.id,
                mode=start.mode,
                channel=start.channel,
                ungrounded=start.ungrounded,
                agent=start.agent,
                tenant_agent=start.tenant_agent,
            )
            for _ in range(calls)
        ]
        stats = asyncio.run(play_together(runs, start.sandbox_port, play_headless))
        logs, verdicts = [], []
        for number, run in enumerate(runs, 1):
            events = store.run_events(run)
            evaluation = evaluate(contract, events)
            logs.append(events)
            verdicts.append(evaluation.verdict)
            self.stdout.write(f"{contract.id} call{number} {evaluation.verdict.value} run {run.id}")
            if evaluation.verdict is not Verdict.PASS:
                self.stderr.write(f"  {contract.id} call {number}: {evaluation.reason}")
            if out is not None:
                report = report_bytes(report_for_run(run))
                (out / f"{contract.id}.call{number}.json").write_bytes(report)
        for line in measured(stats, logs).lines(calls):
            self.stdout.write(f"  {line}")
        worst = (Verdict.FAIL, Verdict.INCONCLUSIVE)
        return next((v for v in worst if v in verdicts), Verdict.PASS)

    def _trials(
        self,
        contract: Contract,
        start: RunStart,
        lines: list[str] | None,
        out: Path | None,
        group: TrialGroup,
    ) -> ScenarioNoise:
        """Run one scenario K times; prints pass^K, the pass rate, its interval and flips."""
        outcomes: list[Outcome] = []
        for trial in range(1, group.trials + 1):
            run = self._play(contract, start, lines, (group, trial))
            events = store.run_events(run)
            evaluation = evaluate(contract, events)
            types = (event.type for event in events)
            given = contract.persona is not None
            outcomes.append(outcome_of(evaluation.verdict, types, persona_given=given))
            if evaluation.verdict is not Verdict.PASS:
                self.stderr.write(
                    f"  {contract.id} trial {trial}: {evaluation.verdict.value} {evaluation.reason}"
                )
            if out is not None:
                report = report_bytes(report_for_run(run))
                (out / f"{contract.id}.trial{trial}.json").write_bytes(report)
        noise = ScenarioNoise(tuple(outcomes))
        self.stdout.write(f"{contract.id} {noise.label()}")
        return noise
