"""`openai`: an auditor driven by any OpenAI-compatible chat endpoint with tool calling and images.

The loop follows the paper's VLM auditor (§4, C.1-C.2): a system prompt with the auditing rules,
then the C.1 initial input (instructions, scene, hint, in-context example and start frame) as
the first user message, with every image preceded by its caption; the session's tools are
offered as functions, each tool call is dispatched with `session.call`, its text goes back as
the tool message and its images follow in a user message (tool messages cannot carry images),
again each beside its caption.  Only tool results ever reach the model.  To bound the
conversation only the newest `keep_images` images stay inline; older ones are replaced by a
line naming their ref, which `inspect` brings back.  A reply without tool calls gets one nudge;
a second one ends the episode (the runner then calls `done`).

Options (keyword, strings accepted): base_url (env OPENAI_BASE_URL), model (env WAC_MODEL or
OPENAI_MODEL), api_key (env OPENAI_API_KEY; "none" for local servers, the default when a
base_url is given), temperature, max_tokens, max_calls, timeout (seconds per HTTP attempt, 60),
retries (3), retry_budget_s (seconds one model call may take with all its retries and waits,
180), backoff_s, keep_images (8) and max_images (images per request at most, 40: the C.1 input
of a two-stage review is sampled evenly down to what is left).  A 429/503 answer's
`Retry-After` is honoured within the retry budget.  Failed model calls (HTTP errors after the
retries, malformed responses, an endpoint that never calls a tool) raise `ModelCallError`,
which the runner records apart from scores.  Tool calls whose arguments are not valid JSON are
answered with an error and sent back as `{}`: strict servers re-parse every past call.
"""

from __future__ import annotations

import base64
import json
import os
import time

from wac.errors import ModelCallError  # noqa: F401 - re-exported

from ..limits import clip_args
from .base import AgentError

NUDGE = (
    "Reply with a tool call: an environment action, a memory or bug tool, or done(summary) when the "
    "inspection is complete."
)


def system_prompt(tools, observation: str = "final") -> str:
    """The auditing rules, in the style of the reference harness's prompt (agent/prompts.py)."""
    from wac.taxonomy.registry import registry

    names = {t.name for t in tools}
    acting = bool(names & {"move", "turn", "look", "interact", "wait"})
    reg = registry()
    families = "\n".join(
        f"- {f.name}: {f.description} ({', '.join(c.name for c in reg.categories if c.family == f.id)})"
        for f in reg.families
    )
    parts = [
        "You are a quality-assurance tester of 3D game worlds. You see the world through a first-person "
        "camera and use tools to act and to report. Your job is to find BUGS: anything broken, physically "
        "impossible or inconsistent with how a normal world looks and behaves, and to report each one "
        "precisely, with the frames that show it.",
        "Kinds of bugs to look for:\n"
        + families
        + "\nOrdinary scene content is not a bug by itself. Judge the "
        "world against its own consistency: identical things should look and behave alike, and a solid, "
        "lit or resting object should stay so unless something explains the change.",
    ]
    if acting:
        parts.append(
            "Environment actions (each uses one step of your action budget and advances simulated time): "
            "move(distance_m, direction) walks forward or back and stops early if blocked; turn(degrees) turns "
            "in place, positive = right; look(degrees) tilts the view, positive = down; interact() uses what "
            "the crosshair aims at within about 3 m; wait(seconds) stands still and watches. The world is "
            "paused while you think: time passes only inside actions."
        )
        if observation == "film":
            parts.append(
                "Observation: after every action you get the film frames taken during it "
                "(refs a<N>.f<i>) and then the final view a<N>; a0 is the start view. Compare frames to see "
                "what happened during the action."
            )
        else:
            parts.append(
                "Observation: after every action you get the view at its end, ref a<N> for action N (a0 is "
                "the start view), and a line of text with the outcome, your position and heading. Frames "
                "taken during the action (a<N>.f<i>) are archived."
            )
    else:
        parts.append(
            "You are reviewing a RECORDING made by another explorer and cannot act. Its frames are given "
            "with their refs (a<N> or a<N>.f<i>), poses and times."
        )
    parts += [
        "Memory: every frame is archived at full resolution. inspect(refs, region) shows up to four earlier "
        "frames again, optionally zoomed into a region; history(from_action, to_action) re-reads what you did "
        "and saw. Only your newest images stay in the conversation; older ones are replaced by their ref, so "
        "use inspect to look again. write_notes keeps short durable notes (cite refs).",
        "Reporting: flag_bug(description, category, status, evidence) records a bug and returns its id. Flag a "
        'suspicion as "suspect", test it (another angle, a closer look, a revisit, waiting, interacting, '
        'comparing frames) and then update_bug to "confirmed" or "retracted". Describe what is wrong, which '
        "object and where, and, for anything that changes, what changed and under which condition (after "
        "which action, from which viewpoint, after how long). Cite evidence refs. Flag each distinct bug once; "
        "wrong or duplicate reports count against you, so retract what does not hold up.",
        "Rules: actively test the world: walk through it, view objects from 2-4 m and from more than one "
        "side, revisit places, wait and watch, and interact with what can be used. A move that travels much "
        "less than asked while nothing visible is in the way is evidence of an invisible obstacle. Verify "
        "every claim against the images. Images marked as an in-context example come from a different scene: "
        "they show what a kind of bug looks like and are never evidence about your scene. Use the action "
        "budget for exploration and verification, then call done(summary); if you found no bug, say so.",
    ]
    return "\n\n".join(parts)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _image_parts(images) -> list[dict]:
    parts: list[dict] = []
    for im in images:
        parts.append({"type": "text", "text": im.caption})
        parts.append({"type": "image_url", "image_url": {"url": _data_uri(im.png)}, "_ref": im.ref})
    return parts


def _even(items: list, n: int) -> list:
    """At most n items, evenly spread, the first and the last kept."""
    if len(items) <= n:
        return list(items)
    if n == 1:
        return [items[0]]
    return [items[round(k * (len(items) - 1) / (n - 1))] for k in range(n)]


def retry_after(headers) -> float | None:
    """Seconds a 429/503 answer asks to wait (`Retry-After` seconds or HTTP date, `retry-after-ms`)."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
    except (AttributeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _opt(value, env: tuple[str, ...] = ()):
    if value not in (None, ""):
        return value
    for name in env:
        if os.environ.get(name):
            return os.environ[name]
    return None


class OpenAIAgent:
    name = "openai"
    pipeline_check = False

    def __init__(
        self,
        seed: int | str = 0,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        temperature: float | str | None = None,
        max_tokens: int | str | None = None,
        max_calls: int | str = 200,
        timeout: float | str = 60.0,
        retries: int | str = 3,
        retry_budget_s: float | str = 180.0,
        backoff_s: float | str = 2.0,
        keep_images: int | str = 8,
        max_images: int | str = 40,
    ) -> None:
        self.seed = int(seed)
        self.base_url = _opt(base_url, ("OPENAI_BASE_URL",))
        self.model = _opt(model, ("WAC_MODEL", "OPENAI_MODEL"))
        if not self.model:
            raise AgentError(
                "the openai agent needs a model: pass model=NAME or set WAC_MODEL / OPENAI_MODEL"
            )
        self.api_key = _opt(api_key, ("OPENAI_API_KEY",)) or ("none" if self.base_url else None)
        if not self.api_key:
            raise AgentError(
                "the openai agent needs an API key: set OPENAI_API_KEY (or pass api_key=none "
                "together with base_url for a local server)"
            )
        self.temperature = float(temperature) if temperature not in (None, "") else None
        self.max_tokens = int(max_tokens) if max_tokens not in (None, "") else None
        self.max_calls = int(max_calls)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self.keep_images = int(keep_images)
        self.retry_budget_s = float(retry_budget_s)
        self.max_images = int(max_images)
        if self.max_calls < 1 or self.retries < 0 or self.keep_images < 0 or self.timeout <= 0:
            raise AgentError("max_calls and timeout must be positive; retries and keep_images not negative")
        if self.retry_budget_s <= 0 or self.max_images < 1:
            raise AgentError("retry_budget_s and max_images must be positive")

    # --- the model call ------------------------------------------------------------------------
    def _client(self):
        try:
            from openai import OpenAI
        except ImportError as exc:  # pragma: no cover - optional dependency
            raise AgentError(
                "the openai agent needs the `openai` package (pip install 'wac[runtime]')"
            ) from exc
        return OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout, max_retries=0)

    def _complete(self, client, messages: list[dict], tools: list[dict]):
        import openai

        request = {"model": self.model, "messages": messages, "tools": tools}
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        why = "no attempt"
        deadline = time.monotonic() + self.retry_budget_s
        wait = 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                if time.monotonic() + wait > deadline:
                    raise ModelCallError(
                        f"model call failed: the server asks to wait {wait:.0f} s, beyond the retry budget "
                        f"(retry_budget_s={self.retry_budget_s:g}); last error: {why}"
                    )
                time.sleep(wait)
            left = deadline - time.monotonic()
            if left <= 0:
                break
            wait = self.backoff_s * 2**attempt
            try:
                resp = client.chat.completions.create(**request, timeout=min(self.timeout, left))
            except openai.APIStatusError as exc:
                why = f"HTTP {exc.status_code}: {exc.message}"
                if exc.status_code < 500 and exc.status_code not in (408, 409, 429):
                    raise ModelCallError(f"model call failed: {why}") from exc
                asked = retry_after(exc.response.headers if exc.response is not None else {})
                if asked is not None:
                    wait = asked
                continue
            except openai.APIConnectionError as exc:  # includes timeouts
                why = f"{type(exc).__name__}: {exc}"
                continue
            except openai.OpenAIError as exc:
                why = f"{type(exc).__name__}: {exc}"
                continue
            choices = getattr(resp, "choices", None)
            if not choices or getattr(choices[0], "message", None) is None:
                why = "malformed response (no choices or no message)"
                continue
            return resp
        raise ModelCallError(
            f"model call failed after {attempt + 1} attempt(s) "
            f"(retries={self.retries}, retry_budget_s={self.retry_budget_s:g}): {why}"
        )

    def _payload(self, messages: list[dict]) -> list[dict]:
        """The messages as sent: the newest `keep_images` images after the first input stay inline; the
        C.1 input keeps what is left of `max_images` (sampled evenly, first and last kept); the others
        are replaced by a line naming their ref, which `inspect` brings back."""
        later = sum(
            1
            for m in messages[2:]
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if p.get("type") == "image_url"
        )
        later = min(later, self.keep_images, self.max_images - 1)
        first = [
            p
            for m in messages[:2]
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if p.get("type") == "image_url"
        ]
        room = max(1, self.max_images - later)
        keep_first = {id(p) for p in _even(first, room)}
        kept = 0
        out: list[dict] = []
        for i in range(len(messages) - 1, -1, -1):
            m = messages[i]
            if not isinstance(m.get("content"), list):
                out.append(m)
                continue
            parts = []
            for p in reversed(m["content"]):
                if p.get("type") != "image_url":
                    parts.append(p)
                elif (i <= 1 and id(p) in keep_first) or (i > 1 and kept < later):
                    kept += i > 1
                    parts.append({"type": "image_url", "image_url": p["image_url"]})
                else:
                    parts.append(
                        {
                            "type": "text",
                            "text": f"[image {p['_ref']} not repeated here; use inspect to see it again]",
                        }
                    )
            out.append({**m, "content": parts[::-1]})
        return out[::-1]

    # --- the loop ------------------------------------------------------------------------------
    def run(self, session) -> None:
        from wac.audit.tools import openai_tools

        client = self._client()
        tools = openai_tools(session.tools)
        first = (
            session.call("observe")
            if "observe" in {t.name for t in session.tools}
            else session.initial_input()
        )
        messages: list[dict] = [
            {"role": "system", "content": system_prompt(session.tools, session.options.observation)},
            {"role": "user", "content": [{"type": "text", "text": first.text}, *_image_parts(first.images)]},
        ]
        log = open(session.out / "model.jsonl", "a", encoding="utf-8") if session.out else None  # noqa: SIM115
        nudged = False
        tool_calls = 0
        try:
            for _ in range(self.max_calls):
                resp = self._complete(client, self._payload(messages), tools)
                usage = getattr(resp, "usage", None)
                session.add_usage(
                    getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0
                )
                msg = resp.choices[0].message
                calls = list(getattr(msg, "tool_calls", None) or ())
                if log is not None:
                    log.write(
                        json.dumps(
                            {
                                "content": clip_args(msg.content),
                                "tool_calls": [
                                    {
                                        "name": clip_args(c.function.name),
                                        "arguments": clip_args(c.function.arguments),
                                    }
                                    for c in calls
                                ],
                            }
                        )
                        + "\n"
                    )
                    log.flush()
                entry: dict = {"role": "assistant", "content": msg.content or ""}
                parsed = [_arguments(c.function.arguments) for c in calls]
                if calls:
                    tool_calls += len(calls)
                    entry["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            # never echo arguments that are not JSON: strict servers re-parse every past call
                            "function": {
                                "name": c.function.name,
                                "arguments": c.function.arguments if isinstance(a, dict) else "{}",
                            },
                        }
                        for c, a in zip(calls, parsed, strict=True)
                    ]
                messages.append(entry)
                if not calls:
                    if nudged and not tool_calls:
                        raise ModelCallError(
                            "the endpoint answered twice without any tool call and never called a tool: "
                            "the model or server seems not to support tool calling (function calling), "
                            "which the auditor needs"
                        )
                    if nudged or session.done:
                        return
                    nudged = True
                    messages.append({"role": "user", "content": NUDGE})
                    continue
                nudged = False
                images = []
                for c, a in zip(calls, parsed, strict=True):
                    res = self._dispatch(session, c.function.name, a)
                    messages.append(
                        {"role": "tool", "tool_call_id": c.id, "content": res.text or "(no text)"}
                    )
                    images += res.images
                if images:
                    messages.append(
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": "Images returned by the tool calls above:"},
                                *_image_parts(images),
                            ],
                        }
                    )
                if session.done:
                    return
        finally:
            if log is not None:
                log.close()

    @staticmethod
    def _dispatch(session, name: str, args):
        if args is None:
            return session.refuse(
                name, f"the arguments of {str(name)[:64]} are not valid JSON; send a JSON object"
            )
        if not isinstance(args, dict):
            return session.refuse(name, f"the arguments of {str(name)[:64]} must be a JSON object")
        return session.call(name, args)


def _arguments(raw: str | None):
    """A tool call's arguments: the decoded JSON value, None when they are not JSON."""
    try:
        return json.loads(raw or "{}")
    except ValueError:
        return None
