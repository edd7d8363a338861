"""Prompt caching for the judge: priced from the one price table (data-driven cases), the protocol text unchanged,
and on the simulated endpoint calibration's first repeat reads what the judge pass wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anthropic
import pytest

from skillbench.calibration import CalibrationOptions, calibrate
from skillbench.judge import JudgeOptions, build_judge_request, judge_prompt_sha, judge_run_dir, parse_judge_message
from skillbench.judge._cache import with_cache_breakpoint
from skillbench.judge._costs import cache_summary
from skillbench.prices import BATCH_DISCOUNT, price, usage_cost
from skillbench.runtime import PassContext
from skillbench.weekly import model_endpoint
from tests.helpers.judge import scores

CASES = json.loads((Path(__file__).parents[1] / "data" / "cache_price_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_cache_usage_is_priced_from_the_price_table(case: dict) -> None:
    usage = case["usage"]
    assert usage_cost(case["model"], usage, batch=case["batch"]) == pytest.approx(case["cost"], abs=1e-12)
    assert cache_summary(case["model"], [usage], batch=case["batch"])["saved_usd"] == pytest.approx(case["saved"],
                                                                                                    abs=1e-12)
    sdk_usage = anthropic.types.Usage(**{"input_tokens": 0, "output_tokens": 0, **usage})  # what a reply carries
    assert usage_cost(case["model"], sdk_usage, batch=case["batch"]) == pytest.approx(case["cost"], abs=1e-12)


def test_the_batch_price_is_half_of_every_rate() -> None:
    p, b = price("claude-opus-5-5"), price("claude-opus-5-5").batch()
    assert BATCH_DISCOUNT == 0.5
    assert (b.input, b.output, b.cache_read, b.cache_write) == (p.input / 2, p.output / 2, p.cache_read / 2,
                                                                p.cache_write / 2)


def test_a_breakpoint_does_not_change_what_the_judge_is_asked() -> None:
    request = build_judge_request("How?", "The answer.", [(0, "must", "says how"), (1, "avoid", "rambles")], 7)
    cached = with_cache_breakpoint(request)
    sha = judge_prompt_sha()
    [block] = cached["messages"][0]["content"]
    assert block == {"type": "text", "text": request["messages"][0]["content"], "cache_control": {"type": "ephemeral"}}
    assert parse_judge_message(block["text"]) == parse_judge_message(request["messages"][0]["content"])
    assert {k: v for k, v in cached.items() if k != "messages"} == {k: v for k, v in request.items() if k != "messages"}
    assert isinstance(request["messages"][0]["content"], str)  # the original request is left alone
    assert judge_prompt_sha() == sha


def _rows(week: Path) -> list[tuple[str, ...]]:
    return sorted(tuple(r) for r in scores(week).itertuples(index=False))


def _pass(week: Path, cache: bool) -> tuple[float, float]:
    # The tiny suite's requests are ~900 tokens: a lower minimum (a profile override) lets them be cached.
    with model_endpoint("sim", profiles={"cache": {"min_tokens": {"opus": 512}}}) as ep:
        judged = judge_run_dir(week, JudgeOptions(cache=cache, max_retries=1),
                               PassContext(endpoint=ep, log=lambda m: None))
        # one draw nonce for both weeks: calibration.csv records the sample's key, compared below
        cal = calibrate(week, CalibrationOptions(repeat=2, cache=cache, max_retries=1, sample_nonce="5eed"),
                        PassContext(endpoint=ep, log=lambda m: None))
    return judged.cost_usd, cal.cost_usd


def test_calibration_reads_what_the_judge_pass_cached(sim_week: Path, tmp_path: Path) -> None:
    plain_week = Path(shutil.copytree(sim_week, tmp_path / "plain"))
    judge_plain, cal_plain = _pass(plain_week, cache=False)
    judge_cached, cal_cached = _pass(sim_week, cache=True)
    assert _rows(sim_week) == _rows(plain_week)  # the same verdicts, cached or not
    assert (sim_week / "calibration.csv").read_text() == (plain_week / "calibration.csv").read_text()
    provenance = json.loads((sim_week / "judge.json").read_text())["passes"][-1]["cache"]
    assert provenance["cache_write_tokens"] > 0 and provenance["cache_read_tokens"] == 0
    assert provenance["saved_usd"] < 0  # the judge pass alone only pays for the writes …
    assert judge_cached > judge_plain
    assert cal_cached < cal_plain  # … which calibration's first repeat reads back
    assert judge_cached + cal_cached < judge_plain + cal_plain
    assert "cache" not in json.loads((plain_week / "judge.json").read_text())["passes"][-1]
