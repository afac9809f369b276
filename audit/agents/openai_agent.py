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
base_url is given), temperature, max_tokens, max_calls, timeout, retries, backoff_s, keep_images.
Failed model calls (HTTP errors after the retries, malformed responses) raise `ModelCallError`,
which the runner records apart from scores.
"""

from __future__ import annotations

import base64
import json
import os
import time

from wac.errors import WacError

from .base import AgentError

NUDGE = (
    "Reply with a tool call: an environment action, a memory or bug tool, or done(summary) when the "
    "inspection is complete."
)


class ModelCallError(WacError):
    """The model endpoint failed (HTTP error after retries, malformed response): not a score."""


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
                "Observation: after every action you get the low-resolution film frames taken during it "
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
        timeout: float | str = 120.0,
        retries: int | str = 3,
        backoff_s: float | str = 2.0,
        keep_images: int | str = 8,
        **_ignored,
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
        if self.max_calls < 1 or self.retries < 0 or self.keep_images < 0 or self.timeout <= 0:
            raise AgentError("max_calls and timeout must be positive; retries and keep_images not negative")

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
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                resp = client.chat.completions.create(**request)
            except openai.APIStatusError as exc:
                why = f"HTTP {exc.status_code}: {exc.message}"
                if exc.status_code < 500 and exc.status_code not in (408, 409, 429):
                    raise ModelCallError(f"model call failed: {why}") from exc
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
        raise ModelCallError(f"model call failed after {self.retries + 1} attempt(s): {why}")

    def _payload(self, messages: list[dict]) -> list[dict]:
        """The messages as sent: only the newest `keep_images` images after the first input stay inline."""
        kept = 0
        out: list[dict] = []
        for i in range(len(messages) - 1, -1, -1):
            m = messages[i]
            if not isinstance(m.get("content"), list):
                out.append(m)
                continue
            parts = []
            for p in reversed(m["content"]):
                if p.get("type") == "image_url":
                    if i <= 1:  # the C.1 input (example figures, start frame) always stays whole
                        parts.append({"type": "image_url", "image_url": p["image_url"]})
                    elif kept < self.keep_images:
                        kept += 1
                        parts.append({"type": "image_url", "image_url": p["image_url"]})
                    else:
                        parts.append(
                            {
                                "type": "text",
                                "text": f"[image {p['_ref']} not repeated here; use inspect to see it again]",
                            }
                        )
                else:
                    parts.append(p)
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
                                "content": msg.content,
                                "tool_calls": [
                                    {"name": c.function.name, "arguments": c.function.arguments}
                                    for c in calls
                                ],
                            }
                        )
                        + "\n"
                    )
                    log.flush()
                entry: dict = {"role": "assistant", "content": msg.content or ""}
                if calls:
                    entry["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.function.name, "arguments": c.function.arguments or "{}"},
                        }
                        for c in calls
                    ]
                messages.append(entry)
                if not calls:
                    if nudged or session.done:
                        return
                    nudged = True
                    messages.append({"role": "user", "content": NUDGE})
                    continue
                nudged = False
                images = []
                for c in calls:
                    res = self._dispatch(session, c.function.name, c.function.arguments)
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
    def _dispatch(session, name: str, raw: str | None):
        from wac.audit.session import ToolResult

        try:
            args = json.loads(raw or "{}")
        except ValueError:
            return ToolResult(
                f"ERROR: the arguments of {name} are not valid JSON: {str(raw)[:200]}", error=True
            )
        if not isinstance(args, dict):
            return ToolResult(f"ERROR: the arguments of {name} must be a JSON object", error=True)
        return session.call(name, args)
