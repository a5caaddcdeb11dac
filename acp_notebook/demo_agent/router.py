"""Pick what the demo agent plays for one prompt, from the prompt's words (pure, no I/O).

The rules, in order (the first that applies wins; matching ignores case):

1. Help: the prompt is only "help", "?", "what can you do" and the like, or it says "help"
   and names no topic → HELP.
2. Recap: it asks for a summary ("summarise", "summary", "recap", "what did you change", ...)
   → RECAP.
3. A question (it ends with "?" or starts with why/how/what/...) → QUESTION, unless it is a
   request ("can you ...", "could you ...", "please ...") that names a topic.
4. A topic's keyword → that topic's scenario, trying the topics in TOPICS order (so "run the
   tests" is the story, not the slow command, "have a subagent fix the bug" the subagents, and "fill
   in a form about the bug" the elicitation).
5. Anything else → STORY, the scenario the agent played for every prompt before routing existed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HELP, RECAP, QUESTION = "help", "recap", "question"
STORY, PERMISSION, SLOW, ECHO, NOTEBOOK = "default", "permission", "slow", "echo", "notebook"
SUBAGENTS, ELICITATION = "subagents", "elicitation"

HELP_PHRASES = frozenset(
    {"?", "help", "help me", "/help", "what can you do", "what can you show", "what can you show me"}
)
RECAP_WORDS = frozenset({"summarise", "summarize", "summary", "recap"})
RECAP_PHRASES = (
    "what did you change",
    "what did you do",
    "what have you changed",
    "what have you done",
    "what you changed",
    "what you did",
)
QUESTION_WORDS = frozenset({"why", "how", "what", "which", "where", "when", "did", "can", "is"})
REQUEST_OPENINGS = ("can you ", "could you ", "would you ", "will you ", "please ")


def keywords(text: str) -> frozenset[str]:
    """The space-separated words of `text`, as a set."""
    return frozenset(text.split())


@dataclass(frozen=True)
class Topic:
    """A scenario the router can pick, with the words that pick it and how help describes it."""

    route: str
    title: str
    blurb: str
    words: frozenset[str]
    examples: tuple[str, ...]


TOPICS = (
    Topic(
        SUBAGENTS,
        "Subagents (v2)",
        "child sessions: a reviewer that asks before its edit and runs a linter of its own (which "
        "cannot be cancelled), and a changelog writer in the background that asks after the turn "
        "ended and then makes me start a turn of my own",
        keywords("subagent subagents delegate delegates child children"),
        ("delegate to subagents", "use a subagent"),
    ),
    Topic(
        ELICITATION,
        "Questions for you (elicitation)",
        "a form with every kind of field for a release, a sign-in link to consent to, and a question I "
        "withdraw once I find the answer myself; I use what you answer (start me with "
        "`--scenario elicitation` and I also ask for a profile while `session/new` waits)",
        keywords("form forms elicit elicitation elicitations survey questionnaire consent signin oauth"),
        ("fill in a form", "ask me with a form"),
    ),
    Topic(
        STORY,
        "The story",
        "fixing a failing test: a plan, a file read, an edit whose diff waits for your permission, "
        "the tests in a terminal, a streamed search, a custom tool call and a failed fetch",
        keywords("fix fixes bug bugs test tests failing fails failed story demo plan diff edit edits patch"),
        ("fix the failing test", "show me a plan", "edit with a diff"),
    ),
    Topic(
        PERMISSION,
        "A permission request",
        "one tool call that waits for your answer, then says which option you chose",
        keywords("permission permissions allow approve delete"),
        ("ask my permission", "delete build"),
    ),
    Topic(
        SLOW,
        "A slow command",
        "a terminal printing a line every 0.05 s until you cancel it",
        keywords("slow terminal command commands run sleep"),
        ("run a slow command", "terminal"),
    ),
    Topic(
        NOTEBOOK,
        "Your data",
        "the objects you shared from the kernel, through the `notebook` MCP server: it lists them, "
        "describes a DataFrame and (with run_code allowed) computes on it and plots it",
        keywords("data dataframe dataframes df variables variable shared share plot chart kernel notebook"),
        ("look at my data", "plot the dataframe"),
    ),
    Topic(ECHO, "An echo", "your words, repeated back", frozenset({"echo", "repeat"}), ("echo hello",)),
)


def words(text: str) -> list[str]:
    """The lower-case words of `text`."""
    return re.findall(r"[a-z']+", text.lower())


def normalise(text: str) -> str:
    """Lower-case `text` with single spaces and no trailing '.' or '!' (a lone '?' stays)."""
    flat = " ".join(text.lower().split())
    return flat if flat == "?" else flat.rstrip(".!?").strip()


def topic_of(text: str) -> str | None:
    """The route of the first topic whose keyword appears in `text`, if any."""
    found = set(words(text))
    return next((t.route for t in TOPICS if t.words & found), None)


def is_help(text: str) -> bool:
    """Whether `text` asks what the agent can do."""
    flat = normalise(text)
    if flat in HELP_PHRASES or "what can you do" in flat:
        return True
    return "help" in words(text) and topic_of(text) is None


def is_recap(text: str) -> bool:
    """Whether `text` asks for a summary of what the agent did."""
    flat = normalise(text)
    return bool(RECAP_WORDS & set(words(text))) or any(p in flat for p in RECAP_PHRASES)


def is_question(text: str) -> bool:
    """Whether `text` ends with '?' or starts with a question word."""
    found = words(text)
    return text.strip().endswith("?") or bool(found and found[0] in QUESTION_WORDS)


def is_request(text: str) -> bool:
    """Whether `text` opens like a polite request ("can you ...", "please ...")."""
    return (" ".join(words(text)) + " ").startswith(REQUEST_OPENINGS)


def route(text: str) -> str:
    """What to play for a prompt: HELP, RECAP, QUESTION or a scenario name from TOPICS."""
    if is_help(text):
        return HELP
    if is_recap(text):
        return RECAP
    topic = topic_of(text)
    if is_question(text) and not (topic and is_request(text)):
        return QUESTION
    return topic or STORY
