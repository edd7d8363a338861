"""Behaviour profiles of the simulated models and judges, and the fault plan, read from a YAML file.

The shipped file is ``skillbench/data/sim_profiles.yaml``. A profile is chosen by the requested model
name: the longest profile key that occurs in the name wins (``claude-haiku-4-5-20251001`` → ``haiku``),
else ``default``. Tests force behaviour with their own file (probabilities of 0 and 1), never by
special cases in the server. The ``skill_versions`` section changes a skill family's effect by the version
installed (:mod:`skillbench.sim._versions`); without it every run behaves as the profiles alone say. The
``batches`` section paces the Message Batches routes (:mod:`skillbench.sim._batches`) and may limit their
requests (``batches.rate_limit``, off when absent), ``cache`` says whose
``cache_control`` blocks are honoured in the usage (:mod:`skillbench.sim._usage`), and ``rate_limit`` (absent:
off) puts token buckets in front of ``/v1/messages`` (:mod:`skillbench.sim._ratelimit`).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from skillbench.sim._versions import KEY_LENGTH, is_version_key

Probability = float
FaultKind = Literal[
    "rate_limit", "server_error", "overloaded", "slow_first_byte", "stall", "truncated", "malformed",
    "stream_error",
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]


class ProfileError(ValueError):
    """A profile file that cannot be used; the message names the file and the field."""


class Pair(BaseModel):
    """A probability without and with the target skill's content in context."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    without: Probability = Field(ge=0, le=1)
    with_: Probability = Field(alias="with", ge=0, le=1)

    def at(self, share: float) -> float:
        """Interpolated: ``share`` 0 is without the skill, 1 with it; clamped to [0, 1].

        A skill version's gain (``skill_versions``) can put ``share`` outside [0, 1]: a negative share
        extrapolates below ``without`` (a harmful version), one above 1 beyond ``with``. Inside [0, 1] the
        clamp never changes the value.
        """
        return min(1.0, max(0.0, self.without + share * (self.with_ - self.without)))


class AgentProfile(BaseModel):
    """How a simulated agent model behaves. Every field has a default so a file states only what matters."""

    model_config = ConfigDict(extra="forbid")

    must: Pair = Pair(without=0.55, with_=0.85)
    bonus: Pair = Pair(without=0.25, with_=0.6)
    avoid: Pair = Field(default=Pair(without=0.2, with_=0.05), description="p(commit the violation)")
    item_spread: float = Field(default=0.8, ge=0, description="sd of per-item difficulty on the logit scale")
    hub_only_share: float = Field(default=0.5, ge=0, le=1,
                                  description="share of the skill's gain when only the hub SKILL.md is read")
    placebo_gain: float = Field(default=0.1, ge=-1, le=1,
                                description="share of the skill's gain when a placebo (skillbench.suite._placebo) is "
                                            "loaded instead of the skill: what any extra context is worth")
    # The trigger rule is skillbench.sim._triggering: an exclusion match, else a "Use when" match, else topic overlap.
    trigger: Probability = Field(default=0.75, ge=0, le=1,
                                 description="p(Skill tool) for an on-topic prompt (overlap_saturation shared "
                                             "words with the description's positive part, no 'Use when' match)")
    trigger_floor: float = Field(default=0.05, ge=0, le=1,
                                 description="relevance of an off-topic prompt (no word shared with the "
                                             "description's positive part): the multiplier of trigger")
    overlap_saturation: int = Field(default=4, ge=1, description="shared content words for full topic relevance")
    use_when_gain: float = Field(default=1.25, ge=0,
                                 description="relevance when the prompt matches a 'Use when' context or quoted "
                                             "trigger phrase (trigger x this, capped at 1)")
    exclusion_scale: float = Field(default=0.0, ge=0, le=1,
                                   description="relevance when the prompt matches a 'Do not use for' / 'Not for' "
                                               "context: trigger_floor x this, below any off-topic prompt (0: an "
                                               "explicit exclusion is always honoured)")
    phrase_match: float = Field(default=0.5, gt=0, le=1,
                                description="share of a context's or exclusion's content words the prompt must "
                                            "hold for it to match")
    file_read: Probability = Field(default=0.15, ge=0, le=1,
                                   description="p(Read the listed skill's SKILL.md) when the Skill tool is not "
                                               "used, times the prompt's relevance (at most 1)")
    follow_link: Probability = Field(default=0.8, ge=0, le=1,
                                     description="p(Read the linked sub-skill after the hub is loaded)")
    self_serve: Probability = Field(default=0.05, ge=0, le=1,
                                    description="p(curl the published skill) when nothing else loaded it, times "
                                                "the prompt's relevance to the family's hub (at most 1)")
    web_search: Probability = Field(default=0.03, ge=0, le=1, description="p(one WebSearch before answering)")
    deny_rate: Probability = Field(default=0.02, ge=0, le=1,
                                   description="p(attempting Write, outside the allow-list → a denial)")
    verbosity: float = Field(default=1.0, ge=0, description="filler scale of the answer")
    budget_cross: Probability = Field(default=0.0, ge=0, le=1,
                                      description="p(the answer's usage crosses --max-budget-usd)")
    read_workspace: Probability = Field(default=0.9, ge=0, le=1,
                                        description="p(Read the task's workspace files before answering)")
    solve: Pair = Field(default=Pair(without=0.4, with_=0.75),
                        description="p(write the task's solution files), when Write or Edit is allowed")
    check: Pair = Field(default=Pair(without=0.6, with_=0.85),
                        description="p(the answer satisfies one output check), drawn per check id")
    fabricate: Pair = Field(default=Pair(without=0.0, with_=0.0),
                            description="p(the answer's code block uses one identifier its library lacks), when the "
                                        "suite declares a Python API surface the simulation has code for")


class JudgeProfile(BaseModel):
    """How the simulated judge errs."""

    model_config = ConfigDict(extra="forbid")

    flip_rate: Probability = Field(default=0.03, ge=0, le=1,
                                   description="p(a verdict is flipped), per answer, item and sample")
    fabricated_quote_rate: Probability = Field(default=0.02, ge=0, le=1,
                                               description="p(a met/violated quote is not verbatim)")
    position_bias: Probability = Field(default=0.1, ge=0, le=1,
                                       description="p(the pairwise judge picks A whatever the content)")
    tie_margin: float = Field(default=0.0, ge=0, description="satisfied-item difference still called a tie")
    leniency: Probability = Field(default=0.0, ge=0, le=1,
                                  description="p(an unfavourable reading, a must/bonus missing or an avoid violated, "
                                              "gets the favourable verdict), per answer, item and sample, after the "
                                              "flip")
    length_bias: Probability = Field(default=0.0, ge=0, le=1,
                                     description="p(the pairwise judge picks the longer answer instead of a tie when "
                                                 "both satisfy as many items, within tie_margin; position_bias is "
                                                 "drawn first)")


class FaultSpec(BaseModel):
    """One injected fault: which requests it may hit and how often.

    ``model``, ``role``, ``header`` and ``attempts`` narrow the requests; ``rate`` is the chance per
    matching request; ``limit`` caps injections per run attempt (e.g. "two 529s, then success").
    """

    model_config = ConfigDict(extra="forbid")

    kind: FaultKind
    rate: Probability = Field(default=1.0, ge=0, le=1)
    model: str | None = Field(default=None, description="substring of the requested model name")
    role: Literal["agent", "judge"] | None = None
    header: str | None = Field(default=None, description="'Name: value' the request must carry")
    attempts: list[int] | None = Field(default=None, description="X-Skillbench-Attempt values it applies to")
    limit: int | None = Field(default=None, ge=1, description="at most this many per run attempt")
    retry_after: float = Field(default=1.0, ge=0, description="Retry-After seconds of a 429")
    delay_s: float = Field(default=2.0, ge=0, description="wait before the first byte (slow_first_byte)")
    stall_s: float = Field(default=3600.0, ge=0, description="silence after the first delta (stall)")


def _version_key(key: str) -> str:
    if not is_version_key(key):
        raise PydanticCustomError(
            "version_key", f"not {KEY_LENGTH} lowercase hex digits (the first {KEY_LENGTH} of the sha256 of the "
            "listed description: skillbench.sim._versions.version_key)")
    return key


def _key_text(key: Any) -> Any:
    # YAML reads an unquoted all-digit key as an int; its decimal text is the key that was written.
    return str(key) if isinstance(key, int) and not isinstance(key, bool) else key


class SkillVersion(BaseModel):
    """One installed version of a skill, known by its key (:func:`skillbench.sim._versions.version_key`)."""

    model_config = ConfigDict(extra="forbid")

    gain: float = Field(default=1.0, allow_inf_nan=False,
                        description="multiplier of the skill's gain in context: 1 as the profiles say, 0 no "
                                    "better than no skill, -1 as much worse as the default is better")
    heldout_gain: float | None = Field(
        default=None, allow_inf_nan=False,
        description="the gain for the suite's held-out prompts instead (None: gain): a version tuned to the scored "
                    "prompts helps them and not the held-out ones, which `compare --generalization` must flag")

    def for_prompt(self, heldout: bool) -> float:
        """This version's gain for a prompt: ``heldout_gain`` for a held-out one when set, else ``gain``."""
        return self.heldout_gain if heldout and self.heldout_gain is not None else self.gain


VersionKey = Annotated[str, AfterValidator(_version_key)]


class BatchRateLimitSpec(BaseModel):
    """One requests bucket in front of every Message Batches route (create, retrieve, list, results, cancel,
    delete), shared by all models: the API limits the Batches endpoints' HTTP requests apart from Messages."""

    model_config = ConfigDict(extra="forbid")

    requests_per_minute: float = Field(gt=0, description="HTTP requests a minute over all batch routes")
    retry_after_s: float | None = Field(default=None, ge=0,
                                        description="retry-after of a 429; None: whole seconds until a request "
                                                    "refills")
    burst_s: float = Field(default=60.0, gt=0, description="bucket capacity in seconds of refill (as rate_limit's)")

    def limits(self) -> dict[str, float]:
        """The one bucket: ``requests`` (no token bucket: a batch's HTTP request carries no model call)."""
        return {"requests": self.requests_per_minute}


class BatchSpec(BaseModel):
    """How the simulated Message Batches API processes a batch."""

    model_config = ConfigDict(extra="forbid")

    delay_s: float = Field(default=0.5, ge=0, description="seconds a batch waits in_progress before processing")
    per_request_s: float = Field(default=0.0, ge=0,
                                 description="seconds each request takes once processing starts (so a cancel can "
                                             "land mid-batch)")
    expire_rate: Probability = Field(default=0.0, ge=0, le=1,
                                     description="p(a request ends expired), drawn per custom_id and submission")
    error_rate: Probability = Field(default=0.0, ge=0, le=1,
                                    description="p(a request that did not expire ends errored), drawn likewise")
    rate_limit: BatchRateLimitSpec | None = Field(default=None,
                                                  description="absent or null: the batch routes are not limited")


class CacheSpec(BaseModel):
    """Prompt caching in the reported usage (``cache_control`` breakpoints)."""

    model_config = ConfigDict(extra="forbid")

    # The judge only by default: the CLI marks its system prompt, and honouring that would make a run's cost depend
    # on which run wrote the shared prefix first (scheduling), where today every run's usage is its own.
    roles: list[Literal["agent", "judge"]] = Field(default_factory=lambda: ["judge"],
                                                   description="request roles whose cache_control is honoured")
    ttl_s: float = Field(default=300.0, gt=0, description="lifetime of a 5-minute entry (refreshed on each read)")
    ttl_1h_s: float = Field(default=3600.0, gt=0, description='lifetime of a ttl "1h" entry')
    min_tokens: dict[str, int] = Field(default_factory=dict,
                                       description="model-name key -> minimum cacheable prefix, over the docs' "
                                                   "table (skillbench.sim._usage.MIN_CACHEABLE)")


class RateLimitSpec(BaseModel):
    """Token buckets per requested model in front of ``POST /v1/messages`` (continuous refill)."""

    model_config = ConfigDict(extra="forbid")

    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0, description="input + output tokens")
    input_tokens_per_minute: float | None = Field(default=None, gt=0,
                                                  description="input + cache-write tokens (cache reads are free)")
    output_tokens_per_minute: float | None = Field(default=None, gt=0)
    retry_after_s: float | None = Field(default=None, ge=0,
                                        description="retry-after of a 429; None: whole seconds until the empty "
                                                    "bucket holds enough again")
    burst_s: float = Field(default=60.0, gt=0,
                           description="bucket capacity in seconds of refill (60: a full minute's limit, the API's "
                                       "rule; smaller: a short burst, so a test or benchmark meets 429s quickly)")

    @model_validator(mode="after")
    def _some_limit(self) -> RateLimitSpec:
        if not self.limits():
            raise PydanticCustomError("no_limit", "give at least one of requests_per_minute, tokens_per_minute, "
                                      "input_tokens_per_minute, output_tokens_per_minute (or drop rate_limit)")
        return self

    def limits(self) -> dict[str, float]:
        """Per-minute limit by bucket name (``requests``, ``tokens``, ``input-tokens``, ``output-tokens``), set ones."""
        named = {"requests": self.requests_per_minute, "tokens": self.tokens_per_minute,
                 "input-tokens": self.input_tokens_per_minute, "output-tokens": self.output_tokens_per_minute}
        return {k: v for k, v in named.items() if v is not None}


class Profiles(BaseModel):
    """The whole profile file."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, AgentProfile] = Field(default_factory=lambda: {"default": AgentProfile()})
    judges: dict[str, JudgeProfile] = Field(default_factory=lambda: {"default": JudgeProfile()})
    faults: list[FaultSpec] = Field(default_factory=list)
    skill_versions: dict[VersionKey, SkillVersion] = Field(
        default_factory=dict, description="version key of a listed description -> that version's gain")
    batches: BatchSpec = Field(default_factory=BatchSpec)
    cache: CacheSpec = Field(default_factory=CacheSpec)
    rate_limit: RateLimitSpec | None = Field(default=None, description="absent or null: no rate limit")

    @field_validator("skill_versions", mode="before")
    @classmethod
    def _int_keys(cls, value: Any) -> Any:
        return {_key_text(k): v for k, v in value.items()} if isinstance(value, Mapping) else value

    def agent(self, model: str) -> AgentProfile:
        """The agent profile for a requested model name."""
        return _pick(self.models, model) or AgentProfile()

    def judge(self, model: str) -> JudgeProfile:
        """The judge profile for a requested model name."""
        return _pick(self.judges, model) or JudgeProfile()


def pick_key(table: Mapping[str, Any], model: str) -> str:
    """The key of ``table`` a model name selects: the longest key found in the name (case-insensitive), else
    ``default``."""
    name = model.lower()
    hits = [k for k in table if k != "default" and k.lower() in name]
    return max(hits, key=len) if hits else "default"


def _pick(table: Mapping[str, Any], model: str) -> Any:
    return table.get(pick_key(table, model))


DEFAULT_PROFILES = "sim_profiles.yaml"


def load_profiles(source: str | Path | Mapping[str, Any] | Profiles | None = None) -> Profiles:
    """Read profiles: ``None`` is the shipped file; a path, a mapping or a :class:`Profiles` also work.

    Raises:
        ProfileError: the file is missing, is not YAML, or has an unknown or invalid field.
    """
    if isinstance(source, Profiles):
        return source
    where = "profiles"
    if source is None:
        where = f"skillbench/data/{DEFAULT_PROFILES}"
        raw: Any = yaml.safe_load(resources.files("skillbench").joinpath("data", DEFAULT_PROFILES).read_text("utf-8"))
    elif isinstance(source, Mapping):
        raw = dict(source)
    else:
        where = str(source)
        try:
            raw = yaml.safe_load(Path(source).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ProfileError(f"{where}: cannot be read ({exc.strerror})") from exc
        except yaml.YAMLError as exc:
            raise ProfileError(f"{where}: not valid YAML ({str(exc).splitlines()[0]})") from exc
    try:
        return Profiles.model_validate(raw or {})
    except ValidationError as exc:
        err = exc.errors()[0]
        # A bad mapping key is reported at ("skill_versions", key, "[key]"): the key names the field.
        field = ".".join(str(p) for p in err["loc"] if p != "[key]")
        raise ProfileError(f"{where}: {field}: {err['msg']}") from exc


def parse_fault_option(text: str) -> FaultSpec:
    """``KIND[=RATE]`` (the ``--fault`` option and the ``X-Skillbench-Fault`` header) → a fault.

    Raises:
        ProfileError: unknown kind or a rate outside [0, 1].
    """
    kind, _, rate = text.strip().partition("=")
    kind = kind.strip().replace("-", "_")
    if kind not in FAULT_KINDS:
        raise ProfileError(f"unknown fault {kind!r} (one of: {', '.join(FAULT_KINDS)})")
    try:
        return FaultSpec(kind=kind, rate=float(rate) if rate.strip() else 1.0)
    except (ValueError, ValidationError) as exc:
        raise ProfileError(f"fault {text!r}: rate must be a number in [0, 1]") from exc
