"""Static pages and their vendored assets, shipped in the wheel and served by the app without a CDN, so every
page works with no internet. ``vendor/`` holds third-party builds, pinned, each with its licence
(``vendor/README.md`` lists them and where they came from)."""

from pathlib import Path

WEB_DIR = Path(__file__).resolve().parent
VENDOR_DIR = WEB_DIR / "vendor"
