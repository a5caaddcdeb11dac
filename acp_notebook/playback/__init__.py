"""Playback: replay, X-ray, doctor and re-enactment — a recorded (or live) session's traffic, read back.

``replay(path)`` scrubs a trace through this client's own code (``replayer``, ``trace_replay``,
``reenact``, ``recorded_host``, ``memory``), ``doctor(source)`` checks the agent's side of the
traffic (``diagnosis``; the rules are pure: ``doctor_rules``, ``doctor_sessions``,
``doctor_elicitations``, ``doctor_spec``, ``findings``, ``xray``),
and the X-ray panel (``xray_link``, ``xray_source``, ``xray_built``) attaches to any
``SessionView`` through ``widgets.extensions``: importing this package registers it.
"""

from ..widgets import extensions
from .diagnosis import doctor
from .replayer import Replay, replay
from .xray_link import XRayLink

extensions.register("xray", XRayLink.attach)

__all__ = ["Replay", "doctor", "replay"]
