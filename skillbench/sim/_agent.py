"""The simulated agent model: from a CLI request, the next assistant message and, at the answer, the truth.

A run is planned from draws keyed on (seed, run id, decision): optionally a WebSearch, then how the skill
is reached (the Skill tool, a Read of the listed SKILL.md, or a curl of the published site; how likely each is
follows the prompt's relevance to the skill's description, :mod:`skillbench.sim._triggering`), then the
linked sub-skill, then perhaps a tool outside the allow-list, then a task's work in its workspace
(:mod:`skillbench.sim._tasks`), then the answer. The plan is recomputed from the same request contents on
every turn; the turn index (assistant messages so far) says which step is due. What the answer covers
depends on what actually came back in the tool results, so the truth reflects the conversation the CLI
really had. A prompt's checks get one truth row each (``item_type`` ``check``), saying what a correct
grader will find. The version of the skill the listing shows (:mod:`skillbench.sim._versions`) scales the
skill's gain before anything is decided, so the truth records what that version really did.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skillbench.ledgers import SKILL_FILE, TruthRow
from skillbench.sim import (
    _answers as answers,
    _check_text as check_text,
    _draws as draws,
    _tasks as tasks,
    _triggering as triggering,
)
from skillbench.sim._claims import line_matches, line_violates
from skillbench.sim._conversation import Conversation, ToolCall
from skillbench.sim._profiles import AgentProfile, SkillVersion
from skillbench.sim._versions import version_key
from skillbench.suite import PromptSpec, Suite, absence_indexes, carries_placebo
from skillbench.vocab import CHECK_ITEM

Route = str  # skill_tool | file_read | web_fetch | none


@dataclass
class Reply:
    """The assistant message to send back, and what the server must do with it."""

    content: list[dict[str, Any]]
    stop_reason: str
    truth: list[TruthRow] = field(default_factory=list)
    cross_budget: bool = False
    web_search_requests: int = 0


class Agent:
    """Decides the simulated model's messages for one suite.

    Args:
        suite: the loaded suite (prompts, rubrics, skills), or None for generic answers only.
        seed: the endpoint's seed.
        site_base: the published site as this endpoint serves it (``http://127.0.0.1:PORT/site``).
        versions: the profile file's ``skill_versions`` (version key -> gain); None or empty: every version
            behaves as the profiles say.
    """

    def __init__(self, suite: Suite | None, seed: int, site_base: str,
                 versions: Mapping[str, SkillVersion] | None = None):
        self.suite = suite
        self.seed = seed
        self.site_base = site_base.rstrip("/")
        self.versions: Mapping[str, SkillVersion] = versions or {}
        self.common = self._common_words(suite)

    @staticmethod
    def _common_words(suite: Suite | None) -> frozenset[str]:
        """Words in more than half of the suite's hub descriptions: they say nothing about which skill fits."""
        if suite is None:
            return frozenset()
        return triggering.common_words((s.name, s.description) for s in suite.skills.values()
                                       if s.leaf.count("/") == 1)

    # -- identity ---------------------------------------------------------------------------------
    def find_prompt(self, conv: Conversation) -> PromptSpec | None:
        if self.suite is None or not conv.prompt:
            return None
        return self.suite.find_by_prompt_text(conv.prompt)

    def _names(self, spec: PromptSpec) -> set[str]:
        hub = self.suite.skills.get(f"{spec.family}/{SKILL_FILE}") if self.suite else None
        return {spec.family} | ({hub.name} if hub else set())

    def listed_name(self, conv: Conversation, spec: PromptSpec) -> str | None:
        """The name the listing shows the prompt's family's hub skill by, or None when it is not listed."""
        return next((n for n in sorted(self._names(spec)) if n in conv.listing), None)

    def version_gain(self, conv: Conversation, spec: PromptSpec) -> float:
        """The installed version's gain (profile ``skill_versions``), keyed on the hub's listed description.

        1.0 when the hub is not listed (nothing says which version a fetched copy is) or its key has no entry.
        A held-out prompt (the suite's held-out prefix or tag, as this endpoint's suite read it) takes the entry's
        ``heldout_gain`` when it has one: how a version tuned to the scored prompts is scripted.
        """
        listed = self.listed_name(conv, spec) if self.versions else None
        if listed is None:
            return 1.0
        entry = self.versions.get(version_key(conv.listing[listed]))
        return 1.0 if entry is None else entry.for_prompt(spec.heldout)

    def _u(self, run_id: str, *key: object) -> float:
        return draws.uniform(self.seed, "agent", run_id, *key)

    # -- planning ---------------------------------------------------------------------------------
    def relevance(self, prof: AgentProfile, prompt: str, name: str, description: str) -> float:
        """The prompt's relevance to a skill's description (:func:`skillbench.sim._triggering.relevance`)."""
        return triggering.relevance(prof, prompt, triggering.read_description(name, description, self.common))[0]

    def trigger_probability(self, prof: AgentProfile, prompt: str, name: str, description: str) -> float:
        """Propensity to call the Skill tool: ``trigger`` × the prompt's relevance, at most 1."""
        return min(1.0, prof.trigger * self.relevance(prof, prompt, name, description))

    def _hub_relevance(self, conv: Conversation, spec: PromptSpec, prof: AgentProfile) -> float:
        """Relevance to the family's hub as the suite describes it (the self-serve route needs no listing)."""
        hub = self.suite.skills.get(f"{spec.family}/{SKILL_FILE}") if self.suite else None
        return 1.0 if hub is None else self.relevance(prof, conv.prompt, hub.name, hub.description)

    def plan(self, conv: Conversation, spec: PromptSpec | None, prof: AgentProfile, run_id: str) -> list[str]:
        """The tool steps of a run before its answer (the same on every turn of the run)."""
        steps: list[str] = []
        if self._u(run_id, "t0", "web_search") < prof.web_search:
            steps.append("web_search")
        if spec is not None:
            listed = self.listed_name(conv, spec)
            hub_leaf = f"{spec.family}/{SKILL_FILE}"
            route = "none"
            # The fallbacks follow the same reading of the description: an off-topic or excluded prompt
            # reaches the skill by no route, not only not by the Skill tool.
            if listed is not None:
                fit = self.relevance(prof, conv.prompt, listed, conv.listing[listed])
                if self._u(run_id, "t0", "trigger") < min(1.0, prof.trigger * fit):
                    route = "skill"
                elif conv.config_dir and self._u(run_id, "t0", "file_read") < prof.file_read * min(1.0, fit):
                    route = "read_hub"
            if route == "none" and self._u(run_id, "t0", "self_serve") < prof.self_serve * min(
                    1.0, self._hub_relevance(conv, spec, prof)):
                route = "curl_leaf"
            if route != "none":
                steps.append(route)
            if route in ("skill", "read_hub") and spec.leaf != hub_leaf:
                if self._u(run_id, "t1", "follow_link") < prof.follow_link:
                    steps.append("read_leaf")
        task = self.task(conv, spec, prof, run_id) if spec is not None else None
        # A task that may write gets no denied Write: its Write would run and touch the workspace.
        if self._u(run_id, "deny") < prof.deny_rate and not (task and task.active and "write" in task.tools):
            steps.append("write")
        return steps + (task.steps() if task else [])

    def share(self, conv: Conversation, spec: PromptSpec, prof: AgentProfile) -> float:
        """The share of the skill's gain in context, from the tool calls that happened, times the version's gain.

        Every probability the share interpolates (rubric items, ``solve``, ``check``) goes through
        ``Pair.at``, which clamps: a gain of 0 gives the without-skill probabilities, a negative gain worse ones.
        A loaded placebo (its neutral text in the request: :func:`skillbench.suite._placebo.carries_placebo`) is
        worth the profile's ``placebo_gain`` instead, whatever its listed description's version says.
        """
        _, hub, leaf = self.observe(conv, spec)
        if hub and any(carries_placebo(t) for t in conv.texts):
            return prof.placebo_gain
        share = 1.0 if leaf else (prof.hub_only_share if hub else 0.0)
        gain = self.version_gain(conv, spec)
        return share if gain == 1.0 else share * gain

    def task(self, conv: Conversation, spec: PromptSpec, prof: AgentProfile, run_id: str) -> tasks.TaskRun:
        return tasks.TaskRun(spec, self.suite, conv, prof, self.seed, run_id, self.share(conv, spec, prof))

    # -- one turn ---------------------------------------------------------------------------------
    def reply(self, conv: Conversation, prof: AgentProfile, run_id: str, attempt: int) -> Reply:
        """The assistant message for this request."""
        spec = self.find_prompt(conv)
        steps = self.plan(conv, spec, prof, run_id)
        if conv.turn < len(steps):
            if steps[conv.turn] in tasks.TASK_STEPS and spec is not None:
                content = self.task(conv, spec, prof, run_id).tool_step(steps[conv.turn], conv.turn)
                return Reply(content=content, stop_reason="tool_use")
            return self._tool_step(steps[conv.turn], conv, spec, run_id)
        return self._answer(conv, spec, prof, run_id, attempt)

    def _tool_use(self, run_id: str, turn: int, name: str, inp: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_use", "id": "toolu_" + draws.short_id(self.seed, run_id, turn, name),
                "name": name, "input": inp}

    def _tool_step(self, step: str, conv: Conversation, spec: PromptSpec | None, run_id: str) -> Reply:
        t = conv.turn
        content: list[dict[str, Any]]
        if step == "web_search":
            query = " ".join(conv.prompt.split()[:10]) or "data analysis"
            content = [self._tool_use(run_id, t, "WebSearch", {"query": query})]
        elif step == "write":
            path = f"{(conv.cwd or '/tmp').rstrip('/')}/analysis-notes.md"
            content = [{"type": "text", "text": "I'll jot the plan down in a notes file."},
                       self._tool_use(run_id, t, "Write", {"file_path": path, "content": "# Notes\n\n- plan\n"})]
        else:
            assert spec is not None
            name = self.listed_name(conv, spec) or spec.family
            rel = spec.leaf.split("/", 1)[1] if "/" in spec.leaf else SKILL_FILE
            if step == "skill":
                content = [{"type": "text", "text": f"I'll load the {name} skill first."},
                           self._tool_use(run_id, t, "Skill", {"skill": name})]
            elif step == "read_hub":
                path = f"{conv.config_dir}/skills/{spec.family}/{SKILL_FILE}"
                content = [{"type": "text", "text": f"The {name} skill looks relevant; reading its SKILL.md."},
                           self._tool_use(run_id, t, "Read", {"file_path": path})]
            elif step == "read_leaf":
                base = conv.skill_bases[-1] if conv.skill_bases else f"{conv.config_dir}/skills/{spec.family}"
                content = [{"type": "text", "text": f"The skill links a more specific guide ({rel}); reading it."},
                           self._tool_use(run_id, t, "Read", {"file_path": f"{base.rstrip('/')}/{rel}"})]
            else:  # curl_leaf: self-serve the published skill
                url = f"{self.site_base}/{spec.leaf}"
                content = [{"type": "text", "text": "There is a published guide for this; fetching it."},
                           self._tool_use(run_id, t, "Bash", {"command": f"curl -s {url}",
                                                              "description": "Fetch the published skill"})]
        return Reply(content=content, stop_reason="tool_use")

    # -- the answer -------------------------------------------------------------------------------
    def observe(self, conv: Conversation, spec: PromptSpec) -> tuple[Route, bool, bool]:
        """From the tool calls that happened: the activation route, hub and leaf content in context."""
        names = self._names(spec)
        hub_leaf = f"{spec.family}/{SKILL_FILE}"
        route_rank = {"skill_tool": 3, "file_read": 2, "web_fetch": 1, "none": 0}
        route, hub, leaf = "none", False, False

        def loaded(call: ToolCall) -> bool:
            return call.result is not None and not call.is_error

        for call in conv.calls:
            if call.denied:
                continue
            kind, got = None, None
            if call.name == "Skill" and str(call.input.get("skill", "")) in names:
                kind, got = "skill_tool", (hub_leaf if loaded(call) and conv.skill_bases else None)
            elif call.name == "Read":
                path = str(call.input.get("file_path", ""))
                if path.endswith(f"/{SKILL_FILE}") and f"/skills/{spec.family}/" in path:
                    kind = "file_read"
                    got = spec.family + path.split(f"/skills/{spec.family}", 1)[1] if loaded(call) else None
            elif call.name == "Bash" and self.site_base and f"{self.site_base}/{spec.family}/" in str(
                    call.input.get("command", "")):
                kind = "web_fetch"
                cmd = str(call.input.get("command", ""))
                got = cmd.split(f"{self.site_base}/", 1)[1].split()[0] if loaded(call) else None
            if kind and route_rank[kind] > route_rank[route]:
                route = kind
            if got == hub_leaf:
                hub = True
            if got == spec.leaf:
                leaf = True
        return route, hub or leaf, leaf or (hub and spec.leaf == hub_leaf)

    def decide(self, spec: PromptSpec, prof: AgentProfile, run_id: str, share: float) -> list[str]:
        """covered | violated | omitted per rubric item, given the share of the skill's gain in context."""
        out = []
        for i, item in enumerate(spec.test.rubric):
            pair = {"must": prof.must, "bonus": prof.bonus, "avoid": prof.avoid}[item.type]
            # Per-item difficulty is a property of the prompt, not of the run: same offset in every arm.
            offset = prof.item_spread * draws.normal(self.seed, "difficulty", spec.name, i)
            p = draws.adjust(pair.at(share), -offset if item.type == "avoid" else offset)
            hit = self._u(run_id, "answer", "item", i) < p
            out.append(("violated" if item.type == "avoid" else "covered") if hit else "omitted")
        return out

    def _answer(self, conv: Conversation, spec: PromptSpec | None, prof: AgentProfile, run_id: str,
                attempt: int) -> Reply:
        rnd = draws.rng(self.seed, "agent", run_id, "answer", "text")
        cross = self._u(run_id, "answer", "budget") < prof.budget_cross
        if spec is None:
            text = answers.generic_answer(rnd, prof.verbosity)
            return Reply([{"type": "text", "text": text}], "end_turn", cross_budget=cross)
        route, _, leaf = self.observe(conv, spec)
        share = self.share(conv, spec, prof)
        decided = self.decide(spec, prof, run_id, share)
        items = [(it.type, it.text) for it in spec.test.rubric]
        stated = [i for i, d in enumerate(decided) if d != "omitted"]
        # An absence must that is covered says nothing; one that is not commits its violation (sim/_claims.py).
        absent = absence_indexes(spec.test.rubric, rule=spec.absence_rule)
        # The code block draws from its own stream: an answer of a suite without a Python surface is unchanged.
        fabricated = self._u(run_id, "answer", "fabricate") < prof.fabricate.at(share)
        code = answers.code_block(self._python_libraries(), fabricated,
                                  draws.rng(self.seed, "agent", run_id, "answer", "code"), items)
        text = answers.compose(items, stated, rnd, prof.verbosity, absence=absent, code=code)
        checks = spec.test.checks
        if checks:
            text, decided = self._check_answer(text, decided, conv, spec, prof, run_id, share, absent)
        truth = [
            TruthRow(run_id, attempt, conv.model, spec.name, route, int(leaf), i, item.type, decided[i])
            for i, item in enumerate(spec.test.rubric)
        ]
        if checks:
            work = tasks.TaskRun(spec, self.suite, conv, prof, self.seed, run_id, share)
            truth += [TruthRow(run_id, attempt, conv.model, spec.name, route, int(leaf), i, CHECK_ITEM,
                               tasks.check_status(c, work, text, cross), c.check_id) for i, c in enumerate(checks)]
        return Reply([{"type": "text", "text": text}], "end_turn", truth=truth, cross_budget=cross)

    def _python_libraries(self) -> list[str]:
        """The distributions of the Python API surfaces the suite declares ([[api]]): what its answers' code uses."""
        if self.suite is None:
            return []
        return [api.package for api in self.suite.config.api if api.language == "python"]

    def _check_answer(self, text: str, decided: list[str], conv: Conversation, spec: PromptSpec,
                      prof: AgentProfile, run_id: str, share: float, absent: frozenset[int] = frozenset()
                      ) -> tuple[str, list[str]]:
        """The answer with the output checks' lines in it, and the rubric outcomes that answer really has."""
        outputs = [c for c in spec.test.checks if c.type in tasks.OUTPUT_CHECKS]
        wanted = tasks.output_wanted(outputs, prof, share, lambda cid: self._u(run_id, "check", cid))
        lines = check_text.lines_for(outputs, wanted, lambda cid, n: draws.rng(self.seed, "agent", run_id,
                                                                             "check", cid, "text", n))
        text = check_text.place_lines(text, lines, wanted, outputs)
        # A check line that happens to state a rubric item states it: truth says what the judge will read.
        added = [ln for _, t in lines for ln in t.splitlines()]
        for i, item in enumerate(spec.test.rubric):
            if i in absent:
                if decided[i] == "covered" and any(line_violates(ln, item.text) for ln in added):
                    decided[i] = "omitted"  # the line commits the violation the must rules out
            elif decided[i] == "omitted" and any(line_matches(ln, item.text) for ln in added):
                decided[i] = "violated" if item.type == "avoid" else "covered"
        return text, decided

    # -- the WebSearch server-tool sub-request ----------------------------------------------------
    def web_search(self, conv: Conversation, run_id: str) -> Reply:
        """Results the CLI's WebSearch tool receives: reserved example domains, never fetched."""
        query = conv.search_query or "search"
        slug = "-".join(re.findall(r"[a-z0-9]+", query.lower())[:6]) or "result"
        srv_id = "srvtoolu_" + draws.short_id(self.seed, run_id, "search", query)
        results = [
            {"type": "web_search_result", "url": f"https://example.org/articles/{slug}",
             "title": f"{query[:60]} - an overview", "encrypted_content": "c2ltdWxhdGVk", "page_age": None},
            {"type": "web_search_result", "url": f"https://docs.example.com/guide/{slug}",
             "title": f"Guide: {query[:60]}", "encrypted_content": "c2ltdWxhdGVkMg==", "page_age": None},
        ]
        content = [
            {"type": "text", "text": "Searching for that."},
            {"type": "server_tool_use", "id": srv_id, "name": "web_search", "input": {"query": query}},
            {"type": "web_search_tool_result", "tool_use_id": srv_id, "content": results},
            {"type": "text", "text": f"Two general pages discuss {query[:80]}; neither is specific to your data."},
        ]
        return Reply(content, "end_turn", web_search_requests=1)
