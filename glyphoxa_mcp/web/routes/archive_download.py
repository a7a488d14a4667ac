"""The campaign's archive as a download (`campaign export`, desk/archive_actions.py): the
review page offers it. The file is written as it is sent, on one snapshot of the campaign."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from glyphoxa_mcp.desk.archive_actions import archive_file_name, export_campaign
from glyphoxa_mcp.web.desk import campaign_desk


async def download_archive(request: Request) -> Response:
    desk = await campaign_desk(request)
    pieces = export_campaign(desk.db, desk.campaign_id)
    # The first piece is read before the answer starts, so that an error (the campaign
    # deleted meanwhile, the database gone) is an error page and not a broken download.
    first = await anext(pieces)

    async def body() -> AsyncIterator[bytes]:
        try:
            yield first
            async for piece in pieces:
                yield piece
        finally:  # a download given up ends the export's transaction now
            await pieces.aclose()

    name = archive_file_name(desk.campaign_id)
    return StreamingResponse(
        body(),
        media_type="application/gzip",
        headers={
            "Content-Disposition": f'attachment; filename="{name}"',
            "Cache-Control": "no-store",
        },
    )


ROUTES = [Route("/c/{campaign}/export", download_archive, methods=["GET"])]
