"""``/docs`` (Swagger UI) and ``/redoc`` with their scripts served from the package (``graphmem/web/vendor``),
so the API explorer works with no internet. Both are in the OpenAPI document as the pages they are."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from graphmem.http.openapi import PUBLIC
from graphmem.web import VENDOR_DIR

VENDOR = "/static/vendor"


def install(app: FastAPI) -> None:
    app.mount(VENDOR, StaticFiles(directory=VENDOR_DIR), name="vendor")

    @app.get("/docs", tags=[PUBLIC], response_class=HTMLResponse)
    async def swagger() -> HTMLResponse:
        """Swagger UI over this document."""
        return get_swagger_ui_html(openapi_url="/openapi.json", title="graphmem API",
                                   swagger_js_url=f"{VENDOR}/swagger-ui/swagger-ui-bundle.js",
                                   swagger_css_url=f"{VENDOR}/swagger-ui/swagger-ui.css",
                                   swagger_favicon_url=f"{VENDOR}/swagger-ui/favicon-32x32.png")

    @app.get("/redoc", tags=[PUBLIC], response_class=HTMLResponse)
    async def redoc() -> HTMLResponse:
        """ReDoc over this document."""
        return get_redoc_html(openapi_url="/openapi.json", title="graphmem API",
                              redoc_js_url=f"{VENDOR}/redoc/redoc.standalone.js",
                              redoc_favicon_url=f"{VENDOR}/swagger-ui/favicon-32x32.png", with_google_fonts=False)
