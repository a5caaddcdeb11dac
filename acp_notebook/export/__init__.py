"""Export a session (live, bare ``SessionState`` or ``Replay``) to one JSON file or one HTML page."""

from .html_export import export_html
from .json_export import export_json

__all__ = ["export_html", "export_json"]
